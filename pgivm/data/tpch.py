"""A *Retailer*-like snowflake cut out of TPC-H: lineitem, orders, customer, part, supplier, nation.

The F-IVM paper's Retailer dataset is proprietary: a fact relation (Inventory) joined along
dimension hierarchies (Item, Weather, Location → Census). TPC-H has the same shape: lineitem
references orders (→ customer → nation), part and supplier (→ nation). Only the columns a
join-aggregate benchmark needs are kept: the keys and a few numeric measures (``COLUMNS``).

Two backends produce the same schema and TPC-H's cardinalities (per scale factor SF: orders
1.5M·SF, customer 150k·SF, part 200k·SF, supplier 10k·SF, 25 nations, 1 to 7 lineitems per order,
about 6M·SF in all; counts are ``int(base · SF)`` like tpchgen's):

- ``"tpchgen"``: the ``tpchgen-cli`` executable (PyPI package ``tpchgen-cli``, a Rust port of
  dbgen that runs offline) writes CSV files to a temporary directory, which are COPYed into
  staging tables and projected onto the kept columns. Its output is TPC-H's own and deterministic
  by itself: **the seed is ignored**.
- ``"python"``: a pure Python generator (:func:`rows`), deterministic in ``seed``, following
  dbgen's rules where they matter to joins and sums: sparse order keys (8 used out of every 32),
  a lineitem's supplier among the four that supply its part, part prices from the part key,
  order totals from their lines. Uniform keys otherwise. It loads about 10⁵ rows/s (0.7 s at SF
  0.01, 6 s at SF 0.1; tpchgen: 1.5 s and 4.5 s, about 1 s of which is its start-up).

``"auto"`` (the default) takes tpchgen when its executable is found, next to the running Python
or on ``PATH``, and the Python generator otherwise.

The stream (:func:`stream`) inserts new rows into every relation round-robin. New rows get keys
beyond the loaded ones, and every reference a streamed row makes points at a row loaded or
streamed before it, so applying the batches in order keeps every foreign key satisfied.
"""

from __future__ import annotations

import datetime
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from decimal import Decimal
from itertools import count, islice
from pathlib import Path
from typing import Literal

import psycopg
from psycopg import sql

from pgivm.data import Row, analyze, copy_rows, create_index, create_table, round_robin
from pgivm.errors import PgivmError

Backend = Literal["auto", "tpchgen", "python"]

BATCH = 1_000  # the paper's update batch size
EXECUTABLE = "tpchgen-cli"

# Parents before children: the order that loads and streams keep every foreign key satisfied in.
TABLES: tuple[str, ...] = ("nation", "supplier", "part", "customer", "orders", "lineitem")

COLUMNS: dict[str, list[tuple[str, str]]] = {
    "nation": [("n_nationkey", "integer"), ("n_regionkey", "integer"), ("n_name", "text")],
    "supplier": [("s_suppkey", "integer"), ("s_nationkey", "integer"), ("s_acctbal", "numeric(15,2)")],
    "part": [("p_partkey", "integer"), ("p_size", "integer"), ("p_retailprice", "numeric(15,2)")],
    "customer": [("c_custkey", "integer"), ("c_nationkey", "integer"), ("c_acctbal", "numeric(15,2)")],
    "orders": [("o_orderkey", "bigint"), ("o_custkey", "integer"), ("o_totalprice", "numeric(15,2)"),
               ("o_orderdate", "date")],
    "lineitem": [("l_orderkey", "bigint"), ("l_partkey", "integer"), ("l_suppkey", "integer"),
                 ("l_linenumber", "integer"), ("l_quantity", "numeric(15,2)"),
                 ("l_extendedprice", "numeric(15,2)"), ("l_discount", "numeric(15,2)")],
}

# The columns joins go through, indexed when ``index=True``.
INDEXED: dict[str, tuple[str, ...]] = {
    "nation": ("n_nationkey",),
    "supplier": ("s_suppkey", "s_nationkey"),
    "part": ("p_partkey",),
    "customer": ("c_custkey", "c_nationkey"),
    "orders": ("o_orderkey", "o_custkey"),
    "lineitem": ("l_orderkey", "l_partkey", "l_suppkey"),
}

