"""``pgivm load``: read a file with Spark and append it to a table over JDBC, atomically.

Spark writes the rows into an unlogged staging table (batched inserts, reWriteBatchedInserts);
then one PostgreSQL transaction runs ``INSERT INTO target SELECT ... FROM staging`` and drops the
staging table. A table under a pgivm view thus sees one multi-row statement, maintained set at a
time by the view's statement triggers. On any error the staging table is dropped and the target
is unchanged.

Formats (every id must be an integer that fits its target column):
  csv / tsv  one row per line, exactly as many fields as --columns (``,`` or tab separated);
             ``--header`` skips the first line.
  edges      SNAP edge lists: whitespace separated, ``#`` comment lines skipped,
             lines holding one integer only (a node-count header, a ``-1`` end marker) skipped,
             CRLF line ends accepted, fields beyond --columns ignored.
  parquet    the columns named in --columns when present, else the first ones, cast to bigint.
The text formats may be gzipped (``.gz``: Spark decompresses by the extension) and skip blank
lines, which the result counts. A malformed line or a value out of its column's range aborts the
load with ``file:line``, before anything is written.
``symmetric`` adds (v, u) for every (u, v) (two columns only), ``drop_self_loops`` drops u = v,
``distinct`` drops duplicate rows of this load (with ``symmetric`` each undirected edge then
appears exactly once per direction).
"""

from __future__ import annotations

import functools
import operator
import re
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import psycopg
from psycopg import sql

from pgivm.connection import connect, user_search_path
from pgivm.errors import PgivmError
from pgivm.progress import Progress
from pgivm.spark.session import conninfo_of, get_spark, jdbc_url_from_dsn

FORMATS = ("csv", "tsv", "edges", "parquet")
BATCH_SIZE = 10_000
WRITE_PARTITIONS = 4

# Ids are carried as bigint (Spark's LongType); smaller integer columns bound them further. Checked
# while parsing, so that an out-of-range value is a file:line error and not a failed JDBC batch.
_BIGINT = (-(2**63), 2**63 - 1)
_INTEGER_BOUNDS = {"smallint": (-(2**15), 2**15 - 1), "integer": (-(2**31), 2**31 - 1), "bigint": _BIGINT}


class Column(NamedTuple):
    """A target column: its name, its type as PostgreSQL prints it, and the ids it can take."""

    name: str
    type: str
    low: int
    high: int

    @property
    def range_message(self) -> str:
        """What follows "value V" in the error for an id outside [low, high]."""
        if (self.low, self.high) == _BIGINT and self.type != "bigint":
            return f"is out of range for bigint, the type pgivm load reads ids as (column {self.name} is {self.type})"
        return f"is out of range for column {self.name} of type {self.type}"


@dataclass
class LoadResult:
    table: str
    file: str
    rows: int
    seconds: float
    # seconds per step: "read" (Spark parses the file), "write" (JDBC into the staging table),
    # "move" (the one INSERT ... SELECT into the target, with a view's maintenance, and the commit)
    steps: dict[str, float] = field(default_factory=dict)
    blank_lines: int = 0  # skipped, as in every text format

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0


def blank_lines_note(count: int) -> str:
    """What a load says about the blank lines it skipped ("" when there were none)."""
    return f"{count:,} blank line{'s' if count != 1 else ''} skipped" if count else ""


def _parse_lines(fmt: str, columns: list[Column], header: bool):  # type: ignore[no-untyped-def]
    """A function (line, index) -> (kind, index, values or reason), run on executors; kind is 'ok',
    'blank', 'skip' (comments, headers) or 'bad' (the reason is the error message)."""
    ncols = len(columns)
    # Plain tuples: the function is shipped to executors, which need not have pgivm installed.
    limits = [(c.low, c.high, c.range_message) for c in columns]

    def parse(item):  # type: ignore[no-untyped-def]
        line, index = item
        text = line.strip()
        if header and index == 0 and fmt != "edges":
            return ("skip", index, None)
        if not text:
            return ("blank", index, None)
        if fmt == "edges":
            if text.startswith("#") or text.startswith("%"):
                return ("skip", index, None)
            fields = text.split()
            if len(fields) == 1 and fields[0].lstrip("-").isdigit():
                return ("skip", index, None)  # a node-count header line or a -1 end marker
            if len(fields) < ncols:
                return ("bad", index, f"malformed line: expected at least {ncols} fields, found {len(fields)}")
            fields = fields[:ncols]
        else:
            fields = [f.strip() for f in line.rstrip("\r\n").split("," if fmt == "csv" else "\t")]
            if len(fields) != ncols:
                return ("bad", index, f"malformed line: expected {ncols} fields, found {len(fields)}")
        values = []
        for f, (low, high, range_message) in zip(fields, limits):
            try:
                value = int(f)
            except ValueError:
                return ("bad", index, f"malformed line: not an integer id: {f[:40]!r}")
            if not low <= value <= high:
                return ("bad", index, f"value {f[:40]} {range_message}")
            values.append(value)
        return ("ok", index, tuple(values))

    return parse


