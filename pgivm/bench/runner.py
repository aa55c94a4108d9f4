"""``pgivm bench``: set up a scratch database and run the workloads, printing a table each."""

from __future__ import annotations

import argparse
import platform

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from pgivm.bench import graphs, updates
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
    return make_conninfo(dsn, dbname=name)


def run(args: argparse.Namespace) -> int:
    dsn = resolve_dsn(args.dsn)
    if args.edges:
        edges = graphs.read_edge_list(args.edges)
        source = f"{args.edges} ({len(edges):,} undirected edges)"
    else:
        edges = graphs.power_law_graph(args.nodes, args.graph_edges)
        source = f"generated power-law graph ({args.nodes:,} nodes, {len(edges):,} edges)"
    epsilons = args.epsilon or [0.5]
    print(f"pgivm bench on {describe_target(args.dsn)}; {platform.processor() or platform.machine()}, "
          f"{platform.python_implementation()} {platform.python_version()}")
    print(f"graph: {source}; R, S, T hold every edge in both directions; "
          f"{args.held_out:,} held-out edges inserted then deleted, one row per statement")
    scratch = _scratch_database(dsn, args.database)
    with psycopg.connect(scratch, autocommit=True) as conn:
        version = conn.execute("SHOW server_version").fetchone()[0]  # type: ignore[index]
        results = updates.run(conn, edges, args.held_out, epsilons)
    print(f"\nsingle-row updates (PostgreSQL {version}):")
    updates.print_table(results)
    return 0
