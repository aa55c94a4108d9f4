"""Putting a view's SQL into the database and taking it out again, shared by ``create``,
``upgrade``, ``alter_refresh`` and ``drop``: the checks before a create, a system's plan run phase
by phase (with another builder where the system offers one), the deferred layer around it, the
catalog record, the reinstall that keeps the state, and the removal of triggers and objects.

Everything here runs inside the command's transaction, which the caller opened (``pgivm.command``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

import psycopg
from psycopg import sql

from pgivm import capture, deferred, derived, owners
from pgivm.catalog import migrate
from pgivm.catalog import views as catalog
from pgivm.connection import search_path_of, user_path, user_search_path
from pgivm.errors import PgivmError, UnsupportedQuery
from pgivm.query.model import TableRef
from pgivm.query.resolve import ResolvedView, collate, pin_sources
from pgivm.systems import common, registry
from pgivm.systems.base import InstallPlan, System
from pgivm.transactions import lock_by_creating_triggers

MAX_NAME_BYTES = 40  # state objects are named pgivm_<name>_...; PostgreSQL truncates names at 63 bytes
# Schemas pgivm owns or PostgreSQL reserves: a view there could be dropped along with them.
RESERVED_SCHEMA = re.compile(r"^(pgivm(_.*)?|pg_.*|information_schema)$")


def template_version() -> str:
    """A fingerprint of what views are installed from: the SQL templates and the Python that
    renders SQL around them. ``upgrade`` reinstalls views whose fingerprint differs."""
    # Every folder that makes installed SQL, not only the system's own: systems render each other's
    # (first-order renders F-IVM's and IVMε's), the capture, deferred and derived layers wrap them all, and
    # the query model renders conditions and plain SQL. Python counts as well as templates: much
    # of the generated SQL is composed in Python (a change there alone once went unreinstalled).
    digest = hashlib.sha256()
    root = files("pgivm")
    folders = [root.joinpath(*parts) for parts in (("capture",), ("deferred",), ("derived",), ("query",),
                                                   ("query", "analysis"), ("systems",))]
    folders += sorted((entry for entry in root.joinpath("systems").iterdir() if entry.is_dir()
                       and entry.name != "__pycache__"), key=lambda e: e.name)
    for folder in folders:
        templates = files("pgivm.sql").joinpath(folder.name)  # the top-level sql/ folder of the same name
        sources = [e for e in folder.iterdir() if e.name.endswith(".py")]
        sources += [e for e in (templates.iterdir() if templates.is_dir() else []) if e.name.endswith(".sql")]
        for entry in sorted(sources, key=lambda e: e.name):
            digest.update(folder.name.encode() + b"/" + entry.name.encode() + b"\0" + entry.read_bytes())
    return digest.hexdigest()[:16]


# --- before a create -----------------------------------------------------------------------------


def check_name(name: str) -> None:
    if not name or len(name.encode()) > MAX_NAME_BYTES or re.search(r"[\x00-\x1f]", name):
        raise PgivmError(f"invalid view name {name!r}", f"use 1 to {MAX_NAME_BYTES} bytes, no control characters")
    if common.state_schema_for(name) == migrate.SCHEMA:
        raise PgivmError(f"invalid view name {name!r}: its state schema would be pgivm's catalog", "choose another name")


def check_schema_name(schema: str | None) -> None:
    if schema is not None and RESERVED_SCHEMA.match(schema):
        raise PgivmError(f"schema {schema} is reserved for pgivm or PostgreSQL", "choose another --schema")


def preflight(conn: psycopg.Connection, name: str, schema: str | None, deferring: bool) -> str:
    """The schema the view goes into, once everything create needs is free; else one line."""
    view_schema = schema or user_path(conn).current
    if view_schema is None:
        raise PgivmError("no schema on the search_path exists to put the view in", "pass --schema")
    if not conn.execute("SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = %s)", [view_schema]).fetchone()[0]:  # type: ignore[index]
        raise PgivmError(f"schema {view_schema} does not exist", "create it first or pass another --schema")
    if RESERVED_SCHEMA.match(view_schema):
        raise PgivmError(f"schema {view_schema} is reserved for pgivm or PostgreSQL", "pass another --schema")
    if catalog.exists(conn, name):
        raise PgivmError(f"a pgivm view named {name!r} already exists", "drop it first with `pgivm drop`")
    wanted = [name, deferred.stale_name(name)] if deferring else [name]
    for relation in wanted:
        taken = conn.execute("SELECT pg_catalog.to_regclass(%s) IS NOT NULL",
                             [sql.Identifier(view_schema, relation).as_string(conn)]).fetchone()
        if taken and taken[0]:
            why = "" if relation == name else ", and a deferred view needs that name for its stale result"
            raise PgivmError(f"relation {view_schema}.{relation} already exists{why}", "choose another view name")
    return view_schema


def refresh_options(options: dict[str, Any]) -> dict[str, Any] | None:
    """Take create's refresh options out of ``options``: None for an immediate view, else the
    deferred view's budget and planner, checked."""
    given = {o.name: options.pop(o.name, None) for o in deferred.OPTIONS}
    chosen = {o.name: o.validate(given[o.name]) for o in deferred.OPTIONS}
    if chosen["refresh"] == "immediate":
        stray = [f"--{k}" for k, v in given.items() if v is not None and k != "refresh"]
        if stray:
            raise PgivmError(f"{', '.join(stray)} applies to deferred views only", "add --refresh deferred")
        return None
    return chosen


