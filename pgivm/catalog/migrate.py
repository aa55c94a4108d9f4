"""Apply the catalog migrations in ``migrations/`` in order, once each, to a catalog pgivm can trust.

Each migration is a plain SQL file ``NNNN_description.sql``. The applied versions are recorded in
``pgivm_catalog.schema_migrations``; a transaction-level advisory lock makes concurrent ``init``
calls safe.

The catalog lives in schema ``pgivm_catalog``, which ``init`` creates itself: a schema of that name
made by anyone else is refused, since whoever owns it decides what pgivm's own functions do (and a
superuser's commands run them). Catalogs of pgivm's earlier versions lived in schema ``pgivm``, the
name pg_ivm also installs itself under: such a catalog is renamed before the migrations run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

import psycopg

from pgivm.errors import PgivmError

SCHEMA = "pgivm_catalog"
LEGACY_SCHEMA = "pgivm"
_MIGRATION_FILE = re.compile(r"^(\d{4})_(\w+)\.sql$")
_LOCK_KEY = 0x70676976  # "pgiv": one advisory lock for catalog changes


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def available_migrations() -> list[Migration]:
    return list(_shipped_migrations())


@cache  # files of the installed package: every command asks (1.5 ms to read them)
def _shipped_migrations() -> tuple[Migration, ...]:
    found = []
    for entry in files("pgivm.migrations").iterdir():
        match = _MIGRATION_FILE.match(entry.name)
        if match:
            found.append(Migration(int(match.group(1)), match.group(2), entry.read_text()))
    return tuple(sorted(found, key=lambda m: m.version))


def current_version(conn: psycopg.Connection, exists: bool = False) -> int:
    """The newest migration applied (0 before any); ``exists``: the caller saw the table."""
    if not exists:
        found = conn.execute("SELECT pg_catalog.to_regclass('pgivm_catalog.schema_migrations') IS NOT NULL").fetchone()
        if not found or not found[0]:
            return 0
    row = conn.execute("SELECT coalesce(max(version), 0) FROM pgivm_catalog.schema_migrations").fetchone()
    return int(row[0]) if row else 0


# Who owns the catalog schema, whether they and we are superusers, what else is in it.
_SCHEMA_FACTS = """
SELECT n.nspowner::pg_catalog.regrole::text, o.rolsuper, o.rolname = current_user, me.rolsuper,
       EXISTS (SELECT FROM pg_catalog.pg_depend d WHERE d.classid = 'pg_catalog.pg_namespace'::pg_catalog.regclass
                  AND d.objid = n.oid AND d.deptype = 'e'),
       (SELECT pg_catalog.array_agg(x) FROM (
            SELECT pg_catalog.format('%%s %%s belongs to %%s', 'relation', c.oid::pg_catalog.regclass, c.relowner::pg_catalog.regrole) x
              FROM pg_catalog.pg_class c WHERE c.relnamespace = n.oid AND c.relowner <> n.nspowner
            UNION ALL
            SELECT pg_catalog.format('function %%s belongs to %%s', p.oid::pg_catalog.regprocedure, p.proowner::pg_catalog.regrole)
              FROM pg_catalog.pg_proc p WHERE p.pronamespace = n.oid AND p.proowner <> n.nspowner
            UNION ALL
            SELECT pg_catalog.format('trigger %%s on %%s was not made by pgivm', g.tgname, g.tgrelid::pg_catalog.regclass)
              FROM pg_catalog.pg_trigger g JOIN pg_catalog.pg_class c ON c.oid = g.tgrelid
             WHERE c.relnamespace = n.oid AND NOT g.tgisinternal
            UNION ALL
            SELECT pg_catalog.format('rule %%s on %%s was not made by pgivm', w.rulename, w.ev_class::pg_catalog.regclass)
              FROM pg_catalog.pg_rewrite w JOIN pg_catalog.pg_class c ON c.oid = w.ev_class
             WHERE c.relnamespace = n.oid AND w.rulename <> '_RETURN'
            UNION ALL
            SELECT pg_catalog.format('relation %%s has row-level security', c.oid::pg_catalog.regclass)
              FROM pg_catalog.pg_class c WHERE c.relnamespace = n.oid AND c.relrowsecurity) AS problems),
       pg_catalog.to_regclass(pg_catalog.format('%%I.schema_migrations', n.nspname)) IS NOT NULL,
       EXISTS (SELECT FROM pg_catalog.pg_class c WHERE c.relnamespace = n.oid)
          OR EXISTS (SELECT FROM pg_catalog.pg_proc p WHERE p.pronamespace = n.oid)
  FROM pg_catalog.pg_namespace n
  JOIN pg_catalog.pg_roles o ON o.oid = n.nspowner
  JOIN pg_catalog.pg_roles me ON me.rolname = current_user
 WHERE n.nspname = %s
