"""Relations whose rows never change: ``generate_series`` of constants and ``VALUES`` lists in
FROM, and the single row a SELECT without FROM reads (``SELECT 1``).

Each becomes a table of the view's state schema, filled once when the view is created and read
as a base table from then on (no statement ever writes it, so no delta ever comes from it): every
system then maintains the view as it would over tables. The view keeps the SQL as written.
Only constants may feed them (literals, casts of literals to built-in types, intervals and
arithmetic on those), and generate_series is pg_catalog's: creating the table runs no code a role
other than PostgreSQL could change.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from pgivm.errors import UnsupportedQuery
from pgivm.query.dialect import DIALECT
from pgivm.query.model import TableRef

NO_FROM = "pgivm_one"  # the alias of the one-row relation a SELECT without FROM reads

_CONSTANT = (exp.Literal, exp.Null, exp.Boolean, exp.Interval, exp.Var, exp.Neg, exp.Paren, exp.Add, exp.Sub,
             exp.Mul, exp.Div, exp.Cast, exp.DataType, exp.DataTypeParam, exp.Identifier)


@dataclass(frozen=True)
class StaticRelation:
    """A table of constant rows: where it is kept, its columns, and the query that fills it."""

    table: TableRef
    columns: tuple[str, ...]
    select: str


def static_relations(sql: str, schema: str) -> tuple[str, tuple[StaticRelation, ...]]:
    """The view's SQL with each static relation replaced by its table in ``schema`` (``static_1``,
    ...), and those relations; the SQL unchanged and none if it has none."""
    try:
        statement = sqlglot.parse_one(sql, read=DIALECT)
    except ParseError:
        return sql, ()  # the parser says what is wrong
    if not isinstance(statement, exp.Select):
        return sql, ()
    found: list[StaticRelation] = []
    for node in list(statement.find_all(exp.Table, exp.Values)):
        if isinstance(node, exp.Table) and isinstance(node.this, exp.ExplodingGenerateSeries):
            found.append(_replace(node, schema, len(found) + 1, *_series(node)))
        elif isinstance(node, exp.Values) and isinstance(node.parent, (exp.From, exp.Join)):
            found.append(_replace(node, schema, len(found) + 1, *_values(node)))
    # a SELECT without FROM (the view's, a WITH query's, a subquery's in FROM) reads one row
    for select in [statement, *(s.this for s in statement.find_all(exp.CTE, exp.Subquery) if isinstance(s.this, exp.Select))]:
        if select.args.get("from_") is None and select.args.get("from") is None and not select.args.get("joins"):
            table = TableRef(f"static_{len(found) + 1}", schema)
            found.append(StaticRelation(table, (), "SELECT"))
            alias = NO_FROM if select is statement else f"{NO_FROM}_{len(found)}"
            select.set("from_" if "from_" in select.arg_types else "from", exp.From(this=exp.Table(
                this=exp.to_identifier(table.name, quoted=True), db=exp.to_identifier(schema, quoted=True),
                alias=exp.TableAlias(this=exp.to_identifier(alias)))))
    return (statement.sql(dialect=DIALECT), tuple(found)) if found else (sql, ())


def _series(node: exp.Table) -> tuple[exp.Identifier, list[str], str]:
    """generate_series(start, stop[, step]) [AS alias[(column)]]: its alias, its column (PostgreSQL
    names a scalar function's column by the alias, else by the function) and its rows."""
    series = node.this
    arguments = [a for a in (series.args.get("start"), series.args.get("end"), series.args.get("step")) if a is not None]
    _check_constants(arguments, "generate_series")
    alias = node.args.get("alias")
    name = alias.this.copy() if alias is not None and alias.this else exp.to_identifier("generate_series")
    columns = [_folded(c) for c in alias.args.get("columns") or []] if alias is not None else []
    if len(columns) > 1:
        raise UnsupportedQuery(f"generate_series gives one column, {len(columns)} are named: {node.sql(dialect=DIALECT)}")
    column = columns[0] if columns else _folded(name)
    rendered = ", ".join(a.sql(dialect=DIALECT) for a in arguments)
    return name, [column], f'SELECT * FROM pg_catalog.generate_series({rendered}) AS s("{_quoted(column)}")'


def _values(node: exp.Values) -> tuple[exp.Identifier, list[str], str]:
    """(VALUES (...), ...) AS alias[(columns)]: its alias, its columns (column1, ... unless named)
    and its rows."""
    rows = node.expressions
    width = len(rows[0].expressions) if rows and isinstance(rows[0], exp.Tuple) else 1
    if any(not isinstance(r, exp.Tuple) or len(r.expressions) != width for r in rows):
        raise UnsupportedQuery("VALUES lists must all have the same length")
    _check_constants([v for r in rows for v in r.expressions], "VALUES")
    alias = node.args.get("alias")
    if alias is None or not alias.name:
        raise UnsupportedQuery("VALUES in FROM must have an alias, as PostgreSQL asks: (VALUES ...) AS v(x, y)")
    named = [_folded(c) for c in alias.args.get("columns") or []]
    if len(named) > width:
        raise UnsupportedQuery(f"VALUES {alias.name} has {width} columns, {len(named)} are named")
    columns = named + [f"column{i}" for i in range(len(named) + 1, width + 1)]
    listed = ", ".join(f'"{_quoted(c)}"' for c in columns)
    return alias.this.copy(), columns, f"SELECT * FROM ({exp.Values(expressions=rows).sql(dialect=DIALECT)}) AS s({listed})"


def _replace(node: exp.Expression, schema: str, number: int, alias: exp.Identifier, columns: list[str], select: str
             ) -> StaticRelation:
    table = TableRef(f"static_{number}", schema)
    # first in a parenthesized join, the node holds the joins after it: the table holds them now
    node.replace(exp.Table(this=exp.to_identifier(table.name, quoted=True), db=exp.to_identifier(schema, quoted=True),
                           alias=exp.TableAlias(this=alias), joins=node.args.get("joins")))
    return StaticRelation(table, tuple(columns), select)


def _check_constants(values: list[exp.Expression], where: str) -> None:
    for value in values:
        for sub in value.walk():
            if not isinstance(sub, _CONSTANT) or isinstance(sub, exp.DataType) and sub.this == exp.DataType.Type.USERDEFINED:
                raise UnsupportedQuery(f"{where} is kept as constant rows: its values must be constants (literals, "
                                       f"casts of them to built-in types), not {value.sql(dialect=DIALECT)}")


def _folded(identifier: exp.Expression) -> str:
    """A name as PostgreSQL reads it: an unquoted one in lower case."""
    return identifier.name if isinstance(identifier, exp.Identifier) and identifier.quoted else identifier.name.lower()


def _quoted(name: str) -> str:
    return name.replace('"', '""')
