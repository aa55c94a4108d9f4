"""The public API of pgivm. Each function is one CLI command; the CLI only parses and prints.

Each function's docstring opens with a one-paragraph summary, which is also the help of its
command in ``pgivm --help`` (where a ``parameter`` that has a flag reads as the flag).

Every function takes ``target``: a DSN string, an open psycopg connection (used as is, inside a
transaction or savepoint of its own), or None to resolve the database the way the CLI does
(``PGIVM_DSN``, the libpq ``PG*`` variables, else the embedded server).
Changes run in one transaction: on any error nothing is left half-installed.

No maintenance system is named here: each one lives in ``pgivm/systems/`` and is found through
``pgivm.systems.registry``; its options, actions and status arrive as data. A command on an
existing view opens it once (``pgivm.installed``); what goes into and out of the database is
``pgivm.install``; the Spark commands live in ``pgivm.spark.commands``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import sql

from pgivm import deferred, derived, install, owners
from pgivm.catalog import migrate
from pgivm.catalog import views as catalog
from pgivm.compare import compare_result, recount as recount_triangle
from pgivm.connection import operator_path
from pgivm.errors import LockDenied, NeedsColumns, PgivmError, UnsupportedQuery
from pgivm.install import template_version
from pgivm.installed import InstalledView, open_view, system_params
from pgivm.query.analysis.three_relations import explain_lines
from pgivm.query.cq import ConjunctiveQuery
from pgivm.query.inline import name_columns, renamed_outputs
from pgivm.query.model import TableRef
from pgivm.query.parse import parse_query
from pgivm.query.resolve import ResolvedView, column_names, resolve, view_definition
from pgivm.spark.commands import SparkValidateReport, load, validate_spark
from pgivm.systems import common, registry
from pgivm.systems.base import Section, System
from pgivm.transactions import (
    LOCK_WAIT_S,
    Target,
    fixed_search_path,
    lock_base_tables,
    read_committed,
    session,
    snapshot,
    transaction,
    with_lock_retries,
)

__all__ = [
    "LOCK_WAIT_S", "CreateResult", "InitResult", "RefreshResult", "SparkValidateReport", "StatusReport", "UpgradeResult",
    "VerifyReport", "ViewSummary", "action", "alter_refresh", "calibrate", "create", "drop", "explain", "init",
    "list_views", "load", "parse", "refresh", "regress", "status", "tables_of", "template_version", "upgrade",
    "validate_spark", "verify", "worker",
]


@contextmanager
def _changing(target: Target) -> Iterator[psycopg.Connection]:
    """A command that changes the database: the catalog brought up to date, then one transaction."""
    with session(target) as conn:
        migrate.upgrade(conn)
        with transaction(conn):
            yield conn


@contextmanager
def _reading(target: Target) -> Iterator[psycopg.Connection]:
    """A command that reads: one REPEATABLE READ snapshot (``pgivm.transactions.snapshot``)."""
    with session(target) as conn, snapshot(conn):
        yield conn


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
    """Create or upgrade the pgivm catalog (also done by create)."""
    with session(target) as conn:
        applied = [f"{m.version:04d}_{m.name}" for m in migrate.upgrade(conn)]
        with snapshot(conn):
            guards = conn.execute(
                "SELECT count(*) = 3 FROM pg_catalog.pg_event_trigger WHERE evtname IN "
                "('pgivm_ddl_command_end', 'pgivm_sql_drop', 'pgivm_trust_changed') AND evtenabled <> 'D'").fetchone()
            outdated = [r.name for r in catalog.all_views(conn) if r.template_version != template_version()]
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
    counts: str = "count"  # what ``count`` is: the view's one value ("count") or its number of rows ("rows")


def _choose_system(name: str | None, query: ConjunctiveQuery, resolved: ResolvedView | None = None) -> System:
    """The system asked for, if it accepts the query; else the first in the registry that does
    (with ``resolved``, also given its columns' types)."""
    if name is not None:
        system = registry.get(name)
        reason = _refusal(system, query, resolved)
        if reason:
            raise UnsupportedQuery(f"system {system.name} cannot maintain this query: {reason}")
        return system
    refusals: dict[str, list[str]] = {}
    for system in registry.tried(query):
        reason = _refusal(system, query, resolved)
        if reason is None:
            return system
        refusals.setdefault(reason, []).append(system.name)
    line = "; ".join(f"{reason} [{', '.join(names)}]" for reason, names in refusals.items())
    if len(line) > REFUSAL_WIDTH:  # one cause, the general fallback's; each system says its own with --system
        fallback = next((r for r, names in refusals.items() if "first-order" in names), next(iter(refusals)))
        line = f"{fallback} [{', '.join(refusals[fallback])}]; no other system takes it either (--system NAME says why)"
    raise UnsupportedQuery(line)


def _refusal(system: System, query: ConjunctiveQuery, resolved: ResolvedView | None) -> str | None:
    reason = system.accepts(query)
    if reason is None and resolved is not None and system.accepts_types is not None:
        reason = system.accepts_types(resolved)
    return reason


REFUSAL_WIDTH = 200


def parse(definition: Any, system: str | None = None, columns_of: Any = None,
          definition_of: Any = None, name: str | None = None) -> tuple[System, ConjunctiveQuery]:
    """The system that will maintain ``definition`` and the query it receives, or a one-line
    refusal (unsupported SQL, or no system accepts it: each system's reason). No database needed,
    except for ``SELECT *`` (``columns_of``: a table -> its column names). ``name``: the view's,
    whose state schema keeps its tables of constant rows (generate_series, VALUES)."""
    cq = parse_query(_as_sql_text(definition), columns_of, definition_of,
                     **({"static_schema": common.state_schema_for(name)} if name else {}))
    return _choose_system(system, cq), cq


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


def _parse_for_create(text: str, system: str | None, target: Target, columns: list[str] | None = None,
                      name: str | None = None) -> tuple[System, ConjunctiveQuery]:
    """parse(), reading the tables' columns from the database where the query needs them, and the
    definitions of the plain views it reads (which are inlined: their tables are the base tables).
    ``columns``: names for the view's first columns (``name_columns``; over ``SELECT *``, the
    parsed outputs renamed)."""
    named = name_columns(text, columns) if columns else text
    if named is not None:
        text, columns = named, None
    with session(target) as conn, transaction(conn):
        try:
            chosen, query = parse(text, system, name=name)
            views = any(view_definition(conn, table) is not None for table in query.tables)
        except NeedsColumns:
            views = True
        if views:
            chosen, query = parse(text, system, lambda table: column_names(conn, table),
                                  lambda table: view_definition(conn, table), name=name)
        if columns:
            query = renamed_outputs(query, columns)
        if chosen.accepts_types is not None and not query.static and not query.derived:  # a choice that depends on
            # the columns' types (with tables of constant rows or derived tables, once create has made them)
            chosen = _choose_system(system, query, resolve(conn, query))
    names = [o.name for o in query.outputs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UnsupportedQuery(f"the view would have two columns named {twice[0]}: give each output its own "
                               f"name (... AS {twice[0]}_2)")
    return chosen, query


def create(name: str, definition: Any, *, system: str | None = None, schema: str | None = None, target: Target = None,
           preprocess: str = "postgres", lock_wait: float = LOCK_WAIT_S, columns: list[str] | None = None,
           **options: Any) -> CreateResult:
    """Install a maintained view and build its state from the current data.

    The view is ``name``, its query ``definition``: SQL text or a SQLAlchemy ``Select``. ``system``
    picks the maintenance system (default: the first in the registry that accepts the query);
    ``options`` are that system's options (e.g. ``epsilon=0.25``; see ``pgivm create --help``).

    ``preprocess``: ``postgres`` builds the state with the plan's own SQL; a system may offer other
    builders (IVMε: ``spark``, which computes the state in Spark and writes it into a scratch schema
    committed on a side connection; a failed create drops it, a successful one drops it inside its
    own transaction, so if ``target`` is a connection in a transaction of yours that you roll back
    after a successful create, drop that schema yourself: its name is printed on stderr).

    ``lock_wait``: seconds to keep trying to lock the base tables against writers (one short attempt
    at a time, so a writer never waits long on us), after which create gives up with one line.

    ``columns``: names for the view's first columns, as ``CREATE VIEW name (a, b) AS`` gives them.
    """
    install.check_name(name)
    refresh = install.refresh_options(options)
    install.check_schema_name(schema)
    text = _as_sql_text(definition)
    chosen, query = _parse_for_create(text, system, target, columns, name)
    params = {**system_params(chosen, options), **({"refresh": "deferred"} if refresh else {})}
    if preprocess != "postgres" and preprocess not in chosen.builders:
        raise PgivmError(f"system {chosen.name} has no {preprocess!r} build",
                         f"choose one of: {', '.join(['postgres', *chosen.builders])}")
    builder = chosen.builders.get(preprocess)
    started = time.perf_counter()
    with session(target) as conn:
        migrate.upgrade(conn)
        with builder.around(conn) if builder else nullcontext() as context, read_committed(conn), transaction(conn):
            view_schema = install.preflight(conn, name, schema, deferring=refresh is not None)
            install.create_state_schema(conn, name, view_schema, query)
            resolved = resolve(conn, query, state_schema=common.state_schema_for(name))
            if (query.static or query.derived) and chosen.accepts_types is not None and _refusal(chosen, query, resolved):
                chosen = _choose_system(system, query, resolved)  # the tables' types, now that all exist
                params = {**system_params(chosen, options), **({"refresh": "deferred"} if refresh else {})}
            fixed_search_path(conn)
            with operator_path(conn, resolved.operator_schemas):  # an extension's type's equality (vector's)
                install.Install(conn, chosen, name, view_schema, resolved, params, refresh).run(lock_wait, builder, context)
                reported = chosen.status(conn, name)
                installed = open_view(conn, name)
                count = installed.count()
    return CreateResult(name=name, view=f"{view_schema}.{name}", system=chosen.name, params=params, count=count,
                        figures=reported.figures, headline={reported.label(k): reported.figures[k] for k in reported.headline},
                        seconds=time.perf_counter() - started, counts=_counts(installed))


# --- drop, upgrade, alter -----------------------------------------------------------------------


def drop(name: str, *, target: Target = None, lock_wait: float = LOCK_WAIT_S) -> None:
    """Remove a view, its triggers and its state.

    In two transactions. The first stops maintenance without touching a base table: the user view
    goes, and the view's trigger functions become no-ops (writers pick that up at their next
    statement, even from an older snapshot, and stop queueing on the view's lock). The second locks
    the base tables, which then come as easily as for ``create``, and removes the rest. If the
    second gives up (after ``lock_wait`` seconds), the view is no longer maintained, and ``drop``
    again finishes the job.
    (With a connection of yours inside a transaction, both run in it, as savepoints.)
    """
    with session(target) as conn:
        migrate.upgrade(conn)
        with transaction(conn):
            fixed_search_path(conn)
            install.stop_maintenance(conn, catalog.get(conn, name))
        with transaction(conn):
            record = catalog.get(conn, name)
            oids = install.existing(conn, catalog.base_table_oids(conn, name))
            # Dropping triggers needs ACCESS EXCLUSIVE: writers first finish, none deadlocks with us.
            try:
                lock_base_tables(conn, oids, "ACCESS EXCLUSIVE", lock_wait)
            except PgivmError as err:
                again = f"`pgivm drop {name}` again" + (" as the tables' owner or a superuser" if isinstance(err, LockDenied) else "")
                raise PgivmError(f"view {name} is no longer maintained (its view is dropped), but {err.message}",
                                 f"run {again} to remove its triggers and state") from None
            fixed_search_path(conn)
            install.remove(conn, record, oids, keep_state=False)
            catalog.delete(conn, name)


@dataclass
class UpgradeResult:
    name: str
    upgraded: bool  # False: its templates were current already
    template_version: str
    seconds: float
    rebuilt: bool = False  # its state laid out afresh and built from the base tables


def upgrade(name: str, *, force: bool = False, rebuild: bool = False, target: Target = None,
            lock_wait: float = LOCK_WAIT_S) -> UpgradeResult:
    """Reinstall a view's functions and triggers from the current SQL templates (state kept; done
    only if they changed, unless ``force``).

    The base tables are locked against writers meanwhile; the state's tables, and so the result,
    are kept. Where an earlier pgivm laid the state out otherwise, upgrade says so and changes
    nothing; ``rebuild`` then lays it out afresh and builds it from the base tables (name,
    definition, system, options, owner and the user view's grants stay).
    """
    started = time.perf_counter()
    version = template_version()
    with _changing(target) as conn:
        if not owners.may_replace(conn, catalog.get(conn, name)):  # (said so, not as the state's permission denied)
            raise PgivmError(f"upgrade of view {name} replaces its objects: only its owner or a superuser may",
                             "run it as the view's owner or as a superuser")
        view = open_view(conn, name, replacing_functions=True)
        if view.record.template_version == version and not (force or rebuild):
            return UpgradeResult(name, False, version, time.perf_counter() - started)
        if rebuild and view.deferred:
            raise PgivmError(f"view {name} is deferred: --rebuild builds only an immediate view's state",
                             f"pgivm alter {name} --refresh immediate, then upgrade --rebuild, then alter it back")
        oids = install.existing(conn, sorted(set(view.record.table_oids.values())))
        lock_base_tables(conn, oids, "ACCESS EXCLUSIVE", lock_wait)
        fixed_search_path(conn)
        try:
            install.reinstall(conn, view.record, view.system, view.resolved, view.params, oids, view.deferred, rebuild)
        except UnsupportedQuery as refused:
            raise PgivmError(f"view {name}: {refused.message}",
                             "this pgivm maintains such a view otherwise: drop it and create it again") from None
        except (psycopg.errors.UndefinedColumn, psycopg.errors.UndefinedTable) as err:
            if rebuild:
                raise
            raise PgivmError(f"view {name}: an earlier pgivm laid its state out otherwise ({err.diag.message_primary})",
                             f"`pgivm upgrade {name} --rebuild` lays it out afresh and builds it from the base "
                             "tables; writers wait meanwhile") from None
        catalog.set_template_version(conn, name, version)
    return UpgradeResult(name, True, version, time.perf_counter() - started, rebuild)


def alter_refresh(name: str, *, refresh: str | None = None, budget: Any = None, planner: str | None = None,
                  target: Target = None, lock_wait: float = LOCK_WAIT_S) -> dict[str, Any]:
    """Switch a view between immediate and deferred refresh, or change a deferred view's budget or
    planner, in one transaction. Going immediate applies what is pending first. Writers wait while
    the functions change (the base tables are locked against them)."""
    with _changing(target) as conn:
        view = open_view(conn, name)
        was = "deferred" if view.deferred else "immediate"
        mode = deferred.REFRESH.validate(refresh) if refresh is not None else was
        if mode == "immediate" and (budget is not None or planner is not None):
            raise PgivmError("--budget and --planner apply to deferred views only", "add --refresh deferred")
        new_budget = deferred.BUDGET.validate(budget) if budget is not None else None
        new_planner = deferred.PLANNER.validate(planner) if planner is not None else None
        fixed_search_path(conn)
        if mode == "deferred" and was == "immediate":
            _make_deferred(view, new_budget, new_planner, lock_wait)
        elif mode == "deferred":
            conn.execute(sql.SQL("UPDATE {} SET budget_ms = coalesce(%s, budget_ms), planner = coalesce(%s, planner) "
                                 "WHERE singleton").format(view.names("deferred")), [new_budget, new_planner])
        elif was == "deferred":
            _make_immediate(view, lock_wait)
        figures = {"refresh": mode}
        if mode == "deferred":
            figures.update({k: v for k, v in deferred.figures(conn, name)[0].items() if k in ("budget_ms", "planner")})
        return figures


def _stale_object(view: InstalledView) -> dict[str, Any]:
    return {"kind": "view", "schema": view.view_schema, "name": deferred.stale_name(view.name)}


def _make_deferred(view: InstalledView, budget: float | None, planner: str | None, lock_wait: float) -> None:
    """An immediate view wrapped in the deferred layer. Reinstalled, not only wrapped: a system's
    SQL may depend on the mode (first-order then reads base tables less what is pending)."""
    conn, params = view.conn, {**view.params, "refresh": "deferred"}
    tables = view.deferred_tables(params)
    oids = install.existing(conn, sorted(set(view.record.table_oids.values())))
    lock_base_tables(conn, oids, "ACCESS EXCLUSIVE", lock_wait)
    with owners.acting_as(conn, view.record):
        for statement in deferred.state_plan(view.names, tables, budget if budget is not None else deferred.BUDGET.default,
                                             planner or deferred.PLANNER.default):
            conn.execute(statement)
    install.reinstall(conn, view.record, view.system, view.resolved, params, oids, deferring=True)
    objects = [*view.record.objects[:1], _stale_object(view), *view.record.objects[1:]]
    catalog.set_params(conn, view.name, {**view.record.params, "refresh": "deferred"}, objects)


def _make_immediate(view: InstalledView, lock_wait: float) -> None:
    """A deferred view, everything pending applied, reinstalled without the deferred layer."""
    conn = view.conn
    oids = install.existing(conn, sorted(set(view.record.table_oids.values())))
    lock_base_tables(conn, oids, "ACCESS EXCLUSIVE", lock_wait)
    deferred.refresh(conn, view.name)
    tables = view.deferred_tables()
    install.reinstall(conn, view.record, view.system, view.resolved, {**view.params, "refresh": "immediate"}, oids,
                      deferring=False)
    deferred.drop_state(conn, view.names, tables)
    catalog.set_params(conn, view.name, {k: v for k, v in view.record.params.items() if k != "refresh"},
                       [o for o in view.record.objects if o != _stale_object(view)])


# --- reading ------------------------------------------------------------------------------------


@dataclass
class ViewSummary:
    name: str
    view: str
    system: str
    params: dict[str, Any]
    count: int | None
    definition: str
    counts: str = "count"  # what ``count`` is: the view's one value ("count") or its number of rows ("rows")


def list_views(*, target: Target = None) -> list[ViewSummary]:
    """List the maintained views."""
    with _reading(target) as conn:
        out = []
        for record in catalog.all_views(conn):
            view = open_view(conn, record.name)
            dropping = view.is_dropping
            out.append(ViewSummary(
                name=view.name, view=f"{view.view_schema}.{view.name}", system=view.system.name, params=view.shown_params,
                count=None if dropping else view.state_count(),
                definition=("(being dropped: run pgivm drop again) " if dropping else "") + record.definition,
                counts=_counts(view)))
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
    counts: str = "count"  # what ``count`` is (see ViewSummary)


def status(name: str, *, target: Target = None) -> StatusReport:
    """The system's figures (IVMε: epsilon, N, |D|, heavy values), state table sizes,
    base-table drift.

    Every state table with its rows and bytes; ``problems``: what changed on the base tables since
    the view was installed (as verify finds it)."""
    with _reading(target) as conn:
        view = open_view(conn, name)
        view.check_not_dropping()
        reported = view.system.status(conn, name)
        figures, sections = dict(reported.figures), list(reported.sections)
        figures.pop(_counts(view), None)  # shown once, as the report's count
        if view.deferred:  # the log rows its actions applied, not the triggers' count (theirs only log)
            figures.pop("updates_applied", None)
            more, logs = deferred.figures(conn, name)
            figures.update(more)
            sections += logs
        return StatusReport(
            name=name, view=f"{view.view_schema}.{name}", system=view.system.name, definition=view.record.definition,
            count=view.state_count(), params=view.shown_params,
            figures=figures, labels={k: reported.label(k) for k in figures},
            sections=sections, tables=common.table_sizes(conn, name),
            problems=catalog.base_table_problems(conn, name), counts=_counts(view))


def _counts(view: InstalledView) -> str:
    """What a view's count figure counts: its one value (a triangle count) or its rows."""
    return "count" if view.one_value else "rows"


def tables_of(name: str, *, target: Target = None) -> list[TableRef]:
    """The view's base tables as they are named now."""
    with _reading(target) as conn:
        return list(dict.fromkeys(open_view(conn, name).resolved.tables.values()))


def explain(name: str, *, target: Target = None) -> list[str]:
    """How a view is maintained (F-IVM: the variable order and the view tree, each view with its
    keys, payload ring and rows).

    In lines: the system's own description after the view's system and definition."""
    with _reading(target) as conn:
        view = open_view(conn, name)
        fixed_search_path(conn)
        lines = [f"view {view.view_schema}.{name}: system {view.system.name} ({view.system.summary})",
                 f"definition: {view.record.definition}", *_why(view.system, view.resolved),
                 *derived.explain(view.resolved),
                 *explain_lines(view.record.query.analysis.three_relations, view.system.name)]  # a count over three relations
        if view.system.explain is None:
            return lines
        return lines + view.system.explain(conn, view.resolved, name, view.shown_params)


def _why(chosen: System, resolved: ResolvedView) -> list[str]:
    """Why the default system for the query is the one it is: the systems are tried in the order of
    their expected speed (``registry.tried``), and each system before the first that accepts the
    query says why it does not."""
    refused: dict[str, list[str]] = {}  # a reason -> the systems that give it, said once
    order = registry.tried(resolved.query)
    for system in order:
        reason = _refusal(system, resolved.query, resolved)
        if reason is None:
            default = "the default for this query" if system is chosen else f"the default would be {system.name}"
            return [f"system: {chosen.name}, {default} (systems are tried fastest first: "
                    f"{', '.join(s.name for s in order)})", *_reasons(refused)]
        refused.setdefault(reason, []).append(system.name)
    return _reasons(refused)


def _reasons(refused: dict[str, list[str]]) -> list[str]:
    return [f"  not {', '.join(systems)}: {reason}" for reason, systems in refused.items()]


def regress(name: str, target_column: str, *, target: Target = None) -> Any:
    """Fit a linear regression from a ``cofactor(...)`` view's maintained matrix.

    The label is ``target_column``, the features the cofactor's other columns; numpy solves the
    normal equations, the join is not read. Returns a ``pgivm.regress.Regression``."""
    import numpy as np

    from pgivm.regress import solve

    with _reading(target) as conn:
        view = open_view(conn, name)
        query = view.record.query
        if not install.uses_cofactor(query):
            raise PgivmError(f"view {name} has no cofactor(...) aggregate", "create it as SELECT cofactor(x1, ..., xm) FROM ...")
        if query.group_by or query.group_computed:
            raise PgivmError(f"view {name} has a cofactor per group", "regress fits views without GROUP BY")
        view.check_not_dropping()
        (cofactor,) = [a for a in query.aggregates if a.function == "cofactor"]
        names = [str(f.column) for f in cofactor.features]
        matrix = np.zeros((len(names) + 1, len(names) + 1))
        for i, j, value in conn.execute(sql.SQL("SELECT i, j, value FROM {}").format(view.ident), prepare=False):
            matrix[i, j] = value
    return solve(matrix, names, target_column)


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


VERIFY_RETRIES = 20  # a deferred view's refresh in another session since our snapshot: 40001, retried


def verify(name: str, *, strict: bool = False, target: Target = None) -> VerifyReport:
    """Recount in plain SQL and check every invariant of the view's system.

    Both are checked against the base tables. No table is locked: one REPEATABLE READ snapshot
    sees the base tables and the state as the last committed writer left them. ``strict`` also
    demands what holds only right after a build or a rebalancing (IVMε: the strict partition,
    heavy iff degree >= N^ε).
    """
    started = time.perf_counter()
    with session(target) as conn:
        retries = VERIFY_RETRIES if conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE else 0
        for attempt in range(retries + 1):
            try:
                with snapshot(conn):
                    report = _verify_in_snapshot(open_view(conn, name), strict)
                break
            except (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected):
                # a deferred view refreshed by another session since this snapshot was taken
                if attempt == retries:
                    raise PgivmError(f"could not verify {name}: other sessions kept refreshing it",
                                     "retry when fewer sessions read it") from None
                time.sleep(random.uniform(0.01, 0.05) * (attempt + 1))
            except (psycopg.errors.UndefinedColumn, psycopg.errors.UndefinedTable) as err:
                if catalog.get(conn, name).template_version == template_version():
                    raise  # this pgivm's own layout: a bug, not an old view
                raise PgivmError(f"view {name}: an earlier pgivm laid its state out otherwise ({err.diag.message_primary})",
                                 f"`pgivm upgrade {name} --rebuild` lays it out afresh and builds it from the base "
                                 "tables; writers wait meanwhile") from None
    report.seconds = time.perf_counter() - started
    return report


def _verify_in_snapshot(view: InstalledView, strict: bool) -> VerifyReport:
    conn, name = view.conn, view.name
    if view.deferred:  # what is pending first, in this snapshot: the state then reflects the base tables
        deferred.refresh(conn, name)
    problems = catalog.base_table_problems(conn, name)
    failures = [common.CheckFailure("base_tables", [(p,) for p in problems])] if problems else []
    maintained = view.count()
    try:
        resolved = view.resolved
    except PgivmError as err:  # a base table or a column it reads is gone: say so, recount nothing
        failures.append(common.CheckFailure("base_tables", [(str(err),)]))
        return VerifyReport(name, maintained, None, failures)
    if not view.one_value:
        shown = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(view.ident), prepare=False).fetchone()
        maintained = int(shown[0]) if shown else 0
        recount, differences = (view.system.compare_result(conn, resolved, name) if view.system.compare_result
                                else compare_result(conn, view.record, resolved))
        if differences:
            shown = conn.execute(sql.SQL("SELECT * FROM {} LIMIT 0").format(view.ident), prepare=False).description
            failures.append(common.CheckFailure("result_equals_plain_sql", differences,
                                                tuple(c.name for c in shown or [])))
    else:
        recount = recount_triangle(conn, view.record, resolved)
    failures += common.collation_failures(conn, view.ident, resolved)
    failures += view.system.verify(conn, resolved, name, strict)
    failures += derived.checks(conn, resolved.query)
    unsafe = owners.problems(conn, view.record, lock=False)  # what other roles would refuse to use
    if unsafe:
        failures.append(common.CheckFailure("state_safe_for_other_roles", [(p,) for p in unsafe]))
    if view.deferred:
        failures += common.run_checks(conn, deferred.checks(view.names, view.deferred_tables()))  # type: ignore[arg-type]
    return VerifyReport(name, maintained, recount, failures)


# --- deferred views -----------------------------------------------------------------------------


@dataclass
class RefreshResult:
    name: str
    applied: int  # log rows applied
    seconds: float


def refresh(name: str, *, target: Target = None) -> RefreshResult:
    """Apply every pending change of a deferred view (as a read of it does first)."""
    started = time.perf_counter()
    with _changing(target) as conn:
        view = open_view(conn, name)
        if not view.deferred:
            raise PgivmError(f"view {name} is immediate: every write maintains it, there is nothing to refresh",
                             "only a view created with --refresh deferred has pending changes")
        fixed_search_path(conn)
        applied = deferred.refresh(conn, name)
    return RefreshResult(name, applied, time.perf_counter() - started)


def calibrate(name: str, *, ladder: tuple[int, ...] | None = None, repeats: int = 3, target: Target = None,
              progress: Any = None) -> list[Any]:
    """Measure a deferred view's cost per base table, f(k) = a·k + b ms, which its planner then
    uses (writers wait meanwhile).

    The fits (``pgivm.deferred.calibrate``) are stored, for the planner from the next write on, and
    returned."""
    from pgivm.deferred import calibrate as measuring

    if repeats < 1 or (ladder is not None and (not ladder or min(ladder) < 1)):
        raise PgivmError("--repeats and every --ladder size must be positive integers")
    with _changing(target) as conn:
        view = open_view(conn, name)
        view.require_deferred("calibrate measures the cost functions of a deferred view")
        fixed_search_path(conn)
        tables = view.deferred_tables()
        bases = {t.number: view.resolved.base_of(t.table) for t in tables}
        return measuring.calibrate(conn, name, tables, bases, ladder or measuring.LADDER, repeats, progress=progress)


def worker(*, target: str | None = None, poll: float = 1.0, stop: Any = None, report: Any = None) -> Any:
    """Take the actions of every deferred view of the database off the writers.

    Serves them (``pgivm.deferred.worker``) until ``stop`` (a threading.Event) is set; returns what
    it did. ``target`` is a DSN: the worker keeps two connections of its own."""
    from pgivm.connection import resolve_dsn
    from pgivm.deferred import worker as serving

    if not poll > 0:
        raise PgivmError(f"--poll must be a positive number of seconds, got {poll}")
    dsn = resolve_dsn(target)
    with session(dsn) as conn:
        migrate.upgrade(conn)
    return serving.serve(dsn, poll=poll, stop=stop, report=report)


# --- a system's own actions ---------------------------------------------------------------------


def action(name: str, action_name: str, *, target: Target = None, lock_wait: float = LOCK_WAIT_S,
           **options: Any) -> dict[str, Any]:
    """Run one of the view's system's actions (IVMε: ``rebalance``, ``alter`` with ``epsilon``)
    in one transaction; returns the system's figures after it."""
    with _changing(target) as conn:
        view = open_view(conn, name)
        found = next((a for a in view.system.actions if a.name == action_name), None)
        if found is None:
            have = ", ".join(a.name for a in view.system.actions) or "none"
            if action_name == "alter":  # every view's refresh can change, whatever its system
                given = ", ".join(f"--{k}" for k, v in options.items() if v is not None)
                raise PgivmError(f"view {name!r} uses system {view.system.name}, whose alter takes no {given or 'option'}",
                                 f"alter of this view changes {', '.join(o.flag for o in deferred.OPTIONS)}")
            raise PgivmError(f"view {name!r} uses system {view.system.name}, which has no {action_name}",
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
            with_lock_retries(conn, f"the state of view {name}", lambda first_ms, later_ms: conn.execute(
                sql.SQL("SELECT FROM {} WHERE singleton FOR NO KEY UPDATE").format(view.names("state"))), lock_wait)
        # An action may also hand back rows to show ("columns" and "rows": sample --fresh).
        produced = found.run(conn, name, values) or {}
        return {**view.system.status(conn, name).figures, "count": view.state_count(), **produced}
