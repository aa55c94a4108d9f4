"""SQL text -> ConjunctiveQuery (``parse_query``) and -> TriangleCount (``parse_view_sql``), via sqlglot.

``parse_query`` accepts a join of base tables (``JOIN ... ON``, ``JOIN ... USING``, comma joins
with ``WHERE``, in any order, with or without aliases; self-joins through aliases) on column =
column equalities between two tables, AND-ed filters ``column OP constant``, GROUP BY plain
columns, and a SELECT list of GROUP BY columns and aggregates (``count(*)``, ``count(1)``,
``count(column)``, ``sum``/``avg`` of +, -, * over columns and numeric constants, and pgivm's
``cofactor(x1, ..., xm)``), or, without aggregates and GROUP BY, of plain columns or ``*`` (a
listing: the bag of joined rows). ``*`` and a USING after several tables need the tables' columns
(``columns_of``). Everything else is rejected with a one-line UnsupportedQuery naming the construct.

``parse_view_sql`` is ``parse_query`` followed by the triangle recogniser
(``analysis.shapes.as_triangle``): the definitions today's strategies maintain.
"""

from __future__ import annotations

import hashlib

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from pgivm.errors import NeedsColumns, UnsupportedQuery
from pgivm.query.analysis.shapes import as_triangle
from pgivm.query import scalar
from pgivm.query.derived import DerivedRelation
from pgivm.query.dialect import DIALECT
from pgivm.query.group_by_outputs import group_by_outputs
from pgivm.query.inline import inline_deriving, is_join_tree, output_name
from pgivm.query.static import StaticRelation, static_relations
from pgivm.query.union import union_as_joins
from pgivm.query.cq import (
    Aggregate,
    AggregateFunction,
    ArithmeticOp,
    Atom,
    BinOp,
    ColumnRef,
    ComparisonOp,
    Computed,
    Condition,
    ConjunctiveQuery,
    Const,
    Expr,
    Filter,
    JoinStep,
    GroupColumn,
    Output,
    Predicate,
    Var,
    Variable,
)
from pgivm.query.model import TableRef, TriangleCount

# Clauses of a SELECT that change its result beyond a join, filters, grouping and aggregates.
_REJECTED_CLAUSES = {
    "with_": "WITH",
    "distinct": "DISTINCT",
    "qualify": "QUALIFY",
    "order": "ORDER BY",
    "limit": "LIMIT",
    "offset": "OFFSET",
    "windows": "WINDOW",
    "laterals": "LATERAL",
    "into": "INTO",
    "locks": "FOR UPDATE/SHARE",
}

_COMPARISONS: dict[type[exp.Expression], ComparisonOp] = {
    exp.EQ: "=",
    exp.NEQ: "<>",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
}
# ``5 > r.a`` is ``r.a < 5``.
_FLIPPED: dict[ComparisonOp, ComparisonOp] = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_ARITHMETIC: dict[type[exp.Expression], ArithmeticOp] = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*"}



@dataclass(frozen=True)
class _Wording:
    """What a refusal tells the user to do. The triangle entry point keeps today's hints, which
    name only what a triangle count accepts; the general parser names what it accepts."""

    aggregate: str = ("pgivm maintains count, count(DISTINCT), sum, avg, min, max, bool_and and bool_or, with FILTER, "
                      "over immutable expressions")
    condition: str = "join with column = column equalities and filter with column OP constant, combined with AND"
    join_condition: str = "tables join only on column = column equalities"
    operand: str = "compare a column with a column or with a numeric or string constant"
    star: str = "SELECT {item} is not supported: select GROUP BY columns and aggregates"
    select_item: str = ("unsupported SELECT item {item}: it reads no column; select columns, aggregates and expressions "
                        "over them")
    not_grouped: str = (
        "{item} in the SELECT list is neither in GROUP BY nor inside an aggregate: add it to GROUP BY or aggregate it"
    )


_GENERAL = _Wording()
_TRIANGLE = _Wording(
    aggregate="use count(*), count(1) or sum(1)",
    condition="only column = column equalities",
    join_condition="only column = column equalities",
    operand="only columns may be compared",
    star="unsupported aggregate {item}: use count(*), count(1) or sum(1)",
    select_item="unsupported aggregate {item}: use count(*), count(1) or sum(1)",
    not_grouped="unsupported aggregate {item}: use count(*), count(1) or sum(1)",
)


def _sql(node: exp.Expression) -> str:
    return node.sql(dialect=DIALECT)


def _name(identifier: exp.Identifier | str | None) -> str | None:
    """PostgreSQL's case folding: unquoted identifiers are lower-cased."""
    if identifier is None:
        return None
    if isinstance(identifier, str):
        return identifier
    return identifier.this if identifier.quoted else identifier.this.lower()


def parse_view_sql(sql: str) -> TriangleCount:
    """Parse a triangle-count view definition, or raise UnsupportedQuery saying what is not supported."""
    return as_triangle(_parse(sql, _TRIANGLE))


def parse_query(sql: str, columns_of: ColumnsOf | None = None,
                definition_of: Callable[[TableRef], str | None] | None = None,
                static_schema: str = "pgivm_static") -> ConjunctiveQuery:
    """Parse a view definition into a conjunctive query, or raise UnsupportedQuery naming the construct.

    ``columns_of`` (a table -> its column names in order) is needed only by ``SELECT *``, by
    ``JOIN ... USING`` after several tables and NATURAL JOIN, which PostgreSQL resolves from the
    tables' columns, and by WITH and subqueries in FROM, which are inlined (``inline.py``), as are
    plain views in FROM, whose SQL ``definition_of`` (a name -> its view's SQL, or None) gives.
    generate_series and VALUES in FROM, and the row a SELECT without FROM reads, are tables of
    ``static_schema`` (the view's state schema; ``static.py``), which create fills first, as are the
    subqueries and WITH queries that aggregate (``derived.py``). A UNION
    [ALL] of SELECTs is read as one query of LEFT JOINs from a relation of branch numbers (``union.py``).
    """
    written, sql = sql, group_by_outputs(sql, columns_of) or sql
    union = union_as_joins(sql, columns_of)
    rewritten, statics = static_relations(union[0] if union else sql, static_schema)
    columns_of = columns_knowing(columns_of, statics)
    inlined, derived = inline_deriving(rewritten, columns_of, definition_of, static_schema)
    query = _parse(inlined or rewritten, _GENERAL, columns_knowing(columns_of, derived), statics,
                   distinct_as_groups=not union)
    if union:
        query = replace(query, union_branches=union[1])
    if inlined or statics or written is not sql:
        return replace(query, sql=written.strip(), static=statics, derived=derived)
    return query


def columns_knowing(columns_of: ColumnsOf | None, relations: tuple[StaticRelation | DerivedRelation, ...]
                    ) -> ColumnsOf | None:
    """``columns_of`` that knows the columns of pgivm's own tables the query reads (constant rows,
    derived tables), and without ``columns_of`` needs the database for no other table's."""
    if not relations:
        return columns_of
    known = {r.table: list(r.columns) for r in relations}

    def columns(table: TableRef) -> list[str]:
        if table in known:
            return known[table]
        if columns_of is None:
            raise NeedsColumns("the tables' columns are needed: give pgivm a database to read them from")
        return columns_of(table)
    return columns


