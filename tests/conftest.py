"""Test fixtures: a real PostgreSQL server, and a fresh database for every test.

The server is ``$PGIVM_TEST_DSN`` when set (a DSN with rights to CREATE DATABASE), else a
testcontainers PostgreSQL when a Docker engine answers, else pgivm's embedded server in a
temporary data directory (no Docker engine runs on the CI machine).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

# Loaded graphs live next to the repository (shared/data), never inside it.
DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "data"


def _docker_answers() -> bool:
    try:
        import docker  # type: ignore[import-untyped]

        docker.from_env(timeout=3).ping()
        return True
    except Exception:
        return False


@pytest.fixture(scope="session")
def server_dsn() -> Iterator[str]:
    """A DSN of a PostgreSQL server on which the tests may create databases."""
    if os.environ.get("PGIVM_TEST_DSN"):
        yield os.environ["PGIVM_TEST_DSN"]
        return
    if _docker_answers():
        from testcontainers.postgres import PostgresContainer

        with PostgresContainer("postgres:16", driver=None) as container:
            yield container.get_connection_url()
        return
    from pgivm.server import EmbeddedServer

    data_dir = Path(tempfile.mkdtemp(prefix="pgivm-test-")) / "pgdata"
    server = EmbeddedServer(
        data_dir,
        settings={"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off", "max_connections": "200"},
    )
    server.start()
    try:
        yield server.dsn()
    finally:
        server.stop()
        shutil.rmtree(data_dir.parent, ignore_errors=True)


@pytest.fixture
def dsn(server_dsn: str) -> Iterator[str]:
    """A DSN of a new, empty database that is dropped after the test."""
    name = f"pgivm_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_conninfo(server_dsn, dbname=name)
    finally:
        with psycopg.connect(server_dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def conn(dsn: str) -> Iterator[psycopg.Connection]:
    """An autocommit connection to the test's database: every statement is its own transaction."""
    with psycopg.connect(dsn, autocommit=True) as connection:
        yield connection


TRIANGLE_SQL = "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a"
EDGE_SQL = "SELECT count(*) FROM e AS x JOIN e AS y ON x.dst = y.src JOIN e AS z ON y.dst = z.src AND z.dst = x.src"
