"""Tests of the embedded PostgreSQL server and of DSN resolution, against real server processes."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from conftest import free_port, server_dir
from pgivm.connection import LIBPQ_ENV_VARS, connect, describe_target, resolve_dsn
from pgivm.errors import ConnectionFailed, PgivmError
from pgivm.server import EmbeddedServer, ServerStatus

FAST_SETTINGS = {"fsync": "off", "synchronous_commit": "off", "max_connections": "200"}


def select_one(conninfo: str) -> int:
    with psycopg.connect(conninfo, connect_timeout=10) as conn:
        row = conn.execute("select 1").fetchone()
    assert row is not None
    return int(row[0])


@pytest.fixture(scope="module", autouse=True)
def no_settings_from_the_shell() -> Iterator[None]:
    """The whole module runs without the PG* and PGIVM_* variables of the shell running pytest.

    Handles made without a port or data directory read PGIVM_PORT and PGIVM_DATA_DIR, and DSN
    resolution reads PGIVM_DSN and libpq's variables: exported (as pgivm's own hints suggest), they
    would change what these tests check. Module-scoped so that the module's server is free of them
    too; tests set what they need with monkeypatch on top.
    """
    with pytest.MonkeyPatch.context() as patch:
        for name in [name for name in os.environ if name.startswith("PG")]:
            patch.delenv(name)
        yield


@pytest.fixture(scope="module")
def server_port() -> int:
    return free_port()


@pytest.fixture(scope="module")
def server(server_port: int) -> Iterator[EmbeddedServer]:
    """One running server shared by the module; every test leaves it running."""
    with server_dir() as directory:
        embedded = EmbeddedServer(directory / "pgdata", port=server_port, settings=FAST_SETTINGS)
        try:
            embedded.start()
            yield embedded
        finally:
            embedded.stop()


@pytest.fixture
def pgdata() -> Iterator[Path]:
    """A data directory for a test's own server, which is stopped after the test, passed or failed."""
    with server_dir() as directory:
        data_dir = directory / "pgdata"
        yield data_dir
        EmbeddedServer(data_dir).stop()


# ------------------------------------------------------------------------------------------- server


def test_connects_over_unix_socket_and_tcp(server: EmbeddedServer) -> None:
    assert select_one(server.dsn()) == 1
    assert select_one(server.url()) == 1
    with psycopg.connect(server.url()) as conn:
        row = conn.execute(
            "select inet_server_addr()::text, current_setting('max_connections')"
        ).fetchone()
    assert row == ("127.0.0.1/32", "200")


def test_status_reports_the_running_server(server: EmbeddedServer, server_port: int) -> None:
    status = server.start()
    assert isinstance(status, ServerStatus)
    assert status.running and status.initialized
    assert status.pid is not None and status.pid > 0
    assert status.port == server_port
    assert status.data_dir == server.data_dir
    assert status.socket_dir == server.data_dir
    assert (status.socket_dir / f".s.PGSQL.{status.port}").is_socket()
    assert status.version is not None and status.version.startswith("PostgreSQL ")
    assert server.status() == status


def test_urls_name_the_port_and_database(server: EmbeddedServer) -> None:
    port = server.status().port
    assert server.url("my db") == f"postgresql://postgres@127.0.0.1:{port}/my%20db"
    assert server.jdbc_url("ivm") == f"jdbc:postgresql://127.0.0.1:{port}/ivm?user=postgres"
    assert server.dsn("ivm") == f"host={server.data_dir} port={port} user=postgres dbname=ivm"


def test_start_is_idempotent_and_other_handles_find_the_port(server: EmbeddedServer) -> None:
    before = server.status()
    assert server.start() == before
    # A handle that names no port finds the running one, and ignores its own settings.
    other = EmbeddedServer(server.data_dir, settings={"max_connections": "300"})
    assert other.start() == before
    assert other.dsn() == server.dsn()


