"""The public API of pgivm. Each function is one CLI command; the CLI only parses and prints.

Every function takes ``target``: a DSN string, an open psycopg connection (used as is, inside a
transaction or savepoint of its own), or None to resolve the database the way the CLI does
(``PGIVM_DSN``, the libpq ``PG*`` variables, else the embedded server).
Changes run in one transaction: on any error nothing is left half-installed.

No maintenance system is named here: each one lives in ``pgivm/systems/`` and is found through
``pgivm.systems.registry``; its options, actions and status arrive as data.
"""

from __future__ import annotations

import hashlib
import random
import re
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

import psycopg
from psycopg import sql

from pgivm import capture, deferred, owners
from pgivm.catalog import migrate
from pgivm.catalog import views as catalog
from pgivm.connection import user_path, user_search_path
from pgivm.errors import PgivmError, UnsupportedQuery
from pgivm.query.cq import ConjunctiveQuery
from pgivm.query.parse import parse_query
from pgivm.query.model import TableRef
from pgivm.query.resolve import ResolvedView, column_names, resolve
from pgivm.systems import common, registry
from pgivm.systems.base import Section, System
from pgivm.transactions import (
    LOCK_WAIT_S,
    Target,
    fixed_search_path,
    lock_base_tables,
    lock_by_creating_triggers,
    read_committed,
    session,
    snapshot,
    transaction,
    with_lock_retries,
)

_MAX_NAME_BYTES = 40  # state objects are named pgivm_<name>_...; PostgreSQL truncates names at 63 bytes
# Schemas pgivm owns or PostgreSQL reserves: a view there could be dropped along with them.
_RESERVED_SCHEMA = re.compile(r"^(pgivm(_.*)?|pg_.*|information_schema)$")

__all__ = [
    "LOCK_WAIT_S", "CreateResult", "InitResult", "StatusReport", "UpgradeResult", "VerifyReport", "ViewSummary",
    "RefreshResult", "action", "alter_refresh", "calibrate", "create", "worker", "drop", "explain", "init", "refresh", "regress", "list_views", "load", "parse", "status", "tables_of", "upgrade", "validate_spark",
    "verify",
]


def _open(conn: psycopg.Connection, name: str, *, replacing_functions: bool = False) -> catalog.ViewRecord:
    """The view's catalog record, its state checked (and, for a superuser, locked) as safe to use
    by this session's role when that is not the view's owner (``pgivm.owners``)."""
    record = catalog.get(conn, name)
    owners.pin(conn, record, replacing_functions=replacing_functions)
    return record


def _check_name(name: str) -> None:
    if not name or len(name.encode()) > _MAX_NAME_BYTES or re.search(r"[\x00-\x1f]", name):
        raise PgivmError(f"invalid view name {name!r}", f"use 1 to {_MAX_NAME_BYTES} bytes, no control characters")
    if common.state_schema_for(name) == migrate.SCHEMA:
        raise PgivmError(f"invalid view name {name!r}: its state schema would be pgivm's catalog", "choose another name")


def template_version() -> str:
    """A fingerprint of the SQL views are installed from. ``upgrade`` reinstalls views whose
    fingerprint differs."""
    # Every template folder of the package, not only the system's own: systems render each other's
    # (first-order renders F-IVM's and IVMε's), and the capture and deferred layers wrap them all.
    digest = hashlib.sha256()
    root = files("pgivm")
    folders = [root.joinpath(*parts) for parts in (("capture",), ("deferred",))]
    folders += sorted((entry for entry in root.joinpath("systems").iterdir() if entry.is_dir()), key=lambda e: e.name)
    for folder in folders:
        templates = folder.joinpath("sql")
        for entry in sorted(templates.iterdir() if templates.is_dir() else [], key=lambda e: e.name):
            if entry.name.endswith(".sql"):
                digest.update(folder.name.encode() + b"/" + entry.name.encode() + b"\0" + entry.read_bytes())
    return digest.hexdigest()[:16]


# --- init ---------------------------------------------------------------------------------------


@dataclass
class InitResult:
    applied: list[str]  # migrations applied now
    ddl_guards: bool  # pgivm's DDL event triggers are installed (they need a superuser)
    outdated: list[str]  # views installed from older templates: `pgivm upgrade` reinstalls them
    owner: str = ""  # the role that owns the catalog (and runs pgivm's SECURITY DEFINER catalog functions)
    rights: list[str] = field(default_factory=list)  # what other roles need, for the admin to grant


# What a role other than the catalog's owner needs (init prints it): the catalog's functions do the
# rest (pgivm_catalog.create_state_schema, record_view, ...), checking what each role may do.
RIGHTS = [
    "to create a view: CREATE on the schema it goes in, and SELECT and TRIGGER on its tables (or owning them): "
    "GRANT CREATE ON SCHEMA <schema> TO <role>; GRANT SELECT, TRIGGER ON <table> TO <role>",
    "to drop or upgrade it: the tables' owner or a superuser (DROP TRIGGER needs the table's owner)",
    "to read it: SELECT on the view (and on NAME_stale for a deferred view), as for any view",
    "to run `pgivm worker`: a superuser, or GRANT EXECUTE ON FUNCTION pgivm_catalog.register_worker() TO <role>",
]


def init(target: Target = None) -> InitResult:
    """Create or upgrade the pgivm catalog."""
    with session(target) as conn:
        applied = [f"{m.version:04d}_{m.name}" for m in migrate.upgrade(conn)]
        with snapshot(conn):
            guards = conn.execute(
                "SELECT count(*) = 2 FROM pg_catalog.pg_event_trigger "
                "WHERE evtname IN ('pgivm_ddl_command_end', 'pgivm_sql_drop') AND evtenabled <> 'D'").fetchone()
            outdated = [r.name for r in catalog.all_views(conn)
                        if r.template_version != template_version()]
            owner = conn.execute("SELECT pg_catalog.pg_get_userbyid(nspowner) FROM pg_catalog.pg_namespace "
                                 "WHERE nspname = 'pgivm_catalog'").fetchone()[0]  # type: ignore[index]
    return InitResult(applied=applied, ddl_guards=bool(guards and guards[0]), outdated=outdated, owner=owner,
                      rights=list(RIGHTS))


