"""SQL text -> TriangleCount, via sqlglot.

Accepted: one aggregate (``count(*)``, ``count(1)``, ``sum(1)``, or ``count`` of a join column)
over exactly three tables joined by column equalities that form a cycle, written with
``JOIN ... ON``, comma joins with ``WHERE``, or both, in any order, with or without aliases.
Everything else is rejected with a one-line message naming the construct.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from pgivm.errors import UnsupportedQuery
from pgivm.query.model import Aggregate, Atom, RelationName, TableRef, TriangleCount

# Clauses of a SELECT that change its result beyond a plain join count.
_REJECTED_CLAUSES = {
    "with_": "WITH",
    "distinct": "DISTINCT",
    "group": "GROUP BY",
    "having": "HAVING",
    "qualify": "QUALIFY",
    "order": "ORDER BY",
    "limit": "LIMIT",
    "offset": "OFFSET",
    "windows": "WINDOW",
    "laterals": "LATERAL",
    "into": "INTO",
    "locks": "FOR UPDATE/SHARE",
}


def _name(identifier: exp.Identifier | str | None) -> str | None:
    """PostgreSQL's case folding: unquoted identifiers are lower-cased."""
    if identifier is None:
        return None
    if isinstance(identifier, str):
        return identifier
    return identifier.this if identifier.quoted else identifier.this.lower()


def parse_view_sql(sql: str) -> TriangleCount:
    """Parse a view definition, or raise UnsupportedQuery saying what is not supported."""
    try:
        statements = [s for s in sqlglot.parse(sql, read="postgres") if s is not None]
    except ParseError as err:
        first = str(err).splitlines()[0] if str(err) else "syntax error"
        raise UnsupportedQuery(f"could not parse the view SQL: {first}") from None
    if len(statements) != 1:
        raise UnsupportedQuery(f"expected one SELECT statement, got {len(statements)}")
    select = statements[0]
    if not isinstance(select, exp.Select):
        raise UnsupportedQuery(f"expected a SELECT statement, got {select.key.upper()}")
    for arg, clause in _REJECTED_CLAUSES.items():
        if select.args.get(arg):
            raise UnsupportedQuery(f"{clause} is not supported in a maintained view")

    aggregate, output_name = _aggregate(select)
    aliases = _tables(select)
    equalities = _equalities(select, aliases)
    r, s, t = _cycle(aliases, equalities)
    _check_count_column(select, aliases, (r, s, t))
    return TriangleCount(r=r, s=s, t=t, aggregate=aggregate, output_name=output_name, sql=sql.strip())


def _aggregate(select: exp.Select) -> tuple[Aggregate, str]:
    if len(select.expressions) != 1:
        raise UnsupportedQuery("the SELECT list must be a single count(*), count(1) or sum(1)")
    item = select.expressions[0]
    output_name = _name(item.args.get("alias")) if isinstance(item, exp.Alias) else None
    agg = item.this if isinstance(item, exp.Alias) else item
    if isinstance(agg, exp.Count) and not isinstance(agg.this, exp.Distinct):
        arg = agg.this
        if isinstance(arg, exp.Star) or _is_one(arg) or isinstance(arg, exp.Column):
            return "count", output_name or "count"
    if isinstance(agg, exp.Sum) and _is_one(agg.this):
        return "sum", output_name or "sum"
    raise UnsupportedQuery(f"unsupported aggregate {agg.sql(dialect='postgres')}: use count(*), count(1) or sum(1)")


def _is_one(node: exp.Expression | None) -> bool:
    return isinstance(node, exp.Literal) and not node.is_string and node.this == "1"


def _tables(select: exp.Select) -> dict[str, TableRef]:
    """Alias -> table for the FROM list and the joins, in the order written."""
    sources: list[exp.Expression] = []
    from_ = select.args.get("from_") or select.args.get("from")
    if from_ is None:
        raise UnsupportedQuery("the view has no FROM clause")
    sources.append(from_.this)
    sources.extend(getattr(from_, "expressions", None) or [])
    for join in select.args.get("joins") or []:
        kind = " ".join(filter(None, [join.args.get("method"), join.side, join.kind])).upper()
        if join.side or join.args.get("method") or kind not in ("", "INNER", "CROSS"):
            raise UnsupportedQuery(f"{kind} JOIN is not supported: use inner joins")
        if join.args.get("using"):
            raise UnsupportedQuery("JOIN ... USING is not supported: write the join as ON a.x = b.x")
        sources.append(join.this)

    aliases: dict[str, TableRef] = {}
    for source in sources:
        if not isinstance(source, exp.Table) or not isinstance(source.this, exp.Identifier):
            raise UnsupportedQuery(f"only base tables are supported in FROM, not {source.sql(dialect='postgres')}")
        if source.args.get("sample"):
            raise UnsupportedQuery(f"TABLESAMPLE is not supported: {source.sql(dialect='postgres')}")
        if source.args.get("only"):
            raise UnsupportedQuery("FROM ONLY is not supported: pgivm maintains views over plain tables")
        alias_node = source.args.get("alias")
        if alias_node is not None and alias_node.args.get("columns"):
            raise UnsupportedQuery(f"column alias lists are not supported: {source.sql(dialect='postgres')}")
        if source.args.get("catalog"):
            raise UnsupportedQuery(f"cross-database reference {source.sql(dialect='postgres')} is not supported")
        table = TableRef(name=_name(source.this), schema=_name(source.args.get("db")))  # type: ignore[arg-type]
        alias = _name(source.args["alias"].this) if source.args.get("alias") else table.name
        if alias in aliases:
            raise UnsupportedQuery(f"table name or alias {alias!r} is used twice: give each table its own alias")
        aliases[alias] = table  # type: ignore[index]
    if len(aliases) != 3:
        raise UnsupportedQuery(f"a triangle count joins exactly 3 tables, this query joins {len(aliases)}")
    return aliases


