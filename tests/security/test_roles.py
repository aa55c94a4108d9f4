"""Every role against every other (issue 21): the deferred layer, the worker, the catalog.

The cast of a real deployment: a superuser who ran ``init`` (the test's own connection), a view
owner who is not a superuser, the owner of the base tables, a reader with SELECT on the view only,
a writer with write rights on a base table only, and a stranger with nothing but CREATE on
``public`` (and, where the attack needs it, on the database). Each test is one road to
superuser (or to another role's rights or data) that was open, tried as that role; each ends by
checking that no role but the superuser is one, and that no planted function ran.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

from pgivm import command
from pgivm.errors import PgivmError

ROWS = {"r": [(1, 2), (1, 3), (2, 3), (4, 5), (3, 1)], "s": [(2, 3), (3, 1), (3, 4), (5, 6), (1, 2)],
        "t": [(3, 1), (1, 2), (4, 1), (6, 4), (2, 3)]}
COLUMNS = {"r": ("a", "b"), "s": ("b", "c"), "t": ("c", "a")}
TRIANGLE = "SELECT count(*) FROM shop.r JOIN shop.s ON r.b = s.b JOIN shop.t ON s.c = t.c AND t.a = r.a"
GROUPED = "SELECT r.a, count(*) AS n FROM shop.r JOIN shop.s ON r.b = s.b GROUP BY r.a"
# the 4-path count R(b) S(b,c) T(c,a) R'(a) over the same tables (IVMε's Appendix G)
FOUR_PATH = "SELECT count(*) FROM shop.r JOIN shop.s ON r.b = s.b JOIN shop.t ON s.c = t.c JOIN shop.r r2 ON t.a = r2.a"
# the 3-path count R(b) S(b,c) T(c), class 3R² (IVMε's Appendix H.3)
THREE_PATH = "SELECT count(*) FROM shop.r JOIN shop.s ON r.b = s.b JOIN shop.t ON s.c = t.c"


@dataclass
class Cast:
    dsn: str
    admin: psycopg.Connection  # the superuser who ran init
    owner: str  # owns the views (not a superuser)
    tables: str  # owns schema shop and its tables r, s, t
    reader: str  # SELECT on the views
    writer: str  # INSERT, UPDATE, DELETE, TRUNCATE on shop.r
    stranger: str  # CREATE on public and on the database, nothing else

    @contextmanager
    def as_(self, role: str) -> Iterator[psycopg.Connection]:
        with psycopg.connect(make_conninfo(self.dsn, user=role), autocommit=True) as c:
            yield c

    def roles(self) -> list[str]:
        return [self.owner, self.tables, self.reader, self.writer, self.stranger]

    def escalate_function(self, c: psycopg.Connection, schema: str, role: str, name: str = "escalate") -> str:
        """A function in ``schema`` that records who ran it (in table ran, which anyone may insert
        into) and tries to make ``role`` a superuser; returns its qualified name."""
        c.execute(sql.SQL(
            "CREATE TABLE IF NOT EXISTS {s}.ran (who text); GRANT INSERT ON {s}.ran TO PUBLIC; GRANT USAGE ON SCHEMA {s} TO PUBLIC;"
            "CREATE OR REPLACE FUNCTION {s}.{f}() RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN "
            "BEGIN INSERT INTO {s}.ran VALUES (current_user); EXCEPTION WHEN OTHERS THEN NULL; END; "
            "BEGIN EXECUTE pg_catalog.format('ALTER ROLE %I SUPERUSER', {role}); EXCEPTION WHEN OTHERS THEN NULL; END; "
            "RETURN true; END $$; GRANT EXECUTE ON FUNCTION {s}.{f}() TO PUBLIC").format(
            s=sql.Identifier(schema), f=sql.Identifier(name), role=sql.Literal(role)))
        return f"{schema}.{name}"

    def assert_nobody_escalated(self, when: str, ran_in: tuple[str, ...] = ()) -> None:
        """No role of the cast is a superuser, and the planted functions in ``ran_in`` ran as none."""
        supers = [r for (r,) in self.admin.execute(
            "SELECT rolname FROM pg_roles WHERE rolsuper AND rolname = ANY (%s)", [self.roles()]).fetchall()]
        assert supers == [], f"{supers} became superuser {when}"
        for schema in ran_in:
            ran = self.admin.execute(sql.SQL("SELECT r.who FROM {}.ran r JOIN pg_roles o ON o.rolname = r.who "
                                             "WHERE o.rolsuper").format(sql.Identifier(schema))).fetchall()
            assert ran == [], f"planted code ran as superuser {ran} {when}"


@pytest.fixture
def cast(dsn: str, conn: psycopg.Connection) -> Iterator[Cast]:
    names = {base: f"{base}_{uuid.uuid4().hex[:8]}" for base in ("owner", "tables", "reader", "writer", "stranger")}
    for role in names.values():
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
    created = Cast(dsn, conn, **names)
    o, t = sql.Identifier(created.owner), sql.Identifier(created.tables)
    result = command.init(target=conn)
    assert result.ddl_guards
    conn.execute(sql.SQL("CREATE SCHEMA shop AUTHORIZATION {t}; CREATE SCHEMA views; GRANT USAGE, CREATE ON SCHEMA views TO {o}; "
                         "CREATE SCHEMA evil AUTHORIZATION {o}; "
                         "GRANT USAGE ON SCHEMA views TO PUBLIC; GRANT CREATE ON SCHEMA public TO PUBLIC; "
                         "GRANT CREATE ON DATABASE {d} TO {s}, {t}").format(
        t=t, o=o, d=sql.Identifier(conn.info.dbname), s=sql.Identifier(created.stranger)))
    with created.as_(created.tables) as c:
        for table, (x, y) in COLUMNS.items():
            c.execute(sql.SQL("CREATE TABLE shop.{} ({} int, {} int)").format(sql.Identifier(table), sql.Identifier(x), sql.Identifier(y)))
            for row in ROWS[table]:
                c.execute(sql.SQL("INSERT INTO shop.{} VALUES (%s, %s)").format(sql.Identifier(table)), row)
        # what a view owner needs (README, Security model): read the tables, put triggers on them
        c.execute(sql.SQL("GRANT USAGE ON SCHEMA shop TO {o}, {w}; GRANT SELECT, TRIGGER ON ALL TABLES IN SCHEMA shop TO {o}; "
                          "GRANT INSERT, UPDATE, DELETE, TRUNCATE, SELECT ON shop.r TO {w}").format(
            o=o, w=sql.Identifier(created.writer)))
    yield created
    for role in created.roles():
        conn.execute(sql.SQL("REASSIGN OWNED BY {r} TO CURRENT_USER; DROP OWNED BY {r}; DROP ROLE {r}").format(
            r=sql.Identifier(role)))


def create_as_owner(cast: Cast, name: str = "v", query: str = TRIANGLE, **options: object) -> None:
    with cast.as_(cast.owner) as o:
        command.create(name, query, schema="views", target=o, **options)
        o.execute(sql.SQL("GRANT SELECT ON views.{} TO {}").format(sql.Identifier(name), sql.Identifier(cast.reader)))
        if options.get("refresh") == "deferred":
            o.execute(sql.SQL("GRANT SELECT ON views.{} TO {}").format(sql.Identifier(f"{name}_stale"), sql.Identifier(cast.reader)))


def create_with_public_first_and_as_owner(cast: Cast, query: str) -> None:
    """View ``v`` created by the superuser with a stranger's ``public`` first on its search_path,
    and view ``mine`` by the view owner."""
    cast.admin.execute("SET search_path = public, pg_catalog")
    try:
        command.create("v", query, schema="views", target=cast.admin)
    finally:
        cast.admin.execute("RESET search_path")
    create_as_owner(cast, "mine", query)


def without_ddl_guard(cast: Cast) -> None:
    """What a database where the guard is off looks like (a superuser disabled it): the commands'
    own checks must hold then too."""
    cast.admin.execute("ALTER EVENT TRIGGER pgivm_ddl_command_end DISABLE")


def recount(cast: Cast) -> int:
    return cast.admin.execute(TRIANGLE).fetchone()[0]  # type: ignore[index]


# --- 1 and 2: a view owner's code never runs as the superuser -------------------------------------


EVIL_REFRESH = """CREATE OR REPLACE FUNCTION pgivm_v.{f} RETURNS {returns} LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp AS $$ BEGIN PERFORM {escalate}(); RETURN {value}; END $$"""


def test_the_ddl_guard_refuses_a_state_function_that_would_run_as_its_caller(cast: Cast) -> None:
    create_as_owner(cast, refresh="deferred")
    with cast.as_(cast.owner) as o:
        escalate = cast.escalate_function(o, "evil", cast.owner)
        for f, returns, value in (("refresh()", "bigint", "0"), ("deferred_work()", "integer[]", "'{}'"),
                                  ("lag(OUT pending bigint, OUT lag_seconds float8)", "record", "NULL")):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="not SECURITY DEFINER"):
                o.execute(EVIL_REFRESH.format(f=f, returns=returns, escalate=escalate, value=value)
                          .replace("RETURN NULL", "RETURN"))
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="trigger .* was not made by pgivm"):
            o.execute(f"CREATE FUNCTION evil.t() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM {escalate}(); "
                      "RETURN NULL; END $$; CREATE TRIGGER t AFTER INSERT ON pgivm_v.table_1_log FOR EACH STATEMENT "
                      "EXECUTE FUNCTION evil.t()")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="uses function evil"):
            o.execute(f"CREATE OR REPLACE VIEW views.v AS SELECT * FROM pgivm_v.read() WHERE {escalate}()")
    cast.assert_nobody_escalated("after the owner tried to replace refresh()")


def test_a_replaced_refresh_runs_as_the_owner_or_not_at_all(cast: Cast) -> None:
    """pgivm_catalog.refresh(), `pgivm refresh` and `pgivm verify` run by the superuser on a view
    whose owner swapped refresh() for a function without SECURITY DEFINER (the DDL guard off)."""
    create_as_owner(cast, refresh="deferred", budget=1000)
    without_ddl_guard(cast)
    with cast.as_(cast.owner) as o:
        escalate = cast.escalate_function(o, "evil", cast.owner)
        o.execute(EVIL_REFRESH.format(f="refresh()", returns="bigint", escalate=escalate, value="0"))
    with cast.as_(cast.writer) as w:
        w.execute("INSERT INTO shop.r VALUES (9, 9)")
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="not SECURITY DEFINER"):
        cast.admin.execute("SELECT pgivm_catalog.refresh('v')")
    with pytest.raises(PgivmError, match="not safe for others to use: function pgivm_v.refresh"):
        command.refresh("v", target=cast.dsn)
    # REPEATABLE READ: with the guard off no other role's view is used in a snapshot older than the locks
    for run in (lambda: command.verify("v", target=cast.dsn), lambda: command.status("v", target=cast.dsn)):
        with pytest.raises(PgivmError, match="DDL guard is off: a REPEATABLE READ snapshot may be older"):
            run()
    cast.assert_nobody_escalated("after the superuser's refresh, verify and status", ran_in=("evil",))
    assert cast.admin.execute("SELECT count(*) FROM evil.ran").fetchone()[0] == 0  # type: ignore[index]


def test_a_replaced_definer_function_runs_with_the_owners_rights(cast: Cast) -> None:
    """The owner may replace its functions with SECURITY DEFINER ones: they then run as the owner
    (whose ALTER ROLE fails), whoever calls them."""
    create_as_owner(cast, refresh="deferred", budget=1000)
    with cast.as_(cast.owner) as o:
        escalate = cast.escalate_function(o, "evil", cast.owner)
        o.execute(EVIL_REFRESH.format(f="refresh()", returns="bigint", escalate=escalate, value="0")
                  .replace("LANGUAGE plpgsql", "LANGUAGE plpgsql SECURITY DEFINER"))
    command.refresh("v", target=cast.dsn)
    with cast.as_(cast.writer) as w:
        w.execute("INSERT INTO shop.r VALUES (9, 9)")  # pending: a read of the view refreshes
    cast.admin.execute("SELECT pgivm_catalog.refresh('v')")
    assert cast.admin.execute("SELECT who FROM evil.ran").fetchall() == [(cast.owner,), (cast.owner,)]
    cast.assert_nobody_escalated("after the superuser's refresh ran the owner's definer function", ran_in=("evil",))


def test_the_worker_runs_no_code_of_a_view_owner_with_its_own_rights(cast: Cast) -> None:
    create_as_owner(cast, refresh="deferred", budget=0)
    without_ddl_guard(cast)
    with cast.as_(cast.owner) as o:
        escalate = cast.escalate_function(o, "evil", cast.owner)
        o.execute(EVIL_REFRESH.format(f="deferred_work()", returns="integer[]", escalate=escalate, value="'{}'"))
    stop, reports = threading.Event(), []
    thread = threading.Thread(target=command.worker, kwargs={
        "target": cast.dsn, "poll": 0.05, "stop": stop, "report": reports.append}, daemon=True)
    thread.start()
    try:
        with cast.as_(cast.writer) as w:
            for i in range(5):
                w.execute("INSERT INTO shop.r VALUES (%s, %s)", [i, i + 1])
        deadline = threading.Event()
        deadline.wait(1.0)
    finally:
        stop.set()
        thread.join(30)
    assert any("v: skipped" in r and "not SECURITY DEFINER" in r for r in reports), reports
    cast.assert_nobody_escalated("after the worker served the view", ran_in=("evil",))
    assert cast.admin.execute("SELECT count(*) FROM evil.ran").fetchone()[0] == 0  # type: ignore[index]


def test_a_tuple_type_the_owner_swapped_is_refused_before_a_superuser_casts_to_it(cast: Cast) -> None:
    """A count over tuples keeps each tuple as a composite type of its state (pack_a, ...), which the
    SQL of a superuser's verify casts base rows to, by name. An owner who renames it and makes
    another under that name, whose field is a domain checked by the owner's function, would have
    that function run as the superuser at the cast: verify refuses the state before it reads any of
    it (state_problems: a type of the state uses a type outside it)."""
    query = ("SELECT count(*) FROM views.p e1 JOIN views.p e2 ON e1.y = e2.x AND e1.g = e2.g "
             "JOIN views.p e3 ON e2.y = e3.x AND e3.y = e1.x AND e3.g = e1.g")
    with cast.as_(cast.owner) as o:
        o.execute("CREATE TABLE views.p (x int, y int, g int); INSERT INTO views.p VALUES (1, 2, 0), (2, 3, 0), (3, 1, 0)")
    create_as_owner(cast, "v", query)
    assert cast.admin.execute("SELECT * FROM views.v").fetchone()[0] == 3  # type: ignore[index]
    assert command.verify("v", target=cast.admin).ok
    without_ddl_guard(cast)
    with cast.as_(cast.owner) as o:
        escalate = cast.escalate_function(o, "evil", cast.owner)
        o.execute(f"CREATE DOMAIN evil.d AS int CHECK ({escalate}()); ALTER TYPE pgivm_v.pack_a RENAME TO pack_a_kept; "
                  "CREATE TYPE pgivm_v.pack_a AS (f1 evil.d, f2 int)")
    cast.admin.execute("ALTER EVENT TRIGGER pgivm_ddl_command_end ENABLE")  # (verify reads in a snapshot it trusts)
    with pytest.raises(PgivmError, match=r"pgivm_v\.pack_a uses type evil\.d, which is neither part of the view's state"):
        command.verify("v", target=cast.admin)
    cast.assert_nobody_escalated("after a superuser's verify", ran_in=("evil",))
    assert cast.admin.execute("SELECT count(*) FROM evil.ran").fetchone()[0] == 0  # type: ignore[index]


# --- 3: names reach generated code only quoted ------------------------------------------------------


@pytest.mark.parametrize("system", ["ivme", "first-order", "fivm"])
def test_a_renamed_table_cannot_inject_into_upgrade(cast: Cast, system: str) -> None:
    query = GROUPED if system == "fivm" else TRIANGLE
    create_as_owner(cast, "v", query, refresh="deferred", system=system)
    with cast.as_(cast.tables) as t:
        escalate = cast.escalate_function(t, "shop", cast.tables)
        hostile = f"x\r$pgivm$; SELECT {escalate}(); $pgivm$ */ -- \n"
        t.execute(sql.SQL("ALTER TABLE shop.r RENAME TO {}").format(sql.Identifier(hostile + "r")))
        t.execute(sql.SQL("ALTER SCHEMA shop RENAME TO {}").format(sql.Identifier(hostile + "shop")))
    assert command.upgrade("v", force=True, target=cast.dsn).upgraded
    assert command.verify("v", target=cast.dsn).ok
    sources = cast.admin.execute("SELECT p.prosrc FROM pg_proc p WHERE p.pronamespace = 'pgivm_v'::regnamespace").fetchall()
    assert not any("$pgivm$; SELECT" in src for (src,) in sources)
    cast.assert_nobody_escalated("after upgrade --force by the superuser", ran_in=(hostile + "shop",))
    assert query  # both shapes were created


# --- 4: the worker's and the commands' own SQL ------------------------------------------------------


def test_operators_and_functions_a_stranger_planted_in_public_are_never_used(cast: Cast) -> None:
    with cast.as_(cast.stranger) as s:
        escalate = cast.escalate_function(s, "public", cast.stranger)
        for left, right in (("oid", "integer"), ("text", "text"), ("name", "text"), ("integer", "integer"),
                            ("bigint", "bigint"), ("jsonb", "text"), ("oid", "regclass"), ('"char"', "text")):
            fn = f"public.eq_{left}_{right}".replace(" ", "_").replace('"', "")
            s.execute(f"CREATE FUNCTION {fn}({left}, {right}) RETURNS boolean LANGUAGE sql AS "
                      f"'SELECT {escalate}()'")
            s.execute(f"CREATE OPERATOR public.= (LEFTARG = {left}, RIGHTARG = {right}, FUNCTION = {fn})")
        s.execute(f"CREATE FUNCTION public.to_regclass(text) RETURNS regclass LANGUAGE sql AS "
                  f"'SELECT NULL::regclass WHERE {escalate}()'")
        s.execute(f"CREATE FUNCTION public.now() RETURNS timestamptz LANGUAGE sql AS "
                  f"'SELECT pg_catalog.now() WHERE {escalate}()'")
    create_as_owner(cast, refresh="deferred", budget=0)
    command.create("w", TRIANGLE, schema="views", target=cast.dsn)
    with cast.as_(cast.writer) as w:
        w.execute("INSERT INTO shop.r VALUES (3, 2)")
    stop = threading.Event()
    thread = threading.Thread(target=command.worker, kwargs={"target": cast.dsn, "poll": 0.05, "stop": stop}, daemon=True)
    thread.start()
    try:
        with cast.as_(cast.writer) as w:
            w.execute("INSERT INTO shop.r VALUES (5, 1)")
        threading.Event().wait(0.5)
    finally:
        stop.set()
        thread.join(30)
    for name in ("v", "w"):
        assert command.verify(name, target=cast.dsn).ok
        command.status(name, target=cast.dsn)
    command.refresh("v", target=cast.dsn)
    command.list_views(target=cast.dsn)
    command.upgrade("w", force=True, target=cast.dsn)
    command.drop("w", target=cast.dsn)
    cast.assert_nobody_escalated("after the superuser's commands and the worker", ran_in=("public",))
    assert cast.admin.execute("SELECT count(*) FROM public.ran").fetchone()[0] == 0  # type: ignore[index]


# --- 5: the catalog's schema --------------------------------------------------------------------------


@pytest.mark.empty_database
def test_init_refuses_a_catalog_schema_someone_else_made(dsn: str, conn: psycopg.Connection) -> None:
    stranger = f"stranger_{uuid.uuid4().hex[:8]}"
    conn.execute(sql.SQL("CREATE ROLE {} LOGIN; GRANT CREATE ON DATABASE {} TO {}").format(
        sql.Identifier(stranger), sql.Identifier(conn.info.dbname), sql.Identifier(stranger)))
    try:
        with psycopg.connect(make_conninfo(dsn, user=stranger), autocommit=True) as s:
            s.execute("CREATE SCHEMA pgivm_catalog; CREATE TABLE pgivm_catalog.schema_migrations (version int, name text, "
                      "applied_at timestamptz); INSERT INTO pgivm_catalog.schema_migrations VALUES (99, 'x', now())")
        with pytest.raises(PgivmError, match="pgivm_catalog.*(not made by|belongs to role)") as refused:
            command.init(target=conn)
        assert "\n" not in str(refused.value)
        assert not conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = %s", [stranger]).fetchone()[0]  # type: ignore[index]
    finally:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS pgivm_catalog CASCADE; REVOKE ALL ON DATABASE {} FROM {}; DROP ROLE {}").format(
            sql.Identifier(conn.info.dbname), sql.Identifier(stranger), sql.Identifier(stranger)))


@pytest.mark.empty_database
@pytest.mark.parametrize("caller", ["superuser", "another role"])
def test_a_command_reads_nothing_of_a_catalog_a_stranger_made(dsn: str, conn: psycopg.Connection, caller: str) -> None:
    """A stranger's pgivm_catalog (made before `pgivm init`) whose schema_migrations is a view calling
    the stranger's function: a command refuses the catalog before it reads anything in it. As a
    superuser it once read the version first, running that function as the superuser; any other
    role trusted such a catalog outright and ran its functions with its own rights."""
    suffix = uuid.uuid4().hex[:8]
    stranger, other = f"stranger_{suffix}", f"other_{suffix}"
    conn.execute(sql.SQL("CREATE ROLE {s} LOGIN; CREATE ROLE {o} LOGIN; GRANT CREATE ON DATABASE {d} TO {s}").format(
        s=sql.Identifier(stranger), o=sql.Identifier(other), d=sql.Identifier(conn.info.dbname)))
    try:
        with psycopg.connect(make_conninfo(dsn, user=stranger), autocommit=True) as s:
            s.execute(sql.SQL("""
                CREATE SCHEMA spy; CREATE TABLE spy.ran (who text); GRANT USAGE ON SCHEMA spy TO PUBLIC;
                GRANT INSERT ON spy.ran TO PUBLIC;
                CREATE SCHEMA pgivm_catalog; GRANT USAGE ON SCHEMA pgivm_catalog TO PUBLIC;
                CREATE FUNCTION pgivm_catalog.version_of_mine() RETURNS int LANGUAGE plpgsql AS $$
                BEGIN
                    INSERT INTO spy.ran VALUES (current_user);
                    EXECUTE 'ALTER ROLE ' || {} || ' SUPERUSER';  -- works only when a superuser runs it
                    RETURN 99;
                EXCEPTION WHEN insufficient_privilege THEN RETURN 99;
                END $$;
                CREATE VIEW pgivm_catalog.schema_migrations AS SELECT pgivm_catalog.version_of_mine() AS version;
                GRANT SELECT ON pgivm_catalog.schema_migrations TO PUBLIC""").format(
                sql.Literal(sql.Identifier(stranger).as_string(s))))
        target = dsn if caller == "superuser" else make_conninfo(dsn, user=other)
        for attempt in (lambda: command.list_views(target=target), lambda: command.init(target=target)):
            with pytest.raises(PgivmError, match="pgivm_catalog.*(not made by|belongs to role)") as refused:
                attempt()
            assert "\n" not in str(refused.value)
        assert not conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = %s", [stranger]).fetchone()[0]  # type: ignore[index]
        assert conn.execute("SELECT who FROM spy.ran").fetchall() == []
    finally:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS pgivm_catalog, spy CASCADE; REVOKE ALL ON DATABASE {} FROM {}; "
                             "DROP ROLE {}; DROP ROLE {}").format(
            sql.Identifier(conn.info.dbname), sql.Identifier(stranger), sql.Identifier(stranger), sql.Identifier(other)))


@pytest.mark.empty_database
def test_the_worker_checks_the_catalog_again_before_each_read(dsn: str, conn: psycopg.Connection) -> None:
    """The superuser's worker runs on while an administrator drops the catalog (as a refusal's hint
    says to) and a stranger makes one whose tables are views calling the stranger's code: the
    worker refuses it in one line, having run none of it. It once checked the catalog at start only
    and then read pgivm_catalog.views on every pass, and called unregister_worker() on its way out."""
    command.init(target=conn)
    stranger = f"stranger_{uuid.uuid4().hex[:8]}"
    conn.execute(sql.SQL("CREATE ROLE {s} LOGIN; GRANT CREATE ON DATABASE {d} TO {s}").format(
        s=sql.Identifier(stranger), d=sql.Identifier(conn.info.dbname)))
    stop, ended = threading.Event(), {}

    def run() -> None:
        try:
            ended["summary"] = command.worker(target=dsn, poll=0.05, stop=stop)
        except BaseException as err:  # noqa: BLE001  # checked below
            ended["error"] = err

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 120  # registered, serving (slow to start on a busy machine)
        while not conn.execute("SELECT count(*) FROM pgivm_catalog.worker").fetchone()[0]:  # type: ignore[index]
            assert time.monotonic() < deadline and thread.is_alive(), f"the worker never registered: {ended}"
            threading.Event().wait(0.05)
        conn.execute("DROP SCHEMA pgivm_catalog CASCADE")
        with psycopg.connect(make_conninfo(dsn, user=stranger), autocommit=True) as s:
            s.execute("CREATE SCHEMA spy; CREATE TABLE spy.ran (who text); GRANT USAGE ON SCHEMA spy TO PUBLIC; "
                      "GRANT INSERT ON spy.ran TO PUBLIC")
            s.execute(sql.SQL("""
                CREATE SCHEMA pgivm_catalog; GRANT USAGE ON SCHEMA pgivm_catalog TO PUBLIC;
                CREATE TABLE pgivm_catalog.schema_migrations (version int, name text, applied_at timestamptz);
                INSERT INTO pgivm_catalog.schema_migrations VALUES (99, 'mine', now());
                CREATE FUNCTION pgivm_catalog.spy() RETURNS boolean LANGUAGE plpgsql AS $$
                BEGIN
                    INSERT INTO spy.ran VALUES (current_user);
                    BEGIN EXECUTE 'ALTER ROLE ' || {} || ' SUPERUSER'; EXCEPTION WHEN insufficient_privilege THEN NULL; END;
                    RETURN true;
                END $$;
                CREATE VIEW pgivm_catalog.views AS SELECT 'v'::text AS name, '{{"refresh": "deferred"}}'::jsonb AS params
                 WHERE pgivm_catalog.spy();
                CREATE FUNCTION pgivm_catalog.unregister_worker() RETURNS boolean LANGUAGE sql AS 'SELECT pgivm_catalog.spy()';
                GRANT SELECT ON ALL TABLES IN SCHEMA pgivm_catalog TO PUBLIC""").format(
                sql.Literal(sql.Identifier(stranger).as_string(s))))
        thread.join(30)
        assert not thread.is_alive(), "the worker went on serving a catalog it must not trust"
    finally:
        stop.set()
        thread.join(30)
        try:
            assert isinstance(ended.get("error"), PgivmError), ended
            assert "belongs to role" in str(ended["error"]) and "\n" not in str(ended["error"])
            assert conn.execute("SELECT who FROM spy.ran").fetchall() == []
            assert not conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = %s", [stranger]).fetchone()[0]  # type: ignore[index]
        finally:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS pgivm_catalog, spy CASCADE; REVOKE ALL ON DATABASE {d} FROM {s}; "
                                 "DROP ROLE {s}").format(s=sql.Identifier(stranger), d=sql.Identifier(conn.info.dbname)))


@pytest.mark.parametrize("guard", ["on", "off"])
def test_a_view_owner_cannot_take_its_view_out_of_the_checks(cast: Cast, guard: str) -> None:
    """set_params took any subset of a view's objects: with '[]' its owner's view was no longer
    checked (state_problems, pin_state and the DDL guard look at the listed views), so the owner
    could redefine it to call its own function, which a superuser's verify ran as the superuser.
    Now the list must name the view and its state schema; with the guard off too."""
    create_as_owner(cast)
    if guard == "off":
        without_ddl_guard(cast)
    with cast.as_(cast.owner) as o:
        params = o.execute("SELECT params::text FROM pgivm_catalog.views WHERE name = 'v'").fetchone()[0]  # type: ignore[index]
        for objects in ('[]', '[{"kind": "schema", "name": "pgivm_v"}]', '[{"kind": "view", "schema": "views", "name": "v"}]'):
            with pytest.raises(psycopg.errors.InvalidParameterValue, match="must list its own view and its state schema"):
                o.execute("SELECT pgivm_catalog.set_params('v', %s::jsonb, %s::jsonb)", [params, objects])
        escalate = cast.escalate_function(o, "views", cast.owner)
        try:  # the guard refuses this; without it, the checks below must
            o.execute(f"CREATE OR REPLACE VIEW views.v AS SELECT count(*) AS count FROM (VALUES (1)) AS x(n) WHERE {escalate}()")
        except psycopg.Error:
            assert guard == "on"
        else:
            assert guard == "off"
    try:
        command.verify("v", target=cast.dsn)
    except PgivmError as refused:
        assert guard == "off" and "\n" not in str(refused), refused
    assert cast.admin.execute("SELECT count(*) FROM views.ran").fetchone()[0] == 0  # type: ignore[index]
    cast.assert_nobody_escalated("after verify by the superuser", ran_in=("views",))


def test_a_schema_named_pgivm_is_left_to_whoever_made_it(conn: psycopg.Connection) -> None:
    """pg_ivm installs itself into schema pgivm: pgivm's catalog lives beside it, in either order."""
    conn.execute("CREATE SCHEMA pgivm; CREATE TABLE pgivm.pg_ivm_immv (immvrelid regclass PRIMARY KEY)")
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, a int)")
    command.create("tri", "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a", target=conn)
    assert conn.execute("SELECT count(*) FROM pg_class WHERE relnamespace = 'pgivm'::regnamespace").fetchone()[0] == 2  # type: ignore[index]
    conn.execute("DROP SCHEMA pgivm CASCADE")  # what DROP EXTENSION pg_ivm does
    assert command.verify("tri", target=conn).ok


