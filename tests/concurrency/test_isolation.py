"""Isolation specs: pgivm commands against concurrent writer transactions, permutation by permutation.

In the spirit of PostgreSQL's isolationtester (src/test/isolation) and pg_ivm's ``specs/``: a
:class:`Spec` has a setup, run once into a template database, and :class:`Session` s that each own
a connection and run :class:`Step` s: SQL text, or a pgivm command (a Python callable given the
session's DSN, which carries ``application_name=<session>`` so that the session's backends can be
found in ``pg_stat_activity``; or, flagged ``on_connection``, given the session's own connection,
so that it runs inside the transaction the session's SQL steps opened). A session is a writer (one
transaction, retried after a 40001), a pgivm command, or a reader (SQL steps that must all
succeed). A spec names the maintained views it checks afterwards and may set the database's
defaults (``ALTER DATABASE ... SET``) in each copy. A permutation is a list of step names. The
:class:`Runner` issues each step in its session's thread; a step that has not finished after
``GRACE`` seconds and is waiting (on a lock; for a pgivm command, which may be between two lock
attempts, simply still running) is marked ``<waiting ...>`` and the runner goes on with the next
step, as isolationtester does. Before a session's next step the runner waits for its previous one.
Each permutation runs in a fresh copy of the template database and must end within
``PERMUTATION_TIMEOUT``: a hang fails the test instead of hanging CI. Every permutation leaves a
transcript, printed when it fails.

The contract checked after every permutation:

- READ COMMITTED writers: no writer step ever fails.
- pgivm commands: every one succeeds (it may wait); a step marked ``may_refuse`` may instead end
  with that one-line refusal (a ``PgivmError`` matching its pattern, and nothing installed). The
  transcript notes whether a commit may have landed after its session's snapshot (the bounds below).
- Readers, and the SQL steps of a command's session: no step fails, with a deadlock (40P01) or
  anything else.
- Any isolation level: no writer fails with a deadlock (40P01), a lock timeout (55P03) or any error
  but a serialization failure (40001); ``verify`` and ``drop`` never cause a writer error.
- REPEATABLE READ / SERIALIZABLE: a writer may fail with 40001 only if its snapshot was taken before
  a state-changing event committed (a ``create``, ``rebalance`` or ``alter``, or another writer's
  commit) and it writes after that commit. The runner then retries the whole writer transaction,
  as an application must, after the permutation; the retry succeeds.
- Afterwards every view of the spec exists (or not, as the spec says; for a ``create`` that may be
  refused: exactly when it succeeded), its ``verify`` is ok and its rows equal a plain-SQL recount;
  every committed writer transaction's rows are in the base tables, no rolled-back one's are.

Timing only decides what is marked waiting; no assertion depends on it.
"""

from __future__ import annotations

import inspect
import queue
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from conftest import TRIANGLE_SQL
from pgivm import command
from pgivm.errors import PgivmError, UnknownView

GRACE = 0.3  # a step still running after this long is checked for waiting
POLL = 0.01
PERMUTATION_TIMEOUT = 90.0  # all steps of one permutation and the retries (a command's lock budget is 60 s)
PARALLEL_PERMUTATIONS = 8  # permutations of one spec run side by side, each in its own database

LEVELS = {"rc": "READ COMMITTED", "rr": "REPEATABLE READ", "ser": "SERIALIZABLE"}

# A writer's rows: a query, what it returns once the transaction committed, and what if not.
Footprint = tuple[str, tuple[int, ...], tuple[int, ...]]


# --- the spec language --------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One step: SQL text run on the session's connection, or a pgivm command called with the
    session's DSN (``on_connection``: with the session's connection, in whatever transaction its
    earlier steps opened)."""

    name: str
    action: str | Callable[[str], Any] | Callable[[psycopg.Connection], Any]
    # A commit or command after which a transaction with an older snapshot may not write (40001).
    changes_state: bool = False
    on_connection: bool = False
    # A pgivm command that may end with this refusal (a regular expression of its one-line
    # PgivmError) instead of succeeding.
    may_refuse: str | None = None


@dataclass(frozen=True)
class Session:
    """A connection of its own. A writer session is one transaction (BEGIN first, COMMIT last): after
    an error its remaining steps are skipped, and after a 40001 it is retried whole at the end. A
    session that is neither a writer nor a pgivm command is a reader."""

    name: str
    steps: tuple[Step, ...]
    writer: bool = False
    isolation: str = "READ COMMITTED"  # a writer's isolation level
    footprint: Footprint | None = None  # a writer's rows (default: those of writer())

    @property
    def needs_connection(self) -> bool:
        return any(not callable(step.action) or step.on_connection for step in self.steps)


@dataclass(frozen=True)
class Spec:
    """Sessions, a setup run once (given a DSN of the template database) and the permutations."""

    name: str
    setup: Callable[[str], None]
    sessions: tuple[Session, ...]
    permutations: tuple[tuple[str, ...], ...]
    view_after: bool | None  # whether the views exist after every permutation (None: iff step create succeeded)
    views: tuple[tuple[str, str], ...] = (("tri", TRIANGLE_SQL),)  # each checked view and its recount
    database_settings: tuple[tuple[str, str], ...] = ()  # ALTER DATABASE ... SET, in each copy

    def step(self, name: str) -> tuple[Session, Step]:
        for session in self.sessions:
            for step in session.steps:
                if step.name == name:
                    return session, step
        raise KeyError(name)


# --- running a permutation ----------------------------------------------------------------------


class PermutationTimeout(Exception):
    pass


@dataclass
class Outcome:
    """What happened to one issued step."""

    session: Session
    step: Step
    issued: float
    done: threading.Event = field(default_factory=threading.Event)
    finished: float = 0.0
    value: Any = None
    error: BaseException | None = None
    waited: str | None = None  # "lock" (it waited on a lock) or "running" (a command still at work)

    @property
    def sqlstate(self) -> str | None:
        return getattr(self.error, "sqlstate", None)

    def result(self) -> str:
        if self.error is not None:
            first = (str(self.error).strip().splitlines() or [""])[0]
            return f"ERROR {self.sqlstate or type(self.error).__name__}: {first}"
        return describe(self.value)


def describe(value: Any) -> str:
    """A pgivm command's result or a statement's status, in a few words."""
    if isinstance(value, command.VerifyReport):
        return f"verify ok={value.ok} maintained={value.maintained} recount={value.recount}" + (
            "" if value.ok else f" failures={[str(f) for f in value.failures]}")
    if isinstance(value, command.CreateResult):
        return f"created count={value.count}"
    if isinstance(value, dict):
        return f"count={value.get('count')}"
    return "ok" if value is None else str(value)


class Worker:
    """A session's connection (for SQL steps) and the thread that runs its steps in order."""

    def __init__(self, session: Session, dsn: str) -> None:
        self.session = session
        self.dsn = make_conninfo(dsn, application_name=session.name)
        self.conn = psycopg.connect(self.dsn, autocommit=True) if session.needs_connection else None
        self.inbox: queue.Queue[Outcome | None] = queue.Queue()
        self.last: Outcome | None = None
        self.failed: Outcome | None = None  # a writer's step that failed: its transaction is gone
        self.thread = threading.Thread(target=self._loop, name=session.name, daemon=True)
        self.thread.start()

    def submit(self, step: Step) -> Outcome:
        self.last = Outcome(self.session, step, time.monotonic())
        self.inbox.put(self.last)
        return self.last

    def _loop(self) -> None:
        while (outcome := self.inbox.get()) is not None:
            try:
                if callable(outcome.step.action):
                    given = self.conn if outcome.step.on_connection else self.dsn
                    outcome.value = outcome.step.action(given)  # type: ignore[arg-type]
                else:
                    assert self.conn is not None
                    outcome.value = self.conn.execute(outcome.step.action).statusmessage  # type: ignore[arg-type]
            except Exception as exc:  # noqa: BLE001  # recorded; the checks judge it
                outcome.error = exc
                self._roll_back()
                if self.session.writer:
                    self.failed = outcome
            finally:
                outcome.finished = time.monotonic()
                outcome.done.set()
        if self.conn is not None:
            self.conn.close()

    def _roll_back(self) -> None:
        """An aborted transaction keeps its locks until ROLLBACK: let them go at once."""
        if self.conn is not None and not self.conn.closed and \
                self.conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR:
            try:
                self.conn.execute("ROLLBACK")
            except psycopg.Error:
                pass

    def stop(self, wait: bool = True) -> None:
        """End the thread after its current step (``wait``: and wait for that)."""
        self.inbox.put(None)
        if wait:
            self.thread.join(PERMUTATION_TIMEOUT)


