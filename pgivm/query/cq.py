"""The general logical model of a view definition: a conjunctive query with aggregates.

    Q(free variables; aggregates) = Σ_{bound variables} R_1(x̄_1) · … · R_n(x̄_n) · [filters]

Each occurrence of a base table in FROM is an *atom* (a self-join has one atom per alias). The
columns the query reads from an atom are mapped to *variables*: columns equated by ``a.x = b.y``
conjuncts share one variable (a join variable), any other column is a variable of its own. The
GROUP BY variables are free, every other variable is summed away. Filters compare one column with
a constant; aggregates are count, sum and avg of +, -, * over columns and numeric constants.

The model is deliberately independent of SQL text and of any strategy: analysis passes
(``pgivm.query.analysis``) read it to decide the join shape, and a strategy reads the shape. The
triangle count of ``model.TriangleCount`` is one such shape (``analysis.shapes.triangle``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, Union

from psycopg import sql

from pgivm.errors import UnsupportedQuery
from pgivm.query import scalar
from pgivm.query.model import TableRef
from pgivm.query.derived import DerivedRelation
from pgivm.query.static import StaticRelation

if TYPE_CHECKING:
    from pgivm.query.analysis import Analysis

ComparisonOp = Literal["=", "<>", "<", "<=", ">", ">="]
ArithmeticOp = Literal["+", "-", "*"]
JoinKind = Literal["inner", "left", "right", "full", "semi", "anti"]
AggregateFunction = Literal["count", "count_distinct", "sum", "avg", "min", "max", "cofactor"]

_PLAIN_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_$]*")
_NUMBER = re.compile(r"-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def quote_identifier(name: str) -> str:
    """PostgreSQL's spelling of an identifier: bare when that reads back the same, else quoted.

    Used for variable names and messages, so that ``"a.b".c`` and ``a."b.c"`` never print alike.
    """
    if _PLAIN_IDENTIFIER.fullmatch(name):
        return name
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True, order=True)
class ColumnRef:
    """One column of one atom, ``alias.column`` (identifiers already case-folded)."""

    alias: str
    column: str

    def __str__(self) -> str:
        return f"{quote_identifier(self.alias)}.{quote_identifier(self.column)}"


@dataclass(frozen=True)
class Variable:
    """An equivalence class of columns equated by the join conditions.

    Named after its lowest column (``r.b`` for ``{r.b, s.b}``), so the name does not depend on
    the order the conditions or tables are written in.
    """

    name: str
    columns: tuple[ColumnRef, ...]  # sorted

    @property
    def aliases(self) -> tuple[str, ...]:
        """The atoms the variable occurs in, each once."""
        return tuple(dict.fromkeys(c.alias for c in self.columns))

    @property
    def is_join(self) -> bool:
        """A join variable occurs in two atoms or more; any other variable is local to its atom."""
        return len(self.aliases) > 1


@dataclass(frozen=True)
class Atom:
    """One occurrence of a base table in FROM: R_alias(variables).

    ``columns`` are the columns the query reads from it (join, filtered, grouped and aggregated
    columns), sorted; ``variables[i]`` is the name of the variable of ``columns[i]``. Two columns
    of one atom share a variable only when equalities through other atoms link them (``r.a = s.b
    AND s.b = r.c``): that is a selection ``r.a = r.c`` inside the atom, which evaluation must keep.
    """

    alias: str
    table: TableRef
    columns: tuple[str, ...]
    variables: tuple[str, ...]

    def variable(self, column: str) -> str:
        """The variable a column of this atom carries."""
        return self.variables[self.columns.index(column)]

    @property
    def variable_set(self) -> frozenset[str]:
        return frozenset(self.variables)


# ------------------------------------------------------------------------------ expressions


@dataclass(frozen=True)
class Const:
    """A numeric constant, kept as written (``1``, ``0.5``, ``-2``) so that it prints back exactly."""

    text: str

    @property
    def value(self) -> int | Decimal:
        return int(self.text) if re.fullmatch(r"-?\d+", self.text) else Decimal(self.text)

    @property
    def variables(self) -> frozenset[str]:
        return frozenset()

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Var:
    """A column inside an aggregate's expression, with the variable it carries."""

    variable: str
    column: ColumnRef

    @property
    def variables(self) -> frozenset[str]:
        return frozenset({self.variable})

    def __str__(self) -> str:
        return str(self.column)


