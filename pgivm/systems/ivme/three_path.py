"""IVMε for the 3-path count Σ R(b)·S(b,c)·T(c), the 3R² class of counts over three relations
(Kara et al., long version, Appendix H.3, Figure 22; notes §8.8).

The middle S is partitioned on B, the variable it shares with R (Definition 40); R and T are kept
whole (T's partition variable is its whole key, see ``sql/ivme/92_tp_tables.sql``). Two auxiliary
views, both linear in |D|: rs_light(c) = Σ_b R(b)·S_l(b,c) and st_heavy(b) = Σ_c S_h(b,c)·T(c). A
single-row update reads O(1) rows of S's change, O(N^ε) of a light B-value's tuples for R's, O(N^(1−ε)) of the
heavy B-values' tuples at one C-value for T's: amortized O(N^max(ε,1−ε)) with the triangle's
rebalancing, linear preprocessing and space (Theorem 37), where F-IVM's view tree and first-order
read a hub's whole degree.
"""

from __future__ import annotations

from typing import Any

from psycopg import sql

from pgivm import capture
from pgivm.query.model import ThreePathCount
from pgivm.query.resolve import ResolvedView
from pgivm.systems.base import InstallPlan
from pgivm.systems.common import Names, analyze_plan, render, run_checks
from pgivm.systems.ivme import variant

RELATIONS = ("r", "s", "t")
VIEWS = ("rs_light", "st_heavy")
KEYS = {"rs_light": ("c",), "st_heavy": ("b",)}
# Each view's definition over the parts (92_tp_tables.sql): the rebuild and verify read these, the
# single-tuple procedures never do. S's flag hb is true at a heavy B-value.
DEFINITIONS = {
    "rs_light": "SELECT k.c, sum(r.mult * k.mult) FROM {s} k JOIN {r} r ON r.b = k.b WHERE NOT k.hb "
                "GROUP BY k.c HAVING sum(r.mult * k.mult) <> 0",
    "st_heavy": "SELECT k.b, sum(k.mult * t.mult) FROM {s} k JOIN {t} t ON t.c = k.c WHERE k.hb "
                "GROUP BY k.b HAVING sum(k.mult * t.mult) <> 0",
}
DEGREES = {("s", "b"): "s_b_degree"}
# The count from the state, linear in |D| (count_from_state in 94_tp_middle.sql, and the Spark build).
COUNT = "SELECT sum(r.mult * k.mult * t.mult) FROM {s} k JOIN {r} r ON r.b = k.b JOIN {t} t ON t.c = k.c"


def tp_view(view: ResolvedView) -> ResolvedView:
    """The view in the shape this module plans (R(b), S(b,c), T(c))."""
    return variant.reshaped(view, ThreePathCount, "three_path")


def is_three_path(view: ResolvedView) -> bool:
    return variant.has_shape(view, ThreePathCount, "three_path")


matches = is_three_path  # the name every variant module gives it (ivme's registry of variants reads it)
shaped = tp_view


def _view_params(view: ResolvedView, names: Names, name: str) -> dict[str, sql.Composable]:
    objects = ["r", "s", "t", "s_b_degree", *VIEWS, "state", "result", "resize", "major_rebalance", "recompute_views",
               "count_from_state", "restart", "views_s", "move_s_b"]
    objects += [f"{verb}_{k}" for verb in ("apply", "apply_batch", "clear") for k in "rst"]
    objects += [f"{k}_delta" for k in "rst"]
    return {
        **{o: names(o) for o in objects}, "schema": names.schema_id,
        **{f"{v}_type": sql.SQL(view.variable_types[v]) for v in "bc"},  # type: ignore[arg-type]
        **{f"{v}_definition": _definition(v, names) for v in VIEWS},
        "count_definition": sql.SQL(COUNT).format(**{k: names(k) for k in (*RELATIONS, *DEGREES.values())}),
        "schema_comment": sql.Literal(f"pgivm state of view {name} (strategy ivme, 3-path count, class 3R²): {view.query.sql}"),
        "result_comment": sql.Literal(f"pgivm: the maintained result of view {name}"),
    }


def _definition(view_name: str, names: Names) -> sql.Composable:
    return sql.SQL("    " + DEFINITIONS[view_name]).format(**{k: names(k) for k in "rst"})


