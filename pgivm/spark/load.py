"""``pgivm load``: read a file with Spark and append it to a table over JDBC, atomically.

Spark writes the rows into an unlogged staging table (batched inserts, reWriteBatchedInserts);
then one PostgreSQL transaction runs ``INSERT INTO target SELECT ... FROM staging`` and drops the
staging table. A table under a pgivm view thus sees one multi-row statement, maintained set at a
time by the view's statement triggers. On any error the staging table is dropped and the target
is unchanged.

Formats (every id must be an integer):
  csv / tsv  one row per line, exactly as many fields as --columns (``,`` or tab separated);
             ``--header`` skips the first line.
  edges      SNAP edge lists: whitespace separated, ``#`` comment lines and blank lines skipped,
             lines holding one integer only (a node-count header, a ``-1`` end marker) skipped,
             CRLF line ends accepted, fields beyond --columns ignored.
  parquet    the columns named in --columns when present, else the first ones, cast to bigint.
``symmetric`` adds (v, u) for every (u, v) (two columns only), ``drop_self_loops`` drops u = v,
``distinct`` drops duplicate rows of this load (with ``symmetric`` each undirected edge then
appears exactly once per direction).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from pgivm.connection import connect
from pgivm.errors import PgivmError
from pgivm.progress import Progress
from pgivm.spark.session import conninfo_of, get_spark, jdbc_url_from_dsn

FORMATS = ("csv", "tsv", "edges", "parquet")
BATCH_SIZE = 10_000
WRITE_PARTITIONS = 4


@dataclass
class LoadResult:
    table: str
    file: str
    rows: int
    seconds: float
    # seconds per step: "read" (Spark parses the file), "write" (JDBC into the staging table),
    # "move" (the one INSERT ... SELECT into the target, with a view's maintenance, and the commit)
    steps: dict[str, float] = field(default_factory=dict)

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0


def _parse_lines(fmt: str, ncols: int, header: bool):  # type: ignore[no-untyped-def]
    """A function (line, index) -> ('ok', values) | ('skip', None) | ('bad', reason), run on executors."""

    def parse(item):  # type: ignore[no-untyped-def]
        line, index = item
        text = line.strip()
        if fmt == "edges":
            if not text or text.startswith("#") or text.startswith("%"):
                return ("skip", index, None)
            fields = text.split()
            if len(fields) == 1 and fields[0].lstrip("-").isdigit():
                return ("skip", index, None)  # a node-count header line or a -1 end marker
            if len(fields) < ncols:
                return ("bad", index, f"expected at least {ncols} fields, found {len(fields)}")
            fields = fields[:ncols]
        else:
            if header and index == 0:
                return ("skip", index, None)
            if not text:
                return ("skip", index, None)
            fields = [f.strip() for f in line.rstrip("\r\n").split("," if fmt == "csv" else "\t")]
            if len(fields) != ncols:
                return ("bad", index, f"expected {ncols} fields, found {len(fields)}")
        values = []
        for f in fields:
            try:
                values.append(int(f))
            except ValueError:
                return ("bad", index, f"not an integer id: {f[:40]!r}")
        return ("ok", index, tuple(values))

    return parse


def read_file(spark: Any, path: str, columns: list[str], fmt: str, header: bool = False) -> Any:
    """A DataFrame of bigint columns ``columns`` from the file; malformed lines raise PgivmError."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StructField, StructType

    if not Path(path).exists():
        raise PgivmError(f"no such file: {path}")
    schema = StructType([StructField(c, LongType(), False) for c in columns])
    if fmt == "parquet":
        df = spark.read.parquet(str(Path(path).resolve()))
        present = [c for c in columns if c in df.columns]
        source = present if len(present) == len(columns) else df.columns[: len(columns)]
        if len(source) < len(columns):
            raise PgivmError(f"{path}: has {len(df.columns)} columns, --columns asks for {len(columns)}")
        return df.select(*[F.col(s).cast("bigint").alias(c) for s, c in zip(source, columns)])
    lines = spark.sparkContext.textFile(str(Path(path).resolve())).zipWithIndex()
    parsed = lines.map(_parse_lines(fmt, len(columns), header)).cache()
    bad = parsed.filter(lambda r: r[0] == "bad")
    first_bad = bad.takeOrdered(1, key=lambda r: r[1])
    if first_bad:
        parsed.unpersist()
        _, index, reason = first_bad[0]
        raise PgivmError(f"{path}:{index + 1}: malformed line: {reason}", "nothing was loaded")
    rows = parsed.filter(lambda r: r[0] == "ok").map(lambda r: r[2])
    return spark.createDataFrame(rows, schema)


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
    dsn: str | None = None,
) -> LoadResult:
    if fmt not in FORMATS:
        raise PgivmError(f"unknown format {fmt!r}", f"choose one of: {', '.join(FORMATS)}")
    if not columns or any(not c for c in columns):
        raise PgivmError("give the target columns with --columns, e.g. --columns src,dst")
    if (symmetric or drop_self_loops) and len(columns) != 2:
        raise PgivmError("--symmetric and --drop-self-loops need exactly two columns")
    started = time.perf_counter()
    with connect(dsn) as conn:
        dsn_used = conninfo_of(conn)
        schema_table = _resolve_table(conn, table, columns)
    url, props = jdbc_url_from_dsn(dsn_used)
    spark = get_spark(master)
    from pyspark.sql import functions as F

    read_started = time.perf_counter()
    df = read_file(spark, path, columns, fmt, header)
    if drop_self_loops:
        df = df.filter(F.col(columns[0]) != F.col(columns[1]))
    if symmetric:
        df = df.unionByName(df.select(F.col(columns[1]).alias(columns[0]), F.col(columns[0]).alias(columns[1])))
    if distinct:
        df = df.distinct()
    df = df.repartition(WRITE_PARTITIONS).cache()
    stage = f"pgivm_stage_{uuid.uuid4().hex[:12]}"
    stage_q = sql.Identifier(schema_table[0], stage)
    target_q = sql.Identifier(*schema_table)
    cols = sql.SQL(", ").join(sql.Identifier(c) for c in columns)
    with connect(dsn_used) as conn:
        conn.autocommit = True
        conn.execute(sql.SQL("CREATE UNLOGGED TABLE {} AS SELECT {} FROM {} WITH NO DATA").format(stage_q, cols, target_q))
    steps: dict[str, float] = {}
    try:
        with Progress(f"loading {path} into {table}") as progress:
            total = df.count()
            steps["read"] = time.perf_counter() - read_started
            progress.total = total
            progress.advance(0, note="rows parsed, writing over JDBC")
            step = time.perf_counter()
            (df.write.mode("append")
               .option("batchsize", BATCH_SIZE)
               .option("numPartitions", WRITE_PARTITIONS)
               .jdbc(url + "?reWriteBatchedInserts=true", f'"{schema_table[0]}"."{stage}"', properties=props))
            steps["write"] = time.perf_counter() - step
            progress.advance(total, note="written to staging")
            step = time.perf_counter()
            with connect(dsn_used) as conn:
                with conn.transaction():
                    conn.execute(sql.SQL("INSERT INTO {} ({}) SELECT {} FROM {}").format(target_q, cols, cols, stage_q))
                    conn.execute(sql.SQL("DROP TABLE {}").format(stage_q))
            steps["move"] = time.perf_counter() - step
    except PgivmError:
        raise
    except (psycopg.Error, Exception) as err:
        first = (str(err).strip().splitlines() or ["error"])[0]
        raise PgivmError(f"loading {path} into {table} failed: {first[:300]}", "the table is unchanged") from None
    finally:
        df.unpersist()
        with connect(dsn_used) as conn:
            conn.autocommit = True
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(stage_q))
    return LoadResult(table=".".join(schema_table), file=path, rows=total, seconds=time.perf_counter() - started,
                      steps=steps)


def _resolve_table(conn: psycopg.Connection, table: str, columns: list[str]) -> tuple[str, str]:
    row = conn.execute(
        "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.oid = to_regclass(%s)", [table]).fetchone()
    if row is None:
        raise PgivmError(f"table {table} does not exist", "create it first")
    present = {r[0] for r in conn.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attnum > 0 AND NOT attisdropped", [table])}
    missing = [c for c in columns if c not in present]
    if missing:
        raise PgivmError(f"table {table} has no column {missing[0]}")
    return row[0], row[1]
