"""Reservoir sampling over joins (system ``sample``): uniformity, the predicate reservoir, the index.

Statistical tests run thousands of seeded trials inside the server (one DO block replays a fixed
stream per trial, with the view's random stream reseeded, and logs the sample after every
statement), then test the observed samples with chi-square: every k-subset against the uniform
distribution, after every prefix of the stream (inserts, multi-row inserts, deletes that hit the
sample and are refilled, updates of join columns), and the pairs (second-order inclusion). The
p-values are printed (pytest -s) and must exceed 0.001. Fixed seeds: the outcome is reproducible.
"""

from __future__ import annotations

import itertools
import math
import random
import subprocess
import sys
from collections import Counter

import psycopg
import pytest

from pgivm import capture, command
from pgivm.errors import PgivmError
from pgivm.query.parse import parse_query
from pgivm.stats import chi_square_homogeneity, chi_square_uniform
from pgivm.systems.sample import _splitmix

ALPHA = 0.001


def _replay(conn: psycopg.Connection, view: str, tables: list[str], stream: list[str], trials: int,
            seed: int) -> list[list[frozenset[str]]]:
    """Run ``stream`` ``trials`` times from empty tables, the view reseeded each time; the sample
    (each result as text) after every statement of every trial."""
    conn.execute("CREATE TEMP TABLE trial_log (trial int, step int, sample text[])")
    statements = ", ".join("'" + s.replace("'", "''") + "'" for s in stream)
    seeds = ", ".join(str(_splitmix(seed * 1_000_003 + t)) for t in range(trials))
    # Every trial empties and refills the state: vacuumed after each transaction, its tables and
    # indexes stay small (without it the trials slowed down twofold as dead rows piled up).
    state = [r[0] for r in conn.execute(
        "SELECT format('%%I.%%I', schemaname, tablename) FROM pg_tables WHERE schemaname = %s", [f"pgivm_{view}"])]
    for first in range(1, trials + 1, 10):  # ten trials per transaction: the state's dead rows get pruned
        conn.execute(f"""
        DO $$
        DECLARE t int; i int; stmts text[] := ARRAY[{statements}]; seeds bigint[] := ARRAY[{seeds}]::bigint[];
        BEGIN
            FOR t IN {first}..{min(first + 9, trials)} LOOP
                TRUNCATE {", ".join(tables)};
                UPDATE pgivm_{view}.state SET rng = seeds[t];
                FOR i IN 1..cardinality(stmts) LOOP
                    EXECUTE stmts[i];
                    INSERT INTO trial_log SELECT t, i, coalesce(array_agg(v::text ORDER BY v::text), '{{}}') FROM {view} v;
                END LOOP;
            END LOOP;
        END $$""")
        conn.execute(f"VACUUM {', '.join([*state, *tables])}")
    out: list[list[frozenset[str]]] = [[frozenset()] * len(stream) for _ in range(trials)]
    for trial, step, sample in conn.execute("SELECT trial, step, sample FROM trial_log"):
        out[trial - 1][step - 1] = frozenset(sample)
        assert len(sample) == len(set(sample)), f"a result sampled twice: {sample}"
    conn.execute("DROP TABLE trial_log")
    return out


def _join(conn: psycopg.Connection, query: str) -> list[str]:
    return sorted(str(r[0]) for r in conn.execute(f"SELECT v::text FROM ({query}) v"))


def _check_uniform(label: str, samples: list[frozenset[str]], results: list[str], k: int) -> None:
    """Every k-subset (or, when they are too many, every result's inclusion) equally likely; pairs too."""
    assert len(set(results)) == len(results), "the test instance must have distinct results"
    size = min(k, len(results))
    for s in samples:
        assert len(s) == size and s <= set(results), (label, s)
    if len(results) <= k:
        return
    subsets = list(itertools.combinations(sorted(results), k))
    if len(subsets) * 5 <= len(samples):
        seen = Counter(tuple(sorted(s)) for s in samples)
        stat, df, p = chi_square_uniform([seen[c] for c in subsets])
        print(f"{label}: |Q| = {len(results)}, k = {k}, {len(subsets)} subsets, chi2 = {stat:.1f} (df {df}), p = {p:.4f}")
    else:
        seen = Counter(r for s in samples for r in s)
        stat, df, p = chi_square_uniform([seen[r] for r in results])
        print(f"{label}: |Q| = {len(results)}, k = {k}, inclusion counts, chi2 = {stat:.1f} (df {df}), p = {p:.4f}")
    assert p > ALPHA, f"{label}: the sample is not uniform (p = {p:.2e})"
    if k < 2:
        return
    pairs = Counter(pair for s in samples for pair in itertools.combinations(sorted(s), 2))
    all_pairs = list(itertools.combinations(sorted(results), 2))
    stat2, df2, p2 = chi_square_uniform([pairs[x] for x in all_pairs])
    print(f"{label}: second-order inclusion over {len(all_pairs)} pairs, chi2 = {stat2:.1f} (df {df2}), p = {p2:.4f}")
    assert p2 > ALPHA, f"{label}: pairs are not equally likely (p = {p2:.2e})"


