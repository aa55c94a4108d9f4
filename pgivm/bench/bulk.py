"""Workload ``bulk``: one statement that changes many rows, with no view, ivme ε=½ and first-order.

Base database: the graph of the ``updates`` workload (every edge in both directions in R, S and
T). For each size k (``--bulk-sizes``), k new R rows (not yet in R; a endpoint drawn by degree,
so the rows hit the graph's hubs, b uniform) are staged in a side table before any view exists.
Then, per strategy, each of these is one statement in its own transaction, timed on the client:

- ``INSERT INTO r SELECT ... FROM staged``
- ``DELETE FROM r USING staged ...`` (the same k rows; restores the base data)
- ``COPY r FROM STDIN`` of the same k rows (the bytes prepared before timing)
- the ``DELETE`` again, to restore the base data (verified, not reported)

and the view's count is checked after each (see ``run``). What it shows: the cost of a view on bulk loads, where a
row-at-a-time maintenance path would pay k times its per-row cost and a set-at-a-time path can
share work across the statement's rows.

Then the crossover of the two paths (``--crossover-sizes``): under an ivme ε=½ view created once
with every statement forced tuple by tuple and once with every statement forced set at a time,
one INSERT of k new R rows in a transaction that is rolled back afterwards (so every statement
meets the same state), the median of a few; it is what the default ``--batch-threshold`` is
chosen from.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import psycopg
from psycopg import sql

from pgivm import report
from pgivm.bench.common import (
    NO_VIEW,
    TRIANGLE_SQL,
    VIEW,
    Row,
    Strategy,
    copy_text,
    create_view,
    drop_view,
    load_tables,
    verify_view,
)
from pgivm.bench.updates import base_rows
from pgivm.errors import PgivmError
from pgivm.systems.common import BATCH_THRESHOLD

DEFAULT_SIZES = [10_000, 100_000]
DEFAULT_CROSSOVER_SIZES = [4, 16, 64, 256, 384, 512, 1024, 4096]
CROSSOVER_REPEATS = 5
PATHS = [("tuple by tuple", 10**9), ("set at a time", 0)]  # label, batch threshold forcing that path
IVME = Strategy("ivme", 0.5)
STRATEGIES = [NO_VIEW, IVME, Strategy("first-order")]
HEADERS = ["strategy", "statement", "rows", "time (s)", "rows/s", "vs no view (×)", "triangles after"]


@dataclass
class Config:
    edges: list[tuple[int, int]]
    sizes: Sequence[int] = tuple(DEFAULT_SIZES)
    crossover_sizes: Sequence[int] = tuple(DEFAULT_CROSSOVER_SIZES)
    seed: int = 1


@dataclass
class BulkResult:
    strategy: Strategy
    statement: str
    rows: int
    seconds: float
    count: int  # the count after the statement: the view's, or the recount with no view


def new_rows(edges: list[tuple[int, int]], existing: set[Row], count: int, seed: int) -> list[Row]:
    """``count`` distinct (a, b) pairs not in ``existing``: a by degree (an endpoint of a random edge), b uniform."""
    rnd = random.Random(seed)
    nodes = sorted({u for e in edges for u in e})
    chosen: set[Row] = set()
    budget = 50 * count + 1000
    while len(chosen) < count and budget > 0:
        budget -= 1
        a = rnd.choice(rnd.choice(edges))
        b = rnd.choice(nodes)
        if a != b and (a, b) not in existing:
            chosen.add((a, b))
    if len(chosen) < count:  # a graph too dense to have that many new pairs: go past its node ids
        top = max(nodes) + 1
        chosen.update((rnd.choice(nodes), top + i) for i in range(count - len(chosen)))
    return sorted(chosen)


def _staged(size: int) -> sql.Identifier:
    return sql.Identifier(f"bulk_rows_{size}")


def stage(conn: psycopg.Connection, sizes: Sequence[int], rows: list[Row]) -> None:
    """Side tables bulk_rows_<k> holding the first k new rows (no view reads them)."""
    for size in sizes:
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(_staged(size)))
        conn.execute(sql.SQL("CREATE TABLE {} (a int NOT NULL, b int NOT NULL)").format(_staged(size)))
        with conn.cursor().copy(sql.SQL("COPY {} (a, b) FROM STDIN").format(_staged(size))) as copy:
            copy.write(copy_text(rows[:size]))
        conn.execute(sql.SQL("ANALYZE {}").format(_staged(size)))


def timed(label: str, action: Callable[[], object]) -> float:
    """Seconds ``action`` took (one statement, its own transaction)."""
    print(f"  bulk: {label} ...", file=sys.stderr, flush=True)
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def recount(conn: psycopg.Connection) -> int:
    """The triangle count by the view's own SQL, recomputed: the truth each view is checked against."""
    row = conn.execute(TRIANGLE_SQL).fetchone()
    return int(row[0]) if row else 0