# --- 6: reading a deferred view needs SELECT on it ------------------------------------------------


def test_a_deferred_view_is_read_only_by_roles_that_may_select_it(cast: Cast) -> None:
    create_as_owner(cast, "listing", "SELECT r.a, r.b, s.c FROM shop.r JOIN shop.s ON r.b = s.b", refresh="deferred",
                    system="fivm", budget=1000)
    with cast.as_(cast.writer) as w:
        w.execute("INSERT INTO shop.r VALUES (7, 3)")
    with cast.as_(cast.stranger) as s:
        for attempt in ("SELECT * FROM views.listing", "SELECT * FROM views.listing_stale",
                        "SELECT * FROM pgivm_listing.read()", "SELECT * FROM pgivm_listing.lag()",
                        "SELECT pgivm_listing.refresh()", "SELECT * FROM pgivm_listing.refreshed",
                        "SELECT pgivm_catalog.refresh('listing')"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                s.execute(attempt)  # type: ignore[arg-type]
    with cast.as_(cast.reader) as r:
        assert r.execute("SELECT pgivm_catalog.refresh('listing')").fetchone()[0] > 0  # type: ignore[index]
        rows = sorted(r.execute("SELECT * FROM views.listing").fetchall())
        assert rows == sorted(cast.admin.execute("SELECT r.a, r.b, s.c FROM shop.r JOIN shop.s ON r.b = s.b").fetchall())
        assert r.execute("SELECT count(*) FROM views.listing_stale").fetchone()[0] == len(rows)  # type: ignore[index]
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            r.execute("SELECT * FROM pgivm_listing.read()")
    cast.assert_nobody_escalated("after the reads")


# --- 7: every object of a view is its owner's ---------------------------------------------------------


def test_upgrade_by_a_superuser_refuses_a_state_that_reads_a_function_it_would_replace(cast: Cast) -> None:
    """upgrade repairs a state's functions, so it overlooked their problems; but it reads the state
    (its parameters) first. Without the DDL guard the owner makes the state table a view calling
    a function of the state that is not SECURITY DEFINER: the superuser's upgrade refuses it in
    one line (it went on, read the state, and so ran that function as the superuser)."""
    create_as_owner(cast)
    without_ddl_guard(cast)
    with cast.as_(cast.owner) as o:
        escalate = cast.escalate_function(o, "views", cast.owner)
        o.execute(f"CREATE FUNCTION pgivm_v.evil() RETURNS boolean LANGUAGE sql AS 'SELECT {escalate}()'; "
                  "ALTER TABLE pgivm_v.state RENAME TO state_kept; "
                  "CREATE VIEW pgivm_v.state AS SELECT s.* FROM pgivm_v.state_kept s WHERE pgivm_v.evil()")
    with pytest.raises(PgivmError, match="not safe for others to use") as refused:
        command.upgrade("v", force=True, target=cast.dsn)
    assert "\n" not in str(refused.value)
    assert cast.admin.execute("SELECT count(*) FROM views.ran").fetchone()[0] == 0  # type: ignore[index]
    cast.assert_nobody_escalated("after the superuser's upgrade", ran_in=("views",))


def test_upgrade_by_a_superuser_leaves_every_object_the_owners(cast: Cast) -> None:
    create_as_owner(cast, refresh="deferred", budget=1000)
    assert command.upgrade("v", force=True, target=cast.dsn).upgraded
    owners = cast.admin.execute(
        "SELECT DISTINCT pg_get_userbyid(owner) FROM ("
        " SELECT proowner AS owner FROM pg_proc WHERE pronamespace = 'pgivm_v'::regnamespace"
        " UNION ALL SELECT relowner FROM pg_class WHERE relnamespace = 'pgivm_v'::regnamespace"
        " UNION ALL SELECT relowner FROM pg_class WHERE oid IN ('views.v'::regclass, 'views.v_stale'::regclass)"
        " UNION ALL SELECT nspowner FROM pg_namespace WHERE nspname = 'pgivm_v') o").fetchall()
    assert owners == [(cast.owner,)]
    # the owner's own trigger on a log table: refused by the guard; without it, reported and refused
    with cast.as_(cast.owner) as o:
        escalate = cast.escalate_function(o, "evil", cast.owner)
        trigger = (f"CREATE FUNCTION evil.t() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM {escalate}(); "
                   "RETURN NULL; END $$; CREATE TRIGGER t AFTER INSERT ON pgivm_v.table_1_log FOR EACH STATEMENT "
                   "EXECUTE FUNCTION evil.t()")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="not made by pgivm"):
            o.execute(trigger)  # type: ignore[arg-type]
        without_ddl_guard(cast)
        o.execute(trigger)  # type: ignore[arg-type]
    with cast.as_(cast.writer) as w:
        w.execute("INSERT INTO shop.r VALUES (8, 8)")  # the trigger runs, as the owner
    with cast.as_(cast.owner) as o:
        report = command.verify("v", target=o)  # the owner sees what is wrong
    assert not report.ok and any("trigger t on pgivm_v.table_1_log was not made by pgivm" in str(f) for f in report.failures)
    with pytest.raises(PgivmError, match="trigger t on pgivm_v.table_1_log was not made by pgivm"):
        command.refresh("v", target=cast.dsn)
    assert {who for (who,) in cast.admin.execute("SELECT who FROM evil.ran").fetchall()} == {cast.owner}
    cast.assert_nobody_escalated("after the writer fired the owner's trigger", ran_in=("evil",))


