"""IVMε's install SQL: the state schema with heavy/light partitions, degree tables, the auxiliary
views V_RS, V_ST, V_TR and the count, the PL/pgSQL functions and triggers that maintain them
(templates in ``sql/``), the set-at-a-time build and the forced rebalancing.

The three relations share one set of templates: R(A,B) -> S(B,C) -> T(C,A) is a cycle, and each
relation K is rendered with L = the next relation and M = the previous one.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from pgivm import capture
from pgivm.capture import atom_columns
from pgivm.errors import PgivmError
from pgivm.query.model import MULTIPLICITY, VARIABLES, Atom, Packed, RelationName
from pgivm.query.resolve import ResolvedView, collate
from pgivm.systems.base import InstallPlan
from pgivm.systems.common import (
    Names,
    analyze_plan,
    revoke_plan,
    capture_functions_all,
    capture_triggers,
    capture_triggers_all,
    expose_plan,
    pack_types_plan,
    render,
    triangle_view,
)

RELATIONS: tuple[RelationName, ...] = ("r", "s", "t")
NEXT: dict[RelationName, RelationName] = {"r": "s", "s": "t", "t": "r"}
PREVIOUS: dict[RelationName, RelationName] = {"r": "t", "s": "r", "t": "s"}
AUX_VIEW = {"r": "v_rs", "s": "v_st", "t": "v_tr"}  # the view keyed by K's heavy part: V_KL


def _render(template: str, params: dict[str, sql.Composable]) -> sql.Composed:
    return render(__package__, template, params)


def _relation_params(names: Names, k: RelationName, types: dict[str, str], listing: bool = False) -> dict[str, sql.Composable]:
    l, m = NEXT[k], PREVIOUS[k]
    x, y = VARIABLES[k]
    z = VARIABLES[l][1]
    upper = k.upper()
    return {
        **_listing_params(names, k, listing),
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


def _listing_params(names: Names, k: RelationName, listing: bool) -> dict[str, sql.Composable]:
    """A listing view's names and its statements in the count's functions (none for a count)."""
    l, m = NEXT[k], PREVIOUS[k]
    x, y = VARIABLES[k]
    z = VARIABLES[l][1]
    list_k = names(f"list_{k}")
    hooks = {"listing_apply": sql.SQL(""), "listing_move": sql.SQL(""), "listing_batch": sql.SQL("")}
    if listing:
        hooks = {
            # the listing's part of the update, on L and M as they are (before K changes)
            "listing_apply": sql.SQL("\n    PERFORM {}(alpha, beta, m, alpha_heavy, beta_heavy);  -- the listing "
                                     "(22_listing_maintenance.sql)").format(list_k),
            # each moved tuple leaves the listing's views of its old part and enters those of the new one
            "listing_move": sql.SQL(
                "\n    DECLARE moved record; BEGIN  -- the listing: each tuple out of its old part, into its new one\n"
                "        FOR moved IN SELECT k.y, k.mult, lb.heavy AS beta_heavy\n"
                "                       FROM (SELECT {y} AS y, mult FROM {k_light} WHERE {x} = alpha AND to_heavy\n"
                "                             UNION ALL SELECT {y}, mult FROM {k_heavy} WHERE {x} = alpha AND NOT to_heavy) k\n"
                "                       LEFT JOIN {l_degree} lb ON lb.{y} = k.y LOOP\n"
                "            PERFORM {list_k}(alpha, moved.y, -moved.mult, NOT to_heavy, moved.beta_heavy);\n"
                "            PERFORM {list_k}(alpha, moved.y, moved.mult, to_heavy, moved.beta_heavy);\n"
                "        END LOOP;\n"
                "    END;").format(x=sql.Identifier(x), y=sql.Identifier(y), k_light=names(f"{k}_light"),
                                  k_heavy=names(f"{k}_heavy"), l_degree=names(f"{l}_degree"), list_k=list_k),
            # the listing reads L and M only: one update per tuple of the batch, in any order
            "listing_batch": sql.SQL(
                "\n    DECLARE d record; BEGIN  -- the listing: one update per distinct tuple of the batch\n"
                "        FOR d IN SELECT b.{x} AS x, b.{y} AS y, b.mult, b.heavy, lb.heavy AS beta_heavy\n"
                "                   FROM {k_delta} b LEFT JOIN {l_degree} lb ON lb.{y} = b.{y} LOOP\n"
                "            PERFORM {list_k}(d.x, d.y, d.mult, d.heavy, d.beta_heavy);\n"
                "        END LOOP;\n"
                "    END;").format(x=sql.Identifier(x), y=sql.Identifier(y), k_delta=names(f"{k}_delta"),
                                  l_degree=names(f"{l}_degree"), list_k=list_k),
        }
    return {
        **hooks,
        "list_k": list_k,
        "listing": names("listing"),
        "w_kl": names(f"w_{k}{l}"),
        "p_klm": names(f"p_{k}{l}"),
        "w_mk": names(f"w_{m}{k}"),
        "p_mkl": names(f"p_{m}{k}"),
        "p_lmk": names(f"p_{l}{m}"),
        "recompute_w_kl": names(f"recompute_w_{k}{l}"),
        "w_kl_comment": sql.Literal(f"IVMε listing W_{k.upper()}{l.upper()}({x.upper()},{y.upper()},{z.upper()}) = "
                                    f"{k.upper()}_heavy * {l.upper()}_light"),
        "p_klm_comment": sql.Literal(f"IVMε listing P_{k.upper()}{l.upper()}({x.upper()},{z.upper()}) = sum_{y.upper()} "
                                     f"W_{k.upper()}{l.upper()} * {m.upper()}: its nonzero rows"),
        "list_k_comment": sql.Literal(f"IVMε ApplyUpdateEnum ([L] Fig. 13): the listing's part of an update to {k.upper()}"),
    }


def _view_params(names: Names, name: str, query_sql: str, listing: bool = False) -> dict[str, sql.Composable]:
    params: dict[str, sql.Composable] = {
        "listing_rebuild": (sql.SQL("\n    PERFORM {}();  -- the listing's state").format(names("recompute_listing"))
                            if listing else sql.SQL("")),
        "listing": names("listing"),
        "rows": names("rows"),
        "recompute_listing": names("recompute_listing"),
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
        params[f"w_{k}{NEXT[k]}"] = names(f"w_{k}{NEXT[k]}")
        params[f"p_{k}{NEXT[k]}"] = names(f"p_{k}{NEXT[k]}")
        params[f"recompute_w_{k}{NEXT[k]}"] = names(f"recompute_w_{k}{NEXT[k]}")
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
        "base_not_null": capture.all_not_null("base", atom.columns),
    }


def build_plan(view: ResolvedView, name: str) -> sql.Composable:
    """The set-at-a-time build from the base tables: every relation loaded into its light part, then
    preprocessing (N = 2|D|+1, strict partition, views, count). ``--preprocess spark`` replaces it."""
    view = triangle_view(view)
    names = Names.of(name)
    loads = [_render("45_relation_build.sql", _load_params(names, view, atom)) for atom in view.query.atoms]
    return sql.SQL("\n").join([*loads, sql.SQL("SELECT {}();").format(names("restart"))])


def plan(view: ResolvedView, name: str, view_schema: str, params: dict[str, Any]) -> InstallPlan:
    """The state, the maintenance functions, the build from existing data, the triggers, the view.

    ``pgivm.command`` runs it in one transaction with the base tables locked against writes, so
    that no change slips between the set-at-a-time build and the triggers. A listing (the
    triangles, not their number) adds [L] Appendix E's views to the count's state.
    """
    view = triangle_view(view)
    names = Names.of(name)
    types = view.variable_types
    listing = bool(view.query.listing)
    view_params = _view_params(names, name, view.query.sql, listing)
    relation_params = {k: _relation_params(names, k, types, listing) for k in RELATIONS}
    state: list[sql.Composable] = [*pack_types_plan(view), _render("00_view_state.sql", view_params)]
    state.append(
        sql.SQL("INSERT INTO {} (epsilon, n, theta, db_size) VALUES ({}, 1, 1, 0); INSERT INTO {} (count) VALUES (0)").format(
            names("state"), sql.Literal(float(params["epsilon"])), names("result")
        )
    )
    state += [_render("10_relation_tables.sql", relation_params[k]) for k in RELATIONS]
    functions = [_render("20_relation_maintenance.sql", relation_params[k]) for k in RELATIONS]
    functions += [_render("25_relation_batch.sql", relation_params[k]) for k in RELATIONS]
    if listing:
        state.append(_render("02_listing_view_state.sql", {
            **view_params, **{f"type_{v}": sql.SQL(types[v]) for v in "abc"}}))  # type: ignore[arg-type]
        state += [_render("12_listing_tables.sql", relation_params[k]) for k in RELATIONS]
        functions += [_render("22_listing_maintenance.sql", relation_params[k]) for k in RELATIONS]
        functions.append(_render("32_listing_view.sql", view_params))
    functions.append(_render("30_view_maintenance.sql", view_params))
    functions += [_render("40_relation_clear.sql", relation_params[k]) for k in RELATIONS]
    functions += capture_functions_all(names, view, name, "IVMε", params["batch_threshold"])
    build = [build_plan(view, name), analyze_plan(names, state_tables(listing))]
    expose = (listing_expose_plan(names, view, name, view_schema) if listing
              else expose_plan(names, view.query, name, view_schema, "IVMε"))
    return InstallPlan.of(state=state, functions=functions, build=build,
                          capture=capture_triggers_all(view, name, capture_triggers), expose=expose)


def state_tables(listing: bool) -> list[str]:
    """The state's tables (statistics are taken of each after a build)."""
    tables = [f"{k}_{part}" for k in RELATIONS for part in ("heavy", "light", "degree")] + list(AUX_VIEW.values())
    if listing:
        tables += ["listing", *(f"{kind}_{k}{NEXT[k]}" for k in RELATIONS for kind in ("w", "p"))]
    return tables


