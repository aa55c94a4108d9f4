"""Workload ``ivme-family``, second part: a Loomis–Whitney count of degree 4 ([L] Appendix F)
under single-row updates, per-update time and state rows read against N on adversarial skew.

The query: R1(a,b,c) ⋈ R2(b,c,d) ⋈ R3(a,c,d) ⋈ R4(a,b,d), counted. The stream inserts (then deletes)
R1 tuples (α, β, γ) of hub values: 5 a-, b- and c-hubs each. For each pair of hubs the other three
relations hold N/200 tuples with distinct d-values (each d in one relation only: degree 1, light in
R4, which is partitioned on d), so each of first-order's three candidate loops, R2(β,γ,·), R3(α,γ,·)
and R4(α,β,·), has Θ(N) rows whatever side PostgreSQL's planner starts from, while the delta itself
is small. R4 also holds about √N/16 heavy d-values (degree ≥ 1.5θ: every hub pair and random
(a, b) pairs). Under IVMε the update's middles R2 (on b) and R3 (on c) are heavy at the
hubs, so it loops over R4's heavy tuples at (α, β), at most one per heavy d-value, and reads V_1:
Θ(√N) at ε = ½.
"""

from __future__ import annotations

import math
import random

from pgivm.bench.common import Strategy
from pgivm.bench.family import Database, Row, Update, Workload

QUERY = ("SELECT count(*) FROM r1 JOIN r2 ON r1.b = r2.b AND r1.c = r2.c JOIN r3 ON r3.c = r1.c AND r3.d = r2.d "
         "AND r3.a = r1.a JOIN r4 ON r4.d = r2.d AND r4.a = r1.a AND r4.b = r1.b")
TABLES = {"r1": ("a", "b", "c"), "r2": ("b", "c", "d"), "r3": ("a", "c", "d"), "r4": ("a", "b", "d")}
HUBS = 5
PROBES = 2


def generate(n: int, inserts: int, seed: int = 1) -> Database:
    """About ``n`` tuples over R1..R4 (see the module docstring) and the stream of hub triples."""
    rnd = random.Random(seed * 1_000_003 + n)
    hubs = {v: list(range(HUBS)) for v in "abc"}  # hub values 0..4 of a, b and c
    per_pair = max(1, n // (8 * HUBS * HUBS))
    next_d = iter(range(10_000, 10**9))
    rows: dict[str, list[Row]] = {t: [] for t in TABLES}
    for x in range(HUBS):
        for y in range(HUBS):
            rows["r2"] += [(x, y, next(next_d)) for _ in range(per_pair)]  # (b, c) hub pairs
            rows["r3"] += [(x, y, next(next_d)) for _ in range(per_pair)]  # (a, c)
            rows["r4"] += [(x, y, next(next_d)) for _ in range(per_pair)]  # (a, b)
    theta = math.sqrt(2 * n + 1)
    heavy_degree = math.ceil(1.5 * theta)
    for d in range(max(1, math.ceil(math.sqrt(n) / 16))):  # heavy d-values of R4, each at every hub pair
        pairs = {(a, b) for a in range(HUBS) for b in range(HUBS)}
        while len(pairs) < heavy_degree:
            pairs.add((rnd.randrange(100, 100 + n), rnd.randrange(100, 100 + n)))
        rows["r4"] += [(a, b, d) for a, b in pairs]
    domain = max(100, n // 20)
    for table in TABLES:  # the rest: random tuples away from the hubs
        while len(rows[table]) < n // 4:
            rows[table].append(tuple(rnd.randrange(100, 100 + domain) for _ in range(3)))  # type: ignore[arg-type]
    triples = [(a, b, c) for a in hubs["a"] for b in hubs["b"] for c in hubs["c"]]
    rnd.shuffle(triples)
    wanted = min(len(triples), inserts + PROBES)
    return Database(rows, [Update("r1", t) for t in triples[PROBES:wanted]],
                    [Update("r1", t) for t in triples[:PROBES]])



WORKLOAD = Workload(
    title="a Loomis-Whitney count of degree 4", query=QUERY, tables=TABLES,
    strategies=(Strategy(None), Strategy("ivme", 0.5), Strategy("first-order")),
    predicted={"ivme": 0.5, "first-order": 1.0}, generate=generate, stream_label="R1(hub, hub, hub)")