# The functions and operators a view's query calls that are not immutable: stable ones read the
# session's settings (date_part of a timestamptz reads TimeZone), volatile ones anything. A
# maintained view computes each row's values when a writer's statement changes it, in that
# writer's session; two writers with other settings would disagree. They are read from the query
# tree PostgreSQL stores for a view of the query (pg_depend records no dependency on its own
# built-in functions): each function, aggregate and operator by oid.
_NOT_IMMUTABLE = r"""
WITH called AS (
    SELECT m[1] AS kind, m[2]::pg_catalog.oid AS id
      FROM pg_catalog.pg_rewrite w,
           pg_catalog.regexp_matches(w.ev_action::pg_catalog.text, ':(funcid|aggfnoid|winfnoid|opno) ([0-9]+)', 'g') AS m
     WHERE w.ev_class = %s::pg_catalog.regclass)
SELECT coalesce('operator ' || o.oid::pg_catalog.regoperator::pg_catalog.text,
                'function ' || p.oid::pg_catalog.regprocedure::pg_catalog.text),
       CASE p.provolatile WHEN 's' THEN 'stable' ELSE 'volatile' END
  FROM called c
  LEFT JOIN pg_catalog.pg_operator o ON c.kind = 'opno' AND o.oid = c.id
  JOIN pg_catalog.pg_proc p ON p.oid = CASE WHEN c.kind = 'opno' THEN o.oprcode ELSE c.id END
 WHERE p.provolatile <> 'i'
 ORDER BY 1 LIMIT 1
"""


