"""The SQL of an F-IVM view: its tables, the build, the delta propagation per atom, the user view.

Everything here is generated from the view tree (``tree.py``) and the ring (``rings.py``); every
identifier is quoted with ``sql.Identifier``. Names in the state schema:

- ``<view>``: a stored view of the tree (``leaf_<alias>``, ``at_<variable>``): its keys and the
  ring entries it keeps; a listing also has ``w_<view>`` (W@X, before X is summed away) and
  ``list_<alias>`` (the atom's rows with their multiplicities);
- ``d_<view>``, ``dw_<view>``: scratch for a delta on its way up (empty between statements);
- ``a<i>_delta``: the net change of atom i for the current statement (filled by the capture layer),
  its columns named by position (``capture.stored_name``: c1, c2, ...), never after base columns;
- ``apply_batch_a<i>()``: the delta tree of atom i (§4.3): the leaf's delta from ``a<i>_delta``,
  then each view on the path to the root joined with its stored siblings, one set-at-a-time pass
  per statement, each stored view merged with its delta (``V := V ⊎ δV``, keys whose count reaches
  0 deleted).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from psycopg import sql

from pgivm.capture import CaptureAtom, CapturedColumn, renamed_atom_columns, stored_column, stored_name
from pgivm.query.cq import ConjunctiveQuery
from pgivm.query.resolve import ResolvedView
from pgivm.systems.common import Names
from pgivm.systems.fivm import floats, order
from pgivm.systems.fivm.rings import CofactorRing, Entry, Factor, SumRing, column
from pgivm.systems.fivm.tree import View, ViewTree

Source = sql.Composable  # a table name or a parenthesized query


def q(name: str) -> sql.Identifier:
    return sql.Identifier(name)


@dataclass
class Context:
    cq: ConjunctiveQuery
    tree: ViewTree
    ring: SumRing | CofactorRing
    view: ResolvedView
    names: Names

    # --- names and types ---------------------------------------------------------------------

    def atom_name(self, alias: str) -> str:
        return f"a{[a.alias for a in self.cq.atoms].index(alias) + 1}"

    def variable_type(self, variable: str) -> str:
        return self.view.variable_types[variable]

    def nullable_key(self, variable: str) -> bool:
        """Only a GROUP BY column that joins nothing can be NULL in a key (join values never are)."""
        return variable not in self.cq.join_variables

    def table(self, view: View) -> sql.Identifier:
        return self.names(view.name)

    def w_table(self, view: View) -> sql.Identifier:
        return self.names(f"w_{view.name}")

    def list_table(self, view: View) -> sql.Identifier:
        return self.names(f"list_{view.name}")

    def entries(self, view: View) -> list[Entry]:
        """The ring entries of a view's table (a listing counts only)."""
        return [self.ring.count] if self.tree.listing else self.ring.stored(view)

    def list_variables(self, view: View) -> tuple[str, ...]:
        """A listing leaf's list: its keys, then the atom's other output variables."""
        atom = self.cq.atom(view.atom or "")
        shown = [o.variable for o in self.cq.outputs if hasattr(o, "variable")]
        extra = [v for v in dict.fromkeys(atom.variables) if v in shown and v not in view.keys]
        return view.keys + tuple(extra)

    def capture_atom(self, alias: str) -> CaptureAtom:
        """What the capture layer hands over for this atom: every column the query reads."""
        atom = self.cq.atom(alias)
        joins = set(self.cq.join_variables)
        columns = []
        for position, (col, variable) in enumerate(zip(atom.columns, atom.variables)):
            source = self.view.column_types[(alias, col)]
            target = self.variable_type(variable) if variable in joins or variable in self.cq.free else source
            columns.append(CapturedColumn(col, stored_name(position), source, target, key=variable in joins))
        return CaptureAtom(self.atom_name(alias), tuple(columns))


# --- DDL ---------------------------------------------------------------------------------------------


def _columns_ddl(ctx: Context, keys: tuple[str, ...], entries: list[Entry]) -> list[sql.Composable]:
    cols = [sql.SQL("{} {}").format(q(k), sql.SQL(ctx.variable_type(k))) for k in keys]  # type: ignore[arg-type]
    cols += [sql.SQL("{} {} NOT NULL").format(q(e.name), sql.SQL(e.type)) for e in entries]  # type: ignore[arg-type]
    return cols


