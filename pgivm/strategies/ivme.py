"""IVMε (Kara, Ngo, Nikolic, Olteanu, Zhang): triangle counts under updates in O(N^max(ε,1-ε)).

This module turns a resolved view into the SQL that installs it: a state schema with heavy/light
partitions, degree tables, the auxiliary views V_RS, V_ST, V_TR, the count, and the PL/pgSQL
functions and triggers that maintain them (templates in ``sql/ivme/``). It also reads the state
back for ``status`` and checks it for ``verify``. It executes nothing on its own except in the
read-only helpers; ``pgivm.command`` runs the plans.

The three relations share one set of templates: R(A,B) -> S(B,C) -> T(C,A) is a cycle, and each
relation K is rendered with L = the next relation and M = the previous one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from pgivm.query.model import VARIABLES, Atom, RelationName, TableRef, TriangleCount
from pgivm.query.resolve import ResolvedView

NAME = "ivme"
DEFAULT_EPSILON = 0.5
RELATIONS: tuple[RelationName, ...] = ("r", "s", "t")
NEXT: dict[RelationName, RelationName] = {"r": "s", "s": "t", "t": "r"}
PREVIOUS: dict[RelationName, RelationName] = {"r": "t", "s": "r", "t": "s"}
AUX_VIEW = {"r": "v_rs", "s": "v_st", "t": "v_tr"}  # the view keyed by K's heavy part: V_KL


def state_schema_for(view_name: str) -> str:
    return f"pgivm_{view_name}"


def _template(name: str) -> str:
    return files("pgivm.sql").joinpath("ivme", name).read_text()


def _render(template: str, params: dict[str, sql.Composable]) -> sql.Composed:
    return sql.SQL(_template(template)).format(**params)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Names:
    """Every object of one view's state, schema-qualified and quoted."""

    schema: str

    def __call__(self, name: str) -> sql.Identifier:
        return sql.Identifier(self.schema, name)

    @property
    def schema_id(self) -> sql.Identifier:
        return sql.Identifier(self.schema)


def _relation_params(names: Names, k: RelationName, types: dict[str, str]) -> dict[str, sql.Composable]:
    l, m = NEXT[k], PREVIOUS[k]
    x, y = VARIABLES[k]
    z = VARIABLES[l][1]
    upper = k.upper()
    return {
        "x": sql.Identifier(x),
        "y": sql.Identifier(y),
        "z": sql.Identifier(z),
        "type_x": sql.SQL(types[x]),  # type: ignore[arg-type]  # from format_type(), not user text
        "type_y": sql.SQL(types[y]),  # type: ignore[arg-type]
        "type_z": sql.SQL(types[z]),  # type: ignore[arg-type]
        "state": names("state"),
        "result": names("result"),
        "k_heavy": names(f"{k}_heavy"),
        "k_light": names(f"{k}_light"),
        "k_degree": names(f"{k}_degree"),
        "l_heavy": names(f"{l}_heavy"),
        "l_light": names(f"{l}_light"),
        "l_degree": names(f"{l}_degree"),
        "m_heavy": names(f"{m}_heavy"),
        "m_light": names(f"{m}_light"),
        "v_kl": names(AUX_VIEW[k]),
        "v_lm": names(AUX_VIEW[l]),
        "v_mk": names(AUX_VIEW[m]),
        "apply_k": names(f"apply_{k}"),
        "move_k": names(f"move_{k}"),
        "repartition_k": names(f"repartition_{k}"),
        "recompute_v_kl": names(f"recompute_{AUX_VIEW[k]}"),
        "load_k": names(f"load_{k}"),
        "major_rebalance": names("major_rebalance"),
        "k_heavy_comment": sql.Literal(
            f"IVMε: heavy part of {upper}({x.upper()},{y.upper()}), tuples whose {x.upper()}-value has high degree"
        ),
        "k_light_comment": sql.Literal(
            f"IVMε: light part of {upper}({x.upper()},{y.upper()}), tuples whose {x.upper()}-value has low degree"
        ),
        "k_degree_comment": sql.Literal(
            f"IVMε: per {x.upper()}-value of {upper}, its degree (distinct tuples) and whether it is heavy"
        ),
        "v_kl_comment": sql.Literal(
            f"IVMε auxiliary view {AUX_VIEW[k].upper()}({x.upper()},{z.upper()}) = "
            f"sum_{y.upper()} {upper}_heavy * {l.upper()}_light; serves updates to {m.upper()}"
        ),
        "apply_k_comment": sql.Literal(f"IVMε ApplyUpdate + OnUpdate for a single-tuple update to {upper}"),
        "move_k_comment": sql.Literal(f"IVMε MinorRebalancing of one {x.upper()}-value of {upper}"),
    }


