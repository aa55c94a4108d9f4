"""α-acyclicity by GYO reduction, and the join tree it yields.

GYO (Graham; Yu and Özsoyoğlu) repeats two rules until nothing changes: drop a vertex that occurs
in one hyperedge only, and drop a hyperedge contained in another one (its *parent*, which keeps
everything the removed atom still shares with the rest). The query is α-acyclic exactly when
every hyperedge goes; the parents then form a join tree: for every variable, the atoms holding
it are connected in the tree (running intersection), which is what Yannakakis-style evaluation
and F-IVM's view trees need. Each round drops the lone vertices, then every ear it can, the
latest written first, each attached to the earliest written atom that contains it: the tree is
deterministic, and among equal candidates the root is the first atom written.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pgivm.query.analysis.hypergraph import hypergraph
from pgivm.query.cq import ConjunctiveQuery


@dataclass(frozen=True)
class JoinTree:
    """A join tree (a forest when the query is a cross product of several components).

    ``nodes`` are the aliases in the order written; ``parent`` maps every non-root alias to its
    parent; ``order`` is GYO's removal order, children before parents (a bottom-up order).
    """

    nodes: tuple[str, ...]
    roots: tuple[str, ...]
    parent: Mapping[str, str] = field(hash=False)
    order: tuple[str, ...]

    @property
    def root(self) -> str:
        """The root of a connected query's tree."""
        if len(self.roots) != 1:
            raise ValueError(f"a join forest of {len(self.roots)} trees has no single root")
        return self.roots[0]

    @property
    def is_connected(self) -> bool:
        return len(self.roots) == 1

    def children(self, alias: str) -> tuple[str, ...]:
        """The atoms whose parent is ``alias``, in the order written."""
        return tuple(node for node in self.nodes if self.parent.get(node) == alias)

    def edges(self) -> list[tuple[str, str]]:
        """(parent, child) pairs, children in the order written."""
        return [(self.parent[node], node) for node in self.nodes if node in self.parent]


def join_tree(cq: ConjunctiveQuery) -> JoinTree | None:
    """The GYO join tree of the query, or None when the query is cyclic."""
    return gyo([(edge.alias, edge.variables) for edge in hypergraph(cq).edges])


def gyo(edges: Sequence[tuple[str, Iterable[str]]]) -> JoinTree | None:
    """GYO over any named hyperedges (atoms, or groups of atoms merged into one), in the order
    given; None when they form a cycle."""
    remaining = {alias: set(variables) for alias, variables in edges}
    parent: dict[str, str] = {}
    roots: list[str] = []
    order: list[str] = []
    while remaining:
        counts = Counter(v for variables in remaining.values() for v in variables)
        for variables in remaining.values():
            variables -= {v for v in variables if counts[v] == 1}
        removed = []
        for alias in reversed(list(remaining)):  # latest written first, so ties root the tree early
            variables = remaining[alias]
            if not variables:  # shares nothing with any atom left: the last atom of its component
                roots.append(alias)
            else:
                host = next((o for o, vs in remaining.items() if o != alias and variables <= vs), None)
                if host is None:
                    continue
                parent[alias] = host  # the earliest written atom containing it
            removed.append(alias)
            del remaining[alias]
        if not removed:
            return None  # no ear left: the remaining atoms form a cycle
        order += removed
    nodes = tuple(alias for alias, _ in edges)
    roots.sort(key=nodes.index)
    return JoinTree(nodes=nodes, roots=tuple(roots), parent=parent, order=tuple(order))


def is_acyclic(cq: ConjunctiveQuery) -> bool:
    return join_tree(cq) is not None
