"""Refined partitions ([L] Appendix D): the single-row update bound by rows read on hub-skewed data,
the space the paper claims (the views at ε = ½ no larger than the relations, where single
partitions' views grow with a hub's degree), and the option's refusals. The randomized streams are
``test_refined_partitions_stream_matches_recount`` in test_differential.py."""

from __future__ import annotations

import random

import psycopg
import pytest

from conftest import TRIANGLE_SQL
from pgivm import command
from pgivm.errors import PgivmError
from test_complexity import HUBS, build_skewed, single_update_reads

VIEWS = "(SELECT count(*) FROM pgivm_tri.v_rs) + (SELECT count(*) FROM pgivm_tri.v_st) + (SELECT count(*) FROM pgivm_tri.v_tr)"


@pytest.mark.parametrize("epsilon", [0.25, 0.5, 0.75])
def test_single_update_reads_within_the_bound(conn: psycopg.Connection, epsilon: float) -> None:
    """As for single partitions (test_complexity.py): at most two bounded loops and O(1) lookups,
    fewer rows than a hub's degree where the hubs are heavy."""
    build_skewed(conn, random.Random(int(epsilon * 100)))
    command.create("tri", TRIANGLE_SQL, epsilon=epsilon, partitions="refined", target=conn)
    n = conn.execute("SELECT n FROM pgivm_tri.state").fetchone()[0]
    hub_degree = conn.execute("SELECT max(degree) FROM pgivm_tri.s_b_degree").fetchone()[0]
    bound = n ** max(epsilon, 1 - epsilon)
    samples = single_update_reads(conn)
    worst = max(samples, key=lambda s: s[3])
    assert min(s[3] for s in samples) > 0
    assert worst[3] <= 8 * bound + 40, f"update {worst} read {worst[3]} rows; bound ~ {bound:.0f} (N = {n})"
    if conn.execute("SELECT bool_and(heavy) FROM pgivm_tri.s_b_degree WHERE b = ANY(%s)", [HUBS]).fetchone()[0]:
        assert worst[3] < hub_degree, f"update {worst} read as many rows as a hub's degree ({hub_degree})"
    assert command.verify("tri", strict=False, target=conn).ok


def _fans(conn: psycopg.Connection, q: int) -> int:
    """q heavy A-values in R, each joined to the same 3.5q light B-values, each of those joined in S
    to q/4 C-values of its own: single partitions' V_RS = R_heavy · S_light holds q · 3.5q · q/4
    entries, Θ(N^(3/2)) with |D| = 5.25 q² (θ ≈ 3.24q at ε = ½); refined partitions' R_hl · S_lh needs
    heavy C-values, which S does not have. T holds one tuple per C-value (no triangle closes)."""
    heavy, fan, out = q, int(3.5 * q), q // 4
    rows = {"r": [(a, 1000 + b) for a in range(heavy) for b in range(fan)],
            "s": [(1000 + b, 100_000 * (b + 1) + c) for b in range(fan) for c in range(out)],
            "t": [(100_000 * (b + 1) + c, 7) for b in range(fan) for c in range(out)]}
    for table, (x, y) in {"r": ("a", "b"), "s": ("b", "c"), "t": ("c", "a")}.items():
        conn.execute(f"DROP TABLE IF EXISTS {table}; CREATE TABLE {table} ({x} int, {y} int)")
        with conn.cursor().copy(f"COPY {table} ({x}, {y}) FROM STDIN") as copy:
            for row in rows[table]:
                copy.write_row(row)
    return sum(len(v) for v in rows.values())


def test_views_stay_linear_where_single_partitions_grow(conn: psycopg.Connection) -> None:
    """At ε = ½ the refined views hold at most |D| rows (Theorem 16: linear space), where single
    partitions' views hold Θ(N^(3/2)): their ratio to |D| doubles as |D| quadruples."""
    sizes = {}
    for partitions in ("single", "refined"):
        for q in (16, 32):
            n = _fans(conn, q)
            command.create("tri", TRIANGLE_SQL, epsilon=0.5, partitions=partitions, target=conn)
            sizes[partitions, q] = (n, conn.execute(f"SELECT {VIEWS}").fetchone()[0])
            assert command.verify("tri", strict=True, target=conn).ok
            command.drop("tri", target=conn)
    print(f"|D| and view rows at epsilon = 1/2: {sizes}")
    (n1, single1), (n2, single2) = sizes["single", 16], sizes["single", 32]
    assert single1 == 16 * 56 * 4 and single2 == 32 * 112 * 8, sizes
    assert single2 / n2 > 1.8 * single1 / n1, sizes  # superlinear: N^(3/2)
    assert sizes["refined", 16][1] <= n1 and sizes["refined", 32][1] <= n2, sizes


def test_status_explain_and_refusals(conn: psycopg.Connection, dsn: str) -> None:
    build_skewed(conn, random.Random(1))
    command.create("tri", TRIANGLE_SQL, partitions="refined", target=conn)
    relations = next(s for s in command.status("tri", target=conn).sections if s.title == "relations")
    assert [row[0] for row in relations.rows] == ["R on A", "R on B", "S on B", "S on C", "T on C", "T on A"]
    assert any(row[2] > 0 for row in relations.rows)  # the hubs are heavy
    assert "Appendix D" in "\n".join(command.explain("tri", target=conn))
    command.action("tri", "alter", epsilon=0.25, target=conn)
    assert command.verify("tri", strict=True, target=conn).ok
    for query in ("SELECT r.a, r.b, s.c FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a",):
        with pytest.raises(PgivmError) as refused:
            command.create("other", query, system="ivme", partitions="refined", target=conn)
        assert "triangle count only" in str(refused.value)
    with pytest.raises(PgivmError) as refused:
        command.create("other", TRIANGLE_SQL, partitions="both", target=conn)
    assert "single or refined" in str(refused.value)
