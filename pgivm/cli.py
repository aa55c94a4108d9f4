"""``pgivm``: the command line, a thin mirror of :mod:`pgivm.command` (the API): parse, call, print.

Built from tables, as alembic's command line mirrors its ``command`` module:

* ``OPTIONS``: the arguments commands share, keyed by the parameter of the command functions they
  fill (``target`` is ``--dsn``, ``lock_wait`` is ``--lock-wait``), with argparse's settings. A
  flag's default, unless its spec sets one, is the parameter's default in the function's signature.
* ``COMMANDS``: each subcommand as data: the function it mirrors, whose docstring's summary is its
  help; its arguments in ``--help`` order (its own specs, else ``OPTIONS``), those that are
  parameters of the function being passed to it; and a printer of the result. A hand-written
  handler replaces the plain call only where the CLI does more than call (create checks the SQL
  before it connects, worker handles signals, upgrade --all loops, ...).
* Built from other specs: the options of the maintenance systems and their actions (``rebalance``,
  ``alter``, ``sample``: ``pgivm.systems.base.Option``, ``Action``), the refresh options
  (``pgivm.deferred.OPTIONS``), the bench's flags (``pgivm.bench.options``).

User errors arrive as PgivmError subclasses (``pgivm.errors``) and are told apart by class, never
by their message.

Exit codes: 0 success, 1 ``verify`` found a difference, 2 a user error (bad SQL, unknown view,
unreachable server, ...), 3 ``server status`` of a server not running (pg_ctl's code), 130 interrupted,
141 stdout closed by its reader (``pgivm list | head -1``); ``pgivm psql`` exits with psql's own code.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import inspect
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import psycopg

from pgivm import __version__, command, deferred, demo
from pgivm.bench import options as bench_options
from pgivm.connection import connect, resolve_dsn
from pgivm.errors import NeedsColumns, PgivmError
from pgivm.report import human_bytes as _human_bytes
from pgivm.report import print_table as _print_table
from pgivm.systems import registry
from pgivm.systems.base import Option

if TYPE_CHECKING:
    from pgivm.server import EmbeddedServer, ServerStatus

EXIT_MISMATCH = 1
EXIT_ERROR = 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a program whose reader went away

#: Seconds before ``create`` says on stderr that it is building: a quick refusal stays one line.
SLOW_NOTE_AFTER_S = 2.0


# --- the specs ---------------------------------------------------------------------------------


class Arg:
    """One argument of a command: its flags (none: a positional argument) and argparse's settings."""

    def __init__(self, *flags: str, **settings: Any) -> None:
        self.flags = flags
        self.settings = settings

    def but(self, **changes: Any) -> Arg:
        """The same argument with some settings changed (another help text, default, ...)."""
        return Arg(*self.flags, **{**self.settings, **changes})

    def add_to(self, parser: argparse._ActionsContainer, param: str, signature_default: Any) -> str:
        """Add it to ``parser`` as parameter ``param``; returns the attribute it is parsed into."""
        settings = dict(self.settings)
        if not self.flags:
            return parser.add_argument(param, **settings).dest
        if "default" not in settings and signature_default is not inspect.Parameter.empty:
            settings["default"] = signature_default  # the API's default is the CLI's
        # The dest is argparse's own (from the flag), so the metavar stays the flag's: --target TARGET.
        return parser.add_argument(*self.flags, **settings).dest


Printer = Callable[[argparse.Namespace, Any], int | None]
Handler = Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class Command:
    """A subcommand as data."""

    name: str
    # The function mirrored: the arguments named like its parameters are passed to it, its
    # docstring's first paragraph is the help, its signature gives the flags' defaults.
    fn: Callable[..., Any] | None
    args: tuple[str, ...] = ()  # after --dsn, in --help order: from `own`, else from OPTIONS
    own: Mapping[str, Arg] = field(default_factory=dict)  # this command's arguments, or shared ones reworded
    # Prints fn's result and returns the exit code (None: 0); without one, fn printed itself and
    # returned the exit code (demo). --json, where given, prints the result as JSON instead.
    printer: Printer | None = None
    handler: Handler | None = None  # instead of the plain call, where the CLI does more than call fn
    help: str | None = None  # default: the summary of fn's docstring
    note: str = ""  # what the CLI adds to that summary: an exit code, signals
    parser: Mapping[str, Any] = field(default_factory=dict)  # more settings of its parser: description, usage
    extend: Callable[[argparse.ArgumentParser], None] | None = None  # arguments built from other specs
    defaults: Mapping[str, Any] = field(default_factory=dict)  # set_defaults beyond the arguments
    dsn: bool = True  # takes --dsn (fn's `target`), as its first option


_DSN_HELP = "libpq connection string or postgresql:// URL of the database (before or after the command)"

