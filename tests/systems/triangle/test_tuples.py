"""IVMε for every count over three relations ([L] Appendix H.1): a pair of tables joined on several
columns is partitioned on the tuple (Definition 40), and a column of all three tables joins each
pair's tuple, so the triangle's strategy (3R³) and the 3-path's (3R²) run over tuples kept as one
value of a composite type. Randomized streams with NULLs in any join column, multi-row statements,
deletes of absent rows, updates of join columns, TRUNCATE and rollbacks, compared with PostgreSQL's
own count after every statement, every invariant checked along the way; the single-row update's
bound on skewed data; the NULL rule of a tuple. (Spark's build of them: tests/spark/test_spark.py.)"""

from __future__ import annotations

import random
from dataclasses import dataclass

import psycopg
import pytest

from pgivm import command
from pgivm.query.analysis import shapes
from pgivm.query.model import Packed
from pgivm.query.parse import parse_query
from count_stream import run_count_stream
from test_complexity import rows_read_by


@dataclass(frozen=True)
class Form:
    query: str
    tables: dict[str, tuple[tuple[str, str], ...]]  # table -> (column, type)


# R and T share (a, y), R and S b, S and T c, and x is in all three: A = (a, y, x), B = (b, x),
# C = (c, x). Columns of different types carry one variable (int and bigint; text and varchar).
TRIANGLE = Form(
    "SELECT count(*) FROM r JOIN s ON r.b = s.b AND r.x = s.x JOIN t ON s.c = t.c AND t.x = s.x "
    "AND t.a = r.a AND t.y = r.y",
    {"r": (("a", "int"), ("b", "int"), ("x", "int"), ("y", "text")),
     "s": (("b", "int"), ("c", "int"), ("x", "bigint")),
     "t": (("c", "int"), ("a", "int"), ("x", "int"), ("y", "varchar(4)"))})
# Triangles within one label g over one edge table: g is a column of all three uses.
TRIANGLE_ONE = Form(
    "SELECT count(*) FROM e e1 JOIN e e2 ON e1.dst = e2.src AND e1.g = e2.g "
    "JOIN e e3 ON e2.dst = e3.src AND e3.dst = e1.src AND e3.g = e1.g",
    {"e": (("src", "int"), ("dst", "int"), ("g", "int"))})
# R and S joined on two columns, S and T on two (one of them text); R's k and T's z join nothing.
PATH = Form(
    "SELECT count(*) FROM r JOIN s ON r.b = s.b AND r.x = s.x JOIN t ON s.c = t.c AND s.d = t.d",
    {"r": (("b", "int"), ("x", "int"), ("k", "int")),
     "s": (("c", "int"), ("d", "text"), ("b", "int"), ("x", "int")),
     "t": (("z", "int"), ("c", "int"), ("d", "text"))})
# Walks of three edges within one label.
PATH_ONE = Form(
    "SELECT count(*) FROM e e1 JOIN e e2 ON e1.dst = e2.src AND e1.g = e2.g JOIN e e3 ON e2.dst = e3.src "
    "AND e3.g = e2.g",
    {"e": (("src", "int"), ("dst", "int"), ("g", "int"))})
FORMS = {"triangle": TRIANGLE, "triangle-one-table": TRIANGLE_ONE, "path": PATH, "path-one-table": PATH_ONE}


def _literal(rnd: random.Random, kind: str, null: float = 0.04, narrow: bool = False) -> str:
    """Skewed small values (0 and 1 turn heavy), fewer of them in a tuple's second and third
    columns (``narrow``) so that tuples still meet; a NULL now and then, in any join column."""
    if rnd.random() < null:
        return "NULL"
    value = rnd.choice([0, 0, 1] if narrow else [0] * 6 + [1] * 3 + list(range(2, 9)))
    return f"'{value}'" if kind in ("text", "varchar(4)") else str(value)


def _row(rnd: random.Random, columns: tuple[tuple[str, str], ...]) -> str:
    return "(" + ", ".join(_literal(rnd, k, narrow=i >= 2) for i, (_, k) in enumerate(columns)) + ")"