@dataclass
class PermutationResult:
    spec: Spec
    permutation: tuple[str, ...]
    transcript: list[str]
    problems: list[str]
    errors_40001: int = 0
    hung: bool = False

    def report(self) -> str:
        """The permutation, what its steps are, its transcript and what broke the contract."""
        used = set(self.permutation)
        legend = [f"  {step.name} = {step.action if isinstance(step.action, str) else 'pgivm ' + step.name}"
                  for session in self.spec.sessions for step in session.steps if step.name in used]
        lines = [f"permutation {' '.join(self.permutation)}  ({self.spec.name})", *legend, *self.transcript]
        lines += [f"PROBLEM: {p}" for p in self.problems]
        return "\n".join(lines)


class Runner:
    """Runs one permutation of a spec in a database of its own (see the module docstring)."""

    def __init__(self, spec: Spec, permutation: tuple[str, ...], dsn: str) -> None:
        self.spec, self.permutation, self.dsn = spec, permutation, dsn
        self.deadline = time.monotonic() + PERMUTATION_TIMEOUT
        self.transcript: list[str] = []
        self.outcomes: list[Outcome] = []
        self.waiting: list[Outcome] = []
        self.problems: list[str] = []

    def run(self) -> PermutationResult:
        workers = {s.name: Worker(s, self.dsn) for s in self.spec.sessions}
        hung = False
        try:
            with closing(psycopg.connect(self.dsn, autocommit=True)) as observer:
                self.observer = observer
                try:
                    for name in self.permutation:
                        self._issue(workers, name)
                    for outcome in list(self.waiting):
                        self._wait_for(outcome)
                    retried = self._retry_failed_writers(workers)
                except PermutationTimeout as timeout:
                    hung = True
                    self.problems.append(f"timed out: {timeout}")
                    self.problems += [f"backend: {row}" for row in self._activity()]
                    return self._result(hung=True)
            self._check(retried)
        finally:
            # After a hang a worker may be stuck in a statement: dropping the database ends it.
            for worker in workers.values():
                worker.stop(wait=not hung)
        return self._result()

    def _result(self, hung: bool = False) -> PermutationResult:
        return PermutationResult(self.spec, self.permutation, self.transcript, self.problems,
                                 sum(o.sqlstate == "40001" for o in self.outcomes), hung)

    # -- issuing steps

    def _issue(self, workers: dict[str, Worker], name: str) -> None:
        session, step = self.spec.step(name)
        worker = workers[session.name]
        if worker.last is not None and not worker.last.done.is_set():
            self._wait_for(worker.last)  # as isolationtester: a session's steps run one at a time
        if worker.failed is not None:
            self.transcript.append(f"step {name}: skipped (transaction aborted)")
            return
        outcome = worker.submit(step)
        self.outcomes.append(outcome)
        look = outcome.issued + GRACE
        while not outcome.done.wait(POLL):
            self._check_deadline(outcome)
            if time.monotonic() >= look:
                outcome.waited = self._waiting(outcome)
                if outcome.waited:
                    self.transcript.append(f"step {name}: <waiting ...>")
                    self.waiting.append(outcome)
                    break
                look = time.monotonic() + 0.05  # a slow statement, not (yet) waiting: look again soon
        else:
            self._record(outcome, completed_late=False)
        self._report_completed()

    def _wait_for(self, outcome: Outcome) -> None:
        while not outcome.done.wait(POLL):
            self._check_deadline(outcome)
        self._report_completed()

    def _report_completed(self) -> None:
        """Log the waiting steps that have finished since, in the order they were issued."""
        for outcome in [o for o in self.waiting if o.done.is_set()]:
            self.waiting.remove(outcome)
            self._record(outcome, completed_late=True)

    def _record(self, outcome: Outcome, completed_late: bool) -> None:
        prefix = "<... completed> " if completed_late else ""
        self.transcript.append(f"step {outcome.step.name}: {prefix}{outcome.result()}")

    def _waiting(self, outcome: Outcome) -> str | None:
        """"lock" if a backend of the session waits on a lock; "running" for a pgivm command that is
        still at work (it may be between two lock attempts); else None (keep waiting for it)."""
        session = outcome.session
        row = self.observer.execute(
            "SELECT coalesce(bool_or(wait_event_type = 'Lock' OR cardinality(pg_blocking_pids(pid)) > 0), false) "
            "FROM pg_stat_activity WHERE datname = current_database() AND application_name = %s "
            "AND pid <> pg_backend_pid()", [session.name]).fetchone()
        if row and row[0]:
            return "lock"
        return "running" if callable(outcome.step.action) else None

    def _check_deadline(self, outcome: Outcome) -> None:
        if time.monotonic() > self.deadline:
            raise PermutationTimeout(f"step {outcome.step.name} still running after {PERMUTATION_TIMEOUT:g} s")

    def _activity(self) -> list[tuple[Any, ...]]:
        return self.observer.execute(
            "SELECT pid, application_name, state, wait_event_type, wait_event, pg_blocking_pids(pid), left(query, 80) "
            "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()").fetchall()

    # -- retries

    def _retry_failed_writers(self, workers: dict[str, Worker]) -> dict[str, bool]:
        """A writer transaction that failed with 40001 is run again, whole, now that all is quiet."""
        retried = {}
        for worker in workers.values():
            if worker.failed is None or worker.failed.sqlstate != "40001":
                continue
            worker.failed, ok = None, True
            for step in worker.session.steps:
                outcome = worker.submit(step)
                self._wait_for(outcome)
                if outcome.error is not None:
                    ok = False
                    self.problems.append(f"retry of {worker.session.name} failed at {step.name}: {outcome.result()}")
                    break
            self.transcript.append(f"retry {worker.session.name}: {'ok' if ok else 'failed'}")
            retried[worker.session.name] = ok
        return retried

    # -- the contract

    def _check(self, retried: dict[str, bool]) -> None:
        for outcome in self.outcomes:
            if callable(outcome.step.action):
                self._check_command(outcome)
            elif outcome.error is not None and outcome.session.writer:
                self._check_writer_error(outcome)
            elif outcome.error is not None:  # a reader's step, or a command session's SQL
                self.problems.append(f"step {outcome.step.name} of {outcome.session.name} failed: {outcome.result()} "
                                     "(only a writer may fail, and only with 40001)")
        view_after = self.spec.view_after
        if view_after is None:
            view_after = any(o.step.name == "create" and o.error is None for o in self.outcomes)
        with closing(psycopg.connect(self.dsn, autocommit=True)) as conn:
            committed, footprints = {}, {}
            for session in self.spec.sessions:
                if session.writer:
                    commit = next((o for o in self.outcomes if o.session == session and o.step == session.steps[-1]), None)
                    committed[session.name] = retried.get(session.name, commit is not None and commit.error is None)
                    footprints[session.name] = session.footprint
            self.problems += check_database(conn, committed, view_after, self.transcript, self.spec.views, footprints)

    def _check_command(self, outcome: Outcome) -> None:
        if outcome.error is not None and self._refused(outcome):
            excuses = self._commits_since_snapshot(outcome)
            landed = ", ".join(o.step.name for o in excuses) + " may have" if excuses else "nothing may have"
            self.transcript.append(f"note: {outcome.step.name} refused; {landed} committed after "
                                   f"{outcome.session.name}'s snapshot")
        elif outcome.error is not None:
            self.problems.append(f"pgivm command {outcome.step.name} failed: {outcome.result()}")
        elif isinstance(outcome.value, command.VerifyReport) and not outcome.value.ok:
            self.problems.append(f"concurrent verify found a difference: {outcome.result()}")
        if outcome.step.name == "verify" and outcome.waited == "lock":
            self.problems.append("verify waited on a lock (it must take none a writer holds)")

    def _check_writer_error(self, failed: Outcome) -> None:
        """A 40001 is excused by a state-changing step (create, rebalance, alter, another writer's
        COMMIT) that may have committed between the writer's snapshot and the failed write: issued
        before the failure ended, and ended after the snapshot step was issued. The exact moments are
        unknown, these bounds contain them, so a legitimate 40001 is never blamed."""
        what = f"writer step {failed.step.name} failed: {failed.result()}"
        if failed.session.isolation == "READ COMMITTED":
            self.problems.append(f"{what} (a READ COMMITTED writer must never fail)")
            return
        if failed.sqlstate != "40001":
            self.problems.append(f"{what} (only a serialization failure, 40001, is allowed)")
            return
        if not self._commits_since_snapshot(failed):
            self.problems.append(f"{what}, but no create/rebalance/alter or other writer committed between "
                                 "its snapshot and that write")

    def _commits_since_snapshot(self, failed: Outcome) -> list[Outcome]:
        """The state-changing steps of other sessions that may have committed between the snapshot
        of ``failed`` 's session (taken by its first statement after BEGIN) and the end of ``failed``."""
        own = [o for o in self.outcomes if o.session == failed.session]
        snapshot_taken = own[1].issued if len(own) > 1 else own[0].issued
        return [o for o in self.outcomes
                if o.step.changes_state and o.error is None and o.session != failed.session
                and o.issued < failed.finished and o.finished > snapshot_taken]

    @staticmethod
    def _refused(outcome: Outcome) -> bool:
        """Whether a command's error is the one-line refusal its step allows."""
        pattern, error = outcome.step.may_refuse, outcome.error
        return pattern is not None and isinstance(error, PgivmError) and "\n" not in str(error) \
            and re.search(pattern, str(error)) is not None


