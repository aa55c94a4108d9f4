"""Scalar expressions over one table's columns and constants: the conditions WHERE and ON put on a
single table beyond ``column OP constant`` (IS NULL, IN lists, BETWEEN, LIKE, OR, NOT, CASE,
arithmetic, typed constants such as ``DATE '1997-09-01'`` and ``INTERVAL '3' MONTH``, and a listed
set of PostgreSQL's immutable functions).

A tree of three kinds of node (a column, a constant, an operation), stored in the catalog as JSON
and turned into SQL only through psycopg's composition: columns by the caller's renderer (each
system reads an atom's columns under its own names), constants as quoted literals or checked
numbers, and every operator, function, type and field name from the fixed tables below, never
text of the query. Generated functions run with ``search_path = pg_catalog, pg_temp``, and the
functions are written ``pg_catalog.name``: nothing another role can define is ever called.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal
from dataclasses import dataclass
from typing import Any, Union

import sqlglot
from psycopg import sql
from sqlglot import exp

from pgivm.errors import UnsupportedQuery
from pgivm.query.dialect import DIALECT, is_date_part

_NUMBER = re.compile(r"-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


@dataclass(frozen=True)
class Col:
    alias: str
    column: str


@dataclass(frozen=True)
class Lit:
    """A constant: a number's text, a string, or NULL (``text`` None)."""

    text: str | None
    is_string: bool = False


@dataclass(frozen=True)
class Op:
    """An operation from OPERATIONS; ``name`` carries a cast's type or EXTRACT's field."""

    op: str
    args: tuple[Node, ...]
    name: str = ""


Node = Union[Col, Lit, Op]

# operation -> SQL with {0}, {1}, ... for the arguments ("*" joins all of them with the separator)
OPERATIONS: dict[str, str] = {
    "=": "({0} = {1})", "<>": "({0} <> {1})", "<": "({0} < {1})", "<=": "({0} <= {1})", ">": "({0} > {1})",
    ">=": "({0} >= {1})", "+": "({0} + {1})", "-": "({0} - {1})", "*": "({0} * {1})", "/": "({0} / {1})",
    "%": "({0} % {1})", "||": "({0} || {1})", "neg": "(- {0})",
    "and": "* AND ", "or": "* OR ", "not": "(NOT {0})",
    "is null": "({0} IS NULL)", "is not null": "({0} IS NOT NULL)",
    "is true": "({0} IS TRUE)", "is false": "({0} IS FALSE)",
    "between": "({0} BETWEEN {1} AND {2})", "not between": "({0} NOT BETWEEN {1} AND {2})",
    "between symmetric": "({0} BETWEEN SYMMETRIC {1} AND {2})",
    "not between symmetric": "({0} NOT BETWEEN SYMMETRIC {1} AND {2})",
    "is distinct from": "({0} IS DISTINCT FROM {1})", "is not distinct from": "({0} IS NOT DISTINCT FROM {1})",
    "like": "({0} LIKE {1})", "not like": "({0} NOT LIKE {1})", "at time zone": "({0} AT TIME ZONE {1})",
    # regular expressions; jsonb's fields and containment (each resolved for its operands' types, and
    # refused by create unless immutable)
    "~": "({0} ~ {1})", "~*": "({0} ~* {1})", "!~": "({0} !~ {1})", "!~*": "({0} !~* {1})",
    "->": "({0} -> {1})", "->>": "({0} ->> {1})", "#>": "({0} #> {1})", "#>>": "({0} #>> {1})",
    "@>": "({0} @> {1})", "<@": "({0} <@ {1})", "?": "({0} ? {1})",
    "ilike": "({0} ILIKE {1})", "not ilike": "({0} NOT ILIKE {1})",
    # a comparison with each element of an array: x = ANY (ARRAY[1, 2]) is x IN (1, 2), x <> ALL (a) is
    # NOT IN; the array a constructor, a constant cast to an array type or an array column
    **{f"{op} {q}": f"({{0}} {op.upper()} {q.upper()} ({{1}}))"
       for op in ("=", "<>", "<", "<=", ">", ">=", "like", "ilike", "not like", "not ilike") for q in ("any", "all")},
}
# PostgreSQL's immutable functions a condition may call (strict or not, they read no table)
FUNCTIONS = frozenset({"abs", "ceil", "floor", "round", "trunc", "sign", "mod", "power", "sqrt", "lower", "upper",
                       "length", "char_length", "substr", "btrim", "ltrim", "rtrim", "left", "right", "replace",
                       "strpos", "starts_with", "coalesce", "nullif", "greatest", "least", "date_part",
                       "date_trunc", "timezone", "split_part", "initcap", "reverse", "repeat", "md5", "lpad", "rpad",
                       "translate", "regexp_replace", "octet_length", "array_length", "cardinality", "make_date",
                       "age", "justify_days", "justify_hours", "justify_interval"})  # of a timestamptz, date_part and date_trunc are stable: create