TWO_WAY = "SELECT r.a, r.b, s.c FROM r JOIN s ON r.b = s.b"


def test_every_prefix_is_a_uniform_sample_through_inserts_deletes_and_updates(conn: psycopg.Connection, dsn: str) -> None:
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int)")
    command.create("v", TWO_WAY, system="sample", size=3, seed=1, target=dsn)
    stream = [
        "INSERT INTO s VALUES (1, 10), (1, 11), (1, 12)",
        "INSERT INTO r VALUES (100, 1)",                      # a batch of 3 (4 positions: one dummy)
        "INSERT INTO r VALUES (101, 1), (102, 1)",            # a multi-row statement: |Q| = 9
        "INSERT INTO s VALUES (1, 13)",                       # |Q| = 12
        "DELETE FROM r WHERE a = 101",                        # sampled results go, the sample is refilled
        "INSERT INTO r VALUES (104, 1)",
        "UPDATE s SET b = 2 WHERE c = 10",                    # a join column moves
        "INSERT INTO r VALUES (105, 2)",
        "DELETE FROM s WHERE c IN (11, 12)",                  # |Q| = 5
        "DELETE FROM r WHERE a = 100",                        # |Q| = 3 = k
        "DELETE FROM s WHERE c = 13",                         # |Q| = 1 < k: the sample is all of it
        "INSERT INTO s VALUES (1, 14), (2, 15)",              # full again
    ]
    trials = 1400
    runs = _replay(conn, "v", ["r", "s"], stream, trials, seed=11)
    for step in range(len(stream)):
        # the join after this prefix, computed by PostgreSQL on the same statements
        conn.execute("TRUNCATE r, s")
        for statement in stream[: step + 1]:
            conn.execute(statement)
        results = _join(conn, TWO_WAY)
        _check_uniform(f"prefix {step + 1} ({stream[step]})", [run[step] for run in runs], results, 3)


LINE3 = "SELECT g1.src AS a, g2.src AS b, g3.src AS c, g3.dst AS d FROM g g1 JOIN g g2 ON g1.dst = g2.src JOIN g g3 ON g2.dst = g3.src"


def test_self_join_line3_is_uniform_after_every_statement(conn: psycopg.Connection, dsn: str) -> None:
    """One inserted edge is three logical inserts (g1, g2, g3): every 3-path is generated once."""
    conn.execute("CREATE TABLE g (src int, dst int)")
    command.create("p", LINE3, system="sample", size=3, seed=2, target=dsn)
    stream = [
        "INSERT INTO g VALUES (1, 2), (2, 3), (3, 4)",
        "INSERT INTO g VALUES (2, 5), (5, 3)",
        "INSERT INTO g VALUES (3, 1)",
        "INSERT INTO g VALUES (4, 2)",
        "DELETE FROM g WHERE src = 5",
        "UPDATE g SET dst = 5 WHERE src = 4",
        "INSERT INTO g VALUES (5, 1), (1, 3)",
    ]
    runs = _replay(conn, "p", ["g"], stream, 1200, seed=5)
    for step in range(len(stream)):
        conn.execute("TRUNCATE g")
        for statement in stream[: step + 1]:
            conn.execute(statement)
        results = _join(conn, LINE3)
        _check_uniform(f"line-3 prefix {step + 1}", [run[step] for run in runs], results, 3)


def _algorithm_r(items: list[str], k: int, rng: random.Random) -> frozenset[str]:
    """Waterman's Algorithm R over the real items only: the reference the predicate reservoir must match."""
    sample: list[str] = []
    for i, item in enumerate(items):
        if i < k:
            sample.append(item)
        else:
            j = rng.randrange(i + 1)
            if j < k:
                sample[j] = item
    return frozenset(sample)


PATTERNS = {
    # S rows in bucket order; R rows one statement each; the condition r.a < s.c makes dummies.
    "dummies then reals": (["INSERT INTO s VALUES " + ", ".join(f"(1, {c})" for c in range(1, 7))],
                           ["INSERT INTO r VALUES (9, 1)", "INSERT INTO r VALUES (8, 1)", "INSERT INTO r VALUES (3, 1)",
                            "INSERT INTO r VALUES (0, 1)"]),
    "alternating": (["INSERT INTO s VALUES (2, 0), (2, 11), (2, 0), (2, 12), (2, 0), (2, 13)"],
                    ["INSERT INTO r VALUES (0, 2)", "INSERT INTO r VALUES (1, 2)", "INSERT INTO r VALUES (5, 2)"]),
    "empty batches": (["INSERT INTO s VALUES (3, 20), (3, 21), (4, 50)"],
                      ["INSERT INTO r VALUES (5, 99)", "INSERT INTO r VALUES (1, 3)", "INSERT INTO r VALUES (6, 98)",
                       "INSERT INTO r VALUES (2, 3)", "INSERT INTO r VALUES (7, 97)", "INSERT INTO r VALUES (3, 3)"]),
}


