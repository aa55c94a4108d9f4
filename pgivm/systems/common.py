"""What every strategy shares: the state schema's names, template rendering, the row triggers that
feed per-relation ``apply_<k>`` functions, the user-facing view, dropping, reading state back, and
running invariant checks. Strategies differ in the state they keep and how ``apply_<k>`` works.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from pgivm import capture
from pgivm.errors import UnsupportedQuery
from pgivm.query.analysis import shapes
from pgivm.query import scalar, scalar_subqueries
from pgivm.query.cq import Aggregate, Computed, ConjunctiveQuery, GroupColumn, computed_in
from pgivm.capture import BATCH_THRESHOLD as BATCH_THRESHOLD  # noqa: PLC0414  # the CLI shows it
from pgivm.query.model import Atom, TableRef, TriangleCount
from pgivm.query.resolve import BaseTable, ResolvedView


def state_schema_for(view_name: str) -> str:
    return f"pgivm_{view_name}"


@cache  # files of the installed package, read at every create, verify and upgrade
def template(package: str, name: str) -> str:
    """The text of a SQL template of a package (a system's, ``pgivm.capture``, ``pgivm.deferred``):
    the repository's top-level ``sql/<last part of its name>/``, shipped as ``pgivm.sql``."""
    return files("pgivm.sql").joinpath(package.rsplit(".", 1)[-1], name).read_text()


def render(package: str, name: str, params: dict[str, sql.Composable]) -> sql.Composed:
    return sql.SQL(template(package, name)).format(**params)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Names:
    """Every object of one view's state, schema-qualified and quoted."""

    schema: str

    def __call__(self, name: str) -> sql.Identifier:
        return sql.Identifier(self.schema, name)

    @property
    def schema_id(self) -> sql.Identifier:
        return sql.Identifier(self.schema)

    @classmethod
    def of(cls, view_name: str) -> Names:
        return cls(state_schema_for(view_name))




def count_query(view: ResolvedView, tables: dict[TableRef, sql.Composable] | None = None) -> sql.Composed:
    """The view's count as SQL built from the model, every identifier quoted (no user text): over
    the base tables pinned by oid as they are named now, or over ``tables`` (placeholders).
    Each table's ``tableoid`` guard makes the query fail to parse if a name ever led to a view."""
    view = triangle_view(view)
    r, s, t = view.query.atoms

    def col(alias: str, column: str) -> sql.Composable:
        return sql.SQL("{}.{}").format(sql.Identifier(alias), sql.Identifier(column))

    def source(atom: Atom) -> sql.Composable:
        return tables[atom.table] if tables is not None else view.base_of(atom.table).ident

    return sql.SQL(
        "SELECT count(*) FROM {rt} AS r JOIN {st} AS s ON {rb} = {sb} JOIN {tt} AS t ON {sc} = {tc} AND {ta} = {ra} "
        "WHERE {rg} AND {sg} AND {tg}"
    ).format(
        rt=source(r), st=source(s), tt=source(t),
        rb=col("r", r.second), sb=col("s", s.first), sc=col("s", s.second), tc=col("t", t.first),
        ta=col("t", t.second), ra=col("r", r.first),
        rg=view.base_of(r.table).guard("r"), sg=view.base_of(s.table).guard("s"), tg=view.base_of(t.table).guard("t"),
    )


def capture_functions_plan(
    names: Names, view: ResolvedView, name: str, table: TableRef, strategy: str, batch_threshold: int | None = None,
    sink: str = "apply", atoms: list[capture.CaptureAtom] | None = None, letters: str | None = None,
    always_batch: bool = False, then: sql.Composable | None = None,
) -> sql.Composed:
    """The trigger functions of ``table``: take the view's lock per statement, hand each statement's
    net change of every relation the table feeds (R, S, T order, or the atoms given) to the sink,
    and TRUNCATE. ``always_batch``: every statement goes set at a time (``apply_batch_K``);
    ``then``: what applies the queued changes instead (see ``capture.apply_block``)."""
    if atoms is None:
        atoms = [capture.triangle_atom(view, a) for a in view.query.atoms_of(table)]
    if letters is None:
        letters = capture.letters_of(view, table)
    qualified = view.qualified(table)
    described = f"{qualified} as {', '.join(a.name.upper() for a in atoms)}"
    threshold: int | None = capture.BATCH_THRESHOLD if batch_threshold is None else batch_threshold
    if always_batch:
        threshold = None

    def block(event: str) -> sql.Composable:
        if sink == "log":
            return capture.log_block(atoms, event, names)
        return capture.apply_block(atoms, event, threshold, names, then)

    params: dict[str, sql.Composable] = {
        "state": names("state"),
        "restart": names("restart"),
        "view_literal": sql.Literal(name),
        "on_change": names(f"on_change_{letters}"),
        "on_truncate": names(f"on_truncate_{letters}"),
        "on_truncate_rows": names(f"on_truncate_rows_{letters}"),
        "apply_insert": block("insert"),
        "apply_delete": block("delete"),
        "apply_update": block("update"),
        "clear": sql.SQL("\n").join(sql.SQL("    PERFORM {}();").format(names(f"clear_{a.name}")) for a in atoms),
        "truncate_rows": capture.truncate_rows_block(atoms, names, sink, counted=then is not None),
        # first-order: the statement counted out in the same update (its BEFORE trigger counted it in)
        "close": sql.SQL(", statements_open = statements_open - 1" if then is not None else ""),
        "still_open": sql.SQL(", statements_open" if then is not None else ""),
        "into_open": sql.SQL(", still_open" if then is not None else ""),
        "on_change_comment": sql.Literal(f"pgivm view {name}: {'log' if sink == 'log' else 'maintain'} the {strategy} "
                                         f"state for changes of {described}"),
        "on_truncate_comment": sql.Literal(f"pgivm view {name}: clear the {strategy} state of {described} after TRUNCATE"),
        "on_truncate_rows_comment": sql.Literal(
            f"pgivm view {name}: before TRUNCATE of {qualified} or a partition of it, take its rows away as a deletion"),
    }
    functions = render("pgivm.capture", "capture_functions.sql", params)
    if sink == "log":
        return functions
    return sql.Composed([functions, sql.SQL("\n"), render("pgivm.capture", "capture_truncate_clear.sql", params)])


def capture_functions_all(names: Names, view: ResolvedView, name: str, strategy: str,
                          batch_threshold: int | None = None) -> list[sql.Composable]:
    """The capture trigger functions of every base table (the functions phase)."""
    view = triangle_view(view)
    return [capture_functions_plan(names, view, name, table, strategy, batch_threshold) for table in view.query.tables]


def capture_triggers_all(view: ResolvedView, name: str, triggers_of: Any) -> list[sql.Composable]:
    """The capture triggers on every base table and its partitions (the capture phase)."""
    plan: list[sql.Composable] = []
    for table in view.query.tables:
        plan += capture.triggers_on(view.base_of(table), triggers_of(view, name, table))
    return plan


def triangle_capture_atoms(view: ResolvedView, name: str, params: dict[str, Any]) -> dict[TableRef, list[capture.CaptureAtom]]:
    """The relations R, S, T each base table feeds, as the capture layer hands them over."""
    view = triangle_view(view)
    return {table: [capture.triangle_atom(view, a) for a in view.query.atoms_of(table)] for table in view.query.tables}


def capture_triggers(view: ResolvedView, name: str, table: TableRef) -> list[capture.CaptureTrigger]:
    view = triangle_view(view)
    return capture.view_triggers(name, state_schema_for(name), capture.letters_of(view, table))


def expose_plan(names: Names, query: TriangleCount, name: str, view_schema: str, strategy: str) -> list[sql.Composable]:
    """What users see: the view over the result, and no right on the state for anyone else."""
    return [user_view_plan(names, query, name, view_schema, strategy), revoke_plan(names)]


def user_view_plan(names: Names, query: TriangleCount, name: str, view_schema: str, strategy: str) -> sql.Composable:
    # sum(1) over an empty join is NULL where count(*) is 0: answer exactly as the SQL would.
    value = sql.SQL("count") if query.aggregate == "count" else sql.SQL("NULLIF(count, 0)")
    return sql.SQL(
        "CREATE OR REPLACE VIEW {view} AS SELECT {value} AS {output} FROM {result}; COMMENT ON VIEW {view} IS {comment}"
    ).format(
        view=sql.Identifier(view_schema, name),
        value=value,
        output=sql.Identifier(query.output_name),
        result=names("result"),
        comment=sql.Literal(f"pgivm: maintained by {strategy}, state in schema {names.schema}. Definition: {query.sql}"),
    )


def analyze_plan(names: Names, tables: list[str]) -> sql.Composable:
    """Statistics for the freshly built state, so the planner sizes joins right from the start
    (the batch path especially); autovacuum keeps them current afterwards."""
    return sql.SQL("; ").join(sql.SQL("ANALYZE {}").format(names(t)) for t in tables)


def revoke_plan(names: Names) -> sql.Composable:
    """Users read the view; nobody but the owner (and the SECURITY DEFINER triggers) writes the state."""
    return sql.SQL(
        "REVOKE ALL ON ALL TABLES IN SCHEMA {s} FROM PUBLIC; REVOKE ALL ON ALL FUNCTIONS IN SCHEMA {s} FROM PUBLIC"
    ).format(s=names.schema_id)




def no_op_trigger_function(function: tuple[str, str], view: str) -> sql.Composable:
    """A capture trigger function replaced by one that does nothing: the first step of ``drop``."""
    return sql.SQL(
        "CREATE OR REPLACE FUNCTION {f}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp "
        "AS $pgivm$ BEGIN RETURN NULL; END; $pgivm$; COMMENT ON FUNCTION {f}() IS {comment}"
    ).format(f=sql.Identifier(*function), comment=sql.Literal(f"pgivm view {view} is being dropped: maintenance stopped"))


def drop_functions(schema: str) -> sql.Composable:
    """DROP every function of a state schema, and the triggers on its tables that call them
    (``upgrade`` then creates them from the templates)."""
    return sql.SQL(
        "DO $pgivm$ DECLARE f record; BEGIN "
        "FOR f IN SELECT tg.tgname, tg.tgrelid::pg_catalog.regclass AS rel FROM pg_catalog.pg_trigger tg "
        "JOIN pg_catalog.pg_class c ON c.oid = tg.tgrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = {schema} AND NOT tg.tgisinternal LOOP "
        "EXECUTE pg_catalog.format('DROP TRIGGER %I ON %s', f.tgname, f.rel); END LOOP; "
        "FOR f IN SELECT p.oid::pg_catalog.regprocedure AS fn FROM pg_catalog.pg_proc p "
        "JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = {schema} LOOP "
        "EXECUTE pg_catalog.format('DROP FUNCTION %s', f.fn); END LOOP; END $pgivm$"
    ).format(schema=sql.Literal(schema))


def state_logged(schema: str) -> sql.Composable:
    """Make every unlogged table of a state schema logged (versions before 2 had unlogged scratch
    tables, which a crash in the transaction that created them can leave PostgreSQL unable to
    restart with)."""
    return sql.SQL(
        "DO $pgivm$ DECLARE t record; BEGIN "
        "FOR t IN SELECT c.oid::pg_catalog.regclass AS rel FROM pg_catalog.pg_class c "
        "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = {schema} AND c.relkind = 'r' AND c.relpersistence = 'u' LOOP "
        "EXECUTE pg_catalog.format('ALTER TABLE %s SET LOGGED', t.rel); END LOOP; END $pgivm$"
    ).format(schema=sql.Literal(schema))


def read_state(conn: psycopg.Connection, name: str) -> dict[str, Any]:
    """The one row of ``state`` (without its key) and the count."""
    names = Names.of(name)
    with conn.cursor(row_factory=dict_row) as cur:
        # Not prepared: each system's state row has its own columns, and a view of the same name can
        # be dropped and created again under another system in the same session.
        state = cur.execute(sql.SQL("SELECT * FROM {}").format(names("state")), prepare=False).fetchone()
        result = cur.execute(sql.SQL("SELECT count FROM {}").format(names("result"))).fetchone()
    assert state is not None and result is not None
    info = dict(state)
    info.pop("singleton", None)
    info["count"] = result["count"]
    return info




def table_sizes(conn: psycopg.Connection, name: str) -> list[dict[str, Any]]:
    """Rows and bytes (with indexes) of every table of the view's state schema."""
    names = Names.of(name)
    tables = []
    for table, size in conn.execute(
        """
        SELECT c.relname, pg_total_relation_size(c.oid)
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = %s AND c.relkind = 'r'
         ORDER BY c.relname
        """,
        [names.schema],
    ).fetchall():
        rows = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(names(table))).fetchone()
        tables.append({"table": table, "rows": rows[0] if rows else 0, "bytes": size})
    return tables


