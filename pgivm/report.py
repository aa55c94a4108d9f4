"""Plain-text tables and sizes for the CLI, the demo and the benchmarks."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, TextIO


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], out: TextIO | None = None) -> None:
    """Left-aligned first column, right-aligned numbers, a rule under the header."""
    out = out or sys.stdout
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for n, row in enumerate(cells):
        line = "  ".join(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row))
        print(line.rstrip(), file=out)
        if n == 0:
            print("  ".join("-" * w for w in widths), file=out)


def human_bytes(size: int) -> str:
    value = float(size)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"
