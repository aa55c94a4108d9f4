"""The general query model (``parse_query`` -> ConjunctiveQuery) and the analysis passes over it.

No database: parsing and every pass are pure. Three tables of queries drive the tests:

- MODEL: what the parser builds (atoms and the variables of their columns, join variables,
  free variables, outputs, filters);
- SHAPES: what the passes find (the GYO join tree or None when cyclic, and the triangle,
  k-cycle, k-path and star recognisers);
- REFUSED: what the parser refuses, with the message (exact, or the words it must contain).

Variables are named after their lowest column (``r.b`` for ``{r.b, s.b}``), so a query written
in another order has the same variables.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import pytest

from conftest import EDGE_SQL, TRIANGLE_SQL
from pgivm.errors import UnsupportedQuery
from pgivm.query.analysis import RULES, Analysis, analyze, hypergraph, join_tree, require_connected
from pgivm.query.analysis.shapes import as_triangle, cycle, path, star, triangle
from pgivm.query.analysis.three_relations import explain_lines
from pgivm.query.cq import Aggregate, BinOp, ColumnRef, Computed, ConjunctiveQuery, Const, GroupColumn, Var
from pgivm.query.model import TableRef
from pgivm.query.parse import parse_query, parse_view_sql
from test_parse import ACCEPTED as TRIANGLES_ACCEPTED

# ------------------------------------------------------------------------------ the queries

PATH2 = "SELECT count(*) FROM r JOIN s ON r.b = s.b"
PATH3 = "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c"
PATH3_COMMA = "SELECT count(*) FROM r, s, t WHERE t.c = s.c AND s.b = r.b"
PATH4 = "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c JOIN u ON t.d = u.d"
STAR3 = "SELECT count(*) FROM r JOIN s ON r.x = s.x JOIN t ON t.x = r.x"
STAR4_SELF = "SELECT count(*) FROM e a JOIN e b ON a.src = b.src JOIN e c ON c.src = a.src JOIN e d ON d.src = b.src"
SNOWFLAKE = (
    "SELECT d4.region, sum(f.amount) FROM f "
    "JOIN d1 ON f.k1 = d1.k1 JOIN d2 ON f.k2 = d2.k2 JOIN d3 ON f.k3 = d3.k3 JOIN d4 ON d1.k4 = d4.k4 "
    "GROUP BY d4.region"
)
TWO_SHARED = "SELECT count(*) FROM r JOIN s ON r.a = s.a AND r.b = s.b"
CYCLE4 = "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c JOIN u ON t.d = u.d AND u.a = r.a"
CYCLE4_SELF = (
    "SELECT count(*) FROM e w, e x, e y, e z "
    "WHERE w.dst = x.src AND x.dst = y.src AND y.dst = z.src AND z.dst = w.src"
)
TRIANGLE_COVERED = (  # the triangle r, s, t inside u(a, b, c): α-acyclic
    "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a "
    "JOIN u ON u.a = r.a AND u.b = r.b AND u.c = s.c"
)
TRIANGLE_PENDANT = f"{TRIANGLE_SQL} JOIN u ON u.a = r.a"
TRIANGLE_CHORD = (  # a 4-cycle r, s, t, u plus the chord v(a, c): two triangles
    "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c JOIN u ON t.d = u.d AND u.a = r.a "
    "JOIN v ON v.a = r.a AND v.c = s.c"
)
CROSS = "SELECT count(*) FROM r JOIN s ON r.b = s.b, t JOIN u ON t.c = u.c"
CROSS_FILTERED = "SELECT count(*) FROM r, s WHERE r.a = 1"
TPCH_Q3 = (
    "SELECT l.l_orderkey, sum(l.l_extendedprice * (1 - l.l_discount)) AS revenue "
    "FROM customer c, orders o, lineitem l "
    "WHERE c.c_mktsegment = 'BUILDING' AND c.c_custkey = o.o_custkey AND l.l_orderkey = o.o_orderkey "
    "AND o.o_orderdate < '1995-03-15' AND l.l_shipdate > '1995-03-15' "
    "GROUP BY l.l_orderkey"
)

# ------------------------------------------------------------------------------ helpers


def atoms_of(cq: ConjunctiveQuery) -> dict[str, tuple[str, dict[str, str]]]:
    """alias -> (table, {column: variable})."""
    return {a.alias: (str(a.table), dict(zip(a.columns, a.variables))) for a in cq.atoms}


def join_variables_of(cq: ConjunctiveQuery) -> dict[str, list[str]]:
    """join variable -> its columns."""
    return {v.name: [str(c) for c in v.columns] for v in cq.variables if v.is_join}


def outputs_of(cq: ConjunctiveQuery) -> list[str]:
    """``name = group(variable)`` or ``name = function(argument)`` per SELECT item."""
    rendered = []
    for o in cq.outputs:
        if isinstance(o, GroupColumn):
            rendered.append(f"{o.name} = group({o.variable})")
        else:
            argument = "*" if o.argument is None else str(o.argument)
            rendered.append(f"{o.name} = {o.function}({argument})")
    return rendered


# ------------------------------------------------------------------------------ the model


@dataclass(frozen=True)
class Model:
    """What ``parse_query`` must build; None leaves a part unchecked."""

    sql: str
    atoms: dict[str, tuple[str, dict[str, str]]] | None = None
    join: dict[str, list[str]] | None = None
    free: tuple[str, ...] = ()
    outputs: list[str] | None = None
    filters: list[str] | None = None


MODEL = {
    "triangle": Model(
        TRIANGLE_SQL,
        atoms={
            "r": ("r", {"a": "r.a", "b": "r.b"}),
            "s": ("s", {"b": "r.b", "c": "s.c"}),
            "t": ("t", {"a": "r.a", "c": "s.c"}),
        },
        join={"r.a": ["r.a", "t.a"], "r.b": ["r.b", "s.b"], "s.c": ["s.c", "t.c"]},
        outputs=["count = count(*)"],
        filters=[],
    ),
    "triangle-edge-self-join": Model(
        EDGE_SQL,
        atoms={
            "x": ("e", {"dst": "x.dst", "src": "x.src"}),
            "y": ("e", {"dst": "y.dst", "src": "x.dst"}),
            "z": ("e", {"dst": "x.src", "src": "y.dst"}),
        },
        join={"x.dst": ["x.dst", "y.src"], "x.src": ["x.src", "z.dst"], "y.dst": ["y.dst", "z.src"]},
    ),
    "path2": Model(
        PATH2,
        atoms={"r": ("r", {"b": "r.b"}), "s": ("s", {"b": "r.b"})},
        join={"r.b": ["r.b", "s.b"]},
    ),
    "path3-comma-any-order": Model(
        PATH3_COMMA,
        atoms={"r": ("r", {"b": "r.b"}), "s": ("s", {"b": "r.b", "c": "s.c"}), "t": ("t", {"c": "s.c"})},
        join={"r.b": ["r.b", "s.b"], "s.c": ["s.c", "t.c"]},
    ),
    "star-one-class-of-three": Model(STAR3, join={"r.x": ["r.x", "s.x", "t.x"]}),
    "tpch-q3": Model(
        TPCH_Q3,
        atoms={
            "c": ("customer", {"c_custkey": "c.c_custkey", "c_mktsegment": "c.c_mktsegment"}),
            "o": ("orders", {"o_custkey": "c.c_custkey", "o_orderdate": "o.o_orderdate", "o_orderkey": "l.l_orderkey"}),
            "l": (
                "lineitem",
                {
                    "l_discount": "l.l_discount",
                    "l_extendedprice": "l.l_extendedprice",
                    "l_orderkey": "l.l_orderkey",
                    "l_shipdate": "l.l_shipdate",
                },
            ),
        },
        join={"c.c_custkey": ["c.c_custkey", "o.o_custkey"], "l.l_orderkey": ["l.l_orderkey", "o.o_orderkey"]},
        free=("l.l_orderkey",),
        outputs=["l_orderkey = group(l.l_orderkey)", "revenue = sum(l.l_extendedprice * (1 - l.l_discount))"],
        filters=["c.c_mktsegment = 'BUILDING'", "o.o_orderdate < '1995-03-15'", "l.l_shipdate > '1995-03-15'"],
    ),
    "snowflake-group-by-a-dimension": Model(
        SNOWFLAKE,
        free=("d4.region",),
        outputs=["region = group(d4.region)", "sum = sum(f.amount)"],
    ),
    "group-by-and-every-aggregate": Model(
        "SELECT r.a, s.c AS c2, count(*), count(1) AS one, count(s.b), sum(1), sum(r.a * s.c) AS dot, "
        "avg(r.a + 2 * s.c - 1), sum(-r.a) AS neg FROM r JOIN s ON r.b = s.b GROUP BY r.a, s.c",
        free=("r.a", "s.c"),
        outputs=[
            "a = group(r.a)",
            "c2 = group(s.c)",
            "count = count(*)",
            "one = count(*)",
            "count = count(*)",
            "sum = sum(1)",
            "dot = sum((r.a * s.c))",
            "avg = avg(((r.a + (2 * s.c)) - 1))",
            "neg = sum((-1 * r.a))",
        ],
    ),
    "group-by-equated-columns-is-one-free-variable": Model(
        "SELECT r.b, s.b, count(*) FROM r JOIN s ON r.b = s.b GROUP BY r.b, s.b",
        free=("r.b",),
        outputs=["b = group(r.b)", "b = group(r.b)", "count = count(*)"],
    ),
    "group-by-column-not-selected": Model(
        "SELECT count(*) AS n FROM r JOIN s ON r.b = s.b GROUP BY r.a",
        atoms={"r": ("r", {"a": "r.a", "b": "r.b"}), "s": ("s", {"b": "r.b"})},
        free=("r.a",),
        outputs=["n = count(*)"],
    ),
    "group-by-without-aggregate": Model(
        "SELECT r.a FROM r JOIN s ON r.b = s.b GROUP BY r.a", free=("r.a",), outputs=["a = group(r.a)"]
    ),
    "filters-normalized": Model(
        "SELECT count(*) FROM r JOIN s ON r.b = s.b AND 5 < s.c WHERE r.a <> 3 AND r.a != -2 AND 2.5 >= s.c "
        "AND s.name = 'O''Brien' AND r.b <= 10 AND '2024-01-01' = s.d",
        filters=[
            "s.c > 5",
            "r.a <> 3",
            "r.a <> -2",
            "s.c <= 2.5",
            "s.name = 'O''Brien'",
            "r.b <= 10",
            "s.d = '2024-01-01'",
        ],
    ),
    "single-table-unqualified-columns": Model(
        "SELECT a, sum(b) AS total FROM r WHERE c > 0 GROUP BY a",
        atoms={"r": ("r", {"a": "r.a", "b": "r.b", "c": "r.c"})},
        join={},
        free=("r.a",),
        outputs=["a = group(r.a)", "total = sum(r.b)"],
        filters=["r.c > 0"],
    ),
    "self-join-path-each-alias-its-atom": Model(
        "SELECT count(*) FROM e x JOIN e y ON x.dst = y.src JOIN e z ON y.dst = z.src",
        atoms={
            "x": ("e", {"dst": "x.dst"}),
            "y": ("e", {"dst": "y.dst", "src": "x.dst"}),
            "z": ("e", {"src": "y.dst"}),
        },
    ),
    "equalities-through-another-table-put-two-columns-of-r-in-one-variable": Model(
        "SELECT count(*) FROM r JOIN s ON r.a = s.b AND s.b = r.c",
        atoms={"r": ("r", {"a": "r.a", "c": "r.a"}), "s": ("s", {"b": "r.a"})},
        join={"r.a": ["r.a", "r.c", "s.b"]},
    ),
    "quoted-and-schema-qualified": Model(
        'SELECT "My T"."A col", count(*) AS "N" FROM "Sch"."My T" JOIN public.s ON "My T".x = s.x '
        'AND public.s.y > 1 GROUP BY "My T"."A col"',
        atoms={
            "My T": ("Sch.My T", {"A col": '"My T"."A col"', "x": '"My T".x'}),
            "s": ("public.s", {"x": '"My T".x', "y": "s.y"}),
        },
        free=('"My T"."A col"',),
        outputs=['A col = group("My T"."A col")', "N = count(*)"],
        filters=["s.y > 1"],
    ),
}


@pytest.mark.parametrize("case", MODEL.values(), ids=MODEL.keys())
def test_model(case: Model) -> None:
    cq = parse_query(case.sql)
    assert cq.sql == case.sql.strip()
    if case.atoms is not None:
        assert atoms_of(cq) == case.atoms
    if case.join is not None:
        assert join_variables_of(cq) == case.join
    assert cq.free == case.free
    if case.outputs is not None:
        assert outputs_of(cq) == case.outputs
    if case.filters is not None:
        assert [str(f) for f in cq.filters] == case.filters


@pytest.mark.parametrize("case", MODEL.values(), ids=MODEL.keys())
def test_model_is_consistent(case: Model) -> None:
    """Every column read maps to exactly one variable; free and bound split the variables."""
    cq = parse_query(case.sql)
    hash(cq)  # frozen all the way down
    columns = {ColumnRef(a.alias, c): v for a in cq.atoms for c, v in zip(a.columns, a.variables)}
    assert columns == {c: v.name for v in cq.variables for c in v.columns}
    assert [v.name for v in cq.variables] == sorted(v.name for v in cq.variables)
    assert all(v.name == str(min(v.columns)) for v in cq.variables)
    assert set(cq.free) | set(cq.bound) == {v.name for v in cq.variables}
    assert not set(cq.free) & set(cq.bound)
    assert all(f.variable == columns[f.column] for f in cq.filters)


def test_tpch_q3_details() -> None:
    cq = parse_query(TPCH_Q3)
    assert [str(t) for t in cq.tables] == ["customer", "orders", "lineitem"]
    assert cq.join_variables == ("c.c_custkey", "l.l_orderkey")
    (revenue,) = cq.aggregates
    # a product with a sum in it, over one table's columns: one value of the row, as PostgreSQL computes it
    assert isinstance(revenue.argument, Computed)
    assert revenue.argument.text == "l.l_extendedprice * (1 - l.l_discount)"
    assert revenue.argument.refs == (Var("l.l_extendedprice", ColumnRef("l", "l_extendedprice")),
                                     Var("l.l_discount", ColumnRef("l", "l_discount")))
    assert revenue.variables == {revenue.argument.variable}
    date = cq.filters[1]
    assert (date.column, date.op, date.value, date.is_string) == (
        ColumnRef("o", "o_orderdate"), "<", "1995-03-15", True,
    )


def test_avg_is_maintained_as_sum_and_count() -> None:
    (avg,) = parse_query("SELECT avg(r.a * 2) FROM r").aggregates
    total, count = avg.parts
    assert (total.function, count.function) == ("sum", "count")
    assert total.argument == count.argument == avg.argument
    (plain,) = parse_query("SELECT sum(r.a) FROM r").aggregates
    assert plain.parts == (plain,)


def test_constants_keep_their_text() -> None:
    (agg,) = parse_query("SELECT sum(r.a * 0.5 + 3) FROM r").aggregates
    assert str(agg.argument) == "((r.a * 0.5) + 3)"
    assert Const("0.5").value == Const("0.50").value and Const("-3").value == -3


def test_constant_rows_are_tables_of_the_state_schema() -> None:
    """generate_series and VALUES in FROM, and a SELECT without FROM, read tables create fills
    (``static.py``); a table of constant rows is read whole (no system carries a count alone)."""
    query = parse_query("SELECT r.a, g.x FROM r JOIN generate_series(1, 3) AS g(x) ON r.a = g.x",
                        lambda table: ["a", "b"], static_schema="pgivm_v")
    (series,) = query.static
    assert series.table == TableRef("static_1", "pgivm_v") and series.columns == ("x",)
    assert series.select == 'SELECT * FROM pg_catalog.generate_series(1, 3) AS s("x")'
    assert query.atom("g").table == series.table and query.sql.endswith("ON r.a = g.x")
    one = parse_query("SELECT 1 AS one")
    assert [a.alias for a in one.atoms] == ["pgivm_one"] and one.static[0].columns == () and one.static[0].select == "SELECT"
    bare = parse_query("SELECT 1 FROM r")
    assert bare.atom("r").columns == () and not bare.static


def test_variable_names_do_not_depend_on_the_order_written() -> None:
    a = parse_query("SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a")
    b = parse_query("SELECT count(*) FROM t, s, r WHERE r.a = t.a AND t.c = s.c AND s.b = r.b")
    assert a.variables == b.variables
    assert {x.alias: x for x in a.atoms} == {x.alias: x for x in b.atoms}


def test_self_join_flags() -> None:
    assert parse_query(EDGE_SQL).is_self_join
    assert not parse_query(TRIANGLE_SQL).is_self_join
    assert parse_query(EDGE_SQL).tables == [TableRef("e")]


def test_output_items_keep_their_kind() -> None:
    cq = parse_query("SELECT r.a AS k, count(*) FROM r GROUP BY r.a")
    assert cq.outputs == (
        GroupColumn("k", "r.a", ColumnRef("r", "a")),
        Aggregate("count", None, "count", "COUNT(*)"),
    )


# ------------------------------------------------------------------------------ refused


# (id, sql, the message: exact when a str, else words it must contain)
REFUSED: list[tuple[str, str, str | list[str]]] = [
    ("comma-before-right-join", "SELECT count(*) FROM r, s RIGHT JOIN t ON t.c = s.c", ["a comma in from before a right join"]),
    ("full-join-using-then-using", "SELECT count(*) FROM r FULL OUTER JOIN s USING (b) JOIN t USING (b)",
     ["join t using (b) after full join s using (b)", "coalesce(r.b, s.b)"]),
    ("lateral", "SELECT count(*) FROM r JOIN LATERAL (SELECT * FROM s WHERE s.b = r.b) q ON true", ["lateral"]),
    ("natural-join", "SELECT count(*) FROM r NATURAL JOIN s", ["natural join"]),
    ("using-and-on", "SELECT count(*) FROM r JOIN s USING (b) ON r.a = s.a", ["could not parse"]),
    ("using-after-two-tables", "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t USING (c)", ["needs the tables' columns"]),
    ("subquery-in-from", "SELECT count(*) FROM (SELECT * FROM r) q", ["subquery in from", "needs the tables' columns"]),
    ("subquery-in-where", "SELECT count(*) FROM r WHERE r.a IN (SELECT s.a FROM s) OR r.b > 1",
     ["read as a value", "needs the tables' columns"]),
    # kept as a derived table (test_derived.py), whose columns come from the database
    ("subquery-grouped", "SELECT count(*) FROM r WHERE r.a IN (SELECT s.a FROM s GROUP BY s.a)",
     ["subquery that aggregates", "needs the tables' columns"]),
    ("exists-grouped", "SELECT count(*) FROM r WHERE EXISTS (SELECT 1 FROM s WHERE s.b = r.b GROUP BY s.a)", ["group"]),
    ("subquery-of-a-join", "SELECT count(*) FROM r WHERE EXISTS (SELECT 1 FROM s JOIN t ON s.c = t.c WHERE s.b < r.b)",
     ["an exists over a join", "needs the tables' columns"]),  # read with them: refused (test_derived.py)
    ("subquery-in-select", "SELECT (SELECT 1) FROM r", ["a subquery in the SELECT list"]),
    ("with", "WITH q AS (SELECT * FROM r) SELECT count(*) FROM q", ["with query", "needs the tables' columns"]),
    ("distinct-on", "SELECT DISTINCT ON (r.a) r.a FROM r", "DISTINCT ON is not supported in a maintained view"),
    ("having-not-grouped", "SELECT r.a, count(*) FROM r GROUP BY r.a HAVING r.b > 1", ["having reads r.b", "not a group by column"]),
    ("order-by", "SELECT r.a, count(*) FROM r GROUP BY r.a ORDER BY r.a", ["order by"]),
    ("limit", "SELECT count(*) FROM r LIMIT 1", ["limit"]),
    ("window", "SELECT count(*) OVER () FROM r", "window functions are not supported: COUNT(*) OVER ()"),
    ("tablesample", "SELECT count(*) FROM r TABLESAMPLE SYSTEM (10)", ["tablesample"]),
    ("only", "SELECT count(*) FROM ONLY r", ["from only"]),
    ("column-alias-list", "SELECT count(*) FROM r AS x (b, a)", ["column alias lists"]),
    ("cross-database", "SELECT count(*) FROM db.public.r", ["cross-database"]),
    ("schema-column-of-other-table", "SELECT count(*) FROM other.r WHERE public.r.a = 1", ["public.r.a", "alias.column"]),
    (
        "unqualified-with-two-tables",
        "SELECT count(*) FROM r JOIN s ON b = s.b",
        "column b without its table needs the tables' columns: give pgivm a database to read them from",
    ),
    ("unknown-alias", "SELECT count(*) FROM r JOIN s ON q.b = s.b", "column q.b refers to an unknown table or alias 'q'"),
    ("alias-used-twice", "SELECT count(*) FROM e JOIN e ON e.dst = e.src", ["'e'", "twice"]),
    ("two-constants", "SELECT count(*) FROM r WHERE 1 = 1", "condition 1 = 1 compares two constants: remove it"),
    ("count-distinct-two", "SELECT count(DISTINCT r.a, r.b) FROM r", ["unsupported aggregate", "distinct"]),
    ("count-2", "SELECT count(2) FROM r", ["unsupported aggregate", "count(2)"]),
    ("sum-string", "SELECT sum('1') FROM r", ["unsupported aggregate"]),
    ("sum-distinct", "SELECT sum(DISTINCT r.a) FROM r", ["unsupported aggregate", "distinct"]),
    (
        "column-not-grouped",
        "SELECT r.a, count(*) FROM r",
        "r.a in the SELECT list is neither in GROUP BY nor inside an aggregate: add it to GROUP BY or aggregate it",
    ),
    (
        "equated-column-not-grouped-itself",  # PostgreSQL refuses it too
        "SELECT s.b, count(*) FROM r JOIN s ON r.b = s.b GROUP BY r.b",
        ["s.b", "neither in group by"],
    ),
    ("select-star", "SELECT * FROM r", "SELECT * needs the tables' columns: give pgivm a database to read them from"),
    ("select-table-star", "SELECT r.* FROM r", ["select r.*", "needs the tables' columns"]),
    ("select-now", "SELECT r.a, now() FROM r", ["now() (current_timestamp) changes with time or chance"]),
    ("group-by-position-outside", "SELECT r.a, count(*) FROM r GROUP BY 3", "GROUP BY position 3 is not in select list (it has 2 items)"),
    ("group-by-constant", "SELECT count(*) FROM r GROUP BY 1 + 1", ["group by 1 + 1", "expressions over them"]),
    ("group-by-rollup", "SELECT count(*) FROM r GROUP BY ROLLUP (r.a)", ["group by rollup"]),
    ("group-by-cube", "SELECT count(*) FROM r GROUP BY CUBE (r.a)", ["group by cube"]),
    ("group-by-grouping-sets", "SELECT count(*) FROM r GROUP BY GROUPING SETS ((r.a), ())", ["grouping sets"]),
    ("two-statements", f"{PATH2}; {PATH2}", "expected one SELECT statement, got 2"),
    ("insert", "INSERT INTO r VALUES (1)", "expected a SELECT statement, got INSERT"),
    ("union", f"{PATH2} UNION {PATH2}", ["a branch of union with aggregates"]),
    ("intersect", f"{PATH2} INTERSECT {PATH2}", ["intersect is not supported"]),
    ("garbage", "SELEC count(*) FROMM r", ["could not parse"]),
]


# Conditions beyond column OP constant, refused before issue 22: each one's model (its table, or
# None for a condition on the join result) and its SQL as generated code renders it.
CONDITIONS = [
    ("or", "SELECT count(*) FROM r JOIN s ON r.b = s.b WHERE r.a = 1 OR r.a = 2", "r", '(("r"."a" = 1) OR ("r"."a" = 2))'),
    ("two-columns-of-one-table", "SELECT count(*) FROM r WHERE r.a = r.b", "r", '("r"."a" = "r"."b")'),
    ("two-columns-of-one-table-less", "SELECT count(*) FROM r WHERE r.a < r.b", "r", '("r"."a" < "r"."b")'),
    ("is-null", "SELECT count(*) FROM r WHERE r.a IS NULL", "r", '("r"."a" IS NULL)'),
    ("is-not-null", "SELECT count(*) FROM r WHERE r.a IS NOT NULL", "r", '("r"."a" IS NOT NULL)'),
    ("in-list", "SELECT count(*) FROM r WHERE r.a IN (1, 2)", "r", '("r"."a" IN (1, 2))'),
    ("not-in-list", "SELECT count(*) FROM r WHERE r.a NOT IN (1, 2)", "r", '("r"."a" NOT IN (1, 2))'),
    ("between", "SELECT count(*) FROM r WHERE r.a BETWEEN 1 AND 2", "r", '("r"."a" BETWEEN 1 AND 2)'),
    ("like", "SELECT count(*) FROM r WHERE r.s LIKE 'a%'", "r", '("r"."s" LIKE \'a%\')'),
    ("not", "SELECT count(*) FROM r WHERE NOT r.a = 1", "r", '(NOT ("r"."a" = 1))'),
    ("compare-with-null", "SELECT count(*) FROM r WHERE r.a = NULL", "r", '("r"."a" = NULL)'),
    ("compare-with-expression", "SELECT count(*) FROM r WHERE r.a = 1 + 1", "r", '("r"."a" = (1 + 1))'),
    ("typed-constant", "SELECT count(*) FROM o WHERE o.d < DATE '1995-03-15'", "o", '("o"."d" < CAST(\'1995-03-15\' AS date))'),
    ("modulo", "SELECT count(*) FROM r WHERE r.a % 2 = 0", "r", '(("r"."a" % 2) = 0)'),
    ("function", "SELECT count(*) FROM r WHERE lower(r.s) = 'x'", "r", '(pg_catalog.lower("r"."s") = \'x\')'),
    ("cast-column", "SELECT count(*) FROM r JOIN s ON r.b::text = s.b", None, '(CAST("r"."b" AS text) = "s"."b")'),
]


@pytest.mark.parametrize(("sql", "alias", "rendered"), [pytest.param(s, a, r, id=i) for i, s, a, r in CONDITIONS])
def test_conditions_beyond_column_op_constant(sql: str, alias: str | None, rendered: str) -> None:
    from psycopg import sql as psql

    query = parse_query(sql)
    (condition,) = query.conditions
    assert condition.alias == alias
    assert condition.render(lambda ref: psql.Identifier(ref.alias, ref.column)).as_string(None) == rendered
    read = {c.column for a in query.atoms for c in condition.columns if c.alias == a.alias}
    assert read <= {c for a in query.atoms for c in a.columns}  # the atoms read what the condition needs


@pytest.mark.parametrize(("sql", "outputs", "names"), [
    ("SELECT sum(r.a) / count(*) FROM r", ["pgivm_e1", "pgivm_e2"], ["?column?"]),
    ("SELECT r.a + 1, count(*) AS n FROM r GROUP BY r.a", ["pgivm_e1", "n"], ["?column?", "n"]),
    ("SELECT coalesce(max(r.a), 0) AS m FROM r", ["pgivm_e1"], ["m"]),
])
def test_computed_select_items_become_outputs_and_a_projection(sql: str, outputs: list[str], names: list[str]) -> None:
    query = parse_query(sql)
    assert [o.name for o in query.outputs] == outputs
    assert query.projection is not None and [n for n, _ in query.projection] == names


@pytest.mark.parametrize(("sql", "expected"), [pytest.param(s, m, id=i) for i, s, m in REFUSED])
def test_refused(sql: str, expected: str | list[str]) -> None:
    with pytest.raises(UnsupportedQuery) as info:
        parse_query(sql)
    message = str(info.value)
    assert "\n" not in message and message == message.strip() and message
    if isinstance(expected, str):
        assert message == expected
    else:
        for word in expected:
            assert word.lower() in message.lower(), f"{word!r} not in {message!r}"


# ------------------------------------------------------------------------------ analysis


@dataclass(frozen=True)
class Shape:
    """What the passes must find. ``tree``: (parent, child) edges, or None when cyclic."""

    sql: str
    tree: list[tuple[str, str]] | None
    roots: tuple[str, ...] = ()
    cycle: int | None = None
    path: int | None = None
    star: int | None = None
    triangle: bool = False


SHAPES = {
    "path2": Shape(PATH2, [("r", "s")], ("r",), path=2, star=2),
    "path3": Shape(PATH3, [("s", "r"), ("s", "t")], ("s",), path=3),
    "path3-comma": Shape(PATH3_COMMA, [("s", "r"), ("s", "t")], ("s",), path=3),
    "path4": Shape(PATH4, [("s", "r"), ("s", "t"), ("t", "u")], ("s",), path=4),
    "path3-self-join": Shape(
        "SELECT count(*) FROM e x JOIN e y ON x.dst = y.src JOIN e z ON y.dst = z.src",
        [("y", "x"), ("y", "z")],
        ("y",),
        path=3,
    ),
    "path-with-filters-and-group-by": Shape(
        "SELECT r.a, sum(t.d) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c WHERE s.x > 1 GROUP BY r.a",
        [("s", "r"), ("s", "t")],
        ("s",),
        path=3,
    ),
    "star3": Shape(STAR3, [("r", "s"), ("r", "t")], ("r",), star=3),
    "star4-self-join": Shape(STAR4_SELF, [("a", "b"), ("a", "c"), ("a", "d")], ("a",), star=4),
    "snowflake": Shape(SNOWFLAKE, [("f", "d1"), ("f", "d2"), ("f", "d3"), ("d1", "d4")], ("f",)),
    "tpch-q3": Shape(TPCH_Q3, [("o", "c"), ("o", "l")], ("o",), path=3),
    "two-atoms-sharing-two-variables": Shape(TWO_SHARED, [("r", "s")], ("r",)),
    "single-table": Shape("SELECT count(*) FROM r WHERE r.a = 1", [], ("r",)),
    "triangle": Shape(TRIANGLE_SQL, None, cycle=3, triangle=True),
    "triangle-edge-self-join": Shape(EDGE_SQL, None, cycle=3, triangle=True),
    "triangle-with-filter": Shape(f"{TRIANGLE_SQL} WHERE r.a > 0", None, cycle=3),
    "triangle-grouped": Shape(
        "SELECT r.a, count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a GROUP BY r.a", None, cycle=3
    ),
    "cycle4": Shape(CYCLE4, None, cycle=4),
    "cycle4-self-join": Shape(CYCLE4_SELF, None, cycle=4),
    "triangle-with-pendant": Shape(TRIANGLE_PENDANT, None),
    "cycle4-with-chord": Shape(TRIANGLE_CHORD, None),
    "triangle-covered-by-a-wider-atom": Shape(TRIANGLE_COVERED, [("u", "r"), ("u", "s"), ("u", "t")], ("u",)),
    "cross-product-of-two-joins": Shape(CROSS, [("r", "s"), ("t", "u")], ("r", "t")),
    "cross-product-with-filter": Shape(CROSS_FILTERED, [], ("r", "s")),
}


@pytest.mark.parametrize("case", SHAPES.values(), ids=SHAPES.keys())
def test_shapes(case: Shape) -> None:
    cq = parse_query(case.sql)
    tree = join_tree(cq)
    if case.tree is None:
        assert tree is None
    else:
        assert tree is not None
        assert tree.edges() == case.tree
        assert tree.roots == case.roots
    assert (cycle(cq), path(cq), star(cq)) == (case.cycle, case.path, case.star)
    assert (triangle(cq) is not None) is case.triangle


ACYCLIC = {name: case for name, case in SHAPES.items() if case.tree is not None}


@pytest.mark.parametrize("case", ACYCLIC.values(), ids=ACYCLIC.keys())
def test_join_tree_has_the_running_intersection_property(case: Shape) -> None:
    """For every variable, the atoms holding it form a connected subtree; every atom is a node."""
    cq = parse_query(case.sql)
    tree = join_tree(cq)
    assert tree is not None
    assert sorted(tree.nodes) == sorted(a.alias for a in cq.atoms)
    assert sorted(tree.order) == sorted(tree.nodes)
    assert all(tree.order.index(child) < tree.order.index(parent) for parent, child in tree.edges())
    graph = hypergraph(cq)
    for variable in graph.vertices:
        holders = set(graph.edges_of(variable))
        # a connected subtree has exactly one holder whose parent does not hold the variable
        tops = [a for a in holders if tree.parent.get(a) not in holders]
        assert len(tops) == 1, (variable, holders, tree)


def test_join_tree_api() -> None:
    tree = join_tree(parse_query(SNOWFLAKE))
    assert tree is not None
    assert tree.root == "f" and tree.is_connected
    assert tree.children("f") == ("d1", "d2", "d3")
    assert tree.children("d1") == ("d4",)
    assert tree.children("d4") == ()
    assert dict(tree.parent) == {"d1": "f", "d2": "f", "d3": "f", "d4": "d1"}
    forest = join_tree(parse_query(CROSS))
    assert forest is not None and not forest.is_connected
    with pytest.raises(ValueError):
        forest.root


def test_hypergraph_marks_join_variables() -> None:
    graph = hypergraph(parse_query(TPCH_Q3))
    assert graph.join_vertices == ("c.c_custkey", "l.l_orderkey")
    assert set(graph.vertices) > set(graph.join_vertices)
    orders = graph.edge("o")
    assert orders.variables == {"c.c_custkey", "l.l_orderkey", "o.o_orderdate"}
    assert orders.join_variables == {"c.c_custkey", "l.l_orderkey"}
    assert graph.edges_of("l.l_orderkey") == ("o", "l")
    assert graph.components() == (("c", "o", "l"),)


def test_cross_products_can_be_refused() -> None:
    require_connected(parse_query(PATH3))
    assert hypergraph(parse_query(CROSS)).components() == (("r", "s"), ("t", "u"))
    with pytest.raises(UnsupportedQuery, match=r"not all joined \(r, s \| t, u\): a cross product"):
        require_connected(parse_query(CROSS))


@pytest.mark.parametrize("sql", [pytest.param(case[1], id=case[0]) for case in TRIANGLES_ACCEPTED])
def test_triangle_recogniser_is_todays_parser(sql: str) -> None:
    """parse_view_sql is parse_query + the triangle recogniser: the same TriangleCount, same orientation."""
    assert triangle(parse_query(sql)) == parse_view_sql(sql)


@pytest.mark.parametrize(
    ("sql", "words"),
    [
        pytest.param(f"{TRIANGLE_SQL} WHERE r.a = 5", ["operand 5", "only columns"], id="filter"),
        pytest.param(f"{TRIANGLE_SQL} WHERE r.a > 5", ["r.a > 5", "only column = column"], id="range-filter"),
        pytest.param(CYCLE4, ["exactly 3 tables", "joins 4"], id="cycle4"),
        pytest.param(PATH3, ["not a triangle"], id="path3"),
        pytest.param(TRIANGLE_SQL.replace("count(*)", "avg(r.a)"), ["unsupported aggregate", "avg"], id="avg"),
    ],
)
def test_why_not_a_triangle(sql: str, words: list[str]) -> None:
    cq = parse_query(sql)
    assert triangle(cq) is None
    with pytest.raises(UnsupportedQuery) as info:
        as_triangle(cq)
    for word in words:
        assert word.lower() in str(info.value).lower()


def test_analyze_runs_the_listed_rules_in_order() -> None:
    assert [name for name, _ in RULES] == [f.name for f in fields(Analysis)]
    result = analyze(parse_query(TPCH_Q3))
    assert result.acyclic and result.join_tree is not None and result.join_tree.root == "o"
    assert (result.path, result.star, result.cycle, result.triangle) == (3, None, None, None)
    triangle_result = analyze(parse_query(TRIANGLE_SQL))
    assert not triangle_result.acyclic
    assert triangle_result.triangle == parse_view_sql(TRIANGLE_SQL)
    assert triangle_result.cycle == 3



@pytest.mark.parametrize(("sql", "name", "pairs", "shared"), [
    # the triangle and its one-table form: every pair of atoms shares a variable
    ("SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a", "3R³",
     [(("r", "s"), ("r.b",)), (("s", "t"), ("s.c",)), (("r", "t"), ("r.a",))], []),
    ("SELECT sum(1) FROM g x JOIN g y ON x.dst = y.src JOIN g z ON y.dst = z.src AND z.dst = x.src", "3R³",
     [(("x", "y"), ("x.dst",)), (("y", "z"), ("y.dst",)), (("x", "z"), ("x.src",))], []),
    # the path: two pairs share a variable; non-join columns (r.x, t.z) are aggregated away
    ("SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c", "3R²",
     [(("r", "s"), ("r.b",)), (("s", "t"), ("s.c",))], []),
    ("SELECT count(*) FROM r, s, t WHERE r.b = s.b AND t.a = r.a", "3R²",
     [(("r", "s"), ("r.b",)), (("r", "t"), ("r.a",))], []),
    # hierarchical: one pair (and a variable of all three), or none
    ("SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON t.c = s.b AND t.a = r.a", "3R¹",
     [(("r", "t"), ("r.a",))], ["r.b"]),
    ("SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON t.c = s.b", "3R⁰", [], ["r.b"]),
])
def test_a_count_over_three_relations_is_classed_as_appendix_h_says(sql: str, name: str, pairs: list[object],
                                                                   shared: list[str]) -> None:
    found = analyze(parse_query(sql)).three_relations
    assert found is not None and found.name == name and [(a, v) for a, v in found.pairs] == pairs
    assert list(found.shared) == shared and found.hierarchical == (found.degree <= 1)
    lines = explain_lines(found, "ivme" if name in ("3R³", "3R²") else "fivm")
    assert lines[0].startswith(f"IVMε class (Kara et al., Appendix H): {name} (")
    assert "runs this class's strategy" in lines[2]  # ivme the cyclic and the path, fivm the hierarchical
    assert "runs this class's strategy" not in explain_lines(found, "first-order")[2]
    assert "amortized update O(|D|^max{ε,1−ε})" in lines[1] if name in ("3R³", "3R²") else "update O(1)" in lines[1]


@pytest.mark.parametrize(("sql", "name"), [
    ("SELECT count(*) FROM r JOIN s ON r.b = s.b AND r.x = s.x JOIN t ON s.c = t.c", "3R²"),
    ("SELECT count(*) FROM r JOIN s ON r.b = s.b AND r.x = s.x JOIN t ON s.c = t.c AND t.x = s.x", "3R²"),
    # a triangle whose R and T share two columns, and one with a variable of all three
    ("SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a AND t.x = r.x", "3R³"),
    ("SELECT count(*) FROM r JOIN s ON r.b = s.b AND r.x = s.x JOIN t ON s.c = t.c AND t.a = r.a AND t.x = r.x", "3R³"),
])
def test_a_count_over_tuples_runs_the_class_strategy(sql: str, name: str) -> None:
    """A pair joined on several columns, or a variable of all three tables: the strategy runs over
    the tuples (Definition 40), and explain says ivme runs it."""
    found = analyze(parse_query(sql)).three_relations
    assert found is not None and found.name == name and found.strategy_built
    assert "ivme runs this class's strategy" in explain_lines(found, "ivme")[2]
    assert "ivme runs the class's strategy" in explain_lines(found, "first-order")[2]


def test_a_count_with_two_columns_of_one_table_equated_is_outside_the_built_strategy() -> None:
    """r.b = s.b AND s.b = r.d equates two columns of r (a selection inside it): no system runs the
    class's strategy for it, and explain says so whichever maintains it."""
    found = analyze(parse_query("SELECT count(*) FROM r JOIN s ON r.b = s.b AND s.b = r.d JOIN t ON s.c = t.c "
                                "AND t.a = r.a")).three_relations
    assert found is not None and found.name == "3R³" and not found.strategy_built
    for system in ("fivm", "first-order", "ivme"):
        line = explain_lines(found, system)[2]
        assert "the appendix's 3R³ strategy is built for joins whose equalities each link two tables" in line, line
        assert "runs the class's strategy" not in line and "runs this class's strategy" not in line