# --- a walk over everything pgivm generated -------------------------------------------------------------


CASES = [("ivme", TRIANGLE, {}), ("first-order", GROUPED, {}), ("fivm", GROUPED, {}),
         ("sample", "SELECT r.a, s.c FROM shop.r JOIN shop.s ON r.b = s.b", {"size": 3}), ("recompute", TRIANGLE, {}),
         ("ivme", TRIANGLE, {"partitions": "refined"}), ("ivme", FOUR_PATH, {}), ("ivme", THREE_PATH, {})]


def test_every_generated_function_is_safe_for_any_role_to_reach(cast: Cast) -> None:
    """Fixed search_path; SECURITY DEFINER and the view owner's (so whoever calls it runs it with
    the owner's rights, never the reverse); EXECUTE for PUBLIC only where PUBLIC cannot name the
    function (no USAGE on its schema) and a view that PostgreSQL checks SELECT on calls it."""
    for i, (system, query, options) in enumerate(CASES):
        create_as_owner(cast, f"v{i}", query, system=system, **options)
        if system != "recompute":
            create_as_owner(cast, f"d{i}", query, system=system, refresh="deferred", **options)
    functions = cast.admin.execute("""
        SELECT p.oid::regprocedure::text, pg_get_userbyid(p.proowner), p.prosecdef,
               coalesce('search_path=pg_catalog, pg_temp' = ANY (p.proconfig), false),
               has_function_privilege('public', p.oid, 'EXECUTE') AND EXISTS (
                   SELECT FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a WHERE a.grantee = 0),
               has_schema_privilege('public', n.oid, 'USAGE'),
               EXISTS (SELECT FROM pg_depend d JOIN pg_rewrite w ON w.oid = d.objid
                        JOIN pg_class c ON c.oid = w.ev_class JOIN pg_namespace cn ON cn.oid = c.relnamespace
                       WHERE d.classid = 'pg_rewrite'::regclass AND d.refobjid = p.oid AND cn.nspname = 'views')
          FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname LIKE 'pgivm\\_%' AND n.nspname <> 'pgivm_catalog'""").fetchall()
    assert len(functions) > 100
    for name, owner, definer, fixed, public, usage, in_a_view in functions:
        assert fixed, f"{name} has no fixed search_path"
        assert definer and owner == cast.owner, f"{name}: SECURITY DEFINER {definer}, owned by {owner}"
        if public:
            assert not usage and in_a_view, f"{name} is executable by PUBLIC, which can reach it (USAGE {usage})"
    catalog = cast.admin.execute("""
        SELECT p.proname, p.prosecdef, pg_get_userbyid(p.proowner), r.rolsuper,
               coalesce('search_path=pg_catalog, pg_temp' = ANY (p.proconfig), false),
               EXISTS (SELECT FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
                        WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE')
          FROM pg_proc p JOIN pg_roles r ON r.oid = p.proowner
         WHERE p.pronamespace = 'pgivm_catalog'::regnamespace""").fetchall()
    for name, definer, owner, superuser, fixed, public in catalog:
        assert superuser, f"pgivm_catalog.{name} belongs to {owner}, not a superuser"
        assert fixed or name == "refresh", f"pgivm_catalog.{name} has no fixed search_path"
        if name in ("pin_state", "register_worker", "recompute_covers", "table_components"):
            assert not public, f"pgivm_catalog.{name} must not be executable by PUBLIC"
    tables = cast.admin.execute(
        "SELECT c.oid::regclass::text FROM pg_class c WHERE c.relnamespace = 'pgivm_catalog'::regnamespace AND c.relkind = 'r' "
        "AND (has_table_privilege('public', c.oid, 'INSERT') OR has_table_privilege('public', c.oid, 'UPDATE') "
        "OR has_table_privilege('public', c.oid, 'DELETE'))").fetchall()
    assert tables == [], f"catalog tables writable by PUBLIC: {tables}"
    for i in range(len(CASES)):
        assert cast.admin.execute(f"SELECT count(*) FROM pgivm_catalog.state_problems('v{i}')").fetchone()[0] == 0  # type: ignore[index]


