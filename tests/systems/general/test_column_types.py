"""Join, GROUP BY and summed columns of the types people declare (issue 22): varchar(n), char(n),
an enum, domains over int and over varchar, text, date, numeric and boolean, under every system that
takes the view, after every statement against PostgreSQL. A type without equality (point, json) is
refused in one line, nothing created.
"""

from __future__ import annotations

import random

import psycopg
import pytest
from psycopg import sql

from pgivm import command
from pgivm.errors import PgivmError, UnsupportedQuery
from pgivm.installed import open_view
from pgivm.systems import common
from pgivm.transactions import session

SETUP = """
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN small AS int CHECK (VALUE >= 0);
CREATE DOMAIN code AS varchar(8);
CREATE TABLE person (name varchar(20), mood mood, team small, day date, score numeric(6, 2), active boolean);
CREATE TABLE team (id small, city code, label char(3));
CREATE TABLE city (name code, country text);
"""
NAMES = ["ann", "bob", "cy", "dee"]
CITIES = ["oslo", "rome", "lima"]
QUERIES = {
    "fivm": ("SELECT p.mood, c.country, count(*) AS n, sum(p.score) AS total FROM person p "
             "JOIN team t ON p.team = t.id JOIN city c ON t.city = c.name GROUP BY p.mood, c.country"),
    "first-order": ("SELECT t.label, p.active, count(*) AS n FROM person p JOIN team t ON p.team = t.id "
                    "JOIN city c ON t.city = c.name GROUP BY t.label, p.active"),
    "recompute": "SELECT p.name, p.day, c.name AS city FROM person p JOIN team t ON p.team = t.id JOIN city c ON t.city = c.name",
}


