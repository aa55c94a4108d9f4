"""WITH queries and subqueries in FROM, inlined into the query that reads them (issue 22).

A non-recursive WITH query or a subquery in FROM that only joins, filters and renames (no
aggregate, DISTINCT, LIMIT or set operation of its own) stands for its joins and conditions: it is
merged into the outer query by sqlglot's optimizer rules (``qualify``, which needs the tables'
columns; ``merge_subqueries``; ``eliminate_ctes``), and the result is parsed as any view. One that
cannot be merged is refused in one line. The view keeps the SQL as written; only its model comes
from the merged text. Each output keeps the name PostgreSQL gives it in the written query.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.eliminate_ctes import eliminate_ctes
from sqlglot.optimizer.merge_subqueries import merge_subqueries
from sqlglot.optimizer.qualify import qualify

from pgivm.errors import NeedsColumns, UnsupportedQuery
from pgivm.query.cq import ConjunctiveQuery
from pgivm.query.derived import DerivedRelation, derived_relations
from pgivm.query.dialect import DIALECT
from pgivm.query.model import TableRef
from pgivm.query.exists_as_values import exists_as_values, has_valued_exists
from pgivm.query.exists_over_joins import exists_over_joins, has_joined_exists
from pgivm.query.in_as_values import has_valued_in, in_as_values
from pgivm.query.lateral import has_lateral, lateral_as_joins
from pgivm.query.scalar_subqueries import and_terms, has_scalar, scalar_subqueries_as_joins

ColumnsOf = Callable[[TableRef], list[str]]


def _nested(select: exp.Expression) -> bool:
    """Whether the query has a WITH or a subquery in FROM (or in a join, in parentheses too)."""
    sources = [select.args.get("from_") or select.args.get("from")] + list(select.args.get("joins") or [])
    return bool(select.args.get("with_") or select.args.get("with")) or any(
        s is not None and isinstance(s.this, exp.Subquery) and (not is_join_tree(s.this) or _nested(s.this.this))
        for s in sources)


def output_name(name: str | None, node: exp.Expression) -> str:
    """The name PostgreSQL gives a SELECT item: its alias, a column's name, a function's, else ?column?."""
    return name or _figured_name(node)[0]


# what PostgreSQL's grammar calls the types a cast may name (a cast of a constant is named after its type)
_TYPE_NAMES = {"int": "int4", "integer": "int4", "bigint": "int8", "smallint": "int2", "real": "float4",
               "double precision": "float8", "float": "float8", "boolean": "bool", "decimal": "numeric",
               "character varying": "varchar", "char": "bpchar", "character": "bpchar",
               "timestamp with time zone": "timestamptz", "timestamp without time zone": "timestamp",
               "time with time zone": "timetz", "time without time zone": "time"}


def _figured_name(node: exp.Expression) -> tuple[str, int]:
    """PostgreSQL's FigureColname: the item's name and how strongly it holds (2: a column's or a
    function's, 1: a type's, 0: none), as a cast keeps its operand's name unless that is weak."""
    if isinstance(node, exp.Paren):
        return _figured_name(node.this)
    if isinstance(node, exp.Column):
        return node.name, 2
    if isinstance(node, exp.Cast):
        inner = _figured_name(node.this)
        if inner[1] > 1:
            return inner
        written = node.to.sql(dialect=DIALECT).lower().split("(")[0].strip()
        return _TYPE_NAMES.get(written, written.split(".")[-1].strip('"')), 1
    if isinstance(node, exp.Count) and isinstance(node.this, exp.Distinct):
        return "count", 2
    if isinstance(node, (exp.LogicalAnd, exp.LogicalOr)):  # sqlglot's names for them
        return ("bool_and" if isinstance(node, exp.LogicalAnd) else "bool_or"), 2
    if isinstance(node, exp.Case):
        return "case", 2
    if isinstance(node, exp.Subquery) and isinstance(node.this, exp.Select) and node.this.expressions:
        first = node.this.expressions[0]  # a scalar subquery: its one column's name
        return (first.alias, 2) if isinstance(first, exp.Alias) else _figured_name(first)
    if isinstance(node, exp.Func):
        return (node.sql_name() if not isinstance(node, exp.Anonymous) else str(node.this)).lower(), 2
    return "?column?", 0


def named(item: exp.Expression) -> exp.Alias:
    """A SELECT item under the name PostgreSQL gives it (an Alias node: sqlglot's alias_ would name
    a scalar subquery as a table)."""
    return exp.Alias(this=item.copy(), alias=exp.to_identifier(output_name(None, item), quoted=True))


def is_join_tree(node: exp.Expression | None) -> bool:
    """A parenthesized join: ``(a JOIN b ON ...)``, which sqlglot reads as a subquery of a table with joins."""
    return isinstance(node, exp.Subquery) and isinstance(node.this, exp.Table) and bool(node.this.args.get("joins")) \
        and not node.alias