# refuses them (pgivm.install._NOT_IMMUTABLE), and timezone(zone, x), x AT TIME ZONE zone, is the way out
_TRUNC_FIELDS = frozenset({"microseconds", "milliseconds", "second", "minute", "hour", "day", "week", "month",
                           "quarter", "year", "decade", "century", "millennium"})
# coalesce, nullif, greatest and least are SQL constructs, not functions: never qualified
_CONSTRUCTS = frozenset({"coalesce", "nullif", "greatest", "least"})
_TYPE = re.compile(r"(smallint|integer|int|bigint|int2|int4|int8|real|double precision|float4|float8|numeric|decimal|"
                   r"text|varchar|character varying|char|character|bpchar|boolean|bool|date|time|timestamp|timestamptz|"
                   r"timestamp with time zone|timestamp without time zone|interval)(\(\d+(, ?\d+)?\))?(\[\])?")
_FIELDS = frozenset({"year", "month", "day", "hour", "minute", "second", "dow", "doy", "isodow", "week", "quarter",
                     "epoch", "decade", "century"})


def columns(node: Node) -> list[Col]:
    if isinstance(node, Col):
        return [node]
    if isinstance(node, Op):
        return [c for a in node.args for c in columns(a)]
    return []


# Operations that return a value for every input, never an error: comparisons, logic, NULL tests,
# CASE and the choosing constructs, string functions that only read their argument, and roundings.
_TOTAL = frozenset({"=", "<>", "<", "<=", ">", ">=", "is distinct from", "is not distinct from", "and", "or", "not",
                    "is null", "is not null", "is true",
                    "is false", "between", "not between", "between symmetric", "not between symmetric", "in",
                    "not in", "case", "extract", "fn:coalesce",
                    "fn:nullif", "fn:greatest", "fn:least", "fn:lower", "fn:upper", "fn:length", "fn:char_length",
                    "fn:btrim", "fn:ltrim", "fn:rtrim", "fn:starts_with", "fn:strpos", "fn:date_part", "fn:sign",
                    "fn:ceil", "fn:floor", "fn:round", "fn:trunc", "fn:initcap", "fn:reverse", "fn:md5",
                    "fn:translate", "fn:octet_length", "fn:array_length", "fn:cardinality",
                    *(f"{op} {q}" for op in ("=", "<>", "<", "<=", ">", ">=") for q in ("any", "all"))})


def _in_numeric(node: Node, kind_of: Callable[[Col], str]) -> bool:
    """Whether PostgreSQL computes ``node`` in numeric: a numeric column, a constant with a point
    or an exponent, or + - * with such an operand (integer + numeric is numeric)."""
    if isinstance(node, Col):
        return kind_of(node) == "numeric"
    if isinstance(node, Lit):
        return not node.is_string and node.text is not None and _NUMBER.fullmatch(node.text) is not None \
            and any(c in node.text for c in ".eE")
    return node.op in ("+", "-", "*", "neg") and any(_in_numeric(a, kind_of) for a in node.args)


