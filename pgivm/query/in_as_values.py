"""``x IN (subquery)`` read as a value: in the SELECT list, under OR, NOT or CASE, as joins with the
values of its subquery, keeping SQL's three values (issue 22).

A ``[NOT] IN`` that is a condition of WHERE joined by AND is a semi- or anti-join (a row passes or
fails it: ``exists_over_joins.py``, ``derived.py``). Anywhere else its value is read, and it is
TRUE, FALSE or NULL: TRUE when some value of the subquery equals x; otherwise NULL when there are
values and x is NULL or one of them is; otherwise FALSE. Two joins give what that needs: the
subquery's DISTINCT non-NULL values equal to x (at most one matches a row), and the number of its
values and of its non-NULL ones; correlated by equalities of its WHERE, both are per correlated key,

    p.b IN (SELECT q.b FROM q WHERE q.c = p.a)
      -> ... LEFT JOIN (SELECT DISTINCT q.c AS pgivm_c1, q.b AS pgivm_value FROM q WHERE q.b IS NOT NULL)
                AS in_1 ON in_1.pgivm_c1 = p.a AND in_1.pgivm_value = p.b
             LEFT JOIN (SELECT q.c AS pgivm_c1, count(*) AS pgivm_n, count(q.b) AS pgivm_values FROM q
                        GROUP BY q.c) AS in_2 ON in_2.pgivm_c1 = p.a
      and the test reads CASE WHEN in_1.pgivm_value IS NOT NULL THEN TRUE
                              WHEN coalesce(in_2.pgivm_n, 0) = 0 THEN FALSE
                              WHEN p.b IS NULL OR in_2.pgivm_n > in_2.pgivm_values THEN NULL
                              ELSE FALSE END

(uncorrelated, the counts are one row, CROSS JOINed). Both subqueries aggregate, so ``derived.py``
keeps them as tables of the view's state, maintained by the groups a write touches.

Taken when the subquery is tables joined by inner joins, filtered by WHERE, has one output, and
reads the query around it only by equalities of its WHERE joined by AND; in the SELECT list, only
of a query that does not aggregate. Otherwise left as written, for the other rules to take or
refuse. Runs on a qualified query, before ``exists_as_values.py`` and ``derived.py``.
"""

from __future__ import annotations

from sqlglot import exp

from pgivm.query.exists_as_values import Correlations, join_per_key, names_in, per_key, read_where, split_correlated
from pgivm.query.exists_over_joins import distinct_values, fresh_name, key_matches

VALUE, COUNT, VALUES = "pgivm_value", "pgivm_n", "pgivm_values"


def has_valued_in(query: exp.Expression) -> bool:
    """Whether some ``IN (subquery)`` of the query is read as a value."""
    return any(_taken(test) is not None for test in query.find_all(exp.In))


def in_as_values(query: exp.Expression) -> None:
    """Each ``IN (subquery)`` read as a value, as joins with its subquery's values, in place (innermost first)."""
    for test in reversed(list(query.find_all(exp.In))):
        taken = _taken(test)
        if taken is None:
            continue
        select, body = taken
        split = split_correlated(select, body)
        if split is not None:
            taken_names = names_in(query)
            _join_values(select, test, body, *split, fresh_name(taken_names, "in"), fresh_name(taken_names, "in"))


def _taken(test: exp.In) -> tuple[exp.Select, exp.Select] | None:
    """(the query it is read in, its subquery) when this rule takes ``test``."""
    query = test.args.get("query")
    body = query.this if isinstance(query, exp.Subquery) else query
    if not isinstance(body, exp.Select) or len(body.expressions) != 1 or isinstance(body.expressions[0], exp.Star):
        return None
    select = read_where(test, body)
    return (select, body) if select is not None else None


def _join_values(select: exp.Select, test: exp.In, body: exp.Select, kept: list[exp.Expression],
                 keys: Correlations, matched: str, counted: str) -> None:
    item = body.expressions[0]
    value = item.this if isinstance(item, exp.Alias) else item
    outer = test.this
    present = exp.Not(this=exp.Is(this=value.copy(), expression=exp.Null()))
    matches = distinct_values(body, [*kept, present], keys, value.copy().as_(VALUE))
    select.append("joins", exp.Join(this=exp.Subquery(this=matches, alias=exp.TableAlias(this=exp.to_identifier(matched))),
                                    side="LEFT", on=exp.and_(*([key_matches(matched, keys)] if keys else []),
                                                             exp.EQ(this=exp.column(VALUE, table=matched),
                                                                    expression=outer.copy()))))
    join_per_key(select, per_key(body, kept, keys, exp.Count(this=exp.Star()).as_(COUNT),
                                 exp.Count(this=value.copy()).as_(VALUES)), counted, keys)
    n, non_null = exp.column(COUNT, table=counted), exp.column(VALUES, table=counted)
    test.replace(exp.Paren(this=exp.Case(ifs=[
        exp.If(this=exp.Not(this=exp.Is(this=exp.column(VALUE, table=matched), expression=exp.Null())),
               true=exp.true()),
        exp.If(this=exp.EQ(this=exp.Coalesce(this=n, expressions=[exp.Literal.number(0)]), expression=exp.Literal.number(0)),
               true=exp.false()),
        exp.If(this=exp.or_(exp.Is(this=outer.copy(), expression=exp.Null()), exp.GT(this=n.copy(), expression=non_null)),
               true=exp.Null()),
    ], default=exp.false())))