def check_postgres_accepts(conn: psycopg.Connection, sql_text: str, waiting: bool = True, schema: str | None = None) -> None:
    """The definition is what users read as the view's meaning: PostgreSQL itself must accept it.
    (Run once the base tables are locked and pinned, so the names lead where resolve() found.)
    ``waiting`` False: before the locks, and so without waiting for one (a writer holding a table
    would keep create from giving up after its lock_wait); a table locked now is checked later.
    ``schema``: a schema of ours where a view of the query is made and dropped, to ask PostgreSQL
    which functions and operators it calls: every one must be immutable (_NOT_IMMUTABLE)."""
    calling = None
    try:
        with conn.transaction(force_rollback=True), user_search_path(conn):  # the user's names, as in their own query
            if not waiting:  # for this statement only: undone by the savepoint's rollback
                conn.execute("SELECT pg_catalog.set_config('lock_timeout', '20ms', true)")
            # Any plan will do, so the first found: the search over join orders of a join of many
            # tables alone took 3.5 s (8 tables of a Loomis-Whitney count) to 20 s (10). JOINs in
            # the order written; a FROM list of 8 items or more by the genetic search (PostgreSQL's
            # own from 12: it took 80 s for 9 comma-joined tables, 0.16 s genetic)
            conn.execute("SELECT pg_catalog.set_config('join_collapse_limit', '1', true), "
                         "pg_catalog.set_config('from_collapse_limit', '1', true), "
                         "pg_catalog.set_config('geqo_threshold', '8', true)")
            conn.execute(f"EXPLAIN {sql_text}")  # type: ignore[arg-type]  # parsed and checked above
        if schema is not None:  # its functions as pgivm calls them: pg_catalog's (never a stranger's public.abs)
            with conn.transaction(force_rollback=True):
                view = sql.Identifier(schema, "pgivm_definition")
                with search_path_of(conn, f"pg_catalog, {user_path(conn).setting}"):  # only to read the user's names
                    conn.execute(sql.SQL("CREATE VIEW {} AS ").format(view) + sql.SQL(sql_text))  # type: ignore[arg-type]
                calling = conn.execute(_NOT_IMMUTABLE, [view.as_string(conn)]).fetchone()  # on pgivm's own path
    except psycopg.errors.LockNotAvailable:
        if waiting:
            raise
    except psycopg.Error as err:
        first = (str(err).strip().splitlines() or ["error"])[0]
        raise PgivmError(f"PostgreSQL rejects the view SQL: {first}") from None
    if calling is not None:
        if "anynonarray" in calling[0] or "anyelement" in calling[0]:  # || of text and a value: its text form is the type's
            raise UnsupportedQuery(f"{calling[0]} is {calling[1]}: it writes a value of any type as text, which may depend "
                                   "on the writer's session (DateStyle, TimeZone, ...), so a maintained view calls only "
                                   "immutable ones", "cast the value to text first (x::text || 'y')")
        raise UnsupportedQuery(f"{calling[0]} is {calling[1]}: its value depends on the session (TimeZone, ...)",
                               "use ts AT TIME ZONE 'UTC', or d::timestamp for a date")


def uses_cofactor(query: Any) -> bool:
    return any(a.function == "cofactor" for a in query.aggregates)


# --- installing ----------------------------------------------------------------------------------


def run_phases(conn: psycopg.Connection, plan: InstallPlan, *phases: str) -> None:
    for phase in phases:
        for statement in plan.phase(phase).statements:
            conn.execute(statement)


def deferred_tables(system: System, resolved: ResolvedView, name: str,
                    params: dict[str, Any]) -> list[deferred.LoggedTable]:
    """What a deferred view logs, or a one-line refusal if its system cannot defer this query."""
    query = resolved.query
    deferred.check_columns(name, [o.name for o in query.outputs])
    if system.deferred_atoms is None:
        deferring = ", ".join(s.name for s in registry.SYSTEMS.values() if s.deferred_atoms is not None)
        raise PgivmError(f"system {system.name} has no deferred mode", f"use --refresh immediate, or one of: {deferring}")
    atoms = system.deferred_atoms(resolved, name, params)
    if isinstance(atoms, str):
        raise PgivmError(f"cannot defer this view: {atoms}")
    functions = {}
    for table in atoms:
        triggers = system.capture_triggers(resolved, name, table)
        functions[table] = next(t.function for t in triggers if t.timing == "AFTER" and "INSERT" in t.events)
    tables = list(deferred.logged_tables(atoms, resolved, functions).values())
    if not tables:
        raise PgivmError("cannot defer this view: none of its tables can change", "use --refresh immediate")
    return tables