@dataclass(frozen=True)
class BinOp:
    """``left op right`` with op one of +, -, *: what a ring of sums and products can maintain."""

    op: ArithmeticOp
    left: Expr
    right: Expr

    @property
    def variables(self) -> frozenset[str]:
        return self.left.variables | self.right.variables

    def __str__(self) -> str:
        return f"({self.left} {self.op} {self.right})"


@dataclass(frozen=True)
class Computed:
    """An aggregate's argument beyond + - * over columns (CASE, coalesce, /, casts, PostgreSQL's
    immutable functions; ``agg(x) FILTER (WHERE c)`` is agg over CASE WHEN c THEN x END): a scalar
    tree evaluated on each joined row. It carries a value of the row under ``variable``, a name
    without a dot (a column's variable always has one), typed at create like a column; ``refs``
    are its columns with their variables."""

    variable: str
    node: scalar.Node
    refs: tuple[Var, ...]
    text: str  # as written, for messages

    @property
    def variables(self) -> frozenset[str]:
        return frozenset({self.variable})

    def render(self, column: Callable[[Var], sql.Composable]) -> sql.Composable:
        """The expression as SQL, each column as ``column`` reads its Var."""
        by_column = {(v.column.alias, v.column.column): v for v in self.refs}
        return scalar.render(self.node, lambda c: column(by_column[(c.alias, c.column)]))

    def __str__(self) -> str:
        return self.text


Expr = Union[Const, Var, BinOp, Computed]


def computed_in(expr: Expr | None) -> list[Computed]:
    """The computed values of an aggregate's argument: the argument itself, or the factors of its
    products that are (``r.x * (1 - r.d)`` inside ``sum(r.x * (1 - r.d) * s.y)``)."""
    if isinstance(expr, Computed):
        return [expr]
    if isinstance(expr, BinOp):
        return computed_in(expr.left) + computed_in(expr.right)
    return []


# ------------------------------------------------------------------------------ outputs


@dataclass(frozen=True)
class GroupColumn:
    """A SELECT item that is a GROUP BY column or expression: the value of a free variable."""

    name: str  # output column name
    variable: str
    column: ColumnRef  # the column; for an expression, its first column (for messages)
    computed: Computed | None = None  # a GROUP BY expression (its variable is ``variable``)
    # an unqualified JOIN ... USING column: every column it merges, left to right, whose common type
    # PostgreSQL gives it (int USING bigint is bigint; the order decides between varchar and text),
    # though its value is ``column``'s
    using: tuple[ColumnRef, ...] = ()

    def render(self, column: Callable[[ColumnRef], sql.Composable]) -> sql.Composable:
        """The value as SQL, each column as ``column`` names it."""
        return self.computed.render(lambda v: column(v.column)) if self.computed is not None else column(self.column)


@dataclass(frozen=True)
class Aggregate:
    """count, sum or avg over the joined rows of one group.

    - count: ``argument`` None means every joined row (count(*), count(1), and count of a join
      column, which is never NULL in the join). With an argument (only as avg's denominator) it
      counts the rows where the argument is not NULL.
    - sum(expr): skips rows where expr is NULL, and is NULL when no row counts (also over an
      empty join: sum(1) is NULL where count(*) is 0).
    - avg(expr) = sum(expr) / count(expr): see ``parts``.
    """

    function: AggregateFunction
    argument: Expr | None
    name: str  # output column name
    sql: str  # the aggregate as written (sqlglot's PostgreSQL rendering), for messages
    features: tuple[Var, ...] = ()  # cofactor's columns x1..xm, in order

    @property
    def parts(self) -> tuple[Aggregate, ...]:
        """The aggregates to maintain: avg as its sum and count, anything else as itself."""
        if self.function != "avg":
            return (self,)
        return (
            Aggregate("sum", self.argument, self.name, self.sql),
            Aggregate("count", self.argument, self.name, self.sql),
        )

    @property
    def variables(self) -> frozenset[str]:
        if self.function == "cofactor":
            return frozenset(f.variable for f in self.features)
        return self.argument.variables if self.argument is not None else frozenset()


Output = Union[GroupColumn, Aggregate]


