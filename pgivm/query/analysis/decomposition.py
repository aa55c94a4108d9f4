"""A hypertree decomposition of a cyclic join, for sampling it (Reservoir Sampling over Joins, §5).

The paper samples any join through a generalized hypertree decomposition (GHD): each bag's
sub-join is kept as one relation, maintained from its own delta join, and the bags form an acyclic
join whose results are the query's, one to one. Its cost is O(N^w log N + k log N log(N/k)) with w
the decomposition's fractional hypertree width: the largest fractional edge cover number ρ* of a
bag (the AGM bound: a bag's sub-join has at most N^ρ* rows).

We use the decompositions whose bags partition the atoms (each atom in exactly one bag, a bag's
variables those of its atoms), which is what the sample system's merged units store: a bag is a
unit. Among the partitions into connected bags whose bag hypergraph is acyclic and connected, the
chosen one has the smallest width, then the fewest atoms in its largest bag, then the most bags
(smaller sub-joins: a 4-cycle as two 2-paths, rather than an edge and a 3-path, or one bag holding
every result), then the order written. The search enumerates every
partition, so it is for small queries: at most ``MAX_ATOMS`` atoms (Bell(7) = 877 partitions).

ρ* is computed exactly by its dual, the fractional vertex packing max Σ y_v subject to Σ_{v ∈ e}
y_v ≤ 1 for every atom e of the bag, y ≥ 0, solved by the simplex method over fractions (the
origin is feasible, so no first phase; Bland's rule, so no cycling). Only join variables count:
a column private to one atom is the same factor in every decomposition.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from pgivm.query.analysis.acyclicity import JoinTree, gyo
from pgivm.query.analysis.hypergraph import hypergraph
from pgivm.query.cq import ConjunctiveQuery

MAX_ATOMS = 7


@dataclass(frozen=True)
class Decomposition:
    """Bags as groups of atom numbers (in the order written), each bag's ρ*, and the width."""

    bags: tuple[tuple[int, ...], ...]
    covers: tuple[Fraction, ...]

    @property
    def width(self) -> Fraction:
        return max(self.covers)

    def describe(self, aliases: Sequence[str]) -> str:
        bags = "; ".join(f"{'+'.join(aliases[a] for a in bag)} (ρ* {_text(c)})" for bag, c in zip(self.bags, self.covers))
        return f"bags {bags}; fractional hypertree width {_text(self.width)}"


