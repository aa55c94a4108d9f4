"""Analysis passes over a ConjunctiveQuery, one small pure module each (no database).

``RULES`` lists the passes in the order ``analyze`` runs them, like sqlglot's optimizer rules:

1. ``hypergraph``: variables as vertices, one hyperedge per atom (join variables marked).
2. ``acyclicity.join_tree``: GYO reduction; a join tree (forest for a cross product) or None if cyclic.
3. ``shapes``: triangle (IVMε's count and listing), Loomis–Whitney counts of degree 4 to 26 (IVMε's
   Appendix F), the 4-path count (Appendix G), the 3-path count (the 3R² class of Appendix H.3),
   k-cycle, k-path, star.
4. ``three_relations``: the class of a count over three relations (3R³, 3R², 3R¹, 3R⁰; IVMε's
   Appendix H) and the bounds the paper proves for it.
5. ``decomposition``: for a cyclic join, a hypertree decomposition whose bags partition the atoms,
   of smallest fractional width (what the sample system samples a cyclic join through).

``ConjunctiveQuery.analysis`` runs ``analyze`` once per parsed query (the hypergraph, which every
pass reads, is built once too); each system's ``accepts`` and plan read that ``Analysis``, so a
fact the coverage work adds is one more rule here and one more field, computed in one place.
A strategy picks itself from the ``Analysis``; the passes never refuse a query (the triangle
recogniser's reasons are available through ``shapes.as_triangle``, and a cross product can be
refused with ``hypergraph.require_connected``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pgivm.query.analysis.acyclicity import JoinTree, gyo, join_tree
from pgivm.query.analysis.decomposition import Decomposition, decomposition
from pgivm.query.analysis.hypergraph import Hyperedge, Hypergraph, hypergraph, require_connected
from pgivm.query.analysis.shapes import (as_triangle, cycle, four_path, loomis_whitney, path, star, three_path,
                                         triangle)
from pgivm.query.analysis.three_relations import ThreeRelations, three_relations
from pgivm.query.cq import ConjunctiveQuery
from pgivm.query.model import FourPathCount, LoomisWhitneyCount, ThreePathCount, TriangleCount

RULES: tuple[tuple[str, Callable[[ConjunctiveQuery], Any]], ...] = (
    ("hypergraph", hypergraph),
    ("join_tree", join_tree),
    ("triangle", triangle),
    ("loomis_whitney", loomis_whitney),
    ("four_path", four_path),
    ("three_path", three_path),
    ("cycle", cycle),
    ("path", path),
    ("star", star),
    ("three_relations", three_relations),
    ("decomposition", decomposition),
)


@dataclass(frozen=True)
class Analysis:
    """What the passes found: one field per rule in ``RULES``."""

    hypergraph: Hypergraph
    join_tree: JoinTree | None
    triangle: TriangleCount | None
    loomis_whitney: LoomisWhitneyCount | None
    four_path: FourPathCount | None
    three_path: ThreePathCount | None
    cycle: int | None
    path: int | None
    star: int | None
    three_relations: ThreeRelations | None
    decomposition: Decomposition | None

    @property
    def acyclic(self) -> bool:
        return self.join_tree is not None


def analyze(cq: ConjunctiveQuery) -> Analysis:
    """Run every pass of ``RULES`` in order."""
    return Analysis(**{name: rule(cq) for name, rule in RULES})


__all__ = [
    "RULES",
    "Analysis",
    "Decomposition",
    "Hyperedge",
    "Hypergraph",
    "JoinTree",
    "analyze",
    "as_triangle",
    "cycle",
    "hypergraph",
    "gyo",
    "join_tree",
    "four_path",
    "three_path",
    "loomis_whitney",
    "path",
    "require_connected",
    "star",
    "three_relations",
    "triangle",
]
