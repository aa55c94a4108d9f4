"""The tables that keep a view's aggregating subqueries current (``pgivm.query.derived`` says which
subqueries, and what is kept of each): their state, their trigger functions and their triggers.

Every system reads ``derived_N`` as a base table with its usual capture triggers; this layer keeps
its rows equal to the subquery's result by statement triggers on the subquery's own tables, which
recount the groups a statement touched and write only the rows that changed
(``sql/derived/10_functions.sql`` says how, and why the triggers fire after the view's own).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import psycopg

from psycopg import sql
from sqlglot import exp

from pgivm import capture
from pgivm.capture import CaptureTrigger
from pgivm.query.derived import DerivedRelation, Source, parsed_recount
from pgivm.query.dialect import DIALECT
from pgivm.query.model import TableRef
from pgivm.query.resolve import BaseTable
from pgivm.systems.common import CheckFailure, render

EVENTS = (("INSERT", False, True), ("DELETE", True, False), ("UPDATE", True, True), ("TRUNCATE", False, False))


def tables_of(relation: DerivedRelation) -> list[TableRef]:
    """The tables the subquery reads, each once, in the order written."""
    return list(dict.fromkeys(s.table for s in relation.sources))


class _Names:
    """The state objects of one derived table (``derived_N``): its scratch tables, the views that
    read its tables, its functions."""

    def __init__(self, relation: DerivedRelation) -> None:
        self.relation = relation
        self.schema = relation.table.schema or ""
        self.stem = relation.table.name

    def __call__(self, suffix: str = "") -> sql.Identifier:
        return sql.Identifier(self.schema, self.stem + suffix)

    def ident(self, name: str) -> sql.Identifier:
        return sql.Identifier(self.schema, name)

    def table_view(self, table: TableRef) -> str:
        return f"{self.stem}_table_{tables_of(self.relation).index(table) + 1}"

    def gone(self, table: TableRef) -> str:
        return f"{self.stem}_gone_{tables_of(self.relation).index(table) + 1}"

    def on_change(self, table: TableRef) -> str:
        return f"{self.stem}_on_{tables_of(self.relation).index(table) + 1}"

    def qualified(self, name: str) -> exp.Table:
        return exp.Table(this=exp.to_identifier(name, quoted=True), db=exp.to_identifier(self.schema, quoted=True))


def _columns_read(relation: DerivedRelation, table: TableRef) -> list[str]:
    return sorted({c for s in relation.sources if s.table == table for c in s.columns})


def _rows(names: _Names, source: Source, origin: exp.Table, alias: str) -> exp.Select:
    """SELECT the columns the recount reads of the source's table FROM ``origin`` (a transition
    table, or the table's view of the state)."""
    read = _columns_read(names.relation, source.table)
    items = [exp.column(c, alias, quoted=True) for c in read] or [exp.true().as_("pgivm_row")]
    return exp.select(*items).from_(origin.as_(alias))


def _recount(names: _Names, place: Callable[[Source], exp.Expression] | None = None,
             condition: str | None = None, keys_only: bool = False, changed: str | None = None) -> exp.Select:
    """The subquery's recount, each table read where ``place`` says (default: its view of the
    state), with ``condition`` added to its WHERE; ``keys_only``: the distinct keys of its rows.
    ``changed``: the alias read from a statement's changed rows, whose LEFT JOIN is read as an
    inner one: the groups its rows join into (the keys are of the other side, which a row of
    ``changed`` matching or no longer matching keeps; read as LEFT, every row there would be)."""
    relation = names.relation
    tree = parsed_recount(relation)
    for join in tree.args.get("joins") or [] if changed is not None else []:
        if join.this.alias_or_name == changed and (join.args.get("side") or "").upper() == "LEFT":
            join.set("side", None)
            join.set("kind", None)
    by_alias = {s.alias: s for s in relation.sources}
    for table in list(tree.find_all(exp.Table)):
        source = by_alias[table.alias_or_name]
        if place is None:
            table.replace(exp.Table(this=exp.to_identifier(names.table_view(source.table), quoted=True),
                                    db=exp.to_identifier(names.schema, quoted=True),
                                    alias=exp.TableAlias(this=exp.to_identifier(source.alias, quoted=True))))
        else:
            table.replace(exp.Subquery(this=place(source), alias=exp.TableAlias(this=exp.to_identifier(source.alias, quoted=True))))
    if condition is not None:
        tree = tree.where(condition, dialect=DIALECT, copy=False)
    if keys_only:
        tree.set("expressions", tree.expressions[:relation.keys])
        tree.set("group", None)
        tree.set("having", None)
        tree.set("distinct", exp.Distinct())
    return tree