def _safe_division(node: Op, kinds: frozenset[str], kind_of: Callable[[Col], str] | None) -> bool:
    """``x / c`` by a non-zero number constant: in numeric it cannot fail (as its sums cannot), in
    integers only c = -1 can (the smallest integer's negation overflows). Floats may under- or
    overflow whatever c is."""
    divisor = node.args[-1]
    if not (isinstance(divisor, Lit) and not divisor.is_string and divisor.text is not None
            and _NUMBER.fullmatch(divisor.text) and Decimal(divisor.text) != 0):
        return False
    if kinds <= {"numeric"}:
        return True
    if kind_of is None or not kinds <= {"numeric", "integer"}:
        return False
    return _in_numeric(node.args[0], kind_of) or _in_numeric(divisor, kind_of) or Decimal(divisor.text) != -1


def may_raise(node: Node, kinds: frozenset[str], kind_of: Callable[[Col], str] | None = None) -> Op | None:
    """An operation of ``node`` that may raise an error on some row (division by zero, integer or
    float overflow, a failing cast), or None: a conservative rule, for systems that evaluate an
    expression on rows PostgreSQL's query never evaluates it on (F-IVM, on every row of a table,
    joining or not). ``kinds``: what the columns it reads are ("integer", "float", "numeric",
    "other"); ``kind_of``, if given, each column's. Sums and products never overflow in numeric
    (an integer column beside a numeric operand is computed in numeric: ``1.5 - r.b``), negation
    and abs only in integers, ``x % c`` by a non-zero integer constant is safe for any integer x,
    and every value has a text."""
    if not isinstance(node, Op):
        return None
    divisor = node.args[-1] if node.args else None
    safe = (node.op in _TOTAL
            or (node.op in ("+", "-", "*") and (kinds <= {"numeric"} or (
                kind_of is not None and kinds <= {"numeric", "integer"} and _in_numeric(node, kind_of))))
            or (node.op in ("neg", "fn:abs") and kinds <= {"numeric", "float"})
            or (node.op in ("like", "not like", "ilike", "not ilike") and isinstance(divisor, Lit)
                and divisor.is_string and not (divisor.text or "").endswith("\\"))  # a well-formed pattern
            or (node.op == "array" and (all(isinstance(a, Lit) for a in node.args)  # ARRAY[1, 2], ARRAY[a, b] of numbers
                                        or kinds <= {"integer", "float", "numeric"}))  # never raise (no nested arrays)
            or (node.op == "cast" and re.fullmatch(r"(text|varchar|character varying)(\(\d+\))?", node.name) is not None)
            or (node.op == "%" and isinstance(divisor, Lit) and divisor.text is not None
                and re.fullmatch(r"-?\d+", divisor.text) is not None and int(divisor.text) != 0)
            or (node.op == "/" and _safe_division(node, kinds, kind_of)))
    if not safe:
        return node
    return next((bad for bad in (may_raise(a, kinds, kind_of) for a in node.args) if bad is not None), None)


