"""First-order IVM's install SQL for the triangle count: each relation indexed with its
multiplicities, the delta query δK ⋈ L ⋈ M per single-tuple update, the set-at-a-time path, the
build. Acyclic join-aggregates are ``cq.py``'s; ``plan_view`` and its siblings pick by the query's shape."""

from __future__ import annotations

from typing import Any

from psycopg import sql

from pgivm.capture import atom_columns
from pgivm.query.model import VARIABLES, Atom, RelationName, TableRef
from pgivm.query.resolve import ResolvedView
from pgivm.systems.base import InstallPlan
from pgivm.systems.common import (
    Names,
    analyze_plan,
    capture_functions_all,
    capture_triggers,
    capture_triggers_all,
    expose_plan,
    is_triangle,
    render,
    triangle_capture_atoms,
    triangle_view,
)
from pgivm.systems.first_order import cq

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
    view = triangle_view(view)
    names = Names.of(name)
    view_params = _view_params(names, name, view.query.sql)
    relations = [_relation_params(names, view, atom) for atom in view.query.atoms]
    functions = [render(__package__, "20_relation_functions.sql", p) for p in relations]
    functions.append(render(__package__, "30_view.sql", view_params))
    functions += capture_functions_all(names, view, name, "first-order IVM", params["batch_threshold"])
    build: list[sql.Composable] = [render(__package__, "15_relation_build.sql", p) for p in relations]
    build.append(sql.SQL("SELECT {}()").format(names("restart")))
    build.append(analyze_plan(names, [f"{k}_tuples" for k in RELATIONS]))
    return InstallPlan.of(
        state=[render(__package__, "00_view_state.sql", view_params),
               *(render(__package__, "10_relation_tables.sql", p) for p in relations)],
        functions=functions, build=build,
        capture=capture_triggers_all(view, name, capture_triggers),
        expose=expose_plan(names, view.query, name, view_schema, "first-order IVM"))


# --- by the query's shape: the triangle above, a join-aggregate in cq.py --------------------------


def plan_view(view: ResolvedView, name: str, view_schema: str, params: dict[str, Any]) -> InstallPlan:
    return plan(view, name, view_schema, params) if is_triangle(view) else cq.plan(view, name, view_schema, params)


def capture_triggers_of(view: ResolvedView, name: str, table: TableRef) -> list[Any]:
    return capture_triggers(view, name, table) if is_triangle(view) else cq.capture_triggers(view, name, table)


def deferred_atoms(view: ResolvedView, name: str, params: dict[str, Any]) -> Any:
    if is_triangle(view):
        return triangle_capture_atoms(view, name, params)
    return cq.deferred_atoms(view)
