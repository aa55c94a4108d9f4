"""First-order IVM of join-aggregates: the baseline F-IVM is measured against (what pg_ivm
does), and the fallback for every join the query model holds: cyclic ones beyond the triangle (a
4-cycle), cross products, conditions that compare columns of two tables; outer, semi- and anti-
joins take their own delta rules (``outer.py``). The delta rule below needs no join tree. Only the
result is stored, keyed by the GROUP BY columns (a listing: by all its columns, with multiplicities); each statement's net change of an atom is joined with the *base
tables* of every other atom (no intermediate views) and merged into the result:

    δQ = Σ_i  A_1' ⋈ … ⋈ A_{i-1}' ⋈ δA_i ⋈ A_{i+1} ⋈ … ⋈ A_n

(atoms of the same table before i at their new state, after i at their old state: new minus the
net change, so that a self-join's cross terms are counted once). The result carries the same ring
entries as F-IVM's root (counts and sums of products), so both read out the same way.

min and max are kept without rescanning a base table: per min/max output a table of each group's
values with their multiplicities (``extreme_K``, indexed on the group and the value), merged by the
same delta query; the view reads a group's extreme from the index, so deleting the current maximum
costs the delta, not a recount of the group.

The base tables are read inside the writer's trigger through views of the state (``base_N``), which
PostgreSQL binds to the tables' oids: a renamed table is still the one read, and the delta queries
are static SQL, planned once per session and not at every statement (dynamic SQL naming the tables
from their oids was planned afresh each time: 1.1 ms of a 1.6 ms write under a min/max view). A
deferred view reads them less what is still pending in its logs (``deferred.pending_rows``): the
state the view reflects, so that applying one table's log while another's waits counts nothing
twice.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import psycopg
from psycopg import sql

from pgivm import capture, deferred
from pgivm.query.cq import Aggregate, BinOp, ColumnRef, Computed, ConjunctiveQuery, Var
from pgivm.query.model import TableRef
from pgivm.query.plain import collated, expression_sql, from_where, shape_rows, where_conditions
from pgivm.query.resolve import ResolvedView, collate
from pgivm.systems.base import InstallPlan
from pgivm.systems.common import (Names, bare_atom_reason, capture_functions_plan, may_fail, render, revoke_plan,
                                  state_schema_for)
from pgivm.systems.fivm import BULK_ROWS, maintain, rings
from pgivm.systems.fivm.order import VariableOrder, computed_values
from pgivm.systems.fivm.tree import View, ViewTree
from pgivm.systems.first_order import outer


def accepts(cq: ConjunctiveQuery) -> str | None:
    if any(a.function == "cofactor" for a in cq.aggregates):
        return "first-order keeps no matrix ring: write cofactor(...) out as its count, sums and sums of products"
    return bare_atom_reason(cq)  # its net change would have no column to carry: a count of rows only


# An outer join's result merged one pattern of NULLs at a time: one static MERGE per pattern for
# up to this many nullable keys (2^n statements in the function), one planned per statement beyond.
STATIC_PATTERNS_UP_TO = 4

EXTREMES = ("min", "max", "count_distinct")  # read from each group's values, not from the ring


def _extremes(cq: ConjunctiveQuery) -> list[tuple[int, Aggregate]]:
    """The min, max and count(DISTINCT) outputs, each with the number of its table of each group's
    values: the SELECT-list position of the first of them over the same argument (min(x), max(x)
    and count(DISTINCT x) read one table)."""
    first: dict[object, int] = {}
    return [(first.setdefault(o.argument, i), o) for i, o in enumerate(cq.outputs)
            if isinstance(o, Aggregate) and o.function in EXTREMES]


def _value_tables(extremes: list[tuple[int, Aggregate]]) -> list[tuple[int, Aggregate]]:
    """Each table of values once, with the first aggregate that reads it."""
    first: dict[int, Aggregate] = {}
    for i, aggregate in extremes:
        first.setdefault(i, aggregate)
    return list(first.items())


def _value_collation(view: ResolvedView, aggregate: Aggregate) -> sql.Composable:
    """A min/max column's own collation where it is not the database's default: it orders the
    group's values as PostgreSQL's min and max do ('B' above 'a' under en-US, below it under C). (A
    min or max of an expression over such a column never comes here: ``common.collation_reason``.)"""
    argument = aggregate.argument
    return collate(view.collations.get((argument.column.alias, argument.column.column)) if isinstance(argument, Var) else None)


def _ring_query(cq: ConjunctiveQuery) -> ConjunctiveQuery:
    """The query without its min, max and count(DISTINCT): what the ring keeps."""
    return replace(cq, outputs=tuple(o for o in cq.outputs if not (isinstance(o, Aggregate) and o.function in EXTREMES)))


def ring_problem(view: ResolvedView) -> str | None:
    """Why the ring cannot keep the view's sums given its columns' types (rings.ring_problem), or None."""
    return rings.ring_problem(_ring_query(view.query), lambda v: view.variable_types[v])


def _value_type(ctx: maintain.Context, aggregate: Aggregate) -> str:
    """The type of a min/max/count(DISTINCT) argument's values (not count's bigint): a column's or a
    computed value's (a domain as its base type), numeric for integer arithmetic (``_in_numeric``),
    else what PostgreSQL's arithmetic gives (float8 where a float takes part; real values are
    exactly float8 ones)."""
    argument, types = aggregate.argument, ctx.view.variable_types
    if isinstance(argument, (Var, Computed)):
        return types[argument.variable]
    if _in_numeric(ctx, aggregate):
        return "numeric"
    assert argument is not None
    if aggregate.function != "count_distinct":
        return ctx.view.output_types[aggregate.name]  # type: ignore[index]
    return "double precision" if any(rings.floats.is_float(types[v]) for v in argument.variables) else "numeric"


def _context(view: ResolvedView, name: str) -> maintain.Context:
    """A one-view 'tree': the result, keyed by the GROUP BY variables (a listing: every output
    variable), holding every ring entry; F-IVM's SQL helpers then read it out unchanged. The ring
    has the counts and sums; min and max are kept apart (``_extreme_select``)."""
    cq: ConjunctiveQuery = view.query
    if cq.is_listing:
        keys = tuple(dict.fromkeys(o.variable for o in cq.outputs))  # type: ignore[union-attr]
    else:
        keys = cq.free
    bound = frozenset(v.name for v in cq.variables if v.name not in keys) | frozenset(
        c.variable for c in computed_values(cq) if c.variable not in keys)
    root = View("maintained", None, None, keys, marginalized=bound, materialized=True)
    order = VariableOrder((), {}, {}, {}, {}, {v: 0 for v in keys})
    ring = rings.ring_for(_ring_query(cq), lambda v: view.variable_types[v])
    return maintain.Context(cq, ViewTree(root, order, frozenset(a.alias for a in cq.atoms), False), ring, view,
                            Names.of(name))


def _letters(view: ResolvedView, table: TableRef) -> str:
    aliases = [a.alias for a in view.query.atoms]
    return "".join(f"a{aliases.index(a.alias) + 1}" for a in view.query.atoms_of(table))


def deferred_atoms(view: ResolvedView) -> dict[TableRef, list[capture.CaptureAtom]] | str:
    if view.query.has_outer_join:  # its delta rules read every table as it is now
        return ("first-order maintains outer joins and [NOT] EXISTS / IN subqueries immediately, not deferred: keep "
                "such a view immediate")
    for computed in computed_values(view.query):  # computed on every row a delta query reads, older states' too
        risky = may_fail(view, computed)
        if risky is not None:
            return (f"{computed}: {risky} may fail on a row, and a deferred view's actions also read rows of states "
                    "that are gone: keep such a view immediate")
    ctx = _context(view, "")
    return {table: [ctx.capture_atom(a.alias) for a in view.query.atoms_of(table)] for table in view.query.tables}


def capture_triggers(view: ResolvedView, name: str, table: TableRef) -> list[capture.CaptureTrigger]:
    return capture.view_triggers(name, state_schema_for(name), _letters(view, table), counted=_counted(view.query))


def _counted(cq: ConjunctiveQuery) -> bool:
    """Whether each writing statement counts itself in and out, its last write applying them all:
    with one atom a statement's writes are applied one by one (the delta of one atom is the whole
    delta), which saves two calls a write."""
    return len(cq.atoms) > 1


@dataclass(frozen=True)
class Rows:
    """Where a result query reads joined rows: its FROM ... WHERE (given extra conditions), how it
    names a column, a row's multiplicity and whether a row is one of the tables' current rows (see
    ``_overflow_checks``)."""

    from_where: Callable[[list[sql.Composable]], sql.Composable]
    column: Callable[[ColumnRef], sql.Composable]
    multiplicity: sql.Composable
    live: sql.Composable


def _base_rows(ctx: maintain.Context) -> Rows:
    """The joined rows of the base tables, as the view's plain SQL reads them."""
    return Rows(lambda extra: from_where(ctx.view, extra), lambda ref: sql.SQL("{}.{}").format(
        sql.Identifier(ref.alias), sql.Identifier(ref.column)), sql.SQL("1::bigint"), sql.SQL("true"))