def create_state_schema(conn: psycopg.Connection, name: str, view_schema: str, query: Any) -> None:
    """The view's state schema, owned by the creator, and in it the tables of constant rows the
    query reads (``pgivm.query.static``), filled with names resolved in pg_catalog alone, and its
    derived tables, empty (``pgivm.derived``; their tables found on the user's path, as the
    query's are)."""
    conn.execute("SELECT pgivm_catalog.create_state_schema(%s, (SELECT oid FROM pg_catalog.pg_roles "
                 "WHERE rolname = current_user), %s)", [name, view_schema])
    if not query.static and not query.derived:
        return
    own = frozenset(relation.table for relation in query.derived)
    sources = pin_sources(conn, query, among=lambda table: table not in own).get("sources", {})  # on the user's path
    path = conn.execute("SELECT pg_catalog.current_setting('search_path')").fetchone()[0]  # type: ignore[index]
    conn.execute("SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true)")
    for relation in query.static:
        table = sql.Identifier(relation.table.schema, relation.table.name)  # type: ignore[arg-type]
        conn.execute(sql.SQL("CREATE TABLE {} AS {}").format(table, sql.SQL(relation.select)))  # type: ignore[arg-type]
        conn.execute(sql.SQL("ANALYZE {}").format(table))  # the planner's rows: 1 marker row, not a guess of 2,550
    try:
        for kept in query.derived:  # each after the others it reads (TPC-H Q15's maximum of sums), named with their schema
            read = own & set(derived.tables_of(kept))
            sources.update(pin_sources(conn, query, among=read.__contains__).get("sources", {}))
            for statement in derived.state(kept, sources):
                conn.execute(statement)
    except psycopg.Error as err:  # its subquery, as PostgreSQL reads it (class 42: syntax or access rule)
        if not (err.sqlstate or "").startswith("42"):
            raise
        first = (str(err).strip().splitlines() or ["error"])[0]
        raise PgivmError(f"PostgreSQL rejects the view SQL: {first}") from None
    conn.execute("SELECT pg_catalog.set_config('search_path', %s, true)", [path])


def derived_objects(resolved: ResolvedView, name: str) -> tuple[list[sql.Composable], list[sql.Composable]]:
    """The functions of the view's derived tables, and the triggers on the tables they read."""
    kept = getattr(resolved.query, "derived", ())
    functions = [s for relation in kept for s in derived.functions(relation, resolved.sources, name)]
    on_sources = derived.source_triggers(name, kept, set(resolved.query.tables))
    return functions, [statement for table, triggers in on_sources.items()
                       for statement in capture.triggers_on(resolved.sources[table], triggers)]


def all_triggers(system: System, resolved: ResolvedView, name: str) -> dict[TableRef, list[capture.CaptureTrigger]]:
    """What the catalog records of the view's triggers, per table: the system's capture triggers on
    the tables the query reads, and the derived tables' on the tables those read."""
    found = {table: system.capture_triggers(resolved, name, table) for table in resolved.query.tables}
    for table, triggers in derived.source_triggers(name, getattr(resolved.query, "derived", ()),
                                                   set(resolved.query.tables)).items():
        found[table] = found.get(table, []) + triggers
    return found


@dataclass
class Install:
    """One create's work, once the query is parsed and the system chosen."""

    conn: psycopg.Connection
    system: System
    name: str
    view_schema: str
    resolved: ResolvedView
    params: dict[str, Any]
    refresh: dict[str, Any] | None  # the deferred view's budget and planner; None: immediate

    def run(self, lock_wait: float, builder: Any = None, context: Any = None) -> None:
        """State, functions, the base tables locked by creating the capture triggers, the build,
        what users see, the deferred layer, the catalog record."""
        conn, name, resolved = self.conn, self.name, self.resolved
        logged = deferred_tables(self.system, resolved, name, self.params) if self.refresh else None
        plan = self.system.plan(resolved, name, self.view_schema, self.params)
        if not uses_cofactor(resolved.query):  # first too: a query PostgreSQL refuses is said so in one line, not
            check_postgres_accepts(conn, resolved.query.sql, waiting=False)  # as the error of a statement pgivm made
        run_phases(conn, plan, "state", "functions")
        functions, on_sources = derived_objects(resolved, name)
        for statement in functions:
            conn.execute(statement)
        # Writers wait from here to the commit, so no change slips between build and triggers; the
        # derived tables are filled once the tables they read are locked, before their own capture.
        refills = [derived.refill(relation) for relation in resolved.query.derived] if on_sources else []
        lock_by_creating_triggers(conn, [*on_sources, *refills, *plan.phase("capture").statements],
                                  {b.oid: str(b.ref) for b in [*resolved.sources.values(), *resolved.base.values()]
                                   if not b.static},
                                  capture.lock_trigger(name).name, lock_wait)
        if not uses_cofactor(resolved.query):  # cofactor() is pgivm's, not PostgreSQL's
            check_postgres_accepts(conn, resolved.query.sql, schema=common.state_schema_for(name))
        if builder is not None:
            builder.build(conn, resolved, name, self.params, context)
        else:
            try:
                run_phases(conn, plan, "build")
            except psycopg.errors.FeatureNotSupported as err:  # a maintenance query PostgreSQL cannot plan
                raise UnsupportedQuery(f"PostgreSQL cannot run the queries that would maintain view {name}: "
                                       f"{err.diag.message_primary}", "use --system recompute") from None
        run_phases(conn, plan, "expose")
        if logged is not None and self.refresh is not None:
            names = common.Names.of(name)
            for statement in deferred.state_plan(names, logged, self.refresh["budget"], self.refresh["planner"]):
                conn.execute(statement)
            deferred.wrap(conn, names, logged, name, self.view_schema)
        record(conn, self.system, name, self.view_schema, resolved, self.params)


