"""The variable order of F-IVM (Definition 3.1 of the paper): a tree over the query's variables in
which each atom's variables lie on one root-to-leaf path, atoms hanging under their lowest variable.

Only *order variables* get a node: join variables and GROUP BY (free) variables. A variable local
to one atom and summed away is marginalized at that atom's leaf view directly, which is the
paper's "chain compression" (§3.2: long chains of views each marginalizing one local variable are
composed into one view).

The order is chosen greedily and deterministically, so ``pgivm explain`` can say why: inside a
connected group of atoms, take a free variable while the group still has one (free variables on
top, so no free variable is ever summed below a bound one); among the candidates the one shared by
the most atoms of the group, ties broken by ``--order`` (a priority list) and then by name. Then
split the group's atoms into the components connected through the variables not yet placed, and
recurse. Any order built this way is valid (every atom stays inside the group of each variable it
contains until all its variables are placed); the greedy choice puts hubs like Housing's postcode
or Retailer's location at the root, as the paper's experiments do.

``dep(X)`` is the set of ancestors of X that some atom below X contains: the keys of X's view.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pgivm.errors import UnsupportedQuery
from pgivm.query.cq import Atom, Computed, ConjunctiveQuery, computed_in


@dataclass(frozen=True)
class VariableOrder:
    """``roots``: top variables (one for a connected query; none when no atom has an order
    variable); ``children``/``atoms_at`` what hangs under each variable; ``top_atoms`` atoms with no
    order variable at all (a single-table query without GROUP BY)."""

    roots: tuple[str, ...]
    parent: dict[str, str | None] = field(hash=False)
    children: dict[str, tuple[str, ...]] = field(hash=False)
    atoms_at: dict[str, tuple[str, ...]] = field(hash=False)
    dep: dict[str, tuple[str, ...]] = field(hash=False)
    depth: dict[str, int] = field(hash=False)
    top_atoms: tuple[str, ...] = ()
    reasons: dict[str, str] = field(default_factory=dict, hash=False)

    def ancestors(self, variable: str) -> list[str]:
        out = []
        node = self.parent[variable]
        while node is not None:
            out.append(node)
            node = self.parent[node]
        return out

    def lines(self) -> list[str]:
        """The order as an indented tree, atoms in brackets, each variable with dep and reason."""
        out: list[str] = []

        def walk(variable: str, indent: int) -> None:
            dep = ", ".join(self.dep[variable]) or "-"
            atoms = " ".join(f"[{a}]" for a in self.atoms_at[variable])
            out.append(f"{'  ' * indent}{variable}  dep {{{dep}}}  {atoms}  ({self.reasons.get(variable, '')})")
            for child in self.children[variable]:
                walk(child, indent + 1)

        for root in self.roots:
            walk(root, 0)
        for atom in self.top_atoms:
            out.append(f"[{atom}]")
        return out


def computed_values(cq: ConjunctiveQuery) -> list[Computed]:
    """The aggregates' computed arguments (CASE, coalesce, FILTER, ...) and GROUP BY's expressions."""
    arguments = [c for a in cq.aggregates for c in computed_in(a.argument)]
    return list({c.variable: c for c in [*cq.group_computed, *arguments]}.values())


def home(computed: Computed) -> str | None:
    """The one atom whose row a computed value is evaluated on (its leaf view lifts or keys it),
    or None when it reads the columns of several atoms, or none."""
    aliases = {ref.column.alias for ref in computed.refs}
    return aliases.pop() if len(aliases) == 1 else None


def atom_variables(cq: ConjunctiveQuery, atom: Atom) -> tuple[str, ...]:
    """The atom's variables: its columns', then the computed values evaluated on its rows."""
    return atom.variables + tuple(c.variable for c in computed_values(cq) if home(c) == atom.alias)


def order_variables(cq: ConjunctiveQuery) -> set[str]:
    """Join variables and free variables: the ones that get a node of the order."""
    return set(cq.join_variables) | set(cq.free)


def choose(cq: ConjunctiveQuery, priority: tuple[str, ...] = ()) -> VariableOrder:
    """The variable order of a connected acyclic query (see the module docstring)."""
    wanted = order_variables(cq)
    free = set(cq.free)
    atom_vars = {a.alias: set(atom_variables(cq, a)) & wanted for a in cq.atoms}
    rank = {v: i for i, v in enumerate(priority)}
    parent: dict[str, str | None] = {}
    children: dict[str, list[str]] = {}
    atoms_at: dict[str, list[str]] = {}
    reasons: dict[str, str] = {}
    top_atoms: list[str] = []

    def components(atoms: list[str], placed: set[str]) -> list[list[str]]:
        groups: list[tuple[set[str], list[str]]] = []
        for atom in atoms:
            remaining = atom_vars[atom] - placed
            touching = [g for g in groups if g[0] & remaining]
            merged_vars, merged_atoms = set(remaining), [atom]
            for g in touching:
                merged_vars |= g[0]
                merged_atoms = g[1] + merged_atoms
                groups.remove(g)
            groups.append((merged_vars, sorted(merged_atoms, key=[a.alias for a in cq.atoms].index)))
        return [g[1] for g in groups]

    def build(atoms: list[str], placed: list[str]) -> list[str]:
        """Place ``atoms`` below the path ``placed``; returns the variables put directly under it."""
        tops: list[str] = []
        for group in components(atoms, set(placed)):
            remaining = set().union(*(atom_vars[a] for a in group)) - set(placed)
            if not remaining:  # every variable of these atoms is placed: they hang at the lowest
                if placed:
                    atoms_at[placed[-1]].extend(group)
                else:
                    top_atoms.extend(group)
                continue
            free_left = remaining & free
            candidates = free_left or remaining
            shared = {v: sum(v in atom_vars[a] for a in group) for v in candidates}
            chosen = min(candidates, key=lambda v: (-shared[v], rank.get(v, len(rank)), v))
            why = "free variable, kept on top" if free_left else f"shared by {shared[chosen]} of {len(group)} atoms"
            if chosen in rank:
                why += ", --order"
            reasons[chosen] = why
            parent[chosen] = placed[-1] if placed else None
            children[chosen], atoms_at[chosen] = [], []
            tops.append(chosen)
            children[chosen] = build(group, placed + [chosen])
        return tops

    roots = build([a.alias for a in cq.atoms], [])
    if len(roots) + (1 if top_atoms else 0) > 1:
        raise UnsupportedQuery("the tables do not all join: a cross product is not maintained, join every table "
                               "to another on a column")
    depth: dict[str, int] = {}
    for v in parent:
        d, node = 0, parent[v]
        while node is not None:
            d, node = d + 1, parent[node]
        depth[v] = d
    below: dict[str, set[str]] = {}

    def atoms_below(v: str) -> set[str]:
        if v not in below:
            below[v] = set(atoms_at[v]).union(*(atoms_below(c) for c in children[v]))
        return below[v]

    dep: dict[str, tuple[str, ...]] = {}
    for v in parent:
        ancestors = []
        node = parent[v]
        while node is not None:
            ancestors.append(node)
            node = parent[node]
        used = set().union(*(atom_vars[a] for a in atoms_below(v)))
        dep[v] = tuple(sorted((a for a in ancestors if a in used), key=lambda a: depth[a]))
    return VariableOrder(tuple(roots), parent, {k: tuple(v) for k, v in children.items()},
                         {k: tuple(v) for k, v in atoms_at.items()}, dep, depth, tuple(top_atoms), reasons)


def priority_from_option(cq: ConjunctiveQuery, text: str | None) -> tuple[str, ...]:
    """``--order 'h.postcode, w.locn'``: columns (any column of a variable) in order of priority."""
    if not text:
        return ()
    by_column = {str(c): v.name for v in cq.variables for c in v.columns}
    by_column.update({f"{c.alias}.{c.column}": v.name for v in cq.variables for c in v.columns})
    wanted = order_variables(cq)
    out = []
    for item in (p.strip() for p in text.split(",")):
        if not item:
            continue
        if item not in by_column:
            raise UnsupportedQuery(f"--order names {item}, which is not a column of the query: write alias.column")
        variable = by_column[item]
        if variable not in wanted:
            raise UnsupportedQuery(f"--order names {item}, which is neither a join nor a GROUP BY column: "
                                   "only those get a place in the variable order")
        out.append(variable)
    return tuple(out)
