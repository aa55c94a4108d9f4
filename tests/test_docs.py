"""The documentation: every code block of the README and the docs runs as written against a real
database (unless marked ``<!-- not run: why -->`` on the line before it), and the CLI reference
page is what the parser prints (``python -m pgivm.cli --reference > docs/cli.md``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from pgivm import cli, command

ROOT = Path(__file__).resolve().parent.parent


def test_the_cli_reference_page_is_the_parsers_help() -> None:
    assert (ROOT / "docs" / "cli.md").read_text() == cli.reference(), \
        "docs/cli.md is stale: python -m pgivm.cli --reference > docs/cli.md"


def test_help_is_the_parsers_and_imports_none_of_the_commands() -> None:
    """``pgivm --help`` and ``pgivm COMMAND --help`` print the parser's help from pgivm/help.json
    (``python -m pgivm.cli --help-cache > pgivm/help.json``), importing neither psycopg, sqlglot
    nor numpy, so that they start at once."""
    import json

    assert json.loads((ROOT / "pgivm" / "help.json").read_text()) == cli.rendered_help(), \
        "pgivm/help.json is stale: python -m pgivm.cli --help-cache > pgivm/help.json"
    for argv in (["--help"], ["create", "--help"], ["verify", "-h"]):
        run = subprocess.run([sys.executable, "-X", "importtime", "-c",
                              f"import sys; from pgivm.entry import main; sys.exit(main({argv!r}))"],
                             capture_output=True, text=True, timeout=60, check=False)
        assert run.returncode == 0, run.stderr
        assert run.stdout == cli.rendered_help()["" if argv[0].startswith("-") else argv[0]]
        imported = {line.split("|")[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")}
        assert not imported & {"psycopg", "sqlglot", "numpy", "pgivm.command"}, argv


# A block: ```bash or ```python, with the marker line before it when it is not meant to run.
BLOCK = re.compile(r"^(<!-- not run: .+ -->\n)?```(bash|python)\n(.*?)^```$", re.S | re.M)
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "cli.md")]


def code_blocks() -> list[tuple[str, str, str, bool]]:
    """(where, language, code, runs) of every block, where = "docs/spark.md#1" (its number on the page)."""
    out = []
    for page in PAGES:
        for number, match in enumerate(BLOCK.finditer(page.read_text()), 1):
            out.append((f"{page.relative_to(ROOT)}#{number}", match.group(2), match.group(3), match.group(1) is None))
    return out


BLOCKS = code_blocks()

# What a block must print besides exiting 0 (regular expressions, multiline).
EXPECTED = {
    "README.md#2": [r"created view public\.sums \(fivm\): rows = 2,", r"^ 20 \| 2 \|\s+7$",  # (4, 2) counted at once
                    r"created view public\.per_b \(fivm\): rows = 2,", r"OK: sums equals its recount", r"dropped sums"],
    "docs/deferred.md#1": [r"count \| pgivm_pending_changes \| pgivm_lag_seconds\s*\n-[-+]+\n\s+2000 \|\s+3 \|",  # stale
                           r"^ count \n-+\n  2003$",  # the read applied the 3 pending rows
                           r"^log rows applied +\d+$"],
    "docs/fivm.md#1": [r"R² = ", r"created view public\.flat \(fivm\): rows = "],
    "docs/sample.md#1": [r"^\s+count\s*\n-+\n\s+\d+\n"],
    "docs/spark.md#1": [r"count = 6,", r"OK: tri equals the Spark recount"],  # 3 rotations x 2 directions
}


def test_the_code_blocks_are_found() -> None:
    """Each page's blocks, and every block that does not run says why."""
    where = {w for w, _, _, _ in BLOCKS}
    assert set(EXPECTED) <= where, set(EXPECTED) - where
    assert {w for w, _, _, runs in BLOCKS if not runs} == {"README.md#1", "docs/index.md#1", "docs/using.md#1"}


@pytest.mark.parametrize("where,language,code", [(w, lang, c) for w, lang, c, runs in BLOCKS if runs],
                         ids=[w for w, _, _, runs in BLOCKS if runs])
def test_a_code_block_runs_as_written(where: str, language: str, code: str, dsn: str, tmp_path: Path) -> None:
    """In a fresh database that the PG* variables name, as `eval "$(pgivm server env)"` sets them
    for psql and pgivm alike (target=None in Python), with the environment's pgivm first on PATH."""
    params = conninfo_to_dict(dsn)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update(PGHOST=str(params.get("host", "")), PGPORT=str(params.get("port", "")), PGUSER=str(params.get("user", "")),
               PGDATABASE=str(params["dbname"]), PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    if params.get("password"):
        env["PGPASSWORD"] = str(params["password"])
    argv = ["bash", "-e", "-c", code] if language == "bash" else [sys.executable, "-c", code]
    run = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, f"{where} failed:\n{run.stdout}\n{run.stderr}"
    for expected in EXPECTED.get(where, []):
        assert re.search(expected, run.stdout, re.M), f"{where}: no match for {expected!r} in:\n{run.stdout}"
    with psycopg.connect(dsn, autocommit=True) as conn:  # the views a block leaves behind are exact
        installed = conn.execute("SELECT to_regclass('pgivm_catalog.views')").fetchone()[0]
        names = [r[0] for r in conn.execute("SELECT name FROM pgivm_catalog.views")] if installed else []
    for name in names:
        report = command.verify(name, target=dsn)
        assert report.ok, (where, name, [str(f) for f in report.failures])
