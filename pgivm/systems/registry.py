"""The one list of maintenance systems. ``pgivm.command`` and the CLI find every system here."""

from __future__ import annotations

from pgivm.errors import PgivmError
from pgivm.systems import first_order, fivm, ivme, recompute, sample
from pgivm.systems.base import System

SYSTEMS: dict[str, System] = {s.name: s for s in (ivme.SYSTEM, fivm.SYSTEM, first_order.SYSTEM, recompute.SYSTEM, sample.SYSTEM)}
DEFAULT = ivme.NAME


def get(name: str) -> System:
    try:
        return SYSTEMS[name]
    except KeyError:
        raise PgivmError(f"unknown system {name!r}", f"choose one of: {', '.join(SYSTEMS)}") from None
