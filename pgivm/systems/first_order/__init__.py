"""First-order (classical) IVM: per update, the delta query δK ⋈ L ⋈ M over indexed copies.

The baseline IVMε improves on: O(N) per single-tuple update (a loop over the changed tuple's
partners in the next relation), linear space, no partitions. Same triggers, same user view.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from pgivm.capture import atom_columns
from pgivm.systems import ivme
from pgivm.query.cq import ConjunctiveQuery
from pgivm.query.model import VARIABLES, Atom, RelationName, TableRef, TriangleCount
from pgivm.systems.first_order import cq
from pgivm.query.resolve import ResolvedView
from pgivm.systems.base import FunctionSystem, InstallPlan, SystemStatus
from pgivm.systems.common import (
    triangle_model,
    triangle_reason,
    CheckFailure,
    Names,
    analyze_plan,
    capture_functions_all,
    triangle_capture_atoms,
    capture_triggers,
    capture_triggers_all,
    checks,
    expose_plan,
    read_state,
    render,
    run_checks,
)

NAME = "first-order"
RELATIONS: tuple[RelationName, ...] = ("r", "s", "t")
NEXT: dict[RelationName, RelationName] = {"r": "s", "s": "t", "t": "r"}
PREVIOUS: dict[RelationName, RelationName] = {"r": "t", "s": "r", "t": "s"}


def _view_params(names: Names, name: str, query_sql: str) -> dict[str, sql.Composable]:
    return {
        "schema": names.schema_id,
        "state": names("state"),
        "result": names("result"),
        "restart": names("restart"),
        "count_from_state": names("count_from_state"),
        "r_tuples": names("r_tuples"),
        "s_tuples": names("s_tuples"),
        "t_tuples": names("t_tuples"),
        "schema_comment": sql.Literal(f"pgivm state of view {name} (strategy first-order): {query_sql}"),
        "result_comment": sql.Literal(f"pgivm: the maintained result of view {name}"),
    }


def _relation_params(names: Names, view: ResolvedView, atom: Atom) -> dict[str, sql.Composable]:
    k = atom.relation
    l, m = NEXT[k], PREVIOUS[k]
    x, y = VARIABLES[k]
    z = VARIABLES[l][1]
    types = view.variable_types
    base_x, base_y = atom_columns(view, atom, "base")
    return {
        "x": sql.Identifier(x), "y": sql.Identifier(y), "z": sql.Identifier(z),
        "type_x": sql.SQL(types[x]), "type_y": sql.SQL(types[y]),  # type: ignore[arg-type]  # from format_type()
        "result": names("result"),
        "k_tuples": names(f"{k}_tuples"), "l_tuples": names(f"{l}_tuples"), "m_tuples": names(f"{m}_tuples"),
        "apply_k": names(f"apply_{k}"), "clear_k": names(f"clear_{k}"), "paths_k": names(f"paths_{k}"),
        "k_delta": names(f"{k}_delta"), "apply_batch_k": names(f"apply_batch_{k}"),
        "base_table": view.base_of(atom.table).ident, "base_guard": view.base_of(atom.table).guard("base"),
        "base_x": base_x, "base_y": base_y,
        "base_x_column": sql.Identifier(atom.first), "base_y_column": sql.Identifier(atom.second),
        "k_tuples_comment": sql.Literal(f"first-order IVM: relation {k.upper()}({x.upper()},{y.upper()}) with multiplicities"),
        "apply_k_comment": sql.Literal(f"first-order IVM: the delta query for a single-tuple update to {k.upper()}"),
    }


def plan(view: ResolvedView, name: str, view_schema: str, params: dict[str, Any]) -> InstallPlan:
    names = Names.of(name)
    view_params = _view_params(names, name, view.query.sql)
    relations = [_relation_params(names, view, atom) for atom in view.query.atoms]
    functions = [render(__name__, "20_relation_functions.sql", p) for p in relations]
    functions.append(render(__name__, "30_view.sql", view_params))
    functions += capture_functions_all(names, view, name, "first-order IVM", params["batch_threshold"])
    build: list[sql.Composable] = [render(__name__, "15_relation_build.sql", p) for p in relations]
    build.append(sql.SQL("SELECT {}()").format(names("restart")))
    build.append(analyze_plan(names, [f"{k}_tuples" for k in RELATIONS]))
    return InstallPlan.of(
        state=[render(__name__, "00_view_state.sql", view_params),
               *(render(__name__, "10_relation_tables.sql", p) for p in relations)],
        functions=functions, build=build,
        capture=capture_triggers_all(view, name, capture_triggers),
        expose=expose_plan(names, view.query, name, view_schema, "first-order IVM"))


def status(conn: psycopg.Connection, name: str) -> SystemStatus:
    return SystemStatus({"updates_applied": read_state(conn, name)["updates_applied"]}, labels={"updates_applied": "updates"})


def verify(conn: psycopg.Connection, view: ResolvedView, name: str, strict: bool = False) -> list[CheckFailure]:
    names = Names.of(name)
    named = []
    for atom in view.query.atoms:
        for check, query in checks(__name__, "60_verify_relation.sql", _relation_params(names, view, atom)):
            named.append((f"{atom.relation.upper()}.{check}", query))
    named.append(("count_from_state", sql.SQL(
        "SELECT r.count, {f}() FROM {result} r WHERE r.count <> {f}()").format(
            f=names("count_from_state"), result=names("result"))))
    return run_checks(conn, named)


def _accepts(query: ConjunctiveQuery) -> str | None:
    """Triangle counts (its tuple-at-a-time plan), and acyclic join-aggregates (``cq.py``)."""
    reason = triangle_reason(query)
    if reason is None:
        return None
    general = cq.accepts(query)
    return None if general is None else f"{reason}; and {general}"


def _model(query: ConjunctiveQuery) -> Any:
    return triangle_model(query) if triangle_reason(query) is None else query


def _plan(view: ResolvedView, name: str, view_schema: str, params: dict[str, Any]) -> InstallPlan:
    return plan(view, name, view_schema, params) if isinstance(view.query, TriangleCount) else \
        cq.plan(view, name, view_schema, params)


def _capture_triggers(view: ResolvedView, name: str, table: TableRef) -> list[Any]:
    return capture_triggers(view, name, table) if isinstance(view.query, TriangleCount) else \
        cq.capture_triggers(view, name, table)


def _deferred_atoms(view: ResolvedView, name: str, params: dict[str, Any]) -> Any:
    if isinstance(view.query, TriangleCount):
        return triangle_capture_atoms(view, name, params)
    return cq.deferred_atoms(view)


def _verify(conn: psycopg.Connection, view: ResolvedView, name: str, strict: bool = False) -> list[CheckFailure]:
    # a conjunctive query keeps only its result, which verify compares with plain SQL
    return verify(conn, view, name, strict) if isinstance(view.query, TriangleCount) else []


SYSTEM = FunctionSystem(
    name=NAME,
    summary="first-order IVM: the classical delta query per update over the base tables (triangle counts and "
            "acyclic join-aggregates); the yardstick IVMε and F-IVM improve on",
    accepts=_accepts, model=_model, plan=_plan, capture_triggers=_capture_triggers,
    status=status, verify=_verify,
    options=(ivme.BATCH,),
    deferred_atoms=_deferred_atoms,
)
