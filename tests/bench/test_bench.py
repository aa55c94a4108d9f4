"""``pgivm bench``, end to end on a tiny workload: the tables it prints and the plots it writes.

No timing is asserted (the numbers depend on the machine): only that every workload ran under
every strategy (each view is verified by the benchmark itself, which fails on a drift), that the
tables have the expected rows and columns with units, and that the PNG files are real images.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import psycopg
import pytest

from pgivm.cli import main

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
TINY = ["--nodes", "150", "--graph-edges", "900", "--held-out", "20", "--recompute-held-out", "5",
        "--sizes", "300,1000", "--updates", "20", "--bulk-sizes", "100", "--crossover-sizes", "3,40"]


def tables(out: str) -> list[tuple[list[str], list[list[str]]]]:
    """Every table in ``out`` as (headers, rows), cut at the columns of the rule under the header."""
    lines = out.splitlines()
    found = []
    for i, line in enumerate(lines):
        if i == 0 or not line.startswith("-") or set(line) - {"-", " "}:
            continue
        spans, start = [], 0
        for dashes in line.split("  "):
            spans.append((start, start + len(dashes)))
            start += len(dashes) + 2

        def cells(text: str) -> list[str]:
            return [text[a:b].strip() for a, b in spans]

        rows = []
        for row in lines[i + 1:]:
            if not row.strip() or row.startswith(" "):
                break
            rows.append(cells(row))
        found.append((cells(lines[i - 1]), rows))
    return found


def table_with(out: str, header: str) -> tuple[list[str], list[list[str]]]:
    matches = [t for t in tables(out) if header in t[0]]
    assert len(matches) == 1, f"expected one table with a {header!r} column in:\n{out}"
    return matches[0]


def column(table: tuple[list[str], list[list[str]]], name: str) -> list[str]:
    headers, rows = table
    return [row[headers.index(name)] for row in rows]


def assert_png(path: Path) -> None:
    assert path.is_file(), f"{path} was not written"
    data = path.read_bytes()
    assert len(data) > 1000 and data.startswith(PNG_SIGNATURE), f"{path} is not a PNG image"


def database_exists(dsn: str, name: str) -> bool:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_database WHERE datname = %s", [name]).fetchone()
        return bool(row and row[0])


def run_bench(dsn: str, args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """``pgivm bench ARGS`` in a scratch database of its own (dropped afterwards, even on failure);
    it must exit 0 without a traceback, having dropped the database itself. Returns what it printed on stdout."""
    scratch = f"pgivm_bench_test_{uuid.uuid4().hex[:10]}"
    try:
        code = main(["bench", *args, "--dsn", dsn, "--database", scratch])
        captured = capsys.readouterr()
        assert code == 0, captured.err
        assert not database_exists(dsn, scratch), "the scratch database is dropped after a successful run"
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')
    assert "Traceback" not in captured.err
    return captured.out


def test_bench_all_on_a_tiny_workload(dsn: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "plots" / "nested"  # created by the command
    out = run_bench(dsn, ["all", "--out", str(out_dir), *TINY], capsys)
    assert out.index("== updates") < out.index("== scaling") < out.index("== bulk")

    # updates: every strategy, each ε, with units in the headers; recompute on its shorter stream
    updates = table_with(out, "updates/s")
    assert updates[0] == ["strategy", "updates", "updates/s", "vs no view (×)", "median (ms)", "p99 (ms)",
                          "max (ms)", "build (s)", "state (MB)", "θ", "heavy values", "rebalances minor/major"]
    assert column(updates, "strategy") == ["no view", "ivme ε=0", "ivme ε=0.25", "ivme ε=0.5", "ivme ε=0.75",
                                           "ivme ε=1", "first-order", "recompute"]
    assert column(updates, "updates") == ["40"] * 7 + ["10"]
    states = column(updates, "state (MB)")
    assert states[0] == "" and all(float(s) > 0 for s in states[1:-1])
    assert all(float(v) > 0 for v in column(updates, "median (ms)"))
    thetas = [float(t.replace(",", "")) for t in column(updates, "θ")[1:6]]
    assert thetas[0] == 1 and thetas == sorted(thetas), "θ = N^ε grows with ε"
    assert column(updates, "heavy values")[6:] == ["", ""]

    # scaling: three strategies at each of the two sizes, slopes for the two the paper predicts
    scaling = table_with(out, "state rows read/update")
    assert scaling[0] == ["N (tuples)", "strategy", "updates", "median (ms)", "p99 (ms)",
                          "state rows read/update", "build (s)", "stream (s)"]
    sizes = [int(n.replace(",", "")) for n in column(scaling, "N (tuples)")]
    assert len(sizes) == 6 and 250 <= sizes[0] <= 300 and 900 <= sizes[3] <= 1000
    assert column(scaling, "strategy") == ["no view", "ivme ε=0.5", "first-order"] * 2
    assert column(scaling, "updates") == ["20"] * 6
    reads = column(scaling, "state rows read/update")
    assert reads[0] == "" and all(int(r.replace(",", "")) > 0 for r in reads[1:3] + reads[4:])
    for label in ("ivme ε=0.5: median time slope", "first-order: median time slope"):
        assert label in out

    # bulk: every statement under every strategy
    bulk = table_with(out, "statement")
    assert bulk[0] == ["strategy", "statement", "rows", "time (s)", "rows/s", "vs no view (×)", "triangles after"]
    assert column(bulk, "strategy") == [s for s in ("no view", "ivme ε=0.5", "first-order") for _ in range(3)]
    assert column(bulk, "statement") == ["INSERT … SELECT", "DELETE … USING", "COPY"] * 3
    assert set(column(bulk, "rows")) == {"100"}
    counts = column(bulk, "triangles after")
    assert counts[0:3] == counts[3:6] == counts[6:9], "every view's count equals the recount"

    # the crossover of the two paths: one row per path, one column per size
    crossover = table_with(out, "k = 40 (ms)")
    assert crossover[0] == ["path", "k = 3 (ms)", "k = 40 (ms)"]
    assert column(crossover, "path") == ["tuple by tuple", "set at a time"]
    assert all(float(v) > 0 for v in column(crossover, "k = 3 (ms)") + column(crossover, "k = 40 (ms)"))
    assert "the default --batch-threshold is 384" in out

    assert_png(out_dir / "updates_tradeoff.png")
    assert_png(out_dir / "scaling.png")


def test_bench_ivme_family_on_a_tiny_workload(dsn: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The triangle listing's scaling: each view verified (the bench fails on a drifted view), a
    table and fitted slopes, a plot."""
    edges = tmp_path / "edges.txt"  # the 4-path count's graph part: a small graph of its own
    edges.write_text("".join(f"{i % 97} {(i * 31 + 7) % 211}\n" for i in range(1500)))
    out = run_bench(dsn, ["ivme-family", "--out", str(tmp_path), "--sizes", "400,1000", "--updates", "20",
                          "--edges", str(edges)], capsys)
    assert "== scaling of SELECT r.a, r.b, s.c FROM r" in out
    scaling = table_with(out, "state rows read/update")
    assert column(scaling, "strategy") == ["no view", "ivme ε=0.5", "first-order"] * 2
    assert column(scaling, "updates") == ["20"] * 6
    assert "ivme ε=0.5: median time slope" in out
    assert_png(tmp_path / "ivme-family-listing.png")
    # its enumeration delay: the first rows read back, with the state rows read a row (the bound on
    # ivme's is test_listing.py's: at these tiny sizes the planner may scan a W table per P row)
    read = table_with(out, "state rows read a row")
    assert column(read, "strategy") == ["ivme ε=0.5"] * 2 + ["first-order"] * 2
    assert all(int(rows.replace(",", "")) > 0 for rows in column(read, "rows"))
    assert all(float(per_row) > 0 for per_row in column(read, "state rows read a row"))
    # the Loomis-Whitney count: the same strategies, each view verified, slopes of time and rows read
    assert "== scaling of a Loomis-Whitney count of degree 4" in out
    loomis, paths, three, over_tuples = [t for t in tables(out) if "rows read/update" in t[0]]
    assert column(loomis, "strategy") == ["no view", "ivme ε=0.5", "first-order"] * 2
    reads = column(loomis, "rows read/update")
    assert reads[0] == "" and all(int(r.replace(",", "")) > 0 for r in reads[1:3] + reads[4:])
    assert "ivme ε=0.5: maintenance time (median − no view) slope" in out
    # the 4-path count: against F-IVM too
    assert "== scaling of the 4-path count" in out
    assert column(paths, "strategy") == ["no view", "ivme ε=0.5", "fivm", "first-order"] * 2
    reads = column(paths, "rows read/update")
    assert reads[0] == "" and all(int(r.replace(",", "")) > 0 for r in reads[1:4] + reads[5:])
    assert "fivm: maintenance time (median − no view) slope" in out
    # the 3-path count (3R²): against F-IVM too
    assert "== scaling of the 3-path count (3R²)" in out
    assert column(three, "strategy") == ["no view", "ivme ε=0.5", "fivm", "first-order"] * 2
    reads = column(three, "rows read/update")
    assert reads[0] == "" and all(int(r.replace(",", "")) > 0 for r in reads[1:4] + reads[5:])
    # and over tuples (H.1: R and S joined on two columns, a label of all three)
    assert "== scaling of the 3-path count over tuples (3R², H.1)" in out
    assert column(over_tuples, "strategy") == ["no view", "ivme ε=0.5", "fivm", "first-order"] * 2
    reads = column(over_tuples, "rows read/update")
    assert reads[0] == "" and all(int(r.replace(",", "")) > 0 for r in reads[1:4] + reads[5:])
    # the 4-path count on a graph: ivme's and fivm's counts equal the plain recount (the bench checks it)
    assert "== the walks of four edges on" in out
    # and the closed walks (4-cycles) under first-order, its count equal to Σ P(u,w)·P(w,u) in plain SQL
    assert "== the closed walks of four edges (4-cycles) on" in out
    # and the walks of three edges (3R²) under ivme and fivm, equal to Σ in-degree · out-degree
    assert "== the walks of three edges (3R²) on" in out
    graph = table_with(out, "count (= the recount)")
    assert column(graph, "strategy") == ["ivme", "fivm", "ivme", "fivm", "first-order"]
    counts = [int(c.replace(",", "")) for c in column(graph, "count (= the recount)")]
    assert counts[0] == counts[1] > 0 and counts[2] == counts[3] > 0 and counts[4] > 0, counts
    # the space of single and refined partitions
    space = table_with(out, "state rows")
    assert column(space, "partitions") == ["single", "refined"] * 2
    assert "refined: state rows slope" in out