def _statement(conn: psycopg.Connection, rng: random.Random) -> None:
    table = rng.choice(["person", "person", "team", "city"])
    if rng.random() < 0.6:
        if table == "person":
            conn.execute("INSERT INTO person VALUES (%s, %s, %s, %s, %s, %s)",
                         [rng.choice(NAMES), rng.choice(["sad", "ok", "happy"]), rng.randint(0, 3),
                          f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}", rng.randint(0, 999) / 4, rng.random() < 0.5])
        elif table == "team":
            conn.execute("INSERT INTO team VALUES (%s, %s, %s)", [rng.randint(0, 3), rng.choice(CITIES), rng.choice(["a", "bb"])])
        else:
            conn.execute("INSERT INTO city VALUES (%s, %s)", [rng.choice(CITIES), rng.choice(["no", "it", "pe"])])
    elif rng.random() < 0.7:
        key = {"person": "mood = %s", "team": "id = %s", "city": "name = %s"}[table]
        value = {"person": rng.choice(["sad", "ok"]), "team": rng.randint(0, 3), "city": rng.choice(CITIES)}[table]
        conn.execute(f"DELETE FROM {table} WHERE {key}", [value])
    else:
        conn.execute("UPDATE team SET city = %s WHERE id = %s", [rng.choice(CITIES), rng.randint(0, 3)])


@pytest.mark.parametrize("system", list(QUERIES))
def test_declared_types_join_group_and_sum_exactly(conn: psycopg.Connection, dsn: str, system: str) -> None:
    conn.execute(SETUP)
    rng = random.Random(system)
    for _ in range(30):
        _statement(conn, rng)
    query = QUERIES[system]
    assert command.create("v", query, system=system, target=dsn).system == system
    changed = 0
    before = conn.execute("SELECT * FROM v").fetchall()
    for step in range(50):
        _statement(conn, rng)
        diff = conn.execute(f"(SELECT * FROM v EXCEPT ALL ({query})) UNION ALL (({query}) EXCEPT ALL SELECT * FROM v)").fetchall()
        assert diff == [], f"{system} step {step}: {diff[:3]}"
    changed = conn.execute("SELECT * FROM v").fetchall() != before
    assert changed and command.verify("v", target=dsn).ok


@pytest.mark.parametrize(("column", "words"), [("point", ["type point", "no equality"]), ("json", ["type json", "no equality"]),
                                             # an array of a type that is not PostgreSQL's own (a composite's equality
                                             # is record's, which calls its columns' own)
                                             ("json[]", ["type json[]", "arrays are supported of"]),
                                             ("pair[]", ["pair[]", "arrays are supported of"])])
def test_a_type_without_equality_is_refused_in_one_line(conn: psycopg.Connection, dsn: str, column: str,
                                                       words: list[str]) -> None:
    conn.execute("CREATE TYPE pair AS (x int, y int)")
    conn.execute(f"CREATE TABLE r (k {column}, x int); CREATE TABLE s (k {column}, y int)")
    with pytest.raises(PgivmError) as info:
        command.create("v", "SELECT count(*) FROM r JOIN s ON r.k = s.k", target=dsn)
    message = str(info.value)
    assert "\n" not in message and all(w in message for w in words), message
    assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname = 'pgivm_v'").fetchone()[0] == 0


MIXED_TEXT = ("CREATE TABLE r (a varchar(4), b varchar(12)); CREATE TABLE s (b text, c varchar); "
              "CREATE TABLE t (c varchar(30), a text)")
MIXED_QUERIES = {
    "ivme": "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a",
    "first-order": "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a",
    "fivm": "SELECT r.a, count(*) AS n FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c GROUP BY r.a",
    "sample": "SELECT r.a, s.c FROM r JOIN s ON r.b = s.b",
}


# numerics of any precision and scale, and integers, join by value (1 = 1.0 = 1.00): TPC-H's
# numeric(15,2) columns against a sum or min of them (numeric with no typmod)
MIXED_NUMERIC = ("CREATE TABLE r (a numeric(6, 2), b integer); CREATE TABLE s (b numeric, c numeric(10, 3)); "
                 "CREATE TABLE t (c numeric(8, 1), a bigint)")
MIXED = {"text": (MIXED_TEXT, ["x", "y", "zz", "abc"]), "numeric": (MIXED_NUMERIC, [1, 1.0, 2.5, 3, 2.50, 1.00])}


@pytest.mark.parametrize("system", list(MIXED_QUERIES))
@pytest.mark.parametrize("kind", list(MIXED))
def test_types_postgresql_joins_by_value_join(conn: psycopg.Connection, dsn: str, kind: str, system: str) -> None:
    """varchar(4), varchar(12), varchar and text join as PostgreSQL joins them (as text: the casts
    are binary), and so do numeric(6,2), numeric and integers (as numeric), where they were refused
    as columns of different types; exact after every statement."""
    schema, values = MIXED[kind]
    conn.execute(schema)
    rng = random.Random(f"mixed-{system}" if kind == "text" else f"mixed-{kind}-{system}")

    def write() -> None:
        table = rng.choice("rst")
        if rng.random() < 0.65:
            conn.execute(f"INSERT INTO {table} VALUES (%s, %s), (%s, %s)", [rng.choice(values) for _ in range(4)])
        else:
            conn.execute(f"DELETE FROM {table} WHERE ctid IN (SELECT ctid FROM {table} ORDER BY random() LIMIT 2)")

    for _ in range(20):
        write()
    options = {"size": 5} if system == "sample" else {}
    command.create("v", MIXED_QUERIES[system], system=system, target=dsn, **options)
    query = MIXED_QUERIES[system]
    seen = set()
    for step in range(40):
        write()
        seen.add(str(conn.execute("SELECT * FROM v").fetchall()))
        if system == "sample":  # a subset of the join, each result once
            assert conn.execute(f"SELECT count(*) FROM (SELECT * FROM v EXCEPT ALL ({query})) d").fetchone()[0] == 0
        else:
            diff = conn.execute(f"(SELECT * FROM v EXCEPT ALL ({query})) UNION ALL "
                                f"(({query}) EXCEPT ALL SELECT * FROM v)").fetchall()
            assert diff == [], f"{system} step {step}: {diff[:3]}"
    assert len(seen) > 5, "the view hardly changed: the stream compared nothing"
    assert command.verify("v", target=dsn).ok


def test_a_column_name_past_63_bytes_is_the_column_postgresql_reads(conn: psycopg.Connection, dsn: str) -> None:
    """PostgreSQL cuts an identifier to 63 bytes: the view names the column with one more letter,
    as SQL would accept, and reads the same column."""
    long = "c" * 63
    conn.execute(f"CREATE TABLE r ({long} int, b int); INSERT INTO r VALUES (1, 2), (1, 3), (2, 4)")
    query = f"SELECT r.{long}x AS k, count(*) AS n FROM r GROUP BY r.{long}x"
    command.create("v", query, system="first-order", target=dsn)
    conn.execute("INSERT INTO r VALUES (2, 5)")
    assert conn.execute("SELECT * FROM v ORDER BY k").fetchall() == [(1, 2), (2, 2)]
    assert command.verify("v", target=dsn).ok


@pytest.mark.parametrize("system", ["fivm", "first-order"])
def test_arrays_group_and_join_by_their_elements(conn: psycopg.Connection, dsn: str, system: str) -> None:
    """Arrays of PostgreSQL's types (varchar(n)[] too) group and join as PostgreSQL compares
    them (element by element, NULL elements equal, '{a}' <> '{a,NULL}'); first-order keeps them as
    count(DISTINCT ...)'s values too."""
    conn.execute("CREATE TABLE r (moods date[], tags text[], n varchar(5)[]); "
                 "CREATE TABLE s (tags text[], w int)")
    distinct = ", count(DISTINCT r.n) AS n" if system == "first-order" else ""
    query = (f"SELECT r.moods, s.tags, count(*) AS c, sum(s.w) AS w{distinct} FROM r JOIN s ON r.tags = s.tags "
             "GROUP BY r.moods, s.tags")
    assert command.create("v", query, system=system, target=dsn).system == system
    rng = random.Random(system)
    tags = [None, [], ["a"], ["a", None], ["b", "a"], [None]]
    for step in range(40):
        if rng.random() < 0.7:
            if rng.random() < 0.5:
                conn.execute("INSERT INTO r VALUES (%s::date[], %s, %s)",
                             [rng.choice([["2024-01-01"], ["2024-01-02", None], [], None]), rng.choice(tags), [str(step % 3), None]])
            else:
                conn.execute("INSERT INTO s VALUES (%s, %s)", [rng.choice(tags), step])
        else:
            conn.execute(f"DELETE FROM {rng.choice('rs')} WHERE tags = %s", [rng.choice(tags[1:])])
        diff = conn.execute(f"(SELECT * FROM v EXCEPT ALL ({query})) UNION ALL (({query}) EXCEPT ALL SELECT * FROM v)").fetchall()
        assert diff == [], f"{system} step {step}: {diff[:3]}"
    assert conn.execute("SELECT count(*) FROM v").fetchone()[0] > 2 and command.verify("v", target=dsn).ok



RANGE_QUERIES = {
    "fivm": "SELECT r.spans, s.span, count(*) AS c, sum(s.w) AS w FROM r JOIN s ON r.span = s.span GROUP BY r.spans, s.span",
    "first-order": ("SELECT r.spans, count(*) AS c, count(DISTINCT r.span) AS d, min(s.w) AS lo FROM r "
                    "JOIN s ON r.span = s.span GROUP BY r.spans"),
    "recompute": "SELECT r.spans, s.span FROM r JOIN s ON r.span = s.span",
    "sample": "SELECT r.spans, s.w FROM r JOIN s ON r.span = s.span",
}


@pytest.mark.parametrize("system", list(RANGE_QUERIES))
def test_range_types_group_and_join_as_postgresql_compares_them(conn: psycopg.Connection, dsn: str, system: str) -> None:
    """A range type of the user's over float8 ('[1,2)' and '[1,2]' differ, 'empty' is one value)
    and a multirange join and group exactly under every system that takes the view, after every
    statement; verify holds. (The sample's k passes the join's size: it is all of the join.)"""
    conn.execute("CREATE TYPE span AS RANGE (subtype = float8); "
                 "CREATE TABLE r (span span, spans int4multirange); CREATE TABLE s (span span, w int)")
    query = RANGE_QUERIES[system]
    options = {"size": 1000} if system == "sample" else {}
    assert command.create("v", query, system=system, target=dsn, **options).system == system
    rng = random.Random(f"range-{system}")
    spans = ["[1,2)", "[1,2]", "empty", "(,3)", "[2,2]", None]
    multis = ["{[1,3)}", "{[1,2),[5,7)}", "{}", "{[1,2]}", None]
    for step in range(40):
        if rng.random() < 0.7:
            if rng.random() < 0.5:
                conn.execute("INSERT INTO r VALUES (%s::span, %s::int4multirange)", [rng.choice(spans), rng.choice(multis)])
            else:
                conn.execute("INSERT INTO s VALUES (%s::span, %s)", [rng.choice(spans), step])
        elif rng.random() < 0.5:
            conn.execute(f"DELETE FROM {rng.choice('rs')} WHERE span = %s::span", [rng.choice(spans[:-1])])
        else:
            conn.execute("UPDATE r SET span = %s::span WHERE spans = %s::int4multirange",
                         [rng.choice(spans), rng.choice(multis[:-1])])
        read = "SELECT spans, w FROM v" if system == "sample" else "SELECT * FROM v"
        diff = conn.execute(f"(({read}) EXCEPT ALL ({query})) UNION ALL (({query}) EXCEPT ALL ({read}))").fetchall()
        assert diff == [], f"{system} step {step}: {diff[:3]}"
    assert conn.execute(f"SELECT count(*) FROM ({query}) q").fetchone()[0] > 2
    assert command.verify("v", target=dsn).ok


@pytest.mark.parametrize(("declare", "words"), [
    ("CREATE TYPE t AS (x int, y text)", ["composite type", "GENERATED ALWAYS AS ((\"k\").x) STORED"]),
    ("CREATE TYPE mood AS ENUM ('a'); CREATE TYPE t AS RANGE (subtype = mood)", ["public.t", "range types are supported"])])
def test_a_composite_or_a_range_over_a_type_of_the_users_is_refused(conn: psycopg.Connection, dsn: str,
                                                                     declare: str, words: list[str]) -> None:
    """A composite column (its IS NULL is true of a row of NULLs), a range over an enum: one
    line, nothing created."""
    conn.execute(f"{declare}; CREATE TABLE r (k t, x int)")
    with pytest.raises(PgivmError) as info:
        command.create("v", "SELECT r.k, count(*) FROM r GROUP BY r.k", target=dsn)
    message = str(info.value).splitlines()[0]
    assert all(w in str(info.value) for w in words) and len(message) < 200, str(info.value)
    assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname = 'pgivm_v'").fetchone()[0] == 0
    if "composite" in words[0]:  # the hint works as given (it suggested a field access pgivm refuses, until stop 56)
        conn.execute("ALTER TABLE r ADD COLUMN k_x int GENERATED ALWAYS AS ((k).x) STORED; INSERT INTO r VALUES (ROW(1, 'a'), 5)")
        command.create("v", "SELECT r.k_x, count(*) FROM r GROUP BY r.k_x", target=dsn)
        conn.execute("INSERT INTO r VALUES (ROW(1, 'b'), 6), (ROW(2, 'c'), 7); UPDATE r SET k = ROW(3, 'd') WHERE x = 5")
        assert sorted(conn.execute("SELECT * FROM v").fetchall()) == [(1, 1), (2, 1), (3, 1)]


def _extension(conn: psycopg.Connection, name: str = "vector") -> None:
    """An extension (pgvector, or citext: contrib, which the embedded server does not ship) in
    schema ext, which only superusers write."""
    if conn.execute("SELECT count(*) FROM pg_available_extensions WHERE name = %s", [name]).fetchone()[0] == 0:
        pytest.skip(f"this server has no {name}")
    conn.execute(sql.SQL("CREATE SCHEMA ext; CREATE EXTENSION {} SCHEMA ext; GRANT USAGE ON SCHEMA ext TO PUBLIC")
                 .format(sql.Identifier(name)))
    # the user's queries name its operator as its users would: ext on their search_path
    conn.execute(sql.SQL("ALTER DATABASE {} SET search_path = \"$user\", public, ext; SET search_path = \"$user\", public, ext")
                 .format(sql.Identifier(conn.info.dbname)))


def _vector(conn: psycopg.Connection) -> None:
    """pgvector in schema ext (the embedded server ships it)."""
    _extension(conn, "vector")


# Each extension's type as a column's, values of it (equal ones among them for citext: 'abc' = 'ABC'),
# and the condition a delete takes rows by: citext's deletes one spelling, so the others stay.
EXTENSION_VALUES = {
    "vector": ("ext.vector(2)", "ext.vector", ["[1,2]", "[1,2.5]", "[0,0]", "[-1,2]", None], "v = %s::ext.vector"),
    "citext": ("ext.citext", "ext.citext", ["abc", "ABC", "Abc", "x", "X", "y", None], "v::text = %s"),
}


VECTOR_QUERIES = {
    "fivm": "SELECT r.v, count(*) AS n, sum(s.w) AS w FROM r JOIN s ON r.v = s.v GROUP BY r.v",
    "first-order": "SELECT r.v, count(DISTINCT s.w) AS d, min(r.a) AS lo FROM r JOIN s ON r.v = s.v GROUP BY r.v",
    "recompute": "SELECT r.v, s.w FROM r JOIN s ON r.v = s.v",
    "sample": "SELECT r.a, s.w FROM r JOIN s ON r.v = s.v",
    "ivme": "SELECT count(*) FROM r JOIN s ON r.v = s.v JOIN t ON s.u = t.u AND t.a = r.a",
}


@pytest.mark.parametrize("extension", ["vector", "citext"])
@pytest.mark.parametrize("refresh", ["immediate", "deferred"])
@pytest.mark.parametrize("system", list(VECTOR_QUERIES))
def test_an_extensions_type_joins_and_groups_by_its_own_equality(conn: psycopg.Connection, dsn: str, system: str,
                                                                 refresh: str, extension: str) -> None:
    """pgvector's vector and citext, whose equality (ext.=: vector_ops, citext_ops, 'abc' = 'ABC')
    is the extension's: each system's functions look operators up in ext after pg_catalog (ext is
    written only by superusers), and the view equals the query after every statement (a deferred
    view after its refresh; EXCEPT ALL compares by the type's equality, as GROUP BY groups); verify
    holds, as does a status and an upgrade (open_view and a reinstall find the path again)."""
    _extension(conn, extension)
    column, cast, values, deleted = EXTENSION_VALUES[extension]
    conn.execute(f"CREATE TABLE r (v {column}, a int); CREATE TABLE s (v {column}, u int, w int); "
                 "CREATE TABLE t (u int, a int)")
    query = VECTOR_QUERIES[system]
    options: dict[str, object] = {"size": 1000} if system == "sample" else {}
    if refresh == "deferred":
        if system in ("recompute", "sample"):
            pytest.skip(f"{system} has no deferred mode")
        options["refresh"] = "deferred"
    assert command.create("v", query, system=system, target=dsn, **options).system == system
    rng = random.Random(f"{extension}-{system}-{refresh}")
    read = "SELECT a, w FROM v" if system == "sample" else "SELECT * FROM v"
    for step in range(30):
        table = rng.choice("rrst" if system == "ivme" else "rs")
        if rng.random() < 0.7:
            if table == "r":
                conn.execute(f"INSERT INTO r VALUES (%s::{cast}, %s)", [rng.choice(values), rng.randint(0, 3)])
            elif table == "s":
                conn.execute(f"INSERT INTO s VALUES (%s::{cast}, %s, %s)", [rng.choice(values), rng.randint(0, 3), step])
            else:
                conn.execute("INSERT INTO t VALUES (%s, %s)", [rng.randint(0, 3), rng.randint(0, 3)])
        elif table in "rs" and rng.random() < 0.5:
            conn.execute(f"DELETE FROM {table} WHERE {deleted}", [rng.choice(values[:-1])])
        elif table == "r":
            conn.execute(f"UPDATE r SET v = %s::{cast} WHERE a = %s", [rng.choice(values), rng.randint(0, 3)])
        if refresh == "deferred":
            command.refresh("v", target=dsn)
        diff = conn.execute(f"(({read}) EXCEPT ALL ({query})) UNION ALL (({query}) EXCEPT ALL ({read}))").fetchall()
        assert diff == [], f"{system} step {step}: {diff[:3]}"
    # the stream ends away from the start: rows of r and s that join by the type's equality, and rows of
    # the query (citext's spellings of one value make one group: there may be one)
    assert conn.execute("SELECT count(*) FROM r JOIN s ON r.v = s.v").fetchone()[0] > (0 if system == "ivme" else 1)
    assert conn.execute(f"SELECT count(*) FROM ({query}) q").fetchone()[0] > (
        0 if system == "ivme" or extension == "citext" else 1)
    assert command.verify("v", target=dsn).ok
    command.status("v", target=dsn)
    command.upgrade("v", force=True, target=dsn)
    conn.execute("INSERT INTO r VALUES (%s, 1)", [values[0]])
    conn.execute("INSERT INTO s VALUES (%s, 1, 99)", [values[1]])
    if refresh == "deferred":
        command.refresh("v", target=dsn)
    assert conn.execute(f"(({read}) EXCEPT ALL ({query})) UNION ALL (({query}) EXCEPT ALL ({read}))").fetchall() == []
    assert command.verify("v", target=dsn).ok


def test_validate_spark_refuses_a_view_comparing_an_extensions_type(conn: psycopg.Connection, dsn: str) -> None:
    """Spark compares values as Spark does (citext's as text: 'abc' <> 'ABC'): validate --spark
    refuses a view whose equality is an extension's in one line, before Spark starts."""
    from pgivm.spark import commands as spark_commands

    _vector(conn)
    conn.execute("CREATE TABLE r (v ext.vector(2), a int)")
    command.create("v", "SELECT r.v, count(*) AS n FROM r GROUP BY r.v", target=dsn)
    with pytest.raises(PgivmError) as info:
        spark_commands.validate_spark("v", target=dsn)
    assert "extension's type" in info.value.message and "schema ext" in info.value.message, info.value
    assert "\n" not in info.value.message and len(info.value.message) < 200, info.value.message


def test_an_extensions_type_in_a_schema_others_write_is_refused_and_the_guard_keeps_it_so(
        conn: psycopg.Connection, dsn: str) -> None:
    """With CREATE on ext granted to PUBLIC, a stranger could plant an operator the view's
    functions would find there: create refuses in one line, nothing created. Once a view looks
    operators up in ext, the DDL guard refuses the GRANT, and giving a function of ext to another
    role; with the guard off, the commands that open the view (verify too) refuse in one line that
    names the problem, and work again once it is undone."""
    _vector(conn)
    conn.execute("DROP ROLE IF EXISTS pgivm_t_someone; CREATE ROLE pgivm_t_someone; CREATE TABLE r (v ext.vector(2), a int)")
    query = "SELECT r.v, count(*) AS n FROM r GROUP BY r.v"
    conn.execute("GRANT CREATE ON SCHEMA ext TO PUBLIC")
    with pytest.raises(PgivmError) as info:
        command.create("v", query, target=dsn)
    assert "schema ext" in info.value.message and len(info.value.message) < 200 and "\n" not in info.value.message, info.value
    assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname = 'pgivm_v'").fetchone()[0] == 0
    conn.execute("REVOKE CREATE ON SCHEMA ext FROM PUBLIC")
    command.create("v", query, target=dsn)
    for ddl in ["GRANT CREATE ON SCHEMA ext TO pgivm_t_someone",
                "ALTER FUNCTION ext.vector_eq(ext.vector, ext.vector) OWNER TO pgivm_t_someone",
                "ALTER SCHEMA ext OWNER TO pgivm_t_someone"]:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="looks operators up in schema ext"):
            conn.execute(ddl)
    conn.execute("ALTER EVENT TRIGGER pgivm_trust_changed DISABLE")
    try:
        conn.execute("GRANT CREATE ON SCHEMA ext TO pgivm_t_someone")
        for run in (command.verify, command.status, command.refresh):
            with pytest.raises(PgivmError, match="looks operators up in schema ext") as info:
                run("v", target=dsn)  # type: ignore[operator]
            assert "\n" not in info.value.message
        conn.execute("REVOKE CREATE ON SCHEMA ext FROM pgivm_t_someone")
        assert command.verify("v", target=dsn).ok
    finally:
        conn.execute("ALTER EVENT TRIGGER pgivm_trust_changed ENABLE; REVOKE ALL ON SCHEMA ext FROM pgivm_t_someone; "
                     "DROP ROLE IF EXISTS pgivm_t_someone")