def render(node: Node, column: Callable[[Col], sql.Composable], qualify: bool = True) -> sql.Composable:
    """The node as SQL, its columns as ``column`` names them (functions as ``pg_catalog.name``
    unless not ``qualify``, for text another dialect reads)."""
    if isinstance(node, Col):
        return column(node)
    if isinstance(node, Lit):
        if node.text is None:
            return sql.SQL("NULL")
        if node.is_string:
            return sql.Literal(node.text)
        if not _NUMBER.fullmatch(node.text):
            raise UnsupportedQuery(f"unsupported constant {node.text!r}")
        return sql.SQL(node.text)  # type: ignore[arg-type]  # checked just above: a number
    args = [render(a, column, qualify) for a in node.args]
    if node.op == "cast":
        return sql.SQL("CAST({} AS {})").format(args[0], sql.SQL(_checked_type(node.name)))  # type: ignore[arg-type]
    if node.op == "extract":
        if node.name not in _FIELDS:
            raise UnsupportedQuery(f"unsupported EXTRACT field {node.name}")
        return sql.SQL("EXTRACT({} FROM {})").format(sql.SQL(node.name), args[0])  # type: ignore[arg-type]
    if node.op == "array":
        return sql.SQL("ARRAY[{}]").format(sql.SQL(", ").join(args))
    if node.op == "in" or node.op == "not in":
        return sql.SQL("({} {} ({}))").format(args[0], sql.SQL(node.op.upper()), sql.SQL(", ").join(args[1:]))  # type: ignore[arg-type]
    if node.op == "case":  # WHEN c1 THEN v1 ... [ELSE e]: args c1, v1, c2, v2, ..., and e if odd
        whens = [sql.SQL(" WHEN {} THEN {}").format(args[i], args[i + 1]) for i in range(0, len(args) - 1, 2)]
        rest = sql.SQL(" ELSE {}").format(args[-1]) if len(args) % 2 else sql.SQL("")
        return sql.SQL("(CASE{}{} END)").format(sql.SQL("").join(whens), rest)
    if node.op.startswith("fn:"):
        name = node.op[3:]
        if name not in FUNCTIONS:
            raise UnsupportedQuery(f"unsupported function {name}")
        called = sql.SQL(name) if name in _CONSTRUCTS or not qualify else sql.SQL("pg_catalog.{}").format(sql.SQL(name))  # type: ignore[arg-type]  # a name from FUNCTIONS
        return sql.SQL("{}({})").format(called, sql.SQL(", ").join(args))
    template = OPERATIONS[node.op]
    if template.startswith("*"):
        return sql.SQL("({})").format(sql.SQL(template[1:]).join(args))  # type: ignore[arg-type]
    return sql.SQL(template).format(*args)  # type: ignore[arg-type]


def _checked_type(name: str) -> str:
    if not _TYPE.fullmatch(name):
        raise UnsupportedQuery(f"unsupported type {name} in a cast: use one of PostgreSQL's own numeric, text, "
                               "boolean, date and time types")
    return name


def text(node: Node, column: Callable[[Col], str]) -> str:
    """The node as PostgreSQL SQL text, each column the identifier ``column`` names (for Spark,
    via sqlglot)."""
    return render(node, lambda c: sql.Identifier(column(c)), qualify=False).as_string(None)


def to_json(node: Node) -> Any:
    if isinstance(node, Col):
        return {"col": [node.alias, node.column]}
    if isinstance(node, Lit):
        return {"lit": node.text, "str": node.is_string}
    return {"op": node.op, "args": [to_json(a) for a in node.args], "name": node.name}


def from_json(data: Any) -> Node:
    if "col" in data:
        return Col(*data["col"])
    if "lit" in data:
        return Lit(data["lit"], data["str"])
    return Op(data["op"], tuple(from_json(a) for a in data["args"]), data.get("name", ""))


# --- from sqlglot ------------------------------------------------------------------------------------

_BINARY: dict[type[exp.Expression], str] = {
    exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">=", exp.Add: "+", exp.Sub: "-",
    exp.Mul: "*", exp.Div: "/", exp.Mod: "%", exp.DPipe: "||",
    exp.NullSafeNEQ: "is distinct from", exp.NullSafeEQ: "is not distinct from",
}
_NAMED: dict[type[exp.Expression], str] = {
    exp.Abs: "abs", exp.Ceil: "ceil", exp.Floor: "floor", exp.Round: "round", exp.Lower: "lower", exp.Upper: "upper",
    exp.Length: "length", exp.Coalesce: "coalesce", exp.Nullif: "nullif", exp.Greatest: "greatest", exp.Least: "least",
    exp.Sqrt: "sqrt", exp.Pow: "power", exp.Sign: "sign", exp.Trunc: "trunc", exp.Left: "left", exp.Right: "right",
    exp.Replace: "replace", exp.StrPosition: "strpos", exp.StartsWith: "starts_with",
}
# functions sqlglot reads as nodes of their own, with their arguments in PostgreSQL's order (sqlglot's
# other arguments are other dialects' options: Initcap's default delimiters, SplitPart's flags)
_PICKED: dict[type[exp.Expression], tuple[str, tuple[str, ...]]] = {
    exp.SplitPart: ("split_part", ("this", "delimiter", "part_index")), exp.Initcap: ("initcap", ("this",)),
    exp.Reverse: ("reverse", ("this",)), exp.Repeat: ("repeat", ("this", "times")), exp.MD5: ("md5", ("this",)),
    exp.Translate: ("translate", ("this", "from_", "to")), exp.ArraySize: ("array_length", ("this", "expression")),
    exp.RegexpReplace: ("regexp_replace", ("this", "expression", "replacement", "modifiers")),
    exp.JustifyDays: ("justify_days", ("this",)), exp.JustifyHours: ("justify_hours", ("this",)),
    exp.JustifyInterval: ("justify_interval", ("this",)),
}


