"""IVMε for the 4-path count Σ R(a)·S(a,b)·T(b,c)·U(c) (Kara et al., long version, Appendix G).

S is partitioned on A and on B, T on B and on C (G.1), each at θ = N^ε with the triangle's slack;
R and U are not partitioned. The auxiliary views are Figure 14's or sums of them (the list, with
the paper's name of each, heads ``sql/ivme/80_fp_tables.sql``); a single-tuple update reads
O(N^max(ε,1−ε)) state rows, answers are O(1), space O(N^(1+min(ε,1−ε))) (Theorem 27).

The path is symmetric: reversed, U is an end like R and T a middle like S. So the update
procedures are written once per kind of relation, in role names (E, M, F, G: the end updated, the
middle next to it, the other middle, the other end) in ``82_fp_end.sql`` and ``84_fp_mid.sql``,
and rendered twice, once per direction; ``_end_params`` and ``_mid_params`` bind the roles.
Rebalancing is the triangle's: minor moves tuple by tuple (each out of the old part's views, into
the new one's), major ones a strict repartition with every view recomputed (G.5).
"""

from __future__ import annotations

from typing import Any

from psycopg import sql

from pgivm import capture
from pgivm.query.model import FourPathCount
from pgivm.query.resolve import ResolvedView
from pgivm.systems.base import InstallPlan
from pgivm.systems.common import Names, analyze_plan, render
from pgivm.systems.ivme import variant

RELATIONS = ("r", "s", "t", "u")
VIEWS = ("w_r", "w_u", "p_r", "p_u", "q", "z_r", "z_u", "y_r", "y_u")
KEYS = {"w_r": ("b",), "w_u": ("b",), "p_r": ("a", "c"), "p_u": ("c", "a"), "q": ("a", "c"), "z_r": ("b",),
        "z_u": ("b",), "y_r": ("a",), "y_u": ("c",)}

# Each view's definition over the parts (80_fp_tables.sql): the rebuild and verify read these, the
# single-tuple procedures never do. S's flags are ha, hb; T's hb, hc (true: heavy).
DEFINITIONS = {
    "w_r": "SELECT k.b, sum(e.mult * k.mult) FROM {s} k JOIN {r} e ON e.a = k.a WHERE NOT (k.ha AND NOT k.hb) "
           "GROUP BY k.b HAVING sum(e.mult * k.mult) <> 0",
    "w_u": "SELECT k.b, sum(k.mult * e.mult) FROM {t} k JOIN {u} e ON e.c = k.c WHERE NOT (k.hc AND NOT k.hb) "
           "GROUP BY k.b HAVING sum(k.mult * e.mult) <> 0",
    "p_r": "SELECT s.a, t.c, sum(s.mult * t.mult) FROM {s} s JOIN {t} t ON t.b = s.b "
           "WHERE NOT s.ha AND NOT s.hb AND NOT t.hb AND t.hc GROUP BY s.a, t.c HAVING sum(s.mult * t.mult) <> 0",
    "p_u": "SELECT t.c, s.a, sum(s.mult * t.mult) FROM {s} s JOIN {t} t ON t.b = s.b "
           "WHERE s.ha AND NOT s.hb AND NOT t.hb AND NOT t.hc GROUP BY t.c, s.a HAVING sum(s.mult * t.mult) <> 0",
    "q": "SELECT s.a, t.c, sum(s.mult * t.mult) FROM {s} s JOIN {t} t ON t.b = s.b "
         "WHERE s.ha AND NOT s.hb AND NOT t.hb AND t.hc GROUP BY s.a, t.c HAVING sum(s.mult * t.mult) <> 0",
    "z_r": "SELECT t.b, sum(t.mult * u.mult) FROM {t} t JOIN {u} u ON u.c = t.c JOIN {s_b_degree} d ON d.b = t.b "
           "WHERE d.heavy AND NOT t.hb AND t.hc GROUP BY t.b HAVING sum(t.mult * u.mult) <> 0",
    "z_u": "SELECT s.b, sum(r.mult * s.mult) FROM {s} s JOIN {r} r ON r.a = s.a JOIN {t_b_degree} d ON d.b = s.b "
           "WHERE d.heavy AND s.ha AND NOT s.hb GROUP BY s.b HAVING sum(r.mult * s.mult) <> 0",
    "y_r": "SELECT s.a, sum(s.mult * t.mult * u.mult) FROM {s} s JOIN {t} t ON t.b = s.b JOIN {u} u ON u.c = t.c "
           "WHERE s.ha AND NOT s.hb AND NOT t.hb AND NOT t.hc GROUP BY s.a HAVING sum(s.mult * t.mult * u.mult) <> 0",
    "y_u": "SELECT t.c, sum(r.mult * s.mult * t.mult) FROM {r} r JOIN {s} s ON s.a = r.a JOIN {t} t ON t.b = s.b "
           "WHERE NOT s.ha AND NOT s.hb AND NOT t.hb AND t.hc GROUP BY t.c HAVING sum(r.mult * s.mult * t.mult) <> 0",
}

