"""Reading an IVMε view's state back: ``status`` (ε, N, θ, |D|, heavy values per relation) and
``verify`` (every invariant of the paper's state, checked against the base tables)."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from pgivm.query.resolve import ResolvedView
from pgivm.systems.base import Section, SystemStatus
from pgivm.systems.common import CheckFailure, Names, checks, read_state, run_checks, triangle_view
from pgivm.systems.ivme import four_path, loomis_whitney, refined, three_path
from pgivm.systems.ivme.plan import RELATIONS, _load_params, _view_params


def status(conn: psycopg.Connection, name: str) -> SystemStatus:
    """ε, N, θ, |D|, the counters; heavy values and tuples per relation."""
    names = Names.of(name)
    info = read_state(conn, name)
    # a Loomis-Whitney count's k1..kn, a 4-path count's S and T on each variable, or none
    relations = (loomis_whitney.relation_rows(conn, name) or four_path.relation_rows(conn, name)
                 or three_path.relation_rows(conn, name))
    if refined.is_refined_state(conn, name):  # refined partitions: each relation on both variables
        relations = refined.relation_rows(conn, name)
    for k in RELATIONS if not relations else ():
        row = conn.execute(
            sql.SQL(
                "SELECT count(*) FILTER (WHERE heavy), count(*), "
                "(SELECT count(*) FROM {h}), (SELECT count(*) FROM {l}) FROM {d}"
            ).format(h=names(f"{k}_heavy"), l=names(f"{k}_light"), d=names(f"{k}_degree"))
        ).fetchone()
        assert row is not None
        relations.append([k.upper(), row[1], row[0], row[2], row[3]])
    figures = {k: info[k] for k in ("epsilon", "n", "theta", "db_size", "updates_applied", "major_rebalances",
                                    "minor_rebalances")}
    sections = [Section("relations", ["relation", "values", "heavy values", "heavy tuples", "light tuples"], relations)]
    if conn.execute("SELECT to_regclass(%s) IS NOT NULL", [sql.Identifier(names.schema, "listing").as_string(conn)]).fetchone()[0]:  # type: ignore[index]
        # a listing: how its triangles are kept, materialized (hhh, lll) or factorized (P and W of each relation)
        parts = [["Q^L (hhh, lll)", *_size(conn, names("listing"))]]
        parts += [[f"P_{k.upper()}{l.upper()}, W_{k.upper()}{l.upper()}", *_size(conn, names(f"p_{k}{l}"), names(f"w_{k}{l}"))]
                  for k, l in (("r", "s"), ("s", "t"), ("t", "r"))]
        sections.append(Section("listing", ["part", "rows", "triangles"], parts))
    return SystemStatus(figures, sections, labels={"n": "N", "theta": "theta = N^eps", "db_size": "|D|"},
                        headline=("db_size",))


def shown_rows(conn: psycopg.Connection, query: Any, name: str) -> int | None:
    """A grouped listing's rows, each distinct triangle once (the state counts the triangles with
    their multiplicities): O(distinct triangles), read with constant delay."""
    triangle = query.analysis.triangle
    if triangle is None or not triangle.grouped:
        return None
    row = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(Names.of(name)("rows"))).fetchone()
    return int(row[0]) if row else 0


def _size(conn: psycopg.Connection, table: sql.Identifier, w: sql.Identifier | None = None) -> list[int]:
    """A listing part's stored rows (of P and W together) and the triangles it holds (a W row's
    triangles are in P's multiplicity)."""
    stored = sql.SQL("(SELECT count(*) FROM {})").format(table)
    if w is not None:
        stored = sql.SQL("{} + (SELECT count(*) FROM {})").format(stored, w)
    row = conn.execute(sql.SQL("SELECT {}, (SELECT coalesce(sum(mult), 0) FROM {})").format(stored, table)).fetchone()
    assert row is not None
    return [int(row[0]), int(row[1])]


# --- verification ----------------------------------------------------------------------------


def verify(conn: psycopg.Connection, view: ResolvedView, name: str, strict: bool = False) -> list[CheckFailure]:
    """Every IVMε invariant, checked against the base tables; an empty list means all hold."""
    if loomis_whitney.is_loomis_whitney(view):
        return loomis_whitney.verify(conn, view, name, strict)
    if four_path.is_four_path(view):
        return four_path.verify(conn, view, name, strict)
    if three_path.is_three_path(view):
        return three_path.verify(conn, view, name, strict)
    if refined.is_refined_state(conn, name):
        return refined.verify(conn, view, name, strict)
    view = triangle_view(view)
    names = Names.of(name)
    listing = bool(view.query.listing)
    named = checks(__package__, "61_verify_view.sql", _view_params(names, name, view.query.sql))
    if listing:
        named += checks(__package__, "63_verify_listing_view.sql", _view_params(names, name, view.query.sql, listing))
    for atom in view.query.atoms:
        params = _load_params(names, view, atom)
        for check, query in checks(__package__, "60_verify_relation.sql", params):
            if check != "strict_partition" or strict:
                named.append((f"{atom.relation.upper()}.{check}", query))
        if listing:
            named += [(f"{atom.relation.upper()}.{check}", query)
                      for check, query in checks(__package__, "62_verify_listing.sql", params)]
    return run_checks(conn, named)


# --- explain ---------------------------------------------------------------------------------


def explain_lines(conn: psycopg.Connection, view: ResolvedView, name: str, params: dict[str, Any]) -> list[str]:
    """The atoms as R, S, T, the partitions and what the state keeps (count or listing) with its bounds."""
    state = read_state(conn, name)
    if loomis_whitney.is_loomis_whitney(view):
        return loomis_whitney.explain_lines(view, state)
    if four_path.is_four_path(view):
        return four_path.explain_lines(view, state)
    if three_path.is_three_path(view):
        return three_path.explain_lines(view, state)
    if refined.is_refined(params):
        return refined.explain_lines(view, state)
    view = triangle_view(view)
    atoms = ", ".join(f"{a.relation.upper()}({', '.join(v.upper() for v in a.variables)}) = {a.alias}({a.first}, {a.second})"
                      for a in view.query.atoms)
    lines = [f"relations: {atoms}",
             f"partitions: each relation on its first variable, heavy at degree >= θ = N^ε "
             f"(ε = {state['epsilon']:g}, N = {state['n']}, θ = {state['theta']:.2f}); auxiliary views "
             "V_RS = R_h·S_l, V_ST = S_h·T_l, V_TR = T_h·R_l",
             "update: O(N^max(ε, 1-ε)) amortized per single-row change (Kara et al., Theorem 3); space "
             "O(N^(1+min(ε, 1-ε)))"]
    if view.query.listing:
        lines += ["listing ([L] Appendix E, Theorem 21): the triangles hhh and lll materialized (Q^L); the six other "
                  "heavy/light combinations factorized: R_h S_l T_* as P_RS(a,c) over W_RS(a,b,c) = R_h·S_l, "
                  "R_* S_h T_l as P_ST(b,a) over W_ST, R_l S_* T_h as P_TR(c,b) over W_TR; read with constant "
                  "delay (each P row has a triangle, each of its W rows one); space O(N^(3/2)), the hhh and lll "
                  "triangles"]
    if view.query.grouped:
        lines += ["grouped by the three variables: the view shows each distinct triangle once, its count(*) the "
                  "triangle's multiplicity (the enumeration's own output, no further work)"]
    return lines