# numeric has NaN and ±Infinity as float8 has (a held-out review found a sum that stayed NaN after
# its NaN row left): the rings keep numeric sums classified as float sums (floats.py), exact.
@pytest.mark.parametrize("system", ["fivm", "first-order", "recompute"])
def test_a_numeric_nan_or_infinity_that_leaves_a_sum(conn: psycopg.Connection, dsn: str, system: str) -> None:
    conn.execute("CREATE TABLE m (g int, x numeric); INSERT INTO m VALUES (1, 1), (1, 2), (2, 5)")
    query = "SELECT g, sum(x) AS s, avg(x) AS a, count(*) AS n FROM m GROUP BY g"
    command.create("v", query, system=system, target=dsn)
    for statement in ["INSERT INTO m VALUES (1, 'NaN')", "DELETE FROM m WHERE x = 'NaN'",
                      "INSERT INTO m VALUES (2, 'Infinity'), (2, '-Infinity')", "DELETE FROM m WHERE x = '-Infinity'",
                      "DELETE FROM m WHERE x = 'Infinity'"]:
        conn.execute(statement)
        assert conn.execute(f"({query}) EXCEPT ALL SELECT * FROM v").fetchall() == [], statement


_NUMERIC_SPECIALS = ["0", "1", "-2", "2.5", "NaN", "Infinity", "-Infinity", None]
_NUMERIC_VIEWS = {
    # a product of columns of two tables, summed apart and multiplied (characters up to the root)
    "product": "SELECT b.g, sum(a.x * b.y) AS s, sum(a.x) AS sx, avg(b.y) AS ay, count(*) AS n "
               "FROM a JOIN b ON a.k = b.k GROUP BY b.g",
    # a GROUP BY value that can be NaN or ±Inf multiplies the sum
    "grouped": "SELECT a.x, sum(a.x * b.y) AS s, sum(b.y) AS sy FROM a JOIN b ON a.k = b.k GROUP BY a.x",
    # numeric(6,2) holds NaN but not ±Inf: a sum of products of differences over two tables stays a ring's
    "typmod": "SELECT a.k, sum(b.z * (1 - b.z) + b.z * a.k) AS s, avg(b.z) AS az FROM a JOIN b ON a.k = b.k GROUP BY a.k",
    # a product with a sum in it over one table's columns is one value of its row, as PostgreSQL computes it
    "discounted": "SELECT b.g, sum(b.y * (1 - b.z)) AS s, sum(b.y * (1 - b.z) * a.x) AS t FROM a JOIN b ON a.k = b.k GROUP BY b.g",
}