@pytest.mark.parametrize("pattern", list(PATTERNS))
@pytest.mark.parametrize("k", [1, 3, 20])
def test_predicate_reservoir_matches_algorithm_r_on_the_real_items(conn: psycopg.Connection, dsn: str, pattern: str,
                                                                   k: int) -> None:
    query = "SELECT r.a, s.c FROM r JOIN s ON r.b = s.b WHERE r.a < s.c"
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int)")
    command.create("pr", query, system="sample", size=k, seed=3, target=dsn)
    setup, inserts = PATTERNS[pattern]
    stream = setup + inserts
    trials = 1000
    runs = _replay(conn, "pr", ["r", "s"], stream, trials, seed=100 + k)
    # the real items in stream order, as PostgreSQL sees them (each insert's new results)
    conn.execute("TRUNCATE r, s")
    reals: list[str] = []
    for statement in stream:
        before = set(_join(conn, query))
        conn.execute(statement)
        reals += sorted(set(_join(conn, query)) - before)
    final = [run[-1] for run in runs]
    if k >= len(reals):
        assert all(s == frozenset(reals) for s in final), "with k above the number of reals, the sample is all of them"
        return
    rng = random.Random(k)
    reference = [_algorithm_r(reals, k, rng) for _ in range(trials)]
    cells = sorted(set(final) | set(reference), key=sorted)
    seen, expected = Counter(final), Counter(reference)
    stat, df, p = chi_square_homogeneity([seen[c] for c in cells], [expected[c] for c in cells])
    print(f"{pattern}, k = {k}: {len(reals)} reals, against Algorithm R: chi2 = {stat:.1f} (df {df}), p = {p:.4f}")
    assert p > ALPHA, f"{pattern}, k = {k}: differs from Algorithm R (p = {p:.2e})"
    _check_uniform(f"{pattern}, k = {k}", final, sorted(set(reals)), k)


STAR = ("SELECT f.x, d1.y AS y1, d2.y AS y2, e.y AS y3 FROM f JOIN d1 ON f.k1 = d1.k JOIN d2 ON f.k2 = d2.k "
        "JOIN e ON d1.y = e.k")


def stored(query: str, column: str) -> str:
    """``alias.column`` of the query as its atom's table in the state names it: by the column's
    place among the atom's columns (c1, c2, ...), whatever the base column is called."""
    alias, name = column.split(".")
    return f"{alias}.{capture.stored_column(parse_query(query).atom(alias).columns, name)}"


def test_index_invariants_and_every_batch_enumerates_exactly_the_new_results(conn: psycopg.Connection, dsn: str) -> None:
    """After each insert: the invariants recomputed from scratch (verify), and Retrieve(z) for every
    z of the new row's batch gives exactly the results through that row (checked against SQL),
    each once; the batches' real results add up to the join."""
    conn.execute("CREATE TABLE f (x int, k1 int, k2 int); CREATE TABLE d1 (k int, y int); "
                 "CREATE TABLE d2 (k int, y int); CREATE TABLE e (k int, y int)")
    command.create("st", STAR, system="sample", size=4, seed=4, target=dsn)
    rng = random.Random(9)
    tables = {"f": ("x", "k1", "k2"), "d1": ("k", "y"), "d2": ("k", "y"), "e": ("k", "y")}
    atoms = ["f", "d1", "d2", "e"]
    reals_total = 0
    for step in range(70):
        table = rng.choice(atoms)
        values = tuple(rng.randrange(4) if c != "x" else step for c in tables[table])
        conn.execute(f"INSERT INTO {table} VALUES ({', '.join(map(str, values))})")
        atom = atoms.index(table)
        rid = conn.execute(f"SELECT max(rid) FROM pgivm_st.a{atom + 1}").fetchone()[0]
        exp = conn.execute("SELECT pgivm_st.tuple_exp(children, cedges, (SELECT kids FROM pgivm_st.rows WHERE rid = %s)) "
                           "FROM pgivm_st.node WHERE node = %s", [rid, atom * 4 + atom]).fetchone()[0]
        found = []
        if exp is not None:
            found = [r[0] for r in conn.execute(
                "SELECT pgivm_st.retrieve_tuple(%s, %s, z) FROM generate_series(0, %s) z", [atom * 4 + atom, rid, 2**exp - 1])
                if r[0] is not None]
            assert len(found) * 2 ** (2 * 4 - 2) >= 2**exp or not found, "a batch below the density bound"
        expected = conn.execute(
            f"SELECT ARRAY[f.rid, d1.rid, d2.rid, e.rid] FROM pgivm_st.a1 f "
            f"JOIN pgivm_st.a2 d1 ON {stored(STAR, 'f.k1')} = {stored(STAR, 'd1.k')} "
            f"JOIN pgivm_st.a3 d2 ON {stored(STAR, 'f.k2')} = {stored(STAR, 'd2.k')} "
            f"JOIN pgivm_st.a4 e ON {stored(STAR, 'd1.y')} = {stored(STAR, 'e.k')} WHERE {['f', 'd1', 'd2', 'e'][atom]}.rid = %s",
            [rid]).fetchall()
        assert sorted(found) == sorted(r[0] for r in expected), (step, table, values)
        assert len(set(map(tuple, found))) == len(found)
        reals_total += len(found)
        report = command.verify("st", target=dsn)
        assert report.ok, [str(f) for f in report.failures]
    total = conn.execute(f"SELECT count(*) FROM ({STAR}) q").fetchone()[0]
    assert reals_total == total and total > 20, (reals_total, total)
    status = command.status("st", target=dsn)
    assert status.figures["join_size"] == total


