"""Edge lists for benchmarks: SNAP files (comments, a node-count header, extra columns) or generated."""

from __future__ import annotations

import random
from pathlib import Path

from pgivm.errors import PgivmError


def read_edge_list(path: str | Path) -> list[tuple[int, int]]:
    """Distinct undirected edges (u < v) of a whitespace edge list; self-loops dropped."""
    edges: set[tuple[int, int]] = set()
    try:
        handle = open(path, encoding="utf-8")
    except OSError as err:
        raise PgivmError(f"cannot read edge list {path}: {err.strerror}") from None
    with handle:
        for number, line in enumerate(handle, start=1):
            fields = line.split()
            if not fields or line.startswith(("#", "%")) or len(fields) < 2:
                continue  # comments and a node-count header line
            try:
                u, v = int(fields[0]), int(fields[1])
            except ValueError:
                raise PgivmError(f"{path}:{number}: expected two integer node ids, got {line.strip()!r}") from None
            if u != v:
                edges.add((min(u, v), max(u, v)))
    return sorted(edges)


def power_law_graph(nodes: int, edges: int, seed: int = 1, skew: float = 1.0) -> list[tuple[int, int]]:
    """Distinct undirected edges with one endpoint drawn from a Zipf-like law: a few hubs, many leaves."""
    rnd = random.Random(seed)
    weights = [1.0 / (rank + 1) ** skew for rank in range(nodes)]
    chosen: set[tuple[int, int]] = set()
    while len(chosen) < edges:
        for u, v in zip(rnd.choices(range(nodes), weights, k=edges), rnd.choices(range(nodes), k=edges)):
            if u != v:
                chosen.add((min(u, v), max(u, v)))
                if len(chosen) >= edges:
                    break
    return sorted(chosen)
