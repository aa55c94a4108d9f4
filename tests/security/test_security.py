"""Security of installed views (issue 9): pgivm's functions run with the view owner's rights, so no
role that owns a base table, a schema or a search_path entry may get code run with those rights.

Attacks tried: the owner of the base tables puts a view (or a table whose row-level security policy
calls a function) under a base table's old name, or swaps the whole schema, then writes the real
tables and waits for the DBA's verify/rebalance/status/drop; a search_path whose first schema
shadows power(), floor(), sum(), count(), max() and +, *, =; a shadowing search_path for verify's
recount. And the grants: a reader of the view and a writer of the base tables (whose writes are
maintained) get no right on the state tables and functions.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

from conftest import TRIANGLE_SQL
from pgivm import command

STRATEGIES = ["ivme", "first-order", "recompute"]
COLUMNS = {"r": ("a", "b"), "s": ("b", "c"), "t": ("c", "a")}
ROWS = {"r": [(1, 2), (1, 3), (2, 3), (4, 5)], "s": [(2, 3), (3, 1), (3, 4), (5, 6)], "t": [(3, 1), (1, 2), (4, 1), (6, 4)]}
M_SQL = "SELECT count(*) FROM m.r JOIN m.s ON r.b = s.b JOIN m.t ON s.c = t.c AND t.a = r.a"
M_TABLES = [("m.r_real", "r"), ("m.s", "s"), ("m.t", "t")]  # mallory's tables once r is renamed
MARKER = "pgivm_test.escalate"  # escalate() sets it in the session that ran it


@contextmanager
def connect_as(dsn: str, role: str | None = None, **params: str) -> Iterator[psycopg.Connection]:
    """An autocommit connection to the test database as ``role`` (the server trusts local connections)."""
    if role is not None:
        params["user"] = role
    with psycopg.connect(make_conninfo(dsn, **params), autocommit=True) as connection:
        yield connection


@pytest.fixture
def make_role(dsn: str) -> Iterator[Callable[[str], str]]:
    """Creates LOGIN roles named ``<base>_<uuid>`` (roles are cluster-wide); drops them afterwards."""
    created: list[str] = []

    def make(base: str) -> str:
        name = f"{base}_{uuid.uuid4().hex[:10]}"
        with connect_as(dsn) as admin:
            admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(name)))
        created.append(name)
        return name

    yield make
    with connect_as(dsn) as admin:
        for name in reversed(created):
            role = sql.Identifier(name)
            admin.execute(sql.SQL("REASSIGN OWNED BY {r} TO CURRENT_USER; DROP OWNED BY {r}").format(r=role))
            admin.execute(sql.SQL("DROP ROLE {}").format(role))


def run(c: psycopg.Connection, query: str, **names: str) -> None:
    """``query`` with its {holes} filled by quoted, possibly schema-qualified, identifiers."""
    c.execute(sql.SQL(query).format(**{k: sql.Identifier(*v.split(".")) for k, v in names.items()}))


def create_tables(c: psycopg.Connection, schema: str = "public", owner: str | None = None) -> None:
    """r(a,b), s(b,c), t(c,a) in ``schema`` with ROWS (4 triangles), owned by ``owner``."""
    for table, (x, y) in COLUMNS.items():
        name = sql.Identifier(schema, table)
        c.execute(sql.SQL("CREATE TABLE {} ({} int, {} int)").format(name, sql.Identifier(x), sql.Identifier(y)))
        with c.cursor().copy(sql.SQL("COPY {} FROM STDIN").format(name)) as copy:
            for row in ROWS[table]:
                copy.write_row(row)
        if owner:
            c.execute(sql.SQL("ALTER TABLE {} OWNER TO {}").format(name, sql.Identifier(owner)))


def mallory_schema(admin: psycopg.Connection, mallory: str) -> None:
    """Schema m and the tables r, s, t in it, all owned by mallory, who may also create schemas."""
    run(admin, "CREATE SCHEMA m AUTHORIZATION {u}", u=mallory)
    create_tables(admin, "m", mallory)
    run(admin, "GRANT CREATE ON DATABASE {d} TO {u}", d=admin.info.dbname, u=mallory)


def plant_escalation(c: psycopg.Connection, mallory: str, extra: str = "") -> None:
    """m.escalate(): whoever runs it logs itself in m.escalations, sets MARKER in its session, and
    tries to make mallory superuser (which only a superuser's call achieves); errors are swallowed."""
    run(c, "CREATE TABLE m.escalations (who text); GRANT INSERT ON m.escalations TO PUBLIC; "
           "GRANT USAGE ON SCHEMA m TO PUBLIC")
    c.execute(sql.SQL("""
        CREATE FUNCTION m.escalate() RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
        BEGIN
            PERFORM pg_catalog.set_config({marker}, current_user, false);
            BEGIN INSERT INTO m.escalations VALUES (current_user); EXCEPTION WHEN OTHERS THEN NULL; END;
            BEGIN EXECUTE pg_catalog.format('ALTER ROLE %I SUPERUSER', {mallory}); EXCEPTION WHEN OTHERS THEN NULL; END;
            {extra}
            RETURN true;
        END $$""").format(marker=sql.Literal(MARKER), mallory=sql.Literal(mallory), extra=sql.SQL(extra)))


def fake_view(c: psycopg.Connection, view: str, letter: str, source: str) -> None:
    """A view under a base table's name: its table's rows, each read calling m.escalate(), and one
    row of NULLs (which never join) that calls it once more even when the table is empty."""
    x, y = COLUMNS[letter]
    run(c, "CREATE VIEW {v} AS SELECT {x}, {y} FROM {t} WHERE m.escalate() UNION ALL "
           "SELECT e.v, e.v FROM (SELECT CASE WHEN m.escalate() THEN NULL::int ELSE 0 END AS v) e",
        v=view, x=x, y=y, t=source)


def assert_not_escalated(admin: psycopg.Connection, mallory: str, when: str, *sessions: psycopg.Connection) -> None:
    assert not admin.execute("SELECT rolsuper FROM pg_roles WHERE rolname = %s", [mallory]).fetchone()[0], \
        f"{mallory} became superuser {when}"
    ran = admin.execute("SELECT who FROM m.escalations").fetchall()
    assert ran == [], f"m.escalate() ran {when}, as {ran}"
    for session in (admin, *sessions):
        marker = session.execute("SELECT current_setting(%s, true)", [MARKER]).fetchone()[0]
        assert not marker, f"m.escalate() ran in a session of {session.info.user} {when}, as {marker}"


def recount(c: psycopg.Connection, r: str, s: str, t: str) -> int:
    return c.execute(sql.SQL("SELECT count(*) FROM {} r JOIN {} s ON r.b = s.b JOIN {} t ON s.c = t.c AND t.a = r.a").format(
        *(sql.Identifier(*name.split(".")) for name in (r, s, t)))).fetchone()[0]


def assert_verified(c: psycopg.Connection, expected: int | None = None, target: object = None) -> None:
    report = command.verify("tri", target=target if target is not None else c)
    assert report.ok, (report.maintained, report.recount, [str(f) for f in report.failures])
    if expected is not None:
        assert (report.recount, report.maintained) == (expected, expected), \
            f"verify recounted {report.recount}, maintained {report.maintained}, the tables hold {expected}"


def write_every_way(c: psycopg.Connection, table: str, letter: str, after: Callable[[str], None]) -> None:
    """INSERT, UPDATE of a join column, DELETE, COPY, TRUNCATE and a refill of ``table``; ``after(what)`` after each."""
    x, y = (sql.Identifier(col) for col in COLUMNS[letter])
    name = sql.Identifier(*table.split("."))
    c.execute(sql.SQL("INSERT INTO {} ({}, {}) VALUES (1, 2), (2, 3), (70, 80)").format(name, x, y))
    after(f"INSERT INTO {table}")
    # Operators qualified: test_hostile_search_path_reaches_no_function writes under a shadowing search_path.
    c.execute(sql.SQL("UPDATE {t} SET {x} = {x} OPERATOR(pg_catalog.+) 1 WHERE {x} OPERATOR(pg_catalog.=) ANY ('{{1,70}}')").format(t=name, x=x))
    after(f"UPDATE {table}")
    c.execute(sql.SQL("DELETE FROM {} WHERE {} OPERATOR(pg_catalog.=) 71").format(name, x))
    after(f"DELETE FROM {table}")
    with c.cursor().copy(sql.SQL("COPY {} ({}, {}) FROM STDIN").format(name, x, y)) as copy:
        for row in ROWS[letter]:
            copy.write_row(row)
    after(f"COPY {table}")
    c.execute(sql.SQL("TRUNCATE {}").format(name))
    after(f"TRUNCATE {table}")
    c.execute(sql.SQL("INSERT INTO {} ({}, {}) VALUES (%s, %s), (%s, %s), (%s, %s), (%s, %s)").format(name, x, y),
              [v for row in ROWS[letter] for v in row])
    after(f"refill of {table}")


def admin_commands(admin: psycopg.Connection, strategy: str, target: psycopg.Connection,
                   check: Callable[[str], None], expected: int, drop_target: psycopg.Connection | None = None) -> None:
    """verify, rebalance (ivme), status, then drop, each run on ``target`` (drop on ``drop_target``
    if given), and upgrade --rebuild by ``admin`` (it drops triggers: the tables' owner's or a
    superuser's), each followed by ``check``."""
    assert_verified(admin, expected, target)
    check("after verify")
    assert command.upgrade("tri", rebuild=True, target=admin).rebuilt
    check("after upgrade --rebuild")
    assert_verified(admin, expected, target)
    if strategy == "ivme":
        command.action("tri", "rebalance", target=target)
        check("after rebalance")
        assert_verified(admin, expected, target)
    command.status("tri", target=target)
    check("after status")
    command.drop("tri", target=drop_target or target)
    check("after drop")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_view_under_old_name_escalates_nobody(dsn: str, conn: psycopg.Connection, make_role, strategy: str) -> None:
    mallory = make_role("mallory")
    mallory_schema(conn, mallory)
    command.create("tri", M_SQL, system=strategy, target=conn)
    with connect_as(dsn, mallory) as m:
        m.execute("ALTER TABLE m.r RENAME TO r_real")
        plant_escalation(m, mallory)
        fake_view(m, "m.r", "r", "m.r_real")
        check = lambda when: assert_not_escalated(conn, mallory, when, m)  # noqa: E731
        for table, letter in M_TABLES:
            write_every_way(m, table, letter, lambda what: check(f"after {what} by mallory"))
            assert_verified(conn, recount(conn, "m.r_real", "m.s", "m.t"))  # the view follows m.r_real by oid
            check(f"after verify following the writes to {table}")
        admin_commands(conn, strategy, conn, check, recount(conn, "m.r_real", "m.s", "m.t"))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_policy_table_under_old_name_runs_nothing_as_view_owner(dsn: str, conn: psycopg.Connection, make_role,
                                                                strategy: str) -> None:
    mallory, owner = make_role("mallory"), make_role("owner_role")
    mallory_schema(conn, mallory)
    command.init(target=conn)  # a superuser's catalog, which the superuser's commands below may trust
    # What the view's owner needs: read and trigger mallory's tables, lock them (UPDATE), create schemas.
    run(conn, "GRANT USAGE ON SCHEMA m TO {o}; GRANT SELECT, TRIGGER, UPDATE ON m.r, m.s, m.t TO {o}; "
              "GRANT CREATE ON DATABASE {d} TO {o}", o=owner, d=conn.info.dbname)
    with connect_as(dsn, owner) as o, connect_as(dsn, mallory) as m:
        o.execute("CREATE SCHEMA o; CREATE TABLE o.owner_secret (who text)")  # only owner_role may write it
        command.create("tri", M_SQL, system=strategy, schema="o", target=o)
        m.execute("ALTER TABLE m.r RENAME TO r_real")
        plant_escalation(m, mallory, "BEGIN INSERT INTO o.owner_secret VALUES (current_user); "
                                     "EXCEPTION WHEN OTHERS THEN NULL; END;")
        m.execute("CREATE TABLE m.r AS SELECT * FROM m.r_real; ALTER TABLE m.r ENABLE ROW LEVEL SECURITY; "
                  "CREATE POLICY escalate ON m.r USING (m.escalate()); GRANT SELECT ON m.r TO PUBLIC")

        def check(when: str) -> None:
            assert_not_escalated(conn, mallory, when, m, o)
            written = conn.execute("SELECT who FROM o.owner_secret").fetchall()
            assert written == [], f"m.escalate() wrote o.owner_secret {when}, as {written}"

        for table, letter in M_TABLES:
            write_every_way(m, table, letter, lambda what: check(f"after {what} by mallory"))
            assert_verified(conn, recount(conn, "m.r_real", "m.s", "m.t"), target=o)  # by the view's owner
            check(f"after verify by owner_role following the writes to {table}")
        # DROP TRIGGER needs the table's owner: a superuser drops the view.
        admin_commands(conn, strategy, o, check, recount(conn, "m.r_real", "m.s", "m.t"), drop_target=conn)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_schema_swap_is_followed_by_oid(dsn: str, conn: psycopg.Connection, make_role, strategy: str) -> None:
    mallory = make_role("mallory")
    mallory_schema(conn, mallory)
    command.create("tri", M_SQL, system=strategy, target=conn)
    with connect_as(dsn, mallory) as m:
        m.execute("ALTER SCHEMA m RENAME TO m_old; CREATE SCHEMA m")
        plant_escalation(m, mallory)
        for table in COLUMNS:
            fake_view(m, f"m.{table}", table, f"m_old.{table}")
        check = lambda when: assert_not_escalated(conn, mallory, when, m)  # noqa: E731
        for statement in ("INSERT INTO m_old.r VALUES (2, 3), (4, 5)", "DELETE FROM m_old.s WHERE b = 5",
                          "UPDATE m_old.t SET a = 2 WHERE c = 3", "TRUNCATE m_old.r"):
            m.execute(statement)  # type: ignore[arg-type]
            check(f"after {statement} by mallory")
        assert_verified(conn, 0)
        check("after verify")
        m.execute("INSERT INTO m_old.r VALUES (1, 2), (2, 3), (1, 3)")
        admin_commands(conn, strategy, conn, check, recount(conn, "m_old.r", "m_old.s", "m_old.t"))


# Shadows of what pgivm's SQL calls unqualified: (name, argument types, return type, result); each logs its call.
EVIL_FUNCTIONS = [
    ("power", "float8, float8", "float8", "pg_catalog.power($1, $2)"),
    ("floor", "float8", "float8", "pg_catalog.floor($1)"),
    ("plus", "bigint, bigint", "bigint", "$1 OPERATOR(pg_catalog.+) $2"),
    ("times", "bigint, bigint", "bigint", "$1 OPERATOR(pg_catalog.*) $2"),
    ("eq8", "bigint, bigint", "boolean", "$1 OPERATOR(pg_catalog.=) $2"),
    ("eq4", "integer, integer", "boolean", "$1 OPERATOR(pg_catalog.=) $2"),
    ("sum8", "bigint, bigint", "bigint", "CASE WHEN $2 IS NULL THEN $1 ELSE COALESCE($1, 0) OPERATOR(pg_catalog.+) $2 END"),
    ("sum4", "bigint, integer", "bigint", "CASE WHEN $2 IS NULL THEN $1 ELSE COALESCE($1, 0) OPERATOR(pg_catalog.+) $2 END"),
    ("max8", "bigint, bigint", "bigint", "CASE WHEN $1 IS NULL OR $2 OPERATOR(pg_catalog.>) $1 THEN $2 ELSE $1 END"),
    ("count_step", "bigint", "bigint", "$1 OPERATOR(pg_catalog.+) 1"),
]
EVIL_LOG = """
CREATE SCHEMA evil;
CREATE TABLE evil.calls (fn text, who text);
CREATE SEQUENCE evil.call_seq;  -- nextval survives a rollback
CREATE FUNCTION evil.log(fn text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF pg_catalog.current_setting('transaction_read_only') OPERATOR(pg_catalog.=) 'on' THEN
        RAISE EXCEPTION 'evil.% called in a read-only transaction', fn;
    END IF;
    PERFORM pg_catalog.nextval('evil.call_seq');
    INSERT INTO evil.calls VALUES (fn, current_user);
END $$"""
EVIL_OPERATORS_AND_AGGREGATES = """
CREATE OPERATOR evil.+ (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = evil.plus);
CREATE OPERATOR evil.* (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = evil.times);
CREATE OPERATOR evil.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = evil.eq8);
CREATE OPERATOR evil.= (LEFTARG = integer, RIGHTARG = integer, FUNCTION = evil.eq4);
CREATE AGGREGATE evil.sum(bigint) (SFUNC = evil.sum8, STYPE = bigint);
CREATE AGGREGATE evil.sum(integer) (SFUNC = evil.sum4, STYPE = bigint);
CREATE AGGREGATE evil.max(bigint) (SFUNC = evil.max8, STYPE = bigint);
CREATE AGGREGATE evil.count(*) (SFUNC = evil.count_step, STYPE = bigint, INITCOND = '0')"""


def install_evil(c: psycopg.Connection) -> None:
    c.execute(EVIL_LOG)  # type: ignore[arg-type]
    for name, args, returns, result in EVIL_FUNCTIONS:
        c.execute(f"CREATE FUNCTION evil.{name}({args}) RETURNS {returns} LANGUAGE plpgsql AS $$ "  # type: ignore[arg-type]
                  f"BEGIN PERFORM evil.log('{name}'); RETURN {result}; END $$")
    c.execute(EVIL_OPERATORS_AND_AGGREGATES)  # type: ignore[arg-type]


def assert_evil_never_ran(c: psycopg.Connection, when: str) -> None:
    calls = c.execute("SELECT fn, who FROM evil.calls").fetchall()
    called = c.execute("SELECT is_called FROM evil.call_seq").fetchone()[0]
    assert calls == [] and not called, f"functions of schema evil ran {when}: {calls or 'in a rolled-back transaction'}"


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_hostile_search_path_reaches_no_function(dsn: str, conn: psycopg.Connection, strategy: str) -> None:
    create_tables(conn)
    install_evil(conn)
    batch = {"batch_threshold": 1} if strategy != "recompute" else {}  # every write through the set-at-a-time path
    command.create("tri", TRIANGLE_SQL, system=strategy, target=conn, **batch)
    evil_dsn = make_conninfo(dsn, options="-c search_path=evil,pg_catalog,public")
    helpers = [row[0] for row in conn.execute(
        "SELECT p.proname FROM pg_proc p WHERE p.pronamespace = 'pgivm_tri'::regnamespace "
        "AND p.pronargs = 0 AND p.prorettype <> 'trigger'::regtype ORDER BY 1")]
    with connect_as(evil_dsn) as e:
        assert e.execute("SELECT current_schemas(false)").fetchone()[0][0] == "evil"
        for helper in helpers:  # rolled back: some of them (clear_r, ...) empty the state
            with e.transaction(force_rollback=True):
                e.execute(sql.SQL("SELECT {}()").format(sql.Identifier("pgivm_tri", helper)))
            assert_evil_never_ran(conn, f"in pgivm_tri.{helper}()")
        for table, letter in (("public.r", "r"), ("public.s", "s"), ("public.t", "t")):
            write_every_way(e, table, letter, lambda what: assert_evil_never_ran(conn, f"in {what}"))
        if strategy == "ivme":
            command.action("tri", "rebalance", target=evil_dsn)
            assert_evil_never_ran(conn, "in rebalance")
        assert_verified(conn, recount(conn, "public.r", "public.s", "public.t"), target=evil_dsn)
        assert_evil_never_ran(conn, "in verify")
        command.status("tri", target=evil_dsn)
        assert_evil_never_ran(conn, "in status")
        command.list_views(target=evil_dsn)
        assert_evil_never_ran(conn, "in list")
    assert_verified(conn, recount(conn, "public.r", "public.s", "public.t"))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_verify_ignores_shadowing_tables_on_search_path(dsn: str, conn: psycopg.Connection, strategy: str) -> None:
    create_tables(conn)
    command.create("tri", TRIANGLE_SQL, system=strategy, target=conn)  # unqualified names: public.r, s, t
    conn.execute("CREATE SCHEMA shadow; CREATE TABLE shadow.r (a int, b int); CREATE TABLE shadow.s (b int, c int); "
                 "CREATE TABLE shadow.t (c int, a int)")
    with connect_as(dsn, options="-c search_path=shadow,public") as shadowed:
        assert recount(shadowed, "r", "s", "t") == 0  # the names lead to the empty tables here
        report = command.verify("tri", target=shadowed)
        assert report.ok and report.recount == len(ROWS["r"]) == report.maintained, \
            (report.maintained, report.recount, [str(f) for f in report.failures])


def sqlstates(c: psycopg.Connection, statements: list[sql.Composable]) -> dict[str, str | None]:
    """Each statement's SQLSTATE (None if it succeeded), each in a transaction rolled back."""
    found: dict[str, str | None] = {}
    for statement in statements:
        try:
            with c.transaction(force_rollback=True):
                c.execute(statement)
            found[statement.as_string(c)] = None
        except psycopg.Error as err:
            found[statement.as_string(c)] = err.sqlstate
    return found


def state_access(admin: psycopg.Connection, schema: str = "pgivm_tri") -> list[sql.Composable]:
    """Reading and writing every table of the state schema, and calling each of its functions."""
    statements: list[sql.Composable] = []
    for (table,) in admin.execute("SELECT relname FROM pg_class WHERE relnamespace = %s::regnamespace "
                                  "AND relkind IN ('r', 'v', 'S') ORDER BY 1", [schema]):
        name = sql.Identifier(schema, table)
        statements += [sql.SQL("SELECT * FROM {}").format(name), sql.SQL("DELETE FROM {} WHERE false").format(name),
                       sql.SQL("INSERT INTO {} DEFAULT VALUES").format(name)]
    for name, types in admin.execute("SELECT p.proname, array(SELECT format_type(t, NULL) FROM unnest(p.proargtypes) t) "
                                     "FROM pg_proc p WHERE p.pronamespace = %s::regnamespace ORDER BY 1", [schema]):
        args = sql.SQL(", ").join(sql.SQL("NULL::{}").format(sql.SQL(t)) for t in types)  # type: ignore[arg-type]
        statements.append(sql.SQL("SELECT {}({})").format(sql.Identifier(schema, name), args))
    assert statements
    return statements


def assert_denied(c: psycopg.Connection, admin: psycopg.Connection) -> None:
    """Every access to the state is refused (42501): as is, and again with USAGE on the state schema
    granted, so that the revokes on its tables and functions are tested too, not only the schema's."""
    for grant in (False, True):
        if grant:
            run(admin, "GRANT USAGE ON SCHEMA pgivm_tri TO {u}", u=c.info.user)
        allowed = {text: state for text, state in sqlstates(c, state_access(admin)).items() if state != "42501"}
        assert allowed == {}, f"{c.info.user}{' with USAGE' if grant else ''} was not refused (42501): {allowed}"
    run(admin, "REVOKE USAGE ON SCHEMA pgivm_tri FROM {u}", u=c.info.user)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_reader_reads_the_view_and_nothing_of_the_state(dsn: str, conn: psycopg.Connection, make_role,
                                                        strategy: str) -> None:
    reader = make_role("reader")
    create_tables(conn)
    command.create("tri", TRIANGLE_SQL, system=strategy, target=conn)
    run(conn, "GRANT SELECT ON tri TO {u}", u=reader)
    with connect_as(dsn, reader) as c:
        assert c.execute("SELECT * FROM tri").fetchone()[0] == 4
        assert_denied(c, conn)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_writer_is_maintained_and_touches_no_state(dsn: str, conn: psycopg.Connection, make_role, strategy: str) -> None:
    writer = make_role("writer")
    create_tables(conn)
    command.create("tri", TRIANGLE_SQL, system=strategy, target=conn)
    run(conn, "GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON r, s, t TO {u}", u=writer)
    with connect_as(dsn, writer) as c:
        for table in ("r", "s", "t"):
            write_every_way(c, f"public.{table}", table,
                            lambda what: assert_verified(conn, recount(conn, "public.r", "public.s", "public.t")))
        assert_denied(c, conn)
    assert_verified(conn, recount(conn, "public.r", "public.s", "public.t"))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_identifiers_with_newlines_stay_identifiers(conn: psycopg.Connection, strategy: str) -> None:
    """Quoted names may hold a newline, quotes and comment markers: rendered SQL must keep them inside
    identifiers (never in a -- comment, where a newline would end the comment and run the rest)."""
    evil = 'b\nx); DROP TABLE victim; --'
    conn.execute("CREATE TABLE victim (v int)")
    conn.execute(sql.SQL("CREATE TABLE r (a int, {b} int); CREATE TABLE s ({b} int, c int); CREATE TABLE t (c int, a int)")
                 .format(b=sql.Identifier(evil)))
    conn.execute("INSERT INTO r VALUES (1, 2), (2, 3); INSERT INTO s VALUES (2, 3), (3, 1); INSERT INTO t VALUES (3, 1), (1, 2)")
    view_sql = sql.SQL("SELECT count(*) FROM r JOIN s ON r.{b} = s.{b} JOIN t ON s.c = t.c AND t.a = r.a").format(
        b=sql.Identifier(evil)).as_string(conn)
    command.create("tri", view_sql, system=strategy, target=conn)
    conn.execute("INSERT INTO r VALUES (1, 2); TRUNCATE s; INSERT INTO s VALUES (2, 3)")
    assert conn.execute("SELECT to_regclass('victim') IS NOT NULL").fetchone()[0]
    report = command.verify("tri", target=conn)
    assert report.ok and report.maintained == 2, (report.maintained, [str(f) for f in report.failures])



def test_upgrade_by_a_role_other_than_the_owner_or_a_superuser_is_refused_in_one_line(dsn: str, conn: psycopg.Connection,
                                                                                        make_role) -> None:
    """It was PostgreSQL's 'permission denied for schema pgivm_v' (a held-out review); nothing changes."""
    owner, stranger = make_role("owner_role"), make_role("stranger")
    run(conn, "GRANT CREATE ON DATABASE {d} TO {o}; GRANT CREATE ON SCHEMA public TO {o}", o=owner, d=conn.info.dbname)
    with connect_as(dsn, owner) as o:
        o.execute("CREATE TABLE r (a int, b int); INSERT INTO r VALUES (1, 2)")
        command.create("v", "SELECT r.a, count(*) AS n FROM r GROUP BY r.a", target=o)
    from pgivm.errors import PgivmError

    with connect_as(dsn, stranger) as s:
        for rebuild in (False, True):
            with pytest.raises(PgivmError, match="only its owner or a superuser") as info:
                command.upgrade("v", force=True, rebuild=rebuild, target=s)
            assert "\n" not in info.value.message
    with connect_as(dsn, owner) as o:
        assert command.upgrade("v", rebuild=True, target=o).rebuilt
        o.execute("INSERT INTO r VALUES (1, 3)")
        assert command.verify("v", target=o).ok
        command.drop("v", target=o)
