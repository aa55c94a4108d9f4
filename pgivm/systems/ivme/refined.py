"""IVMε with refined partitions (Kara et al., long version, Appendix D, Theorem 16): the triangle
count with every relation partitioned on both of its variables (``--partitions refined``).

Each relation keeps one row per distinct tuple with two flags, its values' parts (Definition 17:
each judged by the value's degree in the whole relation), and a degree table per variable. The
views are light on the variable they join away and heavy on both they keep,
V_KL(X,Z) = Σ_Y K_hl(X,Y)·L_lh(Y,Z) (Figure 8), so each holds at most 2N^(1−ε)·2N^(1−ε) and
N·3/2·N^ε rows: the space is O(N^max(min(1+ε, 2−2ε), 1)), linear at ε = ½, where single partitions'
V_KL = K_heavy·L_light may hold N^(3/2). Updates keep O(N^max(ε,1−ε)) amortized (Figure 9); minor
rebalancing moves a value on either variable (Figure 10), major ones repartition both.

The three relations share one set of templates (``sql/ivme/5*_rp_*.sql``), rendered by rotation
as the single-partition ones are: K(X,Y), L(Y,Z) the next relation, M(Z,X) the previous one.
"""

from __future__ import annotations

from typing import Any

from psycopg import sql

from pgivm import capture
from pgivm.capture import atom_columns
from pgivm.query.model import VARIABLES, RelationName
from pgivm.query.resolve import ResolvedView
from pgivm.systems.base import InstallPlan
from pgivm.systems.common import (Names, analyze_plan, capture_functions_all, capture_triggers, capture_triggers_all,
                                  expose_plan, pack_types_plan, render, triangle_view)
from pgivm.systems.ivme import variant

RELATIONS: tuple[RelationName, ...] = ("r", "s", "t")
NEXT: dict[RelationName, RelationName] = {"r": "s", "s": "t", "t": "r"}
PREVIOUS: dict[RelationName, RelationName] = {"r": "t", "s": "r", "t": "s"}
AUX_VIEW = {"r": "v_rs", "s": "v_st", "t": "v_tr"}
PARTITIONS = ("single", "refined")


def is_refined(params: dict[str, Any]) -> bool:
    return params.get("partitions") == "refined"


shaped = triangle_view  # the view in the shape this module plans (as the other variants name it)


def _degree(k: str, variable: str) -> str:
    return f"{k}_{variable}_degree"


# What the state keeps, in the tables the Spark build reads (pgivm.spark.preprocess_flagged): per
# (relation, variable) its degree table and the flag holding the value's part; each view's key
# columns and definition over the parts; the count from the state. The definitions and the count
# are SQL text over the state's names, rendered here for the templates and verify, run as they are
# by Spark SQL.
DEGREES = {(k, v): _degree(k, v) for k in RELATIONS for v in VARIABLES[k]}
FLAGS = {(k, v): flag for k in RELATIONS for flag, v in zip(("h1", "h2"), VARIABLES[k])}
VIEWS = tuple(AUX_VIEW.values())
KEYS = {AUX_VIEW[k]: (VARIABLES[k][0], VARIABLES[NEXT[k]][1]) for k in RELATIONS}
# V_KL(x,z) = Σ_y K_hl(x,y)·L_lh(y,z) (Figure 8)
DEFINITIONS = {
    AUX_VIEW[k]: (f"SELECT k.{x}, l.{z}, sum(k.mult * l.mult) FROM {{{k}}} k JOIN {{{NEXT[k]}}} l ON l.{y} = k.{y} "
                  f"WHERE k.h1 AND NOT k.h2 AND NOT l.h1 AND l.h2 GROUP BY k.{x}, l.{z} HAVING sum(k.mult * l.mult) <> 0")
    for k in RELATIONS for (x, y), z in [(VARIABLES[k], VARIABLES[NEXT[k]][1])]}
# Each R-tuple's triangles through the side of smaller degree (S's tuples at b, or T's at a), so the
# joins produce O(N^(3/2)) rows whatever the skew.
COUNT = ("WITH sides AS (SELECT r.a, r.b, r.mult, coalesce(ds.degree, 0) <= coalesce(dt.degree, 0) AS through_s "
         "FROM {r} r LEFT JOIN {s_b_degree} ds ON ds.b = r.b LEFT JOIN {t_a_degree} dt ON dt.a = r.a) "
         "SELECT coalesce((SELECT sum(x.mult * s.mult * t.mult) FROM sides x JOIN {s} s ON s.b = x.b JOIN {t} t "
         "ON t.c = s.c AND t.a = x.a WHERE x.through_s), 0) + coalesce((SELECT sum(x.mult * s.mult * t.mult) FROM sides x "
         "JOIN {t} t ON t.a = x.a JOIN {s} s ON s.b = x.b AND s.c = t.c WHERE NOT x.through_s), 0)")


