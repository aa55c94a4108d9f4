"""What every strategy shares: the state schema's names, template rendering, the row triggers that
feed per-relation ``apply_<k>`` functions, the user-facing view, dropping, reading state back, and
running invariant checks. Strategies differ in the state they keep and how ``apply_<k>`` works.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from pgivm.query.model import Atom, TableRef, TriangleCount
from pgivm.query.resolve import ResolvedView


def state_schema_for(view_name: str) -> str:
    return f"pgivm_{view_name}"


def template(path: str) -> str:
    """The text of a template under ``sql/``, e.g. ``ivme/20_relation_maintenance.sql``."""
    return files("pgivm.sql").joinpath(path).read_text()


def render(path: str, params: dict[str, sql.Composable]) -> sql.Composed:
    return sql.SQL(template(path)).format(**params)  # type: ignore[arg-type]


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


def table_ident(table: TableRef) -> sql.Identifier:
    return sql.Identifier(table.schema or "public", table.name)


def typed_column(prefix: str, column: str, column_type: str, variable_type: str) -> sql.Composable:
    """``prefix.column``, cast to the join variable's type when the column's type differs."""
    ref = sql.SQL("{}.{}").format(sql.SQL(prefix), sql.Identifier(column))  # type: ignore[arg-type]
    if column_type == variable_type:
        return ref
    return sql.SQL("{}::{}").format(ref, sql.SQL(variable_type))  # type: ignore[arg-type]


def atom_columns(view: ResolvedView, atom: Atom, prefix: str) -> tuple[sql.Composable, sql.Composable]:
    """The atom's two join columns read from ``prefix`` (a row or a table alias), typed as the variables."""
    x, y = atom.variables
    types = view.variable_types
    return (
        typed_column(prefix, atom.first, view.column_types[(atom.alias, atom.first)], types[x]),
        typed_column(prefix, atom.second, view.column_types[(atom.alias, atom.second)], types[y]),
    )


def count_query(view: ResolvedView) -> sql.Composed:
    """The view's count as SQL built from the model, every identifier quoted (no user text)."""
    r, s, t = view.query.atoms

    def col(alias: str, column: str) -> sql.Composable:
        return sql.SQL("{}.{}").format(sql.Identifier(alias), sql.Identifier(column))

    return sql.SQL(
        "SELECT count(*) FROM {rt} AS r JOIN {st} AS s ON {rb} = {sb} JOIN {tt} AS t ON {sc} = {tc} AND {ta} = {ra}"
    ).format(
        rt=table_ident(view.qualified(r.table)), st=table_ident(view.qualified(s.table)),
        tt=table_ident(view.qualified(t.table)),
        rb=col("r", r.second), sb=col("s", s.first), sc=col("s", s.second), tc=col("t", t.first),
        ta=col("t", t.second), ra=col("r", r.first),
    )


def lock_tables_plan(view: ResolvedView) -> list[sql.Composable]:
    """Block writers of the base tables until the install commits: no change slips past the build."""
    return [
        sql.SQL("LOCK TABLE {} IN SHARE ROW EXCLUSIVE MODE").format(table_ident(view.qualified(t)))
        for t in view.query.tables
    ]


# A statement changing more rows than this goes set-at-a-time through K_delta and apply_batch_K;
# smaller ones go tuple by tuple. `pgivm bench bulk --edges facebook_combined.txt` measures both
# paths (rolled-back INSERTs of k new edges into R at epsilon = 1/2): per tuple 8 / 30 / 45 / 62 /
# 140 / 837 ms, set at a time 20 / 29 / 37 / 43 / 150 / 236 ms for k = 64 / 256 / 384 / 512 / 1024
# / 4096: they cross near 256-384 and stay within 1.4x of each other up to 1024.
BATCH_THRESHOLD = 384


def _net_change(view: ResolvedView, atom: Atom, event: str) -> sql.Composable:
    """The statement's net change of ``atom``'s relation: (x, y, m) per distinct join key, m <> 0."""

    def rows(table: str, sign: str) -> sql.Composable:
        first, second = atom_columns(view, atom, table)
        return sql.SQL("SELECT {first} AS x, {second} AS y, {sign} AS m FROM {table} WHERE {c1} IS NOT NULL AND {c2} IS NOT NULL").format(
            first=first, second=second, sign=sql.SQL(sign), table=sql.SQL(table),  # type: ignore[arg-type]
            c1=sql.SQL("{}.{}").format(sql.SQL(table), sql.Identifier(atom.first)),  # type: ignore[arg-type]
            c2=sql.SQL("{}.{}").format(sql.SQL(table), sql.Identifier(atom.second)),  # type: ignore[arg-type]
        )

    if event == "insert":
        source: sql.Composable = rows("new_rows", "1")
    elif event == "delete":
        source = rows("old_rows", "-1")
    else:
        source = sql.SQL("{} UNION ALL {}").format(rows("new_rows", "1"), rows("old_rows", "-1"))
    return sql.SQL("SELECT x, y, sum(m)::bigint AS m FROM ({}) rows GROUP BY x, y HAVING sum(m) <> 0").format(source)