def _parse(sql: str, wording: _Wording, columns_of: ColumnsOf | None = None,
           static: tuple[StaticRelation, ...] = (), distinct_as_groups: bool = False) -> ConjunctiveQuery:
    """Check the statement, the SELECT list's shape, FROM, ON/WHERE, GROUP BY, then resolve names,
    group equated columns into variables and build the atoms (the order today's parser checked in)."""
    select = _select(sql, wording)
    items = _select_items(select, wording)
    aliases, using, kinds = _tables(select, wording)
    layout = _layout(aliases, using, columns_of, kinds)
    if _write_out_coalesced(select, layout):
        items = _select_items(select, wording)
    where = _where(select)
    subqueries = [c for c in where if _subquery_test(c) is not None] if wording is _GENERAL else []
    where = [c for c in where if not any(c is q for q in subqueries)]
    outer = any(k in OUTER for k in kinds.values()) or bool(subqueries)
    items = _expand_stars(items, layout)
    if distinct_as_groups:
        _distinct_as_group_by(select, items)
    hidden = _having_reads(select, items)
    group_nodes = _group_expressions(select)
    items, projection = _split_expressions(items + hidden, {_sql(n) for n in group_nodes})
    if hidden:  # the view shows the SELECT list, not what only HAVING reads
        shown = projection or tuple((output_name(n, node), scalar.Col("", output_name(n, node))) for n, node in items)
        projection = tuple((n, node) for n, node in shown if n not in {h for h, _ in hidden})
    resolver = _Resolver(aliases, layout, wording is _GENERAL)
    equalities, comparisons, predicates, local = _conditions(select, resolver, wording, with_on=not outer, where=where)
    steps = _join_steps(select, kinds, list(aliases), layout, resolver) if outer else []
    if outer:
        steps, equalities = _equalities_into_joins(steps, equalities, list(aliases))
    tested: dict[str, TableRef] = {}  # the tables of EXISTS and IN subqueries, by alias
    for conjunct in subqueries:
        steps.append(_subquery_step(conjunct, {**aliases, **tested}, tested, layout, columns_of))
    equalities = equalities if outer else layout.equalities + equalities  # USING's hold in its join's ON
    group_by = _group_by(select, resolver, wording)
    selected = [(name, node, [resolver.column(c) for c in node.find_all(exp.Column)]) for name, node in items]
    listing = wording is _GENERAL and not group_by and not group_nodes and all(isinstance(node, exp.Column) for _, node in items)

    # Join variables: union-find over the equated columns; every other column read is its own class.
    classes = _UnionFind()
    for left, right in equalities:
        classes.union(left, right)
    for column, _, _, _ in comparisons:
        classes.add(column)
    for left, _, right, _ in predicates:
        classes.add(left)
        classes.add(right)
    for condition in [*local, *(c for step in steps for c in step.on)]:
        for column in condition.columns:
            classes.add(column)
    for column in group_by:
        classes.add(column)
    for node in group_nodes:
        for c in node.find_all(exp.Column):
            classes.add(resolver.column(c))
    for _, _, columns in selected:
        for column in columns:
            classes.add(column)
    for alias, table in aliases.items():  # a table of constant rows is read whole: its number of rows alone
        for relation in static:           # is no delta any system carries, and no delta ever comes from it
            if relation.table == table and not any(c.alias == alias for c in classes.parent):
                for column in relation.columns:
                    classes.add(ColumnRef(alias, column))
    named = (Variable(str(min(cols)), tuple(sorted(cols))) for cols in classes.groups())
    variables = tuple(sorted(named, key=lambda v: v.name))
    variable_of = {column: v.name for v in variables for column in v.columns}
    join_columns = {column for v in variables if v.is_join for column in v.columns}

    grouped = {_sql(n): _argument(n, resolver, variable_of, value=True) for n in group_nodes}
    outputs: list[Output] = []
    for name, node, columns in selected:
        if _sql(node) in grouped and not isinstance(node, exp.Column):  # a GROUP BY expression
            computed = grouped[_sql(node)]
            assert isinstance(computed, Computed)
            outputs.append(GroupColumn(output_name(name, node), computed.variable, columns[0], computed))
        elif isinstance(node, exp.Column):
            (column,) = columns
            if column not in group_by and not listing:
                raise UnsupportedQuery(wording.not_grouped.format(item=column))
            merges = layout.merging.get(column.column, []) if node.args.get("table") is None else []
            outputs.append(GroupColumn(name or column.column, variable_of[column], column,
                                       using=tuple(merges) if column in merges else ()))
        else:
            outputs.append(_aggregate(node, name, resolver, variable_of, join_columns, wording))

    if select.args.get("distinct") is not None and any(o.function == "cofactor" for o in outputs if isinstance(o, Aggregate)):
        raise UnsupportedQuery("DISTINCT with cofactor(...) is not supported: its rows are one matrix per group already")
    atoms = []
    for alias, table in {**aliases, **tested}.items():
        read = sorted({c.column for c in variable_of if c.alias == alias})
        atoms.append(Atom(alias, table, tuple(read), tuple(variable_of[ColumnRef(alias, c)] for c in read)))
    filters = tuple(
        Filter(column, variable_of[column], op, value, is_string, text)
        for column, op, (value, is_string), text in comparisons
    )
    return ConjunctiveQuery(
        atoms=tuple(atoms),
        variables=variables,
        group_by=tuple(group_by),
        free=tuple(dict.fromkeys([*(variable_of[c] for c in group_by), *(g.variable for g in grouped.values())])),  # type: ignore[union-attr]
        group_computed=tuple(grouped.values()),  # type: ignore[arg-type]
        outputs=tuple(outputs),
        filters=filters,
        sql=sql.strip(),
        predicates=tuple(Predicate(left, op, right, text) for left, op, right, text in predicates),
        conditions=tuple(local),
        distinct=select.args.get("distinct") is not None,
        projection=projection,
        having=_having(select, items, outputs, resolver),
        joins=tuple(steps),
        using_in_expressions=tuple(dict.fromkeys(layout.in_expressions)),
    )


# ------------------------------------------------------------------------------ statement


def _distinct_as_group_by(select: exp.Select, items: list[tuple[str | None, exp.Expression]]) -> None:
    """SELECT DISTINCT items, with no aggregate and no GROUP BY, also grouped: by each item that is a
    column or reads the columns of one table, and by the columns of an item that reads several
    (``r.a * s.c``: F-IVM computes a value on one table's rows). Every system then keeps one row per
    group with its count, and the view reads the groups, each shown row once (DISTINCT stays, over
    rows already nearly distinct), where F-IVM kept the listing and made it distinct on every read:
    a DISTINCT that projected a join column away read the whole join (193,146 rows, 268 ms for
    1,000 rows; 1.3 ms grouped). GROUP BY puts NULLs, and values equal by their type's equality, in
    one group, as DISTINCT does."""
    distinct = select.args.get("distinct")
    if distinct is None or distinct.args.get("on") is not None or select.args.get("group") is not None:
        return
    if select.args.get("having") is not None or any(node.find(exp.AggFunc) for _, node in items):
        return
    keys: dict[str, exp.Expression] = {}
    for _, node in items:
        columns = list(node.find_all(exp.Column))
        if isinstance(node, exp.Column) or (columns and all(c.table for c in columns)
                                            and len({c.table for c in columns}) == 1):
            keys.setdefault(_sql(node), node)
        else:  # several tables' columns (or unqualified ones): grouped by each, the item computed on read
            keys.update((_sql(c), c) for c in columns)
    if keys:  # constants alone: each row once, as recompute reads it
        select.set("group", exp.Group(expressions=[k.copy() for k in keys.values()]))


def _select(sql: str, wording: _Wording) -> exp.Select:
    try:
        statements = [s for s in sqlglot.parse(sql, read=DIALECT) if s is not None]
    except ParseError as err:
        first = str(err).splitlines()[0] if str(err) else "syntax error"
        raise UnsupportedQuery(f"could not parse the view SQL: {first}") from None
    if len(statements) != 1:
        raise UnsupportedQuery(f"expected one SELECT statement, got {len(statements)}")
    select = statements[0]
    if not isinstance(select, exp.Select):
        raise UnsupportedQuery(f"expected a SELECT statement, got {select.key.upper()}")
    if select.args.get("having") is not None and wording is not _GENERAL:
        raise UnsupportedQuery("HAVING is not supported in a maintained view")
    distinct = select.args.get("distinct")
    if distinct is not None and (wording is not _GENERAL or distinct.args.get("on") is not None):
        raise UnsupportedQuery(f"{'DISTINCT ON' if distinct.args.get('on') is not None else 'DISTINCT'} "
                               "is not supported in a maintained view")
    for arg, clause in _REJECTED_CLAUSES.items():
        if arg != "distinct" and select.args.get(arg):
            raise UnsupportedQuery(f"{clause} is not supported in a maintained view")
    return select


