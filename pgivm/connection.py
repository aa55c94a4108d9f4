"""Finding and connecting to the PostgreSQL server pgivm works on.

The target is, in order of precedence: an explicit DSN (``--dsn``), ``$PGIVM_DSN``, libpq's own
environment (``PGHOST``, ``PGPORT``, ...), and finally pgivm's embedded server, which is started on
demand so that a user without a database can still try pgivm.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from pgivm.errors import ConnectionFailed, PgivmError

__all__ = ["LIBPQ_ENV_VARS", "SAFE_SEARCH_PATH", "GuardedCursor", "UserPath", "connect", "describe_target", "harden",
           "hardened", "operator_path", "resolve_dsn", "set_operator_schemas", "user_path", "user_search_path"]

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
def connect(dsn: str | None = None, *, autocommit: bool = False,
            search_path: str | None = None) -> Iterator[psycopg.Connection]:
    """Connect to the resolved target (see :func:`resolve_dsn`) and close the connection afterwards.

    Like psycopg's own ``with connection:``, a transaction still open on exit is committed if the
    block succeeded and rolled back if it raised. Failure to connect raises ConnectionFailed. The
    connection is hardened (``harden``); ``search_path``: the one its statements run under instead
    of pgivm's own (the benchmarks' scratch schema, which only they may create in).
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
    # pgivm's transactions say their level (a database default of REPEATABLE READ would give the
    # worker and the changing commands snapshots older than their locks): snapshot() asks for its own
    conn.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
    harden(conn, search_path)
    with conn:
        yield conn


# --- the settings pgivm's own SQL runs under -------------------------------------------------------

#: Names resolve in pg_catalog only (pgivm qualifies everything else): a function, operator or
#: table a stranger planted in ``public`` (say ``public.=(oid, integer)``) is never used.
SAFE_SEARCH_PATH = "pg_catalog, pg_temp"
_RESET = ("SELECT pg_catalog.set_config('search_path', %s, %s), pg_catalog.set_config('row_security', 'off', %s)")


@dataclass(frozen=True)
class UserPath:
    """The search_path the session had before pgivm fixed its own: how the user's view SQL names
    tables (``FROM r`` means the first ``r`` on it) and where an unqualified view goes."""

    setting: str  # the search_path setting, e.g. '"$user", public'
    schemas: tuple[str, ...]  # current_schemas(true): the schemas it searches, in order, pg_catalog included
    current: str | None  # current_schema(): the first of them that exists


class GuardedCursor(psycopg.Cursor[Any]):
    """A cursor that sets pgivm's search_path (and row_security = off) again before every
    statement, and quotes generated function bodies with a tag no name in them contains.

    Code of a view's owner runs in pgivm's sessions (inside that owner's SECURITY DEFINER
    functions, so with the owner's rights), and such code can change session settings: a plain
    ``SET search_path`` inside a function outlives it. The statement after it would then resolve
    pgivm's unqualified operators on the owner's path, with the session's rights."""

    def execute(self, query: Any, params: Any = None, *, prepare: bool | None = None,  # type: ignore[override]
                binary: bool | None = None) -> "GuardedCursor":
        conn = self.connection
        path = widened(getattr(conn, "_pgivm_path", SAFE_SEARCH_PATH), getattr(conn, "_pgivm_operator_schemas", ()))
        query = with_function_path(safe_dollar_quotes(query, conn), conn)
        with _turn(conn):  # threads sharing the connection take turns: a pipeline is one conversation
            local = conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
            if not (local and _PIPELINES and _one_statement(query, params, conn)):
                # Outside a transaction block a pipeline would put both in one implicit transaction;
                # a script of several statements cannot go through one (extended protocol).
                super().execute(_RESET, [path, local, local], prepare=False)
                super().execute(query, params, prepare=prepare, binary=binary)
                return self
            # Inside one, the reset and the statement go in one round trip: the server parses the
            # statement after the reset ran, and skips it if the reset failed. The reset has a
            # cursor of its own: its row must not be this cursor's result.
            with conn.pipeline():
                psycopg.Cursor(conn).execute(_RESET, [path, local, local], prepare=False)
                super().execute(query, params, prepare=prepare, binary=binary)
        return self


_PIPELINES = psycopg.Pipeline.is_supported()  # libpq 14 or later
_TURNS = threading.Lock()  # guards the creation of each connection's own lock


def _turn(conn: psycopg.Connection[Any]) -> Any:
    """The connection's lock for pgivm's pipelines (an RLock: a caller's thread may nest them)."""
    lock = getattr(conn, "_pgivm_turn", None)
    if lock is None:
        with _TURNS:
            lock = getattr(conn, "_pgivm_turn", None)
            if lock is None:
                lock = conn._pgivm_turn = threading.RLock()  # type: ignore[attr-defined]
    return lock


