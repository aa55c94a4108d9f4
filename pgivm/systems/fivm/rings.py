"""Payload rings of F-IVM (§2 and §7 of the paper), as columns of the view tables.

A payload is a few *entries*, one column each; every view stores only the entries that can differ
from a trivial value below it (the paper's "only store blocks with non-zero values", §7.2).

- ``SumRing``: the ring of count and sums, a product of copies of Z (for counts) and of numeric or
  float8 (for sums: exact for integer and numeric columns, float8 as soon as a float is involved).
  Each entry is Σ over the joined rows of Π_v [v is not NULL] · v^e over some bound variables: count
  is the empty product, ``sum(x*y)`` is x·y, and sum's NULL rule (NULL when no row has the
  expression non-NULL) is the entry [x not NULL]·[y not NULL]. Ring operations are component-wise.
  An entry that depends on no variable summed at or below a view equals that view's count there.
- ``CofactorRing``: the degree-m matrix ring of Definition 7.2, (c, s ∈ R^m, Q ∈ R^{m×m}),
      a + b = (c_a + c_b, s_a + s_b, Q_a + Q_b)
      a * b = (c_a c_b, c_b s_a + c_a s_b, c_b Q_a + c_a Q_b + s_a s_bᵀ + s_b s_aᵀ)
  with the lifting g_j(x) = (1, x e_j, x² e_j e_jᵀ) applied once per variable, where it is summed
  away. Only the upper triangle of the symmetric Q is kept. s_j is zero in a view unless x_j is
  summed at or below it, and Q_jk unless both are: those entries are not stored. A row with a
  NULL feature contributes the ring's zero (it is left out).

Deletes are the additive inverse: a row deleted has multiplicity -1. A key whose count reaches 0
has no rows below it, so every entry is 0 (exactly, up to float rounding for float8 entries) and the
key is removed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Protocol

from psycopg import sql

from pgivm.errors import UnsupportedQuery
from pgivm.query.cq import Aggregate, BinOp, ConjunctiveQuery, Const, Expr, Var
from pgivm.systems.fivm.tree import View

INTEGER_TYPES = {"smallint", "integer", "bigint"}
FLOAT_TYPES = {"real", "double precision"}

Monomial = tuple[tuple[str, int], ...]  # (variable, exponent) sorted by variable
Polynomial = dict[Monomial, Fraction]


@dataclass(frozen=True)
class Entry:
    name: str  # the column in the view tables
    type: str  # bigint, numeric or double precision
    support: frozenset[str]  # the bound variables it depends on
    describe: str


@dataclass(frozen=True)
class Factor:
    """One operand of a product at a view: a child view read through ``alias`` (a table alias or
    a subquery), or, when ``view`` is None, the lifting g_X of the variable ``variable`` (its value
    is ``value``)."""

    alias: str
    view: View | None
    variable: str | None = None
    value: sql.Composable | None = None


def column(alias: str, name: str) -> sql.Composable:
    return sql.SQL("{}.{}").format(sql.Identifier(alias), sql.Identifier(name))


class Ring(Protocol):
    name: str
    entries: list[Entry]

    def stored(self, view: View) -> list[Entry]:
        """The entries a view's table keeps (count first)."""

    def leaf_terms(self, view: View, value: Callable[[str], sql.Composable], mult: sql.Composable) -> list[tuple[Entry, sql.Composable]]:
        """The summands of each stored entry for one base row (multiplicity ``mult``) of a leaf."""

    def product_terms(self, view: View, factors: list[Factor]) -> list[tuple[Entry, sql.Composable]]:
        """The summands of each stored entry of ``view`` for one combination of its factors."""

    def leaf_filters(self, view: View, value: Callable[[str], sql.Composable]) -> list[sql.Composable]:
        """Conditions a base row must meet to contribute (the cofactor ring drops NULL features)."""


def _product(parts: list[sql.Composable]) -> sql.Composable:
    if not parts:
        return sql.SQL("1")
    return sql.SQL(" * ").join(parts)


# --- the ring of counts and sums ------------------------------------------------------------------


