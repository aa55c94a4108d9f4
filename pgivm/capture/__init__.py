"""Change capture: the statement triggers on base tables that turn each writing statement into the
net change of every relation the view reads, and hand it to the view's ``apply_K`` functions.

One list of :class:`CaptureTrigger` says which triggers a view puts on a base table. pgivm renders
it into ``CREATE TRIGGER`` statements when it installs the view (on a partitioned table: on the
table and on every partition, since a statement fires the triggers of the table it names), and
stores it in the catalog so that the DDL event trigger can give a partition created later the same
triggers (``migrations/0002_base_tables_by_oid.sql``).
"""

from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass
from typing import Any, Literal

from psycopg import sql

from pgivm.query.model import Atom, TableRef
from pgivm.query.resolve import BaseTable, ResolvedView

# A statement changing more rows than this goes set-at-a-time through K_delta and apply_batch_K;
# smaller ones go tuple by tuple. `pgivm bench bulk --edges facebook_combined.txt` measures both
# paths (rolled-back INSERTs of k new edges into R at epsilon = 1/2): per tuple 8 / 30 / 45 / 62 /
# 140 / 837 ms, set at a time 20 / 29 / 37 / 43 / 150 / 236 ms for k = 64 / 256 / 384 / 512 / 1024
# / 4096: they cross near 256-384 and stay within 1.4x of each other up to 1024.
BATCH_THRESHOLD = 384

Scope = Literal["all", "plain", "leaf"]


