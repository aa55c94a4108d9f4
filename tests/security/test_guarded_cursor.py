"""pgivm's sessions run every statement after resetting search_path and row_security (code of a
view's owner may change them): outside a transaction as two statements, inside one as one round
trip (a pipeline of the reset and the statement). What a caller of the connection sees must not
change with the path taken."""

from __future__ import annotations

import contextlib
import threading

import psycopg
import pytest

from pgivm.connection import SAFE_SEARCH_PATH, harden


@pytest.fixture
def hard(dsn: str):  # type: ignore[no-untyped-def]
    with psycopg.connect(dsn, autocommit=True) as conn:
        harden(conn)
        yield conn


@pytest.mark.parametrize("in_transaction", [False, True])
def test_a_setting_changed_between_statements_is_reset_before_the_next(hard: psycopg.Connection,
                                                                        in_transaction: bool) -> None:
    hard.execute("CREATE SCHEMA elsewhere")
    with hard.transaction() if in_transaction else contextlib.nullcontext():
        # as a function of a view's owner could: set_config(..., false) outlives the function
        hard.execute("SELECT pg_catalog.set_config('search_path', 'elsewhere, public', false)")
        assert hard.execute("SELECT pg_catalog.current_setting('search_path')").fetchone()[0] == SAFE_SEARCH_PATH
        hard.execute("SELECT pg_catalog.set_config('row_security', 'on', false)")
        assert hard.execute("SELECT pg_catalog.current_setting('row_security')").fetchone()[0] == "off"


def test_several_statements_without_parameters_run_inside_a_transaction(hard: psycopg.Connection) -> None:
    with hard.transaction():
        assert hard.execute("SELECT 1; SELECT 2", []).fetchone() == (1,)  # psycopg shows the first result
        assert hard.execute("SELECT 3; SELECT 4").fetchone() == (3,)


def test_a_failed_statement_leaves_no_result_of_the_reset(hard: psycopg.Connection) -> None:
    with hard.transaction():
        cur = hard.execute("SELECT 5")
        with pytest.raises(psycopg.errors.DivisionByZero), hard.transaction():
            cur.execute("SELECT 1 / 0")
        with pytest.raises(psycopg.ProgrammingError):
            cur.fetchone()  # not the reset's row
        assert hard.execute("SELECT 6").fetchone() == (6,)


def test_threads_sharing_a_connection_inside_a_transaction(hard: psycopg.Connection) -> None:
    errors: list[BaseException] = []

    def run(n: int) -> None:
        try:
            for i in range(100):
                assert hard.execute("SELECT %s::int", [n * 1000 + i]).fetchone() == (n * 1000 + i,)
        except BaseException as err:  # noqa: BLE001  # reported below
            errors.append(err)

    with hard.transaction():
        threads = [threading.Thread(target=run, args=(n,)) for n in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
