"""What a maintenance system is: the contract every package under ``pgivm/systems/`` fulfils.

A system says which queries it accepts, which options it takes, and turns an accepted query
(resolved against the database) into an :class:`InstallPlan` of named phases. ``pgivm.command``
runs the plan, records the view in the catalog and dispatches ``status``, ``verify`` and the
system's own actions (IVMε: ``alter``, ``rebalance``) without knowing any system by name; the CLI
builds its options from the same specs. Adding a system means a package here and a line in
``registry.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

import psycopg
from psycopg import sql

from pgivm.capture import CaptureAtom, CaptureTrigger
from pgivm.query.cq import ConjunctiveQuery
from pgivm.query.model import TableRef
from pgivm.query.resolve import ResolvedView

# The phases of an install, in the order they run inside create's transaction (the base tables
# are already locked against writers): the state's tables, the functions that maintain it, the
# build from the current data, the capture triggers, and what users see (view, privileges).
PHASES = ("state", "functions", "build", "capture", "expose")


@dataclass(frozen=True)
class Option:
    """An option a system takes at ``create`` (or an action takes); the CLI's flag is built from it."""

    name: str  # keyword argument and catalog parameter name, e.g. "epsilon"
    type: type
    default: Any
    help: str
    check: Callable[[Any], str | None] | None = None  # a one-line complaint about a bad value, or None
    in_state: bool = False  # kept in the view's state row (which its functions read), not in the catalog

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def validate(self, value: Any) -> Any:
        from pgivm.errors import PgivmError

        if value is None:
            return self.default
        try:
            value = self.type(value)
        except (TypeError, ValueError):
            kind = {"int": "an integer", "float": "a number", "str": "a text"}.get(self.type.__name__, self.type.__name__)
            raise PgivmError(f"{self.flag} must be {kind}, got {value!r}") from None
        complaint = self.check(value) if self.check else None
        if complaint:
            raise PgivmError(f"{self.flag}: {complaint}")
        return value


@dataclass
class Phase:
    name: str
    statements: list[sql.Composable] = field(default_factory=list)


@dataclass
class InstallPlan:
    """The SQL that installs one view, phase by phase (see PHASES)."""

    phases: list[Phase]

    def phase(self, name: str) -> Phase:
        return next(p for p in self.phases if p.name == name)

    def __iter__(self) -> Iterator[sql.Composable]:
        for phase in self.phases:
            yield from phase.statements

    @classmethod
    def of(cls, **statements: list[sql.Composable]) -> InstallPlan:
        unknown = set(statements) - set(PHASES)
        assert not unknown, f"unknown phases {unknown}"
        return cls([Phase(name, statements.get(name, [])) for name in PHASES])


@dataclass
class Section:
    """A table of a status report: a title, headers, rows."""

    title: str
    headers: list[str]
    rows: list[list[Any]]


@dataclass
class SystemStatus:
    """What a system reports about one view beyond the common part: key figures and sections."""

    figures: dict[str, Any]  # snake_case keys, e.g. epsilon, n, theta, db_size, updates_applied
    sections: list[Section] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)  # how a figure is headed in a table, if not by its key
    headline: tuple[str, ...] = ()  # figures worth one line after create

    def label(self, key: str) -> str:
        return self.labels.get(key, COMMON_LABELS.get(key, key.replace("_", " ")))


# Figures every system may report, headed for what they count.
COMMON_LABELS = {"updates_applied": "base rows applied"}


@dataclass(frozen=True)
class Action:
    """An operation of one system on an installed view (IVMε: rebalance, alter)."""

    name: str
    help: str
    options: tuple[Option, ...]
    # (connection in the command's transaction, view name, options) -> the figures after it
    run: Callable[[psycopg.Connection, str, dict[str, Any]], dict[str, Any]]
    locks_state: bool = True  # takes the view's lock first, as writers do


class BuildProvider(Protocol):
    """Another way to run the build phase (IVMε: ``spark``)."""

    def around(self, conn: psycopg.Connection) -> AbstractContextManager[Any]:
        """Wraps create's whole transaction: cleans up what the build left outside it on failure."""

    def build(self, conn: psycopg.Connection, view: ResolvedView, name: str, params: dict[str, Any],
              context: Any) -> None:
        """Fill the freshly created state from the base tables, instead of the build phase's SQL."""