@dataclass(frozen=True)
class CheckFailure:
    check: str
    rows: list[tuple[Any, ...]]
    columns: tuple[str, ...] = ()  # the names of a row's values after its first (the side, for a view's rows)

    def __str__(self) -> str:
        return f"{self.check}: " + "; ".join(str(row) for row in self.rows[:3])


def collation_failures(conn: psycopg.Connection, view: sql.Identifier, resolved: ResolvedView) -> list[CheckFailure]:
    """The user view's columns whose collation is not the one PostgreSQL's evaluation of the query
    gives them (``ResolvedView.output_collations``: a view made before pgivm kept them, say)."""
    if not resolved.output_collations:
        return []
    shown = dict(conn.execute("SELECT a.attname::text, a.attcollation::pg_catalog.regcollation::text FROM pg_catalog.pg_attribute a "
                              "WHERE a.attrelid = %s::pg_catalog.regclass AND a.attnum > 0 AND NOT a.attisdropped",
                              [view.as_string(conn)]).fetchall())
    wrong = [(column, shown[column], collation) for column, collation in resolved.output_collations.items()
             if column in shown and shown[column] != collation]
    return [CheckFailure("columns_in_the_query_collations", wrong, ("shown", "the query's (pgivm upgrade NAME --rebuild)"))] \
        if wrong else []


