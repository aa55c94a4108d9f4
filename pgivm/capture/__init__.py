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
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal

from psycopg import sql

from pgivm.query.model import Atom, Column, Packed, TableRef
from pgivm.query.resolve import BaseTable, ResolvedView

# A statement changing more rows than this goes set-at-a-time through K_delta and apply_batch_K;
# smaller ones go tuple by tuple. `pgivm bench bulk --edges facebook_combined.txt` measures both
# paths (rolled-back INSERTs of k new edges into R at epsilon = 1/2): per tuple 8 / 30 / 45 / 62 /
# 140 / 837 ms, set at a time 20 / 29 / 37 / 43 / 150 / 236 ms for k = 64 / 256 / 384 / 512 / 1024
# / 4096: they cross near 256-384 and stay within 1.4x of each other up to 1024.
BATCH_THRESHOLD = 384

Scope = Literal["all", "plain", "leaf", "rows"]


@dataclass(frozen=True)
class CaptureTrigger:
    """One statement-level trigger a view puts on its base tables.

    ``scope``: ``all`` goes on a base table and on every partition of it, ``plain`` only on a base
    table that is not partitioned, ``leaf`` only on the partitions that hold rows themselves, ``rows``
    on every table that holds rows (a plain base table or a leaf partition).
    """

    name: str
    timing: Literal["BEFORE", "AFTER"]
    events: tuple[str, ...]
    # (schema, name) of a SECURITY DEFINER function in the view's state schema, or LOCK_WRITES
    function: tuple[str, str]
    old_table: bool = False
    new_table: bool = False
    scope: Scope = "all"

    def applies_to(self, *, partitioned: bool, partition: bool, leaf: bool) -> bool:
        if self.scope == "all":
            return True
        if self.scope == "plain":
            return not partitioned and not partition
        if self.scope == "leaf":
            return partition and leaf
        return (partition and leaf) or (not partition and not partitioned)

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
    """The CREATE TRIGGER statements for a base table and, if it is partitioned, all its partitions
    (none for a table of constant rows: nothing writes it)."""
    if base.static:
        return []
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


# The catalog's trigger function that every view's BEFORE statement trigger calls: it locks, in
# one order, the rows of every base table of every immediate view over the table written
# (migrations/0005_trusted_catalog.sql), so that views over shared tables serialize their writers
# without deadlocks between them.
LOCK_WRITES = ("pgivm_catalog", "lock_writes")


def lock_trigger(view_name: str) -> CaptureTrigger:
    return CaptureTrigger(f"pgivm_{view_name}_lock", "BEFORE", ("INSERT", "UPDATE", "DELETE", "TRUNCATE"), LOCK_WRITES)