def test_random_streams_keep_a_valid_sample(conn: psycopg.Connection, dsn: str) -> None:
    """Duplicates, deletes of absent rows, join-column updates, TRUNCATE, rollbacks, COPY: after every
    statement the sample is min(k, |Q|) distinct results of the join and every invariant holds."""
    conn.execute("CREATE TABLE g (src int, dst int, w text)")
    query = ("SELECT g1.src, g2.src AS mid, g3.dst, g3.w FROM g g1 JOIN g g2 ON g1.dst = g2.src "
             "JOIN g g3 ON g2.dst = g3.src WHERE g1.src <> g3.dst")
    command.create("rs", query, system="sample", size=7, seed=6, target=dsn)
    rng = random.Random(21)
    kinds: Counter[str] = Counter()
    for step in range(120):
        roll = rng.random()
        n = rng.randrange(6)
        if roll < 0.45:
            rows = ", ".join(f"({rng.randrange(n + 2)}, {rng.randrange(n + 2)}, {'NULL' if rng.random() < 0.2 else repr(str(step))})"
                             for _ in range(rng.randrange(1, 5)))
            conn.execute(f"INSERT INTO g VALUES {rows}, {rows.split('), ')[0].rstrip(')')})")  # with a duplicate
            kinds["insert"] += 1
        elif roll < 0.65:
            conn.execute("DELETE FROM g WHERE src = %s AND dst = %s", [rng.randrange(6), rng.randrange(6)])
            kinds["delete"] += 1
        elif roll < 0.8:
            conn.execute("UPDATE g SET dst = (dst + 1) %% 6 WHERE src = %s", [rng.randrange(6)])
            kinds["update"] += 1
        elif roll < 0.87:
            with conn.transaction(force_rollback=True):
                conn.execute("INSERT INTO g VALUES (1, 2, 'x'), (2, 1, 'y'); DELETE FROM g WHERE src = 3")
            kinds["rollback"] += 1
        elif roll < 0.93:
            with conn.cursor().copy("COPY g FROM STDIN") as copy:
                for _ in range(3):
                    copy.write_row((rng.randrange(6), rng.randrange(6), "c"))
            kinds["copy"] += 1
        else:
            conn.execute("TRUNCATE g")
            kinds["truncate"] += 1
        report = command.verify("rs", target=dsn)
        assert report.ok, (step, [str(f) for f in report.failures])
    assert all(kinds[k] > 0 for k in ("insert", "delete", "update", "rollback", "copy", "truncate")), kinds


def test_fresh_draws_are_uniform_with_replacement(conn: psycopg.Connection, dsn: str) -> None:
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int)")
    conn.execute("INSERT INTO r VALUES (1, 1), (2, 1), (3, 2); INSERT INTO s VALUES (1, 10), (1, 11), (1, 12), (2, 13)")
    command.create("fr", TWO_WAY, system="sample", size=2, seed=7, target=dsn)
    before = conn.execute("SELECT array_agg(v::text ORDER BY v::text) FROM fr v").fetchone()[0]
    out = command.action("fr", "sample", fresh=7000, seed=8, target=dsn)
    assert conn.execute("SELECT array_agg(v::text ORDER BY v::text) FROM fr v").fetchone()[0] == before
    results = _join(conn, TWO_WAY)
    seen = Counter(str(tuple(r)).replace(" ", "") for r in out["rows"])
    assert set(seen) == {r.replace('"', "") for r in results} and len(out["rows"]) == 7000
    stat, df, p = chi_square_uniform(list(seen.values()))
    print(f"fresh draws: {len(results)} results, 7000 draws, chi2 = {stat:.1f} (df {df}), p = {p:.4f}")
    assert p > ALPHA


