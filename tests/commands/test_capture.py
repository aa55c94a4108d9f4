"""The change-capture layer's second sink: every statement's net change appended to a per-view
delta log, exact after every statement (initial multiset + the log's sum = the base table now).

The log's user here is a system defined in this file and registered for the test only, which
also shows that a system plugs into `pgivm.command` without either knowing it by name.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import psycopg
import pytest
from psycopg import sql

from conftest import EDGE_SQL, TRIANGLE_SQL
from pgivm import capture, command
from pgivm.query.model import VARIABLES, TableRef
from pgivm.query.resolve import ResolvedView
from pgivm.systems import common, registry
from pgivm.systems.base import InstallPlan, SystemStatus


class LogOnly:
    """Logs each relation's net changes and maintains nothing else (the result stays as built)."""

    name = "log-only"
    summary = "test system: the capture layer's delta-log sink"
    options = ()
    actions = ()
    builders: dict = {}
    accepts = staticmethod(common.triangle_reason)
    one_value = staticmethod(common.is_triangle_count)
    deferred_atoms = explain = compare_result = accepts_types = None

    @staticmethod
    def capture_triggers(view: ResolvedView, name: str, table: TableRef) -> list[capture.CaptureTrigger]:
        view = common.triangle_view(view)  # the query arrives as every system gets it: make the triangle
        return capture.view_triggers(name, common.state_schema_for(name), capture.letters_of(view, table), sink="log")

    @staticmethod
    def plan(view: ResolvedView, name: str, view_schema: str, params: dict[str, Any]) -> InstallPlan:
        view = common.triangle_view(view)
        names = common.Names.of(name)
        state = [sql.SQL("CREATE TABLE {st} (singleton boolean PRIMARY KEY DEFAULT true, "
                         "updates_applied bigint NOT NULL DEFAULT 0); INSERT INTO {st} DEFAULT VALUES; "
                         "CREATE TABLE {r} (singleton boolean PRIMARY KEY DEFAULT true, count bigint)").format(
            st=names("state"), r=names("result"))]
        state += [capture.log_tables(capture.triangle_atom(view, a), names) for a in view.query.atoms]
        functions = [common.capture_functions_plan(names, view, name, t, "log-only", sink="log") for t in view.query.tables]
        return InstallPlan.of(
            state=state, functions=functions,
            build=[sql.SQL("INSERT INTO {} (count) VALUES (0)").format(names("result"))],
            capture=common.capture_triggers_all(view, name, LogOnly.capture_triggers),
            expose=common.expose_plan(names, view.query, name, view_schema, "log-only"))

    @staticmethod
    def status(conn: psycopg.Connection, name: str) -> SystemStatus:
        return SystemStatus({"updates_applied": common.read_state(conn, name)["updates_applied"]})

    @staticmethod
    def verify(conn: psycopg.Connection, view: ResolvedView, name: str, strict: bool) -> list[Any]:
        return []


@pytest.fixture
def log_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.SYSTEMS, LogOnly.name, LogOnly())  # type: ignore[arg-type]


def multiset(conn: psycopg.Connection, table: str, x: str, y: str) -> Counter[tuple[int, int]]:
    rows = conn.execute(f"SELECT {x}, {y} FROM {table} WHERE {x} IS NOT NULL AND {y} IS NOT NULL").fetchall()
    return Counter(rows)


def logged(conn: psycopg.Connection, relation: str, x: str, y: str) -> Counter[tuple[int, int]]:
    total: Counter[tuple[int, int]] = Counter()
    for a, b, m in conn.execute(f"SELECT {x}, {y}, mult FROM pgivm_tri.{relation}_log ORDER BY seq").fetchall():
        assert m != 0, "a logged net change of 0"
        total[(a, b)] += m
    return total


@pytest.mark.parametrize("partitioned", [False, True], ids=["plain", "partitioned"])
@pytest.mark.parametrize("form", ["rst", "edge"])
def test_delta_log_is_exact_after_every_statement(conn: psycopg.Connection, log_only: None, form: str,
                                                  partitioned: bool) -> None:
    tables = {"r": ("a", "b"), "s": ("b", "c"), "t": ("c", "a")} if form == "rst" else {"e": ("src", "dst")}
    relations = {"r": "r", "s": "s", "t": "t"} if form == "rst" else {"r": "e", "s": "e", "t": "e"}
    rnd = random.Random(8)
    for t, (x, y) in tables.items():
        split = f" PARTITION BY RANGE ({x})" if partitioned else ""
        conn.execute(f"CREATE TABLE {t} ({x} int, {y} int, note text){split}")
        if partitioned:
            conn.execute(f"CREATE TABLE {t}_low PARTITION OF {t} FOR VALUES FROM (MINVALUE) TO (5);"
                         f"CREATE TABLE {t}_rest PARTITION OF {t} DEFAULT")
        conn.execute(f"INSERT INTO {t} ({x}, {y}) SELECT (random() * 9)::int, (random() * 9)::int FROM generate_series(1, 30)")
    command.create("tri", TRIANGLE_SQL if form == "rst" else EDGE_SQL, system="log-only", target=conn)
    start = {t: multiset(conn, t, *cols) for t, cols in tables.items()}
    statements = 0
    changed = False
    for _ in range(60):
        t = rnd.choice(list(tables))
        x, y = tables[t]
        v = rnd.randint(0, 9)
        conn.execute(rnd.choice([
            f"INSERT INTO {t} ({x}, {y}) VALUES ({v}, {rnd.randint(0, 9)}), ({v}, NULL), (NULL, {v})",
            f"INSERT INTO {t} ({x}, {y}) SELECT {x}, {y} FROM {t} LIMIT 3",  # duplicates
            f"DELETE FROM {t} WHERE {x} = {v}",
            f"DELETE FROM {t} WHERE {x} = -1",  # deletes nothing
            f"UPDATE {t} SET {y} = {y} + 1 WHERE {x} = {v}",  # a join column
            f"UPDATE {t} SET {x} = {x} + 3 WHERE {y} = {v}",  # moves rows between partitions
            f"UPDATE {t} SET note = 'x' WHERE {x} = {v}",  # nets to nothing
            f"BEGIN; INSERT INTO {t} ({x}, {y}) VALUES (1, 1); ROLLBACK",
            f"TRUNCATE {t}_low" if partitioned else f"DELETE FROM {t} WHERE {y} = {v}",
        ] + ([f"TRUNCATE {t}"] if rnd.random() < 0.1 else [])))
        statements += 1
        for relation, table in relations.items():
            x_, y_ = tables[table]
            now = multiset(conn, table, x_, y_)
            expected = now.copy()
            expected.subtract(start[table])
            log = logged(conn, relation, *VARIABLES[relation])  # the log names columns by variable
            assert +log == +expected and -log == -expected, relation
            changed = changed or now != start[table]
    assert statements == 60 and changed
    # every relation of a self-join gets the same log, each its own rows
    assert conn.execute("SELECT count(*) FROM pgivm_tri.r_log").fetchone()[0] > 0