def _source_rows(ctx: maintain.Context, sources: dict[str, sql.Composable], multiplicity: sql.Composable,
                 live: sql.Composable) -> Rows:
    """The joined rows of the delta query's sources (one per atom), columns named as in K_delta."""
    stored = _stored(ctx.cq)
    return Rows(lambda extra: from_where(ctx.view, extra, sources=sources, source_column=stored),
                lambda ref: sql.SQL("{}.{}").format(sql.Identifier(ref.alias), sql.Identifier(stored(ref))),
                multiplicity, live)


JOINED = "pgivm_joined"


def _joined_rows(ctx: maintain.Context, joined: sql.Composable) -> Rows:
    """The signed joined rows of an outer-join delta (``outer.Chain.delta``), WHERE to hold on them."""
    def column(ref: ColumnRef) -> sql.Composable:
        return sql.SQL("{}.{}").format(sql.Identifier(JOINED), sql.Identifier(outer.column_name(ctx.cq, ref)))

    def from_where_(extra: list[sql.Composable]) -> sql.Composable:
        conditions = [*where_conditions(ctx.cq, column), *extra] or [sql.SQL("true")]
        return sql.SQL("FROM ({}) AS {} WHERE {}").format(joined, sql.Identifier(JOINED), sql.SQL(" AND ").join(conditions))

    mult = sql.SQL("{}.mult").format(sql.Identifier(JOINED))
    return Rows(from_where_, column, mult, sql.SQL("{} > 0").format(mult))


def _entry_terms(ctx: maintain.Context, rows: Rows) -> list[tuple[rings.Entry, sql.Composable]]:
    """Each ring entry's summand for one joined row: the multiplicities times the lifted values."""
    ring = ctx.ring
    assert isinstance(ring, rings.SumRing)
    root = ctx.tree.root
    value = _value(ctx, rows.column)
    return ring.row_terms(root, lambda v: value[v], rows.multiplicity, root.marginalized)


def _stored(cq: ConjunctiveQuery) -> Callable[[ColumnRef], str]:
    """A column's name in the delta query's sources (``capture.stored_name``, as in K_delta)."""
    return lambda ref: capture.stored_column(cq.atom(ref.alias).columns, ref.column)


def _value(ctx: maintain.Context, column: Callable[[ColumnRef], sql.Composable]) -> dict[str, sql.Composable]:
    """Each variable's value in a joined row: its first column, as ``column`` reads it."""
    value = {v.name: column(v.columns[0]) for v in ctx.cq.variables}
    for computed in computed_values(ctx.cq):  # each computed value over the joined row's columns
        value[computed.variable] = computed.render(lambda v: value[v.variable])
    return value


