"""Apply the catalog migrations in ``migrations/`` in order, once each.

Each migration is a plain SQL file ``NNNN_description.sql``. The applied versions are recorded in
``pgivm.schema_migrations``; a transaction-level advisory lock makes concurrent ``init`` calls safe.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.resources import files

import psycopg

_MIGRATION_FILE = re.compile(r"^(\d{4})_(\w+)\.sql$")
_LOCK_KEY = 0x70676976  # "pgiv": one advisory lock for catalog changes


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def available_migrations() -> list[Migration]:
    found = []
    for entry in files("pgivm.migrations").iterdir():
        match = _MIGRATION_FILE.match(entry.name)
        if match:
            found.append(Migration(int(match.group(1)), match.group(2), entry.read_text()))
    return sorted(found, key=lambda m: m.version)


def current_version(conn: psycopg.Connection) -> int:
    exists = conn.execute("SELECT to_regclass('pgivm.schema_migrations') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return 0
    row = conn.execute("SELECT coalesce(max(version), 0) FROM pgivm.schema_migrations").fetchone()
    return int(row[0]) if row else 0


def upgrade(conn: psycopg.Connection) -> list[Migration]:
    """Bring the catalog to the newest version; returns the migrations applied now."""
    newest = max((m.version for m in available_migrations()), default=0)
    if current_version(conn) >= newest:  # the common case: nothing to do, no lock taken
        return []
    applied = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK_KEY])
        conn.execute("CREATE SCHEMA IF NOT EXISTS pgivm")
        conn.execute(
            """
            CREATE TABLE IF NOT EXISTS pgivm.schema_migrations (
                version    integer PRIMARY KEY,
                name       text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """
        )
        done = current_version(conn)
        for migration in available_migrations():
            if migration.version > done:
                conn.execute(migration.sql)  # type: ignore[arg-type]  # trusted file shipped with pgivm
                conn.execute(
                    "INSERT INTO pgivm.schema_migrations (version, name) VALUES (%s, %s)",
                    [migration.version, migration.name],
                )
                applied.append(migration)
    return applied
