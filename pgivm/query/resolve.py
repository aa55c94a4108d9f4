"""Check a parsed view against the live database: tables exist, columns exist, types join.

The result fixes the SQL type of each join variable (A, B, C), which the state tables use.
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from psycopg import sql

from pgivm.errors import PgivmError, UnsupportedQuery
from pgivm.query.model import Atom, TableRef, TriangleCount

_INTEGER_TYPES = {"smallint", "integer", "bigint"}


@dataclass(frozen=True)
class ResolvedView:
    """A TriangleCount whose tables were found, with the SQL type of each join variable."""

    query: TriangleCount
    tables: dict[TableRef, TableRef]  # as written -> schema-qualified
    variable_types: dict[str, str]  # "a" | "b" | "c" -> a type name from format_type()
    column_types: dict[tuple[str, str], str]  # (alias, column) -> type name

    def qualified(self, table: TableRef) -> TableRef:
        return self.tables[table]


def _lookup_table(conn: psycopg.Connection, table: TableRef) -> tuple[int, TableRef]:
    row = conn.execute(
        """
        SELECT c.oid::int, n.nspname, c.relname, c.relkind::text
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE c.oid = to_regclass(%s)
        """,
        [sql.Identifier(*([table.schema] if table.schema else []), table.name).as_string(conn)],
    ).fetchone()
    if row is None:
        raise PgivmError(f"table {table} does not exist", "create it first, or check the name and search_path")
    oid, schema, name, kind = row
    if kind == "p":
        raise UnsupportedQuery(f"{table} is a partitioned table, which pgivm does not maintain yet")
    if kind != "r":
        raise UnsupportedQuery(f"{table} is not a table (relkind {kind!r}): pgivm maintains views over base tables")
    children = conn.execute("SELECT count(*) FROM pg_inherits WHERE inhparent = %s", [oid]).fetchone()
    if children and children[0]:
        # Triggers on the parent do not see rows written to a child, which the query reads.
        raise UnsupportedQuery(f"{table} has inheritance children, which pgivm does not maintain yet")
    return oid, TableRef(name=name, schema=schema)


def _column_type(conn: psycopg.Connection, oid: int, table: TableRef, column: str) -> str:
    row = conn.execute(
        """
        SELECT format_type(a.atttypid, a.atttypmod),
               EXISTS (SELECT 1 FROM pg_opclass oc JOIN pg_am am ON am.oid = oc.opcmethod
                        WHERE am.amname = 'btree' AND oc.opcdefault AND oc.opcintype = a.atttypid)
          FROM pg_attribute a
         WHERE a.attrelid = %s AND a.attname = %s AND a.attnum > 0 AND NOT a.attisdropped
        """,
        [oid, column],
    ).fetchone()
    if row is None:
        raise PgivmError(f"column {column} does not exist in table {table}")
    type_name, has_btree = row
    if not has_btree:
        raise UnsupportedQuery(f"column {table}.{column} has type {type_name}, which has no btree equality")
    return type_name


def resolve(conn: psycopg.Connection, query: TriangleCount) -> ResolvedView:
    tables: dict[TableRef, TableRef] = {}
    oids: dict[TableRef, int] = {}
    for table in query.tables:
        oids[table], tables[table] = _lookup_table(conn, table)

    column_types: dict[tuple[str, str], str] = {}
    by_variable: dict[str, list[tuple[Atom, str, str]]] = {"a": [], "b": [], "c": []}
    for atom in query.atoms:
        for variable, column in zip(atom.variables, (atom.first, atom.second)):
            type_name = _column_type(conn, oids[atom.table], tables[atom.table], column)
            column_types[(atom.alias, column)] = type_name
            by_variable[variable].append((atom, column, type_name))

    variable_types: dict[str, str] = {}
    for variable, uses in by_variable.items():
        kinds = {type_name for _, _, type_name in uses}
        if len(kinds) == 1:
            variable_types[variable] = kinds.pop()
        elif kinds <= _INTEGER_TYPES:
            variable_types[variable] = "bigint"
        else:
            described = " and ".join(f"{atom.alias}.{column} ({type_name})" for atom, column, type_name in uses)
            raise UnsupportedQuery(f"join columns {described} have different types: cast one table's column type")
    return ResolvedView(query=query, tables=tables, variable_types=variable_types, column_types=column_types)