@pytest.mark.parametrize("sql", [
    "SELECT r.a, count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c GROUP BY r.a",  # not a bare count
    "SELECT sum(r.x) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c",  # a sum of values
    "SELECT count(*) FROM r JOIN s ON r.b = s.b",  # two relations
    "SELECT r.a, s.c FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c",  # a listing
])
def test_other_queries_have_no_three_relation_class(sql: str) -> None:
    assert analyze(parse_query(sql)).three_relations is None
    assert explain_lines(None, "fivm") == []

# --- USING, SELECT *, listings, count(column), cofactor (the forms F-IVM's queries use) ------------

COLUMNS = {"r": ["a", "b", "x"], "s": ["b", "c"], "t": ["c", "a", "z"]}


def test_using_equates_the_named_columns_and_star_lists_them_once() -> None:
    cq = parse_query("SELECT * FROM r JOIN s USING (b) JOIN t USING (c)", lambda table: COLUMNS[table.name])
    assert cq.is_listing and not cq.aggregates
    # PostgreSQL's order: the USING columns first (latest join outermost), then each table's others
    assert [o.name for o in cq.outputs] == ["c", "b", "a", "x", "a", "z"]
    assert {str(c) for c in cq.variable("r.b").columns} == {"r.b", "s.b"}
    assert {str(c) for c in cq.variable("s.c").columns} == {"s.c", "t.c"}
    # an unqualified USING column means the left table's
    cq = parse_query("SELECT b, count(*) FROM r JOIN s USING (b) GROUP BY b")
    assert cq.free == ("r.b",)