def checks(package: str, name: str, params: dict[str, sql.Composable]) -> list[tuple[str, sql.Composed]]:
    """Split a check template into (name, query) pairs at its ``-- check: name: ...`` headers."""
    found = []
    for block in template(package, name).split("-- check: ")[1:]:
        header, _, body = block.partition("\n")
        found.append((header.split(":")[0].strip(), sql.SQL(body).format(**params)))  # type: ignore[arg-type]
    return found


def _without_comment_lines(text: str) -> str:
    """The text without its lines that are whole ``--`` comments (a check's explanation, which may
    hold a semicolon)."""
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))


def run_checks(conn: psycopg.Connection, named_queries: list[tuple[str, sql.Composed]]) -> list[CheckFailure]:
    """Each check that returns rows, with them. One statement asks which checks return any (a
    check is a query of what is wrong: EXISTS stops at its first row), then each failing check
    runs alone for its rows: one round trip and one plan when all hold, as they do."""
    texts = [query.as_string(conn).strip().rstrip(";") for _, query in named_queries]
    # a text still holding a semicolon outside its comment lines (two statements) runs alone; the
    # probe's text is the same every time, so a session verifying again reuses its plan
    alone = {i for i, text in enumerate(texts) if ";" in _without_comment_lines(text)}
    probes = [sql.Composed([sql.SQL("SELECT "), sql.Literal(i), sql.SQL(" AS i WHERE EXISTS (\n"), sql.SQL(text),
                            sql.SQL("\n)")]) for i, text in enumerate(texts) if i not in alone]
    failing = {row[0] for row in conn.execute(sql.SQL("\nUNION ALL\n").join(probes), prepare=True).fetchall()} \
        if probes else set()
    failing |= alone
    failures = []
    for i, (check, query) in enumerate(named_queries):
        rows = conn.execute(query).fetchall() if i in failing else []
        if rows:
            failures.append(CheckFailure(check, rows))
    return failures