def from_sqlglot(node: exp.Expression, column: Callable[[exp.Column], Col]) -> Node:
    """The condition or value ``node`` as a tree, or a one-line refusal naming what is not supported."""
    if isinstance(node, exp.Paren):
        return from_sqlglot(node.this, column)
    if isinstance(node, exp.Column) and isinstance(node.this, exp.Identifier):
        return column(node)
    if isinstance(node, exp.Null):
        return Lit(None)
    if isinstance(node, exp.Boolean):
        return Op("cast", (Lit("true" if node.this else "false", True),), "boolean")
    if isinstance(node, exp.Literal):
        return Lit(node.this, node.is_string)
    if isinstance(node, exp.Neg):
        inner = from_sqlglot(node.this, column)
        return Lit("-" + inner.text, False) if isinstance(inner, Lit) and not inner.is_string and inner.text else Op("neg", (inner,))
    if isinstance(node, exp.Not):
        inner_node = node.this.this if isinstance(node.this, exp.Paren) else node.this
        if isinstance(inner_node, exp.Is):
            return _is(inner_node, column, negated=not inner_node.args.get("negate"))
        if isinstance(inner_node, (exp.Like, exp.ILike)) and not _quantified(inner_node.expression):
            return _like(inner_node, column, negated=not inner_node.args.get("negate"))
        if isinstance(inner_node, exp.In):
            return _in(inner_node, column, "not in")
        if isinstance(inner_node, exp.Between):
            return _between(inner_node, column, negated=True)
        if isinstance(inner_node, (exp.RegexpLike, exp.RegexpILike)):  # !~ and !~*
            return Op("!~" if isinstance(inner_node, exp.RegexpLike) else "!~*",
                      (from_sqlglot(inner_node.this, column), from_sqlglot(inner_node.expression, column)))
        return Op("not", (from_sqlglot(node.this, column),))
    if isinstance(node, (exp.And, exp.Or)):
        name = "and" if isinstance(node, exp.And) else "or"
        return Op(name, (from_sqlglot(node.this, column), from_sqlglot(node.expression, column)))
    if isinstance(node, (exp.Like, exp.ILike)) and _quantified(node.expression):
        return _quantified_comparison(node, column)
    if isinstance(node, (exp.Like, exp.ILike)):  # sqlglot writes NOT LIKE and !~~ as LIKE with negate set
        return _like(node, column, negated=bool(node.args.get("negate")))
    if isinstance(node, (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.Like, exp.ILike)) and _quantified(node.expression):
        return _quantified_comparison(node, column)
    if type(node) in _BINARY:
        return Op(_BINARY[type(node)], (from_sqlglot(node.this, column), from_sqlglot(node.expression, column)))
    if isinstance(node, exp.Is):  # sqlglot writes IS NOT as IS with negate set
        return _is(node, column, negated=bool(node.args.get("negate")))
    if isinstance(node, exp.In):
        return _in(node, column, "in")
    if isinstance(node, exp.Between):
        return _between(node, column, negated=False)
    if isinstance(node, exp.Array):
        return Op("array", tuple(from_sqlglot(e, column) for e in node.expressions))
    if isinstance(node, exp.Cast):
        type_name = node.to.sql(dialect=DIALECT).lower()
        return Op("cast", (from_sqlglot(node.this, column),), _checked_type(type_name))
    if isinstance(node, exp.Interval):  # INTERVAL '90' DAY: the constant CAST('90 DAY' AS interval)
        unit = node.args.get("unit")
        if not isinstance(node.this, exp.Literal) or (unit is not None and not isinstance(unit, exp.Var)):
            raise UnsupportedQuery(f"unsupported interval {node.sql(dialect=DIALECT)}: write INTERVAL '3 days'")
        return Op("cast", (Lit(f"{node.this.name} {unit.name}" if unit is not None else node.this.name, True),), "interval")
    if isinstance(node, exp.Extract):
        quoted_field = isinstance(node.this, exp.Literal) and node.this.is_string  # EXTRACT('year' FROM x) is PostgreSQL's too
        field = node.this.name.lower() if isinstance(node.this, (exp.Var, exp.Identifier)) or quoted_field \
            else str(node.this).lower()
        if field not in _FIELDS:
            written = "date_part" if is_date_part(node) else "EXTRACT"
            raise UnsupportedQuery(f"unsupported {written} field {field!r}",
                                   f"one of {', '.join(sorted(_FIELDS))}")
        if is_date_part(node):  # date_part('day', x): double precision, where EXTRACT is numeric
            return Op("fn:date_part", (Lit(field, True), from_sqlglot(node.expression, column)))
        return Op("extract", (from_sqlglot(node.expression, column),), field)
    if isinstance(node, (exp.TimestampTrunc, exp.DateTrunc)):  # date_trunc('month', x)
        unit = node.args.get("unit")
        field = unit.name.lower() if isinstance(unit, (exp.Var, exp.Literal)) else ""
        if field not in _TRUNC_FIELDS:
            raise UnsupportedQuery(f"unsupported date_trunc field {field or node.sql(dialect=DIALECT)}")
        return Op("fn:date_trunc", (Lit(field, True), from_sqlglot(node.this, column)))
    if type(node) in _OPERATORS:
        return Op(_OPERATORS[type(node)], (from_sqlglot(node.this, column), _json_key(node.expression, column)))
    if isinstance(node, exp.AtTimeZone):
        return Op("at time zone", (from_sqlglot(node.this, column), from_sqlglot(node.args["zone"], column)))
    if isinstance(node, exp.Case):
        # the simple form, CASE x WHEN v THEN ..., is the searched one with x = v (x has no side effect)
        subject = from_sqlglot(node.this, column) if node.this is not None else None
        args: list[Node] = []
        for when in node.args.get("ifs") or []:
            test = from_sqlglot(when.this, column)
            args += [Op("=", (subject, test)) if subject is not None else test, from_sqlglot(when.args["true"], column)]
        if node.args.get("default") is not None:
            args.append(from_sqlglot(node.args["default"], column))
        return Op("case", tuple(args))
    if isinstance(node, exp.Substring):  # substr(x, from[, for]) and SUBSTRING(x FROM ... FOR ...)
        parts = [node.this, node.args.get("start"), node.args.get("length")]
        return Op("fn:substr", tuple(from_sqlglot(a, column) for a in parts if a is not None))
    if isinstance(node, exp.StrPosition) and (node.args.get("position") or node.args.get("occurrence")):
        raise UnsupportedQuery(f"unsupported expression {node.sql(dialect=DIALECT)}: strpos(string, substring) is")
    if isinstance(node, exp.Trim) and not node.args.get("collation"):  # btrim, ltrim, rtrim; TRIM([BOTH|LEADING|TRAILING] ...)
        name = {"LEADING": "ltrim", "TRAILING": "rtrim"}.get(str(node.args.get("position") or "").upper(), "btrim")
        return Op("fn:" + name, tuple(from_sqlglot(a, column) for a in _arguments(node)))
    if type(node) in _NAMED:
        return Op("fn:" + _NAMED[type(node)], tuple(from_sqlglot(a, column) for a in _arguments(node)))
    if isinstance(node, exp.Pad) or (type(node) in _PICKED and not node.args.get("position") and not node.args.get("occurrence")):
        name, keys = ("lpad" if node.args.get("is_left") else "rpad", ("this", "expression", "fill_pattern")) \
            if isinstance(node, exp.Pad) else _PICKED[type(node)]
        return Op("fn:" + name, tuple(from_sqlglot(node.args[k], column) for k in keys if node.args.get(k) is not None))
    if isinstance(node, exp.Anonymous) and str(node.this).lower() in FUNCTIONS:
        return Op("fn:" + str(node.this).lower(), tuple(from_sqlglot(a, column) for a in node.expressions))
    if moving := changing(node):
        raise UnsupportedQuery(f"{moving} changes with time or chance: a maintained view computes only "
                               "immutable functions of its rows")
    if isinstance(node, exp.Func) or (isinstance(node, exp.Dot) and isinstance(node.expression, exp.Func)):
        raise UnsupportedQuery(f"function {node.sql(dialect=DIALECT)} is not supported in a maintained view: "
                               "only immutable functions of PostgreSQL's own (abs, coalesce, lower, length, round, "
                               "substr, ...: pgivm.query.scalar.FUNCTIONS)")
    raise UnsupportedQuery(f"unsupported expression {node.sql(dialect=DIALECT)}")


