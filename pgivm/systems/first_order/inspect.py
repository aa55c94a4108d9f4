"""Reading a first-order view back: ``status`` (base rows applied) and ``verify`` (the triangle
form's indexed relations and count against the base tables; a join-aggregate keeps only its
result, which verify compares with plain SQL)."""

from __future__ import annotations

import psycopg
from psycopg import sql

from pgivm.query.resolve import ResolvedView
from pgivm.systems.base import SystemStatus
from pgivm.systems.common import CheckFailure, Names, checks, is_triangle, read_state, run_checks, triangle_view
from pgivm.systems.first_order.plan import _relation_params


def status(conn: psycopg.Connection, name: str) -> SystemStatus:
    return SystemStatus({"updates_applied": read_state(conn, name)["updates_applied"]})


def verify(conn: psycopg.Connection, view: ResolvedView, name: str, strict: bool = False) -> list[CheckFailure]:
    view = triangle_view(view)
    names = Names.of(name)
    named = []
    for atom in view.query.atoms:
        for check, query in checks(__package__, "60_verify_relation.sql", _relation_params(names, view, atom)):
            named.append((f"{atom.relation.upper()}.{check}", query))
    named.append(("count_from_state", sql.SQL(
        "SELECT r.count, {f}() FROM {result} r WHERE r.count <> {f}()").format(
            f=names("count_from_state"), result=names("result"))))
    return run_checks(conn, named)


def verify_view(conn: psycopg.Connection, view: ResolvedView, name: str, strict: bool = False) -> list[CheckFailure]:
    # a conjunctive query keeps only its result, which verify compares with plain SQL, and the count
    # of writing statements under way (45_statements.sql), which every committed statement took
    # back: one left over would hold back the changes of every later statement
    if is_triangle(view):
        return verify(conn, view, name, strict)
    return run_checks(conn, [("no_statement_left_open", sql.SQL(
        "SELECT s.statements_open FROM (SELECT (pg_catalog.to_jsonb(t) ->> 'statements_open')::int AS statements_open "
        "FROM {} AS t) AS s WHERE s.statements_open <> 0").format(Names.of(name)("state")))])
