"""IVMε for the 3-path count Σ R(b)S(b,c)T(c), the 3R² class of counts over three relations ([L]
Appendix H.3): randomized streams compared with PostgreSQL's own count after every statement, every
invariant checked along the way (S's partition on B, both views against their definitions); the
bound on what a single-row update reads on skewed data, where F-IVM reads a hub's degree; the
shapes recognised and refused; explain, status, alter."""

from __future__ import annotations

import random

import psycopg
import pytest

from pgivm import command
from pgivm.query.analysis import shapes
from pgivm.query.parse import parse_query
from count_stream import run_count_stream
from test_complexity import rows_read_by

# R and T carry a column no join reads (aggregated away); S is written with its columns swapped.
PATH3 = "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c"
PATH3_TABLES = {"r": ("b", "x"), "s": ("c", "b"), "t": ("z", "c")}
# The graph form: walks of three edges over one edge table.
PATH3_ONE = "SELECT count(*) FROM e e1 JOIN e e2 ON e1.dst = e2.src JOIN e e3 ON e2.dst = e3.src"
ONE_TABLE = {"e": ("src", "dst")}


def _value(rnd: random.Random) -> int:
    """Skewed: 0 and 1 turn heavy; the rest spread over what the bursts fan out to."""
    return rnd.choice([0] * 6 + [1] * 3 + list(range(2, 41)))


def _statement(rnd: random.Random, tables: dict[str, tuple[str, ...]]) -> str:
    table = rnd.choice(sorted(tables) + [t for t in tables if t == "s"])  # the partitioned middle twice as often
    columns = tables[table]
    kind = rnd.random()
    if kind < 0.45:  # a NULL now and then, in a join column too: such a row joins nothing
        value = lambda: "NULL" if rnd.random() < 0.05 else str(_value(rnd))  # noqa: E731
        rows = ", ".join(f"({value()}, {value()})" for _ in range(rnd.randint(1, 8)))
        return f"INSERT INTO {table} VALUES {rows}"
    if kind < 0.62:  # some of these delete rows that are not there
        return f"DELETE FROM {table} WHERE {columns[0]} = {_value(rnd)} AND {columns[1]} = {_value(rnd)}"
    if kind < 0.7:
        return f"DELETE FROM {table} WHERE {rnd.choice(columns)} = {_value(rnd)}"
    if kind < 0.76:  # some of a hub's rows: its degree falls by steps, through the lower threshold
        column = rnd.choice(columns)
        return (f"DELETE FROM {table} WHERE ctid IN (SELECT ctid FROM {table} WHERE {column} IN (0, 1) "
                f"LIMIT {rnd.randint(3, 15)})")
    if kind < 0.85:  # updates of join columns among them
        return f"UPDATE {table} SET {rnd.choice(columns)} = {_value(rnd)} WHERE {rnd.choice(columns)} = {_value(rnd)}"
    if kind < 0.99:  # a burst: one column 0 (or 1), the other fanning out, so a value turns heavy
        hub = rnd.choice(columns)
        items = ", ".join(f"{rnd.choice([0, 1])}" if c == hub else "2 + g" for c in columns)
        return f"INSERT INTO {table} SELECT {items} FROM generate_series(1, {rnd.randint(10, 36)}) g"
    return f"TRUNCATE {table}"


def _create(conn: psycopg.Connection, tables: dict[str, tuple[str, ...]], rnd: random.Random) -> None:
    for table, columns in tables.items():  # some rows in every table first: the build, and paths from the start
        conn.execute(f"CREATE TABLE {table} ({', '.join(c + ' int' for c in columns)})")
        conn.execute(f"INSERT INTO {table} VALUES " + ", ".join(f"({_value(rnd)}, {_value(rnd)})" for _ in range(60)))


