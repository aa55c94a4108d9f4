"""The join tree of a sample view, rooted at every node in turn (§4.3 of the paper), with the two
optimisations of §4.4.

Foreign keys: a join of atom i with atom j on all columns of a unique key of j's table matches each
row of i with at most one row of j, so the pair is kept as one relation R_i ⋈ R_j (a *unit*) with
no more rows than R_i. Merging repeats along chains (store_sales → customer → household
demographics), always into the side that determines the other, so a unit has one atom whose rows
determine all of its rows. A unit with one atom is the plain case. Units, not atoms, are the
nodes of the join tree; an inserted row of an atom becomes the new rows of its unit (none if its
partner rows have not arrived yet), each a logical insert.

Grouping: at a node with children, a unit row's weight depends only on its join keys, so rows
with the same keys are kept as one group with a padded frequency (Algorithms 10 and 11): a
change below moves groups, not rows. Grouping needs a column beyond the join keys (the paper's
e − ē ≠ ∅); otherwise every group would be one row.

Units are numbered by their first atom, edges of the (unrooted) GYO tree over units 0..m-2, each
with its key: the join variables the two units share. Rooting the tree at unit r gives tree r,
whose node for unit u is ``r * units + u``. Tree r serves the batches of rows inserted into unit
r; tree 0's root also keeps buckets (under a virtual parent with one key, 0), which makes the
whole join one array J0 for uniform draws on demand and for the refill after a delete.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pgivm.errors import PgivmError
from pgivm.query.analysis.decomposition import bag_tree, connected
from pgivm.query.cq import ConjunctiveQuery
from pgivm.query.model import TableRef


@dataclass(frozen=True)
class Unit:
    number: int
    atoms: tuple[int, ...]  # atoms in the order written
    variables: frozenset[str]  # every variable of its atoms
    joins: frozenset[str]  # those it shares with other units


@dataclass(frozen=True)
class Edge:
    number: int
    units: tuple[int, int]  # (child, parent) in the GYO tree; the direction differs per rooting
    key: tuple[str, ...]  # the join variables the two units share, sorted


@dataclass(frozen=True)
class Node:
    node: int
    tree: int
    unit: int
    parent: int | None
    pedge: int | None
    children: tuple[int, ...]
    cedges: tuple[int, ...]
    grouped: bool  # its buckets hold groups of rows with equal keys (§4.4), not rows

    @property
    def bucketed(self) -> bool:
        """Buckets are kept below every non-root node, and at tree 0's root (J0)."""
        return self.parent is not None or self.tree == 0


@dataclass(frozen=True)
class Layout:
    aliases: tuple[str, ...]
    units: tuple[Unit, ...]
    edges: tuple[Edge, ...]
    nodes: tuple[Node, ...]

    @property
    def atoms(self) -> int:
        return len(self.aliases)

    def unit_of(self, atom: int) -> Unit:
        return next(u for u in self.units if atom in u.atoms)

    def label(self, unit: int) -> str:
        return "+".join(self.aliases[a] for a in self.units[unit].atoms)

    @property
    def merges(self) -> str:
        """The units of more than one atom, as ``create --merge`` takes them ("none" if there are none)."""
        return ";".join(self.label(u.number) for u in self.units if len(u.atoms) > 1) or "none"

    def edges_of(self, unit: int) -> list[Edge]:
        return [e for e in self.edges if unit in e.units]

    def tree_lines(self, root: int) -> list[str]:
        """Tree ``root`` drawn with its keys, for ``pgivm explain``."""
        by_id = {n.node: n for n in self.nodes}
        lines: list[str] = []

        def walk(node: Node, depth: int) -> None:
            key = ""
            if node.pedge is not None:
                key = f" on ({', '.join(self.edges[node.pedge].key)})"
            grouped = " [grouped]" if node.grouped else ""
            lines.append(f"{'  ' * depth}{self.label(node.unit)}{key}{grouped}")
            for child in node.children:
                walk(by_id[child], depth + 1)

        walk(by_id[root * len(self.units) + root], 0)
        return lines


# --- which atoms merge (§4.4, foreign keys) ----------------------------------------------------------