def check_database(conn: psycopg.Connection, committed: dict[str, bool], view_after: bool,
                   transcript: list[str], views: tuple[tuple[str, str], ...] = (("tri", TRIANGLE_SQL),),
                   footprints: dict[str, Footprint | None] | None = None) -> list[str]:
    """The end state: the views (or their absence) and the writers' rows (``footprints``: each
    writer's, by default that of :func:`writer`)."""
    problems = []
    for name, recount_sql in views:
        found = conn.execute("SELECT EXISTS (SELECT FROM pgivm_catalog.views WHERE name = %s)", [name]).fetchone()
        exists = found is not None and found[0]
        if exists != view_after:
            problems.append(f"view {name} {'exists' if exists else 'is missing'} after the permutation")
        if not exists:
            problems += leftovers(conn) if name == "tri" else []
            continue
        try:
            report = command.verify(name, target=conn)
            maintained = sorted(conn.execute(f"SELECT * FROM {name}").fetchall(), key=repr)  # NULLs sort too
        except (psycopg.Error, PgivmError) as exc:
            problems.append(f"view {name} cannot be read: {type(exc).__name__}: {str(exc).splitlines()[0]}")
            problems += leftovers(conn) if name == "tri" else []
            continue
        recount = sorted(conn.execute(recount_sql).fetchall(), key=repr)  # type: ignore[arg-type]
        transcript.append(f"check: {describe(report)}, SELECT * FROM {name} = {rows(maintained)}, "
                          f"recount = {rows(recount)}")
        if not report.ok:
            problems.append(f"verify of {name} after the permutation: {describe(report)}")
        if maintained != recount:
            problems.append(f"view {name} {rows(maintained)} != recount {rows(recount)}")
    for name, done in committed.items():
        query, if_committed, if_not = (footprints or {}).get(name) or writer_footprint(name)
        found = tuple(conn.execute(query).fetchone())  # type: ignore[arg-type]
        expected = if_committed if done else if_not
        if found != expected:
            problems.append(f"writer {name} {'committed' if done else 'did not commit'}, but `{query}` "
                            f"gives {found}, not {expected}")
    return problems


def rows(found: list[tuple[Any, ...]]) -> str:
    """A view's rows in a few words: a count's value, else how many rows and the first few."""
    if len(found) == 1 and len(found[0]) == 1:
        return str(found[0][0])
    return f"{len(found)} rows {found[:3]}{'...' if len(found) > 3 else ''}"


def leftovers(conn: psycopg.Connection) -> list[str]:
    """Anything of view tri left behind when it should not exist: catalog row, schema, triggers, view."""
    found = conn.execute(
        """
        SELECT 'catalog row' FROM pgivm_catalog.views WHERE name = 'tri'
        UNION ALL SELECT 'base table catalog row' FROM pgivm_catalog.base_tables WHERE view_name = 'tri'
        UNION ALL SELECT 'schema ' || nspname FROM pg_namespace WHERE nspname = 'pgivm_tri'
        UNION ALL SELECT 'relation ' || relname FROM pg_class WHERE relname = 'tri'
        UNION ALL SELECT 'trigger ' || tgname || ' on ' || tgrelid::regclass FROM pg_trigger
                  WHERE NOT tgisinternal AND tgrelid IN ('r'::regclass, 's'::regclass, 't'::regclass)
        """).fetchall()
    return [f"left behind: {row[0]}" for row in found]


# --- databases ----------------------------------------------------------------------------------


@contextmanager
def database_copy(admin_dsn: str, template: str, settings: tuple[tuple[str, str], ...] = ()) -> Iterator[str]:
    """A new database copied from ``template`` (with ``settings`` as its defaults: a copy does not
    inherit the template's), dropped afterwards (with its sessions)."""
    name = f"pgivm_perm_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        fast = admin.info.server_version >= 150000
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"' + (" STRATEGY FILE_COPY" if fast else ""))
        for setting, value in settings:
            admin.execute(sql.SQL("ALTER DATABASE {} SET {} = {}").format(
                sql.Identifier(name), sql.Identifier(setting), sql.Literal(value)))
    try:
        yield make_conninfo(admin_dsn, dbname=name)
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def run_spec(spec: Spec, server_dsn: str, template_dsn: str) -> list[PermutationResult]:
    """Set the template up, then run every permutation in a copy of it, a few side by side. After a
    permutation that hung, the ones not started yet are not run (each would cost a timeout)."""
    spec.setup(template_dsn)
    template = str(conninfo_to_dict(template_dsn)["dbname"])
    hung = threading.Event()

    def one(permutation: tuple[str, ...]) -> PermutationResult:
        if hung.is_set():
            return PermutationResult(spec, permutation, [], ["not run: an earlier permutation hung"])
        with database_copy(server_dsn, template, spec.database_settings) as dsn:
            result = Runner(spec, permutation, dsn).run()
        if result.hung:
            hung.set()
        return result

    with ThreadPoolExecutor(PARALLEL_PERMUTATIONS) as pool:
        return list(pool.map(one, spec.permutations))


