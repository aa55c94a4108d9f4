"""Reading a recompute view back: ``status`` (statements applied) and ``verify`` (nothing beyond
the recount: the only state is the result)."""

from __future__ import annotations

import psycopg

from pgivm.query.resolve import ResolvedView
from pgivm.systems.base import SystemStatus
from pgivm.systems.common import CheckFailure, read_state


def status(conn: psycopg.Connection, name: str) -> SystemStatus:
    return SystemStatus({"updates_applied": read_state(conn, name)["updates_applied"]}, labels={"updates_applied": "statements applied"})


def verify(conn: psycopg.Connection, view: ResolvedView, name: str, strict: bool = False) -> list[CheckFailure]:
    return []  # the only state is the count, which verify compares with the recount