def _select_items(select: exp.Select, wording: _Wording) -> list[tuple[str | None, exp.Expression]]:
    """(output alias or None, item) for each SELECT item, checked for shape before any name is resolved."""
    if not select.expressions:
        raise UnsupportedQuery("the SELECT list is empty: select GROUP BY columns and aggregates")
    items = []
    for item in select.expressions:
        name = _name(item.args.get("alias")) if isinstance(item, exp.Alias) else None
        node = item.this if isinstance(item, exp.Alias) else item
        if node.find(exp.Window):
            raise UnsupportedQuery(f"window functions are not supported: {_sql(node)}")
        if node.find(exp.Select):
            text = _sql(node)
            raise UnsupportedQuery(f"a subquery in the SELECT list is maintained when it is one aggregate's value (in a query "
                                   f"that aggregates: uncorrelated, with GROUP BY): {text if len(text) < 50 else text[:47] + '...'}")
        if isinstance(node, exp.Star) or (isinstance(node, exp.Column) and isinstance(node.this, exp.Star)):
            if wording is not _GENERAL:
                raise UnsupportedQuery(wording.star.format(item=_sql(node)))
            items.append((name, node))
            continue
        if node.find(exp.Filter, exp.LogicalAnd, exp.LogicalOr):
            if wording is not _GENERAL:
                raise UnsupportedQuery(f"unsupported aggregate {_sql(node)}: {wording.aggregate}")
            node = node.transform(_without_filter)
            name = output_name(name, node)  # PostgreSQL's name for the item as written (FILTER's is its aggregate's)
            node = node.transform(_as_counts)
        if isinstance(node, exp.Column):
            pass
        elif not _is_supported_aggregate(node):
            unsupported = next((a for a in ([node] if isinstance(node, exp.AggFunc) else list(node.find_all(exp.AggFunc)))
                                if not _is_supported_aggregate(a)), None)
            if unsupported is not None:
                raise UnsupportedQuery(f"unsupported aggregate {_sql(unsupported)}: {wording.aggregate}")
            if wording is not _GENERAL or (not node.find(exp.Column) and not node.find(exp.AggFunc) and not _is_constant(node)):
                moving = next((found for n in node.walk() if (found := scalar.changing(n))), None)
                if moving and wording is _GENERAL:
                    raise UnsupportedQuery(f"{moving} changes with time or chance: a maintained view computes only "
                                           "immutable functions of its rows")
                raise UnsupportedQuery(wording.select_item.format(item=_sql(node)))
        items.append((name, node))
    return items


def _is_constant(node: exp.Expression) -> bool:
    """A SELECT item of constants and immutable functions of them (``'x'``, ``1``, ``2 * 3``): the
    same value in every row, computed as the view is read. A function of time or chance is not."""
    try:
        scalar.from_sqlglot(node, lambda c: scalar.Col("", ""))
    except UnsupportedQuery:
        return False
    return True


def _without_filter(node: exp.Expression) -> exp.Expression:
    """``agg(x) FILTER (WHERE c)`` as ``agg(CASE WHEN c THEN x END)`` (count(*): of ``CASE WHEN c
    THEN 1 END``; count(DISTINCT x): of ``DISTINCT CASE WHEN c THEN x END``): the same value, since
    each aggregate skips NULLs."""
    if not isinstance(node, exp.Filter):
        return node
    aggregate, condition = node.this.copy(), node.expression.this
    if isinstance(aggregate, exp.Count) and isinstance(aggregate.this, exp.Distinct):
        distinct = aggregate.this
        if len(distinct.expressions) != 1:
            raise UnsupportedQuery(f"count(DISTINCT ...) of several values is not supported: {_sql(node)}")
        distinct.set("expressions", [exp.Case(ifs=[exp.If(this=condition.copy(), true=distinct.expressions[0].copy())])])
        return aggregate
    argument = aggregate.this
    if isinstance(argument, exp.Star) or argument is None:
        argument = exp.Literal.number(1)
    aggregate.set("this", exp.Case(ifs=[exp.If(this=condition.copy(), true=argument.copy())]))
    return aggregate


def _as_counts(node: exp.Expression) -> exp.Expression:
    """bool_and(x) and bool_or(x) from two counts: NULL where no x is non-NULL, else whether no x
    is false (bool_and) or some x is true (bool_or). Counts are what every system maintains; the
    view computes the CASE as it reads them."""
    if not isinstance(node, (exp.LogicalAnd, exp.LogicalOr)):
        return node
    value = node.this
    conjunction = isinstance(node, exp.LogicalAnd)
    counted = exp.Count(this=exp.Case(ifs=[exp.If(this=exp.Not(this=exp.Paren(this=value.copy())) if conjunction
                                                  else exp.Paren(this=value.copy()), true=exp.Literal.number(1))]))
    holds = exp.EQ(this=counted, expression=exp.Literal.number(0)) if conjunction else \
        exp.GT(this=counted, expression=exp.Literal.number(0))
    nonnull = exp.EQ(this=exp.Count(this=value.copy()), expression=exp.Literal.number(0))
    return exp.Paren(this=exp.Case(ifs=[exp.If(this=nonnull, true=exp.Null())], default=holds))


def _is_one(node: exp.Expression | None) -> bool:
    return isinstance(node, exp.Literal) and not node.is_string and node.this == "1"


def _is_supported_aggregate(node: exp.Expression) -> bool:
    if isinstance(node, exp.Count):
        arg = node.this
        if isinstance(arg, exp.Distinct):  # count(DISTINCT expr): one argument
            return len(arg.expressions) == 1 and (_is_arithmetic(arg.expressions[0]) or _is_scalar(arg.expressions[0]))
        return not node.expressions and (isinstance(arg, exp.Star) or _is_one(arg) or _is_scalar(arg))
    if isinstance(node, (exp.Sum, exp.Avg, exp.Min, exp.Max)):
        return _is_arithmetic(node.this) or _is_scalar(node.this)
    if _is_cofactor(node):
        return all(isinstance(a, exp.Column) and isinstance(a.this, exp.Identifier) for a in node.expressions)
    return False


def _is_cofactor(node: exp.Expression) -> bool:
    """``cofactor(x1, ..., xm)``: the degree-m matrix ring's aggregate (count, sums, sums of products)."""
    return isinstance(node, exp.Anonymous) and str(node.this).lower() == "cofactor"


def _is_scalar(node: exp.Expression) -> bool:
    """A row's value other than + - * over columns (CASE, coalesce, /, casts, functions): no
    aggregate, subquery or window inside; what it may call is checked when it is read."""
    return (node.find(exp.Column) is not None and not node.find(exp.AggFunc) and not node.find(exp.Select)
            and not isinstance(node, (exp.Star, exp.Distinct)))


def _is_arithmetic(node: exp.Expression) -> bool:
    """+, -, * (and parentheses, unary minus) over columns and numeric literals."""
    if isinstance(node, exp.Paren):
        return _is_arithmetic(node.this)
    if isinstance(node, exp.Neg):
        return _is_arithmetic(node.this)
    if isinstance(node, exp.Literal):
        return not node.is_string
    if isinstance(node, exp.Column):
        return isinstance(node.this, exp.Identifier)
    if type(node) in _ARITHMETIC:
        return _is_arithmetic(node.this) and _is_arithmetic(node.expression)
    return False


# ------------------------------------------------------------------------------ FROM


JoinKinds = dict[int, str]  # a join's kind by the position of the table it joins: inner, cross, comma, left, right, full
OUTER = ("left", "right", "full")


def _tables(select: exp.Select, wording: _Wording) -> tuple[dict[str, TableRef], dict[int, list[str]], JoinKinds]:
    """Alias -> table for the FROM list and the joins, in the order written; the USING column
    names of each join, and each join's kind, by the position of the table it joins."""
    using: dict[int, list[str]] = {}
    kinds: JoinKinds = {}
    sources: list[exp.Expression] = []
    from_ = select.args.get("from_") or select.args.get("from")
    if from_ is None:
        raise UnsupportedQuery("the view has no FROM clause")
    sources.append(from_.this)
    for extra in getattr(from_, "expressions", None) or []:
        kinds[len(sources)] = "comma"
        sources.append(extra)
    widths: dict[int, int] = {}
    for join, width in flat_joins(select):
        if width > 1:
            widths[len(sources)] = width
        side, kind = (join.side or "").upper(), (join.kind or "").upper()
        method = (join.args.get("method") or "").upper()
        written = " ".join(filter(None, [method, side, kind]))
        outer = side in ("LEFT", "RIGHT", "FULL") and kind in ("", "OUTER")
        if wording is not _GENERAL and (side or method or kind not in ("", "INNER", "CROSS")) or \
                not (outer or not side and kind in ("", "INNER", "CROSS")) or method not in ("", "NATURAL"):
            raise UnsupportedQuery(f"{written} JOIN is not supported: use inner, LEFT, RIGHT or FULL joins"
                                   if wording is _GENERAL else f"{written} JOIN is not supported: use inner joins")
        if method == "NATURAL":
            using[len(sources)] = NATURAL  # USING the columns both sides have, once the columns are known
        elif join.args.get("using"):
            if wording is not _GENERAL:
                raise UnsupportedQuery("JOIN ... USING is not supported: write the join as ON a.x = b.x")
            if join.args.get("on"):
                raise UnsupportedQuery("a join has both ON and USING: use one of them")
            using[len(sources)] = [_name(u if isinstance(u, exp.Identifier) else u.this) for u in join.args["using"]]  # type: ignore[misc]
        if outer:
            kinds[len(sources)] = side.lower()
        elif kind == "CROSS":
            kinds[len(sources)] = "cross"
        else:
            kinds[len(sources)] = "inner" if method or join.args.get("on") or join.args.get("using") else "comma"
        sources.append(join.this.this if is_join_tree(join.this) else join.this)

    aliases: dict[str, TableRef] = {}
    for source in sources:
        if not isinstance(source, exp.Table) or not isinstance(source.this, exp.Identifier):
            raise UnsupportedQuery(f"only base tables are supported in FROM, not {_sql(source)}")
        if source.args.get("sample"):
            raise UnsupportedQuery(f"TABLESAMPLE is not supported: {_sql(source)}")
        if source.args.get("only"):
            raise UnsupportedQuery("FROM ONLY is not supported: pgivm maintains views over plain tables")
        alias_node = source.args.get("alias")
        if alias_node is not None and alias_node.args.get("columns"):
            raise UnsupportedQuery(f"column alias lists are not supported: {_sql(source)}")
        if source.args.get("catalog"):
            raise UnsupportedQuery(f"cross-database reference {_sql(source)} is not supported")
        table = TableRef(name=_name(source.this), schema=_name(source.args.get("db")))  # type: ignore[arg-type]
        alias = _name(alias_node.this) if alias_node is not None else table.name
        if alias in aliases:
            raise UnsupportedQuery(f"table name or alias {alias!r} is used twice: give each table its own alias")
        aliases[alias] = table  # type: ignore[index]
    _check_outer_joins(kinds, using, list(aliases), widths)
    return aliases, using, kinds