# --- create -------------------------------------------------------------------------------------


@dataclass
class CreateResult:
    name: str
    view: str
    system: str
    params: dict[str, Any]
    count: int | None
    figures: dict[str, Any]  # the system's key figures after the build (IVMε: n, theta, db_size, ...)
    headline: dict[str, Any]  # the few of them worth a line, by their labels (IVMε: |D|)
    seconds: float


def _params(system: System, options: dict[str, Any]) -> dict[str, Any]:
    """The system's options, each checked; an option the system does not take is an error."""
    known = {o.name: o for o in system.options}
    stray = [name for name, value in options.items() if value is not None and name not in known]
    if stray:
        takes = ", ".join(o.flag for o in system.options) or "no options"
        raise PgivmError(f"{', '.join('--' + s.replace('_', '-') for s in stray)} does not apply to system "
                         f"{system.name}", f"{system.name} takes {takes}")
    return {name: option.validate(options.get(name)) for name, option in known.items()}


def _choose_system(name: str | None, query: ConjunctiveQuery) -> System:
    """The system asked for, if it accepts the query; else the first in the registry that does."""
    if name is not None:
        system = registry.get(name)
        reason = system.accepts(query)
        if reason:
            raise UnsupportedQuery(f"system {system.name} cannot maintain this query: {reason}")
        return system
    refusals: dict[str, list[str]] = {}
    for system in registry.SYSTEMS.values():
        reason = system.accepts(query)
        if reason is None:
            return system
        refusals.setdefault(reason, []).append(system.name)
    raise UnsupportedQuery("; ".join(f"{reason} [{', '.join(names)}]" for reason, names in refusals.items()))


def parse(definition: Any, system: str | None = None, columns_of: Any = None) -> tuple[System, Any]:
    """The system that will maintain ``definition`` and the query in its model, or a one-line
    refusal (unsupported SQL, or no system accepts it: each system's reason). No database needed,
    except for ``SELECT *`` (``columns_of``: a table -> its column names)."""
    cq = parse_query(_as_sql_text(definition), columns_of)
    chosen = _choose_system(system, cq)
    return chosen, chosen.model(cq)


def _check_postgres_accepts(conn: psycopg.Connection, sql_text: str) -> None:
    """The definition is what users read as the view's meaning: PostgreSQL itself must accept it.
    (Run once the base tables are locked and pinned, so the names lead where resolve() found.)"""
    try:
        with conn.transaction(), user_search_path(conn):  # the user's names, as in their own query
            conn.execute(f"EXPLAIN {sql_text}")  # type: ignore[arg-type]  # parsed and checked above
    except psycopg.Error as err:
        first = (str(err).strip().splitlines() or ["error"])[0]
        raise PgivmError(f"PostgreSQL rejects the view SQL: {first}") from None


def _uses_cofactor(query: Any) -> bool:
    return isinstance(query, ConjunctiveQuery) and any(a.function == "cofactor" for a in query.aggregates)


def _as_sql_text(definition: Any) -> str:
    """A view definition as SQL text: a string, or a SQLAlchemy ``Select`` compiled for PostgreSQL
    with its parameters inlined."""
    if isinstance(definition, str):
        return definition
    compile_ = getattr(definition, "compile", None)
    if compile_ is None:
        raise PgivmError(f"a view definition is SQL text or a SQLAlchemy Select, not {type(definition).__name__}")
    from sqlalchemy.dialects import postgresql

    return str(compile_(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}))


def create(
    name: str,
    definition: Any,
    *,
    system: str | None = None,
    schema: str | None = None,
    target: Target = None,
    preprocess: str = "postgres",
    lock_wait: float = LOCK_WAIT_S,
    **options: Any,
) -> CreateResult:
    """Install a maintained view ``name`` for the query ``definition`` and build its state.

    ``definition`` is SQL text or a SQLAlchemy ``Select``. ``system`` picks the maintenance system
    (default: the first in the registry that accepts the query); ``options`` are that system's
    options (e.g. ``epsilon=0.25``; see ``pgivm create --help``).

    ``preprocess``: ``postgres`` builds the state with the plan's own SQL; a system may offer other
    builders (IVMε: ``spark``, which computes the state in Spark and writes it into a scratch schema
    committed on a side connection; a failed create drops it, a successful one drops it inside its
    own transaction, so if ``target`` is a connection in a transaction of yours that you roll back
    after a successful create, drop that schema yourself: its name is printed on stderr).

    ``lock_wait``: seconds to keep trying to lock the base tables against writers (one short attempt
    at a time, so a writer never waits long on us), after which create gives up with one line.
    """
    _check_name(name)
    refresh_mode = _refresh_options(options)
    if schema is not None and _RESERVED_SCHEMA.match(schema):
        raise PgivmError(f"schema {schema} is reserved for pgivm or PostgreSQL", "choose another --schema")
    text = _as_sql_text(definition)
    try:
        chosen, query = parse(text, system)
    except UnsupportedQuery as err:
        if "needs the tables' columns" not in err.message:
            raise
        with session(target) as conn, transaction(conn):  # SELECT *: the tables' columns say what it means
            chosen, query = parse(text, system, lambda table: column_names(conn, table))
    if isinstance(query, ConjunctiveQuery):
        names = [o.name for o in query.outputs]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise UnsupportedQuery(f"the view would have two columns named {twice[0]}: give each output its own "
                                   f"name (... AS {twice[0]}_2)")
    params = _params(chosen, options)
    if preprocess != "postgres" and preprocess not in chosen.builders:
        others = ", ".join(["postgres", *chosen.builders])
        raise PgivmError(f"system {chosen.name} has no {preprocess!r} build", f"choose one of: {others}")
    builder = chosen.builders.get(preprocess)
    started = time.perf_counter()
    with session(target) as conn:
        migrate.upgrade(conn)
        with builder.around(conn) if builder else nullcontext() as context, read_committed(conn), transaction(conn):
            view_schema = _preflight(conn, name, schema, deferring=refresh_mode is not None)
            resolved = resolve(conn, query)
            fixed_search_path(conn)
            if refresh_mode:
                params = {**params, "refresh": "deferred"}  # the plan may depend on it (first-order's does)
            logged = _deferred_tables(chosen, resolved, name, params) if refresh_mode else None
            plan = chosen.plan(resolved, name, view_schema, params)
            conn.execute("SELECT pgivm_catalog.create_state_schema(%s, (SELECT oid FROM pg_catalog.pg_roles "
                         "WHERE rolname = current_user), %s)", [name, view_schema])
            _run_phases(conn, plan, "state", "functions")
            # Writers wait from here to the commit, so no change slips between build and triggers.
            lock_by_creating_triggers(conn, plan.phase("capture").statements,
                                      {b.oid: str(b.ref) for b in resolved.base.values()},
                                      capture.lock_trigger(name).name, lock_wait)
            if not _uses_cofactor(query):  # cofactor() is pgivm's, not PostgreSQL's
                _check_postgres_accepts(conn, query.sql)
            if builder is not None:
                builder.build(conn, resolved, name, params, context)
            else:
                _run_phases(conn, plan, "build")
            _run_phases(conn, plan, "expose")
            if logged is not None and refresh_mode is not None:
                names = common.Names.of(name)
                for statement in deferred.state_plan(names, logged, refresh_mode["budget"], refresh_mode["planner"]):
                    conn.execute(statement)
                deferred.wrap(conn, names, logged, name, view_schema)
            _record(conn, chosen, name, view_schema, query, resolved, params)
            reported = chosen.status(conn, name)
            value = _maintained(conn, view_schema, name)
    return CreateResult(name=name, view=f"{view_schema}.{name}", system=chosen.name, params=params, count=value,
                        figures=reported.figures,
                        headline={reported.label(k): reported.figures[k] for k in reported.headline},
                        seconds=time.perf_counter() - started)


