"""The randomized stream the IVMε count variants share (Loomis–Whitney, 4-path, 3-path): statements
drawn by the test's own generator, now and then two of them in a transaction rolled back whole;
after every statement the view's count against PostgreSQL's own count of the query, ``verify``
every few statements and at the end."""

from __future__ import annotations

import random
from collections.abc import Callable

import psycopg
import pytest

from pgivm import command


def run_count_stream(conn: psycopg.Connection, view: str, query: str, rnd: random.Random,
                     statement: Callable[[], str], steps: int, verify_every: int,
                     recount: psycopg.Connection | None = None) -> list[int]:
    """The counts after each statement; ``recount``: where the query is counted (default ``conn``)."""
    recount = recount or conn
    counts = []
    for step in range(steps):
        if rnd.random() < 0.07:  # a transaction rolled back whole
            with pytest.raises(RuntimeError), conn.transaction():
                conn.execute(statement())
                conn.execute(statement())
                raise RuntimeError("rolled back")
        else:
            conn.execute(statement())
        maintained = conn.execute(f"SELECT * FROM {view}").fetchone()[0]
        assert maintained == recount.execute(query).fetchone()[0], f"step {step}"
        counts.append(maintained)
        if step % verify_every == verify_every - 1:
            report = command.verify(view, target=conn)
            assert report.ok, (step, [str(f) for f in report.failures])
    report = command.verify(view, target=conn)
    assert report.ok, [str(f) for f in report.failures]
    return counts
