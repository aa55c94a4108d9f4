"""``[NOT] EXISTS`` over a join, correlated by equalities, as ``[NOT] EXISTS`` over one table: the
DISTINCT values of its correlated columns (issue 22).

``WHERE EXISTS (SELECT 1 FROM s JOIN t ON s.c = t.c WHERE s.b = r.b AND t.d > 0)`` asks whether
some joined row of s and t has r's b. The join's rows matter only through that value, so the test
reads a table of the values the join has:

    EXISTS (SELECT 1 FROM (SELECT DISTINCT s.b AS pgivm_c1 FROM s JOIN t ON s.c = t.c WHERE t.d > 0)
            AS exists_1 WHERE exists_1.pgivm_c1 = r.b)

which ``derived.py`` keeps as a table of the view's state (a DISTINCT subquery in FROM), leaving an
EXISTS over one table: the semi- and anti-joins first-order and recompute maintain. SQL's NULLs
agree: an equality with NULL is never true, inside the subquery as against its values. Taken only
when every condition of the subquery's WHERE that reads the query around it is an equality of one
of its columns (or an expression of its tables) with one of the outer query's, the conditions
joined by AND; otherwise the EXISTS is left as written, for the semi-join rules to take or refuse.
``x IN (SELECT v FROM s JOIN t ... WHERE <correlated>)`` is that EXISTS with ``v = x`` in its WHERE;
``x NOT IN`` of it reads the DISTINCT (correlated side, v) pairs the same way, keeping NOT IN's NULLs.

Runs on a qualified query (each column names its table), before ``derived.py``.
"""

from __future__ import annotations

from sqlglot import exp

from pgivm.query.scalar_subqueries import KEY, VALUE, and_terms, sources_of


def has_joined_exists(select: exp.Expression) -> bool:
    """Whether some EXISTS or IN of the query reads a join (more than one table)."""
    return any(isinstance(e.this, exp.Select) and sources_of(e.this)[1:] for e in select.find_all(exp.Exists)) or any(
        isinstance(_in_body(i), exp.Select) and sources_of(_in_body(i))[1:] for i in select.find_all(exp.In))


def exists_over_joins(query: exp.Expression) -> None:
    """Each EXISTS over a join, correlated by equalities only, as an EXISTS over its values, in place;
    ``x IN (a correlated subquery over a join)`` first as the EXISTS it is."""
    for select in list(query.find_all(exp.Select)):
        where = select.args.get("where")
        for term in and_terms(where.this if where is not None else None):
            if isinstance(term, exp.Not) and isinstance(term.this, exp.In):
                _not_in_over_values(term.this, query)
            else:
                _in_as_exists(term)
    taken = {n.alias_or_name for n in query.find_all(exp.Table, exp.Subquery)}
    for test in reversed(list(query.find_all(exp.Exists))):
        body = test.this
        if not isinstance(body, exp.Select) or not sources_of(body)[1:] or not plain(body):
            continue
        own = {s.alias_or_name for s in sources_of(body)}
        split = split_where(body)
        outside = [c for j in body.args.get("joins") or [] for c in j.find_all(exp.Column) if c.table not in own]
        if split is not None and split[1] and not outside:
            name = fresh_name(taken, "exists")
            body.replace(_over_values(body, *split, name))


def split_where(body: exp.Select) -> tuple[list[exp.Expression], list[tuple[exp.Expression, exp.Expression]]] | None:
    """The conditions of ``body``'s WHERE (joined by AND) that read its own tables alone, and the
    (its side, the outer side) of each equality that correlates it; None if some other condition
    reads the query around it."""
    own = {s.alias_or_name for s in sources_of(body)}
    where = body.args.get("where")
    kept, keys = [], []
    for term in and_terms(where.this if where is not None else None):
        if all(c.table in own for c in term.find_all(exp.Column)):
            kept.append(term)
            continue
        pair = correlation(term, own)
        if pair is None:
            return None
        keys.append(pair)
    return kept, keys


def fresh_name(taken: set[str], stem: str) -> str:
    """``stem_N`` for the first N no alias of ``taken`` has, now taken too."""
    name = next(f"{stem}_{n}" for n in range(1, len(taken) + 2) if f"{stem}_{n}" not in taken)
    taken.add(name)
    return name


def _in_body(node: exp.In) -> exp.Expression | None:
    query = node.args.get("query")
    return query.this if isinstance(query, exp.Subquery) else query