def _preflight(conn: psycopg.Connection, name: str, schema: str | None, deferring: bool) -> str:
    """The schema the view goes into, once everything create needs is free; else one line."""
    view_schema = schema or user_path(conn).current
    if view_schema is None:
        raise PgivmError("no schema on the search_path exists to put the view in", "pass --schema")
    if not conn.execute("SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = %s)", [view_schema]).fetchone()[0]:  # type: ignore[index]
        raise PgivmError(f"schema {view_schema} does not exist", "create it first or pass another --schema")
    if _RESERVED_SCHEMA.match(view_schema):
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


def _run_phases(conn: psycopg.Connection, plan: Any, *phases: str) -> None:
    for phase in phases:
        for statement in plan.phase(phase).statements:
            conn.execute(statement)


def _refresh_options(options: dict[str, Any]) -> dict[str, Any] | None:
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


def _deferred_tables(system: System, resolved: ResolvedView, name: str,
                     params: dict[str, Any]) -> list[deferred.LoggedTable]:
    """What a deferred view logs, or a one-line refusal if its system cannot defer this query."""
    query = resolved.query
    deferred.check_columns(name, [o.name for o in query.outputs] if isinstance(query, ConjunctiveQuery)
                           else [query.output_name])
    atoms_of = getattr(system, "deferred_atoms", None)
    if atoms_of is None:
        deferring = ", ".join(s.name for s in registry.SYSTEMS.values() if getattr(s, "deferred_atoms", None))
        raise PgivmError(f"system {system.name} has no deferred mode", f"use --refresh immediate, or one of: {deferring}")
    atoms = atoms_of(resolved, name, params)
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


def _record(conn: psycopg.Connection, system: System, name: str, view_schema: str, query: Any,
            resolved: ResolvedView, params: dict[str, Any]) -> None:
    """The view in the catalog: its system, parameters, model, templates, objects, base tables."""
    in_catalog = {o.name for o in system.options if not o.in_state} | {"refresh"}
    state_schema = common.state_schema_for(name)
    stale = [{"kind": "view", "schema": view_schema, "name": deferred.stale_name(name)}] if deferred.is_deferred(params) else []
    owner = conn.execute("SELECT oid::int8 FROM pg_catalog.pg_roles WHERE rolname = current_user").fetchone()[0]  # type: ignore[index]
    catalog.insert(conn, catalog.ViewRecord(
        name=name, view_schema=view_schema, state_schema=state_schema, system=system.name, owner=owner,
        model_version=catalog.CQ_MODEL_VERSION if isinstance(query, ConjunctiveQuery) else catalog.MODEL_VERSION,
        definition=query.sql, model=catalog.model_to_json(query, resolved),
        params={k: v for k, v in params.items() if k in in_catalog},
        template_version=template_version(),
        objects=[{"kind": "view", "schema": view_schema, "name": name}, *stale, {"kind": "schema", "name": state_schema}],
    ))
    catalog.insert_base_tables(conn, name, resolved, {
        table: system.capture_triggers(resolved, name, table) for table in query.tables})


# --- drop, upgrade ------------------------------------------------------------------------------


def _existing(conn: psycopg.Connection, oids: list[int]) -> list[int]:
    return [oid for oid in oids
            if conn.execute("SELECT EXISTS (SELECT FROM pg_catalog.pg_class WHERE oid = %s)", [oid]).fetchone()[0]]  # type: ignore[index]


def _drop_installed(conn: psycopg.Connection, record: catalog.ViewRecord, oids: list[int], keep_state: bool) -> None:
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