# values of time or chance, as a user writes them (sqlglot reads now() as CURRENT_TIMESTAMP)
_CHANGING: dict[type[exp.Expression], str] = {
    exp.CurrentTimestamp: "now() (current_timestamp)", exp.CurrentDate: "current_date", exp.CurrentTime: "current_time",
    exp.Localtimestamp: "localtimestamp", exp.Rand: "random()", exp.Uuid: "gen_random_uuid()",
}
_CHANGING_NAMED = frozenset({"clock_timestamp", "statement_timestamp", "transaction_timestamp", "timeofday",
                             "localtime", "random_normal", "setseed", "nextval", "currval", "lastval", "txid_current"})


def changing(node: exp.Expression) -> str | None:
    """The name of a function of time or chance (or of a sequence) as written, None for any other node."""
    if type(node) in _CHANGING:
        return _CHANGING[type(node)]
    if isinstance(node, exp.Anonymous) and str(node.this).lower() in _CHANGING_NAMED:
        return f"{str(node.this).lower()}()"
    return None


# operators sqlglot reads as nodes of their own
_OPERATORS: dict[type[exp.Expression], str] = {
    exp.RegexpLike: "~", exp.RegexpILike: "~*", exp.JSONExtract: "->", exp.JSONExtractScalar: "->>",
    exp.JSONBExtract: "#>", exp.JSONBExtractScalar: "#>>", exp.ArrayContainsAll: "@>", exp.ArrayContainedBy: "<@",
    exp.JSONBContainsTopKey: "?",
}