def assert_all_pass(results: list[PermutationResult]) -> None:
    failed = [r for r in results if r.problems]
    if failed:
        shown = "\n\n".join(r.report() for r in failed[:4])  # the first few in full
        pytest.fail(f"{len(failed)} of {len(results)} permutations broke the contract:\n"
                    + "\n".join("  " + " ".join(r.permutation) for r in failed) + "\n\n" + shown, pytrace=False)


# --- the specs ----------------------------------------------------------------------------------

SETUP_SQL = """
CREATE TABLE r (a int, b int, note text);
CREATE TABLE s (b int, c int, note text);
CREATE TABLE t (c int, a int, note text);
-- the triangle 1 -> 2 -> 3 -> 1, with t(3, 1) three times: two of them the writers' victims
INSERT INTO r VALUES (1, 2, 'base');
INSERT INTO s VALUES (2, 3, 'base');
INSERT INTO t VALUES (3, 1, 'base'), (3, 1, 'w1-victim'), (3, 1, 'w2-victim');
-- hubs: a = 1 in r and c = 3 in s are heavy, so rebalance and alter move values between parts
INSERT INTO r SELECT 1, g, 'hub' FROM generate_series(10, 29) g;
INSERT INTO s SELECT g, 3, 'hub' FROM generate_series(10, 29) g;
-- light filler with triangles of its own
INSERT INTO r SELECT g, g + 100, 'filler' FROM generate_series(200, 229) g;
INSERT INTO s SELECT g + 100, g + 200, 'filler' FROM generate_series(200, 229) g;
INSERT INTO t SELECT g + 200, g, 'filler' FROM generate_series(200, 229) g;
"""


def setup(with_view: bool) -> Callable[[str], None]:
    def run(dsn: str) -> None:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(SETUP_SQL)  # type: ignore[arg-type]
            command.init(target=conn)
            if with_view:
                command.create("tri", TRIANGLE_SQL, epsilon=0.5, target=conn)
    return run


def writer(number: int, level: str) -> Session:
    """Writer 1 inserts r(1, 2), s(2, 3) and deletes its t(3, 1); writer 2 does the same in the
    opposite table order (t, s, r), so that a command locking r, s, t in turn could deadlock with it.
    Each one forms triangles with the other's rows and breaks some by its delete."""
    w = f"w{number}"
    statements = {
        "r": Step(f"r{number}", f"INSERT INTO r VALUES (1, 2, '{w}')"),
        "s": Step(f"s{number}", f"INSERT INTO s VALUES (2, 3, '{w}')"),
        "d": Step(f"d{number}", f"DELETE FROM t WHERE note = '{w}-victim'"),
    }
    order = "rsd" if number == 1 else "dsr"
    return Session(w, (
        Step(f"b{number}", f"BEGIN ISOLATION LEVEL {LEVELS[level]}"),
        Step(f"snap{number}", "SELECT"),  # takes the transaction's snapshot (under RR and SERIALIZABLE)
        *(statements[k] for k in order),
        Step(f"c{number}", "COMMIT", changes_state=True),
    ), writer=True, isolation=LEVELS[level], footprint=writer_footprint(w))


def writer_footprint(w: str) -> Footprint:
    """Writer ``w`` 's rows in r and s and its victim in t: (1, 1, 0) once it committed, else (0, 0, 1)."""
    return (f"SELECT (SELECT count(*) FROM r WHERE note = '{w}'), (SELECT count(*) FROM s WHERE note = '{w}'), "
            f"(SELECT count(*) FROM t WHERE note = '{w}-victim')", (1, 1, 0), (0, 0, 1))


COMMANDS: dict[str, tuple[Step, bool, bool]] = {
    # name: (step, view exists before, view exists after)
    "create": (Step("create", lambda dsn: command.create("tri", TRIANGLE_SQL, epsilon=0.5, target=dsn),
                    changes_state=True), False, True),
    "verify": (Step("verify", lambda dsn: command.verify("tri", target=dsn)), True, True),
    "drop": (Step("drop", lambda dsn: command.drop("tri", target=dsn)), True, False),
    "rebalance": (Step("rebalance", lambda dsn: command.action("tri", "rebalance", target=dsn),
                       changes_state=True), True, True),
    "alter": (Step("alter", lambda dsn: command.action("tri", "alter", epsilon=0.25, target=dsn),
                   changes_state=True), True, True),
}

# The writers' steps in the order they are issued; the command goes in at every position.
ONE_WRITER = ("b1", "snap1", "r1", "s1", "d1", "c1")
# Writer 2 takes its snapshot while writer 1 is open and (once the view exists) its first write
# waits for writer 1's commit: it queues on the view's lock holding a lock on t.
TWO_WRITERS = ("b1", "snap1", "r1", "b2", "snap2", "d2", "s1", "d1", "c1", "s2", "r2", "c2")


def everywhere(step: str, order: tuple[str, ...]) -> list[tuple[str, ...]]:
    """``order`` with ``step`` inserted at each of its len(order) + 1 positions."""
    return [order[:i] + (step,) + order[i:] for i in range(len(order) + 1)]


def command_spec(name: str, level: str) -> Spec:
    """The command at every position of one writer's steps, and of two writers' (but for SERIALIZABLE,
    where writer 2 fails at its first write exactly as under REPEATABLE READ: its snapshot predates
    writer 1's commit)."""
    step, before, after = COMMANDS[name]
    permutations = everywhere(step.name, ONE_WRITER)
    if level != "ser":
        permutations += everywhere(step.name, TWO_WRITERS)
    return Spec(
        name=f"{name} vs writers at {LEVELS[level]}",
        setup=setup(with_view=before),
        sessions=(writer(1, level), writer(2, level), Session("pgivm", (step,))),
        permutations=tuple(permutations),
        view_after=after,
    )


@pytest.mark.parametrize("level", list(LEVELS))
@pytest.mark.parametrize("name", list(COMMANDS))
def test_command_against_writers(server_dsn: str, dsn: str, name: str, level: str) -> None:
    assert_all_pass(run_spec(command_spec(name, level), server_dsn, dsn))


# --- issue 22: outer-, semi- and anti-join views under two writers -----------------------------------