@pytest.mark.parametrize("args, words", [
    (["--size", "0"], ["size", "positive"]),
    (["--size", "-3"], ["size", "positive"]),
    (["--size", "2.5"], ["size"]),
    (["--size", "many"], ["size"]),
    ([], ["--size"]),
])
def test_bad_size_is_one_line_and_creates_nothing(conn: psycopg.Connection, dsn: str, args: list[str], words: list[str]) -> None:
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int)")
    proc = subprocess.run([sys.executable, "-m", "pgivm.cli", "--dsn", dsn, "create", "bad", "--system", "sample",
                           *args, "--sql", TWO_WAY], capture_output=True, text=True, timeout=120, check=False)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and len(lines) == 1, proc.stderr
    assert all(w in lines[0] for w in words), lines[0]
    assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname = 'pgivm_bad'").fetchone()[0] == 0


@pytest.mark.parametrize("sql, words", [
    ("SELECT r.b, count(*) FROM r JOIN s ON r.b = s.b GROUP BY r.b", ["sample", "aggregates"]),
    ("SELECT r.a FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a JOIN r r2 ON r2.a = r.a "
     "JOIN s s2 ON s2.b = r2.b JOIN t t2 ON t2.c = s2.c AND t2.a = r2.a JOIN r r3 ON r3.b = s2.b JOIN s s3 ON s3.c = t.c",
     ["no hypertree decomposition", "at most 7 tables"]),
    ("SELECT r.a, s.c FROM r, s", ["cross product"]),
    ("SELECT r.a FROM r JOIN s ON r.b = s.b WHERE r.a < s.c OR random() < 0.5", ["random()", "changes with time or chance"]),
])
def test_unsupported_queries_are_refused_in_one_line(conn: psycopg.Connection, dsn: str, sql: str, words: list[str]) -> None:
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, a int)")
    with pytest.raises(PgivmError) as info:
        command.create("bad", sql, system="sample", size=3, target=dsn)
    message = str(info.value)
    assert "\n" not in message and all(w.lower() in message.lower() for w in words), message
    assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname = 'pgivm_bad'").fetchone()[0] == 0


def test_a_general_condition_across_tables_holds_for_every_sampled_result(conn: psycopg.Connection, dsn: str) -> None:
    """A condition on the join result beyond column OP column (OR, arithmetic, IS NULL) is the
    predicate reservoir's θ: after every statement the sample is min(k, |Q|) distinct results of the
    query as PostgreSQL evaluates it (verify: each sampled row exists in the join and satisfies it)."""
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int)")
    query = "SELECT r.a, s.c FROM r JOIN s ON r.b = s.b WHERE r.a < s.c OR (r.a + s.c) % 3 = 0 OR s.c IS NULL"
    command.create("v", query, system="sample", size=4, seed=9, target=dsn)
    rng = random.Random(5)
    sizes = set()
    for _ in range(40):
        if rng.random() < 0.7:
            conn.execute("INSERT INTO r VALUES (%s, %s)", [rng.randint(0, 6), rng.randint(0, 2)])
            conn.execute("INSERT INTO s VALUES (%s, %s)", [rng.randint(0, 2), rng.choice([None, 0, 2, 4, 6])])
        else:
            conn.execute("DELETE FROM r WHERE ctid IN (SELECT ctid FROM r ORDER BY random() LIMIT 2)")
        total = conn.execute(f"SELECT count(*) FROM ({query}) q").fetchone()[0]
        shown = conn.execute("SELECT count(*) FROM v").fetchone()[0]
        assert shown == min(4, total)
        assert conn.execute(f"SELECT count(*) FROM (SELECT * FROM v EXCEPT ALL ({query})) x").fetchone()[0] == 0
        sizes.add(total)
    assert max(sizes) > 4 and command.verify("v", target=dsn).ok


def test_conditions_across_tables_are_refused_by_the_other_systems(conn: psycopg.Connection, dsn: str) -> None:
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int)")
    with pytest.raises(PgivmError, match="only first-order, recompute and sample"):
        command.create("bad", "SELECT count(*) FROM r JOIN s ON r.b = s.b WHERE r.a < s.c", system="fivm", target=dsn)


def test_same_seed_same_sample(conn: psycopg.Connection, dsn: str) -> None:
    conn.execute("CREATE TABLE g (src int, dst int)")
    conn.execute("INSERT INTO g SELECT i % 7, (i * 3) % 7 FROM generate_series(1, 40) i")
    for name in ("one", "two"):
        command.create(name, LINE3, system="sample", size=5, seed=42, target=dsn)
    conn.execute("INSERT INTO g SELECT i % 5, (i * 2) % 7 FROM generate_series(1, 10) i")
    conn.execute("DELETE FROM g WHERE src = 3")
    one = conn.execute("SELECT array_agg(v::text ORDER BY v::text) FROM one v").fetchone()[0]
    two = conn.execute("SELECT array_agg(v::text ORDER BY v::text) FROM two v").fetchone()[0]
    assert one == two and len(one) == 5
    assert math.isfinite(command.status("one", target=dsn).figures["join_size"])