def _conjuncts(condition: exp.Expression | None) -> list[exp.Expression]:
    if condition is None:
        return []
    if isinstance(condition, exp.Paren):
        return _conjuncts(condition.this)
    if isinstance(condition, exp.And):
        return _conjuncts(condition.this) + _conjuncts(condition.expression)
    return [condition]


def _column(node: exp.Expression, aliases: dict[str, TableRef]) -> tuple[str, str]:
    if not isinstance(node, exp.Column) or not isinstance(node.this, exp.Identifier):
        raise UnsupportedQuery(f"unsupported condition operand {node.sql(dialect='postgres')}: only columns may be compared")
    table = _name(node.args.get("table"))
    column = _name(node.this)
    if table is None:
        raise UnsupportedQuery(f"qualify column {column} with its table or alias (e.g. r.{column})")
    if table not in aliases:
        raise UnsupportedQuery(f"column {table}.{column} refers to an unknown table or alias {table!r}")
    return table, column  # type: ignore[return-value]


def _equalities(select: exp.Select, aliases: dict[str, TableRef]) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    conditions: list[exp.Expression] = []
    for join in select.args.get("joins") or []:
        conditions += _conjuncts(join.args.get("on"))
    where = select.args.get("where")
    conditions += _conjuncts(where.this if where is not None else None)
    pairs = []
    for cond in conditions:
        if not isinstance(cond, exp.EQ):
            raise UnsupportedQuery(f"unsupported condition {cond.sql(dialect='postgres')}: only column = column equalities")
        left, right = _column(cond.this, aliases), _column(cond.expression, aliases)
        if left[0] == right[0]:
            raise UnsupportedQuery(f"condition {cond.sql(dialect='postgres')} compares two columns of one table")
        pairs.append((left, right))
    return pairs


def _cycle(
    aliases: dict[str, TableRef], equalities: list[tuple[tuple[str, str], tuple[str, str]]]
) -> tuple[Atom, Atom, Atom]:
    """Group equal columns into join variables and orient the tables as R(A,B), S(B,C), T(C,A)."""
    parent: dict[tuple[str, str], tuple[str, str]] = {}

    def find(col: tuple[str, str]) -> tuple[str, str]:
        parent.setdefault(col, col)
        while parent[col] != col:
            col = parent[col]
        return col

    for left, right in equalities:
        parent[find(left)] = find(right)
    classes: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for col in list(parent):
        classes.setdefault(find(col), []).append(col)

    not_triangle = UnsupportedQuery(
        "not a triangle count: the join conditions must link the three tables in a cycle "
        "(r.b = s.b, s.c = t.c, t.a = r.a), each table joining on two of its columns"
    )
    if len(classes) != 3 or any(len(cols) != 2 for cols in classes.values()):
        raise not_triangle
    columns_of: dict[str, dict[tuple[str, str], str]] = {alias: {} for alias in aliases}
    for root, cols in classes.items():
        for alias, column in cols:
            if root in columns_of[alias]:
                raise not_triangle
            columns_of[alias][root] = column
    if any(len(cols) != 2 for cols in columns_of.values()):
        raise not_triangle

    order = list(aliases)
    r_alias, s_alias, t_alias = order
    shared_rs = set(columns_of[r_alias]) & set(columns_of[s_alias])
    if len(shared_rs) != 1:
        raise not_triangle
    (var_b,) = shared_rs
    (var_a,) = set(columns_of[r_alias]) - {var_b}
    (var_c,) = set(columns_of[s_alias]) - {var_b}
    if set(columns_of[t_alias]) != {var_c, var_a}:
        raise not_triangle

    def atom(relation: RelationName, alias: str, first: tuple[str, str], second: tuple[str, str]) -> Atom:
        return Atom(relation, aliases[alias], alias, columns_of[alias][first], columns_of[alias][second])

    return (
        atom("r", r_alias, var_a, var_b),
        atom("s", s_alias, var_b, var_c),
        atom("t", t_alias, var_c, var_a),
    )


def _check_count_column(select: exp.Select, aliases: dict[str, TableRef], atoms: tuple[Atom, Atom, Atom]) -> None:
    """count(x.col) equals count(*) only when col is a join column (those are never NULL in the join)."""
    item = select.expressions[0]
    agg = item.this if isinstance(item, exp.Alias) else item
    if isinstance(agg, exp.Count) and isinstance(agg.this, exp.Column):
        alias, column = _column(agg.this, aliases)
        if not any(a.alias == alias and column in (a.first, a.second) for a in atoms):
            raise UnsupportedQuery(f"count({alias}.{column}) is only supported for a join column: use count(*)")
