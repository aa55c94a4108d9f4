"""``pgivm bench``: set up a scratch database and run the workloads, printing a table each.

Workloads (one module each): ``updates`` (single-row updates on a graph, every strategy and ε),
``scaling`` (per-update time against N on adversarial skew), ``bulk`` (one large INSERT ...
SELECT, DELETE or COPY); ``all`` runs the three in this order. Plots go to ``--out``.
``load`` (``pgivm load`` against COPY, ``create --preprocess spark`` against the PostgreSQL
build, loads under a view) needs Spark and minutes on a 10⁶-edge graph, so ``all`` leaves it out.
The flags are declared in ``pgivm.bench.options``; ``run`` checks their values.
"""

from __future__ import annotations

import argparse
import os
import platform
from contextlib import ExitStack
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from pgivm.bench import bulk, graphs, load, scaling, updates
from pgivm.bench.common import BENCH_PATH, BENCH_SCHEMA, LISTING_SQL
from pgivm.connection import connect, describe_target, resolve_dsn
from pgivm.errors import PgivmError

def _scratch_database(dsn: str, name: str) -> str:
    with connect(dsn, autocommit=True) as admin:
        try:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        except psycopg.Error as err:
            raise PgivmError(f"cannot create the scratch database {name}: {str(err).splitlines()[0]}",
                             "use a role with CREATEDB or pass --database of a database you may drop") from None
    scratch = make_conninfo(dsn, dbname=name)
    with connect(scratch, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}; REVOKE CREATE ON SCHEMA public FROM PUBLIC").format(
            sql.Identifier(BENCH_SCHEMA)))
    return scratch


def _drop_database(dsn: str, name: str) -> None:
    with connect(dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _other_active_sessions(conn: psycopg.Connection) -> int:
    """Client sessions of other users of the server that are running a statement right now."""
    row = conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
        "AND state = 'active' AND pid <> pg_backend_pid()").fetchone()
    return int(row[0]) if row else 0


def _graph(args: argparse.Namespace) -> tuple[list[tuple[int, int]], str]:
    if args.edges:
        edges = graphs.read_edge_list(args.edges)
        return edges, f"{args.edges} ({len(edges):,} undirected edges)"
    edges = graphs.power_law_graph(args.nodes, args.graph_edges)
    return edges, f"generated power-law graph ({args.nodes:,} nodes, {len(edges):,} edges)"


def _sample_graph(args: argparse.Namespace) -> tuple[list[tuple[int, int]], str]:
    """--edges, else ego-Facebook where the tests look for it, else the generated graph."""
    if not args.edges:
        for folder in (os.environ.get("PGIVM_TEST_DATA"), Path(__file__).resolve().parents[3] / "shared" / "data"):
            if folder and (Path(folder) / "facebook_combined.txt").is_file():
                path = Path(folder) / "facebook_combined.txt"
                edges = graphs.read_edge_list(path)
                return edges, f"ego-Facebook ({path}, {len(edges):,} edges)"
    return _graph(args)


def _family_graphs(args: argparse.Namespace) -> list[tuple[list[tuple[int, int]], str]]:
    """The graphs of ``ivme-family``'s real-graph part: --edges alone when given, else ego-Facebook
    (or the generated graph) and ca-GrQc where the tests look for them."""
    graphs_run = [_sample_graph(args)]
    if not args.edges:
        for folder in (os.environ.get("PGIVM_TEST_DATA"), Path(__file__).resolve().parents[3] / "shared" / "data"):
            if folder and (Path(folder) / "ca-GrQc.txt").is_file():
                edges = graphs.read_edge_list(Path(folder) / "ca-GrQc.txt")
                graphs_run.append((edges, f"ca-GrQc ({Path(folder) / 'ca-GrQc.txt'}, {len(edges):,} edges)"))
                break
    return graphs_run


def _sizes(text: str, option: str, minimum: int = 1) -> list[int]:
    try:
        sizes = [int(float(part)) for part in text.replace("_", "").split(",") if part.strip()]
    except ValueError:
        raise PgivmError(f"{option} takes comma-separated numbers, got {text!r}") from None
    if not sizes or min(sizes) < minimum:
        raise PgivmError(f"{option} takes numbers of at least {minimum}, got {text!r}")
    return sizes


