"""Deferred views: writers append to delta logs, a cost budget decides when which logs are applied.

He, Xie, Yang and Yu, "Asymmetric Batch Incremental View Maintenance" (ICDE 2005; notes in
``shared/notes/asymmetric-batch-ivm.md``). A view created with ``refresh="deferred"`` keeps the
system's state (IVMε's partitions, F-IVM's view tree, the sample's index, ...) as of its last
processing, and every writing statement only appends its net change of each atom to that atom's
log ``K_log``. The predicted cost of applying everything pending, f(s) = Σ_i f_i(s[i]) over the base
tables i, is kept at most the budget C: when an append passes it, an action (``sql/deferred/10_planner.sql``:
NAIVE or ONLINE) empties the logs of some tables through the system's own set-at-a-time path.

This layer knows no system by name. It wraps what every system's capture layer calls, per atom K:
``apply_batch_K()`` (and ``apply_K(...)``, the tuple-at-a-time path) append to ``K_log`` instead of
maintaining, ``clear_K()`` (TRUNCATE) drops the log with the state. The system's originals stay as
``maintain_batch_K``, ``maintain_K`` and ``maintain_clear_K``, which processing calls. A system that
joins a delta with its *own* state of the other atoms (IVMε, F-IVM, the sample) applies ΔR_i while
ΔR_j waits against exactly the state the view reflects: no state bug (§6.1.3). One that reads the
live base tables (first-order) reads them less ``pending_rows``, which comes to the same.

The view ``NAME`` applies what is pending, then answers (exact); ``NAME_stale`` answers from the
last processed state with the number of pending changes and how many seconds they lag.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from pgivm import capture
from pgivm.errors import PgivmError, UnsupportedQuery
from pgivm.query.model import TableRef
from pgivm.query.resolve import ResolvedView
from pgivm.systems.base import Option, Section
from pgivm.systems.common import Names, render

MODES = ("immediate", "deferred")
PLANNERS = ("online", "naive")
# f_i(k) = a·k + b (milliseconds) until `pgivm calibrate` measures the view's own: about what a small
# set-at-a-time batch of IVMε or F-IVM costs on the machines pgivm is benchmarked on.
DEFAULT_A_MS = 0.05
DEFAULT_B_MS = 2.0
RATE_WINDOW = 1000  # arrival rates v_i of ONLINE are measured over the last 1000 to 2000 steps
# Writers that pass C while a registered `pgivm worker` lives leave the actions to it and wake it
# on this channel (pgivm.deferred.worker).
CHANNEL = "pgivm_deferred"
# The columns NAME_stale shows after the view's own (sql/deferred/20_read.sql).
STALE_COLUMNS = ("pgivm_pending_changes", "pgivm_lag_seconds")


def _mode(value: str) -> str | None:
    return None if value in MODES else f"choose {' or '.join(MODES)}, got {value!r}"


MAX_BUDGET_MS = 1e12  # about 30 years of predicted work: more is no budget at all, and overflows the planner's arithmetic


def _budget(value: float) -> str | None:
    if not 0 <= value <= MAX_BUDGET_MS:  # also NaN
        return f"must be a number of milliseconds from 0 to {MAX_BUDGET_MS:g}, got {value}"
    return None


def _planner(value: str) -> str | None:
    return None if value in PLANNERS else f"choose {' or '.join(PLANNERS)}, got {value!r}"


REFRESH = Option("refresh", str, "immediate",
                 "immediate: every writing statement maintains the view; deferred: writers only append to delta "
                 "logs, applied when a read needs them or their predicted cost would pass --budget", _mode)
BUDGET = Option("budget", float, 50.0,
                "deferred: the most a read may have to apply, in predicted milliseconds (the paper's C)", _budget)
PLANNER = Option("planner", str, "online",
                 "deferred: which logs an action empties when the budget would be passed: online (the paper's "
                 "heuristic: least amortized cost) or naive (all of them)", _planner)
OPTIONS = (REFRESH, BUDGET, PLANNER)


@dataclass(frozen=True)
class LoggedTable:
    """A base table of a deferred view: its place i in the plan vectors and the atoms it feeds."""

    number: int
    label: str
    atoms: tuple[capture.CaptureAtom, ...]
    table: TableRef
    on_change: tuple[str, str] = ("", "")  # the capture function its INSERT, UPDATE and DELETE triggers call

    @property
    def log(self) -> str:
        return f"table_{self.number}_log"

    @property
    def stage(self) -> str:
        return f"table_{self.number}_stage"

    @property
    def columns(self) -> list[capture.CapturedColumn]:
        """The base-table columns any of its atoms reads, once each."""
        seen: dict[str, capture.CapturedColumn] = {}
        for atom in self.atoms:
            for captured in atom.columns:
                for column in captured.base_columns():  # a packed variable's columns, each logged alone
                    seen.setdefault(column.column, column)  # type: ignore[arg-type]  # (a base column's name)
        return list(seen.values())

    def log_column(self, column: str) -> str:
        """The log's own name for a base column: c1, c2, ... in the order of ``columns``. The log
        also has m and at: no base column, whatever its name, can collide with them."""
        return f"c{[c.column for c in self.columns].index(column) + 1}"

    def read(self, atom: capture.CaptureAtom, source: str) -> list[sql.Composable]:
        """The atom's columns read from a log row ``source``, typed as its variables."""
        return [c.read(source, self.log_column) for c in atom.columns]