def flat_joins(select: exp.Expression) -> list[tuple[exp.Join, int]]:
    """The joins of FROM in the order of their tables, each with the number of tables on its right:
    1, or those of the parenthesized join it joins (whose own joins follow it)."""
    out: list[tuple[exp.Join, int]] = []
    for join in select.args.get("joins") or []:
        if is_join_tree(join.this):
            first = join.this.this
            inner = flat_joins(first)  # the parenthesized join's first table holds its joins
            out += [(join, 1 + len(inner)), *inner]
        else:
            out.append((join, 1))
    return out


def _check_outer_joins(kinds: JoinKinds, using: dict[int, list[str]], aliases: list[str], widths: dict[int, int]) -> None:
    """What pgivm's left-to-right reading of the joins does not hold: a comma binds looser than
    JOIN, so ``a, b RIGHT JOIN c`` keeps c's rows once per row of a, not once. In or of
    parentheses, USING and NATURAL would read the columns of the tables joined so far: refused."""
    grouped = sorted({p for start, width in widths.items() for p in range(start, start + width)} & set(using))
    if grouped:
        raise UnsupportedQuery(f"JOIN {aliases[grouped[0]]} USING or NATURAL, in or of a parenthesized join: write the "
                               "join as ON a.x = b.x")
    outer = [p for p, k in kinds.items() if k in ("right", "full")]
    comma = [p for p, k in kinds.items() if k == "comma"]
    if outer and comma and min(comma) < max(outer):
        raise UnsupportedQuery(f"a comma in FROM before a {kinds[max(outer)].upper()} JOIN: write the comma as "
                               "CROSS JOIN or JOIN ... ON, so that the joins read left to right")


ColumnsOf = Callable[[TableRef], list[str]]
NATURAL: list[str] = []  # the USING list of a NATURAL JOIN, by identity: its columns come from the tables


@dataclass
class _Layout:
    """The FROM list as PostgreSQL lays it out: the columns of ``SELECT *`` in order (when the
    tables' columns are known), what each USING column stands for, and the equalities USING implies.

    ``a JOIN b USING (k)`` lists k once, first, then a's other columns, then b's; an unqualified
    ``k`` means a's (b's after a RIGHT JOIN, coalesce(a.k, b.k) after a FULL JOIN: ``coalesced``,
    which a maintained view reads only as written out). A USING after several tables names the one
    column of that name on its left.
    """

    aliases: dict[str, TableRef]
    columns: list[tuple[str, ColumnRef]] | None  # None: the tables' columns are not known
    merged: dict[str, ColumnRef]
    equalities: list[tuple[ColumnRef, ColumnRef]]
    table_columns: dict[str, list[str]] | None
    coalesced: dict[str, tuple[ColumnRef, ColumnRef, str]] = field(default_factory=dict)  # name -> a.k, b.k, b
    merging: dict[str, list[ColumnRef]] = field(default_factory=dict)  # a merged name -> every column it merges
    in_expressions: list[tuple[str, ColumnRef, tuple[ColumnRef, ...]]] = field(default_factory=list)  # merged names read in expressions

    def written_out(self, name: str) -> exp.Expression:
        """The FULL JOIN's USING column ``name`` as PostgreSQL reads it: coalesce(a.k, b.k)."""
        left, right, _ = self.coalesced[name]
        return exp.Coalesce(this=exp.column(left.column, table=left.alias, quoted=True),
                            expressions=[exp.column(right.column, table=right.alias, quoted=True)])

    def refuse_coalesced(self, name: str) -> None:
        """The FULL JOIN's USING column ``name`` where it was not written out (``_write_out_coalesced``)."""
        if name in self.coalesced:
            left, right, alias = self.coalesced[name]
            raise UnsupportedQuery(f"column {name} of FULL JOIN {alias} USING is coalesce({left}, {right}) here: "
                                   "write that")

    def star(self, alias: str | None, shown: str) -> list[tuple[str, ColumnRef]]:
        if self.columns is None or self.table_columns is None:
            raise NeedsColumns(f"SELECT {shown} needs the tables' columns: give pgivm a database to read them from")
        if alias is None:
            return self.columns
        if alias not in self.aliases:
            raise UnsupportedQuery(f"{shown} refers to an unknown table or alias {alias!r}")
        return [(c, ColumnRef(alias, c)) for c in self.table_columns[alias]]


def _layout(aliases: dict[str, TableRef], using: dict[int, list[str]], columns_of: ColumnsOf | None,
            kinds: JoinKinds | None = None) -> _Layout:
    names = list(aliases)
    coalesced: dict[str, tuple[ColumnRef, ColumnRef, str]] = {}
    table_columns = {a: columns_of(t) for a, t in aliases.items()} if columns_of is not None else None

    def columns(alias: str) -> list[tuple[str, ColumnRef]] | None:
        return None if table_columns is None else [(c, ColumnRef(alias, c)) for c in table_columns[alias]]

    layout = columns(names[0])
    merged: dict[str, ColumnRef] = {}
    merging: dict[str, list[ColumnRef]] = {}
    equalities: list[tuple[ColumnRef, ColumnRef]] = []
    for position, alias in enumerate(names[1:], start=1):
        right = columns(alias)
        names_using = using.get(position, [])
        if names_using is NATURAL:  # the common column names, in the order of the left side
            if layout is None or right is None:
                raise NeedsColumns(f"NATURAL JOIN {alias} needs the tables' columns: give pgivm a database to read them from")
            on_right = {n for n, _ in right}
            names_using = list(dict.fromkeys(n for n, _ in layout if n in on_right))
        front: list[tuple[str, ColumnRef]] = []
        kind = (kinds or {}).get(position)
        for u in names_using:
            if u in coalesced:
                coalesced_ref = coalesced[u]
                raise UnsupportedQuery(f"JOIN {alias} USING ({u}) after FULL JOIN {coalesced_ref[2]} USING ({u}), which "
                                       f"is coalesce({coalesced_ref[0]}, {coalesced_ref[1]}): write the join as ON")
            if layout is not None:
                found = [ref for n, ref in layout if n == u]
                if not found:
                    raise UnsupportedQuery(f"column {u} named in USING does not exist on the left of the join with {alias}")
                if len(found) > 1:
                    raise UnsupportedQuery(f"common column name {u} appears more than once on the left of the join "
                                           f"with {alias}: write the join as ON")
                left = found[0]
            elif u in merged:
                left = merged[u]
            elif position == 1:
                left = ColumnRef(names[0], u)
            else:
                raise NeedsColumns(f"JOIN {alias} USING ({u}) after several tables needs the tables' columns: "
                                       "write the join as ON a.x = b.x")
            if right is not None and u not in [n for n, _ in right]:
                raise UnsupportedQuery(f"column {u} named in USING does not exist in {alias}")
            right_ref = ColumnRef(alias, u)
            equalities.append((left, right_ref))
            merging[u] = [*merging.get(u, [left]), right_ref]
            if kind == "right":  # the merged column is the right side's, which every row has
                merged[u] = right_ref
            elif kind == "full":
                coalesced[u] = (left, right_ref, alias)
            else:
                merged.setdefault(u, left)
            front.append((u, right_ref if kind == "right" else left))
        if layout is not None and right is not None:
            layout = (front + [(n, r) for n, r in layout if n not in names_using]
                      + [(n, r) for n, r in right if n not in names_using])
    return _Layout(aliases, layout, merged, equalities, table_columns, coalesced, merging)