# --- which queries the triangle systems accept -----------------------------------------------------


def shape_of(cq: ConjunctiveQuery) -> str:
    """The join's shape in a few words, for refusals: "cyclic join (a 4-cycle)", "acyclic join (a path
    of 3 tables)", ..."""
    if len(cq.atoms) == 1:
        return "a single table"
    found = cq.analysis
    if not found.acyclic:
        return f"cyclic join (a {found.cycle}-cycle)" if found.cycle else "cyclic join"
    for kind, size in (("path", found.path), ("star", found.star)):
        if size:
            return f"acyclic join (a {kind} of {size} tables)"
    return "acyclic join"


def outer_join_reason(cq: ConjunctiveQuery) -> str | None:
    """Why a system of inner joins refuses the query: it has an outer join (first-order and
    recompute maintain those). One text for every such system, so a refusal says it once."""
    step = next((s for s in cq.joins if s.kind != "inner"), None)
    if step is None:
        return None
    if cq.union_branches:  # read as LEFT JOINs of its branches (pgivm.query.union): say what was written
        return "UNION [ALL]: maintained by first-order and recompute"
    if step.tests:
        return (f"{'NOT EXISTS or NOT IN' if step.kind == 'anti' else 'EXISTS or IN'} over {step.alias}: semi- and "
                "anti-joins are maintained by first-order and recompute")
    subquery = _scalar_subquery(cq, step.alias)
    if subquery is not None:  # pgivm.query.scalar_subqueries LEFT JOINs one whose value is not NULL over no rows
        return (f"correlated scalar subquery ({subquery}) has a value over no rows (a count's 0, or a coalesce): it is "
                "read through a LEFT JOIN, which first-order and recompute maintain")
    return f"{step.kind.upper()} JOIN {step.alias}: outer joins are maintained by first-order and recompute"


