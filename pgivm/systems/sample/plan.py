"""The sample system's install SQL: the state (typed rows, the index, the reservoir), the
functions that apply a statement's pending changes (Algorithms 4, 5 and 7 of the paper), the
capture of each atom's changes, and the queries that read the sampled rows back."""

from __future__ import annotations

import secrets
from typing import Any

import psycopg
from psycopg import sql

from pgivm import capture
from pgivm.errors import PgivmError
from pgivm.query.analysis.decomposition import decompose
from pgivm.query.cq import ConjunctiveQuery, GroupColumn
from pgivm.query.model import TableRef
from pgivm.query.resolve import ResolvedView, collate
from pgivm.systems.base import InstallPlan
from pgivm.systems.common import Names, capture_functions_plan, render, revoke_plan, state_schema_for
from pgivm.systems.sample.layout import Layout, foreign_key_units, layout, parse_merges
from pgivm.systems.sample.retrieve import retrieve_functions

# --- names -------------------------------------------------------------------------------------------

_TABLES = ("state", "node", "rows", "part", "grp", "gmem", "member", "cnt", "bucket", "bsize", "sample")
_FUNCTIONS = ("rng_next", "unit", "rand_bits", "ceil_log2", "tuple_exp", "propagate", "entry_move", "index_insert",
              "index_delete", "retrieve_key", "retrieve_tuple", "skip", "pred", "reservoir_batch", "repair", "fresh",
              "apply_pending", "restart")


def objects_of(names: Names, shape: Layout) -> dict[str, sql.Composable]:
    objects: dict[str, sql.Composable] = {n: names(n) for n in (*_TABLES, *_FUNCTIONS)}
    objects["rid_seq"] = names("rid_seq")
    objects["rid_seq_text"] = sql.Literal(names("rid_seq").as_string(None))  # quoted: a view named "Weird View"
    objects["kid_seq"] = names("kid_seq")
    objects["atoms"] = sql.Literal(shape.atoms)
    objects["units"] = sql.Literal(len(shape.units))
    return objects


def shape_for(view: ResolvedView, params: dict[str, Any]) -> Layout:
    """The view's units and trees. ``merge`` "auto" asks the tables' unique keys (at create; the
    catalog then records the groups chosen, so later reinstalls build the same trees whatever
    keys the tables have by then). A cyclic join is sampled through a hypertree decomposition
    (§5): its bags, unions of the units merged on foreign keys ("auto") or of single atoms
    ("none"), become the units (``pgivm.query.analysis.decomposition``)."""
    cq: ConjunctiveQuery = view.query
    grouping = bool(params.get("grouping", False))
    merge = str(params.get("merge") or "none").strip()
    if merge in ("auto", "none"):
        blocks = foreign_key_units(cq, view.unique_keys) if merge == "auto" else [[a] for a in range(len(cq.atoms))]
        shape = layout(cq, blocks, grouping)
        if shape is None and cq.analysis.acyclic:  # the merges would close a cycle: none
            shape = layout(cq, None, grouping)
        elif shape is None:  # a cyclic join: bags of a decomposition over the blocks (or single atoms)
            bags = decompose(cq, blocks) or cq.analysis.decomposition
            shape = layout(cq, bags.bags, grouping) if bags is not None else None
    else:
        shape = layout(cq, parse_merges(cq, merge), grouping)
        if shape is None:
            raise PgivmError(f"--merge {merge}: the groups do not leave an acyclic join of connected groups",
                             "merge only tables that join each other, and keep the query acyclic; or --merge auto")
    assert shape is not None  # accepts() saw an acyclic, connected query, or a cyclic one it decomposes
    return shape


def stored_shape(conn: psycopg.Connection, name: str, cq: ConjunctiveQuery) -> Layout:
    """The trees an installed view was built with (its catalog parameters name its merged groups)."""
    from pgivm.catalog import views as catalog

    params = dict(catalog.get(conn, name).params)
    merge = str(params.get("merge") or "none")
    shape = layout(cq, None if merge in ("none", "auto") else parse_merges(cq, merge), bool(params.get("grouping")))
    assert shape is not None
    return shape





def atom_name(i: int) -> str:
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
    return capture.CaptureAtom(atom_name(index), tuple(columns))


def _stored(cq: ConjunctiveQuery, alias: str, column: str) -> sql.Identifier:
    """A base column's name in the atom's stored rows (its atom table, its _delta)."""
    return quoted(capture.stored_column(cq.atom(alias).columns, column))