def _text(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def fractional_edge_cover(edges: Sequence[frozenset[str]]) -> Fraction:
    """ρ* of the hypergraph ``edges`` (every vertex in some edge), as the optimum of its dual."""
    vertices = sorted(set().union(*edges)) if edges else []
    if not vertices:
        return Fraction(0)
    n, m = len(vertices), len(edges)
    # Tableau rows: one per edge, Σ_{v ∈ e} y_v + s_e = 1; columns y_0..y_{n-1}, s_0..s_{m-1}, rhs.
    rows = [[Fraction(int(v in e)) for v in vertices] + [Fraction(int(i == j)) for j in range(m)] + [Fraction(1)]
            for i, e in enumerate(edges)]
    objective = [Fraction(-1)] * n + [Fraction(0)] * (m + 1)  # maximise Σ y: reduced costs -1
    basis = [n + i for i in range(m)]
    while True:
        entering = next((j for j in range(n + m) if objective[j] < 0), None)  # Bland: lowest index
        if entering is None:
            return objective[-1]
        ratios = [(row[-1] / row[entering], basis[i], i) for i, row in enumerate(rows) if row[entering] > 0]
        if not ratios:  # unbounded: a vertex in no edge, excluded above
            raise ValueError("fractional vertex packing is unbounded")
        _, _, leaving = min(ratios)
        pivot = rows[leaving][entering]
        rows[leaving] = [x / pivot for x in rows[leaving]]
        for i, row in enumerate(rows):
            if i != leaving and row[entering] != 0:
                factor = row[entering]
                rows[i] = [x - factor * y for x, y in zip(row, rows[leaving])]
        factor = objective[entering]
        objective = [x - factor * y for x, y in zip(objective, rows[leaving])]
        basis[leaving] = entering


def _partitions(blocks: Sequence[tuple[int, ...]]) -> Iterator[list[tuple[int, ...]]]:
    """Every partition of ``blocks`` into groups, each group the union of its blocks."""
    if not blocks:
        yield []
        return
    first, rest = blocks[0], blocks[1:]
    for partition in _partitions(rest):
        yield [first, *partition]
        for i in range(len(partition)):
            yield [*partition[:i], tuple(sorted(first + partition[i])), *partition[i + 1:]]


def decompose(cq: ConjunctiveQuery, blocks: Sequence[Sequence[int]] | None = None) -> Decomposition | None:
    """The decomposition described in the module's docstring, its bags unions of ``blocks`` (atoms
    kept together, e.g. merged along foreign keys; by default every atom alone); None when the join
    is acyclic over the blocks already, not connected, or has more than ``MAX_ATOMS`` atoms."""
    graph = hypergraph(cq)
    joins = [e.join_variables for e in graph.edges]
    start = [tuple(sorted(b)) for b in (blocks or [[a] for a in range(len(joins))])]
    if len(joins) > MAX_ATOMS or len(graph.components()) != 1 or _bags_acyclic(joins, start):
        return None
    best: tuple[tuple[Fraction, int, int, list[tuple[int, ...]]], list[Fraction]] | None = None
    for bags in _partitions(sorted(start)):
        bags.sort()
        if not all(connected(joins, bag) for bag in bags) or not _bags_acyclic(joins, bags):
            continue
        covers = [_cover(tuple(joins[a] for a in bag)) for bag in bags]
        key = (max(covers), max(map(len, bags)), -len(bags), bags)
        if best is None or key < best[0]:
            best = (key, covers)
    if best is None:
        return None
    return Decomposition(tuple(best[0][3]), tuple(best[1]))


def of_bags(cq: ConjunctiveQuery, bags: Sequence[Sequence[int]]) -> Decomposition:
    """The given bags (a layout's units) with their ρ*, to show them."""
    joins = [e.join_variables for e in hypergraph(cq).edges]
    groups = tuple(tuple(sorted(bag)) for bag in bags)
    return Decomposition(groups, tuple(_cover(tuple(joins[a] for a in bag)) for bag in groups))


@lru_cache(maxsize=512)
def _cover(edges: tuple[frozenset[str], ...]) -> Fraction:
    return fractional_edge_cover([e for e in edges if e])


def connected(joins: Sequence[frozenset[str]], group: Sequence[int]) -> bool:
    """The atoms of ``group`` (numbers into ``joins``, each atom's join variables) all join among
    themselves: no cross product inside the group."""
    linked, frontier = {group[0]}, [group[0]]
    while frontier:
        a = frontier.pop()
        for b in group:
            if b not in linked and joins[a] & joins[b]:
                linked.add(b)
                frontier.append(b)
    return len(linked) == len(group)


def bag_tree(joins: Sequence[frozenset[str]], bags: Sequence[Sequence[int]]) -> tuple[list[frozenset[str]], JoinTree | None]:
    """Each bag's variables shared with another bag (its atoms' join variables), and GYO's join
    tree over the bags named "0", "1", ... (None when the bags form a cycle)."""
    variables = [frozenset().union(*(joins[a] for a in bag)) for bag in bags]
    shared = [frozenset(v for v in vs if sum(v in other for other in variables) > 1) for vs in variables]
    return shared, gyo([(str(i), shared[i]) for i in range(len(bags))])


def _bags_acyclic(joins: Sequence[frozenset[str]], bags: Sequence[tuple[int, ...]]) -> bool:
    """The bags' hypergraph is acyclic and connected."""
    tree = bag_tree(joins, bags)[1]
    return tree is not None and tree.is_connected


def decomposition(cq: ConjunctiveQuery) -> Decomposition | None:
    """The analysis pass: a decomposition of a cyclic join of single atoms (None if acyclic)."""
    return decompose(cq)