def _expand_stars(items: list[tuple[str | None, exp.Expression]], layout: _Layout) -> list[tuple[str | None, exp.Expression]]:
    """``*`` and ``t.*`` as the columns they stand for (as qualified column items; a FULL JOIN's
    USING column as its coalesce)."""
    out: list[tuple[str | None, exp.Expression]] = []
    for name, node in items:
        if isinstance(node, exp.Star) or (isinstance(node, exp.Column) and isinstance(node.this, exp.Star)):
            alias = _name(node.args.get("table")) if isinstance(node, exp.Column) else None
            for column, ref in layout.star(alias, _sql(node)):
                if alias is None and column in layout.coalesced:
                    out.append((column, layout.written_out(column)))
                elif alias is None and layout.merged.get(column) == ref:  # a USING column, unqualified (its common type)
                    out.append((column, exp.column(exp.to_identifier(column, quoted=True))))
                else:
                    out.append((column, exp.column(exp.to_identifier(ref.column, quoted=True),
                                                   table=exp.to_identifier(ref.alias, quoted=True))))
        else:
            out.append((name, node))
    return out


def _write_out_coalesced(select: exp.Select, layout: _Layout) -> bool:
    """A FULL JOIN's USING column read unqualified, k, as what it is: coalesce(a.k, b.k) (a bare
    SELECT item keeps its name). Whether anything was written out."""
    found = [c for c in select.find_all(exp.Column) if not c.table and c.name in layout.coalesced
             and not isinstance(c.parent, exp.Join)  # USING's own list
             and c.find_ancestor(exp.Select) is select]  # not a subquery's own column
    for column in found:
        value = layout.written_out(column.name)
        column.replace(exp.alias_(value, column.name, quoted=True) if column.parent is select else value)
    return bool(found)


_COMPARED = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Between, exp.In, exp.Is)


def _use_of(node: exp.Column) -> str:
    """How a column is read: "item" (a whole SELECT or GROUP BY item, or one ``*`` stands for),
    "compared" (an operand of a comparison) or "expression" (anything else)."""
    parent = node.parent
    while isinstance(parent, exp.Paren):
        parent = parent.parent
    if isinstance(parent, exp.Alias):
        parent = parent.parent
    if parent is None or isinstance(parent, (exp.Select, exp.Group)):
        return "item"
    return "compared" if isinstance(parent, _COMPARED) else "expression"


class _Resolver:
    """Column references -> ColumnRef, checked against the FROM list."""

    def __init__(self, aliases: dict[str, TableRef], layout: _Layout | None = None, general: bool = True) -> None:
        self.aliases = aliases
        self.layout = layout
        self.general = general  # an unqualified column may wait for the tables' columns (NeedsColumns)

    def column(self, node: exp.Column) -> ColumnRef:
        column = _name(node.this) or ""
        table = _name(node.args.get("table"))
        schema = _name(node.args.get("db"))
        # schema.table.column names a table written as schema.table without an alias, as in PostgreSQL
        if node.args.get("catalog") or (
            schema is not None and (table is None or self.aliases.get(table) != TableRef(table, schema))
        ):
            raise UnsupportedQuery(f"column {_sql(node)} does not name a table of FROM: write it as alias.column")
        if table is None and self.layout is not None:
            self.layout.refuse_coalesced(column)
            if column in self.layout.merged:  # a USING column: the left table's (the right's after RIGHT JOIN)
                kept = self.layout.merged[column]
                use = _use_of(node)
                if use != "item":
                    self.layout.in_expressions.append((use, kept, tuple(self.layout.merging.get(column, []))))
                return kept
            if self.layout.table_columns is not None:
                having = [a for a, cols in self.layout.table_columns.items() if column in cols]
                if len(having) == 1:
                    return ColumnRef(having[0], column)
        if table is None:
            if len(self.aliases) != 1 and self.layout is not None and self.layout.table_columns is None and self.general:
                raise NeedsColumns(f"column {column} without its table needs the tables' columns: give pgivm a "
                                   "database to read them from")
            if column in self.aliases and (self.layout is None or self.layout.table_columns is None or not any(
                    column in cols for cols in self.layout.table_columns.values())):  # count(o): o's whole row
                raise UnsupportedQuery(f"{column} is a whole row of table {column} here: a maintained view reads columns",
                                       f"count a column of {column} that is never NULL (count({column}.id)), or count(*)")
            if len(self.aliases) != 1:
                example = ColumnRef(next(iter(self.aliases)), column)
                raise UnsupportedQuery(f"qualify column {column} with its table or alias (e.g. {example})")
            (table,) = self.aliases
        if table not in self.aliases:
            raise UnsupportedQuery(f"column {table}.{column} refers to an unknown table or alias {table!r}")
        return ColumnRef(table, column)


# ------------------------------------------------------------------------------ ON and WHERE


def _where(select: exp.Select) -> list[exp.Expression]:
    where = select.args.get("where")  # (WHERE true, and AND true, hold for every row)
    return [c for c in _conjuncts(where.this if where is not None else None) if not (isinstance(c, exp.Boolean) and c.this)]


def _conjuncts(condition: exp.Expression | None) -> list[exp.Expression]:
    if condition is None:
        return []
    if isinstance(condition, exp.Paren):
        return _conjuncts(condition.this)
    if isinstance(condition, exp.And):
        return _conjuncts(condition.this) + _conjuncts(condition.expression)
    return [condition]


_Comparison = tuple[ColumnRef, ComparisonOp, tuple[str, bool], str]  # column, op, (constant, is_string), sql
_CrossComparison = tuple[ColumnRef, ComparisonOp, ColumnRef, str]  # two tables' columns, not a join equality


def _conditions(
    select: exp.Select, resolver: _Resolver, wording: _Wording, with_on: bool = True,
    where: list[exp.Expression] | None = None,
) -> tuple[list[tuple[ColumnRef, ColumnRef]], list[_Comparison], list[_CrossComparison], list[Condition]]:
    """The ON (unless ``with_on`` is False: a query with an outer join keeps each ON with its join)
    and WHERE conjuncts, split into join equalities, filters, (general wording) comparisons of two
    tables' columns other than equality, and (general wording) any other condition on one table's
    columns; anything else is refused. ``where``: WHERE's conjuncts, when not all of them."""
    conditions: list[exp.Expression] = []
    for join, _ in flat_joins(select) if with_on else []:  # those inside parentheses too
        conditions += _conjuncts(join.args.get("on"))
    conditions += where if where is not None else _where(select)

    equalities: list[tuple[ColumnRef, ColumnRef]] = []
    filters: list[_Comparison] = []
    predicates: list[_CrossComparison] = []
    local: list[Condition] = []
    for cond in conditions:
        if cond.find(exp.Select):
            raise UnsupportedQuery(f"{_SUBQUERY_WHERE}: {_sql(cond)}" if wording is _GENERAL else
                                   f"subqueries are not supported: {_sql(cond)}")
        op = _COMPARISONS.get(type(cond))
        try:
            if op is None:
                raise UnsupportedQuery(f"unsupported condition {_sql(cond)}: {wording.condition}")
            left, right = _operand(cond.this, resolver, wording), _operand(cond.expression, resolver, wording)
            if isinstance(left, ColumnRef) and isinstance(right, ColumnRef) and left.alias == right.alias:
                raise UnsupportedQuery(f"condition {_sql(cond)} compares two columns of one table")
        except UnsupportedQuery:
            condition = _general_condition(cond, resolver) if wording is _GENERAL else None
            if condition is None:
                raise
            local.append(condition)
            continue
        if isinstance(left, ColumnRef) and isinstance(right, ColumnRef):
            if op != "=":
                if wording is _GENERAL:  # ON of an inner join holds like WHERE
                    predicates.append((left, op, right, _sql(cond)))
                    continue
                raise UnsupportedQuery(f"unsupported condition {_sql(cond)}: {wording.join_condition}")
            equalities.append((left, right))
        elif isinstance(left, ColumnRef):
            filters.append((left, op, right, _sql(cond)))  # type: ignore[arg-type]
        elif isinstance(right, ColumnRef):
            filters.append((right, _FLIPPED[op], left, _sql(cond)))
        else:
            raise UnsupportedQuery(f"condition {_sql(cond)} compares two constants: remove it")
    return equalities, filters, predicates, local