@pytest.mark.parametrize("system", ["fivm", "first-order"])
@pytest.mark.parametrize("shape", sorted(_NUMERIC_VIEWS))
def test_numeric_specials_over_joins_stay_exact_after_every_statement(conn: psycopg.Connection, dsn: str,
                                                                       system: str, shape: str) -> None:
    """NaN, +Inf and -Inf in numeric columns on both sides of a join, inserted, updated and deleted
    at random (several at once, duplicates, join-column updates): every statement's result equals
    PostgreSQL's own (EXCEPT ALL both ways: numeric's NaN equals NaN)."""
    conn.execute("CREATE TABLE a (k int, x numeric); CREATE TABLE b (k int, g int, y numeric, z numeric(6,2))")
    rng = random.Random(f"numeric-specials-{shape}-{system}")

    def value(nan_only: bool = False) -> str | None:
        v = rng.choice(_NUMERIC_SPECIALS)
        return "NaN" if nan_only and v is not None and "Infinity" in v else v

    def some(table: str) -> None:
        if table == "a":
            rows = [(rng.randint(1, 3), value()) for _ in range(rng.randint(1, 3))]
            conn.execute("INSERT INTO a SELECT * FROM unnest(%s::int[], %s::numeric[])", [list(c) for c in zip(*rows)])
        else:
            rows = [(rng.randint(1, 3), rng.randint(1, 2), value(), value(nan_only=True)) for _ in range(rng.randint(1, 3))]
            conn.execute("INSERT INTO b SELECT * FROM unnest(%s::int[], %s::int[], %s::numeric[], %s::numeric[])",
                         [list(c) for c in zip(*rows)])

    for table in "aabb":
        some(table)
    query = _NUMERIC_VIEWS[shape]
    command.create("v", query, system=system, target=dsn)
    for step in range(60):
        table = rng.choice("ab")
        kind = rng.random()
        if kind < 0.4:
            some(table)
        elif kind < 0.7:
            special = rng.choice(["NaN", "Infinity", "-Infinity", "0"])
            column = "x" if table == "a" else rng.choice("yz")
            if column == "z" and "Infinity" in special:
                special = "NaN"
            conn.execute(sql.SQL("DELETE FROM {} WHERE {} = %s::numeric").format(sql.Identifier(table), sql.Identifier(column)),
                         [special])
        elif kind < 0.9:
            conn.execute(sql.SQL("UPDATE {} SET k = %s WHERE k = %s").format(sql.Identifier(table)),
                         [rng.randint(1, 3), rng.randint(1, 3)])
        else:
            conn.execute(sql.SQL("UPDATE {} SET {} = %s::numeric WHERE k = %s").format(
                sql.Identifier(table), sql.Identifier("x" if table == "a" else "y")), [value(), rng.randint(1, 3)])
        mismatch = conn.execute(f"(SELECT 'view', * FROM v EXCEPT ALL SELECT 'view', * FROM ({query}) q) "
                                f"UNION ALL (SELECT 'query', * FROM ({query}) q EXCEPT ALL SELECT 'query', * FROM v)"
                                ).fetchall()
        assert mismatch == [], (step, mismatch)


def test_a_product_with_a_sum_over_one_tables_float_columns_is_exact(conn: psycopg.Connection, dsn: str) -> None:
    """sum(x * (1 - d)) over float8 columns: expanded (x - x·d) it would differ from PostgreSQL's
    row-by-row value once x is ±Infinity (Inf - Inf·0.5 is NaN, Inf·0.5 is Inf), so it is one value
    of the row; F-IVM takes no float arithmetic a row might overflow, first-order takes it by
    default, exact through Infinity and NaN arriving and leaving. Over two tables' columns no ring
    takes it: recompute does."""
    conn.execute("CREATE TABLE f (k int, x float8, d float8); CREATE TABLE h (k int, y float8)")
    conn.execute("INSERT INTO f VALUES (1, 2, 0.5), (1, 4, 0.25), (2, 1, 1); INSERT INTO h VALUES (1, 3), (2, 5)")
    query = "SELECT f.k, sum(f.x * (1 - f.d)) AS s, avg(f.x * (1 - f.d)) AS a FROM f GROUP BY f.k"
    assert command.create("v", query, target=dsn).system == "first-order"
    for statement in ["INSERT INTO f VALUES (1, 'Infinity', 0.5)", "INSERT INTO f VALUES (2, '-Infinity', 1)",
                      "DELETE FROM f WHERE d = 1", "INSERT INTO f VALUES (1, 'NaN', 0)",
                      "DELETE FROM f WHERE x = 'Infinity'", "UPDATE f SET x = 8 WHERE x = 'NaN'"]:
        conn.execute(statement)
        assert conn.execute(f"({query}) EXCEPT ALL SELECT * FROM v").fetchall() == [], statement
        assert conn.execute(f"SELECT * FROM v EXCEPT ALL ({query})").fetchall() == [], statement
    across = "SELECT f.k, sum((f.x + h.y) * f.d) AS s FROM f JOIN h ON f.k = h.k GROUP BY f.k"
    assert command.create("w", across, target=dsn).system == "recompute"
    for system in ("fivm", "first-order"):
        with pytest.raises(PgivmError, match="must be a sum of products") as info:
            command.create("w2", across, system=system, target=dsn)
        assert "\n" not in info.value.message


