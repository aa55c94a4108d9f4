"""IVMε for Loomis–Whitney counts of degree 4, 5 and 9 ([L] Appendix F): randomized streams compared
with PostgreSQL's own count after every statement, every invariant checked along the way; the
bound on what a single-row update reads on skewed data; the shapes recognised and refused."""

from __future__ import annotations

import random
import string
import time

import psycopg
import pytest

from pgivm import command
from pgivm.query.analysis import shapes
from pgivm.query.parse import parse_query
from count_stream import run_count_stream
from test_complexity import rows_read_by

# Degree 4 over four tables: R1(a,b,c), R2(b,c,d), R3(a,c,d), R4(a,b,d) (each misses one variable).
LW4 = ("SELECT count(*) FROM r1 JOIN r2 ON r1.b = r2.b AND r1.c = r2.c "
       "JOIN r3 ON r3.c = r1.c AND r3.d = r2.d AND r3.a = r1.a JOIN r4 ON r4.d = r2.d AND r4.a = r1.a AND r4.b = r1.b")
LW4_TABLES = {"r1": ("a", "b", "c"), "r2": ("b", "c", "d"), "r3": ("a", "c", "d"), "r4": ("a", "b", "d")}
# The same over one ternary table h(x, y, z), used four times: h1 = (a,b,c), h2 = (b,c,d), h3 = (c,d,a), h4 = (d,a,b).
LW4_ONE = ("SELECT count(*) FROM h h1 JOIN h h2 ON h2.x = h1.y AND h2.y = h1.z "
           "JOIN h h3 ON h3.x = h1.z AND h3.y = h2.z AND h3.z = h1.x JOIN h h4 ON h4.x = h2.z AND h4.y = h1.x AND h4.z = h1.y")
ONE_TABLE = {"h": ("x", "y", "z")}


def lw_query(n: int) -> tuple[str, dict[str, tuple[str, ...]]]:
    """Degree n: n tables q0..q(n-1) of n−1 columns, table i missing variable i, joined by JOIN ... ON."""
    letters = string.ascii_lowercase[:n]
    tables = {f"q{i}": tuple(v for v in letters if v != letters[i]) for i in range(n)}
    query = "SELECT count(*) FROM q0 " + " ".join(
        f"JOIN q{i} ON " + " AND ".join(f"q{i}.{v} = {next(f'q{j}' for j in range(i) if v in tables[f'q{j}'])}.{v}"
                                        for v in tables[f"q{i}"] if any(v in tables[f"q{j}"] for j in range(i)))
        for i in range(1, n))
    return query, tables


LW5, LW5_TABLES = lw_query(5)


def _statement(rnd: random.Random, tables: dict[str, tuple[str, ...]], query: str) -> str:
    table = rnd.choice(sorted(tables))
    columns = tables[table]
    value = lambda: rnd.choice([0] * 7 + [1] * 3 + list(range(2, 12)))  # noqa: E731 - skewed: 0 and 1 turn heavy
    kind = rnd.random()
    if kind < 0.3:  # one assignment of every variable, its projection into every table: a result appears
        letters = "abcde" + "".join(sorted({v for columns in tables.values() for v in columns} - set("abcdexyz")))
        assignment = {v: value() for v in letters}
        if len(tables) == 1:  # one table h for every relation: h1 = (a,b,c), h2 = (b,c,d), h3 = (c,d,a), h4 = (d,a,b)
            return "INSERT INTO h VALUES " + ", ".join(
                "(" + ", ".join(str(assignment[v]) for v in p) + ")" for p in ("abc", "bcd", "cda", "dab"))
        return "; ".join(f"INSERT INTO {t} VALUES ({', '.join(str(assignment[c]) for c in tables[t])})" for t in sorted(tables))
    if kind < 0.65:
        rows = ", ".join("(" + ", ".join(str(value()) for _ in columns) + ")" for _ in range(rnd.randint(1, 8)))
        return f"INSERT INTO {table} VALUES {rows}"
    if kind < 0.8:
        return f"DELETE FROM {table} WHERE " + " AND ".join(f"{c} = {value()}" for c in rnd.sample(columns, 2))
    if kind < 0.9:
        return f"UPDATE {table} SET {rnd.choice(columns)} = {value()} WHERE {rnd.choice(columns)} = {value()}"
    if kind < 0.985:  # a burst on value 0: all columns 0 but one, which fans out (a value turns heavy)
        fan = rnd.randrange(len(columns))
        items = ", ".join("100 + g" if k == fan else "0" for k in range(len(columns)))
        return f"INSERT INTO {table} SELECT {items} FROM generate_series(1, {rnd.randint(10, 40)}) g"
    return f"TRUNCATE {table}"


def _run(conn: psycopg.Connection, query: str, tables: dict[str, tuple[str, ...]], epsilon: float, seed: int,
         steps: int, recount: psycopg.Connection | None = None, **options: object) -> list[int]:
    """The stream, the count compared after every statement with the query run on ``recount`` (else
    on ``conn``), verify every 15 statements."""
    rnd = random.Random(seed)
    for table, columns in tables.items():
        conn.execute(f"CREATE TABLE {table} ({', '.join(c + ' int' for c in columns)})")
    command.create("lw", query, system="ivme", epsilon=epsilon, target=conn, **options)
    counts = run_count_stream(conn, "lw", query, rnd, lambda: _statement(rnd, tables, query), steps, verify_every=15,
                              recount=recount)
    assert max(counts) > 20 and len(set(counts)) > steps // 10, "the stream hardly changed the count"
    return counts


