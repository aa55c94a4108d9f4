"""The catalog: ``pgivm_catalog.views``, one row per maintained view, and its base tables.

Rows are read directly and written only through the catalog's own functions
(``migrations/0005_trusted_catalog.sql``), which check them against PostgreSQL's catalogs: a view
names its owner, and a session changes only the views of roles it acts for.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from typing import Any

import psycopg
from psycopg.rows import dict_row

from pgivm.errors import UnknownView
from pgivm.capture import CaptureTrigger
from pgivm.query.cq import ConjunctiveQuery, query_from_json, query_to_json
from pgivm.query.model import TableRef
from pgivm.query.resolve import ResolvedView, read_columns


# How the model column is stored. Version 1 (pgivm 0.1 and the triangle systems until stop 29) kept
# the triangle count's atoms R, S, T; every view is now stored, and every stored view read, as the
# conjunctive query the systems receive.
MODEL_VERSION = 1  # the triangle-count model: atoms r, s, t with their tables, aggregate, output name
CQ_MODEL_VERSION = 2  # the conjunctive query (pgivm.query.cq): atoms, variables, filters, GROUP BY, outputs


@dataclass(frozen=True)
class ViewRecord:
    name: str
    view_schema: str
    state_schema: str
    system: str
    definition: str
    model: dict[str, Any]
    params: dict[str, Any] = field(default_factory=dict)
    model_version: int = MODEL_VERSION
    template_version: str = ""
    objects: list[dict[str, Any]] = field(default_factory=list)
    created_at: datetime | None = None
    owner: int | None = None  # the oid of the role that owns the view and all its objects
    maintained: bool = True  # False: a drop stopped it and has not finished (migration 0008)

    @cached_property
    def query(self) -> ConjunctiveQuery:
        """The stored model as the conjunctive query every system receives."""
        if self.model_version == CQ_MODEL_VERSION:
            return query_from_json(self.model, self.definition)
        return _query_from_triangle_model(self.model, self.definition)

    @property
    def table_oids(self) -> dict[TableRef, int]:
        """Each base table of the query (as the model names it) -> the oid it is pinned to."""
        pinned = [a["table"] for a in self.model["atoms"]]
        pinned += [s["table"] for d in self.model.get("derived", []) for s in d["sources"]]  # what derived tables read
        return {table_from_json(t): int(t["oid"]) for t in pinned}


def model_to_json(query: ConjunctiveQuery, view: ResolvedView) -> dict[str, Any]:
    """The parsed query with schema-qualified tables and their oids, as stored in the catalog."""
    return query_to_json(query, {t: {"schema": b.ref.schema, "name": b.ref.name, "oid": b.oid}
                                 for t, b in {**view.sources, **view.base}.items()})


def _query_from_triangle_model(model: dict[str, Any], definition: str) -> ConjunctiveQuery:
    """A view stored as model version 1 (a triangle count's atoms R, S, T, each with its alias and
    its table as pinned): its definition parsed again, each alias's table the one pinned then."""
    from pgivm.query.parse import parse_query

    query = parse_query(definition)
    pinned = {a["alias"]: table_from_json(a["table"]) for a in model["atoms"]}
    return replace(query, atoms=tuple(replace(a, table=pinned[a.alias]) for a in query.atoms))


def table_from_json(table: dict[str, Any]) -> TableRef:
    return TableRef(name=table["name"], schema=table.get("schema"))


def insert(conn: psycopg.Connection, record: ViewRecord) -> None:
    conn.execute(
        "SELECT pgivm_catalog.record_view(%s, %s::pg_catalog.oid, %s, %s, %s, %s::pg_catalog.jsonb, %s::pg_catalog.jsonb, "
        "%s::pg_catalog.int4, %s, %s::pg_catalog.jsonb)",
        [record.name, record.owner, record.view_schema, record.system, record.definition, json.dumps(record.model),
         json.dumps(record.params), record.model_version, record.template_version, json.dumps(record.objects)],
    )


def get(conn: psycopg.Connection, name: str) -> ViewRecord:
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute("SELECT * FROM pgivm_catalog.views WHERE name = %s", [name]).fetchone()
    if row is None:
        raise UnknownView(f"no pgivm view named {name!r} in this database", "see `pgivm list`")
    return ViewRecord(**row)


def exists(conn: psycopg.Connection, name: str) -> bool:
    row = conn.execute("SELECT EXISTS (SELECT 1 FROM pgivm_catalog.views WHERE name = %s)", [name]).fetchone()
    return bool(row and row[0])


def all_views(conn: psycopg.Connection) -> list[ViewRecord]:
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute("SELECT * FROM pgivm_catalog.views ORDER BY name").fetchall()
    return [ViewRecord(**row) for row in rows]