#: The shared arguments, keyed by the parameter of the command functions they fill.
OPTIONS: dict[str, Arg] = {
    # SUPPRESS: a --dsn given before the command is not overwritten by an absent one after it.
    "target": Arg("--dsn", default=argparse.SUPPRESS, help=_DSN_HELP),
    "name": Arg(help="name of the view"),
    "lock_wait": Arg("--lock-wait", type=float, metavar="SECONDS",
                     help="how long to keep trying for the locks, one short attempt at a time so that writers "
                          "never wait long on pgivm, before giving up with one line (default %(default)g)"),
    "schema": Arg("--schema", help="schema of the view (default: the current schema)"),
    "strict": Arg("--strict", action="store_true",
                  help="also require the strict partition (right after a rebalance)"),
    "force": Arg("--force", action="store_true", help="reinstall even if the templates did not change"),
    "master": Arg("--master", help="Spark master (default %(default)s)"),
    "json": Arg("--json", action="store_true", help="print JSON"),  # read by _call, not by the function
}


def _from_option(option: Option, note: str = "", required: bool = False) -> Arg:
    """A flag built from a system's option spec; its absence is None (the system's default).

    Read as text: the option's own validate() turns it into its type, with a one-line complaint."""
    return Arg(option.flag, dest=option.name, type=str, default=None, required=required,
               metavar=option.name.upper(), help=option.help + note)


def _system_options() -> dict[Option, list[str]]:
    """Every option of every system (shared ones once), with the systems that take it."""
    found: dict[str, tuple[Option, list[str]]] = {}
    for system in registry.SYSTEMS.values():
        for option in system.options:
            found.setdefault(option.name, (option, []))[1].append(system.name)
    return {option: owners for option, owners in found.values()}


def _system_actions() -> dict[str, tuple[str, list[Option], list[str]]]:
    """Every action of every system by name: its help, its options (shared ones once), its systems."""
    found: dict[str, tuple[str, list[Option], list[str]]] = {}
    for system in registry.SYSTEMS.values():
        for action in system.actions:
            help_text, options, owners = found.setdefault(action.name, (action.help, [], []))
            options += [o for o in action.options if o.name not in {x.name for x in options}]
            owners.append(system.name)
    return found


def _add_create_options(parser: argparse.ArgumentParser) -> None:
    """create's groups: every system's options, then the refresh options."""
    group = parser.add_argument_group("options of the maintenance systems (each applies to the systems named)")
    for option, owners in _system_options().items():
        _from_option(option, f" (systems: {', '.join(owners)}; default {option.default})").add_to(
            group, option.name, inspect.Parameter.empty)
    group = parser.add_argument_group(
        "refresh (every system that can defer: "
        + ", ".join(s.name for s in registry.SYSTEMS.values() if s.deferred_atoms) + ")")
    for option in deferred.OPTIONS:
        _from_option(option, f" (default {option.default})").add_to(group, option.name, inspect.Parameter.empty)


def _add_refresh_options(parser: argparse.ArgumentParser) -> None:
    """alter's group of refresh options (create's help explains them)."""
    group = parser.add_argument_group("refresh (every system that can defer; pgivm create --help says more)")
    for option in deferred.OPTIONS:
        _from_option(option).add_to(group, option.name, inspect.Parameter.empty)


# --- printers: what a command's result looks like ----------------------------------------------


def _print_init(args: argparse.Namespace, result: command.InitResult) -> None:
    print(f"catalog migrations applied: {', '.join(result.applied)}" if result.applied else "catalog is up to date")
    if result.applied:
        print(f"catalog schema pgivm_catalog, owned by {result.owner}; what other roles need:")
        for line in result.rights:
            print(f"  {line}")
    if not result.ddl_guards:
        print("pgivm: note: the DDL event triggers are not installed (creating them needs a superuser): DDL that "
              "breaks a view is not refused, but `pgivm verify` reports it; run `pgivm init` as a superuser",
              file=sys.stderr)
    if result.outdated:
        print(f"views installed from older SQL templates: {', '.join(result.outdated)}; "
              "`pgivm upgrade --all` reinstalls their functions (state kept)")


def _print_refresh(args: argparse.Namespace, result: command.RefreshResult) -> None:
    print(f"refreshed {result.name}: {result.applied:,} pending changes applied in {result.seconds:.2f} s")


def _print_load(args: argparse.Namespace, result: Any) -> None:
    from pgivm.spark.load import blank_lines_note

    skipped = blank_lines_note(result.blank_lines)
    print(f"loaded {result.rows:,} rows from {result.file} into {result.table} in {result.seconds:.1f} s "
          f"({result.rows_per_second:,.0f} rows/s){'; ' + skipped if skipped else ''}")


def _print_drop(args: argparse.Namespace, result: None) -> None:
    print(f"dropped {args.name}")


