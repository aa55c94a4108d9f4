"""Cyclic joins sampled through a hypertree decomposition (§5 of Reservoir Sampling over Joins).

Each bag of the decomposition is a node of the acyclic index, its rows the bag's sub-join (kept
from each new row's delta join, deleted with the rows they use). The statistical tests replay a
stream thousands of times (as test_sample.py does) and test every k-subset, or every result's
inclusion, and every pair after every prefix: inserts, multi-row inserts, deletes of sampled
results and join-column updates. p-values are printed (pytest -s) and must exceed 0.001.
"""

from __future__ import annotations

import random
from fractions import Fraction

import psycopg
import pytest

from pgivm import command
from pgivm.query.analysis.decomposition import decompose, fractional_edge_cover
from pgivm.query.parse import parse_query
from test_sample import _check_uniform, _join, _replay

TRIANGLE = ("SELECT x.src AS a, y.src AS b, z.src AS c FROM e x JOIN e y ON x.dst = y.src "
            "JOIN e z ON y.dst = z.src AND z.dst = x.src")
FOUR_CYCLE = "SELECT r.a, r.b, s.c, t.d FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c JOIN u ON t.d = u.d AND u.a = r.a"
# Two triangles, the first's z.src joined to the second's x2.src by a bridge edge m.
DUMBBELL = ("SELECT x.src AS a, y.src AS b, z.src AS c, x2.src AS d, y2.src AS e2, z2.src AS f "
            "FROM e x JOIN e y ON x.dst = y.src JOIN e z ON y.dst = z.src AND z.dst = x.src "
            "JOIN e m ON m.src = z.src JOIN e x2 ON x2.src = m.dst "
            "JOIN e y2 ON x2.dst = y2.src JOIN e z2 ON y2.dst = z2.src AND z2.dst = x2.src")


def _bags(query: str) -> str:
    cq = parse_query(query)
    decomposition = cq.analysis.decomposition
    assert decomposition is not None
    return decomposition.describe([a.alias for a in cq.atoms])


def test_the_decompositions_chosen_and_their_widths() -> None:
    f = frozenset
    assert fractional_edge_cover([f("ab"), f("bc"), f("ca")]) == Fraction(3, 2)
    assert fractional_edge_cover([f("ab"), f("bc"), f("cd"), f("da")]) == 2
    assert fractional_edge_cover([f("abc"), f("bcd"), f("cda"), f("dab")]) == Fraction(4, 3)  # Loomis-Whitney 4
    assert _bags(TRIANGLE) == "bags x+y+z (ρ* 3/2); fractional hypertree width 3/2"
    assert _bags(FOUR_CYCLE) == "bags r+s (ρ* 2); t+u (ρ* 2); fractional hypertree width 2"
    assert _bags(DUMBBELL) == ("bags x+y+z (ρ* 3/2); m (ρ* 1); x2+y2+z2 (ρ* 3/2); "
                               "fractional hypertree width 3/2")
    assert parse_query("SELECT r.a FROM r JOIN s ON r.b = s.b").analysis.decomposition is None  # acyclic
    assert decompose(parse_query(FOUR_CYCLE), [[0, 2], [1], [3]]) is None  # r+t does not join: no bag


def test_explain_shows_the_decomposition_and_verify_its_bags(conn: psycopg.Connection, dsn: str) -> None:
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, d int); "
                 "CREATE TABLE u (d int, a int)")
    command.create("c4", FOUR_CYCLE, system="sample", size=4, seed=3, target=dsn)
    lines = command.explain("c4", target=dsn)
    assert "hypertree decomposition (§5; each bag's sub-join kept as one node): bags r+s (ρ* 2); t+u (ρ* 2); " \
           "fractional hypertree width 2" in lines
    conn.execute("INSERT INTO r VALUES (1, 1), (2, 1); INSERT INTO s VALUES (1, 1), (1, 2); "
                 "INSERT INTO t VALUES (1, 1), (2, 1); INSERT INTO u VALUES (1, 1), (1, 2)")
    assert command.verify("c4", target=dsn).ok
    # A bag row removed behind pgivm's back: the bag no longer equals its sub-join.
    conn.execute("SET session_replication_role = replica")
    conn.execute("DELETE FROM pgivm_c4.rows WHERE unit = 1 AND rid = (SELECT max(rid) FROM pgivm_c4.rows WHERE unit = 1)")
    conn.execute("RESET session_replication_role")
    failed = [f.check for f in command.verify("c4", target=dsn).failures]
    assert "unit_1.rows_are_the_join_of_its_atoms" in failed, failed