def test_select_star_from_the_cli_on_one_table(conn: psycopg.Connection, dsn: str) -> None:
    """SELECT * needs the tables' columns, which the CLI's early check cannot know: create reads them."""
    from pgivm.cli import main

    conn.execute("CREATE TABLE r (a int, b text); INSERT INTO r SELECT i, 'x' || i FROM generate_series(1, 9) i")
    assert main(["create", "one", "--system", "sample", "--size", "4", "--sql", "SELECT * FROM r WHERE a > 2", "--dsn", dsn]) == 0
    conn.execute("DELETE FROM r WHERE a < 6; UPDATE r SET b = 'y' WHERE a = 8")
    rows = conn.execute("SELECT a, b FROM one").fetchall()
    assert len(rows) == 4 and set(rows) <= {(6, "x6"), (7, "x7"), (8, "y"), (9, "x9")}
    assert command.verify("one", target=dsn).ok


# --- §4.4: foreign keys (PK-FK pairs as one node) and grouping (rows with equal keys as one entry) ---

FK_SCHEMA = ("CREATE TABLE hd (hd_sk int PRIMARY KEY, band int); CREATE TABLE cust (c_sk int PRIMARY KEY, c_hd int); "
             "CREATE TABLE sales (s_cust int, s_item int, qty int); CREATE TABLE item (i_sk int PRIMARY KEY, cat int)")
# sales → cust → hd along primary keys (one node s+c+d); the band joins item on a non-key column.
FK_QUERY = ("SELECT s.qty, c.c_sk, d.band, i.i_sk FROM sales s JOIN cust c ON s.s_cust = c.c_sk "
            "JOIN hd d ON c.c_hd = d.hd_sk JOIN item i ON d.band = i.cat")


def test_foreign_keys_merge_along_primary_keys_and_explain_says_so(conn: psycopg.Connection, dsn: str) -> None:
    conn.execute(FK_SCHEMA)
    command.create("fk", FK_QUERY, system="sample", size=3, seed=1, target=dsn)
    text = "\n".join(command.explain("fk", target=dsn))
    assert "merged on foreign keys (one node each): s+c+d" in text, text
    assert "[grouped]" in text, text  # s+c+d has columns beyond its key (band): its entries are groups
    assert command.status("fk", target=dsn).figures["merged"] == "s+c+d"
    command.create("nofk", FK_QUERY, system="sample", size=3, seed=1, merge="none", grouping="off", target=dsn)
    text = "\n".join(command.explain("nofk", target=dsn))
    assert "merged on foreign keys (one node each): none" in text and "[grouped]" not in text, text
    # Without a unique key on cust there is nothing to merge cust into: sales keeps its own node.
    conn.execute("CREATE TABLE cust2 (c_sk int, c_hd int)")
    command.create("nokey", FK_QUERY.replace("JOIN cust c", "JOIN cust2 c"), system="sample", size=3, target=dsn)
    assert command.status("nokey", target=dsn).figures["merged"] == "c+d"  # cust2 → hd still merges


def test_merged_and_grouped_nodes_stay_uniform_after_every_statement(conn: psycopg.Connection, dsn: str) -> None:
    """Facts before their dimension rows (the merged node's rows appear when the PK side arrives),
    groups with feq > 1 padded to f̃eq (all merged rows of a band share their key), deletes and
    updates of the PK side (many merged rows leave at once), and a dimension update that moves a
    join value. Results stay distinct (qty differs) so that the sample's rows name them."""
    conn.execute(FK_SCHEMA)
    command.create("u", FK_QUERY, system="sample", size=3, seed=3, target=dsn)
    assert command.status("u", target=dsn).figures["merged"] == "s+c+d"
    stream = [
        "INSERT INTO item VALUES (1, 0), (2, 0), (3, 1)",
        "INSERT INTO sales VALUES (10, 1, 5), (10, 1, 4), (11, 2, 6)",  # no customer yet: no merged row
        "INSERT INTO hd VALUES (100, 0), (101, 1)",
        "INSERT INTO cust VALUES (10, 100)",                            # two merged rows, one group (band 0)
        "INSERT INTO cust VALUES (11, 100), (12, 101)",
        "INSERT INTO sales VALUES (12, 3, 7), (11, 1, 8), (10, 2, 9)",  # |Q| = 12
        "DELETE FROM cust WHERE c_sk = 10",                             # three merged rows and their results go
        "INSERT INTO cust VALUES (10, 101)",                            # they come back in the other band
        "UPDATE hd SET band = 1 WHERE hd_sk = 100",                     # a whole band moves
        "INSERT INTO item VALUES (4, 1)",
        "DELETE FROM sales WHERE qty IN (4, 5)",
        "INSERT INTO sales VALUES (12, 1, 1), (12, 1, 2), (12, 1, 3)",  # feq 5 in band 1: f̃eq 8
    ]
    runs = _replay(conn, "u", ["sales", "cust", "hd", "item"], stream, 1200, seed=13)
    for step in range(len(stream)):
        conn.execute("TRUNCATE sales, cust, hd, item")
        for statement in stream[: step + 1]:
            conn.execute(statement)
        results = _join(conn, FK_QUERY)
        _check_uniform(f"merged/grouped prefix {step + 1} ({stream[step]})", [run[step] for run in runs], results, 3)


