"""The data generators of pgivm.data: deterministic, the documented sizes, and joinable as designed.

Housing must have a flat join that grows cubically with the scale while the base data grows
linearly (what the F-IVM paper's factorized-payload experiment rests on); TPC-H must load with
every foreign key satisfied, before and after its update stream, with either backend.
"""

from __future__ import annotations

import psycopg
import pytest
from psycopg import sql

from pgivm.data import housing, tpch
from pgivm.errors import PgivmError

POSTCODES = 40  # small enough that scale 4 (32 join tuples per postcode) stays instant


def housing_join_count(conn: psycopg.Connection, schema: str) -> int:
    """count(*) of the natural join of the six relations (they share only ``postcode``)."""
    joined = sql.SQL(" NATURAL JOIN ").join(sql.Identifier(schema, table) for table in housing.TABLES)
    return conn.execute(sql.SQL("SELECT count(*) FROM {}").format(joined)).fetchone()[0]


def table_rows(conn: psycopg.Connection, schema: str, table: str, columns: list[tuple[str, str]]) -> list[tuple]:
    names = sql.SQL(", ").join(sql.Identifier(name) for name, _ in columns)
    return conn.execute(sql.SQL("SELECT {} FROM {}").format(names, sql.Identifier(schema, table))).fetchall()


def table_count(conn: psycopg.Connection, schema: str, table: str) -> int:
    return conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(schema, table))).fetchone()[0]


# --- Housing ----------------------------------------------------------------------------------


def test_housing_rows_are_deterministic_per_seed() -> None:
    for table in housing.TABLES:
        first = list(housing.rows(table, 2, seed=7, postcodes=30))
        assert first == list(housing.rows(table, 2, seed=7, postcodes=30))
        assert first != list(housing.rows(table, 2, seed=8, postcodes=30))
        assert len(first) == housing.row_count(table, 2, 30)
        assert all(len(row) == len(housing.COLUMNS[table]) for row in first)


def test_housing_schema_has_the_papers_27_attributes() -> None:
    names = [name for table in housing.TABLES for name, _ in housing.COLUMNS[table]]
    assert len(set(names)) == 27
    assert all(columns[0] == ("postcode", "integer") for columns in housing.COLUMNS.values())
    assert len(names) - len(set(names)) == len(housing.TABLES) - 1  # only postcode is shared: a star


def test_housing_sizes_at_the_papers_scales() -> None:
    base = {scale: sum(housing.row_count(table, scale) for table in housing.TABLES) for scale in (1, 20)}
    assert base == {1: 150_000, 20: 1_325_000}  # the paper: 150,000 and "1.4M"
    assert housing.join_size(20) == 25_000 * 20 * 20 * 10