OPERATOR_NODES = tuple(_OPERATORS)


def _json_key(node: exp.Expression, column: Callable[[exp.Column], Col]) -> Node:
    """The right operand of ``->``/``->>`` (sqlglot reads ``'k'`` and ``0`` as a JSON path), or any other."""
    if isinstance(node, exp.JSONPath):
        parts = node.expressions[1:] if node.expressions and isinstance(node.expressions[0], exp.JSONPathRoot) else []
        if len(parts) != 1 or not isinstance(parts[0], (exp.JSONPathKey, exp.JSONPathSubscript)) \
                or not isinstance(parts[0].this, (str, int)):
            raise UnsupportedQuery(f"unsupported JSON path {node.sql(dialect=DIALECT)}: write x -> 'key' or x -> 0")
        key = parts[0].this
        return Lit(str(key), isinstance(key, str))
    return from_sqlglot(node, column)


def _arguments(node: exp.Expression) -> list[exp.Expression]:
    """A named function's arguments in order (sqlglot keeps the first as ``this``)."""
    out = [node.this] if isinstance(node.this, exp.Expression) else []
    for key in ("expression", "decimals", "substr", "replacement"):
        if isinstance(node.args.get(key), exp.Expression):
            out.append(node.args[key])
    return out + list(node.expressions)


