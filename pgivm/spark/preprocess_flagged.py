"""``pgivm create --preprocess spark`` for the IVMε variants that keep each relation as one table
with its parts as flags (the triangle count with refined partitions, [L] Appendix D; the 4-path
count, Appendix G; the 3-path count of class 3R², Appendix H.3): their state computed in Spark,
written over JDBC.

Mirrors the variant's build (``build_plan``: each relation loaded, its degrees counted, then
``restart()``) exactly, from the variant module's own tables of what it keeps:

* K = one row per distinct tuple of its join columns (NULL join columns skipped), mult = the
  number of duplicate rows;
* |D| = the number of distinct tuples over every relation; N = 2|D| + 1; θ = N^ε (PostgreSQL's
  ``power(n::float8, epsilon)``, as ``major_rebalance()`` computes it);
* per partitioned (relation, variable) of ``DEGREES``: degree = distinct tuples with that value,
  heavy iff degree >= θ or ε = 0, the part kept on each tuple as a flag (``FLAGS``, else
  ``h<variable>``);
* each auxiliary view from its definition (``DEFINITIONS``, the same text verify recomputes it
  with, run by Spark SQL over the frames), and the count from ``COUNT``.

The transaction, the locks, the scratch schema and its cleanup are the triangle's
(``pgivm.spark.preprocess``).
"""

from __future__ import annotations

import time
from types import ModuleType
from typing import Any

import psycopg
from psycopg import sql

from pgivm.query.resolve import ResolvedView
from pgivm.spark.preprocess import JdbcTarget, ScratchSchemas, read_atom, report_build, start_build, theta_of
from pgivm.systems.common import Names


def compute(spark: Any, rows: dict[str, Any], module: ModuleType, epsilon: float, theta_of: Any) -> dict[str, Any]:
    """The relations with their flags, the degree tables, the views (frames), |D|, N, θ, the count."""
    from pyspark.sql import functions as F

    relations = {k: df.groupBy(*df.columns).agg(F.count(F.lit(1)).cast("bigint").alias("mult")).cache()
                 for k, df in rows.items()}
    db_size = sum(df.count() for df in relations.values())
    n = 2 * db_size + 1
    theta = float(theta_of(n))
    degrees = {}
    for (k, v), table in module.DEGREES.items():
        degree = relations[k].groupBy(v).agg(F.count(F.lit(1)).cast("bigint").alias("degree"))
        heavy = F.lit(True) if epsilon == 0 else F.col("degree").cast("double") >= F.lit(theta)
        degrees[table] = degree.withColumn("heavy", heavy).cache()
        flag = getattr(module, "FLAGS", {}).get((k, v), f"h{v}")
        flagged = degrees[table].select(F.col(v), F.col("heavy").alias(flag))
        relations[k] = relations[k].join(flagged, v).cache()
    names = {**{k: k for k in relations}, **{t: t for t in degrees}}
    for name, df in (*relations.items(), *degrees.items()):
        df.createOrReplaceTempView(name)
    views = {}
    for v in module.VIEWS:
        df = spark.sql(module.DEFINITIONS[v].format(**names))
        views[v] = df.toDF(*module.KEYS[v], "mult").cache()
    count = spark.sql(module.COUNT.format(**names)).first()[0]
    return {"relations": relations, "degrees": degrees, "views": views, "db_size": db_size, "n": n, "theta": theta,
            "count": int(count or 0)}


def build_with_spark(conn: psycopg.Connection, view: ResolvedView, name: str, epsilon: float, scratch: ScratchSchemas,
                     module: ModuleType, master: str = "local[*]") -> None:
    """Fill the (empty, just created) state tables of view ``name`` (``view`` in the module's shape)
    from a Spark computation, as ``pgivm.spark.preprocess.build_with_spark`` does the triangle's."""
    started = time.perf_counter()
    names = Names.of(name)
    spark, jdbc, stage = start_build(conn, scratch, master)
    rows = {atom.relation: read_atom(spark, conn, view, atom, jdbc) for atom in view.query.atoms}
    state = compute(spark, rows, module, epsilon, theta_of(conn, epsilon))
    computed = time.perf_counter()
    frames = {**state["relations"], **state["degrees"], **state["views"]}
    written = install_frames(conn, view, names, jdbc, stage, frames, state)
    report_build(started, computed, written, state["db_size"], state["n"], state["theta"], state["count"])


def install_frames(conn: psycopg.Connection, view: ResolvedView, names: Names, jdbc: JdbcTarget, stage: str,
                   frames: dict[str, Any], state: dict[str, Any]) -> float:
    """Each frame written to the scratch schema, then, in a savepoint of ``conn``'s transaction,
    copied into the state table of its name (variables cast to the view's types), the state row and
    the count set from ``state`` (db_size, n, count) and the scratch schema dropped. Returns when
    the writes ended (perf_counter); the frames are unpersisted whatever happens."""
    try:
        for table, df in frames.items():
            jdbc.write(df, f'"{stage}"."{table}"')
        written = time.perf_counter()
        with conn.transaction():  # a savepoint: on failure its locks on the staging tables go with it
            for table, df in frames.items():
                typed = [sql.SQL("{}::{}").format(sql.Identifier(c), sql.SQL(view.variable_types[c]))  # type: ignore[arg-type]
                         if c in view.variable_types else sql.Identifier(c) for c in df.columns]
                conn.execute(sql.SQL("DELETE FROM {dst}; INSERT INTO {dst} ({columns}) SELECT {typed} FROM {src}").format(
                    dst=names(table), columns=sql.SQL(", ").join(map(sql.Identifier, df.columns)),
                    typed=sql.SQL(", ").join(typed), src=sql.Identifier(stage, table)))
            conn.execute(sql.SQL("UPDATE {} SET db_size = %s, n = %s, theta = power(%s::float8, epsilon), "
                                 "major_rebalances = major_rebalances + 1").format(names("state")),
                         [state["db_size"], state["n"], state["n"]])
            conn.execute(sql.SQL("UPDATE {} SET count = %s").format(names("result")), [state["count"]])
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(stage)))
    finally:
        for df in frames.values():
            df.unpersist()
    return written
