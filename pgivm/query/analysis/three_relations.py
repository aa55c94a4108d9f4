"""The class of a count over three relations (Kara et al., long version, Appendix H; notes §8.8).

Write the three atoms' join variables by the atoms they occur in: ``A_RS`` those of R and S only,
``A_ST`` of S and T only, ``A_RT`` of R and T only (``A_RST``, in all three, and the variables of
one atom alone, aggregated away, do not decide the class). The class is the number of nonempty
pair tuples among ``A_RS``, ``A_ST``, ``A_RT`` (Definition 35):

- **3R³**, all three nonempty: cyclic, the triangle's kind (R(a,b), S(b,c), T(c,a));
- **3R²**, two: acyclic and not hierarchical, the path's kind (R(a,b), S(b,c), T(c,d));
- **3R¹** and **3R⁰**, one or none: exactly the hierarchical ones (Proposition 41).

Theorem 37 gives each class its worst-case optimal bounds under the OMv conjecture (Corollary 39,
Proposition 38), which ``bounds`` states. Pure, no database: ``pgivm explain`` reads it, and a
strategy per class can pick itself from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from pgivm.query.analysis import shapes
from pgivm.query.analysis.hypergraph import hypergraph
from pgivm.query.cq import Aggregate, ConjunctiveQuery, Const

BOUNDS = {
    3: ("preprocessing O(|D|^{3/2}), amortized update O(|D|^max{ε,1−ε}), space O(|D|^{1+min{ε,1−ε}}), "
        "answer O(1): at ε = ½, O(|D|^{1/2}) a single-tuple update"),
    2: "preprocessing and space O(|D|), amortized update O(|D|^max{ε,1−ε}), answer O(1): at ε = ½, O(|D|^{1/2})",
    1: "preprocessing and space O(|D|), update O(1) (not amortized), answer O(1)",
    0: "preprocessing and space O(|D|), update O(1) (not amortized), answer O(1)",
}


@dataclass(frozen=True)
class ThreeRelations:
    """A count over three atoms: its class (the number of nonempty pair tuples) and those tuples,
    keyed by the two aliases they join, in the order written."""

    pairs: tuple[tuple[tuple[str, str], tuple[str, ...]], ...]  # ((alias, alias), variables), nonempty ones
    shared: tuple[str, ...]  # A_RST: the join variables of all three
    # whether pgivm runs the appendix's strategy of this class for the query: 3R³ as the triangle
    # count and 3R² as the 3-path count, over the tuples A_RS, A_ST, A_RT each extended by A_RST
    # (``shapes.as_triangle``, ``shapes.as_three_path``; not when two columns of one table are
    # equated, a selection inside it); the hierarchical classes whatever their variables (F-IVM's
    # view tree)
    strategy_built: bool = True

    @property
    def degree(self) -> int:
        return len(self.pairs)

    @property
    def name(self) -> str:
        return "3R" + "⁰¹²³"[self.degree]

    @property
    def hierarchical(self) -> bool:
        return self.degree <= 1

    def describe(self) -> str:
        kind = {3: "cyclic", 2: "acyclic, not hierarchical"}.get(self.degree, "hierarchical")
        pairs = "; ".join(f"{', '.join(vs)} of {a} and {b}" for (a, b), vs in self.pairs) or "none"
        shared = f"; of all three: {', '.join(self.shared)}" if self.shared else ""
        return f"{self.name} ({kind}; variables two of them share: {pairs}{shared})"

    def bounds(self) -> str:
        return BOUNDS[self.degree]


def three_relations(cq: ConjunctiveQuery) -> ThreeRelations | None:
    """The class of a bare count (``count(*)``, ``sum(1)``) over three atoms, or None for any
    other query (the appendix is about such counts; a GROUP BY or a listing is another problem)."""
    graph = hypergraph(cq)
    if len(graph.edges) != 3 or cq.group_by or cq.group_computed or len(cq.outputs) != 1 or cq.having is not None:
        return None
    (output,) = cq.outputs
    if not (isinstance(output, Aggregate) and ((output.function == "count" and output.argument is None)
                                               or (output.function == "sum" and output.argument == Const("1")))):
        return None
    aliases = [e.alias for e in graph.edges]
    by_atoms: dict[tuple[str, ...], list[str]] = {}
    for variable in graph.join_vertices:
        by_atoms.setdefault(graph.edges_of(variable), []).append(variable)
    pairs = tuple(((a, b), tuple(sorted(by_atoms[(a, b)])))
                  for a, b in ((aliases[0], aliases[1]), (aliases[1], aliases[2]), (aliases[0], aliases[2]))
                  if (a, b) in by_atoms)
    shape = {3: shapes.triangle, 2: shapes.three_path}.get(len(pairs))
    return ThreeRelations(pairs, tuple(sorted(by_atoms.get(tuple(aliases), []))), shape is None or shape(cq) is not None)


# The system that runs each class's strategy of the appendix, where one is built: IVMε's for the
# cyclic class; for the hierarchical ones F-IVM's view tree, whose single-tuple updates read O(1)
# rows whatever the degrees (the class's bound; tests/systems/fivm/test_fivm_hierarchical.py).
STRATEGIES = {3: "ivme", 2: "ivme", 1: "fivm", 0: "fivm"}
HOW = {3: "heavy/light partitions and auxiliary views over the tuples A_RT, A_RS, A_ST (each with A_RST)",
       2: "the middle relation partitioned on the tuple it shares with R (with A_RST), two linear auxiliary views "
          "(H.3, Figure 22)",
       1: "its view tree of a hierarchical query: O(1) lookups along one path",
       0: "its view tree of a hierarchical query: O(1) lookups along one path"}


def explain_lines(found: ThreeRelations | None, system: str) -> list[str]:
    """What ``pgivm explain`` says of a count over three relations: its class, the paper's bounds
    for it, and whether the system maintaining the view runs that class's strategy."""
    if found is None:
        return []
    runs = STRATEGIES.get(found.degree) == system and found.strategy_built
    return [f"IVMε class (Kara et al., Appendix H): {found.describe()}",
            f"  the class's worst-case optimal bounds: {found.bounds()}",
            f"  {system} runs this class's strategy ({HOW[found.degree]})" if runs
            else f"  {system} maintains it; {STRATEGIES[found.degree]} runs the class's strategy"
            if found.strategy_built else f"  {system} maintains it; the appendix's {found.name} strategy is built for "
                                         "joins whose equalities each link two tables (here two columns of one table "
                                         "are equated)"]
