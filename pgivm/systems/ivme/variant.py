"""What the IVMε variants beyond the triangle (Loomis-Whitney counts, the path counts) share: each
relation captured by its join columns under its variable names, and an install plan around the
variant's own state, functions and build (capture, triggers and the user's view as every system's).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg import sql

from pgivm import capture
from pgivm.query.resolve import ResolvedView
from pgivm.systems.base import InstallPlan
from pgivm.systems.common import Names, capture_functions_plan, expose_plan, pack_types_plan


def reshaped(view: ResolvedView, model: type, shape: str) -> ResolvedView:
    """The view in the shape a variant module plans: its query as the ``model`` the analysis rule
    ``shape`` made of it (the System boundary passes the query; calling it again changes nothing)."""
    if isinstance(view.query, model):
        return view
    found = getattr(view.query.analysis, shape)
    assert found is not None, "ivme got a query it does not accept"
    return view.reshaped(found)


def has_shape(view: ResolvedView, model: type, shape: str) -> bool:
    """Whether the view's query is of the variant's shape (``reshaped``'s arguments)."""
    return isinstance(view.query, model) or getattr(view.query.analysis, shape, None) is not None


def capture_atom(view: ResolvedView, atom: Any) -> capture.CaptureAtom:
    """A relation's net change as the capture layer hands it over: its join columns, cast to the
    variables' types, named by the variables (the order of apply_K's parameters)."""
    return capture.CaptureAtom(atom.relation, tuple(capture.captured_column(view, atom.alias, column, letter)
                                                    for column, letter in zip(atom.columns, atom.variables)))


def capture_atoms(view: ResolvedView) -> dict[Any, list[capture.CaptureAtom]]:
    """Per base table, the relations a change of it updates (a deferred view's logs)."""
    return {table: [capture_atom(view, a) for a in view.query.atoms_of(table)] for table in view.query.tables}


def _letters(view: ResolvedView, table: Any) -> str:
    return "".join(a.relation for a in view.query.atoms_of(table))


def capture_triggers(view: ResolvedView, name: str, table: Any) -> list[capture.CaptureTrigger]:
    return capture.view_triggers(name, Names.of(name).schema, _letters(view, table))


def install_plan(view: ResolvedView, name: str, view_schema: str, params: dict[str, Any], state: list[sql.Composable],
                 functions: list[sql.Composable], build: list[sql.Composable]) -> InstallPlan:
    """The variant's state, functions and build, with the capture functions and triggers of every
    base table and the user's view."""
    names = Names.of(name)
    functions = functions + [
        capture_functions_plan(names, view, name, table, "IVMε", params["batch_threshold"],
                               atoms=[capture_atom(view, a) for a in view.query.atoms_of(table)],
                               letters=_letters(view, table))
        for table in view.query.tables]
    triggers: list[sql.Composable] = []
    for table in view.query.tables:
        triggers += capture.triggers_on(view.base_of(table), capture_triggers(view, name, table))
    return InstallPlan.of(state=[*pack_types_plan(view), *state], functions=functions, build=build, capture=triggers,
                          expose=expose_plan(names, view.query, name, view_schema, "IVMε"))  # type: ignore[arg-type]


def stored_tuples(tables: Sequence[sql.Composable]) -> sql.Composable:
    """|D| as the state stores it: the rows of ``tables`` (each distinct tuple once), added up."""
    return sql.SQL(" + ").join(sql.SQL("(SELECT count(*) FROM {})").format(table) for table in tables)


def view_checks(names: Names, tables: Sequence[sql.Composable]) -> list[tuple[str, sql.Composed]]:
    """The view-wide checks of a count of the family (refined partitions, Loomis-Whitney, the path
    counts): |D| against the tuples ``tables`` store and N, θ = N^ε, the count against
    count_from_state()."""
    from pgivm.systems.common import checks

    return checks(__package__, "87_verify_counts_view.sql", {
        "state": names("state"), "result": names("result"), "count_from_state": names("count_from_state"),
        "stored": stored_tuples(tables)})


def flagged_state_checks(view: ResolvedView, names: Names, degrees: dict[tuple[str, str], str], views: dict[str, Any],
                         strict: bool) -> list[tuple[str, sql.Composed]]:
    """The checks of a variant that keeps each relation as one table with its parts as flags (the
    path counts): each relation against its base table, each partitioned (relation, variable) of
    ``degrees`` (its degree table, flags, thresholds; strict ones with ``strict``), each view of
    ``views`` (name -> (key columns, definition)) against its definition."""
    from pgivm.systems.common import checks

    named = []
    for atom in view.query.relations:
        base = view.base_of(atom.table)
        params = {"k": names(atom.relation), "columns": sql.SQL(", ").join(sql.Identifier(v) for v in atom.variables),
                  "base_table": base.ident, "base_guard": base.guard("base"),
                  "base_columns": sql.SQL(", ").join(capture_atom(view, atom).read("base")),
                  "base_not_null": capture.all_not_null("base", atom.columns)}
        named += [(f"{atom.relation.upper()}.{check}", query) for check, query in checks(__package__, "88_verify_bag.sql", params)]
    for (relation, variable), degree in degrees.items():
        params = {"k": names(relation), "var": sql.Identifier(variable), "flag": sql.Identifier(f"h{variable}"),
                  "degree": names(degree), "state": names("state")}
        named += [(f"{relation.upper()}_on_{variable.upper()}.{check}", query)
                  for check, query in checks(__package__, "89_verify_partition.sql", params)
                  if check != "strict_partition" or strict]
    for v, (keys, definition) in views.items():
        params = {"view": names(v), "columns": sql.SQL(", ").join(sql.Identifier(c) for c in keys), "definition": definition}
        named += [(f"{v}.{check}", query) for check, query in checks(__package__, "91_verify_view_definition.sql", params)]
    return named


def strict_load_plan(view: ResolvedView, names: Names, degrees: dict[tuple[str, str], str],
                     flags: dict[tuple[str, str], str] | None = None) -> list[sql.Composable]:
    """The build's loads for a variant keeping each relation as one table with its parts as flags:
    every relation's distinct join-column tuples with their multiplicities, each partitioned one's
    flags already strict at the θ restart() will compute (θ = N^ε, N = 2|D| + 1, |D| the tuples of
    all relations: one statement computes it and loads them), so that restart's repartition
    rewrites no tuple; then the degree tables (``degrees``: (relation, variable) -> table; the flag
    of a variable ``h<variable>`` unless ``flags`` names it)."""
    flags = flags or {}
    flag_of = {key: flags.get(key, f"h{key[1]}") for key in degrees}
    partitioned = {relation for relation, _ in degrees}
    statements: list[sql.Composable] = []
    aggregated: dict[str, sql.Composable] = {}
    for atom in view.query.atoms:
        base = view.base_of(atom.table)
        aggregated[atom.relation] = sql.SQL(
            "SELECT {columns}, count(*) AS mult FROM {table} base WHERE {guard} AND {not_null} GROUP BY {positions}").format(
            columns=sql.SQL(", ").join(capture_atom(view, atom).read("base")), table=base.ident, guard=base.guard("base"),
            not_null=capture.all_not_null("base", atom.columns),
            positions=sql.SQL(", ").join(sql.SQL(str(p)) for p in range(1, len(atom.columns) + 1)))  # type: ignore[arg-type]
        if atom.relation not in partitioned:
            statements.append(sql.SQL("INSERT INTO {k} ({letters}, mult) {aggregated}").format(
                k=names(atom.relation), letters=sql.SQL(", ").join(map(sql.Identifier, atom.variables)),
                aggregated=aggregated[atom.relation]))
    flagged = [atom for atom in view.query.atoms if atom.relation in partitioned]
    ctes = [sql.SQL("{} ({}, mult) AS MATERIALIZED ({})").format(
        sql.Identifier(f"agg_{a.relation}"), sql.SQL(", ").join(map(sql.Identifier, a.variables)), aggregated[a.relation])
        for a in flagged]
    sizes = [sql.SQL("(SELECT count(*) FROM {})").format(sql.Identifier(f"agg_{a.relation}")) for a in flagged]
    sizes += [sql.SQL("(SELECT count(*) FROM {})").format(names(a.relation)) for a in view.query.atoms if a.relation not in partitioned]
    ctes.append(sql.SQL("th AS (SELECT power((2 * ({size}) + 1)::float8, st.epsilon) AS theta, st.epsilon = 0 AS all_heavy "
                        "FROM {state} st)").format(size=sql.SQL(" + ").join(sizes), state=names("state")))
    inserts = []
    for atom in flagged:
        variables = [v for (k, v) in degrees if k == atom.relation]
        inserts.append(sql.SQL("INSERT INTO {k} ({letters}, mult, {flags}) SELECT {columns}, k.mult, {parts} FROM {agg} k, th").format(
            k=names(atom.relation), letters=sql.SQL(", ").join(map(sql.Identifier, atom.variables)),
            flags=sql.SQL(", ").join(sql.Identifier(flag_of[(atom.relation, v)]) for v in variables),
            columns=sql.SQL(", ").join(sql.SQL("k.{}").format(sql.Identifier(v)) for v in atom.variables),
            parts=sql.SQL(", ").join(sql.SQL("count(*) OVER (PARTITION BY k.{}) >= th.theta OR th.all_heavy").format(
                sql.Identifier(v)) for v in variables),
            agg=sql.Identifier(f"agg_{atom.relation}")))
    ctes += [sql.SQL("{} AS ({})").format(sql.Identifier(f"load_{a.relation}"), insert) for a, insert in zip(flagged, inserts)]
    statements.append(sql.SQL("WITH {ctes} SELECT 1").format(ctes=sql.SQL(",\n     ").join(ctes)))
    for (relation, variable), table in degrees.items():
        statements.append(sql.SQL("INSERT INTO {d} ({v}, degree, heavy) SELECT {v}, count(*), bool_or({flag}) FROM {k} "
                                  "GROUP BY {v}").format(d=names(table), v=sql.Identifier(variable),
                                                         flag=sql.Identifier(flag_of[(relation, variable)]), k=names(relation)))
    return statements
