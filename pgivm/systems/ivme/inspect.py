"""Reading an IVMε view's state back: ``status`` (ε, N, θ, |D|, heavy values per relation) and
``verify`` (every invariant of the paper's state, checked against the base tables)."""

from __future__ import annotations

import psycopg
from psycopg import sql

from pgivm.query.resolve import ResolvedView
from pgivm.systems.base import Section, SystemStatus
from pgivm.systems.common import CheckFailure, Names, checks, read_state, run_checks, triangle_view
from pgivm.systems.ivme.plan import RELATIONS, _load_params, _view_params


def status(conn: psycopg.Connection, name: str) -> SystemStatus:
    """ε, N, θ, |D|, the counters; heavy values and tuples per relation."""
    names = Names.of(name)
    info = read_state(conn, name)
    relations = []
    for k in RELATIONS:
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
    return SystemStatus(figures, [Section("relations", ["relation", "values", "heavy values", "heavy tuples",
                                                        "light tuples"], relations)],
                        labels={"n": "N", "theta": "theta = N^eps", "db_size": "|D|"},
                        headline=("db_size",))


# --- verification ----------------------------------------------------------------------------


def verify(conn: psycopg.Connection, view: ResolvedView, name: str, strict: bool = False) -> list[CheckFailure]:
    """Every IVMε invariant, checked against the base tables; an empty list means all hold."""
    view = triangle_view(view)
    names = Names.of(name)
    named = checks(__package__, "61_verify_view.sql", _view_params(names, name, view.query.sql))
    for atom in view.query.atoms:
        for check, query in checks(__package__, "60_verify_relation.sql", _load_params(names, view, atom)):
            if check != "strict_partition" or strict:
                named.append((f"{atom.relation.upper()}.{check}", query))
    return run_checks(conn, named)