def _join_steps(select: exp.Select, kinds: JoinKinds, aliases: list[str], layout: _Layout,
                resolver: _Resolver) -> list[JoinStep]:
    """With an outer join, each table after the first as a step of the joins read left to right,
    its ON conjuncts (USING's equalities among them) kept with it."""
    written = flat_joins(select)
    joins = dict(enumerate(written, start=len(aliases) - len(written)))  # after FROM's comma list
    steps = []
    for position, alias in enumerate(aliases[1:], start=1):
        join, width = joins.get(position, (None, 1))
        conjuncts = _conjuncts(join.args.get("on")) if join is not None else []
        conjuncts += [exp.EQ(this=exp.column(left.column, table=left.alias, quoted=True),
                             expression=exp.column(right.column, table=right.alias, quoted=True))
                      for left, right in layout.equalities if right.alias == alias]
        on = _step_conditions(conjuncts, resolver, nested=lambda c: f"{_SUBQUERY_WHERE}: {_sql(c)}",
                              constant=lambda c: f"ON {_sql(c)} reads no column of the tables it joins: remove it or "
                                                 "write the condition it stands for", allow_true=True)  # ON true: every pair
        kind = kinds[position]
        steps.append(JoinStep("inner" if kind in ("comma", "cross") else kind, alias, on, width))  # type: ignore[arg-type]
    return steps


def _step_conditions(conjuncts: list[exp.Expression], resolver: _Resolver | _SubqueryResolver,
                     nested: Callable[[exp.Expression], str], constant: Callable[[exp.Expression], str],
                     allow_true: bool = False) -> tuple[Condition, ...]:
    """A join step's conditions (``pgivm.query.scalar``), refused with ``nested(c)`` where one holds
    a subquery and ``constant(c)`` where one reads no column (but a TRUE, if ``allow_true``)."""
    on = []
    for cond in conjuncts:
        if cond.find(exp.Select):
            raise UnsupportedQuery(nested(cond))
        condition = _general_condition(cond, resolver)  # type: ignore[arg-type]
        if condition is not None:
            on.append(condition)
        elif not (allow_true and isinstance(cond, exp.Boolean) and cond.this):
            raise UnsupportedQuery(constant(cond))
    return tuple(on)


_SUBQUERY_WHERE = "a subquery is maintained only as [NOT] EXISTS or [NOT] IN, a condition of WHERE joined by AND"


def _equalities_into_joins(steps: list[JoinStep], equalities: list[tuple[ColumnRef, ColumnRef]], aliases: list[str]
                           ) -> tuple[list[JoinStep], list[tuple[ColumnRef, ColumnRef]]]:
    """WHERE's ``a.x = b.y`` held in the ON of the inner join (a comma, CROSS JOIN) that brings the
    later of a and b, where no RIGHT or FULL join comes after it: the same rows (a later LEFT join,
    semi- or anti-join leaves a and b's columns as they are), and a delta that joins on it rather
    than taking the cross product up the joins (``FROM r, s LEFT JOIN t ... WHERE r.b = s.b``)."""
    top = [1]  # the positions of the joins outside parentheses: a WHERE condition goes into none inside
    while top[-1] < len(aliases):
        top.append(top[-1] + steps[top[-1] - 1].width)
    top.pop()
    step_of = {alias: max([0, *(p for p in top if p <= i)]) - 1 for i, alias in enumerate(aliases)}
    widening = [p - 1 for p in top if steps[p - 1].kind in ("right", "full")]
    steps, kept = list(steps), []
    for left, right in equalities:
        k = max(step_of[left.alias], step_of[right.alias])  # the step that brings the later one
        if k >= 0 and steps[k].kind == "inner" and all(j < k for j in widening):
            equality = Condition(None, scalar.Op("=", (_col(left), _col(right))), f"{left} = {right}")
            steps[k] = replace(steps[k], on=(*steps[k].on, equality))
        else:
            kept.append((left, right))
    return steps, kept


def _subquery_test(cond: exp.Expression) -> tuple[bool, exp.Select, exp.Expression | None] | None:
    """A WHERE conjunct that tests a subquery: (negated, the subquery, the IN operand or None for
    EXISTS), or None."""
    negated = False
    while isinstance(cond, (exp.Not, exp.Paren)):
        negated ^= isinstance(cond, exp.Not)
        cond = cond.this
    if isinstance(cond, exp.Exists) and isinstance(cond.this, exp.Select):
        return negated, cond.this, None
    query = cond.args.get("query") if isinstance(cond, exp.In) else None
    if query is not None and isinstance(query.this if isinstance(query, exp.Subquery) else query, exp.Select):
        return negated, query.this if isinstance(query, exp.Subquery) else query, cond.this
    return None


def _subquery_step(conjunct: exp.Expression, visible: dict[str, TableRef], tested: dict[str, TableRef],
                   layout: _Layout, columns_of: ColumnsOf | None) -> JoinStep:
    """``[NOT] EXISTS (SELECT ... FROM t WHERE c)`` as a semi- (anti-) join step with t on c;
    ``x IN (SELECT t.y FROM t WHERE c)`` as a semi-join on x = t.y AND c; ``x NOT IN (...)`` as
    an anti-join on (t.y = x OR t.y IS NULL OR x IS NULL) AND c, SQL's rule for NOT IN: it is
    not true where x is NULL or the subquery has a NULL, unless the subquery has no row."""
    negated, subquery, operand = _subquery_test(conjunct)  # type: ignore[misc]
    written = _sql(conjunct)
    clauses = {"joins": "joins", "group": "GROUP BY", "having": "HAVING", "distinct": "DISTINCT", "limit": "LIMIT",
               "offset": "OFFSET", "order": "ORDER BY", "with_": "WITH", "with": "WITH", "windows": "WINDOW"}
    for arg, clause in clauses.items():
        if subquery.args.get(arg):
            raise UnsupportedQuery(f"{written}: a subquery of one table, filtered by WHERE, is maintained; not one "
                                   f"with {clause}")
    from_ = subquery.args.get("from_") or subquery.args.get("from")
    source = from_.this if from_ is not None else None
    if not isinstance(source, exp.Table) or not isinstance(source.this, exp.Identifier) or getattr(from_, "expressions", None):
        raise UnsupportedQuery(f"{written}: a subquery of one table, filtered by WHERE, is maintained")
    table = TableRef(name=_name(source.this), schema=_name(source.args.get("db")))  # type: ignore[arg-type]
    alias = _name(source.args["alias"].this) if source.args.get("alias") is not None else table.name
    inside = alias  # its name inside the subquery, which hides an outer table of that name (as in PostgreSQL)
    if alias in visible:  # the same name outside, or in another subquery: the step gets a name of its own
        alias = next(f"{inside}_{n}" for n in range(2, len(visible) + 3) if f"{inside}_{n}" not in visible)
    own_columns = columns_of(table) if columns_of is not None else None
    resolver = _SubqueryResolver({**visible, alias: table}, layout, alias, own_columns, inside)  # type: ignore[dict-item]
    conjuncts = _where(subquery)
    if operand is not None:  # IN's operand is the outer query's: its columns qualified before they meet the subquery's
        operand = operand.transform(lambda n: _qualified(resolver.outer.column(n), outer=True) if isinstance(n, exp.Column) else n)
        items = subquery.expressions
        if len(items) != 1 or isinstance(items[0], exp.Star):
            raise UnsupportedQuery(f"{written}: an IN subquery selects one value")
        value = items[0].this if isinstance(items[0], exp.Alias) else items[0]
        if negated:
            test: exp.Expression = exp.Or(this=exp.Or(this=exp.EQ(this=value.copy(), expression=operand.copy()),
                                                      expression=exp.Is(this=value.copy(), expression=exp.Null())),
                                          expression=exp.Is(this=operand.copy(), expression=exp.Null()))
        else:
            test = exp.EQ(this=value.copy(), expression=operand.copy())
        conjuncts = [exp.Paren(this=test)] + conjuncts
    on = _step_conditions(conjuncts, resolver, nested=lambda c: f"{written}: a subquery inside a subquery is not supported",
                          constant=lambda c: f"{written}: condition {_sql(c)} reads no column", allow_true=True)  # WHERE true holds
    tested[alias] = table
    on = tuple(replace(c, sql=c.sql.replace(f'"{_OUTER}".', "")) for c in on)  # as written, for explain
    return JoinStep("anti" if negated else "semi", alias, on)


