"""Randomized differential tests: after every statement the maintained count equals a plain-SQL
recount, and every IVMε invariant holds (partition, thresholds, size invariant, views, no zeros).

The streams are skewed and steered: bursts of inserts on a fresh value push it across the
light -> heavy threshold, bursts of deletes pull a heavy value back under theta/2, and growth and
shrink phases make |D| double and quarter so that N doubles and halves. Statements are single-row
and multi-row INSERT/DELETE/UPDATE, duplicates, deletes of absent rows, UPDATEs of join columns and
of other columns, NULL join keys, COPY, TRUNCATE, and transactions rolled back whole or to a savepoint.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass, field

import psycopg
import pytest
from psycopg import sql

from pgivm import command
from conftest import EDGE_SQL, TRIANGLE_SQL

EPSILONS = [0.0, 0.25, 0.5, 0.75, 1.0]


@dataclass(frozen=True)
class Form:
    """A view shape: its base tables, each with (partition column, other column)."""

    name: str
    view_sql: str
    tables: dict[str, tuple[str, str]]
    relations: dict[str, str]  # relation letter -> base table
    partitioned: bool = False  # base tables partitioned on their first column (see setup_form)


RST = Form("rst", TRIANGLE_SQL, {"r": ("a", "b"), "s": ("b", "c"), "t": ("c", "a")}, {"r": "r", "s": "s", "t": "t"})
EDGE = Form("edge", EDGE_SQL, {"e": ("src", "dst")}, {"r": "e", "s": "e", "t": "e"})
PART_RST = Form("part-rst", RST.view_sql, RST.tables, RST.relations, partitioned=True)
PART_EDGE = Form("part-edge", EDGE.view_sql, EDGE.tables, EDGE.relations, partitioned=True)

# Each base table of a partitioned form: by range on its first column, one range split again by
# hash on the second column (two levels), and a default partition for the rest (NULL, large values).
PARTITIONS = [
    ("p_low", "FOR VALUES FROM (MINVALUE) TO (10)", None),
    ("p_mid", "FOR VALUES FROM (10) TO (25)", "HASH"),
    ("p_mid_h0", "FOR VALUES WITH (MODULUS 2, REMAINDER 0)", "p_mid"),
    ("p_mid_h1", "FOR VALUES WITH (MODULUS 2, REMAINDER 1)", "p_mid"),
    ("p_rest", "DEFAULT", None),
]


@dataclass
class Tracker:
    """What the stream achieved, to prove it exercised every rebalancing path."""

    max_n: int = 0
    halved: bool = False
    promotions: int = 0  # light -> heavy moves observed in statements without a major rebalancing
    demotions: int = 0
    heavy: dict[str, set[object]] = field(default_factory=dict)
    last_n: int = 0
    statements: int = 0
    steps: Counter[str] = field(default_factory=Counter)  # statement kinds issued outside transactions


def assert_exact(conn: psycopg.Connection, where: str) -> None:
    report = command.verify("tri", target=conn)
    assert report.maintained == report.recount, f"{where}: maintained {report.maintained} != recount {report.recount}"
    assert not report.failures, f"{where}: invariants violated: {[str(f) for f in report.failures]}"


def observe(conn: psycopg.Connection, tracker: Tracker) -> None:
    """Record N and the heavy values after a statement; count minor moves between statements."""
    n = conn.execute("SELECT n FROM pgivm_tri.state").fetchone()[0]
    heavy = {
        k: {row[0] for row in conn.execute(sql.SQL("SELECT {} FROM {} WHERE heavy").format(
            sql.Identifier({"r": "a", "s": "b", "t": "c"}[k]), sql.Identifier("pgivm_tri", f"{k}_degree"))).fetchall()}
        for k in "rst"
    }
    if tracker.heavy and n == tracker.last_n:  # N unchanged: no major rebalancing, so moves were minor
        for k in "rst":
            tracker.promotions += len(heavy[k] - tracker.heavy[k])
            tracker.demotions += len(tracker.heavy[k] - heavy[k])
    if n < tracker.max_n:
        tracker.halved = True
    tracker.max_n = max(tracker.max_n, n)
    tracker.heavy = heavy
    tracker.last_n = n


class Stream:
    """Random statements over a form's tables, steered by the current IVMε thresholds."""

    def __init__(self, conn: psycopg.Connection, form: Form, rnd: random.Random) -> None:
        self.conn, self.form, self.rnd = conn, form, rnd
        self.fresh = 1000

    def table(self) -> tuple[str, str, str]:
        name = self.rnd.choice(list(self.form.tables))
        first, second = self.form.tables[name]
        return name, first, second

    def value(self) -> int:
        return self.rnd.randint(0, 3) if self.rnd.random() < 0.35 else self.rnd.randint(0, 40)

    def run(self, sql_text: str, params: list[object] | None = None) -> None:
        self.conn.execute(sql_text, params)  # type: ignore[arg-type]

    def state(self) -> tuple[float, int, int]:
        theta, n, size = self.conn.execute("SELECT theta, n, db_size FROM pgivm_tri.state").fetchone()
        return theta, n, size

    # --- statements -------------------------------------------------------------------------
    def insert_one(self) -> None:
        t, a, b = self.table()
        self.run(f"INSERT INTO {t} ({a}, {b}) VALUES (%s, %s)", [self.value(), self.value()])

    def insert_many(self) -> None:
        t, a, b = self.table()
        rows = [(self.value(), self.value()) for _ in range(self.rnd.randint(2, 12))]
        values = ", ".join(f"({x}, {y})" for x, y in rows)
        self.run(f"INSERT INTO {t} ({a}, {b}) VALUES {values}")

    def insert_duplicate(self) -> None:
        t, a, b = self.table()
        self.run(f"INSERT INTO {t} ({a}, {b}) SELECT {a}, {b} FROM {t} ORDER BY random() LIMIT %s",
                 [self.rnd.randint(1, 3)])

    def insert_nulls(self) -> None:
        t, a, b = self.table()
        self.run(f"INSERT INTO {t} ({a}, {b}) VALUES (NULL, %s), (%s, NULL), (NULL, NULL)", [self.value(), self.value()])

    def copy_rows(self) -> None:
        t, a, b = self.table()
        with self.conn.cursor().copy(f"COPY {t} ({a}, {b}) FROM STDIN") as copy:
            for _ in range(self.rnd.randint(1, 8)):
                copy.write_row((self.value(), self.value()))

    def delete_one(self) -> None:
        t, _, _ = self.table()
        self.run(f"DELETE FROM {t} WHERE ctid = (SELECT ctid FROM {t} ORDER BY random() LIMIT 1)")

    def delete_many(self) -> None:
        t, a, b = self.table()
        self.run(f"DELETE FROM {t} WHERE {a} = %s AND {b} %% 3 = %s", [self.value(), self.rnd.randint(0, 2)])

    def delete_chunk(self) -> None:
        """About a fifth of a table in one statement: drives |D| below N/4 so that N halves."""
        t, _, _ = self.table()
        self.run(f"DELETE FROM {t} WHERE ctid IN (SELECT ctid FROM {t} ORDER BY random() "
                 f"LIMIT (SELECT count(*) / 5 + 1 FROM {t}))")

    def delete_absent(self) -> None:
        t, a, _ = self.table()
        self.run(f"DELETE FROM {t} WHERE {a} = -12345")

    def update_join_column(self) -> None:
        t, a, b = self.table()
        column = self.rnd.choice([a, b])
        self.run(f"UPDATE {t} SET {column} = %s WHERE ctid = (SELECT ctid FROM {t} ORDER BY random() LIMIT 1)",
                 [self.value()])

    def update_many(self) -> None:
        t, a, b = self.table()
        self.run(f"UPDATE {t} SET {b} = {b} + 1 WHERE {a} = %s", [self.value()])

    def update_other_column(self) -> None:
        t, a, _ = self.table()
        self.run(f"UPDATE {t} SET note = 'touched' WHERE {a} = %s", [self.value()])

    def promote(self) -> None:
        """A fresh value with just enough distinct tuples to cross 3/2 theta (a minor rebalancing)."""
        theta, n, size = self.state()
        t, a, b = self.table()
        copies = list(self.form.relations.values()).count(t)  # a self-join row is a tuple of each relation
        count = math.ceil(1.5 * theta) + 1
        if count > 150 or size + copies * count >= n:  # out of reach before N doubles: just a burst
            count = self.rnd.randint(3, 20)
        self.fresh += 1
        self.run(f"INSERT INTO {t} ({a}, {b}) SELECT %s, 5000 + g FROM generate_series(1, %s) g", [self.fresh, count])

    def demote(self) -> None:
        """Delete tuples of a heavy value until its degree is below theta/2 (a minor rebalancing)."""
        theta, _, _ = self.state()
        relation = self.rnd.choice("rst")
        t = self.form.relations[relation]
        a, b = self.form.tables[t]
        heavy = self.conn.execute(
            sql.SQL("SELECT {x}, degree FROM {d} WHERE heavy ORDER BY degree LIMIT 1").format(
                x=sql.Identifier({"r": "a", "s": "b", "t": "c"}[relation]),
                d=sql.Identifier("pgivm_tri", f"{relation}_degree"),
            )
        ).fetchone()
        if heavy is None:
            return self.delete_one()
        value, degree = heavy
        keep = max(0, math.ceil(0.5 * theta) - 1)
        self.run(
            f"DELETE FROM {t} WHERE {a} = %s AND {b} IN "
            f"(SELECT DISTINCT {b} FROM {t} WHERE {a} = %s AND {b} IS NOT NULL ORDER BY {b} LIMIT %s)",
            [value, value, max(1, degree - keep)],
        )
        return None

    def truncate(self) -> None:
        t, _, _ = self.table()
        self.run(f"TRUNCATE {t}")

    # --- partitioned forms only: statements naming a partition, and rows moving between them ---
    def insert_into_partition(self) -> None:
        t, a, b = self.table()
        rows = ", ".join(f"({self.rnd.randint(0, 9)}, {self.value()})" for _ in range(self.rnd.randint(1, 5)))
        self.run(f"INSERT INTO {t}_p_low ({a}, {b}) VALUES {rows}")

    def delete_from_partition(self) -> None:
        t, a, _ = self.table()
        part = self.rnd.choice(["p_low", "p_mid_h0", "p_mid_h1", "p_rest"])
        self.run(f"DELETE FROM {t}_{part} WHERE {a} %% 4 = %s", [self.rnd.randint(0, 3)])

    def move_between_partitions(self) -> None:
        """An UPDATE through the parent that moves rows to another partition (and back)."""
        t, a, _ = self.table()
        shift = self.rnd.choice([12, -12])
        self.run(f"UPDATE {t} SET {a} = {a} + %s WHERE {a} BETWEEN %s AND %s", [shift, *sorted((self.value(), self.value()))])

    def truncate_partition(self) -> None:
        t, _, _ = self.table()
        self.run(f"TRUNCATE {t}_{self.rnd.choice(['p_low', 'p_mid', 'p_mid_h1', 'p_rest'])}")

    PARTITION_STEPS = {"insert_into_partition": 6, "delete_from_partition": 4, "move_between_partitions": 6,
                       "truncate_partition": 5}

    GROW = {"insert_one": 30, "insert_many": 12, "insert_duplicate": 6, "insert_nulls": 2, "copy_rows": 3,
            "delete_one": 10, "delete_many": 3, "delete_absent": 2, "update_join_column": 8, "update_many": 3,
            "update_other_column": 2, "promote": 6, "demote": 3}
    SHRINK = {"insert_one": 6, "insert_duplicate": 2, "delete_one": 20, "delete_many": 12, "delete_chunk": 14,
              "delete_absent": 2, "update_join_column": 8, "update_many": 3, "promote": 2, "demote": 8}

    def step(self, weights: dict[str, int]) -> str:
        name = self.rnd.choices(list(weights), weights=list(weights.values()))[0]
        getattr(self, name)()
        return name