def _aliased_joins_as_subqueries(select: exp.Select) -> bool:
    """``(a JOIN b USING (k)) AS x`` read as ``(SELECT * FROM a JOIN b USING (k)) AS x``: the same
    columns under x (PostgreSQL lists a join's columns as ``SELECT *`` does), and a subquery the
    inlining merges; whether any was found."""
    found = False
    for node in list(select.find_all(exp.Subquery)):
        table = node.this
        if node.alias and isinstance(table, exp.Table) and table.args.get("joins"):
            joins = table.args["joins"]
            table.set("joins", None)
            body = exp.select("*").from_(table.copy())
            body.set("joins", joins)
            node.set("this", body)
            found = True
    return found


def _unparenthesize(select: exp.Select) -> bool:
    """``FROM (a JOIN b ON ...) JOIN c`` read as ``FROM a JOIN b ON ... JOIN c``, the same joins (the
    leftmost is where a left-to-right reading starts anyway), ``(a)`` as ``a``; whether the text
    changed. A parenthesized join on the right of a join stays: a step of its own
    (``JoinStep.width``), its own leading parentheses read so too (``_leading_joins_inside``)."""
    from_ = select.args.get("from_") or select.args.get("from")
    written = select.sql(dialect=DIALECT)
    if from_ is not None:
        from_.set("this", _leading_joins_inside(from_.this))
    while from_ is not None and is_join_tree(from_.this):
        table = from_.this.this
        inner = table.args.get("joins") or []
        table.set("joins", None)
        from_.set("this", table)
        select.set("joins", [*inner, *(select.args.get("joins") or [])])
    for join in select.args.get("joins") or []:
        join.set("this", _leading_joins_inside(join.this))
    return select.sql(dialect=DIALECT) != written


def _leading_joins_inside(node: exp.Expression) -> exp.Expression:
    """``((a JOIN b ON ...) JOIN c ON ...)`` read as ``(a JOIN b ON ... JOIN c ON ...)``, at any
    depth, and the joins inside a parenthesized join read so too (sqlglot nests a parenthesized
    join's leading parenthesized join as a subquery that holds the joins after it)."""
    chain = _chain(node)
    if not isinstance(node, exp.Subquery) or chain is None:
        return node
    first, joins = chain
    for join in joins:
        join.set("this", _leading_joins_inside(join.this))
    first.set("joins", joins or None)
    return exp.Subquery(this=first) if joins else first  # (a): a


def _chain(node: exp.Expression) -> tuple[exp.Table, list[exp.Join]] | None:
    """A table, or a parenthesized join read left to right: its first table and its joins."""
    if isinstance(node, exp.Table):
        return node, list(node.args.get("joins") or [])
    if isinstance(node, exp.Subquery) and not node.alias:
        inner = _chain(node.this)
        return None if inner is None else (inner[0], inner[1] + list(node.args.get("joins") or []))
    return None


def _expand_ctes(select: exp.Select, with_: exp.With) -> None:
    """Each reference to a WITH query of the statement replaced by its query, as a subquery under
    the reference's alias (sqlglot merges a WITH query read once; one read twice, a self-join
    through it, is then merged like any subquery). A later WITH query may read an earlier one."""
    bodies: dict[str, exp.Expression] = {}
    columns: dict[str, list[exp.Identifier]] = {}  # WITH x(c0, c1) AS (...): the names it gives its columns
    for cte in with_.expressions:
        body = cte.this.copy()
        _replace_references(body, bodies, columns=columns)
        bodies[cte.alias] = body
        columns[cte.alias] = list(cte.args["alias"].args.get("columns") or [])
    _replace_references(select, bodies, skip=with_, columns=columns)
    select.set("with_" if "with_" in select.args else "with", None)


def _replace_references(node: exp.Expression, bodies: dict[str, exp.Expression], skip: exp.Expression | None = None,
                        columns: dict[str, list[exp.Identifier]] | None = None) -> None:
    for table in list(node.find_all(exp.Table)):
        if table.name in bodies and not table.args.get("db") and (skip is None or not _inside(table, skip)):
            sub = _as_subquery(table, bodies[table.name].copy())
            named = (table.args.get("alias") and table.args["alias"].args.get("columns")) or (columns or {}).get(table.name)
            if named:
                sub.args["alias"].set("columns", [c.copy() for c in named])
            table.replace(sub)


def _as_subquery(table: exp.Table, body: exp.Expression) -> exp.Subquery:
    """``body`` in place of ``table``, under its alias; first in a parenthesized join, the table
    holds the joins after it (``(v JOIN u ON ...)``), which the subquery then holds."""
    return exp.Subquery(this=body, alias=exp.TableAlias(this=exp.to_identifier(table.alias or table.name)),
                        joins=table.args.get("joins"))


def _inside(node: exp.Expression, ancestor: exp.Expression) -> bool:
    while node is not None:
        if node is ancestor:
            return True
        node = node.parent  # type: ignore[assignment]
    return False


