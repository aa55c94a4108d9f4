"""``LATERAL`` subqueries in FROM that join and filter, correlated by equalities of their WHERE: a
subquery of their values joined on those equalities (issue 22).

For each row of the tables before it, ``LATERAL (SELECT ... FROM s WHERE s.b = r.b AND s.c > 0) AS x``
is the rows of s with that row's b; without aggregation, limits or DISTINCT, that is the join with
the subquery's rows, the correlated side shown as a column:

    FROM r, LATERAL (SELECT s.c FROM s WHERE s.b = r.b AND s.c > 0) AS x
      -> FROM r JOIN (SELECT s.c, s.b AS pgivm_c1 FROM s WHERE s.c > 0) AS x ON x.pgivm_c1 = r.b

(``LEFT JOIN LATERAL (...) AS x ON cond``: ``LEFT JOIN (...) AS x ON cond AND x.pgivm_c1 = r.b``;
a NULL key matches nothing either way). The subquery is then merged as any subquery in FROM that
joins and filters. The query's ``*`` is expanded before (by qualify): the added columns show in no
output. A LATERAL that aggregates, limits, or is correlated otherwise is refused in one line. Runs
on a qualified query, first of the subquery rules.
"""

from __future__ import annotations

from sqlglot import exp

from pgivm.errors import UnsupportedQuery
from pgivm.query.exists_over_joins import key_matches, plain, split_where
from pgivm.query.scalar_subqueries import KEY

_TAKEN = "LATERAL is maintained when it joins and filters, correlated by equalities (no aggregate, DISTINCT, LIMIT)"


def has_lateral(query: exp.Expression) -> bool:
    return query.find(exp.Lateral) is not None


def lateral_as_joins(query: exp.Expression) -> None:
    """Each LATERAL subquery as a join with its values, in place; a one-line refusal for others."""
    for lateral in reversed(list(query.find_all(exp.Lateral))):
        join, subquery = lateral.parent, lateral.this
        body = subquery.this if isinstance(subquery, exp.Subquery) else None
        alias = lateral.args.get("alias") or (subquery.args.get("alias") if isinstance(subquery, exp.Subquery) else None)
        named = f"LATERAL subquery {alias.name}" if alias is not None else "a LATERAL without an alias"
        if not isinstance(body, exp.Select) or alias is None or not isinstance(join, exp.Join):
            raise UnsupportedQuery(f"{named}: {_TAKEN}")
        if not plain(body):
            raise UnsupportedQuery(f"{named} aggregates, or uses DISTINCT, LIMIT or a subquery: {_TAKEN}")
        split = split_where(body)
        if split is None:
            raise UnsupportedQuery(f"{named} reads the tables before it other than by equalities of its WHERE: {_TAKEN}")
        kept, keys = split
        values = body.copy()
        values.set("where", exp.Where(this=exp.and_(*(t.copy() for t in kept))) if kept else None)
        values.set("expressions", [*values.expressions, *(mine.copy().as_(f"{KEY}{i + 1}") for i, (mine, _) in enumerate(keys))])
        join.set("this", exp.Subquery(this=values, alias=alias.copy()))
        if not keys:
            continue
        matches = key_matches(alias.name, keys)
        on = join.args.get("on")
        join.set("on", exp.and_(on.copy(), matches) if on is not None else matches)
        if (join.args.get("kind") or "").upper() == "CROSS":
            join.set("kind", None)
