"""The SQL reference (docs/sql.md) against the systems' own ``accepts`` rules: for every row of
its table of constructs, example views are accepted by exactly the systems the row names (and
refused by the others), and each construct the page lists as refused is refused by every system.
No database: ``pgivm.command.parse`` is what create runs before it touches one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pgivm import command
from pgivm.errors import PgivmError
from pgivm.systems import registry

PAGE = Path(__file__).resolve().parent.parent / "docs" / "sql.md"
COLUMNS = {"r": ["a", "b"], "s": ["b", "c"], "t": ["c", "a"], "u": ["a", "d"], "e": ["src", "dst", "g"],
           "r1": ["a", "b", "c"], "r2": ["b", "c", "d"], "r3": ["a", "c", "d"], "r4": ["a", "b", "d"]}
SYSTEMS = set(registry.SYSTEMS)

# A row of the page's table (the start of its construct cell) -> views that use the construct, each
# with the systems that must take it. Rows whose claim parse cannot check say where it is tested.
EXAMPLES: dict[str, list[tuple[str, set[str]]] | str] = {
    "inner joins": [
        ("SELECT r.a, s.c FROM r JOIN s ON r.b = s.b", {"fivm", "first-order", "recompute", "sample"}),
        ("SELECT * FROM r NATURAL JOIN s", {"fivm", "first-order", "recompute", "sample"}),
        ("SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a", {"ivme", "first-order", "recompute"}),
    ],
    "the triangles themselves": [
        ("SELECT r.a, r.b, s.c FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a",
         {"ivme", "first-order", "recompute", "sample"}),
        ("SELECT s.c AS z, r.a, r.b, t.a AS a2 FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a",
         {"ivme", "first-order", "recompute", "sample"}),
        # over tuples (a pair joined on two columns: Appendix H.1's)
        ("SELECT r.a, r.b, s.c, s.x FROM r JOIN s ON r.b = s.b AND r.x = s.x JOIN t ON s.c = t.c AND t.a = r.a",
         {"ivme", "first-order", "recompute", "sample"}),
        ("SELECT r.a, r.b, s.c FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a WHERE r.a > 1",
         {"first-order", "recompute", "sample"}),
        ("SELECT r.a, r.b, s.c, count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a GROUP BY r.a, r.b, s.c",
         {"ivme", "first-order", "recompute"}),
        ("SELECT DISTINCT s.c, r.a, r.b FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a",
         {"ivme", "first-order", "recompute"}),
        ("SELECT r.a, count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a GROUP BY r.a",
         {"first-order", "recompute"}),
    ],
    "Loomis-Whitney counts": [
        ("SELECT count(*) FROM r1 JOIN r2 ON r1.b = r2.b AND r1.c = r2.c JOIN r3 ON r3.c = r1.c AND r3.d = r2.d "
         "AND r3.a = r1.a JOIN r4 ON r4.d = r2.d AND r4.a = r1.a AND r4.b = r1.b", {"ivme", "first-order", "recompute"}),
        ("SELECT count(*) FROM r1 JOIN r2 ON r1.b = r2.b AND r1.c = r2.c JOIN r3 ON r3.c = r1.c AND r3.d = r2.d "
         "AND r3.a = r1.a JOIN r4 ON r4.d = r2.d AND r4.a = r1.a AND r4.b = r1.b WHERE r1.a > 0", {"first-order", "recompute"}),
    ],
    "4-path counts": [
        ("SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c JOIN u ON t.a = u.a", {"ivme", "fivm", "first-order", "recompute"}),
        ("SELECT count(*) FROM r r1 JOIN r r2 ON r1.b = r2.a JOIN r r3 ON r2.b = r3.a JOIN r r4 ON r3.b = r4.a",
         {"ivme", "fivm", "first-order", "recompute"}),
        ("SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c JOIN u ON t.a = u.a WHERE u.d > 1",
         {"fivm", "first-order", "recompute"}),
    ],
    "3-path counts": [
        ("SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c", {"ivme", "fivm", "first-order", "recompute"}),
        ("SELECT count(*) FROM r r1 JOIN r r2 ON r1.b = r2.a JOIN r r3 ON r2.b = r3.a", {"ivme", "fivm", "first-order", "recompute"}),
        ("SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c WHERE t.a > 1", {"fivm", "first-order", "recompute"}),
        ("SELECT count(*) FROM r JOIN s ON r.b = s.b AND r.a = s.c JOIN t ON s.c = t.c", {"fivm", "first-order", "recompute"}),
    ],
    "counts over three tables joined on tuples": [
        ("SELECT count(*) FROM r JOIN s ON r.b = s.b AND r.x = s.x JOIN t ON s.c = t.c AND t.a = r.a",
         {"ivme", "first-order", "recompute"}),
        ("SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a AND t.g = r.g AND r.g = s.g",
         {"ivme", "first-order", "recompute"}),
        ("SELECT count(*) FROM e e1 JOIN e e2 ON e1.dst = e2.src AND e1.g = e2.g JOIN e e3 ON e2.dst = e3.src "
         "AND e3.dst = e1.src AND e3.g = e1.g", {"ivme", "first-order", "recompute"}),
        ("SELECT count(*) FROM r JOIN s ON r.b = s.b AND r.x = s.x JOIN t ON s.c = t.c",
         {"ivme", "fivm", "first-order", "recompute"}),
    ],
    "cyclic joins beyond the triangle": [
        ("SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c JOIN u ON t.a = u.a AND u.d = r.a",
         {"first-order", "recompute"}),
        ("SELECT r.a, s.c FROM r, s", {"first-order", "recompute"}),
        ("SELECT r.a, r.b, s.c, u.d FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c JOIN u ON t.a = u.a AND u.d = r.a",
         {"first-order", "recompute", "sample"}),
    ],
    "conditions on one table": [
        ("SELECT r.a, s.c FROM r JOIN s ON r.b = s.b WHERE r.a % 2 = 0 AND s.c IN (1, 2) AND (r.a IS NULL OR "
         "r.a BETWEEN 1 AND 5) AND coalesce(s.c, 0)::text LIKE '1%'", {"fivm", "first-order", "recompute", "sample"}),
    ],
    "conditions on several tables": [
        ("SELECT r.a, s.c FROM r JOIN s ON r.b = s.b WHERE r.a < s.c OR s.c IS NULL", {"first-order", "recompute", "sample"}),
    ],
    "`count(*)`, `count(col)`, `sum`, `avg`": [
        ("SELECT r.a, count(*), count(s.c), sum(s.c), avg(r.b * s.c) FROM r JOIN s ON r.b = s.b GROUP BY r.a",
         {"fivm", "first-order", "recompute"}),
    ],
    "aggregates over computed values": [
        ("SELECT r.a, sum(CASE WHEN s.c > 1 THEN 1 ELSE 0 END), count(*) FILTER (WHERE s.c > 2) "
         "FROM r JOIN s ON r.b = s.b GROUP BY r.a", {"fivm", "first-order", "recompute"}),
        ("SELECT r.a, sum(CASE WHEN r.b > 1 THEN s.c END) FROM r JOIN s ON r.b = s.b GROUP BY r.a", {"first-order", "recompute"}),
        ("SELECT r.a, max(abs(r.b - s.c)) FROM r JOIN s ON r.b = s.b GROUP BY r.a", {"first-order", "recompute"}),
    ],
    "expressions in `GROUP BY`": [
        ("SELECT r.a % 10 AS g, count(*) FROM r JOIN s ON r.b = s.b GROUP BY r.a % 10", {"fivm", "first-order", "recompute"}),
        ("SELECT r.a + s.c AS g, count(*) FROM r JOIN s ON r.b = s.b GROUP BY r.a + s.c", {"first-order", "recompute"}),
    ],
    "`bool_and(x)`": [
        ("SELECT r.a, bool_and(s.c > 1), bool_or(s.c < 0) FROM r JOIN s ON r.b = s.b GROUP BY r.a",
         {"fivm", "first-order", "recompute"}),
    ],
    "`min`, `max`, `count(DISTINCT expr)`": [
        ("SELECT r.a, min(s.c), max(s.c), count(DISTINCT s.c % 3) FROM r JOIN s ON r.b = s.b GROUP BY r.a",
         {"first-order", "recompute"}),
    ],
    "`DISTINCT`": [("SELECT DISTINCT r.a, s.c FROM r JOIN s ON r.b = s.b", {"fivm", "first-order", "recompute"})],
    "`HAVING`": [
        ("SELECT r.a, sum(s.c) FROM r JOIN s ON r.b = s.b GROUP BY r.a HAVING count(*) > 1", {"fivm", "first-order", "recompute"}),
    ],
    "SELECT items that compute": [
        ("SELECT r.a, sum(s.c) / count(*) AS m, 'x' AS tag FROM r JOIN s ON r.b = s.b GROUP BY r.a",
         {"fivm", "first-order", "recompute"}),
    ],
    "`WITH` queries, subqueries and plain views in `FROM` that join": [  # "as the inlined query"
        ("WITH x AS (SELECT b, c FROM s WHERE c > 0) SELECT r.a, x.c FROM r JOIN x ON r.b = x.b",
         {"fivm", "first-order", "recompute", "sample"}),
        ("SELECT q.a, count(*) FROM (SELECT r.a, s.c FROM r JOIN s ON r.b = s.b) q GROUP BY q.a",
         {"fivm", "first-order", "recompute"}),
    ],
    "a `WITH` query, subquery or plain view in `FROM` that aggregates": [
        ("SELECT r.a, x.n FROM r JOIN (SELECT b, count(*) AS n FROM s GROUP BY b HAVING count(*) > 1) x ON x.b = r.b",
         {"fivm", "first-order", "recompute", "sample"}),
        ("WITH x AS (SELECT s.b, max(t.a) AS m FROM s JOIN t ON s.c = t.c GROUP BY s.b) SELECT r.a, x.m FROM r LEFT JOIN x "
         "ON x.b = r.b", {"first-order", "recompute"}),
        ("SELECT r.a FROM r WHERE r.b IN (SELECT b FROM s GROUP BY b HAVING sum(c) > 3)", {"first-order", "recompute"}),
        ("SELECT x.n, count(*) FROM (SELECT r.a, count(s.c) AS n FROM r LEFT JOIN s ON r.b = s.b GROUP BY r.a) x GROUP BY x.n",
         {"fivm", "first-order", "recompute"}),
        ("SELECT r.a FROM r WHERE r.b NOT IN (SELECT s.b FROM s JOIN t ON s.c = t.c)", {"first-order", "recompute"}),
    ],
    "a scalar subquery compared in `WHERE`": [
        ("SELECT r.a, (SELECT count(*) FROM s WHERE s.b = r.b) AS n, (SELECT max(t.c) FROM t) FROM r", {"first-order", "recompute"}),
        ("SELECT r.a FROM r WHERE r.a > (SELECT avg(s.c) FROM s)", {"first-order", "recompute"}),
        ("SELECT r.a FROM r WHERE r.a < (SELECT 0.2 * avg(s.c) FROM s WHERE s.b = r.b)", {"first-order", "recompute", "sample"}),
        ("SELECT r.b, count(*) FROM r GROUP BY r.b HAVING count(*) > (SELECT max(s.c) FROM s) / 2", {"first-order", "recompute"}),
        ("SELECT r.a, s.c FROM r, s WHERE r.b = s.b AND s.c = (SELECT min(t.c) FROM t WHERE t.a = s.b)",
         {"fivm", "first-order", "recompute", "sample"}),
        ("SELECT r.a FROM r WHERE r.a > (SELECT count(*) FROM s WHERE s.b = r.b)", {"first-order", "recompute"}),
    ],
    "a `WITH` query, subquery or plain view in `FROM` of one row per key": [
        ("SELECT r.a FROM r, (SELECT DISTINCT b FROM s) x WHERE r.b = x.b", {"first-order", "recompute"}),
        ("SELECT r.a FROM r JOIN (SELECT b FROM s GROUP BY b) x ON r.b = x.b", {"first-order", "recompute"}),
    ],
    "columns of type": "the columns' types are read from a database: tests/systems/general/test_column_types.py",
    "`LEFT`, `RIGHT`, `FULL [OUTER] JOIN`": [
        ("SELECT r.a, s.c FROM r LEFT JOIN s ON r.b = s.b AND s.c > 1", {"first-order", "recompute"}),
        ("SELECT r.a, u.d FROM (r FULL JOIN s ON r.b = s.b) FULL JOIN (t FULL JOIN u ON t.a = u.a) ON s.c = t.c",
         {"first-order", "recompute"}),
    ],
    "`[NOT] EXISTS": [
        ("SELECT r.a FROM r WHERE EXISTS (SELECT 1 FROM s JOIN t ON s.c = t.c WHERE s.b = r.b)", {"first-order", "recompute"}),
        ("SELECT r.a FROM r WHERE r.a IN (SELECT t.a FROM s JOIN t ON s.c = t.c WHERE s.b = r.b)", {"first-order", "recompute"}),
        ("SELECT r.a FROM r WHERE r.a NOT IN (SELECT t.a FROM s JOIN t ON s.c = t.c WHERE s.b = r.b)", {"first-order", "recompute"}),
        ("SELECT r.a FROM r WHERE EXISTS (SELECT 1 FROM s WHERE s.b = r.b) AND r.a NOT IN (SELECT t.a FROM t)",
         {"first-order", "recompute"}),
    ],
    "`EXISTS (SELECT ... FROM t [JOIN u ...] WHERE ...)` read as a value": [
        ("SELECT r.a FROM r WHERE EXISTS (SELECT 1 FROM s WHERE s.b = r.b) OR r.a > 2", {"first-order", "recompute"}),
        ("SELECT r.a, EXISTS (SELECT 1 FROM s JOIN t ON s.c = t.c WHERE s.b = r.b) AS e FROM r", {"first-order", "recompute"}),
        ("SELECT r.a FROM r WHERE NOT EXISTS (SELECT 1 FROM s JOIN t ON s.c = t.c)", {"first-order", "recompute"}),
        ("SELECT r.a FROM r WHERE EXISTS (SELECT 1 FROM r AS r2 WHERE EXISTS (SELECT 1 FROM s WHERE r2.b = s.b))",
         {"first-order", "recompute"}),
    ],
    "`x IN (SELECT v FROM t [JOIN u ...] WHERE ...)` read as a value": [
        ("SELECT r.a FROM r WHERE r.a NOT IN (SELECT s.b FROM s WHERE s.c = r.b) OR r.a > 2", {"first-order", "recompute"}),
        ("SELECT r.a, r.b IN (SELECT t.a FROM s JOIN t ON s.c = t.c) AS hit FROM r", {"first-order", "recompute"}),
    ],
    "`LATERAL (SELECT ... FROM s [JOIN t ...] WHERE s.b = r.b AND ...) AS x`": [
        ("SELECT r.a, x.c FROM r, LATERAL (SELECT s.c FROM s WHERE s.b = r.b) AS x", {"fivm", "first-order", "recompute", "sample"}),
        ("SELECT r.a, x.c FROM r LEFT JOIN LATERAL (SELECT s.c FROM s WHERE s.b = r.b) AS x ON true",
         {"first-order", "recompute"}),
    ],
    "`generate_series(...)`": [
        ("SELECT g.x, count(*) FROM generate_series(1, 3) AS g(x) JOIN r ON r.a = g.x GROUP BY g.x",
         {"fivm", "first-order", "recompute"}),
        ("SELECT 1 FROM r", {"recompute"}),
    ],
    "`count(DISTINCT x) FILTER": [("SELECT count(DISTINCT s.c) FILTER (WHERE s.c > 1) FROM s", {"first-order", "recompute"})],
    "`q1 UNION ALL q2": [
        ("SELECT r.a FROM r UNION ALL SELECT s.c FROM s JOIN t ON s.c = t.c", {"first-order", "recompute"}),
        ("SELECT r.a FROM r UNION SELECT s.c FROM s", {"first-order", "recompute"}),
    ],
    "`pgivm create NAME --columns a,b`": "an option of create: tests/commands/test_cli.py",
}

# The page's "Refused in one line" paragraph: each refused by every system.
REFUSED = [
    "SELECT x.b FROM (SELECT s.b, count(*) AS n FROM s FULL JOIN t ON s.c = t.c GROUP BY s.b) x",  # over a FULL join
    "SELECT x.d FROM (SELECT t.a AS d, count(*) AS n FROM s LEFT JOIN t ON s.c = t.c GROUP BY t.a) x",  # by its NULL side
    "SELECT x.b FROM (SELECT DISTINCT ON (b) b, c FROM s) x",
    "SELECT r.a FROM r, (SELECT b FROM s LIMIT 3) x WHERE r.b = x.b",
    "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM x WHERE n < 3) SELECT n FROM x",
    "SELECT r.a FROM r, generate_series(1, r.b) AS g(x)",  # generate_series of a column
    "SELECT r.a FROM r EXCEPT SELECT s.b FROM s",
    "SELECT r.a FROM r INTERSECT SELECT s.b FROM s",
    "SELECT r.a, count(*) FROM r GROUP BY ROLLUP (r.a)",
    "SELECT r.a, row_number() OVER (ORDER BY r.b) FROM r",
    "SELECT r.a FROM r ORDER BY r.a LIMIT 5",
    "SELECT r.a, random() FROM r",
    "SELECT r.a FROM r WHERE public.my_function(r.a)",
]


def table_rows() -> list[tuple[str, str]]:
    """(construct, maintained by) of each row of the page's table of constructs."""
    text = PAGE.read_text()
    table = text[text.index("| construct | maintained by | how |"):].split("\n\n")[0]
    return [tuple(cell.strip() for cell in line.strip("|").split(" | ")[:2])  # type: ignore[misc]
            for line in table.splitlines()[2:]]


