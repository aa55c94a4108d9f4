"""``EXISTS`` read as a value: in the SELECT list, under OR, NOT or CASE, as a join with the values
of its subquery (issue 22; pg_ivm's own tests write ``WHERE EXISTS (...) OR a.i > 2``).

The semi- and anti-join rules take an ``EXISTS`` that is a condition of WHERE joined by AND: a row
passes or fails it as its matches come and go. Anywhere else its value is read with the row's
other columns, so it becomes one: correlated by equalities, the subquery's DISTINCT values of its
correlated side are LEFT JOINed on them,

    EXISTS (SELECT 1 FROM s WHERE s.b = r.b AND s.c > 0)
      -> ... LEFT JOIN (SELECT DISTINCT s.b AS pgivm_c1 FROM s WHERE s.c > 0) AS exists_1
              ON exists_1.pgivm_c1 = r.b ...  and the test reads (exists_1.pgivm_c1 IS NOT NULL)

(each row meets at most one of the DISTINCT values, so the join keeps every row's multiplicity; a
key of a match is never NULL, having equalled the row's, and EXISTS is never NULL either).
Uncorrelated, it is one value for every row: ``CROSS JOIN (SELECT count(*) AS pgivm_n FROM s
WHERE ...) AS exists_1`` read as ``(exists_1.pgivm_n > 0)``; taken also as a condition of WHERE
when its subquery joins tables, which the semi-join rules do not take. Either subquery aggregates,
so ``derived.py`` keeps it as a table of the view's state: the DISTINCT values by the groups a write
touches, the count recounted whole at every write of its tables (O(N): an uncorrelated test over
a join is rare, and its value, when it flips, changes every row of the view anyway).

Taken when the subquery is tables joined by inner joins, filtered by WHERE, and reads the query
around it only by equalities of its WHERE joined by AND with columns of the query it is in; in the
SELECT list, only of a query that does not aggregate. Otherwise left as written, for the other
rules to take or refuse. Runs on a qualified query, before ``exists_over_joins.py`` and ``derived.py``.
"""

from __future__ import annotations

from sqlglot import exp

from pgivm.query.exists_over_joins import distinct_values, fresh_name, key_matches, plain, split_where
from pgivm.query.scalar_subqueries import KEY, and_terms, correlated, sources_of

COUNT = "pgivm_n"


def has_valued_exists(query: exp.Expression) -> bool:
    """Whether some EXISTS of the query is read as a value (or tests a join, uncorrelated)."""
    return any(_read_where(test) is not None for test in query.find_all(exp.Exists))


def exists_as_values(query: exp.Expression) -> None:
    """Each EXISTS read as a value, as a join with its subquery's values, in place (innermost first)."""
    for test in reversed(list(query.find_all(exp.Exists))):
        select = _read_where(test)
        if select is None:
            continue
        split = split_correlated(select, test.this, whole=_counted_whole(test, test.this))
        if split is not None:
            _join_values(select, test, test.this, *split, fresh_name(names_in(query), "exists"))


Correlations = list[tuple[exp.Expression, exp.Expression]]  # (the subquery's side, the outer query's side)


def split_correlated(select: exp.Select, body: exp.Select, whole: bool = False
                     ) -> tuple[list[exp.Expression], Correlations] | None:
    """``body``'s WHERE as its own conditions and its correlations, equalities with columns of the
    tables of ``select`` (the query it is read in); None when it reads that query otherwise, or
    an outer one. ``whole``: its WHERE is all its own (a subquery counted whole)."""
    if whole:
        where = body.args.get("where")
        return [*and_terms(where.this if where is not None else None)], []
    split = split_where(body)
    visible = {s.alias_or_name for s in select.find_all(exp.Table, exp.Subquery) if s.parent_select is select}
    if split is None or any(c.table not in visible for _, other in split[1] for c in other.find_all(exp.Column)):
        return None
    return split


def names_in(query: exp.Expression) -> set[str]:
    """The names of the query's tables and subqueries: a fresh one avoids them all."""
    return {n.alias_or_name for n in query.find_all(exp.Table, exp.Subquery)}


def per_key(body: exp.Select, kept: list[exp.Expression], keys: Correlations, *items: exp.Expression) -> exp.Select:
    """``body`` filtered by ``kept``, selecting its side of each correlation (``pgivm_c1``, ...) and
    ``items`` (aggregates), grouped by those sides: one row per correlated key (one in all, uncorrelated)."""
    out = body.copy()
    out.set("where", exp.Where(this=exp.and_(*(t.copy() for t in kept))) if kept else None)
    out.set("expressions", [*(mine.copy().as_(f"{KEY}{i + 1}") for i, (mine, _) in enumerate(keys)), *items])
    out.set("group", exp.Group(expressions=[mine.copy() for mine, _ in keys]) if keys else None)
    return out