def _scalar_subquery(cq: ConjunctiveQuery, alias: str) -> str | None:
    """The scalar subquery joined as ``alias`` (a derived table of its values), as written; else None."""
    derived = {d.table: d for d in cq.derived}
    atom = next((a for a in cq.atoms if a.alias == alias and a.table in derived), None)
    if atom is None or scalar_subqueries.VALUE not in derived[atom.table].columns:
        return None
    return scalar_subqueries.as_written(derived[atom.table].select)


def across_tables_reason(cq: ConjunctiveQuery) -> str | None:
    """Why a system that filters each table's rows alone refuses a condition over two tables, the
    first such condition as the user wrote it: the value of a scalar subquery, which
    ``pgivm.query.scalar_subqueries`` joins as a derived table, is shown as that subquery."""
    if not cq.across_tables:
        return None
    condition = cq.across_tables[0]
    for atom in cq.atoms:
        value = f'"{atom.alias}"."{scalar_subqueries.VALUE}"'
        subquery = _scalar_subquery(cq, atom.alias) if value in condition else None
        if subquery is not None:
            return (f"condition {condition.replace(value, f'({subquery})')} compares a value with a scalar subquery's: "
                    "only first-order, recompute and sample evaluate such conditions on the join result")
    return (f"condition {condition} compares columns of two tables: only first-order, recompute and sample "
            "evaluate such conditions on the join result")


def triangle_reason(cq: ConjunctiveQuery) -> str | None:
    """None if the query is a triangle count (what ivme, first-order and recompute maintain), else why not."""
    outer = outer_join_reason(cq)
    if outer is not None:
        return outer
    across = across_tables_reason(cq)
    if across is not None:
        return across
    try:
        shapes.as_triangle(cq)
        return None
    except UnsupportedQuery as err:
        if shapes.cycle(cq) == 3:  # a triangle join, but something else is not supported
            return err.message
        return f"{shape_of(cq)}: only the triangle count is supported ({err.message})"


def triangle_or_listing_reason(cq: ConjunctiveQuery) -> str | None:
    """None if the query is a triangle count or the triangles' listing (what ivme maintains), else why not."""
    count = triangle_reason(cq)
    if count is None or (cq.aggregates and not cq.group_by) or not shapes.triangle_join(cq):
        return count
    if outer_join_reason(cq) is not None or across_tables_reason(cq) is not None:
        return count
    try:
        shapes.as_triangle_listing(cq)
        return None
    except UnsupportedQuery as err:
        return err.message


def is_triangle_count(cq: ConjunctiveQuery) -> bool:
    """The triangle systems' one_value: a triangle count's view shows the count."""
    return triangle_reason(cq) is None


def pack_types_plan(view: ResolvedView) -> list[sql.Composable]:
    """The composite type of each packed variable of the view's shape (``model.Packed``), made in
    the state schema before any table or function that holds one: its fields typed as the query's
    variables it carries, so that its equality is theirs, field by field."""
    return [sql.SQL("CREATE TYPE {} AS ({})").format(
        sql.SQL(view.variable_types[variable]),  # type: ignore[arg-type]  # resolve.pack_type's quoted name
        sql.SQL(", ").join(sql.SQL("{} {}").format(sql.Identifier(f), sql.SQL(t)) for f, t in fields))  # type: ignore[arg-type]
        for variable, fields in view.packs.items()]


def is_triangle(view: ResolvedView) -> bool:
    """Whether the triangle systems' plan applies: the query is a triangle count, each pair of
    tables joined on one column (first-order and recompute keep one whose pairs join on several
    columns by their general plan; IVMε by its own over tuples)."""
    if isinstance(view.query, TriangleCount):
        return not view.query.packed
    return triangle_reason(view.query) is None and not view.query.analysis.triangle.packed


def triangle_view(view: ResolvedView) -> ResolvedView:
    """The view in the shape the triangle systems plan (their own, made here from the query the
    System boundary passes): atoms R, S, T over variables a, b, c. Their entry points call it, and
    calling it again changes nothing."""
    if isinstance(view.query, TriangleCount):
        return view
    assert view.query.analysis.triangle, "a triangle system got a query it does not accept"
    return view.reshaped(view.query.analysis.triangle)


