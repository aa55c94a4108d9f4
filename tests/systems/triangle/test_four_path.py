"""IVMε for the 4-path count Σ R(a)S(a,b)T(b,c)U(c) ([L] Appendix G): randomized streams compared
with PostgreSQL's own count after every statement, every invariant checked along the way (both
partitions of S and T, the nine views against their definitions); the bound on what a single-row
update reads on skewed data; the shapes recognised and refused."""

from __future__ import annotations

import random

import psycopg
import pytest

from pgivm import command
from pgivm.query.analysis import shapes
from pgivm.query.parse import parse_query
from count_stream import run_count_stream
from test_complexity import rows_read_by

# R and U carry a column no join reads (aggregated away); S and T are written with columns swapped.
PATH4 = "SELECT count(*) FROM r JOIN s ON r.a = s.a JOIN t ON s.b = t.b JOIN u ON t.c = u.c"
PATH4_TABLES = {"r": ("a", "x"), "s": ("b", "a"), "t": ("c", "b"), "u": ("z", "c")}
# The graph form: walks of four edges over one edge table.
PATH4_ONE = ("SELECT count(*) FROM e e1 JOIN e e2 ON e1.dst = e2.src JOIN e e3 ON e2.dst = e3.src "
             "JOIN e e4 ON e3.dst = e4.src")
ONE_TABLE = {"e": ("src", "dst")}


def _value(rnd: random.Random) -> int:
    """Skewed: 0 and 1 turn heavy; the rest spread over what the bursts fan out to."""
    return rnd.choice([0] * 6 + [1] * 3 + list(range(2, 41)))


def _statement(rnd: random.Random, tables: dict[str, tuple[str, ...]]) -> str:
    table = rnd.choice(sorted(tables))
    columns = tables[table]
    kind = rnd.random()
    if kind < 0.45:
        rows = ", ".join(f"({_value(rnd)}, {_value(rnd)})" for _ in range(rnd.randint(1, 8)))
        return f"INSERT INTO {table} VALUES {rows}"
    if kind < 0.62:  # some of these delete rows that are not there
        return f"DELETE FROM {table} WHERE {columns[0]} = {_value(rnd)} AND {columns[1]} = {_value(rnd)}"
    if kind < 0.7:
        return f"DELETE FROM {table} WHERE {rnd.choice(columns)} = {_value(rnd)}"
    if kind < 0.85:
        return f"UPDATE {table} SET {rnd.choice(columns)} = {_value(rnd)} WHERE {rnd.choice(columns)} = {_value(rnd)}"
    if kind < 0.99:  # a burst: one column 0 (or 1), the other fanning out, so a value turns heavy
        hub, fan = rnd.sample(columns, 2)
        items = ", ".join(f"{rnd.choice([0, 1])}" if c == hub else "2 + g" for c in columns)
        return f"INSERT INTO {table} SELECT {items} FROM generate_series(1, {rnd.randint(10, 36)}) g"
    return f"TRUNCATE {table}"


def _run(conn: psycopg.Connection, query: str, tables: dict[str, tuple[str, ...]], epsilon: float, seed: int,
         steps: int, **options: object) -> list[int]:
    rnd = random.Random(seed)
    for table, columns in tables.items():  # some rows in every table first: the build, and paths from the start
        conn.execute(f"CREATE TABLE {table} ({', '.join(c + ' int' for c in columns)})")
        conn.execute(f"INSERT INTO {table} VALUES " + ", ".join(f"({_value(rnd)}, {_value(rnd)})" for _ in range(25)))
    command.create("p4", query, system="ivme", epsilon=epsilon, target=conn, **options)
    counts = run_count_stream(conn, "p4", query, rnd, lambda: _statement(rnd, tables), steps, verify_every=10)
    assert max(counts) > 100 and len(set(counts)) > steps // 4, "the stream hardly changed the count"
    return counts


def _rebalances(conn: psycopg.Connection) -> tuple[int, int]:
    return conn.execute("SELECT minor_rebalances, major_rebalances FROM pgivm_p4.state").fetchone()


@pytest.mark.parametrize("epsilon", [0.0, 0.25, 0.5, 0.75, 1.0])
@pytest.mark.parametrize("form", ["tables", "one-table"])
def test_random_stream_matches_the_count(conn: psycopg.Connection, form: str, epsilon: float) -> None:
    query, tables = (PATH4, PATH4_TABLES) if form == "tables" else (PATH4_ONE, ONE_TABLE)
    _run(conn, query, tables, epsilon, seed=int(epsilon * 100) + len(form), steps=100)
    minor, major = _rebalances(conn)
    assert major >= 2, "N never moved"
    if epsilon in (0.25, 0.5):  # (at ε = ¾ a value needs a degree of 1.5 N^¾ to move: more than the stream has)
        assert minor > 0, "no value moved between the parts"


