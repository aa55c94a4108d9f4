"""Finding and connecting to the PostgreSQL server pgivm works on.

The target is, in order of precedence: an explicit DSN (``--dsn``), ``$PGIVM_DSN``, libpq's own
environment (``PGHOST``, ``PGPORT``, ...), and finally pgivm's embedded server, which is started on
demand so that a user without a database can still try pgivm.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from psycopg.conninfo import conninfo_to_dict

from pgivm.errors import ConnectionFailed, PgivmError

__all__ = ["LIBPQ_ENV_VARS", "connect", "describe_target", "resolve_dsn"]

#: libpq variables meaning "the user configured a server": set, they disable the embedded server.
LIBPQ_ENV_VARS = ("PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER", "PGSERVICE")

_CONNECT_HINT = "pass --dsn, set PGIVM_DSN, or unset the PG* variables to use the embedded server"


def resolve_dsn(dsn: str | None = None, *, start_embedded: bool = True) -> str:
    """The libpq connection string to use.

    Returns ``dsn`` if given, else ``$PGIVM_DSN``, else ``""`` when any libpq variable is set (libpq
    then reads them itself), else the DSN of the embedded server, which is started if needed unless
    ``start_embedded`` is False, in which case PgivmError is raised.
    """
    configured = _configured_dsn(dsn)
    if configured is not None:
        return configured
    if not start_embedded:
        raise PgivmError(
            "no PostgreSQL server is configured",
            "pass --dsn, or set PGIVM_DSN or the libpq variables (PGHOST, PGPORT, ...)",
        )
    from pgivm.server import EmbeddedServer, default_data_dir  # imported late: only needed here

    server = EmbeddedServer(default_data_dir())
    server.start()
    return server.dsn()


def describe_target(dsn: str | None) -> str:
    """A short human description of where ``dsn`` connects, never including a password.

    ``None`` describes what :func:`resolve_dsn` would pick, without starting anything.
    """
    if dsn is None:
        dsn = _configured_dsn(None)
        if dsn is None:
            return _describe_embedded(None, None)
    if dsn == "":
        return _describe_libpq_env()
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "an invalid connection string"
    host, port = params.get("host"), params.get("port")
    if isinstance(host, str) and _is_embedded_socket_dir(host):
        return _describe_embedded(Path(host), str(port) if port else None)
    return _describe_params({key: str(value) for key, value in params.items()})


@contextmanager
def connect(dsn: str | None = None, *, autocommit: bool = False) -> Iterator[psycopg.Connection]:
    """Connect to the resolved target (see :func:`resolve_dsn`) and close the connection afterwards.

    Like psycopg's own ``with connection:``, a transaction still open on exit is committed if the
    block succeeded and rolled back if it raised. Failure to connect raises ConnectionFailed.
    """
    conninfo = resolve_dsn(dsn)
    try:
        conn = psycopg.connect(conninfo, autocommit=autocommit)
    except psycopg.OperationalError as exc:
        raise ConnectionFailed(
            f"could not connect to {describe_target(conninfo)}: {_first_line(exc)}", _CONNECT_HINT
        ) from exc
    except psycopg.ProgrammingError as exc:  # a malformed connection string
        raise ConnectionFailed(
            f"invalid connection string: {_first_line(exc)}", _CONNECT_HINT
        ) from exc
    with conn:
        yield conn


# --------------------------------------------------------------------------------------- helpers


def _configured_dsn(dsn: str | None) -> str | None:
    """The DSN the user configured, ``""`` for libpq's environment, None for the embedded server."""
    if dsn is not None:
        return dsn
    from_env = os.environ.get("PGIVM_DSN")
    if from_env:
        return from_env
    if any(os.environ.get(name) for name in LIBPQ_ENV_VARS):
        return ""
    return None


def _is_embedded_socket_dir(host: str) -> bool:
    """Whether a libpq host is the socket directory of an embedded server (ours is its data dir)."""
    if not host.startswith("/"):
        return False
    from pgivm.server import EmbeddedServer, default_data_dir

    path = Path(host)
    # A long data dir path moves the socket to a temporary directory; only the default's is known.
    return (path / "PG_VERSION").is_file() or path == EmbeddedServer(default_data_dir()).socket_dir


def _describe_embedded(socket_dir: Path | None, port: str | None) -> str:
    """Describe the embedded server at ``socket_dir`` (or the default one), looking up its port."""
    from pgivm.server import EmbeddedServer, default_data_dir

    data_dir = (
        socket_dir
        if socket_dir is not None and (socket_dir / "PG_VERSION").is_file()
        else default_data_dir()
    )
    if port is None:
        status = EmbeddedServer(data_dir).status()
        if not status.running:
            return f"embedded server at {data_dir} (not running)"
        port = str(status.port)
    return f"embedded server at {data_dir} (port {port})"


def _describe_libpq_env() -> str:
    params = {
        key: os.environ[var]
        for key, var in (
            ("service", "PGSERVICE"),
            ("host", "PGHOST"),
            ("hostaddr", "PGHOSTADDR"),
            ("port", "PGPORT"),
            ("dbname", "PGDATABASE"),
            ("user", "PGUSER"),
        )
        if os.environ.get(var)
    }
    return (
        f"{_describe_params(params)} (from PG* environment)"
        if params
        else "the libpq default server"
    )


def _describe_params(params: dict[str, str]) -> str:
    keys = ("service", "host", "hostaddr", "port", "dbname", "user")  # never password
    shown = [f"{key}={params[key]}" for key in keys if params.get(key)]
    return " ".join(shown) if shown else "the libpq default server"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0].strip() if text else type(exc).__name__