def test_stop_then_restart_reuses_the_recorded_port(server: EmbeddedServer) -> None:
    port = server.status().port
    assert server.stop() is True
    assert server.stop() is False
    stopped = server.status()
    assert not stopped.running and stopped.pid is None and stopped.version is None
    with pytest.raises(psycopg.OperationalError):
        select_one(server.url())

    restarted = EmbeddedServer(server.data_dir, settings=FAST_SETTINGS).start()
    assert restarted.running and restarted.port == port
    assert select_one(server.dsn()) == 1


def test_stale_postmaster_pid_does_not_prevent_a_start(server: EmbeddedServer) -> None:
    pidfile = server.data_dir / "postmaster.pid"
    saved = pidfile.read_text().splitlines()
    dead = subprocess.Popen(["true"])
    dead.wait()
    # A PID that no longer exists, then one reused by an unrelated live process (ours): PostgreSQL
    # itself would refuse to start over the latter.
    for stale_pid in (dead.pid, os.getpid()):
        assert server.stop()
        pidfile.write_text("\n".join([str(stale_pid), *saved[1:]]) + "\n")
        assert not server.status().running
        status = server.start()
        assert status.running and status.pid != stale_pid
        assert select_one(server.dsn()) == 1


def test_failure_to_start_raises_a_one_line_pgivm_error(pgdata: Path) -> None:
    broken = EmbeddedServer(pgdata, port=free_port(), settings={"no_such_setting": "1"})
    with pytest.raises(PgivmError) as caught:
        broken.start()
    message = str(caught.value)
    assert "\n" not in message
    assert "no_such_setting" in message
    assert str(broken.log_file) in message
    assert not broken.status().running


def test_a_busy_port_is_reported_before_starting(server: EmbeddedServer, pgdata: Path) -> None:
    busy = EmbeddedServer(pgdata, port=server.status().port)
    with pytest.raises(PgivmError, match="already in use"):
        busy.start()