def _expand_views(select: exp.Select, definition_of: Callable[[TableRef], str | None]) -> bool:
    """Replace each plain view in FROM by its definition as a subquery under the same alias (views
    over views too); whether there was one."""
    expanded = False
    for _ in range(16):  # views over views, a bounded number of levels
        found = False
        for table in list(select.find_all(exp.Table)):
            if not isinstance(table.this, exp.Identifier) or _is_cte(select, table.name):
                continue
            definition = definition_of(TableRef(name=table.name, schema=table.args.get("db") and table.args["db"].name))
            if definition is None:
                continue
            try:
                body = sqlglot.parse_one(definition.rstrip().rstrip(";"), read=DIALECT)
            except SqlglotError as err:
                raise UnsupportedQuery(f"could not read the definition of view {table.sql(dialect=DIALECT)}: "
                                       f"{(str(err).splitlines() or ['error'])[0]}") from None
            table.replace(_as_subquery(table, body))
            found = expanded = True
        if not found:
            return expanded
    raise UnsupportedQuery("views in FROM nest more than 16 levels deep")


def _select_of(sql: str) -> exp.Select | None:
    """The statement as sqlglot reads it, if it is one SELECT (else the parser proper says what is wrong)."""
    try:
        select = sqlglot.parse_one(sql, read=DIALECT)
    except SqlglotError:
        return None
    return select if isinstance(select, exp.Select) else None


def inline(sql: str, columns_of: ColumnsOf | None,
           definition_of: Callable[[TableRef], str | None] | None = None) -> str | None:
    """The query with its plain views, WITH queries and FROM subqueries merged in, or None if it
    has none."""
    return inline_deriving(sql, columns_of, definition_of)[0]


def inline_deriving(sql: str, columns_of: ColumnsOf | None, definition_of: Callable[[TableRef], str | None] | None = None,
                    derived_schema: str | None = None) -> tuple[str | None, tuple[DerivedRelation, ...]]:
    """``inline``; with ``derived_schema``, a subquery or WITH query that aggregates is read from a
    table of that schema first (``derived.py``): the query and those tables."""
    select = _select_of(sql)
    if select is None:
        return None, ()
    flattened = _aliased_joins_as_subqueries(select)
    flattened = _unparenthesize(select) or flattened
    views = definition_of is not None and _expand_views(select, definition_of)
    if not views and not _nested(select) and not has_lateral(select) and not (derived_schema and (
            has_scalar(select) or has_joined_exists(select) or has_valued_exists(select) or has_valued_in(select))):
        # but x IN (a subquery that aggregates): its table, read as any other
        kept = derived_relations(select, derived_schema, columns_of, lambda t: _written(t, {})) if derived_schema else ()
        return select.sql(dialect=DIALECT) if flattened or kept else None, kept
    with_ = select.args.get("with_") or select.args.get("with")
    if with_ is not None and with_.args.get("recursive"):
        raise UnsupportedQuery("WITH RECURSIVE is not supported in a maintained view")
    ctes = with_.expressions if with_ is not None else []
    writing = next((c for c in ctes if not isinstance(c.this, (exp.Select, exp.Union))), None)
    if writing is not None:  # it would run at every read of the view; PostgreSQL's CREATE VIEW refuses it too
        raise UnsupportedQuery(f"WITH {writing.alias} AS ({writing.this.key.upper()} ...) writes: a view only reads")
    if columns_of is None:
        raise NeedsColumns("a WITH query, a subquery in FROM or LATERAL, a compared scalar subquery, an EXISTS over a join or a "
                           "subquery read as a value needs the tables' columns: give pgivm a database to read them from")
    if with_ is not None:
        _expand_ctes(select, with_)
    for inner in list(select.find_all(exp.Select)):  # a view's text reads ``FROM (r JOIN t ON ...)``
        if inner is not select:
            _unparenthesize(inner)
    for inner in list(select.find_all(exp.Select)):  # a subquery's items too: one that aggregates is kept whole
        if inner is not select and isinstance(inner.parent, exp.Subquery):
            for item in inner.expressions:
                if not isinstance(item, (exp.Alias, exp.Column, exp.Star)):
                    item.replace(named(item))
    for item in select.expressions:  # PostgreSQL's names, before qualify names them _col_N
        if not isinstance(item, (exp.Alias, exp.Column, exp.Star)):
            item.replace(named(item))
    for table in select.find_all(exp.Table):  # sqlglot's qualify loses a quoted "R" read without an alias
        if not table.alias and not table.args.get("db") and table.this.quoted and table.name != table.name.lower():
            table.set("alias", exp.TableAlias(this=table.this.copy()))
    schema: dict[str, dict[str, str]] = {}
    exact: dict[str, dict[str, str]] = {}  # the same, quoted for qualify
    stand_ins: dict[str, tuple[exp.Identifier, exp.Identifier]] = {}  # stand-in name -> (schema, name) written
    for table in list(select.find_all(exp.Table)):
        name = table.name
        if table.args.get("db"):  # qualify's schema is one level deep: a stand-in name for the table
            name = _stand_in(table, stand_ins)
        if name and name not in schema and not _is_cte(select, name):
            written = stand_ins.get(name)
            schema[name] = {c: "text" for c in columns_of(TableRef(name=written[1].name, schema=written[0].name)
                                                          if written else TableRef(name=name))} \
                or {"pgivm_no_column": "text"}  # the one row a SELECT without FROM reads (sqlglot wants a column)
            # the names as PostgreSQL has them, quoted: sqlglot would fold "Id" to id
            folded = name if table.this.quoted and not written else name.lower()
            exact[_quoted_name(folded)] = {_quoted_name(c): t for c, t in schema[name].items()}
    try:
        qualified = qualify(select, schema=exact, dialect=DIALECT, quote_identifiers=False,
                            validate_qualify_columns=True)
        _check_stars_expanded(qualified)
        lateral_as_joins(qualified)  # LATERAL that joins and filters: a subquery joined on its correlations
        if derived_schema:  # a compared scalar subquery: a join with its values, kept as a derived table
            scalar_subqueries_as_joins(qualified)
            in_as_values(qualified)  # an IN (subquery) read as a value: joins with its values, kept as derived tables
            exists_as_values(qualified)  # an EXISTS read as a value: a join with its values, kept as a derived table
            exists_over_joins(qualified)  # an EXISTS over a join: over its values, kept as a derived table
        if isinstance(qualified, exp.Select):
            _semi_joins(qualified)
        kept = derived_relations(qualified, derived_schema, columns_of, lambda t: _written(t, stand_ins)) \
            if derived_schema else ()
        for query in reversed(list(qualified.find_all(exp.Select))):  # inner first: a view over a filtering view
            _check_null_extended_outputs(query)
            _filters_into_on(query)
            _joining_subqueries_as_parentheses(query)
            if query is not qualified:  # its subqueries' WHERE now its own, for the query around it to place
                merge_subqueries(query)
        merged = eliminate_ctes(merge_subqueries(qualified))
    except (SqlglotError, KeyError) as err:  # KeyError: a shape sqlglot's merge does not expect
        first = (str(err).splitlines() or ["error"])[0]
        if first.startswith("Cannot automatically join: "):
            column = first.split(": ", 1)[1]
            raise UnsupportedQuery(f"JOIN ... USING ({column}) beside a subquery or aliased join whose columns pgivm "
                                   "could not list (two of one name?): write the join as ON a.x = b.x") from None
        raise UnsupportedQuery(f"could not inline the WITH query or subquery: {first}") from None
    if isinstance(merged, exp.Select) and _nested(merged):
        raise UnsupportedQuery(_unmerged(merged))
    for table in merged.find_all(exp.Table):
        if table.name in stand_ins and not table.args.get("db"):
            db, written = stand_ins[table.name]
            table.set("this", written.copy())
            table.set("db", db.copy())
    return merged.sql(dialect=DIALECT), kept