# The two directions of the path: (E, its variable X, M, F, G, G's variable Y, M's flag on X, F's flag on Y).
DIRECTIONS = {"r": ("r", "a", "s", "t", "u", "c"), "u": ("u", "c", "t", "s", "r", "a")}
DEGREES = {("s", "a"): "s_a_degree", ("s", "b"): "s_b_degree", ("t", "b"): "t_b_degree", ("t", "c"): "t_c_degree"}
# The count from the state, factorized at B (count_from_state in 86_fp_view.sql, and the Spark build).
COUNT = ("SELECT sum(l.v * x.v) FROM (SELECT k.b, sum(e.mult * k.mult) AS v FROM {s} k JOIN {r} e ON e.a = k.a GROUP BY k.b) l "
         "JOIN (SELECT k.b, sum(k.mult * e.mult) AS v FROM {t} k JOIN {u} e ON e.c = k.c GROUP BY k.b) x ON x.b = l.b")


def fp_view(view: ResolvedView) -> ResolvedView:
    """The view in the shape this module plans (R(a), S(a,b), T(b,c), U(c))."""
    return variant.reshaped(view, FourPathCount, "four_path")


def is_four_path(view: ResolvedView) -> bool:
    return variant.has_shape(view, FourPathCount, "four_path")


matches = is_four_path  # the name every variant module gives it (ivme's registry of variants reads it)
shaped = fp_view


def _names(names: Names) -> dict[str, sql.Composable]:
    objects = ["r", "s", "t", "u", *VIEWS, *DEGREES.values(), "state", "result", "resize", "major_rebalance",
               "recompute_views", "count_from_state", "restart"]
    return {o: names(o) for o in objects} | {f"{k}_delta": names(f"{k}_delta") for k in "rstu"}


def _definition(view_name: str, names: Names) -> sql.Composable:
    return sql.SQL("    " + DEFINITIONS[view_name]).format(**_names(names))


def _types(view: ResolvedView) -> dict[str, sql.Composable]:
    return {f"{v}_type": sql.SQL(view.variable_types[v]) for v in "abc"}  # type: ignore[arg-type]


def _end_params(view: ResolvedView, names: Names, e: str) -> dict[str, sql.Composable]:
    """82_fp_end.sql's roles bound for the end ``e`` ("r" or "u")."""
    e, x, m, f, g, y = DIRECTIONS[e]
    return {
        "state": names("state"), "result": names("result"), "resize": names("resize"),
        "e": names(e), "m": names(m), "g": names(g), "q": names("q"),
        "x": sql.Identifier(x), "y": sql.Identifier(y), "x_type": sql.SQL(view.variable_types[x]),  # type: ignore[arg-type]
        "m_x_degree": names(DEGREES[(m, x)]), "f_b_degree": names(DEGREES[(f, "b")]),
        "w_e": names(f"w_{e}"), "w_g": names(f"w_{g}"), "p_e": names(f"p_{e}"), "z_e": names(f"z_{e}"),
        "z_g": names(f"z_{g}"), "y_e": names(f"y_{e}"), "y_g": names(f"y_{g}"),
        "apply_e": names(f"apply_{e}"), "apply_batch_e": names(f"apply_batch_{e}"), "clear_e": names(f"clear_{e}"),
        "e_delta": names(f"{e}_delta"),
        "apply_e_comment": sql.Literal(f"IVMε ApplyUpdate4Path for a single-tuple update to {e.upper()} (Appendix G, Figure 15)"),
    }


