"""Check a parsed view against the live database: tables exist, columns exist, types join.

The result fixes the SQL type of each join variable, which the state tables use, and
pins every base table by its oid: from then on pgivm never looks a base table up by a name that
its owner could point elsewhere (see docs/security.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import psycopg
from psycopg import sql

from pgivm.connection import PLAIN_SCHEMA, operator_path
from pgivm.errors import PgivmError, UnsupportedQuery
from pgivm.query.model import Atom, Packed, TableRef, base_columns

_INTEGER_TYPES = {"smallint", "integer", "bigint"}


@dataclass(frozen=True)
class Partition:
    """A partition below a partitioned base table, at any level."""

    oid: int
    name: str  # schema-qualified and quoted, as SQL
    leaf: bool  # holds rows itself (relkind 'r'); otherwise partitioned further


@dataclass(frozen=True)
class BaseTable:
    """A base table as pgivm pins it: by oid, with what it is now called."""

    oid: int
    ref: TableRef  # schema-qualified, as the oid is named now
    partitioned: bool
    partitions: tuple[Partition, ...] = ()

    @property
    def ident(self) -> sql.Identifier:
        return sql.Identifier(self.ref.schema or "public", self.ref.name)

    @property
    def static(self) -> bool:
        """A table of constant rows in the view's state schema (``pgivm.query.static``): nobody
        writes it, so it carries no trigger. No other table of a pgivm_ schema is a base table
        (``resolve``) but the view's own derived tables (``pgivm.query.derived``)."""
        return (self.ref.schema or "").startswith("pgivm_") and self.ref.name.startswith("static_")

    def guard(self, alias: str) -> sql.Composable:
        """A condition on ``alias``'s rows naming the system column ``tableoid``.

        Only tables have that column, so if the name ever resolves to a view, the query fails
        while it is parsed, before anything could run; for a plain table it also keeps only
        this table's rows.
        """
        column = sql.SQL("{}.tableoid").format(sql.Identifier(alias))
        if self.partitioned:  # rows carry their partition's oid
            return sql.SQL("{} IS NOT NULL").format(column)
        return sql.SQL("{} = {}::pg_catalog.oid").format(column, sql.Literal(self.oid))


