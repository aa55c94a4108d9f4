"""The documentation: the README's tour runs as written against a real database, and the CLI
reference page is what the parser prints (``python -m pgivm.cli --reference > docs/cli.md``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from pgivm import cli

ROOT = Path(__file__).resolve().parent.parent


def test_the_cli_reference_page_is_the_parsers_help() -> None:
    assert (ROOT / "docs" / "cli.md").read_text() == cli.reference(), \
        "docs/cli.md is stale: python -m pgivm.cli --reference > docs/cli.md"


def test_the_readme_tour_runs_as_written(dsn: str, tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    match = re.search(r"## A five-minute tour.*?```bash\n(.*?)```", readme, re.S)
    assert match, "the README has no tour"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update(PGIVM_DSN=dsn, PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    run = subprocess.run(["bash", "-e", "-c", match.group(1)], env=env, cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "created view public.sums (fivm): rows = 2," in run.stdout
    assert re.search(r"^ 20 \| 2 \|\s+7$", run.stdout, re.M)  # the insert of (4, 2) counted at once
    assert "OK: sums equals its recount" in run.stdout and "dropped sums" in run.stdout


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


def test_the_python_example_runs_as_written(dsn: str, tmp_path: Path) -> None:
    """docs/using.md's Python example, on the database $PGIVM_DSN names (what target=None uses)."""
    page = (ROOT / "docs" / "using.md").read_text()
    match = re.search(r"\*\*From Python\*\*.*?```python\n(.*?)```", page, re.S)
    assert match, "docs/using.md has no Python example"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["PGIVM_DSN"] = dsn
    run = subprocess.run([sys.executable, "-c", match.group(1)], env=env, cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
