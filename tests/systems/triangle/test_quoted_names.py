"""IVMε's views under a name that needs quoting ("My View"): the state schema pgivm_My View is
looked up as a quoted name. An unquoted one is a syntax error to PostgreSQL 15's to_regclass (the
create failed: "invalid name syntax") and no relation at all to 16's and later (the status of a
Loomis-Whitney, 4-path, 3-path or refined view read relations the state does not have)."""

from __future__ import annotations

import psycopg
import pytest

from pgivm import command
from tests.conftest import TRIANGLE_SQL
from tests.systems.triangle.test_four_path import PATH4, PATH4_TABLES
from tests.systems.triangle.test_loomis_whitney import LW4, LW4_TABLES
from tests.systems.triangle.test_three_path import PATH3, PATH3_TABLES

SHAPES = {
    "listing": ("SELECT r.a, r.b, s.c FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a", None, {}),
    "refined": (TRIANGLE_SQL, None, {"partitions": "refined"}),
    "loomis-whitney": (LW4, LW4_TABLES, {}),
    "4-path": (PATH4, PATH4_TABLES, {}),
    "3-path": (PATH3, PATH3_TABLES, {}),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_name_that_needs_quoting_has_the_status_of_a_plain_one(conn: psycopg.Connection, dsn: str, shape: str) -> None:
    query, tables, options = SHAPES[shape]
    for table, columns in (tables or {"r": ("a", "b"), "s": ("b", "c"), "t": ("c", "a")}).items():
        conn.execute(f"CREATE TABLE {table} ({', '.join(c + ' int' for c in columns)})")
        conn.execute(f"INSERT INTO {table} SELECT {', '.join('(g * ' + str(i + 3) + ' + ' + str(i) + ') % 5' for i in range(len(columns)))} "
                     "FROM generate_series(1, 40) g")
    for name in ("plain", "My View"):
        command.create(name, query, system="ivme", epsilon=0.5, target=dsn, **options)
    plain, quoted = command.status("plain", target=dsn), command.status("My View", target=dsn)
    assert quoted.sections == plain.sections and quoted.figures == plain.figures
    assert quoted.sections[0].rows and quoted.sections[0].rows[0][0] not in ("R", "S", "T") or shape == "listing"
    assert command.verify("My View", target=dsn).ok