# TPC-H's rows per unit of scale factor (lineitem has none: 1 to 7 per order).
BASE_ROWS: dict[str, int] = {"supplier": 10_000, "part": 200_000, "customer": 150_000, "orders": 1_500_000}

# TPC-H's 25 nations, in key order, with their region keys.
NATIONS: tuple[tuple[str, int], ...] = (
    ("ALGERIA", 0), ("ARGENTINA", 1), ("BRAZIL", 1), ("CANADA", 1), ("EGYPT", 4), ("ETHIOPIA", 0),
    ("FRANCE", 3), ("GERMANY", 3), ("INDIA", 2), ("INDONESIA", 2), ("IRAN", 4), ("IRAQ", 4),
    ("JAPAN", 2), ("JORDAN", 4), ("KENYA", 0), ("MOROCCO", 0), ("MOZAMBIQUE", 0), ("PERU", 1),
    ("CHINA", 2), ("ROMANIA", 3), ("SAUDI ARABIA", 4), ("VIETNAM", 2), ("RUSSIA", 3),
    ("UNITED KINGDOM", 3), ("UNITED STATES", 1),
)
REGIONS = 5
LINES_PER_ORDER = (1, 7)
MAX_LOADED_LINENUMBER = LINES_PER_ORDER[1]  # streamed lines number from 8 on, never clashing
FIRST_ORDER_DATE = datetime.date(1992, 1, 1)
LAST_ORDER_DATE = datetime.date(1998, 8, 2)  # TPC-H: 151 days before the end of 1998
MIN_SCALE_FACTOR = 1e-4  # one supplier


# --- sizes and keys ---------------------------------------------------------------------------


def cardinality(table: str, scale_factor: float) -> int:
    """TPC-H's row count of ``table``: exact for all but lineitem, whose 1–7 lines per order average 4."""
    _check_table(table)
    _check_scale_factor(scale_factor)
    if table == "nation":
        return len(NATIONS)
    if table == "lineitem":
        return 4 * cardinality("orders", scale_factor)
    return max(1, int(BASE_ROWS[table] * scale_factor))


def order_key(index: int) -> int:
    """The key of the ``index``-th order (from 1): dbgen's sparse keys, 8 used out of every 32.

    1–7, 32–39, 64–71, …: tpchgen's keys too, so both backends (and the stream) agree on them.
    """
    return ((index >> 3) << 5) | (index & 7)


def retail_price(partkey: int) -> Decimal:
    """dbgen's part price, a function of the key alone (so lineitem prices need no part lookup)."""
    return _cents(_retail_cents(partkey))


