"""``pgivm``: the command line. A thin mirror of pgivm.command: parse, call, print.

Exit codes: 0 success, 1 ``verify`` found a difference, 2 a user error (bad SQL, unknown view,
unreachable server, ...), 130 interrupted, 141 stdout closed by its reader (``pgivm list | head -1``);
``pgivm psql`` exits with psql's own code.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import psycopg

from pgivm import __version__, command, deferred
from pgivm.connection import connect, resolve_dsn
from pgivm.systems import registry
from pgivm.systems.base import Option
from pgivm.errors import NeedsColumns, PgivmError
from pgivm.report import human_bytes as _human_bytes
from pgivm.report import print_table as _print_table

if TYPE_CHECKING:
    from pgivm.server import EmbeddedServer, ServerStatus

EXIT_MISMATCH = 1
EXIT_ERROR = 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a program whose reader went away

#: Seconds before ``create`` says on stderr that it is building: a quick refusal stays one line.
SLOW_NOTE_AFTER_S = 2.0


# --- commands ------------------------------------------------------------------------------


def _cmd_init(args: argparse.Namespace) -> int:
    result = command.init(target=args.dsn)
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
    return 0


def _cmd_create(args: argparse.Namespace) -> int:
    sql_text = args.sql
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
                                    preprocess=args.preprocess, lock_wait=args.lock_wait, **chosen)
        schema = result.view[: -len(result.name) - 1]  # result.view is "schema.name"
        quoted = conn.execute("SELECT pg_catalog.quote_ident(%s) || '.' || pg_catalog.quote_ident(%s)",
                              [schema, result.name]).fetchone()[0]  # type: ignore[index]
    figures = "".join(f", {k} = {v}" for k, v in result.headline.items())
    print(f"created view {result.view} ({result.system}): count = {result.count}{figures}, built in {result.seconds:.2f} s")
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


def _cmd_refresh(args: argparse.Namespace) -> int:
    result = command.refresh(args.name, target=args.dsn)
    print(f"refreshed {result.name}: {result.applied:,} pending changes applied in {result.seconds:.2f} s")
    return 0


def _cmd_calibrate(args: argparse.Namespace) -> int:
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


def _cmd_worker(args: argparse.Namespace) -> int:
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


def _cmd_load(args: argparse.Namespace) -> int:
    columns = [c.strip() for c in args.columns.split(",") if c.strip()]
    result = command.load(
        args.table, args.file, columns, fmt=args.fmt, master=args.master, symmetric=args.symmetric,
        drop_self_loops=args.drop_self_loops, distinct=args.distinct, header=args.header, target=args.dsn,
    )
    from pgivm.spark.load import blank_lines_note

    skipped = blank_lines_note(result.blank_lines)
    print(f"loaded {result.rows:,} rows from {result.file} into {result.table} in {result.seconds:.1f} s "
          f"({result.rows_per_second:,.0f} rows/s){'; ' + skipped if skipped else ''}")
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    if not args.spark:
        return _cmd_verify(argparse.Namespace(name=args.name, strict=False, dsn=args.dsn))
    report = command.validate_spark(args.name, master=args.master, target=args.dsn)
    print(f"maintained: {report.maintained}")
    print(f"spark:      {report.spark}")
    if report.ok:
        print(f"OK: {args.name} equals the Spark recount ({report.seconds:.1f} s)")
        return 0
    print(f"MISMATCH: the maintained count differs from the Spark recount")
    return EXIT_MISMATCH


def _cmd_drop(args: argparse.Namespace) -> int:
    command.drop(args.name, target=args.dsn, lock_wait=args.lock_wait)
    print(f"dropped {args.name}")
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    views = command.list_views(target=args.dsn)
    if args.json:
        print(json.dumps([dataclasses.asdict(v) for v in views], indent=2, default=str))
    elif not views:
        print("no pgivm views in this database (create one with `pgivm create`)")
    else:
        _print_table(
            ["name", "view", "system", "parameters", "count", "definition"],
            [[v.name, v.view, v.system, _params_text(v.params), v.count, v.definition] for v in views],
        )
    return 0


def _params_text(params: dict[str, object]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(params.items()))


def _figure(value: object) -> object:
    return round(value, 2) if isinstance(value, float) else value


def _cmd_status(args: argparse.Namespace) -> int:
    report = command.status(args.name, target=args.dsn)
    if args.json:
        print(json.dumps(dataclasses.asdict(report), indent=2, default=str))
        return 0
    print(f"view {report.view} ({report.system}): {report.definition}")
    _print_table(["count", *report.labels.values()], [[report.count, *(_figure(v) for v in report.figures.values())]])
    for section in report.sections:
        print()
        _print_table(section.headers, section.rows)
    print()
    _print_table(["state table", "rows", "size"],
                 [[t["table"], t["rows"], _human_bytes(t["bytes"])] for t in report.tables])
    if report.params:
        print(f"\nparameters: {_params_text(report.params)}")
    for problem in report.problems:
        print(f"problem: {problem}")
    return 0


def _cmd_explain(args: argparse.Namespace) -> int:
    for line in command.explain(args.name, target=args.dsn):
        print(line)
    return 0


def _cmd_regress(args: argparse.Namespace) -> int:
    result = command.regress(args.name, args.target, target=args.dsn)
    if args.json:
        print(json.dumps(dataclasses.asdict(result), indent=2))
        return 0
    print(f"linear regression of {result.target} on {len(result.features)} features over {result.rows} joined rows "
          f"(from the maintained cofactor matrix)")
    _print_table(["term", "coefficient"], [["intercept", f"{result.intercept:.10g}"],
                                           *([f, f"{c:.10g}"] for f, c in result.coefficients.items())])
    print(f"R² = {result.r2:.6f}" + ("" if result.rank == len(result.features) + 1
                                     else f" (XᵀX has rank {result.rank}: collinear features, minimum-norm fit)"))
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    report = command.verify(args.name, strict=args.strict, target=args.dsn)
    print(f"maintained: {report.maintained}")
    print(f"recount:    {report.recount}")
    for failure in report.failures:  # one line per difference found
        for row in failure.rows[:20]:
            print(f"invariant violated: {failure.check}: {', '.join(map(str, row))}")
        if len(failure.rows) > 20:
            print(f"invariant violated: {failure.check}: ... and {len(failure.rows) - 20:,} more")
    if report.ok:
        print(f"OK: {args.name} equals its recount and every invariant of its system holds ({report.seconds:.2f} s)")
        return 0
    if report.maintained != report.recount:
        print(f"MISMATCH: the maintained count differs from the recount by {_difference(report)}")
    return EXIT_MISMATCH


def _difference(report: command.VerifyReport) -> str:
    if report.maintained is None or report.recount is None:
        return f"{report.maintained} vs {report.recount}"
    return f"{report.maintained - report.recount:+d}"


def _add_refresh_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("refresh (every system that can defer; pgivm create --help says more)")
    for option in deferred.OPTIONS:
        _add_option(group, option, "")


def _cmd_action(args: argparse.Namespace) -> int:
    options = {name: getattr(args, name) for name in args.action_options}
    if args.action == "alter":
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
    figures = command.action(args.name, args.action, target=args.dsn, lock_wait=args.lock_wait, **options)
    rows, columns = figures.pop("rows", None), figures.pop("columns", None)
    if rows is not None:
        from pgivm.report import print_table

        print_table([str(c) for c in columns or []], [list(r) for r in rows])
    print(f"{args.action} {args.name}: " + ", ".join(f"{k} = {v}" for k, v in figures.items()))
    return 0


def _cmd_upgrade(args: argparse.Namespace) -> int:
    if bool(args.name) == bool(args.all):
        raise PgivmError("name one view, or pass --all")
    names = [v.name for v in command.list_views(target=args.dsn)] if args.all else [args.name]
    for name in names:
        result = command.upgrade(name, force=args.force, target=args.dsn, lock_wait=args.lock_wait)
        done = "reinstalled from the current templates" if result.upgraded else "already current"
        print(f"{name}: {done} ({result.template_version}, {result.seconds:.2f} s)")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from pgivm import demo

    return demo.run(
        target=args.dsn, nodes=args.nodes, edges=args.edges, updates=args.updates, epsilon=args.epsilon,
        seed=args.seed,
    )


def _cmd_bench(args: argparse.Namespace) -> int:
    from pgivm.bench import runner

    return runner.run(args)


def _cmd_server(args: argparse.Namespace) -> int:
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
    return 0


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


def _cmd_psql(args: argparse.Namespace) -> int:
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


# --- argument parsing ----------------------------------------------------------------------


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


def _add_lock_wait(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lock-wait", type=float, default=command.LOCK_WAIT_S, metavar="SECONDS",
                        help="how long to keep trying for the locks, one short attempt at a time so that writers "
                             f"never wait long on pgivm, before giving up with one line (default {command.LOCK_WAIT_S:g})")


def _add_option(parser: argparse._ActionsContainer, option: Option, note: str, required: bool = False) -> None:
    """A flag built from a system's option spec; its absence is None (the system's default)."""
    # Read as text: the option's own validate() turns it into its type, with a one-line complaint.
    parser.add_argument(option.flag, dest=option.name, type=str, default=None, required=required,
                        metavar=option.name.upper(), help=option.help + note)


_DSN_HELP = "libpq connection string or postgresql:// URL of the database (before or after the command)"


def _add_command(
    sub: argparse._SubParsersAction, name: str, *, dsn_help: str | None = _DSN_HELP, **kwargs: object
) -> argparse.ArgumentParser:
    """A subcommand that also takes --dsn after its name (with ``dsn_help``; None: no --dsn).

    Its default is SUPPRESS, so that a --dsn given before the command is not overwritten by an
    absent one after it.
    """
    p = sub.add_parser(name, **kwargs)  # type: ignore[arg-type]
    if dsn_help is not None:
        p.add_argument("--dsn", default=argparse.SUPPRESS, help=dsn_help)
    return p


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pgivm",
        description="Incremental view maintenance for PostgreSQL: triangle counts (IVMε) and acyclic join-aggregates (F-IVM) kept exact by triggers.",
        epilog="The database is --dsn, else $PGIVM_DSN, else the libpq PG* variables, else the embedded server.",
    )
    parser.add_argument("--version", action="version", version=f"pgivm {__version__}")
    parser.add_argument("--dsn", help=_DSN_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True,
                                help="one of the commands below; `pgivm COMMAND --help` describes it")

    p = _add_command(sub, "init", help="create or upgrade the pgivm catalog (also done by create)")
    p.set_defaults(func=_cmd_init)

    p = _add_command(sub, "create", help="install a maintained view and build its state from the current data")
    p.add_argument("name", help="name of the view to create (readable with SELECT * FROM name)")
    p.add_argument("--sql", help="the view definition, e.g. a triangle count over three tables")
    p.add_argument("--file", help="read the view definition from this file")
    systems = registry.SYSTEMS
    p.add_argument("--system", "--strategy", dest="system", choices=list(systems),
                   help="the maintenance system (default: the first that accepts the query, in this order): "
                        + "; ".join(f"{s.name}: {s.summary}" for s in systems.values()))
    p.add_argument("--schema", help="schema of the view (default: the current schema)")
    builders = ["postgres", *dict.fromkeys(b for s in systems.values() for b in s.builders)]
    p.add_argument("--preprocess", choices=builders, default="postgres",
                   help="how to build the state: in PostgreSQL (default), or "
                        + "; ".join(f"{b} (systems: {', '.join(s.name for s in systems.values() if b in s.builders)})"
                                    for b in builders[1:]))
    _add_lock_wait(p)
    group = p.add_argument_group("options of the maintenance systems (each applies to the systems named)")
    for option, owners in _system_options().items():
        _add_option(group, option, f" (systems: {', '.join(owners)}; default {option.default})")
    group = p.add_argument_group("refresh (every system that can defer: "
                                 + ", ".join(s.name for s in systems.values() if s.deferred_atoms) + ")")
    for option in deferred.OPTIONS:
        _add_option(group, option, f" (default {option.default})")
    p.set_defaults(func=_cmd_create)

    p = _add_command(sub, "refresh", help="apply every pending change of a deferred view (as a read of it does first)")
    p.add_argument("name", help="name of the deferred view")
    p.set_defaults(func=_cmd_refresh)

    p = _add_command(sub, "calibrate", help="measure a deferred view's cost per base table, f(k) = a·k + b ms, "
                                            "which its planner then uses (writers wait meanwhile)")
    p.add_argument("name", help="name of the deferred view")
    p.add_argument("--ladder", default=None, metavar="K,K,...",
                   help="batch sizes to time, comma-separated (default 1,4,16,64,256,1024)")
    p.add_argument("--repeats", default="3", metavar="N", help="runs per batch size; the median counts (default 3)")
    p.set_defaults(func=_cmd_calibrate)

    p = _add_command(sub, "worker", help="take the actions of every deferred view of the database off the writers, "
                                         "in the foreground until SIGINT or SIGTERM (which stop it between actions)")
    p.add_argument("--poll", default="1", metavar="SECONDS",
                   help="also look at every deferred view this often, besides when a writer wakes it (default 1)")
    p.add_argument("--quiet", action="store_true", help="print nothing per action")
    p.set_defaults(func=_cmd_worker)

    p = _add_command(sub, "load", help="append a file (csv, tsv, SNAP edge list, parquet) to a table through Spark, atomically",
                     description="Read FILE with Spark and append it to TABLE over JDBC (via a staging table, "
                                 "then one INSERT ... SELECT, so a pgivm view on TABLE is maintained set at a time). "
                                 "A malformed line aborts the load and leaves TABLE unchanged.")
    p.add_argument("table", help="target table (optionally schema-qualified); it must exist")
    p.add_argument("file", help="input file (or a directory of Parquet files)")
    p.add_argument("--columns", required=True, help="comma-separated target columns, e.g. src,dst")
    p.add_argument("--format", dest="fmt", default="csv", choices=["csv", "tsv", "parquet", "edges"],
                   help="csv (default), tsv, parquet, or edges: a whitespace SNAP edge list with # comments, "
                        "an optional node-count header line, extra columns ignored")
    p.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
    p.add_argument("--symmetric", action="store_true", help="also load (v, u) for every (u, v)")
    p.add_argument("--drop-self-loops", action="store_true", help="skip rows with u = v")
    p.add_argument("--distinct", action="store_true",
                   help="drop duplicate rows of this load (with --symmetric: each edge exactly once per direction)")
    p.add_argument("--header", action="store_true", help="the first line is a header (csv, tsv, edges)")
    p.set_defaults(func=_cmd_load)

    p = _add_command(sub, "validate", help="recount a view from its base tables, in PostgreSQL or in Spark (exit 1 on a difference)")
    p.add_argument("name", help="name of the view to recount")
    p.add_argument("--spark", action="store_true", help="recount in Spark over JDBC instead of PostgreSQL")
    p.add_argument("--master", default="local[*]", help="Spark master with --spark (default local[*])")
    p.set_defaults(func=_cmd_validate)

    p = _add_command(sub, "drop", help="remove a view, its triggers and its state")
    p.add_argument("name", help="name of the view to remove")
    _add_lock_wait(p)
    p.set_defaults(func=_cmd_drop)

    p = _add_command(sub, "list", help="list the maintained views")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_list)

    p = _add_command(sub, "status", help="the system's figures (IVMε: epsilon, N, |D|, heavy values), state table sizes, base-table drift")
    p.add_argument("name", help="name of the view")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_status)

    p = _add_command(sub, "explain", help="how a view is maintained (F-IVM: the variable order and the view tree, "
                                          "each view with its keys, payload ring and rows)")
    p.add_argument("name", help="name of the view")
    p.set_defaults(func=_cmd_explain)

    p = _add_command(sub, "regress", help="fit a linear regression from a cofactor(...) view's maintained matrix")
    p.add_argument("name", help="name of a view SELECT cofactor(x1, ..., xm) FROM ...")
    p.add_argument("--target", required=True, help="the label: one of the cofactor's columns, e.g. i.price")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_regress)

    p = _add_command(sub, "verify", help="recount in plain SQL and check every invariant of the view's system (exit 1 on a difference)")
    p.add_argument("name", help="name of the view to check")
    p.add_argument("--strict", action="store_true", help="also require the strict partition (right after a rebalance)")
    p.set_defaults(func=_cmd_verify)

    for action_name, (help_text, options, owners) in _system_actions().items():
        p = _add_command(sub, action_name, help=f"{help_text} (systems: {', '.join(owners)})")
        p.add_argument("name", help=f"name of the view to {action_name}")
        for option in options:
            # alter: a system's options, or the refresh options, or both
            _add_option(p, option, "", required=option.default is None and action_name != "alter")
        _add_lock_wait(p)
        p.set_defaults(func=_cmd_action, action=action_name, action_options=[o.name for o in options])
        if action_name == "alter":
            _add_refresh_options(p)
    if "alter" not in _system_actions():
        p = _add_command(sub, "alter", help="change how a view is refreshed")
        p.add_argument("name", help="name of the view to alter")
        _add_lock_wait(p)
        p.set_defaults(func=_cmd_action, action="alter", action_options=[])
        _add_refresh_options(p)

    p = _add_command(sub, "upgrade", help="reinstall a view's functions and triggers from the current SQL templates "
                                          "(state kept; done only if they changed, unless --force)")
    p.add_argument("name", nargs="?", help="name of the view to upgrade")
    p.add_argument("--all", action="store_true", help="upgrade every view of the database")
    p.add_argument("--force", action="store_true", help="reinstall even if the templates did not change")
    _add_lock_wait(p)
    p.set_defaults(func=_cmd_upgrade)

    p = _add_command(sub, "demo", help="a live triangle count on a generated skewed graph, checked against a recount")
    p.add_argument("--nodes", type=int, default=2000, help="nodes of the generated graph (default 2000)")
    p.add_argument("--edges", type=int, default=20000, help="edges loaded before the view is created (default 20000)")
    p.add_argument("--updates", type=int, default=3000, help="single-row inserts and deletes to stream (default 3000)")
    p.add_argument("--epsilon", type=float, default=0.5, help="IVMε epsilon (default 0.5)")
    p.add_argument("--seed", type=int, default=7, help="random seed")
    p.set_defaults(func=_cmd_demo)

    p = _add_command(sub, "bench",
                     dsn_help="libpq connection string or URL of a server where the scratch database may be "
                              "created (before or after the command)",
                     help="benchmarks: single-row updates, scaling on adversarial skew, bulk statements, "
                          "Spark loads and builds",
                     description="Benchmark pgivm's strategies in a scratch database; each workload prints a "
                                 "table, updates and scaling also write a PNG plot to --out.")
    p.add_argument("workload", nargs="?", default="updates", choices=["updates", "scaling", "bulk", "load", "fivm", "sample", "deferred", "writers", "all"],
                   help="updates (default): single-row updates on a graph under every strategy and ε; "
                        "scaling: per-update time against N on adversarial skew, with fitted slopes; "
                        "bulk: one large INSERT ... SELECT, DELETE and COPY, and the crossover of the "
                        "tuple-by-tuple and set-at-a-time paths; "
                        "load: pgivm load (Spark, JDBC) against psycopg COPY, create --preprocess spark against "
                        "the PostgreSQL build, and loads under a view, on --edges and a generated graph of "
                        "--load-graph-edges (needs Spark and Java; minutes at the default 10^6 edges); "
                        "fivm: F-IVM against first-order, recompute and no view on Housing and TPC-H (batches of "
                        "1,000, the cofactor ring, single-row scaling, the factorized listing); "
                        "sample: reservoir sampling over joins (line-3, line-4, star-4 over ego-Facebook or --edges; "
                        "QX, QY, QZ over TPC-DS with foreign-key merging and grouping on and off) against an "
                        "enumerating reservoir, recompute and no view; "
                        "deferred: deferred views: the planners on the paper's experiments, writes under IVMε "
                        "against no view and immediate (with pgivm worker), the paper's TPC-H case (NAIVE against ONLINE); "
                        "writers: concurrent writers under 1, 2 and 4 views over shared tables, immediate and "
                        "deferred, against no view; "
                        "all: updates, scaling and bulk in order (not load, not fivm, not sample, not deferred, not writers)")
    p.add_argument("--database", default="pgivm_bench",
                   help="scratch database, dropped and recreated, and dropped again at the end (default pgivm_bench)")
    p.add_argument("--out", default="benchmarks/out",
                   help="directory for the PNG plots, created if missing (default benchmarks/out)")
    p.add_argument("--seed", type=int, default=1, help="random seed of the generated data and streams (default 1)")
    g = p.add_argument_group("graph (updates, bulk; load: the file graph)")
    g.add_argument("--edges", help="edge list (SNAP style) to load; default: a generated power-law graph")
    g.add_argument("--nodes", type=int, default=4000, help="nodes of the generated graph (default 4000)")
    g.add_argument("--graph-edges", type=int, default=88000, help="edges of the generated graph (default 88000)")
    g = p.add_argument_group("updates")
    g.add_argument("--held-out", type=int, default=2000,
                   help="K: edges left out of the load, streamed as K inserts then K deletes (default 2000)")
    g.add_argument("--epsilon", type=float, action="append",
                   help="IVMε epsilon to measure (repeatable; default 0, 0.25, 0.5, 0.75 and 1)")
    g.add_argument("--recompute-held-out", type=int, default=50,
                   help="held-out edges streamed under the recompute strategy, which recounts on every "
                        "statement (default 50)")
    g = p.add_argument_group("scaling")
    g.add_argument("--sizes", default="10000,30000,100000,300000,1000000",
                   help="database sizes N (tuples over R, S, T), comma-separated "
                        "(default 10000,30000,100000,300000,1000000)")
    g.add_argument("--updates", type=int, default=200,
                   help="single-row updates per strategy and size: half inserts, then the same rows deleted "
                        "(default 200)")
    g.add_argument("--budget", type=float, default=40.0,
                   help="seconds of updates per strategy and size: inserting stops after half of it, so slow "
                        "strategies use fewer updates at large N; the table says how many (default 40)")
    g.add_argument("--hubs", type=int, default=4, help="hub b-values in S, each paired with N/(2·hubs) c-values (default 4)")
    g = p.add_argument_group("bulk")
    g.add_argument("--bulk-sizes", default="10000,100000",
                   help="rows per bulk statement, comma-separated (default 10000,100000)")
    g.add_argument("--crossover-sizes", default="4,16,64,256,384,512,1024,4096",
                   help="rows per rolled-back INSERT timed tuple by tuple and set at a time, comma-separated; "
                        "none: skip (default 4,16,64,256,384,512,1024,4096)")
    g = p.add_argument_group("load (the --edges file, if given, and a generated power-law graph)")
    g.add_argument("--load-graph-edges", type=int, default=1_000_000,
                   help="undirected edges of the generated graph; 0: none, only --edges (default 1000000)")
    g.add_argument("--load-graph-nodes", type=int, default=100_000,
                   help="nodes of the generated graph (default 100000)")
    g.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
    g = p.add_argument_group("fivm (Housing-like star and TPC-H snowflake, pgivm.data)")
    g.add_argument("--housing-scale", type=int, default=2, help="Housing scale of the batch and cofactor workloads (default 2)")
    g.add_argument("--postcodes", type=int, default=5000, help="Housing postcodes of the batch and cofactor workloads (default 5000)")
    g.add_argument("--batches", type=int, default=30, help="1,000-row insert batches per system (default 30; recompute: 3)")
    g.add_argument("--tpch-scale", type=float, default=0.01, help="TPC-H scale factor (default 0.01)")
    g.add_argument("--features", type=int, default=10, help="cofactor features, 1 to 12 (default 10)")
    g.add_argument("--single-scales", default="1,2,5,10,20", help="Housing scales of the single-row workload (default 1,2,5,10,20)")
    g.add_argument("--listing-scales", default="1,2,4,8", help="Housing scales of the listing workload (default 1,2,4,8)")
    g.add_argument("--parts", default="batches,cofactor,single,listing",
                   help="which fivm workloads to run, comma-separated (default all four)")
    g = p.add_argument_group("sample (graph queries over one edge table and TPC-DS queries, pgivm.bench.sampling)")
    g.add_argument("--sample-queries", default="line-3,line-4,star-4,QX,QY,QZ",
                   help="queries, comma-separated (default all six: line-3, line-4, star-4, QX, QY, QZ)")
    g.add_argument("--sample-prefix", type=int, default=20_000, help="edges streamed per query and system (default 20000)")
    g.add_argument("--sample-k", type=int, default=10_000, help="sample size K (default 10000)")
    g.add_argument("--sample-budget", type=float, default=300.0,
                   help="seconds after which the enumerating baseline stops; on TPC-DS, every run (default 300)")
    g.add_argument("--tpcds-scale", type=float, default=0.1, help="TPC-DS scale factor for QX, QY, QZ (default 0.1)")
    g.add_argument("--tpcds-facts", type=int, default=20_000,
                   help="store_sales rows streamed per TPC-DS query (default 20000)")
    g.add_argument("--tpcds-k", type=int, default=100_000, help="sample size K on TPC-DS (default 100000)")
    g = p.add_argument_group("deferred (deferred views, pgivm.bench.deferred)")
    g.add_argument("--deferred-parts", default="writes,latency,tpch,simulate",
                   help="which parts, comma-separated: writes (IVMε writes against no view and immediate), latency "
                        "(reads under a mixed stream against C), tpch (the paper's case), simulate (the paper's "
                        "experiments 1 and 2 on the costs tpch measures) (default all four)")
    g.add_argument("--deferred-budget", type=float, default=50.0, help="the budget C in milliseconds (default 50)")
    g.add_argument("--deferred-single-rows", type=int, default=2000, help="single-row INSERTs per setting (default 2000)")
    g.add_argument("--deferred-copy-rows", type=int, default=100_000, help="rows of the one COPY (default 100000)")
    g.add_argument("--deferred-tpch-scale", type=float, default=0.1, help="TPC-H scale factor (default 0.1)")
    g.add_argument("--deferred-steps", type=int, default=2000,
                   help="TPC-H steps, each one partsupp and one supplier update (default 2000)")
    g = p.add_argument_group("writers (concurrent writers under views over shared tables, pgivm.bench.writers)")
    g.add_argument("--writers", type=int, default=4, help="writer threads (default 4)")
    g.add_argument("--writers-seconds", type=float, default=10.0, help="seconds per setting (default 10)")
    g.add_argument("--recompute-budget", type=float, default=60.0,
                   help="statement timeout of one ORDER BY random() LIMIT K recompute (default 60)")
    p.set_defaults(func=_cmd_bench)

    p = _add_command(sub, "psql", help="run psql on the database pgivm uses (arguments are passed to psql)",
                     usage="pgivm psql [-h] [--dsn DSN] [PSQL_ARGS ...]", allow_abbrev=False,
                     description="Run psql (from PATH, else the one bundled with the embedded server) connected "
                                 "to the database pgivm uses: --dsn, else $PGIVM_DSN, else the PG* variables, "
                                 "else the embedded server. Every other argument goes to psql, e.g. "
                                 "pgivm psql -c \"SELECT * FROM tri\"; put -- before arguments that pgivm "
                                 "would take itself (pgivm psql -- --help).")
    p.set_defaults(func=_cmd_psql, psql_args=[])

    p = _add_command(sub, "server", dsn_help=None, help="start, stop or inspect the embedded PostgreSQL server",
                     description="Manage pgivm's embedded PostgreSQL server (data in $PGIVM_DATA_DIR, else a "
                                 "per-user directory). It keeps running after pgivm exits, for later commands, "
                                 "until `pgivm server stop`.")
    p.add_argument("action", choices=["start", "stop", "status", "env"],
                   help="start (if not running), stop, status, or env: start it if needed and print shell "
                        "export lines of PGHOST, PGPORT, PGUSER, PGDATABASE, for eval \"$(pgivm server env)\"")
    p.add_argument("--port", type=int,
                   help="TCP port (default: remembered, else 54329 or any free port); if the server already "
                        "runs on another port, start refuses unless --restart is given")
    p.add_argument("--restart", action="store_true",
                   help="stop a running server and start it again (on --port, if given)")
    p.set_defaults(func=_cmd_server)
    return parser


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
    sys.exit(main())