def _view_params(names: Names, name: str, query_sql: str) -> dict[str, sql.Composable]:
    params: dict[str, sql.Composable] = {
        "schema": names.schema_id,
        "state": names("state"),
        "result": names("result"),
        "major_rebalance": names("major_rebalance"),
        "count_from_state": names("count_from_state"),
        "restart": names("restart"),
        "schema_comment": sql.Literal(f"pgivm state of view {name} (strategy ivme): {query_sql}"),
        "result_comment": sql.Literal(f"pgivm: the maintained result of view {name}"),
    }
    for k in RELATIONS:
        params[f"{k}_heavy"] = names(f"{k}_heavy")
        params[f"{k}_light"] = names(f"{k}_light")
        params[f"repartition_{k}"] = names(f"repartition_{k}")
        params[AUX_VIEW[k]] = names(AUX_VIEW[k])
        params[f"recompute_{AUX_VIEW[k]}"] = names(f"recompute_{AUX_VIEW[k]}")
    return params


def _typed_column(prefix: str, column: str, column_type: str, variable_type: str) -> sql.Composable:
    ref = sql.SQL("{}.{}").format(sql.SQL(prefix), sql.Identifier(column))  # type: ignore[arg-type]
    if column_type == variable_type:
        return ref
    return sql.SQL("{}::{}").format(ref, sql.SQL(variable_type))  # type: ignore[arg-type]


def _load_params(names: Names, view: ResolvedView, atom: Atom) -> dict[str, sql.Composable]:
    x, y = atom.variables
    table = view.qualified(atom.table)
    types = view.variable_types
    return {
        **_relation_params(names, atom.relation, types),
        "base_table": sql.Identifier(table.schema or "public", table.name),
        "base_x": _typed_column("base", atom.first, view.column_types[(atom.alias, atom.first)], types[x]),
        "base_y": _typed_column("base", atom.second, view.column_types[(atom.alias, atom.second)], types[y]),
        "base_x_column": sql.Identifier(atom.first),
        "base_y_column": sql.Identifier(atom.second),
    }


def _trigger_params(names: Names, view: ResolvedView, name: str, table: TableRef) -> dict[str, sql.Composable]:
    atoms = view.query.atoms_of(table)
    letters = "".join(a.relation for a in atoms)
    qualified = view.qualified(table)

    def apply_lines(row: str, sign: int) -> sql.Composable:
        lines = []
        for atom in atoms:
            x, y = atom.variables
            first = _typed_column(row, atom.first, view.column_types[(atom.alias, atom.first)], view.variable_types[x])
            second = _typed_column(
                row, atom.second, view.column_types[(atom.alias, atom.second)], view.variable_types[y]
            )
            lines.append(
                sql.SQL(
                    "        IF {row}.{c1} IS NOT NULL AND {row}.{c2} IS NOT NULL THEN\n"
                    "            PERFORM {apply}({first}, {second}, {sign});\n"
                    "        END IF;"
                ).format(
                    row=sql.SQL(row),  # type: ignore[arg-type]
                    c1=sql.Identifier(atom.first),
                    c2=sql.Identifier(atom.second),
                    apply=names(f"apply_{atom.relation}"),
                    first=first,
                    second=second,
                    sign=sql.Literal(sign),
                )
            )
        return sql.SQL("\n").join(lines)

    columns = list(dict.fromkeys(c for a in atoms for c in (a.first, a.second)))
    changed = sql.SQL(" OR ").join(
        sql.SQL("OLD.{c} IS DISTINCT FROM NEW.{c}").format(c=sql.Identifier(c)) for c in columns
    )
    reload = sql.SQL("\n").join(
        sql.SQL("    PERFORM {}();").format(names(f"load_{a.relation}")) for a in atoms
    )
    described = f"{qualified} as {', '.join(a.relation.upper() for a in atoms)}"
    return {
        "state": names("state"),
        "restart": names("restart"),
        "on_write": names(f"on_write_{letters}"),
        "on_truncate": names(f"on_truncate_{letters}"),
        "apply_old": apply_lines("OLD", -1),
        "apply_new": apply_lines("NEW", 1),
        "reload": reload,
        "table": sql.Identifier(qualified.schema or "public", qualified.name),
        "insert_trigger": sql.Identifier(f"pgivm_{name}_insert"),
        "delete_trigger": sql.Identifier(f"pgivm_{name}_delete"),
        "update_trigger": sql.Identifier(f"pgivm_{name}_update"),
        "truncate_trigger": sql.Identifier(f"pgivm_{name}_truncate"),
        "join_columns_changed": changed,
        "on_write_comment": sql.Literal(f"pgivm view {name}: maintain the IVMε state for row changes of {described}"),
        "on_truncate_comment": sql.Literal(f"pgivm view {name}: rebuild the IVMε state after TRUNCATE of {qualified}"),
    }


