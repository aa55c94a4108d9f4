"""Maintenance strategies: one module each, turning a resolved view into SQL that keeps it current.

Every strategy module provides ``NAME``, ``install_plan(view, name, view_schema, epsilon)``,
``status(conn, name)`` and ``verify_state(conn, view, name, strict)``.
"""

from types import ModuleType

from pgivm.systems import first_order, ivme, recompute

STRATEGIES: dict[str, ModuleType] = {module.NAME: module for module in (ivme, first_order, recompute)}

__all__ = ["STRATEGIES", "first_order", "ivme", "recompute"]
