"""Recognisers for the join shapes strategies specialise in: triangle, k-cycle, k-path, star.

Each is pure and answers None when the query is not of its shape. The cycle, path and star
shapes look at join variables only: a column that joins nothing (a filter, a group-by or an
aggregated column of one atom) is local to its atom and does not change how the atoms connect.
The triangle recogniser is stricter: it is the exact input of today's IVMε code, so it also
demands a bare count and orients the atoms as R(A,B), S(B,C), T(C,A).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from pgivm.errors import UnsupportedQuery
from pgivm.query.analysis.hypergraph import hypergraph
from pgivm.query.cq import Aggregate, ConjunctiveQuery, Const, GroupColumn, Output
from pgivm.query.model import Aggregate as TriangleAggregate
from pgivm.query.model import (MULTIPLICITY, Atom, Column, FourPathCount, LoomisWhitneyCount, LwAtom, Packed, PathAtom,
                               RelationName, ThreePathCount, TriangleCount)

_NOT_TRIANGLE = (
    "not a triangle count: the join conditions must link the three tables in a cycle "
    "(r.b = s.b, s.c = t.c, t.a = r.a), each table joining on two of its columns"
)


def as_triangle(cq: ConjunctiveQuery) -> TriangleCount:
    """The query as a TriangleCount, or UnsupportedQuery saying why it is not one.

    The checks and messages are those of the triangle-only parser this replaces, in its order
    (grouping, the aggregate, the number of tables, filters, the cycle). Orientation follows
    the order the tables are written: the first is R, the second S, the third T, and R's first
    column is the one it does not share with S, so that R(A,B), S(B,C), T(C,A) is a cycle.
    """
    if cq.group_by or cq.group_computed:
        raise UnsupportedQuery("GROUP BY is not supported in a maintained view")
    if len(cq.outputs) != 1:
        raise UnsupportedQuery("the SELECT list must be a single count(*), count(1) or sum(1)")
    (output,) = cq.outputs
    aggregate = _triangle_aggregate(output)
    if len(cq.atoms) != 3:
        raise UnsupportedQuery(f"a triangle count joins exactly 3 tables, this query joins {len(cq.atoms)}")
    if cq.projection is not None:
        raise UnsupportedQuery("the SELECT list must be a single count(*), count(1) or sum(1)")
    if cq.distinct or cq.having is not None:
        raise UnsupportedQuery(f"{'DISTINCT' if cq.distinct else 'HAVING'} is not supported in a triangle count")
    for c in cq.conditions:
        raise UnsupportedQuery(f"unsupported condition {c.sql}: only column = column equalities")
    for f in cq.filters:
        if f.op == "=":
            raise UnsupportedQuery(f"unsupported condition operand {f.literal_sql}: only columns may be compared")
        raise UnsupportedQuery(f"unsupported condition {f.sql}: only column = column equalities")

    return TriangleCount(*_oriented_cycle(cq), aggregate=aggregate, output_name=output.name, sql=cq.sql)


def as_triangle_listing(cq: ConjunctiveQuery) -> TriangleCount:
    """The full triangle query ``SELECT r.a, r.b, s.c FROM r JOIN s ... JOIN t ...`` (its rows, not
    their number: IVMε's listing, [L] Appendix E), or UnsupportedQuery saying why it is not one.
    Every SELECT item is a join column as written, and the three variables are all shown (a
    variable that is a tuple of columns, Appendix H.1's, by any of its columns).

    Also the triangles grouped by all three variables (``GROUP BY r.a, r.b, s.c`` with ``count(*)``,
    or ``SELECT DISTINCT r.a, r.b, s.c``): Theorem 21 enumerates exactly that, each distinct
    triangle with its multiplicity. A grouping by fewer (a count per node or per edge) is refused:
    one update can change Θ(N) groups' counts, so no materialized result keeps the update bound,
    and with free variables none does better ([L] Corollary 15)."""
    grouped = bool(cq.group_by or cq.group_computed or cq.aggregates)
    if cq.having is not None:
        raise UnsupportedQuery("HAVING is not supported in a triangle listing")
    if cq.group_computed or cq.derived:
        raise UnsupportedQuery("a triangle listing groups by the join columns as they are, and has no subquery")
    items = []
    for output in cq.outputs:
        if isinstance(output, GroupColumn) and output.computed is None:
            items.append(output)
        elif isinstance(output, Aggregate) and grouped:
            _triangle_aggregate(output)  # count(*), count(1) or sum(1): the triangle's multiplicity
            items.append(output)
        else:
            raise UnsupportedQuery("a triangle listing shows the join columns as they are, not expressions over them")
    if cq.projection is not None:
        raise UnsupportedQuery("a triangle listing shows the join columns as they are, not expressions over them")
    if len(cq.atoms) != 3:
        raise UnsupportedQuery(f"a triangle listing joins exactly 3 tables, this query joins {len(cq.atoms)}")
    for c in cq.conditions:
        raise UnsupportedQuery(f"unsupported condition {c.sql}: only column = column equalities")
    for f in cq.filters:
        raise UnsupportedQuery(f"unsupported condition {f.sql}: only column = column equalities")
    r, s, t = _oriented_cycle(cq)
    # each column of an atom -> the variable it carries there (of a tuple, its first: a column of all
    # three tables is in two of the atom's tuples, and either shows it); the query's join variables
    where: dict[tuple[str, str], str] = {}
    for atom in (r, s, t):
        for carrier, variable in zip(atom.columns, atom.variables):
            for column in (carrier.columns if isinstance(carrier, Packed) else (carrier,)):
                where.setdefault((atom.alias, column), variable)
    joined = {cq.atom(alias).variable(column) for alias, column in where}
    shown = tuple((o.name, MULTIPLICITY, "", "") if isinstance(o, Aggregate)
                  else (o.name, where[(o.column.alias, o.column.column)], o.column.alias, o.column.column) for o in items)
    if grouped and {cq.atom(c.alias).variable(c.column) for c in cq.group_by} != joined:
        raise UnsupportedQuery(
            "a triangle count grouped by fewer than its three join variables (per node, per edge) is not IVMε's: one "
            "update can change Θ(N) groups, and no bound below √N holds with free variables ([L] Corollary 15)",
            "group by all three (each triangle with its count), or let first-order maintain it")
    if not grouped and {item[1] for item in shown} != {"a", "b", "c"}:
        raise UnsupportedQuery("a triangle listing shows each of the three join variables (a column of each pair joined)")
    return TriangleCount(r, s, t, aggregate="count", output_name="count", sql=cq.sql, listing=shown, grouped=grouped)


@dataclass(frozen=True)
class _Pairs:
    """Three atoms' join variables by the atoms they occur in ([L] Appendix H's A_RS, A_ST, A_RT
    and A_RST), each group sorted by name."""

    between: dict[frozenset[str], tuple[str, ...]]  # {alias, alias} -> the variables of those two alone
    shared: tuple[str, ...]  # the variables of all three

    def of(self, x: Any, y: Any) -> tuple[str, ...]:
        return self.between.get(frozenset({x.alias, y.alias}), ())


def _pairs(cq: ConjunctiveQuery) -> _Pairs | None:
    """The join variables of three atoms grouped as the appendix groups them, or None when some
    column is not such a variable (one atom's alone, or two columns of one atom equated: a
    selection inside the atom)."""
    if len(cq.atoms) != 3 or cq.has_outer_join or any(len(set(a.variables)) != len(a.columns) for a in cq.atoms):
        return None
    between: dict[frozenset[str], list[str]] = {}
    shared = []
    for variable in cq.variables:
        where = frozenset(variable.aliases)
        if len(where) < 2:
            return None
        (shared if len(where) == 3 else between.setdefault(where, [])).append(variable.name)
    return _Pairs({k: tuple(sorted(v)) for k, v in between.items()}, tuple(sorted(shared)))


def _carrier(atom: Any, variables: tuple[str, ...]) -> Column:
    """The column of ``atom`` carrying the query's variable, or the tuple of its columns carrying
    several (a shape's packed variable: a pair of tables joined on several columns, or a variable
    of all three tables in each pair's tuple)."""
    columns = tuple(atom.columns[atom.variables.index(v)] for v in variables)
    return columns[0] if len(columns) == 1 else Packed(columns, variables)


def triangle_join(cq: ConjunctiveQuery) -> bool:
    """Whether three tables join as the triangle, each pair on columns of its own (one or several,
    and columns of all three besides): the 3R³ class."""
    try:
        _oriented_cycle(cq)
        return True
    except UnsupportedQuery:
        return False


def _oriented_cycle(cq: ConjunctiveQuery) -> tuple[Atom, Atom, Atom]:
    """The three atoms as R(A,B), S(B,C), T(C,A) in the order written, or UnsupportedQuery. Each of
    A, B, C is the variables of one pair of tables, with those of all three ([L] Appendix H.1: the
    3R³ class, the triangle's strategy over the tuples); one column each in the plain triangle."""
    pairs = _pairs(cq)
    if pairs is None:
        raise UnsupportedQuery(_NOT_TRIANGLE)
    r, s, t = cq.atoms
    a, b, c = pairs.of(t, r), pairs.of(r, s), pairs.of(s, t)
    if not (a and b and c):
        raise UnsupportedQuery(_NOT_TRIANGLE)
    a, b, c = (v + pairs.shared for v in (a, b, c))

    def oriented(relation: RelationName, atom: Any, first: tuple[str, ...], second: tuple[str, ...]) -> Atom:
        return Atom(relation, atom.table, atom.alias, _carrier(atom, first), _carrier(atom, second))

    return oriented("r", r, a, b), oriented("s", s, b, c), oriented("t", t, c, a)


def _triangle_aggregate(output: Output) -> TriangleAggregate:
    """count(*), count(1), count(join column) -> "count"; sum(1) -> "sum" (NULL over an empty join)."""
    if isinstance(output, Aggregate):
        if output.function == "count" and output.argument is None:
            return "count"
        if output.function == "sum" and output.argument == Const("1"):
            return "sum"
    written = output.sql if isinstance(output, Aggregate) else str(output.column)
    raise UnsupportedQuery(f"unsupported aggregate {written}: use count(*), count(1) or sum(1)")


# A_1..A_26: the variables are named a..z (an index of n−1 ≤ 25 columns; PostgreSQL allows 32)
MAX_LOOMIS_WHITNEY = 26


def as_loomis_whitney(cq: ConjunctiveQuery) -> LoomisWhitneyCount:
    """A bare count over a Loomis–Whitney join of degree n ≥ 4 ([L] Appendix F): n tables, n join
    variables, each table joining on n−1 of its columns, one for each variable but one, and each
    variable missing from exactly one table. Orientation: the tables in the order written are
    R_1..R_n, and A_(i−1) is the variable R_i misses, so that R_i is partitioned on A_i, the
    variable the next table misses. Or UnsupportedQuery saying why it is not one."""
    if cq.group_by or cq.group_computed or cq.projection is not None or cq.distinct or cq.having is not None:
        raise UnsupportedQuery("a Loomis-Whitney count is a bare count(*): no GROUP BY, DISTINCT or HAVING")
    if len(cq.outputs) != 1:
        raise UnsupportedQuery("the SELECT list must be a single count(*), count(1) or sum(1)")
    aggregate = _triangle_aggregate(cq.outputs[0])
    n = len(cq.atoms)
    if not 4 <= n <= MAX_LOOMIS_WHITNEY:
        raise UnsupportedQuery(f"a Loomis-Whitney count joins 4 to {MAX_LOOMIS_WHITNEY} tables, this query joins {n}")
    for c in cq.conditions:
        raise UnsupportedQuery(f"unsupported condition {c.sql}: only column = column equalities")
    for f in cq.filters:
        raise UnsupportedQuery(f"unsupported condition {f.sql}: only column = column equalities")
    shape = (f"not a Loomis-Whitney join: {n} tables over {n} join variables, each table joining on {n - 1} "
             "of its columns, one per variable, each variable missing from exactly one table")
    names = [v.name for v in cq.variables]
    if len(names) != n or cq.has_outer_join:
        raise UnsupportedQuery(shape)
    missing = []
    for atom in cq.atoms:
        if len(atom.columns) != n - 1 or len(set(atom.variables)) != n - 1:
            raise UnsupportedQuery(shape)
        missing += [v for v in names if v not in atom.variables]
    if sorted(missing) != sorted(names):
        raise UnsupportedQuery(shape)
    # A_(i-1) := the variable R_i misses (0-based: A[j] is the variable atom j+1 misses)
    letter = {missing[(j + 1) % n]: chr(ord("a") + j) for j in range(n)}
    relations = []
    for i, atom in enumerate(cq.atoms):
        by_letter = sorted((letter[v], c) for v, c in zip(atom.variables, atom.columns))
        relations.append(LwAtom(f"k{i + 1}", atom.table, atom.alias, tuple(c for _, c in by_letter),
                                tuple(v for v, _ in by_letter)))
    return LoomisWhitneyCount(tuple(relations), aggregate, cq.outputs[0].name, cq.sql)


def loomis_whitney(cq: ConjunctiveQuery) -> LoomisWhitneyCount | None:
    """The Loomis–Whitney count of degree n ≥ 4 (oriented as written), or None."""
    try:
        return as_loomis_whitney(cq)
    except UnsupportedQuery:
        return None


def _bare_path_count(cq: ConjunctiveQuery, tables: int) -> TriangleAggregate:
    """The aggregate of a bare count over ``tables`` tables joined by column equalities alone (the
    path counts' common ground), or UnsupportedQuery saying what else the query does."""
    what = f"a {tables}-path count"
    if cq.group_by or cq.group_computed or cq.projection is not None or cq.distinct or cq.having is not None:
        raise UnsupportedQuery(f"{what} is a bare count(*): no GROUP BY, DISTINCT or HAVING")
    if len(cq.outputs) != 1:
        raise UnsupportedQuery("the SELECT list must be a single count(*), count(1) or sum(1)")
    aggregate = _triangle_aggregate(cq.outputs[0])
    if len(cq.atoms) != tables:
        raise UnsupportedQuery(f"{what} joins {tables} tables, this query joins {len(cq.atoms)}")
    for c in (*cq.conditions, *cq.filters):
        raise UnsupportedQuery(f"unsupported condition {c.sql}: only column = column equalities")
    return aggregate


def _path_atom(relation: str, written: Any, letter: dict[str, str]) -> PathAtom:
    """A path count's relation: the written atom's join columns in the order of the path's letters."""
    by_letter = sorted((letter[v], c) for v, c in zip(written.variables, written.columns))
    return PathAtom(relation, written.table, written.alias, tuple(c for _, c in by_letter), tuple(v for v, _ in by_letter))


def as_four_path(cq: ConjunctiveQuery) -> FourPathCount:
    """A bare count over the 4-path join R(a)·S(a,b)·T(b,c)·U(c) ([L] Appendix G): four tables, three
    join variables each shared by two of them, two end tables joining on one column and two middle
    ones on two, in a path. Orientation: the end written first is R. Or UnsupportedQuery saying why
    it is not one."""
    aggregate = _bare_path_count(cq, 4)
    shape = ("not a 4-path join: R(a), S(a,b), T(b,c), U(c), each join column shared by exactly two "
             "tables, the two end tables joining on one column and the middle ones on two")
    joined = {v.name for v in cq.variables if len(v.columns) == 2}
    if cq.has_outer_join or len(cq.variables) != 3 or len(joined) != 3:
        raise UnsupportedQuery(shape)
    for atom in cq.atoms:
        if len(set(atom.variables)) != len(atom.columns) or len(atom.columns) not in (1, 2):
            raise UnsupportedQuery(shape)
    ends = [a for a in cq.atoms if len(a.columns) == 1]
    if len(ends) != 2:
        raise UnsupportedQuery(shape)
    r, u = ends
    (var_a,) = r.variables
    (var_c,) = u.variables
    middles = [a for a in cq.atoms if len(a.columns) == 2]
    s = next((a for a in middles if var_a in a.variables), None)
    t = next((a for a in middles if var_c in a.variables and a is not s), None)
    if s is None or t is None or var_a in t.variables or var_c in s.variables:
        raise UnsupportedQuery(shape)
    (var_b,) = set(s.variables) - {var_a}
    if set(t.variables) != {var_b, var_c}:
        raise UnsupportedQuery(shape)
    letter = {var_a: "a", var_b: "b", var_c: "c"}
    atoms = tuple(_path_atom(k, written, letter) for k, written in zip("rstu", (r, s, t, u)))
    return FourPathCount(atoms, aggregate, cq.outputs[0].name, cq.sql)


def four_path(cq: ConjunctiveQuery) -> FourPathCount | None:
    """The 4-path count (R the end written first), or None."""
    try:
        return as_four_path(cq)
    except UnsupportedQuery:
        return None


def as_three_path(cq: ConjunctiveQuery) -> ThreePathCount:
    """A bare count over the 3-path join R(b)·S(b,c)·T(c), the 3R² class with one join column per
    pair ([L] Appendix H.3): three tables, two join variables each shared by the middle table and
    one end, the ends sharing none. Orientation: the end written first is R. Or UnsupportedQuery
    saying why it is not one."""
    aggregate = _bare_path_count(cq, 3)
    shape = ("not a 3-path join: R(b), S(b,c), T(c), the middle table joining each end table on columns "
             "of its own, the end tables sharing none but columns of all three")
    pairs = _pairs(cq)
    if pairs is None:
        raise UnsupportedQuery(shape)
    x, y, z = cq.atoms
    # the middle table is the one both nonempty pairs join (A_RS and A_ST, [L] Appendix H.3)
    middles = [m for m, (p, q) in ((x, (y, z)), (y, (x, z)), (z, (x, y))) if pairs.of(m, p) and pairs.of(m, q)]
    if len(middles) != 1:
        raise UnsupportedQuery(shape)
    (s,) = middles
    r, t = (a for a in cq.atoms if a is not s)
    if pairs.of(r, t):
        raise UnsupportedQuery(shape)
    b, c = pairs.of(r, s) + pairs.shared, pairs.of(s, t) + pairs.shared
    atoms = (PathAtom("r", r.table, r.alias, (_carrier(r, b),), ("b",)),
             PathAtom("s", s.table, s.alias, (_carrier(s, b), _carrier(s, c)), ("b", "c")),
             PathAtom("t", t.table, t.alias, (_carrier(t, c),), ("c",)))
    return ThreePathCount(atoms, aggregate, cq.outputs[0].name, cq.sql)


def three_path(cq: ConjunctiveQuery) -> ThreePathCount | None:
    """The 3-path count (R the end written first), or None."""
    try:
        return as_three_path(cq)
    except UnsupportedQuery:
        return None


def triangle(cq: ConjunctiveQuery) -> TriangleCount | None:
    """The IVMε triangle count or listing (R, S, T oriented as written), or None."""
    for recogniser in (as_triangle, as_triangle_listing):
        try:
            return recogniser(cq)
        except UnsupportedQuery:
            pass
    return None


def _join_degrees(cq: ConjunctiveQuery) -> tuple[list[int], Counter[str], int] | None:
    """Per atom its number of join variables, per join variable its number of atoms, and the
    number of connected components; None for an empty query."""
    graph = hypergraph(cq)
    if not graph.edges:
        return None
    per_atom = [len(e.join_variables) for e in graph.edges]
    per_variable = Counter(v for e in graph.edges for v in e.join_variables)
    return per_atom, per_variable, len(graph.components())


def cycle(cq: ConjunctiveQuery) -> int | None:
    """k for a k-cycle (k >= 3): R1(x1,x2), R2(x2,x3), ..., Rk(xk,x1), each atom joining on two
    variables and each join variable shared by two atoms, all connected."""
    degrees = _join_degrees(cq)
    if degrees is None:
        return None
    per_atom, per_variable, components = degrees
    k = len(per_atom)
    if k >= 3 and components == 1 and all(d == 2 for d in per_atom) and all(d == 2 for d in per_variable.values()):
        return k
    return None


def path(cq: ConjunctiveQuery) -> int | None:
    """The number of atoms k >= 2 of a path R1(x0,x1), R2(x1,x2), ..., Rk(x(k-1),xk): the two end
    atoms join on one variable, the inner ones on two, each join variable shared by two atoms."""
    degrees = _join_degrees(cq)
    if degrees is None:
        return None
    per_atom, per_variable, components = degrees
    k = len(per_atom)
    if (
        k >= 2
        and components == 1
        and sorted(per_atom) == [1, 1] + [2] * (k - 2)
        and all(d == 2 for d in per_variable.values())
    ):
        return k
    return None


def star(cq: ConjunctiveQuery) -> int | None:
    """The number of atoms k >= 2 when they all join on one single variable (R1(x,y1), ..., Rk(x,yk))."""
    degrees = _join_degrees(cq)
    if degrees is None:
        return None
    per_atom, per_variable, _ = degrees
    k = len(per_atom)
    if k >= 2 and len(per_variable) == 1 and all(d == 1 for d in per_atom):
        return k
    return None