def _result_select(ctx: maintain.Context, rows: Rows) -> sql.Composable:
    """The result's rows, summed over joined ``rows`` (the base tables', or a delta query's)."""
    value = _value(ctx, rows.column)
    keys = ctx.tree.root.keys
    terms = _entry_terms(ctx, rows)
    items = [sql.SQL("{} AS {}").format(value[k], sql.Identifier(k)) for k in keys]
    items += [sql.SQL("sum({}) AS {}").format(t, sql.Identifier(e.name)) for e, t in terms]
    having = [sql.SQL("count(*) > 0")] if not keys else []
    having += _overflow_checks(ctx, value, rows.live, [a for a in ctx.cq.aggregates if a.function in ("sum", "avg")])
    group = sql.SQL(" GROUP BY {}").format(sql.SQL(", ").join(sql.SQL(str(i + 1)) for i in range(len(keys)))) \
        if keys else sql.SQL("")  # type: ignore[arg-type]
    if having:
        group = sql.SQL("{} HAVING {}").format(group, sql.SQL(" AND ").join(having))
    return sql.SQL("SELECT {} {}{}").format(sql.SQL(", ").join(items), rows.from_where([]), group)


def _overflow_checks(ctx: maintain.Context, value: dict[str, sql.Composable], live: sql.Composable,
                     aggregates: list[Aggregate]) -> list[sql.Composable]:
    """Each sum's argument with arithmetic, evaluated as written on every joined row that arrives
    and is live: the ring sums its monomials in numeric, where PostgreSQL's own query raises
    'integer out of range' (or a float overflow) in a row whose value does not fit its type. A
    joined row counts if the changed atom's row arrives (net multiplicity > 0: a row of the table
    now, as its whole net change since the view's state is applied) and every other atom's row is
    a current row of its table (not one of the rows subtracted to read an older state): so only a
    joined row of the tables as they are now is evaluated, and every such row once, by the change
    that made it. The statement making it then fails as the query would (immediate), or the
    action, and so the read, until it goes (deferred). An always-true HAVING clause, which the
    planner cannot drop as it would an unused column."""
    arguments = {a.argument for a in aggregates if isinstance(a.argument, BinOp)}
    return [sql.SQL("count(CASE WHEN {} THEN {} END) >= 0").format(
        live, expression_sql(argument, lambda v: value[v.variable])) for argument in sorted(arguments, key=str)]


VALUE = "pgivm_value"  # an extreme table's value column (a variable's name always has a dot)


def _in_numeric(ctx: maintain.Context, aggregate: Aggregate) -> bool:
    """Whether an extreme table keeps a min/max argument's values in numeric: integer arithmetic,
    which a delta query also computes on joined rows of no current state (a row arriving with the
    old rows of a table still to be applied, say), where it may overflow though PostgreSQL's query
    never sees that row. Read back in the argument's type; ``_overflow_checks`` raises for the
    rows PostgreSQL does evaluate."""
    assert aggregate.argument is not None
    return rings.integer_arithmetic(aggregate.argument, lambda v: ctx.view.variable_types[v]) is not None


def _extreme_select(ctx: maintain.Context, rows: Rows, aggregate: Aggregate) -> sql.Composable:
    """Per group and value of a min/max argument, its multiplicity in the joined ``rows``: NULLs are
    no value, as min and max skip them."""
    value = _value(ctx, rows.column)
    keys = ctx.tree.root.keys
    assert aggregate.argument is not None
    cast = sql.SQL("::numeric" if _in_numeric(ctx, aggregate) else "")
    argument = expression_sql(aggregate.argument, lambda v: sql.SQL("{}{}").format(value[v.variable], cast))
    items = [sql.SQL("{} AS {}").format(value[k], sql.Identifier(k)) for k in keys]
    items += [sql.SQL("{} AS {}").format(argument, sql.Identifier(VALUE)), sql.SQL("sum({}) AS count").format(rows.multiplicity)]
    where = rows.from_where([sql.SQL("{} IS NOT NULL").format(argument)])
    checks = _overflow_checks(ctx, value, rows.live, [aggregate])
    return sql.SQL("SELECT {} {} GROUP BY {}{}").format(sql.SQL(", ").join(items), where, sql.SQL(", ").join(
        sql.SQL(str(i + 1)) for i in range(len(keys) + 1)),  # type: ignore[arg-type]
        sql.SQL(" HAVING {}").format(sql.SQL(" AND ").join(checks)) if checks else sql.SQL(""))


def _null_patterns(ctx: maintain.Context) -> list[frozenset[str]]:
    """Every set of nullable GROUP BY columns that can be NULL together in a group (all 2^n)."""
    nullable = [k for k in ctx.tree.root.keys if ctx.nullable_key(k)]
    return [frozenset(k for i, k in enumerate(nullable) if pattern >> i & 1) for pattern in range(1 << len(nullable))]


def _extreme_merges(ctx: maintain.Context, table: sql.Identifier, source: sql.Composable) -> list[sql.Composable]:
    """table := table ⊎ source, one MERGE per pattern of NULLs among the nullable GROUP BY columns,
    each over the source's rows of that pattern and matching on = or IS NULL per key: a plain
    conjunction, which the index on (keys, value) serves (PostgreSQL does not carry the value's
    equality into an OR of the keys' NULL cases, and would read the whole group)."""
    keys = ctx.tree.root.keys
    nullable = [k for k in keys if ctx.nullable_key(k)]
    out = []
    for is_null in _null_patterns(ctx):
        rows = sql.SQL(" AND ").join(sql.SQL("s.{} IS {}NULL").format(sql.Identifier(k), sql.SQL("" if k in is_null else "NOT "))
                                     for k in nullable) if nullable else sql.SQL("true")
        # OFFSET 0: the pattern's test stays outside the delta query, whose plan looks the delta's
        # partners up; pushed into it, "c IS NULL" on a base table made PostgreSQL scan that table
        out.append(maintain.merge(ctx, table, (*keys, VALUE), [ctx.ring.count],
                                  sql.SQL("(SELECT * FROM ({} OFFSET 0) AS s WHERE {})").format(source, rows),
                                  null_keys=is_null))
    return out