def _written(table: exp.Table, stand_ins: dict[str, tuple[exp.Identifier, exp.Identifier]]) -> TableRef:
    """A table of the query as the user wrote it (schema and name as PostgreSQL reads them; once
    qualified, a schema-qualified table has a stand-in name of ``stand_ins``)."""
    if table.name in stand_ins and not table.args.get("db"):
        db, name = stand_ins[table.name]
        return TableRef(_folded(name), _folded(db))
    return TableRef(_folded(table.this), _folded(table.args["db"]) if table.args.get("db") else None)


def _folded(identifier: exp.Expression) -> str:
    return identifier.name if isinstance(identifier, exp.Identifier) and identifier.quoted else identifier.name.lower()


def _check_stars_expanded(query: exp.Expression) -> None:
    """A ``SELECT *`` that qualify could not expand: over a subquery with two columns of one name
    (``SELECT r.b, s.b ...``, which PostgreSQL allows while nobody names them), refused naming it."""
    if query.find(exp.Star) is None:
        return
    for sub in query.find_all(exp.Subquery):
        if sub.alias and isinstance(sub.this, exp.Select):
            names = [i.alias_or_name for i in sub.this.expressions]
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                raise UnsupportedQuery(f"subquery {sub.alias} has two columns named {twice[0]}, which a SELECT * around "
                                       f"it reads: give each its own name ({twice[0]} AS {twice[0]}_2)")


def _unmerged(select: exp.Select) -> str:
    """Why a view, WITH query or subquery in FROM stayed a subquery, in one line naming it."""
    subqueries = [s for s in select.find_all(exp.Subquery) if s.alias and not is_join_tree(s)]
    sub = next((s for s in subqueries if isinstance(s.this, exp.Union) or any(
        s.this.args.get(a) for a in _KEEPS_ROWS) or s.this.find(exp.AggFunc, exp.Window)), subqueries[0] if subqueries else None)
    if sub is None:
        return "a view, WITH query or subquery in FROM could not be merged into the view: not supported yet"
    body = sub.this
    if isinstance(body, exp.Union):
        what = f"is a {body.key.upper()}"
    elif body.args.get("group") or any(isinstance(n, exp.AggFunc) for i in body.expressions for n in i.walk()):
        what = "aggregates"
    elif body.args.get("distinct"):
        what = "uses DISTINCT"
    elif body.args.get("limit") or body.args.get("offset"):
        what = "uses LIMIT or OFFSET"
    elif body.find(exp.Window):
        what = "uses a window function"
    elif body.args.get("locks"):
        what = "locks rows (FOR UPDATE/SHARE)"
    else:
        what = "joins or computes outputs where an outer join NULL-extends it"
    return (f"view, WITH query or subquery {sub.alias} {what}: not supported yet (those that join, filter and "
            "rename are merged into the view)")