def _mid_params(view: ResolvedView, names: Names, m: str) -> dict[str, sql.Composable]:
    """84_fp_mid.sql's roles bound for the middle ``m`` ("s" or "t")."""
    e, x, _, f, g, y = DIRECTIONS["r" if m == "s" else "u"]
    columns = ("a", "b") if m == "s" else ("b", "c")  # the relation's variables in order: apply_m's parameters
    return {
        "state": names("state"), "result": names("result"), "resize": names("resize"),
        "e": names(e), "m": names(m), "f": names(f), "g": names(g), "q": names("q"),
        "x": sql.Identifier(x), "y": sql.Identifier(y), "hx": sql.Identifier(f"h{x}"), "hy": sql.Identifier(f"h{y}"),
        "x_type": sql.SQL(view.variable_types[x]), "b_type": sql.SQL(view.variable_types["b"]),  # type: ignore[arg-type]
        "x_parameter": sql.Identifier(f"x_{x}"), "b_parameter": sql.Identifier("x_b"),
        "parameters": sql.SQL(", ").join(sql.SQL("{} {}").format(sql.Identifier(f"x_{c}"), sql.SQL(view.variable_types[c]))  # type: ignore[arg-type]
                                         for c in columns),
        "parameter_types": sql.SQL(", ").join(sql.SQL(view.variable_types[c]) for c in columns),  # type: ignore[arg-type]
        "columns": sql.SQL(", ").join(sql.Identifier(c) for c in columns),
        "m_x_degree": names(DEGREES[(m, x)]), "m_b_degree": names(DEGREES[(m, "b")]), "f_b_degree": names(DEGREES[(f, "b")]),
        "w_e": names(f"w_{e}"), "w_g": names(f"w_{g}"), "p_e": names(f"p_{e}"), "p_g": names(f"p_{g}"), "z_e": names(f"z_{e}"),
        "z_g": names(f"z_{g}"), "y_e": names(f"y_{e}"), "y_g": names(f"y_{g}"),
        "apply_m": names(f"apply_{m}"), "views_m": names(f"views_{m}"), "move_m_x": names(f"move_{m}_{x}"),
        "move_m_b": names(f"move_{m}_b"), "apply_batch_m": names(f"apply_batch_{m}"), "clear_m": names(f"clear_{m}"),
        "m_delta": names(f"{m}_delta"),
        "apply_m_comment": sql.Literal(f"IVMε ApplyUpdate4Path for a single-tuple update to {m.upper()} (Appendix G, Figure 16)"),
    }


def _view_params(view: ResolvedView, names: Names, name: str) -> dict[str, sql.Composable]:
    return {
        **_names(names), **_types(view), "schema": names.schema_id,
        **{f"{v}_definition": _definition(v, names) for v in VIEWS},
        "count_definition": sql.SQL(COUNT).format(**{k: names(k) for k in (*RELATIONS, *DEGREES.values())}),
        "schema_comment": sql.Literal(f"pgivm state of view {name} (strategy ivme, 4-path count): {view.query.sql}"),
        "result_comment": sql.Literal(f"pgivm: the maintained result of view {name}"),
    }


def capture_atoms(view: ResolvedView, name: str, params: dict[str, Any]) -> dict[Any, list[capture.CaptureAtom]]:
    return variant.capture_atoms(fp_view(view))


def capture_triggers(view: ResolvedView, name: str, table: Any) -> list[capture.CaptureTrigger]:
    return variant.capture_triggers(fp_view(view), name, table)


def build_plan(view: ResolvedView, name: str) -> sql.Composable:
    """Each relation loaded from its table, S and T with their parts already strict on both
    variables and their degrees, then restart (N, the strict partitions, which find every tuple in
    its parts, the views, the count)."""
    names = Names.of(name)
    loads = variant.strict_load_plan(view, names, DEGREES)
    return sql.SQL(";\n").join([*loads, sql.SQL("SELECT {}()").format(names("restart"))])


