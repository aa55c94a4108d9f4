"""sample: a uniform random sample of a join result, kept current (reservoir sampling over joins).

Dai, Hu & Yi, "Reservoir Sampling over Joins" (SIGMOD 2024; seed 003, notes
../shared/notes/reservoir-sampling-over-joins.md). Each inserted row creates a batch of new join
results; a dynamic index (``sql/10_index.sql``, the paper's §4) addresses that batch as a virtual
array padded with dummies to powers of two, and a reservoir that skips (``sql/20_reservoir.sql``,
Algorithms 4 and 5) looks at O(k log(N/k)) positions in all, not at every result. Deletes, which
the paper leaves out, take the sampled results that lost a row away and refill from the index so
that the sample stays the k smallest of i.i.d. uniform keys over the current result.

One inserted row of a self-joined table is a sequence of logical inserts into its atoms, in the
order written, so each join result is generated exactly once. A statement's deletes of every atom
go first, then its inserts, row by row in a fixed order: a view is reproducible from its seed.
"""

from __future__ import annotations

import secrets
from typing import Any

import psycopg
from psycopg import sql

from pgivm import capture
from pgivm.errors import PgivmError
from pgivm.query.cq import ConjunctiveQuery, GroupColumn
from pgivm.query.model import TableRef
from pgivm.query.plain import from_where
from pgivm.query.resolve import ResolvedView
from pgivm.systems.base import Action, FunctionSystem, InstallPlan, Option, Section, SystemStatus
from pgivm.systems.common import (
    CheckFailure,
    Names,
    capture_functions_plan,
    render,
    revoke_plan,
    run_checks,
    shape_of,
    state_schema_for,
)
from pgivm.systems.sample.layout import Layout, foreign_key_units, layout, parse_merges

NAME = "sample"


def _positive(value: int) -> str | None:
    return None if value > 0 else f"must be a positive integer, got {value}"


SIZE = Option("size", int, None, "the sample size K: the view keeps min(K, |join|) distinct join results", _positive)
SEED = Option("seed", int, None, "seed of the view's random stream (default: drawn at create); the same seed and "
              "the same statements give the same sample")
