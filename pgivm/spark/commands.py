"""The Spark commands of ``pgivm.command`` (which re-exports them): ``load`` a file through Spark
and JDBC, and ``validate_spark``, a recount by Spark's own join of the base tables."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from psycopg import sql

from pgivm.catalog import migrate
from pgivm.compare import Row, bag_differences
from pgivm.errors import PgivmError
from pgivm.installed import InstalledView, open_view, operator_schemas
from pgivm.systems import common
from pgivm.transactions import LOCK_WAIT_S, Target, fixed_search_path, lock_base_tables, session, transaction


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
    """Append a file (csv, tsv, SNAP edge list, parquet) to a table through Spark, atomically.

    Spark reads ``path`` and writes it to ``table`` over JDBC. Returns a
    ``pgivm.spark.load.LoadResult``. ``target`` may be a connection: Spark writes over JDBC to the
    same database, and the final move runs in that connection's transaction.
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
    # a join-aggregate's rows found on one side only, each headed "view" or "spark" (up to 20)
    differences: list[Row] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)  # the view's columns, naming a difference's values

    @property
    def ok(self) -> bool:
        return self.maintained == self.spark and not self.differences


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
            view = open_view(conn, name)
            if view.record.query.derived:  # Spark would read the derived table, which it then does not check
                raise PgivmError(f"view {name} reads a subquery that aggregates, kept as a table of its state: "
                                 "validate --spark recounts joins of base tables only",
                                 f"pgivm verify {name} recounts the subquery and the view in SQL")
            extensions = operator_schemas(conn, view.record)
            if extensions:  # Spark would compare their text: citext's 'abc' <> 'ABC'
                raise PgivmError(f"view {name} compares values of an extension's type (its equality is the "
                                 f"extension's, in schema {', '.join(extensions)}): "
                                 "validate --spark compares values as Spark does", f"pgivm verify {name} recounts it in SQL")
            lock_base_tables(conn, sorted(set(view.record.table_oids.values())), "SHARE", lock_wait)
            fixed_search_path(conn)
            triangle = view.record.query.analysis.triangle
            if not view.one_value or triangle is None or triangle.packed:  # a join-aggregate, a Loomis-Whitney count
                return _validate_join_aggregate(view, master)
            value = view.count()
            recount = spark_recount(conn, view.resolved, master=master)
    spark_count: int | None = recount.count
    if value is None and spark_count == 0:
        spark_count = None  # sum(1) over an empty join is NULL
    return SparkValidateReport(name=name, maintained=value, spark=spark_count, seconds=recount.seconds)


def _validate_join_aggregate(view: InstalledView, master: str) -> SparkValidateReport:
    """A join-aggregate recomputed by Spark (``pgivm.spark.validate.cq_result``) against the view's
    rows; a listing's row count against the flat join's. ``maintained``/``spark``: row counts, or
    for a listing the join sizes; ``differences``: the rows found on one side only."""
    from pgivm.spark.validate import cq_result

    rows, seconds = cq_result(view.conn, view.resolved, master=master)
    if view.resolved.query.is_listing:
        maintained = common.read_state(view.conn, view.name)["count"]
        return SparkValidateReport(name=view.name, maintained=maintained, spark=rows[0][0], seconds=seconds)
    cursor = view.conn.execute(sql.SQL("SELECT * FROM {}").format(view.ident), prepare=False)
    mine = [tuple(r) for r in cursor.fetchall()]
    columns = [c.name for c in cursor.description or []]
    return SparkValidateReport(name=view.name, maintained=len(mine), spark=len(rows), seconds=seconds,
                               differences=bag_differences(mine, [tuple(r) for r in rows])[:20], columns=columns)