def table_numbers(atoms: dict[TableRef, list[capture.CaptureAtom]]) -> dict[TableRef, int]:
    """The number i of each base table a deferred view logs (its log is ``table_i_log``)."""
    return {table: i + 1 for i, table in enumerate(t for t, found in atoms.items() if found)}


def logged_tables(atoms: dict[TableRef, list[capture.CaptureAtom]], view: ResolvedView,
                  functions: dict[TableRef, tuple[str, str]] | None = None) -> dict[TableRef, LoggedTable]:
    """The base tables a deferred view logs; ``functions`` gives each one's on_change capture
    function, which deferred mode replaces."""
    return {table: LoggedTable(number, str(view.qualified(table)), tuple(atoms[table]), table,
                               (functions or {}).get(table, ("", "")))
            for table, number in table_numbers(atoms).items()}


def pending_rows(names: Names, table: LoggedTable, atom: capture.CaptureAtom) -> sql.Composable:
    """Rows of a base table that the view does not reflect yet, as the atom's columns (named as in
    its _delta table) and a multiplicity (1 inserted, -1 deleted): its log, the rows an action took
    but has not applied, and the atom's own log. A system whose delta queries read live base
    tables (first-order) subtracts these to read the tables as the view last saw them, the state
    bug's remedy (§6.1.3). Live table and logs are read in one statement, so in one snapshot: a
    writer's change and its log rows are both in it or both not."""
    def logged(source: str) -> sql.Composable:
        return sql.SQL(", ").join(sql.SQL("{} AS {}").format(value, _q(c.name))
                                  for value, c in zip(table.read(atom, source), atom.columns))

    own = sql.SQL(", ").join(sql.SQL("o.{}").format(_q(c.name)) for c in atom.columns)
    return sql.SQL("SELECT {logged}, l.m::bigint AS mult FROM {log} AS l UNION ALL SELECT {staged}, s.m::bigint "
                   "FROM {stage} AS s UNION ALL SELECT {own}, o.mult FROM {atom_log} AS o").format(
        logged=logged("l"), staged=logged("s"), own=own, log=names(table.log), stage=names(table.stage),
        atom_log=names(f"{atom.name}_log"))


def _q(name: str) -> sql.Identifier:
    return sql.Identifier(name)


def _columns(atom: capture.CaptureAtom) -> list[sql.Composable]:
    return [_q(c.name) for c in atom.columns]


def _listed(columns: list[sql.Composable], alias: str | None = None) -> sql.Composable:
    """Each column followed by a comma (the start of a list that goes on), qualified by ``alias``
    (one of pgivm's own) when given."""
    prefix = sql.SQL(f"{alias}.") if alias else sql.SQL("")  # type: ignore[arg-type]  # pgivm's alias
    return sql.SQL("").join(sql.SQL("{}{}, ").format(prefix, c) for c in columns)


def _tables(names: Names) -> dict[str, sql.Composable]:
    """The deferred layer's tables, as its templates name them."""
    return {
        "deferred": names("deferred"), "deferred_table": names("deferred_table"), "steps": names("deferred_steps"),
        "writers": names("deferred_writers"), "action": names("deferred_action"), "arrival": names("deferred_arrival"),
        "allowance": names("deferred_allowance"),
        "rate_window": sql.Literal(RATE_WINDOW),
    }


def _params(names: Names, name: str, view_schema: str) -> dict[str, sql.Composable]:
    return {
        **_tables(names), "state": names("state"),
        "predicted": names("deferred_predicted"), "time_to_full": names("deferred_time_to_full"),
        "cost": names("deferred_cost"), "settle": names("deferred_settle"), "take": names("deferred_take"),
        "choose": names("deferred_choose"), "act": names("deferred_act"), "appended": names("deferred_appended"),
        "process": names("deferred_process"), "refresh": names("refresh"), "lag": names("lag"),
        "read": names("read"), "current": names("refreshed"),
        "steps_literal": _regclass(names, "deferred_steps"),
        "work": names("deferred_work"), "channel": sql.Literal(CHANNEL),
        "allow": names("deferred_allow"), "reset_allowance": names("deferred_reset_allowance"),
        "check": names("deferred_check"),
        "view": sql.Identifier(view_schema, name), "stale": sql.Identifier(view_schema, stale_name(name)),
        "view_literal": sql.Literal(sql.Identifier(view_schema, name).as_string(None)),
        "stale_literal": sql.Literal(sql.Identifier(view_schema, stale_name(name)).as_string(None)),
    }


def _regclass(names: Names, relation: str) -> sql.Literal:
    """A state relation's name as a quoted string literal, for functions that take a regclass."""
    return sql.Literal(sql.Identifier(names.schema, relation).as_string(None))


def stale_name(name: str) -> str:
    return f"{name}_stale"


