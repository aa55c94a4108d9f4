"""GROUP BY a position or an output's name (``pgivm/query/group_by_outputs.py``), read as PostgreSQL
reads it: the SELECT item's expression, unless a table of the query has a column of that name.
No database: the tables' columns are given."""

from __future__ import annotations

import pytest

from pgivm.errors import UnsupportedQuery
from pgivm.query.group_by_outputs import group_by_outputs
from pgivm.query.model import TableRef

COLUMNS = {"r": ["a", "b"], "s": ["b", "c"]}


def _columns(table: TableRef) -> list[str]:
    return COLUMNS[table.name]


@pytest.mark.parametrize(("sql", "grouped"), [
    ("SELECT r.a % 2, count(*) FROM r GROUP BY 1", "GROUP BY r.a % 2"),
    ("SELECT s.c, r.a + 1 AS k, count(*) FROM r JOIN s ON r.b = s.b GROUP BY 2, 1", "GROUP BY r.a + 1, s.c"),
    ("SELECT r.a + 1 AS k, count(*) FROM r GROUP BY k", "GROUP BY r.a + 1"),
    # inside a subquery, and a WITH query whose columns decide
    ("SELECT x.n FROM (SELECT r.b AS k, count(*) AS n FROM r GROUP BY k) AS x", "GROUP BY r.b"),
    ("WITH w AS (SELECT a AS z FROM r) SELECT w.z + 1 AS c, count(*) FROM w GROUP BY c", "GROUP BY w.z + 1"),
])
def test_a_position_or_an_output_name_is_the_items_expression(sql: str, grouped: str) -> None:
    rewritten = group_by_outputs(sql, _columns)
    assert rewritten is not None and grouped in rewritten, rewritten


@pytest.mark.parametrize("sql", [
    "SELECT r.a AS b, count(*) FROM r GROUP BY b",  # b is r's column: PostgreSQL groups by r.b
    "SELECT r.a, count(*) FROM r GROUP BY r.a",
    "SELECT r.a AS k FROM r GROUP BY 'k'",  # a string constant is no position
    "WITH w AS (SELECT a AS c FROM r) SELECT w.c + 1 AS c, count(*) FROM w GROUP BY c",  # the WITH query's c
])
def test_a_column_of_the_tables_stays_as_written(sql: str) -> None:
    assert group_by_outputs(sql, _columns) is None


def test_a_position_outside_the_select_list_is_refused_as_postgresql_refuses_it() -> None:
    with pytest.raises(UnsupportedQuery, match="GROUP BY position 3 is not in select list"):
        group_by_outputs("SELECT r.a, count(*) FROM r GROUP BY 3", _columns)
    with pytest.raises(UnsupportedQuery, match="names a SELECT \\*"):
        group_by_outputs("SELECT * FROM r GROUP BY 1", _columns)
