"""Workload ``updates``: single-row inserts and deletes on a real or generated graph.

R, S and T each hold every edge of the graph in both directions except K held-out edges. The
stream inserts the K edges one row per statement (edge i into R, S or T by turn), then deletes
them again, so every strategy starts and ends on the same data. The same stream runs with no view
(the floor: what the base tables and their index cost), under IVMε at each ε, and under
first-order IVM; recompute runs on only the first ``recompute_held_out`` edges, since each of its
statements recounts every triangle (O(N^1.5)).

What it shows: the time/space trade-off of ε (a smaller ε makes more values heavy: larger
auxiliary views, shorter loops), against first-order IVM, which keeps no views but loops over a
value's whole neighbourhood, and against recomputing.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass
from pathlib import Path

import psycopg

from pgivm import report
from pgivm.bench import plots
from pgivm.bench.common import (
    NO_VIEW,
    Row,
    StreamResult,
    Strategy,
    cell,
    create_view,
    drop_view,
    inserts_then_deletes,
    load_tables,
    megabytes,
    run_stream,
    verify_view,
)

DEFAULT_EPSILONS = [0.0, 0.25, 0.5, 0.75, 1.0]
HEADERS = ["strategy", "updates", "updates/s", "vs no view (×)", "median (ms)", "p99 (ms)", "max (ms)",
           "build (s)", "state (MB)", "θ", "heavy values", "rebalances minor/major"]


@dataclass
class Config:
    edges: list[tuple[int, int]]
    held_out: int = 2000
    epsilons: tuple[float, ...] = tuple(DEFAULT_EPSILONS)
    recompute_held_out: int = 50
    seed: int = 1


def base_rows(edges: list[tuple[int, int]], held: set[tuple[int, int]]) -> dict[str, list[Row]]:
    """Every edge but the held-out ones, in both directions, in each of R, S and T."""
    kept = [(u, v) for u, v in edges if (u, v) not in held]
    both = kept + [(v, u) for u, v in kept]
    return {"r": both, "s": both, "t": both}


def held_out_stream(held: list[tuple[int, int]]) -> list[tuple[str, int, int]]:
    """Edge i goes to R, S or T in turn (as written: u is the first column)."""
    return [("rst"[i % 3], u, v) for i, (u, v) in enumerate(held)]


def run(conn: psycopg.Connection, config: Config) -> list[StreamResult]:
    """The insert-then-delete stream under no view, ivme at each ε, first-order, then recompute.

    Each view is created on the loaded tables (build time), its state measured right after the
    build (before the stream adds dead tuples), the stream run, the view verified and dropped.
    """
    rnd = random.Random(config.seed)
    held = rnd.sample(config.edges, min(config.held_out, len(config.edges)))
    load_tables(conn, base_rows(config.edges, set(held)))
    stream = inserts_then_deletes(held_out_stream(held))
    short = inserts_then_deletes(held_out_stream(held[: config.recompute_held_out]))
    plan = ([(NO_VIEW, stream)] + [(Strategy("ivme", e), stream) for e in config.epsilons]
            + [(Strategy("first-order"), stream), (Strategy("recompute"), short)])
    results = []
    for strategy, updates in plan:
        view = create_view(conn, strategy)
        result = run_stream(conn, updates, strategy)
        result.view = view
        verify_view(conn, strategy, f"{len(updates):,} single-row updates")
        drop_view(conn, strategy)
        results.append(result)
    return results


def print_table(results: list[StreamResult]) -> None:
    base = results[0].per_second
    report.print_table(HEADERS, [
        [r.label, f"{r.updates:,}", cell(r.per_second, 0 if r.per_second >= 10 else 2), f"{r.per_second / base:.2f}", f"{r.median_ms:.3f}",
         f"{r.p99_ms:.3f}", f"{r.max_ms:.1f}",
         "" if r.view is None else f"{r.view.build_seconds:.1f}",
         megabytes(None if r.view is None else r.view.state_bytes),
         "" if r.view is None or r.view.theta is None else f"{r.view.theta:,.1f}",
         "" if r.view is None or r.view.heavy_values is None else f"{r.view.heavy_values:,}",
         f"{r.minor_rebalances}/{r.major_rebalances}" if r.strategy.name == "ivme" else ""]
        for r in results
    ])


def print_rebalancing(results: list[StreamResult]) -> None:
    """Which streams paid for rebalancings, and what those updates cost against the median."""
    for r in results:
        if r.rebalancing:
            times = sorted(r.rebalancing_ms)
            print(f"  {r.label}: {len(times)} update(s) rebalanced (minor or major), taking "
                  f"{times[0]:.1f} to {times[-1]:.1f} ms (median update {r.median_ms:.2f} ms)")
        elif r.strategy.name == "ivme":
            print(f"  {r.label}: no update rebalanced")


def main(conn: psycopg.Connection, config: Config, source: str, out: Path) -> list[StreamResult]:
    """Run, print the table and write ``updates_tradeoff.png``."""
    print(f"\n== updates: {source}; R, S, T hold every edge in both directions; {config.held_out:,} held-out "
          f"edges inserted then deleted, one row per statement, autocommit (recompute: "
          f"{config.recompute_held_out:,} edges)")
    sys.stdout.flush()
    results = run(conn, config)
    print("\nsingle-row updates (updates/s over the summed statement latencies; state measured after the build):")
    print_table(results)
    print("\nrebalancing during the stream (ivme):")
    print_rebalancing(results)
    path = plots.updates_tradeoff(results, out / "updates_tradeoff.png")
    if path:
        print(f"plot: {path}")
    return results