@pytest.mark.parametrize("form, epsilon", [("tables", 0.25), ("tables", 0.5), ("one-table", 0.0), ("one-table", 0.5),
                                           ("tables", 1.0)])
def test_the_batch_path(conn: psycopg.Connection, form: str, epsilon: float) -> None:
    """Every statement set at a time through K_delta and apply_batch_K (threshold 0): its deltas
    joined on the state before it, then the values it pushed across a threshold moved."""
    query, tables = (PATH4, PATH4_TABLES) if form == "tables" else (PATH4_ONE, ONE_TABLE)
    _run(conn, query, tables, epsilon, seed=17 + len(form), steps=80, batch_threshold=0)
    if epsilon in (0.25, 0.5):
        assert _rebalances(conn)[0] > 0


def test_every_part_and_view_is_reached(conn: psycopg.Connection) -> None:
    """Hubs 0 and 1 on every variable fanning out to 60 light values, light pairs among those: every
    part of S and of T and every auxiliary view holds rows after the build, and a stream over the
    same values keeps the count exact and every invariant."""
    rnd = random.Random(23)
    fans = [(hub, v) for hub in (0, 1) for v in range(2, 62)] + [(v, hub) for hub in (0, 1) for v in range(2, 62)]
    middle = fans + [(0, 0), (0, 1), (1, 0), (1, 1)] + [(rnd.randrange(2, 62), rnd.randrange(2, 62)) for _ in range(80)]
    # B-value 62 heavy in S and light in T (T_lh at it: z_r), 63 the other way round (z_u)
    data = {"r": [(v, 0) for v in range(62)], "s": middle + [(v, 62) for v in range(2, 62)] + [(0, 63), (1, 63)],
            "t": middle + [(62, 0), (62, 1)] + [(63, v) for v in range(2, 62)], "u": [(0, v) for v in range(62)]}
    for table, columns in PATH4_TABLES.items():
        conn.execute(f"CREATE TABLE {table} ({', '.join(c + ' int' for c in columns)})")
        with conn.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in data[table]:
                copy.write_row(row[::-1] if table in ("s", "t") else row)
    command.create("p4", PATH4, system="ivme", epsilon=0.5, target=conn)
    parts = conn.execute("SELECT (SELECT count(DISTINCT (ha, hb)) FROM pgivm_p4.s), "
                         "(SELECT count(DISTINCT (hb, hc)) FROM pgivm_p4.t)").fetchone()
    assert parts == (4, 4)
    for v in ("w_r", "w_u", "p_r", "p_u", "q", "z_r", "z_u", "y_r", "y_u"):
        assert conn.execute(f"SELECT count(*) FROM pgivm_p4.{v}").fetchone()[0] > 0, v
    for step in range(120):
        conn.execute(_statement(rnd, PATH4_TABLES))
        assert conn.execute("SELECT * FROM p4").fetchone()[0] == conn.execute(PATH4).fetchone()[0], step
        if step % 20 == 19:
            assert command.verify("p4", target=conn).ok, step
    assert command.verify("p4", target=conn).ok


def test_deferred_view(conn: psycopg.Connection) -> None:
    _run(conn, PATH4_ONE, ONE_TABLE, 0.5, seed=9, steps=60, refresh="deferred")


def test_shapes() -> None:
    found = shapes.as_four_path(parse_query(PATH4))
    assert [(a.relation, a.variables, a.columns) for a in found.relations] == [
        ("r", ("a",), ("a",)), ("s", ("a", "b"), ("a", "b")), ("t", ("b", "c"), ("b", "c")), ("u", ("c",), ("c",))]
    one = shapes.as_four_path(parse_query(PATH4_ONE))
    assert [a.columns for a in one.relations] == [("dst",), ("src", "dst"), ("src", "dst"), ("src",)]
    for refused in ("SELECT count(*) FROM r JOIN s ON r.a = s.a JOIN t ON s.b = t.b",
                    PATH4.replace("count(*)", "r.a, count(*)") + " GROUP BY r.a",
                    PATH4 + " WHERE r.x > 1",
                    PATH4 + " AND u.c = r.a",
                    "SELECT count(*) FROM r JOIN s ON r.a = s.a JOIN t ON s.a = t.b JOIN u ON t.c = u.c"):
        assert shapes.four_path(parse_query(refused)) is None, refused