def _table_ddl(ctx: Context, table: sql.Identifier, keys: tuple[str, ...], entries: list[Entry],
               comment: str, unique: bool = True) -> sql.Composable:
    cols = _columns_ddl(ctx, keys, entries)
    if keys and unique:
        cols.append(sql.SQL("UNIQUE NULLS NOT DISTINCT ({})").format(sql.SQL(", ").join(q(k) for k in keys)))
    # fillfactor: a payload update can then stay on its page (a HOT update, no new index entry)
    return sql.SQL("CREATE TABLE {t} ({cols}){fill}; COMMENT ON TABLE {t} IS {c}").format(
        t=table, cols=sql.SQL(", ").join(cols), c=sql.Literal(comment),
        fill=sql.SQL(" WITH (fillfactor = 80)") if unique else sql.SQL(""))


def describe_view(ctx: Context, view: View) -> str:
    keys = ", ".join(view.keys)
    if view.is_leaf:
        body = f"atom {view.atom}" + (f", summing {', '.join(view.lifted)}" if view.lifted else "")
    else:
        body = ("⊕_" + view.variable if view.variable in view.lifted else "") + " ⊗ ".join(
            c.name for c in view.children)
    return f"F-IVM view {view.name}[{keys}] = {body}; ring {ctx.ring.name}"


def state_tables(ctx: Context) -> list[sql.Composable]:
    out: list[sql.Composable] = []
    for view in ctx.tree.views():
        if view.materialized:
            out.append(_table_ddl(ctx, ctx.table(view), view.keys, ctx.entries(view), describe_view(ctx, view)))
            if ctx.tree.listing and not view.is_leaf:
                out.append(_table_ddl(ctx, ctx.w_table(view), view.w_keys, [ctx.ring.count],
                                      f"F-IVM W@{view.variable}: {view.name} before {view.variable} is summed away"))
            if ctx.tree.listing and view.is_leaf:
                out.append(_table_ddl(ctx, ctx.list_table(view), ctx.list_variables(view), [ctx.ring.count],
                                      f"F-IVM list of atom {view.atom}: its rows with multiplicities"))
        if not view.is_leaf and view.parent is not None:  # a delta on its way up
            out.append(_table_ddl(ctx, ctx.names(f"d_{view.name}"), view.keys, ctx.entries(view),
                                  f"scratch: the delta of {view.name} during a statement", unique=False))
        if ctx.tree.listing and not view.is_leaf:
            out.append(_table_ddl(ctx, ctx.names(f"dw_{view.name}"), view.w_keys, [ctx.ring.count],
                                  f"scratch: the delta of w_{view.name} during a statement", unique=False))
    for atom in ctx.cq.atoms:
        captured = ctx.capture_atom(atom.alias)
        out.append(sql.SQL("CREATE TABLE {t} ({cols}, mult bigint NOT NULL); COMMENT ON TABLE {t} IS {c}").format(
            t=ctx.names(f"{captured.name}_delta"),
            cols=sql.SQL(", ").join(sql.SQL("{} {}").format(q(c.name), sql.SQL(c.target_type))  # type: ignore[arg-type]
                                    for c in captured.columns),
            c=sql.Literal(f"scratch: the net change of atom {atom.alias} during a statement")))
    return out


def delta_layouts(ctx: Context) -> list[sql.Composable]:
    """The atoms' _delta tables of a view an earlier pgivm made, their columns named after the
    base columns, get ``stored_name``'s (``upgrade``; nothing to do on a fresh install)."""
    return [renamed_atom_columns(ctx.names(f"{captured.name}_delta"), captured)
            for captured in (ctx.capture_atom(atom.alias) for atom in ctx.cq.atoms)]


# --- queries ------------------------------------------------------------------------------------------


def _column_in_row(ctx: Context, alias: str, row: str, from_base: bool) -> Callable[[str], sql.Composable]:
    """A base column of the atom in a row of its source: the base table (by its own name) or its
    net change (by ``stored_name``)."""
    columns = ctx.cq.atom(alias).columns

    def ref(col: str) -> sql.Composable:
        return column(row, col if from_base else stored_column(columns, col))

    return ref