def maintained(conn: psycopg.Connection) -> int:
    row = conn.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(VIEW))).fetchone()
    return int(row[0]) if row else 0


def run(conn: psycopg.Connection, config: Config) -> list[BulkResult]:
    """Each strategy: create the view, then for each size the four statements, checking after each.

    The data only ever takes 1 + len(sizes) states (the base, and the base plus the first k new
    rows: INSERT and COPY add the same rows, the DELETEs restore the base), so the true count of
    each state is recounted once, with no view, and a view's count is compared with it after every
    statement. A full ``verify`` (recount and every invariant of the state) runs once per view,
    after its last statement: recounting after each of them would take far longer than the bulk
    statements themselves on a skewed graph.
    """
    base = base_rows(config.edges, set())
    load_tables(conn, base)
    rows = new_rows(config.edges, set(base["r"]), max(config.sizes), config.seed)
    stage(conn, config.sizes, rows)
    data = {size: copy_text(rows[:size]) for size in config.sizes}
    truth = {0: recount(conn)}
    results = []
    for strategy in STRATEGIES:
        view = create_view(conn, strategy)
        for size in config.sizes:
            delete = sql.SQL("DELETE FROM r USING {} x WHERE r.a = x.a AND r.b = x.b").format(_staged(size))
            insert = sql.SQL("INSERT INTO r (a, b) SELECT a, b FROM {}").format(_staged(size))
            steps: list[tuple[str, Callable[[], object], int, bool]] = [
                ("INSERT … SELECT", lambda: conn.execute(insert), size, True),
                ("DELETE … USING", lambda: conn.execute(delete), 0, True),
                ("COPY", lambda: _copy(conn, data[size]), size, True),
                ("DELETE … USING", lambda: conn.execute(delete), 0, False),  # restores the base; reported once
            ]
            for label, action, state, reported in steps:
                seconds = timed(f"{strategy.label}: {label} of {size:,} rows", action)
                if view is None:
                    count = truth.setdefault(state, recount(conn))
                else:
                    count = maintained(conn)
                    if count != truth[state]:
                        raise PgivmError(f"{strategy.label} drifted after {label} of {size:,} rows: "
                                         f"maintained {count}, recount {truth[state]}")
                if reported:
                    results.append(BulkResult(strategy, label, size, seconds, count))
        print(f"  bulk: {strategy.label}: verify ...", file=sys.stderr, flush=True)
        verify_view(conn, strategy, "the bulk statements")
        drop_view(conn, strategy)
    return results


@dataclass
class CrossoverResult:
    path: str
    rows: int
    seconds: list[float]

    @property
    def median_ms(self) -> float:
        return 1000 * statistics.median(self.seconds)


