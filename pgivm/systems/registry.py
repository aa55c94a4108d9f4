"""The one list of maintenance systems. ``pgivm.command`` and the CLI find every system here."""

from __future__ import annotations

from typing import Any

from pgivm.errors import PgivmError
from pgivm.systems import first_order, fivm, ivme, recompute, sample
from pgivm.systems.base import System

SYSTEMS: dict[str, System] = {s.name: s for s in (ivme.SYSTEM, fivm.SYSTEM, first_order.SYSTEM, recompute.SYSTEM, sample.SYSTEM)}
DEFAULT = ivme.NAME


def tried(query: Any) -> list[System]:
    """The systems in the order a query's default is chosen, the first that accepts it: the
    registry's, the expected speed, but for a DISTINCT of rows (no aggregate), where first-order
    comes before fivm. Measured (`pgivm bench coverage`, docs/benchmarks.md): a single-row write
    under ``SELECT DISTINCT r.a % 100, s.c FROM r JOIN s ...`` cost F-IVM 1.45 ms and 341 rows read,
    first-order 0.95 ms and 220: F-IVM keeps the join's intermediate views per key, first-order the
    result alone, and a DISTINCT's result is one row per key with its count either way."""
    order = list(SYSTEMS.values())
    if getattr(query, "distinct", False) and not getattr(query, "aggregates", ()):
        order.remove(first_order.SYSTEM)
        order.insert(order.index(fivm.SYSTEM), first_order.SYSTEM)
    return order


def get(name: str) -> System:
    try:
        return SYSTEMS[name]
    except KeyError:
        raise PgivmError(f"unknown system {name!r}", f"choose one of: {', '.join(SYSTEMS)}") from None