@pytest.mark.parametrize("epsilon", [0.0, 0.25, 0.5, 0.75, 1.0])
@pytest.mark.parametrize("form", ["tables", "one-table"])
def test_random_stream_matches_the_count(conn: psycopg.Connection, form: str, epsilon: float) -> None:
    query, tables = (LW4, LW4_TABLES) if form == "tables" else (LW4_ONE, ONE_TABLE)
    _run(conn, query, tables, epsilon, seed=int(epsilon * 100) + len(form), steps=120)
    minor, major = conn.execute("SELECT minor_rebalances, major_rebalances FROM pgivm_lw.state").fetchone()
    assert major >= 2, "N never moved"
    if 0 < epsilon < 1 and form == "tables":
        assert minor > 0, "no value moved between the parts"


def test_degree_five_and_the_batch_path(conn: psycopg.Connection) -> None:
    """Degree 5, every statement through K_delta and apply_batch_K (threshold 0)."""
    _run(conn, LW5, LW5_TABLES, 0.5, seed=5, steps=120, batch_threshold=0)


@pytest.mark.parametrize("epsilon", [0.0, 0.25, 1.0])
def test_the_batch_path_moves_values(conn: psycopg.Connection, epsilon: float) -> None:
    """Degree 4, every statement set at a time: its deltas joined, then the values it pushed across
    a threshold moved (or N reset by a major rebalancing)."""
    _run(conn, LW4, LW4_TABLES, epsilon, seed=17, steps=120, batch_threshold=0)
    minor = conn.execute("SELECT minor_rebalances FROM pgivm_lw.state").fetchone()[0]
    assert (minor > 0) == (0 < epsilon < 1), minor


def test_degree_nine_on_a_session_that_plans_as_usual(conn: psycopg.Connection, dsn: str) -> None:
    """Degree 9: the state's functions join in the order written (PostgreSQL's search over join orders
    of nine tables took 10 to 80 s a statement), so create, the writers' statements and verify run
    on a session with the default planner settings; the test's own recount joins in the order written."""
    query, tables = lw_query(9)
    with psycopg.connect(dsn, autocommit=True) as recount:
        recount.execute("SET join_collapse_limit = 1")
        started = time.perf_counter()
        counts = _run(conn, query, tables, 0.5, seed=21, steps=150, recount=recount)
    assert conn.execute("SHOW join_collapse_limit").fetchone()[0] == "8"
    assert time.perf_counter() - started < 60, "a statement planned a nine-table join by exhaustive search"
    assert max(counts) > 20


def test_deferred_view(conn: psycopg.Connection) -> None:
    _run(conn, LW4, LW4_TABLES, 0.25, seed=9, steps=90, refresh="deferred")


def test_shapes() -> None:
    found = shapes.as_loomis_whitney(parse_query(LW4))
    assert [a.variables for a in found.relations] == [("a", "b", "c"), ("b", "c", "d"), ("a", "c", "d"), ("a", "b", "d")]
    assert shapes.as_loomis_whitney(parse_query(LW5)).degree == 5
    assert shapes.as_loomis_whitney(parse_query(lw_query(12)[0])).degree == 12
    assert shapes.loomis_whitney(parse_query(LW4_ONE)) is not None
    for refused in ("SELECT count(*) FROM r1 JOIN r2 ON r1.b = r2.b AND r1.c = r2.c JOIN r3 ON r3.c = r1.c",
                    LW4.replace("count(*)", "r1.a, count(*)") + " GROUP BY r1.a",
                    LW4 + " WHERE r1.a > 1"):
        assert shapes.loomis_whitney(parse_query(refused)) is None


def test_single_update_reads_within_the_bound(conn: psycopg.Connection) -> None:
    """A hub value in every relation (degree ~N/8): a single-row update reads O(N^½) state rows at
    ε = ½, fewer than a hub's degree, and never scans a state table."""
    rnd = random.Random(3)
    for table, columns in LW4_TABLES.items():
        conn.execute(f"CREATE TABLE {table} ({', '.join(c + ' int' for c in columns)})")
        rows = [tuple(0 if k == 0 else rnd.randrange(1, 400) for k in range(3)) for _ in range(1500)]  # first column 0: hubs
        rows += [tuple(rnd.randrange(1, 400) for _ in range(3)) for _ in range(1500)]
        with conn.cursor().copy(f"COPY {table} FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
    command.create("lw", LW4, system="ivme", epsilon=0.5, target=conn)
    n = conn.execute("SELECT n FROM pgivm_lw.state").fetchone()[0]
    reads = []
    for table, columns in LW4_TABLES.items():
        for values in ((0, 0, 0), (0, 7, 9), (5, 0, 0), (11, 12, 13)):
            row = dict(zip(columns, values))
            for statement in (f"INSERT INTO {table} VALUES (%s, %s, %s)",
                              f"DELETE FROM {table} WHERE ctid = (SELECT ctid FROM {table} WHERE "
                              + " AND ".join(f"{c} = %s" for c in columns) + " LIMIT 1)"):
                before = conn.execute("SELECT major_rebalances, minor_rebalances FROM pgivm_lw.state").fetchone()
                read, scans = rows_read_by(conn, statement, [row[c] for c in columns], "pgivm_lw")
                if conn.execute("SELECT major_rebalances, minor_rebalances FROM pgivm_lw.state").fetchone() == before:
                    reads.append(read)
                    assert scans == 0, (table, values)
    assert len(reads) >= 24 and min(reads) > 0, reads  # (an update reads its relation's state at least)
    assert max(reads) <= 12 * n ** 0.5 + 60, f"an update read {max(reads)} rows; N = {n}"
    assert max(reads) < 1500, "an update read as many rows as a hub's degree"
    assert command.verify("lw", target=conn).ok