def _value_in_row(ctx: Context, alias: str, row: str, from_base: bool) -> Callable[[str], sql.Composable]:
    """A variable's value in a row of an atom's source (the base table, or its net change)."""
    atom = ctx.cq.atom(alias)
    at = _column_in_row(ctx, alias, row, from_base)
    computed = {c.variable: c for c in order.computed_values(ctx.cq) if order.home(c) == alias}
    stored = {c.column: c.target_type for c in ctx.capture_atom(alias).columns}  # each column's type in the net change

    def as_captured(col: str) -> sql.Composable:
        """The column as the atom's net change stores it (a join or GROUP BY column in its
        variable's type)."""
        if from_base and stored[col] != ctx.view.column_types[(alias, col)]:
            return sql.SQL("{}::{}").format(at(col), sql.SQL(stored[col]))  # type: ignore[arg-type]
        return at(col)

    def as_written(col: str) -> sql.Composable:
        """The column in its own type, as the query's expressions read it."""
        source = ctx.view.column_types[(alias, col)]
        if from_base or stored[col] == source:
            return at(col)
        return sql.SQL("{}::{}").format(at(col), sql.SQL(source))  # type: ignore[arg-type]

    def value(variable: str) -> sql.Composable:
        if variable in computed:  # evaluated on the row, as PostgreSQL evaluates it on a joined row
            return computed[variable].render(lambda ref: as_written(ref.column.column))
        return as_captured(atom.columns[atom.variables.index(variable)])

    return value


def _atom_conditions(ctx: Context, view: View, at: Callable[[str], sql.Composable],
                     value: Callable[[str], sql.Composable]) -> list[sql.Composable]:
    """The atom's filters, its NULL join values (which never join), selections between two of its
    columns carrying one variable, and what the ring leaves out (``at``: a base column in the row)."""
    atom = ctx.cq.atom(view.atom or "")
    conditions: list[sql.Composable] = []
    for f in ctx.cq.filters:
        if f.column.alias == atom.alias:
            conditions.append(sql.SQL("{} {} {}").format(at(f.column.column), sql.SQL(f.op),  # type: ignore[arg-type]
                                                         f.literal()))
    conditions += [c.render(lambda ref: at(ref.column)) for c in ctx.cq.conditions if c.alias == atom.alias]
    joins = set(ctx.cq.join_variables)
    seen: dict[str, str] = {}
    for col, variable in zip(atom.columns, atom.variables):
        if variable in joins:
            conditions.append(sql.SQL("{} IS NOT NULL").format(at(col)))
        if variable in seen:
            conditions.append(sql.SQL("{} = {}").format(at(seen[variable]), at(col)))
        seen.setdefault(variable, col)
    if not ctx.tree.listing:
        conditions += ctx.ring.leaf_filters(view, value)
    return conditions


def _where(conditions: list[sql.Composable]) -> sql.Composable:
    return sql.SQL(" WHERE ") + sql.SQL(" AND ").join(conditions) if conditions else sql.SQL("")


def _select(keys: list[tuple[str, sql.Composable]], terms: list[tuple[Entry, sql.Composable]], source: sql.Composable,
            conditions: list[sql.Composable], count_term: sql.Composable | None = None) -> sql.Composable:
    """SELECT keys, sum(term) per entry FROM source WHERE ... GROUP BY keys, without empty groups."""
    items = [sql.SQL("{} AS {}").format(value, q(k)) for k, value in keys]
    items += [sql.SQL("sum({}) AS {}").format(term, q(e.name)) for e, term in terms]
    group = sql.SQL(" GROUP BY {}").format(sql.SQL(", ").join(sql.SQL(str(i + 1)) for i in range(len(keys)))) \
        if keys else sql.SQL("")  # type: ignore[arg-type]  # ordinals
    having = sql.SQL(" HAVING count(*) > 0") if not keys else sql.SQL("")
    return sql.SQL("SELECT {items} FROM {source}{where}{group}{having}").format(
        items=sql.SQL(", ").join(items), source=source, where=_where(conditions), group=group, having=having)


