"""Using a view as a role other than its owner: check its state first, act as its owner for DDL.

Every object of a view belongs to its owner, who can change them. A command run by another role (a
superuser's ``verify``, ``upgrade --all``, the worker) reads that state and calls into it, so it
must never run the owner's code with its own rights:

- ``pin(conn, record)`` first checks the state (``pgivm_catalog.state_problems``): every function
  SECURITY DEFINER and the owner's (so a call runs with the owner's rights), no trigger, rule or
  expression that could run code outside the state. A superuser also locks what was checked until
  the transaction ends (``pgivm_catalog.pin_state``), so nothing can be swapped between the check
  and the use. Whatever settings the owner's code changes in the session, pgivm's sessions set
  their own again before each statement (``pgivm.connection.GuardedCursor``).
- ``acting_as(conn, record)`` runs the DDL that (re)installs the view's objects as its owner, who
  then owns them whoever ran ``upgrade``.

A session that is not a superuser cannot lock PostgreSQL's catalogs: it checks without the locks,
and so trusts the owner not to swap a function between the check and the call, as PostgreSQL users
trust the owners of the views they read.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import sql

from pgivm.catalog.views import ViewRecord
from pgivm.errors import PgivmError


def _me(conn: psycopg.Connection[Any]) -> tuple[int, bool]:
    row = conn.execute("SELECT oid::pg_catalog.int8, rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user").fetchone()
    assert row is not None
    return int(row[0]), bool(row[1])


def is_owner(conn: psycopg.Connection[Any], record: ViewRecord) -> bool:
    return record.owner is None or _me(conn)[0] == record.owner


def may_replace(conn: psycopg.Connection[Any], record: ViewRecord) -> bool:
    """Whether this session's role may replace the view's objects: its owner, or a superuser."""
    me, superuser = _me(conn)
    return superuser or record.owner is None or me == record.owner


def problems(conn: psycopg.Connection[Any], record: ViewRecord, *, lock: bool) -> list[str]:
    """What is wrong with the view's state for another role to use it; ``lock``: pin it as well
    (only a superuser can)."""
    function = "pin_state" if lock else "state_problems"
    try:
        return [row[0] for row in conn.execute(
            sql.SQL("SELECT * FROM pgivm_catalog.{}(%s)").format(sql.Identifier(function)), [record.name]).fetchall()]
    except psycopg.errors.ObjectNotInPrerequisiteState as err:  # a snapshot pin_state cannot trust
        hint = (err.diag.message_hint or "").rstrip(".")
        raise PgivmError(err.diag.message_primary or str(err), hint[:1].lower() + hint[1:]) from None


def pin(conn: psycopg.Connection[Any], record: ViewRecord, *, replacing_functions: bool = False) -> None:
    """Refuse, in one line, to use another role's view whose state is not safe to use; for a
    superuser, lock it as checked. ``replacing_functions``: the command reinstalls every function
    of the state (upgrade), so problems with them are what it repairs."""
    me, superuser = _me(conn)
    if record.owner is None or me == record.owner:
        return
    found = problems(conn, record, lock=superuser)
    if replacing_functions and not _something_calls_a_function_to_replace(conn, record):
        found = [p for p in found if not p.startswith("function ")]
    if found:
        owner = conn.execute("SELECT %s::pg_catalog.oid::pg_catalog.regrole::pg_catalog.text", [record.owner]).fetchone()[0]  # type: ignore[index]
        raise PgivmError(f"view {record.name} belongs to role {owner}, and its state is not safe for others to use: "
                         f"{found[0]}", f"role {owner} can repair it (`pgivm upgrade {record.name} --force`, or drop what "
                         "pgivm did not make); `pgivm verify` as that role lists every problem")


# A function of the state that its problems would have pgivm replace (not SECURITY DEFINER, no
# fixed search_path, or another role's), used by anything but a trigger: a view, default,
# constraint or index that the command could read or write before the function is replaced.
_CALLED_BEFORE_REPLACED = """
SELECT EXISTS (
    SELECT FROM pg_catalog.pg_depend d
      JOIN pg_catalog.pg_proc p ON p.oid = d.refobjid
     WHERE d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass
       AND d.classid <> 'pg_catalog.pg_trigger'::pg_catalog.regclass
       AND p.pronamespace = (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = %s)
       AND (NOT p.prosecdef OR p.proowner <> %s OR p.proconfig IS NULL
            OR NOT ('search_path=pg_catalog, pg_temp' = ANY (p.proconfig))))
"""


def _something_calls_a_function_to_replace(conn: psycopg.Connection[Any], record: ViewRecord) -> bool:
    """Whether upgrade, which reinstalls the state's functions, must still refuse their problems:
    it reads the state (its parameters) first, and a view of the state calling a function that is
    not SECURITY DEFINER would run the owner's code with the rights of whoever upgrades."""
    row = conn.execute(_CALLED_BEFORE_REPLACED, [record.state_schema, record.owner]).fetchone()
    return bool(row and row[0])


@contextmanager
def acting_as(conn: psycopg.Connection[Any], record: ViewRecord) -> Iterator[None]:
    """Run the block as the view's owner (SET LOCAL ROLE), so that what it creates is the owner's.
    Only for DDL of pgivm's own text over a pinned state: no code of the owner runs inside it (a
    plain SET ROLE is no boundary against code that could RESET it)."""
    if is_owner(conn, record):
        yield
        return
    previous = conn.execute("SELECT current_user").fetchone()[0]  # type: ignore[index]
    conn.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(_role_name(conn, record))))
    try:
        yield
    finally:
        if conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS:
            conn.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(previous)))


def _role_name(conn: psycopg.Connection[Any], record: ViewRecord) -> str:
    row = conn.execute("SELECT rolname FROM pg_catalog.pg_roles WHERE oid = %s", [record.owner]).fetchone()
    if row is None:
        raise PgivmError(f"the owner of view {record.name} (role oid {record.owner}) no longer exists", "drop the view")
    return str(row[0])