def _state_names(names: Names) -> dict[str, sql.Composable]:
    return {**{k: names(k) for k in RELATIONS}, **{d: names(d) for d in DEGREES.values()}}


def _definition(k: RelationName, names: Names) -> sql.Composable:
    """V_KL(x,z) = Σ_y K_hl(x,y)·L_lh(y,z), from the flags (the rebuild and verify read this)."""
    return sql.SQL("    " + DEFINITIONS[AUX_VIEW[k]]).format(**_state_names(names))


def _relation_params(names: Names, k: RelationName, types: dict[str, str]) -> dict[str, sql.Composable]:
    l, m = NEXT[k], PREVIOUS[k]
    x, y = VARIABLES[k]
    z = VARIABLES[l][1]
    return {
        "x": sql.Identifier(x), "y": sql.Identifier(y), "z": sql.Identifier(z),
        "type_x": sql.SQL(types[x]), "type_y": sql.SQL(types[y]), "type_z": sql.SQL(types[z]),  # type: ignore[arg-type]
        "state": names("state"), "result": names("result"), "resize": names("resize"),
        "k": names(k), "l": names(l), "m_rel": names(m),
        "k_x_degree": names(_degree(k, x)), "k_y_degree": names(_degree(k, y)),
        "l_y_degree": names(_degree(l, y)), "m_x_degree": names(_degree(m, x)),
        "v_kl": names(AUX_VIEW[k]), "v_lm": names(AUX_VIEW[l]), "v_mk": names(AUX_VIEW[m]),
        "apply_k": names(f"apply_{k}"), "views_k": names(f"views_{k}"), "move_k_x": names(f"move_{k}_{x}"),
        "move_k_y": names(f"move_{k}_{y}"), "apply_batch_k": names(f"apply_batch_{k}"), "clear_k": names(f"clear_{k}"),
        "k_delta": names(f"{k}_delta"),
        "k_comment": sql.Literal(f"IVMε (refined partitions): {k.upper()}({x.upper()},{y.upper()}), partitioned on both variables"),
        "v_kl_comment": sql.Literal(f"IVMε (refined partitions) view V_{k.upper()}{l.upper()} = "
                                    f"{k.upper()}_hl * {l.upper()}_lh, summed over {y.upper()}"),
        "apply_k_comment": sql.Literal(f"IVMε ApplyUpdateRP + OnUpdateRP for a single-tuple update to {k.upper()} (Appendix D)"),
    }


def _view_params(names: Names, name: str, query_sql: str) -> dict[str, sql.Composable]:
    return {
        "schema": names.schema_id, "state": names("state"), "result": names("result"), "resize": names("resize"),
        "major_rebalance": names("major_rebalance"), "count_from_state": names("count_from_state"),
        "restart": names("restart"),
        **{k: names(k) for k in RELATIONS}, **{v: names(v) for v in AUX_VIEW.values()},
        **{_degree(k, v): names(_degree(k, v)) for k in RELATIONS for v in VARIABLES[k]},
        **{f"{AUX_VIEW[k]}_definition": _definition(k, names) for k in RELATIONS},
        "count_definition": sql.SQL(COUNT).format(**_state_names(names)),
        "schema_comment": sql.Literal(f"pgivm state of view {name} (strategy ivme, refined partitions): {query_sql}"),
        "result_comment": sql.Literal(f"pgivm: the maintained result of view {name}"),
    }


def build_plan(view: ResolvedView, name: str) -> sql.Composable:
    """Each relation loaded from its table with its parts already strict on both variables, its
    degrees, then restart (N, the strict partitions, which find every tuple in its parts, the
    views, the count)."""
    names = Names.of(name)
    loads = variant.strict_load_plan(view, names, DEGREES, FLAGS)
    return sql.SQL(";\n").join([*loads, sql.SQL("SELECT {}()").format(names("restart"))])


def state_tables() -> list[str]:
    return [*RELATIONS, *(_degree(k, v) for k in RELATIONS for v in VARIABLES[k]), *AUX_VIEW.values()]