def leaf_query(ctx: Context, view: View, source: sql.Composable, from_base: bool, list_form: bool = False) -> sql.Composable:
    """A leaf view (or a listing's list) from its atom's rows: the base table (multiplicity 1 per
    row) or the statement's net change (``mult``)."""
    assert view.atom is not None
    value = _value_in_row(ctx, view.atom, "r", from_base)
    mult = sql.SQL("1::bigint") if from_base else column("r", "mult")
    keys = ctx.list_variables(view) if list_form else view.keys
    terms = [(ctx.ring.count, mult)] if ctx.tree.listing else ctx.ring.leaf_terms(view, value, mult)
    conditions = _atom_conditions(ctx, view, _column_in_row(ctx, view.atom, "r", from_base), value)
    if from_base:
        conditions.append(ctx.view.base_of(ctx.cq.atom(view.atom).table).guard("r"))
    return _select([(k, value(k)) for k in keys], terms, sql.SQL("{} AS r").format(source), conditions)


def _product_query(ctx: Context, view: View, sources: dict[View, sql.Composable], w_form: bool) -> sql.Composable:
    """V@X (or W@X) from its children: joined on their shared keys, lifted with g_X, summed."""
    factors: list[Factor] = []
    from_items: list[sql.Composable] = []
    bound: dict[str, sql.Composable] = {}
    for i, child in enumerate(view.children):
        alias = f"c{i}"
        conditions = [sql.SQL("{} = {}").format(column(alias, k), bound[k]) for k in child.keys if k in bound]
        for k in child.keys:
            bound.setdefault(k, column(alias, k))
        item = sql.SQL("{} AS {}").format(sources[child], q(alias))
        if i == 0:
            from_items.append(item)
        else:
            from_items.append(sql.SQL(" JOIN {} ON {}").format(item, sql.SQL(" AND ").join(conditions))
                              if conditions else sql.SQL(" CROSS JOIN {}").format(item))
        factors.append(Factor(alias, child))
    keys = view.w_keys if w_form else view.keys
    if ctx.tree.listing:
        terms = [(ctx.ring.count, sql.SQL(" * ").join(column(f.alias, "count") for f in factors))]
    else:
        if view.lifted:
            (x,) = view.lifted
            factors.append(Factor("", None, x, bound[x]))
        terms = ctx.ring.product_terms(view, factors)
    return _select([(k, bound[k]) for k in keys], terms, sql.SQL("").join(from_items), [])


def view_query(ctx: Context, view: View, sources: dict[View, sql.Composable]) -> sql.Composable:
    """V@X from its children's sources; for a listing, Σ_X of W@X computed from them."""
    if ctx.tree.listing:
        return sum_w(ctx, view, sql.SQL("({})").format(_product_query(ctx, view, sources, w_form=True)))
    return _product_query(ctx, view, sources, w_form=False)


def sum_w(ctx: Context, view: View, w_source: sql.Composable) -> sql.Composable:
    """V@X = Σ_X W@X."""
    return _select([(k, column("w", k)) for k in view.keys], [(ctx.ring.count, column("w", "count"))],
                   sql.SQL("{} AS w").format(w_source), [])


def base_sources(ctx: Context) -> dict[View, sql.Composable]:
    """Every view of the tree as a query over the base tables (stored views recomputed too)."""
    sources: dict[View, sql.Composable] = {}
    for view in ctx.tree.views():
        if view.is_leaf:
            sources[view] = sql.SQL("({})").format(leaf_query(ctx, view, _base(ctx, view), from_base=True))
        else:
            sources[view] = sql.SQL("({})").format(view_query(ctx, view, sources))
    return sources


def _base(ctx: Context, view: View) -> sql.Composable:
    return ctx.view.base_of(ctx.cq.atom(view.atom or "").table).ident


# --- build ---------------------------------------------------------------------------------------------


def build_plan(ctx: Context) -> list[sql.Composable]:
    """Fill every stored view bottom-up from the base tables (children read from their tables)."""
    out: list[sql.Composable] = pinned_settings(ctx)
    sources: dict[View, sql.Composable] = {}
    for view in ctx.tree.views():
        if view.is_leaf:
            query = leaf_query(ctx, view, _base(ctx, view), from_base=True)
            if ctx.tree.listing:
                out.append(sql.SQL("INSERT INTO {} {}").format(
                    ctx.list_table(view), leaf_query(ctx, view, _base(ctx, view), from_base=True, list_form=True)))
        elif ctx.tree.listing:
            out.append(sql.SQL("INSERT INTO {} {}").format(ctx.w_table(view), _product_query(ctx, view, sources, True)))
            query = sum_w(ctx, view, ctx.w_table(view))
        else:
            query = view_query(ctx, view, sources)
        if view.materialized:
            out.append(sql.SQL("INSERT INTO {} {}").format(ctx.table(view), query))
            sources[view] = ctx.table(view)
        else:
            sources[view] = sql.SQL("({})").format(query)
    out.append(sql.SQL("; ").join(sql.SQL("ANALYZE {}").format(t) for t in stored_tables(ctx)))
    return out