def check_columns(name: str, columns: list[str]) -> None:
    """NAME_stale shows the view's columns beside STALE_COLUMNS: a view with a column of one of
    those names (a base column's, by default) cannot be deferred, which is said in one line
    before anything is installed."""
    taken = [c for c in columns if c in STALE_COLUMNS]
    if taken:
        raise UnsupportedQuery(f"view {name} has a column named {taken[0]}, which {stale_name(name)} adds to "
                               f"a deferred view's columns: give it another name (... AS {taken[0]}_2)")


# --- install ----------------------------------------------------------------------------------------


def state_plan(names: Names, tables: list[LoggedTable], budget_ms: float, planner: str) -> list[sql.Composable]:
    """The tables of the deferred layer (created once, kept by ``upgrade``): the budget and
    counters, one row per base table, one log per atom."""
    values = {
        **_tables(names), "budget_ms": sql.Literal(float(budget_ms)), "planner": sql.Literal(planner),
        "deferred_comment": sql.Literal("pgivm deferred view: the budget C, the planner, and counters since the last refresh"),
        "deferred_table_comment": sql.Literal("pgivm deferred view: per base table, what is pending (s[i]) and its cost f_i"),
        "writers_comment": sql.Literal("pgivm deferred view: a transaction that cannot see this row predates the deferred layer"),
        "action_comment": sql.Literal("pgivm deferred view: per base table, what actions took, and its cost function"),
        "arrival_comment": sql.Literal("pgivm deferred view: per base table and writing session, what it appended"),
        "allowance_comment": sql.Literal("pgivm deferred view: how far each table's appended count may go before f(s) is summed again"),
    }
    plan: list[sql.Composable] = [render(__name__, "00_state.sql", values), render(__name__, "05_pending.sql", values)]
    for table in tables:
        plan.append(sql.SQL("INSERT INTO {} (number, label, atoms, a_ms, b_ms) VALUES ({}, {}, {}, {}, {})").format(
            names("deferred_action"), sql.Literal(table.number), sql.Literal(table.label),
            sql.Literal([a.name for a in table.atoms]), sql.Literal([DEFAULT_A_MS]), sql.Literal([DEFAULT_B_MS])))
        for atom in table.atoms:
            plan.append(capture.log_tables(atom, names))
        plan.append(sql.SQL(
            # no key and no index: a COPY of 10^5 rows took 0.077 s to log with a serial primary key, 0.020 without
            "CREATE TABLE {log} ({columns}, m integer NOT NULL, "
            "at timestamptz NOT NULL DEFAULT pg_catalog.statement_timestamp()); "
            "COMMENT ON TABLE {log} IS {comment}").format(
            log=names(table.log), columns=sql.SQL(", ").join(
                sql.SQL("{} {}").format(_q(table.log_column(c.column)), sql.SQL(c.source_type)) for c in table.columns),  # type: ignore[arg-type]
            comment=sql.Literal(f"pgivm deferred view: the rows {table.label}'s statements inserted (m = 1) and "
                                "deleted (m = -1), not yet processed")))
        plan.append(sql.SQL(
            "CREATE TABLE {stage} (LIKE {log}); COMMENT ON TABLE {stage} IS {comment}").format(
            stage=names(table.stage), log=names(table.log),
            comment=sql.Literal(f"pgivm deferred view: the rows an action took from {table.log}, while it applies them")))
    return plan


def _take_function(names: Names, tables: list[LoggedTable]) -> sql.Composable:
    """Take the logged rows of the given tables into their stages, in one statement: one snapshot
    for every table, so an action or a read never applies part of a writer's transaction. Writers
    append meanwhile (they do not wait for actions): what they commit later stays in the log.
    Returns the rows taken per table, by table number."""
    ctes, counts = [], []
    for table in tables:
        n = table.number
        ctes.append(sql.SQL(
            "taken_{n} AS (DELETE FROM {log} WHERE {lit} = ANY (numbers) RETURNING *),\n"
            "         staged_{n} AS (INSERT INTO {stage} SELECT * FROM taken_{n})").format(
            n=sql.SQL(str(n)), lit=sql.Literal(n), log=names(table.log), stage=names(table.stage)))  # type: ignore[arg-type]
        counts.append(sql.SQL("(SELECT count(*) FROM taken_{})").format(sql.SQL(str(n))))  # type: ignore[arg-type]
    return sql.SQL(
        "CREATE FUNCTION {take}(numbers integer[]) RETURNS bigint[] LANGUAGE plpgsql SECURITY DEFINER\n"
        "SET search_path = pg_catalog, pg_temp\nAS $pgivm$\nDECLARE\n    taken bigint[];\nBEGIN\n"
        "    WITH {ctes}\n    SELECT ARRAY[{counts}] INTO taken;\n    RETURN taken;\nEND;\n$pgivm$;\n"
        "COMMENT ON FUNCTION {take}(integer[]) IS {comment}").format(
        take=names("deferred_take"), ctes=sql.SQL(",\n         ").join(ctes), counts=sql.SQL(", ").join(counts),
        comment=sql.Literal("pgivm deferred view: take the logged rows of some tables, in one snapshot"))


