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
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import psycopg
from psycopg import sql

from pgivm import command, report
from pgivm.bench.common import VIEW, Strategy, cell, settle
from pgivm.bench.scaling import fit_loglog
from pgivm.progress import Progress

QUERY = ("SELECT count(*) FROM r1 JOIN r2 ON r1.b = r2.b AND r1.c = r2.c JOIN r3 ON r3.c = r1.c AND r3.d = r2.d "
         "AND r3.a = r1.a JOIN r4 ON r4.d = r2.d AND r4.a = r1.a AND r4.b = r1.b")
TABLES = {"r1": ("a", "b", "c"), "r2": ("b", "c", "d"), "r3": ("a", "c", "d"), "r4": ("a", "b", "d")}
HUBS = 5
STRATEGIES = [Strategy(None), Strategy("ivme", 0.5), Strategy("first-order")]
PREDICTED = {"ivme": 0.5, "first-order": 1.0}
PROBES = 2
Row = tuple[int, int, int]


@dataclass
class Database:
    rows: dict[str, list[Row]]
    stream: list[Row]  # R1 rows inserted then deleted
    probes: list[Row]  # more of them, for the rows-read probes

    @property
    def size(self) -> int:
        return sum(len(r) for r in self.rows.values())


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
    return Database(rows, triples[PROBES:wanted], triples[:PROBES])


def _load(conn: psycopg.Connection, rows: dict[str, list[Row]]) -> None:
    for table, columns in TABLES.items():
        ident = sql.Identifier(table)
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(ident))
        conn.execute(sql.SQL("CREATE TABLE {} ({})").format(
            ident, sql.SQL(", ").join(sql.SQL("{} int NOT NULL").format(sql.Identifier(c)) for c in columns)))
        with conn.cursor().copy(sql.SQL("COPY {} FROM STDIN").format(ident)) as copy:
            for row in rows[table]:
                copy.write_row(row)
        conn.execute(sql.SQL("CREATE INDEX ON {} ({})").format(ident, sql.SQL(", ").join(map(sql.Identifier, columns))))
    conn.execute("VACUUM ANALYZE r1, r2, r3, r4")
    settle(conn)


_INSERT = "INSERT INTO r1 VALUES (%s, %s, %s)"
_DELETE = "DELETE FROM r1 WHERE a = %s AND b = %s AND c = %s"
# Rows read by every table and index of the view's state and of the base tables' schema: first-order
# reads the base tables themselves (its delta queries), IVMε its state.
_STATE_READS = """
    SELECT coalesce(sum(pg_stat_get_xact_tuples_returned(c.oid)), 0)
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE (n.nspname = %s OR c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = 'r1'::regclass))
       AND c.relkind IN ('r', 'i')"""


def _rows_read(conn: psycopg.Connection, statement: str, row: Row) -> int:
    with conn.transaction():
        before = conn.execute(_STATE_READS, [f"pgivm_{VIEW}"]).fetchone()[0]  # type: ignore[index]
        conn.execute(statement, row)
        after = conn.execute(_STATE_READS, [f"pgivm_{VIEW}"]).fetchone()[0]  # type: ignore[index]
    return int(after - before)


@dataclass
class Result:
    n: int
    strategy: Strategy
    latencies: list[float] = field(default_factory=list)
    rows_read: list[int] = field(default_factory=list)
    build: float | None = None

    @property
    def median_ms(self) -> float:
        return 1000 * statistics.median(self.latencies)


def measure(conn: psycopg.Connection, n: int, updates: int, budget: float, seed: int) -> list[Result]:
    db = generate(n, updates // 2, seed)
    _load(conn, db.rows)
    print(f"  N = {db.size:,} tuples; {HUBS}^3 hub triples in the stream", file=sys.stderr, flush=True)
    out = []
    for strategy in STRATEGIES:
        result = Result(db.size, strategy)
        if strategy.name is not None:
            options = {"epsilon": strategy.epsilon} if strategy.name == "ivme" else {}
            result.build = command.create(VIEW, QUERY, system=strategy.name, target=conn, **options).seconds
            conn.execute("VACUUM ANALYZE")
            settle(conn)
            for row in db.probes:
                result.rows_read += [_rows_read(conn, _INSERT, row), _rows_read(conn, _DELETE, row)]
        inserted = []
        with Progress(f"{strategy.label}: N = {db.size:,}, R1(hub, hub, hub) updates", total=2 * len(db.stream)) as progress:
            for row in db.stream:
                if len(inserted) >= 10 and progress.elapsed > budget / 2:
                    break
                started = time.perf_counter()
                conn.execute(_INSERT, row)
                result.latencies.append(time.perf_counter() - started)
                inserted.append(row)
                progress.advance()
            for row in inserted:
                started = time.perf_counter()
                conn.execute(_DELETE, row)
                result.latencies.append(time.perf_counter() - started)
                progress.advance()
        if strategy.name is not None:
            verified = command.verify(VIEW, target=conn)
            if not verified.ok:
                raise RuntimeError(f"{strategy.label} drifted at N = {db.size:,}: {verified.failures[:2]}")
            command.drop(VIEW, target=conn)
        out.append(result)
    return out


def main(conn: psycopg.Connection, sizes: Sequence[int], updates: int, budget: float, seed: int) -> list[Result]:
    """Run, print the table and the fitted slopes."""
    print(f"\n== scaling of a Loomis-Whitney count of degree 4: {QUERY}; adversarial skew, sizes "
          f"{', '.join(f'{n:,}' for n in sizes)}; up to {updates:,} single-row updates of R1(hub, hub, hub) per "
          "strategy and size (half inserts, then the same rows deleted)")
    sys.stdout.flush()
    results = [r for n in sizes for r in measure(conn, n, updates, budget, seed)]
    print(f"\nper-update latency against N (rows read: tuples returned by the state's and the base tables' "
          f"indexes and scans, median of {2 * PROBES} untimed probe updates):")
    report.print_table(["N (tuples)", "strategy", "updates", "median (ms)", "rows read/update", "build (s)"], [
        [f"{r.n:,}", r.strategy.label, f"{len(r.latencies):,}", f"{r.median_ms:.3f}",
         f"{statistics.median(r.rows_read):,.0f}" if r.rows_read else "", cell(r.build, 1)] for r in results])
    print("\nlog-log least-squares slopes against N:")
    for strategy in STRATEGIES[1:]:
        mine = [r for r in results if r.strategy == strategy]
        bare = {r.n: r.median_ms for r in results if r.strategy.name is None}
        time_fit = fit_loglog([r.n for r in mine], [r.median_ms - bare[r.n] for r in mine])
        read_fit = fit_loglog([r.n for r in mine], [statistics.median(r.rows_read) for r in mine])
        print(f"  {strategy.label}: maintenance time (median − no view) slope "
              f"{'' if time_fit is None else f'{time_fit.slope:.2f}'}; rows read (state and base tables): slope "
              f"{'' if read_fit is None else f'{read_fit.slope:.2f}'} (paper: {PREDICTED[strategy.name or '']:g})")
    return results
