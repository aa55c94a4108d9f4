"""``pgivm server`` and the commands that fall back on the embedded server, end to end.

Each test runs the CLI in-process against an embedded server of its own (a temporary data
directory, a free port), with the shell's PG* and PGIVM_* variables removed, and stops that
server afterwards, passed or failed.
"""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from conftest import server_dir

from pgivm.cli import main
from pgivm.server import EmbeddedServer


def free_port() -> int:
    """A TCP port nothing listens on (and, unlike 54329, one a developer's own server is not using)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def pgdata(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The embedded server's data directory for this test (PGIVM_DATA_DIR), stopped afterwards."""
    for name in [name for name in os.environ if name.startswith("PG")]:
        monkeypatch.delenv(name)
    with server_dir() as directory:
        data_dir = directory / "pgdata"
        monkeypatch.setenv("PGIVM_DATA_DIR", str(data_dir))
        try:
            yield data_dir
        finally:
            EmbeddedServer(data_dir).stop()


def one_error_line(err: str, *words: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("pgivm: error: "), err
    for word in words:
        assert word in lines[0], f"{word!r} not in {lines[0]!r}"
    return lines[0]


def test_start_on_another_port_is_refused_unless_restart(pgdata: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = free_port(), free_port()
    assert main(["server", "start", "--port", str(first)]) == 0
    assert f"port {first}" in capsys.readouterr().out

    assert main(["server", "start", "--port", str(second)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    one_error_line(captured.err, f"already runs on port {first}, not {second}", "--restart")
    assert EmbeddedServer(pgdata).status().port == first  # untouched

    assert main(["server", "start", "--port", str(first)]) == 0  # the port it runs on: nothing to do
    capsys.readouterr()
    assert main(["server", "start", "--port", str(second), "--restart"]) == 0
    assert f"port {second}" in capsys.readouterr().out
    status = EmbeddedServer(pgdata).status()
    assert status.running and status.port == second
    with psycopg.connect(EmbeddedServer(pgdata).url(), connect_timeout=10) as conn:
        assert conn.execute("SELECT current_setting('port')").fetchone() == (str(second),)


def test_restart_onto_a_busy_port_leaves_the_server_running(pgdata: Path, capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    assert main(["server", "start", "--port", str(port)]) == 0
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        capsys.readouterr()
        assert main(["server", "start", "--port", str(taken), "--restart"]) == 2
        one_error_line(capsys.readouterr().err, f"port {taken}", "already in use")
    status = EmbeddedServer(pgdata).status()
    assert status.running and status.port == port


def test_server_env_exports_what_reaches_the_server(pgdata: Path, capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    assert main(["server", "env", "--port", str(port)]) == 0  # starts the server if needed
    out = capsys.readouterr().out
    exports = [shlex.split(line) for line in out.splitlines()]
    assert [words[0] for words in exports] == ["export"] * 4
    variables = dict(words[1].split("=", 1) for words in exports)
    assert variables == {
        "PGHOST": str(EmbeddedServer(pgdata).socket_dir),
        "PGPORT": str(port),
        "PGUSER": "postgres",
        "PGDATABASE": "postgres",
    }
    # what a shell does with it: eval, then any libpq client (here psycopg with an empty DSN)
    script = f'eval "$(cat)" && exec {shlex.quote(sys.executable)} -c "$1"'
    client = "import psycopg; print(psycopg.connect('').execute('SELECT current_setting(%s)', ['port']).fetchone()[0])"
    env = {name: value for name, value in os.environ.items() if not name.startswith("PG")}
    proc = subprocess.run(["bash", "-c", script, "bash", client], input=out, capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(port)


def test_psql_without_configuration_reaches_the_embedded_server(
    pgdata: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    port = free_port()
    monkeypatch.setenv("PGIVM_PORT", str(port))
    capfd.readouterr()
    assert main(["psql", "-X", "-At", "-c", "SELECT current_setting('port')"]) == 0  # starts it on demand
    assert capfd.readouterr().out.strip() == str(port)
    assert EmbeddedServer(pgdata).status().running


def test_demo_on_the_embedded_server_says_how_to_stop_it(
    pgdata: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PGIVM_PORT", str(free_port()))
    assert main(["demo", "--nodes", "60", "--edges", "300", "--updates", "20"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[-2] == 'query it yourself: pgivm psql -c "SELECT * FROM ivme_demo.demo_triangles"'
    assert lines[-1] == ("the embedded PostgreSQL server is still running, for later pgivm commands; "
                         "`pgivm server stop` stops it")
    assert EmbeddedServer(pgdata).status().running  # as it says
    assert main(["server", "stop"]) == 0
    assert capsys.readouterr().out.strip() == "stopped"


def test_demo_on_the_embedded_server_at_a_port(pgdata: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """``pgivm demo --port N`` starts the embedded server there; on another port it refuses in one line."""
    port = free_port()
    assert main(["demo", "--nodes", "60", "--edges", "300", "--updates", "20", "--port", str(port)]) == 0
    assert "the embedded PostgreSQL server is still running" in capsys.readouterr().out
    assert EmbeddedServer(pgdata).status().port == port
    assert main(["demo", "--nodes", "60", "--edges", "300", "--updates", "20", "--port", str(free_port())]) == 2
    assert f"already runs on port {port}" in capsys.readouterr().err
    assert main(["server", "stop"]) == 0