def _check(args: argparse.Namespace) -> None:
    for epsilon in args.epsilon or []:
        if not 0 <= epsilon <= 1:
            raise PgivmError(f"--epsilon must be between 0 and 1, got {epsilon:g}")
    for option in ("held_out", "recompute_held_out", "updates", "hubs", "nodes", "graph_edges", "sample_prefix", "sample_k"):
        if getattr(args, option) < 1:
            raise PgivmError(f"--{option.replace('_', '-')} must be at least 1")
    if args.budget <= 0 or args.sample_budget <= 0 or args.recompute_budget <= 0:
        raise PgivmError("--budget, --sample-budget and --recompute-budget must be positive")
    if args.load_graph_edges < 0:
        raise PgivmError("--load-graph-edges must be 0 (no generated graph) or more")
    if args.load_graph_edges and args.load_graph_edges > args.load_graph_nodes * (args.load_graph_nodes - 1) // 4:
        raise PgivmError(f"--load-graph-edges {args.load_graph_edges:,} is too many for --load-graph-nodes "
                         f"{args.load_graph_nodes:,}", "allow at most nodes·(nodes−1)/4 edges")
    if args.workload == "load" and not args.edges and not args.load_graph_edges:
        raise PgivmError("bench load has no graph", "pass --edges FILE, or --load-graph-edges above 0")