@pytest.mark.parametrize("merge, grouping", [("auto", "on"), ("auto", "off"), ("none", "on"), ("c+d", "on")])
def test_random_streams_with_merged_and_grouped_nodes(conn: psycopg.Connection, dsn: str, merge: str, grouping: str) -> None:
    """Fact and dimension rows in any order, PK-side deletes, updates of keys and of join columns,
    TRUNCATE of a dimension, rollbacks, COPY: after every statement verify recomputes the index,
    the groups and each merged node's rows (the join of its atoms' rows), and the sample."""
    conn.execute(FK_SCHEMA)
    command.create("m", FK_QUERY, system="sample", size=6, seed=8, merge=merge, grouping=grouping, target=dsn)
    rng = random.Random(f"{merge}/{grouping}")  # str seeds are hashed with SHA-512: reproducible
    kinds: Counter[str] = Counter()
    for step in range(90):
        roll = rng.random()
        if roll < 0.3:
            rows = ", ".join(f"({rng.randrange(8)}, {rng.randrange(6)}, {rng.randrange(3)})" for _ in range(rng.randrange(1, 6)))
            conn.execute(f"INSERT INTO sales VALUES {rows}")  # duplicates are likely: qty takes 3 values
            kinds["fact"] += 1
        elif roll < 0.5:
            table, values = rng.choice([("cust", f"({rng.randrange(8)}, {rng.randrange(4)})"),
                                        ("hd", f"({rng.randrange(4)}, {rng.randrange(3)})"),
                                        ("item", f"({rng.randrange(6)}, {rng.randrange(3)})")])
            conn.execute(f"INSERT INTO {table} VALUES {values} ON CONFLICT DO NOTHING")
            kinds["dimension"] += 1
        elif roll < 0.6:
            conn.execute(rng.choice(["DELETE FROM cust WHERE c_sk = %s", "DELETE FROM hd WHERE hd_sk = %s",
                                     "DELETE FROM sales WHERE s_cust = %s", "DELETE FROM item WHERE i_sk = %s"]),
                         [rng.randrange(8)])
            kinds["delete"] += 1
        elif roll < 0.75:
            conn.execute(rng.choice(["UPDATE cust SET c_hd = (c_hd + 1) %% 4 WHERE c_sk = %s",
                                     "UPDATE hd SET band = (band + 1) %% 3 WHERE hd_sk = %s %% 4",
                                     "UPDATE sales SET s_cust = (s_cust + 1) %% 8 WHERE qty = %s %% 3",
                                     "UPDATE cust SET c_sk = c_sk + 8 WHERE c_sk = %s"]), [rng.randrange(8)])
            kinds["update"] += 1
        elif roll < 0.82:
            with conn.transaction(force_rollback=True):
                conn.execute("INSERT INTO sales VALUES (1, 1, 1), (2, 2, 2); DELETE FROM cust WHERE c_sk < 3")
            kinds["rollback"] += 1
        elif roll < 0.92:
            with conn.cursor().copy("COPY sales FROM STDIN") as copy:
                for _ in range(4):
                    copy.write_row((rng.randrange(8), rng.randrange(6), rng.randrange(3)))
            kinds["copy"] += 1
        else:
            conn.execute(rng.choice(["TRUNCATE cust", "TRUNCATE hd", "TRUNCATE item"]))
            kinds["truncate"] += 1
        report = command.verify("m", target=dsn)
        assert report.ok, (step, [str(f) for f in report.failures])
        total = conn.execute(f"SELECT count(*) FROM ({FK_QUERY}) q").fetchone()[0]
        assert command.status("m", target=dsn).figures["join_size"] == total
    assert all(kinds[k] > 0 for k in ("fact", "dimension", "delete", "update", "rollback", "copy", "truncate")), kinds
    figures = command.status("m", target=dsn).figures
    assert figures["merged"] == {"auto": "s+c+d", "none": "none", "c+d": "c+d"}[merge]
    assert (figures["grouped_nodes"] > 0) == (grouping == "on"), figures


@pytest.mark.parametrize("args, words", [
    (["--merge", "s+zz"], ["--merge", "zz", "alias"]),
    (["--merge", "s+c;c+d"], ["--merge", "two groups"]),
    (["--merge", "s+i"], ["--merge", "acyclic"]),
    (["--grouping", "maybe"], ["--grouping", "on or off"]),
])
def test_bad_merge_or_grouping_is_one_line_and_creates_nothing(conn: psycopg.Connection, dsn: str, args: list[str],
                                                              words: list[str]) -> None:
    conn.execute(FK_SCHEMA)
    proc = subprocess.run([sys.executable, "-m", "pgivm.cli", "--dsn", dsn, "create", "bad", "--system", "sample",
                           "--size", "3", *args, "--sql", FK_QUERY], capture_output=True, text=True, timeout=120, check=False)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and len(lines) == 1, proc.stderr
    assert all(w in lines[0] for w in words), lines[0]
    assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname = 'pgivm_bad'").fetchone()[0] == 0


