"""``pgivm validate NAME --spark``: recount a view's triangle join in Spark from the base tables.

The base tables are read over JDBC with partitioned reads (partitionColumn = the relation's first
join column, bounds from min/max, 4 partitions; non-integer join columns in one partition). The
count uses the heavy/light decomposition for skew robustness: multiplicities per distinct tuple,
degrees, heavy values at θ = N^½ (N = 2|D| + 1, independent of the view's own state), the
auxiliary views V_RS, V_ST, V_TR, and V_RS⋈T + V_ST⋈R + V_TR⋈S + hhh + lll, so no join
materializes the 2-paths through a high-degree value.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import psycopg

from pgivm.spark.preprocess import JdbcTarget, compute_state, read_relations


@dataclass
class SparkRecount:
    count: int
    db_size: int
    seconds: float


def spark_recount(conn: psycopg.Connection, view, master: str = "local[*]", epsilon: float = 0.5) -> SparkRecount:  # type: ignore[no-untyped-def]
    from pgivm.spark.session import get_spark

    started = time.perf_counter()
    spark = get_spark(master)
    rows = read_relations(spark, conn, view, JdbcTarget.of(conn))
    state = compute_state(rows, epsilon, lambda n: float(n) ** epsilon)
    state.unpersist()
    return SparkRecount(count=state.count, db_size=state.db_size, seconds=time.perf_counter() - started)