def _process_function(names: Names, tables: list[LoggedTable]) -> sql.Composable:
    """Apply one table's taken rows (its stage) and its atoms' own logs through the system's
    batch path; returns the atom-log rows it took (the stage's were counted by take). Atom logs
    are written only under the view's lock (the TRUNCATE paths), so no writer adds to them now."""
    blocks = []
    for table in tables:
        steps: list[sql.Composable] = []
        for atom in table.atoms:
            # the atom's net change: what its own log holds (TRUNCATE of a partition) and what the
            # table's statements logged, read as the capture layer reads a transition table, every
            # column qualified (n, done and table_number are this function's variables)
            cols = _columns(atom)
            group = sql.SQL(" GROUP BY {}").format(sql.SQL(", ").join(
                [sql.SQL(str(i + 1)) for i in range(len(cols))] + capture.value_scales(atom, "changes"))) \
                if cols else sql.SQL("")  # type: ignore[arg-type]
            keys = [b for c in atom.columns if c.key for b in c.base_columns()]
            raw = sql.SQL("SELECT {values}r.m::bigint FROM {stage} AS r{where}").format(
                values=sql.SQL("").join(sql.SQL("{}, ").format(v) for v in table.read(atom, "r")), stage=names(table.stage),
                where=sql.SQL(" WHERE ") + sql.SQL(" AND ").join(
                    sql.SQL("r.{} IS NOT NULL").format(_q(table.log_column(c.column))) for c in keys) if keys else sql.SQL(""))
            steps.append(sql.SQL(
                "        INSERT INTO {delta} ({cols}mult)\n"
                "            SELECT {changes}sum(changes.mult)::bigint\n"
                "              FROM (SELECT {own}o.mult FROM {log} AS o UNION ALL {raw}) AS changes"
                "{group} HAVING sum(changes.mult) <> 0;\n"
                "        DELETE FROM {log};\n"
                "        GET DIAGNOSTICS n = ROW_COUNT;\n"
                "        done := done + n;").format(
                delta=names(f"{atom.name}_delta"), log=names(f"{atom.name}_log"), group=group, raw=raw,
                cols=_listed(cols), changes=_listed(cols, "changes"), own=_listed(cols, "o")))
        steps.append(sql.SQL("        DELETE FROM {};").format(names(table.stage)))
        for atom in table.atoms:
            steps.append(sql.SQL("        PERFORM {}();").format(names(f"maintain_batch_{atom.name}")))
        # (no name of a table in a comment here: a name is text its owner chooses, and only a quoted
        # identifier or literal may carry such text into generated code)
        blocks.append(sql.SQL("    IF table_number = {number} THEN\n{steps}\n    END IF;").format(
            number=sql.Literal(table.number), steps=sql.SQL("\n").join(steps)))
    return sql.SQL(
        "CREATE FUNCTION {process}(table_number integer) RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER\n"
        "SET search_path = pg_catalog, pg_temp\nAS $pgivm$\nDECLARE\n    n bigint;\n    done bigint := 0;\nBEGIN\n"
        "{blocks}\n    RETURN done;\nEND;\n$pgivm$;\n"
        "COMMENT ON FUNCTION {process}(integer) IS {comment}").format(
        process=names("deferred_process"), blocks=sql.SQL("\n").join(blocks),
        comment=sql.Literal("pgivm deferred view: apply one base table's taken rows through the system's batch path"))


def _truncate_check_function(names: Names, view: str) -> sql.Composable:
    """TRUNCATE is not MVCC-safe: it takes away rows the transaction's snapshot cannot see. The
    logs must lose exactly what the table loses, and a REPEATABLE READ or SERIALIZABLE snapshot
    that misses a commit could miss some writer's log rows and counts: such a TRUNCATE gets 40001
    (READ COMMITTED reads them after its table lock, so it sees every writer before it)."""
    return sql.SQL(
        "CREATE FUNCTION {f}() RETURNS void LANGUAGE plpgsql SECURITY DEFINER\n"
        "SET search_path = pg_catalog, pg_temp\nAS $pgivm$\n"
        "DECLARE\n    snap pg_snapshot := pg_current_snapshot();\n    mine xid8 := pg_current_xact_id();\nBEGIN\n"
        "    IF current_setting('transaction_isolation') = 'read committed' THEN\n        RETURN;\n    END IF;\n"
        "    IF EXISTS (SELECT FROM pg_snapshot_xip(snap) AS x WHERE pg_xact_status(x) = 'committed')\n"
        "       OR EXISTS (SELECT FROM generate_series(pg_snapshot_xmax(snap)::text::numeric, mine::text::numeric - 1) AS g\n"
        "                   WHERE pg_xact_status(g::text::xid8) = 'committed') THEN\n"
        "        RAISE EXCEPTION USING ERRCODE = 'serialization_failure',\n"
        "            MESSAGE = format('could not serialize access: a TRUNCATE of a base table of deferred pgivm view %s "
        "must see every commit before it, and this transaction''s snapshot is older than one', {view}),\n"
        "            HINT = 'Retry the transaction, or TRUNCATE in READ COMMITTED.';\n"
        "    END IF;\nEND;\n$pgivm$;\n"
        "COMMENT ON FUNCTION {f}() IS {comment}").format(
        f=names("deferred_truncate_check"), view=sql.Literal(view),
        comment=sql.Literal("pgivm deferred view: a TRUNCATE that cannot see every commit before it fails"))


