"""An installed view, opened once per command: its catalog record, its system, its effective
parameters and its query over the base tables as they are named now.

``open_view`` is where every command that works on an existing view starts: it reads the catalog
record and, for a role that is not the view's owner, checks (and for a superuser locks) the
view's state before anything of it is used (``pgivm.owners``). What the handle computes from the
database (the pinned query, the parameters kept in the state row) it computes once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import sql

from pgivm import deferred, owners
from pgivm.catalog import views as catalog
from pgivm.connection import set_operator_schemas
from pgivm.errors import PgivmError
from pgivm.query.resolve import ResolvedView, resolve
from pgivm.systems import common, registry
from pgivm.systems.base import System


def system_params(system: System, options: dict[str, Any]) -> dict[str, Any]:
    """The system's options, each checked; an option the system does not take is an error."""
    known = {o.name: o for o in system.options}
    stray = [name for name, value in options.items() if value is not None and name not in known]
    if stray:
        takes = ", ".join(o.flag for o in system.options) or "no options"
        raise PgivmError(f"{', '.join('--' + s.replace('_', '-') for s in stray)} does not apply to system "
                         f"{system.name}", f"{system.name} takes {takes}")
    return {name: option.validate(options.get(name)) for name, option in known.items()}


def state_params(conn: psycopg.Connection, system: System, name: str) -> dict[str, Any]:
    """The options a system keeps in the view's state row (IVMε's epsilon), read back from it."""
    kept = [o.name for o in system.options if o.in_state]
    state = common.read_state(conn, name) if kept else {}
    return {k: state[k] for k in kept}


def pinned(conn: psycopg.Connection, record: catalog.ViewRecord) -> ResolvedView:
    """The view's query over its base tables found by oid, named as they are now."""
    return resolve(conn, record.query, record.table_oids, state_schema=record.state_schema)


def dropping(conn: psycopg.Connection, view_schema: str, name: str) -> bool:
    """A drop that stopped maintenance (its first step) but could not finish: the user view is gone."""
    found = conn.execute("SELECT pg_catalog.to_regclass(%s) IS NULL",
                         [sql.Identifier(view_schema, name).as_string(conn)]).fetchone()
    return bool(found and found[0])


@dataclass
class InstalledView:
    """One view as a command sees it, inside the command's transaction on ``conn``."""

    conn: psycopg.Connection
    record: catalog.ViewRecord
    system: System
    _resolved: ResolvedView | None = field(default=None, repr=False)
    _params: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.record.name

    @property
    def view_schema(self) -> str:
        return self.record.view_schema

    @property
    def names(self) -> common.Names:
        return common.Names.of(self.name)

    @property
    def deferred(self) -> bool:
        return deferred.is_deferred(self.record.params)

    @property
    def ident(self) -> sql.Identifier:
        """The user's view, schema-qualified."""
        return sql.Identifier(self.view_schema, self.name)

    @property
    def resolved(self) -> ResolvedView:
        """The query over the base tables pinned by oid (computed once)."""
        if self._resolved is None:
            self._resolved = pinned(self.conn, self.record)
        return self._resolved

    @property
    def params(self) -> dict[str, Any]:
        """The effective parameters: the system's defaults, what the catalog keeps, what the state row keeps."""
        if self._params is None:
            self._params = {**system_params(self.system, {}), **self.record.params,
                            **state_params(self.conn, self.system, self.name)}
        return self._params

    @property
    def shown_params(self) -> dict[str, Any]:
        """The parameters a user set or the state keeps (list and status show these)."""
        return {**self.record.params, **state_params(self.conn, self.system, self.name)}

    def deferred_tables(self, params: dict[str, Any] | None = None) -> list[deferred.LoggedTable]:
        from pgivm.install import deferred_tables

        return deferred_tables(self.system, self.resolved, self.name, params or self.params)

    def require_deferred(self, what: str) -> None:
        if not self.deferred:
            raise PgivmError(f"view {self.name} is immediate: {what}", "create it with --refresh deferred")

    @property
    def is_dropping(self) -> bool:
        return not self.record.maintained or dropping(self.conn, self.view_schema, self.name)

    def check_not_dropping(self) -> None:
        if self.is_dropping:
            raise PgivmError(f"view {self.name} is no longer maintained: a drop stopped it and could not finish",
                             f"run `pgivm drop {self.name}` again")

    @property
    def one_value(self) -> bool:
        """The view shows one value, the count its system maintains (see System.one_value)."""
        return bool(self.system.one_value and self.system.one_value(self.record.query))

    def state_count(self) -> int | None:
        """The view's figure as its state keeps it (list and status: no read of the view, which for
        a deferred view would apply its pending changes first)."""
        shown = self.system.shown_rows(self.conn, self.record.query, self.name) if self.system.shown_rows else None
        return shown if shown is not None else common.read_state(self.conn, self.name)["count"]

    def count(self) -> int | None:
        """The view's figure: the value it shows (a triangle count), else its number of rows."""
        self.check_not_dropping()
        if not self.one_value:
            return self.state_count()
        # Not prepared: a view of the same name may come back with other columns (another system).
        row = self.conn.execute(sql.SQL("SELECT * FROM {}").format(self.ident), prepare=False).fetchone()
        return row[0] if row else None


def open_view(conn: psycopg.Connection, name: str, *, replacing_functions: bool = False) -> InstalledView:
    """The view ``name``, its state checked (and, for a superuser, locked) as safe for this
    session's role to use when that is not the view's owner (``pgivm.owners``). The session then
    looks operators up where the view's functions do (``operator_schemas``)."""
    record = catalog.get(conn, name)
    owners.pin(conn, record, replacing_functions=replacing_functions)
    set_operator_schemas(conn, operator_schemas(conn, record))
    return InstalledView(conn, record, registry.get(record.system))


# The search_paths of a state's functions that name schemas between pg_catalog and pg_temp (where
# an extension's type's equality is found), each with what is wrong with it now, if anything.
# (Any other setting is state_problems' to report, to other roles and in verify.)
_WIDER_PATHS = """
SELECT DISTINCT c, pgivm_catalog.path_problem(p.proconfig)
  FROM pg_catalog.pg_proc p, pg_catalog.unnest(p.proconfig) c
 WHERE p.pronamespace = pg_catalog.to_regnamespace(%s) AND pg_catalog.starts_with(c, 'search_path=pg_catalog, ')
   AND c OPERATOR(pg_catalog.~) ', pg_temp$' AND c OPERATOR(pg_catalog.<>) 'search_path=pg_catalog, pg_temp'
"""


def operator_schemas(conn: psycopg.Connection, record: catalog.ViewRecord) -> tuple[str, ...]:
    """The schemas the view's functions look operators up in besides pg_catalog, each checked again
    as written only by superusers; a one-line refusal if one no longer is."""
    rows = conn.execute(_WIDER_PATHS, [sql.Identifier(record.state_schema).as_string(conn)]).fetchall()
    for _, problem in rows:
        if problem:
            raise PgivmError(f"view {record.name}: a function of its state {problem}",
                             "undo the change (REVOKE CREATE ON SCHEMA ..., ALTER ... OWNER TO a superuser), "
                             f"or drop the view (pgivm drop {record.name})")
    return tuple(sorted({s for setting, _ in rows for s in setting.removeprefix("search_path=").split(", ")[1:-1]}))
