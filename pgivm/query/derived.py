"""Subqueries and WITH queries that aggregate, kept as tables of their own (issue 22).

A subquery that aggregates (GROUP BY, an aggregate, HAVING, or DISTINCT) cannot be merged into the
view's joins the way ``inline.py`` merges one that only joins, filters and renames. Each becomes a
table of the view's state schema, ``derived_N``: its rows are the subquery's result, one per group,
each with the group's key values in hidden columns first (``pgivm_k1``, ...). The subquery in the
view's SQL is replaced by a read of that table, and every system maintains the view over it as
over a base table, with the usual capture triggers. Statement triggers on the subquery's own
tables keep the table current (``pgivm.derived``): the groups a statement touched are recounted
and only those that changed are written, so the capture triggers on ``derived_N`` see the net
change of the subquery's result.

Here: which subqueries qualify (in FROM, as WITH queries and plain views there, and under
``x [NOT] IN (...)``, where one that joins tables is kept as its DISTINCT values: IN reads each value
once, NULL included), and what is kept of each (its recount as SQL over its tables' aliases, which
``pgivm.derived`` points at the tables or at a statement's changed rows). The subquery must read
tables only (joined by commas, inner or LEFT JOIN ... ON; grouped by columns of tables no LEFT
JOIN extends with NULLs), call aggregates and PostgreSQL's listed
immutable functions only, and read nothing of the query around it. Its WHERE may test ``x IN`` or
``EXISTS`` over one table (joined by AND), and its FROM may read another subquery that aggregates,
kept first (innermost first): a derived table over a derived table (TPC-H Q15, Q20). A subquery of one row per key
that ``inline._semi_joins`` reads as an EXISTS test stays one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.merge_subqueries import merge_subqueries
from sqlglot.optimizer.qualify import qualify

from pgivm.errors import NeedsColumns, UnsupportedQuery
from pgivm.query import scalar
from pgivm.query.dialect import DIALECT
from pgivm.query.model import TableRef
from pgivm.query.scalar_subqueries import and_terms

ColumnsOf = Callable[[TableRef], list[str]]

KEY = "pgivm_k"  # the hidden key columns: pgivm_k1, pgivm_k2, ...
_CORRELATED = "reads a column of the query around it"
AGGREGATES = frozenset({"count", "sum", "avg", "min", "max", "bool_and", "bool_or", "every"})
# sqlglot's names for some of PostgreSQL's functions and constructs
_ALSO = {"logical_and": "bool_and", "logical_or": "bool_or", "substring": "substr", "extract": "date_part",
         "trim": "btrim", "str_position": "strpos", "timestamp_trunc": "date_trunc", "pad": "lpad",
         "array_size": "array_length"}
# sqlglot nodes that are functions to it and operators or constructs to PostgreSQL (AND, OR, CASE, ~, ->>, ...)
_NOT_FUNCTIONS = (exp.Connector, exp.Cast, exp.Case, exp.If, exp.Extract, exp.Distinct, exp.Paren, exp.Exists,
                  exp.AtTimeZone, *scalar.OPERATOR_NODES)


@dataclass(frozen=True)
class Source:
    """One table the subquery reads, under its alias there, and the columns it reads of it."""

    alias: str
    table: TableRef  # as written (the schema None: found on the user's search_path)
    columns: tuple[str, ...]


@dataclass(frozen=True)
class DerivedRelation:
    """A subquery kept as a table: where, its columns, and how to recount it."""

    table: TableRef
    columns: tuple[str, ...]  # what the view reads of it, after the hidden keys
    keys: int  # the hidden key columns: the GROUP BY values (a DISTINCT's: every column); 0: one row
    select: str  # SELECT <key> AS pgivm_k1, ..., <outputs> FROM <sources by alias> WHERE ... GROUP BY ... HAVING ...
    sources: tuple[Source, ...]

    @property
    def key_columns(self) -> tuple[str, ...]:
        return tuple(f"{KEY}{i + 1}" for i in range(self.keys))

    def to_json(self, pinned: dict[TableRef, dict[str, Any]]) -> dict[str, Any]:
        """As the catalog keeps it; ``pinned``: each table as pinned (schema, name, oid)."""
        return {"table": {"schema": self.table.schema, "name": self.table.name}, "columns": list(self.columns),
                "keys": self.keys, "select": self.select,
                "sources": [{"alias": s.alias, "table": pinned[s.table], "columns": list(s.columns)} for s in self.sources]}

    @staticmethod
    def from_json(data: dict[str, Any]) -> DerivedRelation:
        def table(t: dict[str, Any]) -> TableRef:
            return TableRef(t["name"], t.get("schema"))

        return DerivedRelation(table(data["table"]), tuple(data["columns"]), int(data["keys"]), data["select"],
                               tuple(Source(s["alias"], table(s["table"]), tuple(s["columns"])) for s in data["sources"]))


def aggregates(select: exp.Select) -> bool:
    """Whether a SELECT groups its rows: GROUP BY, HAVING, an aggregate, or DISTINCT."""
    return bool(select.args.get("group") or select.args.get("having") or select.args.get("distinct")) or any(
        isinstance(n, exp.AggFunc) for item in select.expressions for n in item.walk())


def derived_relations(select: exp.Expression, schema: str, columns_of: ColumnsOf | None,
                      written: Callable[[exp.Table], TableRef]) -> tuple[DerivedRelation, ...]:
    """Replace each subquery of ``select`` in FROM or in ``x [NOT] IN (...)`` that aggregates
    (innermost first; WITH queries and views already expanded into subqueries) by a read of its
    table in ``schema``, in place; the tables. ``written``: a table of the query as the user wrote
    it."""
    found: list[DerivedRelation] = []
    reads: dict[int, exp.Table] = {}  # each subquery kept so far, by its new body: the read of its table

    def columns(ref: TableRef) -> list[str]:  # a kept subquery's table does not exist yet
        kept = next((r for r in found if r.table == ref), None)
        return [*kept.key_columns, *kept.columns] if kept else columns_of(ref)  # type: ignore[misc]

    for inner in reversed(list(select.find_all(exp.Select))):
        sub = inner.parent
        tested = isinstance(sub, exp.Subquery) and isinstance(sub.parent, exp.In) and sub.arg_key == "query"
        joining = tested and not aggregates(inner) and bool(inner.args.get("joins")) and inner.find(exp.Window) is None
        if inner is select or not (aggregates(inner) or joining) or not isinstance(sub, exp.Subquery) or not (
                isinstance(sub.parent, (exp.From, exp.Join)) or tested):
            continue  # a subquery in FROM, or x [NOT] IN (subquery): a table read as any other
        if inner.args.get("limit") or inner.args.get("offset") or inner.find(exp.Window):
            continue  # refused by inline, naming the subquery
        if columns_of is None:
            raise NeedsColumns("a subquery that aggregates needs the tables' columns: give pgivm a database to read them from")
        _read_kept_tables(inner, reads)
        # a subquery in its FROM that only filters and renames (a WITH query too) is merged into it first
        merge_subqueries(inner)
        alias = sub.args.get("alias")
        read_as = sub.alias or f"subquery_{len(found) + 1}"  # its name (or its place), which refusals say
        table = TableRef(f"derived_{len(found) + 1}", schema)
        renamed = [c.name for c in alias.args.get("columns") or []] if alias is not None else []
        if joining:  # x IN (SELECT a FROM t JOIN u ...): IN reads each value once, so its DISTINCT values, kept
            try:
                relation = _derived(inner.copy().distinct(copy=False), table, columns, written, read_as, renamed)
            except UnsupportedQuery as err:
                if _CORRELATED not in err.message:
                    raise
                continue  # correlated: a semi-join, whose own rules take it or refuse it
        else:
            relation = _derived(inner, table, columns, written, read_as, renamed)
        same = next((r for r in found if (r.select, r.sources) == (relation.select, relation.sources)), None)
        if same is not None:  # a WITH query read twice (TPC-H Q15): one table
            relation = same
        else:
            found.append(relation)
        read = exp.Table(this=exp.to_identifier(relation.table.name, quoted=True), db=exp.to_identifier(schema, quoted=True),
                         alias=exp.TableAlias(this=exp.to_identifier(read_as, quoted=True)))
        body = exp.select(*(exp.column(c, read_as, quoted=True).as_(c, quoted=True) for c in relation.columns)).from_(read)
        reads[id(body)] = read
        inner.replace(body)
        if alias is not None:
            alias.set("columns", None)  # named by the read of the table now
    return tuple(found)


def _read_kept_tables(inner: exp.Select, reads: dict[int, exp.Table]) -> None:
    """A subquery in ``inner``'s FROM kept already (innermost first) read as its table, under its
    alias: ``inner`` is then over tables, kept in turn from the one below (TPC-H Q15's maximum of a
    WITH query's sums)."""
    for sub in [s for s in inner.find_all(exp.Subquery) if id(s.this) in reads and s.parent_select is inner]:
        if isinstance(sub.parent, (exp.From, exp.Join)):
            sub.replace(reads[id(sub.this)].copy())


def _derived(inner: exp.Select, table: TableRef, columns_of: ColumnsOf, written_as: Callable[[exp.Table], TableRef],
             name: str, renamed: list[str]) -> DerivedRelation:
    from pgivm.query.inline import named

    body = inner.copy()
    _own_aliases(body, _check_sources(body, name))
    for item in body.expressions:  # PostgreSQL's names, before qualify calls them _col_N
        if isinstance(item, exp.Star):
            continue
        if not isinstance(item, (exp.Alias, exp.Column)):
            item.replace(named(item))
    for column in body.find_all(exp.Column):  # sch.q.c: the table's alias is q (two tables q would need aliases)
        column.set("db", None)
        column.set("catalog", None)
    # each table under a stand-in name for qualify (whose schema is one level deep), its alias kept
    known: dict[str, dict[str, str]] = {}
    written: dict[str, TableRef] = {}
    for i, t in enumerate(list(body.find_all(exp.Table))):
        ref = written_as(t)
        stand_in = f"pgivm_source_{i + 1}"
        written[stand_in] = ref
        if not t.alias:
            t.set("alias", exp.TableAlias(this=t.this.copy()))
        t.set("this", exp.to_identifier(stand_in, quoted=True))
        t.set("db", None)
        known[f'"{stand_in}"'] = {'"' + c.replace('"', '""') + '"': "text" for c in columns_of(ref)}
    try:
        body = qualify(body, schema=known, dialect=DIALECT, quote_identifiers=True, validate_qualify_columns=True)
    except SqlglotError as err:
        first = (str(err).splitlines() or ["error"])[0]
        raise UnsupportedQuery(f"subquery {name} aggregates and {_CORRELATED}, or one "
                               f"pgivm cannot place ({first}): not supported yet") from None
    sources = []
    for t in list(body.find_all(exp.Table)):
        ref = written[t.name]
        alias = t.alias_or_name
        sources.append(Source(alias, ref, tuple(sorted({c.name for c in body.find_all(exp.Column) if c.table == alias}))))
        taken = sorted(set(sources[-1].columns) & _BOOKKEEPING)
        if taken:  # the table's rows a statement took are kept beside these columns (pgivm.derived)
            raise UnsupportedQuery(f"subquery {name} aggregates over column {taken[0]} of {ref}, a name pgivm's table "
                                   "of the rows a statement took uses for itself: not supported yet",
                                   f"rename the column (ALTER TABLE {ref} RENAME COLUMN {taken[0]} TO ...)")
        t.set("this", exp.to_identifier(ref.name, quoted=True))  # as written, for the catalog and messages
        t.set("db", exp.to_identifier(ref.schema, quoted=True) if ref.schema else None)
    assert isinstance(body, exp.Select)
    _check_calls(body, name)
    outputs = [item.alias_or_name for item in body.expressions]
    if renamed:
        outputs = renamed + outputs[len(renamed):]
    twice = sorted({o for o in outputs if outputs.count(o) > 1})
    if twice or any(o.startswith(KEY) for o in outputs):
        raise UnsupportedQuery(f"subquery {name} has two columns named {(twice or outputs)[0]}, or one pgivm keeps for itself: "
                               "give each output its own name")
    group = body.args.get("group")
    distinct = body.args.get("distinct")
    if distinct is not None and (distinct.args.get("on") or group or any(
            isinstance(n, exp.AggFunc) for item in body.expressions for n in item.walk())):
        raise UnsupportedQuery(f"subquery {name} uses DISTINCT with aggregates or DISTINCT ON: not supported yet")
    keys = [e.copy() for e in group.expressions] if group else \
        [i.this.copy() if isinstance(i, exp.Alias) else i.copy() for i in body.expressions] if distinct else []
    extended = {j.this.alias_or_name for j in body.args.get("joins") or [] if (j.args.get("side") or "").upper() == "LEFT"}
    if any(c.table in extended for k in keys for c in k.find_all(exp.Column)):
        raise UnsupportedQuery(f"subquery {name} groups by a column of its LEFT JOIN's NULL-extended side: not supported "
                               "yet (group by the other side's columns)")
    recount = body.copy()
    recount.set("distinct", None)
    if distinct is not None:
        recount.set("group", exp.Group(expressions=[k.copy() for k in keys]))
    recount.set("expressions", [*(k.copy().as_(f"{KEY}{i + 1}", quoted=True) for i, k in enumerate(keys)),
                                *(exp.alias_(i.this.copy() if isinstance(i, exp.Alias) else i.copy(), o, quoted=True)
                                  for i, o in zip(body.expressions, outputs))])
    return DerivedRelation(table, tuple(outputs), len(keys), recount.sql(dialect=DIALECT), tuple(sources))


_BOOKKEEPING = frozenset({"xid", "at", "pgivm_row"})  # pgivm.derived's columns beside a table's own


def _check_sources(body: exp.Select, name: str) -> list[exp.Expression]:
    """Tables only, joined by commas, inner or LEFT JOIN ... ON, no subquery but IN or EXISTS over one
    table joined by AND in its WHERE (``_semi_join``): those tests."""
    source = body.args.get("from_") or body.args.get("from")
    if source is None or not isinstance(source.this, exp.Table) or not isinstance(source.this.this, exp.Identifier):
        raise UnsupportedQuery(f"subquery {name} aggregates over something other than tables (a subquery, a function, "
                               "a parenthesized join): not supported yet")
    for join in body.args.get("joins") or []:
        kind = (join.args.get("side") or join.args.get("kind") or "").upper()
        if kind not in ("", "INNER", "CROSS", "LEFT") or join.args.get("using") or join.args.get("method") \
                or not isinstance(join.this, exp.Table) or not isinstance(join.this.this, exp.Identifier):
            raise UnsupportedQuery(f"subquery {name} aggregates over a RIGHT, FULL, USING or NATURAL join, or over a "
                                   "subquery: not supported yet (inner and LEFT JOIN ... ON and commas are)")
    tests = [t for t in and_terms(body.args["where"].this if body.args.get("where") else None) if _semi_join(t)]
    tested = {id(t.find(exp.Select)) for t in tests}
    if any(s is not body and id(s) not in tested for s in body.find_all(exp.Select)):
        raise UnsupportedQuery(f"subquery {name} aggregates and holds a subquery of its own other than an IN or EXISTS "
                               "over one table joined by AND in its WHERE: not supported yet")
    return tests


def _own_aliases(body: exp.Select, tests: list[exp.Expression]) -> None:
    """The table each IN or EXISTS test reads, under an alias no other table of ``body`` has (its
    recount reads each table by alias), its columns renamed with it."""
    taken = {t.alias_or_name for t in body.find_all(exp.Table) if t.parent_select is body}
    for term in tests:  # the table an IN or EXISTS reads, under a name of its own (its recount reads it by alias)
        inner = term.find(exp.Select)
        table = inner.find(exp.Table)
        alias = table.alias_or_name
        if alias in taken:  # inside, the name meant the inner table (the nearest)
            own = next(f"{alias}_{n}" for n in range(2, len(taken) + 3) if f"{alias}_{n}" not in taken)
            table.set("alias", exp.TableAlias(this=exp.to_identifier(own, quoted=True)))
            for column in inner.find_all(exp.Column):
                if column.table == alias:
                    column.set("table", exp.to_identifier(own, quoted=True))
            alias = own
        taken.add(alias)


def _semi_join(term: exp.Expression) -> bool:
    """``x IN (SELECT ... FROM t ...)`` or ``EXISTS (SELECT ... FROM t ...)``, over one table: a group
    a changed row of t joins into is found by reading t's changed rows there (positive: under NOT,
    a changed row would touch the groups it does not match)."""
    inner = term.args.get("query") if isinstance(term, exp.In) else term.this if isinstance(term, exp.Exists) else None
    inner = inner.this if isinstance(inner, exp.Subquery) else inner
    return isinstance(inner, exp.Select) and not inner.args.get("joins") and inner.find(exp.Subquery) is None \
        and isinstance((inner.args.get("from_") or inner.args.get("from") or exp.From()).this, exp.Table) \
        and not aggregates(inner)


def _check_calls(body: exp.Select, name: str) -> None:
    """Aggregates and PostgreSQL's listed immutable functions only: the recount runs at every
    writing statement, as the view's owner, with search_path pg_catalog."""
    for node in body.walk():
        if isinstance(node, exp.Func) and not isinstance(node, _NOT_FUNCTIONS):
            called = (str(node.this) if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
            called = _ALSO.get(called, called)
            if called not in AGGREGATES and called not in scalar.FUNCTIONS:
                raise UnsupportedQuery(f"subquery {name} calls {called}, which pgivm does not run at every write: "
                                       f"aggregates ({', '.join(sorted(AGGREGATES))}) and immutable functions "
                                       "(sql.md lists them) only")


def parsed_recount(relation: DerivedRelation) -> exp.Select:
    statement = sqlglot.parse_one(relation.select, read=DIALECT)
    assert isinstance(statement, exp.Select)
    return statement
