"""Maintenance systems: one package each (its Python and, in ``sql/``, its SQL templates), all
fulfilling the contract in ``base.py``, listed once in ``registry.py``."""

from pgivm.systems.base import Action, InstallPlan, Option, System, SystemStatus
from pgivm.systems.registry import SYSTEMS, get

__all__ = ["SYSTEMS", "Action", "InstallPlan", "Option", "System", "SystemStatus", "get"]
