"""What the IVMε variants beyond the triangle (Loomis-Whitney counts, the path counts) share: each
relation captured by its join columns under its variable names, and an install plan around the
variant's own state, functions and build (capture, triggers and the user's view as every system's).
"""

from __future__ import annotations

from typing import Any

from psycopg import sql

from pgivm import capture
from pgivm.query.resolve import ResolvedView
from pgivm.systems.base import InstallPlan
from pgivm.systems.common import Names, capture_functions_plan, expose_plan


def capture_atom(view: ResolvedView, atom: Any) -> capture.CaptureAtom:
    """A relation's net change as the capture layer hands it over: its join columns, cast to the
    variables' types, named by the variables (the order of apply_K's parameters)."""
    return capture.CaptureAtom(atom.relation, tuple(
        capture.CapturedColumn(column, letter, view.column_types[(atom.alias, column)], view.variable_types[letter])
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
    return InstallPlan.of(state=state, functions=functions, build=build, capture=triggers,
                          expose=expose_plan(names, view.query, name, view_schema, "IVMε"))  # type: ignore[arg-type]


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
                  "base_not_null": sql.SQL(" AND ").join(sql.SQL("base.{} IS NOT NULL").format(sql.Identifier(c))
                                                         for c in atom.columns)}
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