def _run(conn: psycopg.Connection, query: str, tables: dict[str, tuple[str, ...]], epsilon: float, seed: int,
         steps: int, **options: object) -> list[int]:
    rnd = random.Random(seed)
    _create(conn, tables, rnd)
    command.create("p3", query, system="ivme", epsilon=epsilon, target=conn, **options)
    counts = run_count_stream(conn, "p3", query, rnd, lambda: _statement(rnd, tables), steps, verify_every=10)
    assert max(counts) > 100 and len(set(counts)) > steps // 4, "the stream hardly changed the count"
    return counts


def _rebalances(conn: psycopg.Connection) -> tuple[int, int]:
    return conn.execute("SELECT minor_rebalances, major_rebalances FROM pgivm_p3.state").fetchone()


@pytest.mark.parametrize("epsilon", [0.0, 0.25, 0.5, 0.75, 1.0])
@pytest.mark.parametrize("form", ["tables", "one-table"])
def test_random_stream_matches_the_count(conn: psycopg.Connection, form: str, epsilon: float) -> None:
    query, tables = (PATH3, PATH3_TABLES) if form == "tables" else (PATH3_ONE, ONE_TABLE)
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
    query, tables = (PATH3, PATH3_TABLES) if form == "tables" else (PATH3_ONE, ONE_TABLE)
    _run(conn, query, tables, epsilon, seed=17 + len(form), steps=80, batch_threshold=0)
    if epsilon in (0.25, 0.5):
        assert _rebalances(conn)[0] > 0


def test_both_parts_and_views_are_reached(conn: psycopg.Connection) -> None:
    """Hubs 0 and 1 on B fanning out to 60 C-values, light B-values among them: both parts of S and
    both views hold rows after the build, and a stream over the same values keeps the count exact."""
    rnd = random.Random(23)
    data = {"r": [(v, 0) for v in range(62)],
            "s": [(hub, c) for hub in (0, 1) for c in range(2, 62)] + [(rnd.randrange(2, 62), rnd.randrange(0, 62)) for _ in range(80)],
            "t": [(0, c) for c in range(62)]}
    for table, columns in PATH3_TABLES.items():
        conn.execute(f"CREATE TABLE {table} ({', '.join(c + ' int' for c in columns)})")
        with conn.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in data[table]:
                copy.write_row(row[::-1] if table == "s" else row)
    command.create("p3", PATH3, system="ivme", epsilon=0.5, target=conn)
    assert conn.execute("SELECT count(DISTINCT hb) FROM pgivm_p3.s").fetchone()[0] == 2
    for v in ("rs_light", "st_heavy"):
        assert conn.execute(f"SELECT count(*) FROM pgivm_p3.{v}").fetchone()[0] > 0, v
    for step in range(120):
        conn.execute(_statement(rnd, PATH3_TABLES))
        assert conn.execute("SELECT * FROM p3").fetchone()[0] == conn.execute(PATH3).fetchone()[0], step
        if step % 20 == 19:
            assert command.verify("p3", target=conn).ok, step
    assert command.verify("p3", target=conn).ok


def test_deferred_view(conn: psycopg.Connection) -> None:
    _run(conn, PATH3_ONE, ONE_TABLE, 0.5, seed=9, steps=60, refresh="deferred")


def test_shapes() -> None:
    found = shapes.as_three_path(parse_query(PATH3))
    assert [(a.relation, a.variables, a.columns) for a in found.relations] == [
        ("r", ("b",), ("b",)), ("s", ("b", "c"), ("b", "c")), ("t", ("c",), ("c",))]
    one = shapes.as_three_path(parse_query(PATH3_ONE))
    assert [a.columns for a in one.relations] == [("dst",), ("src", "dst"), ("src",)]
    assert shapes.three_path(parse_query("SELECT count(*) FROM r, s, t WHERE s.c = t.c AND r.b = s.b")) is not None
    # two columns a pair: B a tuple (tests/systems/triangle/test_tuples.py)
    assert shapes.three_path(parse_query("SELECT count(*) FROM r JOIN s ON r.b = s.b AND r.x = s.x JOIN t ON s.c = t.c")).packed
    for refused in ("SELECT count(*) FROM r JOIN s ON r.b = s.b",
                    PATH3.replace("count(*)", "r.b, count(*)") + " GROUP BY r.b",
                    PATH3 + " WHERE r.x > 1",
                    PATH3 + " AND t.z = r.x",  # the ends share a variable: 3R³
                    "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.b = t.c",  # one variable of all three: 3R⁰
                    "SELECT count(*) FROM r LEFT JOIN s ON r.b = s.b JOIN t ON s.c = t.c"):
        assert shapes.three_path(parse_query(refused)) is None, refused