# --- 8 and 9: base tables read by name are read by oid, without their owner's policies ----------------


def test_calibrate_reads_the_pinned_tables_not_what_their_names_lead_to_now(cast: Cast) -> None:
    create_as_owner(cast, refresh="deferred", budget=1000)
    with cast.as_(cast.tables) as t:
        t.execute("ALTER SCHEMA shop RENAME TO shop_real; CREATE SCHEMA shop")
        escalate = cast.escalate_function(t, "shop_real", cast.tables)
        for table, (x, y) in COLUMNS.items():  # views under the old names, calling escalate() per row read
            t.execute(f"CREATE VIEW shop.{table} AS SELECT {x}, {y} FROM shop_real.{table} WHERE {escalate}()")
        t.execute("GRANT USAGE ON SCHEMA shop TO PUBLIC; GRANT SELECT ON ALL TABLES IN SCHEMA shop TO PUBLIC")
    with cast.as_(cast.owner) as o:
        fits = command.calibrate("v", ladder=(1, 2), repeats=1, target=o)
    assert fits and all(fit.points for fit in fits)
    command.calibrate("v", ladder=(1, 2), repeats=1, target=cast.dsn)
    ran = cast.admin.execute("SELECT count(*) FROM shop_real.ran").fetchone()[0]  # type: ignore[index]
    assert ran == 0, f"the table owner's function ran {ran} times during calibrate"
    cast.assert_nobody_escalated("after calibrate by the owner and the superuser", ran_in=("shop_real",))


