"""Maintenance plans of asymmetric batch IVM (He, Xie, Yang, Yu, ICDE 2005), computed offline.

A deferred view plans online, inside PostgreSQL (``sql/deferred/10_planner.sql``: NAIVE and ONLINE). This
module holds the same two rules over a given arrival sequence, and the ones that need to know the
future: OPT^LGM by A* over the LGM plan graph (§3.4, §4.1) and ADAPT (§4.2). ``pgivm bench
deferred --deferred-parts simulate`` runs them side by side (the paper's Figures 6 and 7);
``tests/deferred/test_planners.py`` holds them to brute-force oracles written apart from this file.

The paper's notation (§2): n base tables; arrivals d_0..d_T, d_t[i] modifications of table i at
step t; a plan p_0..p_T; the pre-action state s_t = s_{t−1+} + d_t and the post-action state
s_{t+} = s_t − p_t; f(v) = Σ_i f_i(v[i]). A plan is valid if 0 ≤ p_t ≤ s_t, f(s_{t+}) ≤ C for
every t < T, and p_T = s_T (Definition 1); its cost is f(P) = Σ_t f(p_t).

An LGM plan (Definition 3) acts only when s_t is full (f(s_t) > C), empties each table it touches,
and empties no table it could leave. For linear costs the best LGM plan is optimal (Theorem 2), in
general within 2× (Theorem 1).
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from pgivm.deferred import RATE_WINDOW  # the database planner's window, so both rules stay one

Vector = tuple[int, ...]
CostFunction = Callable[[float], float]
"""f_i(k): the cost of processing k modifications of table i at once; f_i(0) = 0, monotone and
subadditive (§1.3). Called with a real k by TIMETOFULL, which interpolates counts."""

TIME_TO_FULL_CAP = 1e9  # TIMETOFULL when nothing arrives: "never", kept finite


class InvalidPlan(ValueError):
    """A plan breaks Definition 1 (the message names the step and the rule)."""


@dataclass(frozen=True)
class Linear:
    """f(k) = a·k + b for k > 0, f(0) = 0 (§3.3): b the setup, a the cost per modification.
    With f(0) = 0, not b, the line is subadditive (the notes' remark on §3.3)."""

    a: float
    b: float

    def __call__(self, k: float) -> float:
        return self.a * k + self.b if k > 0 else 0.0


@dataclass(frozen=True)
class Lines:
    """f(k) = min_j (a_j·k + b_j) for k > 0, f(0) = 0: what ``pgivm calibrate`` stores (the least
    concave majorant of the measured points) and what the SQL planner's ``deferred_cost`` computes."""

    lines: tuple[tuple[float, float], ...]

    def __call__(self, k: float) -> float:
        return min(a * k + b for a, b in self.lines) if k > 0 else 0.0


@dataclass(frozen=True)
class Problem:
    """What a plan is made for: the cost functions, the arrivals d_0..d_T (refresh at T) and C."""

    costs: tuple[CostFunction, ...]
    arrivals: tuple[Vector, ...]
    budget: float

    def __post_init__(self) -> None:
        if not self.arrivals:
            raise ValueError("a problem needs at least one step (the refresh at T)")
        if any(len(d) != len(self.costs) or min(d) < 0 for d in self.arrivals):
            raise ValueError("every arrival vector has one non-negative count per cost function")
        if not self.budget >= 0:
            raise ValueError(f"the budget C is a cost, at least 0: {self.budget!r}")

    @property
    def n(self) -> int:
        return len(self.costs)

    @property
    def horizon(self) -> int:
        """T, the step of the refresh."""
        return len(self.arrivals) - 1

    @property
    def zero(self) -> Vector:
        return (0,) * self.n

    def f(self, v: Sequence[float]) -> float:
        return sum(fi(x) for fi, x in zip(self.costs, v))

    def full(self, s: Sequence[float]) -> bool:
        return self.f(s) > self.budget


@dataclass
class Outcome:
    """A plan p_0..p_T with its cost f(P); A* also says how many nodes it expanded, in how long."""

    planner: str
    plan: list[Vector]
    cost: float
    expanded: int = 0
    seconds: float = 0.0

    @property
    def actions(self) -> int:
        """Non-zero actions before the refresh at T."""
        return sum(1 for p in self.plan[:-1] if any(p))


def _add(u: Vector, v: Vector) -> Vector:
    return tuple(x + y for x, y in zip(u, v))


def _sub(u: Vector, v: Vector) -> Vector:
    return tuple(x - y for x, y in zip(u, v))


def evaluate(problem: Problem, plan: Sequence[Vector]) -> float:
    """f(P) of a valid plan; InvalidPlan if it breaks Definition 1."""
    if len(plan) != len(problem.arrivals):
        raise InvalidPlan(f"a plan has one action per step: {len(problem.arrivals)} expected, {len(plan)} given")
    s, total = problem.zero, 0.0
    for t, (d, p) in enumerate(zip(problem.arrivals, plan)):
        s = _add(s, d)
        if any(x < 0 or x > y for x, y in zip(p, s)):
            raise InvalidPlan(f"step {t}: the action {p} takes more than the pending {s}")
        s = _sub(s, p)
        if t < problem.horizon and problem.full(s):
            raise InvalidPlan(f"step {t}: f(s) = {problem.f(s):g} > C = {problem.budget:g} after the action")
        total += problem.f(p)
    if any(s):
        raise InvalidPlan(f"step {problem.horizon}: the refresh leaves {s} pending")
    return total


def greedy_minimal(problem: Problem, s: Vector) -> list[Vector]:
    """The greedy, minimal, valid actions on pre-action state s (Definition 3): each empties a
    non-empty set of non-empty tables, leaves f(s − q) ≤ C, and would not if any emptied table
    were left. Ordered by the set as a bit mask (table i is bit i), as the SQL planner is."""
    costs = [fi(x) for fi, x in zip(problem.costs, s)]
    out = []
    for mask in range(1, 1 << problem.n):
        chosen = [i for i in range(problem.n) if mask >> i & 1]
        if any(s[i] == 0 for i in chosen):
            continue  # the same action as the mask without i
        rest = sum(c for i, c in enumerate(costs) if not mask >> i & 1)
        if rest > problem.budget:
            continue
        if any(rest + costs[i] <= problem.budget for i in chosen):
            continue  # not minimal: table i could stay
        out.append(tuple(s[i] if mask >> i & 1 else 0 for i in range(problem.n)))
    return out


# --- NAIVE and ONLINE: no knowledge of the future --------------------------------------------------


def naive(problem: Problem) -> Outcome:
    """Symmetric batch maintenance (§3.0): everything, whenever the state is full, and at T."""
    s, plan = problem.zero, []
    for t, d in enumerate(problem.arrivals):
        s = _add(s, d)
        p = s if t == problem.horizon or problem.full(s) else problem.zero
        plan.append(p)
        s = _sub(s, p)
    return Outcome("naive", plan, evaluate(problem, plan))


@dataclass
class Rates:
    """Arrival rates v_t as the deferred layer keeps them: a count of arrivals halved every
    ``window`` steps W, divided by the steps it spans: after h halvings, at a steady rate r, it holds
    r·(W·(1 − 2^−h) + step mod W)."""

    n: int
    window: int = RATE_WINDOW
    step: int = 0
    arrived: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.arrived = self.arrived or [0] * self.n

    def add(self, d: Vector) -> None:
        self.arrived = [a + x for a, x in zip(self.arrived, d)]
        self.step += 1
        if self.step % self.window == 0:
            self.arrived = [a // 2 for a in self.arrived]

    def per_step(self) -> list[float]:
        halvings = min(self.step // self.window, 60)
        span = max(self.window * (1 - 2.0 ** -halvings) + self.step % self.window, 1)
        return [a / span for a in self.arrived]


def time_to_full(problem: Problem, s: Sequence[float], rates: Sequence[float]) -> float:
    """TIMETOFULL(s) of ONLINE (§4.3, left open by the paper; the notes' choice): the least k ≥ 1
    with f(s + k·v) > C, counts interpolated; doubling, then bisection, capped."""

    def passes(k: float) -> bool:
        return problem.f([x + k * v for x, v in zip(s, rates)]) > problem.budget

    lo, hi = 0.0, 1.0
    while not passes(hi):
        if hi >= TIME_TO_FULL_CAP:
            return TIME_TO_FULL_CAP
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = math.floor((lo + hi) / 2)
        lo, hi = (lo, mid) if passes(mid) else (mid, hi)
    return hi


def online(problem: Problem, window: int = RATE_WINDOW) -> Outcome:
    """ONLINE (§4.3): when the state is full, the greedy minimal action with the least amortized
    cost H(q) = (F_t + f(q)) / (t + TIMETOFULL(s_t − q)); ties to the lower f(q), then the lower
    mask. F_t is the work spent since the last refresh and t counts the steps since it, this one
    included, as in the SQL planner (the refresh is at time 0, before the first arrivals)."""
    s, plan, spent, rates = problem.zero, [], 0.0, Rates(problem.n, window)
    for t, d in enumerate(problem.arrivals):
        s = _add(s, d)
        rates.add(d)  # rates.step = t + 1
        p = problem.zero
        if t == problem.horizon:
            p = s
        elif problem.full(s):
            v = rates.per_step()
            best: tuple[float, float] | None = None
            for q in greedy_minimal(problem, s):
                fq = problem.f(q)
                key = ((spent + fq) / (rates.step + time_to_full(problem, _sub(s, q), v)), fq)
                if best is None or key < best:
                    best, p = key, q
            spent += problem.f(p)
        plan.append(p)
        s = _sub(s, p)
    return Outcome("online", plan, evaluate(problem, plan))


# --- OPT^LGM: A* over the LGM plan graph (§4.1) -------------------------------------------------------

Node = tuple[int, Vector]  # (t, post-action state); the source is (−1, 0), the destination (T, 0)


def _largest_batch(f: CostFunction, budget: float, cap: int = 1 << 40) -> int:
    """max{b | f(b) ≤ C} of a monotone f, by doubling and bisection; ``cap`` if f never passes C."""
    if f(1) > budget:
        return 0
    lo, hi = 1, 2
    while f(hi) <= budget:
        if hi >= cap:
            return cap
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if f(mid) <= budget else (lo, mid)
    return lo


class Heuristic:
    """Lower bounds h(t, s) on the cost still to come (§3.4). b_i = m_i + max{b | f_i(b) ≤ C} is
    the largest batch of table i any valid plan can process (m_i: the most arrivals of i in a step).

    - ``paper``: h = Σ_i ⌊(s[i] + K_i) / b_i⌋ · f_i(b_i) as printed (Lemma 7). The notes show it is
      not consistent (an action smaller than b_i can lower it by a whole f_i(b_i)), so A* with the
      paper's closed set can return a plan costlier than OPT^LGM; kept to show that.
    - ``per-unit``: h = Σ_i (s[i] + K_i) · min_{1≤k≤b_i} f_i(k)/k, the notes' fix: every batch
      of i is at most b_i, so each pending or future modification costs at least that much, and
      an action lowers h by at most what it costs: consistent.
    - ``none``: h = 0 (Dijkstra).
    """

    def __init__(self, problem: Problem, kind: str) -> None:
        if kind not in ("paper", "per-unit", "none"):
            raise ValueError(f"unknown heuristic {kind!r}: paper, per-unit or none")
        self.kind = kind
        n = problem.n
        most = [max(d[i] for d in problem.arrivals) for i in range(n)]
        self.batch = [most[i] + _largest_batch(problem.costs[i], problem.budget) for i in range(n)]
        self.costs = problem.costs
        # K_i after step t: the arrivals in (t, T], for t = −1 .. T
        self.later: list[Vector] = [problem.zero] * (len(problem.arrivals) + 1)
        for t in range(len(problem.arrivals) - 1, -1, -1):
            self.later[t] = _add(self.later[t + 1], problem.arrivals[t])
        self.unit = [self._cheapest_per_unit(f, b) for f, b in zip(problem.costs, self.batch)]

    @staticmethod
    def _cheapest_per_unit(f: CostFunction, batch: int) -> float:
        if batch <= 0:
            return 0.0
        if isinstance(f, Linear):  # a + b/k falls with k
            return f(batch) / batch
        if isinstance(f, Lines):  # concave with f(0) = 0: f(k)/k falls with k
            return f(batch) / batch
        if batch <= 100_000:
            return min(f(k) / k for k in range(1, batch + 1))
        # too many k to try: for k in [2^j, 2^(j+1)), f(k)/k ≥ f(2^j)/2^(j+1) by monotonicity; a
        # bound half as tight, still a lower bound, so h stays consistent
        return min(f(1 << j) / (1 << (j + 1)) for j in range(batch.bit_length()))

    def __call__(self, node: Node) -> float:
        t, s = node
        remaining = _add(s, self.later[t + 1])
        if self.kind == "none":
            return 0.0
        if self.kind == "per-unit":
            return sum(r * u for r, u in zip(remaining, self.unit))
        return sum((r // b) * f(b) for r, b, f in zip(remaining, self.batch, self.costs) if b > 0)


def _edges(problem: Problem, node: Node) -> Iterator[tuple[Node, Vector]]:
    """The LGM actions out of a post-action state (§4.1): arrivals accumulate until the state is
    full at t2, then each greedy minimal valid action at t2 is an edge; reaching T first, the one
    edge is the refresh, which processes everything."""
    t, s = node
    while True:
        t += 1
        s = _add(s, problem.arrivals[t])
        if t == problem.horizon:
            yield (t, problem.zero), s
            return
        if problem.full(s):
            break
    for q in greedy_minimal(problem, s):
        yield (t, _sub(s, q)), q


def optimal_lgm(problem: Problem, heuristic: str = "per-unit", reopen: bool = True) -> Outcome:
    """OPT^LGM by A* (§3.4) from (−1, 0) to (T, 0); edges weigh f(q). With ``reopen`` a node whose
    cost improves after its expansion is expanded again (the notes' fix (a)); without it, the
    paper's rule: successors already expanded are skipped."""
    h = Heuristic(problem, heuristic)
    source: Node = (-1, problem.zero)
    destination: Node = (problem.horizon, problem.zero)
    best: dict[Node, float] = {source: 0.0}
    parent: dict[Node, tuple[Node, Vector]] = {}
    expanded: set[Node] = set()
    started = time.perf_counter()
    order = itertools.count()  # ties in d pop in insertion order: deterministic
    queue = [(h(source), next(order), 0.0, source)]
    count = 0
    while queue:
        _, _, g, node = heapq.heappop(queue)
        if g > best[node] or (not reopen and node in expanded):
            continue  # a stale entry
        if node == destination:
            return Outcome(f"opt-lgm ({heuristic})", _plan(problem, parent, destination), g, count,
                           time.perf_counter() - started)
        expanded.add(node)
        count += 1
        for successor, q in _edges(problem, node):
            if not reopen and successor in expanded:
                continue
            cost = g + problem.f(q)
            if cost < best.get(successor, math.inf):
                best[successor] = cost
                parent[successor] = (node, q)
                heapq.heappush(queue, (cost + h(successor), next(order), cost, successor))
    raise AssertionError("the refresh at T is always reachable")


def _plan(problem: Problem, parent: dict[Node, tuple[Node, Vector]], destination: Node) -> list[Vector]:
    """The plan of a source-to-destination path (Theorem 3): each edge's action at its node's t."""
    plan = [problem.zero] * len(problem.arrivals)
    node = destination
    while node in parent:
        previous, q = parent[node]
        plan[node[0]] = q
        node = previous
    return plan


# --- ADAPT: a plan made for a predicted refresh time T0 (§4.2) ----------------------------------------


def adapt(problem: Problem, reference: Outcome) -> Outcome:
    """Follow a plan made for steps 0..T0, repeated every T0 + 1 steps, until the refresh at the
    actual T. What is replayed is which tables to empty at each step of the period (the counts may
    differ when the arrivals do), and the plan's refresh at T0 empties everything each time round;
    where the replayed action would leave f(s) > C, the cheapest greedy minimal action is taken
    instead, so the plan stays valid (the notes' safe reading)."""
    period = len(reference.plan)
    s, plan = problem.zero, []
    for t, d in enumerate(problem.arrivals):
        s = _add(s, d)
        if t == problem.horizon or t % period == period - 1:
            p = s
        else:
            replay = reference.plan[t % period]
            p = tuple(x if r > 0 else 0 for x, r in zip(s, replay))
            if problem.full(_sub(s, p)):
                p = min(greedy_minimal(problem, s), key=problem.f)
        plan.append(p)
        s = _sub(s, p)
    return Outcome("adapt", plan, evaluate(problem, plan))
