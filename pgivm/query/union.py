"""UNION ALL (and UNION) of SELECT branches, read as one query of the model: each branch a
parenthesized join on the right of a LEFT JOIN from a relation of branch numbers,

    q1 UNION ALL q2   =   SELECT CASE WHEN b.n = 1 THEN <q1's item> WHEN b.n = 2 THEN <q2's item> END, ...
                          FROM (VALUES (1), (2)) AS b(n)
                          LEFT JOIN (<q1's FROM> CROSS JOIN (VALUES (1)) AS in1(m)) ON b.n = in1.m AND <q1's WHERE>
                          LEFT JOIN (<q2's FROM> CROSS JOIN (VALUES (2)) AS in2(m)) ON b.n = in2.m AND <q2's WHERE>
                          WHERE in1.m IS NOT NULL OR in2.m IS NOT NULL

Row n of b meets the rows of branch n and nothing else (each marker holds its own n), once per row of
the branch; a branch with no row leaves its b row NULL-extended, and WHERE drops it (the marker
``in_n.m`` is NULL exactly then). UNION is the same with DISTINCT. CASE resolves the items' types
as UNION does (PostgreSQL's common-type rule), and the view's columns are named after the first
branch's. The tables of the branches keep their own aliases, each with ``#n`` after it, so two
branches may read the same table: their atoms never meet in a joined row, which is what lets
first-order maintain such a self-join (``ConjunctiveQuery.union_branches``).
"""

from __future__ import annotations

from collections.abc import Callable

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from pgivm.errors import NeedsColumns, UnsupportedQuery
from pgivm.query.dialect import DIALECT
from pgivm.query.model import TableRef

BRANCH = "pgivm_branch"  # the alias of the relation of branch numbers
MARKER = "pgivm_in"  # a branch's marker relation is MARKER#n


def marker(n: int) -> str:
    return f"{MARKER}#{n}"


def union_as_joins(sql: str, columns_of: Callable[[TableRef], list[str]] | None
                   ) -> tuple[str, tuple[tuple[str, ...], ...]] | None:
    """The query read as one SELECT, and the aliases of each branch's tables; None if it is no union."""
    try:
        statement = sqlglot.parse_one(sql, read=DIALECT)
    except ParseError:
        return None  # the parser says what is wrong
    if not isinstance(statement, exp.Union) or isinstance(statement, (exp.Except, exp.Intersect)):
        if isinstance(statement, (exp.Except, exp.Intersect)):
            raise UnsupportedQuery(f"{statement.key.upper()} is not supported: UNION ALL and UNION are")
        return None
    branches, distinct = _branches(statement)
    branches = [_inlined(b, statement.args.get("with") or statement.args.get("with_"), columns_of) for b in branches]
    for clause, name in (("order", "ORDER BY"), ("limit", "LIMIT"), ("offset", "OFFSET")):
        if statement.args.get(clause):
            raise UnsupportedQuery(f"{name} after UNION is not supported in a maintained view")
    for branch in branches:
        _check_branch(branch)
    widths = {len(b.expressions) for b in branches}
    if len(widths) != 1:
        raise UnsupportedQuery("each branch of UNION must select the same number of columns")
    aliases: list[tuple[str, ...]] = []
    groups, arms = [], []
    for n, branch in enumerate(branches, start=1):
        branch = _using_as_on(branch, columns_of)
        renamed = _renamed(branch, n, columns_of)
        aliases.append(tuple(renamed.values()))
        groups.append(_group(branch, n))
        arms.append([item.this if isinstance(item, exp.Alias) else item for item in branch.expressions])
    items = []
    for position, first in enumerate(branches[0].expressions):
        cases = " ".join(f"WHEN {BRANCH}.n = {n} THEN {arm[position].sql(dialect=DIALECT)}"
                         for n, arm in enumerate(arms, start=1))
        items.append(f"CASE {cases} END AS {_output_name(first).sql(dialect=DIALECT)}")
    numbers = ", ".join(f"({n})" for n in range(1, len(branches) + 1))
    found = " OR ".join(f'"{marker(n)}".m IS NOT NULL' for n in range(1, len(branches) + 1))
    text = (f"SELECT {'DISTINCT ' if distinct else ''}{', '.join(items)} FROM (VALUES {numbers}) AS {BRANCH}(n) "
            f"{' '.join(groups)} WHERE {found}")
    return text, tuple(aliases)


def _branches(node: exp.Expression) -> tuple[list[exp.Select], bool]:
    """The SELECTs of a chain of UNIONs, left to right, and whether it is UNION (not UNION ALL)."""
    if isinstance(node, exp.Select):
        return [node], False
    if isinstance(node, exp.Subquery):
        return _branches(node.this)
    if not isinstance(node, exp.Union) or isinstance(node, (exp.Except, exp.Intersect)):
        raise UnsupportedQuery(f"a branch of UNION must be a SELECT, not {node.key.upper()}")
    left, left_distinct = _branches(node.this)
    right, right_distinct = _branches(node.expression)
    distinct = bool(node.args.get("distinct"))
    if (len(left) > 1 and left_distinct != distinct) or (len(right) > 1 and right_distinct != distinct):
        raise UnsupportedQuery("UNION and UNION ALL mixed in one query are not supported: use one of them")
    return left + right, distinct