# ------------------------------------------------------------------------------ filters


@dataclass(frozen=True)
class Condition:
    """A condition beyond ``column op constant`` and ``column op column``: IS NULL, IN (list),
    BETWEEN, LIKE, OR, NOT, CASE, arithmetic, typed constants, PostgreSQL's immutable functions
    (the tree of ``pgivm.query.scalar``), on one atom's rows (``alias``) or, ``alias`` None, on
    columns of several (evaluated on the join result, like a Predicate). It holds where WHERE or ON
    holds it: a NULL result drops the row."""

    alias: str | None
    expr: scalar.Node
    sql: str  # as written, for messages

    @property
    def columns(self) -> tuple[ColumnRef, ...]:
        return tuple(dict.fromkeys(ColumnRef(c.alias, c.column) for c in scalar.columns(self.expr)))

    def render(self, column: Callable[[ColumnRef], sql.Composable]) -> sql.Composable:
        """The condition as SQL, each column as ``column`` names it."""
        return scalar.render(self.expr, lambda c: column(ColumnRef(c.alias, c.column)))

    def __str__(self) -> str:
        return self.sql


@dataclass(frozen=True)
class Filter:
    """``column op value``: one column against a constant (``5 > r.a`` is stored as ``r.a < 5``).

    ``value`` is the constant's text; ``is_string`` says whether it was a string literal, which
    PostgreSQL reads as a constant of the column's type (``'1995-03-15'`` against a date column).
    """

    column: ColumnRef
    variable: str
    op: ComparisonOp
    value: str
    is_string: bool
    sql: str  # the condition as written, for messages

    @property
    def literal_sql(self) -> str:
        return "'" + self.value.replace("'", "''") + "'" if self.is_string else self.value

    def literal(self) -> sql.Composable:
        """The constant for generated SQL: a string as a quoted literal (never raw text, which could
        end the dollar quotes of the function it lands in), a number only if it is one."""
        if self.is_string:
            return sql.Literal(self.value)
        if not _NUMBER.fullmatch(self.value):
            raise UnsupportedQuery(f"unsupported constant {self.value!r} in {self.sql}")
        return sql.SQL(self.value)  # type: ignore[arg-type]  # checked just above: a number

    def __str__(self) -> str:
        return f"{self.column} {self.op} {self.literal_sql}"


@dataclass(frozen=True)
class Predicate:
    """``left op right`` over columns of two different atoms, other than a join equality
    (``g1.src <> g3.dst``): a condition on the join result, not on one table. Only a system that
    evaluates conditions per join result (``sample``) accepts it."""

    left: ColumnRef
    op: ComparisonOp
    right: ColumnRef
    sql: str

    def __str__(self) -> str:
        return f"{self.left} {self.op} {self.right}"


@dataclass(frozen=True)
class JoinStep:
    """One step of a FROM clause that has an outer join, read left to right as PostgreSQL does:
    the rows joined so far, joined with atom ``alias`` by ``kind`` where ``on`` holds (its
    conjuncts; none for CROSS JOIN). A LEFT join keeps every row so far, NULL-extending those that
    match no row of the atom; RIGHT keeps every row of the atom; FULL keeps both. A semi-join
    (EXISTS, IN) keeps the rows so far that match a row of the atom, an anti-join (NOT EXISTS, NOT
    IN) those that match none: their atoms show no column, and they come after the FROM's joins.
    A parenthesized join on the right, ``a FULL JOIN (b FULL JOIN c ON ...) ON ...``, is the step
    of its first atom b with ``width`` 2 (its atoms b and c), followed by the steps inside it."""

    kind: JoinKind
    alias: str
    on: tuple[Condition, ...]
    width: int = 1  # the atoms of the right side: the step's own and those of the joins in its parentheses

    @property
    def tests(self) -> bool:
        """A semi- or anti-join: the atom only tests the rows so far."""
        return self.kind in ("semi", "anti")

    def __str__(self) -> str:
        on = " AND ".join(c.sql for c in self.on) or "true"
        if self.tests:
            return f"{'NOT ' if self.kind == 'anti' else ''}EXISTS ({self.alias} WHERE {on})"
        return f"{self.kind.upper()} JOIN {self.alias}{f' (and {self.width - 1} more)' if self.width > 1 else ''} ON {on}"