@pytest.mark.empty_database
def test_a_policy_on_a_base_table_is_an_error_not_code_run_as_the_view_owner(dsn: str, conn: psycopg.Connection) -> None:
    """Without the DDL guard (init by a role that is not a superuser), the base tables' owner may
    enable row-level security: first-order's delta queries read the base tables with row_security
    off, so the policy is an error, never code run with the view owner's rights."""
    names = {base: f"{base}_{uuid.uuid4().hex[:8]}" for base in ("admin", "tables", "writer")}
    for role in names.values():
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
    admin, tables, writer = (sql.Identifier(names[k]) for k in ("admin", "tables", "writer"))
    conn.execute(sql.SQL("GRANT CREATE ON DATABASE {d} TO {a}, {t}; CREATE SCHEMA shop AUTHORIZATION {t}; "
                         "GRANT CREATE, USAGE ON SCHEMA public TO {a}").format(
        d=sql.Identifier(conn.info.dbname), a=admin, t=tables))
    try:
        with psycopg.connect(make_conninfo(dsn, user=names["tables"]), autocommit=True) as t:
            for table, (x, y) in COLUMNS.items():
                t.execute(f"CREATE TABLE shop.{table} ({x} int, {y} int)")
                t.execute(f"INSERT INTO shop.{table} SELECT i % 5, (i * 2) % 5 FROM generate_series(1, 20) i")
            t.execute(sql.SQL("GRANT USAGE ON SCHEMA shop TO {a}, {w}; GRANT SELECT, TRIGGER ON ALL TABLES IN SCHEMA shop TO {a}; "
                              "GRANT INSERT, SELECT ON shop.s TO {w}").format(a=admin, w=writer))
        with psycopg.connect(make_conninfo(dsn, user=names["admin"]), autocommit=True) as a:
            assert not command.init(target=a).ddl_guards
            command.create("v", "SELECT s.b, count(*) AS n FROM shop.r JOIN shop.s ON r.b = s.b GROUP BY s.b",
                           system="first-order", refresh="deferred", budget=1000, target=a)
            a.execute("CREATE TABLE public.secret (who text)")
        with psycopg.connect(make_conninfo(dsn, user=names["tables"]), autocommit=True) as t:
            t.execute(sql.SQL(
                "CREATE TABLE shop.ran (who text); GRANT INSERT ON shop.ran TO PUBLIC; "
                "CREATE FUNCTION shop.spy() RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN "
                "INSERT INTO shop.ran VALUES (current_user); "
                "BEGIN INSERT INTO public.secret VALUES ('written by ' || current_user); EXCEPTION WHEN OTHERS THEN NULL; END; "
                "RETURN true; END $$; GRANT EXECUTE ON FUNCTION shop.spy() TO PUBLIC; "
                "ALTER TABLE shop.r ENABLE ROW LEVEL SECURITY; CREATE POLICY spy ON shop.r USING (shop.spy())"))
        with psycopg.connect(make_conninfo(dsn, user=names["writer"]), autocommit=True) as w:
            w.execute("INSERT INTO shop.s VALUES (1, 2), (2, 3)")
        with psycopg.connect(make_conninfo(dsn, user=names["admin"]), autocommit=True) as a:
            with pytest.raises((psycopg.errors.InsufficientPrivilege, PgivmError), match="row-level security"):
                a.execute("SELECT pgivm_catalog.refresh('v')")
            assert a.execute("SELECT count(*) FROM public.secret").fetchone()[0] == 0  # type: ignore[index]
        ran = conn.execute("SELECT who FROM shop.ran").fetchall()
        assert (names["admin"],) not in ran, f"the policy ran as the view owner: {ran}"
    finally:
        for role in names.values():
            conn.execute(sql.SQL("REASSIGN OWNED BY {r} TO CURRENT_USER; DROP OWNED BY {r}; DROP ROLE {r}").format(
                r=sql.Identifier(role)))


