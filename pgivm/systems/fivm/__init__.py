"""F-IVM: factorized IVM of acyclic join-aggregates over a view tree with ring payloads.

Nikolic & Olteanu, "Incremental View Maintenance with Triple Lock Factorization Benefits"
(SIGMOD 2018; seed 002, notes ../shared/notes/f-ivm.md). One view per variable of a variable
order (``order.py``), the views an updatable atom needs materialized (``tree.py``, Figure 5),
payloads in a ring (``rings.py``: counts and sums, or the degree-m matrix ring for regression;
a listing keeps factorized relations), and per atom a delta tree that touches one leaf-to-root
path per statement (``maintain.py``).
"""

from __future__ import annotations

import math
from typing import Any

import psycopg
from psycopg import sql

from pgivm import capture
from pgivm.errors import UnsupportedQuery
from pgivm.query.analysis import join_tree
from pgivm.query.cq import ConjunctiveQuery
from pgivm.query.model import TableRef
from pgivm.query.resolve import ResolvedView
from pgivm.systems.base import FunctionSystem, InstallPlan, Option, Section, SystemStatus
from pgivm.systems.common import (
    CheckFailure,
    Names,
    capture_functions_plan,
    read_state,
    render,
    revoke_plan,
    shape_of,
    state_schema_for,
)
from pgivm.systems.fivm import maintain, order, rings, tree

NAME = "fivm"
# A statement changing more rows of an atom than this is planned afresh, hash joins allowed
# (see sql/10_apply_batch.sql).
BULK_ROWS = 64

ORDER = Option("order", str, None, "variable order priority: join or GROUP BY columns, e.g. 'h.postcode,w.locn' "
               "(default: free variables on top, then the variable most atoms share)")
STATIC = Option("static", str, None, "tables that never change, comma-separated (the paper's ONE workload): "
                "views only their changes would need are not stored, and writes to them are refused")


def accepts(cq: ConjunctiveQuery) -> str | None:
    if cq.predicates:
        return (f"condition {cq.predicates[0].sql} compares columns of two tables: only the sample system "
                "evaluates such conditions on the join result")
    tree_ = join_tree(cq)
    if tree_ is None:
        return (f"{shape_of(cq)}: F-IVM maintains acyclic joins (for a triangle count use ivme, first-order "
                "or recompute)")
    if not tree_.is_connected:
        return "the tables do not all join: a cross product is not maintained"
    return None


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


def _catalog_params(conn: psycopg.Connection, name: str) -> dict[str, Any]:
    from pgivm.catalog import views as catalog

    return dict(catalog.get(conn, name).params)


