"""Workload ``ivme-family``, fourth part: the 3-path count Σ R(b)·S(b,c)·T(c), the 3R² class of
counts over three relations ([L] Appendix H.3), under single-row updates of its end relations at
hub values, per-update time and rows read against N on adversarial skew, against F-IVM (which
accepts the acyclic query) and first-order.

The data at size n, θ = √(2n): five hub b-values, each joined in S to the same n/10 c-values (degree
5 each), and five hub c-values, each joined to the same n/10 b-values (likewise), so R's hub update
reaches Θ(n) S-tuples and T's hub update Θ(n) too: whichever side a view tree hangs from, one end's
update walks Θ(n) of them, and first-order's delta query walks them for both. About √n/8 b-values
are heavy in S (degree 1.5θ, each joined to every hub c). The stream inserts, then deletes, R(hub)
and T(hub) rows in turn. IVMε at ε = ½ reads a hub b-value's paths from st_heavy in O(1) and a hub
c-value's from rs_light (the light b-values) and a loop over the heavy b-values' tuples at it: Θ(√n)
rows.
"""

from __future__ import annotations

import math
import random

from pgivm.bench.common import Strategy
from pgivm.bench.family import Database, Row, Update, Workload

QUERY = "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c"
TABLES = {"r": ("b",), "s": ("b", "c"), "t": ("c",)}
HUBS = 5
PROBES = 2


def generate(n: int, inserts: int, seed: int = 1, copies: int = 1) -> Database:
    """About ``n`` tuples over R, S, T (see the module docstring) and the stream of hub rows; the
    heavy b-values heavy in a database of ``copies`` such (the fifth part's labels)."""
    rnd = random.Random(seed * 1_000_003 + n)
    heavy_degree = math.ceil(1.5 * math.sqrt(2 * n * copies + 1))
    heavy = max(2, math.ceil(math.sqrt(n) / 8))
    fan = max(10, n // 10)
    fan_c = range(1_000_000, 1_000_000 + fan)  # the hub b-values' c-values, degree 5 in S
    fan_b = range(2_000_000, 2_000_000 + fan)  # the hub c-values' b-values, likewise
    light_c = range(3_000_000, 3_000_000 + max(100, n // 10))  # the heavy b-values' other c-values
    rows: dict[str, list[Row]] = {"s": [(b, c) for b in range(HUBS) for c in fan_c] + [(b, c) for c in range(HUBS) for b in fan_b]}
    heavy_b = range(100, 100 + heavy)
    for b in heavy_b:
        rows["s"] += [(b, c) for c in range(HUBS)] + [(b, rnd.choice(light_c)) for _ in range(heavy_degree)]
    rows["s"] = sorted(set(rows["s"]))
    rows["r"] = [(b,) for b in (*range(HUBS), *fan_b, *heavy_b)]
    rows["t"] = [(c,) for c in (*range(HUBS), *fan_c, *light_c)]
    updates = [Update("r" if i % 2 == 0 else "t", (i // 2 % HUBS,)) for i in range(inserts + PROBES)]
    return Database(rows, updates[PROBES:], updates[:PROBES])


WORKLOAD = Workload(
    title="the 3-path count (3R²)", query=QUERY, tables=TABLES,
    strategies=(Strategy(None), Strategy("ivme", 0.5), Strategy("fivm"), Strategy("first-order")),
    predicted={"ivme": 0.5, "fivm": 1.0, "first-order": 1.0}, generate=generate, stream_label="R(hub) and T(hub)")