def _inlined(branch: exp.Select, with_: exp.With | None, columns_of: Callable[[TableRef], list[str]] | None
             ) -> exp.Select:
    """The branch with the WITH queries before the UNION and its own subqueries in FROM merged in
    (``inline.py``), where they join, filter and rename; as it is if it has none."""
    from pgivm.query.inline import inline

    if with_ is None and not any(isinstance(s, exp.Subquery) and s.alias for s in branch.find_all(exp.Subquery)):
        return branch
    branch = branch.copy()
    if with_ is not None:
        if with_.args.get("recursive"):
            raise UnsupportedQuery("WITH RECURSIVE is not supported in a maintained view")
        mine = branch.args.get("with") or branch.args.get("with_")
        merged = exp.With(expressions=[*(c.copy() for c in with_.expressions), *(mine.expressions if mine else [])])
        branch.set("with_" if "with_" in branch.arg_types else "with", merged)
    text = inline(branch.sql(dialect=DIALECT), columns_of)
    flat = sqlglot.parse_one(text, read=DIALECT) if text is not None else branch
    if not isinstance(flat, exp.Select):
        raise UnsupportedQuery("a branch of UNION must be a SELECT")
    return flat


def _check_branch(branch: exp.Select) -> None:
    for clause, name in (("group", "GROUP BY"), ("having", "HAVING"), ("distinct", "DISTINCT"), ("order", "ORDER BY"),
                         ("limit", "LIMIT"), ("offset", "OFFSET"), ("with", "WITH"), ("with_", "WITH")):
        if branch.args.get(clause):
            raise UnsupportedQuery(f"a branch of UNION with {name} is not supported yet: UNION of branches that "
                                   "join, filter and compute on their rows is")
    if branch.find(exp.AggFunc) or branch.find(exp.Window):
        raise UnsupportedQuery("a branch of UNION with aggregates or window functions is not supported yet")
    if any(isinstance(s, exp.Star) or isinstance(s, exp.Column) and isinstance(s.this, exp.Star)
           for item in branch.expressions for s in item.walk()):
        raise UnsupportedQuery("SELECT * in a branch of UNION is not supported: name the columns")
    from pgivm.query.inline import is_join_tree

    if any(not is_join_tree(s) for s in branch.find_all(exp.Subquery)) or branch.find(exp.Exists) or \
            any(isinstance(s, exp.Select) for s in branch.walk() if s is not branch):  # (a JOIN b ON ...) is a join
        raise UnsupportedQuery("a subquery in a branch of UNION is not supported yet")
    if (branch.args.get("from_") or branch.args.get("from")) is None:
        raise UnsupportedQuery("a branch of UNION without FROM is not supported yet")


def _using_as_on(branch: exp.Select, columns_of: Callable[[TableRef], list[str]] | None) -> exp.Select:
    """The branch with each ``JOIN ... USING (k)`` and NATURAL JOIN of its FROM written as ON
    ``left.k = right.k``, and an unqualified k read as PostgreSQL reads it (an inner or LEFT join's
    k is the left side's, a RIGHT join's the right side's, a FULL join's coalesce(left, right)), and
    a NATURAL JOIN with no common column as CROSS JOIN: parenthesized, as the union's rewrite
    puts a branch, USING would read the columns of the joins before it. A FROM the rewrite cannot
    read (a join or subquery inside parentheses, an ambiguous name) is left to the parser's refusal."""
    from_ = branch.args.get("from_") or branch.args.get("from")
    joins = branch.args.get("joins") or []
    if from_ is None or not any(j.args.get("using") or j.args.get("method") == "NATURAL" for j in joins):
        return branch
    branch = branch.copy()
    from_ = branch.args.get("from_") or branch.args.get("from")
    sources = [from_.this, *(j.this for j in branch.args["joins"])]
    if getattr(from_, "expressions", None) or not all(isinstance(t, exp.Table) for t in sources):
        return branch
    names = [t.alias_or_name for t in sources]

    def columns(table: exp.Table) -> list[str]:
        if columns_of is None:
            raise NeedsColumns("JOIN ... USING or NATURAL JOIN in a branch of UNION needs the tables' columns")
        return columns_of(TableRef(table.name, table.args["db"].name if table.args.get("db") else None))

    # the columns so far, as PostgreSQL lists them, each with what it reads (a USING column of a FULL
    # join: both sides coalesced)
    layout: list[tuple[str, exp.Expression]] = [(c, exp.column(c, names[0], quoted=True)) for c in columns(sources[0])]
    merged: dict[str, exp.Expression] = {}  # a USING column -> what it reads
    for join, table, alias in zip(branch.args["joins"], sources[1:], names[1:]):
        right = columns(table)
        if join.args.get("method") == "NATURAL":
            using = list(dict.fromkeys(c for c, _ in layout if c in right))
        else:
            using = [u.name for u in join.args.get("using") or []]
        if not using and join.args.get("method") != "NATURAL":
            layout += [(c, exp.column(c, alias, quoted=True)) for c in right]
            continue
        owners = {u: [e for c, e in layout if c == u] for u in using}
        if any(len(o) != 1 for o in owners.values()) or any(u not in right for u in using):
            return branch  # the parser says what is wrong
        join.set("using", None)
        join.set("method", None)
        if using:
            join.set("on", exp.and_(*(exp.EQ(this=owners[u][0].copy(), expression=exp.column(u, alias, quoted=True))
                                      for u in using)))
        else:  # a NATURAL JOIN of tables with no column in common
            join.set("kind", "CROSS")
        for u in using:  # the merged column: the side a row always has, both coalesced for FULL
            left, mine = owners[u][0].copy(), exp.column(u, alias, quoted=True)
            merged[u] = exp.func("coalesce", left, mine) if join.side == "FULL" else mine if join.side == "RIGHT" else left
        layout = [(u, merged[u]) for u in using] + [(c, e) for c, e in layout if c not in using] + \
            [(c, exp.column(c, alias, quoted=True)) for c in right if c not in using]
    for column in list(branch.find_all(exp.Column)):
        if not column.table and column.name in merged:
            column.replace(merged[column.name].copy())
    return branch