def _statement(rnd: random.Random, tables: dict[str, tuple[tuple[str, str], ...]]) -> str:
    table = rnd.choice(sorted(tables))
    columns = tables[table]
    names = [c for c, _ in columns]

    def where() -> str:  # on the wide columns (a narrow one would match a third of the table)
        return " AND ".join(f"{c} = {_literal(rnd, k, 0)}" for c, k in rnd.sample(columns[:2], rnd.randint(1, 2)))

    kind = rnd.random()
    if kind < 0.45:
        rows = ", ".join(_row(rnd, columns) for _ in range(rnd.randint(1, 8)))
        return f"INSERT INTO {table} ({', '.join(names)}) VALUES {rows}"
    if kind < 0.62:  # often rows that are not there
        return f"DELETE FROM {table} WHERE {where()}"
    if kind < 0.7:  # some of a hub's rows: its degree falls by steps, through the lower threshold
        column = names[0]
        return (f"DELETE FROM {table} WHERE ctid IN (SELECT ctid FROM {table} WHERE {column}::text IN ('0', '1') "
                f"LIMIT {rnd.randint(3, 15)})")
    if kind < 0.82:  # updates of join columns
        column, column_kind = rnd.choice(columns)
        return f"UPDATE {table} SET {column} = {_literal(rnd, column_kind, narrow=names.index(column) >= 2)} WHERE {where()}"
    if kind < 0.99:  # a burst: a hub in the first column and the narrow ones, the second fanning out,
        # so that a tuple turns heavy
        hub = rnd.choice("01")
        items = [f"(2 + g)::{k}" if i == 1 else f"'{hub}'::{k}" for i, (_, k) in enumerate(columns)]
        return f"INSERT INTO {table} ({', '.join(names)}) SELECT {', '.join(items)} FROM generate_series(1, {rnd.randint(10, 36)}) g"
    return f"TRUNCATE {table}"


def _create_tables(conn: psycopg.Connection, form: Form, rnd: random.Random, rows: int = 40) -> None:
    for table, columns in form.tables.items():  # rows in every table first: the build, and paths from the start
        conn.execute(f"CREATE TABLE {table} ({', '.join(f'{c} {k}' for c, k in columns)})")
        if rows:
            conn.execute(f"INSERT INTO {table} VALUES {', '.join(_row(rnd, columns) for _ in range(rows))}")


def _run(conn: psycopg.Connection, form: Form, epsilon: float, seed: int, steps: int, **options: object) -> list[int]:
    rnd = random.Random(seed)
    _create_tables(conn, form, rnd)
    command.create("q", form.query, system="ivme", epsilon=epsilon, target=conn, **options)
    counts = run_count_stream(conn, "q", form.query, rnd, lambda: _statement(rnd, form.tables), steps, verify_every=10)
    assert max(counts) > 30 and len(set(counts)) > steps // 5, f"the stream hardly changed the count: {counts}"
    return counts


def test_the_shapes_pack_the_tuples() -> None:
    """Each of the triangle's variables is a pair's columns with the column of all three; the
    path's likewise; a pair of one column each stays as it was."""
    r, s, t = shapes.as_triangle(parse_query(TRIANGLE.query)).atoms
    assert (r.first, r.second) == (Packed(("a", "y", "x"), ("r.a", "r.y", "r.x")), Packed(("b", "x"), ("r.b", "r.x")))
    assert (s.first, s.second) == (Packed(("b", "x"), ("r.b", "r.x")), Packed(("c", "x"), ("s.c", "r.x")))
    assert (t.first, t.second) == (Packed(("c", "x"), ("s.c", "r.x")), Packed(("a", "y", "x"), ("r.a", "r.y", "r.x")))
    path = shapes.as_three_path(parse_query(PATH.query))
    assert [a.columns for a in path.relations] == [
        (Packed(("b", "x"), ("r.b", "r.x")),),
        (Packed(("b", "x"), ("r.b", "r.x")), Packed(("c", "d"), ("s.c", "s.d"))),
        (Packed(("c", "d"), ("s.c", "s.d")),)]
    assert not shapes.as_triangle(parse_query("SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c "
                                              "AND t.a = r.a")).packed


@pytest.mark.parametrize("epsilon", [0.0, 0.25, 0.5, 0.75, 1.0])
@pytest.mark.parametrize("form", ["triangle", "path"])
def test_random_stream_matches_the_count(conn: psycopg.Connection, form: str, epsilon: float) -> None:
    _run(conn, FORMS[form], epsilon, seed=int(epsilon * 100) + len(form), steps=90)
    minor, major = conn.execute("SELECT minor_rebalances, major_rebalances FROM pgivm_q.state").fetchone()
    assert major >= 2, "N never moved"
    if epsilon in (0.25, 0.5):  # tuples moved between the parts
        assert minor > 0, "no tuple moved between the parts"


