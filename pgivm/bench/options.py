"""The flags of ``pgivm bench``, as data: ``pgivm.cli`` mounts them, ``pgivm.bench.runner`` reads them.

``FLAGS`` lists the groups of ``pgivm bench --help`` in order: a title (None: the command's own
arguments) and its flags with argparse's settings. The runner checks the values (ranges, lists)
and turns them into each workload's Config. Importing this module stays cheap (no workload, no
plotting): ``pgivm --help`` builds every parser.
"""

from __future__ import annotations

import argparse
from typing import Any

HELP = "benchmarks: single-row updates, scaling on adversarial skew, bulk statements, Spark loads and builds"
DESCRIPTION = ("Benchmark pgivm's strategies in a scratch database; each workload prints a table, updates and "
               "scaling also write a PNG plot to --out.")
DSN_HELP = ("libpq connection string or URL of a server where the scratch database may be created (before or "
            "after the command)")

WORKLOADS = ["updates", "scaling", "ivme-family", "bulk", "load", "fivm", "sample", "deferred", "writers", "coverage",
             "all"]

FLAGS: list[tuple[str | None, dict[str, dict[str, Any]]]] = [
    (None, {
        "workload": dict(
            nargs="?", default="updates", choices=WORKLOADS,
            help="updates (default): single-row updates on a graph under every strategy and ε; "
                 "scaling: per-update time against N on adversarial skew, with fitted slopes; "
                 "ivme-family: the same for the IVMε family's other queries (the triangle listing, [L] "
                 "Appendix E, a Loomis-Whitney count of degree 4, Appendix F, against first-order; the 4-path "
                 "count, Appendix G, against F-IVM and first-order, also on ego-Facebook and ca-GrQc with their "
                 "3-walk and 4-cycle counts; the 3-path count, the 3R² class of Appendix H, against F-IVM and "
                 "first-order, also with its tables joined on tuples (H.1); the space of single and refined partitions, Appendix D); "
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
                 "against no view and immediate (with pgivm worker), the paper's TPC-H case (NAIVE against "
                 "ONLINE); "
                 "writers: concurrent writers under 1, 2 and 4 views over shared tables, immediate and "
                 "deferred, against no view; "
                 "coverage: DISTINCT, min/max, computed aggregates and conditions across tables under "
                 "single-row writes, and deletes of a group's maximum, against no view, recompute and pg_ivm "
                 "(when the server has it); "
                 "all: updates, scaling and bulk in order (not load, not fivm, not sample, not deferred, not "
                 "writers, not coverage)"),
        "--database": dict(
            default="pgivm_bench",
            help="scratch database, dropped and recreated, and dropped again at the end (default pgivm_bench)"),
        "--out": dict(default="benchmarks/out",
                      help="directory for the PNG plots, created if missing (default benchmarks/out)"),
        "--seed": dict(type=int, default=1, help="random seed of the generated data and streams (default 1)"),
    }),
    ("graph (updates, bulk; load: the file graph)", {
        "--edges": dict(help="edge list (SNAP style) to load; default: a generated power-law graph"),
        "--nodes": dict(type=int, default=4000, help="nodes of the generated graph (default 4000)"),
        "--graph-edges": dict(type=int, default=88000, help="edges of the generated graph (default 88000)"),
    }),
    ("updates", {
        "--held-out": dict(
            type=int, default=2000,
            help="K: edges left out of the load, streamed as K inserts then K deletes (default 2000)"),
        "--epsilon": dict(type=float, action="append",
                          help="IVMε epsilon to measure (repeatable; default 0, 0.25, 0.5, 0.75 and 1)"),
        "--recompute-held-out": dict(
            type=int, default=50,
            help="held-out edges streamed under the recompute strategy, which recounts on every "
                 "statement (default 50)"),
    }),
    ("scaling, ivme-family", {
        "--sizes": dict(default="10000,30000,100000,300000,1000000",
                        help="database sizes N (tuples over R, S, T), comma-separated "
                             "(default 10000,30000,100000,300000,1000000)"),
        "--updates": dict(
            type=int, default=200,
            help="single-row updates per strategy and size: half inserts, then the same rows deleted "
                 "(default 200)"),
        "--budget": dict(
            type=float, default=40.0,
            help="seconds of updates per strategy and size: inserting stops after half of it, so slow "
                 "strategies use fewer updates at large N; the table says how many (default 40)"),
        "--hubs": dict(type=int, default=4,
                       help="hub b-values in S, each paired with N/(2·hubs) c-values (default 4)"),
    }),
    ("bulk", {
        "--bulk-sizes": dict(default="10000,100000",
                             help="rows per bulk statement, comma-separated (default 10000,100000)"),
        "--crossover-sizes": dict(
            default="4,16,64,256,384,512,1024,4096",
            help="rows per rolled-back INSERT timed tuple by tuple and set at a time, comma-separated; "
                 "none: skip (default 4,16,64,256,384,512,1024,4096)"),
    }),
    ("load (the --edges file, if given, and a generated power-law graph)", {
        "--load-graph-edges": dict(
            type=int, default=1_000_000,
            help="undirected edges of the generated graph; 0: none, only --edges (default 1000000)"),
        "--load-graph-nodes": dict(type=int, default=100_000, help="nodes of the generated graph (default 100000)"),
        "--master": dict(default="local[*]", help="Spark master (default local[*])"),
    }),
    ("fivm (Housing-like star and TPC-H snowflake, pgivm.data)", {
        "--housing-scale": dict(type=int, default=2,
                                help="Housing scale of the batch and cofactor workloads (default 2)"),
        "--postcodes": dict(type=int, default=5000,
                            help="Housing postcodes of the batch and cofactor workloads (default 5000)"),
        "--batches": dict(type=int, default=30,
                          help="1,000-row insert batches per system (default 30; recompute: 3)"),
        "--tpch-scale": dict(type=float, default=0.01, help="TPC-H scale factor (default 0.01)"),
        "--features": dict(type=int, default=10, help="cofactor features, 1 to 12 (default 10)"),
        "--single-scales": dict(default="1,2,5,10,20",
                                help="Housing scales of the single-row workload (default 1,2,5,10,20)"),
        "--listing-scales": dict(default="1,2,4,8", help="Housing scales of the listing workload (default 1,2,4,8)"),
        "--parts": dict(default="batches,cofactor,single,listing",
                        help="which fivm workloads to run, comma-separated (default all four)"),
    }),
    ("sample (graph queries over one edge table and TPC-DS queries, pgivm.bench.sampling)", {
        "--sample-queries": dict(
            default="line-3,line-4,star-4,QX,QY,QZ",
            help="queries, comma-separated (default all six: line-3, line-4, star-4, QX, QY, QZ; "
                 "also the cyclic triangle and dumbbell)"),
        "--sample-prefix": dict(type=int, default=20_000,
                                help="edges streamed per query and system (default 20000)"),
        "--sample-k": dict(type=int, default=10_000, help="sample size K (default 10000)"),
        "--sample-budget": dict(
            type=float, default=300.0,
            help="seconds after which the enumerating baseline stops; on TPC-DS, every run (default 300)"),
        "--tpcds-scale": dict(type=float, default=0.1, help="TPC-DS scale factor for QX, QY, QZ (default 0.1)"),
        "--tpcds-facts": dict(type=int, default=20_000,
                              help="store_sales rows streamed per TPC-DS query (default 20000)"),
        "--tpcds-k": dict(type=int, default=100_000, help="sample size K on TPC-DS (default 100000)"),
    }),
    ("deferred (deferred views, pgivm.bench.deferred)", {
        "--deferred-parts": dict(
            default="writes,latency,tpch,simulate",
            help="which parts, comma-separated: writes (IVMε writes against no view and immediate), latency "
                 "(reads under a mixed stream against C), tpch (the paper's case), simulate (the paper's "
                 "experiments 1 and 2 on the costs tpch measures) (default all four)"),
        "--deferred-budget": dict(type=float, default=50.0, help="the budget C in milliseconds (default 50)"),
        "--deferred-single-rows": dict(type=int, default=2000, help="single-row INSERTs per setting (default 2000)"),
        "--deferred-copy-rows": dict(type=int, default=100_000, help="rows of the one COPY (default 100000)"),
        "--deferred-tpch-scale": dict(type=float, default=0.1, help="TPC-H scale factor (default 0.1)"),
        "--deferred-steps": dict(type=int, default=2000,
                                 help="TPC-H steps, each one partsupp and one supplier update (default 2000)"),
    }),
    ("coverage (the SQL of issue 22 against pg_ivm, pgivm.bench.coverage)", {
        "--coverage-rows": dict(type=int, default=100_000, help="rows of r in the write cases (default 100000)"),
        "--coverage-statements": dict(type=int, default=400, help="single-row statements per case (default 400)"),
        "--coverage-group": dict(type=int, default=100_000,
                                 help="rows of the group whose maximum is deleted (default 100000)"),
        "--coverage-deletes": dict(type=int, default=20, help="deletes of the maximum (default 20)"),
    }),
    ("writers (concurrent writers under views over shared tables, pgivm.bench.writers)", {
        "--writers": dict(type=int, default=4, help="writer threads (default 4)"),
        "--writers-seconds": dict(type=float, default=10.0, help="seconds per setting (default 10)"),
        "--recompute-budget": dict(
            type=float, default=60.0,
            help="statement timeout of one ORDER BY random() LIMIT K recompute (default 60)"),
    }),
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Mount every flag of ``FLAGS`` on the ``pgivm bench`` parser, group by group."""
    for title, flags in FLAGS:
        group = parser.add_argument_group(title) if title else parser
        for flag, settings in flags.items():
            group.add_argument(flag, **settings)