def _on_off(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("on", "true", "yes", "1"):
        return True
    if text in ("off", "false", "no", "0"):
        return False
    raise ValueError(value)


_on_off.__name__ = "on or off"
MERGE = Option("merge", str, "auto", "foreign-key merging (§4.4): auto (default) merges a table joined on all columns of "
               "a unique key (a primary key) into the table that references it; none; or the groups to merge, "
               "written with aliases as a+b;c+d")
GROUPING = Option("grouping", _on_off, True, "grouping (§4.4): rows of a node with equal join keys are kept as one "
                  "entry with a padded frequency (on, the default, or off)")
FRESH_SEED = Option("seed", int, 0, "seed of the draws (default 0: a new seed each time, printed)")
FRESH = Option("fresh", int, None, "draw this many independent uniform results of the current join, with replacement",
               _positive)


def accepts(cq: ConjunctiveQuery) -> str | None:
    if cq.aggregates or cq.group_by:
        return "a sample view lists join results: select columns (or *), without aggregates or GROUP BY"
    if layout(cq) is None:
        if len(cq.atoms) > 1 and _cyclic(cq):
            return (f"{shape_of(cq)}: the sample system takes acyclic joins (cyclic joins through a hypertree "
                    "decomposition are not supported yet)")
        return "the tables do not all join: a cross product is not sampled"
    return None


def _cyclic(cq: ConjunctiveQuery) -> bool:
    from pgivm.query.analysis import join_tree

    return join_tree(cq) is None


# --- names -------------------------------------------------------------------------------------------

_TABLES = ("state", "node", "rows", "part", "grp", "gmem", "member", "cnt", "bucket", "bsize", "sample")
_FUNCTIONS = ("rng_next", "unit", "rand_bits", "ceil_log2", "cnt_add", "bucket_add", "bucket_remove", "tuple_exp",
              "propagate", "row_add", "entry_move", "index_insert", "index_delete", "retrieve_key", "retrieve_tuple",
              "skip", "pred", "reservoir_batch", "repair", "forget", "fresh", "apply_pending", "restart")


def _objects(names: Names, shape: Layout) -> dict[str, sql.Composable]:
    objects: dict[str, sql.Composable] = {n: names(n) for n in (*_TABLES, *_FUNCTIONS)}
    objects["rid_seq"] = names("rid_seq")
    objects["rid_seq_text"] = sql.Literal(f"{names.schema}.rid_seq")
    objects["kid_seq"] = names("kid_seq")
    objects["atoms"] = sql.Literal(shape.atoms)
    objects["units"] = sql.Literal(len(shape.units))
    return objects


def shape_for(view: ResolvedView, params: dict[str, Any]) -> Layout:
    """The view's units and trees. ``merge`` "auto" asks the tables' unique keys (at create; the
    catalog then records the groups chosen, so later reinstalls build the same trees whatever
    keys the tables have by then)."""
    cq: ConjunctiveQuery = view.query
    grouping = bool(params.get("grouping", False))
    merge = str(params.get("merge") or "none").strip()
    if merge == "auto":
        shape = layout(cq, foreign_key_units(cq, view.unique_keys), grouping) or layout(cq, None, grouping)
    elif merge == "none":
        shape = layout(cq, None, grouping)
    else:
        shape = layout(cq, parse_merges(cq, merge), grouping)
        if shape is None:
            raise PgivmError(f"--merge {merge}: the groups do not leave an acyclic join of connected groups",
                             "merge only tables that join each other, and keep the query acyclic; or --merge auto")
    assert shape is not None  # accepts() saw an acyclic, connected query
    return shape


def _stored_shape(conn: psycopg.Connection, name: str, cq: ConjunctiveQuery) -> Layout:
    """The trees an installed view was built with (its catalog parameters name its merged groups)."""
    from pgivm.catalog import views as catalog

    params = dict(catalog.get(conn, name).params)
    merge = str(params.get("merge") or "none")
    shape = layout(cq, None if merge in ("none", "auto") else parse_merges(cq, merge), bool(params.get("grouping")))
    assert shape is not None
    return shape





def _atom_name(i: int) -> str:
    return f"a{i + 1}"


def _splitmix(seed: int) -> int:
    """The first state of the view's xorshift64 stream: never 0 (xorshift's fixed point)."""
    z = (seed + 0x9E3779B97F4A7C15) & (2**64 - 1)
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & (2**64 - 1)
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & (2**64 - 1)
    z ^= z >> 31
    z = z or 1
    return z - 2**64 if z >= 2**63 else z


# --- what the capture layer hands over --------------------------------------------------------------


def capture_atom(view: ResolvedView, index: int) -> capture.CaptureAtom:
    """The atom's columns, named by position in its _delta table and its atom table (``a<i>``,
    beside ``rid``), as in everything the view keeps of an atom's rows (``capture.stored_name``)."""
    cq: ConjunctiveQuery = view.query
    atom = cq.atoms[index]
    joins = set(cq.join_variables)
    columns = []
    for position, (col, variable) in enumerate(zip(atom.columns, atom.variables)):
        source = view.column_types[(atom.alias, col)]
        target = view.variable_types[variable] if variable in joins else source
        columns.append(capture.CapturedColumn(col, capture.stored_name(position), source, target, key=variable in joins))
    return capture.CaptureAtom(_atom_name(index), tuple(columns))


def _stored(cq: ConjunctiveQuery, alias: str, column: str) -> sql.Identifier:
    """A base column's name in the atom's stored rows (its atom table, its _delta)."""
    return _q(capture.stored_column(cq.atom(alias).columns, column))


def _alias(cq: ConjunctiveQuery, alias: str) -> sql.Identifier:
    """What an atom's stored rows are called in this module's queries: the atom table's own name
    (a1, a2, ...), never the query's alias, which may be named like a variable of the function
    the query runs in (r and u, x of pred) or like another alias of the query (pgivm_sampled)."""
    return _q(_atom_name([a.alias for a in cq.atoms].index(alias)))


def _at(cq: ConjunctiveQuery, alias: str, column: str) -> sql.Composable:
    """A base column of an atom, read from its stored rows (``_alias``)."""
    return sql.SQL("{}.{}").format(_alias(cq, alias), _stored(cq, alias, column))


def _letters(view: ResolvedView, table: TableRef) -> str:
    aliases = [a.alias for a in view.query.atoms]
    return "".join(_atom_name(aliases.index(a.alias)) for a in view.query.atoms_of(table))


def deferred_atoms(view: ResolvedView, name: str, params: dict[str, Any]) -> dict[TableRef, list[capture.CaptureAtom]]:
    aliases = [a.alias for a in view.query.atoms]
    return {table: [capture_atom(view, aliases.index(a.alias)) for a in view.query.atoms_of(table)]
            for table in view.query.tables}


def capture_triggers(view: ResolvedView, name: str, table: TableRef) -> list[capture.CaptureTrigger]:
    return capture.view_triggers(name, state_schema_for(name), _letters(view, table))


# --- generated SQL (per view: typed rows, key dictionaries, conditions) -----------------------------


def _q(name: str) -> sql.Identifier:
    return sql.Identifier(name)


def _key_column(atom_variables: tuple[str, ...], variable: str) -> sql.Identifier:
    """The stored column of an atom that carries a variable (its first)."""
    return _q(capture.stored_name(atom_variables.index(variable)))


def _atom_filters(view: ResolvedView, index: int, row: str, stored: bool = True) -> list[sql.Composable]:
    """The conditions on one atom's rows alone: its constant filters, and columns of the atom that
    carry one variable (``r.a = s.b AND s.b = r.c`` selects r.a = r.c). ``row`` holds the atom's
    stored rows (or, not ``stored``, the base table's)."""
    cq: ConjunctiveQuery = view.query
    atom = cq.atoms[index]

    def at(column: str) -> sql.Composable:
        name = _stored(cq, atom.alias, column) if stored else _q(column)
        return sql.SQL("{}.{}").format(sql.SQL(row), name)  # type: ignore[arg-type]  # an alias of pgivm's

    out: list[sql.Composable] = []
    for f in cq.filters:
        if f.column.alias == atom.alias:
            out.append(sql.SQL("{} {} {}").format(at(f.column.column), sql.SQL(f.op), f.literal()))  # type: ignore[arg-type]
    first: dict[str, str] = {}
    for col, variable in zip(atom.columns, atom.variables):
        if variable in first:
            out.append(sql.SQL("{} = {}").format(at(first[variable]), at(col)))
        else:
            first[variable] = col
    return out


def _state_ddl(view: ResolvedView, names: Names, shape: Layout) -> list[sql.Composable]:
    cq: ConjunctiveQuery = view.query
    out: list[sql.Composable] = []
    for i, atom in enumerate(cq.atoms):
        k = _atom_name(i)
        cap = capture_atom(view, i)
        cols = [sql.SQL("{} {}").format(_q(c.name), sql.SQL(c.target_type)) for c in cap.columns]  # type: ignore[arg-type]
        out.append(sql.SQL("CREATE TABLE {t} (rid bigint PRIMARY KEY{sep}{cols}); COMMENT ON TABLE {t} IS {c}").format(
            t=names(k), sep=sql.SQL(", ") if cols else sql.SQL(""), cols=sql.SQL(", ").join(cols),
            c=sql.Literal(f"the rows of atom {atom.alias} ({atom.table}) the sample can use, each with its row id")))
        keys = [c.name for c in cap.columns if c.key]
        if keys:
            out.append(sql.SQL("CREATE INDEX ON {} ({})").format(names(k), sql.SQL(", ").join(_q(c) for c in keys)))
        out.append(sql.SQL("CREATE TABLE {t} ({cols}{sep}mult bigint NOT NULL)").format(
            t=names(f"{k}_delta"), cols=sql.SQL(", ").join(cols), sep=sql.SQL(", ") if cols else sql.SQL("")))
    for edge in shape.edges:
        cols = [sql.SQL("{} {} NOT NULL").format(_q(f"k{j}"), sql.SQL(view.variable_types[v]))  # type: ignore[arg-type]
                for j, v in enumerate(edge.key)]
        out.append(sql.SQL(
            "CREATE TABLE {t} (kid bigint PRIMARY KEY DEFAULT nextval({seq}), {cols}, UNIQUE ({keys})); "
            "COMMENT ON TABLE {t} IS {c}").format(
            t=names(f"dict_{edge.number}"), seq=sql.Literal(f"{names.schema}.kid_seq"), cols=sql.SQL(", ").join(cols),
            keys=sql.SQL(", ").join(_q(f"k{j}") for j in range(len(edge.key))),
            c=sql.Literal(f"join-tree edge {edge.number} on ({', '.join(edge.key)}): each key value's number (kid)")))
    rows = [sql.SQL("({}, {}, {}, {}, {}, {}, {}, {}, {})").format(
        sql.Literal(n.node), sql.Literal(n.tree), sql.Literal(n.unit), sql.Literal(n.parent), sql.Literal(n.pedge),
        sql.SQL("ARRAY[{}]::int[]").format(sql.SQL(", ").join(sql.Literal(c) for c in n.children)),
        sql.SQL("ARRAY[{}]::int[]").format(sql.SQL(", ").join(sql.Literal(c) for c in n.cedges)),
        sql.Literal(n.bucketed), sql.Literal(n.grouped)) for n in shape.nodes]
    out.append(sql.SQL("INSERT INTO {} VALUES {}").format(names("node"), sql.SQL(", ").join(rows)))
    return out


def _layouts(view: ResolvedView, names: Names) -> list[sql.Composable]:
    """The atom tables and _delta tables of a view an earlier pgivm made, their columns named after
    the base columns, get ``stored_name``'s (``upgrade``; nothing to do on a fresh install)."""
    out = []
    for i in range(len(view.query.atoms)):
        cap = capture_atom(view, i)
        out.append(capture.renamed_atom_columns(names(cap.name), cap, before=("rid",), after=()))
        out.append(capture.renamed_atom_columns(names(f"{cap.name}_delta"), cap))
    return out


def _kid_functions(view: ResolvedView, names: Names, shape: Layout) -> list[sql.Composable]:
    out: list[sql.Composable] = []
    for edge in shape.edges:
        params = sql.SQL(", ").join(sql.SQL("{} {}").format(_q(f"v{j}"), sql.SQL(view.variable_types[v]))  # type: ignore[arg-type]
                                    for j, v in enumerate(edge.key))
        match = sql.SQL(" AND ").join(sql.SQL("{} = {}").format(_q(f"k{j}"), _q(f"v{j}")) for j in range(len(edge.key)))
        out.append(sql.SQL(
            "CREATE FUNCTION {f}({params}) RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$\n"
            "DECLARE k bigint;\nBEGIN\n"
            "    SELECT kid INTO k FROM {t} WHERE {match};\n"
            "    IF NOT FOUND THEN\n        INSERT INTO {t} ({cols}) VALUES ({vals}) RETURNING kid INTO k;\n    END IF;\n"
            "    RETURN k;\nEND;\n$pgivm$").format(
            f=names(f"kid_{edge.number}"), params=params, t=names(f"dict_{edge.number}"), match=match,
            cols=sql.SQL(", ").join(_q(f"k{j}") for j in range(len(edge.key))),
            vals=sql.SQL(", ").join(_q(f"v{j}") for j in range(len(edge.key)))))
    return out


def _pred_function(view: ResolvedView, names: Names) -> sql.Composable:
    """θ of the predicate reservoir beyond 'not a dummy': the view's conditions across tables."""
    cq: ConjunctiveQuery = view.query
    if not cq.predicates:
        body: sql.Composable = sql.SQL("SELECT true")
    else:
        aliases = [a.alias for a in cq.atoms]
        used = sorted({aliases.index(c.alias) for p in cq.predicates for c in (p.left, p.right)})
        body = sql.SQL("SELECT coalesce((SELECT {cond} FROM {tables} WHERE {ids}), false)").format(
            cond=sql.SQL(" AND ").join(sql.SQL("{} {} {}").format(
                _at(cq, p.left.alias, p.left.column), sql.SQL(p.op), _at(cq, p.right.alias, p.right.column))  # type: ignore[arg-type]
                for p in cq.predicates),
            tables=sql.SQL(", ").join(sql.SQL("{} AS {}").format(names(_atom_name(i)), _q(_atom_name(i))) for i in used),
            ids=sql.SQL(" AND ").join(sql.SQL("{}.rid = x[{}]").format(_q(_atom_name(i)), sql.Literal(i + 1)) for i in used))
    return sql.SQL("CREATE FUNCTION {f}(x bigint[]) RETURNS boolean LANGUAGE sql SECURITY DEFINER STABLE "
                   "SET search_path = pg_catalog, pg_temp AS $pgivm$ {body} $pgivm$").format(f=names("pred"), body=body)


def _unit_rows_query(view: ResolvedView, names: Names, shape: Layout, atom: int) -> sql.Composable:
    """In a merged unit, for a new row r of ``atom``: the stored rows of the unit's other atoms that
    join it (``rid_<a>`` each, in rid order) and the unit row's key values (``key_<j>``, for the
    unit's edge variables in sorted order)."""
    cq: ConjunctiveQuery = view.query
    unit = shape.unit_of(atom)
    others = [a for a in unit.atoms if a != atom]
    value: dict[str, sql.Composable] = {}
    for col, variable in zip(cq.atoms[atom].columns, cq.atoms[atom].variables):
        value.setdefault(variable, sql.SQL("r.{}").format(_stored(cq, cq.atoms[atom].alias, col)))
    conditions = _unit_conditions(cq, tuple(others), value)
    return sql.SQL("SELECT {items} FROM {tables} WHERE {cond} ORDER BY {order}").format(
        items=sql.SQL(", ").join(
            [sql.SQL("{}.rid AS {}").format(_q(_atom_name(a)), _q(f"rid_{a}")) for a in others]
            + [sql.SQL("{} AS {}").format(value[v], _q(f"key_{j}")) for j, v in enumerate(_unit_keys(shape, unit.number))]),
        tables=sql.SQL(", ").join(sql.SQL("{} AS {}").format(names(_atom_name(a)), _q(_atom_name(a))) for a in others),
        cond=sql.SQL(" AND ").join(conditions or [sql.SQL("true")]),
        order=sql.SQL(", ").join(sql.SQL("{}.rid").format(_q(_atom_name(a))) for a in others))


def _unit_conditions(cq: ConjunctiveQuery, atoms: tuple[int, ...],
                     first: dict[str, sql.Composable] | None = None) -> list[sql.Composable]:
    """The equalities that join a unit's atoms: each variable's columns equal to its first one (or
    to the value ``first`` gives it; ``first`` learns the variables it did not know)."""
    first = {} if first is None else first
    out: list[sql.Composable] = []
    for a in atoms:
        for col, variable in zip(cq.atoms[a].columns, cq.atoms[a].variables):
            mine = _at(cq, cq.atoms[a].alias, col)
            if variable in first:
                out.append(sql.SQL("{} = {}").format(mine, first[variable]))
            else:
                first[variable] = mine
    return out


def _unit_keys(shape: Layout, unit: int) -> list[str]:
    """The join variables on the unit's edges, sorted."""
    return sorted({v for e in shape.edges_of(unit) for v in e.key})


def _apply_pending(view: ResolvedView, names: Names, shape: Layout) -> sql.Composable:
    """Every atom's net change of the statement: deletes of all atoms first (and one repair of the
    sample), then the inserts row by row: each new row of an atom is a logical insert, its unit's
    new rows (one, or, in a merged unit, one per partner combination stored) an index update and a
    batch of the reservoir each."""
    cq: ConjunctiveQuery = view.query
    o = _objects(names, shape)
    deletes: list[sql.Composable] = []
    inserts: list[sql.Composable] = []
    clears: list[sql.Composable] = []
    for i, atom in enumerate(cq.atoms):
        k = _atom_name(i)
        cap = capture_atom(view, i)
        unit = shape.unit_of(i)
        merged = len(unit.atoms) > 1
        match = sql.SQL(" AND ").join(
            sql.SQL("x.{c} = r.{c}" if c.key else "x.{c} IS NOT DISTINCT FROM r.{c}").format(c=_q(c.name)) for c in cap.columns)
        if merged:
            leave = sql.SQL(
                "            FOR unit_rid IN SELECT p.rid FROM {part} AS p WHERE p.arid = victim ORDER BY p.rid LOOP\n"
                "                moved := moved + {index_delete}(unit_rid);\n"
                "            END LOOP;\n").format(part=o["part"], index_delete=o["index_delete"])
        else:
            leave = sql.SQL("            moved := moved + {index_delete}(victim);\n").format(index_delete=o["index_delete"])
        deletes.append(sql.SQL(
            "    FOR r IN SELECT * FROM {delta} AS d WHERE d.mult < 0 LOOP\n"
            "        FOR victim IN SELECT x.rid FROM {atom} AS x WHERE {match} ORDER BY x.rid DESC LIMIT -r.mult LOOP\n"
            "{leave}"
            "            PERFORM {forget}(victim);\n"
            "            DELETE FROM {atom} AS x WHERE x.rid = victim;\n"
            "            gone := gone + 1;\n"
            "        END LOOP;\n"
            "    END LOOP;").format(delta=names(f"{k}_delta"), atom=names(k), match=match or sql.SQL("true"),
                                    leave=leave, forget=o["forget"]))
        unit_keys = _unit_keys(shape, unit.number)
        kids = []
        for edge in shape.edges:
            if unit.number in edge.units:
                args = sql.SQL(", ").join(
                    sql.SQL("u.{}").format(_q(f"key_{unit_keys.index(v)}")) if merged
                    else sql.SQL("r.{}").format(_key_column(atom.variables, v)) for v in edge.key)
                kids.append(sql.SQL("{}({})").format(names(f"kid_{edge.number}"), args))
            else:
                kids.append(sql.SQL("NULL"))
        parts = [sql.SQL("NULL") for _ in cq.atoms]
        filters = _atom_filters(view, i, "d")
        if merged:
            for a in unit.atoms:
                parts[a] = sql.SQL("new_rid") if a == i else sql.SQL("u.{}").format(_q(f"rid_{a}"))
            body = sql.SQL(
                "            FOR u IN {query} LOOP\n"
                "                unit_rid := nextval({seq});\n"
                "                kids := ARRAY[{kids}]::bigint[];\n"
                "                PERFORM {row_add}({unit}, unit_rid, kids, ARRAY[{parts}]::bigint[]);\n"
                "                INSERT INTO {part} SELECT p, unit_rid FROM unnest(ARRAY[{parts}]::bigint[]) AS p WHERE p IS NOT NULL;\n"
                "                moved := moved + {index_insert}({unit}, unit_rid, kids);\n"
                "                PERFORM {reservoir_batch}({unit}, unit_rid, kids);\n"
                "            END LOOP;\n").format(
                query=_unit_rows_query(view, names, shape, i),
                seq=sql.Literal(f"{names.schema}.rid_seq"), kids=sql.SQL(", ").join(kids), row_add=o["row_add"],
                unit=sql.Literal(unit.number), parts=sql.SQL(", ").join(parts), part=o["part"],
                index_insert=o["index_insert"], reservoir_batch=o["reservoir_batch"])
        else:
            parts[i] = sql.SQL("new_rid")
            body = sql.SQL(
                "            kids := ARRAY[{kids}]::bigint[];\n"
                "            PERFORM {row_add}({unit}, new_rid, kids, ARRAY[{parts}]::bigint[]);\n"
                "            moved := moved + {index_insert}({unit}, new_rid, kids);\n"
                "            PERFORM {reservoir_batch}({unit}, new_rid, kids);\n").format(
                kids=sql.SQL(", ").join(kids), row_add=o["row_add"], unit=sql.Literal(unit.number),
                parts=sql.SQL(", ").join(parts), index_insert=o["index_insert"], reservoir_batch=o["reservoir_batch"])
        inserts.append(sql.SQL(
            "    FOR r IN SELECT * FROM {delta} AS d WHERE d.mult > 0{filters} ORDER BY {order} LOOP\n"
            "        FOR i IN 1..r.mult LOOP\n"
            "            new_rid := nextval({seq});\n"
            "            INSERT INTO {atom} VALUES (new_rid{sep}{values});\n"
            "{body}"
            "        END LOOP;\n"
            "    END LOOP;").format(
            delta=names(f"{k}_delta"), filters=sql.SQL("").join(sql.SQL(" AND {}").format(f) for f in filters),
            order=sql.SQL(", ").join([sql.SQL(str(j + 1)) for j in range(len(cap.columns))] or [sql.SQL("d.mult")]),  # type: ignore[arg-type]
            seq=sql.Literal(f"{names.schema}.rid_seq"), atom=names(k),
            sep=sql.SQL(", ") if cap.columns else sql.SQL(""),
            values=sql.SQL(", ").join(sql.SQL("r.{}").format(_q(c.name)) for c in cap.columns), body=body))
        clears.append(sql.SQL("    DELETE FROM {};").format(names(f"{k}_delta")))
    return sql.SQL(
        "CREATE FUNCTION {f}() RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$\n"
        "DECLARE\n    r record;\n    u record;\n    victim bigint;\n    unit_rid bigint;\n    gone bigint := 0;\n"
        "    moved bigint := 0;\n    new_rid bigint;\n    kids bigint[];\n    i bigint;\nBEGIN\n{deletes}\n"
        "    IF gone > 0 THEN\n        PERFORM {repair}();\n    END IF;\n{inserts}\n{clears}\n"
        "    UPDATE {state} SET moves = moves + moved WHERE singleton;\n"
        "END;\n$pgivm$; COMMENT ON FUNCTION {f}() IS {comment}").format(
        f=o["apply_pending"], deletes=sql.SQL("\n").join(deletes), repair=o["repair"],
        inserts=sql.SQL("\n").join(inserts), clears=sql.SQL("\n").join(clears), state=o["state"],
        comment=sql.Literal("the statement's net change of every atom: deletes (and one repair), then inserts"))


def _per_atom_functions(view: ResolvedView, names: Names, shape: Layout) -> list[sql.Composable]:
    """The entry points the capture layer calls: apply_batch_K, clear_K after TRUNCATE, and restart.
    The capture layer fills the change of every atom of a table before it calls the last atom's
    apply_batch (also when TRUNCATE takes a partition's rows away, atom by atom): that call does the
    whole statement, deletes first; the other atoms' calls have nothing to do."""
    cq: ConjunctiveQuery = view.query
    out: list[sql.Composable] = []
    for i, atom in enumerate(cq.atoms):
        k = _atom_name(i)
        last = cq.atoms_of(atom.table)[-1].alias == atom.alias
        body = sql.SQL("SELECT {}()").format(names("apply_pending")) if last else sql.SQL("SELECT")
        out.append(sql.SQL(
            "CREATE FUNCTION {f}() RETURNS void LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp "
            "AS $pgivm$ {body} $pgivm$").format(f=names(f"apply_batch_{k}"), body=body))
        out.append(sql.SQL(
            "CREATE FUNCTION {f}() RETURNS void LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp "
            "AS $pgivm$ DELETE FROM {atom}; DELETE FROM {part} WHERE rid IN (SELECT rid FROM {rows} WHERE unit = {u}); "
            "DELETE FROM {rows} WHERE unit = {u} $pgivm$").format(
            f=names(f"clear_{k}"), atom=names(k), part=names("part"), rows=names("rows"),
            u=sql.Literal(shape.unit_of(i).number)))
    return out


def plan(view: ResolvedView, name: str, view_schema: str, params: dict[str, Any]) -> InstallPlan:
    cq: ConjunctiveQuery = view.query
    shape = shape_for(view, params)
    params["merge"] = shape.merges  # "auto" resolved once: the catalog keeps the groups chosen
    size = params.get("size")
    if size is None:
        raise PgivmError("a sample view needs its size: --size K", "e.g. pgivm create NAME --strategy sample --size 1000 --sql ...")
    names = Names.of(name)
    seed = params.get("seed")
    if seed is None:
        seed = secrets.randbits(62)
    objects = _objects(names, shape)
    state_values = {**objects, "schema": names.schema_id,
                    "schema_comment": sql.Literal(f"pgivm state of view {name} (system sample): {cq.sql}")}
    functions: list[sql.Composable] = [
        *_layouts(view, names), render(__name__, "10_index.sql", objects), render(__name__, "20_reservoir.sql", objects),
        _pred_function(view, names), *_kid_functions(view, names, shape), _apply_pending(view, names, shape),
        *_per_atom_functions(view, names, shape), render(__name__, "30_restart.sql", objects)]
    for table in cq.tables:
        functions.append(capture_functions_plan(
            names, view, name, table, "reservoir sampling",
            atoms=[capture_atom(view, [a.alias for a in cq.atoms].index(a.alias)) for a in cq.atoms_of(table)],
            letters=_letters(view, table), always_batch=True))
    build: list[sql.Composable] = [
        sql.SQL("INSERT INTO {} (k, seed, rng) VALUES ({}, {}, {})").format(
            names("state"), sql.Literal(size), sql.Literal(seed), sql.Literal(_splitmix(seed)))]
    # The rows already there go through the same path as later inserts, atom after atom.
    for i, atom in enumerate(cq.atoms):
        cap = capture_atom(view, i)
        base = view.base_of(atom.table)
        cols = [c for c in cap.columns]
        build.append(sql.SQL(
            "INSERT INTO {delta} ({cols}{sep}mult) SELECT {values}{sep}count(*) FROM {table} AS b WHERE {guard}{keys} "
            "GROUP BY {groups}").format(
            delta=names(f"{_atom_name(i)}_delta"), cols=sql.SQL(", ").join(_q(c.name) for c in cols),
            sep=sql.SQL(", ") if cols else sql.SQL(""), values=sql.SQL(", ").join(cap.read("b")), table=base.ident,
            guard=base.guard("b"),
            keys=sql.SQL("").join(sql.SQL(" AND b.{} IS NOT NULL").format(_q(c.column)) for c in cols if c.key),
            groups=sql.SQL(", ").join([sql.SQL(str(j + 1)) for j in range(len(cols))] or [sql.SQL("()")])))  # type: ignore[arg-type]
        build.append(sql.SQL("SELECT {}()").format(names("apply_pending")))
    build.append(sql.SQL("ANALYZE {}").format(names("cnt")))
    capture_plan: list[sql.Composable] = []
    for table in cq.tables:
        capture_plan += capture.triggers_on(view.base_of(table), capture_triggers(view, name, table))
    expose = [
        sql.SQL("CREATE OR REPLACE VIEW {result} AS SELECT filled AS count FROM {state}; COMMENT ON VIEW {result} IS {c}").format(
            result=names("result"), state=names("state"), c=sql.Literal("pgivm: the number of sampled join results")),
        sql.SQL("CREATE OR REPLACE VIEW {view} AS {query}; COMMENT ON VIEW {view} IS {comment}").format(
            view=sql.Identifier(view_schema, name), query=sample_query(view, names),
            comment=sql.Literal(f"pgivm: a uniform sample of at most {size} results, kept by reservoir sampling over "
                                f"joins, state in schema {names.schema}. Definition: {cq.sql}")),
        revoke_plan(names),
    ]
    return InstallPlan.of(state=[render(__name__, "00_state.sql", state_values), *_state_ddl(view, names, shape)],
                          functions=functions, build=build, capture=capture_plan, expose=expose)


def _select_list(cq: ConjunctiveQuery) -> sql.Composable:
    """The selected columns, read from the atom tables (joined under their own names, ``_joined``)."""
    return sql.SQL(", ").join(
        sql.SQL("{} AS {}").format(_at(cq, o.column.alias, o.column.column), _q(o.name))
        for o in cq.outputs if isinstance(o, GroupColumn))


def _joined(cq: ConjunctiveQuery, names: Names, source: str) -> sql.Composable:
    """Each atom table joined on the row id a sampled result (``source``) names."""
    return sql.SQL(" ").join(
        sql.SQL("JOIN {} AS {} ON {}.rid = {}.rids[{}]").format(
            names(_atom_name(i)), _q(_atom_name(i)), _q(_atom_name(i)), sql.SQL(source), sql.Literal(i + 1))  # type: ignore[arg-type]
        for i in range(len(cq.atoms)))


def sample_query(view: ResolvedView, names: Names) -> sql.Composable:
    """The sample as the view shows it: the selected columns of each sampled result's rows."""
    cq: ConjunctiveQuery = view.query
    return sql.SQL("SELECT {items} FROM {sample} AS pgivm_sampled {joins} ORDER BY pgivm_sampled.slot").format(
        items=_select_list(cq), sample=names("sample"), joins=_joined(cq, names, "pgivm_sampled"))


# --- status, verify, explain, fresh ------------------------------------------------------------------


def _state(conn: psycopg.Connection, name: str) -> dict[str, Any]:
    from psycopg.rows import dict_row

    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(sql.SQL("SELECT * FROM {}").format(Names.of(name)("state")), prepare=False).fetchone()
    assert row is not None
    return dict(row)


def join_size_query(names: Names, shape: Layout) -> sql.Composable:
    """|Q| exactly, bottom-up over tree 0 (Yannakakis' counting pass over the stored unit rows):
    O(N), without the conditions across tables. The index itself keeps only padded counts: an
    exact count under single-row inserts costs Ω(√N) per insert for a non-hierarchical join such
    as line-3 (Berkholz, Keppeler, Schweikardt, PODS 2017, under the OMv conjecture), which is
    what the paper's rounding avoids."""
    by_id = {n.node: n for n in shape.nodes}

    def counted(node_id: int) -> sql.Composable:
        node = by_id[node_id]
        product: list[sql.Composable] = [sql.SQL("1::numeric")]
        joins: list[sql.Composable] = []
        for j, (child, edge) in enumerate(zip(node.children, node.cedges)):
            alias = sql.Identifier(f"c{node_id}_{j}")
            joins.append(sql.SQL("JOIN ({q}) AS {a} ON {a}.kid = r.kids[{e}]").format(
                q=counted(child), a=alias, e=sql.Literal(edge + 1)))
            product.append(sql.SQL("{}.n").format(alias))
        key = sql.SQL("r.kids[{}]").format(sql.Literal(node.pedge + 1)) if node.pedge is not None else sql.SQL("0")
        return sql.SQL("SELECT {key} AS kid, sum({product}) AS n FROM {rows} AS r {joins} WHERE r.unit = {unit} "
                       "GROUP BY 1").format(key=key, product=sql.SQL(" * ").join(product), rows=names("rows"),
                                            joins=sql.SQL(" ").join(joins), unit=sql.Literal(node.unit))

    return sql.SQL("SELECT coalesce(sum(n), 0) FROM ({}) AS total").format(counted(0))


def status(conn: psycopg.Connection, name: str) -> SystemStatus:
    from pgivm.catalog import views as catalog

    record = catalog.get(conn, name)
    cq: ConjunctiveQuery = record.query
    shape = _stored_shape(conn, name, cq)
    names = Names.of(name)
    st = _state(conn, name)
    join_size = conn.execute(join_size_query(names, shape)).fetchone()[0]  # type: ignore[index]
    sizes = {t: conn.execute(sql.SQL("SELECT count(*) FROM {}").format(names(t))).fetchone()[0]  # type: ignore[index]
             for t in ("rows", "part", "grp", "gmem", "member", "cnt", "bucket", "bsize")}
    bound = conn.execute(sql.SQL("SELECT 2::numeric ^ ct FROM {} WHERE node = 0 AND kid = 0").format(
        names("cnt"))).fetchone()
    figures = {"k": st["k"], "sampled": st["filled"], "join_size": int(join_size),
               "replacements": st["replacements"], "batches": st["batches"], "positions_retrieved": st["retrieved"],
               "refilled": st["refilled"], "moves": st["moves"], "index_rows": sum(sizes.values()),
               "merged": shape.merges, "grouped_nodes": sum(n.grouped for n in shape.nodes), "groups": sizes["grp"],
               "seed": st["seed"], "updates_applied": st["updates_applied"]}
    labels = {"join_size": "|Q| (join size, counted over the stored rows"
                           + (", before the conditions across tables)" if cq.predicates else ")"),
              "positions_retrieved": "positions retrieved", "index_rows": "index rows",
              "moves": "index entries moved (Alg. 7 lines 9-11)", "merged": "merged on foreign keys",
              "grouped_nodes": "grouped nodes"}
    section = Section("index", ["table", "rows"], [[t, n] for t, n in sizes.items()]
                      + [["J0 positions (c̃nt at tree 0's root)", int(bound[0]) if bound else 0]])
    return SystemStatus(figures, [section], labels, headline=("k", "sampled", "join_size"))


_CHECKS = "40_checks.sql"


def verify(conn: psycopg.Connection, view: ResolvedView, name: str, strict: bool = False) -> list[CheckFailure]:
    """The index against its definition recomputed from the stored rows, the stored rows against
    the base tables, and the sample against a plain SQL count of the join."""
    from pgivm.systems.common import checks

    cq: ConjunctiveQuery = view.query
    shape = _stored_shape(conn, name, cq)
    names = Names.of(name)
    objects = _objects(names, shape)
    failures = run_checks(conn, checks(__name__, _CHECKS, objects))
    # A unit's rows are exactly the join of its atoms' stored rows (each combination once; for a
    # one-atom unit, its atom's rows).
    for unit in shape.units:
        joined = sql.SQL("SELECT ARRAY[{parts}]::bigint[] AS parts FROM {tables} WHERE {cond}").format(
            parts=sql.SQL(", ").join(sql.SQL("{}.rid").format(_q(_atom_name(a))) if a in unit.atoms else sql.SQL("NULL")
                                     for a in range(len(cq.atoms))),
            tables=sql.SQL(", ").join(sql.SQL("{} AS {}").format(names(_atom_name(a)), _q(_atom_name(a)))
                                      for a in unit.atoms),
            cond=sql.SQL(" AND ").join(_unit_conditions(cq, unit.atoms) or [sql.SQL("true")]))
        stored = sql.SQL("SELECT parts FROM {} WHERE unit = {}").format(names("rows"), sql.Literal(unit.number))
        diff = conn.execute(sql.SQL("({s} EXCEPT ALL {j}) UNION ALL ({j} EXCEPT ALL {s})").format(s=stored, j=joined)).fetchall()
        if diff:
            failures.append(CheckFailure(f"unit_{unit.number}.rows_are_the_join_of_its_atoms", [tuple(r) for r in diff[:5]]))
    for i, atom in enumerate(cq.atoms):
        cap = capture_atom(view, i)
        base = view.base_of(atom.table)
        cols = sql.SQL(", ").join([_q(c.name) for c in cap.columns] or [sql.SQL("1")])  # type: ignore[list-item]
        filters = _atom_filters(view, i, "b", stored=False)
        keys = [sql.SQL("b.{} IS NOT NULL").format(_q(c.column)) for c in cap.columns if c.key]
        source = sql.SQL("SELECT {values} FROM {table} AS b WHERE {cond}").format(
            values=sql.SQL(", ").join([sql.SQL("{} AS {}").format(v, _q(c.name)) for v, c in zip(cap.read("b"), cap.columns)]
                                      or [sql.SQL("1")]),  # type: ignore[list-item]
            table=base.ident, cond=sql.SQL(" AND ").join([base.guard("b"), *filters, *keys]))
        query = sql.SQL("(SELECT {c} FROM {stored} EXCEPT ALL SELECT {c} FROM ({s}) AS x) UNION ALL "
                        "(SELECT {c} FROM ({s}) AS x EXCEPT ALL SELECT {c} FROM {stored})").format(
            c=cols, stored=names(_atom_name(i)), s=source)
        rows = conn.execute(query).fetchall()
        if rows:
            failures.append(CheckFailure(f"{_atom_name(i)}.equals_base_table", [tuple(r) for r in rows[:5]]))
    # Each sampled result is a result of the join (its rows' values satisfy every condition).
    cond = from_where(view, sources={a.alias: names(_atom_name(i)) for i, a in enumerate(cq.atoms)},
                      source_column=lambda ref: capture.stored_column(cq.atom(ref.alias).columns, ref.column))
    ids = sql.SQL(" AND ").join(sql.SQL("{}.rid = pgivm_sampled.rids[{}]").format(_q(a.alias), sql.Literal(i + 1))
                                for i, a in enumerate(cq.atoms))
    bad = conn.execute(sql.SQL("SELECT pgivm_sampled.slot FROM {sample} AS pgivm_sampled "
                               "WHERE NOT EXISTS (SELECT 1 {cond} AND {ids})").format(
        sample=names("sample"), cond=cond, ids=ids)).fetchall()
    if bad:
        failures.append(CheckFailure("sample.results_exist", [tuple(r) for r in bad[:5]]))
    st = _state(conn, name)
    total = conn.execute(sql.SQL("SELECT count(*) {}").format(from_where(view))).fetchone()[0]  # type: ignore[index]
    stored = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(names("sample"))).fetchone()[0]  # type: ignore[index]
    if not (stored == st["filled"] == min(st["k"], total)):
        failures.append(CheckFailure("sample.size_is_min_k_join", [(stored, st["filled"], st["k"], total)]))
    if (st["w"] is None) != (total < st["k"]):
        failures.append(CheckFailure("reservoir.full_iff_join_has_k", [(st["w"], total, st["k"])]))
    return failures


