"""Maintenance systems: one package each, all fulfilling the contract in ``base.py``, listed once
in ``registry.py``.

Every package has the same files:

- ``__init__.py``: the system's options, which queries it accepts, its actions and the system
  value (``SYSTEM``, a ``FunctionSystem``); nothing that runs SQL but the actions.
- ``plan.py``: the install plan, the SQL that puts a view into the database, phase by phase
  (``base.PHASES``), rendered from the templates in the package's ``sql/``.
- ``inspect.py``: reading a view's state back: ``status`` and ``verify`` (and ``explain``, and how
  verify compares the rows shown where they are not the whole result).
- Modules of the system's own model where it has one (F-IVM: ``order.py``, ``tree.py``,
  ``rings.py``, ``maintain.py``, ``floats.py``; sample: ``layout.py``; first-order: ``cq.py``).

Every system receives the query as a ``ConjunctiveQuery`` (with its ``analysis``) and makes the
shape it plans from it (the triangle systems: ``common.triangle_view``).

Every system in the registry follows it; a plan's SQL is pinned by ``tests/golden/``.
"""

from pgivm.systems.base import Action, InstallPlan, Option, System, SystemStatus
from pgivm.systems.registry import SYSTEMS, get

__all__ = ["SYSTEMS", "Action", "InstallPlan", "Option", "System", "SystemStatus", "get"]