def _functions_of(conn: psycopg.Connection, schema: str, function: str) -> list[tuple[int, str]]:
    """(oid, argument list) of the functions of that name in the state schema."""
    return [(int(oid), str(args)) for oid, args in conn.execute(
        "SELECT p.oid, pg_catalog.pg_get_function_arguments(p.oid) FROM pg_catalog.pg_proc p "
        "JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = %s AND p.proname = %s",
        [schema, function]).fetchall()]


def _wrappers(conn: psycopg.Connection, names: Names, table: LoggedTable, view: str) -> list[sql.Composable]:
    """Rename each atom's maintenance entry points and put log appends in their place. Writers
    reach only the table's lean capture function (below); these wrappers serve the TRUNCATE paths
    (a partition's rows read before they go, a plain table's atoms cleared), which take the view's
    lock first (the system's TRUNCATE functions update its state row)."""
    out: list[sql.Composable] = []
    for position, atom in enumerate(table.atoms):
        k = atom.name
        last = sql.Literal(position == len(table.atoms) - 1)
        cols = _columns(atom)
        listed, from_delta = _listed(cols), _listed(cols, "d")
        if not _functions_of(conn, names.schema, f"apply_batch_{k}"):
            raise PgivmError(f"internal: no apply_batch_{k} in {names.schema}", "deferred mode needs the system's batch path")
        out.append(sql.SQL("ALTER FUNCTION {f}() RENAME TO {to}").format(f=names(f"apply_batch_{k}"), to=_q(f"maintain_batch_{k}")))
        out.append(sql.SQL(
            "CREATE FUNCTION {f}() RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$\n"
            "DECLARE\n    n bigint;\nBEGIN\n"
            "    PERFORM {truncate_check}();\n"
            "    INSERT INTO {log} ({cols}mult) SELECT {from_delta}d.mult FROM {delta} AS d;\n"
            "    GET DIAGNOSTICS n = ROW_COUNT;\n    DELETE FROM {delta};\n"
            "    PERFORM {appended}({number}, n, {last});\nEND;\n$pgivm$; COMMENT ON FUNCTION {f}() IS {comment}").format(
            f=names(f"apply_batch_{k}"), log=names(f"{k}_log"), cols=listed, from_delta=from_delta, delta=names(f"{k}_delta"),
            appended=names("deferred_appended"), number=sql.Literal(table.number), last=last,
            truncate_check=names("deferred_truncate_check"),
            comment=sql.Literal(f"pgivm deferred view: append the statement's net change of {k.upper()} to its log")))
        for _, arguments in _functions_of(conn, names.schema, f"apply_{k}"):
            count = len(cols) + 1
            if arguments.count(",") + 1 != count:
                raise PgivmError(f"internal: apply_{k}({arguments}) does not take the {count} columns of {k}_delta")
            out.append(sql.SQL("ALTER FUNCTION {f}({args}) RENAME TO {to}").format(
                f=names(f"apply_{k}"), args=sql.SQL(arguments), to=_q(f"maintain_{k}")))  # type: ignore[arg-type]  # from pg_catalog
            out.append(sql.SQL(
                "CREATE FUNCTION {f}({args}) RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$\n"
                "BEGIN\n    INSERT INTO {log} ({cols}mult) VALUES ({values});\n"
                "    PERFORM {appended}({number}, 1, {last});\nEND;\n$pgivm$").format(
                f=names(f"apply_{k}"), args=sql.SQL(arguments), log=names(f"{k}_log"), cols=listed,  # type: ignore[arg-type]
                values=sql.SQL(", ").join(sql.SQL(f"${i + 1}") for i in range(count)),  # type: ignore[arg-type]
                appended=names("deferred_appended"), number=sql.Literal(table.number), last=last))
        if _functions_of(conn, names.schema, f"clear_{k}"):
            out.append(sql.SQL("ALTER FUNCTION {f}() RENAME TO {to}").format(f=names(f"clear_{k}"), to=_q(f"maintain_clear_{k}")))
            out.append(sql.SQL(
                "CREATE FUNCTION {f}() RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$\n"
                "BEGIN\n    -- TRUNCATE: the table is empty, so is what its state must become; nothing stays pending\n"
                "    PERFORM {truncate_check}();\n"
                "    DELETE FROM {log};\n    DELETE FROM {table_log};\n"
                "    UPDATE {action} AS t SET taken = (SELECT coalesce(sum(a.appended), 0) FROM {arrival} AS a\n"
                "                                        WHERE a.number = {number}) WHERE t.number = {number};\n"
                "    PERFORM {maintain}();\nEND;\n$pgivm$").format(
                f=names(f"clear_{k}"), log=names(f"{k}_log"), table_log=names(table.log),
                action=names("deferred_action"), arrival=names("deferred_arrival"),
                number=sql.Literal(table.number), maintain=names(f"maintain_clear_{k}"),
                truncate_check=names("deferred_truncate_check")))
    out.append(_lean_capture(names, table, view))
    return out