def _polynomial(expr: Expr) -> Polynomial:
    """expr expanded into Σ coefficient · monomial."""
    if isinstance(expr, Const):
        value = expr.value
        return {(): Fraction(value) if not isinstance(value, Decimal) else Fraction(value)}
    if isinstance(expr, Var):
        return {((expr.variable, 1),): Fraction(1)}
    assert isinstance(expr, BinOp)
    left, right = _polynomial(expr.left), _polynomial(expr.right)
    out: Polynomial = {}
    if expr.op in ("+", "-"):
        sign = 1 if expr.op == "+" else -1
        for m, c in left.items():
            out[m] = out.get(m, Fraction(0)) + c
        for m, c in right.items():
            out[m] = out.get(m, Fraction(0)) + sign * c
    else:
        for ml, cl in left.items():
            for mr, cr in right.items():
                powers: dict[str, int] = {}
                for v, e in ml + mr:
                    powers[v] = powers.get(v, 0) + e
                m = tuple(sorted(powers.items()))
                out[m] = out.get(m, Fraction(0)) + cl * cr
    return {m: c for m, c in out.items() if c != 0}


@dataclass(frozen=True)
class SumKey:
    nonnull: frozenset[str]  # bound variables that must not be NULL
    monomial: Monomial  # bound variables and exponents

    @property
    def support(self) -> frozenset[str]:
        return self.nonnull | {v for v, _ in self.monomial}


@dataclass(frozen=True)
class OutputTerm:
    """coefficient · entry · Π free factors."""

    coefficient: Fraction
    entry: Entry
    free_monomial: Monomial


@dataclass(frozen=True)
class AggregatePlan:
    """How one aggregate of the query is read from the root: Σ terms, NULL unless ``nonnull`` > 0
    and every free variable in ``free_nonnull`` is not NULL; avg divides by ``nonnull``."""

    aggregate: Aggregate
    terms: tuple[OutputTerm, ...]
    nonnull: Entry
    free_nonnull: frozenset[str]
    float_result: bool


