"""The public API of pgivm. Each function is one CLI command; the CLI only parses and prints.

Every function takes ``target``: a DSN string, an open psycopg connection (used as is, inside a
transaction or savepoint of its own), or None to resolve the database the way the CLI does
(``PGIVM_DSN``, the libpq ``PG*`` variables, else the embedded server).
Changes run in one transaction: on any error nothing is left half-installed.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Union

import psycopg
from psycopg import sql

from pgivm.catalog import migrate
from pgivm.catalog import views as catalog
from pgivm.connection import connect
from pgivm.errors import PgivmError
from pgivm.query import parse_view_sql
from pgivm.query.model import TableRef
from pgivm.query.resolve import ResolvedView, resolve
from pgivm.strategies import STRATEGIES, common, ivme
from pgivm.strategies.common import Names

Target = Union[str, psycopg.Connection, None]

_MAX_NAME_BYTES = 40  # state objects are named pgivm_<name>_...; PostgreSQL truncates names at 63 bytes


@contextmanager
def _session(target: Target) -> Iterator[psycopg.Connection]:
    if isinstance(target, psycopg.Connection):
        yield target
    else:
        with connect(target, autocommit=True) as conn:  # every transaction explicit, as with a caller's
            yield conn


# Schemas pgivm owns or PostgreSQL reserves: a view there could be dropped along with them.
_RESERVED_SCHEMA = re.compile(r"^(pgivm(_.*)?|pg_.*|information_schema)$")

# Locks of create, drop, rebalance: each attempt waits at most this long, then the command lets go
# of every lock it holds, backs off and tries again, so that it never waits on a writer while that
# writer waits on it (which PostgreSQL would break by aborting one of the two after deadlock_timeout).
LOCK_ATTEMPT_MS = 100
LOCK_WAIT_S = 60.0  # the default budget of all attempts together


@contextmanager
def _transaction(conn: psycopg.Connection) -> Iterator[None]:
    """``conn.transaction()`` (a savepoint inside a caller's transaction) that, on success, puts back
    the settings pgivm changes inside it: transaction-local settings would outlive the savepoint."""
    with conn.transaction():
        saved = conn.execute("SELECT pg_catalog.current_setting('search_path'), pg_catalog.current_setting('row_security'), "
                             "pg_catalog.current_setting('lock_timeout')").fetchone()
        yield
        conn.execute("SELECT pg_catalog.set_config('search_path', %s, true), pg_catalog.set_config('row_security', %s, true), "
                     "pg_catalog.set_config('lock_timeout', %s, true)", saved)


def _fixed_search_path(conn: psycopg.Connection) -> None:
    """For the rest of the transaction: names resolve in pg_catalog only (pgivm's SQL qualifies
    everything else), and a row-level security policy is an error, not code run by this role."""
    conn.execute("SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true), "
                 "pg_catalog.set_config('row_security', 'off', true)")


def _with_lock_retries(conn: psycopg.Connection, what: str, take: Callable[[], None], budget: float) -> None:
    """Run ``take`` (statements that acquire locks) in a savepoint with a short lock_timeout; on a
    timeout roll back to the savepoint, releasing what it got, back off and retry, up to ``budget``
    seconds. A writer queued behind us therefore waits at most one attempt, never deadlocks."""
    previous = conn.execute("SELECT pg_catalog.current_setting('lock_timeout')").fetchone()[0]  # type: ignore[index]
    deadline = time.monotonic() + budget
    pause = 0.02
    try:
        while True:
            try:
                with conn.transaction():
                    conn.execute("SELECT pg_catalog.set_config('lock_timeout', %s, true)", [f"{LOCK_ATTEMPT_MS}ms"])
                    take()
                return
            except psycopg.errors.LockNotAvailable:
                if time.monotonic() + pause > deadline:
                    raise PgivmError(f"could not lock {what} within {budget:g} s: other transactions kept them busy",
                                     "retry when fewer transactions write them, or allow a longer wait (--lock-wait)") from None
                time.sleep(pause)
                pause = min(pause * 2, 0.5)
    finally:
        if conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS:
            conn.execute("SELECT pg_catalog.set_config('lock_timeout', %s, true)", [previous])


def _lock_base_tables(conn: psycopg.Connection, oids: list[int], mode: str, budget: float) -> None:
    """Lock the base tables (and their partitions) found by oid. Named from the oid now; LOCK runs
    no code of the table's owner, and a name that no longer leads to that oid is an error."""
    names = [conn.execute("SELECT pg_catalog.format('%%I.%%I', n.nspname, c.relname) FROM pg_catalog.pg_class c "
                          "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = %s", [oid]).fetchone()[0]  # type: ignore[index]
             for oid in oids]

    def take() -> None:
        for oid, name in zip(oids, names):
            conn.execute(sql.SQL("LOCK TABLE {} IN {} MODE").format(sql.SQL(name), sql.SQL(mode)))  # type: ignore[arg-type]
            found = conn.execute("SELECT pg_catalog.to_regclass(%s)::pg_catalog.oid::int8", [name]).fetchone()
            if not found or found[0] != oid:
                raise PgivmError(f"table {name} changed while pgivm was locking it", "retry the command")

    _with_lock_retries(conn, ", ".join(names), take, budget)


def _check_name(name: str) -> None:
    if not name or len(name.encode()) > _MAX_NAME_BYTES or re.search(r"[\x00-\x1f]", name):
        raise PgivmError(f"invalid view name {name!r}", f"use 1 to {_MAX_NAME_BYTES} bytes, no control characters")


def _check_epsilon(epsilon: float) -> None:
    if not 0.0 <= epsilon <= 1.0:
        raise PgivmError(f"epsilon must be between 0 and 1, got {epsilon}")


def init(target: Target = None) -> list[str]:
    """Create or upgrade the pgivm catalog; returns the names of the migrations applied now."""
    with _session(target) as conn:
        return [f"{m.version:04d}_{m.name}" for m in migrate.upgrade(conn)]


@dataclass
class CreateResult:
    name: str
    view: str
    strategy: str
    epsilon: float
    count: int | None
    db_size: int | None  # |D| for ivme
    seconds: float


def _pinned(conn: psycopg.Connection, record: catalog.ViewRecord) -> ResolvedView:
    """The view's query over its base tables found by oid, named as they are now."""
    query = record.query
    resolved = resolve(conn, query, record.table_oids)
    return ResolvedView(
        query=type(query)(query.r, query.s, query.t, query.aggregate, query.output_name, record.definition),
        tables=resolved.tables,
        variable_types=resolved.variable_types,
        column_types=resolved.column_types,
        base=resolved.base,
        attnums=resolved.attnums,
    )


def _check_postgres_accepts(conn: psycopg.Connection, sql_text: str) -> None:
    """The definition is also the recount of ``verify``: PostgreSQL itself must accept it."""
    try:
        with conn.transaction():
            conn.execute(f"EXPLAIN {sql_text}")  # type: ignore[arg-type]  # parsed and checked above
    except psycopg.Error as err:
        first = (str(err).strip().splitlines() or ["error"])[0]
        raise PgivmError(f"PostgreSQL rejects the view SQL: {first}") from None


def create(
    name: str,
    sql_text: str,
    *,
    epsilon: float = ivme.DEFAULT_EPSILON,
    strategy: str = ivme.NAME,
    schema: str | None = None,
    batch_threshold: int | None = None,
    target: Target = None,
    preprocess: str = "postgres",
    lock_wait: float = LOCK_WAIT_S,
) -> CreateResult:
    """Install a maintained view ``name`` for the query ``sql_text`` and build its state.

    ``batch_threshold``: statements changing more rows than this are maintained set at a time
    (default ``common.BATCH_THRESHOLD``); 0 sends every statement through the batch path.

    ``preprocess="spark"`` computes the state in Spark, which writes it into a scratch schema
    ``pgivm_stage_<hex>`` committed on a side connection. A failed create drops it; a successful
    one drops it inside its own transaction. So if ``target`` is a connection in a transaction of
    yours that you roll back after a successful create, drop that schema yourself (its name is
    printed on stderr).

    ``lock_wait``: seconds to keep trying to lock the base tables against writers (one short attempt
    at a time, so a writer never waits long on us), after which create gives up with one line.
    """
    _check_name(name)
    if schema is not None and _RESERVED_SCHEMA.match(schema):
        raise PgivmError(f"schema {schema} is reserved for pgivm or PostgreSQL", "choose another --schema")
    _check_epsilon(epsilon)
    if batch_threshold is not None and batch_threshold < 0:
        raise PgivmError(f"batch threshold must be 0 or more, got {batch_threshold}")
    if strategy not in STRATEGIES:
        raise PgivmError(f"unknown strategy {strategy!r}", f"choose one of: {', '.join(STRATEGIES)}")
    module = STRATEGIES[strategy]
    query = parse_view_sql(sql_text)
    started = time.perf_counter()
    with _session(target) as conn:
        migrate.upgrade(conn)
        with _spark_scratch(conn, preprocess) as scratch, _transaction(conn):
            view_schema = schema or conn.execute("SELECT current_schema()").fetchone()[0]  # type: ignore[index]
            if not conn.execute("SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = %s)", [view_schema]).fetchone()[0]:  # type: ignore[index]
                raise PgivmError(f"schema {view_schema} does not exist", "create it first or pass another --schema")
            if catalog.exists(conn, name):
                raise PgivmError(f"a pgivm view named {name!r} already exists", "drop it first with `pgivm drop`")
            taken = conn.execute(
                "SELECT to_regclass(%s) IS NOT NULL", [sql.Identifier(view_schema, name).as_string(conn)]
            ).fetchone()
            if taken and taken[0]:
                raise PgivmError(f"relation {view_schema}.{name} already exists", "choose another view name")
            if _RESERVED_SCHEMA.match(view_schema):
                raise PgivmError(f"schema {view_schema} is reserved for pgivm or PostgreSQL", "pass another --schema")
            resolved = resolve(conn, query)
            oids = sorted({base.oid for base in resolved.base.values()})
            # Writers wait from here to the commit, so no change slips between build and triggers.
            _lock_base_tables(conn, oids, "SHARE ROW EXCLUSIVE", lock_wait)
            resolved = resolve(conn, query, {t: b.oid for t, b in resolved.base.items()})  # as locked
            _check_postgres_accepts(conn, query.sql)
            _fixed_search_path(conn)
            plan = module.install_plan(resolved, name, view_schema, epsilon, batch_threshold)
            if preprocess == "spark":  # the state build runs in Spark (pgivm.spark.preprocess)
                if strategy != ivme.NAME:
                    raise PgivmError("--preprocess spark is only for the ivme strategy")
                from pgivm.spark import preprocess as spark_preprocess

                spark_preprocess.run_install_plan(conn, plan, resolved, name, epsilon, scratch)
            elif preprocess != "postgres":
                raise PgivmError(f"unknown preprocess {preprocess!r}", "choose postgres or spark")
            else:
                for statement in plan:
                    conn.execute(statement)
            catalog.insert(
                conn,
                catalog.ViewRecord(
                    name=name,
                    view_schema=view_schema,
                    state_schema=common.state_schema_for(name),
                    strategy=strategy,
                    epsilon=epsilon if strategy == ivme.NAME else None,
                    definition=query.sql,
                    model=catalog.model_to_json(query, resolved),
                ),
            )
            catalog.insert_base_tables(conn, name, resolved, {
                table: module.capture_triggers(resolved, name, table) for table in query.tables})
            state = common.read_state(conn, name)
            value = conn.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(view_schema, name))).fetchone()
    return CreateResult(
        name=name,
        view=f"{view_schema}.{name}",
        strategy=strategy,
        epsilon=epsilon,
        count=value[0] if value else None,
        db_size=state.get("db_size"),
        seconds=time.perf_counter() - started,
    )


