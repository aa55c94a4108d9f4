"""``pgivm bench writers``: concurrent writers under views that share base tables.

Four writer threads run transactions of three single-row statements (inserts and deletes on R, S
and T, chosen at random) for a fixed time, with no view, then with 1, 2 and 4 views over the same
tables: immediate views, whose writers serialize (a delta joins the other tables' state, so two
writers of one view's tables must not maintain it at once), and the same views deferred, whose
writers only append to logs. Printed per setting: commits per second, deadlocks, serialization
failures, and the rate against no view. Immediate views over shared tables lock the rows of all
their tables in one order at a statement's start (``pgivm_catalog.lock_writes``): their writers
queue instead of deadlocking, and the rate is what one writer at a time achieves.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass

import psycopg
from psycopg import errors

from pgivm import command
from pgivm.bench.common import BENCH_PATH
from pgivm.connection import connect
from pgivm.report import print_table

# Views over shared tables: each setting adds views to the one before.
VIEWS = [
    ("tri", "ivme", "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a"),
    ("st", "fivm", "SELECT s.b, count(*) AS n FROM s JOIN t ON s.c = t.c GROUP BY s.b"),
    ("rs", "fivm", "SELECT r.a, count(*) AS n FROM r JOIN s ON r.b = s.b GROUP BY r.a"),
    ("tr", "first-order", "SELECT t.c, count(*) AS n FROM t JOIN r ON t.a = r.a GROUP BY t.c"),
]


@dataclass
class Config:
    seconds: float = 10.0
    writers: int = 4
    rows: int = 2000
    seed: int = 1
    dsn: str = ""


def _tables(conn: psycopg.Connection, rows: int, seed: int) -> None:
    rng = random.Random(seed)
    for table, (x, y) in {"r": ("a", "b"), "s": ("b", "c"), "t": ("c", "a")}.items():
        conn.execute(f"DROP TABLE IF EXISTS {table} CASCADE")
        conn.execute(f"CREATE TABLE {table} ({x} int NOT NULL, {y} int NOT NULL)")
        with conn.cursor().copy(f"COPY {table} FROM STDIN") as copy:
            for _ in range(rows):
                copy.write_row((rng.randrange(200), rng.randrange(200)))
        conn.execute(f"CREATE INDEX ON {table} ({x}, {y})")
    conn.execute("VACUUM ANALYZE r, s, t")


def _run(dsn: str, seconds: float, writers: int, seed: int) -> dict[str, float]:
    tally = {"commits": 0, "deadlocks": 0, "serialization": 0}
    lock = threading.Lock()
    failures: list[BaseException] = []
    stop = time.monotonic() + seconds

    def write(n: int) -> None:
        rng = random.Random(seed * 100 + n)
        mine = {"commits": 0, "deadlocks": 0, "serialization": 0}
        try:
            with connect(dsn, search_path=BENCH_PATH) as conn:
                while time.monotonic() < stop:
                    try:
                        for _ in range(3):
                            table = rng.choice("rst")
                            if rng.random() < 0.5:
                                conn.execute(f"INSERT INTO {table} VALUES (%s, %s)", [rng.randrange(200), rng.randrange(200)])
                            else:
                                conn.execute(f"DELETE FROM {table} WHERE ctid = (SELECT ctid FROM {table} "
                                             "WHERE {} = %s LIMIT 1)".format("a" if table == "r" else "b" if table == "s" else "c"),
                                             [rng.randrange(200)])
                        conn.commit()
                        mine["commits"] += 1
                    except errors.DeadlockDetected:
                        conn.rollback()
                        mine["deadlocks"] += 1
                    except errors.SerializationFailure:
                        conn.rollback()
                        mine["serialization"] += 1
        except BaseException as err:  # noqa: BLE001  # reported below
            failures.append(err)
        with lock:
            for key, value in mine.items():
                tally[key] += value

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return {**tally, "seconds": time.monotonic() - started}


def main(conn: psycopg.Connection, config: Config) -> list[list[object]]:
    print(f"\n== writers: {config.writers} writers, transactions of 3 single-row statements on R, S, T, "
          f"{config.seconds:g} s per setting ==")
    rows: list[list[object]] = []
    baseline = None
    # "one writer": the rate writers of an immediate view's tables can reach, since they take turns
    for mode in ("none", "one writer", "immediate", "deferred"):
        for count in ((0,) if mode in ("none", "one writer") else (1, 2, 4)):
            _tables(conn, config.rows, config.seed)
            for name, system, query in VIEWS[:count]:
                options = {"refresh": "deferred", "budget": 50.0} if mode == "deferred" else {}
                command.create(name, query, system=system, target=conn, **options)
            result = _run(config.dsn, config.seconds, 1 if mode == "one writer" else config.writers, config.seed)
            rate = result["commits"] / result["seconds"]
            baseline = baseline or rate
            label = ("no view" if mode == "none" else "no view, 1 writer" if mode == "one writer"
                     else f"{count} {mode} view{'s' if count > 1 else ''}")
            rows.append([label, round(rate), int(result["deadlocks"]), int(result["serialization"]),
                         f"{rate / baseline:.2f}x"])
            for name, _, _ in VIEWS[:count]:
                assert command.verify(name, target=conn).ok, f"{name} differs from its recount"
                command.drop(name, target=conn)
    print_table(["setting", "commits/s", "deadlocks", "serialization failures", "vs no view"], rows)
    return rows