def test_single_update_reads_within_the_bound(conn: psycopg.Connection) -> None:
    """Hubs on every variable (degree ~N/10): a single-row update reads O(N^½) state rows at ε = ½,
    fewer than a hub's degree, and never scans a state table."""
    rnd = random.Random(3)
    data = {"r": [(v, 0) for v in range(600)] + [(0, 0)] * 50,
            "s": [(0, rnd.randrange(1, 600)) for _ in range(1200)] + [(rnd.randrange(1, 600), 0) for _ in range(1200)]
            + [(rnd.randrange(1, 600), rnd.randrange(1, 600)) for _ in range(1200)],
            "t": [(0, rnd.randrange(1, 600)) for _ in range(1200)] + [(rnd.randrange(1, 600), 0) for _ in range(1200)]
            + [(rnd.randrange(1, 600), rnd.randrange(1, 600)) for _ in range(1200)],
            "u": [(0, v) for v in range(600)] + [(0, 0)] * 50}
    for table, columns in PATH4_TABLES.items():
        conn.execute(f"CREATE TABLE {table} ({', '.join(c + ' int' for c in columns)})")
        with conn.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in data[table]:  # (a, b), (b, c) for the middles: the tables' columns swapped
                copy.write_row(row[::-1] if table in ("s", "t") else row)
    command.create("p4", PATH4, system="ivme", epsilon=0.5, target=conn)
    n = conn.execute("SELECT n FROM pgivm_p4.state").fetchone()[0]
    reads = []
    for table, columns in PATH4_TABLES.items():
        for values in ((0, 0), (0, 7), (5, 0), (11, 12)):
            row = dict(zip(columns, values))
            for statement in (f"INSERT INTO {table} ({', '.join(columns)}) VALUES (%s, %s)",
                              f"DELETE FROM {table} WHERE ctid = (SELECT ctid FROM {table} WHERE "
                              + " AND ".join(f"{c} = %s" for c in columns) + " LIMIT 1)"):
                before = _rebalances(conn)
                read, scans = rows_read_by(conn, statement, [row[c] for c in columns], "pgivm_p4")
                if _rebalances(conn) == before:
                    reads.append(read)
                    assert scans == 0, (table, values)
    assert len(reads) >= 24 and min(reads) > 0, reads  # (an update reads its relation's state at least)
    assert max(reads) <= 12 * n ** 0.5 + 60, f"an update read {max(reads)} rows; N = {n}"
    print(f"N = {n}: a single-row update read at most {max(reads)} state rows (12 √N + 60 = {12 * n ** 0.5 + 60:.0f})")
    assert max(reads) < 1200, "an update read as many rows as a hub's degree"
    assert command.verify("p4", target=conn).ok


def test_refusals_explain_and_status(conn: psycopg.Connection, dsn: str) -> None:
    for table, columns in PATH4_TABLES.items():
        conn.execute(f"CREATE TABLE {table} ({', '.join(c + ' int' for c in columns)})")
    command.create("p4", PATH4, target=conn)  # ivme is the default for a 4-path count
    assert conn.execute("SELECT system FROM pgivm_catalog.views WHERE name = 'p4'").fetchone()[0] == "ivme"
    text = "\n".join(command.explain("p4", target=conn))
    assert "Appendix G" in text and "S on A and on B" in text
    relations = next(section for section in command.status("p4", target=conn).sections if section.title == "relations")
    assert [row[0] for row in relations.rows] == ["S on A", "S on B", "T on B", "T on C"]


def test_alter_epsilon_repartitions(conn: psycopg.Connection) -> None:
    """alter --epsilon mid-stream: a major rebalancing at the new ε (strict partitions, every view
    rebuilt), then the stream goes on exact under the new threshold."""
    _run(conn, PATH4, PATH4_TABLES, 0.5, seed=31, steps=40)
    rnd = random.Random(32)
    for epsilon in (0.25, 1.0, 0.0, 0.75):
        command.action("p4", "alter", epsilon=epsilon, target=conn)
        state = conn.execute("SELECT epsilon, theta, n FROM pgivm_p4.state").fetchone()
        assert state[0] == epsilon and abs(state[1] - state[2] ** epsilon) < 1e-6
        assert command.verify("p4", strict=True, target=conn).ok, epsilon
        for _ in range(25):
            conn.execute(_statement(rnd, PATH4_TABLES))
            assert conn.execute("SELECT * FROM p4").fetchone()[0] == conn.execute(PATH4).fetchone()[0], epsilon
        assert command.verify("p4", target=conn).ok, epsilon