STREAMS = {
    "triangle": (TRIANGLE, ["e"], 2, [
        "INSERT INTO e VALUES (1, 2), (2, 3), (3, 1)",        # one triangle: 3 results (its rotations)
        "INSERT INTO e VALUES (1, 3), (3, 2), (2, 1)",        # the reverse: 6
        "INSERT INTO e VALUES (3, 4), (4, 1)",                # 1-3-4: 9
        "DELETE FROM e WHERE src = 2 AND dst = 3",            # 6
        "UPDATE e SET dst = 5 WHERE src = 4",                 # a join column moves: 3
        "INSERT INTO e VALUES (5, 1), (1, 4)",                # 1-4-5: 6
    ]),
    "4-cycle": (FOUR_CYCLE, ["r", "s", "t", "u"], 2, [
        "INSERT INTO r VALUES (1, 1), (2, 1); INSERT INTO s VALUES (1, 1); INSERT INTO t VALUES (1, 1)",
        "INSERT INTO u VALUES (1, 1), (1, 2)",                # 2 results
        "INSERT INTO s VALUES (1, 2); INSERT INTO t VALUES (2, 1)",  # 4
        "INSERT INTO t VALUES (1, 2); INSERT INTO u VALUES (2, 1)",  # 5
        "DELETE FROM r WHERE a = 2",                          # 3
        "UPDATE u SET a = 2 WHERE d = 2",                     # a join column: 2
        "INSERT INTO r VALUES (2, 1), (3, 1); INSERT INTO u VALUES (1, 3)",  # 7
    ]),
    "dumbbell": (DUMBBELL, ["e"], 2, [
        # m may be an edge of a triangle, so the two triangles may be one: 6 results
        "INSERT INTO e VALUES (1, 2), (2, 3), (3, 1), (4, 5), (5, 6), (6, 4)",
        "INSERT INTO e VALUES (3, 4)",                        # the bridge: 7
        "INSERT INTO e VALUES (1, 4), (2, 4)",                # bridges from each node of the first: 9
        "INSERT INTO e VALUES (1, 7), (7, 3)",                # a triangle 1-7-3 sharing 1 and 3: 20
        "DELETE FROM e WHERE src = 2 AND dst = 4",            # 19
        "UPDATE e SET dst = 8 WHERE src = 5 AND dst = 6",     # a join column: the second triangle breaks: 12
        "INSERT INTO e VALUES (8, 6), (5, 6)",                # 19
    ]),
}


@pytest.mark.parametrize("case", list(STREAMS))
def test_every_prefix_is_a_uniform_sample_of_a_cyclic_join(conn: psycopg.Connection, dsn: str, case: str) -> None:
    query, tables, k, stream = STREAMS[case]
    conn.execute("CREATE TABLE e (src int, dst int); CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); "
                 "CREATE TABLE t (c int, d int); CREATE TABLE u (d int, a int)")
    command.create("v", query, system="sample", size=k, seed=4, target=dsn)
    runs = _replay(conn, "v", tables, stream, 500, seed=13)
    sizes = []
    for step in range(len(stream)):
        conn.execute(f"TRUNCATE {', '.join(tables)}")
        for statement in stream[: step + 1]:
            conn.execute(statement)
        results = _join(conn, query)
        sizes.append(len(results))
        _check_uniform(f"{case} prefix {step + 1}", [run[step] for run in runs], results, k)
    assert max(sizes) > 2 * k and min(sizes[1:]) < max(sizes), sizes  # the stream fills, shrinks and refills


@pytest.mark.parametrize("case, refresh", [("triangle", "immediate"), ("4-cycle", "immediate"), ("triangle", "deferred")])
def test_random_streams_keep_bags_equal_to_their_sub_joins(conn: psycopg.Connection, dsn: str, case: str,
                                                            refresh: str) -> None:
    """Duplicates, deletes of absent rows, join-column updates, TRUNCATE, rollbacks: after every
    statement every bag equals its sub-join, the sample is min(k, |Q|) distinct results of the join.
    (The dumbbell's bags are a triangle's and an edge's; on a random multigraph of five nodes its
    join has millions of results, which the recount of every statement would take minutes over.)"""
    query, tables, _, _ = STREAMS[case]
    conn.execute("CREATE TABLE e (src int, dst int); CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); "
                 "CREATE TABLE t (c int, d int); CREATE TABLE u (d int, a int)")
    command.create("v", query, system="sample", size=5, seed=8, refresh=refresh, target=dsn)
    rng = random.Random(case)
    columns = {"e": ("src", "dst"), "r": ("a", "b"), "s": ("b", "c"), "t": ("c", "d"), "u": ("d", "a")}
    for step in range(60):
        table = rng.choice(tables)
        first, second = columns[table]
        roll = rng.random()
        if roll < 0.55:
            rows = [f"({rng.randrange(5)}, {rng.randrange(5)})" for _ in range(rng.randrange(1, 5))]
            conn.execute(f"INSERT INTO {table} VALUES {', '.join(rows)}, {rows[0]}")  # with a duplicate
        elif roll < 0.75:
            conn.execute(f"DELETE FROM {table} WHERE {first} = %s AND {second} = %s", [rng.randrange(5), rng.randrange(5)])
        elif roll < 0.9:
            conn.execute(f"UPDATE {table} SET {second} = ({second} + 1) %% 5 WHERE {first} = %s", [rng.randrange(5)])
        elif roll < 0.96:
            with conn.transaction(force_rollback=True):
                conn.execute(f"INSERT INTO {table} VALUES (1, 2), (2, 1); DELETE FROM {table} WHERE {first} = 3")
        else:
            conn.execute(f"TRUNCATE {table}")
        report = command.verify("v", target=dsn)
        assert report.ok, (step, [str(f) for f in report.failures])
    assert conn.execute("SELECT count(*) FROM v").fetchone()[0] > 0  # type: ignore[index]