@pytest.mark.parametrize("form, epsilon", [("triangle-one-table", 0.5), ("triangle-one-table", 0.0),
                                           ("path-one-table", 0.5), ("path-one-table", 1.0)])
def test_one_edge_table(conn: psycopg.Connection, form: str, epsilon: float) -> None:
    _run(conn, FORMS[form], epsilon, seed=31 + int(epsilon * 10), steps=70)


@pytest.mark.parametrize("form, epsilon", [("triangle", 0.5), ("path", 0.25), ("triangle-one-table", 0.25)])
def test_the_batch_path(conn: psycopg.Connection, form: str, epsilon: float) -> None:
    """Every statement set at a time (threshold 0): K_delta of composite values joined on the state."""
    _run(conn, FORMS[form], epsilon, seed=5 + len(form), steps=60, batch_threshold=0)


@pytest.mark.parametrize("form", ["triangle", "path-one-table"])
def test_deferred_view(conn: psycopg.Connection, form: str) -> None:
    """The delta logs hold the composite values; each read refreshes from them."""
    _run(conn, FORMS[form], 0.5, seed=9, steps=50, refresh="deferred")


def test_refined_partitions(conn: psycopg.Connection) -> None:
    """Each relation partitioned on both of its tuples (Appendix D over Appendix H's tuples)."""
    _run(conn, TRIANGLE, 0.5, seed=12, steps=60, partitions="refined")


def test_a_null_in_one_column_of_a_tuple_joins_nothing(conn: psycopg.Connection) -> None:
    """(1, NULL) never equals (1, NULL) in a join, though a composite's equality takes two NULL fields
    for equal: such a row is not in the state, and the count stays PostgreSQL's."""
    _create_tables(conn, TRIANGLE, random.Random(1), rows=0)
    command.create("q", TRIANGLE.query, system="ivme", target=conn)
    conn.execute("INSERT INTO r VALUES (1, 2, NULL, 'a'), (1, 2, 3, 'a')")
    conn.execute("INSERT INTO s VALUES (2, 4, NULL), (2, 4, 3)")
    conn.execute("INSERT INTO t VALUES (4, 1, NULL, 'a'), (4, 1, 3, 'a'), (4, 1, 3, NULL)")
    assert conn.execute("SELECT * FROM q").fetchone()[0] == conn.execute(TRIANGLE.query).fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM (SELECT * FROM pgivm_q.r_heavy UNION ALL SELECT * FROM pgivm_q.r_light) k"
                        ).fetchone()[0] == 1
    conn.execute("UPDATE r SET x = NULL WHERE x = 3")
    assert conn.execute("SELECT * FROM q").fetchone()[0] == 0
    assert command.verify("q", target=conn).ok


def test_explain_alter_and_upgrade(conn: psycopg.Connection) -> None:
    _create_tables(conn, TRIANGLE, random.Random(2))
    command.create("q", TRIANGLE.query, target=conn)  # ivme is the default for it now
    assert conn.execute("SELECT system FROM pgivm_catalog.views WHERE name = 'q'").fetchone()[0] == "ivme"
    text = "\n".join(command.explain("q", target=conn))
    assert "3R³" in text and "of all three: r.x" in text and "ivme runs this class's strategy" in text, text
    assert "R(A, B) = r((a, y, x), (b, x))" in text, text
    command.action("q", "alter", epsilon=0.25, target=conn)
    conn.execute("INSERT INTO r SELECT 0, g % 4, 1, '0' FROM generate_series(1, 40) g")
    assert conn.execute("SELECT * FROM q").fetchone()[0] == conn.execute(TRIANGLE.query).fetchone()[0]
    assert command.verify("q", target=conn).ok
    command.upgrade("q", force=True, target=conn)
    assert command.verify("q", target=conn).ok


def _skewed(conn: psycopg.Connection, n: int) -> None:
    """The triangle over tuples on skew: the tuple A = (0, '0', 0) a hub of R and T, B = (0, 0) of S,
    and n/4 light tuples around them: a single-row update at a hub reads O(N^½) state rows with
    IVMε, not the hub's degree."""
    quarter = n // 4
    data = {"r": [(0, b, 0, "0") for b in range(quarter)] + [(a, 0, 0, "0") for a in range(1, quarter)],
            "s": [(0, c, 0) for c in range(quarter)] + [(b, 0, 0) for b in range(1, quarter)],
            "t": [(0, a, 0, "0") for a in range(quarter)] + [(c, 0, 0, "0") for c in range(1, quarter)]}
    for table, columns in TRIANGLE.tables.items():
        conn.execute(f"CREATE TABLE {table} ({', '.join(f'{c} {k}' for c, k in columns)})")
        with conn.cursor().copy(f"COPY {table} FROM STDIN") as copy:
            for row in data[table]:
                copy.write_row(row)