def _is(node: exp.Is, column: Callable[[exp.Column], Col], negated: bool) -> Node:
    target = node.expression
    subject = from_sqlglot(node.this, column)
    if isinstance(target, exp.Null):
        return Op("is not null" if negated else "is null", (subject,))
    if isinstance(target, exp.Boolean):
        kind = "is true" if target.this else "is false"
        return Op("not", (Op(kind, (subject,)),)) if negated else Op(kind, (subject,))
    raise UnsupportedQuery(f"unsupported IS {target.sql(dialect=DIALECT)}")


def _in(node: exp.In, column: Callable[[exp.Column], Col], op: str) -> Node:
    if node.args.get("query") is not None or not node.expressions:
        raise UnsupportedQuery(f"IN with a subquery is not supported: {node.sql(dialect=DIALECT)}")
    return Op(op, (from_sqlglot(node.this, column), *(from_sqlglot(e, column) for e in node.expressions)))


def _quantified(node: exp.Expression) -> str | None:
    """``any`` or ``all`` when ``node`` is ANY (...), SOME (...) or ALL (...) (sqlglot reads ANY as its
    own node and the other two as functions)."""
    if isinstance(node, (exp.Any, exp.All)):
        return "any" if isinstance(node, exp.Any) else "all"
    if isinstance(node, exp.Anonymous) and str(node.this).upper() in ("ALL", "SOME", "ANY") and len(node.expressions) == 1:
        return "all" if str(node.this).upper() == "ALL" else "any"
    return None


def _quantified_comparison(node: exp.Expression, column: Callable[[exp.Column], Col]) -> Node:
    quantifier = _quantified(node.expression)
    operand = node.expression.this if isinstance(node.expression, (exp.Any, exp.All)) else node.expression.expressions[0]
    operand = operand.this if isinstance(operand, exp.Paren) else operand
    if isinstance(operand, (exp.Select, exp.Subquery, exp.Union)):
        raise UnsupportedQuery(f"{node.sql(dialect=DIALECT)}: ANY and ALL over a subquery are not supported: "
                               "write IN (subquery) or NOT IN (subquery)")
    op = ("like" if isinstance(node, exp.Like) else "ilike" if isinstance(node, exp.ILike) else _BINARY[type(node)])
    op = "not " + op if node.args.get("negate") else op  # sqlglot writes NOT LIKE as LIKE with negate set
    return Op(f"{op} {quantifier}", (from_sqlglot(node.this, column), from_sqlglot(operand, column)))


def _like(node: exp.Like | exp.ILike, column: Callable[[exp.Column], Col], negated: bool) -> Node:
    op = ("not " if negated else "") + ("like" if isinstance(node, exp.Like) else "ilike")
    return Op(op, (from_sqlglot(node.this, column), from_sqlglot(node.expression, column)))


def _between(node: exp.Between, column: Callable[[exp.Column], Col], negated: bool) -> Node:
    # SYMMETRIC swaps the bounds when low > high: its own operation, not plain BETWEEN
    op = ("not " if negated else "") + ("between symmetric" if node.args.get("symmetric") else "between")
    return Op(op, (from_sqlglot(node.this, column), from_sqlglot(node.args["low"], column),
                   from_sqlglot(node.args["high"], column)))


def spark_text(node: Node, column: Callable[[Col], str]) -> str:
    """The node as Spark SQL (for ``validate --spark``): PostgreSQL's text, transpiled by sqlglot;
    ``column`` gives each column's name in the DataFrame."""
    return sqlglot.transpile(text(node, column), read=DIALECT, write="spark")[0]
