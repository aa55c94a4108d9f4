"""PNG plots of the benchmark results, drawn with matplotlib's Agg backend (no display needed).

matplotlib is an optional dependency (``pip install 'pgivm[bench]'``): without it the tables are
still printed and each plot is skipped with a note.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pgivm.bench.common import StreamResult
    from pgivm.bench.scaling import Fit, SizeResult


def _pyplot() -> Any | None:
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed (pip install 'pgivm[bench]'): no plot written", file=sys.stderr)
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def updates_tradeoff(results: list[StreamResult], path: Path) -> Path | None:
    """Median update time and state size against ε for ivme; first-order and no view as reference lines."""
    plt = _pyplot()
    if plt is None:
        return None
    ivme = sorted((r for r in results if r.strategy.name == "ivme"), key=lambda r: r.strategy.epsilon)
    first_order = next((r for r in results if r.strategy.name == "first-order"), None)
    no_view = next((r for r in results if r.strategy.name is None), None)
    fig, (time_ax, size_ax) = plt.subplots(2, 1, sharex=True, figsize=(7, 6.5))
    eps = [r.strategy.epsilon for r in ivme]

    time_ax.plot(eps, [r.median_ms for r in ivme], "o-", color="tab:blue", label="ivme, median")
    time_ax.plot(eps, [r.p99_ms for r in ivme], "o:", color="tab:blue", alpha=0.5, label="ivme, p99")
    if first_order is not None:
        time_ax.axhline(first_order.median_ms, color="tab:red", linestyle="--", label="first-order, median")
    if no_view is not None:
        time_ax.axhline(no_view.median_ms, color="gray", linestyle=":", label="no view, median")
    time_ax.set_ylabel("update time (ms)")
    time_ax.set_ylim(bottom=0)
    time_ax.set_title(f"single-row updates: {ivme[0].updates if ivme else 0:,} per strategy")
    time_ax.legend(fontsize="small")
    time_ax.grid(alpha=0.3)

    size_ax.plot(eps, [_mb(r) for r in ivme], "s-", color="tab:green", label="ivme state")
    for r in ivme:  # how many values ε made heavy explains the size
        if r.view is not None and r.view.heavy_values is not None:
            size_ax.annotate(f"{r.view.heavy_values:,} heavy", (r.strategy.epsilon, _mb(r)), fontsize="x-small",
                             textcoords="offset points", xytext=(0, 7), ha="center")
    if first_order is not None and first_order.view is not None:
        size_ax.axhline(_mb(first_order), color="tab:red", linestyle="--", label="first-order state")
    size_ax.set_ylabel("state size (MB)")
    size_ax.set_ylim(bottom=0, top=1.15 * max([_mb(r) for r in results if r.view] or [1]))
    size_ax.set_xlabel("ε (ivme heavy/light threshold N^ε)")
    size_ax.set_xticks(eps)
    size_ax.legend(fontsize="small")
    size_ax.grid(alpha=0.3)
    return _save(fig, plt, path)


def scaling(sizes: list[SizeResult], fits: list[Fit], path: Path) -> Path | None:
    """Median per-update time against N on log-log axes, one series per strategy, with fitted lines."""
    plt = _pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(7, 5))
    colors = {"no view": "gray", "first-order": "tab:red"}
    labels = [r.label for r in sizes[0].results] if sizes else []
    ns = [s.n for s in sizes]
    for label in labels:
        medians = [next(r for r in s.results if r.label == label).median_ms for s in sizes]
        color = colors.get(label, "tab:blue")
        fit = next((f for f in fits if f.label == label), None)
        legend = f"{label} (slope {fit.slope:.2f})" if fit else label
        ax.plot(ns, medians, "o" if fit else "o:", color=color, label=legend, alpha=1.0 if fit else 0.6)
        if fit:
            ax.plot(ns, [fit.at(n) for n in ns], "-", color=color, alpha=0.6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    _plain_log_labels(ax)
    ax.set_xlabel("N (tuples in R, S, T)")
    ax.set_ylabel("median time per single-row update (ms)")
    ax.set_title("adversarial skew: updates R(a, hub); lines: least-squares fits")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize="small")
    return _save(fig, plt, path)


def deferred_simulation(first: dict[str, dict[str, list[tuple[int, float]]]],
                        second: dict[str, dict[str, dict[str, float]]], path: Path) -> Path | None:
    """Per cost set: experiment 1's total work against T for each planner (the paper's Figure 6),
    and experiment 2's work against OPT^LGM per stream (Figure 7)."""
    plt = _pyplot()
    if plt is None:
        return None
    fig, axes = plt.subplots(len(first), 2, figsize=(11, 4 * len(first)), squeeze=False)
    for row, (label, by_planner) in enumerate(first.items()):
        ax = axes[row][0]
        for planner, points in by_planner.items():
            ax.plot([t for t, _ in points], [c for _, c in points], marker="o", label=planner)
        ax.set_title(f"{label}: experiment 1 (one update of each table a step)")
        ax.set_xlabel("refresh time T (steps)")
        ax.set_ylabel("total maintenance work f(P), ms")
        ax.legend()
        ax = axes[row][1]
        streams = list(second[label])
        planners = list(next(iter(second[label].values())))
        width = 0.8 / len(planners)
        for i, planner in enumerate(planners):
            ax.bar([j + i * width for j in range(len(streams))], [second[label][s][planner] for s in streams], width, label=planner)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(streams))], streams)
        ax.axhline(1.0, color="grey", linewidth=0.8)
        ax.set_title(f"{label}: experiment 2 (T = 1,000)")
        ax.set_ylabel("work / OPT^LGM")
        ax.legend(ncol=2, fontsize="small", loc="lower right")
    return _save(fig, plt, path)


def cost_functions(fits: list[tuple[str, list[tuple[int, float]], list[tuple[float, float]]]], path: Path) -> Path | None:
    """What ``pgivm calibrate`` measured per table (points) and the cost function it keeps (the least
    concave majorant, a minimum of lines), on log-log axes: the paper's Figure 4."""
    plt = _pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, (label, points, lines) in enumerate(fits):
        color = f"C{i}"
        ax.scatter([k for k, _ in points], [y for _, y in points], color=color, label=f"{label}: measured")
        ks = sorted({1.0, *(float(k) for k, _ in points)})
        grid = [ks[0] * (ks[-1] / ks[0]) ** (j / 200) for j in range(201)]
        ax.plot(grid, [min(a * k + b for a, b in lines) for k in grid], color=color, label=f"{label}: f(k)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("batch size k (log rows)")
    ax.set_ylabel("ms")
    ax.set_title("cost functions as calibrate keeps them (the least concave majorant)")
    ax.legend(fontsize="small")
    _plain_log_labels(ax)
    return _save(fig, plt, path)


def _plain_log_labels(ax: Any) -> None:
    """Tick labels as plain numbers (0.5, 10, 1,000,000) instead of 5×10⁻¹; minor ticks labelled too
    when an axis spans less than a decade (else it would have no label at all)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    plain = FuncFormatter(lambda value, _: f"{value:,.0f}" if value >= 1000 else f"{value:g}")
    for axis, (low, high) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
        axis.set_major_formatter(plain)
        axis.set_minor_formatter(plain if high < 10 * low else NullFormatter())


def _mb(result: StreamResult) -> float:
    return (result.view.state_bytes if result.view else 0) / 2**20


def _save(fig: Any, plt: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