@dataclass(frozen=True)
class ResolvedView:
    """A query whose tables were found (pinned by oid), with the SQL type of each join variable.

    ``query`` is the conjunctive query every system receives; a system that plans another shape of
    it (the triangle systems: R, S, T over variables a, b, c) makes its own with ``reshaped``."""

    query: Any  # a ConjunctiveQuery, or the shape a system made of it (see reshaped)
    tables: dict[TableRef, TableRef]  # as written -> schema-qualified
    variable_types: dict[str, str]  # "a" | "b" | "c" -> a type name from format_type()
    column_types: dict[tuple[str, str], str]  # (alias, column) -> type name
    base: dict[TableRef, BaseTable]  # as written -> pinned by oid
    attnums: dict[tuple[str, str], int]  # (alias, column) -> attribute number
    output_types: dict[str, str] | None = None  # a conjunctive query's output column -> PostgreSQL's type for it
    # as written -> the column sets of its unique indexes (primary key first): which joins are PK-FK
    unique_keys: dict[TableRef, tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    # (alias, column) -> the type the table declares, where the state keeps another (a domain's
    # base type); what the catalog records, so that the DDL guard sees a change of it
    declared_types: dict[tuple[str, str], str] = field(default_factory=dict)
    # the tables the query's derived tables read (pgivm.query.derived), as written -> pinned by oid,
    # and the columns read of each: name -> (type, attnum, declared type)
    sources: dict[TableRef, BaseTable] = field(default_factory=dict)
    source_columns: dict[TableRef, dict[str, tuple[str, int, str]]] = field(default_factory=dict)
    # schemas where the equality of an extension's type is found (citext's, vector's), checked as
    # only superusers' to write: the view's functions look operators up there (after pg_catalog)
    operator_schemas: tuple[str, ...] = ()
    # the view's state schema (where the types of its packed variables are made), when known
    state_schema: str | None = None
    # a shape's packed variables (``model.Packed``): variable -> its composite's fields (name, type)
    packs: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    # columns read whose collation is nondeterministic ('a' = 'A' under a case-insensitive ICU
    # collation): "alias.column (collation)", which only a system comparing as PostgreSQL does takes
    nondeterministic: tuple[str, ...] = ()
    # (alias, column) -> its collation where not the database's default ("C", an ICU one): what
    # orders a min or max of it
    collations: dict[tuple[str, str], str] = field(default_factory=dict)
    # output column -> the collation PostgreSQL's evaluation of the query gives it, where not the
    # database's default (a column's own, a min or max of it): what the user view shows it in
    output_collations: dict[str, str] = field(default_factory=dict)

    def declared_type(self, alias: str, column: str) -> str:
        return self.declared_types.get((alias, column), self.column_types[(alias, column)])

    def reshaped(self, shape: Any) -> ResolvedView:
        """The same tables and columns seen through another shape of the query (its atoms have the
        same aliases and read the same columns, over variables of their own): the join variables'
        types are the shape's."""
        uses: dict[str, list[tuple[Any, str, str]]] = {}
        packs: dict[str, tuple[tuple[str, str], ...]] = {}
        for atom in shape.atoms:
            for variable, column in zip(atom.variables, atom.columns):
                if isinstance(column, Packed):  # each field typed as the query's variable it carries
                    packs[variable] = tuple((f"f{i + 1}", self.variable_types[v]) for i, v in enumerate(column.components))
                else:
                    uses.setdefault(variable, []).append((atom, column, self.column_types[(atom.alias, column)]))
        types = {**_variable_types(uses), **{v: pack_type(self.state_schema, v) for v in packs}}
        return replace(self, query=shape, variable_types=types, output_types=None, packs=packs)

    def qualified(self, table: TableRef) -> TableRef:
        return self.tables[table]

    def base_of(self, table: TableRef) -> BaseTable:
        return self.base[table]


# The tables with these oids, in one query (a view's tables are pinned together).
_TABLES_BY_OID = """
SELECT c.oid::int8, n.nspname, c.relname, c.relkind::text, c.relispartition, c.relrowsecurity,
       EXISTS (SELECT 1 FROM pg_catalog.pg_inherits i WHERE i.inhrelid = c.oid OR i.inhparent = c.oid)
  FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE c.oid = ANY (%s::pg_catalog.oid[])
"""


def _lookup_oid(conn: psycopg.Connection, table: TableRef) -> int:
    """The table a name leads to, as PostgreSQL would resolve it in the user's query: an unqualified
    name on the search_path the session had before pgivm fixed its own."""
    from pgivm.connection import user_search_path

    with user_search_path(conn), _schema_access(table):  # only a qualified function and type below: safe on any path
        row = conn.execute(
            "SELECT pg_catalog.to_regclass(%s)::pg_catalog.oid::pg_catalog.int8",
            [sql.Identifier(*([table.schema] if table.schema else []), table.name).as_string(conn)],
        ).fetchone()
    if row is None or row[0] is None:
        raise PgivmError(f"table {table} does not exist", "create it first, or check the name and search_path")
    return int(row[0])


@contextmanager
def _schema_access(table: TableRef) -> Iterator[None]:
    """A table name looked up in a schema this role may not use: one line, not PostgreSQL's error."""
    try:
        yield
    except psycopg.errors.InsufficientPrivilege:
        raise PgivmError(f"table {table}: this role may not use its schema",
                         "its schema's owner can GRANT USAGE on it") from None


def pin_tables(conn: psycopg.Connection, oids: Mapping[TableRef, int]) -> dict[TableRef, BaseTable]:
    """``pin_table`` of each table (as written) with its oid, with one catalog query for all."""
    rows = {int(row[0]): row for row in conn.execute(_TABLES_BY_OID, [list(oids.values())])}
    return {table: pin_table(conn, oid, table, rows.get(oid)) for table, oid in oids.items()}


def pin_table(conn: psycopg.Connection, oid: int, written: TableRef | str, row: Any) -> BaseTable:
    """The base table with this oid as it is now, or a one-line refusal saying why it cannot be one
    (``row``: its line of _TABLES_BY_OID, None if there is none)."""
    if row is None:
        raise PgivmError(f"table {written} no longer exists (oid {oid})", "drop the view with `pgivm drop`")
    _, schema, name, kind, is_partition, row_security, inherits = row
    shown = f"{schema}.{name}"
    if kind not in ("r", "p"):
        raise UnsupportedQuery(f"{shown} is not a table (relkind {kind!r}): pgivm maintains views over base tables")
    if is_partition:
        # Writes through the parent would bypass the partition's statement triggers.
        raise UnsupportedQuery(f"{shown} is a partition: define the view over its partitioned parent table instead")
    if kind == "r" and inherits:
        # Triggers fire for the table a statement names: a write through an inheritance parent
        # would change rows the query reads without telling the child's triggers, and vice versa.
        raise UnsupportedQuery(f"{shown} takes part in table inheritance, which pgivm does not maintain: "
                               "use declarative partitioning (PARTITION BY) instead")
    if row_security:
        raise UnsupportedQuery(f"{shown} has row-level security enabled: pgivm must see every row of a base table")
    partitions: tuple[Partition, ...] = ()
    if kind == "p":
        found = conn.execute(
            """
            SELECT c.oid::int8, pg_catalog.format('%%I.%%I', n.nspname, c.relname), c.relkind::text, c.relrowsecurity
              FROM pg_catalog.pg_partition_tree(%s::pg_catalog.regclass) t
              JOIN pg_catalog.pg_class c ON c.oid = t.relid
              JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
             WHERE t.relid <> %s::pg_catalog.oid
             ORDER BY t.level, c.oid
            """,
            [oid, oid],
        ).fetchall()
        for part_oid, part_name, part_kind, part_rls in found:
            if part_kind not in ("r", "p"):
                raise UnsupportedQuery(f"partition {part_name} of {shown} is not a table (relkind {part_kind!r}): "
                                       "pgivm cannot see writes to foreign partitions")
            if part_rls:
                raise UnsupportedQuery(f"partition {part_name} of {shown} has row-level security enabled: "
                                       "pgivm must see every row of a base table")
        partitions = tuple(Partition(int(o), n, k == "r") for o, n, k, _ in found)
    return BaseTable(oid=oid, ref=TableRef(name=name, schema=schema), partitioned=kind == "p", partitions=partitions)


def _own_equality(x: str) -> str:
    """SQL true of a type oid ``x`` that is PostgreSQL's own (not a domain, whose CHECK is its
    owner's code) with pg_catalog's default btree equality, or one binary-coercible to such."""
    return f"""({x} < 16384 AND EXISTS (SELECT 1 FROM pg_catalog.pg_opclass eo
        JOIN pg_catalog.pg_am ea ON ea.oid = eo.opcmethod AND ea.amname = 'btree'
        WHERE eo.opcdefault AND eo.opcnamespace = 'pg_catalog'::pg_catalog.regnamespace
          AND (eo.opcintype = {x} OR EXISTS (SELECT 1 FROM pg_catalog.pg_cast ec WHERE ec.castsource = {x}
                                              AND ec.casttarget = eo.opcintype AND ec.castmethod = 'b'))))"""


# The equality a type's values are compared with in generated code: the default btree operator
# class of the type, of a type it is binary-coercible to (varchar to text), anyenum's for an
# enum, anyarray's for an array, anyrange's for a range: pg_catalog's
# own, since generated functions run with search_path = pg_catalog and call no operator another
# role could define; and the polymorphic ones only where what they compare inside is PostgreSQL's
# own too. (k.oid: the type of a column in _STATE_TYPES.)
_EQUALITY = f"""
SELECT oc.opcnamespace = 'pg_catalog'::pg_catalog.regnamespace AS in_catalog, n.nspname,
       (SELECT o.oprnamespace FROM pg_catalog.pg_amop ao JOIN pg_catalog.pg_operator o ON o.oid = ao.amopopr
         WHERE ao.amopfamily = oc.opcfamily AND ao.amopstrategy = 3
           AND ao.amoplefttype = oc.opcintype AND ao.amoprighttype = oc.opcintype) AS op_schema,
       -- the code comparing, hashing and reading the values: the equality's, the family's support
       -- functions, the type's own; a superuser's (an extension's), or changeable by another role
       NOT EXISTS (SELECT 1 FROM pg_catalog.pg_proc f JOIN pg_catalog.pg_roles w ON w.oid = f.proowner
                    WHERE NOT w.rolsuper
                      AND (f.oid IN (SELECT o.oprcode FROM pg_catalog.pg_amop ao JOIN pg_catalog.pg_operator o ON o.oid = ao.amopopr
                                      WHERE ao.amopfamily = oc.opcfamily)
                           OR f.oid IN (SELECT ap.amproc FROM pg_catalog.pg_amproc ap WHERE ap.amprocfamily = oc.opcfamily)
                           OR f.oid IN (t.typinput, t.typoutput, t.typreceive, t.typsend, t.typmodin, t.typmodout,
                                        t.typanalyze, t.typsubscript))) AS superusers_code
  FROM pg_catalog.pg_type t, pg_catalog.pg_opclass oc
  JOIN pg_catalog.pg_am am ON am.oid = oc.opcmethod AND am.amname = 'btree'
  JOIN pg_catalog.pg_namespace n ON n.oid = oc.opcnamespace
 WHERE t.oid = k.oid AND oc.opcdefault
   AND (oc.opcintype = t.oid
        OR (t.typtype = 'e' AND oc.opcintype = 'pg_catalog.anyenum'::pg_catalog.regtype)
        OR EXISTS (SELECT 1 FROM pg_catalog.pg_cast c
                    WHERE c.castsource = t.oid AND c.casttarget = oc.opcintype AND c.castmethod = 'b')
        -- an array compares its elements by their type's default btree equality
        OR (t.typcategory = 'A' AND oc.opcintype = 'pg_catalog.anyarray'::pg_catalog.regtype
            AND {_own_equality("t.typelem")})
        -- a range (or multirange) compares its bounds by its subtype's operator class: pg_catalog's, of
        -- PostgreSQL's own subtype, with no canonical function but PostgreSQL's (int4range's)
        OR (t.typtype IN ('r', 'm') AND oc.opcintype = CASE t.typtype WHEN 'r' THEN 'pg_catalog.anyrange'::pg_catalog.regtype
                                                          ELSE 'pg_catalog.anymultirange'::pg_catalog.regtype END
            AND EXISTS (SELECT 1 FROM pg_catalog.pg_range rg JOIN pg_catalog.pg_opclass so ON so.oid = rg.rngsubopc
                         WHERE t.oid IN (rg.rngtypid, rg.rngmultitypid)
                           AND so.opcnamespace = 'pg_catalog'::pg_catalog.regnamespace
                           AND rg.rngsubtype < 16384 AND rg.rngcanonical::pg_catalog.oid < 16384)))
-- the type's own operator class first, as PostgreSQL resolves `=` (citext's, not text's through
-- the binary cast: 'abc' = 'ABC'), then pg_catalog's
 ORDER BY oc.opcintype = t.oid DESC, 1 DESC
 LIMIT 1
"""


# Columns' types as the state keeps them: a domain's base type (recursively, with the base's
# typmod), since a domain's CHECK constraints are code its owner could change, which writers'
# triggers would run when they insert into the state; any other type as it is. With each, the
# equality its values are compared with (see _EQUALITY). One query for all the columns of a
# view's tables: (table oid, column name) pairs.
_STATE_TYPES = """
WITH RECURSIVE wanted AS (
    -- keyed by the name asked for: a name compares as PostgreSQL's own, cut to 63 bytes
    SELECT c.tbl, c.name, a.attnum, a.atttypid, a.atttypmod
      FROM ROWS FROM (pg_catalog.unnest(%(tables)s::pg_catalog.oid[]), pg_catalog.unnest(%(columns)s::text[])) AS c(tbl, name)
      JOIN pg_catalog.pg_attribute a ON a.attrelid = c.tbl AND a.attname = c.name::pg_catalog.name
       AND a.attnum > 0 AND NOT a.attisdropped
), base AS (
    SELECT tbl, name, atttypid AS oid, atttypmod AS typmod, 0 AS depth FROM wanted
    UNION ALL
    SELECT b.tbl, b.name, t.typbasetype, t.typtypmod, b.depth + 1 FROM base b JOIN pg_catalog.pg_type t ON t.oid = b.oid
     WHERE t.typtype = 'd' AND b.depth < 32
), kept AS (
    SELECT DISTINCT ON (b.tbl, b.name) b.tbl, b.name, b.oid, b.typmod FROM base b ORDER BY b.tbl, b.name, b.depth DESC
)
SELECT w.tbl::int8, w.name, pg_catalog.format_type(k.oid, k.typmod), w.attnum, pg_catalog.format_type(w.atttypid, w.atttypmod),
       eq.in_catalog, eq.nspname, (SELECT t.typtype FROM pg_catalog.pg_type t WHERE t.oid = k.oid),
       eq.op_schema::int8, (SELECT s.nspname FROM pg_catalog.pg_namespace s WHERE s.oid = eq.op_schema), eq.superusers_code
  FROM wanted w JOIN kept k ON k.tbl = w.tbl AND k.name = w.name
  LEFT JOIN LATERAL ({equality}) eq ON true
""".format(equality=_EQUALITY)


def _table_columns(conn: psycopg.Connection, read: Mapping[TableRef, tuple[BaseTable, list[str]]],
                   operator_schemas: set[str] | None = None) -> dict[TableRef, dict[str, tuple[str, int, str]]]:
    """``_columns`` of each table (as written), with one catalog query for all. A type whose
    equality an extension defines adds the schema its operators are found in to
    ``operator_schemas`` (once that schema is checked: ``_trusted``)."""
    pairs = sorted({(table.oid, column) for table, columns in read.values() for column in columns})
    rows = conn.execute(_STATE_TYPES, {"tables": [t for t, _ in pairs], "columns": [c for _, c in pairs]}).fetchall()
    found: dict[int, dict[str, Any]] = {}
    for row in rows:
        found.setdefault(int(row[0]), {})[row[1]] = row[2:]
    out = {written: _columns(table, columns, found.get(table.oid, {})) for written, (table, columns) in read.items()}
    for written, (table, columns) in read.items():
        for column in columns:
            type_name, _, _, in_catalog, _, _, schema_oid, schema, superusers_code = found[table.oid][column]
            if not in_catalog:
                _trusted(conn, f"{table.ref}.{column}", type_name, schema_oid, schema, superusers_code)
                if operator_schemas is not None:
                    operator_schemas.add(schema)
    return out


def _trusted(conn: psycopg.Connection, column: str, type_name: str, schema_oid: int | None, schema: str | None,
             superusers_code: bool) -> None:
    """A one-line refusal unless the equality of an extension's type (citext, pgvector's vector) may
    be looked up by the view's functions: its code is superusers' alone, and it is found in a
    schema only superusers write (``pgivm_catalog.trusted_schema``), named plainly. Before
    ``init`` (choosing a system) the schema is checked later, by create."""
    if schema is None or schema_oid is None:
        raise UnsupportedQuery(f"column {column} has type {type_name}, whose btree operator class has no equality "
                               "operator for it")
    if not superusers_code:
        raise UnsupportedQuery(f"column {column} has type {type_name}, whose equality, hashing or input runs a "
                               "function a role other than a superuser owns: generated code would run it")
    if not PLAIN_SCHEMA.fullmatch(schema):
        raise UnsupportedQuery(f"column {column} has type {type_name}, whose equality is in schema {schema!r}: "
                               "pgivm looks operators up only in schemas named in lowercase letters, digits and _")
    checked = conn.execute("SELECT CASE WHEN pg_catalog.to_regproc('pgivm_catalog.trusted_schema') IS NOT NULL "
                           "THEN pgivm_catalog.trusted_schema(%s::pg_catalog.oid) END", [schema_oid]).fetchone()
    if checked is not None and checked[0] is False:
        raise UnsupportedQuery(f"column {column} has type {type_name}, whose equality is in schema {schema}, which "
                               "roles other than superusers may write: the view's functions would look operators up there",
                               f"move the extension to a schema only superusers write (ALTER EXTENSION ... SET SCHEMA ...), or "
                               f"REVOKE CREATE ON SCHEMA {schema} FROM PUBLIC")


SYSTEM_COLUMNS = frozenset({"ctid", "xmin", "xmax", "cmin", "cmax", "tableoid"})


def _columns(table: BaseTable, columns: list[str], found: dict[str, Any]) -> dict[str, tuple[str, int, str]]:
    """Each column's type as the state keeps it, its number, and its type as declared; a one-line
    refusal for a column missing or without an equality generated code may call (in ``columns``' order).
    ``found``: the table's lines of _STATE_TYPES by column name."""
    out: dict[str, tuple[str, int, str]] = {}
    for column in columns:
        if column not in found and column in SYSTEM_COLUMNS:
            raise UnsupportedQuery(f"system column {column} (of table {table.ref}) is not supported in a maintained "
                                   "view: it changes under VACUUM FULL, CLUSTER and UPDATE without a change of the row's values")
        if column not in found:
            raise PgivmError(f"column {column} does not exist in table {table.ref}")
        type_name, attnum, declared, in_catalog, namespace, kind, *_ = found[column]
        if in_catalog is None and type_name.endswith("[]"):
            raise UnsupportedQuery(f"column {table.ref}.{column} has type {type_name}: arrays are supported of "
                                   "PostgreSQL's own types (int[], text[], date[], ...), with an equality a join can use")
        if kind == "c":  # (v IS NULL is true of a row of NULLs, which the state's NULL patterns would take for NULL)
            raise UnsupportedQuery(f"column {table.ref}.{column} has composite type {type_name}: not supported, nor its fields",
                                   f"a stored generated column of a field is: GENERATED ALWAYS AS (({sql.Identifier(column).as_string(None)}).x) STORED")
        if in_catalog is None and kind in ("r", "m"):
            raise UnsupportedQuery(f"column {table.ref}.{column} has type {type_name}: range types are supported "
                                   "over PostgreSQL's own types (int, numeric, date, ...), whose ordering is pg_catalog's")
        if in_catalog is None:
            raise UnsupportedQuery(f"column {table.ref}.{column} has type {type_name}, which has no equality a join or "
                                   "GROUP BY can use (no default btree operator class)")
        out[column] = (type_name, int(attnum), declared)
    return out


def pack_type(state_schema: str | None, variable: str) -> str:
    """The composite type of a packed variable, made in the view's state schema; ``record`` (which
    no table column can be) while the schema is not known: such a view was only to be analysed."""
    if state_schema is None:
        return "record"
    return sql.Identifier(state_schema, f"pack_{variable}").as_string(None)


def read_columns(atom: Any) -> tuple[str, ...]:
    """The columns a view reads from an atom: a triangle atom's two, a conjunctive query atom's all
    (a shape's packed variables unpacked: ``model.base_columns``)."""
    return base_columns((atom.first, atom.second) if isinstance(atom, Atom) else atom.columns)


def view_definition(conn: psycopg.Connection, table: TableRef) -> str | None:
    """The SQL of a plain view a name leads to (as the user's search_path resolves it), with its
    names written as that search_path reads them back; None for anything else (or no such name)."""
    from pgivm.connection import user_search_path

    if (table.schema or "").startswith("pgivm_"):  # pgivm's state: no view to inline (resolve refuses it)
        return None
    # Operators named with their schema too: pg_catalog has no =(oid, regclass), so on the user's
    # path a stranger's public.=(oid, regclass) would be an exact match, and run.
    with user_search_path(conn), _schema_access(table):
        row = conn.execute(
            "SELECT CASE WHEN c.relkind OPERATOR(pg_catalog.=) 'v'::pg_catalog.\"char\" THEN pg_catalog.pg_get_viewdef(c.oid) END "
            "FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) pg_catalog.to_regclass(%s)::pg_catalog.oid",
            [sql.Identifier(*([table.schema] if table.schema else []), table.name).as_string(conn)]).fetchone()
    return row[0] if row else None


def column_names(conn: psycopg.Connection, table: TableRef) -> list[str]:
    """The columns of a table in order (for ``SELECT *``), or a one-line error if it does not exist."""
    oid = _lookup_oid(conn, table)
    rows = conn.execute("SELECT attname FROM pg_catalog.pg_attribute WHERE attrelid = %s AND attnum > 0 "
                        "AND NOT attisdropped ORDER BY attnum", [oid]).fetchall()
    return [r[0] for r in rows]


def resolve(conn: psycopg.Connection, query: Any, oids: Mapping[TableRef, int] | None = None,
            state_schema: str | None = None) -> ResolvedView:
    """Find the query's tables and columns. ``oids`` pins tables already resolved once (an installed
    view): they are then found by oid, whatever they are called now. Types are named as they read
    on pgivm's own path (an extension's schema-qualified: ``ext.vector(2)``), whatever schemas the
    session looks operators up in: the catalog records them, and the DDL guard compares."""
    with operator_path(conn, ()):
        return replace(_resolve(conn, query, oids), state_schema=state_schema)


def _resolve(conn: psycopg.Connection, query: Any, oids: Mapping[TableRef, int] | None) -> ResolvedView:
    tables: dict[TableRef, TableRef] = {}
    static = {relation.table for relation in (*getattr(query, "static", ()), *getattr(query, "derived", ()))}
    found_oids: dict[TableRef, int] = {}
    for table in query.tables:
        if oids is None and (table.schema or "").startswith("pgivm_") and table not in static:
            _not_state(table)
        found_oids[table] = oids[table] if oids is not None else _lookup_oid(conn, table)
    first_name: dict[int, TableRef] = {}
    for table, oid in found_oids.items():
        other = first_name.setdefault(oid, table)
        if other != table:  # each name gets its own capture: one table would get two
            raise UnsupportedQuery(f"{other} and {table} name the same table: write it one way throughout the view",
                                   f"write {other} in both places; an alias tells the two uses apart")
    base = pin_tables(conn, found_oids)
    for table in query.tables:
        tables[table] = base[table].ref
        if oids is None and (base[table].ref.schema or "").startswith("pgivm_") and table not in static:
            _not_state(base[table].ref)

    column_types: dict[tuple[str, str], str] = {}
    declared_types: dict[tuple[str, str], str] = {}
    attnums: dict[tuple[str, str], int] = {}
    by_variable: dict[str, list[tuple[Any, str, str]]] = {}
    read: dict[TableRef, dict[str, None]] = {}  # each table's columns once, in the order the atoms read them
    for atom in query.atoms:
        read.setdefault(atom.table, {}).update(dict.fromkeys(read_columns(atom)))
    schemas: set[str] = set()
    found = _table_columns(conn, {table: (base[table], list(columns)) for table, columns in read.items()}, schemas)
    for atom in query.atoms:
        for variable, column in zip(atom.variables, read_columns(atom)):
            type_name, attnum, declared = found[atom.table][column]
            column_types[(atom.alias, column)] = type_name
            declared_types[(atom.alias, column)] = declared
            attnums[(atom.alias, column)] = attnum
            by_variable.setdefault(variable, []).append((atom, column, type_name))

    _check_using_in_expressions(conn, query, column_types)
    variable_types = {**_variable_types(by_variable), **_computed_types(conn, query, column_types)}
    sources = pin_sources(conn, query, oids, operator_schemas=schemas)
    collated = conn.execute(_COLLATIONS, [[base[a.table].oid for a in query.atoms for _ in read_columns(a)],
                                          [c for a in query.atoms for c in read_columns(a)]]).fetchall()
    aliases_of = {oid: [a.alias for a in query.atoms if base[a.table].oid == oid] for oid, *_ in collated}
    collations = {(alias, column): collation for oid, column, collation, _ in collated for alias in aliases_of[oid]}
    return ResolvedView(query=query, tables=tables, variable_types=variable_types,
                        nondeterministic=tuple(f"{aliases_of[oid][0]}.{column} ({collation})"
                                               for oid, column, collation, deterministic in collated if not deterministic),
                        collations=collations, output_collations=_output_collations(conn, query, column_types, collations),
                        column_types=column_types, base=base, attnums=attnums,
                        output_types=_output_types(conn, query, column_types),
                        unique_keys=_unique_keys_of(conn, base),
                        declared_types=declared_types, operator_schemas=tuple(sorted(schemas)), **sources)


# the columns read whose collation is not the database's default, each with it (schema-qualified
# where it needs) and whether it is deterministic
_COLLATIONS = """
SELECT DISTINCT a.attrelid::int8, a.attname::text, c.oid::pg_catalog.regcollation::text, c.collisdeterministic
  FROM ROWS FROM (pg_catalog.unnest(%s::pg_catalog.oid[]), pg_catalog.unnest(%s::text[])) AS w(tbl, name)
  JOIN pg_catalog.pg_attribute a ON a.attrelid = w.tbl AND a.attname = w.name::pg_catalog.name
  JOIN pg_catalog.pg_collation c ON c.oid = a.attcollation
 WHERE c.oid <> 'pg_catalog.default'::pg_catalog.regcollation
 ORDER BY 1, 2
"""


def collate(collation: str | None) -> sql.Composable:
    """`` COLLATE name`` for a collation as regcollation or pg_collation_for writes it (quoted and
    schema-qualified where needed), nothing for None (the database's default)."""
    return sql.SQL(" COLLATE {}").format(sql.SQL(collation)) if collation else sql.SQL("")  # type: ignore[arg-type]


def pin_sources(conn: psycopg.Connection, query: Any, oids: Mapping[TableRef, int] | None = None,
                among: Callable[[TableRef], bool] | None = None, operator_schemas: set[str] | None = None) -> dict[str, Any]:
    """The tables the derived tables read (those ``among`` takes), pinned (by the oids given, for an
    installed view), and the columns read of each. A derived table may read another of the view's
    (TPC-H Q15's maximum of a WITH query's sums)."""
    read: dict[TableRef, set[str]] = {}
    for relation in getattr(query, "derived", ()):
        for source in relation.sources:
            if among is None or among(source.table):
                read.setdefault(source.table, set()).update(source.columns)
    if not read:
        return {}
    own = {relation.table for relation in query.derived}
    found = {t: oids[t] if oids is not None and t in oids else _lookup_oid(conn, t) for t in read}
    base = pin_tables(conn, found)
    for table, pinned in base.items():
        if oids is None and (pinned.ref.schema or "").startswith("pgivm_") and table not in own:
            _not_state(pinned.ref)
    columns = _table_columns(conn, {t: (base[t], sorted(c)) for t, c in read.items()}, operator_schemas)
    return {"sources": base, "source_columns": columns}


def _not_state(table: TableRef) -> None:
    raise UnsupportedQuery(f"{table} is a table of pgivm's state, not a base table: read the view "
                           f"{(table.schema or '').removeprefix('pgivm_')} instead")


def _variable_types(by_variable: dict[str, list[tuple[Any, str, str]]]) -> dict[str, str]:
    """Each join variable's type: its columns' one type, bigint for integers of several widths, text
    for varchar of any lengths and text, and for char(n) and text (PostgreSQL joins them as text,
    char(n) without its padding), numeric for numerics of any precision and scale and integers (PostgreSQL joins them
    as numeric, by value: 1.0 = 1), timestamp for date and timestamp (a date is its midnight; not
    timestamptz, whose comparison with them depends on the session's TimeZone), or a one-line
    refusal."""
    variable_types: dict[str, str] = {}
    for variable, uses in by_variable.items():
        kinds = {type_name for _, _, type_name in uses}
        if len(kinds) == 1:
            variable_types[variable] = kinds.pop()
        elif kinds <= _INTEGER_TYPES:
            variable_types[variable] = "bigint"
        elif all(_is_text(kind) for kind in kinds) or (all(k == "text" or _is_char(k) for k in kinds)):
            variable_types[variable] = "text"  # char(n) = text compares char(n) without its padding, as text
            # (char(n) = varchar compares as char(n), both paddings ignored, where GROUP BY of the
            # varchar tells 'ab ' from 'ab': refused below)
        elif all(k == "date" or re.fullmatch(r"timestamp(\(\d\))? without time zone", k) for k in kinds):
            variable_types[variable] = "timestamp without time zone"  # date = timestamp: the date at midnight
        elif all(_is_numeric(kind) or kind in _INTEGER_TYPES for kind in kinds):
            variable_types[variable] = "numeric"
        else:
            described = " and ".join(f"{atom.alias}.{column} ({type_name})" for atom, column, type_name in uses)
            raise UnsupportedQuery(f"join columns {described} have different types: cast one table's column type")
    return variable_types


def _is_char(type_name: str) -> bool:
    """char(n) (bpchar): joined with text or varchar, PostgreSQL compares it as text, padding gone."""
    return re.fullmatch(r"(character|bpchar)(\(\d+\))?", type_name) is not None


def _is_numeric(type_name: str) -> bool:
    return re.fullmatch(r"numeric(\(\d+(,\d+)?\))?", type_name) is not None


def _is_text(type_name: str) -> bool:
    """text, or varchar of any length: the same values, compared as text."""
    return type_name == "text" or re.fullmatch(r"character varying(\(\d+\))?", type_name) is not None


_UNIQUE_KEYS = """
SELECT x.indrelid::int8, array_agg(a.attname::text ORDER BY k.i)
  FROM pg_catalog.pg_index x
  CROSS JOIN LATERAL unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, i)
  JOIN pg_catalog.pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
 WHERE x.indrelid = ANY (%s::pg_catalog.oid[]) AND x.indisunique AND x.indpred IS NULL AND x.indexprs IS NULL
 GROUP BY x.indrelid, x.indexrelid, x.indisprimary
 ORDER BY x.indrelid, x.indisprimary DESC, x.indexrelid
"""


def _unique_keys_of(conn: psycopg.Connection, base: Mapping[TableRef, BaseTable]) -> dict[TableRef, tuple[tuple[str, ...], ...]]:
    """Each table's column sets on which its rows are unique (plain unique indexes, primary key
    first): a join on all columns of one of them matches at most one row of that table."""
    keys: dict[int, list[tuple[str, ...]]] = {}
    for oid, columns in conn.execute(_UNIQUE_KEYS, [[b.oid for b in base.values()]]).fetchall():
        keys.setdefault(int(oid), []).append(tuple(columns))
    return {table: tuple(keys.get(b.oid, ())) for table, b in base.items()}


def _columns_of(expr: Any) -> list[Any]:
    if hasattr(expr, "refs"):  # a computed value
        return [r.column for r in expr.refs]
    if hasattr(expr, "column"):
        return [expr.column]
    if hasattr(expr, "left"):
        return _columns_of(expr.left) + _columns_of(expr.right)
    return []


# A type without its typmod, as a cast to it reads: format_type names bpchar "character", which as
# a cast is character(1) and cuts 'ab ' to 'a' (max of a char(3) column is a bpchar of any length).
_UNCONSTRAINED = ("CASE WHEN {t} = 'pg_catalog.bpchar'::pg_catalog.regtype THEN 'bpchar' "
                  "ELSE pg_catalog.format_type({t}, NULL) END")


def _check_using_in_expressions(conn: psycopg.Connection, query: Any, column_types: dict[tuple[str, str], str]) -> None:
    """A USING column read inside an expression is of the common type of the columns it merges
    (k / 2 over int USING numeric divides in numeric); pgivm reads the column it keeps, in its own
    type: refused in one line where the types differ (the cast it needs named)."""
    numbers = ("smallint", "integer", "bigint", "numeric", "real", "double precision")
    for use, kept, refs in getattr(query, "using_in_expressions", ()):
        kinds = [column_types.get((r.alias, r.column)) for r in refs]
        if None in kinds or len(set(kinds)) < 2:
            continue
        if use == "compared" and all(k.startswith(numbers) for k in kinds):  # type: ignore[union-attr]
            continue  # numbers compare by value whatever their type
        common = _type_of(conn, sql.SQL("coalesce({})").format(sql.SQL(", ").join(_typed_null(column_types)(r) for r in refs)))
        raise UnsupportedQuery(f"USING column {kept.column} merges {' and '.join(f'{r} ({k})' for r, k in zip(refs, kinds))}, "
                               f"read in an expression as {common}: write CAST({kept} AS {common}) there")


def _type_of(conn: psycopg.Connection, expression: sql.Composable) -> str:
    """The type PostgreSQL gives an expression over typed NULLs (planned, never run)."""
    description = conn.execute(sql.SQL("SELECT {} LIMIT 0").format(expression)).description or []
    row = conn.execute(f"SELECT {_UNCONSTRAINED.format(t='t')} FROM (SELECT %s::pg_catalog.oid AS t) AS u",
                       [description[0].type_code]).fetchone()
    return row[0] if row else "text"


def _typed_null(column_types: dict[tuple[str, str], str], collations: dict[tuple[str, str], str] | None = None) -> Any:
    """A column as a NULL of its type (in its collation, with ``collations``): what PostgreSQL types
    an expression over it by, without reading a table."""
    return lambda ref: sql.SQL("NULL::{}{}").format(sql.SQL(column_types[(ref.alias, ref.column)]),  # type: ignore[arg-type]
                                                    collate((collations or {}).get((ref.alias, ref.column))))


def _computed_types(conn: psycopg.Connection, query: Any, column_types: dict[tuple[str, str], str]) -> dict[str, str]:
    """The type of each computed aggregate argument (a value of the joined row, like a column)."""
    from pgivm.query.cq import computed_in

    typed = _typed_null(column_types)
    computed = [c for a in query.aggregates for c in computed_in(a.argument)] + list(query.group_computed)
    return {c.variable: _type_of(conn, c.render(lambda v: typed(v.column))) for c in computed}


def _output_collations(conn: psycopg.Connection, query: Any, column_types: dict[tuple[str, str], str],
                       collations: dict[tuple[str, str], str]) -> dict[str, str]:
    """The collation of each output PostgreSQL's evaluation gives it, where not the database's
    default: a GROUP BY column or listed column of a collated column, a min or max of one, found
    over typed NULLs in the columns' collations (one query, only when a column read has one)."""
    from pgivm.query.cq import GroupColumn, Var

    typed = _typed_null(column_types, collations)

    def collated(ref: Any) -> bool:
        return (ref.alias, ref.column) in collations

    items: dict[str, sql.Composable] = {}  # (pg_collation_for refuses a type that has no collation)
    for output in query.outputs:
        if isinstance(output, GroupColumn) and output.computed is None and collated(output.column):
            items[output.name] = output.render(typed)
        elif not isinstance(output, GroupColumn) and output.function in ("min", "max") and isinstance(output.argument, Var) \
                and collated(output.argument.column):
            items[output.name] = sql.SQL("{}({})").format(sql.SQL(output.function), typed(output.argument.column))  # type: ignore[arg-type]
    if not items:
        return {}
    row = conn.execute(sql.SQL("SELECT {}").format(sql.SQL(", ").join(
        sql.SQL("pg_catalog.pg_collation_for({})").format(item) for item in items.values()))).fetchone() or ()
    return {name: found for name, found in zip(items, row) if found not in (None, '"default"')}


def _output_types(conn: psycopg.Connection, query: Any, column_types: dict[tuple[str, str], str]) -> dict[str, str]:
    """The type PostgreSQL gives each output of the query (sum(integer) is bigint, avg numeric, ...),
    found by planning the outputs over typed NULLs: no table is read, no user text is run."""
    from pgivm.query.cq import BinOp, Computed, Const, GroupColumn, Var

    typed = _typed_null(column_types)

    def render(expr: Any) -> sql.Composable:
        if isinstance(expr, Computed):
            return expr.render(lambda v: typed(v.column))
        if isinstance(expr, Const):
            return sql.SQL("({})").format(sql.SQL(expr.text))  # type: ignore[arg-type]  # a parsed numeric literal
        if isinstance(expr, Var):
            return typed(expr.column)
        assert isinstance(expr, BinOp)
        return sql.SQL("({} {} {})").format(render(expr.left), sql.SQL(expr.op), render(expr.right))  # type: ignore[arg-type]

    numeric = ("smallint", "integer", "bigint", "real", "double precision", "numeric")
    for output in query.outputs:  # sum, avg and cofactor need numbers: say which column is not one
        if isinstance(output, GroupColumn) or output.function in ("count", "count_distinct", "min", "max"):
            continue
        if isinstance(output.argument, Computed):
            kind = _type_of(conn, render(output.argument))
            if not kind.startswith(numeric):
                raise UnsupportedQuery(f"{output.sql}: {output.argument} has type {kind}, not a number")
            continue
        refs = [f.column for f in output.features] if output.function == "cofactor" else \
            _columns_of(output.argument)
        for ref in refs:
            kind = column_types[(ref.alias, ref.column)]
            if not kind.startswith(numeric):
                raise UnsupportedQuery(f"{output.sql}: column {ref} has type {kind}, not a number")
    items: list[sql.Composable] = []
    names: list[str] = []
    for output in query.outputs:
        if isinstance(output, GroupColumn) and output.using:  # JOIN ... USING: the common type, as COALESCE finds it
            items.append(sql.SQL("coalesce({})").format(sql.SQL(", ").join(typed(c) for c in output.using)))
        elif isinstance(output, GroupColumn):
            items.append(output.render(typed))
        elif output.function == "cofactor":
            items.append(sql.SQL("NULL::double precision"))
        elif output.function in ("count", "count_distinct"):
            items.append(sql.SQL("count(*)"))
        else:
            items.append(sql.SQL("{}({})").format(sql.SQL(output.function), render(output.argument)))  # type: ignore[arg-type]
        names.append(output.name)
    if not items:
        return {}
    description = conn.execute(sql.SQL("SELECT {} LIMIT 0").format(sql.SQL(", ").join(items))).description or []
    formatted = conn.execute(f"SELECT {_UNCONSTRAINED.format(t='t')} FROM pg_catalog.unnest(%s::pg_catalog.oid[]) "
                             "WITH ORDINALITY AS u(t, i) ORDER BY i", [[c.type_code for c in description]]).fetchall()
    types = {name: row[0] or "text" for name, row in zip(names, formatted)}
    # a column keeps its typmod (numeric(10,2), varchar(20)): the user view's column reads back the same
    for output in query.outputs:
        if isinstance(output, GroupColumn) and output.computed is None and len(
                {column_types[(c.alias, c.column)] for c in output.using or (output.column,)}) == 1:  # (a typmod kept)
            types[output.name] = column_types[(output.column.alias, output.column.column)]
    return types