def setup_form(conn: psycopg.Connection, form: Form, rnd: random.Random, rows: int) -> None:
    for t, (a, b) in form.tables.items():
        if form.partitioned:
            conn.execute(f"CREATE TABLE {t} ({a} int, {b} int, note text) PARTITION BY RANGE ({a})")
            for name, bounds, below in PARTITIONS:
                parent = f"{t}_{below}" if below and below != "HASH" else t
                split = f" PARTITION BY HASH ({b})" if below == "HASH" else ""
                conn.execute(f"CREATE TABLE {t}_{name} PARTITION OF {parent} {bounds}{split}")
        else:
            conn.execute(f"CREATE TABLE {t} ({a} int, {b} int, note text)")
        values = ", ".join(f"({rnd.randint(0, 40)}, {rnd.randint(0, 40)})" for _ in range(rows))
        conn.execute(f"INSERT INTO {t} ({a}, {b}) VALUES {values}")


def run_stream(conn: psycopg.Connection, form: Form, epsilon: float, seed: int, steps: int,
               strategy: str = "ivme", batch_threshold: int | None = None) -> Tracker:
    rnd = random.Random(seed)
    setup_form(conn, form, rnd, rows=25)
    options = {"epsilon": epsilon} if strategy == "ivme" else {}
    command.create("tri", form.view_sql, system=strategy, batch_threshold=batch_threshold, target=conn, **options)
    report = command.verify("tri", strict=True, target=conn)
    assert report.ok, [str(f) for f in report.failures]

    ivme = strategy == "ivme"
    stream = Stream(conn, form, rnd)
    tracker = Tracker()
    if ivme:
        observe(conn, tracker)
    # The steering statements read IVMε's thresholds; other strategies get the same mix without them.
    grow, shrink = Stream.GROW, Stream.SHRINK
    if form.partitioned:
        grow, shrink = {**grow, **Stream.PARTITION_STEPS}, {**shrink, **Stream.PARTITION_STEPS}
    if not ivme:
        grow = {k: v for k, v in grow.items() if k not in ("promote", "demote")}
        shrink = {k: v for k, v in shrink.items() if k not in ("promote", "demote")}
    phases = [(grow, steps // 3), (shrink, steps // 3), (grow, steps - 2 * (steps // 3))]
    for weights, count in phases:
        for i in range(count):
            block = rnd.random()
            if block < 0.06:  # a transaction rolled back whole: every statement inside is checked too
                conn.execute("BEGIN")
                for _ in range(rnd.randint(1, 4)):
                    name = stream.step(weights)
                    assert_exact(conn, f"inside rolled-back transaction after {name}")
                conn.execute("ROLLBACK")
                assert_exact(conn, "after ROLLBACK")
            elif block < 0.10:  # rolled back to a savepoint, then committed
                conn.execute("BEGIN")
                stream.step(weights)
                conn.execute("SAVEPOINT sp")
                for _ in range(rnd.randint(1, 3)):
                    stream.step(weights)
                conn.execute("ROLLBACK TO SAVEPOINT sp")
                assert_exact(conn, "after ROLLBACK TO SAVEPOINT")
                stream.step(weights)
                conn.execute("COMMIT")
                assert_exact(conn, "after COMMIT")
            elif block < 0.11:
                stream.truncate()
                assert_exact(conn, "after TRUNCATE")
            else:
                name = stream.step(weights)
                tracker.steps[name] += 1
                assert_exact(conn, f"after {name} (step {i})")
            tracker.statements += 1
            if ivme:
                observe(conn, tracker)
    return tracker


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("form", [RST, EDGE], ids=lambda f: f.name)
def test_random_stream_matches_recount(conn: psycopg.Connection, form: Form, epsilon: float) -> None:
    seed = int(epsilon * 100) + (0 if form is RST else 7)
    tracker = run_stream(conn, form, epsilon, seed=seed, steps=300)
    state = conn.execute("SELECT major_rebalances, minor_rebalances FROM pgivm_tri.state").fetchone()
    # The stream must have exercised what it claims to: N doubled and halved, values crossed both ways.
    assert tracker.halved, "N never halved: the shrink phase did not shrink |D| enough"
    assert state[0] >= 3, f"only {state[0]} major rebalancings"
    if form is EDGE and epsilon == 0.75:
        # Heavy needs degree >= N^0.75 while one edge row is 3 tuples of |D| (N >= 2|D|): only a hub
        # owning nearly all edges of a graph with N > 1300 can get there, beyond this stream's size.
        # The same apply/move functions are exercised by rst at 0.75 and by edge at 0.25 and 0.5.
        assert state[1] == 0 or tracker.promotions + tracker.demotions > 0
    elif 0 < epsilon < 1:
        assert state[1] > 0, "no minor rebalancing happened"
        assert tracker.promotions > 0, "no value moved light -> heavy by a minor rebalancing"
        assert tracker.demotions > 0, "no value moved heavy -> light by a minor rebalancing"
    else:  # epsilon in {0, 1}: classical first-order IVM, all heavy or all light, never a minor move
        assert state[1] == 0


@pytest.mark.parametrize("epsilon", [0.0, 0.25, 0.5, 1.0])
@pytest.mark.parametrize("form", [RST, EDGE], ids=lambda f: f.name)
def test_set_at_a_time_path_matches_recount(conn: psycopg.Connection, form: Form, epsilon: float) -> None:
    """Every statement, even a single row, through K_delta and apply_batch_K (batch threshold 0)."""
    tracker = run_stream(conn, form, epsilon, seed=int(epsilon * 100) + 3, steps=200, batch_threshold=0)
    assert tracker.halved and tracker.max_n > 0
    if 0 < epsilon < 1 and form is RST:
        assert conn.execute("SELECT minor_rebalances FROM pgivm_tri.state").fetchone()[0] > 0


@pytest.mark.parametrize("strategy", ["first-order", "recompute"])
@pytest.mark.parametrize("form", [RST, EDGE], ids=lambda f: f.name)
def test_baseline_strategies_match_recount(conn: psycopg.Connection, form: Form, strategy: str) -> None:
    """The baselines pass the same randomized stream, checked after every statement."""
    tracker = run_stream(conn, form, 0.5, seed=99, steps=200, strategy=strategy)
    assert tracker.statements == 200


@pytest.mark.parametrize("strategy,epsilon,threshold", [("ivme", 0.5, None), ("ivme", 0.25, 0), ("ivme", 0.0, None),
                                                        ("first-order", 0.5, None), ("recompute", 0.5, None)])
@pytest.mark.parametrize("form", [PART_RST, PART_EDGE], ids=lambda f: f.name)
def test_partitioned_base_tables_match_recount(conn: psycopg.Connection, form: Form, strategy: str, epsilon: float,
                                               threshold: int | None) -> None:
    """Base tables partitioned on two levels: writes through the parent and into partitions, rows
    moving between partitions, TRUNCATE of a partition or of the parent, checked after every statement."""
    tracker = run_stream(conn, form, epsilon, seed=17, steps=150, strategy=strategy, batch_threshold=threshold)
    for kind in Stream.PARTITION_STEPS:
        assert tracker.steps[kind] > 0, f"the stream never ran {kind}: {dict(tracker.steps)}"


def test_first_order_set_at_a_time_path_matches_recount(conn: psycopg.Connection) -> None:
    tracker = run_stream(conn, EDGE, 0.5, seed=5, steps=150, strategy="first-order", batch_threshold=0)
    assert tracker.statements == 150


def test_same_stream_same_count_for_every_epsilon(server_dsn: str, dsn: str) -> None:
    """Invariant (g): the result does not depend on epsilon."""
    counts = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        rnd = random.Random(42)
        setup_form(conn, RST, rnd, rows=60)
        for i, epsilon in enumerate(EPSILONS):
            command.create(f"tri{i}", TRIANGLE_SQL, epsilon=epsilon, target=conn)
        stream = Stream(conn, RST, rnd)
        for _ in range(80):
            conn.execute("SELECT 1")
            stream.step({k: v for k, v in Stream.GROW.items() if k not in ("promote", "demote")})
        for i in range(len(EPSILONS)):
            counts.append(conn.execute(f"SELECT * FROM tri{i}").fetchone()[0])
        recount = conn.execute(TRIANGLE_SQL).fetchone()[0]
    assert counts == [recount] * len(EPSILONS)


def test_rebalancing_never_changes_the_count(conn: psycopg.Connection) -> None:
    """Invariant (f): forced major rebalancings and ε changes leave Q alone."""
    rnd = random.Random(3)
    setup_form(conn, RST, rnd, rows=80)
    command.create("tri", TRIANGLE_SQL, epsilon=0.5, target=conn)
    before = conn.execute("SELECT * FROM tri").fetchone()[0]
    for epsilon in (0.0, 0.3, 1.0, 0.5):
        command.action("tri", "alter", epsilon=epsilon, target=conn)
        assert conn.execute("SELECT * FROM tri").fetchone()[0] == before
        report = command.verify("tri", strict=True, target=conn)
        assert report.ok, [str(f) for f in report.failures]


def test_empty_tables_then_growth_from_nothing(conn: psycopg.Connection) -> None:
    """From an empty database N starts at 1: the first insert doubles it (small-N edge cases)."""
    for t, (a, b) in RST.tables.items():
        conn.execute(f"CREATE TABLE {t} ({a} int, {b} int, note text)")
    command.create("tri", TRIANGLE_SQL, epsilon=0.5, target=conn)
    assert conn.execute("SELECT n, db_size FROM pgivm_tri.state").fetchone() == (1, 0)
    for a, b, c in [(1, 2, 3), (1, 2, 3), (2, 3, 1), (3, 1, 2)]:
        conn.execute("INSERT INTO r VALUES (%s, %s)", [a, b])
        conn.execute("INSERT INTO s VALUES (%s, %s)", [b, c])
        conn.execute("INSERT INTO t VALUES (%s, %s)", [c, a])
        assert_exact(conn, "growing from empty")
    for t in "rst":
        conn.execute(f"DELETE FROM {t}")
        assert_exact(conn, f"after emptying {t}")
    assert conn.execute("SELECT * FROM tri").fetchone()[0] == 0