class System(Protocol):
    """A maintenance system: each package under pgivm/systems/ defines one (a FunctionSystem)."""

    name: str
    summary: str
    options: tuple[Option, ...]
    actions: tuple[Action, ...]
    builders: dict[str, BuildProvider]  # extra ways to run the build phase, e.g. {"spark": ...}
    # Optional hooks, None where a system has none (see FunctionSystem for what each one does):
    # the atoms per base table that deferred mode logs, or why it cannot
    deferred_atoms: Callable[[ResolvedView, str, dict[str, Any]], dict[TableRef, list[CaptureAtom]] | str] | None
    # lines for `pgivm explain`
    explain: Callable[[psycopg.Connection, ResolvedView, str, dict[str, Any]], list[str]] | None
    # how verify compares the rows shown with plain SQL when they are not the query's whole result
    compare_result: Callable[[psycopg.Connection, ResolvedView, str], tuple[int, list[tuple[Any, ...]]]] | None
    # whether the view of this query shows one value, the count its system maintains
    one_value: Callable[[ConjunctiveQuery], bool] | None
    # why the system cannot maintain the query once its columns' types are known
    accepts_types: Callable[[ResolvedView], str | None] | None
    # the number of rows the view shows, where its state's count counts something else
    shown_rows: Callable[[psycopg.Connection, ConjunctiveQuery, str], int | None] | None

    def accepts(self, query: ConjunctiveQuery) -> str | None:
        """None if the system can maintain the query, else a few words saying why not."""

    def plan(self, view: ResolvedView, name: str, view_schema: str, params: dict[str, Any]) -> InstallPlan:
        """The install plan of an accepted, resolved query (the system makes the shape it plans from
        ``view.query``, e.g. the triangle systems' R, S, T)."""

    def capture_triggers(self, view: ResolvedView, name: str, table: TableRef) -> list[CaptureTrigger]:
        """The triggers the view puts on a base table (recorded in the catalog for partitions)."""

    def status(self, conn: psycopg.Connection, name: str) -> SystemStatus:
        """Key figures and sections for ``pgivm status``."""

    def verify(self, conn: psycopg.Connection, view: ResolvedView, name: str, strict: bool) -> list[Any]:
        """The system's invariants checked against the base tables: the violated ones."""


@dataclass(frozen=True)
class FunctionSystem:
    """A System made of plain functions: how the packages under ``pgivm/systems/`` define theirs."""

    name: str
    summary: str
    accepts: Callable[[ConjunctiveQuery], str | None]
    plan: Callable[[ResolvedView, str, str, dict[str, Any]], InstallPlan]
    capture_triggers: Callable[[ResolvedView, str, TableRef], list[CaptureTrigger]]
    status: Callable[[psycopg.Connection, str], SystemStatus]
    verify: Callable[[psycopg.Connection, ResolvedView, str, bool], list[Any]]
    options: tuple[Option, ...] = ()
    actions: tuple[Action, ...] = ()
    builders: dict[str, BuildProvider] = field(default_factory=dict)
    # (connection, view, name, params) -> lines for `pgivm explain` (F-IVM: order and view tree)
    explain: Callable[[psycopg.Connection, ResolvedView, str, dict[str, Any]], list[str]] | None = None
    # (connection, view, name) -> (recount, rows that differ): how verify checks the rows shown against
    # plain SQL when they are not the query's whole result (sample: a subset of min(k, |Q|) rows).
    # None: the rows must equal the query's result as a bag.
    compare_result: Callable[[psycopg.Connection, ResolvedView, str], tuple[int, list[tuple[Any, ...]]]] | None = None
    # (view, name, params) -> the atoms the capture layer hands each base table's changes to, in its
    # order, or why the system cannot defer them: what deferred mode (pgivm.deferred) logs and
    # replays through apply_batch_K. None: the system has no deferred mode.
    deferred_atoms: Callable[[ResolvedView, str, dict[str, Any]], dict[TableRef, list[CaptureAtom]] | str] | None = None
    # (query) -> True if the view shows one value, the count the system maintains (the triangle
    # count): its figure in list and status, recounted by verify and Spark's validate. None or
    # False: the view's rows are the result, its figure their number, compared as a bag.
    one_value: Callable[[ConjunctiveQuery], bool] | None = None
    # (resolved view) -> None, or why the system cannot maintain the query given its columns' types
    # (F-IVM: integer arithmetic inside sum, which PostgreSQL evaluates per joined row and raises on
    # overflow). Checked when create chooses the system, after ``accepts``.
    accepts_types: Callable[[ResolvedView], str | None] | None = None
    # (connection, query, name) -> the number of rows the view shows when the state's count is not
    # it (a grouped triangle listing counts its triangles, and shows each distinct one once): read
    # from the state, never the user's view (a deferred view's read applies its changes first).
    # None, or a hook answering None: the state's count is the number of rows.
    shown_rows: Callable[[psycopg.Connection, ConjunctiveQuery, str], int | None] | None = None