@pytest.mark.parametrize("system", ["fivm", "first-order", "recompute"])
def test_a_char_value_of_any_length_keeps_its_characters(conn: psycopg.Connection, dsn: str, system: str) -> None:
    """max of a char(5) column, and a CASE over it, are bpchar of any length: kept as bpchar, not as
    'character' (which as a cast is char(1): 'abc' was cut to 'a')."""
    conn.execute("CREATE TABLE c (g int, v char(5), w int); INSERT INTO c VALUES (1, 'abc', 1), (1, 'abd', 2), (2, 'xy', 3)")
    queries = {"fivm": "SELECT CASE WHEN c.w > 1 THEN c.v END AS picked, count(*) AS n FROM c GROUP BY 1",
               "first-order": "SELECT c.g, max(c.v) AS top, min(c.v) AS bottom, count(*) AS n FROM c GROUP BY c.g",
               "recompute": "SELECT c.g, max(c.v) AS top, count(*) AS n FROM c GROUP BY c.g"}
    query = queries[system]
    command.create("v", query, system=system, target=dsn)
    for statement in ["INSERT INTO c VALUES (1, 'abz', 4), (2, 'xyzzy', 5)", "DELETE FROM c WHERE v = 'abz'",
                      "UPDATE c SET w = 0 WHERE v = 'abd'"]:
        conn.execute(statement)
        for a, b in (("SELECT * FROM v", query), (query, "SELECT * FROM v")):
            assert conn.execute(f"({a}) EXCEPT ALL ({b})").fetchall() == [], statement
    assert any(len(str(value).strip()) > 1 for row in conn.execute("SELECT * FROM v").fetchall() for value in row[:-1]
               if isinstance(value, str))


@pytest.mark.parametrize("system", ["fivm", "first-order", "recompute"])
def test_date_part_is_double_precision_and_extract_numeric_as_postgresql_gives_them(
        conn: psycopg.Connection, dsn: str, system: str) -> None:
    """sqlglot reads date_part(...) as EXTRACT; PostgreSQL gives date_part a double precision and
    EXTRACT a numeric: the view's columns have the query's types and values, directly and through
    a subquery that aggregates (whose SQL pgivm writes back)."""
    conn.execute("CREATE TABLE d (day date, n int); INSERT INTO d VALUES ('2024-01-31', 1), ('2024-02-29', 2), ('2024-02-01', 3)")
    queries = [
        "SELECT date_part('day', d.day) AS dd, EXTRACT(day FROM d.day) AS ed, sum(date_part('month', d.day)) AS sm, "
        "count(*) AS n FROM d GROUP BY 1, 2",
        "SELECT x.dm, x.n FROM (SELECT date_part('month', d.day) AS dm, count(*) AS n FROM d GROUP BY 1) AS x",
    ]
    for i, query in enumerate(queries):
        if system == "fivm" and i == 1:
            continue  # a subquery that aggregates is its own derived table: the default system reads it
        command.create(f"v{i}", query, system=system if i == 0 else None, target=dsn)
        conn.execute("INSERT INTO d VALUES ('2023-12-25', 4)")
        assert conn.execute(f"SELECT * FROM v{i} LIMIT 0").description is not None
        view_types = [c.type_code for c in conn.execute(f"SELECT * FROM v{i} LIMIT 0").description]
        query_types = [c.type_code for c in conn.execute(f"SELECT * FROM ({query}) q LIMIT 0").description]
        assert view_types == query_types, (query, view_types, query_types)
        for a, b in ((f"SELECT * FROM v{i}", query), (query, f"SELECT * FROM v{i}")):
            assert conn.execute(f"({a}) EXCEPT ALL ({b})").fetchall() == [], query


_ACROSS_TYPES = {
    "date = timestamp": "SELECT x.g, count(*) AS n, sum(y.w) AS sw FROM x JOIN y ON x.d = y.ts GROUP BY x.g",
    "char(n) = text": "SELECT x.c, count(*) AS n FROM x JOIN y ON x.c = y.t GROUP BY x.c",
    "char(n) = text, grouped by the text": "SELECT y.t, x.g, count(*) AS n FROM x JOIN y ON x.c = y.t GROUP BY y.t, x.g",
    # a listing shows each column as its own type, the variable's value cast back (a held-out review)
    "char(n) = text, listed": "SELECT x.c, y.t, x.g FROM x JOIN y ON x.c = y.t",
    "date = timestamp, listed": "SELECT x.d, y.ts, y.w FROM x JOIN y ON x.d = y.ts",
}


@pytest.mark.parametrize("system", ["fivm", "first-order", "recompute", "sample"])
@pytest.mark.parametrize("label", sorted(_ACROSS_TYPES))
def test_columns_of_types_postgresql_compares_across_join_as_it_does(conn: psycopg.Connection, dsn: str,
                                                                      system: str, label: str) -> None:
    """date = timestamp compares the date at midnight, char(n) = text compares as text, padding gone
    ('ab' matches 'ab' and not 'ab '): random inserts, deletes and updates of the join columns, the
    view equal to PostgreSQL's query after every statement. (char(n) = varchar compares as char(n),
    where a GROUP BY of the varchar tells 'ab ' from 'ab': refused.)"""
    conn.execute("CREATE TABLE x (g int, d date, c char(4)); CREATE TABLE y (w int, ts timestamp, t text, v varchar(3))")
    conn.execute("SELECT setseed(0.5)")  # the deletes' ORDER BY random(): the same stream each run
    rng = random.Random(f"{label}-{system}")
    joined = 0  # the most rows the view had: the join was exercised, not only empty
    days = ["2024-01-01", "2024-01-02", "2024-01-03"]
    texts = ["ab", "ab ", "a", "b", " ab", None]

    def insert() -> None:
        if rng.random() < 0.5:
            conn.execute("INSERT INTO x VALUES (%s, %s, %s), (%s, %s, %s)",
                         [rng.randint(1, 3), rng.choice(days), rng.choice(texts), rng.randint(1, 3), rng.choice(days),
                          rng.choice(texts)])
        else:
            when = f"{rng.choice(days)} {rng.choice(['00:00', '00:00', '12:30'])}"
            conn.execute("INSERT INTO y VALUES (%s, %s, %s, %s)", [rng.randint(1, 9), when, rng.choice(texts),
                                                                   (rng.choice(texts) or "")[:3] or None])

    for _ in range(6):
        insert()
    query = _ACROSS_TYPES[label]
    if system == "sample" and "listed" not in label:
        pytest.skip("sample keeps listings")
    # a sample larger than the join holds all of it: the whole join, compared as the others are
    command.create("v", query, system=system, target=dsn, **({"size": 10_000} if system == "sample" else {}))
    view_types = [c.type_code for c in conn.execute("SELECT * FROM v LIMIT 0").description]
    assert view_types == [c.type_code for c in conn.execute(f"SELECT * FROM ({query}) q LIMIT 0").description]
    for step in range(30):
        kind = rng.random()
        if kind < 0.5:
            insert()
        elif kind < 0.7:
            conn.execute("DELETE FROM x WHERE ctid IN (SELECT ctid FROM x ORDER BY random() LIMIT 1)")
        elif kind < 0.85:
            conn.execute("UPDATE y SET ts = ts + interval '12 hours', t = %s WHERE w = %s", [rng.choice(texts), rng.randint(1, 9)])
        else:
            conn.execute("UPDATE x SET c = %s, d = %s WHERE g = %s", [rng.choice(texts), rng.choice(days), rng.randint(1, 3)])
        for a, b in (("SELECT * FROM v", query), (query, "SELECT * FROM v")):
            assert conn.execute(f"({a}) EXCEPT ALL ({b})").fetchall() == [], (step, label)
        joined = max(joined, conn.execute("SELECT count(*) FROM v").fetchone()[0])
    assert joined > 0