def run(args: argparse.Namespace) -> int:
    """Validate the options, create the scratch database, run the chosen workload(s), drop it."""
    _check(args)
    sizes = _sizes(args.sizes, "--sizes", minimum=100)
    bulk_sizes = _sizes(args.bulk_sizes, "--bulk-sizes")
    crossover_sizes = [] if args.crossover_sizes.strip() == "none" else _sizes(args.crossover_sizes, "--crossover-sizes")
    chosen = ["updates", "scaling", "bulk"] if args.workload == "all" else [args.workload]
    out = Path(args.out)
    if {"updates", "scaling", "ivme-family"} & set(chosen):
        out.mkdir(parents=True, exist_ok=True)
    edges, source = _graph(args) if {"updates", "bulk"} & set(chosen) else ([], "")
    if args.edges and "load" in chosen and not Path(args.edges).is_file():
        raise PgivmError(f"cannot read edge list {args.edges}: no such file")

    dsn = resolve_dsn(args.dsn)
    print(f"pgivm bench {args.workload} on {describe_target(args.dsn)}, scratch database {args.database}; "
          f"{platform.processor() or platform.machine()}, {platform.python_implementation()} {platform.python_version()}")
    scratch = _scratch_database(dsn, args.database)
    with connect(scratch, autocommit=True, search_path=BENCH_PATH) as conn:
        version = conn.execute("SHOW server_version").fetchone()[0]  # type: ignore[index]
        print(f"PostgreSQL {version}; every statement autocommits; latencies are client round trips")
        busy = _other_active_sessions(conn)
        if busy:
            print(f"note: {busy} other session(s) are running statements on this server: timings may be perturbed")
        print(_load_line())
        if "updates" in chosen:
            updates.main(conn, updates.Config(
                edges=edges, held_out=args.held_out, epsilons=tuple(args.epsilon or updates.DEFAULT_EPSILONS),
                recompute_held_out=args.recompute_held_out, seed=args.seed), source, out)
        if "scaling" in chosen:
            scaling.main(conn, scaling.Config(
                sizes=sizes, updates=args.updates, budget_seconds=args.budget, hubs=args.hubs, seed=args.seed), out)
        if "ivme-family" in chosen:  # the listing on the same skew: its updates have the count's bounds
            scaling.main(conn, scaling.Config(
                sizes=sizes, updates=args.updates, budget_seconds=args.budget, hubs=args.hubs, seed=args.seed,
                query=LISTING_SQL, plot="ivme-family-listing.png", a_hubs=True), out)
            from pgivm.bench import family, loomis, paths, refined_space, three_path, tuples

            for workload in (loomis.WORKLOAD, paths.WORKLOAD, three_path.WORKLOAD, tuples.WORKLOAD):
                family.main(conn, workload, sizes, args.updates, args.budget, args.seed)
            for graph, source in _family_graphs(args):
                paths.graph_main(conn, graph, source, updates=min(args.updates, 100))
            refined_space.main(conn, sizes)
        if "bulk" in chosen:
            bulk.main(conn, bulk.Config(edges=edges, sizes=bulk_sizes, crossover_sizes=crossover_sizes, seed=args.seed), source)
        if "fivm" in chosen:
            from pgivm.bench import factorized

            parts = tuple(p.strip() for p in args.parts.split(",") if p.strip())
            unknown = set(parts) - {"batches", "cofactor", "single", "listing"}
            if unknown or not 1 <= args.features <= len(factorized.FEATURES):
                raise PgivmError(f"--parts: unknown {', '.join(sorted(unknown))}" if unknown else
                                 f"--features must be 1 to {len(factorized.FEATURES)}")
            factorized.main(conn, factorized.Config(
                scale=args.housing_scale, postcodes=args.postcodes, batches=args.batches, tpch_scale=args.tpch_scale,
                features=args.features, single_scales=tuple(_sizes(args.single_scales, "--single-scales")),
                listing_scales=tuple(_sizes(args.listing_scales, "--listing-scales")), seed=args.seed, out=out), parts)
        if "sample" in chosen:
            from pgivm.bench import sampling

            queries = tuple(q.strip() for q in args.sample_queries.split(",") if q.strip())
            unknown = set(queries) - set(sampling.QUERIES) - set(sampling.TPCDS_QUERIES)
            if unknown:
                raise PgivmError(f"--sample-queries: unknown {', '.join(sorted(unknown))}",
                                 f"choose from {', '.join([*sampling.QUERIES, *sampling.TPCDS_QUERIES])}")
            graph = tuple(q for q in queries if q in sampling.QUERIES)
            relational = tuple(q for q in queries if q in sampling.TPCDS_QUERIES)
            if graph:
                edges, source = _sample_graph(args)
                sampling.main(conn, sampling.Config(
                    edges=edges, source=source, queries=graph, prefix=args.sample_prefix, k=args.sample_k,
                    budget=args.sample_budget, recompute_budget=args.recompute_budget, seed=args.seed, out=out))
            if relational:
                sampling.tpcds_main(conn, sampling.TpcdsConfig(
                    queries=relational, scale=args.tpcds_scale, facts=args.tpcds_facts, k=args.tpcds_k,
                    budget=args.sample_budget, recompute_budget=args.recompute_budget, seed=args.seed))
        if "deferred" in chosen:
            from pgivm.bench import deferred as deferring

            parts = tuple(p.strip() for p in args.deferred_parts.split(",") if p.strip())
            unknown = set(parts) - {"simulate", "writes", "latency", "tpch"}
            if unknown or not parts:
                raise PgivmError(f"--deferred-parts: unknown {', '.join(sorted(unknown)) or 'nothing'}",
                                 "choose from simulate, writes, latency, tpch")
            edges, source = _sample_graph(args) if {"writes", "latency"} & set(parts) else ([], "")
            deferring.main(conn, deferring.Config(
                edges=edges, source=source, parts=parts, single_rows=args.deferred_single_rows,
                copy_rows=args.deferred_copy_rows, budget_ms=args.deferred_budget, tpch_scale=args.deferred_tpch_scale,
                steps=args.deferred_steps, seed=args.seed, dsn=scratch, out=out))
        if "coverage" in chosen:
            from pgivm.bench import coverage

            if min(args.coverage_rows, args.coverage_statements, args.coverage_group, args.coverage_deletes) < 1:
                raise PgivmError("--coverage-rows, --coverage-statements, --coverage-group and --coverage-deletes "
                                 "must be at least 1")
            coverage.main(conn, coverage.Config(rows=args.coverage_rows, statements=args.coverage_statements,
                                                group_rows=args.coverage_group, deletes=args.coverage_deletes,
                                                seed=args.seed))
        if "writers" in chosen:
            from pgivm.bench import writers

            writers.main(conn, writers.Config(seconds=args.writers_seconds, writers=args.writers, seed=args.seed,
                                              dsn=scratch))
        if "load" in chosen:
            with ExitStack() as stack:
                chosen_graphs = [load.Graph(Path(args.edges).name, Path(args.edges))] if args.edges else []
                if args.load_graph_edges:
                    chosen_graphs.append(stack.enter_context(
                        load.generated(args.load_graph_nodes, args.load_graph_edges, args.seed)))
                load.main(conn, load.Config(graphs=chosen_graphs, dsn=scratch, master=args.master))
    _drop_database(dsn, args.database)
    return 0


def _load_line() -> str:
    """The machine's load average before the run: other work on the same cores perturbs every latency."""
    try:
        one, five, _ = os.getloadavg()
    except OSError:
        return "load average: unknown"
    return f"load average before the run: {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"