@dataclass(frozen=True)
class JoinOperands:
    """One join step as PostgreSQL nests it: ``joins[position - 1]``, joining the rows of the
    atoms ``left`` (its left side, from the start of its parentheses or of FROM) with those of the
    atoms ``right`` (the step's own atom, and the joins in its parentheses)."""

    position: int
    left: range
    right: range


# ------------------------------------------------------------------------------ the query


@dataclass(frozen=True)
class ConjunctiveQuery:
    """A join of atoms on equalities, with filters, GROUP BY and aggregates.

    ``atoms`` are in the order written; ``variables`` sorted by name; ``group_by`` the GROUP BY
    columns as written, ``group_computed`` its expressions, and ``free`` their variables (each once,
    in GROUP BY order).
    """

    atoms: tuple[Atom, ...]
    variables: tuple[Variable, ...]
    group_by: tuple[ColumnRef, ...]
    free: tuple[str, ...]
    outputs: tuple[Output, ...]
    filters: tuple[Filter, ...]
    sql: str
    predicates: tuple[Predicate, ...] = ()
    conditions: tuple[Condition, ...] = ()  # conditions other than filters and predicates
    distinct: bool = False  # SELECT DISTINCT: each row of the result once
    having: scalar.Node | None = None  # HAVING, over the view's columns (Col("", output name))
    # the SELECT list when an item computes on outputs: (name, expression over Col("", output name));
    # None when the outputs are the view's columns
    projection: tuple[tuple[str, scalar.Node], ...] | None = None
    group_computed: tuple[Computed, ...] = ()  # GROUP BY expressions (r.a % 10, lower(s.name))
    # with an outer join, how atoms[1:] join, in order (each ON kept with its join, WHERE after
    # all of them); () when every join is inner: ON and WHERE then hold alike
    joins: tuple[JoinStep, ...] = ()
    # the tables of constant rows create makes first (generate_series, VALUES: pgivm.query.static);
    # not kept in the catalog: once made, they are base tables like any other
    static: tuple[StaticRelation, ...] = ()
    # the subqueries that aggregate, each a table of the state kept by triggers on its own tables
    # (pgivm.query.derived, pgivm.derived); kept in the catalog, whose upgrade makes the triggers again
    derived: tuple[DerivedRelation, ...] = ()
    # a UNION [ALL] read as joins (pgivm.query.union): the aliases of each branch's tables, whose
    # atoms never meet in a joined row
    union_branches: tuple[tuple[str, ...], ...] = ()
    # the JOIN ... USING columns read unqualified inside an expression, a comparison or an aggregate
    # ("expression" or "compared", the column kept, every column it merges left to right): PostgreSQL
    # reads them in their common type, pgivm as the column it keeps; create refuses such a use when
    # the types differ (resolve). Not kept in the catalog: checked once, at create.
    using_in_expressions: tuple[tuple[str, ColumnRef, tuple[ColumnRef, ...]], ...] = ()

    def atom(self, alias: str) -> Atom:
        for atom in self.atoms:
            if atom.alias == alias:
                return atom
        raise KeyError(alias)

    def variable(self, name: str) -> Variable:
        for variable in self.variables:
            if variable.name == name:
                return variable
        raise KeyError(name)

    @property
    def join_variables(self) -> tuple[str, ...]:
        return tuple(v.name for v in self.variables if v.is_join)

    @property
    def bound(self) -> tuple[str, ...]:
        """The variables summed away: all but the free ones."""
        return tuple(v.name for v in self.variables if v.name not in self.free)

    @property
    def aggregates(self) -> tuple[Aggregate, ...]:
        return tuple(o for o in self.outputs if isinstance(o, Aggregate))

    @property
    def has_outer_join(self) -> bool:
        return bool(self.joins)

    @property
    def shown_atoms(self) -> tuple[Atom, ...]:
        """The atoms whose columns a joined row has: all but those of EXISTS and IN subqueries."""
        tested = {step.alias for step in self.joins if step.tests}
        return tuple(a for a in self.atoms if a.alias not in tested)

    @cached_property
    def join_operands(self) -> tuple[JoinOperands, ...]:
        """Each join step with the atoms on each of its sides, outer steps before the ones inside
        their parentheses (``a FULL JOIN (b JOIN c ON ...) ON ...``: a | b c, then b | c)."""
        out: list[JoinOperands] = []

        def segment(lo: int, hi: int) -> None:  # atoms lo..hi-1 joined left to right
            position = lo + 1
            while position < hi:
                width = self.joins[position - 1].width
                out.append(JoinOperands(position, range(lo, position), range(position, position + width)))
                segment(position, position + width)
                position += width

        if self.joins:
            segment(0, len(self.atoms))
        return tuple(out)

    def null_extended(self, alias: str) -> bool:
        """Whether an outer join can give the atom's columns NULLs in a joined row: it is on the
        right side of a LEFT or FULL join, or on the left side of a RIGHT or FULL join."""
        position = [a.alias for a in self.atoms].index(alias)
        if any(step.tests and step.alias == alias for step in self.joins):
            return False  # its columns are read by its test alone, never NULL-extended
        return any(self.joins[o.position - 1].kind in ("left", "full") and position in o.right or
                   self.joins[o.position - 1].kind in ("right", "full") and position in o.left for o in self.join_operands)

    @property
    def tables(self) -> list[TableRef]:
        """The distinct base tables, in the order written."""
        return list(dict.fromkeys(a.table for a in self.atoms))

    @property
    def is_self_join(self) -> bool:
        return len(self.tables) < len(self.atoms)

    @property
    def across_tables(self) -> tuple[str, ...]:
        """The conditions that compare columns of two tables other than by a join equality, as
        written: only systems that evaluate conditions on the join result take them."""
        return tuple(p.sql for p in self.predicates) + tuple(c.sql for c in self.conditions if c.alias is None)

    @property
    def is_listing(self) -> bool:
        """A join without aggregates or GROUP BY: its result is the bag of joined rows."""
        return not self.aggregates and not self.group_by and not self.group_computed

    def atoms_of(self, table: TableRef) -> list[Atom]:
        """The atoms a change to ``table`` updates, in the order written (the order they are applied)."""
        return [atom for atom in self.atoms if atom.table == table]

    @cached_property
    def analysis(self) -> Analysis:
        """What the analysis passes find (``pgivm.query.analysis.RULES``, in order), computed once
        per query: the hypergraph, join tree and shape every system's ``accepts`` and plan read."""
        from pgivm.query.analysis import analyze

        return analyze(self)


