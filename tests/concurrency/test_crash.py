"""Crashes: ``kill -9`` of the postmaster while writers stream changes under a view, and in the
middle of ``create``. After PostgreSQL's crash recovery the view must be exact, or not there at all.

Each test runs an embedded server of its own (``conftest.server_dir``) (a crash must not take down the
server the other tests share), stopped in a finalizer whatever happens. ``fsync`` is off to save
time: a killed process loses nothing the operating system already has, so this changes nothing
for a process crash; ``synchronous_commit`` keeps its default (on), so a commit the client saw
acknowledged survives the crash.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from conftest import TRIANGLE_SQL, free_port, server_dir
from pgivm import command
from pgivm.errors import PgivmError
from pgivm.server import EmbeddedServer

SETTINGS = {"fsync": "off", "max_connections": "100"}
EXIT_TIMEOUT = 60.0  # for the killed server's children to exit
THREAD_TIMEOUT = 120.0


# --- the server and how to crash it --------------------------------------------------------------


def server_processes(data_dir: Path) -> list[psutil.Process]:
    """The live processes of the server of ``data_dir`` (every PostgreSQL process works in it)."""
    found = []
    for process in psutil.process_iter(["cwd", "status"]):
        if process.info["cwd"] and Path(process.info["cwd"]) == data_dir \
                and process.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(process)
    return found


def wait_for_exit(data_dir: Path) -> None:
    """Wait until the killed server's children have gone (PostgreSQL refuses to start while one of
    them still holds the old shared memory). A backend busy in a long statement notices the
    postmaster's death only at its next wait; one still there after EXIT_TIMEOUT is killed too."""
    _, alive = psutil.wait_procs(server_processes(data_dir), timeout=EXIT_TIMEOUT)
    for process in alive:
        try:
            process.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=EXIT_TIMEOUT)
    assert not server_processes(data_dir), "processes of the killed server would not exit"


def crash(server: EmbeddedServer, everything: bool = False) -> None:
    """kill -9 the postmaster, as the OOM killer would; with ``everything``, every process of the
    server at once, as when its container or machine dies.

    Only the postmaster killed, a backend in the middle of a statement runs on until its next wait
    and may even commit (the client then sees the commit acknowledged, and recovery keeps it)."""
    pid = server.status().pid
    assert pid is not None, "the server is not running"
    children = psutil.Process(pid).children(recursive=True) if everything else []
    os.kill(pid, signal.SIGKILL)
    for child in children:
        try:
            child.kill()
        except psutil.NoSuchProcess:  # a backend that ended on its own in between (or after the postmaster went)
            pass
    wait_for_exit(server.data_dir)
    assert not server.status().running


@pytest.fixture
def server() -> Iterator[EmbeddedServer]:
    """A server of the test's own, stopped (and its processes gone) after the test, passed or failed."""
    with server_dir() as directory:
        embedded = EmbeddedServer(directory / "pgdata", port=free_port(), settings=SETTINGS)
        try:
            embedded.start()
            yield embedded
        finally:
            try:
                embedded.stop()
            finally:
                wait_for_exit(embedded.data_dir)  # e.g. the children of a postmaster killed by a failed test


@pytest.fixture
def dsn(server: EmbeddedServer) -> str:
    with psycopg.connect(server.dsn(), autocommit=True) as admin:
        admin.execute("CREATE DATABASE crash")
    return server.dsn("crash")