def _alias(cq: ConjunctiveQuery, alias: str) -> sql.Identifier:
    """What an atom's stored rows are called in this module's queries: the atom table's own name
    (a1, a2, ...), never the query's alias, which may be named like a variable of the function
    the query runs in (r and u, x of pred) or like another alias of the query (pgivm_sampled)."""
    return quoted(atom_name([a.alias for a in cq.atoms].index(alias)))


def _at(cq: ConjunctiveQuery, alias: str, column: str) -> sql.Composable:
    """A base column of an atom, read from its stored rows (``_alias``)."""
    return sql.SQL("{}.{}").format(_alias(cq, alias), _stored(cq, alias, column))


def _letters(view: ResolvedView, table: TableRef) -> str:
    aliases = [a.alias for a in view.query.atoms]
    return "".join(atom_name(aliases.index(a.alias)) for a in view.query.atoms_of(table))


def deferred_atoms(view: ResolvedView, name: str, params: dict[str, Any]) -> dict[TableRef, list[capture.CaptureAtom]]:
    aliases = [a.alias for a in view.query.atoms]
    return {table: [capture_atom(view, aliases.index(a.alias)) for a in view.query.atoms_of(table)]
            for table in view.query.tables}


def capture_triggers(view: ResolvedView, name: str, table: TableRef) -> list[capture.CaptureTrigger]:
    return capture.view_triggers(name, state_schema_for(name), _letters(view, table))


# --- generated SQL (per view: typed rows, key dictionaries, conditions) -----------------------------


def quoted(name: str) -> sql.Identifier:
    return sql.Identifier(name)


def _key_column(atom_variables: tuple[str, ...], variable: str) -> sql.Identifier:
    """The stored column of an atom that carries a variable (its first)."""
    return quoted(capture.stored_name(atom_variables.index(variable)))


