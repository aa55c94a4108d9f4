"""The hierarchical counts over three relations (Appendix H's 3R⁰ and 3R¹) under F-IVM: a
single-tuple update reads O(1) state rows whatever the degrees, the class's bound (Theorem 37),
which ``pgivm explain`` says F-IVM runs. Measured with a hub value whose degree grows with N."""

from __future__ import annotations

import psycopg
import pytest

from pgivm import command

STATE_READS = """
    SELECT coalesce(sum(pg_stat_get_xact_tuples_returned(c.oid)), 0)
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'pgivm_h' AND c.relkind IN ('r', 'i')"""
CASES = {
    "3R⁰": ({"r": ("a", "b"), "s": ("a", "c"), "t": ("a", "d")},
            "SELECT count(*) FROM r JOIN s ON s.a = r.a JOIN t ON t.a = r.a"),
    "3R¹": ({"r": ("a", "b"), "s": ("a", "b"), "t": ("b", "c")},
            "SELECT count(*) FROM r JOIN s ON s.a = r.a AND s.b = r.b JOIN t ON t.b = r.b"),
}


def _reads(conn: psycopg.Connection, tables: dict[str, tuple[str, str]], query: str, n: int) -> list[int]:
    for table in tables:
        conn.execute(f"DROP TABLE IF EXISTS {table} CASCADE")
    for i, (table, (x, y)) in enumerate(tables.items()):
        conn.execute(f"CREATE TABLE {table} ({x} int, {y} int)")
        hub = n // 2 if i == 0 else 20  # value 0 of the first table's first column: degree N/2
        conn.execute(f"INSERT INTO {table} SELECT 0, g FROM generate_series(1, {hub}) g")
        conn.execute(f"INSERT INTO {table} SELECT g, g % 97 FROM generate_series(1, {n // 2}) g")
    command.create("h", query, system="fivm", target=conn)
    conn.execute("ANALYZE")
    reads = []
    for table, (x, y) in tables.items():
        for statement in (f"INSERT INTO {table} VALUES (0, 5)",
                          f"DELETE FROM {table} WHERE ctid = (SELECT ctid FROM {table} WHERE {x} = 0 AND {y} = 5 LIMIT 1)"):
            with conn.transaction():
                before = conn.execute(STATE_READS).fetchone()[0]
                conn.execute(statement)
                reads.append(int(conn.execute(STATE_READS).fetchone()[0] - before))
    report = command.verify("h", target=conn)
    assert report.ok, [str(f) for f in report.failures]
    command.drop("h", target=conn)
    return reads


@pytest.mark.parametrize("name", list(CASES))
def test_a_single_update_reads_o1_rows(conn: psycopg.Connection, name: str) -> None:
    tables, query = CASES[name]
    small, large = _reads(conn, tables, query, 2_000), _reads(conn, tables, query, 40_000)
    assert small == large and max(large) <= 20, (small, large)  # the same rows at 20x the hub's degree
    command.create("h", query, target=conn)
    lines = command.explain("h", target=conn)
    assert any(f"{name} (hierarchical" in line for line in lines), lines
    assert any("fivm runs this class's strategy" in line for line in lines), lines
