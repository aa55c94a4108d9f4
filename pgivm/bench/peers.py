"""pg_ivm's own view definitions against pgivm: held-out cases nobody on the project wrote.

    python -m pgivm.bench.peers --pg-ivm-src PATH/TO/pg_ivm --dsn DSN

Reads every ``create_immv('name', 'query')`` of a pg_ivm checkout's regression scripts
(``sql/*.sql``; a name written ``mv(a, b)`` names the view's columns, passed as ``--columns``) and,
for each distinct definition, in a scratch database of its own: creates the tables pg_ivm's
scripts use with random rows (two layouts, as the scripts define some tables twice; the second is
tried when PostgreSQL cannot run the query over the first), asks pg_ivm (if the server has the
extension) and pgivm to maintain it, and writes the tables the query reads 40 times at random
(inserts, deletes, updates of any column, NULLs), comparing pgivm's view with the query after every
statement. Prints one line per definition and the totals. Needs a role that may CREATE DATABASE.
The definitions are read from the checkout at run time; none is shipped with pgivm.
"""

from __future__ import annotations

import argparse
import collections
import random
import re
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from pgivm import command
from pgivm.errors import PgivmError

SCRATCH = "pgivm_peers"
STATEMENTS = 40
# The tables of pg_ivm's scripts (columns: all int but the text ones), in two layouts.
LAYOUTS: list[dict[str, list[str]]] = [
    {"mv_base_a": ["x", "i", "y", "j"], "mv_base_b": ["x", "i", "y", "k"], "base_r": ["i"], "base_s": ["i", "j"],
     "base_t": ["j"], "base_u": ["j", "i"]},
    {"mv_base_a": ["x", "i", "y", "j"], "mv_base_b": ["x", "i", "y", "k"], "base_t": ["i", "v"], "base_r": ["i", "v"],
     "base_s": ["i", "v"], "base_a": ["i", "j"], "base_b": ["i", "j"], "parent": ["i", "v"],
     "rls_tbl": ["id", "data", "owner"], "num_tbl": ["id", "num"], "tbl_update_same": ["i"]},
]
TEXT_COLUMNS = {"data": "text", "owner": "name", "num": "text"}
EXTRA = ["CREATE VIEW b_view AS SELECT i, k FROM mv_base_b", "CREATE TABLE t (i int PRIMARY KEY)"]


def definitions(source: Path) -> list[tuple[str, str, list[str] | None]]:
    """(script, query, column names or None) for each distinct create_immv of the checkout's scripts."""
    found: dict[tuple[str, str], tuple[str, str, list[str] | None]] = {}
    for script in sorted((source / "sql").glob("*.sql")):
        text = script.read_text(encoding="utf-8")
        for m in re.finditer(r"create_immv\(\s*'((?:[^']|'')*)'\s*,\s*'((?:[^']|'')*)'\s*\)", text, re.S):
            named = re.search(r"\((.*)\)", m.group(1))
            columns = [c.strip() for c in named.group(1).split(",")] if named else None
            query = " ".join(m.group(2).replace("''", "'").split())
            found.setdefault((query, str(columns)), (script.stem, query, columns))
    return list(found.values())


def _database(dsn: str, layout: dict[str, list[str]], rng: random.Random) -> psycopg.Connection:
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(SCRATCH)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(SCRATCH)))
    conn = psycopg.connect(make_conninfo(dsn, dbname=SCRATCH), autocommit=True)
    for table, columns in layout.items():
        conn.execute(sql.SQL("CREATE TABLE {} ({})").format(sql.Identifier(table), sql.SQL(", ").join(
            sql.SQL("{} {}").format(sql.Identifier(c), sql.SQL(TEXT_COLUMNS.get(c, "int"))) for c in columns)))
        for _ in range(8):
            _insert(conn, table, columns, rng)
    for statement in EXTRA:
        conn.execute(statement)  # type: ignore[arg-type]
    return conn


def _value(rng: random.Random) -> object:
    return rng.choice([None, 1, 2, 3, 4, 5])


