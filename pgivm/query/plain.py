"""A conjunctive query as plain SQL over its base tables pinned by oid, built from the model.

What ``pgivm verify`` recounts a view with, independently of any system's state or code: one
SELECT joining the tables as they are named now (each with its ``tableoid`` guard, so a view put
under a table's name fails to parse), the filters, GROUP BY and the aggregates as PostgreSQL
computes them. ``cofactor(x1..xm)`` becomes its (i, j, value) rows over the joined rows whose
features are all non-NULL, with i or j = 0 standing for the constant 1 (so (0, 0) is the count).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from psycopg import sql

from pgivm.query import scalar
from pgivm.query.cq import Aggregate, BinOp, ColumnRef, Computed, ConjunctiveQuery, Const, Expr, GroupColumn, JoinStep, Var
from pgivm.query.resolve import ResolvedView, collate


def _column(ref: ColumnRef) -> sql.Composable:
    return sql.SQL("{}.{}").format(sql.Identifier(ref.alias), sql.Identifier(ref.column))


def expression_sql(expr: Expr, column: Callable[[Var], sql.Composable] | None = None) -> sql.Composable:
    """An aggregate's argument (+, -, * over columns and numeric constants) as SQL, each column as
    ``column`` reads it (by default qualified by its alias, as in the view's FROM)."""
    if isinstance(expr, Const):
        return sql.SQL("({})").format(sql.SQL(expr.text))  # type: ignore[arg-type]  # a parsed numeric literal
    if isinstance(expr, Var):
        return column(expr) if column is not None else _column(expr.column)
    if isinstance(expr, Computed):
        return expr.render(column if column is not None else (lambda v: _column(v.column)))
    assert isinstance(expr, BinOp)
    return sql.SQL("({} {} {})").format(expression_sql(expr.left, column), sql.SQL(expr.op),  # type: ignore[arg-type]
                                        expression_sql(expr.right, column))



def _aggregate(aggregate: Aggregate) -> sql.Composable:
    if aggregate.function == "count":
        return sql.SQL("count(*)") if aggregate.argument is None else sql.SQL("count({})").format(expression_sql(aggregate.argument))
    if aggregate.function == "count_distinct":
        return sql.SQL("count(DISTINCT {})").format(expression_sql(aggregate.argument))
    return sql.SQL("{}({})").format(sql.SQL(aggregate.function), expression_sql(aggregate.argument))  # type: ignore[arg-type]


def from_where(view: ResolvedView, extra: list[sql.Composable] | None = None,
               sources: dict[str, sql.Composable] | None = None,
               source_column: Callable[[ColumnRef], str] | None = None) -> sql.Composable:
    """FROM the pinned tables WHERE the joins, filters and guards hold. ``sources`` replaces some
    atoms' tables (by alias) with other relations of the atoms' columns (which carry no guard),
    named by ``source_column`` (by default as in the base table). With an outer join, the joins
    as written, read left to right, each ON with its join."""
    cq: ConjunctiveQuery = view.query
    sources = sources or {}

    def col(ref: ColumnRef) -> sql.Composable:
        if source_column is None or ref.alias not in sources:
            return _column(ref)
        return sql.SQL("{}.{}").format(sql.Identifier(ref.alias), sql.Identifier(source_column(ref)))

    if cq.has_outer_join:
        tests = [sql.SQL("{}EXISTS (SELECT FROM {} WHERE {})").format(
            sql.SQL("NOT " if step.kind == "anti" else ""), _joined_table(view, step.alias, sources), on_condition(step, col))
            for step in cq.joins if step.tests]
        return sql.SQL("FROM {} WHERE {}").format(join_tree(view, sources, col), sql.SQL(" AND ").join(
            [*tests, *where_conditions(cq, col), *(extra or [])] or [sql.SQL("true")]))
    tables = sql.SQL(", ").join(sql.SQL("{} AS {}").format(sources.get(a.alias, view.base_of(a.table).ident),
                                                           sql.Identifier(a.alias)) for a in cq.atoms)
    conditions = where_conditions(cq, col)
    conditions += [view.base_of(a.table).guard(a.alias) for a in cq.atoms if a.alias not in sources]
    conditions += extra or []
    return sql.SQL("FROM {} WHERE {}").format(tables, sql.SQL(" AND ").join(conditions or [sql.SQL("true")]))


def where_conditions(cq: ConjunctiveQuery, col: Callable[[ColumnRef], sql.Composable]) -> list[sql.Composable]:
    """What WHERE (and the ON of inner joins, where no join is outer) asks of a joined row, each
    column as ``col`` names it."""
    conditions: list[sql.Composable] = []
    for variable in cq.variables:
        first = variable.columns[0]
        conditions += [sql.SQL("{} = {}").format(col(first), col(c)) for c in variable.columns[1:]]
    for f in cq.filters:
        conditions.append(sql.SQL("{} {} {}").format(col(f.column), sql.SQL(f.op), f.literal()))
    conditions += [c.render(col) for c in cq.conditions]
    for p in cq.predicates:
        conditions.append(sql.SQL("{} {} {}").format(col(p.left), sql.SQL(p.op), col(p.right)))  # type: ignore[arg-type]
    return conditions


def on_condition(step: JoinStep, col: Callable[[ColumnRef], sql.Composable]) -> sql.Composable:
    return sql.SQL(" AND ").join([c.render(col) for c in step.on] or [sql.SQL("true")])


def join_tree(view: ResolvedView, sources: dict[str, sql.Composable],
              col: Callable[[ColumnRef], sql.Composable]) -> sql.Composable:
    """The FROM clause of a query with an outer join: each table (its guard inside, so that an
    outer join NULL-extends rather than drops the rows it tests) joined in the order written."""
    cq: ConjunctiveQuery = view.query

    def joined(lo: int, hi: int) -> sql.Composable:  # atoms lo..hi-1, a parenthesized join on the right in ()
        tree = _joined_table(view, cq.atoms[lo].alias, sources)
        position = lo + 1
        while position < hi:
            step = cq.joins[position - 1]
            if not step.tests:  # EXISTS and IN are tests in WHERE
                right = _joined_table(view, step.alias, sources) if step.width == 1 else \
                    sql.SQL("({})").format(joined(position, position + step.width))
                tree = sql.SQL("{} {} JOIN {} ON {}").format(tree, sql.SQL(step.kind.upper()), right, on_condition(step, col))
            position += step.width
        return tree

    return joined(0, len(cq.atoms))


def _joined_table(view: ResolvedView, alias: str, sources: dict[str, sql.Composable]) -> sql.Composable:
    if alias in sources:
        return sql.SQL("{} AS {}").format(sources[alias], sql.Identifier(alias))
    base = view.base_of(view.query.atom(alias).table)
    return sql.SQL("(SELECT * FROM {} AS {a} WHERE {}) AS {a}").format(base.ident, base.guard(alias), a=sql.Identifier(alias))


def plain_query(view: ResolvedView, sources: dict[str, sql.Composable] | None = None) -> sql.Composable:
    """The view's result as PostgreSQL computes it from the base tables (or ``sources``, by alias)."""
    cq: ConjunctiveQuery = view.query
    types: dict[str, Any] = view.output_types or {}
    groups = [*(_column(c) for c in cq.group_by), *(g.render(lambda v: _column(v.column)) for g in cq.group_computed)]
    group = sql.SQL(" GROUP BY {}").format(sql.SQL(", ").join(groups)) if groups else sql.SQL("")
    cofactor = next((a for a in cq.aggregates if a.function == "cofactor"), None)
    if cofactor is not None:
        return _cofactor_query(view, cofactor, group, sources)
    items = []
    for output in cq.outputs:
        value = output.render(_column) if isinstance(output, GroupColumn) else _aggregate(output)
        cast = sql.SQL("::{}").format(sql.SQL(types[output.name])) if output.name in types else sql.SQL("")  # type: ignore[arg-type]
        items.append(sql.SQL("({}){} AS {}").format(value, cast, sql.Identifier(output.name)))
    return shape_rows(cq, sql.SQL("SELECT {} {}{}").format(sql.SQL(", ").join(items), from_where(view, sources=sources),
                                                           group))


def shape_rows(cq: ConjunctiveQuery, rows: sql.Composable, distinct: bool = True) -> sql.Composable:
    """The view's rows from its outputs' (``rows``, columns named as the outputs): where HAVING
    holds, the SELECT list's expressions computed on them, and each row once for DISTINCT (unless
    ``distinct`` is False: the caller has made them distinct)."""
    rows = having_filter(cq, rows)
    if cq.projection is not None:
        rows = sql.SQL("SELECT {} FROM ({}) AS pgivm_shown").format(sql.SQL(", ").join(
            sql.SQL("{} AS {}").format(scalar.render(e, lambda c: sql.SQL("pgivm_shown.{}").format(sql.Identifier(c.column))),
                                       sql.Identifier(name)) for name, e in cq.projection), rows)
    if cq.distinct and distinct:
        rows = sql.SQL("SELECT DISTINCT * FROM ({}) AS pgivm_distinct").format(rows)
    return rows


def collated(view: ResolvedView, rows: sql.Composable) -> sql.Composable:
    """``rows`` (what the view shows) with each column in the collation PostgreSQL's evaluation of
    the query gives it, where not the database's default: a state keeps values in its columns'
    default collation, so without it the view's column would sort as the database's default where
    the query's own sorts as the column's ("C", an ICU locale). (A SELECT-list expression over
    such a column does not come here: the systems that keep a state refuse it, see
    ``common.collation_reason``.)"""
    cq: ConjunctiveQuery = view.query
    shown = view.output_collations
    if not shown:
        return rows
    if cq.projection is not None:
        names = [(name, e.column if isinstance(e, scalar.Col) and not e.alias else None) for name, e in cq.projection]
    elif any(isinstance(o, Aggregate) and o.function == "cofactor" for o in cq.outputs):
        names = [(o.name, o.name) for o in cq.outputs if isinstance(o, GroupColumn)] + [(c, None) for c in ("i", "j", "value")]
    else:
        names = [(o.name, o.name) for o in cq.outputs]
    if not any(output in shown for _, output in names):
        return rows
    items = [sql.SQL("pgivm_collated.{}{} AS {}").format(sql.Identifier(name), collate(shown.get(output)), sql.Identifier(name))  # type: ignore[arg-type]
             for name, output in names]
    return sql.SQL("SELECT {} FROM ({}) AS pgivm_collated").format(sql.SQL(", ").join(items), rows)


def having_filter(cq: ConjunctiveQuery, rows: sql.Composable) -> sql.Composable:
    """``rows`` (the view's rows, its columns named as its outputs) kept where HAVING holds: the
    same rows as HAVING over the groups, since HAVING reads only what the SELECT list shows."""
    if cq.having is None:
        return rows
    condition = scalar.render(cq.having, lambda c: sql.SQL("pgivm_shown.{}").format(sql.Identifier(c.column)))
    return sql.SQL("SELECT * FROM ({}) AS pgivm_shown WHERE {}").format(rows, condition)


def _cofactor_query(view: ResolvedView, cofactor: Aggregate, group: sql.Composable,
                    sources: dict[str, sql.Composable] | None = None) -> sql.Composable:
    cq: ConjunctiveQuery = view.query
    features = [_column(f.column) for f in cofactor.features]
    m = len(features)
    sums = [sql.SQL("count(*)::double precision AS e0_0")]
    sums += [sql.SQL("sum({}::double precision) AS {}").format(x, sql.Identifier(f"e0_{j + 1}"))
             for j, x in enumerate(features)]
    sums += [sql.SQL("sum({}::double precision * {}::double precision) AS {}").format(
        features[j], features[k], sql.Identifier(f"e{j + 1}_{k + 1}")) for j in range(m) for k in range(j, m)]
    groups = [o for o in cq.outputs if isinstance(o, GroupColumn)]
    inner = sql.SQL("SELECT {groups}{sums} {from_where}{group}").format(
        groups=sql.SQL("").join(sql.SQL("{} AS {}, ").format(g.render(_column), sql.Identifier(g.name)) for g in groups),
        sums=sql.SQL(", ").join(sums),
        from_where=from_where(view, [sql.SQL("{} IS NOT NULL").format(x) for x in features], sources), group=group)

    def entry(j: int, k: int) -> sql.Composable:
        a, b = min(j, k), max(j, k)
        return sql.SQL("q.{}").format(sql.Identifier(f"e{a}_{b}"))

    rows = sql.SQL(", ").join(sql.SQL("({}, {}, {})").format(sql.Literal(j), sql.Literal(k), entry(j, k))
                              for j in range(m + 1) for k in range(m + 1))
    having = sql.SQL("") if cq.group_by or cq.group_computed else sql.SQL(" WHERE q.e0_0 > 0")
    return sql.SQL("SELECT {groups}e.i, e.j, e.value FROM ({inner}) AS q CROSS JOIN LATERAL (VALUES {rows}) AS e(i, j, value){having}").format(
        groups=sql.SQL("").join(sql.SQL("q.{}, ").format(sql.Identifier(g.name)) for g in groups),
        inner=inner, rows=rows, having=having)