def atom_filters(view: ResolvedView, index: int, row: str, stored: bool = True) -> list[sql.Composable]:
    """The conditions on one atom's rows alone: its constant filters, and columns of the atom that
    carry one variable (``r.a = s.b AND s.b = r.c`` selects r.a = r.c). ``row`` holds the atom's
    stored rows (or, not ``stored``, the base table's)."""
    cq: ConjunctiveQuery = view.query
    atom = cq.atoms[index]

    def at(column: str) -> sql.Composable:
        name = _stored(cq, atom.alias, column) if stored else quoted(column)
        return sql.SQL("{}.{}").format(sql.SQL(row), name)  # type: ignore[arg-type]  # an alias of pgivm's

    out: list[sql.Composable] = []
    for f in cq.filters:
        if f.column.alias == atom.alias:
            out.append(sql.SQL("{} {} {}").format(at(f.column.column), sql.SQL(f.op), f.literal()))  # type: ignore[arg-type]
    out += [c.render(lambda ref: at(ref.column)) for c in cq.conditions if c.alias == atom.alias]
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
        k = atom_name(i)
        cap = capture_atom(view, i)
        cols = [sql.SQL("{} {}").format(quoted(c.name), sql.SQL(c.target_type)) for c in cap.columns]  # type: ignore[arg-type]
        out.append(sql.SQL("CREATE TABLE {t} (rid bigint PRIMARY KEY{sep}{cols}); COMMENT ON TABLE {t} IS {c}").format(
            t=names(k), sep=sql.SQL(", ") if cols else sql.SQL(""), cols=sql.SQL(", ").join(cols),
            c=sql.Literal(f"the rows of atom {atom.alias} ({atom.table}) the sample can use, each with its row id")))
        keys = [c.name for c in cap.columns if c.key]
        if keys:
            out.append(sql.SQL("CREATE INDEX ON {} ({})").format(names(k), sql.SQL(", ").join(quoted(c) for c in keys)))
        out.append(sql.SQL("CREATE TABLE {t} ({cols}{sep}mult bigint NOT NULL)").format(
            t=names(f"{k}_delta"), cols=sql.SQL(", ").join(cols), sep=sql.SQL(", ") if cols else sql.SQL("")))
    for edge in shape.edges:
        cols = [sql.SQL("{} {} NOT NULL").format(quoted(f"k{j}"), sql.SQL(view.variable_types[v]))  # type: ignore[arg-type]
                for j, v in enumerate(edge.key)]
        out.append(sql.SQL(
            "CREATE TABLE {t} (kid bigint PRIMARY KEY DEFAULT nextval({seq}), {cols}, UNIQUE ({keys})); "
            "COMMENT ON TABLE {t} IS {c}").format(
            t=names(f"dict_{edge.number}"), seq=sql.Literal(names("kid_seq").as_string(None)), cols=sql.SQL(", ").join(cols),
            keys=sql.SQL(", ").join(quoted(f"k{j}") for j in range(len(edge.key))),
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
        params = sql.SQL(", ").join(sql.SQL("{} {}").format(quoted(f"v{j}"), sql.SQL(view.variable_types[v]))  # type: ignore[arg-type]
                                    for j, v in enumerate(edge.key))
        match = sql.SQL(" AND ").join(sql.SQL("{} = {}").format(quoted(f"k{j}"), quoted(f"v{j}")) for j in range(len(edge.key)))
        out.append(sql.SQL(
            "CREATE FUNCTION {f}({params}) RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$\n"
            "DECLARE k bigint;\nBEGIN\n"
            "    SELECT kid INTO k FROM {t} WHERE {match};\n"
            "    IF NOT FOUND THEN\n        INSERT INTO {t} ({cols}) VALUES ({vals}) RETURNING kid INTO k;\n    END IF;\n"
            "    RETURN k;\nEND;\n$pgivm$").format(
            f=names(f"kid_{edge.number}"), params=params, t=names(f"dict_{edge.number}"), match=match,
            cols=sql.SQL(", ").join(quoted(f"k{j}") for j in range(len(edge.key))),
            vals=sql.SQL(", ").join(quoted(f"v{j}") for j in range(len(edge.key)))))
    return out


def _pred_function(view: ResolvedView, names: Names) -> sql.Composable:
    """θ of the predicate reservoir beyond 'not a dummy': the view's conditions across tables."""
    cq: ConjunctiveQuery = view.query
    across = [c for c in cq.conditions if c.alias is None]
    if not cq.predicates and not across:
        body: sql.Composable = sql.SQL("SELECT true")
    else:
        aliases = [a.alias for a in cq.atoms]
        used = sorted({aliases.index(c.alias) for p in cq.predicates for c in (p.left, p.right)}
                      | {aliases.index(c.alias) for cond in across for c in cond.columns})
        conditions = [sql.SQL("{} {} {}").format(
            _at(cq, p.left.alias, p.left.column), sql.SQL(p.op), _at(cq, p.right.alias, p.right.column))  # type: ignore[arg-type]
            for p in cq.predicates]
        conditions += [cond.render(lambda ref: _at(cq, ref.alias, ref.column)) for cond in across]
        body = sql.SQL("SELECT coalesce((SELECT {cond} FROM {tables} WHERE {ids}), false)").format(
            cond=sql.SQL(" AND ").join(conditions),
            tables=sql.SQL(", ").join(sql.SQL("{} AS {}").format(names(atom_name(i)), quoted(atom_name(i))) for i in used),
            ids=sql.SQL(" AND ").join(sql.SQL("{}.rid = x[{}]").format(quoted(atom_name(i)), sql.Literal(i + 1)) for i in used))
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
    conditions = unit_conditions(cq, tuple(others), value)
    return sql.SQL("SELECT {items} FROM {tables} WHERE {cond} ORDER BY {order}").format(
        items=sql.SQL(", ").join(
            [sql.SQL("{}.rid AS {}").format(quoted(atom_name(a)), quoted(f"rid_{a}")) for a in others]
            + [sql.SQL("{} AS {}").format(value[v], quoted(f"key_{j}")) for j, v in enumerate(_unit_keys(shape, unit.number))]),
        tables=sql.SQL(", ").join(sql.SQL("{} AS {}").format(names(atom_name(a)), quoted(atom_name(a))) for a in others),
        cond=sql.SQL(" AND ").join(conditions or [sql.SQL("true")]),
        order=sql.SQL(", ").join(sql.SQL("{}.rid").format(quoted(atom_name(a))) for a in others))


def unit_conditions(cq: ConjunctiveQuery, atoms: tuple[int, ...],
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
    batch of the reservoir each. The state row is read once after the deletes and written once at
    the end (the batches pass the reservoir's variables along in ``st``); each unit's root in its
    own tree (the node its batches start from) is written into the call, not looked up."""
    cq: ConjunctiveQuery = view.query
    o = objects_of(names, shape)
    deletes: list[sql.Composable] = []
    inserts: list[sql.Composable] = []
    clears: list[sql.Composable] = []
    for i, atom in enumerate(cq.atoms):
        k = atom_name(i)
        cap = capture_atom(view, i)
        unit = shape.unit_of(i)
        merged = len(unit.atoms) > 1
        match = sql.SQL(" AND ").join(
            sql.SQL("x.{c} = r.{c}" if c.key else "x.{c} IS NOT DISTINCT FROM r.{c}").format(c=quoted(c.name)) for c in cap.columns)
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
            "            DELETE FROM {sample} WHERE rids @> ARRAY[victim];\n"
            "            DELETE FROM {atom} AS x WHERE x.rid = victim;\n"
            "            gone := gone + 1;\n"
            "        END LOOP;\n"
            "    END LOOP;").format(delta=names(f"{k}_delta"), atom=names(k), match=match or sql.SQL("true"),
                                    leave=leave, sample=o["sample"]))
        unit_keys = _unit_keys(shape, unit.number)
        kids = []
        for edge in shape.edges:
            if unit.number in edge.units:
                args = sql.SQL(", ").join(
                    sql.SQL("u.{}").format(quoted(f"key_{unit_keys.index(v)}")) if merged
                    else sql.SQL("r.{}").format(_key_column(atom.variables, v)) for v in edge.key)
                kids.append(sql.SQL("{}({})").format(names(f"kid_{edge.number}"), args))
            else:
                kids.append(sql.SQL("NULL"))
        root = next(n for n in shape.nodes if n.tree == unit.number and n.parent is None)
        batch = sql.SQL("st := {reservoir_batch}({root}, ARRAY[{children}]::int[], ARRAY[{cedges}]::int[], ").format(
            reservoir_batch=o["reservoir_batch"], root=sql.Literal(root.node),
            children=sql.SQL(", ").join(sql.Literal(c) for c in root.children),
            cedges=sql.SQL(", ").join(sql.Literal(c) for c in root.cedges))
        parts = [sql.SQL("NULL") for _ in cq.atoms]
        filters = atom_filters(view, i, "d")
        if merged:
            for a in unit.atoms:
                parts[a] = sql.SQL("new_rid") if a == i else sql.SQL("u.{}").format(quoted(f"rid_{a}"))
            body = sql.SQL(
                "            FOR u IN {query} LOOP\n"
                "                unit_rid := nextval({seq});\n"
                "                kids := ARRAY[{kids}]::bigint[];\n"
                "                INSERT INTO {rows} VALUES (unit_rid, {unit}, kids, ARRAY[{parts}]::bigint[]);\n"
                "                INSERT INTO {part} SELECT p, unit_rid FROM unnest(ARRAY[{parts}]::bigint[]) AS p WHERE p IS NOT NULL;\n"
                "                moved := moved + {index_insert}({unit}, unit_rid, kids);\n"
                "                {batch}unit_rid, kids, st);\n"
                "            END LOOP;\n").format(
                query=_unit_rows_query(view, names, shape, i),
                seq=sql.Literal(names("rid_seq").as_string(None)), kids=sql.SQL(", ").join(kids), rows=o["rows"],
                unit=sql.Literal(unit.number), parts=sql.SQL(", ").join(parts), part=o["part"],
                index_insert=o["index_insert"], batch=batch)
        else:
            parts[i] = sql.SQL("new_rid")
            body = sql.SQL(
                "            kids := ARRAY[{kids}]::bigint[];\n"
                "            INSERT INTO {rows} VALUES (new_rid, {unit}, kids, ARRAY[{parts}]::bigint[]);\n"
                "            moved := moved + {index_insert}({unit}, new_rid, kids);\n"
                "            {batch}new_rid, kids, st);\n").format(
                kids=sql.SQL(", ").join(kids), rows=o["rows"], unit=sql.Literal(unit.number),
                parts=sql.SQL(", ").join(parts), index_insert=o["index_insert"], batch=batch)
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
            seq=sql.Literal(names("rid_seq").as_string(None)), atom=names(k),
            sep=sql.SQL(", ") if cap.columns else sql.SQL(""),
            values=sql.SQL(", ").join(sql.SQL("r.{}").format(quoted(c.name)) for c in cap.columns), body=body))
        clears.append(sql.SQL("    DELETE FROM {};").format(names(f"{k}_delta")))
    return sql.SQL(
        "CREATE FUNCTION {f}() RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$\n"
        "DECLARE\n    r record;\n    u record;\n    victim bigint;\n    unit_rid bigint;\n    gone bigint := 0;\n"
        "    moved bigint := 0;\n    new_rid bigint;\n    kids bigint[];\n    i bigint;\n    st {state};\n"
        "    batches_before bigint;\nBEGIN\n{deletes}\n"
        "    IF gone > 0 THEN\n        PERFORM {repair}();\n    END IF;\n"
        "    SELECT * INTO st FROM {state} WHERE singleton;\n    batches_before := st.batches;\n{inserts}\n{clears}\n"
        "    IF st.batches <> batches_before OR moved > 0 THEN\n"
        "        UPDATE {state} SET rng = st.rng, w = st.w, q = st.q, filled = st.filled, replacements = st.replacements,\n"
        "               batches = st.batches, retrieved = st.retrieved, moves = moves + moved WHERE singleton;\n"
        "    END IF;\n"
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
        k = atom_name(i)
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
    objects = objects_of(names, shape)
    state_values = {**objects, "schema": names.schema_id,
                    "schema_comment": sql.Literal(f"pgivm state of view {name} (system sample): {cq.sql}")}
    functions: list[sql.Composable] = [
        *_layouts(view, names), render(__package__, "10_index.sql", objects), *retrieve_functions(names, shape),
        render(__package__, "20_reservoir.sql", objects),
        _pred_function(view, names), *_kid_functions(view, names, shape), _apply_pending(view, names, shape),
        *_per_atom_functions(view, names, shape), render(__package__, "30_restart.sql", objects)]
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
            delta=names(f"{atom_name(i)}_delta"), cols=sql.SQL(", ").join(quoted(c.name) for c in cols),
            sep=sql.SQL(", ") if cols else sql.SQL(""), values=sql.SQL(", ").join(cap.read("b")), table=base.ident,
            guard=base.guard("b"),
            keys=sql.SQL("").join(sql.SQL(" AND b.{} IS NOT NULL").format(quoted(c.column)) for c in cols if c.key),
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
    return InstallPlan.of(state=[render(__package__, "00_state.sql", state_values), *_state_ddl(view, names, shape)],
                          functions=functions, build=build, capture=capture_plan, expose=expose)


def select_list(cq: ConjunctiveQuery, view: ResolvedView | None = None) -> sql.Composable:
    """The selected columns, read from the atom tables (joined under their own names, ``_joined``);
    with ``view``, each of its own type where its join variable's differs (a char(3) joined with
    text is kept as text, and shows padded again; a date joined with a timestamp as a date), in
    its column's collation where not the database's default."""
    def cast(o: GroupColumn) -> sql.Composable:
        collation = collate(view.output_collations.get(o.name) if view is not None else None)
        if view is None or view.output_types is None or view.variable_types.get(o.variable) == view.output_types[o.name]:
            return collation
        return sql.SQL("::{}{}").format(sql.SQL(view.output_types[o.name]), collation)  # type: ignore[arg-type]

    return sql.SQL(", ").join(
        sql.SQL("{}{} AS {}").format(_at(cq, o.column.alias, o.column.column), cast(o), quoted(o.name))
        for o in cq.outputs if isinstance(o, GroupColumn))


def joined_rows(cq: ConjunctiveQuery, names: Names, source: str) -> sql.Composable:
    """Each atom table joined on the row id a sampled result (``source``) names."""
    return sql.SQL(" ").join(
        sql.SQL("JOIN {} AS {} ON {}.rid = {}.rids[{}]").format(
            names(atom_name(i)), quoted(atom_name(i)), quoted(atom_name(i)), sql.SQL(source), sql.Literal(i + 1))  # type: ignore[arg-type]
        for i in range(len(cq.atoms)))


def sample_query(view: ResolvedView, names: Names) -> sql.Composable:
    """The sample as the view shows it: the selected columns of each sampled result's rows."""
    cq: ConjunctiveQuery = view.query
    return sql.SQL("SELECT {items} FROM {sample} AS pgivm_sampled {joins} ORDER BY pgivm_sampled.slot").format(
        items=select_list(cq, view), sample=names("sample"), joins=joined_rows(cq, names, "pgivm_sampled"))

