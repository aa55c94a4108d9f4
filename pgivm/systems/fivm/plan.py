"""F-IVM's install SQL: the view tree's stored views and their payload columns, per updatable atom
its delta tree (``apply_batch_K``, ``sql/fivm/10_apply_batch.sql``) and TRUNCATE path, refusals on
static tables, the capture functions, and the user view over the root."""

from __future__ import annotations

from typing import Any

from psycopg import sql

from pgivm import capture
from pgivm.errors import UnsupportedQuery
from pgivm.query.cq import ConjunctiveQuery
from pgivm.query.model import TableRef
from pgivm.query.plain import collated, shape_rows
from pgivm.query.resolve import ResolvedView
from pgivm.systems.base import InstallPlan
from pgivm.systems.common import Names, capture_functions_plan, render, revoke_plan, state_schema_for
from pgivm.systems.fivm import maintain, order, rings, tree

# A statement changing more rows of an atom than this is planned afresh, hash joins allowed
# (see sql/fivm/10_apply_batch.sql).
BULK_ROWS = 64


def _static_aliases(cq: ConjunctiveQuery, view: ResolvedView | None, text: str | None) -> frozenset[str]:
    if not text:
        return frozenset()
    out: set[str] = set()
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        matched = [a.alias for a in cq.atoms
                   if item in (str(a.table), a.table.name, str(view.qualified(a.table)) if view else "")]
        if not matched:
            raise UnsupportedQuery(f"--static names {item}, which is not a table of the query")
        out |= set(matched)
    return frozenset(out)


def view_tree(cq: ConjunctiveQuery, params: dict[str, Any], view: ResolvedView | None = None) -> tree.ViewTree:
    variable_order = order.choose(cq, order.priority_from_option(cq, params.get("order")))
    return tree.build(cq, variable_order, _static_aliases(cq, view, params.get("static")))


def context(view: ResolvedView, name: str, params: dict[str, Any]) -> maintain.Context:
    cq: ConjunctiveQuery = view.query
    ring = rings.ring_for(cq, lambda v: view.variable_types[v])
    return maintain.Context(cq, view_tree(cq, params, view), ring, view, Names.of(name))


def _letters(ctx: maintain.Context, table: TableRef) -> str:
    return _letters_of(ctx.view, table)


def _static_tables(ctx: maintain.Context) -> list[TableRef]:
    return [t for t in ctx.cq.tables if all(a.alias not in ctx.tree.updatable for a in ctx.cq.atoms_of(t))]


def _letters_of(view: ResolvedView, table: TableRef) -> str:
    aliases = [a.alias for a in view.query.atoms]
    return "".join(f"a{aliases.index(a.alias) + 1}" for a in view.query.atoms_of(table))


def capture_triggers(view: ResolvedView, name: str, table: TableRef) -> list[capture.CaptureTrigger]:
    """The capture layer's triggers on every base table; on a static table their functions refuse."""
    return capture.view_triggers(name, state_schema_for(name), _letters_of(view, table))