@pytest.mark.parametrize("columns", ["c char(3), t2 varchar(3)", "c date, t2 timestamptz"])
def test_types_compared_otherwise_across_are_refused_in_one_line(conn: psycopg.Connection, dsn: str, columns: str) -> None:
    """char(n) = varchar compares as char(n) while a GROUP BY of the varchar tells 'ab ' from 'ab';
    date = timestamptz depends on the session's TimeZone: refused, nothing created."""
    left, right = (c.split()[0] for c in columns.split(", "))
    conn.execute(f"CREATE TABLE p ({columns.split(', ')[0]}); CREATE TABLE q ({columns.split(', ')[1]})")
    with pytest.raises(PgivmError, match="have different types") as info:
        command.create("v", f"SELECT q.{right}, count(*) FROM p JOIN q ON p.{left} = q.{right} GROUP BY q.{right}", target=dsn)
    assert "\n" not in info.value.message
    assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname = 'pgivm_v'").fetchone()[0] == 0


def test_a_nondeterministic_collation_goes_to_recompute(conn: psycopg.Connection, dsn: str) -> None:
    """Under a case-insensitive ICU collation 'a' = 'A': fivm's state joined them byte by byte and
    showed no row. The systems that keep a state refuse such a column in one line; the default is
    then recompute, exact (skipped where the server has no ICU, as the embedded one)."""
    try:
        conn.execute("CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)")
    except psycopg.errors.FeatureNotSupported:
        pytest.skip("this server has no ICU")
    conn.execute("CREATE TABLE p (k text COLLATE ci, n int); CREATE TABLE q (k text COLLATE ci, m int); "
                 "INSERT INTO p VALUES ('a', 1), ('A', 2); INSERT INTO q VALUES ('A', 5)")
    query = "SELECT p.k, count(*) AS n FROM p JOIN q ON p.k = q.k GROUP BY p.k"
    conn.execute("CREATE TABLE tr (a text COLLATE ci, b text COLLATE ci); CREATE TABLE ts (b text COLLATE ci, c text COLLATE ci); "
                 "CREATE TABLE tt (c text COLLATE ci, a text COLLATE ci)")
    triangle = "SELECT count(*) FROM tr JOIN ts ON tr.b = ts.b JOIN tt ON ts.c = tt.c AND tt.a = tr.a"
    for system, shape in (("fivm", query), ("first-order", query), ("ivme", triangle),
                          ("sample", "SELECT p.k, q.m FROM p JOIN q ON p.k = q.k")):
        with pytest.raises(PgivmError, match=r"nondeterministic collation public\.ci") as info:
            command.create("v", shape, system=system, target=dsn)
        assert "\n" not in info.value.message and len(info.value.message) < 200, info.value.message
    assert command.create("v", query, target=dsn).system == "recompute"
    conn.execute("INSERT INTO q VALUES ('a', 6)")
    assert conn.execute("SELECT count(*), sum(n) FROM v").fetchone() == (1, 4)


@pytest.mark.parametrize("system, refresh", [("fivm", "immediate"), ("fivm", "deferred"), ("first-order", "immediate"),
                                             ("first-order", "deferred"), ("recompute", "immediate"), ("sample", "immediate"),
                                             ("sample", "deferred"), ("ivme", "immediate"), ("ivme-listing", "deferred")])
def test_a_collation_a_user_created_passes_verify(conn: psycopg.Connection, dsn: str, system: str, refresh: str) -> None:
    """A column of a collation the user created (libc's "C" under another name: the embedded server
    has no ICU) is no code: `verify` reported state_safe_for_other_roles for first-order's and
    recompute's states, which keep the column's collation (migration 0023). Exact and verified after
    writes, under every system."""
    conn.execute('CREATE COLLATION mine FROM "C"')
    conn.execute("CREATE TABLE r (a text COLLATE mine, b text COLLATE mine); CREATE TABLE s (b text COLLATE mine, "
                 "c text COLLATE mine); CREATE TABLE t (c text COLLATE mine, a text COLLATE mine)")
    query = {"fivm": "SELECT r.a, count(*) AS n FROM r JOIN s ON r.b = s.b GROUP BY r.a",
             "first-order": "SELECT r.a, max(s.c) AS mx, count(*) AS n FROM r JOIN s ON r.b = s.b GROUP BY r.a",
             "recompute": "SELECT r.a, s.c FROM r LEFT JOIN s ON r.b = s.b",
             "sample": "SELECT r.a, s.c FROM r JOIN s ON r.b = s.b",
             "ivme": "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a",
             "ivme-listing": "SELECT r.a, r.b, s.c FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a"}[system]
    options = {"size": 100} if system == "sample" else {}
    options |= {"refresh": refresh} if refresh == "deferred" else {}
    command.create("v", query, system=system.removesuffix("-listing"), target=dsn, **options)
    for statement in ["INSERT INTO r VALUES ('x', 'p'), ('y', 'p'), ('x', 'q')",
                      "INSERT INTO s VALUES ('p', 'u'), ('q', 'V'), ('p', 'w')", "INSERT INTO t VALUES ('u', 'x'), ('w', 'y')",
                      "DELETE FROM s WHERE c = 'w'", "UPDATE r SET b = 'q' WHERE a = 'y'"]:
        conn.execute(statement)
    mine = sorted(map(tuple, conn.execute("SELECT * FROM v").fetchall()))
    assert mine == sorted(map(tuple, conn.execute(query).fetchall())) and mine
    result = command.verify("v", target=dsn)
    assert result.ok, [str(f) for f in result.failures]
    # the view's columns in the collations of PostgreSQL's own view of the query (a state keeps
    # its values in the default one): ORDER BY over the view sorts as over the query
    conn.execute(f"CREATE VIEW plain AS {query}")
    collations = ("SELECT a.attname, a.attcollation::regcollation::text FROM pg_attribute a "
                  "WHERE a.attrelid = %s::regclass AND a.attnum > 0 ORDER BY a.attnum")
    shown = conn.execute(collations, ["v"]).fetchall()
    assert shown == conn.execute(collations, ["plain"]).fetchall()
    assert system == "ivme" or "mine" in dict(shown).values(), shown
    if system == "fivm" and refresh == "immediate":  # verify names a column in another collation (a view made before)
        conn.execute("CREATE VIEW old_v AS SELECT r.a::text COLLATE \"default\" AS a, 1::bigint AS n FROM r")
        with session(conn):
            resolved = open_view(conn, "v").resolved
            found = common.collation_failures(conn, sql.Identifier("public", "old_v"), resolved)
            assert [(f.check, f.rows) for f in found] == [("columns_in_the_query_collations", [("a", '"default"', "public.mine")])]
            assert common.collation_failures(conn, sql.Identifier("public", "v"), resolved) == []