def test_using_a_column_twice_on_the_left_is_refused_like_postgresql() -> None:
    with pytest.raises(UnsupportedQuery, match="appears more than once"):
        parse_query("SELECT * FROM r JOIN t ON r.a = t.a JOIN s USING (b) JOIN t AS t2 USING (a)",
                    lambda table: COLUMNS[table.name])


def test_count_of_a_column_counts_its_non_null_rows_and_cofactor_keeps_its_features() -> None:
    cq = parse_query("SELECT count(r.x), cofactor(r.x, s.c) FROM r JOIN s ON r.b = s.b")
    count, cofactor = cq.aggregates
    assert count.function == "count" and count.variables == {"r.x"}
    assert cofactor.function == "cofactor" and [str(f.column) for f in cofactor.features] == ["r.x", "s.c"]


def test_a_join_without_aggregates_is_a_listing() -> None:
    cq = parse_query("SELECT r.a, s.c FROM r JOIN s ON r.b = s.b")
    assert cq.is_listing and [o.name for o in cq.outputs] == ["a", "c"]
    assert not parse_query("SELECT r.a FROM r GROUP BY r.a").is_listing


@pytest.mark.parametrize(("sql", "shown"), [
    ("SELECT max(r.a || r.b) FROM r", "r.a || r.b"),
    ("SELECT sum(r.a / 2) FROM r", "r.a / 2"),
    ("SELECT sum(abs(r.a)) FROM r", "ABS(r.a)"),
    ("SELECT count(*) FILTER (WHERE r.a > 1) FROM r", "CASE WHEN r.a > 1 THEN 1 END"),
    ("SELECT sum(r.b) FILTER (WHERE r.a > 1) FROM r", "CASE WHEN r.a > 1 THEN r.b END"),
])
def test_an_aggregate_over_a_computed_value_holds_it_as_one_value_of_the_row(sql: str, shown: str) -> None:
    """Issue 22: CASE, functions, / and FILTER inside an aggregate (FILTER as the CASE it means)."""
    (aggregate,) = parse_query(sql).aggregates
    assert isinstance(aggregate.argument, Computed) and str(aggregate.argument) == shown
    assert "." not in aggregate.argument.variable and aggregate.argument.refs