def _one_statement(query: Any, params: Any, conn: psycopg.Connection[Any]) -> bool:
    """A statement with parameters is one (psycopg sends empty ones as plain text, which may hold
    several); without, text with no semicolon is."""
    if params:
        return True
    text = query.as_string(conn) if isinstance(query, sql.Composable) else query
    return (b";" not in text) if isinstance(text, bytes) else (";" not in str(text))


FUNCTION_PATH = "SET search_path = pg_catalog, pg_temp"
#: The schema names ``operator_path`` puts on a search_path: plain, so that they need no quoting there.
PLAIN_SCHEMA = re.compile(r"[a-z_][a-z0-9_]*")


def widened(path: str, schemas: tuple[str, ...]) -> str:
    """``path`` with ``schemas`` right after pg_catalog (see ``operator_path``)."""
    if not schemas:
        return path
    first, _, rest = path.partition(", ")
    return ", ".join([first, *schemas, *([rest] if rest else [])])


def with_function_path(query: Any, conn: psycopg.Connection[Any]) -> Any:
    """``query`` with the search_path of the functions it creates (``SET search_path = pg_catalog,
    pg_temp``, in pgivm's own SQL text) widened as ``operator_path`` says."""
    schemas = getattr(conn, "_pgivm_operator_schemas", ())
    if not schemas or not isinstance(query, sql.Composable):
        return query
    parts = _flatten(query)
    if not any(isinstance(p, sql.SQL) and FUNCTION_PATH in p.as_string(conn) for p in parts):
        return query
    wide = f"SET search_path = {widened(SAFE_SEARCH_PATH, schemas)}"
    return sql.Composed([sql.SQL(p.as_string(conn).replace(FUNCTION_PATH, wide)) if isinstance(p, sql.SQL) else p  # type: ignore[arg-type]
                         for p in parts])


def set_operator_schemas(conn: psycopg.Connection[Any], schemas: tuple[str, ...]) -> None:
    """From now on, statements on ``conn`` and the functions they create look operators up in
    ``schemas`` after pg_catalog: where the equality of an extension's type is found (``vector =
    vector``), checked as written only by superusers (``resolve``; ``installed.open_view``)."""
    assert all(PLAIN_SCHEMA.fullmatch(s) for s in schemas), schemas
    if schemas:
        conn._pgivm_operator_schemas = tuple(schemas)  # type: ignore[attr-defined]
    elif hasattr(conn, "_pgivm_operator_schemas"):
        del conn._pgivm_operator_schemas  # type: ignore[attr-defined]


@contextmanager
def operator_path(conn: psycopg.Connection[Any], schemas: tuple[str, ...]) -> Iterator[None]:
    """``set_operator_schemas`` for the block, then back to what it was."""
    saved = getattr(conn, "_pgivm_operator_schemas", ())
    set_operator_schemas(conn, schemas)
    try:
        yield
    finally:
        set_operator_schemas(conn, saved)


BODY_TAG = "$pgivm$"


def safe_dollar_quotes(query: Any, conn: psycopg.Connection[Any] | None = None) -> Any:
    """``query`` with pgivm's dollar-quote tag ``$pgivm$`` (in its own SQL text, never in the
    identifiers and literals formatted into it) replaced by one that none of those contains.

    Generated functions are dollar-quoted, and their bodies hold names other roles choose (a
    column, a table, a view). A name containing the closing tag would end the body there and run
    the rest as SQL, with the rights of whoever (re)installs the view: so the tag is ``$pgivm$``
    unless some name or literal contains it, and otherwise one derived from all of them."""
    if not isinstance(query, sql.Composable):
        return query
    parts = _flatten(query)
    if not any(isinstance(p, sql.SQL) and BODY_TAG in p.as_string(conn) for p in parts):
        return query
    values = [p.as_string(conn) for p in parts if not isinstance(p, sql.SQL)]
    tag, seed = BODY_TAG, "".join(values)
    while any(tag[:-1] in v for v in values):  # "$pgivm" also guards against "$pgivm$" across parts
        seed = hashlib.sha256(seed.encode()).hexdigest()
        tag = f"$pgivm_{seed[:16]}$"
    if tag == BODY_TAG:
        return query
    return sql.Composed([sql.SQL(p.as_string(conn).replace(BODY_TAG, tag)) if isinstance(p, sql.SQL) else p  # type: ignore[arg-type]
                         for p in parts])


def _flatten(query: sql.Composable) -> list[sql.Composable]:
    if isinstance(query, sql.Composed):
        return [part for inner in query for part in _flatten(inner)]
    return [query]