# --- 15, after a drop: the writers' lock is the catalog's, no view's to remove -------------------------


@pytest.mark.parametrize("dropper", ["owner", "superuser"])
def test_dropping_one_view_leaves_the_writers_lock_of_the_others(cast: Cast, dropper: str) -> None:
    """drop replaced its trigger functions by no-ops, lock_writes among them (the catalog's, shared by
    every immediate view): as a superuser it switched the writers' lock off for every other view
    (their writers deadlocked again); as the view owner it failed (permission denied)."""
    create_as_owner(cast, "v")
    create_as_owner(cast, "gone", GROUPED, system="fivm")
    if dropper == "owner":  # removing triggers from shop's tables takes their owner: maintenance stops, then this
        with cast.as_(cast.owner) as o, pytest.raises(PgivmError, match="no longer maintained.*as the tables' owner"):
            command.drop("gone", target=o)
    else:
        command.drop("gone", target=cast.admin)
    with cast.as_(cast.writer) as w:
        w.execute("BEGIN")
        w.execute("INSERT INTO shop.r VALUES (9, 9)")
        free = cast.admin.execute(  # rows of write_locks nobody holds: the writer must hold r's, s's and t's
            "SELECT count(*) FROM (SELECT FROM pgivm_catalog.write_locks l WHERE l.table_oid IN "
            "('shop.r'::regclass, 'shop.s'::regclass, 'shop.t'::regclass) FOR NO KEY UPDATE SKIP LOCKED) AS x").fetchone()
        w.execute("ROLLBACK")
    assert free == (0,)
    assert command.verify("v", target=cast.admin).ok
    cast.assert_nobody_escalated("after a drop")