JOIN_VIEWS = (  # each writer's rows flip rows of each view (a NULL-extended row comes or goes, a test's answer turns)
    ("lj", "SELECT s.b, s.c, t.a FROM s LEFT JOIN t ON s.c = t.c AND t.note <> 'base'"),
    ("fj", "SELECT r.a, r.b, s.b AS sb FROM r FULL JOIN s ON r.b = s.b AND s.note <> 'base'"),
    ("nx", "SELECT s.b, s.c FROM s WHERE NOT EXISTS (SELECT 1 FROM r WHERE r.b = s.b AND r.note LIKE 'w%')"),
    ("ex", "SELECT t.c, count(*) AS n FROM t WHERE EXISTS (SELECT 1 FROM s WHERE s.c = t.c AND s.note LIKE 'w%') GROUP BY t.c"),
    # a parenthesized join on the right, and a UNION ALL reading r in both branches
    ("bj", "SELECT r.a, s.c, t.a AS ta FROM r LEFT JOIN (s FULL JOIN t ON s.c = t.c) ON r.b = s.b"),
    ("un", "SELECT r.a, r.b FROM r WHERE r.note LIKE 'w%' UNION ALL SELECT r.b, t.a FROM r JOIN t ON r.b = t.c"),
    # r joined to itself through a LEFT join: each writer's r(1, 2) matches r's rows of b = 2, its own and the other's
    ("sj", "SELECT r.a, r.b, r2.a AS a2 FROM r LEFT JOIN r AS r2 ON r2.b = r.b AND r2.note LIKE 'w%'"),
)


# Computed values (issue 22): F-IVM's leaves computing CASE, FILTER and GROUP BY expressions of one
# table, first-order's over two tables with min/max, and first-order's overflow check of integer
# arithmetic; each writer's rows change each view.
COMPUTED_VIEWS = (
    ("cf", "SELECT lower(s.note) AS kind, count(*) FILTER (WHERE r.note LIKE 'w%') AS ws, "
           "sum(CASE WHEN r.a = 1 THEN 1 ELSE 0 END) AS ones FROM r JOIN s ON r.b = s.b GROUP BY lower(s.note)"),
    ("cg", "SELECT t.c % 2 AS odd, count(*) AS n, sum(CASE WHEN t.note LIKE '%victim' THEN 1 ELSE 0 END) AS victims "
           "FROM s JOIN t ON s.c = t.c GROUP BY t.c % 2"),
    ("cx", "SELECT s.c, sum(CASE WHEN r.a < s.c THEN r.a ELSE 0 END) AS lo, max(r.a + s.c) AS hi "
           "FROM r JOIN s ON r.b = s.b GROUP BY s.c"),
    ("co", "SELECT s.c, sum(r.a * s.b) AS p FROM r JOIN s ON r.b = s.b GROUP BY s.c"),
)
COMPUTED_SYSTEMS = {"cf": "fivm", "cg": "fivm", "cx": "first-order", "co": "first-order"}


def views_setup(views: tuple[tuple[str, str], ...], systems: dict[str, str]) -> Callable[[str], None]:
    """The tables, init and ``views``, each made by the system ``systems`` names (first-order if none)."""
    def run(dsn: str) -> None:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(SETUP_SQL)  # type: ignore[arg-type]
            command.init(target=conn)
            for name, query in views:
                assert command.create(name, query, target=conn).system == systems.get(name, "first-order"), name
    return run


def join_views_spec(level: str, views: tuple[tuple[str, str], ...] = JOIN_VIEWS, systems: dict[str, str] | None = None,
                    title: str = "outer-, semi- and anti-join views") -> Spec:
    """Writer 1 inserts r(1, 2), then s(2, 3) and deletes its t(3, 1); writer 2 the same in the
    opposite table order: the first r(1, 2) hides s's rows of b = 2 from nx, the first s(2, 3) ends
    r's NULL-extended rows of b = 2 in fj and shows t's rows of c = 3 in ex, the second victim's
    delete NULL-extends s's rows of c = 3 in lj. Writers of one
    view take turns (its lock, until commit): the orders are the two serial ones, the second
    writer's first write issued (and waiting) after each of the first one's writes, and the second
    writer's snapshot taken before the first one writes."""
    w1, w2 = ("b1", "snap1", "r1", "s1", "d1", "c1"), ("b2", "snap2", "d2", "s2", "r2", "c2")
    permutations = [w1 + w2, w2 + w1, ("b2", "snap2") + w1 + w2[2:]]
    for first, second in ((w1, w2), (w2, w1)):
        permutations += [first[:p] + second[:3] + first[p:] + second[3:] for p in (3, 4, 5)]
    return Spec(
        name=f"{title} vs two writers at {LEVELS[level]}",
        setup=views_setup(views, systems or {}),
        sessions=(writer(1, level), writer(2, level)),
        permutations=tuple(permutations),
        view_after=True,
        views=views,
    )


@pytest.mark.parametrize("level", ["rc", "rr"])
def test_outer_and_anti_join_views_against_two_writers(server_dsn: str, dsn: str, level: str) -> None:
    assert_all_pass(run_spec(join_views_spec(level), server_dsn, dsn))


@pytest.mark.parametrize("level", ["rc", "rr"])
def test_computed_value_views_against_two_writers(server_dsn: str, dsn: str, level: str) -> None:
    """The same permutations over views that compute: F-IVM's leaves, first-order's joined rows."""
    assert_all_pass(run_spec(join_views_spec(level, COMPUTED_VIEWS, COMPUTED_SYSTEMS, "computed-value views"),
                             server_dsn, dsn))


def test_a_write_locks_every_table_linked_to_it_through_views(dsn: str) -> None:
    """Migration 0010: over V1(r, s) and V2(s, t), a write to r locks t too (else a writer of t and
    one of r, going on to write s, deadlock: the spec above); a deferred view links nothing (its
    writers lock nothing), and dropping V2 unlinks t."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, d int); "
                     "CREATE TABLE u (d int, e int)")
        command.create("v1", "SELECT r.a, count(*) AS n FROM r JOIN s ON r.b = s.b GROUP BY r.a", target=conn)
        command.create("v2", "SELECT s.b, count(*) AS n FROM s JOIN t ON s.c = t.c GROUP BY s.b", target=conn)
        command.create("v3", "SELECT t.c, count(*) AS n FROM t JOIN u ON t.d = u.d GROUP BY t.c", refresh="deferred",
                       target=conn)

        def covers() -> dict[str, list[str]]:
            rows = conn.execute("SELECT table_oid::regclass::text, covers::regclass[]::text[] FROM pgivm_catalog.write_covers")
            return {table: sorted(tables) for table, tables in rows.fetchall()}

        assert covers() == {"r": ["r", "s", "t"], "s": ["r", "s", "t"], "t": ["r", "s", "t"]}
        command.drop("v2", target=conn)
        assert covers() == {"r": ["r", "s"], "s": ["r", "s"]}


# --- issue 21: a reader of two deferred views; create in REPEATABLE READ and SERIALIZABLE ---------

ST_SQL = "SELECT s.b, count(*) AS n FROM s JOIN t ON s.c = t.c GROUP BY s.b"
DEFERRED_VIEWS = (("va", TRIANGLE_SQL), ("vb", ST_SQL))


def deferred_setup(dsn: str) -> None:
    """Two deferred views sharing s and t (IVMε's triangle va, F-IVM's join aggregate vb), and rows
    pending for both; their budget is far above what the writer adds, so the reads apply the logs."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(SETUP_SQL)  # type: ignore[arg-type]
        command.init(target=conn)
        command.create("va", TRIANGLE_SQL, system="ivme", refresh="deferred", budget=1000, target=conn)
        command.create("vb", ST_SQL, system="fivm", refresh="deferred", budget=1000, target=conn)
        conn.execute("INSERT INTO s VALUES (1, 2, 'pending'), (2, 3, 'pending'); "
                     "INSERT INTO t VALUES (2, 1, 'pending')")