def _extreme_read(ctx: maintain.Context, table: sql.Identifier, aggregate: Aggregate) -> sql.Composable:
    """The group's min or max from its values (``r``: the group's row of the result): an index
    lookup, whatever left the group. One lookup per pattern of NULLs among the nullable GROUP BY
    columns (each names every key, so the index serves it; the others find nothing at once)."""
    keys = ctx.tree.root.keys
    lookups = []
    for is_null in _null_patterns(ctx):
        parts = [sql.SQL("e.{k} IS NULL AND r.{k} IS NULL" if k in is_null else "e.{k} = r.{k}").format(k=sql.Identifier(k))
                 for k in keys]
        where = sql.SQL(" WHERE {}").format(sql.SQL(" AND ").join(parts)) if parts else sql.SQL("")
        read = sql.SQL("count(*)") if aggregate.function == "count_distinct" else \
            sql.SQL("{}(e.{})").format(sql.SQL(aggregate.function), sql.Identifier(VALUE))  # type: ignore[arg-type]  # min or max
        lookups.append(sql.SQL("(SELECT {} FROM {} AS e{})").format(read, table, where))
    if len(lookups) == 1:
        return lookups[0]
    if aggregate.function == "count_distinct":  # the one pattern the group has counts, the others 0
        return sql.SQL("({})").format(sql.SQL(" + ").join(lookups))
    return sql.SQL("{}({})").format(sql.SQL("least" if aggregate.function == "min" else "greatest"),
                                    sql.SQL(", ").join(lookups))


def _live_source(captured: capture.CaptureAtom, table: sql.Composable, pending: sql.Composable | None,
                 older: sql.Composable | None) -> sql.Composable:
    """Another atom's rows as a delta query reads them, columns named as in K_delta (base columns
    read qualified and renamed at once): its base table (a hole, named from its oid at run time),
    less the rows the view does not reflect yet (``pending``, deferred), less the statement's net
    change where the delta query must read the table's old state (``older``: that atom's K_delta).
    The base part has no WHERE (the hole's own definition reads tableoid, so it names a table): a
    UNION ALL branch with one is not flattened by PostgreSQL, and the join conditions could then
    not reach the table's indexes (a 4-cycle's delta scanned the edge table whole, 85 s an edge
    on ego-Facebook)."""
    read = sql.SQL(", ").join(sql.SQL("{} AS {}").format(v, sql.Identifier(c.name))
                              for v, c in zip(captured.read("b"), captured.columns))
    parts = [sql.SQL("SELECT {}, 1::bigint AS mult, true AS live FROM {} AS b").format(read, table)]
    columns = sql.SQL(", ").join(sql.SQL("p.{}").format(sql.Identifier(c.name)) for c in captured.columns)
    for source in (sql.SQL("({})").format(pending) if pending is not None else None, older):
        if source is not None:
            parts.append(sql.SQL("SELECT {}, -p.mult, false FROM {} AS p").format(columns, source))
    return sql.SQL("({})").format(sql.SQL(" UNION ALL ").join(parts))


def _atom_delta_rows(ctx: maintain.Context, i: int, hole_of: dict[TableRef, sql.Composable],
                     logged: Any, every_table: bool = False) -> Rows:
    """δQ's term of atom i, A_1' ⋈ … ⋈ δA_i ⋈ A_{i+1} ⋈ … ⋈ A_n: the atom's net change joined with
    every other atom's live rows (less what is pending, deferred; at the old state, an atom of the
    same table after i)."""
    cq, names = ctx.cq, ctx.names
    atom = cq.atoms[i]
    sources: dict[str, sql.Composable] = {}
    factors, live = [], []  # live: a joined row of the tables as they are now (_overflow_checks)
    for j, other in enumerate(cq.atoms):
        alias = sql.Identifier(other.alias)
        factors.append(sql.SQL("{}.mult").format(alias))
        if j == i:
            sources[other.alias] = names(f"{ctx.atom_name(atom.alias)}_delta")
            live.append(sql.SQL("{}.mult > 0").format(alias))
            continue
        captured = ctx.capture_atom(other.alias)
        pending = deferred.pending_rows(names, logged[other.table], captured) if logged is not None else None
        # a later atom as it was: new minus its queued net change, for an atom of the same table
        # (captured before any atom is applied) and, ``every_table``, of any table one statement
        # wrote with this one (45_statements.sql). Not always: a UNION ALL with even an empty table
        # keeps PostgreSQL from reading the other table through its index (1,000 rows, not 15).
        older = names(f"{ctx.atom_name(other.alias)}_delta") if j > i and (every_table or other.table == atom.table) else None
        sources[other.alias] = _live_source(captured, hole_of[other.table], pending, older)
        live.append(sql.SQL("{}.live").format(alias))
    return _source_rows(ctx, sources, sql.SQL(" * ").join(factors), sql.SQL(" AND ").join(live))