def _print_list(args: argparse.Namespace, views: list[command.ViewSummary]) -> None:
    if not views:
        print("no pgivm views in this database (create one with `pgivm create`)")
        return
    _print_table(["name", "view", "system", "parameters", "result", "definition"],
                 [[v.name, v.view, v.system, _params_text(v.params), "" if v.count is None else f"{v.counts} = {v.count}",
                   v.definition] for v in views])


def _params_text(params: dict[str, object]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(params.items()) if v is not None)


def _figure(value: object) -> object:
    return round(value, 2) if isinstance(value, float) else value


STATUS_WIDTH = 100  # a row of figures wider than this is printed as a list of figures, one per line


def _print_status(args: argparse.Namespace, report: command.StatusReport) -> None:
    print(f"view {report.view} ({report.system}): {report.definition}")
    headers = [report.counts, *report.labels.values()]
    values = [report.count, *(_figure(v) for v in report.figures.values())]
    if sum(max(len(str(h)), len(str(v))) + 2 for h, v in zip(headers, values)) - 2 > STATUS_WIDTH:
        _print_table(["figure", "value"], [[h, v] for h, v in zip(headers, values)])
    else:
        _print_table(headers, [values])
    for section in report.sections:
        print()
        _print_table(section.headers, section.rows)
    print()
    _print_table(["state table", "rows", "size"],
                 [[t["table"], t["rows"], _human_bytes(t["bytes"])] for t in report.tables])
    if parameters := _params_text(report.params):
        print(f"\nparameters: {parameters}")
    for problem in report.problems:
        print(f"problem: {problem}")


def _print_lines(args: argparse.Namespace, lines: list[str]) -> None:
    for line in lines:
        print(line)


def _print_regress(args: argparse.Namespace, result: Any) -> None:
    print(f"linear regression of {result.target} on {len(result.features)} features over {result.rows} joined rows "
          f"(from the maintained cofactor matrix)")
    _print_table(["term", "coefficient"], [["intercept", f"{result.intercept:.10g}"],
                                           *([f, f"{c:.10g}"] for f, c in result.coefficients.items())])
    print(f"R² = {result.r2:.6f}" + ("" if result.rank == len(result.features) + 1
                                     else f" (XᵀX has rank {result.rank}: collinear features, minimum-norm fit)"))


def _print_verify(args: argparse.Namespace, report: command.VerifyReport) -> int:
    print(f"maintained: {report.maintained}")
    print(f"recount:    {report.recount}")
    for failure in report.failures:  # one line per difference found
        for row in failure.rows[:20]:
            if failure.columns and len(row) == len(failure.columns) + 1:  # a row of the view, or of its recount
                print(f"invariant violated: {failure.check}: {_sided_row(failure.columns, row)}")
            else:
                print(f"invariant violated: {failure.check}: {', '.join(map(str, row))}")
        if len(failure.rows) > 20:
            print(f"invariant violated: {failure.check}: ... and {len(failure.rows) - 20:,} more")
    if report.ok:
        print(f"OK: {args.name} equals its recount and every invariant of its system holds ({report.seconds:.2f} s)")
        return 0
    if report.maintained != report.recount:
        print(f"MISMATCH: the maintained count differs from the recount by {_difference(report)}")
    return EXIT_MISMATCH


def _sided_row(columns: Sequence[str], row: Sequence[object]) -> str:
    """A row headed by its side (view, plain sql, spark), each value named by its column."""
    return f"{row[0]}: " + ", ".join(f"{c} = {v}" for c, v in zip(columns, row[1:]))


def _difference(report: command.VerifyReport) -> str:
    if report.maintained is None or report.recount is None:
        return f"{report.maintained} vs {report.recount}"
    return f"{report.maintained - report.recount:+d}"


# --- handlers: where the CLI does more than call one function and print ---------------------------


def _create(args: argparse.Namespace) -> int:
    sql_text = args.sql
    if args.file and args.sql:
        raise PgivmError("give the view definition once: --sql or --file, not both")
    if args.file:
        try:
            with open(args.file, encoding="utf-8") as handle:
                sql_text = handle.read()
        except OSError as err:
            raise PgivmError(f"cannot read {args.file}: {err.strerror}") from None
    if not sql_text:
        raise PgivmError("give the view definition with --sql or --file")
    try:
        command.parse(sql_text, args.system)  # refuses unsupported SQL before anything connects or prints
    except NeedsColumns:
        pass  # SELECT *: create reads the tables' columns from the database
    options = {option.name: getattr(args, option.name) for option in [*_system_options(), *deferred.OPTIONS]}
    chosen = {k: v for k, v in options.items() if v is not None}
    detail = ", ".join([*([args.system] if args.system else []), *(f"{k}={v}" for k, v in chosen.items())])
    with connect(args.dsn, autocommit=True) as conn:  # as command.create would connect itself
        with _note_if_slow(f"creating {args.name}{f' ({detail})' if detail else ''}: "
                           "building the state from the base tables ..."):
            result = command.create(args.name, sql_text, system=args.system, schema=args.schema, target=conn,
                                    preprocess=args.preprocess, lock_wait=args.lock_wait, columns=args.columns,
                                    **chosen)
        schema = result.view[: -len(result.name) - 1]  # result.view is "schema.name"
        quoted = conn.execute("SELECT pg_catalog.quote_ident(%s) || '.' || pg_catalog.quote_ident(%s)",
                              [schema, result.name]).fetchone()[0]  # type: ignore[index]
    figures = "".join(f", {k} = {v}" for k, v in result.headline.items() if k != result.counts)  # once each
    print(f"created view {result.view} ({result.system}): {result.counts} = {result.count}{figures}, "
          f"built in {result.seconds:.2f} s")
    print(f"read it from any SQL client: SELECT * FROM {quoted};")
    return 0