def pinned_settings(ctx: Context) -> list[sql.Composable]:
    """What a transaction that reads floats into the state sets first (floats.PINNED)."""
    return [floats.pin_setting()] if not ctx.tree.listing and ctx.ring.converts_floats else []


def function_settings(ctx: Context) -> sql.Composable:
    """The same for the functions that maintain the view: SET clauses (or nothing)."""
    return floats.function_setting() if pinned_settings(ctx) else sql.SQL("")


def stored_tables(ctx: Context) -> list[sql.Identifier]:
    out = []
    for view in ctx.tree.stored():
        out.append(ctx.table(view))
        if ctx.tree.listing:
            out.append(ctx.list_table(view) if view.is_leaf else ctx.w_table(view))
    return out


# --- maintenance -----------------------------------------------------------------------------------------


def merge(ctx: Context, table: sql.Identifier, keys: tuple[str, ...], entries: list[Entry], source: sql.Composable,
          null_keys: frozenset[str] | None = None, on: sql.Composable | None = None) -> sql.Composable:
    """table := table ⊎ source: add the entries, insert new keys, delete keys whose count reaches 0.

    ``null_keys``: the source's rows are NULL in exactly these keys and no others (the caller
    filtered them so), and every key is matched by IS NULL or = alone: a plain conjunction an index
    on the keys serves (by default a nullable key matches by = or both NULL, an OR). ``on``: the
    match condition, as the caller computes it."""
    def equal(k: str) -> sql.Composable:
        if null_keys is not None:
            return sql.SQL("v.{k} IS NULL" if k in null_keys else "v.{k} = d.{k}").format(k=q(k))
        if ctx.nullable_key(k):
            return sql.SQL("(v.{k} = d.{k} OR (v.{k} IS NULL AND d.{k} IS NULL))").format(k=q(k))
        return sql.SQL("v.{k} = d.{k}").format(k=q(k))

    names = [*keys, *(e.name for e in entries)]
    return sql.SQL(
        "MERGE INTO {table} AS v USING {source} AS d ON {on} "
        "WHEN MATCHED AND v.count + d.count = 0 THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET {sets} "
        "WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ({cols}) VALUES ({values})"
    ).format(
        table=table, source=source,
        on=on if on is not None else sql.SQL(" AND ").join(equal(k) for k in keys) if keys else sql.SQL("true"),
        sets=sql.SQL(", ").join(sql.SQL("{e} = v.{e} + d.{e}").format(e=q(e.name)) for e in entries),
        cols=sql.SQL(", ").join(q(n) for n in names),
        values=sql.SQL(", ").join(sql.SQL("d.{}").format(q(n)) for n in names),
    )


def apply_batch(ctx: Context, alias: str) -> list[sql.Composable]:
    """The statements of the delta tree of one atom (§4.3), leaf to root."""
    leaf = ctx.tree.leaf(alias)
    delta = ctx.names(f"{ctx.atom_name(alias)}_delta")
    out: list[sql.Composable] = []
    leaf_delta = sql.SQL("({})").format(leaf_query(ctx, leaf, delta, from_base=False))
    if ctx.tree.listing:
        out.append(merge(ctx, ctx.list_table(leaf), ctx.list_variables(leaf), [ctx.ring.count],
                         sql.SQL("({})").format(leaf_query(ctx, leaf, delta, from_base=False, list_form=True))))
    if leaf.materialized:
        out.append(merge(ctx, ctx.table(leaf), leaf.keys, ctx.entries(leaf), leaf_delta))
    previous, previous_source = leaf, leaf_delta
    scratch: list[sql.Identifier] = []
    for view in leaf.path_up()[1:]:
        sources = {c: ctx.table(c) for c in view.children if c is not previous}
        sources[previous] = previous_source
        if ctx.tree.listing:
            dw = ctx.names(f"dw_{view.name}")
            out.append(sql.SQL("INSERT INTO {} {}").format(dw, _product_query(ctx, view, sources, w_form=True)))
            out.append(merge(ctx, ctx.w_table(view), view.w_keys, [ctx.ring.count], dw))
            scratch.append(dw)
            query = sum_w(ctx, view, dw)
        else:
            query = view_query(ctx, view, sources)
        if view.parent is not None:
            d = ctx.names(f"d_{view.name}")
            out.append(sql.SQL("INSERT INTO {} {}").format(d, query))
            scratch.append(d)
            source: sql.Composable = d
        else:
            source = sql.SQL("({})").format(query)
        if view.materialized:
            out.append(merge(ctx, ctx.table(view), view.keys, ctx.entries(view), source))
        previous, previous_source = view, source
    out += [sql.SQL("DELETE FROM {}").format(t) for t in [*scratch, delta]]
    return out