def _lean_capture(names: Names, table: LoggedTable, view: str) -> sql.Composable:
    """The table's INSERT, UPDATE and DELETE capture function, replaced: one append of the
    statement's rows to the table's log (an UPDATE as its old rows out and its new rows in),
    nothing per atom; each atom's net change is derived when the log is processed. The counts go
    to this session's own rows (``deferred_appended``, inline: a function call less per
    statement), so the writer waits for nothing. A transaction older than the deferred layer (its
    marker row invisible) gets 40001: it may hold changes made before the triggers existed."""
    log_cols = sql.SQL(", ").join(_q(table.log_column(c.column)) for c in table.columns)

    def rows(source: str, sign: str) -> sql.Composable:
        # every column qualified: a base column may be named like a variable here (n, allowed, ...)
        return sql.SQL("SELECT {cols}, {sign} FROM {source}").format(
            cols=sql.SQL(", ").join(sql.SQL("{}.{}").format(sql.SQL(source), _q(c.column)) for c in table.columns),  # type: ignore[arg-type]
            sign=sql.SQL(sign), source=sql.SQL(source))  # type: ignore[arg-type]

    return sql.SQL(
        "CREATE OR REPLACE FUNCTION {f}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER\n"
        "SET search_path = pg_catalog, pg_temp SET jit = off\nAS $pgivm$\nDECLARE\n    n bigint;\n"
        "    allowed boolean := true;\n"
        "    writer bigint := nullif(current_setting('pgivm.writer', true), '')::bigint;\nBEGIN\n"
        "    PERFORM FROM {writers} AS w WHERE w.singleton;\n"
        "    IF NOT FOUND THEN\n"
        "        RAISE EXCEPTION USING ERRCODE = 'serialization_failure',\n"
        "            MESSAGE = format('could not serialize access: pgivm view %s was created, or made deferred, after this transaction took its snapshot', {view}),\n"
        "            HINT = 'Retry the transaction.';\n"
        "    END IF;\n"
        "    IF TG_OP = 'INSERT' THEN\n        INSERT INTO {log} ({cols}, m) {inserted};\n"
        "    ELSIF TG_OP = 'DELETE' THEN\n        INSERT INTO {log} ({cols}, m) {deleted};\n"
        "    ELSE\n        INSERT INTO {log} ({cols}, m) {deleted} UNION ALL {inserted};\n    END IF;\n"
        "    GET DIAGNOSTICS n = ROW_COUNT;\n"
        "    IF n > 0 THEN\n"
        "        IF writer IS NULL THEN\n"
        "            writer := (random() * 9e18)::bigint;\n"
        "            PERFORM set_config('pgivm.writer', writer::text, false);\n"
        "        END IF;\n"
        "        INSERT INTO {arrival} AS a (number, pid, token, appended, arrived, halvings)\n"
        "        SELECT {number}, pg_backend_pid(), writer, n, n, (CASE WHEN s.is_called THEN s.last_value ELSE 0 END) / {window}\n"
        "          FROM {steps_table} AS s\n"
        "        ON CONFLICT (number, pid, token) DO UPDATE\n"
        "           SET appended = a.appended + excluded.appended,\n"
        "               arrived = (a.arrived >> least(greatest(excluded.halvings - a.halvings, 0), 62)::integer) + excluded.arrived,\n"
        "               halvings = excluded.halvings;\n"
        "        allowed := (SELECT sum(a.appended) FROM {arrival} AS a WHERE a.number = {number})\n"
        "                   <= coalesce((SELECT w.check_at[{number}] FROM {allowance} AS w ORDER BY w.check_id DESC LIMIT 1), -1);\n"
        "    END IF;\n"
        "    PERFORM nextval({steps});\n"
        "    IF NOT allowed THEN\n        PERFORM {check}({number});\n    END IF;\n"
        "    RETURN NULL;\nEND;\n$pgivm$;\n"
        "COMMENT ON FUNCTION {f}() IS {comment}").format(
        f=sql.Identifier(*table.on_change), log=names(table.log), cols=log_cols, inserted=rows("new_rows", "1"),
        deleted=rows("old_rows", "-1"), arrival=names("deferred_arrival"), check=names("deferred_check"),
        writers=names("deferred_writers"), view=sql.Literal(view), allowance=names("deferred_allowance"),
        steps=_regclass(names, "deferred_steps"), steps_table=names("deferred_steps"), window=sql.Literal(RATE_WINDOW),
        number=sql.Literal(table.number),
        comment=sql.Literal(f"pgivm deferred view: log the rows a statement changed in {table.label}"))