def test_a_comparison_of_two_tables_in_on_holds_as_in_where() -> None:
    """Issue 22: an inner join's ON holds like WHERE, so ``JOIN s ON r.b < s.b`` is the predicate
    ``r.b < s.b`` of ``FROM r, s WHERE r.b < s.b`` (first-order and recompute evaluate it)."""
    on = parse_query("SELECT count(*) FROM r JOIN s ON r.b < s.b")
    where = parse_query("SELECT count(*) FROM r, s WHERE r.b < s.b")
    assert on.predicates == where.predicates and len(on.predicates) == 1


def test_outer_joins_keep_each_on_with_its_join_and_survive_the_catalog() -> None:
    """Issue 22: with an outer join the joins are steps read left to right, each ON with its join
    (an inner join's too: before a RIGHT or FULL join it does not hold like WHERE), WHERE apart;
    no column of an outer ON is equated with another (either may be NULL)."""
    from pgivm.query.cq import JoinStep, query_from_json, query_to_json

    q = parse_query("SELECT r.a, t.d FROM r JOIN s ON r.b = s.b FULL JOIN t ON t.c = s.c AND t.d > 1 "
                    "LEFT JOIN u ON u.a = r.a WHERE r.a IS NOT NULL")
    assert [(step.kind, step.alias, [c.sql for c in step.on]) for step in q.joins] == [
        ("inner", "s", ["r.b = s.b"]), ("full", "t", ["t.c = s.c", "t.d > 1"]), ("left", "u", ["u.a = r.a"])]
    assert q.join_variables == () and [c.sql for c in q.conditions] == ["r.a IS NOT NULL"]
    assert [q.null_extended(a) for a in ("r", "s", "t", "u")] == [True, True, True, True]
    tables = {a.table: {"schema": "public", "name": a.table.name, "oid": 1} for a in q.atoms}
    assert query_from_json(query_to_json(q, tables), q.sql).joins == q.joins
    inner = parse_query("SELECT r.a FROM r JOIN s ON r.b = s.b")
    assert inner.joins == () and inner.join_variables == ("r.b",)
    assert isinstance(q.joins[0], JoinStep)


