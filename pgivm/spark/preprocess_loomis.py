"""``pgivm create --preprocess spark`` for a Loomis–Whitney count of degree n ≥ 4 ([L] Appendix F):
its state computed in Spark, written over JDBC.

Mirrors the build (``loomis_whitney.build_plan``: each relation loaded into its light part with its
degrees, then ``restart()``) exactly:

* R_i = one row per distinct tuple of its n − 1 join columns (NULL join columns skipped), mult = the
  number of duplicate rows; |D| = the distinct tuples over all; N = 2|D| + 1; θ = N^ε as PostgreSQL
  computes it;
* per R_i, the degree of each A_i-value (its partition variable), heavy iff degree >= θ or ε = 0,
  and R_i split into its heavy and light parts by it;
* V_i = Σ_{A_(i−1)} Π_{j ∉ {i, i−1}} R_j^heavy · R_(i−1)^light (the definition ``verify`` checks),
  zero sums dropped, and the count = Σ Π_j R_j over the natural join of all n relations;

both joins natural joins of frames on their shared variables. The transaction, the locks and the
scratch schema are the triangle's (``pgivm.spark.preprocess``).
"""

from __future__ import annotations

import time
from functools import reduce
from typing import Any

import psycopg

from pgivm.query.resolve import ResolvedView
from pgivm.spark.preprocess import ScratchSchemas, read_atom, report_build, start_build, theta_of
from pgivm.spark.preprocess_flagged import install_frames
from pgivm.systems.common import Names


def natural_join(frames: list[Any]) -> tuple[Any, Any]:
    """The natural join of frames (variables..., mult): the joined frame with each frame's mult as
    m0, m1, ..., and the product of the multiplicities as a column expression."""
    from pyspark.sql import functions as F

    renamed = [df.withColumnRenamed("mult", f"m{i}") for i, df in enumerate(frames)]

    def join(left: Any, right: Any) -> Any:
        shared = [c for c in right.columns if c in left.columns]
        return left.join(right, shared)

    product = reduce(lambda a, b: a * b, [F.col(f"m{i}") for i in range(len(frames))])
    return reduce(join, renamed), product


def compute(rows: dict[str, Any], view: ResolvedView, epsilon: float, theta_fn: Any) -> dict[str, Any]:
    from pyspark.sql import functions as F

    query = view.query
    relations = [rows[atom.relation].groupBy(*atom.variables).agg(F.count(F.lit(1)).cast("bigint").alias("mult")).cache()
                 for atom in query.relations]
    db_size = sum(df.count() for df in relations)
    n = 2 * db_size + 1
    theta = float(theta_fn(n))
    frames: dict[str, Any] = {}
    heavy, light = [], []
    for atom, rel in zip(query.relations, relations):
        pvar = query.variables[atom.index]
        degree = rel.groupBy(pvar).agg(F.count(F.lit(1)).cast("bigint").alias("degree"))
        degree = degree.withColumn("heavy", F.lit(True) if epsilon == 0 else F.col("degree").cast("double") >= F.lit(theta)).cache()
        parted = rel.join(degree.select(pvar, "heavy"), pvar)
        heavy.append(parted.filter(F.col("heavy")).select(*atom.variables, "mult").cache())
        light.append(parted.filter(~F.col("heavy")).select(*atom.variables, "mult").cache())
        frames.update({f"{atom.relation}_degree": degree, f"{atom.relation}_heavy": heavy[-1], f"{atom.relation}_light": light[-1]})
    k = query.degree
    for i, atom in enumerate(query.relations):
        joined, product = natural_join([heavy[j] for j in range(k) if j not in (i, (i - 1) % k)] + [light[(i - 1) % k]])
        frames[f"v_{atom.relation}"] = (joined.groupBy(*atom.variables).agg(F.sum(product).alias("mult"))
                                        .filter(F.col("mult") != 0).cache())
    joined, product = natural_join(relations)
    count = joined.agg(F.sum(product)).first()[0]
    return {"frames": frames, "db_size": db_size, "n": n, "theta": theta, "count": int(count or 0)}


def build_with_spark(conn: psycopg.Connection, view: ResolvedView, name: str, epsilon: float, scratch: ScratchSchemas,
                     master: str = "local[*]") -> None:
    """Fill the (empty, just created) state tables of Loomis–Whitney view ``name`` (``view`` in its
    shape) from a Spark computation, as the triangle's Spark build does."""
    started = time.perf_counter()
    names = Names.of(name)
    spark, jdbc, stage = start_build(conn, scratch, master)
    rows = {atom.relation: read_atom(spark, conn, view, atom, jdbc) for atom in view.query.relations}
    state = compute(rows, view, epsilon, theta_of(conn, epsilon))
    computed = time.perf_counter()
    written = install_frames(conn, view, names, jdbc, stage, state["frames"], state)
    report_build(started, computed, written, state["db_size"], state["n"], state["theta"], state["count"])