def state_tables() -> list[str]:
    return ["r", "s", "t", "u", *DEGREES.values(), *VIEWS]


def plan(view: ResolvedView, name: str, view_schema: str, params: dict[str, Any]) -> InstallPlan:
    """The state, the maintenance functions, the build, the triggers, the view (as the triangle's)."""
    view = fp_view(view)
    names = Names.of(name)
    view_params = _view_params(view, names, name)
    state: list[sql.Composable] = [
        render(__package__, "00_view_state.sql", view_params),
        sql.SQL("INSERT INTO {} (epsilon, n, theta, db_size) VALUES ({}, 1, 1, 0); INSERT INTO {} (count) VALUES (0)").format(
            names("state"), sql.Literal(float(params["epsilon"])), names("result")),
        render(__package__, "80_fp_tables.sql", view_params)]
    functions = [render(__package__, "48_resize.sql", view_params), render(__package__, "86_fp_view.sql", view_params)]
    functions += [render(__package__, "82_fp_end.sql", _end_params(view, names, e)) for e in ("r", "u")]
    functions += [render(__package__, "84_fp_mid.sql", _mid_params(view, names, m)) for m in ("s", "t")]
    build = [build_plan(view, name), analyze_plan(names, state_tables())]
    return variant.install_plan(view, name, view_schema, params, state, functions, build)


# --- status, verify, explain --------------------------------------------------------------------


def verify(conn: Any, view: ResolvedView, name: str, strict: bool = False) -> list[Any]:
    """Every invariant of the state, checked against the base tables."""
    from pgivm.systems.common import run_checks

    view = fp_view(view)
    names = Names.of(name)
    named = variant.view_checks(names, [names(k) for k in RELATIONS])
    named += variant.flagged_state_checks(view, names, DEGREES, {v: (KEYS[v], _definition(v, names)) for v in VIEWS}, strict)
    return run_checks(conn, named)


def explain_lines(view: ResolvedView, state: dict[str, Any]) -> list[str]:
    view = fp_view(view)
    r, s, t, u = view.query.relations
    return ["4-path count (Kara et al., long version, Appendix G, Theorem 27): Σ R(A)·S(A,B)·T(B,C)·U(C)",
            f"  R(A) = {r.alias}({r.columns[0]}), S(A,B) = {s.alias}({', '.join(s.columns)}), "
            f"T(B,C) = {t.alias}({', '.join(t.columns)}), U(C) = {u.alias}({u.columns[0]})",
            f"partitions: S on A and on B, T on B and on C, heavy at degree >= θ = N^ε (ε = {state['epsilon']:g}, "
            f"N = {state['n']}, θ = {state['theta']:.2f}); R and U whole; nine auxiliary views (Figure 14's or sums of them)",
            "update: O(N^max(ε, 1-ε)) amortized per single-row change; space O(N^(1+min(ε, 1-ε))); a multi-row "
            "statement above the batch threshold set at a time (its rows joined with the views and the other relations)"]


def relation_rows(conn: Any, name: str) -> list[list[Any]]:
    """Per partitioned relation and variable of a 4-path view: values, heavy values, heavy and light tuples."""
    names = Names.of(name)
    if not conn.execute("SELECT to_regclass(%s) IS NOT NULL", [sql.Identifier(names.schema, "s_a_degree").as_string(conn)]).fetchone()[0]:
        return []
    rows = []
    for (relation, variable), degree in DEGREES.items():
        flag = sql.Identifier(f"h{variable}")
        row = conn.execute(sql.SQL("SELECT (SELECT count(*) FILTER (WHERE heavy) FROM {d}), (SELECT count(*) FROM {d}), "
                                   "count(*) FILTER (WHERE {f}), count(*) FILTER (WHERE NOT {f}) FROM {k}").format(
            d=names(degree), f=flag, k=names(relation))).fetchone()
        rows.append([f"{relation.upper()} on {variable.upper()}", row[1], row[0], row[2], row[3]])
    return rows
