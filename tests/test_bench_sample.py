"""``pgivm bench sample`` at tiny sizes: every query runs under every system, the sample view
verifies, the enumerating baseline's reservoir sees exactly the join's results, and the plots are
written. No timing is asserted."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from pgivm.bench import graphs, sampling


def test_every_query_runs_and_the_enumerating_baseline_counts_the_join(conn: psycopg.Connection, tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    edges = graphs.power_law_graph(60, 150, seed=3)
    config = sampling.Config(edges=edges, source="a generated graph", prefix=200, k=20, checkpoints=3, budget=60,
                             recompute_budget=10, out=tmp_path)
    sampling.main(conn, config)
    out = capsys.readouterr().out
    for query in sampling.QUERIES:
        assert f"== {query}:" in out
    assert out.count("verify: ok") == len(sampling.QUERIES)
    assert len(config.targets) == 2 + len(sampling.QUERIES)
    # the enumerating baseline fed every result of the join to Algorithm R exactly once
    assert out.count("agrees with |Q|") == len(sampling.QUERIES) and "DISAGREES" not in out
    assert sorted(p.name for p in tmp_path.glob("sample-*.png")) == [f"sample-{q}.png" for q in sorted(sampling.QUERIES)]