def build_plan(view: ResolvedView, name: str) -> sql.Composable:
    """Each relation loaded from its table, S with its parts already strict and its degrees, then
    restart (N, the strict partition, which finds every tuple in its part, the views, the count)."""
    names = Names.of(name)
    loads = variant.strict_load_plan(view, names, DEGREES)
    return sql.SQL(";\n").join([*loads, sql.SQL("SELECT {}()").format(names("restart"))])


def state_tables() -> list[str]:
    return ["r", "s", "t", "s_b_degree", *VIEWS]


def plan(view: ResolvedView, name: str, view_schema: str, params: dict[str, Any]) -> InstallPlan:
    """The state, the maintenance functions, the build, the triggers, the view (as the 4-path's)."""
    view = tp_view(view)
    names = Names.of(name)
    view_params = _view_params(view, names, name)
    state: list[sql.Composable] = [
        render(__package__, "00_view_state.sql", view_params),
        sql.SQL("INSERT INTO {} (epsilon, n, theta, db_size) VALUES ({}, 1, 1, 0); INSERT INTO {} (count) VALUES (0)").format(
            names("state"), sql.Literal(float(params["epsilon"])), names("result")),
        render(__package__, "92_tp_tables.sql", view_params)]
    functions = [render(__package__, name, view_params) for name in ("48_resize.sql", "94_tp_middle.sql", "93_tp_ends.sql")]
    build = [build_plan(view, name), analyze_plan(names, state_tables())]
    return variant.install_plan(view, name, view_schema, params, state, functions, build)


def capture_atoms(view: ResolvedView, name: str, params: dict[str, Any]) -> dict[Any, list[capture.CaptureAtom]]:
    return variant.capture_atoms(tp_view(view))


def capture_triggers(view: ResolvedView, name: str, table: Any) -> list[capture.CaptureTrigger]:
    return variant.capture_triggers(tp_view(view), name, table)


# --- status, verify, explain --------------------------------------------------------------------


def verify(conn: Any, view: ResolvedView, name: str, strict: bool = False) -> list[Any]:
    """Every invariant of the state, checked against the base tables."""
    view = tp_view(view)
    names = Names.of(name)
    named = variant.view_checks(names, [names(k) for k in RELATIONS])
    named += variant.flagged_state_checks(view, names, DEGREES, {v: (KEYS[v], _definition(v, names)) for v in VIEWS}, strict)
    return run_checks(conn, named)


def explain_lines(view: ResolvedView, state: dict[str, Any]) -> list[str]:
    view = tp_view(view)
    r, s, t = view.query.relations
    return ["3-path count, class 3R² (Kara et al., long version, Appendix H.3, Theorem 37): Σ R(B)·S(B,C)·T(C)",
            f"  R(B) = {r.alias}({r.columns[0]}), S(B,C) = {s.alias}({', '.join(s.columns)}), T(C) = {t.alias}({t.columns[0]})",
            f"partitions: S on B, heavy at degree >= θ = N^ε (ε = {state['epsilon']:g}, N = {state['n']}, "
            f"θ = {state['theta']:.2f}); R and T whole; two auxiliary views, V_RlT(C) and V_RhSl(B) (Figure 22)",
            "update: O(N^max(ε, 1-ε)) amortized per single-row change; space and preprocessing O(N); a multi-row "
            "statement above the batch threshold set at a time (its rows joined with the views and the other relations)"]


def relation_rows(conn: Any, name: str) -> list[list[Any]]:
    """S's partition on B of a 3-path view: values, heavy values, heavy and light tuples."""
    names = Names.of(name)
    if not conn.execute("SELECT to_regclass(%s) IS NOT NULL", [sql.Identifier(names.schema, "rs_light").as_string(conn)]).fetchone()[0]:
        return []
    row = conn.execute(sql.SQL("SELECT (SELECT count(*) FILTER (WHERE heavy) FROM {d}), (SELECT count(*) FROM {d}), "
                               "count(*) FILTER (WHERE hb), count(*) FILTER (WHERE NOT hb) FROM {s}").format(
        d=names("s_b_degree"), s=names("s"))).fetchone()
    return [["S on B", row[1], row[0], row[2], row[3]]]