@contextlib.contextmanager
def _note_if_slow(message: str) -> Iterator[None]:
    """Print ``message`` on stderr if the block still runs after SLOW_NOTE_AFTER_S: a long build
    says what it is doing, while a refusal of the input (found in well under that) stays one line."""
    timer = threading.Timer(SLOW_NOTE_AFTER_S, lambda: print(message, file=sys.stderr, flush=True))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        timer.join()  # a note being printed is complete before anything else is


def _calibrate(args: argparse.Namespace) -> int:
    try:
        ladder = tuple(int(k) for k in args.ladder.split(",")) if args.ladder else None
        repeats = int(args.repeats)
    except ValueError:
        raise PgivmError("--ladder takes comma-separated integers and --repeats an integer",
                         "e.g. --ladder 1,16,256 --repeats 3") from None
    fits = command.calibrate(args.name, ladder=ladder, repeats=repeats, target=args.dsn,
                             progress=lambda line: print(f"calibrating {args.name}: {line}", file=sys.stderr))
    rows = [[f.table, ", ".join(f"{k:,}: {y:.2f}" for k, y in f.points),
             f.function] for f in fits]
    _print_table(["table", "measured ms (k: ms)", "f(k) ms"], rows)
    print(f"{args.name}: the planner now predicts each table's f(k) as the least of its lines, at or above every point")
    return 0


def _worker(args: argparse.Namespace) -> int:
    try:
        poll = float(args.poll)
    except ValueError:
        raise PgivmError(f"--poll must be a number of seconds, got {args.poll!r}") from None
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    print("pgivm worker: serving the deferred views of this database; Ctrl-C or SIGTERM stops it", file=sys.stderr,
          flush=True)
    try:
        summary = command.worker(target=args.dsn, poll=poll, stop=stop,
                                 report=None if args.quiet else lambda line: print(line, flush=True))
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print(f"pgivm worker: stopped after {summary.seconds:.1f} s: {summary.actions:,} actions, "
          f"{summary.wakeups:,} wake-ups", file=sys.stderr)
    return 0


def _validate(args: argparse.Namespace) -> int:
    if not args.spark:
        return _print_verify(args, command.verify(args.name, strict=False, target=args.dsn))
    report = command.validate_spark(args.name, master=args.master, target=args.dsn)
    rows = " rows" if report.columns else ""
    print(f"maintained: {report.maintained}{rows}")
    print(f"spark:      {report.spark}{rows}")
    for row in report.differences:  # a group's row on each side: its key and both values
        print(f"differs: {_sided_row(report.columns, row)}")
    if report.ok:
        print(f"OK: {args.name} equals the Spark recount ({report.seconds:.1f} s)")
        return 0
    print(f"MISMATCH: the maintained {'rows differ' if report.columns else 'count differs'} from the Spark recount")
    return EXIT_MISMATCH


def _action(action_name: str, option_names: list[str], args: argparse.Namespace) -> int:
    """A system's action; alter also changes the refresh (pgivm.command.alter_refresh), or only that."""
    options = {name: getattr(args, name) for name in option_names}
    if action_name == "alter":
        refresh = {o.name: getattr(args, o.name) for o in deferred.OPTIONS}
        if all(v is None for v in (*refresh.values(), *options.values())):
            owners = _system_actions().get("alter", ("", [], []))
            flags = [o.flag for o in owners[1]] + [o.flag for o in deferred.OPTIONS]
            raise PgivmError("alter needs something to change", f"pass one of {', '.join(flags)}")
        if any(v is not None for v in refresh.values()):
            figures = command.alter_refresh(args.name, target=args.dsn, lock_wait=args.lock_wait, **refresh)
            print(f"alter {args.name}: " + ", ".join(f"{k} = {v}" for k, v in figures.items()))
        if all(v is None for v in options.values()):
            return 0
    figures = command.action(args.name, action_name, target=args.dsn, lock_wait=args.lock_wait, **options)
    rows, columns = figures.pop("rows", None), figures.pop("columns", None)
    if rows is not None:  # an action may hand back rows to show (sample --fresh)
        _print_table([str(c) for c in columns or []], [list(r) for r in rows])
    print(f"{action_name} {args.name}: " + ", ".join(f"{k} = {v}" for k, v in figures.items()))
    return 0