def bare_atom_reason(cq: ConjunctiveQuery) -> str | None:
    """Why a system whose deltas carry each table's columns refuses a table that gives none, only
    its number of rows (``SELECT 1 FROM t``, a cross product with ``generate_series``)."""
    bare = next((a for a in cq.atoms if not a.columns), None)
    if bare is None:
        return None
    shown = bare.alias.rsplit("#", 1)[0] if cq.union_branches else bare.alias  # a branch's alias is alias#n
    where = " in a branch of UNION" if cq.union_branches else ""
    return f"{shown}{where} contributes none of its columns, only its number of rows: not yet (recompute maintains it)"


def collation_reason(view: ResolvedView) -> str | None:
    """A column whose collation is nondeterministic: the state compares and groups values by their
    bytes, where PostgreSQL's query takes 'a' = 'A' under a case-insensitive collation. Or a
    condition or expression over a column of another collation than the database's default: the
    state keeps the values in the default one, where PostgreSQL orders them (``<``) and maps their
    case (``upper``, ``ILIKE``) by the column's."""
    if view.nondeterministic:
        column, collation = view.nondeterministic[0].split(" ", 1)
        return (f"column {column} has the nondeterministic collation {collation.strip('()')}: the state compares "
                "bytes, PostgreSQL the collation (recompute takes it)")
    found = _collated_in_expression(view)
    if found is None:
        return None
    column, collation = found
    return (f"column {column} has collation {collation}: conditions and expressions over it run in the default one "
            "here: not yet (recompute takes it)")


def _collated_in_expression(view: ResolvedView) -> tuple[str, str] | None:
    """A column of a non-default collation that a condition or expression reads (equalities with
    a constant or another column excepted: a deterministic collation compares bytes), with it."""
    if not view.collations:
        return None
    cq = view.query
    if not isinstance(cq, ConjunctiveQuery):  # a shape a system made of it: its own accepts read the query
        return None
    refs: list[Any] = [f.column for f in cq.filters if f.op not in ("=", "<>")]
    refs += [side for p in cq.predicates if p.op not in ("=", "<>") for side in (p.left, p.right)]
    refs += [c for condition in (*cq.conditions, *(on for step in cq.joins for on in step.on)) for c in condition.columns]
    refs += [v.column for output in cq.outputs if isinstance(output, Aggregate)
             for computed in computed_in(output.argument) for v in computed.refs]
    refs += [v.column for computed in cq.group_computed for v in computed.refs]
    # the SELECT list's expressions and HAVING read the view's outputs: a collated one is its column's
    sources = {o.name: o.column if isinstance(o, GroupColumn) else o.argument.column for o in cq.outputs
               if o.name in view.output_collations}
    shown = [*(e for _, e in cq.projection or () if not isinstance(e, scalar.Col)), *([cq.having] if cq.having else [])]
    refs += [sources[c.column] for e in shown for c in scalar.columns(e) if c.column in sources]
    return next(((str(ref), view.collations[(ref.alias, ref.column)]) for ref in refs
                 if (ref.alias, ref.column) in view.collations), None)


def may_fail(view: ResolvedView, computed: Computed) -> str | None:
    """What of a computed value may fail on some row (``scalar.may_raise``, given the types of the
    columns it reads), named for a message, or None. A system that computes it on rows PostgreSQL's
    query never computes it on (F-IVM's leaves, a deferred view's older states) takes only a value
    that cannot fail."""
    kinds = frozenset(_kind(view.column_types[(r.column.alias, r.column.column)]) for r in computed.refs)
    node = scalar.may_raise(computed.node, kinds, lambda c: _kind(view.column_types[(c.alias, c.column)]))
    if node is None:
        return None
    if node.op in ("/", "%"):
        return f"{node.op} (by zero)"
    if node.op == "cast":
        return f"a cast to {node.name}"
    if node.op.startswith("fn:"):
        return f"{node.op[3:]}()"
    if node.op in ("+", "-", "*", "neg"):
        return f"{'-' if node.op == 'neg' else node.op} (overflow of an integer or a float)"
    return node.op.upper()


def _kind(type_name: str) -> str:
    """A column type's kind for ``scalar.may_raise``."""
    if type_name in ("smallint", "integer", "bigint"):
        return "integer"
    if type_name in ("real", "double precision"):
        return "float"
    return "numeric" if type_name.startswith("numeric") else "other"
