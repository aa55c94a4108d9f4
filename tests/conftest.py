"""Test fixtures: a real PostgreSQL server, a fresh database for every test, and the test graphs.

The server is ``$PGIVM_TEST_DSN`` when set (a DSN with rights to CREATE DATABASE), else a
testcontainers PostgreSQL when a Docker engine answers, else pgivm's embedded server in a
temporary data directory (no Docker engine runs on the CI machine).

Graphs: ca-GrQc ships with the tests (``tests/data``, see its README). The larger ego-Facebook is
optional: it is looked up in ``$PGIVM_TEST_DATA`` (a directory), then in ``shared/data`` next to
the repository, plain or gzipped; the tests that need it skip, saying where to put it, when absent.
"""

from __future__ import annotations

import contextlib

import gzip
import math
from decimal import Decimal
import os
import shutil
import socket
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

# Spark for the suite's tiny jobs (a few hundred rows each): two shuffle partitions, no adaptive
# re-planning, and a JVM that stops at its quick compiler (C2 compiled for longer than the jobs
# ran). Measured on `bench load`'s test: 74 s with pgivm's defaults, 52 s with these. Set here, at
# import, so the CLI subprocesses the tests start inherit them; a developer's own values win.
os.environ.setdefault("PGIVM_SPARK_CONF", "spark.sql.shuffle.partitions=2 spark.sql.adaptive.enabled=false")
os.environ.setdefault("PGIVM_SPARK_JAVA_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")

TEST_DATA = Path(__file__).resolve().parent / "data"
GRQC = TEST_DATA / "ca-GrQc.txt.gz"
# Where optional graphs are looked up after $PGIVM_TEST_DATA: the project's shared data directory.
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
FACEBOOK_NAME = "facebook_combined.txt"
FACEBOOK_SOURCE = "https://snap.stanford.edu/data/ego-Facebook.html"


def optional_graph(name: str, source: str) -> Path:
    """``name`` or ``name.gz`` from $PGIVM_TEST_DATA, else from SHARED_DATA; skips the test if absent."""
    configured = os.environ.get("PGIVM_TEST_DATA")
    directories = [Path(configured).expanduser()] if configured else []
    for directory in [*directories, SHARED_DATA]:
        for candidate in (directory / name, directory / f"{name}.gz"):
            if candidate.is_file():
                return candidate
    test_data = f"$PGIVM_TEST_DATA ({configured})" if configured else "a directory named by $PGIVM_TEST_DATA"
    pytest.skip(f"{name} not found: put it (or {name}.gz) in {test_data} or in {SHARED_DATA}; download it from {source}")


@pytest.fixture
def facebook() -> Path:
    """The ego-Facebook edge list (optional: the test skips when it is absent)."""
    return optional_graph(FACEBOOK_NAME, FACEBOOK_SOURCE)


def open_text(path: Path) -> TextIO:
    """A text file, gunzipped on the fly when its name ends in .gz."""
    return gzip.open(path, "rt") if path.suffix == ".gz" else path.open()