def read_file(spark: Any, path: str, columns: list[Column], fmt: str, header: bool = False) -> tuple[Any, int]:
    """A DataFrame of bigint columns named after ``columns`` from the file, and the number of blank
    lines skipped; a malformed line or an id out of its column's range raises PgivmError."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StructField, StructType

    if not Path(path).exists():
        raise PgivmError(f"no such file: {path}")
    names = [c.name for c in columns]
    schema = StructType([StructField(c, LongType(), False) for c in names])
    if fmt == "parquet":
        df = spark.read.parquet(str(Path(path).resolve()))
        present = [c for c in names if c in df.columns]
        source = present if len(present) == len(names) else df.columns[: len(names)]
        if len(source) < len(names):
            raise PgivmError(f"{path}: has {len(df.columns)} columns, --columns asks for {len(names)}")
        df = df.select(*[F.col(s).cast("bigint").alias(c) for s, c in zip(source, names)])
        _check_ranges(df, path, columns)
        return df, 0
    lines = spark.sparkContext.textFile(str(Path(path).resolve())).zipWithIndex()
    parsed = lines.map(_parse_lines(fmt, columns, header)).cache()
    kinds = parsed.map(lambda r: r[0]).countByValue()
    if kinds.get("bad"):
        _, index, reason = parsed.filter(lambda r: r[0] == "bad").takeOrdered(1, key=lambda r: r[1])[0]
        parsed.unpersist()
        raise PgivmError(f"{path}:{index + 1}: {reason}", "nothing was loaded")
    rows = parsed.filter(lambda r: r[0] == "ok").map(lambda r: r[2])
    return spark.createDataFrame(rows, schema), int(kinds.get("blank", 0))


def _check_ranges(df: Any, path: str, columns: list[Column]) -> None:
    """Raise PgivmError on the first id of a Parquet file out of its column's range (no lines there)."""
    from pyspark.sql import functions as F

    narrow = [c for c in columns if (c.low, c.high) != _BIGINT]
    if not narrow:
        return
    outside = functools.reduce(operator.or_, [~F.col(c.name).between(c.low, c.high) for c in narrow])
    row = df.filter(outside).select(*[c.name for c in narrow]).first()
    if row is not None:
        column = next(c for c in narrow if row[c.name] is not None and not c.low <= row[c.name] <= c.high)
        raise PgivmError(f"{path}: value {row[column.name]} {column.range_message}", "nothing was loaded")


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
    target: str | psycopg.Connection | None = None,
) -> LoadResult:
    """Load ``path`` into ``table``. ``target``: a DSN, or a connection, in whose transaction (a
    savepoint inside one of the caller's) the loaded rows are moved into the table at the end."""
    if fmt not in FORMATS:
        raise PgivmError(f"unknown format {fmt!r}", f"choose one of: {', '.join(FORMATS)}")
    if not columns or any(not c for c in columns):
        raise PgivmError("give the target columns with --columns, e.g. --columns src,dst")
    if (symmetric or drop_self_loops) and len(columns) != 2:
        raise PgivmError("--symmetric and --drop-self-loops need exactly two columns")
    started = time.perf_counter()
    with _session(target) as conn:
        dsn_used = conninfo_of(conn)
        schema_table, targets = _resolve_table(conn, table, columns)
    url, props = jdbc_url_from_dsn(dsn_used)
    spark = get_spark(master)
    from pyspark.sql import functions as F

    read_started = time.perf_counter()
    df, blank_lines = read_file(spark, path, targets, fmt, header)
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
            with _session(target if isinstance(target, psycopg.Connection) else dsn_used) as conn:
                with conn.transaction():
                    conn.execute(sql.SQL("INSERT INTO {} ({}) SELECT {} FROM {}").format(target_q, cols, cols, stage_q))
                    conn.execute(sql.SQL("DROP TABLE {}").format(stage_q))
            steps["move"] = time.perf_counter() - step
    except PgivmError:
        raise
    except (psycopg.Error, Exception) as err:
        raise PgivmError(f"loading {path} into {table} failed: {_error_line(err)[:300]}",
                         "the table is unchanged") from None
    finally:
        df.unpersist()
        with connect(dsn_used) as conn:
            conn.autocommit = True
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(stage_q))
    return LoadResult(table=".".join(schema_table), file=path, rows=total, seconds=time.perf_counter() - started,
                      steps=steps, blank_lines=blank_lines)


@contextmanager
def _session(target: str | psycopg.Connection | None) -> Iterator[psycopg.Connection]:
    if isinstance(target, psycopg.Connection):
        yield target
    else:
        with connect(target) as conn:
            yield conn


def _error_line(err: BaseException) -> str:
    """One line saying what failed: PostgreSQL's own message when a Java exception (a failed JDBC
    batch) wraps one, whose first line only names the Py4J call, else the error's first line."""
    text = str(err)
    from_postgres = re.findall(r"PSQLException: (.+)", text)
    if from_postgres:
        return from_postgres[-1].strip()
    return (text.strip().splitlines() or ["error"])[0]


def _resolve_table(conn: psycopg.Connection, table: str, columns: list[str]) -> tuple[tuple[str, str], list[Column]]:
    """The target's schema and name, and the columns to load with the ids each can take."""
    with user_search_path(conn):  # the name as the user wrote it, on their own search_path
        found = conn.execute("SELECT pg_catalog.to_regclass(%s)::pg_catalog.oid", [table]).fetchone()
    row = conn.execute(
        "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.oid = %s", [found[0] if found else None]).fetchone()
    if row is None:
        raise PgivmError(f"table {table} does not exist", "create it first")
    # The type as declared, and the type whose range applies (a domain's base type).
    types = {name: (declared, base) for name, declared, base in conn.execute(
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod), "
        "       format_type(CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE a.atttypid END, NULL) "
        "FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
        "WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped", [found[0]])}
    missing = [c for c in columns if c not in types]
    if missing:
        raise PgivmError(f"table {table} has no column {missing[0]}")
    targets = []
    for name in columns:
        declared, base = types[name]
        low, high = _INTEGER_BOUNDS.get(base, _BIGINT)
        targets.append(Column(name, declared, low, high))
    return (row[0], row[1]), targets