def plan(view: ResolvedView, name: str, view_schema: str, params: dict[str, Any]) -> InstallPlan:
    ctx = context(view, name, params)
    names = ctx.names
    values = {"schema": names.schema_id, "state": names("state"),
              "schema_comment": sql.Literal(f"pgivm state of view {name} (system fivm): {view.query.sql}")}
    functions: list[sql.Composable] = [*maintain.delta_layouts(ctx),
                                       render(__package__, "40_restart.sql", {"restart": names("restart")})]
    for atom in ctx.cq.atoms:
        if atom.alias not in ctx.tree.updatable:  # static: its table refuses writes, no delta tree
            continue
        k = ctx.atom_name(atom.alias)
        functions.append(render(__package__, "10_apply_batch.sql", {
            "apply_batch": names(f"apply_batch_{k}"), "apply_bulk": names(f"apply_bulk_{k}"),
            "delta": names(f"{k}_delta"), "bulk_rows": sql.Literal(BULK_ROWS), "settings": maintain.function_settings(ctx),
            "statements": sql.SQL("\n").join(sql.SQL("    {};").format(s) for s in maintain.apply_batch(ctx, atom.alias)),
            "comment": sql.Literal(f"F-IVM view {name}: the delta tree of atom {atom.alias} ({atom.table})")}))
        cleared = maintain.clear(ctx, atom.alias) or [sql.SQL("NULL")]
        functions.append(render(__package__, "20_clear.sql", {
            "clear": names(f"clear_{k}"),
            "statements": sql.SQL("\n").join(sql.SQL("    {};").format(s) for s in cleared),
            "comment": sql.Literal(f"F-IVM view {name}: TRUNCATE of atom {atom.alias}")}))
    static = _static_tables(ctx)
    for table in ctx.cq.tables:
        letters = _letters(ctx, table)
        if table in static:
            for kind in ("on_change", "on_truncate", "on_truncate_rows"):
                functions.append(render(__package__, "30_static.sql", {
                    "refuse": names(f"{kind}_{letters}"), "view_literal": sql.Literal(name),
                    "comment": sql.Literal(f"pgivm view {name}: {view.qualified(table)} is static")}))
            continue
        functions.append(capture_functions_plan(
            names, view, name, table, "F-IVM", atoms=[ctx.capture_atom(a.alias) for a in ctx.cq.atoms_of(table)],
            letters=letters, always_batch=True))
    assert view.output_types is not None
    expose = [
        sql.SQL("CREATE OR REPLACE VIEW {result} AS SELECT {count} AS count; COMMENT ON VIEW {result} IS {comment}").format(
            result=names("result"), count=_count_expression(ctx, view.output_types),
            comment=sql.Literal("pgivm: the number of rows of the view (O(1) for a listing: the root's count)")),
        sql.SQL("CREATE OR REPLACE VIEW {view} AS {query}; COMMENT ON VIEW {view} IS {comment}").format(
            view=sql.Identifier(view_schema, name), query=_shown(ctx, view.output_types),
            comment=sql.Literal(f"pgivm: maintained by F-IVM, state in schema {names.schema}. "
                                f"Definition: {view.query.sql}")),
        revoke_plan(names),
    ]
    capture_plan: list[sql.Composable] = []
    for table in ctx.cq.tables:
        capture_plan += capture.triggers_on(view.base_of(table), capture_triggers(view, name, table))
    return InstallPlan.of(
        state=[render(__package__, "00_view_state.sql", values), *maintain.state_tables(ctx)],
        functions=functions, build=maintain.build_plan(ctx), capture=capture_plan, expose=expose)


def _shown(ctx: maintain.Context, output_types: dict[str, str]) -> sql.Composable:
    """What the view shows: the result read out of the tree, where HAVING holds, the SELECT list's
    expressions computed, each row once for SELECT DISTINCT (the tree keeps every group and every
    row's multiplicity; HAVING, expressions and DISTINCT are a matter of reading them)."""
    return collated(ctx.view, shape_rows(ctx.cq, maintain.result_query(ctx, output_types)))


def _count_expression(ctx: maintain.Context, output_types: dict[str, str]) -> sql.Composable:
    """The view's number of rows: for a listing the root's count (O(1)), else its rows counted."""
    root = ctx.tree.root
    if ctx.tree.listing and not ctx.cq.distinct:
        return sql.SQL("(SELECT coalesce(sum(count), 0)::bigint FROM {})").format(ctx.table(root))
    return sql.SQL("(SELECT count(*) FROM ({}) AS rows)").format(_shown(ctx, output_types))


def deferred_atoms(view: ResolvedView, name: str, params: dict[str, Any]) -> dict[TableRef, list[capture.CaptureAtom]]:
    """The atoms of every table that is not static, as the capture functions hand them over."""
    ctx = context(view, name, params)
    static = _static_tables(ctx)
    return {table: [ctx.capture_atom(a.alias) for a in ctx.cq.atoms_of(table)] for table in ctx.cq.tables
            if table not in static}
