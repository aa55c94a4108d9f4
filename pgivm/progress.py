"""A progress line for long work: redrawn in place on a terminal, a line every few seconds otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    def __init__(self, label: str, total: int | None = None, stream: TextIO | None = None, every: float = 2.0) -> None:
        self.label = label
        self.total = total
        self.stream = stream or sys.stderr
        self.every = every if not self.stream.isatty() else 0.1
        self.done = 0
        self.started = time.perf_counter()
        self._last = 0.0

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self._draw(final=True)

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    @property
    def rate(self) -> float:
        return self.done / self.elapsed if self.elapsed > 0 else 0.0

    def advance(self, n: int = 1, note: str = "") -> None:
        self.done += n
        now = time.perf_counter()
        if now - self._last >= self.every:
            self._last = now
            self._draw(note=note)

    def _draw(self, note: str = "", final: bool = False) -> None:
        total = f"/{self.total:,}" if self.total else ""
        pct = f" {100 * self.done / self.total:5.1f}%" if self.total else ""
        line = f"{self.label}: {self.done:,}{total}{pct}  {self.rate:,.0f}/s  {self.elapsed:.1f} s  {note}".rstrip()
        if self.stream.isatty():
            self.stream.write("\r\033[K" + line + ("\n" if final else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
