"""Reading an F-IVM view back: ``status`` (statements applied, rows), ``explain`` (the variable
order and the view tree with each view's keys, ring entries and rows) and ``verify`` (every stored
view against its definition recomputed from the base tables)."""

from __future__ import annotations

import math
from typing import Any

import psycopg
from psycopg import sql

from pgivm.query.resolve import ResolvedView
from pgivm.systems.base import SystemStatus
from pgivm.systems.common import CheckFailure, read_state
from pgivm.systems.fivm import maintain, order, rings, tree
from pgivm.systems.fivm.plan import context


def _catalog_params(conn: psycopg.Connection, name: str) -> dict[str, Any]:
    from pgivm.catalog import views as catalog

    return dict(catalog.get(conn, name).params)


def status(conn: psycopg.Connection, name: str) -> SystemStatus:
    state = read_state(conn, name)
    return SystemStatus({"updates_applied": state["updates_applied"], "rows": state["count"]}, headline=("rows",))


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
    return [_computed_shown(ctx, line) for line in lines]


def _computed_shown(ctx: maintain.Context, line: str) -> str:
    """A line with each computed value's variable (``computed_<hash>``) shown as its expression."""
    for computed in order.computed_values(ctx.cq):
        line = line.replace(computed.variable, f"({computed.text})")
    return line


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