def reader(number: int, first: str, second: str) -> Session:
    """A READ COMMITTED transaction that reads one deferred view, then the other."""
    return Session(f"reader{number}", (
        Step(f"begin{number}", "BEGIN"),
        Step(f"{first}{number}", f"SELECT * FROM {first}"),
        Step(f"{second}{number}", f"SELECT * FROM {second}"),
        Step(f"end{number}", "COMMIT"),
    ))


# Inserts into both shared tables rows that change both views.
DEFERRED_WRITER = Session("w", (
    Step("bw", "BEGIN ISOLATION LEVEL READ COMMITTED"),
    Step("sw", "INSERT INTO s VALUES (2, 3, 'w'), (3, 1, 'w')"),
    Step("tw", "INSERT INTO t VALUES (3, 1, 'w'), (1, 1, 'w')"),
    Step("cw", "COMMIT", changes_state=True),
), writer=True, footprint=("SELECT (SELECT count(*) FROM s WHERE note = 'w'), "
                           "(SELECT count(*) FROM t WHERE note = 'w')", (2, 2), (0, 0)))


def merges(a: tuple[tuple[str, ...], ...], b: tuple[tuple[str, ...], ...]) -> list[tuple[str, ...]]:
    """Every interleaving of the units of ``a`` with those of ``b`` (each kept in its order), flattened."""
    if not a or not b:
        return [sum(a + b, ())]
    return [a[0] + rest for rest in merges(a[1:], b)] + [b[0] + rest for rest in merges(a, b[1:])]


def deferred_reader_spec() -> Spec:
    """Each reader's three statements interleaved with the writer's in every way (20 each). A BEGIN
    takes neither a lock nor (READ COMMITTED) a snapshot: it goes right before its session's first
    statement, which loses no interleaving of the steps that do."""
    permutations = [
        permutation
        for number, first, second in ((1, "va", "vb"), (2, "vb", "va"))
        for permutation in merges(((f"begin{number}", f"{first}{number}"), (f"{second}{number}",), (f"end{number}",)),
                                  (("bw", "sw"), ("tw",), ("cw",)))
    ]
    return Spec(
        name="a reader of two deferred views vs a writer",
        setup=deferred_setup,
        sessions=(reader(1, "va", "vb"), reader(2, "vb", "va"), DEFERRED_WRITER),
        permutations=tuple(permutations),
        view_after=True,
        views=DEFERRED_VIEWS,
    )


def test_reader_of_two_deferred_views_against_a_writer(server_dsn: str, dsn: str) -> None:
    """A reader holds one deferred view's state while the writer writes the shared tables, then
    reads the other view: before issue 21's fix, some orders ended in a deadlock (40P01)."""
    assert_all_pass(run_spec(deferred_reader_spec(), server_dsn, dsn))


REFUSED_IN_SNAPSHOT = r"^create cannot run in a (REPEATABLE READ|SERIALIZABLE) transaction: "


def creator(level: str) -> Session:
    """A transaction at ``level`` that takes its snapshot, then runs create on its own connection.
    pgivm refuses create in any REPEATABLE READ or SERIALIZABLE transaction (it cannot tell whether
    the snapshot is older than its locks), so the refusal needs no excuse; the transcript notes
    whether a commit may have landed after the snapshot."""
    return Session("creator", (
        Step("cb", f"BEGIN ISOLATION LEVEL {LEVELS[level]}"),
        Step("csnap", "SELECT count(*) FROM r"),  # the snapshot
        Step("create", lambda conn: command.create("tri", TRIANGLE_SQL, epsilon=0.5, target=conn),
             on_connection=True, may_refuse=REFUSED_IN_SNAPSHOT),
        Step("ccommit", "COMMIT"),
    ))


# Writer 1 opens and writes r (holding its lock), then writes s and t and commits.
W_OPEN, W_COMMIT = ("b1", "snap1", "r1"), ("s1", "d1", "c1")
SNAP, CREATE, END = ("cb", "csnap"), ("create",), ("ccommit",)
# Where writer 1's commit lands for the creating transaction. The three other merges of these units
# block themselves when create takes its locks (as it did before issue 21): ccommit issued while
# create waits for the writer's commit, issued later; or the writer's next step issued while its
# write waits for ccommit, issued later (isolationtester's invalid permutations).
IN_SNAPSHOT = (
    W_OPEN + W_COMMIT + SNAP + CREATE + END,  # before the snapshot
    W_OPEN + SNAP + W_COMMIT + CREATE + END,  # between the snapshot and create (the writer open at the snapshot)
    SNAP + W_OPEN + W_COMMIT + CREATE + END,  # between the snapshot and create (the writer opened after it)
    W_OPEN + SNAP + CREATE + W_COMMIT + END,  # after create began with the writer's lock held (create may wait)
    SNAP + W_OPEN + CREATE + W_COMMIT + END,  # the same, the writer opened after the snapshot
    SNAP + CREATE + W_OPEN + END + W_COMMIT,  # after create: the writer's first write may wait for ccommit
    SNAP + CREATE + END + W_OPEN + W_COMMIT,  # after the creating transaction
)


@pytest.mark.parametrize("level", ["rr", "ser"])
def test_create_in_a_snapshot_against_a_committing_writer(server_dsn: str, dsn: str, level: str) -> None:
    """create on the connection of a REPEATABLE READ or SERIALIZABLE transaction that took its
    snapshot: refused in pgivm's one line, or (if it succeeds) a view that is exact after the commit;
    never a raw database error, never a view missing the writer's rows (before issue 21, create built
    the view from the old snapshot)."""
    spec = Spec(f"create in a {LEVELS[level]} transaction vs a writer", setup(with_view=False),
                (writer(1, "rc"), creator(level)), IN_SNAPSHOT, view_after=None)
    assert_all_pass(run_spec(spec, server_dsn, dsn))


@pytest.mark.parametrize("level", ["rr", "ser"])
def test_create_under_a_default_isolation_against_a_committing_writer(server_dsn: str, dsn: str, level: str) -> None:
    """The database's default_transaction_isolation is REPEATABLE READ or SERIALIZABLE; create, a
    plain command (its own transaction), goes in at every position of a READ COMMITTED writer, which
    may hold its lock while create waits and then commit. The view must be exact (before issue 21,
    create's transaction took its snapshot before its locks and missed that commit)."""
    step, _, _ = COMMANDS["create"]
    spec = Spec(f"create under default_transaction_isolation = {LEVELS[level]} vs a writer", setup(with_view=False),
                (writer(1, "rc"), Session("pgivm", (step,))), tuple(everywhere("create", ONE_WRITER)), view_after=True,
                database_settings=(("default_transaction_isolation", LEVELS[level].lower()),))
    assert_all_pass(run_spec(spec, server_dsn, dsn))


# --- the runner itself --------------------------------------------------------------------------


def test_runner_marks_a_blocked_step_waiting_and_reports_its_completion(server_dsn: str, dsn: str) -> None:
    """The runner's own behaviour: a writer blocked on another writer's view lock is marked waiting,
    completes after the other's commit, and the permutation passes."""
    spec = Spec("runner", setup(with_view=True), (writer(1, "rc"), writer(2, "rc")),
                (("b1", "snap1", "r1", "b2", "snap2", "d2", "s1", "d1", "c1", "s2", "r2", "c2"),), True)
    [result] = run_spec(spec, server_dsn, dsn)
    assert not result.problems, result.report()
    assert "step d2: <waiting ...>" in result.transcript, result.report()
    completed = next(i for i, line in enumerate(result.transcript) if line.startswith("step d2: <... completed>"))
    assert completed > result.transcript.index("step c1: COMMIT"), result.report()