def _column_list(relation: DerivedRelation, table: TableRef) -> sql.Composable:
    read = _columns_read(relation, table)
    return sql.SQL(", ").join(map(sql.Identifier, read)) if read else sql.SQL("true AS pgivm_row")


def _text(node: exp.Expression) -> sql.SQL:
    return sql.SQL(node.sql(dialect=DIALECT, identify=True))  # type: ignore[arg-type]


def _keys(alias: str, relation: DerivedRelation) -> list[str]:
    return [f'{alias}."{k}"' for k in relation.key_columns]


def _all_not_null(values: list[str]) -> str:
    return " AND ".join(f"{v} IS NOT NULL" for v in values)


def _among_touched(values: list[str], relation: DerivedRelation, touched_table: str) -> str:
    """``values`` (the keys of a row) are those of a touched group with no NULL key. The first key is
    matched by ``= ANY (an array of the touched keys)``, an index condition whatever the plan
    (PostgreSQL 15 read ``k IN (SELECT ...)`` by scanning the whole index on k and filtering); the
    others, if any, by IN beside it."""
    keys, not_null = _keys("t", relation), _all_not_null(_keys("t", relation))
    first = f"{values[0]} = ANY (ARRAY(SELECT {keys[0]} FROM {touched_table} AS t WHERE {not_null}))"
    if len(values) == 1:
        return first
    return f"({', '.join(values)}) IN (SELECT {', '.join(keys)} FROM {touched_table} AS t WHERE {not_null}) AND {first}"


def _shown_keys(relation: DerivedRelation) -> list[str]:
    """The subquery's outputs that show a GROUP BY value (``SELECT b, sum(c) ... GROUP BY b``), in
    the keys' order."""
    items = parsed_recount(relation).expressions
    keys, outputs = items[:relation.keys], dict(zip(relation.columns, items[relation.keys:]))
    return [next(name for name, o in outputs.items() if o.this == k.this) for k in keys
            if any(o.this == k.this for o in outputs.values())]


def _key_expressions(relation: DerivedRelation) -> list[str]:
    return [item.this.sql(dialect=DIALECT, identify=True) for item in parsed_recount(relation).expressions[:relation.keys]]


def _touched(names: _Names, table: TableRef, event: str) -> exp.Expression:
    """The keys of the groups whose rows one statement's change of ``table`` joins into: for each
    place the subquery reads the table, that place read from the changed rows and every other place
    from its table's rows now and the rows the client's statement took from it (``_gone``, this
    trigger's statement's included). The other tables as they are now would miss a joined row two
    of whose rows one client statement took away: a foreign key's cascade, a writable CTE. A
    superset of the groups touched is harmless: a recount that finds a group unchanged writes
    nothing (two statements sent as one message share their statement_timestamp: a superset)."""
    relation = names.relation
    changed = {"INSERT": ["new_rows"], "DELETE": ["old_rows"], "UPDATE": ["old_rows", "new_rows"]}[event]
    parts: list[exp.Select] = []
    for place in (s for s in relation.sources if s.table == table):
        def rows(source: Source, place: Source = place) -> exp.Expression:
            if source is place:
                return _union([_rows(names, source, exp.to_table(r), "c") for r in changed])
            gone = _rows(names, source, names.qualified(names.gone(source.table)), "g").where(
                exp.column("xid", "g").eq(exp.func("pg_catalog.pg_current_xact_id")), copy=False).where(
                exp.column("at", "g").eq(exp.func("pg_catalog.statement_timestamp")), copy=False)
            return _union([_rows(names, source, names.qualified(names.table_view(source.table)), "v"), gone])
        parts.append(_recount(names, rows, keys_only=True, changed=place.alias))
    return _union(parts, distinct=True)


def _union(selects: list[exp.Select], distinct: bool = False) -> exp.Expression:
    result: exp.Expression = selects[0]
    for select in selects[1:]:
        result = exp.union(result, select, distinct=distinct)
    return result