def _tables(branch: exp.Select) -> list[exp.Table]:
    return [t for t in branch.find_all(exp.Table) if isinstance(t.this, exp.Identifier)]


def _renamed(branch: exp.Select, n: int, columns_of: Callable[[TableRef], list[str]] | None) -> dict[str, str]:
    """Each table alias of the branch followed by ``#n`` (its columns qualified first): the old
    alias -> the new."""
    tables = _tables(branch)
    names = {(t.alias_or_name): t for t in tables}
    unqualified = [c for c in branch.find_all(exp.Column) if not c.table]
    if unqualified and len(names) > 1:
        if columns_of is None:
            raise NeedsColumns("an unqualified column in a branch of UNION of several tables needs the tables' columns")
        owners = {alias: set(columns_of(TableRef(t.name, t.args["db"].name if t.args.get("db") else None)))
                  for alias, t in names.items()}
        for column in unqualified:
            having = [alias for alias, columns in owners.items() if column.name in columns]
            if len(having) != 1:
                raise UnsupportedQuery(f"column {column.name} in a branch of UNION is "
                                       f"{'ambiguous' if having else 'in none of its tables'}: qualify it")
            column.set("table", exp.to_identifier(having[0]))
    elif unqualified:
        (only,) = names
        for column in unqualified:
            column.set("table", exp.to_identifier(only))
    renamed = {alias: f"{alias}#{n}" for alias in names}
    for column in branch.find_all(exp.Column):
        if column.args.get("db"):
            raise UnsupportedQuery(f"a column qualified by schema in a branch of UNION: write {column.table}.{column.name}")
        if column.table in renamed:
            column.set("table", exp.to_identifier(renamed[column.table], quoted=True))
    for table in tables:
        alias = table.alias_or_name
        table.set("alias", exp.TableAlias(this=exp.to_identifier(renamed[alias], quoted=True)))
    return renamed


def _group(branch: exp.Select, n: int) -> str:
    """The branch's FROM, parenthesized, with its marker, as a LEFT JOIN on its branch number and
    its WHERE."""
    from_ = branch.args.get("from_") or branch.args.get("from")
    parts = [from_.this.sql(dialect=DIALECT)]
    parts += [f"CROSS JOIN {t.sql(dialect=DIALECT)}" for t in getattr(from_, "expressions", None) or []]
    for join in branch.args.get("joins") or []:  # a comma is a join of no kind, no condition: a CROSS JOIN here
        comma = not (join.side or join.kind or join.args.get("on") or join.args.get("using") or join.args.get("method"))
        parts.append(f"CROSS JOIN {join.this.sql(dialect=DIALECT)}" if comma else join.sql(dialect=DIALECT))
    parts.append(f'CROSS JOIN (VALUES ({n})) AS "{marker(n)}"(m)')
    where = branch.args.get("where")
    # an equality with the marker's n, not a constant: a delta that knows the branch then reads none of the others
    condition = f'{BRANCH}.n = "{marker(n)}".m' + (f" AND ({where.this.sql(dialect=DIALECT)})" if where is not None else "")
    return f"LEFT JOIN ({' '.join(parts)}) ON {condition}"


def _output_name(item: exp.Expression) -> exp.Identifier:
    """A first branch item's name, as PostgreSQL names the union's column."""
    from pgivm.query.inline import output_name

    if isinstance(item, exp.Alias):
        return item.args["alias"].copy()
    return exp.to_identifier(output_name(None, item), quoted=True)