def test_runner_reports_a_writer_error_and_retries_the_transaction(server_dsn: str, dsn: str) -> None:
    """Under REPEATABLE READ, writer 2's snapshot predates writer 1's commit: its write fails with
    40001 (allowed: another writer committed in between), and the retry at the end succeeds."""
    spec = Spec("runner", setup(with_view=True), (writer(1, "rr"), writer(2, "rr")),
                (("b1", "snap1", "r1", "b2", "snap2", "s1", "d1", "c1", "d2", "s2", "r2", "c2"),), True)
    [result] = run_spec(spec, server_dsn, dsn)
    assert not result.problems, result.report()
    assert result.errors_40001 == 1, result.report()
    assert "step s2: skipped (transaction aborted)" in result.transcript, result.report()
    assert "retry w2: ok" in result.transcript, result.report()


def test_runner_reports_a_failing_reader_step(server_dsn: str, dsn: str) -> None:
    """A reader's steps are held to the contract too: one that fails is a problem."""
    spec = Spec("runner", setup(with_view=False), (Session("reader", (Step("q", "SELECT * FROM missing"),)),),
                (("q",),), False)
    [result] = run_spec(spec, server_dsn, dsn)
    assert any(p.startswith("step q of reader failed: ERROR 42P01") for p in result.problems), result.report()


# --- a command that cannot get its locks ----------------------------------------------------------

HAS_LOCK_BUDGET = "lock_wait" in inspect.signature(command.create).parameters
needs_budget = pytest.mark.skipif(not HAS_LOCK_BUDGET, reason="needs the lock budget argument")


def prepared(dsn: str, with_view: bool) -> psycopg.Connection:
    setup(with_view)(dsn)
    return psycopg.connect(dsn, autocommit=True)


@needs_budget
def test_create_that_cannot_lock_fails_in_one_line_and_installs_nothing(dsn: str) -> None:
    with prepared(dsn, with_view=False) as conn, psycopg.connect(dsn) as holder:
        holder.execute("LOCK TABLE s IN ACCESS EXCLUSIVE MODE")  # r can be locked, s cannot
        with pytest.raises(PgivmError) as caught:
            command.create("tri", TRIANGLE_SQL, target=dsn, lock_wait=0.5)
        assert "\n" not in str(caught.value)
        holder.rollback()
        assert leftovers(conn) == []
        command.create("tri", TRIANGLE_SQL, target=dsn)
        assert check_database(conn, {}, True, []) == []


@needs_budget
@pytest.mark.parametrize("name", ["rebalance", "alter"])
def test_action_that_cannot_lock_fails_in_one_line_and_changes_nothing(dsn: str, name: str) -> None:
    """A writer transaction that has written (it holds the view's lock) stays open: the command gives
    up after its budget, changing nothing; the writer then goes on and commits normally."""
    options = {"epsilon": 0.25} if name == "alter" else {}
    with prepared(dsn, with_view=True) as conn, psycopg.connect(dsn) as w1:
        before = conn.execute("SELECT epsilon, major_rebalances FROM pgivm_tri.state").fetchone()
        w1.execute("INSERT INTO r VALUES (1, 2, 'w1')")
        with pytest.raises(PgivmError) as caught:
            command.action("tri", name, target=dsn, lock_wait=0.5, **options)
        assert "\n" not in str(caught.value)
        w1.execute("INSERT INTO s VALUES (2, 3, 'w1')")
        w1.execute("DELETE FROM t WHERE note = 'w1-victim'")
        w1.commit()
        assert conn.execute("SELECT epsilon, major_rebalances FROM pgivm_tri.state").fetchone() == before
        assert check_database(conn, {"w1": True}, True, []) == []


@needs_budget
def test_drop_that_cannot_lock_fails_in_one_line_and_a_second_drop_finishes(dsn: str) -> None:
    """drop works in two transactions (see command.drop): the first stops maintenance, the second
    locks the base tables and removes the rest. When the second gives up, the message says so in
    one line, the writer in the way is unharmed, and drop again removes everything."""
    with prepared(dsn, with_view=True) as conn, psycopg.connect(dsn) as w1:
        w1.execute("INSERT INTO r VALUES (1, 2, 'w1')")
        with pytest.raises(PgivmError) as caught:
            command.drop("tri", target=dsn, lock_wait=0.5)
        assert "\n" not in str(caught.value)
        w1.execute("INSERT INTO s VALUES (2, 3, 'w1')")
        w1.execute("DELETE FROM t WHERE note = 'w1-victim'")
        w1.commit()
        command.drop("tri", target=dsn)
        assert check_database(conn, {"w1": True}, False, []) == []


# --- the bug report: four writers in a loop while commands run ------------------------------------

STORM_WRITERS = 4
VERTICES = 8
STORM_MIN_SECONDS = 3.0  # the writers run at least this long, and on until the commands are done
STORM_LOCK_WAIT = 240.0  # each command's lock budget in the storm
STORM_TIMEOUT = 900.0  # all six commands within their budgets, and then some


@dataclass
class WriterLog:
    """What one looping writer did: the rows its committed transactions inserted and deleted, and
    the errors of the ones that failed."""

    inserted: list[tuple[str, str]] = field(default_factory=list)  # (table, note) of committed inserts
    deleted: list[tuple[str, str]] = field(default_factory=list)  # (table, note) of committed deletes
    commits: int = 0
    errors: list[psycopg.Error] = field(default_factory=list)


# Each transaction inserts into two tables and deletes from the third; the tables rotate, so that
# writers take their table locks in every order.
ROTATIONS = [("r", "s", "t"), ("s", "t", "r"), ("t", "r", "s")]
COLUMNS = {"r": ("a", "b"), "s": ("b", "c"), "t": ("c", "a")}


def storm_writer(dsn: str, number: int, level: str, stop: threading.Event, log: WriterLog) -> None:
    """3-statement transactions in a loop; a failed one is rolled back and the loop goes on."""
    with psycopg.connect(make_conninfo(dsn, application_name=f"storm{number}"), autocommit=True) as conn:
        i = 0
        while not stop.is_set():
            first, second, victim = ROTATIONS[i % 3]
            tag = f"storm{number}-{i}"
            # few vertices, so that the writers share triangles; each transaction inserts two rows and
            # deletes up to two, so that the tables (and the recounts) stay small
            x, y, z = (number + i) % VERTICES, (number * 3 + i) % VERTICES, (i * 7) % VERTICES
            try:
                conn.execute(f"BEGIN ISOLATION LEVEL {LEVELS[level]}")
                conn.execute(f"INSERT INTO {first} VALUES (%s, %s, %s)", [x, y, tag])
                conn.execute(f"INSERT INTO {second} VALUES (%s, %s, %s)", [y, z, tag])
                gone = conn.execute(
                    f"DELETE FROM {victim} WHERE ctid = "
                    f"ANY (ARRAY(SELECT ctid FROM {victim} WHERE {COLUMNS[victim][0]} = %s LIMIT 2)) RETURNING note", [z]).fetchall()
                conn.execute("COMMIT")
            except psycopg.Error as exc:
                log.errors.append(exc)
                if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                    conn.execute("ROLLBACK")
            else:
                log.commits += 1
                log.inserted += [(first, tag), (second, tag)]
                log.deleted += [(victim, row[0]) for row in gone]
            i += 1