def drop(name: str, *, target: Target = None, lock_wait: float = LOCK_WAIT_S) -> None:
    """Remove the view, its triggers and all of its state, in two transactions.

    The first stops maintenance without touching a base table: the user view goes, and the
    view's trigger functions become no-ops (writers pick that up at their next statement, even from
    an older snapshot, and stop queueing on the view's lock). The second locks the base tables,
    which then come as easily as for ``create``, and removes the rest. If the second gives up (after
    ``lock_wait`` seconds), the view is no longer maintained, and ``drop`` again finishes the job.
    (With a connection of yours inside a transaction, both run in it, as savepoints.)
    """
    with session(target) as conn:
        migrate.upgrade(conn)
        with transaction(conn):
            record = catalog.get(conn, name)
            fixed_search_path(conn)
            conn.execute(sql.SQL("DROP VIEW IF EXISTS {}").format(sql.Identifier(record.view_schema, name)))
            for function in catalog.trigger_functions(conn, name):
                conn.execute(common.no_op_trigger_function(function, name))
        with transaction(conn):
            record = catalog.get(conn, name)
            oids = _existing(conn, catalog.base_table_oids(conn, name))
            # Dropping triggers needs ACCESS EXCLUSIVE: writers first finish, none deadlocks with us.
            try:
                lock_base_tables(conn, oids, "ACCESS EXCLUSIVE", lock_wait)
            except PgivmError as err:
                raise PgivmError(f"view {name} is no longer maintained (its view is dropped), but {err.message}",
                                 f"run `pgivm drop {name}` again to remove its triggers and state") from None
            fixed_search_path(conn)
            _drop_installed(conn, record, oids, keep_state=False)
            catalog.delete(conn, name)


@dataclass
class UpgradeResult:
    name: str
    upgraded: bool  # False: its templates were current already
    template_version: str
    seconds: float


def upgrade(name: str, *, force: bool = False, target: Target = None, lock_wait: float = LOCK_WAIT_S) -> UpgradeResult:
    """Reinstall a view's functions and triggers from the current templates, keeping its state.

    Done when the templates changed since the view was installed (or with ``force``). The base
    tables are locked against writers meanwhile; the state's tables, and so the result, are kept.
    """
    started = time.perf_counter()
    with session(target) as conn:
        migrate.upgrade(conn)
        with transaction(conn):
            record = _open(conn, name, replacing_functions=True)
            system = registry.get(record.system)
            version = template_version()
            if record.template_version == version and not force:
                return UpgradeResult(name, False, version, time.perf_counter() - started)
            oids = _existing(conn, sorted(set(record.table_oids.values())))
            lock_base_tables(conn, oids, "ACCESS EXCLUSIVE", lock_wait)
            fixed_search_path(conn)
            resolved = _pinned(conn, record)
            params = {**_params(system, {}), **record.params, **_state_params(conn, system, name)}
            _reinstall(conn, record, system, resolved, params, oids, deferred.is_deferred(record.params))
            catalog.set_template_version(conn, name, version)
    return UpgradeResult(name, True, version, time.perf_counter() - started)


def _reinstall(conn: psycopg.Connection, record: catalog.ViewRecord, system: System, resolved: ResolvedView,
               params: dict[str, Any], oids: list[int], deferring: bool) -> None:
    """The view's functions, triggers and user view from the current templates, state kept (the
    base tables locked ACCESS EXCLUSIVE by the caller); ``deferring``: with the deferred layer."""
    name = record.name
    plan = system.plan(resolved, name, record.view_schema, params)
    names = common.Names.of(name)
    if deferred.is_deferred(record.params):
        deferred.unwrap_views(conn, names, name, record.view_schema)
    _drop_installed(conn, record, oids, keep_state=True)  # as the caller: a base table's triggers are its owner's
    with owners.acting_as(conn, record):  # what is created belongs to the view's owner, whoever upgrades
        conn.execute(common.state_logged(record.state_schema))
        for phase in ("functions", "capture", "expose"):
            for statement in plan.phase(phase).statements:
                conn.execute(statement)
        if deferring:
            deferred.wrap(conn, names, _deferred_tables(system, resolved, name, params), name, record.view_schema)
        catalog.insert_base_tables(conn, name, resolved, {
            table: system.capture_triggers(resolved, name, table) for table in resolved.query.tables})


def alter_refresh(name: str, *, refresh: str | None = None, budget: Any = None, planner: str | None = None,
                  target: Target = None, lock_wait: float = LOCK_WAIT_S) -> dict[str, Any]:
    """Switch a view between immediate and deferred refresh, or change a deferred view's budget or
    planner, in one transaction. Going immediate applies what is pending first. Writers wait while
    the functions change (the base tables are locked against them)."""
    with session(target) as conn:
        migrate.upgrade(conn)
        with transaction(conn):
            record = _open(conn, name)
            system = registry.get(record.system)
            was = "deferred" if deferred.is_deferred(record.params) else "immediate"
            mode = deferred.REFRESH.validate(refresh) if refresh is not None else was
            if mode == "immediate" and (budget is not None or planner is not None):
                raise PgivmError("--budget and --planner apply to deferred views only", "add --refresh deferred")
            new_budget = deferred.BUDGET.validate(budget) if budget is not None else None
            new_planner = deferred.PLANNER.validate(planner) if planner is not None else None
            oids = _existing(conn, sorted(set(record.table_oids.values())))
            fixed_search_path(conn)
            names = common.Names.of(name)
            resolved = _pinned(conn, record)
            params = {**_params(system, {}), **record.params, **_state_params(conn, system, name)}
            stale = {"kind": "view", "schema": record.view_schema, "name": deferred.stale_name(name)}
            if mode == "deferred" and was == "immediate":
                params["refresh"] = "deferred"
                tables = _deferred_tables(system, resolved, name, params)
                lock_base_tables(conn, oids, "ACCESS EXCLUSIVE", lock_wait)
                with owners.acting_as(conn, record):
                    for statement in deferred.state_plan(names, tables, new_budget if new_budget is not None else deferred.BUDGET.default,
                                                         new_planner or deferred.PLANNER.default):
                        conn.execute(statement)
                # reinstalled, not only wrapped: a system's SQL may depend on the mode (first-order
                # then reads base tables less what is pending)
                _reinstall(conn, record, system, resolved, params, oids, deferring=True)
                objects = [*record.objects[:1], stale, *record.objects[1:]]
                catalog.set_params(conn, name, {**record.params, "refresh": "deferred"}, objects)
            elif mode == "deferred":
                conn.execute(sql.SQL("UPDATE {} SET budget_ms = coalesce(%s, budget_ms), planner = coalesce(%s, planner) "
                                     "WHERE singleton").format(names("deferred")), [new_budget, new_planner])
            elif was == "deferred":
                lock_base_tables(conn, oids, "ACCESS EXCLUSIVE", lock_wait)
                deferred.refresh(conn, name)
                _reinstall(conn, record, system, resolved, {**params, "refresh": "immediate"}, oids, deferring=False)
                deferred.drop_state(conn, names, _deferred_tables(system, resolved, name, params))
                catalog.set_params(conn, name, {k: v for k, v in record.params.items() if k != "refresh"},
                                   [o for o in record.objects if o != stale])
            figures = {"refresh": mode}
            if mode == "deferred":
                figures.update({k: v for k, v in deferred.figures(conn, name)[0].items() if k in ("budget_ms", "planner")})
            return figures