_OUTER = "pgivm_outer"  # marks a column already resolved in the outer query (an IN operand)


def _qualified(ref: ColumnRef, outer: bool = False) -> exp.Column:
    """``alias.column``; ``outer``: marked as the outer query's, which a subquery's table of the
    same name does not hide."""
    return exp.column(ref.column, table=ref.alias, db=_OUTER if outer else None, quoted=True)


class _SubqueryResolver:
    """Column references inside a subquery: its own table's first (as PostgreSQL resolves an
    unqualified name in the innermost scope), then the outer query's."""

    def __init__(self, aliases: dict[str, TableRef], layout: _Layout, alias: str, columns: list[str] | None,
                 inside: str | None = None) -> None:
        self.aliases, self.alias, self.columns = aliases, alias, columns
        self.inside = inside or alias  # the name the subquery gives its table (``alias``: the step's)
        self.outer = _Resolver({a: t for a, t in aliases.items() if a != alias}, layout)

    def column(self, node: exp.Column) -> ColumnRef:
        table, name = _name(node.args.get("table")), _name(node.this) or ""
        if _name(node.args.get("db")) == _OUTER:
            return ColumnRef(table, name)  # type: ignore[arg-type]  # resolved already, in the outer query
        if table == self.inside or table is None and self.columns is not None and name in self.columns:
            return ColumnRef(self.alias, name)
        if table is None and self.columns is None:
            raise NeedsColumns(f"column {name} in a subquery needs the tables' columns (or write it as alias.column)")
        return self.outer.column(node)


_SHOWN = "pgivm_shown"  # marks, inside HAVING, a column that stands for an output of the view


def _split_expressions(items: list[tuple[str | None, exp.Expression]], grouped: set[str]
                       ) -> tuple[list[tuple[str | None, exp.Expression]], tuple[tuple[str, scalar.Node], ...] | None]:
    """SELECT items that compute on columns or aggregates (``r.a + 1``, ``sum(x) / count(*)``,
    ``coalesce(max(y), 0)``): each column and aggregate in them becomes an output of its own (named
    pgivm_e1, ...), which the systems maintain, and the item an expression over those outputs (the
    projection), which the view computes as it reads them. None when every item is a column or an
    aggregate (nothing to compute). A GROUP BY expression (``grouped``, as written) is a value of
    its own, like a column."""
    def plain(node: exp.Expression) -> bool:
        return isinstance(node, exp.Column) or _is_supported_aggregate(node) or _sql(node) in grouped

    if all(plain(node) for _, node in items):
        return items, None
    out: list[tuple[str | None, exp.Expression]] = []
    projection: list[tuple[str, scalar.Node]] = []
    for name, node in items:
        if plain(node):
            out.append((name, node))
            projection.append((output_name(name, node), scalar.Col("", output_name(name, node))))
            continue
        leaves: dict[str, str] = {}  # a leaf's SQL -> its hidden output

        def hide(sub: exp.Expression) -> exp.Expression:
            if isinstance(sub, exp.AggFunc) or _sql(sub) in grouped or (
                    isinstance(sub, exp.Column) and not sub.find_ancestor(exp.AggFunc)):
                key = _sql(sub)
                if key not in leaves:
                    leaves[key] = f"pgivm_e{len(out) + 1}"
                    out.append((leaves[key], sub.copy()))
                return exp.column(exp.to_identifier(leaves[key], quoted=True), table=exp.to_identifier(_SHOWN))
            return sub

        computed = node.copy().transform(hide)
        try:
            projection.append((output_name(name, node), scalar.from_sqlglot(computed, lambda c: scalar.Col("", c.name))))
        except UnsupportedQuery as err:  # said of the item as written, not of its hidden outputs
            message = err.message
            for written, hidden in leaves.items():
                message = message.replace(f'{_SHOWN}."{hidden}"', written)
            raise UnsupportedQuery(message) from None
    return out, tuple(projection)


def _having_reads(select: exp.Select, items: list[tuple[str | None, exp.Expression]]
                  ) -> list[tuple[str | None, exp.Expression]]:
    """The aggregates and GROUP BY columns HAVING reads that the SELECT list does not show, as hidden
    items (pgivm_h1, ...): maintained like the others, read by HAVING, left out of the view's rows."""
    having = select.args.get("having")
    if having is None:
        return []
    shown = {_sql(node) for _, node in items}
    group = {_sql(node) for node in (select.args["group"].expressions if select.args.get("group") else [])}
    out: list[tuple[str | None, exp.Expression]] = []
    for sub in _having_condition(having).find_all(exp.AggFunc, exp.Column):
        if isinstance(sub, exp.Column) and (sub.find_ancestor(exp.AggFunc) or _sql(sub) not in group):
            continue  # inside an aggregate, or not a GROUP BY column: HAVING's own refusal says so
        if _sql(sub) not in shown:
            shown.add(_sql(sub))
            out.append((f"pgivm_h{len(out) + 1}", sub.copy()))
    return out


def _having(select: exp.Select, items: list[tuple[str | None, exp.Expression]], outputs: list[Output],
            resolver: _Resolver) -> scalar.Node | None:
    """HAVING as a condition on the view's rows (``pgivm.query.scalar``): each aggregate in it is
    an item of the SELECT list written the same way (``_having_reads`` added hidden ones), each
    column a GROUP BY column; anything else is refused in one line, naming what to do."""
    node = select.args.get("having")
    if node is None:
        return None
    if any(isinstance(o, Aggregate) and o.function == "cofactor" for o in outputs):
        raise UnsupportedQuery("HAVING with cofactor(...) is not supported")
    by_sql = {_sql(item): output.name for (_, item), output in zip(items, outputs) if isinstance(output, Aggregate)}
    by_column = {output.column: output.name for output in outputs if isinstance(output, GroupColumn)}

    def shown(sub: exp.Expression) -> exp.Expression:
        if isinstance(sub, exp.AggFunc):
            if _sql(sub) not in by_sql:
                raise UnsupportedQuery(f"HAVING reads {_sql(sub)}, which the SELECT list does not show: add it there")
            return exp.column(exp.to_identifier(by_sql[_sql(sub)], quoted=True), table=exp.to_identifier(_SHOWN))
        return sub

    def column(c: exp.Column) -> scalar.Col:
        if c.table == _SHOWN:
            return scalar.Col("", c.name)
        ref = resolver.column(c)
        if ref not in by_column:
            raise UnsupportedQuery(f"HAVING reads {ref}, which is not a GROUP BY column: group by it or "
                                   "aggregate it")
        return scalar.Col("", by_column[ref])

    return scalar.from_sqlglot(_having_condition(node).transform(shown), column)


def _having_condition(having: exp.Having) -> exp.Expression:
    """HAVING's condition with each ``agg(x) FILTER (WHERE c)`` written as the SELECT list's items
    are (``_without_filter``), so that it names the same aggregates."""
    condition = having.this.copy()
    if not condition.find(exp.Filter, exp.LogicalAnd, exp.LogicalOr):
        return condition
    return condition.transform(_without_filter).transform(_as_counts)


def _general_condition(cond: exp.Expression, resolver: _Resolver) -> Condition | None:
    """``cond`` as a condition (``pgivm.query.scalar``) on one table's rows or, reading several
    tables' columns, on the join result; None if it reads no column (the simpler forms' refusal
    stands)."""
    aliases = {resolver.column(c).alias for c in cond.find_all(exp.Column)}
    if not aliases:
        scalar.from_sqlglot(cond, lambda c: _col(resolver.column(c)))  # refuses what it may not call
        return None
    alias = aliases.pop() if len(aliases) == 1 else None
    return Condition(alias, scalar.from_sqlglot(cond, lambda c: _col(resolver.column(c))), _sql(cond))


def _col(ref: ColumnRef) -> scalar.Col:
    return scalar.Col(ref.alias, ref.column)


