"""Recompute: after each writing statement, the count is recomputed from scratch.

What PostgreSQL users have today with REFRESH MATERIALIZED VIEW, kept current by a
statement-level trigger: O(N^1.5) or worse per statement, nothing but the count stored.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from pgivm import capture
from pgivm.query.model import TableRef
from pgivm.query.resolve import ResolvedView
from pgivm.systems.common import (
    CheckFailure,
    Names,
    basic_status,
    count_query,
    render,
    revoke_plan,
    state_schema_for,
    user_view_plan,
)

NAME = "recompute"


def capture_triggers(view: ResolvedView, name: str, table: TableRef) -> list[capture.CaptureTrigger]:
    """One statement trigger per base table (and partition): any write refreshes the count."""
    return [capture.CaptureTrigger(f"pgivm_{name}_refresh", "AFTER", ("INSERT", "UPDATE", "DELETE", "TRUNCATE"),
                                   (state_schema_for(name), "refresh"))]


def install_plan(
    view: ResolvedView, name: str, view_schema: str, epsilon: float | None = None, batch_threshold: int | None = None
) -> list[sql.Composable]:
    names = Names.of(name)
    tables = view.query.tables
    holes = capture.FormatHoles(len(tables))
    plan: list[sql.Composable] = [render(__name__, "00_view.sql", {
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
    })]
    for table in tables:
        plan += capture.triggers_on(view.base_of(table), capture_triggers(view, name, table))
    plan.append(user_view_plan(names, view.query, name, view_schema, "recompute"))
    plan.append(revoke_plan(names))
    return plan


def status(conn: psycopg.Connection, name: str) -> dict[str, Any]:
    return basic_status(conn, name)


def verify_state(conn: psycopg.Connection, view: ResolvedView, name: str, strict: bool = False) -> list[CheckFailure]:
    return []  # the only state is the count, which verify compares with the recount