def _apply_block(names: Names, view: ResolvedView, atoms: list[Atom], event: str, threshold: int) -> sql.Composable:
    blocks = []
    for atom in atoms:
        k = atom.relation
        x, y = atom.variables
        blocks.append(sql.SQL(
            "        -- {relation}\n"
            "        IF changed_rows <= {threshold} THEN\n"
            "            FOR change IN {net} LOOP\n"
            "                PERFORM {apply}(change.x, change.y, change.m);\n"
            "            END LOOP;\n"
            "        ELSE\n"
            "            INSERT INTO {delta} ({x}, {y}, mult) {net};\n"
            "            PERFORM {apply_batch}();\n"
            "        END IF;"
        ).format(
            relation=sql.SQL(k.upper()),  # type: ignore[arg-type]
            threshold=sql.Literal(threshold),
            net=_net_change(view, atom, event),
            apply=names(f"apply_{k}"), apply_batch=names(f"apply_batch_{k}"), delta=names(f"{k}_delta"),
            x=sql.Identifier(x), y=sql.Identifier(y),
        ))
    return sql.SQL("\n").join(blocks)


def table_triggers_plan(
    names: Names, view: ResolvedView, name: str, table: TableRef, strategy: str, batch_threshold: int | None = None
) -> sql.Composed:
    """The triggers of ``table``: take the view's lock per statement, apply each statement's net
    change to every relation the table feeds (R, S, T order), reload them after TRUNCATE."""
    atoms = view.query.atoms_of(table)
    letters = "".join(a.relation for a in atoms)
    qualified = view.qualified(table)
    described = f"{qualified} as {', '.join(a.relation.upper() for a in atoms)}"
    threshold = BATCH_THRESHOLD if batch_threshold is None else batch_threshold
    return render("common/table_triggers.sql", {
        "state": names("state"),
        "restart": names("restart"),
        "batch_threshold": sql.SQL(str(threshold)),  # type: ignore[arg-type]
        "on_statement": names(f"on_statement_{letters}"),
        "on_change": names(f"on_change_{letters}"),
        "on_truncate": names(f"on_truncate_{letters}"),
        "apply_insert": _apply_block(names, view, atoms, "insert", threshold),
        "apply_delete": _apply_block(names, view, atoms, "delete", threshold),
        "apply_update": _apply_block(names, view, atoms, "update", threshold),
        "reload": sql.SQL("\n").join(sql.SQL("    PERFORM {}();").format(names(f"load_{a.relation}")) for a in atoms),
        "table": table_ident(qualified),
        "lock_trigger": sql.Identifier(f"pgivm_{name}_lock"),
        "insert_trigger": sql.Identifier(f"pgivm_{name}_insert"),
        "delete_trigger": sql.Identifier(f"pgivm_{name}_delete"),
        "update_trigger": sql.Identifier(f"pgivm_{name}_update"),
        "truncate_trigger": sql.Identifier(f"pgivm_{name}_truncate"),
        "on_statement_comment": sql.Literal(f"pgivm view {name}: take the view's lock before a statement on {qualified}"),
        "on_change_comment": sql.Literal(f"pgivm view {name}: maintain the {strategy} state for changes of {described}"),
        "on_truncate_comment": sql.Literal(f"pgivm view {name}: rebuild the {strategy} state after TRUNCATE of {qualified}"),
    })


def user_view_plan(names: Names, query: TriangleCount, name: str, view_schema: str, strategy: str) -> sql.Composable:
    # sum(1) over an empty join is NULL where count(*) is 0: answer exactly as the SQL would.
    value = sql.SQL("count") if query.aggregate == "count" else sql.SQL("NULLIF(count, 0)")
    return sql.SQL(
        "CREATE VIEW {view} AS SELECT {value} AS {output} FROM {result}; COMMENT ON VIEW {view} IS {comment}"
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


TRIGGER_EVENTS = ("lock", "insert", "delete", "update", "truncate", "refresh")


def drop_plan(name: str, view_schema: str, tables: list[TableRef]) -> list[sql.Composable]:
    statements: list[sql.Composable] = [sql.SQL("DROP VIEW IF EXISTS {}").format(sql.Identifier(view_schema, name))]
    for table in tables:
        for event in TRIGGER_EVENTS:
            statements.append(
                sql.SQL("DROP TRIGGER IF EXISTS {} ON {}").format(sql.Identifier(f"pgivm_{name}_{event}"), table_ident(table))
            )
    statements.append(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(state_schema_for(name))))
    return statements


def read_state(conn: psycopg.Connection, name: str) -> dict[str, Any]:
    """The one row of ``state`` (without its key) and the count."""
    names = Names.of(name)
    with conn.cursor(row_factory=dict_row) as cur:
        state = cur.execute(sql.SQL("SELECT * FROM {}").format(names("state"))).fetchone()
        result = cur.execute(sql.SQL("SELECT count FROM {}").format(names("result"))).fetchone()
    assert state is not None and result is not None
    info = dict(state)
    info.pop("singleton", None)
    info["count"] = result["count"]
    return info


def basic_status(conn: psycopg.Connection, name: str) -> dict[str, Any]:
    """The state row, the count and the size of every state table."""
    info = read_state(conn, name)
    info["tables"] = table_sizes(conn, name)
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

    def __str__(self) -> str:
        return f"{self.check}: " + "; ".join(str(row) for row in self.rows[:3])


def checks(path: str, params: dict[str, sql.Composable]) -> list[tuple[str, sql.Composed]]:
    """Split a check template into (name, query) pairs at its ``-- check: name: ...`` headers."""
    found = []
    for block in template(path).split("-- check: ")[1:]:
        header, _, body = block.partition("\n")
        found.append((header.split(":")[0].strip(), sql.SQL(body).format(**params)))  # type: ignore[arg-type]
    return found


def run_checks(conn: psycopg.Connection, named_queries: list[tuple[str, sql.Composed]]) -> list[CheckFailure]:
    failures = []
    for check, query in named_queries:
        rows = conn.execute(query).fetchall()
        if rows:
            failures.append(CheckFailure(check, rows))
    return failures
