"""Deterministic data generators for the F-IVM tests and benchmarks.

Two datasets, after §8 of Nikolic & Olteanu, "Incremental View Maintenance with Triple Lock
Factorization Benefits" (SIGMOD 2018):

- :mod:`pgivm.data.housing`: the synthetic *Housing* star schema (six relations joined on
  ``postcode``), whose flat natural join grows cubically with the scale factor while the base
  data grows linearly, the case where factorized maintenance pays most;
- :mod:`pgivm.data.tpch`: a *Retailer*-like snowflake cut out of TPC-H (lineitem, orders,
  customer, part, supplier, nation), produced by ``tpchgen-cli`` when it is installed and by a
  pure Python generator of the same schema otherwise.

Each module has the same shape: ``TABLES`` and ``COLUMNS``, ``create_tables``, ``rows`` (the
rows of one table, a pure function of its arguments), ``generate`` (create and COPY everything)
and ``stream`` (the update workload of the paper: *new* rows for every relation, interleaved
round-robin in batches). This module holds what the two share: DDL, COPY and the round-robin.
The submodules are not imported here, so ``import pgivm.data`` stays cheap.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import islice

import psycopg
from psycopg import sql

Row = tuple[object, ...]
Columns = Sequence[tuple[str, str]]  # (name, SQL type), in table order

__all__ = ["Columns", "Row", "analyze", "copy_rows", "create_index", "create_table", "ensure_schema",
           "round_robin"]


def ensure_schema(conn: psycopg.Connection, schema: str) -> None:
    """Create ``schema`` unless it exists.

    Looked up first rather than ``CREATE SCHEMA IF NOT EXISTS``: PostgreSQL checks the CREATE
    privilege on the database before the existence test, so the plain statement would fail for a
    user who may write to ``public`` but not create schemas.
    """
    found = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
    if found is None:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))


def create_table(conn: psycopg.Connection, schema: str, table: str, columns: Columns, *, drop: bool) -> None:
    """``CREATE TABLE schema.table`` with ``columns``; with ``drop``, replace an existing table.

    No primary keys: the generated relations are bags (Housing repeats postcodes by design) and
    a key would only slow the COPY and the streamed inserts down.
    """
    ensure_schema(conn, schema)
    target = sql.Identifier(schema, table)
    if drop:
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(target))
    definitions = sql.SQL(", ").join(
        sql.SQL("{} {} NOT NULL").format(sql.Identifier(name), sql.SQL(sql_type)) for name, sql_type in columns)
    conn.execute(sql.SQL("CREATE TABLE {} ({})").format(target, definitions))


def create_index(conn: psycopg.Connection, schema: str, table: str, column: str) -> None:
    """A btree index ``<table>_<column>_idx`` on one join column (indexes live in their table's schema)."""
    conn.execute(sql.SQL("CREATE INDEX {} ON {} ({})").format(
        sql.Identifier(f"{table}_{column}_idx"), sql.Identifier(schema, table), sql.Identifier(column)))


def copy_rows(conn: psycopg.Connection, schema: str, table: str, columns: Columns, rows: Iterable[Row]) -> int:
    """COPY ``rows`` (tuples in ``columns`` order) into ``schema.table``; returns how many were sent.

    COPY rather than INSERT because it is the fast path for bulk loads, and it fires row and
    statement triggers like an INSERT does, so it also serves to apply streamed batches under a view.
    """
    statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
        sql.Identifier(schema, table), sql.SQL(", ").join(sql.Identifier(name) for name, _ in columns))
    count = 0
    with conn.cursor() as cur, cur.copy(statement) as copy:
        for row in rows:
            copy.write_row(row)
            count += 1
    return count


def analyze(conn: psycopg.Connection, schema: str, tables: Iterable[str]) -> None:
    """ANALYZE freshly loaded tables, so that the first benchmark query is planned on real statistics."""
    for table in tables:
        conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(schema, table)))


def round_robin(sources: Sequence[tuple[str, Iterator[Row]]], batch: int) -> Iterator[tuple[str, list[Row]]]:
    """Interleave ``(table, rows)`` sources: ``batch`` rows of each in turn until all run dry.

    This is the paper's update workload ("interleaving insertions to the input relations in a
    round-robin fashion", in batches of 1,000). A source that runs out leaves the rotation, so
    once the small relations are exhausted the stream is the large ones only. Rows are drawn
    lazily, one batch at a time, which the TPC-H stream relies on: a row may reference only keys
    of batches drawn before it.
    """
    if batch < 1:  # checked now, not at the first next(): the batches themselves come lazily
        raise ValueError(f"batch must be at least 1, not {batch}")
    return _round_robin(list(sources), batch)


def _round_robin(active: list[tuple[str, Iterator[Row]]], batch: int) -> Iterator[tuple[str, list[Row]]]:
    while active:
        still = []
        for table, source in active:
            chunk = list(islice(source, batch))
            if chunk:
                yield table, chunk
            if len(chunk) == batch:
                still.append((table, source))
        active = still