def named_systems(cell: str) -> set[str] | None:
    """The systems a "maintained by" cell names outside parentheses; None for "as the inlined query"."""
    head = re.sub(r"\([^)]*\)", "", cell)
    if head.strip() == "all":
        return SYSTEMS
    named = {name for name in SYSTEMS if re.search(rf"\b{re.escape(name)}\b", head)}
    return named or None


def accepted_by(query: str) -> set[str]:
    taken = set()
    for system in SYSTEMS:
        try:
            command.parse(query, system, columns_of=lambda table: COLUMNS[table.name], name="v")
        except PgivmError:
            continue
        taken.add(system)
    return taken


def entry(construct: str) -> list[tuple[str, set[str]]] | str:
    matches = [key for key in EXAMPLES if construct.startswith(key)]
    assert len(matches) == 1, f"docs/sql.md row {construct[:60]!r}: {len(matches)} entries in EXAMPLES (add one)"
    return EXAMPLES[matches[0]]


@pytest.mark.parametrize("construct,cell", table_rows(), ids=lambda v: v[:40])
def test_each_construct_is_taken_by_the_systems_the_page_names(construct: str, cell: str) -> None:
    examples = entry(construct)
    if isinstance(examples, str):
        pytest.skip(examples)
    for query, systems in examples:
        assert accepted_by(query) == systems, (query, accepted_by(query))
    named = named_systems(cell)
    if named is not None:
        assert set().union(*(s for _, s in examples)) == named, f"docs/sql.md says {cell!r}"


@pytest.mark.parametrize("query", REFUSED)
def test_what_the_page_lists_as_refused_is_refused_by_every_system(query: str) -> None:
    assert accepted_by(query) == set()


def test_every_example_is_for_a_row_of_the_page() -> None:
    constructs = [construct for construct, _ in table_rows()]
    for key in EXAMPLES:
        assert any(c.startswith(key) for c in constructs), f"no row of docs/sql.md starts with {key!r}"
