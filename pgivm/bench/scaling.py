"""Workload ``scaling``: per-update time against database size N on adversarial skew.

The paper's claim is asymptotic: under IVMε with ε = ½ a single-tuple update costs O(√N), while
the classical first-order delta query costs Θ(N) when the changed tuple joins a high-degree
value. This workload builds databases of growing N designed so that both bounds are tight for
the same update stream, measures per-update latency, and fits the log-log slope (the exponent).

The database (N tuples over R, S, T; θ = (2N+1)^½ is IVMε's threshold at ε = ½ after the build):

- S(b, c), N/2 tuples: ``hubs`` hub b-values, each paired with every one of N/(2·hubs) c-values.
- T(c, a), N/4 tuples: about N/(8·1.5θ) ∝ √N heavy c-values, each paired with the same pool of
  ⌈1.5θ⌉ a-values; the rest random pairs (light c-values of degree about 1).
- R(a, b), N/4 tuples: a drawn with moderate (Zipf ½) skew, b uniform; every a stays light.

The stream inserts R(α, β) with α from the pool and β a hub (round robin), one row per
statement, then deletes the same rows. First-order computes δR ⋈ S ⋈ T by looping over
S(β, ·): N/(2·hubs) rows, Θ(N). IVMε routes β as heavy in S: it loops over T_heavy(·, α) (all
∝ √N heavy c-values, since α is in the pool) probing S_heavy(β, c), adds V_ST(β, α), and updates
V_TR(c, β) for the same heavy c-values: Θ(√N) rows. A few untimed probe updates of the same kind
count the state rows each strategy actually reads (PostgreSQL's per-transaction statistics).

Latencies are raw medians: nothing (such as the no-view baseline, also shown) is subtracted. The
slopes are fitted to those raw medians, and also to the maintenance time (median minus the no-view
median at the same N), since the fixed cost of a statement round trip flattens the raw slope at
the small sizes.
"""

from __future__ import annotations

import math
import random
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from pgivm import report
from pgivm.bench import plots
from pgivm.bench.common import (
    NO_VIEW,
    TRIANGLE_SQL,
    Read,
    Row,
    StreamResult,
    Strategy,
    cell,
    create_view,
    drop_view,
    inserts_then_deletes,
    load_tables,
    read_first_rows,
    run_stream,
    state_rows_read,
    verify_view,
)

DEFAULT_SIZES = [10_000, 30_000, 100_000, 300_000, 1_000_000]
STRATEGIES = [NO_VIEW, Strategy("ivme", 0.5), Strategy("first-order")]
FITTED = STRATEGIES[1:]  # the two whose exponents the paper predicts
PREDICTED = {"ivme": (0.5, "target ≤ 0.6"), "first-order": (1.0, "target ≥ 0.9")}
PROBES = 2  # probe pairs (insert + delete) per view for the rows-read count
READ_ROWS = 10_000  # a listing's first rows read back: its enumeration delay ...
READ_INSERTS = 10  # ... with this many of the stream's rows inserted first (each closes Θ(N) triangles)
HEADERS = ["N (tuples)", "strategy", "updates", "median (ms)", "p99 (ms)", "state rows read/update",
           "build (s)", "stream (s)"]


@dataclass
class Config:
    sizes: Sequence[int] = tuple(DEFAULT_SIZES)
    updates: int = 200
    budget_seconds: float = 40.0
    hubs: int = 4
    seed: int = 1
    query: str = TRIANGLE_SQL  # or LISTING_SQL: the triangles themselves (workload ivme-family)
    plot: str = "scaling.png"
    a_hubs: bool = False  # the stream's α with Θ(N) partners in T too (see generate)