def record(conn: psycopg.Connection, system: System, name: str, view_schema: str,
           resolved: ResolvedView, params: dict[str, Any]) -> None:
    """The view in the catalog: its system, parameters, model, templates, objects, base tables."""
    query = resolved.query
    in_catalog = {o.name for o in system.options if not o.in_state} | {"refresh"}
    state_schema = common.state_schema_for(name)
    stale = [{"kind": "view", "schema": view_schema, "name": deferred.stale_name(name)}] if deferred.is_deferred(params) else []
    owner = conn.execute("SELECT oid::int8 FROM pg_catalog.pg_roles WHERE rolname = current_user").fetchone()[0]  # type: ignore[index]
    catalog.insert(conn, catalog.ViewRecord(
        name=name, view_schema=view_schema, state_schema=state_schema, system=system.name, owner=owner,
        model_version=catalog.CQ_MODEL_VERSION,
        definition=query.sql, model=catalog.model_to_json(query, resolved),
        params={k: v for k, v in params.items() if k in in_catalog},
        template_version=template_version(),
        objects=[{"kind": "view", "schema": view_schema, "name": name}, *stale, {"kind": "schema", "name": state_schema}],
    ))
    catalog.insert_base_tables(conn, name, resolved, all_triggers(system, resolved, name))


def reinstall(conn: psycopg.Connection, record: catalog.ViewRecord, system: System, resolved: ResolvedView,
              params: dict[str, Any], oids: list[int], deferring: bool, rebuild: bool = False) -> None:
    """The view's functions, triggers and user view from the current templates, state kept (the
    base tables locked ACCESS EXCLUSIVE by the caller); ``deferring``: with the deferred layer.
    ``rebuild``: the state laid out afresh and built from the base tables (``_clear_state``)."""
    name = record.name
    plan = system.plan(resolved, name, record.view_schema, params)
    names = common.Names.of(name)
    _lock_state(conn, record.state_schema)
    if deferred.is_deferred(record.params):
        deferred.unwrap_views(conn, names, name, record.view_schema)
    remove(conn, record, oids, keep_state=True)  # as the caller: a base table's triggers are its owner's
    with owners.acting_as(conn, record):  # what is created belongs to the view's owner, whoever upgrades
        if rebuild:
            _clear_state(conn, record, resolved)
            run_phases(conn, plan, "state")
        conn.execute(common.state_logged(record.state_schema))
        run_phases(conn, plan, "functions")
        functions, on_sources = derived_objects(resolved, name)
        for statement in [*functions, *on_sources]:
            conn.execute(statement)
        run_phases(conn, plan, "capture")
    if rebuild:  # as create builds, as whoever runs it: no base table has row security (resolve refuses it)
        run_phases(conn, plan, "build")
    with owners.acting_as(conn, record):
        run_phases(conn, plan, "expose")
        if deferring:
            deferred.wrap(conn, names, deferred_tables(system, resolved, name, params), name, record.view_schema)
        catalog.insert_base_tables(conn, name, resolved, all_triggers(system, resolved, name))


