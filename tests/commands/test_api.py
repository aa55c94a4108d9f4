"""The Python API: typed results, systems chosen and checked through the registry, and a
SQLAlchemy ``Select`` accepted as a view definition."""

from __future__ import annotations

import psycopg
import pytest
import sqlalchemy as sa

from conftest import TRIANGLE_SQL
from pgivm import command
from pgivm.errors import PgivmError, UnsupportedQuery
from pgivm.systems import registry


def load(conn: psycopg.Connection) -> int:
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, a int)")
    conn.execute("INSERT INTO r SELECT g % 9, g % 4 FROM generate_series(1, 120) g;"
                 "INSERT INTO s SELECT g % 4, g % 6 FROM generate_series(1, 120) g;"
                 "INSERT INTO t SELECT g % 6, g % 9 FROM generate_series(1, 120) g")
    return conn.execute(TRIANGLE_SQL).fetchone()[0]


def test_a_sqlalchemy_select_is_a_view_definition(conn: psycopg.Connection) -> None:
    expected = load(conn)
    r, s, t = (sa.table(n, sa.column(x), sa.column(y)) for n, x, y in (("r", "a", "b"), ("s", "b", "c"), ("t", "c", "a")))
    query = (sa.select(sa.func.count().label("triangles"))
             .select_from(r.join(s, r.c.b == s.c.b).join(t, (s.c.c == t.c.c) & (t.c.a == r.c.a))))
    created = command.create("tri", query, system="first-order", target=conn)
    assert created.count == expected and created.system == "first-order"
    assert conn.execute("SELECT triangles FROM tri").fetchone()[0] == expected
    conn.execute("INSERT INTO r VALUES (1, 1), (2, 2)")
    assert command.verify("tri", target=conn).ok


def test_results_are_dataclasses(conn: psycopg.Connection) -> None:
    expected = load(conn)
    init = command.init(target=conn)
    assert isinstance(init, command.InitResult) and init.ddl_guards and init.outdated == []
    created = command.create("tri", TRIANGLE_SQL, epsilon=0.25, target=conn)
    assert isinstance(created, command.CreateResult)
    assert created.params == {"epsilon": 0.25, "partitions": "single", "batch_threshold": 384}
    assert created.headline == {"|D|": created.figures["db_size"]}
    status = command.status("tri", target=conn)
    assert isinstance(status, command.StatusReport)
    assert status.count == expected and status.figures["epsilon"] == 0.25 and status.problems == []
    assert [s.title for s in status.sections] == ["relations"]
    figures = command.action("tri", "rebalance", target=conn)
    assert figures["major_rebalances"] == status.figures["major_rebalances"] + 1 and figures["count"] == expected
    assert command.action("tri", "alter", epsilon=0.75, target=conn)["epsilon"] == 0.75
    assert [v.params for v in command.list_views(target=conn)] == [{"batch_threshold": 384, "epsilon": 0.75, "partitions": "single"}]


def test_systems_and_options_are_checked(conn: psycopg.Connection) -> None:
    load(conn)
    with pytest.raises(PgivmError, match="unknown system 'nope'"):
        command.create("tri", TRIANGLE_SQL, system="nope", target=conn)
    with pytest.raises(PgivmError, match="--epsilon does not apply to system first-order"):
        command.create("tri", TRIANGLE_SQL, system="first-order", epsilon=0.5, target=conn)
    with pytest.raises(PgivmError, match="--batch-threshold: must be 0 or more"):
        command.create("tri", TRIANGLE_SQL, batch_threshold=-1, target=conn)
    with pytest.raises(PgivmError, match="has no 'spark' build"):
        command.create("tri", TRIANGLE_SQL, system="recompute", preprocess="spark", target=conn)
    command.create("tri", TRIANGLE_SQL, system="recompute", target=conn)
    with pytest.raises(PgivmError, match="uses system recompute, which has no rebalance"):
        command.action("tri", "rebalance", target=conn)
    with pytest.raises(PgivmError, match="whose alter takes no --epsilon") as err:  # its refresh would change
        command.action("tri", "alter", epsilon=0.25, target=conn)
    assert err.value.hint == "alter of this view changes --refresh, --budget, --planner"
    assert conn.execute("SELECT count(*) FROM pgivm_catalog.views").fetchone()[0] == 1