def _state_params(conn: psycopg.Connection, system: System, name: str) -> dict[str, Any]:
    """The options a system keeps in the view's state row (IVMε's epsilon), read back from it."""
    kept = [o.name for o in system.options if o.in_state]
    state = common.read_state(conn, name) if kept else {}
    return {k: state[k] for k in kept}


# --- reading ------------------------------------------------------------------------------------


@dataclass
class ViewSummary:
    name: str
    view: str
    system: str
    params: dict[str, Any]
    count: int | None
    definition: str


def list_views(*, target: Target = None) -> list[ViewSummary]:
    with session(target) as conn, snapshot(conn):
        out = []
        for record in catalog.all_views(conn):
            owners.pin(conn, record)
            system = registry.get(record.system)
            dropping = _dropping(conn, record.view_schema, record.name)
            out.append(ViewSummary(
                name=record.name, view=f"{record.view_schema}.{record.name}", system=record.system,
                params={**record.params, **_state_params(conn, system, record.name)},
                count=None if dropping else common.read_state(conn, record.name)["count"],
                definition=("(being dropped: run pgivm drop again) " if dropping else "") + record.definition))
        return out


@dataclass
class StatusReport:
    name: str
    view: str
    system: str
    definition: str
    count: int | None
    params: dict[str, Any]
    figures: dict[str, Any]  # the system's key figures
    labels: dict[str, str]  # their headings in a table
    sections: list[Section]  # the system's tables (IVMε: heavy values per relation)
    tables: list[dict[str, Any]] = field(default_factory=list)  # every state table: rows, bytes
    problems: list[str] = field(default_factory=list)  # what changed on the base tables (see verify)


def status(name: str, *, target: Target = None) -> StatusReport:
    """The system's figures, the sizes of every state table, and drift of the base tables."""
    with session(target) as conn, snapshot(conn):
        record = _open(conn, name)
        _check_not_dropping(conn, record.view_schema, name)
        system = registry.get(record.system)
        reported = system.status(conn, name)
        figures, sections = dict(reported.figures), list(reported.sections)
        if deferred.is_deferred(record.params):
            more, logs = deferred.figures(conn, name)
            figures.update(more)
            sections += logs
        return StatusReport(
            name=name, view=f"{record.view_schema}.{name}", system=record.system, definition=record.definition,
            count=common.read_state(conn, name)["count"],
            params={**record.params, **_state_params(conn, system, name)},
            figures=figures, labels={k: reported.label(k) for k in figures},
            sections=sections, tables=common.table_sizes(conn, name),
            problems=catalog.base_table_problems(conn, name))


def tables_of(name: str, *, target: Target = None) -> list[TableRef]:
    """The view's base tables as they are named now."""
    with session(target) as conn, snapshot(conn):
        return list(dict.fromkeys(_pinned(conn, _open(conn, name)).tables.values()))


def _pinned(conn: psycopg.Connection, record: catalog.ViewRecord) -> ResolvedView:
    """The view's query over its base tables found by oid, named as they are now."""
    query = record.query
    resolved = resolve(conn, query, record.table_oids)
    if isinstance(query, ConjunctiveQuery):
        return resolved
    return ResolvedView(
        query=type(query)(query.r, query.s, query.t, query.aggregate, query.output_name, record.definition),
        tables=resolved.tables, variable_types=resolved.variable_types, column_types=resolved.column_types,
        base=resolved.base, attnums=resolved.attnums)


def _maintained(conn: psycopg.Connection, view_schema: str, name: str) -> Any:
    """The triangle count a view shows; for a conjunctive query, its number of rows."""
    _check_not_dropping(conn, view_schema, name)
    record = catalog.get(conn, name)
    if record.model_version == catalog.CQ_MODEL_VERSION:
        return common.read_state(conn, name)["count"]
    # Not prepared: a view of the same name may come back with other columns (another system).
    row = conn.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(view_schema, name)), prepare=False).fetchone()
    return row[0] if row else None


def _dropping(conn: psycopg.Connection, view_schema: str, name: str) -> bool:
    """A drop that stopped maintenance (its first step) but could not finish: the user view is gone."""
    found = conn.execute("SELECT pg_catalog.to_regclass(%s) IS NULL",
                         [sql.Identifier(view_schema, name).as_string(conn)]).fetchone()
    return bool(found and found[0])


def _check_not_dropping(conn: psycopg.Connection, view_schema: str, name: str) -> None:
    if _dropping(conn, view_schema, name):
        raise PgivmError(f"view {name} is no longer maintained: a drop stopped it and could not finish",
                         f"run `pgivm drop {name}` again")


# --- verify -------------------------------------------------------------------------------------


@dataclass
class VerifyReport:
    name: str
    maintained: int | None
    recount: int | None
    failures: list[common.CheckFailure] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.maintained == self.recount and not self.failures