def set_template_version(conn: psycopg.Connection, name: str, version: str) -> None:
    conn.execute("SELECT pgivm_catalog.set_template_version(%s, %s)", [name, version])


def stop(conn: psycopg.Connection, name: str) -> None:
    """drop's first step in the catalog: writers of the view's tables stop serializing for it."""
    conn.execute("SELECT pgivm_catalog.stop_view(%s)", [name])


def set_params(conn: psycopg.Connection, name: str, params: dict[str, Any], objects: list[dict[str, Any]]) -> None:
    conn.execute("SELECT pgivm_catalog.set_params(%s, %s::pg_catalog.jsonb, %s::pg_catalog.jsonb)",
                 [name, json.dumps(params), json.dumps(objects)])


def delete(conn: psycopg.Connection, name: str) -> None:
    conn.execute("SELECT pgivm_catalog.forget_view(%s)", [name])


def delete_base_tables(conn: psycopg.Connection, name: str) -> None:
    """Forget the view's base tables (the DDL guard then lets its capture triggers go)."""
    conn.execute("SELECT pgivm_catalog.forget_base_tables(%s)", [name])


def as_stored(identifier: str) -> str:
    """A name as PostgreSQL keeps it: cut to 63 bytes (NAMEDATALEN - 1), never inside a character
    (the DDL guard compares the recorded name with pg_attribute's)."""
    return identifier.encode()[:63].decode(errors="ignore")


def insert_base_tables(conn: psycopg.Connection, name: str, view: ResolvedView,
                       triggers: dict[TableRef, list[CaptureTrigger]]) -> None:
    """Pin the view's base tables by oid, with the columns it reads and its capture triggers (the
    tables its derived tables read too, with theirs)."""
    read: dict[TableRef, set[tuple[int, str, str]]] = {}
    for table in view.query.tables:
        read[table] = {(view.attnums[(atom.alias, column)], as_stored(column), view.declared_type(atom.alias, column))
                       for atom in view.query.atoms_of(table) for column in read_columns(atom)}
    for table, columns in view.source_columns.items():
        read.setdefault(table, set()).update((attnum, as_stored(c), declared) for c, (_, attnum, declared) in columns.items())
    for table, columns in read.items():
        base = view.base[table] if table in view.base else view.sources[table]
        conn.execute(
            "SELECT pgivm_catalog.record_base_table(%s, %s::pg_catalog.oid, %s, %s::pg_catalog.jsonb, %s::pg_catalog.jsonb)",
            [name, base.oid, base.partitioned,
             json.dumps([{"attnum": n, "name": c, "type": t} for n, c, t in sorted(columns)]),
             json.dumps([] if base.static else [t.to_json() for t in triggers[table]])],  # constant rows: none
        )


def base_table_oids(conn: psycopg.Connection, name: str) -> list[int]:
    rows = conn.execute("SELECT table_oid::int8 FROM pgivm_catalog.base_tables WHERE view_name = %s ORDER BY table_oid", [name])
    return [int(row[0]) for row in rows.fetchall()]


def trigger_names(conn: psycopg.Connection, name: str) -> list[str]:
    rows = conn.execute(
        "SELECT DISTINCT x ->> 'name' FROM pgivm_catalog.base_tables b, jsonb_array_elements(b.triggers) x WHERE b.view_name = %s",
        [name])
    return sorted(row[0] for row in rows.fetchall())


def base_table_problems(conn: psycopg.Connection, name: str) -> list[str]:
    """What ``pgivm_catalog.check_base_table`` finds wrong with the view's base tables (none when all is well)."""
    rows = conn.execute(
        """
        SELECT p FROM pgivm_catalog.base_tables b, pgivm_catalog.check_base_table(b.view_name, b.table_oid) p WHERE b.view_name = %s
        UNION ALL
        SELECT p FROM pgivm_catalog.check_detached(%s) p
        """,
        [name, name])
    return [row[0] for row in rows.fetchall()]


def trigger_functions(conn: psycopg.Connection, name: str) -> list[tuple[str, str]]:
    """The (schema, name) of every capture trigger function of the view: those of its state schema,
    not the catalog's own lock_writes, which every immediate view's lock trigger calls."""
    rows = conn.execute(
        "SELECT DISTINCT x -> 'function' ->> 0, x -> 'function' ->> 1 "
        "FROM pgivm_catalog.base_tables b JOIN pgivm_catalog.views v ON v.name = b.view_name, "
        "jsonb_array_elements(b.triggers) x WHERE b.view_name = %s AND x -> 'function' ->> 0 = v.state_schema "
        "ORDER BY 1, 2", [name])
    return [(row[0], row[1]) for row in rows.fetchall()]