@dataclass
class SkewedDatabase:
    """One generated instance and the update stream that hits its hubs."""

    rows: dict[str, list[Row]]
    hubs: list[int]
    hub_degree: int
    heavy_c: int
    pool: list[int]
    theta: float
    stream: list[tuple[str, int, int]]  # R(α, β) rows to insert then delete
    probes: list[tuple[str, int, int]]  # further rows of the same kind, for the rows-read probes

    @property
    def size(self) -> int:
        return sum(len(r) for r in self.rows.values())

    def describe(self) -> str:
        r, s, t = (len(self.rows[k]) for k in "rst")
        return (f"N = {self.size:,} tuples (R {r:,}, S {s:,}, T {t:,}); {len(self.hubs)} hubs in S × "
                f"{self.hub_degree:,} partners; {self.heavy_c} heavy c-values in T × {len(self.pool):,} "
                f"pool a-values; θ ≈ {self.theta:,.0f}")


def generate(n: int, inserts: int, hubs: int = 4, seed: int = 1, a_hubs: bool = False) -> SkewedDatabase:
    """The adversarial database of about ``n`` tuples (see the module docstring) and its stream.

    ``a_hubs``: also a-values of the pool with N/8 light c-values in T among them (one per hub pair
    of the stream: about N/(8·updates/(2·hubs)) each), and the stream's α drawn from them: then δR ⋈ S ⋈ T is Θ(N) from either side (a first-order delta
    query that starts from the smaller one, as PostgreSQL's planner does for a listing, still reads
    Θ(N) rows), and a listing gains Θ(N) triangles an update, which IVMε keeps factorized (R_l S_h
    T_l: one row of P_ST, read back through W_ST) where first-order writes each."""
    rnd = random.Random(seed * 1_000_003 + n)
    theta = math.sqrt(2 * n + 1)
    pool_size = math.ceil(1.5 * theta)  # a heavy c-value's degree: heavy at the build, with margin
    hub_degree = max(1, n // (2 * hubs))
    a_values = max(n // 16, 2 * pool_size)
    b_values = max(n // 16, 2 * hubs)

    c_domain = list(range(hub_degree))
    s_rows = [(hub, c) for hub in range(hubs) for c in c_domain]

    heavy_c = max(1, (n // 8) // pool_size)
    heavy = rnd.sample(c_domain, min(heavy_c, len(c_domain)))
    pool = rnd.sample(range(a_values), pool_size)
    t_rows = {(c, a) for c in heavy for a in pool}
    heavy_set = set(heavy)
    light_c = [c for c in c_domain if c not in heavy_set] or c_domain
    alphas = pool
    if a_hubs:  # enough of them for distinct (α, hub) rows: N/8 tuples of T among them
        alphas = rnd.sample(pool, min(len(pool), -(-(inserts + PROBES) // hubs)))
        for a in alphas:
            t_rows.update((c, a) for c in rnd.sample(light_c, min(len(light_c), n // (8 * len(alphas)))))
    while len(t_rows) < n // 4:
        t_rows.add((rnd.choice(light_c), rnd.randrange(a_values)))

    ranks = list(range(a_values))
    rnd.shuffle(ranks)  # which a-values the Zipf law favours: unrelated to the pool
    weights = [1.0 / math.sqrt(k + 1) for k in range(a_values)]
    r_rows: set[Row] = set()
    while len(r_rows) < n // 4:
        for k in rnd.choices(range(a_values), weights, k=n // 4 - len(r_rows)):
            r_rows.add((ranks[k], rnd.randrange(b_values)))

    # Each pool value with one hub, hubs in turn; a second round pairs the values with the next hub.
    order = rnd.sample(alphas, len(alphas))
    pairs = ((order[j % len(order)], (j + j // len(order)) % hubs) for j in range(len(order) * hubs))
    ordered = [row for row in pairs if row not in r_rows]
    wanted = inserts + PROBES
    chosen = [("r", a, b) for a, b in ordered[:wanted]]
    return SkewedDatabase(
        rows={"r": sorted(r_rows), "s": s_rows, "t": sorted(t_rows)},
        hubs=list(range(hubs)), hub_degree=hub_degree, heavy_c=len(heavy), pool=pool, theta=theta,
        stream=chosen[PROBES:], probes=chosen[:PROBES],
    )


@dataclass
class SizeResult:
    n: int
    description: str
    results: list[StreamResult] = field(default_factory=list)


@dataclass
class Fit:
    """Least-squares line log10(y) = slope · log10(N) + intercept."""

    label: str
    slope: float
    intercept: float

    def at(self, n: float) -> float:
        return 10 ** (self.intercept + self.slope * math.log10(n))


def fit_loglog(xs: Sequence[float], ys: Sequence[float], label: str = "") -> Fit | None:
    """Ordinary least squares on (log10 x, log10 y); None with fewer than two distinct sizes."""
    points = [(math.log10(x), math.log10(y)) for x, y in zip(xs, ys) if x > 0 and y > 0]
    if len({p[0] for p in points}) < 2:
        return None
    mx = statistics.fmean(p[0] for p in points)
    my = statistics.fmean(p[1] for p in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    return Fit(label, slope, my - slope * mx)


def measure_size(conn: psycopg.Connection, n: int, config: Config) -> SizeResult:
    """Build one database with COPY, then the same stream with no view, ivme ε=½ and first-order."""
    db = generate(n, config.updates // 2, config.hubs, config.seed, config.a_hubs)
    load_tables(conn, db.rows)
    print(f"  {db.describe()}", file=sys.stderr, flush=True)
    out = SizeResult(db.size, db.describe())
    stream = inserts_then_deletes(db.stream)
    for strategy in STRATEGIES:
        view = create_view(conn, strategy, query=config.query)
        rows_read = []
        if view is not None:
            for update in inserts_then_deletes(db.probes):
                rows_read.append(state_rows_read(conn, update))
        result = run_stream(conn, stream, strategy, budget_seconds=config.budget_seconds,
                            title=f"N = {db.size:,}, R(pool, hub) updates")
        result.view = view
        result.rows_read = rows_read
        if view is not None and config.query != TRIANGLE_SQL:  # after the stream, which it would perturb
            result.read = _read_listing(conn, db)
        verify_view(conn, strategy, f"{result.updates:,} single-row updates at N = {db.size:,}")
        drop_view(conn, strategy)
        out.results.append(result)
    return out


def _read_listing(conn: psycopg.Connection, db: SkewedDatabase) -> Read:
    """The listing's first rows read back with the stream's first rows in (many triangles to
    enumerate), which are then deleted again. Not timed as updates."""
    updates = inserts_then_deletes(db.stream[:READ_INSERTS])
    for update in updates[:READ_INSERTS]:
        conn.execute(update.statement(), update.params)
    read = read_first_rows(conn, READ_ROWS)
    for update in updates[READ_INSERTS:]:
        conn.execute(update.statement(), update.params)
    return read


def run(conn: psycopg.Connection, config: Config) -> list[SizeResult]:
    return [measure_size(conn, n, config) for n in config.sizes]


def fits(sizes: list[SizeResult], metric: str = "median") -> list[Fit]:
    """Per strategy, the fitted exponent in N of the median latency ("median"), of the median
    latency minus the no-view median at the same N ("maintenance": what the view adds, without
    the fixed cost of a statement round trip that flattens the small sizes), or of the state rows
    read ("rows"). Sizes where a value is not positive are left out of that fit."""
    out = []
    for strategy in STRATEGIES:
        xs, ys = [], []
        for size in sizes:
            result = next(r for r in size.results if r.strategy == strategy)
            if metric == "median":
                value = result.median_ms
            elif metric == "maintenance":
                if strategy == NO_VIEW:
                    continue
                bare = next(r for r in size.results if r.strategy == NO_VIEW)
                value = result.median_ms - bare.median_ms
            else:
                value = statistics.median(result.rows_read) if result.rows_read else 0
            xs.append(size.n)
            ys.append(value)
        fit = fit_loglog(xs, ys, strategy.label)
        if fit is not None:
            out.append(fit)
    return out


def print_table(sizes: list[SizeResult]) -> None:
    rows = []
    for size in sizes:
        for r in size.results:
            rows.append([
                f"{size.n:,}", r.label, f"{r.updates:,}", f"{r.median_ms:.3f}", f"{r.p99_ms:.3f}",
                f"{statistics.median(r.rows_read):,.0f}" if r.rows_read else "",
                "" if r.view is None else f"{r.view.build_seconds:.1f}", cell(sum(r.latencies), 1),
            ])
    report.print_table(HEADERS, rows)


def print_reads(sizes: list[SizeResult]) -> None:
    """A listing's enumeration delay: its first rows read back at each size, and the slopes."""
    rows, fitted = [], []
    for strategy in STRATEGIES:
        points = [(size.n, r.read) for size in sizes for r in size.results if r.strategy == strategy and r.read]
        for n, read in points:
            rows.append([f"{n:,}", strategy.label, f"{read.rows:,}", f"{read.us_per_row:.2f}",
                         f"{read.state_rows_per_row:.2f}"])
        for metric in ("us_per_row", "state_rows_per_row"):
            fit = fit_loglog([n for n, _ in points], [getattr(read, metric) for _, read in points], strategy.label)
            if fit is not None:
                fitted.append(f"  {strategy.label}: {metric.replace('_', ' ')} slope {fit.slope:.2f}")
    if rows:
        print(f"\nenumeration: the view's first {READ_ROWS:,} rows read back, {READ_INSERTS} of the stream's rows in "
              "(constant delay: flat in N):")
        report.print_table(["N (tuples)", "strategy", "rows", "µs a row", "state rows read a row"], rows)
        print("\n".join(fitted))


def print_fits(time_fits: list[Fit], maintenance_fits: list[Fit], read_fits: list[Fit]) -> None:
    reads = {f.label: f for f in read_fits}
    maintenance = {f.label: f for f in maintenance_fits}
    for fit in time_fits:
        strategy = next(s for s in STRATEGIES if s.label == fit.label)
        note = ""
        if strategy.name in PREDICTED:
            predicted, target = PREDICTED[strategy.name]
            note = f" (paper: {predicted:g}; {target})"
        read = reads.get(fit.label)
        rows = f"; state rows read: slope {read.slope:.2f}" if read else ""
        extra = maintenance.get(fit.label)
        added = f"; maintenance time (median − no view): slope {extra.slope:.2f}" if extra else ""
        print(f"  {fit.label}: median time slope {fit.slope:.2f}{note}{added}{rows}")


def main(conn: psycopg.Connection, config: Config, out: Path) -> list[SizeResult]:
    """Run, print the table and the fitted slopes, write ``scaling.png``."""
    what = "the triangle count" if config.query == TRIANGLE_SQL else config.query
    print(f"\n== scaling of {what}: adversarial skew, sizes {', '.join(f'{n:,}' for n in config.sizes)}; "
          f"up to {config.updates:,} single-row updates of R(pool a, hub b) per strategy and size "
          f"(half inserts, then the same rows deleted; inserting stops after {config.budget_seconds / 2:g} s)")
    sys.stdout.flush()
    sizes = run(conn, config)
    print("\nper-update latency against N (raw medians; rows read: median over "
          f"{2 * PROBES} untimed probe updates):")
    print_table(sizes)
    print("\ndatabases:")
    for size in sizes:
        print(f"  {size.description}")
    time_fits = fits(sizes)
    print("\nlog-log least-squares slope of the median per-update time against N:")
    print_fits(time_fits, fits(sizes, "maintenance"), fits(sizes, "rows"))
    print_reads(sizes)
    path = plots.scaling(sizes, [f for f in time_fits if f.label != NO_VIEW.label], out / config.plot)
    if path:
        print(f"plot: {path}")
    return sizes