def _action_commands() -> list[Command]:
    """One command per action of the registry's systems, its options from the action's specs;
    alter, which also changes the refresh of any view, exists even if no system has one."""
    actions = _system_actions()
    actions.setdefault("alter", ("change how a view is refreshed", [], []))
    return [
        Command(
            name, command.action,
            args=("name", *(o.name for o in options), "lock_wait"),
            # alter takes a system's options, or the refresh options, or both: none is required
            own={"name": Arg(help=f"name of the view to {name}"),
                 **{o.name: _from_option(o, required=o.default is None and name != "alter") for o in options}},
            handler=functools.partial(_action, name, [o.name for o in options]),
            help=_alter_help(help_text, owners) if name == "alter" else
            f"{help_text} (systems: {', '.join(owners)})" if owners else help_text,
            extend=_add_refresh_options if name == "alter" else None,
        )
        for name, (help_text, options, owners) in actions.items()
    ]


def _alter_help(help_text: str, owners: list[str]) -> str:
    """alter changes any view's refresh, and a system's own options where it has them."""
    own = f"; {', '.join(owners)}: {help_text}" if owners else ""
    return f"change a view's refresh (--refresh, --budget, --planner: every system that can defer){own}"


def _upgrade(args: argparse.Namespace) -> int:
    if bool(args.name) == bool(args.all):
        raise PgivmError("name one view, or pass --all")
    names = [v.name for v in command.list_views(target=args.dsn)] if args.all else [args.name]
    for name in names:
        result = command.upgrade(name, force=args.force, rebuild=args.rebuild, target=args.dsn, lock_wait=args.lock_wait)
        done = "state laid out afresh and built from the base tables" if result.rebuilt else \
            "reinstalled from the current templates" if result.upgraded else "already current"
        print(f"{name}: {done} ({result.template_version}, {result.seconds:.2f} s)")
    return 0


def _bench(args: argparse.Namespace) -> int:
    from pgivm.bench import runner  # the workloads import numpy and matplotlib: only when benchmarking

    return runner.run(args)


def _server(args: argparse.Namespace) -> int:
    from pgivm.server import EmbeddedServer

    server = EmbeddedServer(port=args.port)
    if args.action == "start":
        status = _start_server(server, args.port, args.restart)
        print(f"embedded PostgreSQL running (pid {status.pid}, port {status.port}) with data in {status.data_dir}")
        print(f"  psql \"{server.dsn()}\"")
        print(f"  TCP: {server.url()}")
        print("  shell: eval \"$(pgivm server env)\" sets PGHOST, PGPORT, PGUSER, PGDATABASE for psql and other clients")
    elif args.action == "env":
        _start_server(server, args.port, args.restart)
        for name, value in server.libpq_env().items():
            print(f"export {name}={shlex.quote(value)}")
    elif args.action == "stop":
        print("stopped" if server.stop() else "not running")
    else:
        status = server.status()
        if status.running:
            print(f"running: pid {status.pid}, port {status.port}, data {status.data_dir}, {status.version or ''}".rstrip())
            print(f"  psql \"{server.dsn()}\"")
        else:
            print(f"not running (data directory {status.data_dir})")
            return SERVER_NOT_RUNNING
    return 0


SERVER_NOT_RUNNING = 3  # `server status` of a stopped server: pg_ctl status's convention


def _start_server(server: EmbeddedServer, port: int | None, restart: bool) -> ServerStatus:
    """Start the server; one already running on another port than --port is an error unless --restart."""
    if restart:
        return server.restart()
    status = server.status()
    if status.running and port is not None and status.port != port:
        raise PgivmError(
            f"the embedded server already runs on port {status.port}, not {port}",
            f"add --restart to restart it on port {port}, or run `pgivm server stop` first",
        )
    return server.start()


def _psql(args: argparse.Namespace) -> int:
    program = _find_psql()
    conninfo = resolve_dsn(args.dsn)  # "" when the PG* variables configure the server: psql reads them
    extra = args.psql_args[1:] if args.psql_args[:1] == ["--"] else args.psql_args
    process = subprocess.Popen([program, *(["--dbname", conninfo] if conninfo else []), *extra])
    # Ctrl-C belongs to psql (it cancels the running query); we only wait for psql to end.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        code = process.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
    return code if code >= 0 else 128 - code  # killed by signal N: 128 + N, as a shell says


def _find_psql() -> str:
    """psql from PATH, else the one bundled with the embedded server's binaries."""
    from pgivm.server import EmbeddedServer

    found = shutil.which("psql") or EmbeddedServer().client_program("psql")
    if found is None:
        raise PgivmError(
            "no psql found on PATH or next to the embedded server's binaries",
            "install the PostgreSQL client (e.g. apt-get install postgresql-client), or point another "
            "SQL client at the database (`pgivm server env` prints the embedded server's settings)",
        )
    return str(found)


