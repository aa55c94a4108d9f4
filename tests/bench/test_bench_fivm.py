"""``pgivm bench fivm`` at tiny sizes: every part runs, prints a row per system, checks that the
systems agree (the cofactor matrices to 1e-9, verify after each batch run) and writes its plots.
No timing is asserted."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from pgivm.bench import factorized


def test_every_part_runs_and_the_systems_agree(conn: psycopg.Connection, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    config = factorized.Config(scale=1, postcodes=200, batches=2, recompute_batches=1, tpch_scale=0.001, features=4,
                               single_scales=(1, 2), single_postcodes=50, single_updates=5, listing_scales=(1, 2),
                               listing_postcodes=50, out=tmp_path)
    factorized.main(conn, config)
    out = capsys.readouterr().out
    import re

    for dataset in ("housing", "tpch"):
        for system, batches in (("none", 2), ("fivm", 2), ("first-order", 2), ("recompute", 1)):
            assert re.search(rf"^{dataset}\s+{system}\s+{batches}\s+\d+", out, re.M), (dataset, system)
    assert "the two matrices agree to 1e-9: True" in out
    assert "fitted log-log slope" in out and "factorized listing" in out
    assert len(config.targets) == 10 and all(t[2] in ("met", "missed") for t in config.targets)
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert pngs == ["fivm-batches.png", "fivm-listing.png", "fivm-single.png"]  # matplotlib comes with [dev]
