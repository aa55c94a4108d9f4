"""``GROUP BY 1`` and ``GROUP BY <an output's name>`` as the output expressions they name.

PostgreSQL reads an integer constant in GROUP BY as the position of a SELECT item, and a bare name
that is no column of the query's tables as a SELECT item's name (SQL-92's rule; a column of that
name wins): ``SELECT date_part('year', o.day) AS y, count(*) FROM o GROUP BY 1`` (or ``GROUP BY
y``) groups by ``date_part('year', o.day)``. The rest of pgivm reads GROUP BY as expressions over
columns, so each such reference is replaced by the item's expression first, in every SELECT of the
query (subqueries, WITH queries, UNION branches). A position outside the SELECT list is refused as
PostgreSQL refuses it.

Runs on the view's text first, before anything else reads it.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from pgivm.errors import NeedsColumns, UnsupportedQuery
from pgivm.query.dialect import DIALECT
from pgivm.query.model import TableRef

ColumnsOf = Callable[[TableRef], list[str]]


def group_by_outputs(sql: str, columns_of: ColumnsOf | None) -> str | None:
    """The query with each GROUP BY position or output name replaced by the SELECT item's
    expression, or None if it has none."""
    try:
        statement = sqlglot.parse_one(sql, read=DIALECT)
    except SqlglotError:
        return None  # the parser proper says what is wrong
    changed = False
    for select in list(statement.find_all(exp.Select)):
        group = select.args.get("group")
        for node in list(group.expressions) if group is not None else []:
            item = _named_item(select, node, columns_of)
            if item is not None:
                node.replace(item.unalias().copy())
                changed = True
    return statement.sql(dialect=DIALECT) if changed else None


def _named_item(select: exp.Select, node: exp.Expression, columns_of: ColumnsOf | None) -> exp.Expression | None:
    items = select.expressions
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
        position = int(node.this)
        if not 1 <= position <= len(items):
            raise UnsupportedQuery(f"GROUP BY position {position} is not in select list (it has {len(items)} items)")
        item = items[position - 1]
        if isinstance(item.unalias(), exp.Star) or (isinstance(item, exp.Column) and isinstance(item.this, exp.Star)):
            raise UnsupportedQuery(f"GROUP BY {position} names a SELECT *: group by the columns themselves")
        return item
    if not isinstance(node, exp.Column) or node.table or not isinstance(node.this, exp.Identifier):
        return None
    named = [i for i in items if isinstance(i, exp.Alias) and i.alias == node.name]
    if not named:
        return None
    sources = [s for s in select.find_all(exp.Table, exp.Subquery) if s.parent_select is select]
    if any(_may_have(source, node.name, columns_of) for source in sources):
        return None  # a column of the query's tables: PostgreSQL reads that first
    return named[0]


def _may_have(source: exp.Expression, name: str, columns_of: ColumnsOf | None) -> bool:
    """Whether a table, WITH query or subquery of FROM may have a column ``name``."""
    body = source.this if isinstance(source, exp.Subquery) else _cte(source)
    if isinstance(body, exp.Select):
        return any(isinstance(i.unalias(), exp.Star) or i.alias_or_name == name for i in body.expressions)
    if body is not None or not isinstance(source, exp.Table):
        return True  # a UNION, a function: assume it may
    if columns_of is None:
        raise NeedsColumns(f"GROUP BY {name} names a SELECT item unless a table has a column of that name")
    return name in columns_of(TableRef(source.name, source.db or None))


def _cte(table: exp.Table) -> exp.Expression | None:
    """The body of the WITH query a table reference names, if any."""
    node: exp.Expression | None = table
    while node is not None:
        with_ = node.args.get("with_") or node.args.get("with")
        found = next((c.this for c in with_.expressions if c.alias == table.name), None) if with_ is not None else None
        if found is not None and not table.db:
            return found
        node = node.parent
    return None