def foreign_key_units(cq: ConjunctiveQuery, unique_keys: Mapping[TableRef, Sequence[Sequence[str]]]) -> list[list[int]]:
    """Atoms grouped along joins on a unique key of one side, each group with one atom whose rows
    determine all the others' (so a group never has more rows than that atom)."""
    joins = set(cq.join_variables)
    root = list(range(len(cq.atoms)))  # each atom's unit, named by the atom that determines it

    def unit(a: int) -> int:
        while root[a] != a:
            a = root[a]
        return a

    for i, left in enumerate(cq.atoms):
        for j, right in enumerate(cq.atoms):
            shared = set(left.variables) & set(right.variables) & joins
            if i == j or not shared or unit(i) == unit(j) or unit(j) != j:
                continue
            columns = {c for c, v in zip(right.columns, right.variables) if v in shared}
            if any(key and set(key) <= columns for key in unique_keys.get(right.table, ())):
                root[j] = unit(i)  # right's unit hangs under left's: each left row finds at most one
    groups: dict[int, list[int]] = {}
    for a in range(len(cq.atoms)):
        groups.setdefault(unit(a), []).append(a)
    return sorted(groups.values())


def parse_merges(cq: ConjunctiveQuery, text: str) -> list[list[int]]:
    """``a+b;c+d`` (aliases) as groups of atom numbers; every other atom is a unit of its own."""
    aliases = [a.alias for a in cq.atoms]
    seen: set[int] = set()
    groups: list[list[int]] = []
    for part in filter(None, (p.strip() for p in text.split(";"))):
        group = []
        for alias in (a.strip() for a in part.split("+")):
            if alias not in aliases:
                raise PgivmError(f"--merge: {alias!r} is not a table alias of the query",
                                 f"the aliases are {', '.join(aliases)}; write groups as a+b;c+d")
            if aliases.index(alias) in seen:
                raise PgivmError(f"--merge: {alias} is in two groups", "each alias may be merged once")
            seen.add(aliases.index(alias))
            group.append(aliases.index(alias))
        groups.append(sorted(group))
    groups += [[a] for a in range(len(aliases)) if a not in seen]
    return sorted(groups)


# --- the trees -------------------------------------------------------------------------------------


def layout(cq: ConjunctiveQuery, merges: Sequence[Sequence[int]] | None = None, grouping: bool = False) -> Layout | None:
    """The trees of an acyclic, connected query over its units (one per atom unless ``merges``
    says otherwise); None if the units are cyclic, not connected, or a unit's atoms do not join."""
    n = len(cq.atoms)
    groups = [tuple(sorted(g)) for g in (merges or [[a] for a in range(n)])]
    groups.sort()
    joins = set(cq.join_variables)
    variables = [set(a.variables) for a in cq.atoms]
    atom_joins = [frozenset(vs & joins) for vs in variables]
    if not all(connected(atom_joins, group) for group in groups):  # a unit's atoms must join among themselves
        return None
    unit_vars = [frozenset().union(*(variables[a] for a in g)) for g in groups]
    shared, tree = bag_tree(atom_joins, groups)
    labels = [str(u) for u in range(len(groups))]
    if tree is None or not tree.is_connected:
        return None
    edges: list[Edge] = []
    for child in range(len(groups)):
        parent = tree.parent.get(labels[child])
        if parent is None:
            continue
        key = tuple(sorted(shared[child] & shared[int(parent)]))
        edges.append(Edge(len(edges), (child, int(parent)), key))
    units = tuple(Unit(u, groups[u], unit_vars[u], shared[u]) for u in range(len(groups)))
    m = len(units)
    neighbours: dict[int, list[tuple[int, int]]] = {u: [] for u in range(m)}
    for e in edges:
        x, y = e.units
        neighbours[x].append((y, e.number))
        neighbours[y].append((x, e.number))
    # Grouping pays when a unit has columns beyond the keys of its edges (the paper's e − ē ≠ ∅).
    extra = [bool(units[u].variables - set().union(*(set(e.key) for e in edges if u in e.units)))
             for u in range(m)]
    nodes: list[Node] = []
    for root in range(m):
        def visit(unit: int, parent: int | None, pedge: int | None) -> None:
            below = [(other, edge) for other, edge in sorted(neighbours[unit]) if other != parent]
            bucketed = parent is not None or root == 0
            nodes.append(Node(root * m + unit, root, unit, None if parent is None else root * m + parent, pedge,
                              tuple(root * m + other for other, _ in below), tuple(edge for _, edge in below),
                              grouping and bucketed and bool(below) and extra[unit]))
            for other, edge in below:
                visit(other, unit, edge)
        visit(root, None, None)
    nodes.sort(key=lambda node: node.node)
    return Layout(tuple(a.alias for a in cq.atoms), units, tuple(edges), tuple(nodes))