# ------------------------------------------------------------------------------ catalog form


def expr_to_json(expr: Expr | None) -> Any:
    if expr is None:
        return None
    if isinstance(expr, Const):
        return {"const": expr.text}
    if isinstance(expr, Var):
        return {"var": expr.variable, "alias": expr.column.alias, "column": expr.column.column}
    if isinstance(expr, Computed):
        return {"computed": expr.variable, "node": scalar.to_json(expr.node), "text": expr.text,
                "refs": [expr_to_json(v) for v in expr.refs]}
    return {"op": expr.op, "left": expr_to_json(expr.left), "right": expr_to_json(expr.right)}


def expr_from_json(data: Any) -> Expr | None:
    if data is None:
        return None
    if "const" in data:
        return Const(data["const"])
    if "var" in data:
        return Var(data["var"], ColumnRef(data["alias"], data["column"]))
    if "computed" in data:
        return Computed(data["computed"], scalar.from_json(data["node"]), tuple(expr_from_json(v) for v in data["refs"]),  # type: ignore[misc]
                        data["text"])
    return BinOp(data["op"], expr_from_json(data["left"]), expr_from_json(data["right"]))  # type: ignore[arg-type]


def query_to_json(query: ConjunctiveQuery, tables: dict[TableRef, dict[str, Any]]) -> dict[str, Any]:
    """The query as the catalog stores it (model version 2); ``tables`` gives each table as
    pinned (schema, name, oid)."""

    def column(c: ColumnRef) -> list[str]:
        return [c.alias, c.column]

    outputs: list[dict[str, Any]] = []
    for o in query.outputs:
        if isinstance(o, GroupColumn):
            outputs.append({"kind": "column", "name": o.name, "variable": o.variable, "column": column(o.column),
                            "computed": expr_to_json(o.computed), **({"using": [column(u) for u in o.using]} if o.using else {})})
        else:
            outputs.append({"kind": "aggregate", "function": o.function, "argument": expr_to_json(o.argument),
                            "name": o.name, "sql": o.sql, "features": [expr_to_json(f) for f in o.features]})
    return {
        "atoms": [{"alias": a.alias, "table": tables[a.table], "columns": list(a.columns),
                   "variables": list(a.variables)} for a in query.atoms],
        "variables": [{"name": v.name, "columns": [column(c) for c in v.columns]} for v in query.variables],
        "group_by": [column(c) for c in query.group_by],
        "group_computed": [expr_to_json(c) for c in query.group_computed],
        "free": list(query.free),
        "outputs": outputs,
        "filters": [{"column": column(f.column), "variable": f.variable, "op": f.op, "value": f.value,
                     "is_string": f.is_string, "sql": f.sql} for f in query.filters],
        "predicates": [{"left": column(p.left), "op": p.op, "right": column(p.right), "sql": p.sql}
                       for p in query.predicates],
        "conditions": [_condition_to_json(c) for c in query.conditions],
        "distinct": query.distinct,
        "having": scalar.to_json(query.having) if query.having is not None else None,
        "projection": [[n, scalar.to_json(e)] for n, e in query.projection] if query.projection is not None else None,
        "joins": [{"kind": j.kind, "alias": j.alias, "on": [_condition_to_json(c) for c in j.on], "width": j.width}
                  for j in query.joins],
        "union_branches": [list(b) for b in query.union_branches],
        **({"derived": [d.to_json(tables) for d in query.derived]} if query.derived else {}),
    }


