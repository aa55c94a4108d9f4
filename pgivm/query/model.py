"""The logical model of a view definition: what pgivm maintains, independent of SQL text.

A triangle count joins three binary relations in a cycle,

    Q() = Σ_{a,b,c} R(a,b) · S(b,c) · T(c,a)

where each of R, S, T is an *atom*: a base table and the two of its columns that carry the
join variables. The graph form ``e x JOIN e y ... JOIN e z ...`` is the same shape with one
table behind all three atoms (a self-join).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

RelationName = Literal["r", "s", "t"]
Aggregate = Literal["count", "sum"]
# A grouped triangle listing's item that shows each triangle's multiplicity (its count(*)), where
# the others show a variable ("a", "b" or "c")
MULTIPLICITY = "mult"

# The cyclic schema R(A,B), S(B,C), T(C,A): each relation's two variables, in order.
VARIABLES: dict[RelationName, tuple[str, str]] = {"r": ("a", "b"), "s": ("b", "c"), "t": ("c", "a")}


@dataclass(frozen=True)
class TableRef:
    """A base table as PostgreSQL names it (identifiers already case-folded)."""

    name: str
    schema: str | None = None

    def __str__(self) -> str:
        return f"{self.schema}.{self.name}" if self.schema else self.name


@dataclass(frozen=True)
class Packed:
    """Several join columns of one atom that carry one variable of a shape together: a tuple of
    the query's variables (Kara et al., long version, Appendix H: a pair of relations joined on
    several columns is partitioned on the tuple, Definition 40; a variable of all three relations
    goes into each pair's tuple). pgivm keeps the tuple as one value of a composite type made in
    the view's state schema (``pgivm.query.resolve.pack_type``)."""

    columns: tuple[str, ...]  # the atom's columns, in the order of ``components``
    components: tuple[str, ...]  # the query's variables they carry (cq variable names)

    def __str__(self) -> str:
        return f"({', '.join(self.columns)})"


# What carries one variable of a shape in an atom: a column, or a tuple of them
Column = str | Packed


def base_columns(columns: tuple[Column, ...]) -> tuple[str, ...]:
    """The base columns behind a shape atom's columns, each once, packed ones unpacked."""
    flat: dict[str, None] = {}
    for column in columns:
        flat.update(dict.fromkeys(column.columns if isinstance(column, Packed) else (column,)))
    return tuple(flat)


@dataclass(frozen=True)
class Atom:
    """One relation of the cyclic join, e.g. R(A,B) read from ``r.a`` and ``r.b``."""

    relation: RelationName
    table: TableRef
    alias: str
    first: Column  # column holding the relation's first variable (A for R, B for S, C for T)
    second: Column  # column holding its second variable

    @property
    def variables(self) -> tuple[str, str]:
        return VARIABLES[self.relation]

    @property
    def columns(self) -> tuple[Column, Column]:
        """The join columns in the order of the variables (as the other shapes' atoms say it)."""
        return (self.first, self.second)


@dataclass(frozen=True)
class TriangleCount:
    """``SELECT count(*) FROM R ⋈ S ⋈ T`` over a cycle of three binary equi-joins (or, with
    ``listing``, the join's rows: ``SELECT r.a, r.b, s.c FROM ...``)."""

    r: Atom
    s: Atom
    t: Atom
    aggregate: Aggregate  # "sum" for sum(1), which is NULL rather than 0 over an empty join
    output_name: str
    sql: str
    # The full triangle query instead of its count (IVMε's listing, [L] Appendix E): each SELECT
    # item's name, the variable ("a", "b" or "c") it shows and the column it reads (alias, column),
    # in order; () for the count.
    listing: tuple[tuple[str, str, str, str], ...] = ()
    # grouped by the three variables (GROUP BY or DISTINCT): each distinct triangle once, its
    # multiplicity shown by the items whose variable is MULTIPLICITY (count(*), sum(1))
    grouped: bool = False

    @property
    def packed(self) -> bool:
        """Whether a variable is a tuple of columns (``Packed``): only IVMε's plan keeps those."""
        return any(isinstance(c, Packed) for a in self.atoms for c in a.columns)

    @property
    def atoms(self) -> tuple[Atom, Atom, Atom]:
        return (self.r, self.s, self.t)

    @property
    def tables(self) -> list[TableRef]:
        """The distinct base tables, in R, S, T order."""
        seen: list[TableRef] = []
        for atom in self.atoms:
            if atom.table not in seen:
                seen.append(atom.table)
        return seen

    def atoms_of(self, table: TableRef) -> list[Atom]:
        """The atoms a change to ``table`` updates, in the order they must be applied."""
        return [atom for atom in self.atoms if atom.table == table]

    @property
    def is_self_join(self) -> bool:
        return len(self.tables) < 3


