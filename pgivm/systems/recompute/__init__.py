"""Recompute: after each writing statement, the count is recomputed from scratch.

What PostgreSQL users have today with REFRESH MATERIALIZED VIEW, kept current by a
statement-level trigger: O(N^1.5) or worse per statement, nothing but the count stored.
``plan.py`` holds the install SQL, ``inspect.py`` status and verify.
"""

from __future__ import annotations

from typing import Any

from pgivm.systems.base import FunctionSystem
from pgivm.systems.common import is_triangle_count
from pgivm.systems.recompute.inspect import status, verify
from pgivm.systems.recompute.plan import capture_triggers, plan, plan_view

__all__ = ["NAME", "SYSTEM", "capture_triggers", "plan", "status", "verify"]

NAME = "recompute"


def _accepts(query: Any) -> str | None:
    """Every query the model holds: the plain SQL of its model is recomputed (the triangle count
    by its own plan, which stores the count alone)."""
    return None


SYSTEM = FunctionSystem(
    name=NAME,
    summary="recompute: the whole join after every writing statement (what REFRESH MATERIALIZED VIEW gives)",
    accepts=_accepts, plan=plan_view, capture_triggers=capture_triggers,
    status=status, verify=verify,
    one_value=is_triangle_count,
)