def wrap(conn: psycopg.Connection, names: Names, tables: list[LoggedTable], name: str, view_schema: str) -> None:
    """Turn the freshly installed functions and view of an immediate view into a deferred one
    (create and upgrade run this after the system's phases)."""
    params = _params(names, name, view_schema)
    params.update({
        "refresh_comment": sql.Literal(f"pgivm view {name}: apply every pending change"),
        "lag_comment": sql.Literal(f"pgivm view {name}: changes pending and seconds since the oldest"),
        # the oldest row still in any table's log: a scan of what is pending (no index, for the
        # writers' sake; what is pending is what C allows, unless no action runs)
        "oldest": sql.SQL("least({})").format(sql.SQL(", ").join(
            sql.SQL("(SELECT min(at) FROM {})").format(names(t.log)) for t in tables)),
        "read_comment": sql.Literal(f"pgivm view {name}: apply what is pending, then the result"),
        "view_comment": sql.Literal(f"pgivm: deferred view, exact: a read first applies what is pending "
                                    f"(at most the budget); {stale_name(name)} answers at once"),
        "stale_comment": sql.Literal(f"pgivm: the result of {name} as last refreshed, with the changes pending "
                                     f"and how many seconds they lag"),
    })
    _current_layout(conn, names, tables)
    conn.execute(render(__name__, "05_pending.sql", {**_tables(names), "deferred_table_comment": sql.Literal(
        "pgivm deferred view: per base table, what is pending (s[i]) and its cost f_i")}))
    conn.execute(_truncate_check_function(names, name))
    for table in tables:
        for statement in _wrappers(conn, names, table, name):
            conn.execute(statement)
    if _functions_of(conn, names.schema, "statement_open"):
        # first-order's count of a statement's writes (its last write applies them all): writers of
        # a deferred view only log, and its process reads the other tables less what is pending
        conn.execute(sql.SQL("CREATE OR REPLACE FUNCTION {}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER "
                             "SET search_path = pg_catalog, pg_temp AS $pgivm$ BEGIN RETURN NULL; END; $pgivm$").format(
            names("statement_open")))
    conn.execute(_process_function(names, tables))
    conn.execute(_take_function(names, tables))
    conn.execute(render(__name__, "10_planner.sql", params))
    # The system's view of its state becomes the state schema's "refreshed"; the user's name now
    # reads through read().
    parked = f"pgivm_refreshed_{name}"
    conn.execute(sql.SQL("ALTER VIEW {} RENAME TO {}").format(sql.Identifier(view_schema, name), _q(parked)))
    conn.execute(sql.SQL("ALTER VIEW {} SET SCHEMA {}").format(sql.Identifier(view_schema, parked), names.schema_id))
    conn.execute(sql.SQL("ALTER VIEW {} RENAME TO {}").format(names(parked), _q("refreshed")))
    conn.execute(render(__name__, "20_read.sql", params))
    # Readers of the view and of its stale view run read() and lag(): function calls in a view
    # need EXECUTE of whoever reads it. Nobody but the owner may name anything in the state
    # schema (no USAGE), so these two run only through the views, for roles PostgreSQL let read them.
    conn.execute(sql.SQL(
        "REVOKE ALL ON ALL TABLES IN SCHEMA {s} FROM PUBLIC; REVOKE ALL ON ALL FUNCTIONS IN SCHEMA {s} FROM PUBLIC; "
        "REVOKE ALL ON SCHEMA {s} FROM PUBLIC; GRANT EXECUTE ON FUNCTION {read}(), {lag}() TO PUBLIC").format(
        s=names.schema_id, read=names("read"), lag=names("lag")))


def _current_layout(conn: psycopg.Connection, names: Names, tables: list[LoggedTable]) -> None:
    """The deferred layer's tables as this version has them, for views made deferred before (their
    pending rows and counts kept): counts per writing session, logs with their own column names
    (table logs and atom logs), no serial key in the logs (writers paid for its index)."""
    arrival = names("deferred_arrival")
    columns = {r[0] for r in conn.execute(
        "SELECT attname FROM pg_catalog.pg_attribute WHERE attrelid = %s::pg_catalog.regclass AND attnum > 0 "
        "AND NOT attisdropped", [arrival.as_string(conn)]).fetchall()}
    conn.execute(sql.SQL("CREATE TABLE IF NOT EXISTS {} (check_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
                         "check_at bigint[] NOT NULL)").format(names("deferred_allowance")))
    if "pid" not in columns:
        conn.execute(sql.SQL(
            "ALTER TABLE {a} DROP COLUMN IF EXISTS check_at, "
            "ADD COLUMN IF NOT EXISTS checks bigint NOT NULL DEFAULT 0, ADD COLUMN pid integer NOT NULL DEFAULT 0, "
            "ADD COLUMN token bigint NOT NULL DEFAULT 0, ADD COLUMN halvings bigint NOT NULL DEFAULT 0; "
            "ALTER TABLE {a} DROP CONSTRAINT {pkey}; ALTER TABLE {a} ADD PRIMARY KEY (number, pid, token); "
            "UPDATE {a} SET halvings = (SELECT (CASE WHEN s.is_called THEN s.last_value ELSE 0 END) / {w} FROM {steps} AS s)").format(
            a=arrival, pkey=_q("deferred_arrival_pkey"), w=sql.Literal(RATE_WINDOW), steps=names("deferred_steps")))
    for table in tables:
        for atom in table.atoms:  # an atom log's columns were named after the base columns
            conn.execute(capture.renamed_atom_columns(names(f"{atom.name}_log"), atom, before=("seq", "xid")))
        old = [c.column for c in table.columns]
        for relation in (table.log, table.stage):
            conn.execute(sql.SQL("ALTER TABLE {} DROP COLUMN IF EXISTS seq").format(names(relation)))
            conn.execute(capture.renamed_columns(names(relation), [*old, "m", "at"],
                                                 [*(table.log_column(c) for c in old), "m", "at"]))


def unwrap_views(conn: psycopg.Connection, names: Names, name: str, view_schema: str) -> None:
    """Before ``upgrade`` reinstalls the functions: the views that read through them go (the
    system's phases, then ``wrap``, put them back)."""
    conn.execute(sql.SQL("DROP VIEW IF EXISTS {}, {}; DROP FUNCTION IF EXISTS {}(); DROP VIEW IF EXISTS {}").format(
        sql.Identifier(view_schema, name), sql.Identifier(view_schema, stale_name(name)), names("read"),
        names("refreshed")))