def verify(name: str, *, strict: bool = False, target: Target = None) -> VerifyReport:
    """Recount the view in plain SQL and check every invariant of its system against the base tables.

    No table is locked: one REPEATABLE READ snapshot sees the base tables and the state as the
    last committed writer left them. ``strict`` also demands what holds only right after a build
    or a rebalancing (IVMε: the strict partition, heavy iff degree >= N^ε).
    """
    started = time.perf_counter()
    with session(target) as conn:
        deferring = _is_deferred(conn, name)
        retries = VERIFY_RETRIES if conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE else 0
        for attempt in range(retries + 1):
            try:
                with snapshot(conn):
                    maintained, recount, failures = _verify_in_snapshot(conn, name, strict, deferring)
                break
            except (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected):
                # a deferred view refreshed by another session since this snapshot was taken
                if attempt == retries:
                    raise PgivmError(f"could not verify {name}: other sessions kept refreshing it",
                                     "retry when fewer sessions read it") from None
                time.sleep(random.uniform(0.01, 0.05) * (attempt + 1))
    return VerifyReport(name, maintained, recount, failures, time.perf_counter() - started)


VERIFY_RETRIES = 20  # a deferred view's refresh in another session since our snapshot: 40001, retried


def _verify_in_snapshot(conn: psycopg.Connection, name: str, strict: bool,
                        deferring: bool) -> tuple[Any, Any, list[common.CheckFailure]]:
    record = _open(conn, name)
    if deferring:  # what is pending first, in this snapshot: the state then reflects the base tables
        deferred.refresh(conn, name)
    problems = catalog.base_table_problems(conn, name)
    failures = [common.CheckFailure("base_tables", [(p,) for p in problems])] if problems else []
    maintained = _maintained(conn, record.view_schema, name)
    try:
        resolved = _pinned(conn, record)
    except PgivmError as err:  # a base table or a column it reads is gone: say so, recount nothing
        failures.append(common.CheckFailure("base_tables", [(str(err),)]))
        return maintained, None, failures
    if isinstance(resolved.query, ConjunctiveQuery):
        shown = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(
            sql.Identifier(record.view_schema, name)), prepare=False).fetchone()
        maintained = int(shown[0]) if shown else 0
        compare = getattr(registry.get(record.system), "compare_result", None)
        recount, differences = (compare(conn, resolved, name) if compare is not None
                                else _compare_result(conn, record, resolved))
        if differences:
            failures.append(common.CheckFailure("result_equals_plain_sql", differences))
    else:
        recount = _recount(conn, record, resolved)
    system = registry.get(record.system)
    failures += system.verify(conn, resolved, name, strict)
    unsafe = owners.problems(conn, record, lock=False)  # what other roles would refuse to use
    if unsafe:
        failures.append(common.CheckFailure("state_safe_for_other_roles", [(p,) for p in unsafe]))
    if deferring:
        params = {**_params(system, {}), **record.params, **_state_params(conn, system, name)}
        failures += common.run_checks(conn, deferred.checks(  # type: ignore[arg-type]
            common.Names.of(name), _deferred_tables(system, resolved, name, params)))
    return maintained, recount, failures


def _is_deferred(conn: psycopg.Connection, name: str) -> bool:
    migrate.upgrade(conn)
    row = conn.execute("SELECT params->>'refresh' FROM pgivm_catalog.views WHERE name = %s", [name]).fetchone()
    return bool(row) and row[0] == "deferred"  # type: ignore[index]


def calibrate(name: str, *, ladder: tuple[int, ...] | None = None, repeats: int = 3, target: Target = None,
              progress: Any = None) -> list[Any]:
    """Measure a deferred view's cost function per base table (``pgivm.deferred.calibrate``) and
    store the fits, which the planner uses from the next write on. Writers wait meanwhile."""
    from pgivm.deferred import calibrate as measuring

    if repeats < 1 or (ladder is not None and (not ladder or min(ladder) < 1)):
        raise PgivmError("--repeats and every --ladder size must be positive integers")
    with session(target) as conn:
        migrate.upgrade(conn)
        with transaction(conn):
            record = _open(conn, name)
            if not deferred.is_deferred(record.params):
                raise PgivmError(f"view {name} is immediate: calibrate measures the cost functions of a deferred view",
                                 "create it with --refresh deferred")
            fixed_search_path(conn)
            system = registry.get(record.system)
            resolved = _pinned(conn, record)
            params = {**_params(system, {}), **record.params, **_state_params(conn, system, name)}
            tables = _deferred_tables(system, resolved, name, params)
            bases = {t.number: resolved.base_of(t.table) for t in tables}
            return measuring.calibrate(conn, name, tables, bases, ladder or measuring.LADDER, repeats, progress=progress)


def worker(*, target: str | None = None, poll: float = 1.0, stop: Any = None, report: Any = None) -> Any:
    """Serve every deferred view of the database (``pgivm.deferred.worker``) until ``stop`` (a
    threading.Event) is set; returns what it did. ``target`` is a DSN: the worker keeps two
    connections of its own."""
    from pgivm.connection import resolve_dsn
    from pgivm.deferred import worker as serving

    if not poll > 0:
        raise PgivmError(f"--poll must be a positive number of seconds, got {poll}")
    dsn = resolve_dsn(target)
    with session(dsn) as conn:
        migrate.upgrade(conn)
    return serving.serve(dsn, poll=poll, stop=stop, report=report)


@dataclass
class RefreshResult:
    name: str
    applied: int  # log rows applied
    seconds: float


def refresh(name: str, *, target: Target = None) -> RefreshResult:
    """Apply every pending change of a deferred view (what a read of it does first)."""
    started = time.perf_counter()
    with session(target) as conn:
        migrate.upgrade(conn)
        with transaction(conn):
            record = _open(conn, name)
            if not deferred.is_deferred(record.params):
                raise PgivmError(f"view {name} is immediate: every write maintains it, there is nothing to refresh",
                                 "only a view created with --refresh deferred has pending changes")
            fixed_search_path(conn)
            applied = deferred.refresh(conn, name)
    return RefreshResult(name, applied, time.perf_counter() - started)


