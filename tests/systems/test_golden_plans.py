"""Golden install plans: the SQL each system generates for a few representative views, as text.

Each system's plan is rendered WITHOUT a database (a ResolvedView built by hand, with fake oids)
and compared with ``tests/golden/<system>-<case>.sql``, so a change to generated SQL shows up as a
diff in review. After an intended change, regenerate every file with one command and commit them:

    PGIVM_REGENERATE_GOLDEN=1 .venv/bin/python -m pytest tests/systems/test_golden_plans.py

See tests/golden/README.md.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import EDGE_SQL, TRIANGLE_SQL
from pgivm.query import TableRef
from pgivm.query.cq import ConjunctiveQuery
from pgivm.query.parse import parse_query
from pgivm.query.resolve import BaseTable, Partition, ResolvedView
from pgivm.systems.base import System
from pgivm.systems.registry import SYSTEMS

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
REGENERATE = bool(os.environ.get("PGIVM_REGENERATE_GOLDEN"))
FIRST_OID = 16384

# r's partitions as pin_table lists them (by level, then oid): r_1 holds rows, r_2 is split again.
R_PARTITIONS = (
    Partition(16387, "public.r_1", leaf=True),
    Partition(16388, "public.r_2", leaf=False),
    Partition(16389, "public.r_2_1", leaf=True),
    Partition(16390, "public.r_2_2", leaf=True),
)
TRIANGLE_COLUMNS = {"r": ("a", "b"), "s": ("b", "c"), "t": ("c", "a")}

# case name -> (view SQL, each table's columns in order, their type, partitions by table, options)
CASES: dict[str, tuple[str, dict[str, tuple[str, ...]], str, dict[str, tuple[Partition, ...]], dict[str, Any]]] = {
    "triangle": (TRIANGLE_SQL, TRIANGLE_COLUMNS, "integer", {}, {}),
    "edge": (EDGE_SQL, {"e": ("src", "dst")}, "bigint", {}, {}),
    "partitioned": (TRIANGLE_SQL, TRIANGLE_COLUMNS, "integer", {"r": R_PARTITIONS}, {}),
}
IVME_CASES = {"triangle-epsilon-0.25-batch-0": (*CASES["triangle"][:4], {"epsilon": 0.25, "batch_threshold": 0}),
              # the triangles themselves ([L] Appendix E): the count's state and the listing's
              "triangle-listing": ("SELECT r.a, r.b, s.c FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a",
                                   *CASES["triangle"][1:4], {}),
              # a Loomis-Whitney count of degree 4 ([L] Appendix F)
              "loomis-whitney-4": ("SELECT count(*) FROM r1 JOIN r2 ON r1.b = r2.b AND r1.c = r2.c JOIN r3 ON r3.c = r1.c "
                                   "AND r3.d = r2.d AND r3.a = r1.a JOIN r4 ON r4.d = r2.d AND r4.a = r1.a AND r4.b = r1.b",
                                   {"r1": ("a", "b", "c"), "r2": ("b", "c", "d"), "r3": ("a", "c", "d"), "r4": ("a", "b", "d")},
                                   "integer", {}, {}),
              # refined partitions ([L] Appendix D): every relation partitioned on both variables
              "triangle-refined": (*CASES["triangle"][:4], {"partitions": "refined"}),
              # the 4-path count ([L] Appendix G), the end tables with a column no join reads
              "four-path": ("SELECT count(*) FROM r JOIN s ON r.a = s.a JOIN t ON s.b = t.b JOIN u ON t.c = u.c",
                            {"r": ("a", "x"), "s": ("a", "b"), "t": ("b", "c"), "u": ("c", "z")}, "integer", {}, {}),
              # the 3-path count, class 3R² ([L] Appendix H.3)
              "three-path": ("SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c",
                             {"r": ("b", "x"), "s": ("b", "c"), "t": ("c", "z")}, "integer", {}, {})}


def resolved(query: ConjunctiveQuery, columns: dict[str, tuple[str, ...]], column_type: str,
             partitions: dict[str, tuple[Partition, ...]]) -> ResolvedView:
    """What resolve() would find in a database holding these tables (oids from 16384, schema public):
    the conjunctive query, as every system receives it (the triangle systems make their shape)."""
    base = {table: BaseTable(FIRST_OID + i, TableRef(table.name, "public"), table.name in partitions,
                             partitions.get(table.name, ()))
            for i, table in enumerate(query.tables)}  # oids in the order written (R, S, T for a triangle)
    attnums = {(atom.alias, column): columns[atom.table.name].index(column) + 1
               for atom in query.atoms for column in atom.columns}
    return ResolvedView(query=query, tables={t: b.ref for t, b in base.items()},
                        variable_types={v.name: column_type for v in query.variables},
                        column_types={key: column_type for key in attnums}, base=base, attnums=attnums)


def render(system: System, case: str) -> str:
    """Every phase of the install plan, a header line per phase, statements separated by blank lines."""
    view_sql, columns, column_type, partitions, options = {**CASES, **IVME_CASES}[case]
    params = {o.name: o.default for o in system.options} | options
    view = resolved(parse_query(view_sql), columns, column_type, partitions)
    plan = system.plan(view, "triangles", "public", params)
    lines = [f"-- pgivm golden install plan: system {system.name}, case {case}, options {params}",
             f"-- view public.triangles AS {view_sql}",
             "-- regenerate: PGIVM_REGENERATE_GOLDEN=1 python -m pytest tests/systems/test_golden_plans.py"]
    for phase in plan.phases:
        count = len(phase.statements)
        lines += ["", f"-- phase: {phase.name} ({count} statement{'' if count == 1 else 's'})"]
        for statement in phase.statements:
            text = statement.as_string(None).strip()
            lines += ["", text if text.endswith(";") else text + ";"]
    return "\n".join(lines) + "\n"


TRIANGLE_SYSTEMS = [name for name in SYSTEMS if SYSTEMS[name].accepts(parse_query(TRIANGLE_SQL)) is None]
PAIRS = [(name, case) for name in TRIANGLE_SYSTEMS for case in CASES] + [("ivme", case) for case in IVME_CASES]

# F-IVM's cases: conjunctive queries over a star (house, shop on postcode) and a path (r, s, t).
CQ_COLUMNS = {"house": ("postcode", "price", "rooms"), "shop": ("postcode", "hours"),
              "r": ("a", "b", "x"), "s": ("b", "c"), "t": ("c", "z")}
CQ_CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "star-group-sum": ("SELECT h.rooms, count(*), sum(h.price * s.hours) AS revenue, avg(h.price) "
                       "FROM house h JOIN shop s ON h.postcode = s.postcode GROUP BY h.rooms", {}),
    "path-cofactor": ("SELECT cofactor(r.x, s.c, t.z) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c", {}),
    "path-listing-static": ("SELECT r.a, r.x, t.z FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c", {"static": "t"}),
    # house.price and shop.hours double precision: classified float sums (pgivm/systems/fivm/floats.py)
    "star-float-sum": ("SELECT h.rooms, sum(h.price * s.hours) AS revenue, avg(h.price) "
                       "FROM house h JOIN shop s ON h.postcode = s.postcode GROUP BY h.rooms", {}),
}
CQ_FLOAT_COLUMNS = {"star-float-sum": {("h", "price"), ("s", "hours")}}
# Every system's conjunctive-query cases, by system: its golden files are <system>-<case>.sql.
SYSTEM_CQ_CASES: dict[str, dict[str, tuple[str, dict[str, Any]]]] = {
    "fivm": CQ_CASES,
    "first-order": {"star-group-sum": CQ_CASES["star-group-sum"]},
    # the sample's index (§4) over a path, with grouping on and off, and a fixed seed (the plan holds it)
    "sample": {"path-sample": ("SELECT r.a, r.x, t.z FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c",
                               {"size": 5, "seed": 7}),
               "path-sample-ungrouped": ("SELECT r.a, r.x, t.z FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c",
                                         {"size": 5, "seed": 7, "grouping": "off"})},
}
CQ_PAIRS = [(system, case) for system, cases in SYSTEM_CQ_CASES.items() for case in cases]


def resolved_cq(query: ConjunctiveQuery, floats: frozenset[tuple[str, str]] = frozenset()) -> ResolvedView:
    """What resolve() would find for a conjunctive query over integer tables, but for the ``floats``
    columns (alias, column), which are double precision (oids from 16384)."""
    base = {table: BaseTable(FIRST_OID + i, TableRef(table.name, "public"), False)
            for i, table in enumerate(query.tables)}
    attnums = {(atom.alias, column): CQ_COLUMNS[atom.table.name].index(column) + 1
               for atom in query.atoms for column in atom.columns}
    column_types = {key: "double precision" if key in floats else "integer" for key in attnums}
    variable_types = {v.name: column_types[(v.columns[0].alias, v.columns[0].column)] for v in query.variables}

    def output_type(o: Any) -> str:
        function = getattr(o, "function", "")
        if function in ("sum", "avg") and any(variable_types[v] == "double precision" for v in o.variables):
            return "double precision"
        return ("bigint" if function in ("count", "sum") else "numeric" if function == "avg" else
                "double precision" if function == "cofactor" else variable_types[o.variable])

    return ResolvedView(query=query, tables={t: b.ref for t, b in base.items()}, variable_types=variable_types,
                        column_types=column_types, base=base, attnums=attnums,
                        output_types={o.name: output_type(o) for o in query.outputs})


def render_cq(name: str, case: str) -> str:
    view_sql, options = SYSTEM_CQ_CASES[name][case]
    system = SYSTEMS[name]
    params = {o.name: o.validate(None) for o in system.options} | {
        o.name: o.validate(options[o.name]) for o in system.options if o.name in options}
    query = parse_query(view_sql)
    plan = system.plan(resolved_cq(query, frozenset(CQ_FLOAT_COLUMNS.get(case, ()))), "v", "public", params)
    lines = [f"-- pgivm golden install plan: system {name}, case {case}, options {params}",
             f"-- view public.v AS {view_sql}",
             "-- regenerate: PGIVM_REGENERATE_GOLDEN=1 python -m pytest tests/systems/test_golden_plans.py"]
    for phase in plan.phases:
        count = len(phase.statements)
        lines += ["", f"-- phase: {phase.name} ({count} statement{'' if count == 1 else 's'})"]
        for statement in phase.statements:
            text = statement.as_string(None).strip()
            lines += ["", text if text.endswith(";") else text + ";"]
    return "\n".join(lines) + "\n"


def _check_golden(path: Path, text: str, what: str) -> None:
    if REGENERATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text)
        return
    assert path.exists(), f"{path} is missing: PGIVM_REGENERATE_GOLDEN=1 python -m pytest tests/systems/test_golden_plans.py"
    expected = path.read_text()
    if text != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(keepends=True), text.splitlines(keepends=True),
                                            f"golden/{path.name}", "rendered now"))
        pytest.fail(f"the install plan of {what} changed:\n{diff}\nIf the change is intended, "
                    f"regenerate: PGIVM_REGENERATE_GOLDEN=1 python -m pytest tests/systems/test_golden_plans.py",
                    pytrace=False)


@pytest.mark.parametrize(("system", "case"), CQ_PAIRS, ids=[f"{s}-{c}" for s, c in CQ_PAIRS])
def test_cq_install_plan_matches_golden(system: str, case: str) -> None:
    _check_golden(GOLDEN / f"{system}-{case}.sql", render_cq(system, case), f"{system} for {case}")


def test_every_system_has_golden_plans() -> None:
    """A system added to the registry is in review's sight from its first plan: it needs a case here."""
    covered = {system for system, _ in PAIRS} | {system for system, _ in CQ_PAIRS}
    assert sorted(set(SYSTEMS) - covered) == [], "add golden cases (CASES or SYSTEM_CQ_CASES) for these systems"
    files = {path.name for path in GOLDEN.glob("*.sql")}
    expected = {f"{s}-{c}.sql" for s, c in [*PAIRS, *CQ_PAIRS]}
    assert sorted(files - expected) == [], "golden files no case renders: remove them"


@pytest.mark.parametrize(("system", "case"), PAIRS, ids=[f"{s}-{c}" for s, c in PAIRS])
def test_install_plan_matches_golden(system: str, case: str) -> None:
    _check_golden(GOLDEN / f"{system}-{case}.sql", render(SYSTEMS[system], case), f"{system} for {case}")


def test_rendering_is_deterministic() -> None:
    """FormatHoles draws random tokens while rendering; none may reach the text."""
    for system in (SYSTEMS[name] for name in TRIANGLE_SYSTEMS):
        first = render(system, "partitioned")
        assert first == render(system, "partitioned") and "pgivm_hole_" not in first