def _skewed(conn: psycopg.Connection, n: int, rnd: random.Random) -> None:
    """A hub B-value 0 (degree n/4 in S, heavy) and a hub C-value 0 (n/4 B-values reach it, twenty
    of them heavy: T's update there loops over those), light pairs besides: F-IVM's view tree reads
    a hub's whole degree under one of R's or T's updates, whatever its root."""
    quarter = n // 4
    data = {"r": [(v, 0) for v in range(quarter)] + [(0, 0)] * 5,
            "s": [(0, c) for c in range(1, quarter)] + [(b, 0) for b in range(1, quarter)]
            + [(b, c) for b in range(1, 21) for c in range(quarter, quarter + 150)]
            + [(rnd.randrange(1, quarter), rnd.randrange(1, quarter)) for _ in range(quarter)],
            "t": [(0, c) for c in range(quarter)] + [(0, 0)] * 5}
    for table, columns in PATH3_TABLES.items():
        conn.execute(f"CREATE TABLE {table} ({', '.join(c + ' int' for c in columns)})")
        with conn.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in data[table]:  # (b, c) for the middle: the table's columns swapped
                copy.write_row(row[::-1] if table == "s" else row)


def test_single_update_reads_within_the_bound(conn: psycopg.Connection) -> None:
    """A single-row update reads O(N^½) state rows at ε = ½, far fewer than a hub's degree, and
    never scans a state table; F-IVM on the same data reads a hub's degree for one of them."""
    _skewed(conn, 4000, random.Random(3))
    command.create("p3", PATH3, system="ivme", epsilon=0.5, target=conn)
    n = conn.execute("SELECT n FROM pgivm_p3.state").fetchone()[0]
    reads = []
    for table, columns in PATH3_TABLES.items():
        for values in ((0, 0), (0, 7), (5, 0), (11, 12), (30, 1)):
            row = dict(zip(columns, values))
            for statement in (f"INSERT INTO {table} ({', '.join(columns)}) VALUES (%s, %s)",
                              f"DELETE FROM {table} WHERE ctid = (SELECT ctid FROM {table} WHERE "
                              + " AND ".join(f"{c} = %s" for c in columns) + " LIMIT 1)"):
                before = _rebalances(conn)
                read, scans = rows_read_by(conn, statement, [row[c] for c in columns], "pgivm_p3")
                if _rebalances(conn) == before:
                    reads.append(read)
                    assert scans == 0, (table, values)
    assert len(reads) >= 24 and min(reads) > 0, reads  # (an update reads its relation's state at least)
    assert max(reads) <= 6 * n ** 0.5 + 40, f"an update read {max(reads)} rows; N = {n}"
    assert max(reads) >= 40, "no update went through the twenty heavy B-values at C-value 0"
    print(f"N = {n}: a single-row update read at most {max(reads)} state rows (6 √N + 40 = {6 * n ** 0.5 + 40:.0f})")
    assert command.verify("p3", target=conn).ok
    command.drop("p3", target=conn)
    command.create("f3", PATH3, system="fivm", target=conn)
    fivm = max(rows_read_by(conn, f"INSERT INTO {table} ({', '.join(columns)}) VALUES (0, 0)", [], "pgivm_f3")[0]
               for table, columns in (("r", PATH3_TABLES["r"]), ("t", PATH3_TABLES["t"])))
    assert fivm >= 999, f"F-IVM read only {fivm} rows under a hub's update"
    print(f"F-IVM under a hub's update: {fivm} state rows")


