"""Recompute's install SQL: a statement trigger per base table that recomputes the result after
every writing statement, for the triangle count (the count alone is stored) and for acyclic
join-aggregates (the result table emptied and refilled from the view's plain SQL)."""

from __future__ import annotations

from typing import Any

from psycopg import sql

from pgivm import capture
from pgivm.query.model import TableRef
from pgivm.query.resolve import ResolvedView
from pgivm.systems.base import InstallPlan
from pgivm.systems.common import Names, count_query, expose_plan, is_triangle, render, state_schema_for, triangle_view


def capture_triggers(view: ResolvedView, name: str, table: TableRef) -> list[capture.CaptureTrigger]:
    """The writers' locks, then one statement trigger per base table (and partition): any write
    refreshes the view. Named to fire after a derived table's triggers on the same table (AFTER
    triggers fire in name order, ``pgivm_NAME_zdN_...``): the refresh then reads the derived tables
    recounted, not as they were before the statement (a division by a count that was 0 failed)."""
    return [capture.lock_trigger(name),
            capture.CaptureTrigger(f"pgivm_{name}_zz_refresh", "AFTER", ("INSERT", "UPDATE", "DELETE", "TRUNCATE"),
                                   (state_schema_for(name), "refresh"))]


def plan(view: ResolvedView, name: str, view_schema: str, params: dict[str, Any]) -> InstallPlan:
    view = triangle_view(view)
    names = Names.of(name)
    tables = view.query.tables
    holes = capture.FormatHoles(len(tables))
    values: dict[str, sql.Composable] = {
        "schema": names.schema_id,
        "state": names("state"),
        "result": names("result"),
        "refresh": names("refresh"),
        "view_literal": sql.Literal(name),
        "count_query": count_query(view),
        "count_format": holes.literal(count_query(view, {table: holes[i] for i, table in enumerate(tables)})),
        "table_oids": sql.SQL(", ").join(
            sql.SQL("{}::pg_catalog.regclass").format(sql.Literal(view.base_of(t).oid)) for t in tables),
        "schema_comment": sql.Literal(f"pgivm state of view {name} (strategy recompute): {view.query.sql}"),
        "result_comment": sql.Literal(f"pgivm: the result of view {name}, recomputed after every write"),
        "refresh_comment": sql.Literal(f"pgivm view {name}: recompute the count after a statement"),
    }
    return InstallPlan.of(
        state=[render(__package__, "00_view_state.sql", values)],
        functions=[render(__package__, "10_refresh.sql", values)],
        build=[render(__package__, "20_build.sql", values)],
        capture=[statement for table in tables
                 for statement in capture.triggers_on(view.base_of(table), capture_triggers(view, name, table))],
        expose=expose_plan(names, view.query, name, view_schema, "recompute"))


# --- join-aggregates: the whole result recomputed after every writing statement --------------------


def _plan_cq(view: ResolvedView, name: str, view_schema: str, params: dict[str, Any]) -> InstallPlan:
    """The result table is the view's plain SQL (``pgivm.query.plain``) over the base tables, named
    from their oids when the refresh runs (tableoid in every read), emptied and refilled."""
    from pgivm.query.plain import plain_query

    names = Names.of(name)
    query = view.query
    tables = query.tables
    holes = capture.FormatHoles(len(tables))
    hole_of = {t: holes[i] for i, t in enumerate(tables)}
    sources: dict[str, sql.Composable] = {
        a.alias: sql.SQL("(SELECT * FROM {} AS b WHERE b.tableoid IS NOT NULL)").format(hole_of[a.table]) for a in query.atoms}
    values: dict[str, sql.Composable] = {
        "schema": names.schema_id, "state": names("state"), "maintained": names("maintained"),
        "refresh": names("refresh"), "view_literal": sql.Literal(name),
        "query": plain_query(view),
        "insert_format": holes.literal(sql.SQL("INSERT INTO {} {}").format(names("maintained"), plain_query(view, sources))),
        "table_oids": sql.SQL(", ").join(
            sql.SQL("{}::pg_catalog.regclass").format(sql.Literal(view.base_of(t).oid)) for t in tables),
        "schema_comment": sql.Literal(f"pgivm state of view {name} (strategy recompute): {query.sql}"),
        "refresh_comment": sql.Literal(f"pgivm view {name}: recompute the result after a statement"),
    }
    expose = [
        sql.SQL("CREATE OR REPLACE VIEW {} AS SELECT (SELECT count(*) FROM {}) AS count").format(names("result"), names("maintained")),
        sql.SQL("CREATE OR REPLACE VIEW {v} AS SELECT * FROM {m}; COMMENT ON VIEW {v} IS {c}").format(
            v=sql.Identifier(view_schema, name), m=names("maintained"),
            c=sql.Literal(f"pgivm: maintained by recompute, state in schema {names.schema}. Definition: {query.sql}")),
        sql.SQL("REVOKE ALL ON ALL TABLES IN SCHEMA {s} FROM PUBLIC; REVOKE ALL ON ALL FUNCTIONS IN SCHEMA {s} FROM PUBLIC"
                ).format(s=names.schema_id)]
    return InstallPlan.of(
        state=[render(__package__, "30_cq_state.sql", values)],
        functions=[render(__package__, "40_cq_refresh.sql", values)],
        build=[sql.SQL("INSERT INTO {} {}").format(names("maintained"), plain_query(view))],
        capture=[statement for table in tables
                 for statement in capture.triggers_on(view.base_of(table), capture_triggers(view, name, table))],
        expose=expose)


def plan_view(view: ResolvedView, name: str, view_schema: str, params: dict[str, Any]) -> InstallPlan:
    """The triangle's plan or the join-aggregate's, by the query's shape."""
    return plan(view, name, view_schema, params) if is_triangle(view) else _plan_cq(view, name, view_schema, params)