def _merge_by_null_pattern(ctx: maintain.Context, table: sql.Identifier, changes: sql.Identifier) -> sql.Composable:
    """PL/pgSQL: ``table`` := ``table`` ⊎ ``changes`` (then emptied), one MERGE per pattern of NULLs
    among the nullable keys that the changed rows have, each matching a key by IS NULL or = alone:
    the index on the keys then finds a row in a few reads, where = OR both NULL reads every row that
    agrees on the keys before the first nullable one."""
    keys = ctx.tree.root.keys
    nullable = [k for k in keys if ctx.nullable_key(k)]
    pattern = sql.SQL("ARRAY[{}]").format(sql.SQL(", ").join(sql.SQL("c.{} IS NULL").format(sql.Identifier(k)) for k in nullable))
    if len(nullable) <= STATIC_PATTERNS_UP_TO:  # one static MERGE per pattern: plans kept, not made per statement
        source = sql.SQL("(SELECT * FROM {} AS c WHERE {} = pgivm_pattern)").format(changes, pattern)
        branches = []
        for bits in itertools.product((False, True), repeat=len(nullable)):
            is_null = frozenset(k for k, null in zip(nullable, bits) if null)
            branches.append(sql.SQL("{} pgivm_pattern = {} THEN\n                {};").format(
                sql.SQL("IF" if not branches else "ELSIF"), sql.Literal(list(bits)),
                maintain.merge(ctx, table, keys, ctx.entries(ctx.tree.root), source, null_keys=is_null)))
        return sql.SQL(
            "    DECLARE pgivm_pattern boolean[];\n    BEGIN\n"
            "        FOR pgivm_pattern IN SELECT DISTINCT {pattern} FROM {changes} AS c LOOP\n"
            "            {branches}\n            END IF;\n"
            "        END LOOP;\n    END;\n    DELETE FROM {changes};").format(
            pattern=pattern, changes=changes, branches=sql.SQL("\n            ").join(branches))
    hole = capture.FormatHoles(1)
    source = sql.SQL("(SELECT * FROM {} AS c WHERE {} = $1)").format(changes, pattern)
    statement = maintain.merge(ctx, table, keys, ctx.entries(ctx.tree.root), source, on=hole[0])
    conditions = []
    for k in keys:
        equal = sql.SQL("v.{k} = d.{k}").format(k=sql.Identifier(k))
        if k in nullable:
            conditions.append(sql.SQL("CASE WHEN pgivm_pattern[{}] THEN {} ELSE {} END").format(
                sql.Literal(nullable.index(k) + 1), capture.TextLiteral(sql.SQL("v.{} IS NULL").format(sql.Identifier(k))),
                capture.TextLiteral(equal)))
        else:
            conditions.append(capture.TextLiteral(equal))
    return sql.SQL(
        "    DECLARE pgivm_pattern boolean[];\n    BEGIN\n"
        "        FOR pgivm_pattern IN SELECT DISTINCT {pattern} FROM {changes} AS c LOOP\n"
        "            EXECUTE pg_catalog.format({merge}, pg_catalog.concat_ws(' AND ', {on})) USING pgivm_pattern;\n"
        "        END LOOP;\n    END;\n    DELETE FROM {changes};").format(
        pattern=pattern, changes=changes, merge=hole.literal(statement), on=sql.SQL(", ").join(conditions))


def _table_rows(ctx: maintain.Context, alias: str, table: sql.Composable) -> sql.Composable:
    """An atom's rows as they are now, for an outer join's delta (columns named ``outer.column_name``)."""
    captured = ctx.capture_atom(alias)
    return sql.SQL("(SELECT {} FROM {} AS b WHERE b.tableoid IS NOT NULL)").format(sql.SQL(", ").join(
        sql.SQL("{} AS {}").format(v, sql.Identifier(outer.column_name(ctx.cq, ColumnRef(alias, c.column))))
        for v, c in zip(captured.read("b"), captured.columns)), table)


def _older_rows(ctx: maintain.Context, alias: str, table: sql.Composable, delta: sql.Identifier) -> sql.Composable:
    """An atom's rows before the statement, signed (for an outer join's delta, columns named
    ``outer.column_name``, and mult): the rows now, less the statement's net change (its K_delta)."""
    change = sql.SQL(", ").join(sql.SQL("d.{}").format(sql.Identifier(c.name)) for c in ctx.capture_atom(alias).columns)
    return sql.SQL("(SELECT *, 1::bigint AS mult FROM {} AS b UNION ALL SELECT {}, -d.mult FROM {} AS d)").format(
        _table_rows(ctx, alias, table), change, delta)


def _term_chain(ctx: maintain.Context, chain: outer.Chain, i: int, hole_of: dict[TableRef, sql.Composable]) -> outer.Chain:
    """The chain atom i's term reads: as ``chain`` (every table as it is now), but the atoms of
    atom i's table after it as they were before the statement. The outer-join rules hold for one
    changed atom with the others fixed at any state, and a self-join's change telescopes through
    its atoms as the inner-join rule's does (``_atom_delta_rows``): A_1' .. δA_i .. A_n."""
    table = ctx.cq.atoms[i].table
    later = {other.alias for other in ctx.cq.atoms[i + 1:] if other.table == table}
    if not later:
        return chain

    def rows(alias: str) -> sql.Composable:
        if alias in later:
            return _rows_before(ctx, alias, hole_of[table], ctx.names(f"{ctx.atom_name(alias)}_delta"))
        return _table_rows(ctx, alias, hole_of[ctx.cq.atom(alias).table])

    return outer.Chain(ctx, rows)


def _rows_before(ctx: maintain.Context, alias: str, table: sql.Composable, delta: sql.Identifier) -> sql.Composable:
    """An atom's rows before the statement, one row each as ``_table_rows`` gives them (for a
    self-join's outer join, whose rules count matches row by row): the rows now, less one copy of
    each row the net change inserted, with a copy of each it deleted. EXCEPT ALL compares with the
    columns' equality, which resolve demands of every column a view reads. No join condition
    reaches inside it: the table is read whole, once per term that reads it (O(|table|) a statement,
    where other atoms are read through their indexes)."""
    change = _change_columns(ctx, alias)
    copies = sql.SQL("SELECT {} FROM {} AS d CROSS JOIN pg_catalog.generate_series(1, pg_catalog.abs(d.mult)) AS g "
                     "WHERE d.mult {} 0")
    return sql.SQL("((SELECT * FROM {} AS b EXCEPT ALL {}) UNION ALL {})").format(
        _table_rows(ctx, alias, table), copies.format(change, delta, sql.SQL(">")), copies.format(change, delta, sql.SQL("<")))