def plan(view: ResolvedView, name: str, view_schema: str, params: dict[str, Any]) -> InstallPlan:
    """The state, the maintenance functions, the build, the triggers, the view (the triangle's
    capture layer: the same apply_K, apply_batch_K and clear_K calls)."""
    view = triangle_view(view)
    names = Names.of(name)
    view_params = _view_params(names, name, view.query.sql)
    relation_params = {k: _relation_params(names, k, view.variable_types) for k in RELATIONS}
    state: list[sql.Composable] = [
        *pack_types_plan(view),
        render(__package__, "00_view_state.sql", view_params),
        sql.SQL("INSERT INTO {} (epsilon, n, theta, db_size) VALUES ({}, 1, 1, 0); INSERT INTO {} (count) VALUES (0)").format(
            names("state"), sql.Literal(float(params["epsilon"])), names("result"))]
    state += [render(__package__, "50_rp_tables.sql", relation_params[k]) for k in RELATIONS]
    functions = [render(__package__, "48_resize.sql", view_params), render(__package__, "54_rp_view.sql", view_params)]
    functions += [render(__package__, "52_rp_relation.sql", relation_params[k]) for k in RELATIONS]
    functions += capture_functions_all(names, view, name, "IVMε", params["batch_threshold"])
    build = [build_plan(view, name), analyze_plan(names, state_tables())]
    return InstallPlan.of(state=state, functions=functions, build=build,
                          capture=capture_triggers_all(view, name, capture_triggers),
                          expose=expose_plan(names, view.query, name, view_schema, "IVMε"))


# --- status, verify, explain --------------------------------------------------------------------


def verify(conn: Any, view: ResolvedView, name: str, strict: bool = False) -> list[Any]:
    """Every invariant of the state, checked against the base tables."""
    from pgivm.systems.common import checks, run_checks

    view = triangle_view(view)
    names = Names.of(name)
    named = variant.view_checks(names, [names(k) for k in RELATIONS])
    for atom in view.query.atoms:
        k = atom.relation
        base = view.base_of(atom.table)
        base_x, base_y = atom_columns(view, atom, "base")
        params = {"k": names(k), "columns": sql.SQL(", ").join(sql.Identifier(v) for v in atom.variables),
                  "base_table": base.ident, "base_guard": base.guard("base"),
                  "base_columns": sql.SQL("{}, {}").format(base_x, base_y),
                  "base_not_null": capture.all_not_null("base", atom.columns)}
        named += [(f"{k.upper()}.{check}", query) for check, query in checks(__package__, "88_verify_bag.sql", params)]
        for flag, variable in zip(("h1", "h2"), atom.variables):
            params = {"k": names(k), "var": sql.Identifier(variable), "flag": sql.Identifier(flag),
                      "degree": names(_degree(k, variable)), "state": names("state")}
            named += [(f"{k.upper()}_on_{variable.upper()}.{check}", query)
                      for check, query in checks(__package__, "89_verify_partition.sql", params)
                      if check != "strict_partition" or strict]
        l = NEXT[k]
        keys = (VARIABLES[k][0], VARIABLES[l][1])
        params = {"view": names(AUX_VIEW[k]), "columns": sql.SQL(", ").join(sql.Identifier(c) for c in keys),
                  "definition": _definition(k, names)}
        named += [(f"{AUX_VIEW[k]}.{check}", query) for check, query in checks(__package__, "91_verify_view_definition.sql", params)]
    return run_checks(conn, named)


def explain_lines(view: ResolvedView, state: dict[str, Any]) -> list[str]:
    view = triangle_view(view)
    atoms = ", ".join(f"{a.relation.upper()}({', '.join(v.upper() for v in a.variables)}) = {a.alias}({a.first}, {a.second})"
                      for a in view.query.atoms)
    return [f"relations: {atoms}",
            f"refined partitions (Kara et al., long version, Appendix D, Theorem 16): each relation on both of its "
            f"variables, heavy at degree >= θ = N^ε (ε = {state['epsilon']:g}, N = {state['n']}, θ = {state['theta']:.2f}); "
            "auxiliary views V_RS = R_hl·S_lh, V_ST = S_hl·T_lh, V_TR = T_hl·R_lh (light on the variable joined away, "
            "heavy on both kept)",
            "update: O(N^max(ε, 1-ε)) amortized per single-row change; space O(N^max(min(1+ε, 2-2ε), 1)): linear at ε = ½"]


def relation_rows(conn: Any, name: str) -> list[list[Any]]:
    """Per relation and variable: values, heavy values, tuples whose value there is heavy, light ones."""
    names = Names.of(name)
    rows = []
    for k in RELATIONS:
        for flag, variable in zip(("h1", "h2"), VARIABLES[k]):
            row = conn.execute(sql.SQL("SELECT (SELECT count(*) FILTER (WHERE heavy) FROM {d}), (SELECT count(*) FROM {d}), "
                                       "count(*) FILTER (WHERE {f}), count(*) FILTER (WHERE NOT {f}) FROM {k}").format(
                d=names(_degree(k, variable)), f=sql.Identifier(flag), k=names(k))).fetchone()
            rows.append([f"{k.upper()} on {variable.upper()}", row[1], row[0], row[2], row[3]])
    return rows


def is_refined_state(conn: Any, name: str) -> bool:
    return bool(conn.execute("SELECT to_regclass(%s) IS NOT NULL", [sql.Identifier(Names.of(name).schema, "r_a_degree").as_string(conn)]).fetchone()[0])