def clear(ctx: Context, alias: str) -> list[sql.Composable]:
    """TRUNCATE of the atom's table: every stored view over the atom becomes empty."""
    out = []
    for view in ctx.tree.stored():
        if alias in view.rels:
            out.append(sql.SQL("DELETE FROM {}").format(ctx.table(view)))
            if ctx.tree.listing:
                out.append(sql.SQL("DELETE FROM {}").format(ctx.list_table(view) if view.is_leaf else ctx.w_table(view)))
    return out


# --- what users read -------------------------------------------------------------------------------------


def result_query(ctx: Context, output_types: dict[str, str],
                 extra: dict[str, sql.Composable] | None = None) -> sql.Composable:
    """The view's rows read from the root (aggregates) or enumerated from the tree (listing).
    ``extra``: outputs read otherwise, by name, over the root's row ``r`` (first-order's min/max)."""
    if ctx.tree.listing:
        return _as_declared(ctx, enumeration_query(ctx), output_types)
    root = ctx.tree.root
    r = "r"
    ring = ctx.ring
    items: list[sql.Composable] = []
    if isinstance(ring, CofactorRing):
        return cofactor_query(ctx, ring)
    assert isinstance(ring, SumRing)
    plans = iter(ring.plans)

    def at(name: str) -> sql.Composable:
        return column(r, name)

    for output in ctx.cq.outputs:
        kind = sql.SQL(output_types[output.name])  # type: ignore[arg-type]  # from format_type()
        if extra and output.name in extra:
            items.append(sql.SQL("({})::{} AS {}").format(extra[output.name], kind, q(output.name)))
            continue
        if hasattr(output, "variable"):
            items.append(sql.SQL("{}::{} AS {}").format(column(r, output.variable), kind, q(output.name)))  # type: ignore[union-attr]
            continue
        plan = next(plans)
        if plan.aggregate.function == "count":
            value = column(r, plan.nonnull.name)
            value = sql.SQL("coalesce({}, 0)").format(value) if not root.keys else value
            for v in sorted(plan.free_nonnull):
                value = sql.SQL("CASE WHEN {} IS NULL THEN 0 ELSE {} END").format(column(r, v), value)
            items.append(sql.SQL("({})::{} AS {}").format(value, kind, q(output.name)))
            continue
        total = ring.read(plan, at, output_types[output.name])
        conditions = [sql.SQL("{} > 0").format(column(r, plan.nonnull.name))]
        conditions += [sql.SQL("{} IS NOT NULL").format(column(r, v)) for v in sorted(plan.free_nonnull)]
        items.append(sql.SQL("(CASE WHEN {} THEN {} END)::{} AS {}").format(
            sql.SQL(" AND ").join(conditions), total, kind, q(output.name)))
    source = sql.SQL("{} AS r").format(ctx.table(root)) if root.keys else \
        sql.SQL("(SELECT) AS one LEFT JOIN {} AS r ON true").format(ctx.table(root))
    return sql.SQL("SELECT {} FROM {}").format(sql.SQL(", ").join(items), source)