@pytest.mark.parametrize("system", ["ivme", "fivm", "first-order"])
def test_a_table_owner_creates_views_over_its_own_tables_once_init_ran(cast: Cast, system: str) -> None:
    """Issue 22, item 3: a superuser ran init; a role with no grant of pgivm's creates, reads,
    verifies and drops a view over the tables it owns, in its own schema."""
    query = TRIANGLE if system != "fivm" else "SELECT count(*) AS n FROM shop.r JOIN shop.s ON r.b = s.b"
    with cast.as_(cast.tables) as t:
        command.create("mine", query, system=system, schema="shop", target=t)
        t.execute("INSERT INTO shop.r VALUES (1, 2), (2, 3)")
        assert t.execute("SELECT * FROM shop.mine").fetchone() == t.execute(query).fetchone()
        assert command.verify("mine", target=t).ok
        command.drop("mine", target=t)
    cast.assert_nobody_escalated("after a table owner's own view")


def test_constant_rows_come_from_pg_catalog_whatever_the_search_path(cast: Cast) -> None:
    """generate_series and VALUES in FROM are kept as tables of constant rows (issue 22), filled at
    create: a stranger's public.generate_series, first on the superuser's search_path, never runs;
    the view owner's own view holds the same rows; another view's state is no base table."""
    with cast.as_(cast.stranger) as s:
        escalate = cast.escalate_function(s, "public", cast.stranger)
        s.execute("CREATE FUNCTION public.generate_series(integer, integer) RETURNS SETOF integer LANGUAGE sql AS "
                  f"'SELECT 7 WHERE {escalate}()'")
        s.execute("GRANT EXECUTE ON FUNCTION public.generate_series(integer, integer) TO PUBLIC")
    query = "SELECT r.a, g.x FROM shop.r JOIN generate_series(1, 3) AS g(x) ON r.a = g.x"
    create_with_public_first_and_as_owner(cast, query)
    with cast.as_(cast.writer) as w:
        w.execute("INSERT INTO shop.r VALUES (2, 9), (3, 9), (7, 9)")
    expected = sorted(cast.admin.execute(query).fetchall())
    assert (7, 7) not in expected and (2, 2) in expected
    for name in ("v", "mine"):
        assert sorted(cast.admin.execute(f"SELECT * FROM views.{name}").fetchall()) == expected
        assert command.verify(name, target=cast.dsn).ok
    with cast.as_(cast.owner) as o, pytest.raises(PgivmError, match="is a table of pgivm's state, not a base table"):
        command.create("theirs", "SELECT x FROM pgivm_v.static_1", schema="views", target=o)
    cast.assert_nobody_escalated("after views over generate_series", ran_in=("public",))
    assert cast.admin.execute("SELECT count(*) FROM public.ran").fetchone()[0] == 0  # type: ignore[index]


def test_a_superuser_verifies_and_upgrades_a_view_whose_owner_only_reads_the_tables(cast: Cast) -> None:
    """The view owner has SELECT and TRIGGER on the base tables, no more (the README's rule).
    pin_state locked the state's views with LOCK TABLE, which locks the tables a view reads too,
    with its owner's rights: a superuser's verify of a first-order view (base_N views) failed with
    "permission denied for table r". Views are held by their catalog rows now."""
    create_as_owner(cast, "g", GROUPED, system="first-order")
    with cast.as_(cast.writer) as w:
        w.execute("INSERT INTO shop.r VALUES (1, 3), (2, 2)")
    assert command.verify("g", target=cast.dsn).ok
    assert command.upgrade("g", force=True, target=cast.dsn).upgraded
    assert sorted(cast.admin.execute("SELECT * FROM views.g").fetchall()) == sorted(cast.admin.execute(GROUPED).fetchall())
    cast.assert_nobody_escalated("after a superuser's verify and upgrade")


def test_a_derived_table_runs_only_pg_catalogs_functions_as_its_owner(cast: Cast) -> None:
    """A subquery that aggregates is recounted at every write, inside the view owner's trigger
    functions (issue 22): a stranger's public.abs, first on the superuser's search_path when it
    creates the view, never runs; a writer with rights on the table alone maintains it; the state
    passes the checks other roles rely on; another role's view cannot read it as a base table."""
    with cast.as_(cast.stranger) as s:
        escalate = cast.escalate_function(s, "public", cast.stranger)
        s.execute(f"CREATE FUNCTION public.abs(integer) RETURNS integer LANGUAGE plpgsql AS "
                  f"$$ BEGIN PERFORM {escalate}(); RETURN 7; END $$")
        s.execute("GRANT EXECUTE ON FUNCTION public.abs(integer) TO PUBLIC")
    query = ("SELECT s.c, x.total FROM (SELECT a, sum(abs(b)) AS total, count(*) AS n FROM shop.r GROUP BY a) AS x "
             "JOIN shop.s ON x.a = s.b")
    create_with_public_first_and_as_owner(cast, query)
    with cast.as_(cast.writer) as w:
        w.execute("INSERT INTO shop.r VALUES (2, -9), (3, 9), (3, -4)")
        w.execute("UPDATE shop.r SET a = 1 WHERE b = 5")
        w.execute("DELETE FROM shop.r WHERE b = 3")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            w.execute("SELECT * FROM pgivm_mine.derived_1")
    expected = sorted(cast.admin.execute(query.replace("abs(", "pg_catalog.abs(")).fetchall())
    assert expected and expected != sorted(cast.admin.execute(query.replace("abs(b)", "7")).fetchall())
    for name in ("v", "mine"):
        assert sorted(cast.admin.execute(f"SELECT * FROM views.{name}").fetchall()) == expected
        assert command.verify(name, target=cast.dsn).ok
        assert cast.admin.execute(f"SELECT count(*) FROM pgivm_catalog.state_problems('{name}')").fetchone()[0] == 0  # type: ignore[index]
    with cast.as_(cast.owner) as o, pytest.raises(PgivmError, match="is a table of pgivm's state, not a base table"):
        command.create("theirs", "SELECT total FROM pgivm_v.derived_1", schema="views", target=o)
    cast.assert_nobody_escalated("after views over a derived table", ran_in=("public",))
    assert cast.admin.execute("SELECT count(*) FROM public.ran").fetchone()[0] == 0  # type: ignore[index]