class SumRing:
    """Counts and sums of products (a product of copies of Z, numeric and float8)."""

    name = "sum"

    def __init__(self, cq: ConjunctiveQuery, column_type: Callable[[str], str]) -> None:
        self.free = set(cq.free)
        self.count = Entry("count", "bigint", frozenset(), "count(*)")
        self.entries = [self.count]
        self._by_key: dict[SumKey, Entry] = {SumKey(frozenset(), ()): self.count}
        self.plans: list[AggregatePlan] = []
        for aggregate in cq.aggregates:
            self.plans.append(self._plan(aggregate, column_type))

    def _entry(self, key: SumKey, kind: str, describe: str) -> Entry:
        if key not in self._by_key:
            entry = Entry(f"p{len(self.entries)}", kind, key.support, describe)
            self._by_key[key] = entry
            self.entries.append(entry)
        return self._by_key[key]

    def _plan(self, aggregate: Aggregate, column_type: Callable[[str], str]) -> AggregatePlan:
        if aggregate.function == "count":
            variables = aggregate.variables
            bound = frozenset(variables - self.free)
            nonnull = self._entry(SumKey(bound, ()), "bigint", f"rows with {', '.join(sorted(variables))} not NULL")
            return AggregatePlan(aggregate, (OutputTerm(Fraction(1), nonnull, ()),), nonnull,
                                 frozenset(variables & self.free), False)
        assert aggregate.argument is not None
        variables = aggregate.argument.variables
        kinds = {}
        for v in sorted(variables):
            kind = column_type(v)
            if kind not in INTEGER_TYPES | FLOAT_TYPES and not kind.startswith("numeric"):
                raise UnsupportedQuery(f"{aggregate.sql}: column {v} has type {kind}, not a number")
            kinds[v] = kind
        bound = frozenset(variables - self.free)
        nonnull = self._entry(SumKey(bound, ()), "bigint",
                              f"rows with {', '.join(sorted(variables)) or 'a constant'} not NULL")
        terms = []
        float_result = any(k in FLOAT_TYPES for k in kinds.values())
        for monomial, coefficient in sorted(_polynomial(aggregate.argument).items()):
            bound_part = tuple((v, e) for v, e in monomial if v not in self.free)
            free_part = tuple((v, e) for v, e in monomial if v in self.free)
            if bound_part:
                kind = "double precision" if any(kinds[v] in FLOAT_TYPES for v, _ in bound_part) else "numeric"
                shown = "·".join(v if e == 1 else f"{v}^{e}" for v, e in bound_part)
                entry = self._entry(SumKey(bound, bound_part), kind, f"sum of {shown}")
            else:
                entry = nonnull
            terms.append(OutputTerm(coefficient, entry, free_part))
        return AggregatePlan(aggregate, tuple(terms), nonnull, frozenset(variables & self.free), float_result)

    def key_of(self, entry: Entry) -> SumKey:
        return next(k for k, e in self._by_key.items() if e is entry)

    def stored(self, view: View) -> list[Entry]:
        return [e for e in self.entries if e is self.count or e.support & view.marginalized]

    def _factor(self, entry: Entry, factor: Factor) -> sql.Composable | None:
        """The factor's part of an entry's product (None for 1)."""
        if factor.view is None:  # the lifting of a join variable (never NULL in the join)
            exponent = dict(self.key_of(entry).monomial).get(factor.variable or "", 0)
            if exponent == 0:
                return None
            assert factor.value is not None  # each factor in the entry's type: an integer product could overflow
            return sql.SQL(" * ").join([_cast(factor.value, entry.type)] * exponent)
        stored = entry in self.stored(factor.view)
        return column(factor.alias, entry.name if stored else "count")

    def product_terms(self, view: View, factors: list[Factor]) -> list[tuple[Entry, sql.Composable]]:
        out = []
        for entry in self.stored(view):
            parts = [p for p in (self._factor(entry, f) for f in factors) if p is not None]
            out.append((entry, _cast(_product(parts), entry.type)))
        return out

    def leaf_terms(self, view: View, value: Callable[[str], sql.Composable], mult: sql.Composable) -> list[tuple[Entry, sql.Composable]]:
        out = []
        for entry in self.stored(view):
            key = self.key_of(entry)
            powers = dict(key.monomial)
            parts = [mult]
            for v in sorted(key.nonnull & set(view.lifted)):
                e = powers.get(v, 0)
                if e == 0:
                    parts.append(sql.SQL("({} IS NOT NULL)::int").format(value(v)))
                else:
                    parts.append(sql.SQL("coalesce({}, 0)").format(sql.SQL(" * ").join([_cast(value(v), entry.type)] * e)))
            out.append((entry, _cast(_product(parts), entry.type)))
        return out

    def leaf_filters(self, view: View, value: Callable[[str], sql.Composable]) -> list[sql.Composable]:
        return []


def _cast(expr: sql.Composable, kind: str) -> sql.Composable:
    return sql.SQL("({})::{}").format(expr, sql.SQL(kind))  # type: ignore[arg-type]


# --- the degree-m matrix ring ----------------------------------------------------------------------


