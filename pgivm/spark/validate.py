"""``pgivm validate NAME --spark``: recount a view's triangle join in Spark from the base tables.

An independent check of the maintained count: none of the code that builds or maintains a view's
state (no degrees, no heavy/light partition, no auxiliary view, nothing of ``compute_state``)
takes part. The base tables are read over JDBC as ``read_relations`` reads them (partitionColumn =
the atom's first join column, bounds from min/max, 4 partitions; non-integer join columns as text
in one partition; rows with a NULL join column never join and are skipped). Each atom is then
aggregated to (its two join variables, multiplicity), which keeps the join narrow when a table has
duplicate rows, and the count is the plain Spark join

    Σ  R(a,b).mult · S(b,c).mult · T(c,a).mult   over   R(a,b) ⋈ S(b,c) ⋈ T(c,a)

on the join variables, summed as decimal(38,0) so that no product of multiplicities overflows.
The join does materialize the 2-paths R ⋈ S, skewed ones through high-degree values included; at
the sizes this project runs (ego-Facebook: a few million 2-paths) Spark's adaptive query execution
(on by default: coalesced shuffle partitions, skewed partitions split) handles that well enough,
and a recount that shares no code with the system it checks is worth the extra work.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import psycopg

from pgivm.query import scalar
from pgivm.query.analysis.shapes import as_triangle
from pgivm.query.resolve import ResolvedView
from pgivm.spark.preprocess import JdbcTarget, read_relations


@dataclass
class SparkRecount:
    count: int
    seconds: float


def join_count(frames: list[tuple[tuple[str, str], Any]]) -> int:
    """Σ of the product of multiplicities over the natural join of the atoms.

    ``frames``: per atom, its two join variables (e.g. ("a", "b") for R) and a DataFrame (x, y) of
    its rows (a bag). A variable read as text in one atom and as bigint in another is joined as text
    (PostgreSQL's integer-to-text spelling is Spark's).
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    text = {v for (variables, df) in frames for v, column in zip(variables, ("x", "y"))
            if isinstance(df.schema[column].dataType, StringType)}
    joined = None
    products = []
    for i, ((v1, v2), df) in enumerate(frames):
        mult = f"m{i}"
        x = F.col("x").cast("string") if v1 in text else F.col("x")
        y = F.col("y").cast("string") if v2 in text else F.col("y")
        atom = (df.select(x.alias(v1), y.alias(v2))
                  .groupBy(v1, v2).agg(F.count(F.lit(1)).alias(mult)))
        if joined is None:
            joined = atom
        else:
            on = [v for v in (v1, v2) if v in joined.columns]
            joined = joined.join(atom, on)
        products.append(F.col(mult).cast("decimal(38,0)"))
    assert joined is not None
    product = products[0]
    for factor in products[1:]:
        product = product * factor
    row = joined.agg(F.sum(product)).first()
    return int(row[0] or 0)


def spark_recount(conn: psycopg.Connection, view: ResolvedView, master: str = "local[*]") -> SparkRecount:
    """The view's join count, recounted by Spark with a plain three-way join (see the module)."""
    from pgivm.spark.session import get_spark

    started = time.perf_counter()
    view = view.reshaped(as_triangle(view.query))  # R, S, T over variables a, b, c
    spark = get_spark(master)
    rows = read_relations(spark, conn, view, JdbcTarget.of(conn))
    count = join_count([(atom.variables, rows[atom.relation]) for atom in view.query.atoms])
    return SparkRecount(count=count, seconds=time.perf_counter() - started)


# --- join-aggregates: the result recomputed with Spark's DataFrame API --------------------------


def _arithmetic(node: scalar.Node) -> bool:
    """Whether a computed value is + - * over columns and numbers (``r.x * (1 - r.d)``)."""
    if isinstance(node, scalar.Col):
        return True
    if isinstance(node, scalar.Lit):
        return node.text is not None and not node.is_string
    return node.op in ("+", "-", "*", "neg") and all(_arithmetic(a) for a in node.args)