@dataclass(frozen=True)
class CaptureTrigger:
    """One statement-level trigger a view puts on its base tables.

    ``scope``: ``all`` goes on a base table and on every partition of it, ``plain`` only on a base
    table that is not partitioned, ``leaf`` only on the partitions that hold rows themselves.
    """

    name: str
    timing: Literal["BEFORE", "AFTER"]
    events: tuple[str, ...]
    function: tuple[str, str]  # (schema, name) of a SECURITY DEFINER function in the view's state schema
    old_table: bool = False
    new_table: bool = False
    scope: Scope = "all"

    def applies_to(self, *, partitioned: bool, partition: bool, leaf: bool) -> bool:
        if self.scope == "all":
            return True
        if self.scope == "plain":
            return not partitioned and not partition
        return partition and leaf

    def create_sql(self, table: sql.Composable) -> sql.Composed:
        referencing = []
        if self.old_table:
            referencing.append(sql.SQL("OLD TABLE AS old_rows"))
        if self.new_table:
            referencing.append(sql.SQL("NEW TABLE AS new_rows"))
        return sql.SQL("CREATE TRIGGER {name} {timing} {events} ON {table}{referencing} "
                       "FOR EACH STATEMENT EXECUTE FUNCTION {function}()").format(
            name=sql.Identifier(self.name),
            timing=sql.SQL(self.timing),  # type: ignore[arg-type]  # one of two keywords
            events=sql.SQL(" OR ").join(sql.SQL(e) for e in self.events),  # type: ignore[arg-type]
            table=table,
            referencing=sql.SQL(" REFERENCING {}").format(sql.SQL(" ").join(referencing)) if referencing else sql.SQL(""),
            function=sql.Identifier(*self.function),
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def triggers_on(base: BaseTable, triggers: list[CaptureTrigger]) -> list[sql.Composable]:
    """The CREATE TRIGGER statements for a base table and, if it is partitioned, all its partitions."""
    statements: list[sql.Composable] = [
        t.create_sql(base.ident) for t in triggers if t.applies_to(partitioned=base.partitioned, partition=False, leaf=False)
    ]
    for part in base.partitions:
        statements += [t.create_sql(sql.SQL(part.name))  # type: ignore[arg-type]  # regclass text, quoted by PostgreSQL
                       for t in triggers if t.applies_to(partitioned=False, partition=True, leaf=part.leaf)]
    return statements


def drop_triggers(base_oid: int, trigger_names: list[str]) -> sql.Composable:
    """DROP every trigger of these names on the base table and its partitions, found by oid."""
    return sql.SQL(
        "DO $pgivm$ DECLARE t record; BEGIN "
        "FOR t IN SELECT tg.tgname, tg.tgrelid::pg_catalog.regclass AS rel FROM pg_catalog.pg_trigger tg "
        "WHERE tg.tgname = ANY ({names}) AND (tg.tgrelid = {oid} OR tg.tgrelid IN "
        "(SELECT relid FROM pg_catalog.pg_partition_tree({oid}::pg_catalog.regclass))) LOOP "
        "EXECUTE pg_catalog.format('DROP TRIGGER %I ON %s', t.tgname, t.rel); END LOOP; END $pgivm$"
    ).format(names=sql.Literal(trigger_names), oid=sql.Literal(base_oid))


def view_triggers(view_name: str, schema: str, letters: str) -> list[CaptureTrigger]:
    """The triggers of a strategy that maintains relations through ``apply_K`` (ivme, first-order)."""
    prefix = f"pgivm_{view_name}"

    def fn(kind: str) -> tuple[str, str]:
        return (schema, f"{kind}_{letters}")

    return [
        CaptureTrigger(f"{prefix}_lock", "BEFORE", ("INSERT", "UPDATE", "DELETE", "TRUNCATE"), fn("on_statement")),
        CaptureTrigger(f"{prefix}_insert", "AFTER", ("INSERT",), fn("on_change"), new_table=True),
        CaptureTrigger(f"{prefix}_delete", "AFTER", ("DELETE",), fn("on_change"), old_table=True),
        CaptureTrigger(f"{prefix}_update", "AFTER", ("UPDATE",), fn("on_change"), old_table=True, new_table=True),
        CaptureTrigger(f"{prefix}_truncate", "AFTER", ("TRUNCATE",), fn("on_truncate"), scope="plain"),
        CaptureTrigger(f"{prefix}_truncate_rows", "BEFORE", ("TRUNCATE",), fn("on_truncate_rows"), scope="leaf"),
    ]


def letters_of(view: ResolvedView, table: TableRef) -> str:
    return "".join(a.relation for a in view.query.atoms_of(table))


# --- the net change of a statement ---------------------------------------------------------------


def typed_column(prefix: str, column: str, column_type: str, variable_type: str) -> sql.Composable:
    """``prefix.column``, cast to the join variable's type when the column's type differs."""
    ref = sql.SQL("{}.{}").format(sql.SQL(prefix), sql.Identifier(column))  # type: ignore[arg-type]
    if column_type == variable_type:
        return ref
    return sql.SQL("{}::{}").format(ref, sql.SQL(variable_type))  # type: ignore[arg-type]


def atom_columns(view: ResolvedView, atom: Atom, prefix: str) -> tuple[sql.Composable, sql.Composable]:
    """The atom's two join columns read from ``prefix`` (a row or a table alias), typed as the variables."""
    x, y = atom.variables
    types = view.variable_types
    return (
        typed_column(prefix, atom.first, view.column_types[(atom.alias, atom.first)], types[x]),
        typed_column(prefix, atom.second, view.column_types[(atom.alias, atom.second)], types[y]),
    )


def _rows(view: ResolvedView, atom: Atom, source: str, sign: str) -> sql.Composable:
    first, second = atom_columns(view, atom, source)
    return sql.SQL("SELECT {first} AS x, {second} AS y, {sign} AS m FROM {source} "
                   "WHERE {c1} IS NOT NULL AND {c2} IS NOT NULL").format(
        first=first, second=second, sign=sql.SQL(sign), source=sql.SQL(source),  # type: ignore[arg-type]
        c1=sql.SQL("{}.{}").format(sql.SQL(source), sql.Identifier(atom.first)),  # type: ignore[arg-type]
        c2=sql.SQL("{}.{}").format(sql.SQL(source), sql.Identifier(atom.second)),  # type: ignore[arg-type]
    )


def net_change(view: ResolvedView, atom: Atom, event: str) -> sql.Composable:
    """The statement's net change of ``atom``'s relation: (x, y, m) per distinct join key, m <> 0."""
    if event == "insert":
        source: sql.Composable = _rows(view, atom, "new_rows", "1")
    elif event == "delete":
        source = _rows(view, atom, "old_rows", "-1")
    else:
        source = sql.SQL("{} UNION ALL {}").format(_rows(view, atom, "new_rows", "1"), _rows(view, atom, "old_rows", "-1"))
    return sql.SQL("SELECT x, y, sum(m)::bigint AS m FROM ({}) rows GROUP BY x, y HAVING sum(m) <> 0").format(source)


def apply_block(schema: sql.Identifier, view: ResolvedView, atoms: list[Atom], event: str, threshold: int,
                names: Any) -> sql.Composable:
    """PL/pgSQL applying a statement's net change to each atom in order: tuple by tuple through
    ``apply_K`` below the threshold, set at a time through ``K_delta`` and ``apply_batch_K`` above."""
    blocks = []
    for atom in atoms:
        k = atom.relation
        x, y = atom.variables
        blocks.append(sql.SQL(
            "        -- {relation}\n"
            "        IF changed_rows <= {threshold} THEN\n"
            "            FOR change IN {net} LOOP\n"
            "                PERFORM {apply}(change.x, change.y, change.m);\n"
            "            END LOOP;\n"
            "        ELSE\n"
            "            INSERT INTO {delta} ({x}, {y}, mult) {net};\n"
            "            PERFORM {apply_batch}();\n"
            "        END IF;"
        ).format(
            relation=sql.SQL(k.upper()),  # type: ignore[arg-type]
            threshold=sql.Literal(threshold),
            net=net_change(view, atom, event),
            apply=names(f"apply_{k}"), apply_batch=names(f"apply_batch_{k}"), delta=names(f"{k}_delta"),
            x=sql.Identifier(x), y=sql.Identifier(y),
        ))
    return sql.SQL("\n").join(blocks)


def truncate_rows_block(view: ResolvedView, atoms: list[Atom], names: Any) -> sql.Composable:
    """PL/pgSQL applying every row of the partition ``TG_RELID`` as a deletion, atom by atom.

    The read is dynamic SQL over the partition, named from its oid at that moment."""
    blocks = []
    for atom in atoms:
        k = atom.relation
        x, y = atom.variables
        first, second = atom_columns(view, atom, "base")

        holes = FormatHoles(2)  # the partition's name and oid, given to format() at run time
        query = holes.literal(sql.SQL(
            "INSERT INTO {delta} ({x}, {y}, mult) SELECT {first}, {second}, -count(*) FROM ONLY {table} base "
            "WHERE base.tableoid = {oid}::pg_catalog.oid AND base.{c1} IS NOT NULL AND base.{c2} IS NOT NULL "
            "GROUP BY 1, 2"
        ).format(delta=names(f"{k}_delta"), x=sql.Identifier(x), y=sql.Identifier(y), first=first, second=second,
                 table=holes[0], oid=holes[1], c1=sql.Identifier(atom.first), c2=sql.Identifier(atom.second)))
        blocks.append(sql.SQL(
            "    -- {relation}\n"
            "    EXECUTE pg_catalog.format({query}, TG_RELID::pg_catalog.regclass, TG_RELID);\n"
            "    PERFORM {apply_batch}();"
        ).format(relation=sql.SQL(k.upper()), query=query,  # type: ignore[arg-type]
                 apply_batch=names(f"apply_batch_{k}")))
    return sql.SQL("\n").join(blocks)


class FormatHoles:
    """Holes in a query rendered as a string literal for PL/pgSQL's ``format()``: hole i becomes
    ``%i$s`` and every other ``%`` is doubled, so nothing else in the text can act as a placeholder.
    While rendering, the holes are fresh random tokens, replaced afterwards."""

    def __init__(self, count: int) -> None:
        self._tokens = [f"pgivm_hole_{secrets.token_hex(16)}" for _ in range(count)]

    def __getitem__(self, index: int) -> sql.Composable:
        return sql.SQL(self._tokens[index])  # type: ignore[arg-type]  # a random token, replaced before use

    def literal(self, query: sql.Composable) -> sql.Composable:
        return _FormatLiteral(query, self._tokens)


class _FormatLiteral(sql.Composable):
    def __init__(self, query: sql.Composable, tokens: list[str]) -> None:
        super().__init__(query)
        self._query, self._tokens = query, tokens

    def as_bytes(self, context: Any) -> bytes:
        text = self._query.as_string(context).replace("%", "%%")
        for number, token in enumerate(self._tokens, start=1):
            text = text.replace(token, f"%{number}$s")
        return sql.Literal(text).as_bytes(context)