class CofactorRing:
    """(c, s, Q) of Definition 7.2 over the features of ``cofactor(x1, ..., xm)``."""

    name = "cofactor"

    def __init__(self, cq: ConjunctiveQuery, column_type: Callable[[str], str]) -> None:
        (aggregate,) = [a for a in cq.aggregates if a.function == "cofactor"]
        self.aggregate = aggregate
        self.features = [f.variable for f in aggregate.features]
        for f in aggregate.features:
            kind = column_type(f.variable)
            if kind not in INTEGER_TYPES | FLOAT_TYPES and not kind.startswith("numeric"):
                raise UnsupportedQuery(f"{aggregate.sql}: column {f.column} has type {kind}, not a number")
            if f.variable in cq.free:
                raise UnsupportedQuery(f"{aggregate.sql}: {f.column} is a GROUP BY column; a feature must be summed")
        m = len(self.features)
        self.count = Entry("count", "bigint", frozenset(), "c: count")
        self.s = [Entry(f"s{j + 1}", "double precision", frozenset({self.features[j]}), f"s{j + 1}: sum of {self.features[j]}")
                  for j in range(m)]
        self.q = {(j, k): Entry(f"q{j + 1}_{k + 1}", "double precision",
                                frozenset({self.features[j], self.features[k]}),
                                f"Q{j + 1},{k + 1}: sum of {self.features[j]}·{self.features[k]}")
                  for j in range(m) for k in range(j, m)}
        self.entries = [self.count, *self.s, *self.q.values()]

    def stored(self, view: View) -> list[Entry]:
        return [e for e in self.entries if e.support <= view.marginalized]

    def _holder(self, variable: str, factors: list[Factor]) -> int:
        for i, f in enumerate(factors):
            if (f.view is None and f.variable == variable) or (f.view is not None and variable in f.view.marginalized):
                return i
        raise AssertionError(f"no factor holds {variable}")

    @staticmethod
    def _c(f: Factor) -> sql.Composable | None:
        return None if f.view is None else column(f.alias, "count")

    def _s(self, f: Factor, j: int) -> sql.Composable:
        if f.view is None:
            assert f.value is not None
            return f.value
        return column(f.alias, self.s[j].name)

    def _q(self, f: Factor, j: int, k: int) -> sql.Composable:
        if f.view is None:
            assert f.value is not None
            return sql.SQL("{} * {}").format(f.value, f.value)
        return column(f.alias, self.q[(min(j, k), max(j, k))].name)

    def _counts(self, factors: list[Factor], skip: set[int]) -> list[sql.Composable]:
        return [c for i, f in enumerate(factors) if i not in skip for c in [self._c(f)] if c is not None]

    def product_terms(self, view: View, factors: list[Factor]) -> list[tuple[Entry, sql.Composable]]:
        stored = self.stored(view)
        out: list[tuple[Entry, sql.Composable]] = [(self.count, _cast(_product(self._counts(factors, set())), "bigint"))]
        for j, entry in enumerate(self.s):
            if entry in stored:
                a = self._holder(self.features[j], factors)
                out.append((entry, _cast(_product([_cast(self._s(factors[a], j), "double precision"),
                                                   *self._counts(factors, {a})]), "double precision")))
        for (j, k), entry in self.q.items():
            if entry in stored:
                a, b = self._holder(self.features[j], factors), self._holder(self.features[k], factors)
                if a == b:
                    parts = [_cast(self._q(factors[a], j, k), "double precision"), *self._counts(factors, {a})]
                else:
                    parts = [_cast(self._s(factors[a], j), "double precision"),
                             _cast(self._s(factors[b], k), "double precision"), *self._counts(factors, {a, b})]
                out.append((entry, _cast(_product(parts), "double precision")))
        return out

    def leaf_terms(self, view: View, value: Callable[[str], sql.Composable], mult: sql.Composable) -> list[tuple[Entry, sql.Composable]]:
        stored = self.stored(view)
        out: list[tuple[Entry, sql.Composable]] = [(self.count, mult)]
        for j, entry in enumerate(self.s):
            if entry in stored:
                out.append((entry, _cast(sql.SQL("{} * {}").format(mult, value(self.features[j])), "double precision")))
        for (j, k), entry in self.q.items():
            if entry in stored:
                out.append((entry, _cast(sql.SQL("{} * {} * {}").format(
                    mult, value(self.features[j]), value(self.features[k])), "double precision")))
        return out

    def leaf_filters(self, view: View, value: Callable[[str], sql.Composable]) -> list[sql.Composable]:
        return [sql.SQL("{} IS NOT NULL").format(value(v)) for v in sorted(set(self.features) & set(view.lifted))]


def ring_for(cq: ConjunctiveQuery, column_type: Callable[[str], str]) -> SumRing | CofactorRing:
    if any(a.function == "cofactor" for a in cq.aggregates):
        if len(cq.aggregates) > 1:
            raise UnsupportedQuery("cofactor(...) must be the only aggregate of its view: its count is entry (0, 0) "
                                   "and its sums entries (0, j)")
        return CofactorRing(cq, column_type)
    return SumRing(cq, column_type)