def _comma_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


# --- the commands ---------------------------------------------------------------------------------

# create's --system and --preprocess list what the registry's systems offer.
_SYSTEMS = registry.SYSTEMS
_BUILDERS = ["postgres", *dict.fromkeys(b for s in _SYSTEMS.values() for b in s.builders)]
_SYSTEM_HELP = ("the maintenance system (default: the first that accepts the query, in this order): "
                + "; ".join(f"{s.name}: {s.summary}" for s in _SYSTEMS.values()))
_PREPROCESS_HELP = ("how to build the state: in PostgreSQL (default), or "
                    + "; ".join(f"{b} (systems: {', '.join(s.name for s in _SYSTEMS.values() if b in s.builders)})"
                                for b in _BUILDERS[1:]))

#: Every subcommand in the order of ``pgivm --help``. A function in the list stands for the
#: commands it returns (the systems' actions), built with the parser.
COMMANDS: list[Command | Callable[[], list[Command]]] = [
    Command("init", command.init, printer=_print_init),
    Command("create", command.create, handler=_create, extend=_add_create_options,
            args=("name", "sql", "file", "system", "schema", "columns", "preprocess", "lock_wait"),
            own={"name": Arg(help="name of the view to create (readable with SELECT * FROM name)"),
                 "sql": Arg("--sql", help="the view definition, e.g. a triangle count over three tables"),
                 "file": Arg("--file", help="read the view definition from this file"),
                 "system": Arg("--system", "--strategy", dest="system", choices=list(_SYSTEMS), help=_SYSTEM_HELP),
                 "columns": Arg("--columns", type=_comma_list, metavar="A,B,...",
                                help="names for the view's columns, as CREATE VIEW name (a, b) gives them"),
                 "preprocess": Arg("--preprocess", choices=_BUILDERS, help=_PREPROCESS_HELP)}),
    Command("refresh", command.refresh, args=("name",), printer=_print_refresh,
            own={"name": Arg(help="name of the deferred view")}),
    Command("calibrate", command.calibrate, handler=_calibrate, args=("name", "ladder", "repeats"),
            own={"name": Arg(help="name of the deferred view"),
                 # read as text, so that a bad number is one line of ours rather than argparse's usage
                 "ladder": Arg("--ladder", default=None, metavar="K,K,...",
                               help="batch sizes to time, comma-separated (default 1,4,16,64,256,1024)"),
                 "repeats": Arg("--repeats", default="3", metavar="N",
                                help="runs per batch size; the median counts (default 3)")}),
    Command("worker", command.worker, handler=_worker, args=("poll", "quiet"),
            note=", in the foreground until SIGINT or SIGTERM (which stop it between actions)",
            own={"poll": Arg("--poll", default="1", metavar="SECONDS",
                             help="also look at every deferred view this often, besides when a writer wakes it "
                                  "(default 1)"),
                 "quiet": Arg("--quiet", action="store_true", help="print nothing per action")}),
    Command("load", command.load, printer=_print_load,
            args=("table", "path", "columns", "fmt", "master", "symmetric", "drop_self_loops", "distinct", "header"),
            parser={"description": "Read FILE with Spark and append it to TABLE over JDBC (via a staging table, "
                                   "then one INSERT ... SELECT, so a pgivm view on TABLE is maintained set at a "
                                   "time). A malformed line aborts the load and leaves TABLE unchanged."},
            own={"table": Arg(help="target table (optionally schema-qualified); it must exist"),
                 "path": Arg(metavar="file", help="input file (or a directory of Parquet files)"),
                 "columns": Arg("--columns", required=True, type=_comma_list,
                                help="comma-separated target columns, e.g. src,dst"),
                 "fmt": Arg("--format", dest="fmt", choices=["csv", "tsv", "parquet", "edges"],
                            help="csv (default), tsv, parquet, or edges: a whitespace SNAP edge list with # "
                                 "comments, an optional node-count header line, extra columns ignored"),
                 "symmetric": Arg("--symmetric", action="store_true", help="also load (v, u) for every (u, v)"),
                 "drop_self_loops": Arg("--drop-self-loops", action="store_true", help="skip rows with u = v"),
                 "distinct": Arg("--distinct", action="store_true", help="drop duplicate rows of this load "
                                 "(with --symmetric: each edge exactly once per direction)"),
                 "header": Arg("--header", action="store_true",
                               help="the first line is a header (csv, tsv, edges)")}),
    Command("validate", command.validate_spark, handler=_validate, args=("name", "spark", "master"),
            help="recount a view from its base tables, in PostgreSQL or in Spark (exit 1 on a difference)",
            own={"name": Arg(help="name of the view to recount"),
                 "spark": Arg("--spark", action="store_true",
                              help="recount in Spark over JDBC instead of PostgreSQL"),
                 "master": OPTIONS["master"].but(help="Spark master with --spark (default %(default)s)")}),
    Command("drop", command.drop, args=("name", "lock_wait"), printer=_print_drop,
            own={"name": Arg(help="name of the view to remove")}),
    Command("list", command.list_views, args=("json",), printer=_print_list),
    Command("status", command.status, args=("name", "json"), printer=_print_status),
    Command("explain", command.explain, args=("name",), printer=_print_lines),
    Command("regress", command.regress, args=("name", "target_column", "json"), printer=_print_regress,
            own={"name": Arg(help="name of a view SELECT cofactor(x1, ..., xm) FROM ..."),
                 "target_column": Arg("--target", required=True,
                                      help="the label: one of the cofactor's columns, e.g. i.price")}),
    Command("verify", command.verify, args=("name", "strict"), printer=_print_verify,
            note=" (exit 1 on a difference)", own={"name": Arg(help="name of the view to check")}),
    _action_commands,
    Command("upgrade", command.upgrade, handler=_upgrade, args=("name", "all", "force", "rebuild", "lock_wait"),
            own={"name": Arg(nargs="?", help="name of the view to upgrade"),
                 "rebuild": Arg("--rebuild", action="store_true",
                                help="lay the state out afresh and build it from the base tables (for a view whose "
                                     "state an earlier pgivm laid out otherwise: upgrade says when)"),
                 "all": Arg("--all", action="store_true", help="upgrade every view of the database")}),
    Command("demo", demo.run, args=("nodes", "edges", "updates", "epsilon", "seed", "port"),
            own={"nodes": Arg("--nodes", type=int, help="nodes of the generated graph (default %(default)s)"),
                 "edges": Arg("--edges", type=int,
                              help="edges loaded before the view is created (default %(default)s)"),
                 "updates": Arg("--updates", type=int,
                                help="single-row inserts and deletes to stream (default %(default)s)"),
                 "epsilon": Arg("--epsilon", type=float, help="IVMε epsilon (default %(default)s)"),
                 "seed": Arg("--seed", type=int, help="random seed"),
                 "port": Arg("--port", type=int, help="run on the embedded server at this TCP port (started there "
                                                       "if it is not running)")}),
    Command("bench", None, handler=_bench, help=bench_options.HELP, extend=bench_options.add_arguments,
            parser={"description": bench_options.DESCRIPTION},
            own={"target": OPTIONS["target"].but(help=bench_options.DSN_HELP)}),
    Command("psql", None, handler=_psql, defaults={"psql_args": []},
            help="run psql on the database pgivm uses (arguments are passed to psql)",
            parser={"usage": "pgivm psql [-h] [--dsn DSN] [PSQL_ARGS ...]", "allow_abbrev": False,
                    "description": "Run psql (from PATH, else the one bundled with the embedded server) connected "
                                   "to the database pgivm uses: --dsn, else $PGIVM_DSN, else the PG* variables, "
                                   "else the embedded server. Every other argument goes to psql, e.g. "
                                   "pgivm psql -c \"SELECT * FROM tri\"; put -- before arguments that pgivm "
                                   "would take itself (pgivm psql -- --help)."}),
    Command("server", None, handler=_server, dsn=False, args=("action", "port", "restart"),
            help="start, stop or inspect the embedded PostgreSQL server",
            parser={"description": "Manage pgivm's embedded PostgreSQL server (data in $PGIVM_DATA_DIR, else a "
                                   "per-user directory). It keeps running after pgivm exits, for later commands, "
                                   "until `pgivm server stop`."},
            own={"action": Arg(choices=["start", "stop", "status", "env"],
                               help="start (if not running), stop, status, or env: start it if needed and print "
                                    "shell export lines of PGHOST, PGPORT, PGUSER, PGDATABASE, for "
                                    "eval \"$(pgivm server env)\""),
                 "port": Arg("--port", type=int,
                             help="TCP port (default: remembered, else 54329 or any free port); if the server "
                                  "already runs on another port, start refuses unless --restart is given"),
                 "restart": Arg("--restart", action="store_true",
                                help="stop a running server and start it again (on --port, if given)")}),
]


