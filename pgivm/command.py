"""The public API of pgivm. Each function is one CLI command; the CLI only parses and prints.

Every function takes ``target``: a DSN string, an open psycopg connection (used as is, inside a
transaction or savepoint of its own), or None to resolve the database the way the CLI does
(``PGIVM_DSN``, the libpq ``PG*`` variables, else the embedded server).
Changes run in one transaction: on any error nothing is left half-installed.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
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

Target = Union[str, psycopg.Connection, None]

_MAX_NAME_BYTES = 40  # state objects are named pgivm_<name>_...; PostgreSQL truncates names at 63 bytes


@contextmanager
def _session(target: Target) -> Iterator[psycopg.Connection]:
    if isinstance(target, psycopg.Connection):
        yield target
    else:
        with connect(target) as conn:
            yield conn


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


def _resolved(conn: psycopg.Connection, record: catalog.ViewRecord) -> ResolvedView:
    query = record.query
    resolved = resolve(conn, query)
    return ResolvedView(
        query=type(query)(query.r, query.s, query.t, query.aggregate, query.output_name, record.definition),
        tables=resolved.tables,
        variable_types=resolved.variable_types,
        column_types=resolved.column_types,
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
) -> CreateResult:
    """Install a maintained view ``name`` for the query ``sql_text`` and build its state.

    ``batch_threshold``: statements changing more rows than this are maintained set at a time
    (default ``common.BATCH_THRESHOLD``); 0 sends every statement through the batch path.

    ``preprocess="spark"`` computes the state in Spark, which writes it into a scratch schema
    ``pgivm_stage_<hex>`` committed on a side connection. A failed create drops it; a successful
    one drops it inside its own transaction. So if ``target`` is a connection in a transaction of
    yours that you roll back after a successful create, drop that schema yourself (its name is
    printed on stderr).
    """
    _check_name(name)
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
        with _spark_scratch(conn, preprocess) as scratch, conn.transaction():
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
            resolved = resolve(conn, query)
            _check_postgres_accepts(conn, query.sql)
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
                    model=catalog.model_to_json(query, resolved.tables),
                ),
            )
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


def drop(name: str, *, target: Target = None) -> None:
    """Remove the view, its triggers and all of its state."""
    with _session(target) as conn:
        migrate.upgrade(conn)
        with conn.transaction():
            record = catalog.get(conn, name)
            tables = [a.table for a in record.query.atoms]
            for statement in common.drop_plan(name, record.view_schema, list(dict.fromkeys(tables))):
                conn.execute(statement)
            catalog.delete(conn, name)


@dataclass
class ViewSummary:
    name: str
    view: str
    strategy: str
    epsilon: float | None
    count: int | None
    definition: str


def list_views(*, target: Target = None) -> list[ViewSummary]:
    with _session(target) as conn:
        migrate.upgrade(conn)
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
    with _session(target) as conn:
        migrate.upgrade(conn)
        record = catalog.get(conn, name)
        info = STRATEGIES[record.strategy].status(conn, name)
        info.update(name=name, view=f"{record.view_schema}.{name}", strategy=record.strategy,
                    definition=record.definition)
        return info


def _locked_view(conn: psycopg.Connection, name: str) -> tuple[catalog.ViewRecord, ResolvedView, Any]:
    """The view's catalog record, its resolved query and its maintained value, with its base tables
    locked against writers (SHARE) until the caller's transaction ends: a recount then sees the
    same data as the maintained value."""
    record = catalog.get(conn, name)
    resolved = _resolved(conn, record)
    for table in resolved.tables.values():
        conn.execute(sql.SQL("LOCK TABLE {} IN SHARE MODE").format(common.table_ident(table)))
    maintained = conn.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(record.view_schema, name))).fetchone()
    return record, resolved, maintained


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
    with _session(target) as conn:
        migrate.upgrade(conn)
        with conn.transaction():
            record, resolved, maintained = _locked_view(conn, name)
            recount = conn.execute(record.definition).fetchone()  # type: ignore[call-overload]  # the user's own SQL
            failures = STRATEGIES[record.strategy].verify_state(conn, resolved, name, strict=strict)
    return VerifyReport(
        name=name,
        maintained=maintained[0] if maintained else None,
        recount=recount[0] if recount else None,
        failures=failures,
        seconds=time.perf_counter() - started,
    )


def rebalance(name: str, *, epsilon: float | None = None, target: Target = None) -> dict[str, Any]:
    """Force a major rebalancing (strict repartition at N^ε, views recomputed), optionally at a new ε."""
    if epsilon is not None:
        _check_epsilon(epsilon)
    with _session(target) as conn:
        migrate.upgrade(conn)
        with conn.transaction():
            record = catalog.get(conn, name)
            if record.strategy != ivme.NAME:
                raise PgivmError(f"view {name!r} uses strategy {record.strategy}, which has no epsilon and no rebalancing")
            conn.execute(ivme.rebalance_plan(name, epsilon))
            if epsilon is not None:
                catalog.set_epsilon(conn, name, epsilon)
            return common.read_state(conn, name)


def alter(name: str, *, epsilon: float, target: Target = None) -> dict[str, Any]:
    """Change ε. The partitions are rebuilt at once (a major rebalancing) so every invariant holds."""
    return rebalance(name, epsilon=epsilon, target=target)


def tables_of(name: str, *, target: Target = None) -> list[TableRef]:
    with _session(target) as conn:
        record = catalog.get(conn, name)
        return list(dict.fromkeys(a.table for a in record.query.atoms))


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


def validate_spark(name: str, *, master: str = "local[*]", target: Target = None) -> SparkValidateReport:
    """Recount the view's join in Spark from the base tables (JDBC) and compare with the maintained count.

    The base tables are locked against writers (SHARE) while Spark reads them, so both counts see
    the same data. Only for count(*)-style views (sum(1), count(*), count(1)): a count of a join
    column equals count(*) because NULL join values never join.
    """
    from pgivm.spark.validate import spark_recount

    with _session(target) as conn:
        migrate.upgrade(conn)
        with conn.transaction():
            record, resolved, maintained = _locked_view(conn, name)
            recount = spark_recount(conn, resolved, master=master)
    value = maintained[0] if maintained else None
    spark_count = recount.count
    if value is None and spark_count == 0:
        spark_count = None  # type: ignore[assignment]  # sum(1) over an empty join is NULL
    return SparkValidateReport(name=name, maintained=value, spark=spark_count, seconds=recount.seconds)