def drop_state(conn: psycopg.Connection, names: Names, tables: list[LoggedTable]) -> None:
    """The deferred layer's tables, once the view is immediate again (its logs are empty)."""
    logs = [names(f"{a.name}_log") for t in tables for a in t.atoms] + [names(t.log) for t in tables] \
        + [names(t.stage) for t in tables]
    conn.execute(sql.SQL("DROP VIEW {}; DROP TABLE {}; DROP SEQUENCE {}").format(
        names("deferred_table"),
        sql.SQL(", ").join([names("deferred"), names("deferred_arrival"), names("deferred_action"), names("deferred_writers"),
                            names("deferred_allowance"), *logs]), names("deferred_steps")))


# --- reading ------------------------------------------------------------------------------------


def is_deferred(params: dict[str, Any]) -> bool:
    return params.get("refresh") == "deferred"


def refresh(conn: psycopg.Connection, name: str) -> int:
    """Apply everything pending (in the caller's transaction); the number of log rows applied."""
    row = conn.execute(sql.SQL("SELECT {}()").format(Names.of(name)("refresh"))).fetchone()
    return int(row[0]) if row else 0


def figures(conn: psycopg.Connection, name: str) -> tuple[dict[str, Any], list[Section]]:
    names = Names.of(name)
    d = conn.execute(sql.SQL("SELECT budget_ms, planner, refreshed_step, spent_ms, actions, in_writer, refreshes, "
                             "refreshed_at, work_predicted_ms, work_actual_ms FROM {} WHERE singleton").format(
        names("deferred"))).fetchone()
    assert d is not None
    lag = conn.execute(sql.SQL("SELECT pending, lag_seconds FROM {}()").format(names("lag"))).fetchone()
    predicted = conn.execute(sql.SQL("SELECT {}()").format(names("deferred_predicted"))).fetchone()
    sums = conn.execute(sql.SQL("SELECT (SELECT coalesce(sum(checks), 0) FROM {}), (SELECT CASE WHEN is_called THEN last_value "
                                "ELSE 0 END FROM {})").format(names("deferred_arrival"), names("deferred_steps"))).fetchone()
    assert lag is not None and predicted is not None and sums is not None
    rows = conn.execute(sql.SQL(
        "SELECT number, label, array_to_string(atoms, ', '), pending, a_ms, b_ms, "
        "CASE WHEN calibrated IS NULL THEN 'default' ELSE 'measured' END, actions, processed "
        "FROM {} ORDER BY number").format(names("deferred_table"))).fetchall()
    out = {
        "refresh": "deferred", "log_rows_applied": sum(r[8] for r in rows), "budget_ms": d[0], "planner": d[1],
        "pending_changes": lag[0],
        "lag_seconds": round(float(lag[1]), 3), "predicted_refresh_ms": round(float(predicted[0]), 3),
        "actions": d[4], "refreshes": d[6], "actions_run_in": _actions_run_in(conn),
        "actions_in_writers": d[5], "cost_summed": f"after {sums[0]:,} of {sums[1]:,} writing statements", "work_predicted_ms": round(float(d[8]), 1), "work_actual_ms": round(float(d[9]), 1),
    }
    section = Section("delta logs (f_i(k) = the least of its lines a·k + b, in ms)",
                      ["i", "table", "atoms", "pending", "f_i(k)", "cost", "actions", "rows processed"],
                      [[*r[:4], describe_lines(r[4], r[5]), *r[6:]] for r in rows])
    return out, [section]


def describe_lines(a_ms: list[float], b_ms: list[float]) -> str:
    """A cost function for people: 0.0500·k + 2.00, or min(…, …) of several lines."""
    lines = [f"{a:.4f}·k + {b:.2f}" for a, b in zip(a_ms, b_ms)]
    return lines[0] if len(lines) == 1 else f"min({', '.join(lines)})"


def worker_pid(conn: psycopg.Connection) -> int | None:
    """The process id of the `pgivm worker` serving this database, if one runs."""
    row = conn.execute("SELECT pgivm_catalog.worker_pid()").fetchone()
    return int(row[0]) if row and row[0] is not None else None


def _actions_run_in(conn: psycopg.Connection) -> str:
    pid = worker_pid(conn)
    return f"the worker (server pid {pid})" if pid else "the writing transaction (no worker)"


def checks(names: Names, tables: list[LoggedTable]) -> list[tuple[str, sql.Composable]]:
    """Named invariants of the deferred layer: each table's pending count is the rows of its logs."""
    out = []
    for table in tables:
        logs = [f"{a.name}_log" for a in table.atoms] + [table.log]
        total = sql.SQL(" + ").join(sql.SQL("(SELECT count(*) FROM {})").format(names(log)) for log in logs)
        out.append((f"deferred pending = log rows ({table.label})", sql.SQL(
            "SELECT pending, {total} FROM {t} WHERE number = {n} AND pending <> {total}").format(
            total=total, t=names("deferred_table"), n=sql.Literal(table.number))))
    return out