def test_a_derived_table_over_another_carries_only_the_states_triggers(cast: Cast) -> None:
    """A derived table that reads another (TPC-H Q15's maximum of a WITH query's sums) puts its
    triggers on the inner one, a table of the state: the checks other roles rely on accept them
    because they call the state's functions. The view owner's own trigger under that name, calling
    a function of theirs, is reported by verify and refused to a superuser's command."""
    query = ("WITH x AS (SELECT a, sum(b) AS total FROM shop.r GROUP BY a) "
             "SELECT s.c, x.total FROM shop.s JOIN x ON x.a = s.b WHERE x.total = (SELECT max(total) FROM x)")
    create_as_owner(cast, "v", query, system="first-order")
    with cast.as_(cast.writer) as w:
        w.execute("INSERT INTO shop.r VALUES (2, 40), (3, 1)")
        w.execute("UPDATE shop.r SET a = 1 WHERE b = 40")
    expected = sorted(cast.admin.execute(query).fetchall())
    assert expected and sorted(cast.admin.execute("SELECT * FROM views.v").fetchall()) == expected
    assert command.verify("v", target=cast.dsn).ok
    assert cast.admin.execute("SELECT count(*) FROM pg_trigger WHERE tgrelid = 'pgivm_v.derived_1'::regclass "
                              "AND tgname LIKE 'pgivm_v_zd2_%'").fetchone()[0] == 4  # type: ignore[index]
    without_ddl_guard(cast)
    with cast.as_(cast.owner) as o:
        escalate = cast.escalate_function(o, "evil", cast.owner)
        o.execute(f"CREATE FUNCTION evil.t() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM {escalate}(); "  # type: ignore[arg-type]
                  "RETURN NULL; END $$; CREATE TRIGGER pgivm_v_zd7_insert AFTER INSERT ON pgivm_v.derived_1 "
                  "FOR EACH STATEMENT EXECUTE FUNCTION evil.t()")
        report = command.verify("v", target=o)
    assert not report.ok and any("trigger pgivm_v_zd7_insert on pgivm_v.derived_1 was not made by pgivm" in str(f)
                                 for f in report.failures), report.failures
    with pytest.raises(PgivmError, match="pgivm_v_zd7_insert on pgivm_v.derived_1 was not made by pgivm"):
        command.refresh("v", target=cast.dsn)
    cast.assert_nobody_escalated("after a superuser's command on the view", ran_in=("evil",))


def test_a_snapshot_older_than_the_locks_is_refused_when_the_guard_is_off(cast: Cast) -> None:
    """pin_state locks a view's state, then checks it; in a REPEATABLE READ transaction the check
    reads the snapshot, which may predate the locks, while the executor runs the newest
    definitions. With the guard off, a view owner who replaced the view after the superuser's
    snapshot had it checked in its old form and run in its new one. Now a superuser's pin in such
    a transaction is refused while the guard is off (with the guard on nothing can change)."""
    create_as_owner(cast)
    without_ddl_guard(cast)
    cast.admin.execute("ALTER EVENT TRIGGER pgivm_sql_drop DISABLE")
    with psycopg.connect(cast.dsn) as mine:
        mine.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        mine.execute("SELECT 1")  # the snapshot
        with cast.as_(cast.owner) as o:
            escalate = cast.escalate_function(o, "views", cast.owner)
            o.execute(f"DROP VIEW views.v; CREATE VIEW views.v AS SELECT count(*) AS count FROM (VALUES (1)) AS x(n) "
                      f"WHERE {escalate}()")
        refused = None
        try:
            command.verify("v", target=mine)
        except PgivmError as err:
            refused = err
        mine.commit()  # the superuser keeps what its transaction did
    cast.assert_nobody_escalated("after verify by the superuser", ran_in=("views",))
    assert refused is not None and "guard" in str(refused) and "\n" not in str(refused), refused


def test_a_database_default_of_repeatable_read_does_not_reach_pgivms_own_transactions(cast: Cast) -> None:
    """A database owner can set default_transaction_isolation; pgivm's changing commands and the
    worker say READ COMMITTED themselves, so their pins see what their locks hold (here: a
    superuser's refresh of another role's deferred view with the guard off still works)."""
    create_as_owner(cast, refresh="deferred", budget=1000)
    without_ddl_guard(cast)
    cast.admin.execute(sql.SQL("ALTER DATABASE {} SET default_transaction_isolation = 'repeatable read'").format(
        sql.Identifier(cast.admin.info.dbname)))
    with cast.as_(cast.writer) as w:
        w.execute("INSERT INTO shop.r VALUES (9, 9)")
    command.refresh("v", target=cast.dsn)
    with psycopg.connect(cast.dsn) as conn:
        assert conn.execute("SELECT count FROM views.v_stale").fetchone()[0] == recount(cast)  # type: ignore[index]


@pytest.mark.parametrize("system", ["first-order", "fivm"])
def test_an_extensions_type_is_compared_by_the_extensions_operator_never_a_strangers(cast: Cast, system: str) -> None:
    """pgvector in schema ext (a superuser's, no one else may create there): a view owner's view joins
    and groups by vector columns, and its functions look operators up in pg_catalog, then ext. A
    stranger's public.=(ext.vector, ext.vector), first on the writer's and the superuser's paths,
    never runs: not in the writer's statements, not in the superuser's verify, refresh or upgrade."""
    if cast.admin.execute("SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'").fetchone()[0] == 0:
        pytest.skip("this server has no pgvector")
    cast.admin.execute("CREATE SCHEMA ext; CREATE EXTENSION vector SCHEMA ext; GRANT USAGE ON SCHEMA ext TO PUBLIC")
    with cast.as_(cast.tables) as t:
        t.execute("CREATE TABLE shop.emb (v ext.vector(2), a int); CREATE TABLE shop.tag (v ext.vector(2), w int); "
                  "INSERT INTO shop.emb VALUES ('[1,2]', 1), ('[1,2]', 2), ('[3,4]', 3); INSERT INTO shop.tag VALUES ('[1,2]', 5)")
        t.execute(sql.SQL("GRANT SELECT, TRIGGER ON shop.emb, shop.tag TO {o}; GRANT INSERT, DELETE, SELECT ON shop.emb TO {w}").format(
            o=sql.Identifier(cast.owner), w=sql.Identifier(cast.writer)))
    with cast.as_(cast.stranger) as s:
        escalate = cast.escalate_function(s, "public", cast.stranger)
        s.execute("CREATE FUNCTION public.strange_eq(ext.vector, ext.vector) RETURNS boolean LANGUAGE sql IMMUTABLE AS "
                  f"'SELECT {escalate}() AND false'; "
                  "CREATE OPERATOR public.= (LEFTARG = ext.vector, RIGHTARG = ext.vector, FUNCTION = public.strange_eq)")
    query = "SELECT e.v, count(*) AS n, sum(g.w) AS w FROM shop.emb e JOIN shop.tag g ON e.v = g.v GROUP BY e.v"
    with cast.as_(cast.owner) as o:
        o.execute("SET search_path = ext, pg_catalog")  # the owner's query means the extension's =
        command.create("v", query, schema="views", system=system, target=o)
    with cast.as_(cast.writer) as w:
        w.execute("SET search_path = public, ext")  # a writer's path reaches no generated code
        w.execute("INSERT INTO shop.emb VALUES ('[1,2]', 4), ('[5,6]', 5); DELETE FROM shop.emb WHERE a = 3")
    cast.admin.execute("SET search_path = public, ext")
    try:
        assert command.verify("v", target=cast.dsn).ok
        command.upgrade("v", force=True, target=cast.dsn)
        rows = cast.admin.execute("SELECT v::text, n, w FROM views.v").fetchall()
    finally:
        cast.admin.execute("RESET search_path")
    assert rows == [("[1,2]", 3, 15)]
    cast.assert_nobody_escalated("after a view over vector columns", ran_in=("public",))
    assert cast.admin.execute("SELECT count(*) FROM public.ran").fetchone()[0] == 0  # type: ignore[index]