def cofactor_query(ctx: Context, ring: CofactorRing) -> sql.Composable:
    """(GROUP BY columns..., i, j, value): entry (0, 0) the count, (0, j) and (j, 0) the sums,
    (j, k) the sums of products, for 1 <= j, k <= m, both triangles."""
    root = ctx.tree.root
    m = len(ring.features)

    def at(name: str) -> sql.Composable:
        return column("r", name)

    rows = [sql.SQL("(0, 0, r.count::double precision)")]
    for j in range(m):
        s = ring.read_s(j, at)
        rows += [sql.SQL("(0, {}, {})").format(sql.Literal(j + 1), s), sql.SQL("({}, 0, {})").format(sql.Literal(j + 1), s)]
    for j in range(m):
        for k in range(m):
            rows.append(sql.SQL("({}, {}, {})").format(sql.Literal(j + 1), sql.Literal(k + 1), ring.read_q(j, k, at)))
    groups = [sql.SQL("r.{} AS {}").format(q(o.variable), q(o.name)) for o in ctx.cq.outputs if hasattr(o, "variable")]  # type: ignore[union-attr]
    return sql.SQL("SELECT {groups}e.i, e.j, e.value FROM {root} AS r CROSS JOIN LATERAL (VALUES {rows}) AS e(i, j, value)").format(
        groups=sql.SQL("").join(sql.SQL("{}, ").format(g) for g in groups), root=ctx.table(root),
        rows=sql.SQL(", ").join(rows))


def _as_declared(ctx: Context, rows: sql.Composable, output_types: dict[str, str]) -> sql.Composable:
    """A listing's rows with each column of its own type, where its variable's differs: a char(3)
    column joined with a text one is kept as text (PostgreSQL compares them so), and shows padded as
    char(3) again; a date joined with a timestamp shows as a date."""
    outputs = [(o.name, getattr(o, "variable", None)) for o in ctx.cq.outputs]
    if all(v is None or ctx.view.variable_types.get(v) == output_types[n] for n, v in outputs):
        return rows
    items = [sql.SQL("l.{}::{} AS {}").format(q(n), sql.SQL(output_types[n]), q(n))  # type: ignore[arg-type]
             if v is not None and ctx.view.variable_types.get(v) != output_types[n] else sql.SQL("l.{}").format(q(n))
             for n, v in outputs]
    return sql.SQL("SELECT {} FROM ({}) AS l").format(sql.SQL(", ").join(items), rows)


def enumeration_query(ctx: Context) -> sql.Composable:
    """The flat join enumerated from the factorized representation, top-down: each W@X row, then
    each child's rows for that X (lists at the leaves), nested loops with index lookups (the
    OFFSET 0 keeps each LATERAL subquery a per-row lookup), every row repeated by the product of
    its atoms' multiplicities. W only holds values with a non-zero product below, so no lookup
    comes back empty: the delay between two rows is constant (up to index lookups)."""
    items: list[sql.Composable] = []
    bound: dict[str, sql.Composable] = {}
    multiplicities: list[sql.Composable] = []
    counter = [0]

    def lookup(table: sql.Identifier, keys: tuple[str, ...]) -> str:
        counter[0] += 1
        alias = f"e{counter[0]}"
        conditions = [sql.SQL("t.{} = {}").format(q(k), bound[k]) for k in keys if k in bound]
        query = sql.SQL("(SELECT * FROM {} AS t{} OFFSET 0) AS {}").format(table, _where(conditions), q(alias))
        items.append(query if not items else sql.SQL(" CROSS JOIN LATERAL {}").format(query))
        return alias

    def walk(view: View) -> None:
        if view.is_leaf:
            variables = ctx.list_variables(view)
            alias = lookup(ctx.list_table(view), view.keys)
            for v in variables:
                bound.setdefault(v, column(alias, v))
            multiplicities.append(column(alias, "count"))
            return
        alias = lookup(ctx.w_table(view), view.keys)
        assert view.variable is not None
        bound.setdefault(view.variable, column(alias, view.variable))
        for child in view.children:
            walk(child)

    walk(ctx.tree.root)
    outputs = sql.SQL(", ").join(sql.SQL("{} AS {}").format(bound[o.variable], q(o.name)) for o in ctx.cq.outputs)  # type: ignore[union-attr]
    repeat = sql.SQL(" CROSS JOIN LATERAL generate_series(1, {}) AS times").format(sql.SQL(" * ").join(multiplicities))
    return sql.SQL("SELECT {} FROM {}{}").format(outputs, sql.SQL("").join(items), repeat)