def _condition_to_json(c: Condition) -> dict[str, Any]:
    return {"alias": c.alias, "expr": scalar.to_json(c.expr), "sql": c.sql}


def _condition_from_json(c: dict[str, Any]) -> Condition:
    return Condition(c["alias"], scalar.from_json(c["expr"]), c["sql"])


def query_from_json(data: dict[str, Any], sql: str) -> ConjunctiveQuery:
    def column(c: list[str]) -> ColumnRef:
        return ColumnRef(c[0], c[1])

    def table(t: dict[str, Any]) -> TableRef:
        return TableRef(name=t["name"], schema=t.get("schema"))

    outputs: list[Output] = []
    for o in data["outputs"]:
        if o["kind"] == "column":
            outputs.append(GroupColumn(o["name"], o["variable"], column(o["column"]), expr_from_json(o.get("computed")),  # type: ignore[arg-type]
                                       tuple(column(u) for u in o.get("using", []))))
        else:
            features = tuple(expr_from_json(f) for f in o.get("features", []))
            outputs.append(Aggregate(o["function"], expr_from_json(o["argument"]), o["name"], o["sql"],
                                     features))  # type: ignore[arg-type]
    return ConjunctiveQuery(
        atoms=tuple(Atom(a["alias"], table(a["table"]), tuple(a["columns"]), tuple(a["variables"]))
                    for a in data["atoms"]),
        variables=tuple(Variable(v["name"], tuple(column(c) for c in v["columns"])) for v in data["variables"]),
        group_by=tuple(column(c) for c in data["group_by"]),
        group_computed=tuple(expr_from_json(c) for c in data.get("group_computed", [])),  # type: ignore[misc]
        free=tuple(data["free"]),
        outputs=tuple(outputs),
        filters=tuple(Filter(column(f["column"]), f["variable"], f["op"], f["value"], f["is_string"], f["sql"])
                      for f in data["filters"]),
        sql=sql,
        predicates=tuple(Predicate(column(p["left"]), p["op"], column(p["right"]), p["sql"])
                         for p in data.get("predicates", [])),
        conditions=tuple(_condition_from_json(c) for c in data.get("conditions", [])),
        distinct=bool(data.get("distinct", False)),
        having=scalar.from_json(data["having"]) if data.get("having") is not None else None,
        projection=tuple((n, scalar.from_json(e)) for n, e in data["projection"]) if data.get("projection") else None,
        joins=tuple(JoinStep(j["kind"], j["alias"], tuple(_condition_from_json(c) for c in j["on"]), j.get("width", 1))
                    for j in data.get("joins", [])),
        union_branches=tuple(tuple(b) for b in data.get("union_branches", [])),
        derived=tuple(DerivedRelation.from_json(d) for d in data.get("derived", [])),
    )