def _change_columns(ctx: maintain.Context, alias: str) -> sql.Composable:
    """The columns of an atom's net change (``d``, its K_delta), named ``outer.column_name``."""
    return sql.SQL(", ").join(
        sql.SQL("d.{} AS {}").format(sql.Identifier(c.name), sql.Identifier(outer.column_name(ctx.cq, ColumnRef(alias, c.column))))
        for c in ctx.capture_atom(alias).columns)


def _delta_rows(ctx: maintain.Context, alias: str, delta: sql.Identifier) -> sql.Composable:
    """An atom's net change for an outer join's delta (columns named ``outer.column_name``, and mult)."""
    return sql.SQL("(SELECT {}, d.mult FROM {} AS d)").format(_change_columns(ctx, alias), delta)


def _base_view(ctx: maintain.Context, view: ResolvedView, table: TableRef, ident: sql.Identifier) -> sql.Composable:
    """A view of the columns the delta queries read of ``table`` (and tableoid: the table stays a
    table), bound to the table's oid as every view is. Made again by each install and upgrade."""
    columns = sorted({c.column for a in ctx.cq.atoms_of(table) for c in ctx.capture_atom(a.alias).columns})
    return sql.SQL("DROP VIEW IF EXISTS {v}; CREATE VIEW {v} AS SELECT b.tableoid{cols} FROM {t} AS b; "
                   "COMMENT ON VIEW {v} IS {c}").format(
        v=ident, t=view.base_of(table).ident, cols=sql.SQL("").join(sql.SQL(", b.{}").format(sql.Identifier(c)) for c in columns),
        c=sql.Literal(f"first-order IVM: the columns its delta queries read of base table {view.base_of(table).ref}"))


def _statements_plan(ctx: maintain.Context, name: str, outer_chain: bool, logged: bool) -> list[sql.Composable]:
    """statement_open(), apply_pending() and statement_close(): one statement's writes of several
    base tables applied together by the last of their triggers (see 45_statements.sql). With an
    outer join, whose terms read later atoms of other tables as they are now, several tables changed
    at once count the view again (what TRUNCATE does); a self-join's atoms are told apart as always.
    A deferred view's queued changes (a partition's TRUNCATE) only go to its logs, in any order."""
    names, cq = ctx.names, ctx.cq
    position = {a.alias: i + 1 for i, a in enumerate(cq.atoms)}  # in the array queued

    def applies(variant: str, indent: str) -> list[sql.Composable]:
        return [sql.SQL(f"{indent}IF queued[{position[a.alias]}] THEN\n{indent}    PERFORM {{}}();\n{indent}END IF;").format(
            names(f"apply_batch_{variant}{ctx.atom_name(a.alias)}")) for a in cq.atoms]

    apply = applies("", "    ")
    if len(cq.tables) > 1 and not logged:
        changed = sql.SQL(" + ").join(sql.SQL("({})::int").format(sql.SQL(" OR ").join(
            sql.SQL(f"queued[{position[a.alias]}]") for a in cq.atoms_of(t))) for t in cq.tables)
        several = [sql.SQL("        PERFORM {}();").format(names("recount")), *(sql.SQL("        DELETE FROM {};").format(
            names(f"{ctx.atom_name(a.alias)}_delta")) for a in cq.atoms)] if outer_chain else applies("many_", "        ")
        apply[:0] = [sql.SQL("    IF {} > 1 THEN\n{}\n        RETURN;\n    END IF;").format(changed, sql.SQL("\n").join(several))]
    return [
        sql.SQL("ALTER TABLE {} ADD COLUMN IF NOT EXISTS statements_open integer NOT NULL DEFAULT 0").format(names("state")),
        render(__package__, "45_statements.sql", {
            "state": names("state"), "statement_open": names("statement_open"), "apply_pending": names("apply_pending"),
            "statement_close": names("statement_close"),
            "statement_close_comment": sql.Literal(f"first-order IVM view {name}: a partition's TRUNCATE applied once its rows are gone"),
            "apply": sql.SQL("\n").join(apply),
            "queued": sql.SQL(", ").join(sql.SQL("EXISTS (SELECT FROM {})").format(names(f"{ctx.atom_name(a.alias)}_delta"))
                                         for a in cq.atoms),
            "statement_open_comment": sql.Literal(f"first-order IVM view {name}: a writing statement counts itself in"),
            "apply_pending_comment": sql.Literal(
                f"first-order IVM view {name}: a statement's change queued; the last of one statement's writes applies them all")})]