def _spark_scratch(conn: psycopg.Connection, preprocess: str) -> AbstractContextManager[Any]:
    """For ``--preprocess spark``: drops the Spark build's scratch schema if ``create`` fails,
    after its transaction has rolled back (the schema is committed on a side connection, so the
    rollback alone would leave it behind). A no-op for the PostgreSQL build."""
    if preprocess != "spark":
        return nullcontext()
    from pgivm.spark import preprocess as spark_preprocess

    return spark_preprocess.scratch_schemas(conn)


def drop(name: str, *, target: Target = None, lock_wait: float = LOCK_WAIT_S) -> None:
    """Remove the view, its triggers and all of its state."""
    with _session(target) as conn:
        migrate.upgrade(conn)
        with _transaction(conn):
            record = catalog.get(conn, name)
            oids = catalog.base_table_oids(conn, name)
            existing = [oid for oid in oids
                        if conn.execute("SELECT EXISTS (SELECT FROM pg_catalog.pg_class WHERE oid = %s)", [oid]).fetchone()[0]]  # type: ignore[index]
            # Dropping triggers needs ACCESS EXCLUSIVE: writers first finish, none deadlocks with us.
            _lock_base_tables(conn, existing, "ACCESS EXCLUSIVE", lock_wait)
            _fixed_search_path(conn)
            triggers = catalog.trigger_names(conn, name)
            catalog.delete(conn, name)  # first: the DDL guard then lets the triggers go
            try:
                for statement in common.drop_plan(name, record.view_schema, existing, triggers):
                    conn.execute(statement)
            except psycopg.errors.InsufficientPrivilege as err:
                first = (str(err).strip().splitlines() or ["permission denied"])[0]
                raise PgivmError(f"cannot drop view {name}: {first}",
                                 "dropping its triggers needs ownership of the base tables: run drop as their owner or a superuser") from None


