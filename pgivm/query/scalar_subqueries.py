"""Scalar subqueries compared in WHERE (or HAVING), as joins with a table of their values (issue 22; TPC-H Q2,
Q11, Q17, Q20, Q22).

``WHERE x > (SELECT avg(b) FROM s)`` compares each row with one value: the subquery moves into
FROM as ``(SELECT avg(b) AS pgivm_value FROM s) AS scalar_1`` and the condition reads
``x > scalar_1.pgivm_value``. An aggregate without GROUP BY has exactly one row, so the join keeps
every row's multiplicity; the subquery then aggregates in FROM, which ``derived.py`` keeps as a
table of the view's state. In the HAVING of a query with GROUP BY (Q11's ``HAVING sum(x) > (SELECT
sum(x) * 0.0001 ...)``) the value is also grouped by: one value for every group.

A correlated one, ``l_quantity < (SELECT 0.2 * avg(l_quantity) FROM lineitem WHERE l_partkey =
p_partkey)``, is the same value per key (the decorrelation of Kim, "On optimizing an SQL-like
nested query", TODS 1982, for aggregates that are NULL over no rows): grouped by its side of each
equality that correlates it, ``(SELECT l_partkey AS pgivm_c1, 0.2 * avg(l_quantity) AS pgivm_value
FROM lineitem GROUP BY l_partkey) AS scalar_1``, joined by ``scalar_1.pgivm_c1 = p_partkey``. A row
with no match had the subquery's NULL, and a comparison with NULL keeps no row of a WHERE: the
join keeps none either. That holds when the value is NULL over no rows (sum, avg, min, max,
bool_and/or, and arithmetic over them) and the comparison NULL when it is. Otherwise (count, 0 over
no rows: Kim's method is wrong there, the "COUNT bug" of Ganski and Wong, SIGMOD 1987; or a
coalesce around the subquery) the values are LEFT JOINed on the equalities and read as ``CASE
WHEN scalar_1.pgivm_c1 IS NULL THEN <the value over no rows> ELSE scalar_1.pgivm_value END``: a
key of a match is never NULL (it equalled the row's), and the value over no rows is the value
with each count 0 and each other aggregate NULL. Refused: a comparison under OR or NOT (a NULL
there may keep the row), and a subquery correlated otherwise than by equalities of its WHERE
joined by AND.

Runs on a qualified query (each column names its table), before ``derived.py``.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from pgivm.errors import UnsupportedQuery
from pgivm.query.dialect import DIALECT

VALUE = "pgivm_value"
KEY = "pgivm_c"  # the correlation keys: pgivm_c1, pgivm_c2, ...
_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)
_NULL_ON_EMPTY = (exp.Sum, exp.Avg, exp.Min, exp.Max, exp.LogicalAnd, exp.LogicalOr)
# what may surround the aggregates of a correlated one: NULL in, NULL out
_STRICT = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Neg, exp.Paren, exp.Literal, exp.Cast, exp.Column)


def has_scalar(select: exp.Expression) -> bool:
    """Whether some WHERE of the query compares a value with a scalar subquery, or some SELECT list
    reads one."""
    return any(_scalar(n) is not None for c in select.find_all(*_COMPARISONS) for n in c.find_all(exp.Subquery)) or any(
        _scalar(n) is not None and n.parent_select is s and (not _aggregates(s) or bool(s.args.get("group")))
        for s in select.find_all(exp.Select) for item in s.expressions for n in item.find_all(exp.Subquery))


def scalar_subqueries_as_joins(query: exp.Expression) -> None:
    """Each scalar subquery a WHERE condition joined by AND compares with (innermost first), as a
    join with its values, in place."""
    taken = {n.alias_or_name for n in query.find_all(exp.Table, exp.Subquery)}

    def name() -> str:
        found = next(f"scalar_{n}" for n in range(1, len(taken) + 2) if f"scalar_{n}" not in taken)
        taken.add(found)
        return found

    for select in reversed(list(query.find_all(exp.Select))):
        # read in the SELECT list: every row has a value, over no rows too; in a query that groups,
        # an uncorrelated one is one more GROUP BY value (one for every group), as in HAVING
        grouped = _aggregates(select)
        for item in list(select.expressions) if not grouped or select.args.get("group") else []:
            for side in [n for n in item.find_all(exp.Subquery) if _scalar(n) is not None and n.parent_select is select]:
                if not grouped or not correlated(side.this):
                    _join_values(select, side, side.this, name(), grouped, False)
        for clause in ("where", "having"):
            if clause == "having" and not select.args.get("group"):
                continue  # with no GROUP BY, grouping by the value would drop the one row of no input
            condition = select.args.get(clause)
            for term in and_terms(condition.this if condition is not None else None):
                compared = [n for n in term.find_all(exp.Subquery) if _scalar(n) is not None and n.parent_select is select]
                for side in compared if isinstance(term, _COMPARISONS) else ():
                    _join_values(select, side, side.this, name(), clause == "having", _strict_up_to(side, term))


def sources_of(body: exp.Select) -> list[exp.Expression]:
    """What a SELECT reads: its FROM's source, then each join's."""
    from_ = body.args.get("from_") or body.args.get("from")
    return [*([from_.this] if from_ is not None else []), *(j.this for j in body.args.get("joins") or [])]


def as_written(recount: str) -> str:
    """The recount of a scalar subquery's values (its derived table's) as the subquery reads in a
    message: its value alone, without the columns it is grouped and joined by."""
    select = sqlglot.parse_one(recount, dialect=DIALECT)
    value = next(e for e in select.expressions if e.alias_or_name == VALUE)
    select.set("expressions", [value.this])
    return select.sql(dialect=DIALECT)


def _scalar(node: exp.Expression) -> exp.Select | None:
    """The body of a subquery that returns one value of one aggregate row, or None."""
    if not isinstance(node, exp.Subquery) or not isinstance(node.this, exp.Select):
        return None
    body = node.this
    if len(body.expressions) != 1 or any(body.args.get(a) for a in ("group", "having", "distinct", "limit", "offset")):
        return None
    return body if body.expressions[0].find(exp.AggFunc) is not None and body.find(exp.Window) is None else None


def _strict_up_to(node: exp.Expression, term: exp.Expression) -> bool:
    """Whether every operation between ``node`` and the comparison ``term`` is NULL when it is."""
    parent = node.parent
    while parent is not None and parent is not term:
        if not isinstance(parent, _STRICT):
            return False
        parent = parent.parent
    return True


def _join_values(select: exp.Select, side: exp.Subquery, body: exp.Select, name: str, having: bool,
                 strict: bool) -> None:
    """Join ``select`` with the values of the scalar subquery ``side`` (``body``) as ``name``, and
    read the value there; in HAVING, the value is one more GROUP BY column (one value per group).
    ``strict``: the comparison is NULL when the value is (no CASE or coalesce around it)."""
    own = {s.alias_or_name for s in sources_of(body)}
    if any(s is not body and not _within_sources(s, body) for s in body.find_all(exp.Select)):
        raise UnsupportedQuery(f"scalar subquery ({_short(body)}) holds a subquery of its own: not supported yet")
    where = body.args.get("where")
    kept, keys = [], []  # keys: (the subquery's side, the outer side) of each correlating equality
    for term in and_terms(where.this if where is not None else None):
        outer = [c for c in term.find_all(exp.Column) if c.table not in own]
        if not outer:
            kept.append(term)
            continue
        sides = [(term.this, term.expression), (term.expression, term.this)] if isinstance(term, exp.EQ) else []
        pair = next(((mine, other) for mine, other in sides
                     if _reads_only(mine, own, True) and _reads_only(other, own, False)), None)
        if pair is None:
            raise UnsupportedQuery(f"scalar subquery ({_short(body)}) reads the query around it other than by an equality "
                                   f"of its WHERE joined by AND ({term.sql(dialect=DIALECT)}): not supported yet")
        keys.append(pair)
    value = body.expressions[0].this if isinstance(body.expressions[0], exp.Alias) else body.expressions[0]
    if any(c.table not in own for c in value.find_all(exp.Column)):
        raise UnsupportedQuery(f"scalar subquery ({_short(body)}) reads the query around it in its value: not supported yet")
    if keys and having:
        raise UnsupportedQuery(f"scalar subquery ({_short(body)}) in HAVING reads the query around it: not supported yet")
    # A correlated value that is not NULL over no rows (count) or a comparison that is not NULL when
    # it is (coalesce around it): a row with no match keeps the value over no rows, so a LEFT JOIN.
    outer = bool(keys) and not (_null_on_empty(value) and strict)
    empty = _over_no_rows(value, body) if outer else None
    values = body.copy()
    values.set("where", exp.Where(this=exp.and_(*(t.copy() for t in kept))) if kept else None)
    values.set("expressions", [*(mine.copy().as_(f"{KEY}{i + 1}") for i, (mine, _) in enumerate(keys)),
                               value.copy().as_(VALUE)])
    if keys:
        values.set("group", exp.Group(expressions=[mine.copy() for mine, _ in keys]))
    matches = [exp.EQ(this=exp.column(f"{KEY}{i + 1}", table=name), expression=other.copy())
               for i, (_, other) in enumerate(keys)]
    joined = exp.Subquery(this=values, alias=exp.TableAlias(this=exp.to_identifier(name)))
    if outer:
        select.append("joins", exp.Join(this=joined, side="LEFT", on=exp.and_(*matches)))
        no_match = exp.Is(this=exp.column(f"{KEY}1", table=name), expression=exp.Null())  # a key is NULL only then
        side.replace(exp.Case(ifs=[exp.If(this=no_match, true=empty)], default=exp.column(VALUE, table=name)))
    else:
        select.append("joins", exp.Join(this=joined))
        side.replace(exp.column(VALUE, table=name))
        if matches:
            select.set("where", exp.Where(this=exp.and_(select.args["where"].this, *matches)))
    if having:
        select.args["group"].append("expressions", exp.column(VALUE, table=name))


def _within_sources(node: exp.Expression | None, body: exp.Select) -> bool:
    """Whether ``node`` is inside a subquery ``body`` reads in FROM (which ``derived.py`` keeps, or
    refuses if it reads the query around it), not in its WHERE or its value."""
    sources = {id(s) for s in sources_of(body)}
    while node is not None and node is not body:
        if id(node) in sources:
            return True
        node = node.parent
    return False


def correlated(body: exp.Select) -> bool:
    """Whether ``body`` reads a column of the query around it (its own nested subqueries aside)."""
    own = {s.alias_or_name for s in sources_of(body)}
    return any(c.table not in own for c in body.find_all(exp.Column) if c.parent_select is body)


def _aggregates(select: exp.Select) -> bool:
    return bool(select.args.get("group") or select.args.get("having")) or any(
        isinstance(n, exp.AggFunc) and n.parent_select is select for item in select.expressions for n in item.walk())


def _reads_only(node: exp.Expression, own: set[str], inside: bool) -> bool:
    """Whether ``node`` reads some column and only the subquery's own tables' (``inside``) or only
    the query around it's."""
    tables = [c.table for c in node.find_all(exp.Column)]
    return bool(tables) and all((t in own) == inside for t in tables) and node.find(exp.AggFunc, exp.Subquery) is None