def plan(view: ResolvedView, name: str, view_schema: str, params: dict[str, Any]) -> InstallPlan:
    ctx = context(view, name, params)
    names = ctx.names
    values = {"schema": names.schema_id, "state": names("state"),
              "schema_comment": sql.Literal(f"pgivm state of view {name} (system fivm): {view.query.sql}")}
    functions: list[sql.Composable] = [*maintain.delta_layouts(ctx),
                                       render(__name__, "40_restart.sql", {"restart": names("restart")})]
    for atom in ctx.cq.atoms:
        if atom.alias not in ctx.tree.updatable:  # static: its table refuses writes, no delta tree
            continue
        k = ctx.atom_name(atom.alias)
        functions.append(render(__name__, "10_apply_batch.sql", {
            "apply_batch": names(f"apply_batch_{k}"), "apply_bulk": names(f"apply_bulk_{k}"),
            "delta": names(f"{k}_delta"), "bulk_rows": sql.Literal(BULK_ROWS), "settings": maintain.function_settings(ctx),
            "statements": sql.SQL("\n").join(sql.SQL("    {};").format(s) for s in maintain.apply_batch(ctx, atom.alias)),
            "comment": sql.Literal(f"F-IVM view {name}: the delta tree of atom {atom.alias} ({atom.table})")}))
        cleared = maintain.clear(ctx, atom.alias) or [sql.SQL("NULL")]
        functions.append(render(__name__, "20_clear.sql", {
            "clear": names(f"clear_{k}"),
            "statements": sql.SQL("\n").join(sql.SQL("    {};").format(s) for s in cleared),
            "comment": sql.Literal(f"F-IVM view {name}: TRUNCATE of atom {atom.alias}")}))
    static = _static_tables(ctx)
    for table in ctx.cq.tables:
        letters = _letters(ctx, table)
        if table in static:
            for kind in ("on_change", "on_truncate", "on_truncate_rows"):
                functions.append(render(__name__, "30_static.sql", {
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
            view=sql.Identifier(view_schema, name), query=maintain.result_query(ctx, view.output_types),
            comment=sql.Literal(f"pgivm: maintained by F-IVM, state in schema {names.schema}. "
                                f"Definition: {view.query.sql}")),
        revoke_plan(names),
    ]
    capture_plan: list[sql.Composable] = []
    for table in ctx.cq.tables:
        capture_plan += capture.triggers_on(view.base_of(table), capture_triggers(view, name, table))
    return InstallPlan.of(
        state=[render(__name__, "00_view_state.sql", values), *maintain.state_tables(ctx)],
        functions=functions, build=maintain.build_plan(ctx), capture=capture_plan, expose=expose)


def _count_expression(ctx: maintain.Context, output_types: dict[str, str]) -> sql.Composable:
    """The view's number of rows: for a listing the root's count (O(1)), else its rows counted."""
    root = ctx.tree.root
    if ctx.tree.listing:
        return sql.SQL("(SELECT coalesce(sum(count), 0)::bigint FROM {})").format(ctx.table(root))
    return sql.SQL("(SELECT count(*) FROM ({}) AS rows)").format(maintain.result_query(ctx, output_types))


def deferred_atoms(view: ResolvedView, name: str, params: dict[str, Any]) -> dict[TableRef, list[capture.CaptureAtom]]:
    """The atoms of every table that is not static, as the capture functions hand them over."""
    ctx = context(view, name, params)
    static = _static_tables(ctx)
    return {table: [ctx.capture_atom(a.alias) for a in ctx.cq.atoms_of(table)] for table in ctx.cq.tables
            if table not in static}


def status(conn: psycopg.Connection, name: str) -> SystemStatus:
    state = read_state(conn, name)
    return SystemStatus({"updates_applied": state["updates_applied"], "rows": state["count"]},
                        labels={"updates_applied": "updates"}, headline=("rows",))


def explain_lines(conn: psycopg.Connection, view: ResolvedView, name: str, params: dict[str, Any]) -> list[str]:
    """The variable order and the view tree, each view with its keys, ring entries and rows."""
    ctx = context(view, name, params)
    lines = ["variable order (free variables on top; [atom] hangs under its lowest variable):"]
    lines += ["  " + line for line in ctx.tree.order.lines()]
    ring = ctx.ring.name if not ctx.tree.listing else "relational (factorized listing: counts, W@X and lists)"
    lines.append(f"view tree (ring: {ring}; updatable atoms: {', '.join(sorted(ctx.tree.updatable)) or 'none'}):")

    def walk(v: tree.View, depth: int) -> None:
        entries = ", ".join(e.name for e in ctx.entries(v))
        if v.materialized:
            rows = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(ctx.table(v))).fetchone()[0]  # type: ignore[index]
            stored = f"stored, {rows} rows"
            if ctx.tree.listing:
                extra = ctx.list_table(v) if v.is_leaf else ctx.w_table(v)
                more = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(extra)).fetchone()[0]  # type: ignore[index]
                stored += f"; {'list' if v.is_leaf else 'W'} {more} rows"
        else:
            stored = "not stored (no sibling is updatable)"
        lifted = f" sums {', '.join(v.lifted)}" if v.lifted else ""
        lines.append(f"{'  ' * (depth + 1)}{v.name} {v.describe()} keys [{', '.join(v.keys)}]{lifted} "
                     f"payload ({entries}): {stored}")
        for child in v.children:
            walk(child, depth + 1)

    walk(ctx.tree.root, 0)
    if isinstance(ctx.ring, rings.SumRing):
        for entry in ctx.ring.entries:
            lines.append(f"  entry {entry.name} ({entry.type}): {entry.describe}")
    elif isinstance(ctx.ring, rings.CofactorRing):
        lines.append(f"  degree-{len(ctx.ring.features)} matrix ring over {', '.join(ctx.ring.features)}: "
                     f"{len(ctx.ring.entries)} entries (c, s, upper triangle of Q)")
    return lines


