"""F-IVM: factorized IVM of acyclic join-aggregates over a view tree with ring payloads.

Nikolic & Olteanu, "Incremental View Maintenance with Triple Lock Factorization Benefits"
(SIGMOD 2018; seed 002, notes ../shared/notes/f-ivm.md). One view per variable of a variable
order (``order.py``), the views an updatable atom needs materialized (``tree.py``, Figure 5),
payloads in a ring (``rings.py``: counts and sums, or the degree-m matrix ring for regression;
a listing keeps factorized relations), and per atom a delta tree that touches one leaf-to-root
path per statement (``maintain.py``).

The package reads as every system's (see ``pgivm/systems/__init__.py``): this module holds the
options, ``accepts`` and the system value; ``plan.py`` the install SQL (the view tree's tables,
the delta trees, capture); ``inspect.py`` status, verify and explain.
"""

from __future__ import annotations

from pgivm.query.cq import ConjunctiveQuery
from pgivm.query.resolve import ResolvedView
from pgivm.systems.base import FunctionSystem, Option
from pgivm.systems.common import (across_tables_reason, bare_atom_reason, collation_reason, may_fail,
                                  outer_join_reason, shape_of)
from pgivm.systems.fivm.inspect import explain_lines, status, verify
from pgivm.systems.fivm.order import computed_values, home
from pgivm.systems.fivm.rings import integer_arithmetic, ring_problem
from pgivm.systems.fivm.plan import BULK_ROWS, capture_triggers, context, deferred_atoms, plan, view_tree

__all__ = ["BULK_ROWS", "NAME", "SYSTEM", "accepts", "context", "plan", "status", "verify", "view_tree"]

NAME = "fivm"

ORDER = Option("order", str, None, "variable order priority: join or GROUP BY columns, e.g. 'h.postcode,w.locn' "
               "(default: free variables on top, then the variable most atoms share)")
STATIC = Option("static", str, None, "tables that never change, comma-separated (the paper's ONE workload): "
                "views only their changes would need are not stored, and writes to them are refused")


def accepts(cq: ConjunctiveQuery) -> str | None:
    outer = outer_join_reason(cq)
    if outer is not None:
        return outer
    across_tables = across_tables_reason(cq)
    if across_tables is not None:
        return across_tables
    across = next((c for c in computed_values(cq) if home(c) is None), None)
    if across is not None:
        return (f"{across} reads the columns of {'several tables' if across.refs else 'no table'}: F-IVM computes a "
                "value on one table's rows; first-order computes it on each joined row")
    extreme = next((a for a in cq.aggregates if a.function in ("min", "max", "count_distinct")), None)
    if extreme is not None:
        return (f"{extreme.sql}: F-IVM's rings have no min, max or count(DISTINCT) (first-order keeps each group's "
                "values in an index)")
    tree_ = cq.analysis.join_tree
    if tree_ is None:
        return (f"{shape_of(cq)}: F-IVM maintains acyclic joins (for a triangle count use ivme, first-order "
                "or recompute)")
    if not tree_.is_connected:
        return "the tables do not all join: a cross product is not maintained"
    return bare_atom_reason(cq)


def accepts_types(view: ResolvedView) -> str | None:
    collation = collation_reason(view)
    if collation is not None:
        return collation
    for computed in computed_values(view.query):
        risky = may_fail(view, computed)
        if risky is not None:  # a leaf evaluates it on every row of its table, joining or not
            return (f"{computed}: {risky} may fail on a row that joins nothing, which F-IVM reads and "
                    "PostgreSQL does not; first-order computes it on joined rows")
    for aggregate in view.query.aggregates:
        operation = aggregate.argument and integer_arithmetic(aggregate.argument, lambda v: view.variable_types[v])
        if operation:
            return (f"{aggregate.sql}: {operation} is integer arithmetic, which fails in a row where it overflows: "
                    "F-IVM cannot tell, first-order can (1.0 * ... makes it numeric)")
    return ring_problem(view.query, lambda v: view.variable_types[v])


SYSTEM = FunctionSystem(
    name=NAME,
    summary="F-IVM: factorized IVM of acyclic join-aggregates (count, sum, avg, cofactor, listing) over a view tree",
    accepts=accepts, plan=plan, capture_triggers=capture_triggers,
    status=status, verify=verify, options=(ORDER, STATIC), explain=explain_lines,
    deferred_atoms=deferred_atoms, accepts_types=accepts_types,
)