def harden(conn: psycopg.Connection[Any], search_path: str | None = None) -> None:
    """Make ``conn`` safe for pgivm's SQL: remember the user's search_path (for the names in view
    definitions), then fix pgivm's, and run every later statement through GuardedCursor. Named
    prepared statements are off: a view owner's code could DEALLOCATE one and PREPARE its own
    under the same name, which this session would then run with its own rights."""
    if getattr(conn, "_pgivm_user_path", None) is not None:
        return
    in_transaction = conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
    with conn.cursor() as cur:  # a plain cursor: qualified functions only, no operator, any search_path
        saved = cur.execute("SELECT pg_catalog.current_setting('search_path'), "
                            "pg_catalog.current_setting('row_security')", prepare=False).fetchone()
        assert saved is not None
        if search_path is not None:
            cur.execute("SELECT pg_catalog.set_config('search_path', %s, %s)", [search_path, in_transaction], prepare=False)
            conn._pgivm_path = search_path  # type: ignore[attr-defined]
        row = cur.execute("SELECT pg_catalog.current_setting('search_path'), pg_catalog.current_schemas(true), "
                          "pg_catalog.current_schema()", prepare=False).fetchone()
        assert row is not None
        conn._pgivm_user_path = UserPath(row[0], tuple(row[1]), row[2])  # type: ignore[attr-defined]
        conn._pgivm_saved = (conn.cursor_factory, conn.prepare_threshold, saved[0], saved[1])  # type: ignore[attr-defined]
        cur.execute(_RESET, [search_path or SAFE_SEARCH_PATH, in_transaction, in_transaction], prepare=False)
    if not in_transaction and not conn.autocommit:
        conn.commit()
    conn.prepare_threshold = None
    conn.cursor_factory = GuardedCursor


def soften(conn: psycopg.Connection[Any]) -> None:
    """Undo ``harden`` on a connection pgivm was lent (the API's ``target``): the caller's own
    search_path, row_security, cursor factory and prepared-statement threshold come back."""
    saved = getattr(conn, "_pgivm_saved", None)
    if saved is None or conn.closed:
        return
    factory, threshold, path, row_security = saved
    conn.cursor_factory, conn.prepare_threshold = factory, threshold
    if conn.info.transaction_status in (psycopg.pq.TransactionStatus.IDLE, psycopg.pq.TransactionStatus.INTRANS):
        local = conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        with conn.cursor() as cur:
            cur.execute("SELECT pg_catalog.set_config('search_path', %s, %s), pg_catalog.set_config('row_security', %s, %s)",
                        [path, local, row_security, local], prepare=False)
    del conn._pgivm_user_path, conn._pgivm_saved  # type: ignore[attr-defined]
    set_operator_schemas(conn, ())


@contextmanager
def hardened(conn: psycopg.Connection[Any]) -> Iterator[psycopg.Connection[Any]]:
    """``harden`` for the length of the block, then ``soften``, unless it was hardened before."""
    if getattr(conn, "_pgivm_user_path", None) is not None:
        yield conn
        return
    harden(conn)
    try:
        yield conn
    finally:
        soften(conn)


def user_path(conn: psycopg.Connection[Any]) -> UserPath:
    """The search_path the user had on ``conn`` (for a connection pgivm did not harden: the one it has)."""
    found = getattr(conn, "_pgivm_user_path", None)
    if found is None:
        with conn.cursor() as cur:
            row = cur.execute("SELECT pg_catalog.current_setting('search_path'), pg_catalog.current_schemas(true), "
                              "pg_catalog.current_schema()", prepare=False).fetchone()
        assert row is not None
        return UserPath(row[0], tuple(row[1]), row[2])
    return found  # type: ignore[no-any-return]


@contextmanager
def search_path_of(conn: psycopg.Connection[Any], path: str) -> Iterator[None]:
    """Run the block's statements under ``path`` (a schema the caller made itself first, say),
    set again before each of them as pgivm's own path is."""
    previous = getattr(conn, "_pgivm_path", None)
    conn._pgivm_path = path  # type: ignore[attr-defined]
    try:
        yield
    finally:
        if previous is None:
            del conn._pgivm_path  # type: ignore[attr-defined]
        else:
            conn._pgivm_path = previous  # type: ignore[attr-defined]


@contextmanager
def user_search_path(conn: psycopg.Connection[Any]) -> Iterator[None]:
    """Run the block's statements under the user's search_path: only for resolving the names a
    user wrote (their view's tables, EXPLAIN of their SQL). Statements inside must name every type
    and function they use with its schema: the user's path may list ``public`` before pg_catalog.
    (On a connection pgivm did not harden, its statements run under the user's path anyway.)"""
    if getattr(conn, "_pgivm_user_path", None) is None:
        yield
        return
    previous = getattr(conn, "_pgivm_path", SAFE_SEARCH_PATH)
    conn._pgivm_path = user_path(conn).setting  # type: ignore[attr-defined]
    try:
        yield
    finally:
        conn._pgivm_path = previous  # type: ignore[attr-defined]


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