def _quoted_name(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _stand_in(table: exp.Table, stand_ins: dict[str, tuple[exp.Identifier, exp.Identifier]]) -> str:
    """A schema-qualified table renamed to a name of one part, the same for each mention of it,
    under its own name as alias if it had none (``sales.orders`` is ``orders`` in the query)."""
    if table.args.get("catalog"):
        raise UnsupportedQuery(f"cross-database reference {table.sql(dialect=DIALECT)} is not supported")
    db, written = table.args["db"], table.this
    key = (db.name, written.name)
    name = next((n for n, (d, w) in stand_ins.items() if (d.name, w.name) == key), None) or f"pgivm_qualified_{len(stand_ins) + 1}"
    stand_ins[name] = (db.copy(), written.copy())
    if not table.alias:
        table.set("alias", exp.TableAlias(this=written.copy()))
    table.set("db", None)
    table.set("this", exp.to_identifier(name))
    return name


_KEEPS_ROWS = ("group", "having", "distinct", "limit", "offset", "qualify", "windows", "with", "with_", "locks")


def _filters_into_on(select: exp.Select) -> None:
    """The WHERE of each subquery joined with ON (by an inner or a LEFT join, or CROSS JOIN) put in
    that ON, in terms of the subquery's outputs, where it holds exactly as inside; else sqlglot's
    merge moves it to the outer WHERE, which removes the NULL-extended rows of an outer join around
    the subquery (``r LEFT JOIN (s JOIN (SELECT ... WHERE w) x ON ...) ON ...``). First in FROM
    before a RIGHT or FULL JOIN, or first in a parenthesized join, it goes to the first join's ON if
    that join is inner or RIGHT. Refused in one line where it cannot be kept exactly (a FULL JOIN's
    side, USING, a subquery in the WHERE, first before a LEFT or FULL JOIN in parentheses)."""
    joins = list(select.args.get("joins") or [])
    outer = any((j.side or "").upper() in ("RIGHT", "FULL") for j in joins)  # may NULL-extend what comes first
    from_ = select.args.get("from_") or select.args.get("from")
    if outer and from_ is not None and _filtering(from_.this) and _keeps_on(joins[0], "RIGHT") and \
            not from_.this.this.args["where"].find(exp.Query):
        _move_where(from_.this, joins[0])  # FROM x RIGHT JOIN r ON ...: x's WHERE holds in the first ON
    for join in list(select.find_all(exp.Join)):
        sub = join.this
        if join.parent_select is not select or not _filtering(sub):
            continue
        nested = join.find_ancestor(exp.Subquery, exp.Select) is not select  # inside a parenthesized join
        moved = _keeps_on(join, "LEFT") and not sub.this.args["where"].find(exp.Query)
        if moved:
            _move_where(sub, join)
        if not moved and (nested or outer or (join.side or "").upper() == "LEFT"):
            raise UnsupportedQuery(f"subquery or view {sub.alias} filters (WHERE) on a side of a join where its "
                                   "condition cannot be kept exactly: join it with an inner or LEFT JOIN ... ON")
    for sub in select.find_all(exp.Subquery):  # the first of a parenthesized join: as first in FROM above
        if sub.parent_select is select and sub.args.get("joins") and _filtering(sub):
            first = sub.args["joins"][0]
            if not _keeps_on(first, "RIGHT") or sub.this.args["where"].find(exp.Query):
                raise UnsupportedQuery(f"subquery or view {sub.alias} filters (WHERE) first in a parenthesized join "
                                       "whose first join may NULL-extend it: write it on the right of the join")
            _move_where(sub, first)


def _outputs(body: exp.Select) -> dict[str, exp.Expression]:
    """A subquery's outputs by name, each the expression it selects (renaming a table in the body
    renames it in these, the same nodes)."""
    return {i.alias_or_name: (i.this if isinstance(i, exp.Alias) else i) for i in body.expressions}


def _joining_subqueries_as_parentheses(select: exp.Select) -> None:
    """A subquery on the right of a join that only joins and renames, ``r JOIN (SELECT s.b AS k, t.d
    FROM s JOIN t ON ...) AS x ON x.k = r.b``, merged as the parenthesized join it reads, ``r JOIN
    (s JOIN t ON ...) ON s.b = r.b`` (sqlglot's merge leaves a subquery with joins alone there); its
    outputs are NULL where an outer join NULL-extends it (``_check_null_extended_outputs``). Its
    tables keep their names, but one an outer table also has (renamed, ``s_2``)."""
    for join in list(select.args.get("joins") or []):
        sub = join.this
        if not (isinstance(sub, exp.Subquery) and sub.alias and isinstance(sub.this, exp.Select)):
            continue
        body = sub.this
        from_ = body.args.get("from_") or body.args.get("from")
        inner = list(body.args.get("joins") or [])
        if not inner or from_ is None or getattr(from_, "expressions", None) or body.args.get("where") or \
                any(body.args.get(a) for a in _KEEPS_ROWS) or join.args.get("using") or join.args.get("method") or \
                not all(isinstance(s, exp.Table) or is_join_tree(s) for s in (from_.this, *(j.this for j in inner))):
            continue
        outputs = _outputs(body)
        if any(isinstance(n, (exp.AggFunc, exp.Window, exp.Query)) for o in outputs.values() for n in o.walk()):
            continue
        reads = [c for c in select.find_all(exp.Column) if c.table == sub.alias and not _inside(c, sub)]
        if any(c.name not in outputs for c in reads) or any(isinstance(s, exp.Star) for s in body.expressions):
            continue  # a column qualify could not place: the refusal below names the subquery
        outside = [t for t in select.find_all(exp.Table) if not _inside(t, sub)]
        if any(t.alias_or_name == sub.alias for t in outside):
            continue  # a nested query's own table of that name: its columns are not the subquery's
        clashing = {t.alias_or_name for t in outside}
        taken = {t.alias_or_name for t in select.find_all(exp.Table)}  # a fresh name is none of the query's
        for table in [t for t in body.find_all(exp.Table) if t.alias_or_name in clashing and t.parent_select is body]:
            old = table.alias_or_name
            fresh = next(f"{old}_{n}" for n in range(2, len(taken) + 3) if f"{old}_{n}" not in taken)
            taken.add(fresh)
            for column in body.find_all(exp.Column):
                if column.table == old and _names_in(column, old, body) is table:
                    column.set("table", exp.to_identifier(fresh))
            table.set("alias", exp.TableAlias(this=exp.to_identifier(fresh)))
        for column in reads:
            column.replace(outputs[column.name].copy())
        first = from_.this
        first.set("joins", inner)
        join.set("this", exp.Subquery(this=first))


# What may be other than NULL when the columns it reads are (PostgreSQL's functions and operators
# are strict but for these; scalar.FUNCTIONS lists the functions a view may call at all): computed
# on a NULL-extended row, such a value would not be NULL there
_NOT_STRICT = (exp.Case, exp.If, exp.Is, exp.And, exp.Or, exp.Concat, exp.ConcatWs, exp.NullSafeEQ, exp.NullSafeNEQ,
               exp.Array, exp.Tuple, exp.Subquery, exp.Exists, exp.Nullif)
_NULL_IF_ALL = (exp.Coalesce, exp.Greatest, exp.Least)  # NULL when every argument is


def _null_on_null(value: exp.Expression) -> bool:
    """Whether ``value`` is NULL on a row whose columns are all NULL: a column; a strict function or
    operator of such a value; coalesce, greatest or least of such values only (the merged column of
    ``JOIN ... USING (k)`` is ``coalesce(a.k, b.k)``)."""
    if isinstance(value, exp.Column):
        return True
    if isinstance(value, exp.Paren):
        return _null_on_null(value.this)
    if isinstance(value, _NULL_IF_ALL):
        return all(_null_on_null(a) for a in [value.this, *value.expressions])
    if isinstance(value, _NOT_STRICT) or isinstance(value, exp.DataType):
        return False
    return any(_null_on_null(a) for a in value.iter_expressions())


def _check_null_extended_outputs(select: exp.Select) -> None:
    """Refuse a subquery output that the query reads where an outer join may NULL-extend the
    subquery, unless it is NULL on a NULL-extended row as PostgreSQL makes it: merged, ``coalesce(t.d,
    0) AS k`` or ``42 AS k`` would be computed on the NULL-extended row (0, 42) where x.k is NULL. A
    source is NULL-extended on the right of a LEFT or FULL join and before a RIGHT or FULL join, in
    FROM or inside parentheses that are."""
    for sub in _null_extended_sources(select):
        if not (isinstance(sub, exp.Subquery) and sub.alias and isinstance(sub.this, exp.Select)):
            continue
        outputs = _outputs(sub.this)
        for column in select.find_all(exp.Column):
            value = outputs.get(column.name) if column.table == sub.alias and not _inside(column, sub) else None
            if value is not None and not _null_on_null(value):
                raise UnsupportedQuery(f"subquery {sub.alias} computes {column.name} ({value.sql(dialect=DIALECT)}) where an "
                                       "outer join NULL-extends it: not supported yet (compute it in the outer query)")


def _null_extended_sources(select: exp.Select) -> list[exp.Expression]:
    """The sources of the query's FROM, inside parenthesized joins too, that an outer join may
    NULL-extend."""
    out: list[exp.Expression] = []

    def walk(first: exp.Expression, joins: list[exp.Join], extended: bool) -> None:
        sources = [first, *(j.this for j in joins)]
        flags = [extended] * len(sources)
        for q, join in enumerate(joins, start=1):
            side = (join.side or "").upper()
            if side in ("LEFT", "FULL"):
                flags[q] = True
            if side in ("RIGHT", "FULL"):
                flags[:q] = [True] * q
        for source, flag in zip(sources, flags):
            inner = source.this if isinstance(source, exp.Subquery) and not source.alias else None
            if inner is not None and inner.args.get("joins"):  # parentheses: (a JOIN b ...), the first holding the joins
                walk(inner, list(inner.args["joins"]), flag)
            elif flag:
                out.append(source)

    from_ = select.args.get("from_") or select.args.get("from")
    if from_ is not None:  # a first source may hold the joins after it (a subquery first in parentheses, unmerged)
        walk(from_.this, list(from_.this.args.get("joins") or []) + list(select.args.get("joins") or []), False)
    return out


def _names_in(column: exp.Column, alias: str, top: exp.Select) -> exp.Table | None:
    """The table ``alias`` names where ``column`` is read: that of the innermost query from the
    column's up to ``top`` that has a table so named (a subquery's own hides the outer one)."""
    scope = column.parent_select
    while scope is not None:
        own = next((t for t in scope.find_all(exp.Table) if t.parent_select is scope and t.alias_or_name == alias), None)
        if own is not None or scope is top:
            return own
        scope = scope.parent.parent_select if scope.parent is not None else None
    return None


def _keeps_on(join: exp.Join, side: str) -> bool:
    """Whether a condition on one side of ``join`` holds in its ON as in WHERE on that side's rows:
    an inner join's either side, or the NULL-extended side (``side``) of an outer one."""
    kind = (join.kind or "").upper()
    return (join.side or "").upper() in ("", side) and not join.args.get("method") and \
        (join.args.get("on") is not None and kind in ("", "INNER", "OUTER") or kind == "CROSS")


def _move_where(sub: exp.Subquery, join: exp.Join) -> None:
    condition = _in_outputs(sub, sub.this.args["where"].this)
    sub.this.set("where", None)
    if (join.kind or "").upper() == "CROSS":
        join.set("kind", None)
    join.set("on", exp.and_(join.args["on"], condition) if join.args.get("on") is not None else condition)


def _filtering(node: exp.Expression) -> bool:
    """A subquery in FROM that only joins, filters and renames, with a WHERE."""
    if not (isinstance(node, exp.Subquery) and node.alias and isinstance(node.this, exp.Select)):
        return False
    body = node.this
    return body.args.get("where") is not None and not any(body.args.get(a) for a in _KEEPS_ROWS) and \
        not any(isinstance(n, (exp.AggFunc, exp.Window, exp.Query)) for i in body.expressions for n in i.walk())


def _in_outputs(sub: exp.Subquery, condition: exp.Expression) -> exp.Expression:
    """``condition`` of the subquery's columns as one of its outputs (each column it reads added as
    an output if none is that column): text the outer query may hold."""
    body = sub.this
    named = {i.this: i.alias for i in body.expressions if isinstance(i, exp.Alias) and isinstance(i.this, exp.Column)}
    taken = {i.alias_or_name for i in body.expressions}
    condition = condition.copy()
    for column in list(condition.find_all(exp.Column)):
        name = named.get(column)
        if name is None:
            name = next(f"pgivm_w{n}" for n in range(1, len(taken) + 2) if f"pgivm_w{n}" not in taken)
            body.select(exp.alias_(column.copy(), name), copy=False)
            named[column.copy()] = name
            taken.add(name)
        column.replace(exp.column(name, table=sub.alias))
    return condition


def _semi_joins(select: exp.Select) -> None:
    """A subquery in FROM that keeps one row per key (``SELECT DISTINCT k ...``, or ``... GROUP BY k``
    with no HAVING), over one table, joined to the other tables by an equality on each of its keys
    and read for nothing else, as an EXISTS test: a row of the others meets at most one of its rows,
    and one exactly when a row of its table has that key (``FROM a, (SELECT DISTINCT i FROM b) x
    WHERE a.i = x.i`` is ``FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.i = a.i)``). Only in a query
    of inner joins (their ON conditions then hold as WHERE does)."""
    from_ = select.args.get("from_") or select.args.get("from")
    joins = list(select.args.get("joins") or [])
    if from_ is None or any(j.side or j.args.get("using") or (j.kind or "").upper() not in ("", "INNER", "CROSS")
                            or is_join_tree(j.this) for j in joins):
        return
    sources = [from_.this, *(j.this for j in joins)]
    conditions = [*and_terms(select.args["where"].this if select.args.get("where") else None),
                  *(c for j in joins for c in and_terms(j.args.get("on")))]
    kept, tests = list(sources), []
    for source in sources:
        keys = _one_row_per_key(source)
        if keys is None or len(sources) < 2:
            continue
        alias = source.alias
        equated: dict[str, exp.Column] = {}
        for condition in conditions:
            if isinstance(condition, exp.EQ):
                sides = [condition.this, condition.expression]
                for mine, other in (sides, sides[::-1]):
                    if isinstance(mine, exp.Column) and mine.table == alias and mine.name in keys and \
                            isinstance(other, exp.Column) and other.table and other.table != alias:
                        equated.setdefault(mine.name, other)
        reads = [c for c in select.find_all(exp.Column) if c.table == alias and not _inside(c, source)]
        if set(equated) != set(keys) or any(c.name not in keys for c in reads):
            continue
        joining = [c for c in conditions if isinstance(c, exp.EQ) and any(
            isinstance(side, exp.Column) and side.table == alias for side in (c.this, c.expression))]
        conditions = [c for c in conditions if not any(c is j for j in joining)]
        body = source.this
        table = (body.args.get("from_") or body.args.get("from")).this
        taken = {s.alias_or_name for s in sources}
        fresh = next(f"{table.alias_or_name}_{n}" for n in range(1, len(taken) + 2)
                     if f"{table.alias_or_name}_{n}" not in taken)  # no outer table's name: its columns correlate

        def renamed(node: exp.Expression) -> exp.Expression:
            node = node.copy()
            for column in node.find_all(exp.Column):
                if column.table == table.alias_or_name:
                    column.set("table", exp.to_identifier(fresh))
            return node

        matches = [exp.EQ(this=renamed(keys[k]), expression=equated[k].copy()) for k in sorted(keys)]
        where = [renamed(w) for w in and_terms(body.args["where"].this if body.args.get("where") else None)]
        scan = exp.Table(this=table.this.copy(), alias=exp.TableAlias(this=exp.to_identifier(fresh)))
        tests.append(exp.Exists(this=exp.select("1").from_(scan).where(*where, *matches)))
        for column in reads:  # what the rest of the query reads of it is the column it equals
            if not any(_inside(column, j) for j in joining):
                column.replace(equated[column.name].copy())
        kept.remove(source)
    if not tests:
        return
    from_.set("this", kept[0])
    select.set("joins", [exp.Join(this=s) for s in kept[1:]] or None)  # commas: every ON is in WHERE now
    terms = [*conditions, *tests]
    select.set("where", exp.Where(this=exp.and_(*terms)) if terms else None)


def _one_row_per_key(source: exp.Expression) -> dict[str, exp.Expression] | None:
    """A FROM subquery over one table that keeps one row per key: its keys (output name -> the
    inner column), or None."""
    if not (isinstance(source, exp.Subquery) and source.alias and isinstance(source.this, exp.Select)):
        return None
    body = source.this
    inner = body.args.get("from_") or body.args.get("from")
    if inner is None or not isinstance(inner.this, exp.Table) or body.args.get("joins") or \
            any(body.args.get(a) for a in ("having", "limit", "offset", "order", "with", "with_")) or body.find(exp.Window):
        return None
    items = {(i.alias if isinstance(i, exp.Alias) else i.name): (i.this if isinstance(i, exp.Alias) else i)
             for i in body.expressions}
    distinct = body.args.get("distinct")
    if distinct is not None and not distinct.args.get("on") and not body.args.get("group"):
        return items if all(isinstance(v, exp.Column) for v in items.values()) else None
    group = body.args.get("group")
    if group is None or distinct is not None:
        return None
    grouped = [g for g in group.expressions]
    keys = {name: v for name, v in items.items() if isinstance(v, exp.Column) and any(v == g for g in grouped)}
    return keys if len(keys) == len(grouped) and all(isinstance(g, exp.Column) for g in grouped) else None


def name_columns(sql: str, columns: list[str]) -> str | None:
    """The query with its first SELECT items named ``columns``, as ``CREATE VIEW v (a, b) AS``
    names a view's columns (the rest keep their names); None over ``SELECT *``, whose columns are
    named once parsed (``renamed_outputs``)."""
    if len(set(columns)) < len(columns):
        raise UnsupportedQuery("a column name is given twice in the column list")
    select = _select_of(sql)
    if select is None:
        return sql
    items = select.expressions
    if any(isinstance(i, exp.Star) or isinstance(i, exp.Column) and isinstance(i.this, exp.Star) for i in items):
        return None
    if len(columns) > len(items):
        raise UnsupportedQuery(f"{len(columns)} column names for a view of {len(items)} columns")
    for item, name in zip(list(items), columns):
        item.replace(exp.alias_(item.this.copy() if isinstance(item, exp.Alias) else item.copy(), name, quoted=True))
    return select.sql(dialect=DIALECT)


def renamed_outputs(query: ConjunctiveQuery, columns: list[str]) -> ConjunctiveQuery:
    """A parsed ``SELECT *`` (a listing of columns) with its first columns named ``columns``."""
    if query.projection is not None or query.having is not None or not query.is_listing:
        raise UnsupportedQuery("a column list over SELECT * names a listing's columns: write the items out")
    if len(columns) > len(query.outputs):
        raise UnsupportedQuery(f"{len(columns)} column names for a view of {len(query.outputs)} columns")
    outputs = tuple(replace(o, name=n) for o, n in zip(query.outputs, columns)) + query.outputs[len(columns):]
    return replace(query, outputs=outputs)


def _is_cte(select: exp.Select, name: str) -> bool:
    """Whether ``name`` is a WITH query's, at any level (a subquery may have a WITH of its own)."""
    return any(cte.alias == name for with_ in select.find_all(exp.With) for cte in with_.expressions)