def test_single_update_reads_within_the_bound(conn: psycopg.Connection) -> None:
    """At ε = ½ a single-row update reads at most a few √N state rows and never scans a state table,
    where the hub tuples' degree is N/12."""
    _skewed(conn, 4000)
    command.create("q", TRIANGLE.query, system="ivme", epsilon=0.5, target=conn)
    n = conn.execute("SELECT n FROM pgivm_q.state").fetchone()[0]
    reads = []
    for table, columns in TRIANGLE.tables.items():
        names = [c for c, _ in columns]
        for values in ((0, 0, 0, "0"), (0, 7, 0, "0"), (5, 0, 0, "0"), (11, 12, 0, "0")):
            row = values[:len(names)]
            statement = f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join(['%s'] * len(names))})"
            read, scans = rows_read_by(conn, statement, list(row), "pgivm_q")
            reads.append(read)
            assert scans == 0, (table, row)
    assert max(reads) <= 6 * n ** 0.5 + 40, f"an update read {max(reads)} rows; N = {n}"
    print(f"N = {n}: a single-row update read at most {max(reads)} state rows (6 √N + 40 = {6 * n ** 0.5 + 40:.0f})")
    assert conn.execute("SELECT * FROM q").fetchone()[0] == conn.execute(TRIANGLE.query).fetchone()[0]
    assert command.verify("q", target=conn).ok


# The triangles themselves over tuples: every column of the query's tuples shown (also one of all
# three), grouped by all of them, or DISTINCT.
LISTING = ("SELECT r.a, r.y, r.b, s.c, s.x FROM r JOIN s ON r.b = s.b AND r.x = s.x JOIN t ON s.c = t.c "
           "AND t.x = s.x AND t.a = r.a AND t.y = r.y")
GROUPED = LISTING.replace("s.x FROM", "s.x, count(*) AS n FROM") + " GROUP BY r.a, r.y, r.b, s.c, s.x"
DISTINCT = LISTING.replace("SELECT", "SELECT DISTINCT")


@pytest.mark.parametrize("query, epsilon, batch", [(LISTING, 0.5, None), (GROUPED, 0.25, 0), (DISTINCT, 0.5, None),
                                                   (LISTING, 0.0, 0)])
def test_listing_over_tuples_equals_the_query_after_every_statement(conn: psycopg.Connection, query: str, epsilon: float,
                                                                     batch: int | None) -> None:
    """Theorem 21's listing over the tuples: the view's rows are the query's bag (each triangle as
    often as its multiplicity, or once with its count), read from the composite values' fields."""
    rnd = random.Random(41 + int(epsilon * 4))
    _create_tables(conn, TRIANGLE, rnd)
    options = {} if batch is None else {"batch_threshold": batch}
    command.create("q", query, system="ivme", epsilon=epsilon, target=conn, **options)
    assert [d.name for d in conn.execute("SELECT * FROM q LIMIT 0").description] == \
        [d.name for d in conn.execute(query + " LIMIT 0").description]
    sizes = []
    for step in range(50):
        conn.execute(_statement(rnd, TRIANGLE.tables))
        mine, theirs = (sorted(conn.execute(q).fetchall(), key=repr) for q in ("SELECT * FROM q", query))
        assert mine == theirs, step
        sizes.append(len(mine))
        if step % 10 == 9:
            assert command.verify("q", target=conn).ok, step
    assert max(sizes) > 20 and len(set(sizes)) > 10, sizes
    assert command.verify("q", target=conn).ok


def test_a_listing_over_tuples_grouped_by_fewer_columns_is_first_orders() -> None:
    """Grouped by every column of the tuples but one (y), a group holds several tuples' triangles:
    IVMε refuses it as it refuses a count per node, in one line."""
    query = LISTING.replace("r.y, ", "").replace("s.x FROM", "s.x, count(*) FROM") + " GROUP BY r.a, r.b, s.c, s.x"
    with pytest.raises(Exception, match="grouped by fewer than its three join variables"):
        shapes.as_triangle_listing(parse_query(query))