def free_port() -> int:
    """A TCP port nothing listens on (and, unlike 54329, one a developer's own server is not using)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def scratch_root() -> str | None:
    """Where the tests' PostgreSQL data directories go: /dev/shm (memory) when it is a tmpfs with
    room, else the default temporary directory. The suite creates and drops about 2,000 databases
    and their files; on ext4, allocating inodes among the recently deleted ones took a sixth of the
    machine's CPU (perf, 2026-11-29), and the subset measured ran 151 s on /tmp, 110 s here.
    $PGIVM_TEST_SCRATCH names another directory (or "" for the default)."""
    if "PGIVM_TEST_SCRATCH" in os.environ:
        return os.environ["PGIVM_TEST_SCRATCH"] or None
    shm = Path("/dev/shm")
    try:
        roomy = shm.is_dir() and os.access(shm, os.W_OK) and shutil.disk_usage(shm).free >= 2 << 30
    except OSError:
        roomy = False
    return str(shm) if roomy else None


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

    data_dir = Path(tempfile.mkdtemp(prefix="pgivm-test-", dir=scratch_root())) / "pgdata"
    # An explicit port: a handle without one would take $PGIVM_PORT from the developer's shell (the
    # port of their own embedded server, say) and fail or clash.
    server = EmbeddedServer(
        data_dir,
        port=free_port(),
        settings={"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off", "max_connections": "200"},
    )
    try:
        server.start()
        yield server.dsn()
    finally:
        server.stop()
        shutil.rmtree(data_dir.parent, ignore_errors=True)


@pytest.fixture(scope="session")
def catalog_template(server_dsn: str) -> Iterator[str]:
    """A database where ``pgivm init`` ran, which each test's database is a copy of: init costs
    0.3 to 0.7 s, a copy of this small database about what an empty one costs. One per session
    (per xdist worker): a template must have no other connection while it is copied."""
    from pgivm import command

    name = f"pgivm_test_template_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        with psycopg.connect(make_conninfo(server_dsn, dbname=name), autocommit=True) as conn:
            command.init(target=conn)
        yield name
    finally:
        with psycopg.connect(server_dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def dsn(server_dsn: str, request: pytest.FixtureRequest) -> Iterator[str]:
    """A DSN of a new database, dropped after the test: with pgivm's catalog (a copy of
    ``catalog_template``), or empty for a test marked ``empty_database`` (one about init itself,
    or about what is in the database before it)."""
    name = f"pgivm_test_{uuid.uuid4().hex[:12]}"
    empty = request.node.get_closest_marker("empty_database") is not None
    template = "" if empty else f' TEMPLATE "{request.getfixturevalue("catalog_template")}"'
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        # PostgreSQL 15's default copies a template through the WAL, block by block: 0.20 s a test
        # here, where copying its files takes 0.05 s (the checkpoint it needs is cheap with fsync off)
        strategy = " STRATEGY FILE_COPY" if admin.info.server_version >= 150000 else ""
        admin.execute(f'CREATE DATABASE "{name}"{template}{strategy}')
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

# Column names like the generated code's own identifiers (issue 21, item 11), which a base table
# may have: PL/pgSQL variables of the capture, deferred and sample functions, columns of pgivm's
# own tables and its positional names for an atom's columns, aliases of its queries, its dollar
# quote, and names only quoting allows. The differential suites draw their schemas' column names
# from these (see quoted()); names with format() placeholders (%s, %1$s) are test_column_names'
# alone, since psycopg would read them as parameters in the suites' statements.
ISSUE_NAMES = ("n", "allowed", "changed_rows", "change", "m", "mult", "at", "done", "table_number", "numbers")  # the issue's
GENERATED_NAMES = (
    "n", "allowed", "writer", "done", "table_number", "numbers", "taken", "changed_rows", "change", "r", "u",
    "victim", "new_rid", "unit_rid", "moved", "gone", "i", "x", "st", "alpha", "beta", "delta_q",
    "m", "mult", "at", "seq", "xid", "rid", "count", "slot", "degree", "heavy", "new_mult", "c1", "c2", "c3",
    "changes", "base", "o", "b", "p", "d", "l", "$pgivm$", "pgivm_renaming_0", 'a "quoted" name', "Mixed Case",
    "a.b",
)


def quoted(name: str) -> str:
    """A column name as SQL text (quoted: so a test's SQL reads back exactly that name)."""
    return sql.Identifier(name).as_string(None)


def _float_key(value: object) -> object:
    return "NaN" if isinstance(value, (float, Decimal)) and value != value else value


def values_agree(a: object, b: object) -> bool:
    """Equal, except floats: to 1e-9 relative, NaN equal to NaN, infinities exact (numeric's NaN
    equal to NaN, as PostgreSQL's numeric compares it)."""
    if isinstance(a, Decimal) and isinstance(b, Decimal) and (a.is_nan() or b.is_nan()):
        return a.is_nan() and b.is_nan()
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return a == b
        return math.isclose(a, b, rel_tol=1e-9)
    return a == b


def result_differences(conn: psycopg.Connection, view: str, query: str, keys: int) -> list[object]:
    """The view against PostgreSQL's own evaluation of ``query`` over the current rows, rows matched
    on their first ``keys`` columns (the GROUP BY values), the rest compared by ``values_agree``.
    If PostgreSQL raises out of range (22003), the view must raise it too."""
    def rows(sql: str) -> list[tuple[object, ...]] | psycopg.Error:
        try:
            return conn.execute(sql).fetchall()
        except psycopg.errors.NumericValueOutOfRange as error:
            return error

    mine, theirs = rows(f"SELECT * FROM {view}"), rows(query)
    if isinstance(theirs, psycopg.Error) or isinstance(mine, psycopg.Error):
        return [] if type(mine) is type(theirs) else [("view", mine), ("postgres", theirs)]
    by_key = {tuple(_float_key(v) for v in r[:keys]): r for r in theirs}
    out: list[object] = []
    for row in mine:
        other = by_key.pop(tuple(_float_key(v) for v in row[:keys]), None)
        if other is None or len(other) != len(row) or not all(values_agree(a, b) for a, b in zip(row, other)):
            out.append(("view", row, "postgres", other))
    out += [("postgres only", r) for r in by_key.values()]
    if len(mine) != len(theirs):
        out.append(("row counts", len(mine), len(theirs)))
    return out


@contextlib.contextmanager
def server_dir() -> Iterator[Path]:
    """A fresh directory for an embedded server's data, outside pytest's temporary root: run as
    root, the server runs as another user, and pytest resets its root's mode to 0700 whenever a
    pytest session starts on the machine (a second run, an editor's), locking that user out of a
    server still running (a test's teardown then fails)."""
    made = Path(tempfile.mkdtemp(prefix="pgivm-server-", dir=scratch_root()))
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


# The tests that take longest (measured with --durations, 2026-11-28: each 10 to 86 s), started
# first: with two workers the suite's tail is then short tests, not one worker finishing a
# minute-long test alone. Longest first; a prefix ranks every test it starts.
LONGEST_FIRST = (
    "tests/test_docs.py::test_a_code_block_runs_as_written[docs/spark.md",
    "tests/systems/sample/test_sample.py::test_every_prefix_is_a_uniform_sample",
    "tests/systems/sample/test_sample.py::test_merged_and_grouped_nodes_stay_uniform_after_every_statement",
    "tests/bench/test_bench_sample.py::test_tpcds_queries_run_under_every_setting_and_agree",
    "tests/systems/sample/test_sample.py::test_self_join_line3_is_uniform_after_every_statement",
    "tests/spark/test_spark.py::test_bench_load_on_a_tiny_graph",
    "tests/test_docs.py::test_a_code_block_runs_as_written[docs/sample.md",
    "tests/spark/test_spark.py::test_grqc_load_create_spark_validate_and_churn",
    "tests/systems/sample/test_sample.py::test_random_streams_with_merged_and_grouped_nodes",
    "tests/bench/test_bench_deferred.py",
    "tests/deferred/test_deferred_concurrency.py::test_writers_readers_and_the_worker_never_apply_twice_or_miss",
    "tests/concurrency/test_isolation.py::test_four_writers_while_commands_run",
    "tests/systems/triangle/test_real_graphs.py::test_grqc_edge_form_stays_exact_under_churn",
    "tests/test_docs.py::test_a_code_block_runs_as_written[README.md",
    "tests/bench/test_bench_fivm.py",
    "tests/spark/test_spark.py::test_cli_load_prints_only_its_own_lines",
    "tests/spark/test_spark.py::test_malformed_file_names_file_and_line_and_changes_nothing",
    "tests/systems/sample/test_sample.py::test_predicate_reservoir_matches_algorithm_r",
    "tests/concurrency/test_crash.py::test_kill_during_create_leaves_no_half_installed_view",
    "tests/test_docs.py::test_a_code_block_runs_as_written[docs/",
    "tests/bench/",
    "tests/systems/sample/",
    "tests/spark/",
    "tests/systems/triangle/test_differential.py::test_partitioned_base_tables_match_recount",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        return next((i for i, prefix in enumerate(LONGEST_FIRST) if item.nodeid.startswith(prefix)), len(LONGEST_FIRST))

    items.sort(key=rank)  # stable: the others keep their order