def state(relation: DerivedRelation, bases: Mapping[TableRef, BaseTable]) -> list[sql.Composable]:
    """The views of its tables, the table (empty: filled once create has locked the tables), its
    index on the keys, the scratch tables of one statement's recount, and the row its writers lock."""
    names = _Names(relation)
    statements = views(relation, bases)
    statements.append(sql.SQL("CREATE TABLE {} AS {} WITH NO DATA").format(names(), _text(_recount(names))))
    if relation.keys:
        statements.append(sql.SQL("CREATE INDEX ON {} ({})").format(
            names(), sql.SQL(", ").join(sql.Identifier(k) for k in relation.key_columns)))
        shown = _shown_keys(relation)
        if shown:  # the view joins on these (x.b = s.b): its delta finds the group's row by them
            statements.append(sql.SQL("CREATE INDEX ON {} ({})").format(names(), sql.SQL(", ").join(map(sql.Identifier, shown))))
        statements.append(sql.SQL("CREATE TABLE {} AS SELECT {} FROM {} WITH NO DATA").format(
            names("_touched"), sql.SQL(", ").join(sql.Identifier(k) for k in relation.key_columns), names()))
    statements.append(sql.SQL("CREATE TABLE {} (LIKE {})").format(names("_fresh"), names()))
    for table in tables_of(relation):  # the rows the client's statement took from each table (see _touched)
        statements.append(sql.SQL("CREATE TABLE {} AS SELECT {} FROM {} WITH NO DATA; ALTER TABLE {} "
                                  "ADD COLUMN xid pg_catalog.xid8 NOT NULL, ADD COLUMN at timestamptz NOT NULL").format(
            names.ident(names.gone(table)), _column_list(relation, table),
            names.ident(names.table_view(table)), names.ident(names.gone(table))))
    statements.append(sql.SQL("CREATE TABLE {t} (singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton), "
                              "recounts bigint NOT NULL DEFAULT 0); INSERT INTO {t} DEFAULT VALUES").format(t=names("_lock")))
    statements.append(sql.SQL("COMMENT ON TABLE {} IS {}").format(names(), sql.Literal(
        f"pgivm: the result of a subquery that aggregates, kept by triggers on its tables: {relation.select}")))
    return statements


def views(relation: DerivedRelation, bases: Mapping[TableRef, BaseTable]) -> list[sql.Composable]:
    """A view of the columns the recount reads of each table (and tableoid: the table stays a
    table), bound to the table's oid as every view is; made again by each install and upgrade."""
    names = _Names(relation)
    statements: list[sql.Composable] = []
    for table in tables_of(relation):
        view = names.ident(names.table_view(table))
        statements.append(sql.SQL("DROP VIEW IF EXISTS {v}; CREATE VIEW {v} AS SELECT b.tableoid{cols} FROM {t} AS b").format(
            v=view, t=bases[table].ident,
            cols=sql.SQL("").join(sql.SQL(", b.{}").format(sql.Identifier(c)) for c in _columns_read(relation, table))))
    return statements


