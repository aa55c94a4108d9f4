"""The catalog table ``pgivm.views``: one row per maintained view."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row

from pgivm.errors import UnknownView
from pgivm.query.model import Atom, TableRef, TriangleCount


@dataclass(frozen=True)
class ViewRecord:
    name: str
    view_schema: str
    state_schema: str
    strategy: str
    epsilon: float | None
    definition: str
    model: dict[str, Any]
    created_at: datetime | None = None

    @property
    def query(self) -> TriangleCount:
        return model_from_json(self.model)


def model_to_json(query: TriangleCount, qualified: dict[TableRef, TableRef]) -> dict[str, Any]:
    """The parsed query with schema-qualified tables, as stored in the catalog."""
    atoms = []
    for atom in query.atoms:
        table = qualified[atom.table]
        atoms.append({**asdict(atom), "table": {"schema": table.schema, "name": table.name}})
    return {"atoms": atoms, "aggregate": query.aggregate, "output_name": query.output_name}


def model_from_json(model: dict[str, Any]) -> TriangleCount:
    atoms = [Atom(**{**a, "table": TableRef(**a["table"])}) for a in model["atoms"]]
    return TriangleCount(
        r=atoms[0], s=atoms[1], t=atoms[2], aggregate=model["aggregate"], output_name=model["output_name"], sql=""
    )


def insert(conn: psycopg.Connection, record: ViewRecord) -> None:
    conn.execute(
        """
        INSERT INTO pgivm.views (name, view_schema, state_schema, strategy, epsilon, definition, model)
        VALUES (%s, %s, %s, %s, %s, %s, %s)
        """,
        [
            record.name,
            record.view_schema,
            record.state_schema,
            record.strategy,
            record.epsilon,
            record.definition,
            json.dumps(record.model),
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


def set_epsilon(conn: psycopg.Connection, name: str, epsilon: float) -> None:
    conn.execute("UPDATE pgivm.views SET epsilon = %s WHERE name = %s", [epsilon, name])


def delete(conn: psycopg.Connection, name: str) -> None:
    conn.execute("DELETE FROM pgivm.views WHERE name = %s", [name])