def assert_exact(dsn: str) -> int:
    """verify is ok and the view's count equals a plain-SQL recount."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        report = command.verify("tri", target=conn)
        assert report.ok, (report.maintained, report.recount, [str(f) for f in report.failures])
        maintained = conn.execute("SELECT * FROM tri").fetchone()[0]  # type: ignore[index]
        recount = conn.execute(TRIANGLE_SQL).fetchone()[0]  # type: ignore[index]
        assert maintained == recount
        return int(recount)


def create_tables(conn: psycopg.Connection, rows: int, vertices: int, seed: int) -> None:
    """r(a, b), s(b, c), t(c, a) with random edges; ``note`` names each row uniquely."""
    conn.execute("SELECT setseed(%s)", [seed / 1000])
    for table, (x, y) in {"r": ("a", "b"), "s": ("b", "c"), "t": ("c", "a")}.items():
        conn.execute(f"CREATE TABLE {table} ({x} int, {y} int, note text)")
        conn.execute(f"INSERT INTO {table} SELECT (random() * %(v)s)::int, (random() * %(v)s)::int, "
                     f"'{table}-init-' || g FROM generate_series(1, %(n)s) g", {"v": vertices, "n": rows})
    conn.execute("ANALYZE r, s, t")


# --- (a) kill -9 while a writer streams changes ----------------------------------------------------


@dataclass
class Change:
    """One statement of the writer: the notes of the rows it inserts or deletes, known in advance, so
    that a statement cut off by the crash is either wholly there or wholly not."""

    table: str
    inserted: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)


@dataclass
class Stream:
    committed: list[Change] = field(default_factory=list)
    in_flight: Change | None = None  # sent, but the crash came before its commit was acknowledged
    error: BaseException | None = None


COLUMNS = {"r": ("a", "b"), "s": ("b", "c"), "t": ("c", "a")}
VERTICES_A = 40  # few vertices: most changes form or break triangles


def stream_changes(dsn: str, seed: int, stream: Stream) -> None:
    """Single-row and multi-row inserts and deletes into r, s and t, each its own transaction, until
    the connection dies. Multi-row ones of up to 500 rows go through the set-at-a-time path too."""
    rnd = random.Random(seed)
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            for i in range(1_000_000):
                table = rnd.choice("rst")
                x, y = COLUMNS[table]
                size = 1 if rnd.random() < 0.6 else rnd.choice([2, 10, 50, 500])
                if rnd.random() < 0.6:
                    change = Change(table, inserted=[f"{table}-{seed}-{i}-{k}" for k in range(size)])
                    rows = [(rnd.randrange(VERTICES_A), rnd.randrange(VERTICES_A), note) for note in change.inserted]
                    stream.in_flight = change
                    if size == 1:
                        conn.execute(f"INSERT INTO {table} ({x}, {y}, note) VALUES (%s, %s, %s)", rows[0])
                    else:  # one statement, so one transaction
                        conn.execute(f"INSERT INTO {table} ({x}, {y}, note) "
                                     "SELECT * FROM unnest(%s::int[], %s::int[], %s::text[])", [list(c) for c in zip(*rows)])
                else:
                    notes = [row[0] for row in conn.execute(
                        f"SELECT note FROM {table} ORDER BY random() LIMIT %s", [size])]
                    change = Change(table, deleted=notes)
                    stream.in_flight = change
                    conn.execute(f"DELETE FROM {table} WHERE note = ANY(%s)", [notes])
                stream.committed.append(change)
                stream.in_flight = None
    except psycopg.OperationalError:
        pass  # the server went away
    except BaseException as exc:  # noqa: BLE001  # reported by the test
        stream.error = exc


def committed_state(before: dict[str, set[str]], stream: Stream, with_in_flight: bool) -> dict[str, set[str]]:
    """The rows each table must hold: the initial ones, then every committed change (and the one cut
    off by the crash, if ``with_in_flight``)."""
    expected = {table: set(notes) for table, notes in before.items()}
    changes = stream.committed + ([stream.in_flight] if with_in_flight and stream.in_flight else [])
    for change in changes:
        expected[change.table] |= set(change.inserted)
        expected[change.table] -= set(change.deleted)
    return expected


def test_kill_during_a_stream_of_writes_leaves_the_view_exact(server: EmbeddedServer, dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        create_tables(conn, rows=400, vertices=VERTICES_A, seed=1)
        command.create("tri", TRIANGLE_SQL, epsilon=0.5, target=conn)
    for round_ in range(3):
        with psycopg.connect(dsn, autocommit=True) as conn:
            before = {t: {row[0] for row in conn.execute(f"SELECT note FROM {t}")} for t in "rst"}
        stream = Stream()
        writer = threading.Thread(target=stream_changes, args=(dsn, round_, stream), daemon=True)
        writer.start()
        while len(stream.committed) < 150 + 50 * round_ and writer.is_alive():
            time.sleep(0.01)  # a count of committed statements, not a time, decides when to kill
        assert writer.is_alive(), f"the writer stopped early: {stream.error!r}"
        crash(server)
        writer.join(THREAD_TIMEOUT)
        assert not writer.is_alive()
        assert stream.error is None, repr(stream.error)

        server.start()  # crash recovery
        assert_exact(dsn)
        # Every acknowledged change is there; the one cut off is there whole or not at all.
        with psycopg.connect(dsn, autocommit=True) as conn:
            found = {t: [row[0] for row in conn.execute(f"SELECT note FROM {t}")] for t in "rst"}
        assert all(len(notes) == len(set(notes)) for notes in found.values())
        assert {t: set(n) for t, n in found.items()} in (
            committed_state(before, stream, with_in_flight=False),
            committed_state(before, stream, with_in_flight=True),
        ), f"round {round_}: the base tables hold neither the committed state nor it plus the cut-off statement"

    # Maintenance goes on after the restarts.
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO r (a, b, note) SELECT g % 40, (g * 7) % 40, 'after-' || g FROM generate_series(1, 600) g")
        conn.execute("DELETE FROM s WHERE note IN (SELECT note FROM s ORDER BY note LIMIT 30)")
        conn.execute("INSERT INTO t (c, a, note) VALUES (1, 2, 'after')")
    assert_exact(dsn)


# --- (b) kill -9 in the middle of create ------------------------------------------------------------

BIG_ROWS = 100_000  # per table: create takes 1-2 s on a 2-core machine
BIG_VERTICES = 6_000
KILL_AFTER = 0.5  # seconds into create's transaction


def leftovers(conn: psycopg.Connection) -> list[str]:
    """Anything of view tri: catalog rows, its state schema, its triggers on r, s, t, the view."""
    catalog = conn.execute("SELECT to_regclass('pgivm_catalog.views') IS NOT NULL").fetchone()[0]  # type: ignore[index]
    found = conn.execute(
        """
        SELECT 'schema ' || nspname FROM pg_namespace WHERE nspname = 'pgivm_tri'
        UNION ALL SELECT 'relation ' || relname FROM pg_class WHERE relname = 'tri'
        UNION ALL SELECT 'trigger ' || tgname || ' on ' || tgrelid::regclass FROM pg_trigger
                  WHERE NOT tgisinternal AND tgname LIKE 'pgivm%'
                  AND tgrelid IN ('r'::regclass, 's'::regclass, 't'::regclass)
        """).fetchall()
    rows = [row[0] for row in found]
    if catalog:
        rows += [f"catalog row of {row[0]}" for row in conn.execute("SELECT name FROM pgivm_catalog.views WHERE name = 'tri'")]
    if conn.execute("SELECT to_regclass('pgivm_catalog.base_tables') IS NOT NULL").fetchone()[0]:  # type: ignore[index]
        rows += [f"base table catalog row of {row[0]}" for row in conn.execute(
            "SELECT view_name FROM pgivm_catalog.base_tables WHERE view_name = 'tri'")]
    return rows


def wait_until_create_is_running(admin: psycopg.Connection, creator: threading.Thread) -> None:
    """Until pg_stat_activity shows create's backend active in a transaction at least KILL_AFTER old."""
    while creator.is_alive():
        row = admin.execute(
            "SELECT now() - xact_start >= make_interval(secs => %s) FROM pg_stat_activity "
            "WHERE application_name = 'pgivm-create' AND state = 'active'", [KILL_AFTER]).fetchone()
        if row and row[0]:
            return
        time.sleep(0.02)
    pytest.fail(f"create finished before it could be killed: make the tables larger than {BIG_ROWS} rows")