@dataclass
class InstallPlan:
    """The statements that create a view's state, in order, and what they build."""

    statements: list[sql.Composable] = field(default_factory=list)


def install_plan(view: ResolvedView, name: str, view_schema: str, epsilon: float) -> InstallPlan:
    """DDL for the state, the maintenance functions, the build from existing data, and the triggers.

    Run it in one transaction: the base tables are locked against writes first so that no change
    slips between the set-at-a-time build and the moment the triggers exist.
    """
    names = Names(state_schema_for(name))
    types = view.variable_types
    plan = InstallPlan()
    for table in view.query.tables:
        qualified = view.qualified(table)
        plan.statements.append(
            sql.SQL("LOCK TABLE {} IN SHARE ROW EXCLUSIVE MODE").format(
                sql.Identifier(qualified.schema or "public", qualified.name)
            )
        )
    view_params = _view_params(names, name, view.query.sql)
    plan.statements.append(_render("00_view_state.sql", view_params))
    plan.statements.append(
        sql.SQL("INSERT INTO {} (epsilon, n, theta, db_size) VALUES ({}, 1, 1, 0); INSERT INTO {} (count) VALUES (0)").format(
            names("state"), sql.Literal(float(epsilon)), names("result")
        )
    )
    for k in RELATIONS:
        plan.statements.append(_render("10_relation_tables.sql", _relation_params(names, k, types)))
    for k in RELATIONS:
        plan.statements.append(_render("20_relation_maintenance.sql", _relation_params(names, k, types)))
    plan.statements.append(_render("30_view_maintenance.sql", view_params))
    for atom in view.query.atoms:
        plan.statements.append(_render("40_relation_load.sql", _load_params(names, view, atom)))
    # The build: every relation loaded set-at-a-time, then preprocessing (N = 2|D|+1, strict partition, views, count).
    plan.statements.append(
        sql.SQL("SELECT {}(), {}(), {}(), {}()").format(
            names("load_r"), names("load_s"), names("load_t"), names("restart")
        )
    )
    for table in view.query.tables:
        plan.statements.append(_render("50_table_triggers.sql", _trigger_params(names, view, name, table)))
    plan.statements.append(_user_view(names, view.query, name, view_schema))
    plan.statements.append(
        sql.SQL(
            "REVOKE ALL ON ALL TABLES IN SCHEMA {s} FROM PUBLIC; REVOKE ALL ON ALL FUNCTIONS IN SCHEMA {s} FROM PUBLIC"
        ).format(s=names.schema_id)
    )
    return plan


def _user_view(names: Names, query: TriangleCount, name: str, view_schema: str) -> sql.Composable:
    # sum(1) over an empty join is NULL where count(*) is 0: answer exactly as the SQL would.
    value = sql.SQL("count") if query.aggregate == "count" else sql.SQL("NULLIF(count, 0)")
    return sql.SQL(
        "CREATE VIEW {view} AS SELECT {value} AS {output} FROM {result}; COMMENT ON VIEW {view} IS {comment}"
    ).format(
        view=sql.Identifier(view_schema, name),
        value=value,
        output=sql.Identifier(query.output_name),
        result=names("result"),
        comment=sql.Literal(f"pgivm: maintained by IVMε, state in schema {names.schema}. Definition: {query.sql}"),
    )