@dataclass
class ViewSummary:
    name: str
    view: str
    strategy: str
    epsilon: float | None
    count: int | None
    definition: str


def list_views(*, target: Target = None) -> list[ViewSummary]:
    with _session(target) as conn, _snapshot(conn):
        out = []
        for record in catalog.all_views(conn):
            state = common.read_state(conn, record.name)
            out.append(
                ViewSummary(
                    name=record.name,
                    view=f"{record.view_schema}.{record.name}",
                    strategy=record.strategy,
                    epsilon=state.get("epsilon"),
                    count=state["count"],
                    definition=record.definition,
                )
            )
        return out


def status(name: str, *, target: Target = None) -> dict[str, Any]:
    """ε, N, θ, |D|, heavy values per relation, sizes of every state table, rebalance counters."""
    with _session(target) as conn, _snapshot(conn):
        record = catalog.get(conn, name)
        info = STRATEGIES[record.strategy].status(conn, name)
        info.update(name=name, view=f"{record.view_schema}.{name}", strategy=record.strategy,
                    definition=record.definition)
        return info


@contextmanager
def _snapshot(conn: psycopg.Connection) -> Iterator[None]:
    """A read-only REPEATABLE READ transaction (when the connection is idle; inside a caller's
    transaction, that transaction), with pgivm's fixed search_path. Maintenance happens in the
    writing transactions, so one snapshot sees the base tables and the state consistently: no
    table lock is needed, and no writer waits for us."""
    migrate.upgrade(conn)
    own = conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    saved = (conn.isolation_level, conn.read_only)
    if own:
        conn.isolation_level, conn.read_only = psycopg.IsolationLevel.REPEATABLE_READ, True
    try:
        with _transaction(conn):
            _fixed_search_path(conn)
            yield
    finally:
        if own:
            conn.isolation_level, conn.read_only = saved


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
    """Recount the view in plain SQL and check every IVMε invariant against the base tables.

    ``strict`` also demands the strict partition (heavy iff degree >= N^ε), which holds right
    after a build or a major rebalancing.
    """
    started = time.perf_counter()
    with _session(target) as conn, _snapshot(conn):
        record = catalog.get(conn, name)
        problems = catalog.base_table_problems(conn, name)
        failures = [common.CheckFailure("base_tables", [(p,) for p in problems])] if problems else []
        try:
            resolved = _pinned(conn, record)
        except PgivmError as err:  # a base table or a column it reads is gone: say so, recount nothing
            failures.append(common.CheckFailure("base_tables", [(str(err),)]))
            maintained = _maintained(conn, record)
            return VerifyReport(name=name, maintained=maintained, recount=None, failures=failures,
                                seconds=time.perf_counter() - started)
        maintained = _maintained(conn, record)
        recount = _recount(conn, record, resolved)
        failures += STRATEGIES[record.strategy].verify_state(conn, resolved, name, strict=strict)
    return VerifyReport(
        name=name,
        maintained=maintained,
        recount=recount,
        failures=failures,
        seconds=time.perf_counter() - started,
    )