def _recount(conn: psycopg.Connection, record: catalog.ViewRecord, resolved: ResolvedView) -> int | None:
    """The view's result recomputed in plain SQL from the base tables pinned by oid (never from the
    stored SQL text, whose names the caller's search_path could lead elsewhere)."""
    row = conn.execute(common.count_query(resolved)).fetchone()
    count = int(row[0]) if row else 0
    return None if count == 0 and record.query.aggregate == "sum" else count  # sum(1) of no rows is NULL


def _float_key(value: float) -> float | str:
    """A float8 rounded to 10 digits for bag comparison; NaN as one value (it never equals itself)."""
    return "NaN" if value != value else float(f"{value:.9e}")


def _floats_agree(a: float, b: float) -> bool:
    """Equal to 1e-9 relative; NaN agrees with NaN, and an infinity only with itself."""
    import math

    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def _compare_result(conn: psycopg.Connection, record: catalog.ViewRecord,
                    resolved: ResolvedView) -> tuple[int, list[tuple[Any, ...]]]:
    """The view's rows against the plain SQL of its model (``pgivm.query.plain``), as bags: exactly,
    except float8 values, which agree to 1e-9 relative (sums in another order round otherwise)."""
    from pgivm.query.plain import plain_query

    view = sql.Identifier(record.view_schema, record.name)
    recount_query = plain_query(resolved)
    row = conn.execute(sql.SQL("SELECT count(*) FROM ({}) AS q").format(recount_query)).fetchone()
    recount = int(row[0]) if row else 0
    types = resolved.output_types or {}
    if _uses_cofactor(resolved.query) or "double precision" in types.values() or "real" in types.values():
        from collections import Counter

        def normalized(rows: list[Any]) -> Counter[tuple[Any, ...]]:
            return Counter(tuple(_float_key(v) if isinstance(v, float) else v for v in r) for r in rows)

        mine = conn.execute(sql.SQL("SELECT * FROM {}").format(view), prepare=False).fetchall()
        theirs = conn.execute(recount_query, prepare=False).fetchall()
        if normalized(mine) == normalized(theirs):
            return recount, []
        # rounding at a digit boundary can split equal values: pair the rows up by their exact columns
        def key(r: Any) -> tuple[Any, ...]:
            return tuple(v for v in r if not isinstance(v, float))
        left, right = sorted(mine, key=repr), sorted(theirs, key=repr)
        by_key: dict[tuple[Any, ...], list[Any]] = {}
        for r in right:
            by_key.setdefault(key(r), []).append(r)
        differences = []
        for r in left:
            candidates = by_key.get(key(r), [])
            match = next((c for c in candidates if all(
                _floats_agree(a, b) if isinstance(a, float) and isinstance(b, float) else a == b
                for a, b in zip(r, c))), None)
            if match is None:
                differences.append(("view", *r))
            else:
                candidates.remove(match)
        differences += [("plain sql", *r) for rs in by_key.values() for r in rs]
        return recount, differences[:20]
    query = sql.SQL("(SELECT 'view' AS side, * FROM {v} EXCEPT ALL SELECT 'view', * FROM ({p}) AS q) UNION ALL "
                    "(SELECT 'plain sql', * FROM ({p}) AS q EXCEPT ALL SELECT 'plain sql', * FROM {v}) LIMIT 20").format(
        v=view, p=recount_query)
    return recount, [tuple(r) for r in conn.execute(query, prepare=False).fetchall()]


def explain(name: str, *, target: Target = None) -> list[str]:
    """How the view is maintained, in lines: the system's own description (F-IVM: the variable
    order and the view tree, each view with its keys, payload ring and rows)."""
    with session(target) as conn, snapshot(conn):
        record = _open(conn, name)
        system = registry.get(record.system)
        lines = [f"view {record.view_schema}.{name}: system {system.name} ({system.summary})",
                 f"definition: {record.definition}"]
        explain_ = getattr(system, "explain", None)
        if explain_ is None:
            return lines
        fixed_search_path(conn)
        return lines + explain_(conn, _pinned(conn, record), name, {**record.params, **_state_params(conn, system, name)})


def regress(name: str, target_column: str, *, target: Target = None) -> Any:
    """Fit a linear regression of ``target_column`` on the other columns of a ``cofactor(...)``
    view, from its maintained matrix (numpy solves the normal equations; the join is not read).
    Returns a ``pgivm.regress.Regression``."""
    import numpy as np

    from pgivm.regress import solve

    with session(target) as conn, snapshot(conn):
        record = _open(conn, name)
        query = record.query
        if not _uses_cofactor(query):
            raise PgivmError(f"view {name} has no cofactor(...) aggregate", "create it as SELECT cofactor(x1, ..., xm) FROM ...")
        if query.group_by:
            raise PgivmError(f"view {name} has a cofactor per group", "regress fits views without GROUP BY")
        _check_not_dropping(conn, record.view_schema, name)
        (cofactor,) = [a for a in query.aggregates if a.function == "cofactor"]
        names = [str(f.column) for f in cofactor.features]
        matrix = np.zeros((len(names) + 1, len(names) + 1))
        for i, j, value in conn.execute(sql.SQL("SELECT i, j, value FROM {}").format(
                sql.Identifier(record.view_schema, name)), prepare=False):
            matrix[i, j] = value
    return solve(matrix, names, target_column)


# --- a system's own actions ---------------------------------------------------------------------