def drop_plan(name: str, view_schema: str, tables: list[TableRef]) -> list[sql.Composable]:
    statements: list[sql.Composable] = [
        sql.SQL("DROP VIEW IF EXISTS {}").format(sql.Identifier(view_schema, name))
    ]
    for table in tables:
        ident = sql.Identifier(table.schema or "public", table.name)
        for event in ("insert", "delete", "update", "truncate"):
            statements.append(
                sql.SQL("DROP TRIGGER IF EXISTS {} ON {}").format(sql.Identifier(f"pgivm_{name}_{event}"), ident)
            )
    statements.append(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(state_schema_for(name))))
    return statements


def rebalance_plan(name: str, epsilon: float | None = None) -> sql.Composable:
    """A forced major rebalancing (after an optional change of ε), serialized with the writers."""
    names = Names(state_schema_for(name))
    set_eps = sql.SQL(", epsilon = {}").format(sql.Literal(float(epsilon))) if epsilon is not None else sql.SQL("")
    return sql.SQL("UPDATE {state} SET updates_applied = updates_applied{set_eps}; SELECT {major}()").format(
        state=names("state"), set_eps=set_eps, major=names("major_rebalance")
    )


# --- reading the state back ------------------------------------------------------------------


def read_state(conn: psycopg.Connection, name: str) -> dict[str, Any]:
    names = Names(state_schema_for(name))
    with conn.cursor(row_factory=dict_row) as cur:
        state = cur.execute(sql.SQL("SELECT * FROM {}").format(names("state"))).fetchone()
        result = cur.execute(sql.SQL("SELECT count FROM {}").format(names("result"))).fetchone()
    assert state is not None and result is not None
    state = dict(state)
    state.pop("singleton", None)
    state["count"] = result["count"]
    return state


def status(conn: psycopg.Connection, name: str) -> dict[str, Any]:
    """ε, N, |D|, heavy values per relation, the size of every state table, the counters."""
    names = Names(state_schema_for(name))
    info = read_state(conn, name)
    relations = {}
    for k in RELATIONS:
        row = conn.execute(
            sql.SQL(
                "SELECT count(*) FILTER (WHERE heavy), count(*), "
                "(SELECT count(*) FROM {h}), (SELECT count(*) FROM {l}) FROM {d}"
            ).format(h=names(f"{k}_heavy"), l=names(f"{k}_light"), d=names(f"{k}_degree"))
        ).fetchone()
        assert row is not None
        relations[k.upper()] = {
            "heavy_values": row[0],
            "values": row[1],
            "heavy_tuples": row[2],
            "light_tuples": row[3],
        }
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
    info["relations"] = relations
    info["tables"] = tables
    return info


# --- verification ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckFailure:
    check: str
    rows: list[tuple[Any, ...]]

    def __str__(self) -> str:
        sample = "; ".join(str(row) for row in self.rows[:3])
        return f"{self.check}: {sample}"


def _checks(template: str, params: dict[str, sql.Composable]) -> list[tuple[str, sql.Composed]]:
    """Split a verify template into (name, query) pairs at its ``-- check: name: ...`` headers."""
    checks = []
    for block in _template(template).split("-- check: ")[1:]:
        header, _, body = block.partition("\n")
        checks.append((header.split(":")[0].strip(), sql.SQL(body).format(**params)))  # type: ignore[arg-type]
    return checks


def verify_state(conn: psycopg.Connection, view: ResolvedView, name: str, strict: bool = False) -> list[CheckFailure]:
    """Every IVMε invariant, checked against the base tables; an empty list means all hold."""
    names = Names(state_schema_for(name))
    checks = _checks("61_verify_view.sql", _view_params(names, name, view.query.sql))
    for atom in view.query.atoms:
        for check, query in _checks("60_verify_relation.sql", _load_params(names, view, atom)):
            checks.append((f"{atom.relation.upper()}.{check}", query))
    failures = []
    for check, query in checks:
        if check.endswith("strict_partition") and not strict:
            continue
        rows = conn.execute(query).fetchall()
        if rows:
            failures.append(CheckFailure(check, rows))
    return failures