def test_concurrent_starts_share_one_server(pgdata: Path) -> None:
    data_dir, port = pgdata, free_port()
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from pgivm.server import EmbeddedServer
        server = EmbeddedServer(Path({str(data_dir)!r}), port={port}, settings={FAST_SETTINGS!r})
        print(server.start().pid)
        """
    )
    starters = [
        subprocess.Popen(
            [sys.executable, "-c", script],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        results = [starter.communicate(timeout=120) for starter in starters]
        assert [starter.returncode for starter in starters] == [0, 0], results
        pids = {out.strip() for out, _ in results}
        server = EmbeddedServer(data_dir)
        assert pids == {str(server.status().pid)}
        assert select_one(server.url()) == 1
    finally:
        for starter in starters:  # a starter still running could start the server after pgdata's stop
            starter.kill()
            starter.wait()


@pytest.mark.skipif(os.geteuid() != 0, reason="the system user is created only when running as root")
def test_concurrent_first_starts_create_one_system_user() -> None:
    """On a fresh machine two xdist workers started their servers at once, each ran useradd, and
    each got its own uid, the last overwriting the others: initdb of the other worker then ran as a
    uid that no longer existed. Four processes create one new user at once: all see one uid."""
    name = f"pgivm_t{os.getpid()}"
    start = time.time() + 3  # every process imported and waiting: they call at the same moment
    script = (f"import pwd, time; from pgivm import server; time.sleep(max(0, {start} - time.time())); "
              f"server._ensure_system_user({name!r}); print(pwd.getpwnam({name!r}).pw_uid)")
    creators = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) for _ in range(4)]
    try:
        uids = [creator.communicate(timeout=60)[0].strip() for creator in creators]
        assert [creator.returncode for creator in creators] == [0, 0, 0, 0]
        assert len(set(uids)) == 1 and uids[0] == str(pwd.getpwnam(name).pw_uid), uids
    finally:
        subprocess.run(["userdel", name], capture_output=True)


# ------------------------------------------------------------------------------------------- DSNs


def test_explicit_dsn_beats_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGIVM_DSN", "host=from-env")
    monkeypatch.setenv("PGHOST", "from-libpq-env")
    assert resolve_dsn("host=explicit dbname=x") == "host=explicit dbname=x"


def test_pgivm_dsn_beats_libpq_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGIVM_DSN", "host=from-env")
    monkeypatch.setenv("PGHOST", "from-libpq-env")
    assert resolve_dsn() == "host=from-env"


@pytest.mark.parametrize("variable", LIBPQ_ENV_VARS)
def test_libpq_environment_is_left_to_libpq(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    monkeypatch.setenv(variable, "5432" if variable == "PGPORT" else "somewhere")
    assert resolve_dsn(start_embedded=False) == ""
    assert describe_target(None).endswith("(from PG* environment)")


def test_without_configuration_the_embedded_server_is_started(
    monkeypatch: pytest.MonkeyPatch, pgdata: Path
) -> None:
    monkeypatch.setenv("PGIVM_DATA_DIR", str(pgdata))
    monkeypatch.setenv("PGIVM_PORT", str(free_port()))
    with pytest.raises(PgivmError, match="no PostgreSQL server is configured"):
        resolve_dsn(start_embedded=False)
    assert describe_target(None) == f"embedded server at {pgdata} (not running)"
    dsn = resolve_dsn()
    embedded = EmbeddedServer(pgdata)
    assert dsn == embedded.dsn()
    assert describe_target(dsn) == f"embedded server at {pgdata} (port {embedded.status().port})"
    with connect(autocommit=True) as conn:
        assert conn.execute("select current_user").fetchone() == ("postgres",)
    assert conn.closed


def test_describe_target_hides_passwords() -> None:
    described = describe_target("postgresql://alice:s3cret@db.example:6543/shop?sslmode=require")
    assert described == "host=db.example port=6543 dbname=shop user=alice"
    assert "s3cret" not in describe_target("host=db user=bob password=s3cret")


def test_connect_failure_is_a_one_line_connection_failed() -> None:
    port = free_port()  # nothing listens there
    with (
        pytest.raises(ConnectionFailed) as caught,
        connect(f"host=127.0.0.1 port={port} user=postgres connect_timeout=5"),
    ):
        pass
    error = caught.value
    assert error.message.startswith(
        f"could not connect to host=127.0.0.1 port={port} user=postgres: "
    )
    assert "\n" not in str(error)
    assert error.hint is not None and "PGIVM_DSN" in error.hint


def test_connect_yields_a_working_connection(
    server: EmbeddedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGIVM_DSN", server.dsn())
    with connect() as conn:
        assert conn.execute("select 1").fetchone() == (1,)
        assert not conn.autocommit
    assert conn.closed


def test_cli_server_start_status_stop(
    pgdata: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``pgivm server start|status|stop`` on a data directory of its own, then the embedded default
    is what a command without --dsn talks to."""
    from pgivm import cli

    monkeypatch.setenv("PGIVM_DATA_DIR", str(pgdata))
    monkeypatch.setenv("PGIVM_PORT", str(free_port()))
    assert cli.main(["server", "start"]) == 0
    assert "embedded PostgreSQL running" in capsys.readouterr().out
    assert cli.main(["server", "status"]) == 0
    assert capsys.readouterr().out.startswith("running:")
    assert cli.main(["init"]) == 0  # no --dsn, no PGIVM_DSN, no PG*: the embedded server
    assert "catalog migrations applied: 0001_catalog" in capsys.readouterr().out
    assert cli.main(["list"]) == 0
    assert "no pgivm views" in capsys.readouterr().out
    assert cli.main(["server", "stop"]) == 0
    assert capsys.readouterr().out.strip() == "stopped"
    assert cli.main(["server", "status"]) == 3  # pg_ctl status's code for a server not running
    assert capsys.readouterr().out.startswith("not running")