# --- building the parser, running a command ----------------------------------------------------


def _summary(cmd: Command, own_flags: Mapping[str, str]) -> str:
    """The help of a command: the first paragraph of its function's docstring as a phrase (no
    final period, lower case first), a ``parameter`` that is a flag of the command read as the flag."""
    if cmd.help is not None:
        return cmd.help
    assert cmd.fn is not None, f"{cmd.name}: a command without a function needs a help text"
    text = " ".join((inspect.getdoc(cmd.fn) or "").split("\n\n")[0].split())
    text = re.sub(r"``([^`]+)``", lambda m: own_flags.get(m[1], m[1]), text)
    return (text[:1].lower() + text[1:]).removesuffix(".") + cmd.note


def _call(cmd: Command, dests: Mapping[str, str], args: argparse.Namespace) -> int:
    """The plain mirror: the function called with the arguments named like its parameters, its
    result printed (as JSON with --json)."""
    assert cmd.fn is not None
    params = inspect.signature(cmd.fn).parameters
    result = cmd.fn(**{param: getattr(args, dest) for param, dest in dests.items() if param in params})
    if getattr(args, "json", False):
        plain = [dataclasses.asdict(r) for r in result] if isinstance(result, list) else dataclasses.asdict(result)
        print(json.dumps(plain, indent=2, default=str))
        return 0
    if cmd.printer is None:
        return int(result)
    return cmd.printer(args, result) or 0