def test_default_system_explain_and_status(conn: psycopg.Connection, dsn: str) -> None:
    for table, columns in PATH3_TABLES.items():
        conn.execute(f"CREATE TABLE {table} ({', '.join(c + ' int' for c in columns)})")
    command.create("p3", PATH3, target=conn)  # ivme is the default for a 3-path count
    assert conn.execute("SELECT system FROM pgivm_catalog.views WHERE name = 'p3'").fetchone()[0] == "ivme"
    text = "\n".join(command.explain("p3", target=conn))
    assert "Appendix H.3" in text and "S on B" in text and "ivme runs this class's strategy" in text
    relations = next(section for section in command.status("p3", target=conn).sections if section.title == "relations")
    assert [row[0] for row in relations.rows] == ["S on B"]


def test_alter_epsilon_repartitions(conn: psycopg.Connection) -> None:
    """alter --epsilon mid-stream: a major rebalancing at the new ε (the strict partition, both views
    rebuilt), then the stream goes on exact under the new threshold."""
    _run(conn, PATH3, PATH3_TABLES, 0.5, seed=31, steps=40)
    rnd = random.Random(32)
    for epsilon in (0.25, 1.0, 0.0, 0.75):
        command.action("p3", "alter", epsilon=epsilon, target=conn)
        state = conn.execute("SELECT epsilon, theta, n FROM pgivm_p3.state").fetchone()
        assert state[0] == epsilon and abs(state[1] - state[2] ** epsilon) < 1e-6
        assert command.verify("p3", strict=True, target=conn).ok, epsilon
        for _ in range(25):
            conn.execute(_statement(rnd, PATH3_TABLES))
            assert conn.execute("SELECT * FROM p3").fetchone()[0] == conn.execute(PATH3).fetchone()[0], epsilon
        assert command.verify("p3", target=conn).ok, epsilon


@pytest.mark.parametrize("batch_threshold", [None, 0])
def test_a_b_value_moves_to_heavy_and_back(conn: psycopg.Connection, batch_threshold: int | None) -> None:
    """Single-row statements raise a B-value's degree in S until it moves to the heavy part (a minor
    rebalancing: rs_light gives up its paths, st_heavy takes them), then lower it until it moves back; the
    count and every invariant hold after each statement, on the row-at-a-time and the batch path."""
    rnd = random.Random(41)
    _create(conn, PATH3_TABLES, rnd)
    conn.execute("INSERT INTO r VALUES (7, 0), (7, 1)")
    conn.execute("INSERT INTO t SELECT 0, g FROM generate_series(100, 160) g")
    options = {} if batch_threshold is None else {"batch_threshold": batch_threshold}
    command.create("p3", PATH3, system="ivme", epsilon=0.5, target=conn, **options)

    def heavy() -> bool | None:
        row = conn.execute("SELECT heavy FROM pgivm_p3.s_b_degree WHERE b = 7").fetchone()
        return row and row[0]

    def check() -> None:
        assert conn.execute("SELECT * FROM p3").fetchone()[0] == conn.execute(PATH3).fetchone()[0]
        assert command.verify("p3", target=conn).ok

    assert not heavy()
    for c in range(100, 161):
        conn.execute("INSERT INTO s (c, b) VALUES (%s, 7)", [c])
        check()
        if heavy():
            break
    assert heavy() and _rebalances(conn)[0] >= 1, "the value never turned heavy"
    assert conn.execute("SELECT mult FROM pgivm_p3.st_heavy WHERE b = 7").fetchone()[0] > 0
    moved = _rebalances(conn)[0]
    for c in range(100, 161):
        conn.execute("DELETE FROM s WHERE b = 7 AND c = %s", [c])
        check()
        if not heavy():
            break
    assert heavy() is False and _rebalances(conn)[0] > moved, "the value never turned light again"
    assert conn.execute("SELECT count(*) FROM pgivm_p3.st_heavy WHERE b = 7").fetchone()[0] == 0