def _in_as_exists(term: exp.Expression) -> None:
    """``x IN (SELECT v FROM s JOIN t ... WHERE ...)``, correlated, a term of a WHERE joined by AND, as
    ``EXISTS (SELECT 1 FROM s JOIN t ... WHERE ... AND v = x)``: the same rows pass (a NULL on
    either side passes neither). Uncorrelated, it is a derived table of its DISTINCT values already
    (``derived.py``, NOT IN too); a NOT IN correlated is ``_not_in_over_values``."""
    body = _in_body(term) if isinstance(term, exp.In) else None
    if not isinstance(body, exp.Select) or not sources_of(body)[1:] or not plain(body) or len(body.expressions) != 1:
        return
    own = {s.alias_or_name for s in sources_of(body)}
    if all(c.table in own for c in body.find_all(exp.Column)):
        return
    value = body.expressions[0].this if isinstance(body.expressions[0], exp.Alias) else body.expressions[0]
    tested = body.copy()
    where = tested.args.get("where")
    equal = exp.EQ(this=value.copy(), expression=term.this.copy())
    tested.set("where", exp.Where(this=exp.and_(where.this, equal) if where is not None else equal))
    tested.set("expressions", [exp.Literal.number(1)])
    term.replace(exp.Exists(this=tested))


def _not_in_over_values(test: exp.In, query: exp.Expression) -> None:
    """``x NOT IN (SELECT v FROM s JOIN t ... WHERE ... AND s.b = r.b)``, correlated by equalities, as
    ``x NOT IN (SELECT exists_1.pgivm_v FROM (SELECT DISTINCT s.b AS pgivm_c1, v AS pgivm_v FROM s JOIN t
    ... WHERE ...) AS exists_1 WHERE exists_1.pgivm_c1 = r.b)``: for each row the same set of values (a
    NULL in it too, which NOT IN's rule reads), now over one table, an anti-join the semi-join rules
    take with SQL's NULL rule."""
    body = _in_body(test)
    if not isinstance(body, exp.Select) or not sources_of(body)[1:] or not plain(body) or len(body.expressions) != 1:
        return
    own = {s.alias_or_name for s in sources_of(body)}
    value = body.expressions[0].this if isinstance(body.expressions[0], exp.Alias) else body.expressions[0]
    outside = [c for j in body.args.get("joins") or [] for c in j.find_all(exp.Column) if c.table not in own]
    if outside or any(c.table not in own for c in value.find_all(exp.Column)):
        return
    split = split_where(body)
    if split is None or not split[1]:
        return  # uncorrelated: a derived table of its DISTINCT values already (derived.py)
    kept, keys = split
    name = fresh_name({n.alias_or_name for n in query.find_all(exp.Table, exp.Subquery)}, "exists")
    values = distinct_values(body, kept, keys, value.copy().as_(VALUE))
    body.replace(exp.select(exp.column(VALUE, table=name)).from_(
        exp.Subquery(this=values, alias=exp.TableAlias(this=exp.to_identifier(name)))).where(key_matches(name, keys)))


def plain(body: exp.Select) -> bool:
    """Tables joined (inner), filtered by WHERE: nothing a DISTINCT of some columns would change."""
    clauses = ("group", "having", "distinct", "limit", "offset", "with_", "with", "windows", "order")
    return (not any(body.args.get(c) for c in clauses) and all(isinstance(s, exp.Table) for s in sources_of(body))
            and all(not j.side and (j.kind or "").upper() in ("", "INNER", "CROSS") for j in body.args.get("joins") or [])
            and body.find(exp.AggFunc, exp.Window) is None
            and not any(s is not body for s in body.find_all(exp.Select)))


def correlation(term: exp.Expression, own: set[str]) -> tuple[exp.Expression, exp.Expression] | None:
    """(the subquery's side, the outer query's side) of an equality between them, else None."""
    if not isinstance(term, exp.EQ):
        return None
    for mine, other in ((term.this, term.expression), (term.expression, term.this)):
        mine_tables = {c.table for c in mine.find_all(exp.Column)}
        other_tables = {c.table for c in other.find_all(exp.Column)}
        if mine_tables and other_tables and mine_tables <= own and not other_tables & own:
            return mine, other
    return None


def _over_values(body: exp.Select, kept: list[exp.Expression], keys: list[tuple[exp.Expression, exp.Expression]],
                 name: str) -> exp.Select:
    return (exp.select("1").from_(exp.Subquery(this=distinct_values(body, kept, keys),
                                               alias=exp.TableAlias(this=exp.to_identifier(name))))
            .where(key_matches(name, keys)))


def distinct_values(body: exp.Select, kept: list[exp.Expression], keys: list[tuple[exp.Expression, exp.Expression]],
                    *outputs: exp.Expression) -> exp.Select:
    """``SELECT DISTINCT <its side of each key> AS pgivm_c1, ..., <outputs> FROM <body's tables> WHERE <kept>``."""
    values = body.copy()
    values.set("where", exp.Where(this=exp.and_(*(t.copy() for t in kept))) if kept else None)
    values.set("expressions", [*(mine.copy().as_(f"{KEY}{i + 1}") for i, (mine, _) in enumerate(keys)), *outputs])
    values.set("distinct", exp.Distinct())
    return values


def key_matches(name: str, keys: list[tuple[exp.Expression, exp.Expression]]) -> exp.Expression:
    """``name.pgivm_c1 = <the outer side of the first key> AND ...``."""
    return exp.and_(*(exp.EQ(this=exp.column(f"{KEY}{i + 1}", table=name), expression=other.copy())
                      for i, (_, other) in enumerate(keys)))