def _add_command(sub: argparse._SubParsersAction, cmd: Command) -> None:
    """The subcommand of ``cmd``: --dsn, its arguments, those built from other specs; it runs its
    handler, or ``_call`` told which attribute each parameter is parsed into."""
    parameters = inspect.signature(cmd.fn).parameters if cmd.fn else {}
    # an argument neither the command nor OPTIONS has is a KeyError here, when any parser is built
    specs = {name: cmd.own.get(name) or OPTIONS[name] for name in (("target",) if cmd.dsn else ()) + cmd.args}
    flags = {name: spec.flags[0] for name, spec in specs.items() if spec.flags}
    p = sub.add_parser(cmd.name, help=_summary(cmd, flags), **cmd.parser)
    dests: dict[str, str] = {}
    for name, spec in specs.items():
        parameter = parameters.get(name)
        dests[name] = spec.add_to(p, name, parameter.default if parameter else inspect.Parameter.empty)
    if cmd.extend:
        cmd.extend(p)
    p.set_defaults(func=cmd.handler or functools.partial(_call, cmd, dests), **cmd.defaults)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pgivm",
        description="Incremental view maintenance for PostgreSQL: views of joins (inner, outer, semi, anti), "
                    "aggregates and unions kept exact by triggers; IVMε triangle counts, F-IVM join-aggregates, "
                    "join samples, first-order delta rules; immediate or deferred.",
        epilog="The database is --dsn, else $PGIVM_DSN, else the libpq PG* variables, else the embedded server.",
    )
    parser.add_argument("--version", action="version", version=f"pgivm {__version__}")
    OPTIONS["target"].but(default=None).add_to(parser, "target", inspect.Parameter.empty)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True,
                                help="one of the commands below; `pgivm COMMAND --help` describes it")
    for entry in COMMANDS:
        for cmd in entry() if callable(entry) else [entry]:
            _add_command(sub, cmd)
    return parser


def rendered_help() -> dict[str, str]:
    """Every help text of the CLI as argparse prints it at 100 columns: pgivm's (key "") and each
    command's (by name)."""
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal's width: a fixed one here
    try:
        parser = build_parser()
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return {"": parser.format_help(), **{name: p.format_help() for name, p in sub.choices.items()}}
    finally:
        if previous is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = previous


def reference() -> str:
    """The CLI reference page of the documentation site (docs/cli.md): every command's --help (a
    test regenerates it and compares)."""
    rendered = rendered_help()
    parts = ["# CLI reference", "",
             "Generated from the parser (`python -m pgivm.cli --reference > docs/cli.md`); a test keeps it current.",
             "", "```text", rendered.pop("").rstrip(), "```"]
    for name, text in rendered.items():
        parts += ["", f"## pgivm {name}", "", "```text", text.rstrip(), "```"]
    return "\n".join(parts) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    try:
        try:
            return _run(argv)
        finally:
            sys.stdout.flush()  # now rather than at exit, so that a closed pipe is handled below
    except BrokenPipeError:
        # The reader went away (`pgivm list | head -1`): stop quietly, as a program killed by SIGPIPE
        # would. Python flushes stdout again at exit, so point it at /dev/null first.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # only psql takes arguments pgivm does not know
        if not hasattr(args, "psql_args"):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        args.psql_args = extra
    try:
        return int(args.func(args))
    except PgivmError as err:
        print(f"pgivm: error: {err}", file=sys.stderr)
        return EXIT_ERROR
    except psycopg.Error as err:
        message = (str(err).strip().splitlines() or [type(err).__name__])[0]
        print(f"pgivm: database error: {message}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("pgivm: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    if sys.argv[1:] == ["--reference"]:  # docs/cli.md
        sys.stdout.write(reference())
        sys.exit(0)
    if sys.argv[1:] == ["--help-cache"]:  # pgivm/help.json, what pgivm.entry prints for --help
        sys.stdout.write(json.dumps(rendered_help(), indent=1, ensure_ascii=False) + "\n")
        sys.exit(0)
    sys.exit(main())
