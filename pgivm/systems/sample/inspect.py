"""Reading a sample view back: ``status`` (the sample, |Q| and the index sizes), ``verify`` (the
index against its definition, the stored rows against the base tables, the sample against the
join), ``explain`` (merges, groups, the join trees) and ``compare_result`` (what verify compares
the view's rows with)."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from pgivm import capture
from pgivm.query.analysis.decomposition import of_bags
from pgivm.query.cq import ConjunctiveQuery
from pgivm.query.plain import from_where
from pgivm.query.resolve import ResolvedView
from pgivm.systems.base import Section, SystemStatus
from pgivm.systems.common import CheckFailure, Names, run_checks
from pgivm.systems.sample.layout import Layout
from pgivm.systems.sample.plan import (
    atom_filters,
    atom_name,
    capture_atom,
    objects_of,
    quoted,
    stored_shape,
    unit_conditions,
)

# --- status, verify, explain, fresh ------------------------------------------------------------------


def _state(conn: psycopg.Connection, name: str) -> dict[str, Any]:
    from psycopg.rows import dict_row

    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(sql.SQL("SELECT * FROM {}").format(Names.of(name)("state")), prepare=False).fetchone()
    assert row is not None
    return dict(row)


def join_size_query(names: Names, shape: Layout) -> sql.Composable:
    """|Q| exactly, bottom-up over tree 0 (Yannakakis' counting pass over the stored unit rows):
    O(N), without the conditions across tables. The index itself keeps only padded counts: an
    exact count under single-row inserts costs Ω(√N) per insert for a non-hierarchical join such
    as line-3 (Berkholz, Keppeler, Schweikardt, PODS 2017, under the OMv conjecture), which is
    what the paper's rounding avoids."""
    by_id = {n.node: n for n in shape.nodes}

    def counted(node_id: int) -> sql.Composable:
        node = by_id[node_id]
        product: list[sql.Composable] = [sql.SQL("1::numeric")]
        joins: list[sql.Composable] = []
        for j, (child, edge) in enumerate(zip(node.children, node.cedges)):
            alias = sql.Identifier(f"c{node_id}_{j}")
            joins.append(sql.SQL("JOIN ({q}) AS {a} ON {a}.kid = r.kids[{e}]").format(
                q=counted(child), a=alias, e=sql.Literal(edge + 1)))
            product.append(sql.SQL("{}.n").format(alias))
        key = sql.SQL("r.kids[{}]").format(sql.Literal(node.pedge + 1)) if node.pedge is not None else sql.SQL("0")
        return sql.SQL("SELECT {key} AS kid, sum({product}) AS n FROM {rows} AS r {joins} WHERE r.unit = {unit} "
                       "GROUP BY 1").format(key=key, product=sql.SQL(" * ").join(product), rows=names("rows"),
                                            joins=sql.SQL(" ").join(joins), unit=sql.Literal(node.unit))

    return sql.SQL("SELECT coalesce(sum(n), 0) FROM ({}) AS total").format(counted(0))


def status(conn: psycopg.Connection, name: str) -> SystemStatus:
    from pgivm.catalog import views as catalog

    record = catalog.get(conn, name)
    cq: ConjunctiveQuery = record.query
    shape = stored_shape(conn, name, cq)
    names = Names.of(name)
    st = _state(conn, name)
    join_size = conn.execute(join_size_query(names, shape)).fetchone()[0]  # type: ignore[index]
    sizes = {t: conn.execute(sql.SQL("SELECT count(*) FROM {}").format(names(t))).fetchone()[0]  # type: ignore[index]
             for t in ("rows", "part", "grp", "gmem", "member", "cnt", "bucket", "bsize")}
    bound = conn.execute(sql.SQL("SELECT 2::numeric ^ ct FROM {} WHERE node = 0 AND kid = 0").format(
        names("cnt"))).fetchone()
    figures = {"k": st["k"], "sampled": st["filled"], "join_size": int(join_size),
               "replacements": st["replacements"], "batches": st["batches"], "positions_retrieved": st["retrieved"],
               "refilled": st["refilled"], "moves": st["moves"], "index_rows": sum(sizes.values()),
               "merged": shape.merges, "grouped_nodes": sum(n.grouped for n in shape.nodes), "groups": sizes["grp"],
               "seed": st["seed"], "updates_applied": st["updates_applied"]}
    labels = {"join_size": "|Q| (join size, counted over the stored rows"
                           + (", before the conditions across tables)" if cq.predicates else ")"),
              "positions_retrieved": "positions retrieved", "index_rows": "index rows",
              "moves": "index entries moved (Alg. 7 lines 9-11)",
              "merged": "merged on foreign keys" if cq.analysis.acyclic else "bags of the hypertree decomposition",
              "grouped_nodes": "grouped nodes"}
    section = Section("index", ["table", "rows"], [[t, n] for t, n in sizes.items()]
                      + [["J0 positions (c̃nt at tree 0's root)", int(bound[0]) if bound else 0]])
    return SystemStatus(figures, [section], labels, headline=("k", "sampled", "join_size"))


_CHECKS = "40_checks.sql"


def verify(conn: psycopg.Connection, view: ResolvedView, name: str, strict: bool = False) -> list[CheckFailure]:
    """The index against its definition recomputed from the stored rows, the stored rows against
    the base tables, and the sample against a plain SQL count of the join."""
    from pgivm.systems.common import checks

    cq: ConjunctiveQuery = view.query
    shape = stored_shape(conn, name, cq)
    names = Names.of(name)
    objects = objects_of(names, shape)
    failures = run_checks(conn, checks(__package__, _CHECKS, objects))
    # A unit's rows are exactly the join of its atoms' stored rows (each combination once; for a
    # one-atom unit, its atom's rows).
    for unit in shape.units:
        joined = sql.SQL("SELECT ARRAY[{parts}]::bigint[] AS parts FROM {tables} WHERE {cond}").format(
            parts=sql.SQL(", ").join(sql.SQL("{}.rid").format(quoted(atom_name(a))) if a in unit.atoms else sql.SQL("NULL")
                                     for a in range(len(cq.atoms))),
            tables=sql.SQL(", ").join(sql.SQL("{} AS {}").format(names(atom_name(a)), quoted(atom_name(a)))
                                      for a in unit.atoms),
            cond=sql.SQL(" AND ").join(unit_conditions(cq, unit.atoms) or [sql.SQL("true")]))
        stored = sql.SQL("SELECT parts FROM {} WHERE unit = {}").format(names("rows"), sql.Literal(unit.number))
        diff = conn.execute(sql.SQL("({s} EXCEPT ALL {j}) UNION ALL ({j} EXCEPT ALL {s})").format(s=stored, j=joined)).fetchall()
        if diff:
            failures.append(CheckFailure(f"unit_{unit.number}.rows_are_the_join_of_its_atoms", [tuple(r) for r in diff[:5]]))
    for i, atom in enumerate(cq.atoms):
        cap = capture_atom(view, i)
        base = view.base_of(atom.table)
        cols = sql.SQL(", ").join([quoted(c.name) for c in cap.columns] or [sql.SQL("1")])  # type: ignore[list-item]
        filters = atom_filters(view, i, "b", stored=False)
        keys = [sql.SQL("b.{} IS NOT NULL").format(quoted(c.column)) for c in cap.columns if c.key]
        source = sql.SQL("SELECT {values} FROM {table} AS b WHERE {cond}").format(
            values=sql.SQL(", ").join([sql.SQL("{} AS {}").format(v, quoted(c.name)) for v, c in zip(cap.read("b"), cap.columns)]
                                      or [sql.SQL("1")]),  # type: ignore[list-item]
            table=base.ident, cond=sql.SQL(" AND ").join([base.guard("b"), *filters, *keys]))
        query = sql.SQL("(SELECT {c} FROM {stored} EXCEPT ALL SELECT {c} FROM ({s}) AS x) UNION ALL "
                        "(SELECT {c} FROM ({s}) AS x EXCEPT ALL SELECT {c} FROM {stored})").format(
            c=cols, stored=names(atom_name(i)), s=source)
        rows = conn.execute(query).fetchall()
        if rows:
            failures.append(CheckFailure(f"{atom_name(i)}.equals_base_table", [tuple(r) for r in rows[:5]]))
    # Each sampled result is a result of the join (its rows' values satisfy every condition).
    cond = from_where(view, sources={a.alias: names(atom_name(i)) for i, a in enumerate(cq.atoms)},
                      source_column=lambda ref: capture.stored_column(cq.atom(ref.alias).columns, ref.column))
    ids = sql.SQL(" AND ").join(sql.SQL("{}.rid = pgivm_sampled.rids[{}]").format(quoted(a.alias), sql.Literal(i + 1))
                                for i, a in enumerate(cq.atoms))
    bad = conn.execute(sql.SQL("SELECT pgivm_sampled.slot FROM {sample} AS pgivm_sampled "
                               "WHERE NOT EXISTS (SELECT 1 {cond} AND {ids})").format(
        sample=names("sample"), cond=cond, ids=ids)).fetchall()
    if bad:
        failures.append(CheckFailure("sample.results_exist", [tuple(r) for r in bad[:5]]))
    st = _state(conn, name)
    total = conn.execute(sql.SQL("SELECT count(*) {}").format(from_where(view))).fetchone()[0]  # type: ignore[index]
    stored = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(names("sample"))).fetchone()[0]  # type: ignore[index]
    if not (stored == st["filled"] == min(st["k"], total)):
        failures.append(CheckFailure("sample.size_is_min_k_join", [(stored, st["filled"], st["k"], total)]))
    if (st["w"] is None) != (total < st["k"]):
        failures.append(CheckFailure("reservoir.full_iff_join_has_k", [(st["w"], total, st["k"])]))
    return failures