def explain_lines(conn: psycopg.Connection, view: ResolvedView, name: str, params: dict[str, Any]) -> list[str]:
    shape = _stored_shape(conn, name, view.query)
    merged = [shape.label(u.number) for u in shape.units if len(u.atoms) > 1]
    lines = ["merged on foreign keys (one node each): " + ("; ".join(merged) if merged else "none"),
             "grouped nodes (rows with equal keys as one entry): "
             + (str(sum(n.grouped for n in shape.nodes)) if params.get("grouping") else "grouping off"),
             "join tree edges: " + ("; ".join(f"{shape.label(e.units[0])} - {shape.label(e.units[1])} on "
                                             f"({', '.join(e.key)})" for e in shape.edges) or "none")]
    for root in range(len(shape.units)):
        lines.append(f"tree rooted at {shape.label(root)} (batches of rows inserted into it"
                     + ("; its root's entries are J0, the whole join" if root == 0 else "") + "):")
        lines += ["  " + line for line in shape.tree_lines(root)]
    return lines


def _fresh(conn: psycopg.Connection, name: str, values: dict[str, Any]) -> dict[str, Any]:
    from pgivm.catalog import views as catalog

    record = catalog.get(conn, name)
    cq: ConjunctiveQuery = record.query
    names = Names.of(name)
    seed = values.get("seed") or secrets.randbits(62)
    query = sql.SQL("SELECT pgivm_drawn.draw, pgivm_drawn.tries, {items} FROM {fresh}({n}, {seed}) AS pgivm_drawn {joins} "
                    "ORDER BY pgivm_drawn.draw").format(
        items=_select_list(cq), fresh=names("fresh"), n=sql.Literal(values["fresh"]),
        seed=sql.Literal(_splitmix(seed)), joins=_joined(cq, names, "pgivm_drawn"))
    cur = conn.execute(query)
    rows = cur.fetchall()
    columns = [d.name for d in cur.description or []]
    tries = sum(r[1] for r in rows)
    return {"columns": columns[2:], "rows": [tuple(r[2:]) for r in rows], "draws": len(rows),
            "positions_tried": tries, "fresh_seed": seed}


