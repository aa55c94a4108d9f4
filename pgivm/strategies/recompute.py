"""Recompute: after each writing statement, the count is recomputed from scratch.

What PostgreSQL users have today with REFRESH MATERIALIZED VIEW, kept current by a
statement-level trigger: O(N^1.5) or worse per statement, nothing but the count stored.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from pgivm.query.resolve import ResolvedView
from pgivm.strategies.common import (
    CheckFailure,
    Names,
    basic_status,
    count_query,
    lock_tables_plan,
    render,
    revoke_plan,
    table_ident,
    user_view_plan,
)

NAME = "recompute"


def install_plan(
    view: ResolvedView, name: str, view_schema: str, epsilon: float | None = None, batch_threshold: int | None = None
) -> list[sql.Composable]:
    names = Names.of(name)
    plan: list[sql.Composable] = lock_tables_plan(view)
    plan.append(render("recompute/00_view.sql", {
        "schema": names.schema_id,
        "state": names("state"),
        "result": names("result"),
        "refresh": names("refresh"),
        "count_query": count_query(view),
        "schema_comment": sql.Literal(f"pgivm state of view {name} (strategy recompute): {view.query.sql}"),
        "result_comment": sql.Literal(f"pgivm: the result of view {name}, recomputed after every write"),
        "refresh_comment": sql.Literal(f"pgivm view {name}: recompute the count after a statement"),
    }))
    for table in view.query.tables:
        plan.append(render("recompute/10_table_triggers.sql", {
            "refresh_trigger": sql.Identifier(f"pgivm_{name}_refresh"),
            "table": table_ident(view.qualified(table)),
            "refresh": names("refresh"),
        }))
    plan.append(user_view_plan(names, view.query, name, view_schema, "recompute"))
    plan.append(revoke_plan(names))
    return plan


def status(conn: psycopg.Connection, name: str) -> dict[str, Any]:
    return basic_status(conn, name)


def verify_state(conn: psycopg.Connection, view: ResolvedView, name: str, strict: bool = False) -> list[CheckFailure]:
    return []  # the only state is the count, which verify compares with the recount
