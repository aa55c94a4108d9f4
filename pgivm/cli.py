"""``pgivm``: the command line. A thin mirror of pgivm.command: parse, call, print.

Exit codes: 0 success, 1 ``verify`` found a difference, 2 a user error (bad SQL, unknown view,
unreachable server, ...), 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

import psycopg

from pgivm import __version__, command
from pgivm.strategies import STRATEGIES
from pgivm.strategies.common import BATCH_THRESHOLD
from pgivm.errors import PgivmError
from pgivm.report import human_bytes as _human_bytes
from pgivm.report import print_table as _print_table

EXIT_MISMATCH = 1
EXIT_ERROR = 2


# --- commands ------------------------------------------------------------------------------


def _cmd_init(args: argparse.Namespace) -> int:
    applied = command.init(target=args.dsn)
    print(f"catalog migrations applied: {', '.join(applied)}" if applied else "catalog is up to date")
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
    detail = f", epsilon={args.epsilon}" if args.strategy == "ivme" else ""
    print(f"creating {args.name} ({args.strategy}{detail}): building the state from the base tables ...",
          file=sys.stderr)
    result = command.create(
        args.name, sql_text, epsilon=args.epsilon, strategy=args.strategy, schema=args.schema,
        batch_threshold=args.batch_threshold, target=args.dsn, preprocess=args.preprocess,
    )
    size = f", |D| = {result.db_size}" if result.db_size is not None else ""
    print(f"created view {result.view} ({result.strategy}): count = {result.count}{size}, built in {result.seconds:.2f} s")
    print(f"read it from any SQL client: SELECT * FROM {result.view};")
    return 0


def _cmd_load(args: argparse.Namespace) -> int:
    columns = [c.strip() for c in args.columns.split(",") if c.strip()]
    result = command.load(
        args.table, args.file, columns, fmt=args.fmt, master=args.master, symmetric=args.symmetric,
        drop_self_loops=args.drop_self_loops, distinct=args.distinct, header=args.header, target=args.dsn,
    )
    print(f"loaded {result.rows:,} rows from {result.file} into {result.table} in {result.seconds:.1f} s "
          f"({result.rows_per_second:,.0f} rows/s)")
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
    command.drop(args.name, target=args.dsn)
    print(f"dropped {args.name}")
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    views = command.list_views(target=args.dsn)
    if args.json:
        print(json.dumps([v.__dict__ for v in views], indent=2, default=str))
    elif not views:
        print("no pgivm views in this database (create one with `pgivm create`)")
    else:
        _print_table(
            ["name", "view", "strategy", "epsilon", "count", "definition"],
            [[v.name, v.view, v.strategy, v.epsilon, v.count, v.definition] for v in views],
        )
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    info = command.status(args.name, target=args.dsn)
    if args.json:
        print(json.dumps(info, indent=2, default=str))
        return 0
    print(f"view {info['view']} ({info['strategy']}): {info['definition']}")
    if info["strategy"] == "ivme":
        _print_table(
            ["count", "epsilon", "N", "theta = N^eps", "|D|", "updates", "major rebalances", "minor rebalances"],
            [[info["count"], info["epsilon"], info["n"], f"{info['theta']:.2f}", info["db_size"],
              info["updates_applied"], info["major_rebalances"], info["minor_rebalances"]]],
        )
        print()
        _print_table(
            ["relation", "values", "heavy values", "heavy tuples", "light tuples"],
            [[k, r["values"], r["heavy_values"], r["heavy_tuples"], r["light_tuples"]]
             for k, r in info["relations"].items()],
        )
    else:
        _print_table(["count", "updates"], [[info["count"], info["updates_applied"]]])
    print()
    _print_table(["state table", "rows", "size"],
                 [[t["table"], t["rows"], _human_bytes(t["bytes"])] for t in info["tables"]])
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    report = command.verify(args.name, strict=args.strict, target=args.dsn)
    print(f"maintained: {report.maintained}")
    print(f"recount:    {report.recount}")
    for failure in report.failures:
        print(f"invariant violated: {failure}")
    if report.ok:
        print(f"OK: {args.name} equals its recount and every IVMε invariant holds ({report.seconds:.2f} s)")
        return 0
    if report.maintained != report.recount:
        print(f"MISMATCH: the maintained count differs from the recount by {_difference(report)}")
    return EXIT_MISMATCH


def _difference(report: command.VerifyReport) -> str:
    if report.maintained is None or report.recount is None:
        return f"{report.maintained} vs {report.recount}"
    return f"{report.maintained - report.recount:+d}"


def _cmd_rebalance(args: argparse.Namespace) -> int:
    state = command.rebalance(args.name, target=args.dsn)
    print(f"rebalanced {args.name}: N = {state['n']}, theta = {state['theta']:.2f}, |D| = {state['db_size']}, "
          f"count = {state['count']}")
    return 0


def _cmd_alter(args: argparse.Namespace) -> int:
    state = command.alter(args.name, epsilon=args.epsilon, target=args.dsn)
    print(f"{args.name}: epsilon = {state['epsilon']}, repartitioned at theta = {state['theta']:.2f}, "
          f"count = {state['count']}")
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
        status = server.start()
        print(f"embedded PostgreSQL running (pid {status.pid}) with data in {status.data_dir}")
        print(f"  psql \"{server.dsn()}\"")
        print(f"  TCP: {server.url()}")
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


# --- argument parsing ----------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pgivm",
        description="Incremental view maintenance for PostgreSQL: triangle counts kept exact by IVMε triggers.",
        epilog="The database is --dsn, else $PGIVM_DSN, else the libpq PG* variables, else the embedded server.",
    )
    parser.add_argument("--version", action="version", version=f"pgivm {__version__}")
    parser.add_argument("--dsn", help="libpq connection string or postgresql:// URL of the database")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("init", help="create or upgrade the pgivm catalog (also done by create)")
    p.set_defaults(func=_cmd_init)

    p = sub.add_parser("create", help="install a maintained view and build its state from the current data")
    p.add_argument("name", help="name of the view to create (readable with SELECT * FROM name)")
    p.add_argument("--sql", help="the view definition, e.g. a triangle count over three tables")
    p.add_argument("--file", help="read the view definition from this file")
    p.add_argument("--epsilon", type=float, default=0.5, help="IVMε trade-off in [0, 1] (default 0.5)")
    p.add_argument("--strategy", default="ivme", choices=list(STRATEGIES),
                   help="ivme (default), first-order (classical delta queries) or recompute (after every statement)")
    p.add_argument("--schema", help="schema of the view (default: the current schema)")
    p.add_argument("--batch-threshold", type=int,
                   help=f"statements changing more rows than this are maintained set at a time (default {BATCH_THRESHOLD})")
    p.add_argument("--preprocess", choices=["postgres", "spark"], default="postgres",
                   help="build the state in PostgreSQL (default) or in Spark, written back over JDBC (ivme only)")
    p.set_defaults(func=_cmd_create)

    p = sub.add_parser("load", help="append a file (csv, tsv, SNAP edge list, parquet) to a table through Spark, atomically",
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

    p = sub.add_parser("validate", help="recount a view from its base tables, in PostgreSQL or in Spark (exit 1 on a difference)")
    p.add_argument("name")
    p.add_argument("--spark", action="store_true", help="recount in Spark over JDBC instead of PostgreSQL")
    p.add_argument("--master", default="local[*]", help="Spark master with --spark (default local[*])")
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser("drop", help="remove a view, its triggers and its state")
    p.add_argument("name")
    p.set_defaults(func=_cmd_drop)

    p = sub.add_parser("list", help="list the maintained views")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_list)

    p = sub.add_parser("status", help="epsilon, N, |D|, heavy values, state table sizes, rebalance counters")
    p.add_argument("name")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_status)

    p = sub.add_parser("verify", help="recount in plain SQL and check every IVMε invariant (exit 1 on a difference)")
    p.add_argument("name")
    p.add_argument("--strict", action="store_true", help="also require the strict partition (right after a rebalance)")
    p.set_defaults(func=_cmd_verify)

    p = sub.add_parser("rebalance", help="force a major rebalancing: strict repartition at N^epsilon, views rebuilt")
    p.add_argument("name")
    p.set_defaults(func=_cmd_rebalance)

    p = sub.add_parser("alter", help="change a view's epsilon (repartitions at once)")
    p.add_argument("name")
    p.add_argument("--epsilon", type=float, required=True, help="new epsilon in [0, 1]")
    p.set_defaults(func=_cmd_alter)

    p = sub.add_parser("demo", help="a live triangle count on a generated skewed graph, checked against a recount")
    p.add_argument("--nodes", type=int, default=2000, help="nodes of the generated graph (default 2000)")
    p.add_argument("--edges", type=int, default=20000, help="edges loaded before the view is created (default 20000)")
    p.add_argument("--updates", type=int, default=3000, help="single-row inserts and deletes to stream (default 3000)")
    p.add_argument("--epsilon", type=float, default=0.5, help="IVMε epsilon (default 0.5)")
    p.add_argument("--seed", type=int, default=7, help="random seed")
    p.set_defaults(func=_cmd_demo)

    p = sub.add_parser("bench", help="benchmarks: single-row updates, scaling on adversarial skew, bulk statements, "
                                     "Spark loads and builds",
                       description="Benchmark pgivm's strategies in a scratch database; each workload prints a "
                                   "table, updates and scaling also write a PNG plot to --out.")
    p.add_argument("workload", nargs="?", default="updates", choices=["updates", "scaling", "bulk", "load", "all"],
                   help="updates (default): single-row updates on a graph under every strategy and ε; "
                        "scaling: per-update time against N on adversarial skew, with fitted slopes; "
                        "bulk: one large INSERT ... SELECT, DELETE and COPY, and the crossover of the "
                        "tuple-by-tuple and set-at-a-time paths; "
                        "load: pgivm load (Spark, JDBC) against psycopg COPY, create --preprocess spark against "
                        "the PostgreSQL build, and loads under a view, on --edges and a generated graph of "
                        "--load-graph-edges (needs Spark and Java; minutes at the default 10^6 edges); "
                        "all: updates, scaling and bulk in order (not load)")
    p.add_argument("--dsn", default=argparse.SUPPRESS,
                   help="libpq connection string or URL of a server where the scratch database may be created "
                        "(same as pgivm --dsn)")
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
    p.set_defaults(func=_cmd_bench)

    p = sub.add_parser("server", help="start, stop or inspect the embedded PostgreSQL server")
    p.add_argument("action", choices=["start", "stop", "status"])
    p.add_argument("--port", type=int, help="TCP port (default: remembered, else 54329 or any free port)")
    p.set_defaults(func=_cmd_server)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
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