@pytest.mark.parametrize("system", [None, "first-order", "recompute", "ivme"])
def test_one_table_under_two_names_is_refused_in_one_line(conn: psycopg.Connection, system: str | None) -> None:
    """``t`` and ``public.t`` in one view: each written name got a capture of its own, so create
    once failed with PostgreSQL's "trigger ... already exists". Now a one-line refusal, nothing made."""
    load(conn)
    query = "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN public.t AS t ON s.c = t.c AND t.a = r.a JOIN t AS t2 ON t2.a = r.a"
    if system == "ivme":  # the triangle over one edge table, written two ways
        query = "SELECT count(*) FROM r x JOIN public.r y ON x.b = y.a JOIN r z ON y.b = z.a AND z.b = x.a"
    with pytest.raises(UnsupportedQuery, match=r"^(public\.)?([rt]) and (public\.)?\2 name the same table") as err:
        command.create("v", query, system=system, target=conn)
    assert "\n" not in str(err.value) and err.value.hint and "an alias tells the two uses apart" in err.value.hint
    assert conn.execute("SELECT count(*) FROM pgivm_catalog.views").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM pg_trigger WHERE tgrelid IN ('r'::regclass, 't'::regclass) "
                        "AND NOT tgisinternal").fetchone()[0] == 0


def test_every_system_fulfils_the_contract() -> None:
    """The registry is the one list; each entry has what command.py and the CLI rely on."""
    for name, system in registry.SYSTEMS.items():
        assert system.name == name and system.summary
        assert all(o.help and o.flag.startswith("--") for o in system.options)
        assert all(a.help and callable(a.run) for a in system.actions)
        for method in ("accepts", "plan", "capture_triggers", "status", "verify"):
            assert callable(getattr(system, method)), (name, method)


def test_a_refusal_by_every_system_is_one_line_under_200_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 22, item 4: systems refusing for the same reason are named together, and a line that
    would pass 200 characters keeps the general fallback's reason (first-order's) alone."""
    from pgivm.errors import UnsupportedQuery
    from pgivm.systems import registry

    class Refuses:
        def __init__(self, name: str, reason: str) -> None:
            self.name, self.reason = name, reason

        def accepts(self, query: object) -> str:
            return self.reason

    long = "x" * 90
    fake = {n: Refuses(n, r) for n, r in [("ivme", f"not a triangle {long}"), ("fivm", f"cyclic {long}"),
                                          ("first-order", "first-order's reason"), ("recompute", "first-order's reason")]}
    monkeypatch.setattr(registry, "SYSTEMS", fake)
    with pytest.raises(UnsupportedQuery) as info:
        command.parse("SELECT count(*) FROM r")
    message = str(info.value)
    assert len(message) < 200 and "\n" not in message, message
    assert message.startswith("first-order's reason [first-order, recompute]") and "--system NAME" in message
    fake.pop("ivme"), fake.pop("fivm")
    with pytest.raises(UnsupportedQuery) as info:
        command.parse("SELECT count(*) FROM r")
    assert str(info.value) == "first-order's reason [first-order, recompute]"


def test_drop_names_the_users_objects_that_read_the_view_and_drops_nothing(conn: psycopg.Connection, dsn: str) -> None:
    """A view of the user's built on the maintained view: drop refuses in one line naming it (was
    PostgreSQL's 'other objects depend on it' alone), and the view stays maintained."""
    conn.execute("CREATE TABLE r (a int, b int); INSERT INTO r VALUES (1, 2)")
    command.create("v", "SELECT r.a, count(*) AS n FROM r GROUP BY r.a", target=dsn)
    conn.execute("CREATE VIEW on_top AS SELECT sum(n) AS total FROM v")
    with pytest.raises(PgivmError, match="view public.on_top depends on view public.v") as info:
        command.drop("v", target=dsn)
    assert "\n" not in info.value.message
    conn.execute("INSERT INTO r VALUES (1, 3)")
    assert conn.execute("SELECT total FROM on_top").fetchone()[0] == 2
    assert command.verify("v", target=dsn).ok


@pytest.mark.parametrize(("query", "says"), [
    ("SELECT date_part(r.a) AS y FROM r", "date_part takes a field and a value"),
    ("SELECT date_part('year', r.a, 1) AS y FROM r", "date_part takes a field and a value"),
    ("SELECT date_part('yeer', r.a) AS y, count(*) FROM r GROUP BY 1", "unsupported date_part field 'yeer'"),
    ("SELECT EXTRACT(yeer FROM r.a) AS y, count(*) FROM r GROUP BY 1", "unsupported EXTRACT field 'yeer'"),
])
def test_a_mistake_in_date_part_is_said_as_such(query: str, says: str) -> None:
    with pytest.raises(UnsupportedQuery, match=says) as info:
        command.parse(query)
    assert "\n" not in info.value.message and "sqlglot" not in info.value.message


def test_extract_of_a_quoted_field_is_postgresqls_extract() -> None:
    """EXTRACT('year' FROM x), which PostgreSQL takes, is EXTRACT(year FROM x) (was refused)."""
    _, cq = command.parse("SELECT EXTRACT('year' FROM r.a) AS y, count(*) FROM r GROUP BY 1")
    (value,) = cq.group_computed
    assert (value.node.op, value.node.name) == ("extract", "year")
