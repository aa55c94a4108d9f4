"""Maintenance systems: one package each, all fulfilling the contract in ``base.py``, listed once
in ``registry.py``.

Every package has the same files:

- ``__init__.py``: the system's options, which queries it accepts, its actions and the system
  value (``SYSTEM``, a ``FunctionSystem``); nothing that runs SQL but the actions.
- ``plan.py``: the install plan, the SQL that puts a view into the database, phase by phase
  (``base.PHASES``), rendered from the templates in the package's ``sql/``.
- ``inspect.py``: reading a view's state back: ``status`` and ``verify`` (and ``explain``).
- Modules of the system's own model where it has one (F-IVM: ``order.py``, ``tree.py``,
  ``rings.py``, ``maintain.py``; sample: ``layout.py``; first-order: ``cq.py``).

ivme, recompute and first-order follow it; fivm and sample are being brought to it (issue 26).
"""

from pgivm.systems.base import Action, InstallPlan, Option, System, SystemStatus
from pgivm.systems.registry import SYSTEMS, get

__all__ = ["SYSTEMS", "Action", "InstallPlan", "Option", "System", "SystemStatus", "get"]