def _maintained(conn: psycopg.Connection, record: catalog.ViewRecord) -> Any:
    row = conn.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(record.view_schema, record.name))).fetchone()
    return row[0] if row else None


def _recount(conn: psycopg.Connection, record: catalog.ViewRecord, resolved: ResolvedView) -> int | None:
    """The view's result recomputed in plain SQL from the base tables pinned by oid (never from the
    stored SQL text, whose names the caller's search_path could lead elsewhere)."""
    row = conn.execute(common.count_query(resolved)).fetchone()
    count = int(row[0]) if row else 0
    return None if count == 0 and record.query.aggregate == "sum" else count  # sum(1) of no rows is NULL


def rebalance(name: str, *, epsilon: float | None = None, target: Target = None,
              lock_wait: float = LOCK_WAIT_S) -> dict[str, Any]:
    """Force a major rebalancing (strict repartition at N^ε, views recomputed), optionally at a new ε."""
    if epsilon is not None:
        _check_epsilon(epsilon)
    with _session(target) as conn:
        migrate.upgrade(conn)
        with _transaction(conn):
            record = catalog.get(conn, name)
            if record.strategy != ivme.NAME:
                raise PgivmError(f"view {name!r} uses strategy {record.strategy}, which has no epsilon and no rebalancing")
            _fixed_search_path(conn)
            # The view's lock, as writers take it: we wait for the writer holding it, and queue
            # writers behind us; no base-table lock, so no cycle with a writer is possible.
            state = Names.of(name)("state")
            _with_lock_retries(conn, f"the state of view {name}", lambda: conn.execute(
                sql.SQL("SELECT FROM {} WHERE singleton FOR NO KEY UPDATE").format(state)), lock_wait)
            conn.execute(ivme.rebalance_plan(name, epsilon))
            if epsilon is not None:
                catalog.set_epsilon(conn, name, epsilon)
            return common.read_state(conn, name)