def _clear_state(conn: psycopg.Connection, record: catalog.ViewRecord, resolved: ResolvedView) -> None:
    """Drop the state the system laid out (its tables and views), so that its plan lays it out
    again: an earlier pgivm may have laid it out otherwise. The tables of constant rows and the
    derived tables stay (their rows are the base tables' now). The user view is first replaced by
    one of the same columns over no state table, so that what users built on it stays."""
    view = sql.Identifier(record.view_schema, record.name)
    columns = conn.execute(
        "SELECT a.attname::text, pg_catalog.format_type(a.atttypid, a.atttypmod), "
        "       CASE WHEN a.attcollation <> 0 THEN a.attcollation::pg_catalog.regcollation::text END "  # schema-qualified where needed
        "  FROM pg_catalog.pg_attribute a"
        " WHERE a.attrelid = pg_catalog.to_regclass(%s) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
        [view.as_string(conn)]).fetchall()
    # a column in another collation than the query's (a view made before pgivm kept them): a view's
    # column cannot change collation in place, so the view is made again, with its grants
    wanted = [(column, kind, resolved.output_collations.get(column, collation)) for column, kind, collation in columns]
    changed = [(c, old, new) for (c, _, old), (_, _, new) in zip(columns, wanted) if old != new]
    grants = _drop_for_collations(conn, view, changed) if changed else []
    if wanted:
        items = sql.SQL(", ").join(
            sql.SQL("NULL::{}{} AS {}").format(sql.SQL(kind), collate(collation), sql.Identifier(column))  # type: ignore[arg-type]
            for column, kind, collation in wanted)
        conn.execute(sql.SQL("CREATE OR REPLACE VIEW {} AS SELECT {} WHERE false").format(view, items))
    for grantee, privilege, grantable in grants:
        conn.execute(sql.SQL("GRANT {} ON {} TO {}{}").format(
            sql.SQL(privilege), view, sql.SQL("PUBLIC") if grantee is None else sql.Identifier(grantee),  # type: ignore[arg-type]
            sql.SQL(" WITH GRANT OPTION" if grantable else "")))
    own = {b.ref.name for b in [*resolved.base.values(), *resolved.sources.values()] if b.ref.schema == record.state_schema}
    kept = lambda table: table in own or any(table.startswith(f"{t}_") for t in own)  # noqa: E731  (a derived table's own)
    for kind, drop in (("v", "VIEW"), ("m", "MATERIALIZED VIEW"), ("r", "TABLE"), ("p", "TABLE"), ("S", "SEQUENCE")):
        found = [r[0] for r in conn.execute(
            "SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind = %s AND NOT c.relispartition ORDER BY c.relname",
            [record.state_schema, kind]).fetchall() if not kept(r[0])]
        if found:
            conn.execute(sql.SQL("DROP {} {}").format(sql.SQL(drop), sql.SQL(", ").join(  # type: ignore[arg-type]
                sql.Identifier(record.state_schema, t) for t in found)))


def _drop_for_collations(conn: psycopg.Connection, view: sql.Identifier,
                         changed: list[tuple[str, str, str]]) -> list[tuple[str | None, str, bool]]:
    """Drop the user view whose ``changed`` columns (name, collation, the query's) must change
    collation; its grants, to give again (grantee, None for PUBLIC). Refused in one line if views
    are built on it."""
    oid = conn.execute("SELECT %s::pg_catalog.regclass::pg_catalog.oid::int8", [view.as_string(conn)]).fetchone()[0]  # type: ignore[index]
    built_on = [r[0] for r in conn.execute(
        "SELECT DISTINCT w.ev_class::pg_catalog.regclass::text FROM pg_catalog.pg_depend d "
        "JOIN pg_catalog.pg_rewrite w ON w.oid = d.objid WHERE d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass "
        "AND d.refobjid = %s AND w.ev_class <> %s ORDER BY 1", [oid, oid]).fetchall()]
    column, old, new = changed[0]
    if built_on:
        raise PgivmError(f"column {column} of {view.as_string(conn)} is in collation {old}, the query's in {new}, and a "
                         f"view's column cannot change it in place: views are built on it ({', '.join(built_on)})",
                         "drop them, run the upgrade again, and create them again")
    grants = conn.execute(
        "SELECT r.rolname::text, a.privilege_type, a.is_grantable FROM pg_catalog.pg_class c "
        "CROSS JOIN LATERAL pg_catalog.aclexplode(c.relacl) a LEFT JOIN pg_catalog.pg_roles r ON r.oid = a.grantee "
        "WHERE c.oid = %s AND a.grantee <> c.relowner", [oid]).fetchall()
    conn.execute(sql.SQL("DROP VIEW {}").format(view))
    return grants