def compare_result(conn: psycopg.Connection, view: ResolvedView, name: str) -> tuple[int, list[tuple[Any, ...]]]:
    """What the view shows against PostgreSQL's own result of the query: min(k, |Q|) rows, each
    one of the query's rows (as a bag: a result sampled twice would need two copies)."""
    from pgivm.query.plain import plain_query

    shown = sql.Identifier(_view_schema(conn, name), name)
    k = _state(conn, name)["k"]
    total = conn.execute(sql.SQL("SELECT count(*) {}").format(from_where(view))).fetchone()[0]  # type: ignore[index]
    extra = conn.execute(sql.SQL("SELECT * FROM {} EXCEPT ALL {}").format(shown, plain_query(view)),
                         prepare=False).fetchall()
    return min(k, int(total)), [("not in the join", *r) for r in extra]


def _view_schema(conn: psycopg.Connection, name: str) -> str:
    from pgivm.catalog import views as catalog

    return catalog.get(conn, name).view_schema


SAMPLE = Action("sample", "draw independent uniform join results from a sample view's index, with replacement "
                "(the maintained sample is not touched)", (FRESH, FRESH_SEED), _fresh, locks_state=False)

SYSTEM = FunctionSystem(
    name=NAME,
    summary="reservoir sampling over joins: a uniform sample of K results of an acyclic join, kept current",
    accepts=accepts, model=lambda cq: cq, plan=plan, capture_triggers=capture_triggers,
    status=status, verify=verify, options=(SIZE, SEED, MERGE, GROUPING), actions=(SAMPLE,), explain=explain_lines,
    compare_result=compare_result, deferred_atoms=deferred_atoms,
)
