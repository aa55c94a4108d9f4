"""IVMε (Kara, Ngo, Nikolic, Olteanu, Zhang): triangle counts under updates in O(N^max(ε,1-ε)).

This module turns a resolved view into the SQL that installs it: a state schema with heavy/light
partitions, degree tables, the auxiliary views V_RS, V_ST, V_TR, the count, and the PL/pgSQL
functions and triggers that maintain them (templates in ``sql/ivme/``). It also reads the state
back for ``status`` and checks it for ``verify``. It executes nothing on its own except in the
read-only helpers; ``pgivm.command`` runs the plans.

The three relations share one set of templates: R(A,B) -> S(B,C) -> T(C,A) is a cycle, and each
relation K is rendered with L = the next relation and M = the previous one.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from pgivm.capture import BATCH_THRESHOLD, atom_columns
from pgivm.query.model import VARIABLES, Atom, RelationName, TriangleCount
from pgivm.query.resolve import ResolvedView
from pgivm.systems.base import Action, FunctionSystem, InstallPlan, Option, Section, SystemStatus
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
    table_sizes,
)

NAME = "ivme"
DEFAULT_EPSILON = 0.5
RELATIONS: tuple[RelationName, ...] = ("r", "s", "t")
NEXT: dict[RelationName, RelationName] = {"r": "s", "s": "t", "t": "r"}
PREVIOUS: dict[RelationName, RelationName] = {"r": "t", "s": "r", "t": "s"}
AUX_VIEW = {"r": "v_rs", "s": "v_st", "t": "v_tr"}  # the view keyed by K's heavy part: V_KL


def _render(template: str, params: dict[str, sql.Composable]) -> sql.Composed:
    return render(__name__, template, params)


def _relation_params(names: Names, k: RelationName, types: dict[str, str]) -> dict[str, sql.Composable]:
    l, m = NEXT[k], PREVIOUS[k]
    x, y = VARIABLES[k]
    z = VARIABLES[l][1]
    upper = k.upper()
    return {
        "x": sql.Identifier(x),
        "y": sql.Identifier(y),
        "z": sql.Identifier(z),
        "type_x": sql.SQL(types[x]),  # type: ignore[arg-type]  # from format_type(), not user text
        "type_y": sql.SQL(types[y]),  # type: ignore[arg-type]
        "type_z": sql.SQL(types[z]),  # type: ignore[arg-type]
        "state": names("state"),
        "result": names("result"),
        "k_heavy": names(f"{k}_heavy"),
        "k_light": names(f"{k}_light"),
        "k_degree": names(f"{k}_degree"),
        "l_heavy": names(f"{l}_heavy"),
        "l_light": names(f"{l}_light"),
        "l_degree": names(f"{l}_degree"),
        "m_heavy": names(f"{m}_heavy"),
        "m_light": names(f"{m}_light"),
        "v_kl": names(AUX_VIEW[k]),
        "v_lm": names(AUX_VIEW[l]),
        "v_mk": names(AUX_VIEW[m]),
        "apply_k": names(f"apply_{k}"),
        "move_k": names(f"move_{k}"),
        "light_paths_k": names(f"light_paths_{k}"),
        "heavy_paths_k": names(f"heavy_paths_{k}"),
        "k_delta": names(f"{k}_delta"),
        "apply_batch_k": names(f"apply_batch_{k}"),
        "repartition_k": names(f"repartition_{k}"),
        "recompute_v_kl": names(f"recompute_{AUX_VIEW[k]}"),
        "clear_k": names(f"clear_{k}"),
        "major_rebalance": names("major_rebalance"),
        "k_heavy_comment": sql.Literal(
            f"IVMε: heavy part of {upper}({x.upper()},{y.upper()}), tuples whose {x.upper()}-value has high degree"
        ),
        "k_light_comment": sql.Literal(
            f"IVMε: light part of {upper}({x.upper()},{y.upper()}), tuples whose {x.upper()}-value has low degree"
        ),
        "k_degree_comment": sql.Literal(
            f"IVMε: per {x.upper()}-value of {upper}, its degree (distinct tuples) and whether it is heavy"
        ),
        "v_kl_comment": sql.Literal(
            f"IVMε auxiliary view {AUX_VIEW[k].upper()}({x.upper()},{z.upper()}) = "
            f"sum_{y.upper()} {upper}_heavy * {l.upper()}_light; serves updates to {m.upper()}"
        ),
        "apply_k_comment": sql.Literal(f"IVMε ApplyUpdate + OnUpdate for a single-tuple update to {upper}"),
        "move_k_comment": sql.Literal(f"IVMε MinorRebalancing of one {x.upper()}-value of {upper}"),
        "light_paths_k_comment": sql.Literal(
            f"IVMε, for an update to {upper}: sum over {z.upper()} of {l.upper()}_light * {m.upper()}_light, as a merge join"
        ),
        "heavy_paths_k_comment": sql.Literal(
            f"IVMε, for an update to {upper}: sum over {z.upper()} of {l.upper()}_heavy * {m.upper()}_heavy, as a merge join"
        ),
        "k_delta_comment": sql.Literal(f"pgivm scratch: the net change of {upper} by the current multi-row statement"),
        "apply_batch_k_comment": sql.Literal(f"IVMε, set at a time: apply the multi-row change in {k}_delta to {upper}"),
    }


def _view_params(names: Names, name: str, query_sql: str) -> dict[str, sql.Composable]:
    params: dict[str, sql.Composable] = {
        "schema": names.schema_id,
        "state": names("state"),
        "result": names("result"),
        "major_rebalance": names("major_rebalance"),
        "count_from_state": names("count_from_state"),
        "restart": names("restart"),
        "schema_comment": sql.Literal(f"pgivm state of view {name} (strategy ivme): {query_sql}"),
        "result_comment": sql.Literal(f"pgivm: the maintained result of view {name}"),
    }
    for k in RELATIONS:
        params[f"{k}_heavy"] = names(f"{k}_heavy")
        params[f"{k}_light"] = names(f"{k}_light")
        params[f"repartition_{k}"] = names(f"repartition_{k}")
        params[AUX_VIEW[k]] = names(AUX_VIEW[k])
        params[f"recompute_{AUX_VIEW[k]}"] = names(f"recompute_{AUX_VIEW[k]}")
    return params


def _load_params(names: Names, view: ResolvedView, atom: Atom) -> dict[str, sql.Composable]:
    base_x, base_y = atom_columns(view, atom, "base")
    base = view.base_of(atom.table)
    return {
        **_relation_params(names, atom.relation, view.variable_types),
        "base_table": base.ident,
        "base_guard": base.guard("base"),
        "base_x": base_x,
        "base_y": base_y,
        "base_x_column": sql.Identifier(atom.first),
        "base_y_column": sql.Identifier(atom.second),
    }


def build_plan(view: ResolvedView, name: str) -> sql.Composable:
    """The set-at-a-time build from the base tables: every relation loaded into its light part, then
    preprocessing (N = 2|D|+1, strict partition, views, count). ``--preprocess spark`` replaces it."""
    names = Names.of(name)
    loads = [_render("45_relation_build.sql", _load_params(names, view, atom)) for atom in view.query.atoms]
    return sql.SQL("\n").join([*loads, sql.SQL("SELECT {}();").format(names("restart"))])


def plan(view: ResolvedView, name: str, view_schema: str, params: dict[str, Any]) -> InstallPlan:
    """The state, the maintenance functions, the build from existing data, the triggers, the view.

    ``pgivm.command`` runs it in one transaction with the base tables locked against writes, so
    that no change slips between the set-at-a-time build and the triggers.
    """
    names = Names.of(name)
    types = view.variable_types
    view_params = _view_params(names, name, view.query.sql)
    state: list[sql.Composable] = [_render("00_view_state.sql", view_params)]
    state.append(
        sql.SQL("INSERT INTO {} (epsilon, n, theta, db_size) VALUES ({}, 1, 1, 0); INSERT INTO {} (count) VALUES (0)").format(
            names("state"), sql.Literal(float(params["epsilon"])), names("result")
        )
    )
    state += [_render("10_relation_tables.sql", _relation_params(names, k, types)) for k in RELATIONS]
    functions = [_render("20_relation_maintenance.sql", _relation_params(names, k, types)) for k in RELATIONS]
    functions += [_render("25_relation_batch.sql", _relation_params(names, k, types)) for k in RELATIONS]
    functions.append(_render("30_view_maintenance.sql", view_params))
    functions += [_render("40_relation_clear.sql", _relation_params(names, k, types)) for k in RELATIONS]
    functions += capture_functions_all(names, view, name, "IVMε", params["batch_threshold"])
    build = [build_plan(view, name),
             analyze_plan(names, [f"{k}_{part}" for k in RELATIONS for part in ("heavy", "light", "degree")]
                          + list(AUX_VIEW.values()))]
    return InstallPlan.of(state=state, functions=functions, build=build,
                          capture=capture_triggers_all(view, name, capture_triggers),
                          expose=expose_plan(names, view.query, name, view_schema, "IVMε"))


def rebalance_plan(name: str, epsilon: float | None = None) -> sql.Composable:
    """A forced major rebalancing (after an optional change of ε), serialized with the writers."""
    names = Names.of(name)
    set_eps = sql.SQL(", epsilon = {}").format(sql.Literal(float(epsilon))) if epsilon is not None else sql.SQL("")
    return sql.SQL("UPDATE {state} SET updates_applied = updates_applied{set_eps}; SELECT {major}()").format(
        state=names("state"), set_eps=set_eps, major=names("major_rebalance")
    )


# --- reading the state back ------------------------------------------------------------------


def status(conn: psycopg.Connection, name: str) -> SystemStatus:
    """ε, N, θ, |D|, the counters; heavy values and tuples per relation."""
    names = Names.of(name)
    info = read_state(conn, name)
    relations = []
    for k in RELATIONS:
        row = conn.execute(
            sql.SQL(
                "SELECT count(*) FILTER (WHERE heavy), count(*), "
                "(SELECT count(*) FROM {h}), (SELECT count(*) FROM {l}) FROM {d}"
            ).format(h=names(f"{k}_heavy"), l=names(f"{k}_light"), d=names(f"{k}_degree"))
        ).fetchone()
        assert row is not None
        relations.append([k.upper(), row[1], row[0], row[2], row[3]])
    figures = {k: info[k] for k in ("epsilon", "n", "theta", "db_size", "updates_applied", "major_rebalances",
                                    "minor_rebalances")}
    return SystemStatus(figures, [Section("relations", ["relation", "values", "heavy values", "heavy tuples",
                                                        "light tuples"], relations)],
                        labels={"n": "N", "theta": "theta = N^eps", "db_size": "|D|", "updates_applied": "updates"},
                        headline=("db_size",))


# --- verification ----------------------------------------------------------------------------


def verify(conn: psycopg.Connection, view: ResolvedView, name: str, strict: bool = False) -> list[CheckFailure]:
    """Every IVMε invariant, checked against the base tables; an empty list means all hold."""
    names = Names.of(name)
    named = checks(__name__, "61_verify_view.sql", _view_params(names, name, view.query.sql))
    for atom in view.query.atoms:
        for check, query in checks(__name__, "60_verify_relation.sql", _load_params(names, view, atom)):
            if check != "strict_partition" or strict:
                named.append((f"{atom.relation.upper()}.{check}", query))
    return run_checks(conn, named)


# --- the system --------------------------------------------------------------------------------


def _epsilon_in_range(value: float) -> str | None:
    return None if 0.0 <= value <= 1.0 else f"epsilon must be between 0 and 1, got {value}"


def _not_negative(value: int) -> str | None:
    return None if value >= 0 else f"must be 0 or more, got {value}"


EPSILON = Option("epsilon", float, DEFAULT_EPSILON, "IVMε trade-off in [0, 1]: space O(N^(1+min(ε,1-ε))), "
                 "update time O(N^max(ε,1-ε)); 0.5 is worst-case optimal", _epsilon_in_range, in_state=True)
BATCH = Option("batch_threshold", int, BATCH_THRESHOLD, "statements changing more rows than this are maintained "
               "set at a time (0: every statement)", _not_negative)


def _rebalance(conn: psycopg.Connection, name: str, options: dict[str, Any]) -> dict[str, Any]:
    conn.execute(rebalance_plan(name, options.get("epsilon")))
    return read_state(conn, name)


class SparkBuild:
    """The build phase computed by Spark (``create --preprocess spark``): see pgivm.spark.preprocess."""

    def around(self, conn: psycopg.Connection) -> Any:
        from pgivm.spark import preprocess

        return preprocess.scratch_schemas(conn)

    def build(self, conn: psycopg.Connection, view: ResolvedView, name: str, params: dict[str, Any],
              context: Any) -> None:
        from pgivm.spark import preprocess

        preprocess.build_with_spark(conn, view, name, params["epsilon"], context)
        conn.execute(analyze_plan(Names.of(name), [f"{k}_{part}" for k in RELATIONS for part in ("heavy", "light", "degree")]
                                  + list(AUX_VIEW.values())))


SYSTEM = FunctionSystem(
    name=NAME,
    summary="IVMε: triangle counts, O(N^max(ε,1-ε)) amortized per single-row update (heavy/light partitions)",
    accepts=triangle_reason, model=triangle_model, plan=plan, capture_triggers=capture_triggers,
    status=status, verify=verify,
    options=(EPSILON, BATCH),
    actions=(
        Action("rebalance", "force a major rebalancing: strict repartition at N^epsilon, auxiliary views rebuilt",
               (), _rebalance),
        Action("alter", "change epsilon; repartitions at once (a major rebalancing)",
               (Option("epsilon", float, None, "new epsilon in [0, 1]", _epsilon_in_range),), _rebalance),
    ),
    builders={"spark": SparkBuild()},
    deferred_atoms=triangle_capture_atoms,
)