def explain_lines(conn: psycopg.Connection, view: ResolvedView, name: str, params: dict[str, Any]) -> list[str]:
    shape = stored_shape(conn, name, view.query)
    merged = [shape.label(u.number) for u in shape.units if len(u.atoms) > 1]
    if view.query.analysis.acyclic:
        lines = ["merged on foreign keys (one node each): " + ("; ".join(merged) if merged else "none")]
    else:
        ghd = of_bags(view.query, [u.atoms for u in shape.units])
        lines = ["hypertree decomposition (§5; each bag's sub-join kept as one node): " + ghd.describe(shape.aliases)]
    lines += ["grouped nodes (rows with equal keys as one entry): "
              + (str(sum(n.grouped for n in shape.nodes)) if params.get("grouping") else "grouping off"),
              "join tree edges: " + ("; ".join(f"{shape.label(e.units[0])} - {shape.label(e.units[1])} on "
                                              f"({', '.join(e.key)})" for e in shape.edges) or "none")]
    for root in range(len(shape.units)):
        lines.append(f"tree rooted at {shape.label(root)} (batches of rows inserted into it"
                     + ("; its root's entries are J0, the whole join" if root == 0 else "") + "):")
        lines += ["  " + line for line in shape.tree_lines(root)]
    return lines


def compare_result(conn: psycopg.Connection, view: ResolvedView, name: str) -> tuple[int, list[tuple[Any, ...]]]:
    """What the view shows against PostgreSQL's own result of the query: min(k, |Q|) rows, each
    one of the query's rows (as a bag: a result sampled twice would need two copies)."""
    from pgivm.query.plain import plain_query

    shown = sql.Identifier(_view_schema(conn, name), name)
    k = _state(conn, name)["k"]
    total = conn.execute(sql.SQL("SELECT count(*) {}").format(from_where(view))).fetchone()[0]  # type: ignore[index]
    extra = conn.execute(sql.SQL("SELECT * FROM {} EXCEPT ALL {}").format(shown, plain_query(view)),
                         prepare=False).fetchall()
    return min(k, int(total)), [("not in the join", *r) for r in extra]


def _view_schema(conn: psycopg.Connection, name: str) -> str:
    from pgivm.catalog import views as catalog

    return catalog.get(conn, name).view_schema