@pytest.mark.parametrize("system", ["fivm", "first-order", "sample", "ivme", "recompute"])
def test_the_view_sorts_its_columns_by_their_own_collation(conn: psycopg.Connection, dsn: str, system: str) -> None:
    """A column whose collation orders otherwise than the database's default ('B' below 'a' under C,
    above it under en-US): the state keeps values in the default collation, so ORDER BY over the
    view sorted them as the database does where ORDER BY over the query sorts as the column does
    (skipped where the server has no collation ordering otherwise than its default: the embedded
    one has no ICU)."""
    c_below = conn.execute("SELECT 'B' < 'a'").fetchone()[0]
    other = next((name for name in (('"en-US-x-icu"',) if c_below else ('"C"',))
                  if conn.execute("SELECT to_regcollation(%s)", [name]).fetchone()[0] is not None), None)
    if other is None:
        pytest.skip("this server has no collation that orders otherwise than its default")
    conn.execute(f"CREATE TABLE r (a text COLLATE {other}, b int); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, a text COLLATE {other})")
    query = {"fivm": "SELECT r.a, count(*) AS n FROM r JOIN s ON r.b = s.b GROUP BY r.a",
             "first-order": "SELECT r.a, s.c FROM r JOIN s ON r.b = s.b",
             "recompute": "SELECT r.a, s.c FROM r LEFT JOIN s ON r.b = s.b",
             "sample": "SELECT r.a, s.c FROM r JOIN s ON r.b = s.b",
             "ivme": "SELECT r.a, r.b, s.c FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a"}[system]
    command.create("v", query, system=system, target=dsn, **({"size": 100} if system == "sample" else {}))
    conn.execute("INSERT INTO r VALUES ('a', 1), ('B', 1), ('c', 2), ('D', 2); INSERT INTO s VALUES (1, 7), (2, 8); "
                 "INSERT INTO t VALUES (7, 'a'), (7, 'B'), (8, 'c'), (8, 'D')")
    ordered = conn.execute("SELECT a FROM v ORDER BY a, 1").fetchall()
    assert ordered == conn.execute(f"SELECT a FROM ({query}) AS q ORDER BY a, 1").fetchall()
    assert [a for (a,) in ordered][:2] == (["a", "B"] if c_below else ["B", "a"])


def test_upgrade_rebuild_gives_a_view_made_before_its_columns_collations(conn: psycopg.Connection, dsn: str) -> None:
    """A view made before pgivm kept the columns' collations shows them in the default one (made
    so here by editing the catalog, as a superuser may): verify names the column; a view's column
    cannot change collation in place, so `upgrade --rebuild` makes the view again with its grants,
    and refuses in one line, changing nothing, while a view is built on it."""
    conn.execute('CREATE COLLATION mine FROM "C"; CREATE TABLE r (a text COLLATE mine, b int); CREATE TABLE s (b int, c int); '
                 "INSERT INTO r VALUES ('x', 1), ('y', 1); INSERT INTO s VALUES (1, 2)")
    command.create("v", "SELECT r.a, count(*) AS n FROM r JOIN s ON r.b = s.b GROUP BY r.a", target=dsn)
    conn.execute("CREATE ROLE pgivm_test_reader56; GRANT SELECT ON v TO pgivm_test_reader56, PUBLIC")
    try:
        conn.execute("UPDATE pg_attribute SET attcollation = 'pg_catalog.default'::regcollation "
                     "WHERE attrelid = 'v'::regclass AND attname = 'a'; CREATE VIEW top AS SELECT n FROM v")
        report = command.verify("v", target=dsn)
        assert [f.check for f in report.failures] == ["columns_in_the_query_collations"]
        with pytest.raises(PgivmError, match=r"cannot change it in place: views are built on it \(public.top\)") as info:
            command.upgrade("v", rebuild=True, target=dsn)
        assert "\n" not in info.value.message
        assert conn.execute("SELECT sum(n) FROM top").fetchone()[0] == 2  # nothing changed
        conn.execute("DROP VIEW top")
        command.upgrade("v", rebuild=True, target=dsn)
        assert command.verify("v", target=dsn).ok
        acl = conn.execute("SELECT relacl::text FROM pg_class WHERE oid = 'v'::regclass").fetchone()[0]
        assert "pgivm_test_reader56=r/" in acl and ",=r/" in acl, acl
        conn.execute("INSERT INTO r VALUES ('z', 1)")
        assert sorted(conn.execute("SELECT * FROM v").fetchall()) == [("x", 1), ("y", 1), ("z", 1)]
    finally:
        conn.execute("DROP VIEW IF EXISTS top; REVOKE ALL ON v FROM pgivm_test_reader56")
        command.drop("v", target=dsn)
        conn.execute("DROP ROLE pgivm_test_reader56")


def test_a_condition_over_a_collated_column_goes_to_recompute(conn: psycopg.Connection, dsn: str) -> None:
    """A state keeps values in the database's default collation, and evaluated a condition over a
    column of another as the default orders (a held-out review of stop 56: fivm and first-order
    lost ('b' < 'B') under en-US in a C database, sample showed no row). The systems that keep a
    state refuse an ordering condition or an expression over such a column, in one line; equality
    stays theirs (a deterministic collation compares bytes); the default is then recompute, exact."""
    conn.execute('CREATE COLLATION mine FROM "C"')
    conn.execute("CREATE TABLE wr (k int, b text COLLATE mine); CREATE TABLE ws (k int, b text COLLATE mine)")
    for shape in ["SELECT wr.k, wr.b FROM wr JOIN ws ON wr.b = ws.b WHERE wr.b < 'B'",
                  "SELECT upper(wr.b) AS u, ws.k FROM wr JOIN ws ON wr.k = ws.k",
                  "SELECT wr.b, count(*) AS n FROM wr JOIN ws ON wr.k = ws.k GROUP BY wr.b HAVING wr.b > 'B'",
                  "SELECT ws.k, count(*) FILTER (WHERE wr.b LIKE 'a%') AS n FROM wr JOIN ws ON wr.k = ws.k GROUP BY ws.k"]:
        for system in ("fivm", "first-order", "sample"):
            if system == "sample" and "WHERE wr.b <" not in shape:  # (it lists columns as they are: no expression)
                continue
            with pytest.raises(PgivmError, match="collation public.mine: conditions and expressions") as info:
                command.create("v", shape, system=system, target=dsn, **({"size": 10} if system == "sample" else {}))
            message = info.value.message
            assert "\n" not in message and len(message) < 200, message
    assert command.create("eq", "SELECT wr.k, wr.b FROM wr JOIN ws ON wr.b = ws.b WHERE wr.b = 'a'", target=dsn).system == "fivm"
    query = "SELECT wr.k, wr.b FROM wr JOIN ws ON wr.b = ws.b WHERE wr.b < 'B'"
    assert command.create("v", query, target=dsn).system == "recompute"
    conn.execute("INSERT INTO wr VALUES (1, 'a'), (2, 'b'), (3, 'A'); INSERT INTO ws VALUES (1, 'a'), (2, 'b'), (3, 'A')")
    assert sorted(conn.execute("SELECT * FROM v").fetchall()) == sorted(conn.execute(query).fetchall())
    assert sorted(conn.execute("SELECT * FROM eq").fetchall()) == [(1, "a")]


def test_a_condition_over_a_column_of_an_icu_collation_stays_exact(conn: psycopg.Connection, dsn: str) -> None:
    """The review's case on a server with ICU (PostgreSQL 15 from Debian; skipped on the embedded
    one): under en-US 'b' < 'B', under the database's C not; the view keeps 'b' once inserted."""
    if conn.execute("SELECT 'B' < 'a'").fetchone()[0] is False or \
            conn.execute("SELECT to_regcollation('\"en-US-x-icu\"')").fetchone()[0] is None:
        pytest.skip("this server has no ICU collation ordering otherwise than its default")
    conn.execute('CREATE TABLE wr (k int, b text COLLATE "en-US-x-icu"); CREATE TABLE ws (k int, b text COLLATE "en-US-x-icu"); '
                 "INSERT INTO wr VALUES (1, 'a'); INSERT INTO ws VALUES (1, 'a'), (2, 'b')")
    query = "SELECT wr.k, wr.b FROM wr JOIN ws ON wr.b = ws.b WHERE wr.b < 'B'"
    command.create("v", query, target=dsn)
    conn.execute("INSERT INTO wr VALUES (2, 'b')")
    assert sorted(conn.execute("SELECT * FROM v").fetchall()) == sorted(conn.execute(query).fetchall()) == [(1, "a"), (2, "b")]