def alter(name: str, *, epsilon: float, target: Target = None) -> dict[str, Any]:
    """Change ε. The partitions are rebuilt at once (a major rebalancing) so every invariant holds."""
    return rebalance(name, epsilon=epsilon, target=target)


def tables_of(name: str, *, target: Target = None) -> list[TableRef]:
    """The view's base tables as they are named now."""
    with _session(target) as conn, _snapshot(conn):
        return list(dict.fromkeys(_pinned(conn, catalog.get(conn, name)).tables.values()))


# --- Spark (optional: pip install 'pgivm[spark]') ----------------------------------------------


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
    target: str | None = None,
) -> Any:
    """Append a file (csv, tsv, SNAP edges, parquet) to ``table`` through Spark and JDBC, atomically.

    Returns a ``pgivm.spark.load.LoadResult``. See that module for the formats and options.
    """
    from pgivm.spark import load as spark_load

    return spark_load.load(table, path, columns, fmt=fmt, master=master, symmetric=symmetric,
                           drop_self_loops=drop_self_loops, distinct=distinct, header=header, dsn=target)


@dataclass
class SparkValidateReport:
    name: str
    maintained: int | None
    spark: int
    seconds: float

    @property
    def ok(self) -> bool:
        return self.maintained == self.spark


def validate_spark(name: str, *, master: str = "local[*]", target: Target = None,
                   lock_wait: float = LOCK_WAIT_S) -> SparkValidateReport:
    """Recount the view's join in Spark from the base tables (JDBC) and compare with the maintained count.

    Spark reads over connections of its own, which cannot share our snapshot: the base tables are
    locked against writers (SHARE, taken with retries like create's) while Spark reads them, so both
    counts see the same data. Only for count(*)-style views (sum(1), count(*), count(1)): a count of
    a join column equals count(*) because NULL join values never join.
    """
    from pgivm.spark.validate import spark_recount

    with _session(target) as conn:
        migrate.upgrade(conn)
        with _transaction(conn):
            record = catalog.get(conn, name)
            _lock_base_tables(conn, sorted(set(record.table_oids.values())), "SHARE", lock_wait)
            _fixed_search_path(conn)
            resolved = _pinned(conn, record)
            value = _maintained(conn, record)
            recount = spark_recount(conn, resolved, master=master)
    spark_count = recount.count
    if value is None and spark_count == 0:
        spark_count = None  # type: ignore[assignment]  # sum(1) over an empty join is NULL
    return SparkValidateReport(name=name, maintained=value, spark=spark_count, seconds=recount.seconds)