@pytest.mark.parametrize("round_", [1, 2, 3])
@pytest.mark.parametrize("kill", ["postmaster", "everything"])
def test_kill_during_create_leaves_no_half_installed_view(server: EmbeddedServer, dsn: str, kill: str,
                                                          round_: int) -> None:
    """Killed in the middle of create, the server restarts (an unlogged table created in the killed
    transaction used to make recovery fail with "could not create file ...: File exists"), and the
    view is either wholly there and exact (create's commit got through: possible when only the
    postmaster is killed) or not there at all; then create succeeds."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        create_tables(conn, rows=BIG_ROWS, vertices=BIG_VERTICES, seed=round_)
        command.init(target=conn)
        conn.execute("CHECKPOINT")  # the load is on disk: recovery replays create's work only

    outcome: dict[str, object] = {}

    def run_create() -> None:
        try:
            outcome["result"] = command.create("tri", TRIANGLE_SQL, epsilon=0.5,
                                               target=make_conninfo(dsn, application_name="pgivm-create"))
        except BaseException as exc:  # noqa: BLE001  # expected: the server dies under it
            outcome["error"] = exc

    creator = threading.Thread(target=run_create, daemon=True)
    with psycopg.connect(dsn, autocommit=True) as admin:
        creator.start()
        wait_until_create_is_running(admin, creator)
    crash(server, everything=kill == "everything")
    creator.join(THREAD_TIMEOUT)
    assert not creator.is_alive()
    if kill == "everything":
        assert isinstance(outcome.get("error"), (psycopg.Error, PgivmError)), outcome
    else:
        assert isinstance(outcome.get("error"), (psycopg.Error, PgivmError)) or "result" in outcome, outcome

    server.start()  # raises a PgivmError naming the log's FATAL line if recovery fails
    with psycopg.connect(dsn, autocommit=True) as conn:
        if "result" in outcome:  # committed before the backend died
            assert assert_exact(dsn) > 0
            command.drop("tri", target=conn)
        assert leftovers(conn) == []
        command.create("tri", TRIANGLE_SQL, epsilon=0.5, target=conn)
    assert assert_exact(dsn) > 0