def test_min_and_max_order_by_the_columns_own_collation(conn: psycopg.Connection, dsn: str) -> None:
    """Under en-US 'B' sorts above 'a', under C below it: first-order's table of each group's values
    ordered by the database's default, and max showed 'a' where PostgreSQL shows 'B'. The values
    are kept in the column's collation now; an expression over such a column is refused (not yet),
    and recompute takes it (skipped where the server has no ICU, as the embedded one)."""
    if conn.execute("SELECT to_regcollation('\"en-US-x-icu\"')").fetchone()[0] is None:
        pytest.skip("this server has no ICU collations")
    conn.execute('CREATE TABLE en (g int, k text COLLATE "en-US-x-icu"); '
                 "INSERT INTO en VALUES (1, 'a'), (1, 'B'), (2, 'b'), (2, 'A')")
    query = "SELECT en.g, max(en.k) AS mx, min(en.k) AS mn, count(*) AS n FROM en GROUP BY en.g"
    assert command.create("v", query, target=dsn).system == "first-order"
    for statement in ["INSERT INTO en VALUES (1, 'C'), (2, 'c')", "DELETE FROM en WHERE k = 'C'",
                      "UPDATE en SET k = 'Z' WHERE k = 'a'", "DELETE FROM en WHERE k IN ('B', 'b')"]:
        conn.execute(statement)
        assert conn.execute("SELECT * FROM v ORDER BY g").fetchall() == conn.execute(f"{query} ORDER BY g").fetchall(), statement
    with pytest.raises(PgivmError, match="not yet") as info:
        command.create("w", "SELECT en.g, max(lower(en.k)) AS mx FROM en GROUP BY en.g", system="first-order", target=dsn)
    assert "\n" not in info.value.message


_USING = {
    "int using bigint": "SELECT k, x.g, y.w FROM x JOIN y USING (k)",
    "int using bigint, grouped": "SELECT k, count(*) AS n FROM x JOIN y USING (k) GROUP BY k",
    "varchar(3) using text": "SELECT v, x.g, y.w FROM x JOIN y USING (v)",
    "star, three columns": "SELECT * FROM x JOIN y USING (k, v, m)",
    "numeric(6,2) using numeric(6,2) keeps its typmod": "SELECT m, x.g FROM x JOIN y USING (m)",
    "left join": "SELECT k, x.g, y.w FROM x LEFT JOIN y USING (k)",
    "right join": "SELECT k, x.g, y.w FROM x RIGHT JOIN y USING (k)",
    "right join, varchar(3) using text": "SELECT v, x.g, y.w FROM x RIGHT JOIN y USING (v)",  # (left to right: varchar)
    "text using varchar(3)": "SELECT v, x.g, y.w FROM y JOIN x USING (v)",
    "qualified: the table's own type": "SELECT x.k, y.k AS yk, x.g FROM x JOIN y USING (k)",
}


@pytest.mark.parametrize("system", ["fivm", "first-order", "recompute"])
@pytest.mark.parametrize("label", sorted(_USING))
def test_a_using_column_has_the_common_type_of_the_columns_it_merges(conn: psycopg.Connection, dsn: str,
                                                                      system: str, label: str) -> None:
    """An unqualified JOIN ... USING column is of the common type of the columns it merges, as
    PostgreSQL resolves it, left to right (int USING bigint is bigint, varchar(3) USING text is
    varchar and text USING varchar(3) text; the same type keeps its typmod): the view's columns are typed as a plain view's of the query (they had the
    left side's type, the values equal), and equal it after writes."""
    conn.execute("CREATE TABLE x (g int, k int, v varchar(3), m numeric(6,2)); "
                 "CREATE TABLE y (w int, k bigint, v text, m numeric(6,2))")
    conn.execute("INSERT INTO x VALUES (1, 1, 'a', 1.5), (2, 2, 'b', 2), (3, NULL, 'c', NULL); "
                 "INSERT INTO y VALUES (7, 1, 'a', 1.50), (8, 3000000000, 'b', 2), (9, 2, 'zz', 7)")
    query = _USING[label]
    if system == "fivm" and ("LEFT" in query or "RIGHT" in query):
        pytest.skip("outer joins are first-order's")
    command.create("v", query, system=system, target=dsn)
    conn.execute(f"CREATE VIEW p AS {query}")
    shape = ("SELECT attname, pg_catalog.format_type(atttypid, atttypmod) FROM pg_attribute "
             "WHERE attrelid = %s::regclass AND attnum > 0 ORDER BY attnum")
    assert conn.execute(shape, ["v"]).fetchall() == conn.execute(shape, ["p"]).fetchall()
    conn.execute("INSERT INTO x VALUES (4, 2, 'zz', 7); DELETE FROM y WHERE w = 7; UPDATE x SET k = 1 WHERE g = 2")
    for a, b in (("SELECT * FROM v", "SELECT * FROM p"), ("SELECT * FROM p", "SELECT * FROM v")):
        assert conn.execute(f"({a}) EXCEPT ALL ({b})").fetchall() == [], label


@pytest.mark.parametrize("query", [
    "SELECT sum(k / 2) AS half FROM x JOIN y USING (k)",
    "SELECT count(*) AS n FROM x JOIN y USING (k) WHERE k / 2 > 1",
    "SELECT k / 2 AS h, count(*) AS n FROM x JOIN y USING (k) GROUP BY k / 2",
    "SELECT max(k) AS top FROM x JOIN y USING (k)",
])
def test_a_using_column_of_two_types_in_an_expression_is_refused_naming_the_cast(conn: psycopg.Connection, dsn: str,
                                                                                  query: str) -> None:
    """Inside an expression, a comparison of other than numbers, or an aggregate, PostgreSQL reads a
    USING column in the common type of the columns it merges (k / 2 over int USING numeric divides
    in numeric); pgivm kept the left column, an int, and divided as integers: every system, recompute
    too, showed another value (a held-out review of stop 57). Refused in one line naming the cast,
    which then gives PostgreSQL's rows; a comparison of numbers, which compares by value, stays."""
    conn.execute("CREATE TABLE x (g int, k int); CREATE TABLE y (w int, k numeric)")
    conn.execute("INSERT INTO x VALUES (1, 1), (2, 3), (3, 2147483647); INSERT INTO y VALUES (7, 1), (8, 3), (9, 2147483647)")
    for system in ("first-order", "recompute"):
        with pytest.raises(UnsupportedQuery) as info:
            command.create("v", query, system=system, target=dsn)
        line = f"pgivm: error: {info.value}"
        assert "\n" not in line and len(line) < 200 and "CAST(x.k AS numeric)" in line, line
        assert conn.execute("SELECT count(*) FROM pg_class WHERE relname = 'v'").fetchone() == (0,)
    written = query.replace("(k / 2)", "(CAST(x.k AS numeric) / 2)").replace(" k / 2", " CAST(x.k AS numeric) / 2") \
        .replace("max(k)", "max(CAST(x.k AS numeric))")
    command.create("v", written, target=dsn)
    conn.execute("INSERT INTO x VALUES (4, 5); INSERT INTO y VALUES (10, 5)")
    for a, b in (("SELECT * FROM v", query), (query, "SELECT * FROM v")):
        assert conn.execute(f"({a}) EXCEPT ALL ({b})").fetchall() == [], written
    command.create("w", "SELECT k, x.g FROM x JOIN y USING (k) WHERE k > 2", target=dsn)  # numbers compared: taken