@dataclass(frozen=True)
class LwAtom:
    """One relation R_i of a Loomis–Whitney count: a base table and its n−1 join columns, in the
    order of the variables they carry (``variables``, letters of A_1..A_n, each but the one R_i misses)."""

    relation: str  # "k1" .. "kn": names the relation's state (k1_heavy, apply_k1, ...)
    table: TableRef
    alias: str
    columns: tuple[str, ...]
    variables: tuple[str, ...]

    @property
    def index(self) -> int:
        """i − 1 for R_i: its place in the cycle (0-based)."""
        return int(self.relation[1:]) - 1


@dataclass(frozen=True)
class LoomisWhitneyCount:
    """``SELECT count(*)`` over a Loomis–Whitney join of degree n ≥ 4 (Kara et al., long version,
    Appendix F): n relations of arity n−1, R_i over every variable but A_(i−1) (indices mod n), each
    partitioned on A_i. The triangle is degree 3 (``TriangleCount``)."""

    relations: tuple[LwAtom, ...]
    aggregate: Aggregate
    output_name: str
    sql: str

    @property
    def atoms(self) -> tuple[LwAtom, ...]:
        return self.relations

    @property
    def degree(self) -> int:
        return len(self.relations)

    @property
    def variables(self) -> tuple[str, ...]:
        """A_1..A_n as letters a, b, c, ..."""
        return tuple(chr(ord("a") + j) for j in range(self.degree))

    @property
    def tables(self) -> list[TableRef]:
        return list(dict.fromkeys(atom.table for atom in self.relations))

    def atoms_of(self, table: TableRef) -> list[LwAtom]:
        """The relations a change to ``table`` updates, in the order they must be applied."""
        return [atom for atom in self.relations if atom.table == table]

    @property
    def is_self_join(self) -> bool:
        return len(self.tables) < self.degree


@dataclass(frozen=True)
class PathAtom:
    """One relation of a path count: a base table and its join columns, in the order of the
    variables they carry (``variables``: R(a), S(a, b), T(b, c), U(c) for the 4-path; R(b),
    S(b, c), T(c) for the 3-path)."""

    relation: str  # "r", "s", "t", "u": names the relation's state (s_a_degree, apply_s, ...)
    table: TableRef
    alias: str
    columns: tuple[Column, ...]
    variables: tuple[str, ...]


@dataclass(frozen=True)
class _PathCount:
    """A bare count over a path of relations (the 3-path and 4-path counts): the atoms in path
    order, each with its join columns under the path's variables."""

    relations: tuple[PathAtom, ...]
    aggregate: Aggregate
    output_name: str
    sql: str

    @property
    def atoms(self) -> tuple[PathAtom, ...]:
        return self.relations

    @property
    def tables(self) -> list[TableRef]:
        return list(dict.fromkeys(atom.table for atom in self.relations))

    def atoms_of(self, table: TableRef) -> list[PathAtom]:
        """The relations a change to ``table`` updates, in the order they must be applied."""
        return [atom for atom in self.relations if atom.table == table]

    @property
    def is_self_join(self) -> bool:
        return len(self.tables) < len(self.relations)

    @property
    def packed(self) -> bool:
        """Whether a variable is a tuple of columns (``Packed``)."""
        return any(isinstance(c, Packed) for a in self.relations for c in a.columns)


@dataclass(frozen=True)
class FourPathCount(_PathCount):
    """``SELECT count(*)`` over the 4-path join Σ R(a)·S(a,b)·T(b,c)·U(c) (Kara et al., long
    version, Appendix G): two end relations joining on one column each, two middle ones on two.
    Columns no join reads are aggregated away (the graph form ``e e1 JOIN e e2 ON e1.dst = e2.src
    ...`` over one edge table counts the walks of four edges)."""


@dataclass(frozen=True)
class ThreePathCount(_PathCount):
    """``SELECT count(*)`` over the 3-path join Σ R(b)·S(b,c)·T(c), the 3R² class of counts over
    three relations (Kara et al., long version, Appendix H.3): two ends joining the middle on one
    column each, the ends sharing none. Columns no join reads are aggregated away (over one edge
    table, the walks of three edges)."""