def _over_no_rows(value: exp.Expression, body: exp.Select) -> exp.Expression:
    """The value over no rows, a constant: each count 0, each aggregate NULL over no rows NULL."""
    def empty(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Count):
            return exp.Literal.number(0)
        if isinstance(node, _NULL_ON_EMPTY):
            return exp.Null()
        if isinstance(node, exp.AggFunc):
            raise UnsupportedQuery(f"scalar subquery ({_short(body)}) is correlated and calls {node.sql(dialect=DIALECT)}, "
                                   "whose value over no rows pgivm does not know: count, sum, avg, min, max, "
                                   "bool_and and bool_or are taken")
        return node

    return value.copy().transform(empty)


def _null_on_empty(value: exp.Expression) -> bool:
    """Whether the value is NULL over no rows: an aggregate that is, or an operator NULL makes NULL
    over one."""
    if isinstance(value, exp.AggFunc):
        return isinstance(value, _NULL_ON_EMPTY)
    return isinstance(value, _STRICT) and any(_null_on_empty(a) for a in value.iter_expressions())


def and_terms(condition: exp.Expression | None) -> list[exp.Expression]:
    """The terms of a condition joined by AND (parentheses looked through)."""
    if condition is None:
        return []
    if isinstance(condition, exp.And):
        return [*and_terms(condition.this), *and_terms(condition.expression)]
    if isinstance(condition, exp.Paren):
        return and_terms(condition.this)
    return [condition]


def _short(body: exp.Select) -> str:
    text = body.sql(dialect=DIALECT)
    return text if len(text) <= 40 else text[:37] + "..."
