"""The join hypergraph of a conjunctive query: variables as vertices, one hyperedge per atom.

Acyclicity, join trees and the shapes (path, star, cycle) are properties of this hypergraph, not
of the SQL text. Each hyperedge keeps all of its atom's variables and says which of them are join
variables: the others occur in that atom only, so GYO drops them at once and they never change
the join's shape, but a view tree still needs them (filtered, grouped and aggregated columns).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from pgivm.errors import UnsupportedQuery
from pgivm.query.cq import ConjunctiveQuery


@dataclass(frozen=True)
class Hyperedge:
    """The variables of one atom, and the subset it shares with other atoms."""

    alias: str
    variables: frozenset[str]
    join_variables: frozenset[str]


@dataclass(frozen=True)
class Hypergraph:
    """``vertices`` all variables (sorted), ``join_vertices`` those in two hyperedges or more,
    ``edges`` one per atom in the order written."""

    vertices: tuple[str, ...]
    join_vertices: tuple[str, ...]
    edges: tuple[Hyperedge, ...]

    def edge(self, alias: str) -> Hyperedge:
        for edge in self.edges:
            if edge.alias == alias:
                return edge
        raise KeyError(alias)

    def edges_of(self, variable: str) -> tuple[str, ...]:
        """The atoms (aliases, in the order written) a variable occurs in."""
        return tuple(e.alias for e in self.edges if variable in e.variables)

    def components(self) -> tuple[tuple[str, ...], ...]:
        """Atoms linked by join variables: one tuple per connected component, each in the order
        written, ordered by their first atom. More than one component means a cross product."""
        seen: set[str] = set()
        components = []
        for start in self.edges:
            if start.alias in seen:
                continue
            component, frontier = {start.alias}, [start]
            while frontier:
                edge = frontier.pop()
                for other in self.edges:
                    if other.alias not in component and edge.join_variables & other.join_variables:
                        component.add(other.alias)
                        frontier.append(other)
            seen |= component
            components.append(tuple(e.alias for e in self.edges if e.alias in component))
        return tuple(components)


@lru_cache(maxsize=256)  # pure: every pass reads the same query's hypergraph, built once
def hypergraph(cq: ConjunctiveQuery) -> Hypergraph:
    join = frozenset(cq.join_variables)
    edges = tuple(Hyperedge(a.alias, a.variable_set, a.variable_set & join) for a in cq.atoms)
    return Hypergraph(
        vertices=tuple(v.name for v in cq.variables),
        join_vertices=tuple(v.name for v in cq.variables if v.is_join),
        edges=edges,
    )


def require_connected(cq: ConjunctiveQuery) -> None:
    """Refuse a cross product: every atom must be linked to every other one by join equalities."""
    components = hypergraph(cq).components()
    if len(components) > 1:
        groups = " | ".join(", ".join(c) for c in components)
        raise UnsupportedQuery(
            f"the tables are not all joined ({groups}): a cross product is not supported, join them with ON a.x = b.y"
        )