def crossover(conn: psycopg.Connection, config: Config) -> list[CrossoverResult]:
    """Tuple by tuple against set at a time: one rolled-back INSERT of k new R rows, per path and k.

    Runs on the base data (``run`` leaves it restored). Both paths insert the same batches, and
    the count each path maintained inside the transaction must be the same; the count after every
    rollback must be the base count, and the whole state is verified once per path.
    """
    existing = set(base_rows(config.edges, set())["r"])
    pool = new_rows(config.edges, existing, max(config.crossover_sizes), config.seed + 1)
    rnd = random.Random(config.seed)
    batches = {size: [rnd.sample(pool, size) for _ in range(CROSSOVER_REPEATS)] for size in config.crossover_sizes}
    truth = recount(conn)
    insert = "INSERT INTO r (a, b) SELECT * FROM unnest(%s::int[], %s::int[])"
    counted: dict[tuple[int, int], int] = {}  # (size, repeat) -> the count inside the transaction
    results = []
    for path, threshold in PATHS:
        create_view(conn, IVME, batch_threshold=threshold)
        for size in config.crossover_sizes:
            print(f"  bulk: crossover: {path}: INSERT of {size:,} rows × {CROSSOVER_REPEATS} ...",
                  file=sys.stderr, flush=True)
            seconds = []
            for repeat, batch in enumerate(batches[size]):
                with conn.transaction(force_rollback=True):
                    started = time.perf_counter()
                    conn.execute(insert, [[a for a, _ in batch], [b for _, b in batch]])
                    seconds.append(time.perf_counter() - started)
                    inside = maintained(conn)
                    first = counted.setdefault((size, repeat), inside)
                    if inside != first:
                        raise PgivmError(f"the two paths disagree on an INSERT of {size:,} rows: "
                                         f"{first} tuple by tuple, {inside} set at a time")
                if maintained(conn) != truth:
                    raise PgivmError(f"the view drifted after a rolled-back INSERT of {size:,} rows ({path})")
            results.append(CrossoverResult(path, size, seconds))
        verify_view(conn, IVME, f"the rolled-back INSERTs ({path})")
        drop_view(conn, IVME)
    return results


def print_crossover(results: list[CrossoverResult]) -> None:
    sizes = sorted({r.rows for r in results})
    by = {(r.path, r.rows): r.median_ms for r in results}
    report.print_table(["path"] + [f"k = {k:,} (ms)" for k in sizes],
                       [[path] + [f"{by[(path, k)]:,.1f}" for k in sizes] for path, _ in PATHS])
    print()
    tuple_path, set_path = (label for label, _ in PATHS)
    faster = [k for k in sizes if by[(set_path, k)] < by[(tuple_path, k)]]
    if faster:
        print(f"set at a time is faster from k = {faster[0]:,} on"
              + ("" if faster == sizes[sizes.index(faster[0]):] else " (not at every larger k)")
              + f"; the default --batch-threshold is {BATCH_THRESHOLD:,}")
    else:
        print(f"tuple by tuple is faster at every k measured; the default --batch-threshold is {BATCH_THRESHOLD:,}")


def _copy(conn: psycopg.Connection, data: bytes) -> None:
    with conn.cursor().copy("COPY r (a, b) FROM STDIN") as copy:
        copy.write(data)


def print_table(results: list[BulkResult]) -> None:
    floor = {(r.statement, r.rows): r.seconds for r in results if r.strategy == NO_VIEW}
    report.print_table(HEADERS, [
        [r.strategy.label, r.statement, f"{r.rows:,}", f"{r.seconds:.3f}", f"{r.rows / r.seconds:,.0f}",
         f"{r.seconds / floor[(r.statement, r.rows)]:.1f}" if (r.statement, r.rows) in floor else "",
         f"{r.count:,}"]
        for r in results
    ])


def main(conn: psycopg.Connection, config: Config, source: str) -> list[BulkResult]:
    """Run and print the table (no plot: two sizes say it)."""
    print(f"\n== bulk: {source} in R, S, T (both directions); one statement of "
          f"{' and '.join(f'{k:,}' for k in config.sizes)} new R rows each, autocommit")
    sys.stdout.flush()
    results = run(conn, config)
    print("\nbulk statements into R (time of the one statement; vs no view: slowdown factor):")
    print_table(results)
    if config.crossover_sizes:
        print(f"\nmulti-row INSERT into R under ivme ε=0.5, tuple by tuple against set at a time "
              f"(median of {CROSSOVER_REPEATS}, each statement rolled back):")
        print_crossover(crossover(conn, config))
    print()
    return results