def listing_expose_plan(names: Names, view: ResolvedView, name: str, view_schema: str) -> list[sql.Composable]:
    """The user's view of a listing: each triangle of ``rows`` as many times as its multiplicity, its
    columns named, typed and collated as the query's SELECT list; grouped by the three variables (GROUP BY,
    DISTINCT), each triangle once, its count(*) the multiplicity."""
    query = view.query

    def value(variable: str, alias: str, column: str) -> sql.Composable:
        """The variable's value in ``rows``; of a tuple (a composite), the field that holds the column."""
        atom = next(a for a in query.atoms if a.alias == alias)
        carrier = dict(zip(atom.variables, atom.columns))[variable]
        if not isinstance(carrier, Packed):
            return sql.SQL("t.{}").format(sql.Identifier(variable))
        return sql.SQL("(t.{}).{}").format(sql.Identifier(variable), sql.Identifier(f"f{carrier.columns.index(column) + 1}"))

    items = sql.SQL(", ").join(
        sql.SQL("t.mult::pg_catalog.int8 AS {}").format(sql.Identifier(shown)) if variable == MULTIPLICITY else
        sql.SQL("{}::{}{} AS {}").format(value(variable, alias, column), sql.SQL(view.column_types[(alias, column)]),  # type: ignore[arg-type]
                                          collate(view.collations.get((alias, column))), sql.Identifier(shown))
        for shown, variable, alias, column in query.listing)
    each = sql.SQL("") if query.grouped else sql.SQL(" CROSS JOIN LATERAL pg_catalog.generate_series(1, t.mult)")
    create = sql.SQL(
        "CREATE OR REPLACE VIEW {view} AS SELECT {items} FROM {rows} t{each}; "
        "COMMENT ON VIEW {view} IS {comment}").format(
        view=sql.Identifier(view_schema, name), items=items, rows=names("rows"), each=each,
        comment=sql.Literal(f"pgivm: maintained by IVMε (listing), state in schema {names.schema}. Definition: {query.sql}"))
    return [create, revoke_plan(names)]