def functions(relation: DerivedRelation, bases: Mapping[TableRef, BaseTable], view_name: str) -> list[sql.Composable]:
    """The views of its tables, refill(), check() and one trigger function per table."""
    names = _Names(relation)
    keys_equal = sql.SQL(" AND ").join(sql.SQL("f.{k} = d.{k}").format(k=sql.Identifier(k)) for k in relation.key_columns) \
        if relation.keys else sql.SQL("true")
    common = {"derived": names(), "fresh": names("_fresh"), "refill": names("_refill"), "keys_equal": keys_equal,
              "lock": names("_lock")}
    statements = views(relation, bases)
    statements.append(render(__name__, "10_functions.sql", {
        **common, "check": names("_check"), "recount_all": _text(_recount(names)),
        "refill_comment": sql.Literal(f"pgivm view {view_name}: {relation.table.name} recounted whole"),
        "check_comment": sql.Literal(f"pgivm view {view_name}: rows of {relation.table.name} that differ from a recount")}))
    not_null = _all_not_null(_key_expressions(relation))
    touched_not_null = _all_not_null(_keys("t", relation))
    for table in tables_of(relation):
        function = names.ident(names.on_change(table))
        comment = sql.Literal(f"pgivm view {view_name}: a statement's change of {bases[table].ref} in {relation.table.name}")
        if not relation.keys:
            statements.append(render(__name__, "21_on_change_whole.sql", {
                "on_change": function, "refill": names("_refill"), "on_change_comment": comment}))
            continue
        touched_table = names.qualified(names.stem + "_touched").sql(dialect=DIALECT, identify=True)
        keys_in = _among_touched(_key_expressions(relation), relation, touched_table)
        gone = [names.ident(names.gone(t)) for t in tables_of(relation)]
        statements.append(render(__name__, "20_on_change.sql", {
            **common, "on_change": function, "touched": names("_touched"),
            "forget_gone": sql.SQL("\n").join(sql.SQL(
                "        DELETE FROM {} WHERE xid <> pg_catalog.pg_current_xact_id() OR at <> pg_catalog.statement_timestamp();"
            ).format(g) for g in gone),
            "gone": names.ident(names.gone(table)),
            "gone_columns": sql.SQL(", ").join(map(sql.Identifier, _columns_read(relation, table) or ["pgivm_row"])),
            "old_columns": sql.SQL(", ").join([sql.SQL("o.") + sql.Identifier(c) for c in _columns_read(relation, table)]
                                              or [sql.SQL("true")]),
            **{f"touched_by_{e.lower()}": _text(_touched(names, table, e)) for e in ("INSERT", "DELETE", "UPDATE")},
            "recount_touched": _text(_recount(names, condition=keys_in)),
            "recount_null_keys": _text(_recount(names, condition=f"NOT ({not_null})")),
            "touched_keys_not_null": sql.SQL(touched_not_null),
            "derived_keys_not_null": sql.SQL(_all_not_null(_keys("d", relation))),
            "derived_touched": sql.SQL(_among_touched(_keys("d", relation), relation, touched_table)),
            "on_change_comment": comment}))
    return statements


def triggers(view_name: str, number: int, relation: DerivedRelation, table: TableRef) -> list[CaptureTrigger]:
    """The statement triggers on one table the subquery reads. ``pgivm_<view>_zd<N>_...``: AFTER
    triggers fire in name order, these after the view's own capture triggers on the table."""
    function = (relation.table.schema or "", _Names(relation).on_change(table))
    return [CaptureTrigger(f"pgivm_{view_name}_zd{number}_{event.lower()}", "AFTER", (event,), function,
                           old_table=old, new_table=new) for event, old, new in EVENTS]


def checks(conn: psycopg.Connection, query: Any) -> list[CheckFailure]:
    """verify's invariant of each derived table: its rows equal its subquery's recount."""
    failures = []
    for relation in getattr(query, "derived", ()):
        row = conn.execute(sql.SQL("SELECT {}()").format(_Names(relation)("_check")), prepare=False).fetchone()
        if row and row[0]:
            failures.append(CheckFailure(f"{relation.table.name}_equals_its_subquery",
                                         [(f"{row[0]} rows differ from the subquery recounted: {relation.select}",)]))
    return failures


def explain(view: Any) -> list[str]:
    """What ``pgivm explain`` says of each derived table."""
    lines = []
    for relation in getattr(view.query, "derived", ()):
        tables = ", ".join(str(view.sources[t].ref) for t in tables_of(relation))
        keys = (f"the groups a statement touches recounted ({relation.keys} key column{'s' * (relation.keys > 1)})"
                if relation.keys else "recounted whole at every statement (no GROUP BY)")
        lines.append(f"derived table {relation.table}: a subquery that aggregates, read as a base table; kept by "
                     f"triggers on {tables}: {keys}")
        lines.append(f"  {relation.select}")
    return lines


def refill(relation: DerivedRelation) -> sql.Composable:
    return sql.SQL("SELECT {}()").format(_Names(relation)("_refill"))


def source_triggers(view_name: str, derived: tuple[DerivedRelation, ...], read_by_view: set[TableRef]
                    ) -> dict[TableRef, list[CaptureTrigger]]:
    """Each table the view's derived tables read -> the triggers this layer puts on it: the
    writers' lock (unless the view reads the table itself, whose capture has it) and each derived
    table's triggers."""
    found: dict[TableRef, list[CaptureTrigger]] = {}
    for number, relation in enumerate(derived, start=1):
        for table in tables_of(relation):
            if table not in found:
                found[table] = [] if table in read_by_view else [capture.lock_trigger(view_name)]
            found[table] += triggers(view_name, number, relation, table)
    return found
