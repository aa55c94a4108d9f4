"""The design card's layout: pyproject.toml, pgivm/, sql/, migrations/, tests/, docker/, README.md
at the top; the SQL templates in sql/<system or layer>/, read through the package pgivm.sql (as
the migrations through pgivm.migrations), none left inside the Python packages."""

from __future__ import annotations

import tomllib
from importlib.resources import files
from pathlib import Path

from pgivm.systems import registry
from pgivm.systems.common import template

ROOT = Path(__file__).resolve().parent.parent


def test_the_top_level_is_the_design_cards() -> None:
    for entry in ("pyproject.toml", "pgivm", "sql", "migrations", "tests", "docker", "README.md"):
        assert (ROOT / entry).exists(), entry


def test_the_templates_live_in_sql_and_ship_as_package_data() -> None:
    assert Path(str(files("pgivm.sql"))).resolve() == ROOT / "sql"
    folders = {p.name for p in (ROOT / "sql").iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert {"capture", "deferred"} | {s.name.replace("-", "_") for s in registry.SYSTEMS.values()} <= folders
    assert not list((ROOT / "pgivm").rglob("*.sql")), "a SQL template inside the Python packages"
    assert template("pgivm.systems.fivm", "10_apply_batch.sql").startswith("--")
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert setuptools["package-dir"]["pgivm.sql"] == "sql" and "pgivm.sql" in setuptools["packages"]
    assert setuptools["package-data"]["pgivm.sql"] == ["*/*.sql"]