def verify(conn: psycopg.Connection, view: ResolvedView, name: str, strict: bool = False) -> list[CheckFailure]:
    """Every stored view of the tree equals its definition recomputed from the base tables."""
    ctx = context(view, name, _catalog_params(conn, name))
    for statement in maintain.pinned_settings(ctx):  # the stored views' floats were read so
        conn.execute(statement)
    sources = maintain.base_sources(ctx)
    failures = []
    for v in ctx.tree.stored():
        checks = [(ctx.table(v), sources[v], v.keys, ctx.entries(v))]
        if ctx.tree.listing:
            if v.is_leaf:
                checks.append((ctx.list_table(v), sql.SQL("({})").format(maintain.leaf_query(
                    ctx, v, maintain._base(ctx, v), from_base=True, list_form=True)), ctx.list_variables(v),
                    [ctx.ring.count]))
            else:
                checks.append((ctx.w_table(v), sql.SQL("({})").format(maintain._product_query(ctx, v, sources, True)),
                               v.w_keys, [ctx.ring.count]))
        for table, source, keys, entries in checks:
            rows = _differences(conn, table, source, keys, entries)
            if rows:
                failures.append(CheckFailure(f"{table.as_string(conn)} equals its definition", rows))
    return failures


def _differences(conn: psycopg.Connection, table: sql.Identifier, source: sql.Composable, keys: tuple[str, ...],
                 entries: list[rings.Entry]) -> list[tuple[Any, ...]]:
    columns = sql.SQL(", ").join(sql.Identifier(n) for n in [*keys, *(e.name for e in entries)])
    if all(e.type != "double precision" for e in entries):
        query = sql.SQL("(SELECT 'stored' AS side, {c} FROM {t} EXCEPT ALL SELECT 'stored', {c} FROM {s} AS x) "
                        "UNION ALL (SELECT 'recomputed', {c} FROM {s} AS x EXCEPT ALL SELECT 'recomputed', {c} FROM {t})"
                        ).format(c=columns, t=table, s=source)
        return [tuple(r) for r in conn.execute(query).fetchall()]
    stored = {tuple(r[:len(keys)]): r[len(keys):] for r in conn.execute(sql.SQL("SELECT {} FROM {}").format(columns, table))}
    fresh = {tuple(r[:len(keys)]): r[len(keys):] for r in conn.execute(sql.SQL("SELECT {} FROM {} AS x").format(columns, source))}
    out = []
    for key in stored.keys() | fresh.keys():
        a, b = stored.get(key), fresh.get(key)
        if a is None or b is None or not all(_close(x, y) for x, y in zip(a, b)):
            out.append((key, a, b))
    return out


def _close(x: Any, y: Any) -> bool:
    if isinstance(x, float) or isinstance(y, float):
        return math.isclose(float(x), float(y), rel_tol=1e-9, abs_tol=1e-9)
    return bool(x == y)


SYSTEM = FunctionSystem(
    name=NAME,
    summary="F-IVM: factorized IVM of acyclic join-aggregates (count, sum, avg, cofactor, listing) over a view tree",
    accepts=accepts, model=lambda cq: cq, plan=plan, capture_triggers=capture_triggers,
    status=status, verify=verify, options=(ORDER, STATIC), explain=explain_lines,
    deferred_atoms=deferred_atoms,
)