"""


@dataclass(frozen=True)
class SchemaFacts:
    owner: str
    owner_is_superuser: bool
    owned_by_me: bool
    i_am_superuser: bool
    in_extension: bool
    problems: list[str]
    has_migrations: bool
    has_objects: bool


def _facts(conn: psycopg.Connection, schema: str) -> SchemaFacts | None:
    row = conn.execute(_SCHEMA_FACTS, [schema]).fetchone()
    if row is None:
        return None
    return SchemaFacts(row[0], row[1], row[2], row[3], row[4], list(row[5] or []), row[6], row[7])


def catalog_trusted(conn: psycopg.Connection) -> bool:
    """Whether there is a pgivm catalog this role may use (False: none yet); a one-line refusal
    when there is one it must not run. For what keeps reading it between commands (the worker):
    check again in the transaction that reads it, since the schema may be dropped and made anew."""
    facts = _facts(conn, SCHEMA)
    if facts is None or not facts.has_migrations:
        return False
    _refuse_untrusted(facts, SCHEMA)
    return True


def _refuse_untrusted(facts: SchemaFacts, schema: str) -> None:
    if facts.in_extension:
        raise PgivmError(f"schema {schema} belongs to an extension, not to pgivm", f"drop or rename that schema; pgivm makes its own")
    if facts.problems:
        raise PgivmError(f"the pgivm catalog (schema {schema}) holds what pgivm did not put there: {facts.problems[0]}",
                         f"a role other than its owner ({facts.owner}) changed it: remove that, or drop schema {schema} "
                         "(its views' states stay; create the views again)")
    if facts.owner_is_superuser or facts.owned_by_me:
        return
    # Anyone else's catalog: its functions and tables are code that role can change, which our
    # commands would run with our rights (a stranger may make the schema before `pgivm init` does).
    if facts.i_am_superuser:
        raise PgivmError(f"the pgivm catalog (schema {schema}) belongs to role {facts.owner}, who is not a superuser: "
                         "a superuser's command would run code that role can change",
                         f"run pgivm as {facts.owner}, or have a superuser drop schema {schema} and run `pgivm init`")
    raise PgivmError(f"the pgivm catalog (schema {schema}) belongs to role {facts.owner}, who is neither a superuser "
                     "nor you: your commands would run code that role can change",
                     f"have a superuser drop schema {schema} and run `pgivm init`, or run pgivm as {facts.owner}")


def _prepare_schema(conn: psycopg.Connection) -> None:
    """Make sure schema pgivm_catalog exists and may be trusted (called under the catalog lock)."""
    facts = _facts(conn, SCHEMA)
    if facts is not None:
        if not facts.owned_by_me and not facts.has_migrations and not facts.owner_is_superuser:
            raise PgivmError(f"schema {SCHEMA} exists but was not made by `pgivm init` (it belongs to {facts.owner})",
                             f"drop it or rename it (ALTER SCHEMA {SCHEMA} RENAME TO ...), then run `pgivm init` again")
        if not facts.has_migrations and facts.has_objects:
            raise PgivmError(f"schema {SCHEMA} exists and holds objects pgivm did not make",
                             f"drop it or rename it, then run `pgivm init` again")
        _refuse_untrusted(facts, SCHEMA)
        return
    legacy = _facts(conn, LEGACY_SCHEMA)
    if legacy is not None and legacy.has_migrations and not legacy.in_extension:
        _refuse_untrusted(legacy, LEGACY_SCHEMA)
        conn.execute(f"ALTER SCHEMA {LEGACY_SCHEMA} RENAME TO {SCHEMA}")  # type: ignore[arg-type]  # constants
        return
    conn.execute(f"CREATE SCHEMA {SCHEMA}")  # type: ignore[arg-type]  # a constant


def upgrade(conn: psycopg.Connection) -> list[Migration]:
    """Bring the catalog to the newest version; returns the migrations applied now."""
    newest = max((m.version for m in available_migrations()), default=0)
    facts = _facts(conn, SCHEMA)  # trusted first: reading the catalog's tables comes after
    if facts is not None and facts.has_migrations:
        _refuse_untrusted(facts, SCHEMA)
        if current_version(conn, exists=True) >= newest:  # the common case: nothing to do, no lock taken
            return []
    applied = []
    with conn.transaction():
        conn.execute("SELECT pg_catalog.pg_advisory_xact_lock(%s)", [_LOCK_KEY])
        _prepare_schema(conn)
        conn.execute(
            """
            CREATE TABLE IF NOT EXISTS pgivm_catalog.schema_migrations (
                version    integer PRIMARY KEY,
                name       text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT pg_catalog.now()
            )
            """
        )
        done = current_version(conn)
        for migration in available_migrations():
            if migration.version > done:
                conn.execute(migration.sql)  # type: ignore[arg-type]  # trusted file shipped with pgivm
                conn.execute(
                    "INSERT INTO pgivm_catalog.schema_migrations (version, name) VALUES (%s, %s)",
                    [migration.version, migration.name],
                )
                applied.append(migration)
    return applied