def _spark_arithmetic(node: scalar.Node, column: Any) -> Any:
    """Such a value as a Spark column, each column as ``column`` gives it."""
    from pyspark.sql import functions as F

    if isinstance(node, scalar.Col):
        return column(node)
    if isinstance(node, scalar.Lit):
        return F.lit(_spark_value(node.text or "", False))
    args = [_spark_arithmetic(a, column) for a in node.args]
    if node.op == "neg":
        return -args[0]
    return args[0] + args[1] if node.op == "+" else args[0] - args[1] if node.op == "-" else args[0] * args[1]


def _spark_value(literal: str, is_string: bool) -> Any:
    if is_string:
        return literal
    try:
        return int(literal)
    except ValueError:
        from decimal import Decimal

        return Decimal(literal)


def cq_result(conn: psycopg.Connection, view: ResolvedView, master: str = "local[*]") -> tuple[list[tuple[Any, ...]], float]:
    """The view's rows computed by Spark from the base tables read over JDBC: the atoms joined on
    their equated columns, filtered, grouped and aggregated with Spark's own operators, from the
    query model alone (no code of any maintenance system). A listing gives its row count only,
    as ``[(count,)]``: collecting a flat join to the driver is not a check worth its cost."""
    from pgivm.query.cq import computed_in

    computed = any(not _arithmetic(c.node) for a in view.query.aggregates for c in computed_in(a.argument)) \
        or bool(view.query.group_computed)
    if view.query.projection is not None or computed or view.query.has_outer_join:
        from pgivm.errors import PgivmError

        what = "outer joins or [NOT] EXISTS / IN subqueries" if view.query.has_outer_join else \
            "computed values (CASE, functions, FILTER, GROUP BY expressions)" if computed else "SELECT-list expressions"
        raise PgivmError(f"validate --spark does not compute {what} yet", "use pgivm verify NAME")
    from pyspark.sql import Column
    from pyspark.sql import functions as F

    from pgivm.query.cq import BinOp, Computed, Const, GroupColumn, Var
    from pgivm.spark.session import get_spark
    from psycopg import sql

    started = time.perf_counter()
    spark = get_spark(master)
    jdbc = JdbcTarget.of(conn)
    cq = view.query
    frames = []
    for atom in cq.atoms:
        base = view.base_of(atom.table)
        columns = sql.SQL(", ").join(sql.SQL("base.{} AS {}").format(sql.Identifier(c), sql.Identifier(f"{atom.alias}__{c}"))
                                     for c in atom.columns)
        query = sql.SQL("(SELECT {} FROM {} base WHERE {}) pgivm_q").format(
            columns, base.ident, base.guard("base")).as_string(conn)
        frames.append(spark.read.jdbc(jdbc.url, query, properties={**jdbc.props, "fetchsize": "10000"}))

    def col(ref: Any) -> Column:
        return F.col(f"`{ref.alias}__{ref.column}`")

    joined = frames[0]
    present = {f"{cq.atoms[0].alias}__{c}" for c in cq.atoms[0].columns}
    for atom, frame in zip(cq.atoms[1:], frames[1:]):
        names = {f"{atom.alias}__{c}" for c in atom.columns}
        conditions = []
        for variable in cq.variables:
            mine = [c for c in variable.columns if f"{c.alias}__{c.column}" in names]
            theirs = [c for c in variable.columns if f"{c.alias}__{c.column}" in present]
            if mine and theirs:
                conditions.append(col(mine[0]) == col(theirs[0]))
        on = conditions[0]
        for condition in conditions[1:]:
            on = on & condition
        joined = joined.join(frame, on, "inner")
        present |= names
    for variable in cq.variables:  # equalities inside one atom (r.a = s.b AND s.b = r.c)
        for other in variable.columns[1:]:
            if other.alias == variable.columns[0].alias:
                joined = joined.filter(col(variable.columns[0]) == col(other))
    operators = {"=": "__eq__", "<>": "__ne__", "<": "__lt__", "<=": "__le__", ">": "__gt__", ">=": "__ge__"}
    for f in cq.filters:
        joined = joined.filter(getattr(col(f.column), operators[f.op])(F.lit(_spark_value(f.value, f.is_string))))
    for p in cq.predicates:
        joined = joined.filter(getattr(col(p.left), operators[p.op])(col(p.right)))
    for c in cq.conditions:  # PostgreSQL's text of the condition, in Spark SQL (sqlglot)
        joined = joined.filter(F.expr(scalar.spark_text(c.expr, lambda ref: f"{ref.alias}__{ref.column}")))
    if cq.is_listing:
        if cq.distinct:
            joined = joined.select(*[col(o.column) for o in cq.outputs]).distinct()  # type: ignore[union-attr]
        return [(joined.count(),)], time.perf_counter() - started

    def expr(e: Any) -> Column:
        if isinstance(e, Const):
            return F.lit(_spark_value(e.text, False))
        if isinstance(e, Var):
            return col(e.column)
        if isinstance(e, Computed):  # + - * over one table's columns (checked above: _arithmetic)
            by_column = {(v.column.alias, v.column.column): v.column for v in e.refs}
            return _spark_arithmetic(e.node, lambda c: col(by_column[(c.alias, c.column)]))
        assert isinstance(e, BinOp)
        left, right = expr(e.left), expr(e.right)
        return left + right if e.op == "+" else left - right if e.op == "-" else left * right

    aggregates: list[Column] = []
    layout: list[Any] = []
    for output in cq.outputs:
        if isinstance(output, GroupColumn):
            layout.append(("group", col(output.column).alias(output.name)))
        elif output.function == "cofactor":
            features = [col(f.column).cast("double") for f in output.features]
            nonnull = F.lit(True)
            for x in features:
                nonnull = nonnull & x.isNotNull()
            m = len(features)
            start = len(aggregates)
            aggregates.append(F.sum(F.when(nonnull, F.lit(1.0)).otherwise(F.lit(0.0))))
            aggregates += [F.sum(F.when(nonnull, x)) for x in features]
            aggregates += [F.sum(F.when(nonnull, features[j] * features[k])) for j in range(m) for k in range(j, m)]
            layout.append(("cofactor", start, m))
        else:
            layout.append(("aggregate", len(aggregates)))
            if output.function == "count":
                aggregate = F.count(F.lit(1)) if output.argument is None else F.count(expr(output.argument))
            elif output.function == "sum":
                aggregate = F.sum(expr(output.argument))
            elif output.function == "count_distinct":
                aggregate = F.countDistinct(expr(output.argument))
            elif output.function in ("min", "max"):
                aggregate = (F.min if output.function == "min" else F.max)(expr(output.argument))
            else:
                aggregate = F.avg(expr(output.argument))
            aggregates.append(aggregate.alias(output.name))
    groups = [c for kind, *rest in layout if kind == "group" for c in rest]
    result = (joined.groupBy(*groups) if groups else joined).agg(*aggregates) if aggregates else joined.select(*groups).distinct()
    if cq.having is not None:  # over the outputs, named as the view's columns
        result = result.filter(F.expr(scalar.spark_text(cq.having, lambda c: c.column)))
    rows = result.collect()
    out: list[tuple[Any, ...]] = []
    for row in rows:
        values = list(row)
        group_values, aggregate_values = values[:len(groups)], values[len(groups):]
        cofactor = next((entry for entry in layout if entry[0] == "cofactor"), None)
        if cofactor is not None:
            _, start, m = cofactor
            if not aggregate_values[start]:
                continue  # no joined row with every feature: no entries (as the view)
            index = {(0, 0): start}
            position = start + 1
            for j in range(m):
                index[(0, j + 1)] = position
                position += 1
            for j in range(m):
                for k in range(j, m):
                    index[(j + 1, k + 1)] = position
                    position += 1
            for i in range(m + 1):
                for j in range(m + 1):
                    out.append((*group_values, i, j, aggregate_values[index[(min(i, j), max(i, j))]]))
            continue
        shaped, g = [], 0
        for entry in layout:
            if entry[0] == "group":
                shaped.append(group_values[g])
                g += 1
            else:
                shaped.append(aggregate_values[entry[1]])
        out.append(tuple(shaped))
    if cq.distinct:
        out = list(dict.fromkeys(out))
    return out, time.perf_counter() - started