def plan(view: ResolvedView, name: str, view_schema: str, params: dict[str, Any]) -> InstallPlan:
    ctx = _context(view, name)
    names = ctx.names
    cq = ctx.cq
    root = ctx.tree.root
    state = [render("pgivm.systems.fivm", "00_view_state.sql", {
        "schema": names.schema_id, "state": names("state"),
        "schema_comment": sql.Literal(f"pgivm state of view {name} (system first-order): {cq.sql}")})]
    state.append(maintain._table_ddl(ctx, names("maintained"), root.keys, ctx.entries(root),
                                     f"first-order IVM: the result of view {name}, its ring entries per group"))
    extremes = _extremes(cq)
    for i, aggregate in _value_tables(extremes):  # each group's values of a min/max argument, with multiplicities
        keyed = [sql.SQL("{} {}").format(sql.Identifier(k), sql.SQL(view.variable_types[k])) for k in root.keys]  # type: ignore[arg-type]
        state.append(sql.SQL("CREATE TABLE {t} ({keys}{v} {vt}{collate} NOT NULL, count bigint NOT NULL); "
                             "CREATE INDEX ON {t} ({index}); COMMENT ON TABLE {t} IS {c}").format(
            t=names(f"extreme_{i}"), keys=sql.SQL("").join(sql.SQL("{}, ").format(k) for k in keyed),
            v=sql.Identifier(VALUE), vt=sql.SQL(_value_type(ctx, aggregate)),  # type: ignore[arg-type]
            collate=_value_collation(view, aggregate),
            index=sql.SQL(", ").join(sql.Identifier(k) for k in (*root.keys, VALUE)),
            c=sql.Literal(f"first-order IVM: per group, the values of {aggregate.argument} with their multiplicities")))
    for atom in cq.atoms:
        captured = ctx.capture_atom(atom.alias)
        state.append(sql.SQL("CREATE TABLE {t} ({cols}, mult bigint NOT NULL)").format(
            t=names(f"{captured.name}_delta"),
            cols=sql.SQL(", ").join(sql.SQL("{} {}").format(sql.Identifier(c.name), sql.SQL(c.target_type))  # type: ignore[arg-type]
                                    for c in captured.columns)))
        if len(cq.atoms_of(atom.table)) > 1:
            # a self-join reads its table as it was before the statement: the table UNION ALL this
            # change, probed by its join columns. Up to PostgreSQL 17 a sequential scan that
            # enable_seqscan = off disables adds its penalty at every rescan, so without an index
            # here the union was materialized whole (a 4-cycle's insert read all of its table)
            state += [sql.SQL("CREATE INDEX ON {t} ({c})").format(t=names(f"{captured.name}_delta"), c=sql.Identifier(c.name))
                      for c in captured.columns if c.key]
    functions: list[sql.Composable] = [*maintain.delta_layouts(ctx),
                                       render("pgivm.systems.fivm", "40_restart.sql", {"restart": names("restart")})]
    tables = cq.tables
    # deferred: the live base tables run ahead of the view by what is pending; read them without it
    logged = deferred.logged_tables(deferred_atoms(view), view) if deferred.is_deferred(params) else None
    # Each base table read through a view of the state bound to its oid, as views are: a renamed
    # table is still found, and the delta queries are static SQL whose plans PL/pgSQL keeps.
    hole_of = {t: names(f"base_{i + 1}") for i, t in enumerate(tables)}
    functions[:0] = [_base_view(ctx, view, t, hole_of[t]) for t in tables]
    chain = outer.Chain(ctx, lambda alias: _table_rows(ctx, alias, hole_of[cq.atom(alias).table])) \
        if cq.has_outer_join else None
    # rows keyed by columns that may be NULL (an outer join's, or several columns that join nothing):
    # merged one pattern of NULLs at a time, each key matched by = or IS NULL alone, which the index on
    # the keys serves; "= OR both NULL" on two keys let PostgreSQL match by the first alone (49,404
    # rows read by one write of a listing keyed by two such columns, where each changed row finds its
    # one row). On one key the index serves the OR, and the merge stays one statement.
    by_pattern = any(ctx.nullable_key(k) for k in root.keys) and (chain is not None or len(root.keys) > 1)
    if by_pattern:  # (made here, not with the state: an upgrade of an older view makes it too)
        functions.append(sql.SQL("CREATE TABLE IF NOT EXISTS {} (LIKE {}); COMMENT ON TABLE {} IS {}").format(
            names("maintained_delta"), names("maintained"), names("maintained_delta"),
            sql.Literal(f"first-order IVM: the change of view {name}'s result within one statement, empty between")))
    value_tables = [names("maintained"), *(names(f"extreme_{j}") for j, _ in _value_tables(extremes))]
    clear = sql.SQL("\n").join(sql.SQL("    DELETE FROM {};").format(t) for t in value_tables)
    if chain is not None:  # an outer join keeps the other side's rows, NULL-extended: count again
        whole = _joined_rows(ctx, sql.SQL("SELECT *, 1::bigint AS mult FROM {} AS s").format(chain.whole()))
        refill = [sql.SQL("INSERT INTO {} {}").format(names("maintained"), _result_select(ctx, whole))]
        refill += [sql.SQL("INSERT INTO {} {}").format(names(f"extreme_{j}"), _extreme_select(ctx, whole, a))
                   for j, a in _value_tables(extremes)]
        functions.append(render(__package__, "40_recount.sql", {
            "recount": names("recount"), "settings": maintain.function_settings(ctx),
            "statements": sql.SQL("{}\n{}").format(clear, sql.SQL("\n").join(
                sql.SQL("    {};").format(m) for m in refill)),
            "comment": sql.Literal(f"first-order IVM view {name}: the result counted again after a TRUNCATE")}))
        clear = sql.SQL("    PERFORM {}();").format(names("recount"))
    many = chain is None and logged is None and len(tables) > 1
    # a TRUNCATE of several tables: what a partition's trigger queued is counted again with the rest
    discard = sql.SQL("\n").join(sql.SQL("    DELETE FROM {};").format(names(f"{ctx.atom_name(a.alias)}_delta"))
                                 for a in cq.atoms)
    for i, atom in enumerate(cq.atoms):
        k = ctx.atom_name(atom.alias)
        delta = names(f"{k}_delta")
        if chain is not None:
            older = {other.alias: _older_rows(ctx, other.alias, hole_of[other.table], names(f"{ctx.atom_name(other.alias)}_delta"))
                     for other in cq.atoms[i + 1:] if other.table == atom.table}
            rows = _joined_rows(ctx, _term_chain(ctx, chain, i, hole_of).delta(i, _delta_rows(ctx, atom.alias, delta), older))
        else:
            rows = _atom_delta_rows(ctx, i, hole_of, logged)
        variants = [("", rows)]
        if many:  # several tables changed by one statement: later atoms of any table read as they were
            variants.append(("many_", _atom_delta_rows(ctx, i, hole_of, logged, every_table=True)))
        for variant, rows in variants:
            result = sql.SQL("({})").format(_result_select(ctx, rows))
            merges = [] if by_pattern else [maintain.merge(ctx, names("maintained"), root.keys, ctx.entries(root), result)]
            merges += [m for j, aggregate in _value_tables(extremes)
                       for m in _extreme_merges(ctx, names(f"extreme_{j}"), _extreme_select(ctx, rows, aggregate))]
            statements = [sql.SQL("    {};").format(m) for m in merges]
            if by_pattern:
                statements[:0] = [sql.SQL("    INSERT INTO {} SELECT * FROM {} AS d;").format(names("maintained_delta"), result),
                                  _merge_by_null_pattern(ctx, names("maintained"), names("maintained_delta"))]
            functions.append(render("pgivm.systems.fivm", "10_apply_batch.sql", {
                "apply_batch": names(f"apply_batch_{variant}{k}"), "apply_bulk": names(f"apply_bulk_{variant}{k}"),
                "delta": delta, "bulk_rows": sql.Literal(BULK_ROWS), "settings": maintain.function_settings(ctx),
                "statements": sql.SQL("{}\n    DELETE FROM {};").format(sql.SQL("\n").join(statements), delta),
                "comment": sql.Literal(f"first-order IVM view {name}: the delta query of atom {atom.alias}"
                                       + (", one of several tables a statement wrote" if variant else ""))}))
        functions.append(render("pgivm.systems.fivm", "20_clear.sql", {
            "clear": names(f"clear_{k}"), "statements": sql.SQL("{}\n{}").format(clear, discard),
            "comment": sql.Literal(f"first-order IVM view {name}: TRUNCATE of atom {atom.alias}")}))
    if _counted(cq):  # a view of one atom applies each write at once: no statement to count
        functions += _statements_plan(ctx, name, chain is not None, logged is not None)
    for table in tables:
        functions.append(capture_functions_plan(
            names, view, name, table, "first-order IVM", atoms=[ctx.capture_atom(a.alias) for a in cq.atoms_of(table)],
            letters=_letters(view, table), always_batch=True, then=names("apply_pending") if _counted(cq) else None))
        # the delta queries read base tables: their functions run with row_security off
    build = [*maintain.pinned_settings(ctx),
             sql.SQL("INSERT INTO {} {}").format(names("maintained"), _result_select(ctx, _base_rows(ctx))),
             *(sql.SQL("INSERT INTO {} {}").format(names(f"extreme_{i}"), _extreme_select(ctx, _base_rows(ctx), a))
               for i, a in _value_tables(extremes)),
             *(sql.SQL("ANALYZE {}").format(t) for t in value_tables),
             # each delta query planned once now, its change empty: a join PostgreSQL cannot plan in
             # it (a FULL JOIN whose ON it can neither hash nor merge, which the view's own WHERE
             # let it run) is refused here, not at every write
             *(sql.SQL("SELECT {}()").format(names(f"apply_{kind}_{ctx.atom_name(a.alias)}"))
               for a in cq.atoms for kind in ("batch", "bulk") if logged is None),  # (deferred: logs come later)
             *(sql.SQL("SELECT {}()").format(names(f"apply_{kind}_many_{ctx.atom_name(a.alias)}"))
               for a in cq.atoms for kind in ("batch", "bulk") if many)]
    assert view.output_types is not None
    if cq.is_listing:
        # each column of its own type where its variable's differs (char(3) kept as text: maintain._as_declared)
        outputs = sql.SQL(", ").join(
            sql.SQL("r.{}{} AS {}").format(sql.Identifier(o.variable), sql.SQL(  # type: ignore[union-attr]
                "" if view.variable_types[o.variable] == view.output_types[o.name]  # type: ignore[union-attr]
                else f"::{view.output_types[o.name]}"), sql.Identifier(o.name))  # type: ignore[arg-type]
            for o in cq.outputs)
        # the result keyed by its rows, with multiplicities: DISTINCT shows each stored row once
        keyed = cq.distinct and cq.projection is None
        user = shape_rows(cq, sql.SQL("SELECT DISTINCT {} FROM {} AS r" if keyed else
                                      "SELECT {} FROM {} AS r CROSS JOIN LATERAL generate_series(1, r.count) AS times").format(
            outputs, names("maintained")), distinct=not keyed)
        count = sql.SQL("(SELECT count(*) FROM ({}) AS rows)").format(user) if cq.distinct else \
            sql.SQL("(SELECT coalesce(sum(count), 0)::bigint FROM {})").format(names("maintained"))
    else:
        user = shape_rows(cq, maintain.result_query(ctx, view.output_types, {
            a.name: _extreme_read(ctx, names(f"extreme_{i}"), a) for i, a in extremes}))
        count = sql.SQL("(SELECT count(*) FROM ({}) AS rows)").format(user)
    user = collated(view, user)
    expose = [
        sql.SQL("CREATE OR REPLACE VIEW {} AS SELECT {} AS count").format(names("result"), count),
        sql.SQL("CREATE OR REPLACE VIEW {v} AS {q}; COMMENT ON VIEW {v} IS {c}").format(
            v=sql.Identifier(view_schema, name), q=user,
            c=sql.Literal(f"pgivm: maintained by first-order IVM, state in schema {names.schema}. Definition: {cq.sql}")),
        revoke_plan(names)]
    capture_plan: list[sql.Composable] = []
    for table in tables:
        capture_plan += capture.triggers_on(view.base_of(table), capture_triggers(view, name, table))
    return InstallPlan.of(state=state, functions=functions, build=build, capture=capture_plan, expose=expose)
