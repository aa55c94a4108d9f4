"""Workload ``ivme-family``, third part: the 4-path count Σ R(a)·S(a,b)·T(b,c)·U(c) ([L] Appendix G)
under single-row updates of its end relations at hub values, per-update time and rows read against
N on adversarial skew, against F-IVM (which accepts the acyclic query) and first-order.

The data at size n, θ = √(2n): five hub a-values, each joined in S to n/40 B-values of degree 5 (one
per hub) that T joins to the five hub c-values, so each hub of R reaches Θ(n) S-tuples and each hub
of U Θ(n) T-tuples; whichever side a view tree or a delta query starts from, one end's update walks
Θ(n) of them. About √n/8 B-values are heavy in S (degree ≥ 1.5θ, each joined to every hub a) and as
many in T (each joined to every hub c). The stream inserts, then deletes, R(hub) and U(hub) rows in
turn. IVMε at ε = ½ keeps the hub B-values' paths in its views (the hub a-values are heavy on A in
S, their B-values light on B: S_hl, reached through q and y_r) and loops over the heavy B-values
only: Θ(√n) rows.
"""

from __future__ import annotations

import math
import random

from pgivm.bench.common import Strategy
from pgivm.bench.family import Database, Row, Update, Workload

QUERY = "SELECT count(*) FROM r JOIN s ON r.a = s.a JOIN t ON s.b = t.b JOIN u ON t.c = u.c"
TABLES = {"r": ("a",), "s": ("a", "b"), "t": ("b", "c"), "u": ("c",)}
HUBS = 5
PROBES = 2


def generate(n: int, inserts: int, seed: int = 1) -> Database:
    """About ``n`` tuples over R, S, T, U (see the module docstring) and the stream of hub rows."""
    rnd = random.Random(seed * 1_000_003 + n)
    heavy_degree = math.ceil(1.5 * math.sqrt(2 * n + 1))
    heavy = max(2, math.ceil(math.sqrt(n) / 8))
    light_domain = range(1_000_000, 1_000_000 + max(100, n // 10))  # fillers: a- and c-values of degree ~2
    shared = range(10_000_000, 10_000_000 + max(1, n // 40))  # the hubs' B-values, degree 5 in S and in T
    rows: dict[str, list[Row]] = {t: [] for t in TABLES}
    rows["s"] = [(a, b) for a in range(HUBS) for b in shared]
    rows["t"] = [(b, c) for b in shared for c in range(HUBS)]
    for k in range(heavy):  # heavy B-values: 100 + k in S, 200_000 + k in T
        b_s, b_t = 100 + k, 200_000 + k
        rows["s"] += [(a, b_s) for a in range(HUBS)] + [(rnd.choice(light_domain), b_s) for _ in range(heavy_degree)]
        rows["t"] += [(b_t, c) for c in range(HUBS)] + [(b_t, rnd.choice(light_domain)) for _ in range(heavy_degree)]
        rows["t"].append((b_s, rnd.choice(range(HUBS))))  # S's heavy B-values reach the hub c-values in T, light there
        rows["s"].append((rnd.choice(range(HUBS)), b_t))
    rows["s"] = sorted(set(rows["s"]))
    rows["t"] = sorted(set(rows["t"]))
    rows["r"] = [(a,) for a in range(HUBS)] + [(a,) for a in light_domain]
    rows["u"] = [(c,) for c in range(HUBS)] + [(c,) for c in light_domain]
    updates = [Update("r" if i % 2 == 0 else "u", (i // 2 % HUBS,)) for i in range(inserts + PROBES)]
    return Database(rows, updates[PROBES:], updates[:PROBES])


WORKLOAD = Workload(
    title="the 4-path count", query=QUERY, tables=TABLES,
    strategies=(Strategy(None), Strategy("ivme", 0.5), Strategy("fivm"), Strategy("first-order")),
    predicted={"ivme": 0.5, "fivm": 1.0, "first-order": 1.0}, generate=generate, stream_label="R(hub) and U(hub)")
