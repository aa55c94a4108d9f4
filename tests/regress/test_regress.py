"""Regression scripts in the style of pg_ivm's: each ``sql/NAME.sql`` runs statement by statement,
its output (every statement echoed, a SELECT's rows, a write's row count, an error's first line)
is compared with ``expected/NAME.out``. A statement after a ``-- pgivm: create NAME [SYSTEM]``
line is that view's definition, created through pgivm; after every statement each view created
so far must also equal its definition run by PostgreSQL (rows as bags), and verify at the end.

After an intended change, regenerate the expected files and review their diff:

    PGIVM_REGENERATE_REGRESS=1 .venv/bin/python -m pytest tests/regress
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import psycopg
import pytest

from pgivm import command
from pgivm.errors import PgivmError

HERE = Path(__file__).parent
SCRIPTS = sorted((HERE / "sql").glob("*.sql"))
REGENERATE = bool(os.environ.get("PGIVM_REGENERATE_REGRESS"))
DIRECTIVE = re.compile(r"--\s*pgivm:\s*create\s+(\w+)(?:\s+([\w-]+))?\s*$")


def _statements(text: str) -> list[tuple[str | None, str]]:
    """(directive or None, statement) in order; a statement ends with ';' at the end of a line."""
    out: list[tuple[str | None, str]] = []
    directive, lines = None, []
    for line in text.splitlines():
        if not lines and DIRECTIVE.match(line.strip()):
            directive = line.strip()
            continue
        if not lines and (not line.strip() or line.strip().startswith("--")):
            continue
        lines.append(line)
        if line.rstrip().endswith(";"):
            out.append((directive, "\n".join(lines).rstrip().rstrip(";")))
            directive, lines = None, []
    return out


def _table(cur: psycopg.Cursor) -> list[str]:
    names = [d.name for d in cur.description or []]
    rows = [["" if v is None else str(v) for v in row] for row in cur.fetchall()]
    widths = [max([len(n)] + [len(r[i]) for r in rows]) for i, n in enumerate(names)]
    out = [" | ".join(n.ljust(w) for n, w in zip(names, widths)).rstrip(),
           "-+-".join("-" * w for w in widths)]
    out += [" | ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in rows]
    out.append(f"({len(rows)} row{'' if len(rows) == 1 else 's'})")
    return out


def _bag(conn: psycopg.Connection, query: str) -> Counter[tuple[object, ...]]:
    return Counter(conn.execute(query).fetchall())


def _assert_postgresql_raises_too(conn: psycopg.Connection, statement: str, views: dict[str, str], what: str) -> None:
    """A statement that failed under the views fails without them, or leaves a view's query
    failing (division by zero, overflow: the view raises where PostgreSQL's query would): an error
    that only pgivm's triggers raise is a bug, never an expected output."""
    try:
        with conn.transaction(force_rollback=True):
            conn.execute("SET LOCAL session_replication_role = replica")  # no trigger fires
            conn.execute(statement)  # type: ignore[arg-type]
            for definition in views.values():
                conn.execute(definition)  # type: ignore[arg-type]
    except psycopg.Error:
        return
    pytest.fail(f"only pgivm's triggers raised: {what}")


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_regression_script(conn: psycopg.Connection, dsn: str, script: Path) -> None:
    output: list[str] = []
    views: dict[str, str] = {}
    for directive, statement in _statements(script.read_text()):
        output.append(statement + ";")
        if directive:
            name, system = DIRECTIVE.match(directive).groups()  # type: ignore[union-attr]
            try:
                created = command.create(name, statement, system=system, target=dsn)
                output.append(f"-- pgivm: created {name} (system {created.system})")
                views[name] = statement
            except PgivmError as error:
                output.append(f"-- pgivm: refused: {str(error).splitlines()[0]}")
            continue
        try:
            cur = conn.execute(statement)
            output += _table(cur) if cur.description else [f"{cur.statusmessage}"]
        except psycopg.Error as error:
            output.append(f"ERROR:  {str(error).splitlines()[0]}")
            _assert_postgresql_raises_too(conn, statement, views, f"{script.stem}: {statement}: {error}")
        for name, definition in views.items():
            assert _bag(conn, f"SELECT * FROM {name}") == _bag(conn, definition), f"{script.stem}: {name} after {statement}"
        output.append("")
    for name in views:
        assert command.verify(name, target=dsn).ok, name
    text = "\n".join(output).rstrip() + "\n"
    expected = HERE / "expected" / f"{script.stem}.out"
    if REGENERATE:
        expected.write_text(text)
    assert expected.exists(), f"no {expected.name}: run with PGIVM_REGENERATE_REGRESS=1 and review it"
    assert text == expected.read_text(), f"{script.stem}: output differs from {expected.name}"
