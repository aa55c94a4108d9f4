"""The view tree τ(ω) of F-IVM (§3 of the paper) and the views to materialize, μ (its Figure 5).

Each variable X of the order gets a view V@X over its children (the views of the variables below
it and the leaf views of the atoms hanging at X):

    V@X[keys] = ⊕_X ( child_1 ⊗ … ⊗ child_k )      (X bound: joined on X and summed away)
    V@X[keys] =       child_1 ⊗ … ⊗ child_k        (X free: X stays a key)

with keys = the children's keys without X when X is bound; this is dep(X) plus the free variables
below. A leaf view is its atom with the local variables summed away (lifted at the leaf). When a
free X has a single child with the same keys, V@X *is* that child and is not repeated (§4: "store
only the top one").

For a listing (a join without aggregates) the payloads are factorized relations (§7.3): each
variable view also keeps W@X[keys, X] = child_1 ⊗ … ⊗ child_k before X is summed away, each leaf
keeps the atom's rows (its list) beside their counts, and the result is enumerated top-down from
the root through W and the lists.

μ (Figure 5, transcribed in the notes §8.1): the root is stored; any other view is stored only if
a sibling is defined over an updatable atom, since it is then joined with that sibling's delta.
Views that are not stored are never read: their deltas are computed on the way up and dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from pgivm.query.cq import ConjunctiveQuery
from pgivm.systems.fivm.order import VariableOrder, atom_variables, order_variables


@dataclass(eq=False)
class View:
    name: str  # its table in the state schema
    variable: str | None  # the order variable of a variable view; None for a leaf
    atom: str | None  # the atom of a leaf view
    keys: tuple[str, ...]  # key variables, deepest first (the variable the parent joins on leads)
    children: list[View] = field(default_factory=list)
    parent: View | None = None
    rels: frozenset[str] = frozenset()  # the atoms below
    lifted: tuple[str, ...] = ()  # variables summed away at this view (X, or the leaf's local ones)
    marginalized: frozenset[str] = frozenset()  # every variable summed away at or below this view
    materialized: bool = False
    listing: bool = False  # a listing's view: W@X beside V@X, or the leaf's list beside its counts

    @property
    def is_leaf(self) -> bool:
        return self.atom is not None

    @property
    def w_keys(self) -> tuple[str, ...]:
        """The keys of W@X (a listing's view before X is summed away): dep(X) and X."""
        assert self.variable is not None
        return self.keys + (self.variable,)

    def walk(self) -> Iterator[View]:
        """Bottom-up: children before their parent."""
        for child in self.children:
            yield from child.walk()
        yield self

    def path_up(self) -> list[View]:
        """This view and its ancestors, up to the root."""
        out, node = [], self
        while node is not None:
            out.append(node)
            node = node.parent
        return out

    def siblings(self) -> list[View]:
        return [c for c in self.parent.children if c is not self] if self.parent else []

    def describe(self) -> str:
        if self.is_leaf:
            return f"leaf {self.atom}"
        return f"@{self.variable}"


@dataclass(frozen=True)
class ViewTree:
    root: View
    order: VariableOrder
    updatable: frozenset[str]  # atoms whose table may change
    listing: bool

    def views(self) -> list[View]:
        return list(self.root.walk())

    def leaf(self, alias: str) -> View:
        return next(v for v in self.root.walk() if v.atom == alias)

    def stored(self) -> list[View]:
        return [v for v in self.root.walk() if v.materialized]


def _table_name(prefix: str, text: str, taken: set[str]) -> str:
    base = f"{prefix}_{re.sub(r'[^a-z0-9]+', '_', text.lower()).strip('_')}"[:40]
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    taken.add(name)
    return name


def build(cq: ConjunctiveQuery, order: VariableOrder, static: frozenset[str] = frozenset()) -> ViewTree:
    """τ(ω) for the query and its order, with μ applied for the atoms not in ``static``."""
    wanted = order_variables(cq)
    free = set(cq.free)
    listing = cq.is_listing
    taken: set[str] = set()

    def sort_keys(variables: set[str]) -> tuple[str, ...]:
        return tuple(sorted(variables, key=lambda v: (-order.depth[v], v)))

    def leaf(alias: str) -> View:
        variables = atom_variables(cq, cq.atom(alias))
        keys = set(variables) & wanted
        local = tuple(dict.fromkeys(v for v in variables if v not in wanted and v not in free))
        return View(_table_name("leaf", alias, taken), None, alias, sort_keys(keys), rels=frozenset({alias}),
                    lifted=() if listing else local, marginalized=frozenset(() if listing else local),
                    listing=listing)

    def node(variable: str) -> View:
        children = [node(c) for c in order.children[variable]] + [leaf(a) for a in order.atoms_at[variable]]
        bound = variable not in free
        keys = set().union(*(set(c.keys) for c in children)) - ({variable} if bound else set())
        if not bound and len(children) == 1 and set(children[0].keys) == keys:
            return children[0]  # identical to its only child: stored once
        view = View(_table_name("at", variable, taken), variable, None, sort_keys(keys), children,
                    rels=frozenset().union(*(c.rels for c in children)),
                    lifted=(variable,) if bound else (),
                    marginalized=frozenset().union(*(c.marginalized for c in children)) | ({variable} if bound else set()),
                    listing=listing)
        for child in children:
            child.parent = view
        return view

    if order.roots:
        (root_variable,) = order.roots
        root = node(root_variable)
    else:
        (alias,) = order.top_atoms
        root = leaf(alias)
    updatable = frozenset(a.alias for a in cq.atoms if a.alias not in static)
    _materialize(root, updatable, listing)
    return ViewTree(root, order, updatable, listing)


def _materialize(root: View, updatable: frozenset[str], everything: bool) -> None:
    """μ: the root, and each view with a sibling over an updatable atom (a listing keeps all)."""
    for view in root.walk():
        view.materialized = everything or view.parent is None or any(
            sibling.rels & updatable for sibling in view.siblings())
