"""TPC-DS tables for the relational benchmarks of ``pgivm bench sample`` (the paper's QX, QY, QZ).

DuckDB's TPC-DS extension (``dsdgen``) generates the data offline: the ``duckdb`` and
``duckdb-extension-tpcds`` packages of the same version (1.5.5) ship both. Only the columns the
queries read are kept, each table with its primary key, so that pgivm's foreign-key merging sees
the keys a real schema declares.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

from pgivm.errors import PgivmError

# table -> (columns, primary key)
TABLES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "store_sales": (("ss_item_sk", "ss_ticket_number", "ss_customer_sk", "ss_sold_date_sk", "ss_quantity"),
                    ("ss_item_sk", "ss_ticket_number")),
    "store_returns": (("sr_item_sk", "sr_ticket_number", "sr_customer_sk", "sr_returned_date_sk"),
                      ("sr_item_sk", "sr_ticket_number")),
    "catalog_sales": (("cs_item_sk", "cs_order_number", "cs_bill_customer_sk", "cs_sold_date_sk"),
                      ("cs_item_sk", "cs_order_number")),
    "date_dim": (("d_date_sk", "d_year"), ("d_date_sk",)),
    "customer": (("c_customer_sk", "c_current_hdemo_sk"), ("c_customer_sk",)),
    "household_demographics": (("hd_demo_sk", "hd_income_band_sk"), ("hd_demo_sk",)),
    "item": (("i_item_sk", "i_category_id"), ("i_item_sk",)),
}


@dataclass
class TpcDs:
    scale: float
    rows: dict[str, list[tuple[int | None, ...]]]  # table -> rows in primary-key order


def _extension() -> Path:
    try:
        import duckdb
        import duckdb_extension_tpcds
    except ImportError:
        raise PgivmError("TPC-DS data needs duckdb and its tpcds extension",
                         "pip install 'duckdb==1.5.5' 'duckdb-extension-tpcds==1.5.5' (or pip install -e '.[bench]')") from None

    found = sorted(Path(duckdb_extension_tpcds.__file__).parent.glob(f"extensions/v{duckdb.__version__}/tpcds.duckdb_extension"))
    if not found:
        raise PgivmError(f"no tpcds extension for duckdb {duckdb.__version__}",
                         "install duckdb and duckdb-extension-tpcds of the same version")
    return found[0]


def generate(scale: float = 0.1) -> TpcDs:
    """The tables at scale factor ``scale`` (0.1: 288,464 store_sales rows, in about 3 s)."""
    import duckdb

    db = duckdb.connect()
    db.execute(f"LOAD '{_extension()}'")
    db.execute("CALL dsdgen(sf = ?)", [scale])
    rows = {}
    for table, (columns, key) in TABLES.items():
        rows[table] = db.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {', '.join(key)}").fetchall()
    db.close()
    return TpcDs(scale, rows)


def create_tables(conn: psycopg.Connection, tables: list[str]) -> None:
    """Empty tables with their primary keys (and an ``id`` column, which a hand-written trigger can
    use to tell a new row from the old ones in a self-join)."""
    for table in tables:
        columns, key = TABLES[table]
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {t} CASCADE; CREATE TABLE {t} (id bigserial UNIQUE, {cols}, PRIMARY KEY ({key}))").format(
            t=sql.Identifier(table), cols=sql.SQL(", ").join(sql.SQL("{} integer").format(sql.Identifier(c)) for c in columns),
            key=sql.SQL(", ").join(map(sql.Identifier, key))))
        for column in columns:
            if column not in key:
                conn.execute(sql.SQL("CREATE INDEX ON {} ({})").format(sql.Identifier(table), sql.Identifier(column)))


def load(conn: psycopg.Connection, table: str, rows: list[tuple[int | None, ...]]) -> None:
    columns, _ = TABLES[table]
    with conn.cursor().copy(sql.SQL("COPY {} ({}) FROM STDIN").format(
            sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns)))) as copy:
        for row in rows:
            copy.write_row(row)