def _operand(node: exp.Expression, resolver: _Resolver, wording: _Wording) -> ColumnRef | tuple[str, bool]:
    """A column, or a constant as (text, is_string)."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Column) and isinstance(node.this, exp.Identifier):
        return resolver.column(node)
    if isinstance(node, exp.Literal):
        return node.this, node.is_string
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        return "-" + node.this.this, False
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and node.this.is_string:
        raise UnsupportedQuery(
            f"typed constant {_sql(node)} is not supported: write it as a plain string, e.g. {_sql(node.this)}, "
            "which PostgreSQL reads as the column's type"
        )
    raise UnsupportedQuery(f"unsupported condition operand {_sql(node)}: {wording.operand}")


# ------------------------------------------------------------------------------ GROUP BY and aggregates


def _group_by(select: exp.Select, resolver: _Resolver, wording: _Wording) -> list[ColumnRef]:
    group = select.args.get("group")
    if group is None:
        return []
    for arg in ("rollup", "cube", "grouping_sets", "totals", "all"):
        if group.args.get(arg):
            raise UnsupportedQuery(f"GROUP BY {arg.upper().replace('_', ' ')} is not supported: group by plain columns")
    columns: list[ColumnRef] = []
    for node in group.expressions:
        if isinstance(node, (exp.Rollup, exp.Cube, exp.GroupingSets)):
            raise UnsupportedQuery(f"GROUP BY {type(node).__name__.upper().replace('GROUPINGSETS', 'GROUPING SETS')} "
                                   "is not supported: group by columns or expressions over them")
        if not isinstance(node, exp.Column) or not isinstance(node.this, exp.Identifier):
            if wording is _GENERAL and _is_scalar(node):
                continue  # an expression: _group_expressions
            raise UnsupportedQuery(
                f"GROUP BY {_sql(node)} is not supported: group by columns or expressions over them (e.g. GROUP BY r.a)"
            )
        column = resolver.column(node)
        if column not in columns:
            columns.append(column)
    return columns


def _group_expressions(select: exp.Select) -> list[exp.Expression]:
    """GROUP BY's expressions other than plain columns (each once), as written."""
    group = select.args.get("group")
    nodes = [n for n in (group.expressions if group is not None else [])
             if not (isinstance(n, exp.Column) and isinstance(n.this, exp.Identifier)) and _is_scalar(n)]
    return list({_sql(n): n for n in nodes}.values())


def _aggregate(
    node: exp.Expression,
    name: str | None,
    resolver: _Resolver,
    variable_of: dict[ColumnRef, str],
    join_columns: set[ColumnRef],
    wording: _Wording = _GENERAL,
) -> Aggregate:
    if isinstance(node, exp.Count) and isinstance(node.this, exp.Distinct):
        if wording is not _GENERAL:
            raise UnsupportedQuery(f"unsupported aggregate {_sql(node)}: {wording.aggregate}")
        return Aggregate("count_distinct", _argument(node.this.expressions[0], resolver, variable_of), name or "count",
                         _sql(node))
    if isinstance(node, exp.Count):
        if not isinstance(node.this, (exp.Column, exp.Star)) and not _is_one(node.this):
            if wording is not _GENERAL:
                raise UnsupportedQuery(f"unsupported aggregate {_sql(node)}: {wording.aggregate}")
            return Aggregate("count", _argument(node.this, resolver, variable_of), name or "count", _sql(node))
        if isinstance(node.this, exp.Column):
            column = resolver.column(node.this)
            if column not in join_columns and wording is not _GENERAL:
                raise UnsupportedQuery(f"count({column}) is only supported for a join column: use count(*)")
            if column not in join_columns:  # rows where the column is not NULL (join columns never are)
                return Aggregate("count", Var(variable_of[column], column), name or "count", _sql(node))
        return Aggregate("count", None, name or "count", _sql(node))
    if _is_cofactor(node):
        if not node.expressions:
            raise UnsupportedQuery("cofactor() needs at least one column: cofactor(t.x, u.y, ...)")
        features = tuple(Var(variable_of[c], c) for c in (resolver.column(a) for a in node.expressions))
        return Aggregate("cofactor", None, name or "cofactor", _sql(node), features)
    function: AggregateFunction = ("sum" if isinstance(node, exp.Sum) else "min" if isinstance(node, exp.Min)
                                   else "max" if isinstance(node, exp.Max) else "avg")
    if not _is_arithmetic(node.this) and wording is not _GENERAL:
        raise UnsupportedQuery(f"unsupported aggregate {_sql(node)}: {wording.aggregate}")
    return Aggregate(function, _argument(node.this, resolver, variable_of), name or function, _sql(node))


def _argument(node: exp.Expression, resolver: _Resolver, variable_of: dict[ColumnRef, str],
              value: bool = False) -> Expr:
    """An aggregate's argument (or, ``value``, a GROUP BY expression): arithmetic as an Expr (a
    ring sums it), anything else as one Computed value of the row, named after its text (the same
    expression written twice is one value). A GROUP BY expression is always one value: it keys."""
    if _is_arithmetic(node) and not value:
        return _expression(node, resolver, variable_of)
    refs: dict[ColumnRef, Var] = {}

    def column(c: exp.Column) -> scalar.Col:
        ref = resolver.column(c)
        refs[ref] = Var(variable_of[ref], ref)
        return scalar.Col(ref.alias, ref.column)

    tree = scalar.from_sqlglot(node, column)
    text = _sql(node)  # the same expression is the same value: one name (no dot: no column's variable)
    return Computed("computed_" + hashlib.sha256(text.encode()).hexdigest()[:12], tree, tuple(refs.values()), text)


def _bare(node: exp.Expression) -> exp.Expression:
    return _bare(node.this) if isinstance(node, exp.Paren) else node


def _adds_columns(node: exp.Expression) -> bool:
    """Whether ``node`` adds or subtracts something that holds a column (``1 - r.d``)."""
    node = _bare(node)
    return isinstance(node, (exp.Add, exp.Sub)) and node.find(exp.Column) is not None


def _one_table(node: exp.Expression, resolver: _Resolver) -> bool:
    return len({resolver.column(c).alias for c in node.find_all(exp.Column)}) == 1


def _expression(node: exp.Expression, resolver: _Resolver, variable_of: dict[ColumnRef, str]) -> Expr:
    """The arithmetic inside sum/avg (already checked by ``_is_arithmetic``) as an Expr.

    A product with a sum of columns in it, ``r.x * (1 - r.d)``, is one value of the table's row,
    computed as PostgreSQL computes it, where its columns are one table's (else that sum alone is,
    where its columns are): expanded into monomials (x − x·d) it would differ from PostgreSQL's
    row-by-row value once a column is ±Infinity or NaN (float8, real, numeric: rings.py), and a
    sum of x − x·d keeps two sums where one does."""
    if isinstance(node, exp.Paren):
        return _expression(node.this, resolver, variable_of)
    if isinstance(node, exp.Mul) and node.this.find(exp.Column) and node.expression.find(exp.Column) \
            and (_adds_columns(node.this) or _adds_columns(node.expression)):
        if _one_table(node, resolver):
            return _argument(node, resolver, variable_of, value=True)
        return BinOp("*", *(_argument(_bare(side), resolver, variable_of, value=True)
                            if _adds_columns(side) and _one_table(side, resolver)
                            else _expression(side, resolver, variable_of) for side in (node.this, node.expression)))
    if isinstance(node, exp.Neg):
        if isinstance(node.this, exp.Literal):
            return Const("-" + node.this.this)
        return BinOp("*", Const("-1"), _expression(node.this, resolver, variable_of))
    if isinstance(node, exp.Literal):
        return Const(node.this)
    if isinstance(node, exp.Column):
        column = resolver.column(node)
        return Var(variable_of[column], column)
    return BinOp(
        _ARITHMETIC[type(node)],
        _expression(node.this, resolver, variable_of),
        _expression(node.expression, resolver, variable_of),
    )


class _UnionFind:
    """Columns -> equivalence classes (the join variables), as today's triangle parser grouped them."""

    def __init__(self) -> None:
        self.parent: dict[ColumnRef, ColumnRef] = {}

    def add(self, column: ColumnRef) -> ColumnRef:
        """Register a column; return the representative of its class."""
        self.parent.setdefault(column, column)
        while self.parent[column] != column:
            column = self.parent[column]
        return column

    def union(self, left: ColumnRef, right: ColumnRef) -> None:
        self.parent[self.add(left)] = self.add(right)

    def groups(self) -> list[list[ColumnRef]]:
        classes: dict[ColumnRef, list[ColumnRef]] = {}
        for column in list(self.parent):
            classes.setdefault(self.add(column), []).append(column)
        return list(classes.values())