def test_batches_of_merged_and_grouped_nodes_enumerate_exactly_the_new_results(conn: psycopg.Connection, dsn: str) -> None:
    """An inserted row of a merged node's atom creates one merged row per partner combination
    stored, each a batch; Retrieve over every position of those batches (group padding, dummies
    and all) gives exactly the join results through the new row, each once."""
    conn.execute(FK_SCHEMA)
    command.create("e", FK_QUERY, system="sample", size=4, seed=4, target=dsn)
    units = conn.execute("SELECT count(*) FROM pgivm_e.node WHERE tree = 0").fetchone()[0]
    rng = random.Random(17)
    aliases = ["s", "c", "d", "i"]
    reals_total = 0
    padded = 0
    for step in range(80):
        table = rng.choice(["sales", "sales", "cust", "hd", "item"])
        values = {"sales": f"({rng.randrange(6)}, {rng.randrange(4)}, {step})", "cust": f"({rng.randrange(6)}, {rng.randrange(4)})",
                  "hd": f"({rng.randrange(4)}, {rng.randrange(2)})", "item": f"({rng.randrange(8)}, {rng.randrange(2)})"}[table]
        before = conn.execute("SELECT coalesce(max(rid), 0) FROM pgivm_e.rows").fetchone()[0]
        if conn.execute(f"INSERT INTO {table} VALUES {values} ON CONFLICT DO NOTHING").rowcount == 0:
            continue
        atom = ["sales", "cust", "hd", "item"].index(table)
        new_atom_rid = conn.execute(f"SELECT max(rid) FROM pgivm_e.a{atom + 1}").fetchone()[0]
        found = []
        for rid, unit, kids in conn.execute("SELECT rid, unit, kids FROM pgivm_e.rows WHERE rid > %s ORDER BY rid", [before]).fetchall():
            root = unit * units + unit
            exp = conn.execute("SELECT pgivm_e.tuple_exp(children, cedges, %s) FROM pgivm_e.node WHERE node = %s",
                               [kids, root]).fetchone()[0]
            if exp is None:
                continue
            batch = [r[0] for r in conn.execute("SELECT pgivm_e.retrieve_tuple(%s, %s, z) FROM generate_series(0, %s) z",
                                                [root, rid, 2**exp - 1])]
            padded += sum(1 for x in batch if x is None)
            found += [x for x in batch if x is not None]
        expected = conn.execute(
            f"SELECT ARRAY[s.rid, c.rid, d.rid, i.rid] FROM pgivm_e.a1 s "
            f"JOIN pgivm_e.a2 c ON {stored(FK_QUERY, 's.s_cust')} = {stored(FK_QUERY, 'c.c_sk')} "
            f"JOIN pgivm_e.a3 d ON {stored(FK_QUERY, 'c.c_hd')} = {stored(FK_QUERY, 'd.hd_sk')} "
            f"JOIN pgivm_e.a4 i ON {stored(FK_QUERY, 'd.band')} = {stored(FK_QUERY, 'i.cat')} "
            f"WHERE {aliases[atom]}.rid = %s", [new_atom_rid]).fetchall()
        assert sorted(found) == sorted(r[0] for r in expected), (step, table, values)
        assert len(set(map(tuple, found))) == len(found)
        reals_total += len(found)
        report = command.verify("e", target=dsn)
        assert report.ok, [str(f) for f in report.failures]
    total = conn.execute(f"SELECT count(*) FROM ({FK_QUERY}) q").fetchone()[0]
    assert reals_total == total and total > 50 and padded > 0, (reals_total, total, padded)
    assert conn.execute("SELECT max(feq) FROM pgivm_e.grp").fetchone()[0] > 2  # groups of several rows were exercised


@pytest.mark.parametrize("name", ["My View", "Upper"])
def test_a_sample_view_under_a_name_that_needs_quoting(conn: psycopg.Connection, dsn: str, name: str) -> None:
    """The sequences of the state were named as unquoted text ('pgivm_My View.kid_seq'): create
    failed with 'invalid name syntax' or found no relation (a held-out review)."""
    conn.execute("CREATE TABLE x1 (a int, b int); CREATE TABLE x2 (b int, c int); "
                 "INSERT INTO x1 VALUES (1, 2), (3, 2); INSERT INTO x2 VALUES (2, 5)")
    command.create(name, "SELECT x1.a, x2.c FROM x1 JOIN x2 ON x1.b = x2.b", system="sample", size=5, target=dsn)
    conn.execute("INSERT INTO x1 VALUES (7, 2); INSERT INTO x2 VALUES (2, 6)")
    assert conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] == 5  # |Q| = 6, K = 5
    assert command.verify(name, target=dsn).ok