def _retail_cents(partkey: int) -> int:
    return 90_000 + (partkey // 10) % 20_001 + 100 * (partkey % 1_000)


def part_supplier(partkey: int, i: int, suppliers: int) -> int:
    """The ``i``-th (0–3) supplier of a part, dbgen's partsupp rule, which lineitems draw from."""
    return (partkey + i * (suppliers // 4 + (partkey - 1) // suppliers)) % suppliers + 1


def _cents(value: int) -> Decimal:
    """``value / 100`` as an exact two-decimal numeric, the type of TPC-H's money columns."""
    return Decimal(value).scaleb(-2)


# --- Python backend ---------------------------------------------------------------------------


def rows(table: str, scale_factor: float = 0.01, seed: int = 0) -> Iterator[Row]:
    """The rows of ``table`` from the Python generator, in ``COLUMNS`` order; deterministic in ``seed``.

    Orders and lineitem come from one random stream (an order's total is the sum over its lines),
    so asking for either walks both.
    """
    _check_table(table)
    _check_scale_factor(scale_factor)
    if table == "nation":
        return iter([(key, region, name) for key, (name, region) in enumerate(NATIONS)])
    if table == "orders":
        return (order for order, _ in _orders(scale_factor, seed))
    if table == "lineitem":
        return (line for _, lines in _orders(scale_factor, seed) for line in lines)
    return _dimension(table, range(1, cardinality(table, scale_factor) + 1), random.Random(f"tpch:{seed}:{table}"))


def _dimension(table: str, keys: Iterable[int], rng: random.Random) -> Iterator[Row]:
    """Supplier, part or customer rows for ``keys``: nations uniform, balances uniform as in TPC-H."""
    for key in keys:
        if table == "part":
            yield (key, rng.randint(1, 50), retail_price(key))
        else:
            yield (key, rng.randrange(len(NATIONS)), _cents(rng.randint(-99_999, 999_999)))


def _orders(scale_factor: float, seed: int) -> Iterator[tuple[Row, list[Row]]]:
    """Each order with its lines: 1–7 lines, parts uniform, each line's supplier one of its part's four."""
    rng = random.Random(f"tpch:{seed}:orders")
    customers = cardinality("customer", scale_factor)
    parts = cardinality("part", scale_factor)
    suppliers = cardinality("supplier", scale_factor)
    for index in range(1, cardinality("orders", scale_factor) + 1):
        key = order_key(index)
        lines, total = [], 0
        for number in range(1, rng.randint(*LINES_PER_ORDER) + 1):
            line, charge = _line(rng, key, number, rng.randint(1, parts),
                                 lambda partkey: part_supplier(partkey, rng.randrange(4), suppliers))
            lines.append(line)
            total += charge
        yield (key, rng.randint(1, customers), _cents(total), _order_date(rng)), lines


def _line(rng: random.Random, orderkey: int, number: int, partkey: int,
          supplier_of: Callable[[int], int]) -> tuple[Row, int]:
    """One lineitem and what it charges in cents (price less discount plus tax), which order totals sum."""
    suppkey = supplier_of(partkey)
    quantity = rng.randint(1, 50)
    price_cents = quantity * _retail_cents(partkey)
    discount, tax = rng.randint(0, 10), rng.randint(0, 8)  # percent
    charge = round(price_cents * (100 - discount) * (100 + tax) / 10_000)
    return (orderkey, partkey, suppkey, number, _cents(100 * quantity), _cents(price_cents), _cents(discount)), charge


def _order_date(rng: random.Random) -> datetime.date:
    return FIRST_ORDER_DATE + datetime.timedelta(days=rng.randint(0, (LAST_ORDER_DATE - FIRST_ORDER_DATE).days))


# --- stream -----------------------------------------------------------------------------------


def stream(scale_factor: float = 0.01, seed: int = 0, batch: int = BATCH, per_table: int | None = None,
           counts: Mapping[str, int] | None = None,
           tables: Iterable[str] = TABLES) -> Iterator[tuple[str, list[Row]]]:
    """New rows for ``tables`` (default: all six), round-robin in batches of ``batch``: ``(table, rows)``.

    Keys continue after the loaded ones: ``counts`` (what :func:`generate` returned) says how many
    rows were loaded, by default TPC-H's cardinalities at ``scale_factor``, which both backends
    produce. Each streamed row references only rows that exist once the batches before it are
    applied (loaded ones or streamed ones); new customers and suppliers keep to the 25 TPC-H
    nations, so the nation rows streamed are unreferenced. Streamed lineitems go to random existing
    orders with line numbers from 8 on, and streamed orders' totals are drawn, not summed.

    Each relation streams as many rows as were loaded into it (``counts``, or its cardinality:
    the paper's streams are whole datasets), at most ``per_table`` if given; exhausted relations
    leave the rotation (nation first, after 25 rows). Deterministic in ``seed`` for either backend.
    """
    _check_scale_factor(scale_factor)
    chosen = list(tables)
    for table in chosen:
        _check_table(table)
    loaded = {table: cardinality(table, scale_factor) for table in TABLES}
    loaded.update({table: n for table, n in (counts or {}).items() if table in loaded})
    known = dict(loaded)  # rows that exist so far, per table, loaded and streamed; updated as rows are drawn
    makers = {"nation": _stream_nations, "supplier": _stream_dimension, "part": _stream_dimension,
              "customer": _stream_dimension, "orders": _stream_orders, "lineitem": _stream_lines}
    sources = []
    for table in TABLES:
        if table in chosen:
            rng = random.Random(f"tpch:{seed}:{table}:stream")
            size = loaded[table] if per_table is None else max(min(per_table, loaded[table]), 0)
            sources.append((table, islice(makers[table](table, rng, known), size)))
    return round_robin(sources, batch)


def _stream_nations(table: str, rng: random.Random, known: dict[str, int]) -> Iterator[Row]:
    for key in count(known["nation"]):  # nation keys start at 0
        known["nation"] = key + 1
        yield (key, rng.randrange(REGIONS), f"NATION {key}")


def _stream_dimension(table: str, rng: random.Random, known: dict[str, int]) -> Iterator[Row]:
    nations = len(NATIONS)
    for key in count(known[table] + 1):
        known[table] = key
        if table == "part":
            yield (key, rng.randint(1, 50), retail_price(key))
        else:
            yield (key, rng.randrange(nations), _cents(rng.randint(-99_999, 999_999)))


def _stream_orders(table: str, rng: random.Random, known: dict[str, int]) -> Iterator[Row]:
    for index in count(known["orders"] + 1):
        known["orders"] = index
        yield (order_key(index), rng.randint(1, known["customer"]), _cents(rng.randint(100_000, 50_000_000)),
               _order_date(rng))


def _stream_lines(table: str, rng: random.Random, known: dict[str, int]) -> Iterator[Row]:
    next_number: dict[int, int] = {}  # per order, the next line number free for a streamed line
    while True:
        orderkey = order_key(rng.randint(1, known["orders"]))
        number = next_number.get(orderkey, MAX_LOADED_LINENUMBER + 1)
        next_number[orderkey] = number + 1
        line, _ = _line(rng, orderkey, number, rng.randint(1, known["part"]),
                        lambda partkey: rng.randint(1, known["supplier"]))
        known["lineitem"] += 1
        yield line


# --- database ---------------------------------------------------------------------------------


def tpchgen_executable() -> str | None:
    """The ``tpchgen-cli`` executable: beside the running Python (a virtualenv's bin/), else on PATH."""
    beside = Path(sys.executable).parent / (EXECUTABLE + (".exe" if os.name == "nt" else ""))
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which(EXECUTABLE)


def resolve_backend(backend: Backend = "auto") -> Backend:
    """The backend ``generate`` will use: ``"auto"`` is tpchgen when its executable is found, else Python."""
    if backend == "python":
        return "python"
    if backend not in ("auto", "tpchgen"):
        raise ValueError(f"unknown backend {backend!r}: expected 'auto', 'tpchgen' or 'python'")
    if tpchgen_executable() is not None:
        return "tpchgen"
    if backend == "tpchgen":
        raise PgivmError(f"{EXECUTABLE} not found beside {sys.executable} nor on PATH",
                         hint="pip install tpchgen-cli, or use backend='python'")
    return "python"


def create_tables(conn: psycopg.Connection, schema: str = "public", drop: bool = False, index: bool = True) -> None:
    """Create the six empty relations in ``schema`` (created if missing); ``drop`` replaces existing ones.

    ``index`` adds btree indexes on the key and foreign-key columns (``INDEXED``), which joins probe.
    """
    for table in TABLES:
        create_table(conn, schema, table, COLUMNS[table], drop=drop)
        if index:
            _create_indexes(conn, schema, table)


def generate(conn: psycopg.Connection, scale_factor: float = 0.01, schema: str = "public", seed: int = 0, *,
             backend: Backend = "auto", drop: bool = False, index: bool = True) -> dict[str, int]:
    """Create the six relations in ``schema`` and fill them; returns the row count of each.

    ``seed`` only matters to the Python backend (tpchgen's data is fixed by the scale factor).
    tpchgen runs before the transaction opens; the load itself is one transaction (a savepoint
    inside an open one), with indexes built after the COPY and the tables ANALYZEd.
    """
    _check_scale_factor(scale_factor)
    chosen = resolve_backend(backend)
    with tempfile.TemporaryDirectory(prefix="pgivm-tpch-") as directory:
        if chosen == "tpchgen":
            _run_tpchgen(scale_factor, Path(directory))
        with conn.transaction():
            create_tables(conn, schema, drop=drop, index=False)
            counts: dict[str, int] = {}
            for table in TABLES:
                if chosen == "tpchgen":
                    counts[table] = _copy_csv(conn, schema, table, Path(directory) / f"{table}.csv")
                else:
                    counts[table] = copy_rows(conn, schema, table, COLUMNS[table], rows(table, scale_factor, seed))
            if index:
                for table in TABLES:
                    _create_indexes(conn, schema, table)
            analyze(conn, schema, TABLES)
    return counts


def insert(conn: psycopg.Connection, table: str, batch: list[Row], schema: str = "public") -> int:
    """Apply one batch of :func:`stream` (COPY, which fires the tables' triggers); returns its size."""
    _check_table(table)
    return copy_rows(conn, schema, table, COLUMNS[table], batch)


def _create_indexes(conn: psycopg.Connection, schema: str, table: str) -> None:
    for column in INDEXED[table]:
        create_index(conn, schema, table, column)


def _run_tpchgen(scale_factor: float, directory: Path) -> None:
    """Write the six tables as CSV (with a header line) into ``directory``."""
    executable = tpchgen_executable()
    if executable is None:
        raise PgivmError(f"{EXECUTABLE} not found beside {sys.executable} nor on PATH", hint="pip install tpchgen-cli")
    command = [executable, "csv", "--scale-factor", repr(float(scale_factor)), "--tables", ",".join(TABLES),
               "--output-dir", str(directory), "--overwrite", "--quiet"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise PgivmError(f"{EXECUTABLE} failed with exit code {done.returncode}: {done.stderr.strip()[-500:]}",
                         hint="tpchgen-cli 4 or later is expected; backend='python' needs no executable")


def _copy_csv(conn: psycopg.Connection, schema: str, table: str, path: Path) -> int:
    """Load one tpchgen CSV file: COPY it whole into a text staging table, then keep ``COLUMNS`` typed.

    Server-side projection and casts are much faster than parsing the CSV in Python; the header
    line names the staging columns, so the file's column order does not matter.
    """
    with path.open("rb") as source:
        header = source.readline().decode().strip().split(",")
        missing = [name for name, _ in COLUMNS[table] if name not in header]
        if missing:
            raise PgivmError(f"{path.name} from {EXECUTABLE} lacks columns {', '.join(missing)}")
        source.seek(0)
        stage = sql.Identifier("pg_temp", f"pgivm_tpch_{table}")
        conn.execute(sql.SQL("CREATE TEMP TABLE {} ({})").format(
            stage, sql.SQL(", ").join(sql.SQL("{} text").format(sql.Identifier(name)) for name in header)))
        with conn.cursor() as cur:
            with cur.copy(sql.SQL("COPY {} FROM STDIN (FORMAT csv, HEADER true)").format(stage)) as copy:
                while chunk := source.read(1 << 20):
                    copy.write(chunk)
            cur.execute(sql.SQL("INSERT INTO {} ({}) SELECT {} FROM {}").format(
                sql.Identifier(schema, table),
                sql.SQL(", ").join(sql.Identifier(name) for name, _ in COLUMNS[table]),
                sql.SQL(", ").join(sql.SQL("{}::{}").format(sql.Identifier(name), sql.SQL(sql_type))
                                   for name, sql_type in COLUMNS[table]),
                stage))
            loaded = cur.rowcount
        conn.execute(sql.SQL("DROP TABLE {}").format(stage))
    return loaded


def _check_table(table: str) -> None:
    if table not in COLUMNS:
        raise ValueError(f"unknown TPC-H table {table!r}: expected one of {', '.join(TABLES)}")


def _check_scale_factor(scale_factor: float) -> None:
    if isinstance(scale_factor, bool) or not isinstance(scale_factor, (int, float)) or not (
            scale_factor >= MIN_SCALE_FACTOR):
        raise ValueError(f"scale_factor must be a number of at least {MIN_SCALE_FACTOR}, not {scale_factor!r}")
