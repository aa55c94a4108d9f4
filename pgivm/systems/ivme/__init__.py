"""IVMε (Kara, Ngo, Nikolic, Olteanu, Zhang): triangle counts under updates in O(N^max(ε,1-ε)).

The system's options, the queries it accepts and the system value; ``plan.py`` turns a resolved
view into the SQL that installs it (templates in ``sql/``), ``inspect.py`` reads the state back for
``status`` and checks it for ``verify``. Nothing here executes SQL but the actions, which
``pgivm.command`` runs in its transaction.
"""

from __future__ import annotations

from typing import Any

import psycopg

from pgivm.capture import BATCH_THRESHOLD
from pgivm.errors import PgivmError
from pgivm.systems.base import Action, FunctionSystem, Option
from pgivm.systems.common import (capture_triggers, collation_reason, is_triangle_count, read_state,
                                  triangle_capture_atoms, triangle_or_listing_reason)
from pgivm.systems.ivme import four_path, loomis_whitney, refined, three_path
from pgivm.systems.ivme.inspect import explain_lines, shown_rows, status, verify
from pgivm.systems.ivme.plan import AUX_VIEW, NEXT, PREVIOUS, RELATIONS, SparkBuild, build_plan, plan, rebalance_plan

__all__ = ["AUX_VIEW", "BATCH", "EPSILON", "NAME", "NEXT", "PARTITIONS", "PREVIOUS", "RELATIONS", "SYSTEM", "build_plan",
           "plan", "rebalance_plan", "status", "verify"]

NAME = "ivme"
DEFAULT_EPSILON = 0.5


# --- the system --------------------------------------------------------------------------------


def _epsilon_in_range(value: float) -> str | None:
    return None if 0.0 <= value <= 1.0 else f"epsilon must be between 0 and 1, got {value}"


def _not_negative(value: int) -> str | None:
    return None if value >= 0 else f"must be 0 or more, got {value}"


EPSILON = Option("epsilon", float, DEFAULT_EPSILON, "IVMε trade-off in [0, 1]: space O(N^(1+min(ε,1-ε))), "
                 "update time O(N^max(ε,1-ε)); 0.5 is worst-case optimal", _epsilon_in_range, in_state=True)


def _partitions(value: str) -> str | None:
    return None if value in refined.PARTITIONS else f"choose {' or '.join(refined.PARTITIONS)}, got {value!r}"


PARTITIONS = Option("partitions", str, "single", "a triangle count's partitions: single (each relation on one variable, "
                    "the paper's main algorithm) or refined (on both, Appendix D: the same update time, linear "
                    "space at ε = ½)", _partitions)
BATCH = Option("batch_threshold", int, BATCH_THRESHOLD, "statements changing more rows than this are maintained "
               "set at a time (0: every statement)", _not_negative)


def _rebalance(conn: psycopg.Connection, name: str, options: dict[str, Any]) -> dict[str, Any]:
    conn.execute(rebalance_plan(name, options.get("epsilon")))
    return read_state(conn, name)


def _beyond_the_triangle(cq: Any) -> bool:
    """A Loomis-Whitney count of degree 4 to 26, the 4-path count or the 3-path count (3R²)."""
    return any(getattr(cq.analysis, shape) is not None for shape in ("loomis_whitney", "four_path", "three_path"))


def _accepts(cq: Any) -> str | None:
    """The triangle's count and listing, Loomis-Whitney counts of degree 4 to 26, the 4-path and
    3-path counts."""
    reason = triangle_or_listing_reason(cq)
    return None if reason is None or _beyond_the_triangle(cq) else reason


def _variant(view: Any) -> Any:
    """The module planning the view: Loomis-Whitney's, the 4-path's, the 3-path's, or None for the triangle's."""
    return next((module for module in (loomis_whitney, four_path, three_path) if module.matches(view)), None)


def _plan(view: Any, name: str, view_schema: str, params: dict[str, Any]) -> Any:
    variant = _variant(view)
    if refined.is_refined(params):
        if variant is not None or view.query.analysis.triangle is None or view.query.analysis.triangle.listing:
            raise PgivmError("--partitions refined applies to a triangle count only",
                             "create this view with the default --partitions single")
        return refined.plan(view, name, view_schema, params)
    return (variant.plan if variant else plan)(view, name, view_schema, params)


def _capture_triggers(view: Any, name: str, table: Any) -> Any:
    variant = _variant(view)
    return (variant.capture_triggers if variant else capture_triggers)(view, name, table)


def _deferred_atoms(view: Any, name: str, params: dict[str, Any]) -> Any:
    variant = _variant(view)
    return (variant.capture_atoms if variant else triangle_capture_atoms)(view, name, params)


def _one_value(cq: Any) -> bool:
    """A count's view shows one value: the triangle's, a Loomis-Whitney count's, a path's (not a listing)."""
    return is_triangle_count(cq) or _beyond_the_triangle(cq)


SYSTEM = FunctionSystem(
    name=NAME,
    summary="IVMε: triangle counts and listings, Loomis-Whitney, 4-path and 3-path counts, O(N^max(ε,1-ε)) amortized per "
            "single-row update (heavy/light partitions)",
    accepts=_accepts, plan=_plan, capture_triggers=_capture_triggers, accepts_types=collation_reason,
    status=status, verify=verify, explain=explain_lines,
    options=(EPSILON, PARTITIONS, BATCH),
    actions=(
        Action("rebalance", "force a major rebalancing: strict repartition at N^epsilon, auxiliary views rebuilt",
               (), _rebalance),
        Action("alter", "change epsilon; repartitions at once (a major rebalancing)",
               (Option("epsilon", float, None, "new epsilon in [0, 1]", _epsilon_in_range),), _rebalance),
    ),
    builders={"spark": SparkBuild()},
    deferred_atoms=_deferred_atoms,
    one_value=_one_value,
    shown_rows=shown_rows,
)