def test_housing_join_grows_cubically_while_base_grows_linearly(conn: psycopg.Connection) -> None:
    joins, bases = {}, {}
    for scale in (1, 2, 4):
        schema = f"housing_s{scale}"
        counts = housing.generate(conn, scale, seed=3, schema=schema, postcodes=POSTCODES)
        assert counts == {table: housing.row_count(table, scale, POSTCODES) for table in housing.TABLES}
        assert {table: table_count(conn, schema, table) for table in housing.TABLES} == counts
        bases[scale] = sum(counts.values())
        joins[scale] = housing_join_count(conn, schema)
        assert joins[scale] == housing.join_size(scale, POSTCODES) == POSTCODES * scale * scale * ((scale + 1) // 2)
    assert bases == {1: 6 * POSTCODES, 2: 8 * POSTCODES, 4: 13 * POSTCODES}  # linear: P·(2s + ⌈s/2⌉ + 3)
    assert joins[4] / joins[2] == 8 and joins[2] / joins[1] == 4  # s²·⌈s/2⌉
    assert bases[4] / bases[2] < 2


def test_housing_loads_exactly_the_generated_rows(conn: psycopg.Connection) -> None:
    housing.generate(conn, 2, seed=5, postcodes=25)
    for table in housing.TABLES:
        columns = housing.COLUMNS[table]
        assert sorted(table_rows(conn, "public", table, columns)) == sorted(housing.rows(table, 2, 5, 25))
    index = conn.execute("SELECT count(*) FROM pg_indexes WHERE schemaname = 'public'").fetchone()[0]
    assert index == len(housing.TABLES)
    with pytest.raises(psycopg.errors.DuplicateTable):
        housing.generate(conn, 1, postcodes=5)
    assert housing.generate(conn, 1, postcodes=5, drop=True)["house"] == 5


def test_housing_stream_is_new_rows_round_robin(conn: psycopg.Connection) -> None:
    batches = list(housing.stream(2, seed=5, postcodes=25, batch=20))
    assert [table for table, _ in batches[:6]] == list(housing.TABLES)
    assert all(1 <= len(rows) <= 20 for _, rows in batches)
    assert batches == list(housing.stream(2, seed=5, postcodes=25, batch=20))
    streamed: dict[str, list[tuple]] = {table: [] for table in housing.TABLES}
    for table, rows in batches:
        streamed[table].extend(rows)
    for table in housing.TABLES:
        assert len(streamed[table]) == housing.row_count(table, 2, 25)  # one more dataset's worth
        assert sorted(streamed[table]) != sorted(housing.rows(table, 2, 5, 25))
        assert sorted(row[0] for row in streamed[table]) == sorted(row[0] for row in housing.rows(table, 2, 5, 25))
    capped = list(housing.stream(2, seed=5, postcodes=25, batch=20, per_table=30))
    assert sum(len(rows) for _, rows in capped) == 30 * 2 + 25 * 4  # only house and shop have more than 30

    housing.generate(conn, 2, seed=5, postcodes=25)
    for table, rows in batches:
        housing.insert(conn, table, rows)
    assert table_count(conn, "public", "house") == 2 * housing.row_count("house", 2, 25)
    # Doubling every relation multiplies the star join per postcode by 2⁶.
    assert housing_join_count(conn, "public") == 2 ** 6 * housing.join_size(2, 25)


def test_housing_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        housing.rows("houses", 1)
    with pytest.raises(ValueError):
        housing.rows("house", 0)
    with pytest.raises(ValueError):
        housing.stream(1, batch=0)


# --- TPC-H ------------------------------------------------------------------------------------

SNOWFLAKE_JOIN = """
    SELECT count(*) FROM {l} JOIN {o} ON l_orderkey = o_orderkey
                            JOIN {c} ON o_custkey = c_custkey
                            JOIN {n} ON c_nationkey = n_nationkey
                            JOIN {p} ON l_partkey = p_partkey
                            JOIN {s} ON l_suppkey = s_suppkey
"""
ORDERS_JOIN = """
    SELECT count(*) FROM {l} JOIN {o} ON l_orderkey = o_orderkey
                            JOIN {c} ON o_custkey = c_custkey
                            JOIN {n} ON c_nationkey = n_nationkey
"""


def tpch_count(conn: psycopg.Connection, schema: str, query: str) -> int:
    names = {"l": "lineitem", "o": "orders", "c": "customer", "n": "nation", "p": "part", "s": "supplier"}
    statement = sql.SQL(query).format(**{alias: sql.Identifier(schema, table) for alias, table in names.items()})
    return conn.execute(statement).fetchone()[0]


def assert_foreign_keys_hold(conn: psycopg.Connection, schema: str) -> None:
    lines = table_count(conn, schema, "lineitem")
    assert lines > 0
    assert tpch_count(conn, schema, ORDERS_JOIN) == lines
    assert tpch_count(conn, schema, SNOWFLAKE_JOIN) == lines
    distinct = conn.execute(sql.SQL("SELECT count(DISTINCT o_orderkey) = count(*) FROM {}").format(
        sql.Identifier(schema, "orders"))).fetchone()[0]
    assert distinct


def test_tpch_python_rows_are_deterministic_per_seed() -> None:
    for table in tpch.TABLES:
        first = list(tpch.rows(table, 0.001, seed=1))
        assert first == list(tpch.rows(table, 0.001, seed=1))
        if table != "nation":
            assert first != list(tpch.rows(table, 0.001, seed=2))
    assert [tpch.order_key(i) for i in (1, 7, 8, 15, 16)] == [1, 7, 32, 39, 64]


def test_tpch_python_backend_loads_and_joins(conn: psycopg.Connection) -> None:
    counts = tpch.generate(conn, 0.002, seed=4, backend="python")
    for table in ("nation", "supplier", "part", "customer", "orders"):
        assert counts[table] == tpch.cardinality(table, 0.002)
    assert 1 * counts["orders"] <= counts["lineitem"] <= 7 * counts["orders"]
    assert {table: table_count(conn, "public", table) for table in tpch.TABLES} == counts
    assert_foreign_keys_hold(conn, "public")
    totals = conn.execute("""
        SELECT count(*) FROM orders o
        WHERE o_totalprice NOT BETWEEN
              (SELECT sum(l_extendedprice * (1 - l_discount)) - 1 FROM lineitem WHERE l_orderkey = o_orderkey)
          AND (SELECT sum(l_extendedprice * (1 - l_discount) * 1.08) + 1 FROM lineitem WHERE l_orderkey = o_orderkey)
    """).fetchone()[0]
    assert totals == 0  # an order's total is its lines' charges

    for table, rows in tpch.stream(0.002, seed=9, batch=250, counts=counts):
        tpch.insert(conn, table, rows)
    after = {table: table_count(conn, "public", table) for table in tpch.TABLES}
    assert after["orders"] == 2 * counts["orders"] and after["lineitem"] == 2 * counts["lineitem"]
    assert after["nation"] == 50
    assert_foreign_keys_hold(conn, "public")  # streamed rows reference only rows already inserted
    duplicates = conn.execute(
        "SELECT count(*) FROM (SELECT 1 FROM lineitem GROUP BY l_orderkey, l_linenumber HAVING count(*) > 1) d"
    ).fetchone()[0]
    assert duplicates == 0


def test_tpch_stream_is_deterministic_and_capped() -> None:
    first = list(tpch.stream(0.001, seed=3, batch=40, per_table=100))
    assert first == list(tpch.stream(0.001, seed=3, batch=40, per_table=100))
    assert first != list(tpch.stream(0.001, seed=4, batch=40, per_table=100))
    assert [table for table, _ in first[:6]] == list(tpch.TABLES)
    sizes: dict[str, int] = {}
    for table, rows in first:
        sizes[table] = sizes.get(table, 0) + len(rows)
    assert sizes == {"nation": 25, "supplier": 10, "part": 100, "customer": 100, "orders": 100, "lineitem": 100}
    only = {table for table, _ in tpch.stream(0.001, batch=40, per_table=100, tables=["lineitem"])}
    assert only == {"lineitem"}


@pytest.mark.skipif(tpch.tpchgen_executable() is None, reason="tpchgen-cli is not installed")
def test_tpch_tpchgen_backend_loads_and_joins(conn: psycopg.Connection) -> None:
    counts = tpch.generate(conn, 0.01, schema="tpch", backend="tpchgen")
    assert counts == {"nation": 25, "supplier": 100, "part": 2_000, "customer": 1_500, "orders": 15_000,
                      "lineitem": 60_175}
    assert_foreign_keys_hold(conn, "tpch")
    max_key = conn.execute("SELECT max(o_orderkey) FROM tpch.orders").fetchone()[0]
    assert max_key == tpch.order_key(counts["orders"])  # tpchgen's sparse keys are the ones the stream continues
    first_part = conn.execute("SELECT p_retailprice FROM tpch.part WHERE p_partkey = 1234").fetchone()[0]
    assert first_part == tpch.retail_price(1234)
    for table, rows in tpch.stream(0.01, batch=1_000, per_table=2_000, counts=counts):
        tpch.insert(conn, table, rows, schema="tpch")
    assert_foreign_keys_hold(conn, "tpch")


def test_tpch_falls_back_to_python_without_tpchgen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tpch, "tpchgen_executable", lambda: None)
    assert tpch.resolve_backend("auto") == "python"
    with pytest.raises(PgivmError, match="tpchgen-cli not found"):
        tpch.resolve_backend("tpchgen")


def test_tpch_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        tpch.rows("region", 0.01)
    with pytest.raises(ValueError):
        tpch.rows("orders", 0)
    with pytest.raises(ValueError):
        tpch.resolve_backend("dbgen")  # type: ignore[arg-type]