@pytest.mark.parametrize("args, words", [
    (["--sizes", "1e4,abc"], "--sizes"),
    (["--bulk-sizes", "0"], "--bulk-sizes"),
    (["--crossover-sizes", "4,many"], "--crossover-sizes"),
    (["--epsilon", "1.5"], "--epsilon"),
    (["--updates", "0"], "--updates"),
])
def test_bad_options_are_user_errors(capsys: pytest.CaptureFixture[str], args: list[str], words: str) -> None:
    """Checked before any database is touched: exit 2 and one ``pgivm: error:`` line."""
    code = main(["--dsn", "host=127.0.0.1 port=1 connect_timeout=1", "bench", "scaling", *args])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.strip().startswith("pgivm: error:") and words in captured.err


def test_scaling_fits_raw_maintenance_and_rows_read_exponents() -> None:
    """The fitted exponents on made-up medians: a view whose added time is c·N has maintenance
    slope 1 while its raw slope is flattened by the fixed no-view cost; sizes where the view adds
    nothing are left out of the maintenance fit."""
    from pgivm.bench.common import StreamResult
    from pgivm.bench.scaling import STRATEGIES, SizeResult, fits

    no_view, ivme, first_order = STRATEGIES
    sizes = []
    for n in (10_000, 100_000, 1_000_000):
        bare = 0.4
        sizes.append(SizeResult(n, "", [
            StreamResult(no_view, [bare / 1000] * 3),
            StreamResult(ivme, [(bare + 0.0 if n == 10_000 else bare + 0.001 * n ** 0.5) / 1000] * 3,
                         rows_read=[int(n ** 0.5)]),
            StreamResult(first_order, [(bare + 2e-5 * n) / 1000] * 3, rows_read=[n // 4]),
        ]))
    raw = {f.label: f.slope for f in fits(sizes)}
    maintenance = {f.label: f.slope for f in fits(sizes, "maintenance")}
    rows = {f.label: f.slope for f in fits(sizes, "rows")}
    assert raw["no view"] == pytest.approx(0.0, abs=1e-9)
    assert 0.5 < raw["first-order"] < 0.95
    assert maintenance["first-order"] == pytest.approx(1.0)
    assert maintenance["ivme ε=0.5"] == pytest.approx(0.5)  # N = 10^4 (nothing added) left out
    assert "no view" not in maintenance
    assert rows == {"ivme ε=0.5": pytest.approx(0.5, abs=0.01), "first-order": pytest.approx(1.0)}