def join_per_key(select: exp.Select, table: exp.Select, name: str, keys: Correlations) -> None:
    """``table`` (one row per key, ``per_key``) joined to ``select``: LEFT JOIN on the correlations,
    or CROSS JOIN when there are none (its one row)."""
    alias = exp.TableAlias(this=exp.to_identifier(name))
    select.append("joins", exp.Join(this=exp.Subquery(this=table, alias=alias), side="LEFT", on=key_matches(name, keys))
                  if keys else exp.Join(this=exp.Subquery(this=table, alias=alias), kind="CROSS"))


def _read_where(test: exp.Exists) -> exp.Select | None:
    return read_where(test, test.this) if isinstance(test.this, exp.Select) else None


def read_where(test: exp.Exists | exp.In, body: exp.Select) -> exp.Select | None:
    """The query ``test`` (an EXISTS, or an IN over ``body``) is read in, if it is read as a value
    there: in its WHERE (not a condition joined by AND, which the semi- and anti-join rules take,
    except an uncorrelated EXISTS over a join: see exists_as_values) or in the SELECT list of a query
    that does not aggregate; and ``body`` is tables joined, filtered, correlated only by its WHERE."""
    select = test.parent_select
    nested = _counted_whole(test, body)
    if not isinstance(select, exp.Select) or not (plain(body) or nested):
        return None
    if any(c.table not in {s.alias_or_name for s in sources_of(body)}
           for j in body.args.get("joins") or [] for c in j.find_all(exp.Column)):
        return None
    node: exp.Expression = test
    while node.parent is not select:
        node = node.parent  # type: ignore[assignment]
    if node.arg_key == "expressions":
        grouped = select.args.get("group") or select.args.get("having") or any(
            isinstance(n, exp.AggFunc) for item in select.expressions for n in item.walk())
        return None if grouped else select
    if node.arg_key != "where":
        return None
    if _is_term(test, select):  # a semi- or anti-join, unless an EXISTS uncorrelated over a join or nesting
        return select if isinstance(test, exp.Exists) and (sources_of(body)[1:] or nested) and not correlated(body) else None
    return select


def _counted_whole(test: exp.Exists | exp.In, body: exp.Select) -> bool:
    """An EXISTS whose subquery holds subqueries of its own in its WHERE (``EXISTS (SELECT 1 FROM s
    WHERE EXISTS (SELECT 1 FROM t WHERE t.c = s.c))``, pg_ivm's tests) and reads nothing of the query
    around it, at any depth: read as its count, a derived table whose own WHERE derived.py takes."""
    if not isinstance(test, exp.Exists) or not any(s is not body for s in body.find_all(exp.Select)):
        return False
    outside = body.copy()
    outside.set("where", None)
    where = body.args.get("where")
    terms = and_terms(where.this if where is not None else None)
    if not plain(outside) or any(  # derived.py keeps a WHERE with positive IN or EXISTS terms, each of one level
            t.find(exp.Select) is not None and not (isinstance(t, (exp.Exists, exp.In)) and _one_level(t)) for t in terms):
        return False
    own = {s.alias_or_name for inner in body.find_all(exp.Select) for s in sources_of(inner)}
    return all(c.table in own for c in body.find_all(exp.Column))


def _one_level(test: exp.Exists | exp.In) -> bool:
    inner = test.this if isinstance(test, exp.Exists) else test.args.get("query")
    inner = inner.this if isinstance(inner, exp.Subquery) else inner
    return isinstance(inner, exp.Select) and plain(inner)


def _is_term(test: exp.Exists | exp.In, select: exp.Select) -> bool:
    """Whether ``test`` (or NOT of it) is a condition of ``select``'s WHERE joined by AND."""
    where = select.args.get("where")
    return any(t is test or (isinstance(t, exp.Not) and t.this is test)
               for t in and_terms(where.this if where is not None else None))


def _join_values(select: exp.Select, test: exp.Exists, body: exp.Select, kept: list[exp.Expression],
                 keys: Correlations, name: str) -> None:
    if keys:
        join_per_key(select, distinct_values(body, kept, keys), name, keys)
        test.replace(exp.Paren(this=exp.Not(this=exp.Is(this=exp.column(f"{KEY}1", table=name), expression=exp.Null()))))
    else:
        join_per_key(select, per_key(body, kept, keys, exp.Count(this=exp.Star()).as_(COUNT)), name, keys)
        test.replace(exp.Paren(this=exp.GT(this=exp.column(COUNT, table=name), expression=exp.Literal.number(0))))