def _lock_state(conn: psycopg.Connection, state_schema: str) -> None:
    """Every table of the state, before a GRANT or an ALTER updates its catalog row: an autovacuum
    of one that ends after such an update waits for this transaction (PostgreSQL updates the
    table's statistics in place, and waits for whoever updated the row), and an ALTER's lock
    request then closes a deadlock. Asked for first, the lock makes PostgreSQL cancel the
    autovacuum instead."""
    tables = [sql.Identifier(state_schema, r[0]) for r in conn.execute(
        "SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relkind IN ('r', 'p') ORDER BY c.relname", [state_schema])]
    if tables:
        conn.execute(sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(sql.SQL(", ").join(tables)))


# --- removing ------------------------------------------------------------------------------------


def existing(conn: psycopg.Connection, oids: list[int]) -> list[int]:
    """The oids that still name a relation."""
    return [oid for oid in oids
            if conn.execute("SELECT EXISTS (SELECT FROM pg_catalog.pg_class WHERE oid = %s)", [oid]).fetchone()[0]]  # type: ignore[index]


def stop_maintenance(conn: psycopg.Connection, record: catalog.ViewRecord) -> None:
    """drop's first step: the user view goes and the view's trigger functions become no-ops, with
    no base table touched (writers pick that up at their next statement), and writers of its
    tables no longer serialize for it (their locks do not keep the second step waiting)."""
    try:
        conn.execute(sql.SQL("DROP VIEW IF EXISTS {}").format(sql.Identifier(record.view_schema, record.name)))
    except psycopg.errors.DependentObjectsStillExist as err:  # a view of the user's reads it: named, not dropped
        dependents = "; ".join((err.diag.message_detail or "").splitlines()[:3])
        raise PgivmError(f"cannot drop view {record.name}: other objects depend on it ({dependents})",
                         "drop or change those first (pgivm drops nothing of yours)") from None
    for function in catalog.trigger_functions(conn, record.name):
        conn.execute(common.no_op_trigger_function(function, record.name))
    catalog.stop(conn, record.name)


def remove(conn: psycopg.Connection, record: catalog.ViewRecord, oids: list[int], keep_state: bool) -> None:
    """Drop the capture triggers (on every base table and partition, found by oid) and the objects
    the catalog lists; with ``keep_state`` only the state schema's functions, not its tables."""
    triggers = catalog.trigger_names(conn, record.name)
    catalog.delete_base_tables(conn, record.name)  # first: the DDL guard then lets the triggers go
    try:
        for oid in oids:
            conn.execute(capture.drop_triggers(oid, triggers))
        if keep_state:
            conn.execute(common.drop_functions(record.state_schema))
            return
        for obj in record.objects:
            if obj["kind"] == "view":
                conn.execute(sql.SQL("DROP VIEW IF EXISTS {}").format(sql.Identifier(obj["schema"], obj["name"])))
            elif obj["kind"] == "schema":
                conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(obj["name"])))
    except psycopg.errors.InsufficientPrivilege as err:
        first = (str(err).strip().splitlines() or ["permission denied"])[0]
        raise PgivmError(f"cannot change view {record.name}: {first}",
                         "its triggers belong to the base tables: run this as their owner or a superuser") from None