def action(name: str, action_name: str, *, target: Target = None, lock_wait: float = LOCK_WAIT_S,
           **options: Any) -> dict[str, Any]:
    """Run one of the view's system's actions (IVMε: ``rebalance``, ``alter`` with ``epsilon``)
    in one transaction; returns the system's figures after it."""
    with session(target) as conn:
        migrate.upgrade(conn)
        with transaction(conn):
            record = _open(conn, name)
            system = registry.get(record.system)
            found = next((a for a in system.actions if a.name == action_name), None)
            if found is None:
                have = ", ".join(a.name for a in system.actions) or "none"
                raise PgivmError(f"view {name!r} uses system {system.name}, which has no {action_name}",
                                 f"its actions: {have}")
            known = {o.name: o for o in found.options}
            stray = [k for k, v in options.items() if v is not None and k not in known]
            if stray:
                raise PgivmError(f"{action_name} takes no {', '.join(stray)}")
            values = {k: o.validate(options.get(k)) for k, o in known.items()}
            missing = [o.flag for o in found.options if values[o.name] is None]
            if missing:
                raise PgivmError(f"{action_name} needs {', '.join(missing)}")
            fixed_search_path(conn)
            if found.locks_state:
                # The view's lock: we wait for the writer (or reader) holding it, with retries, and
                # writers of an immediate view queue behind us; no base-table lock, so no cycle with
                # a writer is possible. A deferred view's writers never take it.
                names = common.Names.of(name)
                with_lock_retries(conn, f"the state of view {name}", lambda attempt: conn.execute(
                    sql.SQL("SELECT FROM {} WHERE singleton FOR NO KEY UPDATE").format(names("state"))), lock_wait)
            # An action may also hand back rows to show ("columns" and "rows": sample --fresh).
            produced = found.run(conn, name, values) or {}
            return {**system.status(conn, name).figures, "count": common.read_state(conn, name)["count"], **produced}


# --- Spark (optional: pip install 'pgivm[spark]') ----------------------------------------------


def _same_bag(mine: list[tuple[Any, ...]], theirs: list[tuple[Any, ...]]) -> bool:
    """Rows equal as bags, numbers compared as floats to 1e-9 relative (Spark's avg is a double,
    PostgreSQL's numeric; sums of floats differ in their last bits with the order of addition)."""
    def norm(row: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(float(v) if isinstance(v, (int, float)) or type(v).__name__ == "Decimal" else v for v in row)

    left, right = sorted((norm(r) for r in mine), key=repr), sorted((norm(r) for r in theirs), key=repr)
    if len(left) != len(right):
        return False
    unmatched = list(right)
    for row in left:
        match = next((i for i, other in enumerate(unmatched) if all(
            (a is None and b is None) or (isinstance(a, float) and isinstance(b, float) and _floats_agree(a, b)) or a == b
            for a, b in zip(row, other))), None)
        if match is None:
            return False
        unmatched.pop(match)
    return True


def _validate_spark_cq(conn: psycopg.Connection, record: catalog.ViewRecord, master: str) -> "SparkValidateReport":
    """A join-aggregate recomputed by Spark (``pgivm.spark.validate.cq_result``) against the view's
    rows; a listing's row count against the flat join's. ``maintained``/``spark``: row counts, or
    for a listing the join sizes; equal only when the rows are."""
    from pgivm.spark.validate import cq_result

    fixed_search_path(conn)
    resolved = _pinned(conn, record)
    rows, seconds = cq_result(conn, resolved, master=master)
    view = sql.Identifier(record.view_schema, record.name)
    if resolved.query.is_listing:
        maintained = common.read_state(conn, record.name)["count"]
        return SparkValidateReport(name=record.name, maintained=maintained, spark=rows[0][0], seconds=seconds)
    mine = [tuple(r) for r in conn.execute(sql.SQL("SELECT * FROM {}").format(view), prepare=False).fetchall()]
    same = _same_bag(mine, rows)
    return SparkValidateReport(name=record.name, maintained=len(mine), spark=len(rows) if same else -len(rows),
                               seconds=seconds)


def load(
    table: str,
    path: str,
    columns: list[str],
    *,
    fmt: str = "csv",
    master: str = "local[*]",
    symmetric: bool = False,
    drop_self_loops: bool = False,
    distinct: bool = False,
    header: bool = False,
    target: Target = None,
) -> Any:
    """Append a file (csv, tsv, SNAP edges, parquet) to ``table`` through Spark and JDBC, atomically.

    Returns a ``pgivm.spark.load.LoadResult``. ``target`` may be a connection: Spark writes over
    JDBC to the same database, and the final move runs in that connection's transaction.
    """
    from pgivm.spark import load as spark_load

    return spark_load.load(table, path, columns, fmt=fmt, master=master, symmetric=symmetric,
                           drop_self_loops=drop_self_loops, distinct=distinct, header=header, target=target)


@dataclass
class SparkValidateReport:
    name: str
    maintained: int | None
    spark: int | None
    seconds: float

    @property
    def ok(self) -> bool:
        return self.maintained == self.spark


def validate_spark(name: str, *, master: str = "local[*]", target: Target = None,
                   lock_wait: float = LOCK_WAIT_S) -> SparkValidateReport:
    """Recount the view's join in Spark from the base tables (JDBC), independently of any system's
    code, and compare with the maintained count.

    Spark reads over connections of its own, which cannot share our snapshot: the base tables are
    locked against writers (SHARE, taken with retries like create's) while Spark reads them, so both
    counts see the same data. Only for count(*)-style views (sum(1), count(*), count(1)): a count of
    a join column equals count(*) because NULL join values never join.
    """
    from pgivm.spark.validate import spark_recount

    with session(target) as conn:
        migrate.upgrade(conn)
        with transaction(conn):
            record = _open(conn, name)
            lock_base_tables(conn, sorted(set(record.table_oids.values())), "SHARE", lock_wait)
            if record.model_version == catalog.CQ_MODEL_VERSION:
                return _validate_spark_cq(conn, record, master)
            fixed_search_path(conn)
            resolved = _pinned(conn, record)
            value = _maintained(conn, record.view_schema, name)
            recount = spark_recount(conn, resolved, master=master)
    spark_count: int | None = recount.count
    if value is None and spark_count == 0:
        spark_count = None  # sum(1) over an empty join is NULL
    return SparkValidateReport(name=name, maintained=value, spark=spark_count, seconds=recount.seconds)