def view_triggers(view_name: str, schema: str, letters: str, sink: str = "apply",
                  counted: bool = False) -> list[CaptureTrigger]:
    """The capture triggers on one base table: the writers' locks, the net change of each
    statement, and TRUNCATE (with the apply sink a plain table's relations are just cleared;
    otherwise, and for partitions, the rows are read just before they go). ``counted``: each
    writing statement also counts itself in before it writes (first-order's statement_open), and a
    partition's TRUNCATE, counted in by its BEFORE trigger, applies after the rows are gone
    (statement_close): the delta queries read the live table as the new state."""
    prefix = f"pgivm_{view_name}"

    def fn(kind: str) -> tuple[str, str]:
        return (schema, f"{kind}_{letters}")

    # named to fire after the lock trigger (BEFORE triggers fire in name order): the state row second
    opened = [CaptureTrigger(f"{prefix}_open", "BEFORE", ("INSERT", "UPDATE", "DELETE"), (schema, "statement_open"))] \
        if counted else []
    return [
        lock_trigger(view_name),
        *opened,
        CaptureTrigger(f"{prefix}_insert", "AFTER", ("INSERT",), fn("on_change"), new_table=True),
        CaptureTrigger(f"{prefix}_delete", "AFTER", ("DELETE",), fn("on_change"), old_table=True),
        CaptureTrigger(f"{prefix}_update", "AFTER", ("UPDATE",), fn("on_change"), old_table=True, new_table=True),
        *([CaptureTrigger(f"{prefix}_truncate", "AFTER", ("TRUNCATE",), fn("on_truncate"), scope="plain")]
          if sink == "apply" else []),
        CaptureTrigger(f"{prefix}_truncate_rows", "BEFORE", ("TRUNCATE",), fn("on_truncate_rows"),
                       scope="leaf" if sink == "apply" else "rows"),
        *([CaptureTrigger(f"{prefix}_truncated", "AFTER", ("TRUNCATE",), (schema, "statement_close"), scope="leaf")]
          if counted and sink == "apply" else []),
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
    x, y = triangle_atom(view, atom).read(prefix)
    return x, y


def not_null(prefix: str, column: Column) -> sql.Composable:
    """``prefix.column IS NOT NULL``; of a packed variable, of each of its columns (a row with a NULL
    in any of them never joins: its equalities are not all true)."""
    columns = column.columns if isinstance(column, Packed) else (column,)
    return sql.SQL(" AND ").join(sql.SQL("{}.{} IS NOT NULL").format(sql.SQL(prefix), sql.Identifier(c))  # type: ignore[arg-type]
                                 for c in columns)


def all_not_null(prefix: str, columns: tuple[Column, ...]) -> sql.Composable:
    """``not_null`` of each of an atom's join columns, joined by AND."""
    return sql.SQL(" AND ").join(not_null(prefix, c) for c in columns)


def stored_name(position: int) -> str:
    """The name of an atom's column (``position`` from 0 in the atom's columns) in what pgivm keeps
    of the atom's rows (its net change, K_delta, K_log, the sample's atom tables, first-order's
    delta query sources; IVMε's relations name theirs a, b, c). A base column may be called
    anything, mult, m, seq, rid or n (a variable of the function that reads it) included: it is
    only ever read qualified and renamed to this at once, and none of pgivm's own names is of
    this form."""
    return f"c{position + 1}"


def stored_column(columns: tuple[str, ...], column: str) -> str:
    """``stored_name`` of a base column among an atom's columns (``Atom.columns``)."""
    return stored_name(columns.index(column))


@dataclass(frozen=True)
class CapturedColumn:
    """A base-table column an atom reads, as its net change carries it (or a packed variable's
    columns, carried as one value of its composite type)."""

    column: Column  # in the base table
    name: str  # in the net change and the sink's tables: the variable (a, b, c: IVMε's relations) or stored_name
    source_type: str  # the column's type (a packed variable's: its composite type)
    target_type: str  # the variable's type (a cast when they differ)
    key: bool = True  # a join column: a row with NULL here never joins and is not captured
    # a packed variable's columns: each one's (type, the composite's field type)
    fields: tuple[tuple[str, str], ...] = ()

    def read(self, prefix: str, named: Callable[[str], str] = str, composite: bool = True) -> sql.Composable:
        """The value from ``prefix`` (a row or a table alias whose columns are the base columns as
        ``named`` calls them), typed as the variable. A packed variable's is ``ROW(...)::type``, or
        NULL when a column is NULL (a composite's equality would take two NULL fields for equal:
        such a row must never join); without ``composite``, an anonymous ``ROW(...)``, whose text is
        the composite's (for a session that cannot see the type yet: Spark's reads)."""
        if not isinstance(self.column, Packed):
            return typed_column(prefix, named(self.column), self.source_type, self.target_type)
        return sql.SQL("CASE WHEN {nulls} THEN NULL ELSE ROW({fields}){type} END").format(
            nulls=sql.SQL(" OR ").join(sql.SQL("{}.{} IS NULL").format(sql.SQL(prefix), sql.Identifier(named(c)))  # type: ignore[arg-type]
                                       for c in self.column.columns),
            fields=sql.SQL(", ").join(typed_column(prefix, named(c), source, target)
                                      for c, (source, target) in zip(self.column.columns, self.fields)),
            type=sql.SQL("::" + self.target_type if composite else ""))  # type: ignore[arg-type]  # format_type()'s name

    def base_columns(self) -> list[CapturedColumn]:
        """The base columns it reads, one each (a packed variable's: its fields' columns)."""
        if not isinstance(self.column, Packed):
            return [self]
        return [CapturedColumn(c, f"{self.name}_{i + 1}", source, target, self.key)
                for i, (c, (source, target)) in enumerate(zip(self.column.columns, self.fields))]


def captured_column(view: ResolvedView, alias: str, column: Column, variable: str) -> CapturedColumn:
    """An atom's join column carrying ``variable`` (of the view's shape), as capture reads it."""
    target = view.variable_types[variable]
    if not isinstance(column, Packed):
        return CapturedColumn(column, variable, view.column_types[(alias, column)], target)
    fields = tuple((view.column_types[(alias, c)], field) for c, (_, field) in zip(column.columns, view.packs[variable]))
    return CapturedColumn(column, variable, target, target, fields=fields)


@dataclass(frozen=True)
class CaptureAtom:
    """What the capture layer needs of one atom: the relation it feeds and its n columns."""

    name: str  # the relation, e.g. "r"; names the sink's objects (apply_r, r_delta, r_log)
    columns: tuple[CapturedColumn, ...]

    def read(self, source: str, composite: bool = True) -> list[sql.Composable]:
        return [c.read(source, composite=composite) for c in self.columns]


def _renames(old: list[str], new: list[str]) -> list[tuple[str, str]]:
    """The RENAME COLUMN steps from ``old`` to ``new`` (names by position), in two passes through
    names neither list has: a column may already be called like another's new name (c2)."""
    prefix = "pgivm_renaming_"
    while any(n.startswith(prefix) for n in (*old, *new)):
        prefix += "_"
    moved = [i for i, (o, n) in enumerate(zip(old, new)) if o != n]
    return [(old[i], f"{prefix}{i}") for i in moved] + [(f"{prefix}{i}", new[i]) for i in moved]


def renamed_columns(table: sql.Identifier, old: list[str], new: list[str]) -> sql.Composable:
    """A table of a view's state whose columns an earlier pgivm named ``old`` (every column, in
    order) gets the names ``new``, its rows kept (``upgrade``); a table of any other layout, or
    none, is left alone: on a fresh install, or over state made by a later layout, this does
    nothing."""
    if old == new:
        return sql.SQL("SELECT")
    return sql.SQL(
        "DO $pgivm$ BEGIN\n"
        "    IF ARRAY(SELECT a.attname::text FROM pg_catalog.pg_attribute AS a\n"
        "              WHERE a.attrelid = pg_catalog.to_regclass({regclass}) AND a.attnum > 0 AND NOT a.attisdropped\n"
        "              ORDER BY a.attnum) = {old}::text[] THEN\n"
        "{renames}\n"
        "    END IF;\nEND $pgivm$").format(
        regclass=sql.Literal(table.as_string(None)), old=sql.Literal(old),
        renames=sql.SQL("\n").join(sql.SQL("        ALTER TABLE {} RENAME COLUMN {} TO {};").format(
            table, sql.Identifier(a), sql.Identifier(b)) for a, b in _renames(old, new)))


def renamed_atom_columns(table: sql.Identifier, atom: CaptureAtom, before: tuple[str, ...] = (),
                         after: tuple[str, ...] = ("mult",)) -> sql.Composable:
    """``renamed_columns`` for a table that holds an atom's rows, its columns between pgivm's own
    ``before`` and ``after``: an earlier pgivm named them after the base columns, so a base column
    called mult, rid or seq clashed with pgivm's own; now they are ``stored_name``'s."""
    return renamed_columns(table, [*before, *(c.column if isinstance(c.column, str) else c.name for c in atom.columns), *after],
                           [*before, *(c.name for c in atom.columns), *after])


def triangle_atom(view: ResolvedView, atom: Atom) -> CaptureAtom:
    """A relation R, S or T of a triangle view, for the capture layer."""
    return CaptureAtom(atom.relation, tuple(captured_column(view, atom.alias, column, variable)
                                            for column, variable in zip(atom.columns, atom.variables)))


def _rows(atom: CaptureAtom, source: str, sign: str) -> sql.Composable:
    """The atom's columns of a transition table's rows, every base column read qualified."""
    keys = [c for c in atom.columns if c.key]
    return sql.SQL("SELECT {columns}, {sign} AS m FROM {source}{where}").format(
        columns=sql.SQL(", ").join(sql.SQL("{} AS {}").format(value, sql.Identifier(c.name))
                                   for value, c in zip(atom.read(source), atom.columns)),
        sign=sql.SQL(sign), source=sql.SQL(source),  # type: ignore[arg-type]  # a transition table's name
        where=sql.SQL(" WHERE ") + all_not_null(source, tuple(c.column for c in keys)) if keys else sql.SQL(""),
    )


def net_change(atom: CaptureAtom, event: str) -> sql.Composable:
    """The statement's net change of an atom: its columns and m per distinct row, m <> 0 (an UPDATE
    that leaves the atom's columns alone nets to nothing)."""
    if event == "insert":
        source: sql.Composable = _rows(atom, "new_rows", "1")
    elif event == "delete":
        source = _rows(atom, "old_rows", "-1")
    else:
        source = sql.SQL("{} UNION ALL {}").format(_rows(atom, "new_rows", "1"), _rows(atom, "old_rows", "-1"))
    columns = [sql.SQL("changes.{}").format(sql.Identifier(c.name)) for c in atom.columns]
    return sql.SQL("SELECT {columns}, sum(changes.m)::bigint AS m FROM ({source}) AS changes GROUP BY {groups} "
                   "HAVING sum(changes.m) <> 0").format(columns=sql.SQL(", ").join(columns), source=source,
                                                        groups=sql.SQL(", ").join(columns + value_scales(atom, "changes")))


def value_scales(atom: CaptureAtom, alias: str) -> list[sql.Composable]:
    """What a net change groups by besides the atom's columns: the scale of each numeric value
    column (so that 2.50 -> 2.5 is a change: a sum shows the largest scale of its rows,
    fivm/scales.py). Join columns net by value alone: a sink may merge a change by them, once a key."""
    return [sql.SQL("pg_catalog.scale({}.{})").format(sql.Identifier(alias), sql.Identifier(c.name))
            for c in atom.columns if not c.key and c.target_type == "numeric"]


# --- sinks: what happens to a net change ---------------------------------------------------------
# apply: the view's own functions maintain its state now, in the writing statement
#        (apply_K(columns..., m) per row below the batch threshold, K_delta + apply_batch_K above);
# log:   the net change is appended to the view's delta log K_log, for a later refresh or a sampler.
SINKS = ("apply", "log")


def apply_block(atoms: list[CaptureAtom], event: str, threshold: int | None, names: Any,
                then: sql.Composable | None = None) -> sql.Composable:
    """PL/pgSQL applying a statement's net change to each atom in order: tuple by tuple through
    ``apply_K`` below the threshold, set at a time through ``K_delta`` and ``apply_batch_K`` above
    (a threshold of None: always set at a time, every atom's net change captured before the first
    is applied, so that a self-join's delta query can read the other atoms' old state). ``then``:
    what applies them instead of each atom's ``apply_batch_K`` (first-order's ``apply_pending``, run
    by the last of a statement's writes: ``still_open``, counted out with the rows changed)."""
    if threshold is None:
        inserts = [sql.SQL("        INSERT INTO {delta} ({columns}, mult) {net};").format(
            net=net_change(atom, event), delta=names(f"{atom.name}_delta"),
            columns=sql.SQL(", ").join(sql.Identifier(c.name) for c in atom.columns)) for atom in atoms]
        applies = [sql.SQL("        PERFORM {}();").format(names(f"apply_batch_{atom.name}")) for atom in atoms] \
            if then is None else [sql.SQL("        IF still_open <= 0 THEN\n            PERFORM {}(still_open);\n        END IF;").format(then)]
        return sql.SQL("\n").join(inserts + applies)
    blocks = []
    for atom in atoms:
        k = atom.name
        if threshold is None:
            continue
        blocks.append(sql.SQL(
            "        -- {relation}\n"
            "        IF changed_rows <= {threshold} THEN\n"
            "            FOR change IN {net} LOOP\n"
            "                PERFORM {apply}({arguments}, change.m);\n"
            "            END LOOP;\n"
            "        ELSE\n"
            "            INSERT INTO {delta} ({columns}, mult) {net};\n"
            "            PERFORM {apply_batch}();\n"
            "        END IF;"
        ).format(
            relation=sql.SQL(k.upper()),  # type: ignore[arg-type]
            threshold=sql.Literal(threshold),
            net=net_change(atom, event),
            apply=names(f"apply_{k}"), apply_batch=names(f"apply_batch_{k}"), delta=names(f"{k}_delta"),
            arguments=sql.SQL(", ").join(sql.SQL("change.{}").format(sql.Identifier(c.name)) for c in atom.columns),
            columns=sql.SQL(", ").join(sql.Identifier(c.name) for c in atom.columns),
        ))
    return sql.SQL("\n").join(blocks)


def log_block(atoms: list[CaptureAtom], event: str, names: Any) -> sql.Composable:
    """PL/pgSQL appending a statement's net change of each atom to the view's delta log."""
    return sql.SQL("\n").join(
        sql.SQL("        INSERT INTO {log} ({columns}, mult) {net};").format(
            log=names(f"{atom.name}_log"), net=net_change(atom, event),
            columns=sql.SQL(", ").join(sql.Identifier(c.name) for c in atom.columns))
        for atom in atoms)


def log_tables(atom: CaptureAtom, names: Any) -> sql.Composable:
    """The delta log of one atom: every net change in commit order (seq), with its transaction."""
    return sql.SQL(
        "CREATE TABLE {log} (seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
        "xid xid8 NOT NULL DEFAULT pg_catalog.pg_current_xact_id(), {columns}, mult bigint NOT NULL); "
        "COMMENT ON TABLE {log} IS {comment}"
    ).format(
        log=names(f"{atom.name}_log"),
        columns=sql.SQL(", ").join(sql.SQL("{} {}").format(sql.Identifier(c.name), sql.SQL(c.target_type))  # type: ignore[arg-type]
                                   for c in atom.columns),
        comment=sql.Literal(f"pgivm delta log of relation {atom.name.upper()}: net changes not yet refreshed into the view"),
    )


def truncate_rows_block(atoms: list[CaptureAtom], names: Any, sink: str = "apply", counted: bool = False) -> sql.Composable:
    """PL/pgSQL taking every row of the table ``TG_RELID`` away as a deletion, atom by atom: into
    K_delta and apply_batch_K (apply), or into K_log (log). The read is dynamic SQL over the table,
    named from its oid at that moment. ``counted`` (first-order): only queued, the statement counted
    in; its AFTER TRUNCATE trigger applies them once the rows are gone (in this BEFORE trigger the
    table still holds them, and a self-join's later atom would read them as its new state)."""
    blocks = []
    for atom in atoms:
        k = atom.name
        holes = FormatHoles(2)  # the table's name and oid, given to format() at run time
        keys = [c for c in atom.columns if c.key]
        query = holes.literal(sql.SQL(
            "INSERT INTO {target} ({columns}, mult) SELECT {values}, -count(*) FROM ONLY {table} base "
            "WHERE base.tableoid = {oid}::pg_catalog.oid{keys} GROUP BY {groups}"
        ).format(target=names(f"{k}_delta" if sink == "apply" else f"{k}_log"),
                 columns=sql.SQL(", ").join(sql.Identifier(c.name) for c in atom.columns),
                 values=sql.SQL(", ").join(atom.read("base")), table=holes[0], oid=holes[1],
                 keys=sql.SQL("").join(sql.SQL(" AND ") + not_null("base", c.column) for c in keys),
                 groups=sql.SQL(", ").join(sql.SQL(str(i + 1)) for i in range(len(atom.columns)))))  # type: ignore[arg-type]
        then = sql.SQL("\n    PERFORM {}();").format(names(f"apply_batch_{k}")) if sink == "apply" and not counted \
            else sql.SQL("")
        blocks.append(sql.SQL(
            "    -- {relation}\n"
            "    EXECUTE pg_catalog.format({query}, TG_RELID::pg_catalog.regclass, TG_RELID);{then}"
        ).format(relation=sql.SQL(k.upper()), query=query, then=then))  # type: ignore[arg-type]
    if counted and sink == "apply":
        blocks.append(sql.SQL("    UPDATE {} SET statements_open = statements_open + 1 WHERE singleton;").format(names("state")))
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


class TextLiteral(sql.Composable):
    """A piece of SQL as a string literal of its text (for PL/pgSQL that composes statements)."""

    def __init__(self, query: sql.Composable) -> None:
        super().__init__(query)
        self._query = query

    def as_bytes(self, context: Any) -> bytes:
        return sql.Literal(self._query.as_string(context)).as_bytes(context)
