"""sample: a uniform random sample of a join result, kept current (reservoir sampling over joins).

Dai, Hu & Yi, "Reservoir Sampling over Joins" (SIGMOD 2024; seed 003, notes
../shared/notes/reservoir-sampling-over-joins.md). Each inserted row creates a batch of new join
results; a dynamic index (``sql/sample/10_index.sql``, the paper's §4) addresses that batch as a virtual
array padded with dummies to powers of two, and a reservoir that skips (``sql/sample/20_reservoir.sql``,
Algorithms 4 and 5) looks at O(k log(N/k)) positions in all, not at every result. Deletes, which
the paper leaves out, take the sampled results that lost a row away and refill from the index so
that the sample stays the k smallest of i.i.d. uniform keys over the current result.

One inserted row of a self-joined table is a sequence of logical inserts into its atoms, in the
order written, so each join result is generated exactly once. A statement's deletes of every atom
go first, then its inserts, row by row in a fixed order: a view is reproducible from its seed.

The package reads as every system's (see ``pgivm/systems/__init__.py``): this module holds the
options, ``accepts``, the ``sample`` action and the system value; ``plan.py`` the install SQL
(state, index, reservoir, the pending-change functions, capture); ``inspect.py`` status, verify,
explain and how verify compares the sample with the join.
"""

from __future__ import annotations

import secrets
from typing import Any

import psycopg
from psycopg import sql

from pgivm.query.analysis.decomposition import MAX_ATOMS
from pgivm.query.cq import ConjunctiveQuery
from pgivm.systems.base import Action, FunctionSystem, Option
from pgivm.systems.common import Names, collation_reason, outer_join_reason, shape_of
from pgivm.systems.sample.layout import layout
from pgivm.systems.sample.inspect import compare_result, explain_lines, status, verify
from pgivm.systems.sample.plan import joined_rows, select_list, _splitmix, capture_triggers, deferred_atoms, plan

__all__ = ["NAME", "SYSTEM", "plan", "status", "verify"]

NAME = "sample"


def _positive(value: int) -> str | None:
    return None if value > 0 else f"must be a positive integer, got {value}"


SIZE = Option("size", int, None, "the sample size K: the view keeps min(K, |join|) distinct join results", _positive)
SEED = Option("seed", int, None, "seed of the view's random stream (default: drawn at create); the same seed and "
              "the same statements give the same sample")
def _on_off(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("on", "true", "yes", "1"):
        return True
    if text in ("off", "false", "no", "0"):
        return False
    raise ValueError(value)


_on_off.__name__ = "on or off"
MERGE = Option("merge", str, "auto", "foreign-key merging (§4.4): auto (default) merges a table joined on all columns of "
               "a unique key (a primary key) into the table that references it; none; or the groups to merge, "
               "written with aliases as a+b;c+d")
GROUPING = Option("grouping", _on_off, True, "grouping (§4.4): rows of a node with equal join keys are kept as one "
                  "entry with a padded frequency (on, the default, or off)")
FRESH_SEED = Option("seed", int, 0, "seed of the draws (default 0: a new seed each time, printed)")
FRESH = Option("fresh", int, None, "draw this many independent uniform results of the current join, with replacement",
               _positive)


def accepts(cq: ConjunctiveQuery) -> str | None:
    outer = outer_join_reason(cq)
    if outer is not None:
        return outer
    if cq.distinct:  # first: a DISTINCT is also grouped (parse: _distinct_as_group_by)
        return "a sample view samples the join's results with their multiplicities: DISTINCT is not sampled"
    if cq.aggregates or cq.group_by or cq.group_computed:
        return "a sample view lists join results: select columns (or *), without aggregates or GROUP BY"
    if cq.projection is not None:
        return "a sample view lists columns as they are: computed SELECT items are not sampled"
    if layout(cq) is None and (cq.analysis.decomposition is None or layout(cq, cq.analysis.decomposition.bags) is None):
        if len(cq.atoms) > 1 and _cyclic(cq) and len(cq.analysis.hypergraph.components()) == 1:
            return (f"{shape_of(cq)}: no hypertree decomposition found (the sample system decomposes cyclic joins "
                    f"of at most {MAX_ATOMS} tables)")
        return "the tables do not all join: a cross product is not sampled"
    return None


def _cyclic(cq: ConjunctiveQuery) -> bool:
    return not cq.analysis.acyclic



def _fresh(conn: psycopg.Connection, name: str, values: dict[str, Any]) -> dict[str, Any]:
    from pgivm.catalog import views as catalog

    record = catalog.get(conn, name)
    cq: ConjunctiveQuery = record.query
    names = Names.of(name)
    seed = values.get("seed") or secrets.randbits(62)
    query = sql.SQL("SELECT pgivm_drawn.draw, pgivm_drawn.tries, {items} FROM {fresh}({n}, {seed}) AS pgivm_drawn {joins} "
                    "ORDER BY pgivm_drawn.draw").format(
        items=select_list(cq), fresh=names("fresh"), n=sql.Literal(values["fresh"]),
        seed=sql.Literal(_splitmix(seed)), joins=joined_rows(cq, names, "pgivm_drawn"))
    cur = conn.execute(query)
    rows = cur.fetchall()
    columns = [d.name for d in cur.description or []]
    tries = sum(r[1] for r in rows)
    return {"columns": columns[2:], "rows": [tuple(r[2:]) for r in rows], "draws": len(rows),
            "positions_tried": tries, "fresh_seed": seed}


SAMPLE = Action("sample", "draw independent uniform join results from a sample view's index, with replacement "
                "(the maintained sample is not touched)", (FRESH, FRESH_SEED), _fresh, locks_state=False)

SYSTEM = FunctionSystem(
    name=NAME,
    summary="reservoir sampling over joins: a uniform sample of K results of a join, kept current",
    accepts=accepts, plan=plan, capture_triggers=capture_triggers,
    status=status, verify=verify, options=(SIZE, SEED, MERGE, GROUPING), actions=(SAMPLE,), explain=explain_lines,
    compare_result=compare_result, deferred_atoms=deferred_atoms, accepts_types=collation_reason,
)

