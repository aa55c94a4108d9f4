"""Honest complexity: one single-tuple update reads O(N^max(ε,1-ε)) state rows, never O(N).

On skewed data with hub values whose degree is a sizable fraction of N, a delta loop driven from
the wrong side (or a plan that falls back to a scan) would read about a hub's degree. PostgreSQL
counts, per transaction, the tuples each index returned and each sequential scan read; after one
update we sum them over every state table and index and compare with the paper's bound.
"""

from __future__ import annotations

import random

import psycopg
import pytest

from conftest import TRIANGLE_SQL
from pgivm import command

HUBS = [0, 1, 2, 3]
LIGHT = range(1000, 4000)


def build_skewed(conn: psycopg.Connection, rnd: random.Random) -> int:
    """R, S, T where each hub has ~1200 partners and 9,000 rows connect light values (N ~ 2 x 23k)."""
    rows = {"r": [], "s": [], "t": []}
    for table in rows:
        for hub in HUBS:
            partners = rnd.sample(LIGHT, 1200)
            rows[table] += [(hub, p) for p in partners] + [(p, hub) for p in partners[:300]]
        rows[table] += [(rnd.choice(LIGHT), rnd.choice(LIGHT)) for _ in range(2500)]
    for table, (x, y) in {"r": ("a", "b"), "s": ("b", "c"), "t": ("c", "a")}.items():
        conn.execute(f"CREATE TABLE {table} ({x} int, {y} int)")
        with conn.cursor().copy(f"COPY {table} ({x}, {y}) FROM STDIN") as copy:
            for row in rows[table]:
                copy.write_row(row)
    return sum(len(v) for v in rows.values())


_STATE_READS = """
    SELECT coalesce(sum(pg_stat_get_xact_tuples_returned(c.oid)), 0),
           coalesce(sum(pg_stat_get_xact_numscans(c.oid))
                    FILTER (WHERE c.relkind = 'r' AND c.relname NOT IN ('state', 'result')), 0)
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = %s AND c.relkind IN ('r', 'i')
"""


def rows_read_by(conn: psycopg.Connection, statement: str, params: list[object],
                 schema: str = "pgivm_tri") -> tuple[int, int]:
    """(state rows read by ``statement``, sequential scans of non-trivial state tables).

    Tuples returned by every index (index scans) and table (sequential scans) of the state schema,
    as a difference of the transaction's counters around the statement (no stats flush happens
    inside a transaction block).
    """
    with conn.transaction():
        read_before, scans_before = conn.execute(_STATE_READS, [schema]).fetchone()
        conn.execute(statement, params)
        read_after, scans_after = conn.execute(_STATE_READS, [schema]).fetchone()
    return int(read_after - read_before), int(scans_after - scans_before)


def single_update_reads(conn: psycopg.Connection) -> list[tuple[str, int, int, int]]:
    """(table, x, y, state rows read) of single-row inserts and deletes into each relation, hub-hub,
    hub-light, light-hub and light-light, leaving out those that rebalanced (amortized work, not the
    per-update bound); none scans a state table."""
    samples = []
    for table, (x, y) in {"r": ("a", "b"), "s": ("b", "c"), "t": ("c", "a")}.items():
        for first, second in [(0, 1), (2, 1500), (1500, 3), (1200, 1300)]:
            for statement in (f"INSERT INTO {table} VALUES (%s, %s)",
                              f"DELETE FROM {table} WHERE ctid = (SELECT ctid FROM {table} WHERE {x} = %s AND {y} = %s LIMIT 1)"):
                before = conn.execute("SELECT major_rebalances, minor_rebalances FROM pgivm_tri.state").fetchone()
                read, seqscans = rows_read_by(conn, statement, [first, second])
                if conn.execute("SELECT major_rebalances, minor_rebalances FROM pgivm_tri.state").fetchone() != before:
                    continue
                samples.append((table, first, second, read))
                assert seqscans == 0, f"a sequential scan of a state table for {table} ({first}, {second})"
    assert len(samples) >= 20
    return samples


@pytest.mark.parametrize("epsilon", [0.25, 0.5, 0.75])  # hubs are heavy at 0.25 and 0.5, light at 0.75
def test_single_update_reads_within_the_bound(conn: psycopg.Connection, epsilon: float) -> None:
    rnd = random.Random(int(epsilon * 100))
    build_skewed(conn, rnd)
    command.create("tri", TRIANGLE_SQL, epsilon=epsilon, target=conn)
    n = conn.execute("SELECT n FROM pgivm_tri.state").fetchone()[0]
    hub_degree = conn.execute("SELECT max(degree) FROM pgivm_tri.s_degree").fetchone()[0]
    bound = n ** max(epsilon, 1 - epsilon)

    samples = single_update_reads(conn)
    worst = max(samples, key=lambda s: s[3])
    # Each update runs at most two bounded loops (<= 2 N^(1-eps) or < 3/2 N^eps rows) plus O(1) lookups.
    assert worst[3] <= 8 * bound + 40, f"update {worst} read {worst[3]} rows; bound ~ {bound:.0f} (N = {n})"
    hubs_heavy = conn.execute("SELECT bool_and(heavy) FROM pgivm_tri.s_degree WHERE b = ANY(%s)", [HUBS]).fetchone()[0]
    if hubs_heavy:  # a heavy value's partners are never a loop's driver: reading them would be O(N)
        assert worst[3] < hub_degree, f"update {worst} read as many rows as a hub's degree ({hub_degree})"

    report = command.verify("tri", target=conn)
    assert report.ok, [str(f) for f in report.failures]
