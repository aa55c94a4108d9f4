"""The join tree of a sample view, rooted at every atom in turn (§4.3 of the paper).

Atoms are numbered in the order written (0..n-1), the edges of the (unrooted) GYO join tree
0..n-2, each with its key: the join variables its two atoms share. Rooting the tree at atom r gives
tree r, whose node for atom a is ``r * n + a``. Tree r serves the batches of rows inserted into
atom r; tree 0's root also keeps buckets (under a virtual parent with one key, 0), which makes the
whole join one array J0 for uniform draws on demand and for the refill after a delete.
"""

from __future__ import annotations

from dataclasses import dataclass

from pgivm.query.analysis import join_tree
from pgivm.query.cq import ConjunctiveQuery


@dataclass(frozen=True)
class Edge:
    number: int
    atoms: tuple[int, int]  # (child, parent) in the GYO tree; the direction differs per rooting
    key: tuple[str, ...]  # the join variables the two atoms share, sorted


@dataclass(frozen=True)
class Node:
    node: int
    tree: int
    atom: int
    parent: int | None
    pedge: int | None
    children: tuple[int, ...]
    cedges: tuple[int, ...]

    @property
    def bucketed(self) -> bool:
        """Buckets are kept below every non-root node, and at tree 0's root (J0)."""
        return self.parent is not None or self.tree == 0


@dataclass(frozen=True)
class Layout:
    aliases: tuple[str, ...]
    edges: tuple[Edge, ...]
    nodes: tuple[Node, ...]

    @property
    def atoms(self) -> int:
        return len(self.aliases)

    def edges_of(self, atom: int) -> list[Edge]:
        return [e for e in self.edges if atom in e.atoms]

    def tree_lines(self, root: int) -> list[str]:
        """Tree ``root`` drawn with its keys, for ``pgivm explain``."""
        by_id = {n.node: n for n in self.nodes}
        lines: list[str] = []

        def walk(node: Node, depth: int) -> None:
            key = ""
            if node.pedge is not None:
                key = f" on ({', '.join(self.edges[node.pedge].key)})"
            lines.append(f"{'  ' * depth}{self.aliases[node.atom]}{key}")
            for child in node.children:
                walk(by_id[child], depth + 1)

        walk(by_id[root * self.atoms + root], 0)
        return lines


def layout(cq: ConjunctiveQuery) -> Layout | None:
    """The trees of an acyclic, connected query; None if the query is cyclic or not connected."""
    tree = join_tree(cq)
    if tree is None or not tree.is_connected:
        return None
    aliases = tuple(a.alias for a in cq.atoms)
    joins = set(cq.join_variables)
    variables = {a.alias: set(a.variables) & joins for a in cq.atoms}
    edges = []
    for child in aliases:
        parent = tree.parent.get(child)
        if parent is None:
            continue
        key = tuple(sorted(variables[child] & variables[parent]))
        edges.append(Edge(len(edges), (aliases.index(child), aliases.index(parent)), key))
    n = len(aliases)
    neighbours: dict[int, list[tuple[int, int]]] = {a: [] for a in range(n)}
    for e in edges:
        x, y = e.atoms
        neighbours[x].append((y, e.number))
        neighbours[y].append((x, e.number))
    nodes: list[Node] = []
    for root in range(n):
        def visit(atom: int, parent: int | None, pedge: int | None) -> None:
            below = [(other, edge) for other, edge in sorted(neighbours[atom]) if other != parent]
            nodes.append(Node(root * n + atom, root, atom, None if parent is None else root * n + parent, pedge,
                              tuple(root * n + other for other, _ in below), tuple(edge for _, edge in below)))
            for other, edge in below:
                visit(other, atom, edge)
        visit(root, None, None)
    nodes.sort(key=lambda node: node.node)
    return Layout(aliases, tuple(edges), tuple(nodes))