@pytest.mark.parametrize("level", ["rc", "rr"])
def test_four_writers_while_commands_run(dsn: str, level: str) -> None:
    """The bug report: four writers run 3-statement transactions in a loop while create, verify
    (repeatedly, in a thread of its own), rebalance, alter, drop and create again run. Before the
    fix this produced deadlocks (40P01) that aborted writers."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(SETUP_SQL)  # type: ignore[arg-type]
        for table in "rst":  # a unique note on every row, so that every delete can be checked
            conn.execute(f"UPDATE {table} SET note = note || '-' || ctid::text")
        before = {table: {row[0] for row in conn.execute(f"SELECT note FROM {table}")} for table in "rst"}
        command.init(target=conn)

        stop, commands_done = threading.Event(), threading.Event()
        logs = [WriterLog() for _ in range(STORM_WRITERS)]
        reports: list[command.VerifyReport] = []
        ran: list[str] = []  # each command, how it ended, and after how long (for the failure message)
        not_dropping = threading.Lock()  # verify reads the view's state: not while it is being dropped
        failures: dict[str, BaseException] = {}

        def commands() -> None:
            # The writers never wait on a command for more than one short attempt, so a command can
            # be kept out for a while by four writers in a tight loop: on 2 busy cores a create or
            # drop has once needed more than the default 60 s. What is asserted is the outcome (no
            # writer fails, every command completes, verify is ok), not how long the locks took.
            wait = STORM_LOCK_WAIT
            sequence: list[tuple[str, Callable[[], Any]]] = [
                ("create", lambda: command.create("tri", TRIANGLE_SQL, epsilon=0.5, target=dsn, lock_wait=wait)),
                ("rebalance", lambda: command.action("tri", "rebalance", target=dsn, lock_wait=wait)),
                ("alter", lambda: command.action("tri", "alter", epsilon=0.25, target=dsn, lock_wait=wait)),
                ("drop", lambda: command.drop("tri", target=dsn, lock_wait=wait)),
                ("create", lambda: command.create("tri", TRIANGLE_SQL, epsilon=0.5, target=dsn, lock_wait=wait)),
                ("rebalance", lambda: command.action("tri", "rebalance", target=dsn, lock_wait=wait)),
            ]
            try:
                for name, run in sequence:
                    began = time.monotonic()
                    try:
                        with not_dropping if name == "drop" else nullcontext():
                            run()
                    except BaseException as exc:
                        ran.append(f"{name}: {type(exc).__name__}: {exc} (after {time.monotonic() - began:.1f} s)")
                        raise
                    ran.append(f"{name}: ok ({time.monotonic() - began:.1f} s)")
            except BaseException as exc:  # noqa: BLE001  # reported below
                failures["commands"] = exc
            finally:
                commands_done.set()

        def verifier() -> None:
            try:
                while not commands_done.is_set():
                    with not_dropping:
                        try:
                            reports.append(command.verify("tri", target=dsn))
                        except UnknownView:
                            pass  # before the first create, or between drop and create
                    time.sleep(0.01)
            except BaseException as exc:  # noqa: BLE001  # reported below
                failures["verifier"] = exc

        threads = [threading.Thread(target=storm_writer, args=(dsn, i, level, stop, logs[i]), name=f"storm{i}",
                                    daemon=True) for i in range(STORM_WRITERS)]
        threads += [threading.Thread(target=commands, name="commands", daemon=True),
                    threading.Thread(target=verifier, name="verifier", daemon=True)]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        commands_done.wait(STORM_TIMEOUT)
        stop.wait(max(0.0, STORM_MIN_SECONDS - (time.monotonic() - started)))  # let the writers run on a little
        stop.set()
        # a verify that began just before the commands ended finishes its plain-SQL recount first:
        # under four tight-loop writers on 2 busy cores that has taken more than 30 s (CI). A hang is
        # what this catches, not a slow recount.
        deadline = time.monotonic() + 180
        for thread in threads:
            thread.join(max(0.1, deadline - time.monotonic()))
        hung = [t.name for t in threads if t.is_alive()]
        activity = conn.execute("SELECT application_name, state, wait_event_type, wait_event, left(query, 80) "
                                "FROM pg_stat_activity WHERE datname = current_database() "
                                "AND pid <> pg_backend_pid()").fetchall() if hung else []
        assert not hung, f"still running: {hung}; commands: {ran}; backends: {activity}"

        # The writers first (the bug report): no deadlock, no lock timeout; under READ COMMITTED no error.
        errors = [e for log in logs for e in log.errors]
        states = sorted({str(e.sqlstate) for e in errors})
        if level == "rc":
            assert not errors, f"READ COMMITTED writers failed ({states}): {errors[:3]}; commands: {ran}"
        assert all(e.sqlstate == "40001" for e in errors), f"writers failed with {states}: {errors[:3]}; commands: {ran}"
        assert sum(log.commits for log in logs) > 0
        # Then the commands: each one got its locks within its budget, and every verify was ok.
        assert not failures, f"{ {k: f'{type(v).__name__}: {v}' for k, v in failures.items()} }; commands: {ran}"
        assert reports and all(r.ok for r in reports), [describe(r) for r in reports if not r.ok]

        report = command.verify("tri", target=conn)
        assert report.ok, describe(report)
        assert conn.execute("SELECT * FROM tri").fetchone() == conn.execute(TRIANGLE_SQL).fetchone()
        # Exactly the committed transactions' changes are in the base tables.
        for table in "rst":
            expected = (before[table] | {note for log in logs for (tb, note) in log.inserted if tb == table}) \
                - {note for log in logs for (tb, note) in log.deleted if tb == table}
            found = [row[0] for row in conn.execute(f"SELECT note FROM {table}")]
            assert len(found) == len(set(found)) and set(found) == expected, (table, sorted(set(found) ^ expected)[:5])


def test_commands_after_a_drop_that_could_not_finish_say_so(dsn: str) -> None:
    """A drop whose second step gave up leaves the view unmaintained: verify and status say so in
    one line, list shows it, and a second drop removes everything."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(SETUP_SQL)  # type: ignore[arg-type]
        command.create("tri", TRIANGLE_SQL, target=conn)
        with psycopg.connect(dsn, autocommit=True) as holder:
            holder.execute("BEGIN; LOCK TABLE s IN ROW EXCLUSIVE MODE")  # as a writer mid-transaction would
            with pytest.raises(PgivmError, match="no longer maintained"):
                command.drop("tri", target=conn, lock_wait=0.5)
            holder.execute("ROLLBACK")
        # Writers no longer serialize for the stopped view: a writer of r mid-transaction keeps no
        # writer of t waiting (they queued on its write_locks rows, and a drop behind them waited)
        with psycopg.connect(dsn, autocommit=True) as w1, psycopg.connect(dsn, autocommit=True) as w2:
            w1.execute("BEGIN; INSERT INTO r VALUES (7, 7, 'w1')")
            w2.execute("SET lock_timeout = '2s'")
            w2.execute("INSERT INTO t VALUES (7, 7, 'w2')")
            w1.execute("ROLLBACK")
        for call in (lambda: command.verify("tri", target=conn), lambda: command.status("tri", target=conn)):
            with pytest.raises(PgivmError, match="run `pgivm drop tri` again"):
                call()
        (listed,) = command.list_views(target=conn)
        assert listed.count is None and listed.definition.startswith("(being dropped")
        command.drop("tri", target=conn)
        assert command.list_views(target=conn) == []
        assert conn.execute("SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'pgivm%'").fetchone()[0] == 0