def test_parenthesized_joins_and_unions_are_join_steps_that_survive_the_catalog() -> None:
    """A parenthesized join on the right is a step of width > 1 (its atoms, then its own steps); a
    UNION is LEFT JOINs from a relation of branch numbers, one parenthesized join per branch, each
    branch's tables renamed ``alias#n`` and listed in ``union_branches``."""
    from pgivm.query.cq import query_from_json, query_to_json

    bushy = parse_query("SELECT r.a, u.d FROM r FULL JOIN (t FULL JOIN u ON t.d = u.d) ON r.b = t.c")
    assert [(s.alias, s.kind, s.width) for s in bushy.joins] == [("t", "full", 2), ("u", "full", 1)]
    assert [(o.position, list(o.left), list(o.right)) for o in bushy.join_operands] == [(1, [0], [1, 2]), (2, [1], [2])]
    assert all(bushy.null_extended(a) for a in ("r", "t", "u"))
    union = parse_query("SELECT a FROM r UNION ALL SELECT r.b FROM r WHERE r.b > 1", lambda t: ["a", "b"])
    assert union.union_branches == (("r#1",), ("r#2",))
    assert [a.alias for a in union.atoms] == ["pgivm_branch", "r#1", "pgivm_in#1", "r#2", "pgivm_in#2"]
    assert [(s.kind, s.width) for s in union.joins] == [("left", 2), ("inner", 1), ("left", 2), ("inner", 1)]
    for q in (bushy, union):
        tables = {a.table: {"schema": "public", "name": a.table.name, "oid": 1} for a in q.atoms}
        back = query_from_json(query_to_json(q, tables), q.sql)
        assert back.joins == q.joins and back.union_branches == q.union_branches


def test_where_true_holds_for_every_row() -> None:
    """``WHERE true`` (and ``AND true``) is no condition (it was refused as one: a fuzzer's query)."""
    plain = parse_query("SELECT r.a, s.c FROM r JOIN s ON r.b = s.b WHERE r.a > 1")
    assert parse_query("SELECT r.a, s.c FROM r JOIN s ON r.b = s.b WHERE true AND r.a > 1 AND true").filters == plain.filters
    assert parse_query("SELECT r.a FROM r WHERE true").filters == ()