def _insert(conn: psycopg.Connection, table: str, columns: list[str], rng: random.Random) -> None:
    values = [_value(rng) for _ in columns]
    conn.execute(sql.SQL("INSERT INTO {} VALUES ({})").format(sql.Identifier(table), sql.SQL(", ").join(
        sql.Literal(v if v is None or c not in TEXT_COLUMNS else str(v)) for c, v in zip(columns, values))))


def _write(conn: psycopg.Connection, table: str, columns: list[str], rng: random.Random) -> None:
    some = sql.SQL("ctid IN (SELECT ctid FROM {} ORDER BY random() LIMIT 2)").format(sql.Identifier(table))
    roll = rng.random()
    if roll < 0.5:
        _insert(conn, table, columns, rng)
    elif roll < 0.8:
        conn.execute(sql.SQL("DELETE FROM {} WHERE {}").format(sql.Identifier(table), some))
    else:
        column = rng.choice(columns)
        value = _value(rng)
        conn.execute(sql.SQL("UPDATE {} SET {} = {} WHERE {}").format(sql.Identifier(table), sql.Identifier(column), sql.Literal(
            value if value is None or column not in TEXT_COLUMNS else str(value)), some))


def _rows(conn: psycopg.Connection, query: str) -> list[str]:
    return sorted(map(repr, conn.execute(query).fetchall()))  # type: ignore[arg-type]


def check(dsn: str, number: int, query: str, columns: list[str] | None) -> tuple[str, bool | None, str]:
    """(outcome, whether pg_ivm takes it (None: no pg_ivm), detail) for one definition."""
    rng = random.Random(number)
    conn = None
    for layout in LAYOUTS:
        if conn is not None:
            conn.close()
        conn = _database(dsn, layout, rng)
        try:
            conn.execute(query)  # type: ignore[arg-type]
            break
        except psycopg.Error:
            continue
    else:
        assert conn is not None
        conn.close()
        return "not runnable here", None, "PostgreSQL cannot run it over these tables"
    with conn:
        pg_ivm: bool | None = None
        if conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_ivm'").fetchone():
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_ivm")
            try:
                with conn.transaction():
                    conn.execute("SELECT pgivm.create_immv(%s, %s)", ["ivm" + (f"({','.join(columns)})" if columns else ""), query])
                pg_ivm = True
            except psycopg.Error:
                pg_ivm = False
        try:
            system = command.create("peer", query, target=conn, columns=columns).system
        except PgivmError as err:
            return "refused", pg_ivm, err.message
        read = [t for t in layout if re.search(rf"\b{t}\b", query) or t == "mv_base_b" and "b_view" in query]
        for step in range(STATEMENTS if read else 0):
            table = rng.choice(read)
            _write(conn, table, layout[table], rng)
            if _rows(conn, "SELECT * FROM peer") != _rows(conn, query):
                return "DIFFERS", pg_ivm, f"{system}: after statement {step + 1}"
        return "exact", pg_ivm, system


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pgivm.bench.peers", description=__doc__.splitlines()[0])
    parser.add_argument("--pg-ivm-src", type=Path, required=True, help="a checkout of pg_ivm (its sql/*.sql)")
    parser.add_argument("--dsn", required=True, help="a server where this role may CREATE DATABASE")
    args = parser.parse_args(argv)
    found = definitions(args.pg_ivm_src)
    totals: collections.Counter[tuple[str, bool | None]] = collections.Counter()
    for number, (script, query, columns) in enumerate(found):
        outcome, pg_ivm, detail = check(args.dsn, number, query, columns)
        totals[(outcome, pg_ivm)] += 1
        taken = {True: "pg_ivm takes it", False: "pg_ivm refuses it", None: ""}[pg_ivm]
        print(f"{script:12} {outcome:17} {taken:17} {detail[:100]:100}  {query[:140]}")
    with psycopg.connect(args.dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(SCRATCH)))
    print(f"\n{len(found)} definitions:")
    for (outcome, pg_ivm), n in sorted(totals.items(), key=str):
        print(f"  {n:4}  {outcome}{'' if pg_ivm is None else ', pg_ivm takes it' if pg_ivm else ', pg_ivm refuses it'}")
    return 1 if any(outcome == "DIFFERS" for outcome, _ in totals) else 0


if __name__ == "__main__":
    raise SystemExit(main())
