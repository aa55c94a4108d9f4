"""The catalog table ``pgivm.views``: one row per maintained view."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row

from pgivm.errors import UnknownView
from pgivm.capture import CaptureTrigger
from pgivm.query.cq import ConjunctiveQuery, query_from_json, query_to_json
from pgivm.query.model import Atom, TableRef, TriangleCount
from pgivm.query.resolve import ResolvedView, read_columns


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

    @property
    def query(self) -> Any:
        """The stored model: a TriangleCount (version 1) or a ConjunctiveQuery (version 2)."""
        if self.model_version == CQ_MODEL_VERSION:
            return query_from_json(self.model, self.definition)
        return model_from_json(self.model)

    @property
    def table_oids(self) -> dict[TableRef, int]:
        """Each base table of the query (as the model names it) -> the oid it is pinned to."""
        return {table_from_json(a["table"]): int(a["table"]["oid"]) for a in self.model["atoms"]}


def model_to_json(query: Any, view: ResolvedView) -> dict[str, Any]:
    """The parsed query with schema-qualified tables and their oids, as stored in the catalog."""
    if isinstance(query, ConjunctiveQuery):
        return query_to_json(query, {t: {"schema": b.ref.schema, "name": b.ref.name, "oid": b.oid}
                                     for t, b in view.base.items()})
    atoms = []
    for atom in query.atoms:
        base = view.base_of(atom.table)
        atoms.append({**asdict(atom), "table": {"schema": base.ref.schema, "name": base.ref.name, "oid": base.oid}})
    return {"atoms": atoms, "aggregate": query.aggregate, "output_name": query.output_name}


def table_from_json(table: dict[str, Any]) -> TableRef:
    return TableRef(name=table["name"], schema=table.get("schema"))


def model_from_json(model: dict[str, Any]) -> TriangleCount:
    atoms = [Atom(**{**a, "table": table_from_json(a["table"])}) for a in model["atoms"]]
    return TriangleCount(
        r=atoms[0], s=atoms[1], t=atoms[2], aggregate=model["aggregate"], output_name=model["output_name"], sql=""
    )


def insert(conn: psycopg.Connection, record: ViewRecord) -> None:
    conn.execute(
        """
        INSERT INTO pgivm.views (name, view_schema, state_schema, system, definition, model, params,
                                 model_version, template_version, objects)
        VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
        """,
        [
            record.name,
            record.view_schema,
            record.state_schema,
            record.system,
            record.definition,
            json.dumps(record.model),
            json.dumps(record.params),
            record.model_version,
            record.template_version,
            json.dumps(record.objects),
        ],
    )


def get(conn: psycopg.Connection, name: str) -> ViewRecord:
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute("SELECT * FROM pgivm.views WHERE name = %s", [name]).fetchone()
    if row is None:
        raise UnknownView(f"no pgivm view named {name!r} in this database", "see `pgivm list`")
    return ViewRecord(**row)


def exists(conn: psycopg.Connection, name: str) -> bool:
    row = conn.execute("SELECT EXISTS (SELECT 1 FROM pgivm.views WHERE name = %s)", [name]).fetchone()
    return bool(row and row[0])


def all_views(conn: psycopg.Connection) -> list[ViewRecord]:
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute("SELECT * FROM pgivm.views ORDER BY name").fetchall()
    return [ViewRecord(**row) for row in rows]


def set_template_version(conn: psycopg.Connection, name: str, version: str) -> None:
    conn.execute("UPDATE pgivm.views SET template_version = %s WHERE name = %s", [version, name])


def set_params(conn: psycopg.Connection, name: str, params: dict[str, Any], objects: list[dict[str, Any]]) -> None:
    conn.execute("UPDATE pgivm.views SET params = %s, objects = %s WHERE name = %s",
                 [json.dumps(params), json.dumps(objects), name])


def delete(conn: psycopg.Connection, name: str) -> None:
    conn.execute("DELETE FROM pgivm.views WHERE name = %s", [name])


def delete_base_tables(conn: psycopg.Connection, name: str) -> None:
    """Forget the view's base tables (the DDL guard then lets its capture triggers go)."""
    conn.execute("DELETE FROM pgivm.base_tables WHERE view_name = %s", [name])


def insert_base_tables(conn: psycopg.Connection, name: str, view: ResolvedView,
                       triggers: dict[TableRef, list[CaptureTrigger]]) -> None:
    """Pin the view's base tables by oid, with the columns it reads and its capture triggers."""
    for table in view.query.tables:
        base = view.base_of(table)
        columns = sorted(
            {(view.attnums[(atom.alias, column)], column, view.column_types[(atom.alias, column)])
             for atom in view.query.atoms_of(table) for column in read_columns(atom)})
        conn.execute(
            "INSERT INTO pgivm.base_tables (view_name, table_oid, partitioned, columns, triggers) VALUES (%s, %s, %s, %s, %s)",
            [name, base.oid, base.partitioned,
             json.dumps([{"attnum": n, "name": c, "type": t} for n, c, t in columns]),
             json.dumps([t.to_json() for t in triggers[table]])],
        )


def base_table_oids(conn: psycopg.Connection, name: str) -> list[int]:
    rows = conn.execute("SELECT table_oid::int8 FROM pgivm.base_tables WHERE view_name = %s ORDER BY table_oid", [name])
    return [int(row[0]) for row in rows.fetchall()]


def trigger_names(conn: psycopg.Connection, name: str) -> list[str]:
    rows = conn.execute(
        "SELECT DISTINCT x ->> 'name' FROM pgivm.base_tables b, jsonb_array_elements(b.triggers) x WHERE b.view_name = %s",
        [name])
    return sorted(row[0] for row in rows.fetchall())


def base_table_problems(conn: psycopg.Connection, name: str) -> list[str]:
    """What ``pgivm.check_base_table`` finds wrong with the view's base tables (none when all is well)."""
    rows = conn.execute(
        """
        SELECT p FROM pgivm.base_tables b, pgivm.check_base_table(b.view_name, b.table_oid) p WHERE b.view_name = %s
        UNION ALL
        SELECT p FROM pgivm.check_detached(%s) p
        """,
        [name, name])
    return [row[0] for row in rows.fetchall()]


def trigger_functions(conn: psycopg.Connection, name: str) -> list[tuple[str, str]]:
    """The (schema, name) of every capture trigger function of the view."""
    rows = conn.execute(
        "SELECT DISTINCT x -> 'function' ->> 0, x -> 'function' ->> 1 "
        "FROM pgivm.base_tables b, jsonb_array_elements(b.triggers) x WHERE b.view_name = %s ORDER BY 1, 2", [name])
    return [(row[0], row[1]) for row in rows.fetchall()]