def rebalance_plan(name: str, epsilon: float | None = None) -> sql.Composable:
    """A forced major rebalancing (after an optional change of ε), serialized with the writers."""
    names = Names.of(name)
    set_eps = sql.SQL(", epsilon = {}").format(sql.Literal(float(epsilon))) if epsilon is not None else sql.SQL("")
    return sql.SQL("UPDATE {state} SET updates_applied = updates_applied{set_eps}; SELECT {major}()").format(
        state=names("state"), set_eps=set_eps, major=names("major_rebalance")
    )


# --- another builder ---------------------------------------------------------------------------


class SparkBuild:
    """The build phase computed by Spark (``create --preprocess spark``): see pgivm.spark.preprocess."""

    def around(self, conn: psycopg.Connection) -> Any:
        from pgivm.spark import preprocess

        return preprocess.scratch_schemas(conn)

    def build(self, conn: psycopg.Connection, view: ResolvedView, name: str, params: dict[str, Any],
              context: Any) -> None:
        from pgivm.spark import preprocess

        from pgivm.systems.ivme import four_path, loomis_whitney, refined, three_path

        inexact = preprocess.inexact_type(view)
        if inexact is not None:
            raise PgivmError(f"--preprocess spark joins values of type {inexact} by their text, where equal values "
                             "may print differently (1.0 and 1.00)", "create this view with the default --preprocess postgres")
        if loomis_whitney.matches(view):
            from pgivm.spark import preprocess_loomis

            shaped = loomis_whitney.lw_view(view)
            preprocess_loomis.build_with_spark(conn, shaped, name, params["epsilon"], context)
            conn.execute(analyze_plan(Names.of(name), loomis_whitney.state_tables(shaped)))
            return
        # the variants keeping each relation as one table with flags: their own state, built by preprocess_flagged
        flagged = next((v for v in (four_path, three_path) if v.matches(view)), refined if refined.is_refined(params) else None)
        if flagged is not None:
            from pgivm.spark import preprocess_flagged

            preprocess_flagged.build_with_spark(conn, flagged.shaped(view), name, params["epsilon"], context, flagged)
            conn.execute(analyze_plan(Names.of(name), flagged.state_tables()))
            return
        view = triangle_view(view)
        preprocess.build_with_spark(conn, view, name, params["epsilon"], context)
        if view.query.listing:  # Spark computes the count's state; the listing's follows from it in SQL
            conn.execute(sql.SQL("SELECT {}()").format(Names.of(name)("recompute_listing")))
        conn.execute(analyze_plan(Names.of(name), state_tables(bool(view.query.listing))))
