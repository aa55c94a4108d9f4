"""``pgivm bench sample`` at tiny sizes: every query runs under every system, the sample view
verifies, the enumerating baseline's reservoir sees exactly the join's results, and the plots are
written. No timing is asserted."""

from __future__ import annotations

import re
from pathlib import Path

import psycopg
import pytest

from pgivm.bench import graphs, sampling


def test_every_query_runs_and_the_enumerating_baseline_counts_the_join(conn: psycopg.Connection, tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    edges = graphs.power_law_graph(60, 150, seed=3)
    config = sampling.Config(edges=edges, source="a generated graph", queries=tuple(sampling.QUERIES), prefix=200, k=20,
                             checkpoints=3, budget=60, recompute_budget=10, out=tmp_path)
    sampling.main(conn, config)
    out = capsys.readouterr().out
    for query in sampling.QUERIES:
        assert f"== {query}:" in out
    assert out.count("verify: ok") == len(sampling.QUERIES)
    assert len(config.targets) == 2 + len(sampling.QUERIES)
    # the enumerating baseline fed every result of the join to Algorithm R exactly once
    assert out.count("agrees with |Q|") == len(sampling.QUERIES) and "DISAGREES" not in out
    assert sorted(p.name for p in tmp_path.glob("sample-*.png")) == [f"sample-{q}.png" for q in sorted(sampling.QUERIES)]



def test_where_each_stands_names_the_crossover_and_the_throughput_at_the_end() -> None:
    """The headline's figures from the runs alone: enumerate cheaper at the first checkpoint, dearer
    from the second, stopped over its budget before the third; the rates over the last edges."""
    sample = sampling.Run("sample", [2.0, 4.0, 6.0], [0.002] * 3000, True)
    enum = sampling.Run("enumerate", [1.0, 9.0], [0.001] * 1000 + [0.008] * 900 + [0.05] * 100, False)
    lines = sampling._where_each_stands({"sample": sample, "enumerate": enum}, [1000, 2000, 3000], [10, 500, 4000], tail=100)
    assert lines[0] == "crossover: enumerate has spent more than sample from 2,000 edges on (|Q| = 500)"
    assert lines[1].startswith("throughput at the end, over the last 100 edges: sample 500 edges/s, enumerate 20.0 edges/s: 25.0×")
    assert "a lower bound" in lines[1]
    end = sampling.Run("enumerate at the end", [8.0], [4.0, 4.0], True)
    lines = sampling._where_each_stands({"sample": sample, "enumerate": enum, "enumerate at the end": end},
                                        [1000, 2000, 3000], [10, 500, 4000], tail=100)
    assert lines[2] == ("enumerate over the stream's last edges, everything before them loaded: 2 edges, 0.250 edges/s: "
                        "sample's rate at the end is 2,000× that")
    never = sampling.Run("enumerate", [1.0, 2.0, 3.0], [0.001] * 3000, True)
    assert sampling._where_each_stands({"sample": sample, "enumerate": never}, [1000, 2000, 3000], [1, 2, 3])[0] == \
        "crossover: none (enumerate spent less than sample at every checkpoint)"


def test_the_enumerating_baseline_is_timed_at_the_streams_end_over_everything_before_it(conn: psycopg.Connection) -> None:
    """Where the baseline's own run stopped early, it is timed on the stream's last edges with all
    the others loaded: its Algorithm R then sees exactly the results those edges add."""
    edges = graphs.power_law_graph(40, 120, seed=5)
    config = sampling.Config(edges=edges, source="a generated graph", k=20, tail=6, budget=60)
    sql = sampling._sql("line-3")
    sampling._reset(conn)
    with conn.cursor().copy("COPY g (src, dst) FROM STDIN") as copy:
        for edge in edges[:-6]:
            copy.write_row(edge)
    before = conn.execute(f"SELECT count(*) FROM ({sql}) q").fetchone()[0]
    run = sampling._at_the_end(conn, "line-3", edges, before, config)
    after = conn.execute(f"SELECT count(*) FROM ({sql}) q").fetchone()[0]
    assert run.finished and len(run.latencies) == 6 and after > before
    assert conn.execute("SELECT seen FROM enum_state").fetchone()[0] == after

def test_tpcds_queries_run_under_every_setting_and_agree(conn: psycopg.Connection,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """QX, QY, QZ at SF 0.01 over a few hundred streamed facts (and 120 rows of each streamed
    dimension: QY's join then has 123 results and QZ's 1,230, over k = 50; with 300, 693 and 12,474, the
    test took 70 s, not 43, in the plain index's retrievals): each setting verifies, the merges
    are the foreign-key pairs of the schema, and the enumerating reservoir saw exactly |Q| results."""
    pytest.importorskip("duckdb_extension_tpcds")
    config = sampling.TpcdsConfig(scale=0.01, facts=150, k=50, budget=120, recompute_budget=10, dimension_rows=120)
    sampling.tpcds_main(conn, config)
    out = capsys.readouterr().out
    for query in config.queries:
        assert f"== {query} over TPC-DS" in out
    for label, _, _ in sampling.SETTINGS:  # every setting streamed everything and verified
        assert len(re.findall(rf"^{re.escape(label)}  .* ok$", out, re.M)) == len(config.queries), out
    assert "FAILED" not in out and "DISAGREES" not in out
    assert out.count("agrees") == len(config.queries)
    assert "ss+sr+d1;cs+d2" in out and "ss+c1+d1;c2+d2" in out and "ss+c1+d1+i1;c2+d2" in out
