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
from typing import Any

from psycopg import sql

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


# --- on a real graph -----------------------------------------------------------------------------

GRAPH_QUERY = ("SELECT count(*) FROM e e1 JOIN e e2 ON e1.dst = e2.src JOIN e e3 ON e2.dst = e3.src "
               "JOIN e e4 ON e3.dst = e4.src")
# The walks of four edges counted independently of any view: Σ_b (Σ in-degrees of b's in-neighbours)
# · (Σ out-degrees of b's out-neighbours), in one plain query (the four-way join has ~10^11 rows).
GRAPH_RECOUNT = """
    WITH outd AS (SELECT src, count(*) AS d FROM e GROUP BY src), ind AS (SELECT dst, count(*) AS d FROM e GROUP BY dst),
         l AS (SELECT e.dst AS b, sum(ind.d) AS v FROM e JOIN ind ON ind.dst = e.src GROUP BY e.dst),
         r AS (SELECT e.src AS b, sum(outd.d) AS v FROM e JOIN outd ON outd.src = e.dst GROUP BY e.src)
    SELECT coalesce(sum(l.v * r.v), 0) FROM l JOIN r ON r.b = l.b"""

# The walks of three edges (the 3-path count's graph form, class 3R²), recounted as Σ over the middle
# edge (b, c) of b's in-degree times c's out-degree.
WALKS3_QUERY = "SELECT count(*) FROM e e1 JOIN e e2 ON e1.dst = e2.src JOIN e e3 ON e2.dst = e3.src"
WALKS3_RECOUNT = """
    WITH outd AS (SELECT src, count(*) AS d FROM e GROUP BY src), ind AS (SELECT dst, count(*) AS d FROM e GROUP BY dst)
    SELECT coalesce(sum(ind.d * outd.d), 0) FROM e JOIN ind ON ind.dst = e.src JOIN outd ON outd.src = e.dst"""

# The closed walks of four edges (4-cycles): cyclic, and neither a Loomis-Whitney nor a 3-relation
# query, so first-order maintains it. Recounted independently as Σ_(u,w) P(u,w)·P(w,u), P(u,w) the
# walks of two edges from u to w (one GROUP BY of a two-way join).
CYCLE_QUERY = GRAPH_QUERY + " AND e4.dst = e1.src"
CYCLE_RECOUNT = """
    WITH p AS (SELECT e1.src AS u, e2.dst AS w, count(*) AS c FROM e e1 JOIN e e2 ON e1.dst = e2.src GROUP BY 1, 2)
    SELECT coalesce(sum(p.c * q.c), 0) FROM p JOIN p q ON q.u = p.w AND q.w = p.u"""


def graph_main(conn: Any, edges: list[tuple[int, int]], source: str, updates: int = 100, seed: int = 3,
               build_budget: float = 300.0) -> None:
    """The walks of four edges over ``edges`` (both directions of each): ivme's and fivm's builds and
    counts against the plain recount, then ``updates`` single-edge inserts and their deletes, timed;
    the same for the walks of three edges, and for the closed walks of four (4-cycles) under
    first-order. A build (the join counted once)
    stops at ``build_budget`` seconds, the inserts after half of it."""
    import time

    from pgivm import report
    from pgivm.bench.common import settle

    directed = sorted({(a, b) for a, b in edges if a != b} | {(b, a) for a, b in edges if a != b})
    conn.execute("DROP TABLE IF EXISTS e")
    conn.execute("CREATE TABLE e (src int NOT NULL, dst int NOT NULL)")
    with conn.cursor().copy("COPY e FROM STDIN") as copy:
        for row in directed:
            copy.write_row(row)
    conn.execute("CREATE INDEX ON e (src, dst)")
    conn.execute("CREATE INDEX ON e (dst)")
    conn.execute("VACUUM ANALYZE e")
    settle(conn)
    rnd = random.Random(seed)
    nodes = sorted({a for a, _ in directed})
    stream = [(rnd.choice(nodes), rnd.choice(nodes)) for _ in range(updates)]
    rows = []
    for title, query, recount, systems in (("the walks of four edges", GRAPH_QUERY, GRAPH_RECOUNT, ("ivme", "fivm")),
                                           ("the walks of three edges (3R²)", WALKS3_QUERY, WALKS3_RECOUNT, ("ivme", "fivm")),
                                           ("the closed walks of four edges (4-cycles)", CYCLE_QUERY, CYCLE_RECOUNT,
                                            ("first-order",))):
        started = time.perf_counter()
        expected = int(conn.execute(recount).fetchone()[0])
        recount_s = time.perf_counter() - started
        print(f"\n== {title} on {source}, both directions ({len(directed):,} rows): {query}; {updates} single-edge "
              f"inserts then their deletes; the plain SQL recount {expected:,} ({recount_s:.2f} s)")
        for system in systems:
            rows.append([title.split(" (")[0].replace("the ", ""), *_graph_run(conn, query, recount, system, expected,
                                                                              stream, build_budget)])
    report.print_table(["count of", "strategy", "count (= the recount)", "build (s)", "updates", "update median (ms)",
                        "update p90 (ms)"], rows)


def _graph_run(conn: Any, query: str, recount: str, system: str, expected: int, stream: list[tuple[int, int]],
               build_budget: float) -> list[str]:
    """One system's build, count, and timed single-edge inserts then deletes, its count checked
    against ``recount`` after the inserts and at the end (a drift raises)."""
    import statistics
    import time

    import psycopg

    from pgivm import command
    from pgivm.bench.common import VIEW, settle

    started = time.perf_counter()
    conn.execute(f"SET statement_timeout = {int(build_budget * 1000)}")
    try:
        command.create(VIEW, query, system=system, target=conn)
    except psycopg.errors.QueryCanceled:
        return [system, "-", f"> {build_budget:g}", "0", "-", "-"]
    finally:
        conn.execute("SET statement_timeout = 0")
    build = time.perf_counter() - started
    read = sql.SQL("SELECT * FROM {}").format(sql.Identifier(VIEW))
    count = conn.execute(read).fetchone()[0]
    conn.execute("VACUUM ANALYZE")
    settle(conn)
    latencies: list[float] = []
    inserted = []
    for a, b in stream:  # inserting stops once a budget's worth of time is spent
        if sum(latencies) > build_budget / 2:
            break
        started = time.perf_counter()
        conn.execute("INSERT INTO e VALUES (%s, %s)", [a, b])
        latencies.append(time.perf_counter() - started)
        inserted.append((a, b))
    after_inserts = conn.execute(read).fetchone()[0]
    exact_after_inserts = after_inserts == int(conn.execute(recount).fetchone()[0])
    for a, b in inserted:
        started = time.perf_counter()
        conn.execute("DELETE FROM e WHERE ctid = (SELECT ctid FROM e WHERE src = %s AND dst = %s LIMIT 1)", [a, b])
        latencies.append(time.perf_counter() - started)
    final = conn.execute(read).fetchone()[0]
    if count != expected or final != expected or not exact_after_inserts:
        raise RuntimeError(f"{system} drifted on the graph: {count:,} / {final:,} against {expected:,}")
    command.drop(VIEW, target=conn)
    return [system, f"{count:,}", f"{build:.1f}", str(2 * len(inserted)), f"{1000 * statistics.median(latencies):.2f}",
            f"{1000 * sorted(latencies)[int(0.9 * len(latencies))]:.2f}"]
