"""The SQL dialect pgivm reads view definitions in: PostgreSQL's, as sqlglot reads it, but for
``date_part('day', x)``.

sqlglot reads date_part(...) and EXTRACT(... FROM ...) as one node, and writes it back as EXTRACT;
PostgreSQL gives date_part a double precision and EXTRACT a numeric (14 on). Here the node keeps
how it was written (``meta["date_part"]``), is written back so, and the view computes what the
user's query computes. Every module that parses or writes a definition uses ``DIALECT``.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import TokenType
from sqlglot.dialects.postgres import Postgres

DIALECT = "pgivm"
DATE_PART = "date_part"  # the meta key of an Extract written as date_part(...)


def is_date_part(node: exp.Expression) -> bool:
    return bool(node.meta.get(DATE_PART))


def _date_part(self: Postgres.Parser) -> exp.Expression:
    """date_part(field, value) as an Extract that remembers it (a wrong number of arguments said as
    such, not as sqlglot's node's missing argument)."""
    field = self._parse_type()
    value = self._parse_bitwise() if self._match(TokenType.COMMA) else None
    if field is None or value is None or self._match(TokenType.COMMA, advance=False):
        self.raise_error("date_part takes a field and a value: date_part('year', x)")
    if isinstance(field, (exp.Column, exp.Literal)):
        field = exp.var(field.name.upper())
    node = self.expression(exp.Extract(this=field, expression=value))
    node.meta[DATE_PART] = True
    return node


def _extract_sql(self: Postgres.Generator, node: exp.Extract) -> str:
    if is_date_part(node):
        field = node.this.name.lower() if isinstance(node.this, (exp.Var, exp.Identifier, exp.Literal)) else self.sql(node.this)
        return f"date_part({self.sql(exp.Literal.string(field))}, {self.sql(node.expression)})"
    return f"EXTRACT({self.sql(node.this)} FROM {self.sql(node.expression)})"


class Pgivm(Postgres):
    class Parser(Postgres.Parser):
        FUNCTION_PARSERS = {**Postgres.Parser.FUNCTION_PARSERS, "DATE_PART": _date_part}

    class Generator(Postgres.Generator):
        TRANSFORMS = {**Postgres.Generator.TRANSFORMS, exp.Extract: _extract_sql}
