"""First-order (classical) IVM: per update, the delta query δK ⋈ L ⋈ M over indexed copies.

The baseline IVMε improves on: O(N) per single-tuple update (a loop over the changed tuple's
partners in the next relation), linear space, no partitions. Same triggers, same user view.
``plan.py`` holds the triangle's install SQL, ``cq.py`` the join-aggregates', ``inspect.py``
status and verify.
"""

from __future__ import annotations

from pgivm.query.cq import ConjunctiveQuery
from pgivm.query.resolve import ResolvedView
from pgivm.systems import ivme
from pgivm.systems.base import FunctionSystem
from pgivm.systems.common import collation_reason, is_triangle_count, triangle_reason
from pgivm.systems.first_order import cq
from pgivm.systems.first_order.inspect import status, verify, verify_view
from pgivm.systems.first_order.plan import capture_triggers_of, deferred_atoms, plan, plan_view

__all__ = ["NAME", "SYSTEM", "plan", "status", "verify"]

NAME = "first-order"


def _accepts(query: ConjunctiveQuery) -> str | None:
    """Triangle counts (its tuple-at-a-time plan), and every other join-aggregate (``cq.py``)."""
    if query.has_outer_join:  # never a triangle: the join-aggregates' plan alone
        return cq.accepts(query)
    reason = triangle_reason(query)
    if reason is None:
        return None
    general = cq.accepts(query)
    return None if general is None else f"{reason}; and {general}"


def _accepts_types(view: ResolvedView) -> str | None:
    """The join-aggregates' ring, given the columns' types (``cq.ring_problem``)."""
    if is_triangle_count(view.query):
        return collation_reason(view)
    return collation_reason(view) or cq.ring_problem(view)


SYSTEM = FunctionSystem(
    name=NAME,
    summary="first-order IVM: the classical delta query per update over the base tables (every join the model "
            "holds: cyclic, outer, semi- and anti-joins); the yardstick IVMε and F-IVM improve on",
    accepts=_accepts, plan=plan_view, capture_triggers=capture_triggers_of,
    status=status, verify=verify_view,
    options=(ivme.BATCH,),
    deferred_atoms=deferred_atoms,
    one_value=is_triangle_count, accepts_types=_accepts_types,
)
