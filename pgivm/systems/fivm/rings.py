"""Payload rings of F-IVM (§2 and §7 of the paper), as columns of the view tables.

A payload is a few *entries*, one column each; every view stores only the entries that can differ
from a trivial value below it (the paper's "only store blocks with non-zero values", §7.2).

- ``SumRing``: the ring of count and sums, a product of copies of Z (for counts) and of exact
  numeric (for sums). Each sum is Σ over the joined rows of Π_v [v is not NULL] · v^e over some
  bound variables: count is the empty product, ``sum(x*y)`` is x·y, and sum's NULL rule (NULL when
  no row has the expression non-NULL) is the sum [x not NULL]·[y not NULL]. Ring operations are
  component-wise. A sum that depends on no variable summed at or below a view equals that view's
  count there.
- A sum over a column that can hold NaN or ±Inf (float8, real, numeric) is a *classified sum*
  (``floats.py``): besides its exact value it keeps sums of the characters of its terms (finite,
  non-zero, sign, ...), each multiplicative, so products stay component-wise; once every variable
  of the sum is summed, one numeric counts its NaN, +Inf and −Inf terms instead. The value is read
  as PostgreSQL's row-by-row sum would be: NaN, ±Inf, or the exact sum cast to the type.
- ``CofactorRing``: the degree-m matrix ring of Definition 7.2, (c, s ∈ R^m, Q ∈ R^{m×m}),
      a + b = (c_a + c_b, s_a + s_b, Q_a + Q_b)
      a * b = (c_a c_b, c_b s_a + c_a s_b, c_b Q_a + c_a Q_b + s_a s_bᵀ + s_b s_aᵀ)
  with the lifting g_j(x) = (1, x e_j, x² e_j e_jᵀ) applied once per variable, where it is summed
  away. Only the upper triangle of the symmetric Q is kept. s_j is zero in a view unless x_j is
  summed at or below it, and Q_jk unless both are: those entries are not stored. A row with a
  NULL feature contributes the ring's zero (it is left out). Entries are exact numeric sums,
  read as float8; with a float feature they are classified sums: s_j keeps its characters (it is
  a factor of Q_jk), Q_jk counts its NaN and infinite terms.

Deletes are the additive inverse: a row deleted has multiplicity -1. Every accumulator is exact, so
a row leaving restores what its arrival changed, and a key whose count reaches 0 has every entry 0
and is removed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Protocol

from psycopg import sql

from pgivm.errors import UnsupportedQuery
from pgivm.query.cq import Aggregate, BinOp, Computed, ConjunctiveQuery, Const, Expr, Var
from pgivm.systems.fivm import floats, scales
from pgivm.systems.fivm.floats import FLOAT_TYPES, SPECIALS, TOTAL, VALUE
from pgivm.systems.fivm.tree import View

INTEGER_TYPES = {"smallint", "integer", "bigint"}

Monomial = tuple[tuple[str, int], ...]  # (variable, exponent) sorted by variable
Polynomial = dict[Monomial, Fraction]


@dataclass(frozen=True)
class Entry:
    name: str  # the column in the view tables
    type: str  # bigint or numeric
    support: frozenset[str]  # the bound variables it depends on
    describe: str
    part: str = VALUE  # what of its sum the column keeps: the value, a character or the specials (floats.py)


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


def _cast(expr: sql.Composable, kind: str) -> sql.Composable:
    return sql.SQL("({})::{}").format(expr, sql.SQL(kind))  # type: ignore[arg-type]


def _check_number(aggregate: Aggregate, shown: object, kind: str) -> None:
    if kind not in INTEGER_TYPES | FLOAT_TYPES and not kind.startswith("numeric"):
        raise UnsupportedQuery(f"{aggregate.sql}: column {shown} has type {kind}, not a number")


# --- sums: the exact value, and for a float sum its characters ----------------------------------------


@dataclass(frozen=True)
class SumKey:
    nonnull: frozenset[str]  # bound variables that must not be NULL
    monomial: Monomial  # bound variables and exponents
    # "": the exact sum only; "specials": a float sum, NaN and ±Inf counted once its variables are
    # all summed; "signs": its characters kept up to the root (a float GROUP BY value multiplies it)
    classified: str = ""

    @property
    def support(self) -> frozenset[str]:
        return self.nonnull | {v for v, _ in self.monomial}


@dataclass
class Sum:
    """One sum of the ring: its value column, and a classified sum's character and specials columns."""

    key: SumKey
    value: Entry
    special: bool = False  # a variable in its monomial that can be NaN or ±Inf (floats.may_be_special)
    parts: dict[str, Entry] = field(default_factory=dict)

    @classmethod
    def make(cls, key: SumKey, name: str, kind: str, describe: str, special: bool, scaled: bool = False) -> Sum:
        """A sum with its columns: ``name`` for the value, ``name_<part>`` for the others (``scaled``:
        its display scale too, scales.py)."""
        made = cls(key, Entry(name, kind, key.support, describe), special)
        parts = []
        if key.classified:
            parts = [*floats.kept_parts(special), *([SPECIALS] if key.classified == "specials" else [])]
        parts += [scales.SCALES] if scaled else []
        made.parts = {p: Entry(f"{name}_{p}", "numeric" if p in (SPECIALS, scales.SCALES) else "bigint", key.support,
                               f"{describe}: {p.replace('_', ' ')}", p) for p in parts}
        return made

    def columns_at(self, view: View) -> list[Entry]:
        """What a view that stores this sum keeps of it (floats.py: characters while it is still
        multiplied by a factor holding its other variables, the specials count once it is not)."""
        scaled = [self.parts[scales.SCALES]] if scales.SCALES in self.parts else []
        if not self.key.classified:
            return [self.value, *scaled]
        if self.key.classified == "specials" and self.key.support <= view.marginalized:
            return [self.value, self.parts[SPECIALS], *scaled]
        return [self.value, *(self.parts[p] for p in floats.kept_parts(self.special)), *scaled]


@dataclass(frozen=True)
class OutputTerm:
    """coefficient · sum · Π free factors."""

    coefficient: Fraction
    sum: Sum
    free_monomial: Monomial
    places: int = 0  # the decimal places of the constants it came from, as written (1.50: 2)


@dataclass(frozen=True)
class AggregatePlan:
    """How one aggregate of the query is read from the root: Σ terms, NULL unless ``nonnull`` > 0
    and every free variable in ``free_nonnull`` is not NULL; avg divides by ``nonnull``."""

    aggregate: Aggregate
    terms: tuple[OutputTerm, ...]
    nonnull: Entry
    free_nonnull: frozenset[str]
    classified: bool  # a column in it can be NaN or ±Inf: read through floats.read


def _polynomial(expr: Expr) -> Polynomial:
    """expr expanded into Σ coefficient · monomial."""
    out: Polynomial = {}
    for coefficient, monomial, _ in _terms(expr):
        out[monomial] = out.get(monomial, Fraction(0)) + coefficient
    return {m: c for m, c in out.items() if c != 0}


def _places(expr: Expr) -> dict[Monomial, int]:
    """Per monomial of expr's expansion, the most decimal places its constants had as written (like
    terms keep the most, as numeric addition does). PostgreSQL's row-by-row value has them; a
    collected coefficient (1.50 read as 3/2) would not."""
    places: dict[Monomial, int] = {}
    for _, monomial, p in _terms(expr):
        places[monomial] = max(places.get(monomial, 0), p)
    return places


def _terms(expr: Expr) -> list[tuple[Fraction, Monomial, int]]:
    """expr expanded into its terms, like terms not yet collected, each with the decimal places of
    its constants as written (a product adds its factors', as numeric multiplication adds scales)."""
    if isinstance(expr, Const):
        exponent = Decimal(expr.text).as_tuple().exponent
        return [(Fraction(expr.value), (), -exponent if isinstance(exponent, int) and exponent < 0 else 0)]
    if isinstance(expr, (Var, Computed)):  # a computed value is one more value of the joined row
        return [(Fraction(1), ((expr.variable, 1),), 0)]
    assert isinstance(expr, BinOp)
    left, right = _terms(expr.left), _terms(expr.right)
    if expr.op in ("+", "-"):
        sign = 1 if expr.op == "+" else -1
        return left + [(sign * c, m, p) for c, m, p in right]
    out = []
    for cl, ml, pl in left:
        for cr, mr, pr in right:
            powers: dict[str, int] = {}
            for v, e in ml + mr:
                powers[v] = powers.get(v, 0) + e
            out.append((cl * cr, tuple(sorted(powers.items())), pl + pr))
    return out


def _float_expansion_problem(expr: Expr) -> str | None:
    """Why expanding ``expr`` into monomials would not give PostgreSQL's float result with ±Inf or
    NaN in a row, or None. Row-wise (x + 1)·y is NaN for x = -1, y = Inf, but x·y + y is -Inf + Inf;
    0·x drops a term that is NaN for x = Inf; x·y − x·y cancels what is NaN for x = Inf."""
    if isinstance(expr, BinOp):
        for side in (expr.left, expr.right):
            problem = _float_expansion_problem(side)
            if problem:
                return problem
        if expr.op == "*":
            constant = [s for s in (expr.left, expr.right) if not s.variables]
            if constant and sum(c for c, _, _ in _terms(constant[0])) == 0:
                return f"it multiplies {expr} by zero"
            if not constant and any(_has_sum(s) for s in (expr.left, expr.right)):
                return f"it multiplies a sum of columns in {expr}"
    signs: dict[Monomial, set[bool]] = {}
    for coefficient, monomial, _ in _terms(expr):
        if monomial:
            signs.setdefault(monomial, set()).add(coefficient > 0)
    if any(len(s) > 1 for s in signs.values()):
        return f"terms of {expr} cancel"
    return None


def _vanishing(expr: Expr, watched: set[str]) -> str | None:
    """A watched column that occurs in ``expr`` but not in its expansion (0·x, x − x), or None."""
    kept = {v for monomial in _polynomial(expr) for v, _ in monomial}
    lost = sorted(watched - kept)
    return lost[0] if lost else None


def _has_sum(expr: Expr) -> bool:
    if not isinstance(expr, BinOp) or not expr.variables:
        return False
    return expr.op in ("+", "-") or _has_sum(expr.left) or _has_sum(expr.right)


def _integer_type(expr: Expr, kind: Callable[[str], str]) -> bool:
    """Whether PostgreSQL computes ``expr`` in an integer type (smallint, integer or bigint)."""
    if isinstance(expr, (Var, Computed)):
        return kind(expr.variable) in INTEGER_TYPES
    if isinstance(expr, Const):
        return isinstance(expr.value, int) and -2 ** 63 <= expr.value < 2 ** 63
    return _integer_type(expr.left, kind) and _integer_type(expr.right, kind)


def integer_arithmetic(expr: Expr, kind: Callable[[str], str]) -> BinOp | None:
    """An operation inside ``expr`` that PostgreSQL computes in an integer type, or None. Such an
    operation raises 'integer out of range' (or smallint, bigint) in a joined row where its value
    does not fit: PostgreSQL's query then fails, while a ring that sums each factor apart in
    numeric would show a number."""
    if not isinstance(expr, BinOp):
        return None
    if _integer_type(expr, kind):
        return expr
    return integer_arithmetic(expr.left, kind) or integer_arithmetic(expr.right, kind)


class SumRing:
    """Counts and sums of products (a product of copies of Z and of exact numeric; float sums
    classified, see ``floats.py``)."""

    name = "sum"

    def __init__(self, cq: ConjunctiveQuery, column_type: Callable[[str], str]) -> None:
        self.free = set(cq.free)
        self.kind = column_type
        self.count = Entry("count", "bigint", frozenset(), "count(*)")
        self.entries = [self.count]
        self._sums: dict[SumKey, Sum] = {SumKey(frozenset(), ()): Sum(SumKey(frozenset(), ()), self.count)}
        self.plans: list[AggregatePlan] = []
        for aggregate in cq.aggregates:
            self.plans.append(self._plan(aggregate))

    def _sum(self, key: SumKey, kind: str, describe: str) -> Sum:
        if key not in self._sums:
            special = any(floats.may_be_special(self.kind(v)) for v, _ in key.monomial)
            scaled = any(scales.kept(self.kind(v)) for v, _ in key.monomial) and \
                not any(floats.is_float(self.kind(v)) for v, _ in key.monomial)
            made = Sum.make(key, f"p{len(self._sums)}", kind, describe, special, scaled)
            self._sums[key] = made
            self.entries += [made.value, *made.parts.values()]
        return self._sums[key]

    def _plan(self, aggregate: Aggregate) -> AggregatePlan:
        if aggregate.function == "count":
            variables = aggregate.variables
            bound = frozenset(variables - self.free)
            nonnull = self._sum(SumKey(bound, ()), "bigint", f"rows with {', '.join(sorted(variables))} not NULL")
            return AggregatePlan(aggregate, (OutputTerm(Fraction(1), nonnull, ()),), nonnull.value,
                                 frozenset(variables & self.free), False)
        assert aggregate.argument is not None
        variables = aggregate.argument.variables
        for v in sorted(variables):
            _check_number(aggregate, v, self.kind(v))
        specials = {floats.specials_of(self.kind(v)) for v in variables}
        if "all" in specials:
            problem = _float_expansion_problem(aggregate.argument)
            if problem:
                over = "float columns" if any(floats.is_float(self.kind(v)) for v in variables) else "numeric columns"
                raise UnsupportedQuery(f"{aggregate.sql}: over {over} the argument must be a sum of products "
                                       f"of columns and constants ({problem}: with Infinity or NaN that changes "
                                       "PostgreSQL's result)")
        elif "nan" in specials:
            lost = _vanishing(aggregate.argument, {v for v in variables if floats.may_be_special(self.kind(v))})
            if lost:
                raise UnsupportedQuery(f"{aggregate.sql}: {lost} cancels out of the argument, but a NaN in it "
                                       "makes PostgreSQL's sum NaN: write the argument without it")
        bound = frozenset(variables - self.free)
        nonnull = self._sum(SumKey(bound, ()), "bigint",
                            f"rows with {', '.join(sorted(variables)) or 'a constant'} not NULL")
        terms = []
        places = _places(aggregate.argument)
        for monomial, coefficient in sorted(_polynomial(aggregate.argument).items()):
            bound_part = tuple((v, e) for v, e in monomial if v not in self.free)
            free_part = tuple((v, e) for v, e in monomial if v in self.free)
            if bound_part:
                if any(floats.may_be_special(self.kind(v)) for v, _ in free_part):
                    classified = "signs"
                elif any(floats.may_be_special(self.kind(v)) for v, _ in bound_part):
                    classified = "specials"
                else:
                    classified = ""
                shown = "·".join(v if e == 1 else f"{v}^{e}" for v, e in bound_part)
                term_sum = self._sum(SumKey(bound, bound_part, classified), "numeric", f"sum of {shown}")
            else:
                term_sum = nonnull
            terms.append(OutputTerm(coefficient, term_sum, free_part, places.get(monomial, 0)))
        return AggregatePlan(aggregate, tuple(terms), nonnull.value, frozenset(variables & self.free), bool(specials - {""}))

    @property
    def converts_floats(self) -> bool:
        """Whether its SQL reads float values as exact numeric (floats.exact_numeric)."""
        return any(floats.is_float(self.kind(v)) for s in self._sums.values() for v, _ in s.key.monomial)

    def _stored(self, view: View) -> list[tuple[Entry, Sum]]:
        """The columns a view's table keeps (count first), each with its sum."""
        return [(e, s) for s in self._sums.values() if s.value is self.count or s.key.support & view.marginalized
                for e in s.columns_at(view)]

    def stored(self, view: View) -> list[Entry]:
        return [e for e, _ in self._stored(view)]

    def _nonnull(self, s: Sum) -> Sum:
        return self._sums[SumKey(s.key.nonnull, ())]

    def _part(self, s: Sum, part: str, factor: Factor) -> sql.Composable | None:
        """The factor's part of one column (``part``) of a sum's product (None for 1)."""
        if factor.view is None:  # the lifting of a join variable (never NULL in the join)
            exponent = dict(s.key.monomial).get(factor.variable or "", 0)
            if exponent == 0 or part == TOTAL:
                return None
            assert factor.value is not None  # each factor in numeric: an integer product could overflow
            return floats.character(part, factor.value, self.kind(factor.variable or ""), exponent)
        if not s.key.support & factor.view.marginalized:
            return column(factor.alias, "count")
        kept = {e.part: e for e in s.columns_at(factor.view)}
        where = floats.stored_as(part, s.special)
        if where == TOTAL:
            return column(factor.alias, self._nonnull(s).value.name)
        return column(factor.alias, kept[where].name)

    def product_terms(self, view: View, factors: list[Factor]) -> list[tuple[Entry, sql.Composable]]:
        out = []
        for entry, s in self._stored(view):
            if entry.part == SPECIALS:
                out.append((entry, self._specials(s, factors)))
            else:
                parts = [p for p in (self._part(s, entry.part, f) for f in factors) if p is not None]
                out.append((entry, _cast(_product(parts), entry.type)))
        return out

    def _specials(self, s: Sum, factors: list[Factor]) -> sql.Composable:
        """A sum's NaN and ±Inf counts: carried from the child that summed its last variable, or
        made here from the characters of its factors (floats.specials_code)."""
        if any(f.view is not None and s.key.support <= f.view.marginalized for f in factors):
            parts = [p for p in (self._part(s, SPECIALS, f) for f in factors) if p is not None]
            return _cast(_product(parts), "numeric")
        products = {c: _product([p for p in (self._part(s, c, f) for f in factors) if p is not None])
                    for c in floats.CHARACTERS}
        return floats.specials_code(products)

    def row_terms(self, view: View, value: Callable[[str], sql.Composable], mult: sql.Composable,
                  variables: frozenset[str]) -> list[tuple[Entry, sql.Composable]]:
        """The summands of each stored entry for one row holding ``variables`` (a base row at a
        leaf, a joined row for first-order), with multiplicity ``mult``."""
        out = []
        for entry, s in self._stored(view):
            powers = dict(s.key.monomial)
            present = sorted(s.key.nonnull & variables)
            if entry.part == SPECIALS:
                scale = [mult, *(sql.SQL("({} IS NOT NULL)::int").format(value(v)) for v in present)]
                out.append((entry, floats.row_specials([(value(v), self.kind(v), e) for v, e in s.key.monomial], scale)))
                continue
            parts = [mult]
            for v in present:
                e = powers.get(v, 0)
                if e == 0:
                    parts.append(sql.SQL("({} IS NOT NULL)::int").format(value(v)))
                else:
                    parts.append(sql.SQL("coalesce({}, 0)").format(floats.character(entry.part, value(v), self.kind(v), e)))
            out.append((entry, _cast(_product(parts), entry.type)))
        return out

    def leaf_terms(self, view: View, value: Callable[[str], sql.Composable], mult: sql.Composable) -> list[tuple[Entry, sql.Composable]]:
        return self.row_terms(view, value, mult, frozenset(view.lifted))

    def leaf_filters(self, view: View, value: Callable[[str], sql.Composable]) -> list[sql.Composable]:
        return []

    # --- what users read ---------------------------------------------------------------------

    def read(self, plan: AggregatePlan, at: Callable[[str], sql.Composable], kind: str) -> sql.Composable:
        """A sum or avg from the root's row (``at`` gives a root column or a GROUP BY value), for a
        group where it is not NULL; ``kind`` is its SQL type."""
        if not plan.classified:
            total = sql.SQL(" + ").join(self._exact_term(t, at) for t in plan.terms) if plan.terms else sql.SQL("0")
            if plan.aggregate.function == "avg":
                return sql.SQL("({}) / {}").format(total, at(plan.nonnull.name))
            return total
        values = sql.SQL(" + ").join(self._float_term_value(t, at) for t in plan.terms) if plan.terms else sql.SQL("0")
        specials = [s for s in (self._float_term_specials(t, at) for t in plan.terms) if s is not None]
        if plan.aggregate.function == "avg":
            over_floats = any(floats.is_float(self.kind(v)) for v in plan.aggregate.variables)
            finite = sql.SQL("({}){} / {}").format(values, sql.SQL("::double precision" if over_floats else ""),
                                                   at(plan.nonnull.name))
        else:
            finite = _cast(values, kind)
        return floats.read(finite, specials, "numeric" if kind.startswith("numeric") else "double precision")

    @staticmethod
    def _sum_value(s: Sum, at: Callable[[str], sql.Composable]) -> sql.Composable:
        """A sum's value, in PostgreSQL's scale where it keeps its scales (scales.py)."""
        if scales.SCALES in s.parts:
            return scales.rounded(at(s.value.name), at(s.parts[scales.SCALES].name))
        return at(s.value.name)

    def _exact_term(self, term: OutputTerm, at: Callable[[str], sql.Composable]) -> sql.Composable:
        parts = [_fraction_sql(term.coefficient, term.places), self._sum_value(term.sum, at)]
        parts += [at(v) for v, e in term.free_monomial for _ in range(e)]
        return sql.SQL(" * ").join(parts)

    def _float_free(self, term: OutputTerm) -> bool:
        """Whether a GROUP BY value multiplying the term can be NaN or ±Inf."""
        return any(floats.may_be_special(self.kind(v)) for v, _ in term.free_monomial)

    def _float_term_value(self, term: OutputTerm, at: Callable[[str], sql.Composable]) -> sql.Composable:
        parts = [_fraction_sql(term.coefficient, term.places), self._sum_value(term.sum, at)]
        parts += [floats.character(VALUE, at(v), self.kind(v), e) for v, e in term.free_monomial]
        return sql.SQL(" * ").join(parts)

    def _float_term_specials(self, term: OutputTerm, at: Callable[[str], sql.Composable]) -> floats.Specials | None:
        """Whether the term has NaN or ±Inf rows; None when it cannot (no float in it)."""
        s = term.sum
        if self._float_free(term):  # characters of the sum times those of the GROUP BY values
            characters = {}
            for c in floats.CHARACTERS:
                where = TOTAL if s.value is self._nonnull(s).value else floats.stored_as(c, s.special)
                stored = self._nonnull(s).value if where == TOTAL else s.parts[where]
                parts = [at(stored.name)]
                if c != TOTAL:
                    parts += [floats.character(c, at(v), self.kind(v), e) for v, e in term.free_monomial]
                    if term.coefficient < 0 and c in (floats.SIGN, floats.SIGN_FINITE):
                        parts.append(sql.SQL("-1"))
                characters[c] = sql.SQL("({})").format(_product(parts))
            return floats.from_characters(characters)
        if s.key.classified != "specials":
            return None
        specials = floats.from_code(at(s.parts[SPECIALS].name)).times_sign(term.coefficient < 0)
        if term.free_monomial:  # finite GROUP BY values: their sign maps ±Inf, and 0 makes NaN
            specials = specials.times(_product([at(v) for v, e in term.free_monomial for _ in range(e)]))
        return specials


def _fraction_sql(value: Fraction, written: int = 0) -> sql.Composable:
    """A term's coefficient as numeric. The constants it comes from are decimals, so it is one too,
    written with its decimals (1.25, not 5 / 4, which numeric divides to 20 places: a sum shown, or
    divided by avg, in another scale than PostgreSQL's, and avg's rounding then differs), and with
    at least the ``written`` places of those constants (1.50 · x is shown in x's places plus 2)."""
    places = next((k for k in range(64) if (10 ** k) % value.denominator == 0), None)
    if places is None:  # (not a decimal: never made from decimal constants)
        return sql.SQL("({}::numeric / {}::numeric)").format(sql.Literal(str(value.numerator)), sql.Literal(str(value.denominator)))
    places = max(places, written)
    if places == 0:
        return sql.SQL("{}::numeric").format(sql.Literal(str(value.numerator)))
    digits = str(abs(value.numerator) * (10 ** places // value.denominator)).rjust(places + 1, "0")
    text = f"{'-' if value < 0 else ''}{digits[:-places]}.{digits[-places:]}"
    return sql.SQL("{}::numeric").format(sql.Literal(text))


# --- the degree-m matrix ring ----------------------------------------------------------------------


class CofactorRing:
    """(c, s, Q) of Definition 7.2 over the features of ``cofactor(x1, ..., xm)``."""

    name = "cofactor"

    def __init__(self, cq: ConjunctiveQuery, column_type: Callable[[str], str]) -> None:
        (aggregate,) = [a for a in cq.aggregates if a.function == "cofactor"]
        self.aggregate = aggregate
        self.features = [f.variable for f in aggregate.features]
        self.kind = column_type
        for f in aggregate.features:
            _check_number(aggregate, f.column, column_type(f.variable))
            if f.variable in cq.free:
                raise UnsupportedQuery(f"{aggregate.sql}: {f.column} is a GROUP BY column; a feature must be summed")
        m = len(self.features)
        floating = [floats.may_be_special(column_type(v)) for v in self.features]
        # with a float feature every s_j keeps its characters: it is a factor of some Q_jk
        self.count = Entry("count", "bigint", frozenset(), "c: count")
        self.s = [self._sum(f"s{j + 1}", frozenset({self.features[j]}), f"s{j + 1}: sum of {self.features[j]}",
                            floating[j], "signs" if any(floating) else "") for j in range(m)]
        # Q_jj's NaN and ±Inf terms are s_j's (x² is NaN, +Inf or finite as x is NaN, ±Inf or finite)
        self.q = {(j, k): self._sum(f"q{j + 1}_{k + 1}", frozenset({self.features[j], self.features[k]}),
                                    f"Q{j + 1},{k + 1}: sum of {self.features[j]}·{self.features[k]}",
                                    floating[j] or floating[k], "specials" if j != k and (floating[j] or floating[k]) else "")
                  for j in range(m) for k in range(j, m)}
        self.entries = [self.count, *(e for s in [*self.s, *self.q.values()] for e in [s.value, *s.parts.values()])]

    @staticmethod
    def _sum(name: str, support: frozenset[str], describe: str, special: bool, classified: str) -> Sum:
        return Sum.make(SumKey(support, (), classified), name, "numeric", describe, special)

    @property
    def converts_floats(self) -> bool:
        """Whether its SQL reads float values as exact numeric (floats.exact_numeric)."""
        return any(floats.is_float(self.kind(v)) for v in self.features)

    def stored(self, view: View) -> list[Entry]:
        sums = [s for s in [*self.s, *self.q.values()] if s.key.support <= view.marginalized]
        return [self.count, *(e for s in sums for e in s.columns_at(view))]

    def _holder(self, variable: str, factors: list[Factor]) -> int:
        for i, f in enumerate(factors):
            if (f.view is None and f.variable == variable) or (f.view is not None and variable in f.view.marginalized):
                return i
        raise AssertionError(f"no factor holds {variable}")

    @staticmethod
    def _c(f: Factor) -> sql.Composable | None:
        return None if f.view is None else column(f.alias, "count")

    def _s(self, f: Factor, j: int, part: str) -> sql.Composable:
        """A character (or the value) of s_j in factor f, which holds x_j."""
        s = self.s[j]
        if f.view is None:
            assert f.value is not None
            return floats.character(part, f.value, self.kind(self.features[j]), 1)
        where = floats.stored_as(part, s.special)
        if where == TOTAL:
            return column(f.alias, "count")
        return column(f.alias, s.value.name if where == VALUE else s.parts[where].name)

    def _counts(self, factors: list[Factor], skip: set[int]) -> list[sql.Composable]:
        return [c for i, f in enumerate(factors) if i not in skip for c in [self._c(f)] if c is not None]

    def product_terms(self, view: View, factors: list[Factor]) -> list[tuple[Entry, sql.Composable]]:
        stored = self.stored(view)
        out: list[tuple[Entry, sql.Composable]] = [(self.count, _cast(_product(self._counts(factors, set())), "bigint"))]
        for j, s in enumerate(self.s):
            a = self._holder(self.features[j], factors) if s.value in stored else -1
            for entry in (e for e in s.columns_at(view) if e in stored):
                out.append((entry, _cast(_product([self._s(factors[a], j, entry.part), *self._counts(factors, {a})]),
                                         entry.type)))
        for (j, k), q in self.q.items():
            if q.value not in stored:
                continue
            a, b = self._holder(self.features[j], factors), self._holder(self.features[k], factors)
            for entry in q.columns_at(view):
                out.append((entry, self._q_term(factors, j, k, a, b, entry)))
        return out

    def _q_term(self, factors: list[Factor], j: int, k: int, a: int, b: int, entry: Entry) -> sql.Composable:
        """Q_jk at a view: the holder's Q_jk (or x_j² of the lifted x_j), or s_j · s_kᵀ of two
        holders, times the other factors' counts."""
        counts = self._counts(factors, {a, b})
        holder = factors[a]
        if a == b and holder.view is not None:  # both summed below one child: its Q_jk
            name = self.q[(j, k)].value.name if entry.part == VALUE else self.q[(j, k)].parts[SPECIALS].name
            return _cast(_product([column(holder.alias, name), *counts]), entry.type)
        if a == b:  # x_j lifted here (j = k): x_j²
            assert holder.value is not None
            kind = self.kind(self.features[j])
            if entry.part == VALUE:
                return _cast(_product([floats.character(VALUE, holder.value, kind, 2), *counts]), entry.type)
            return floats.row_specials([(holder.value, kind, 2)], counts or [sql.SQL("1")])
        if entry.part == VALUE:
            return _cast(_product([self._s(factors[a], j, VALUE), self._s(factors[b], k, VALUE), *counts]), entry.type)
        products = {c: _product([self._s(factors[a], j, c), self._s(factors[b], k, c), *counts])
                    for c in floats.CHARACTERS if c != TOTAL}
        products[TOTAL] = _product(self._counts(factors, set()))
        return floats.specials_code(products)

    def leaf_terms(self, view: View, value: Callable[[str], sql.Composable], mult: sql.Composable) -> list[tuple[Entry, sql.Composable]]:
        stored = self.stored(view)
        out: list[tuple[Entry, sql.Composable]] = [(self.count, mult)]
        for j, s in enumerate(self.s):
            for entry in (e for e in s.columns_at(view) if e in stored):
                x = self.features[j]
                out.append((entry, _cast(sql.SQL("{} * {}").format(
                    mult, floats.character(entry.part, value(x), self.kind(x), 1)), entry.type)))
        for (j, k), q in self.q.items():
            if q.value not in stored:
                continue
            xj, xk = self.features[j], self.features[k]
            values = [(value(xj), self.kind(xj), 2)] if j == k else [(value(xj), self.kind(xj), 1), (value(xk), self.kind(xk), 1)]
            for entry in q.columns_at(view):
                if entry.part == VALUE:
                    term = _product([mult, *(floats.character(VALUE, v, kind, e) for v, kind, e in values)])
                else:
                    term = floats.row_specials(values, [mult])
                out.append((entry, _cast(term, entry.type)))
        return out

    def leaf_filters(self, view: View, value: Callable[[str], sql.Composable]) -> list[sql.Composable]:
        return [sql.SQL("{} IS NOT NULL").format(value(v)) for v in sorted(set(self.features) & set(view.lifted))]

    # --- what users read ---------------------------------------------------------------------

    def read_s(self, j: int, at: Callable[[str], sql.Composable]) -> sql.Composable:
        """s_j as float8 (the sum of x_j over the joined rows)."""
        s = self.s[j]
        finite = sql.SQL("{}::double precision").format(at(s.value.name))
        if not s.special:
            return finite
        return floats.read(finite, [self._s_specials(j, at)])

    def read_q(self, j: int, k: int, at: Callable[[str], sql.Composable]) -> sql.Composable:
        q = self.q[(min(j, k), max(j, k))]
        finite = sql.SQL("{}::double precision").format(at(q.value.name))
        if not q.special:
            return finite
        if j == k:  # x_j² from x_j's terms: NaN stays NaN, either infinity becomes +Inf
            terms = self._s_specials(j, at)
            either = sql.SQL("({} OR {})").format(terms.positive, terms.negative)
            return floats.read(finite, [floats.Specials(terms.nan, either, sql.SQL("false"))])
        return floats.read(finite, [floats.from_code(at(q.parts[SPECIALS].name))])

    def _s_specials(self, j: int, at: Callable[[str], sql.Composable]) -> floats.Specials:
        s = self.s[j]
        return floats.from_characters({c: at("count" if floats.stored_as(c, True) == TOTAL else s.parts[c].name)
                                       for c in floats.CHARACTERS})


def ring_for(cq: ConjunctiveQuery, column_type: Callable[[str], str]) -> SumRing | CofactorRing:
    if any(a.function == "cofactor" for a in cq.aggregates):
        if len(cq.aggregates) > 1:
            raise UnsupportedQuery("cofactor(...) must be the only aggregate of its view: its count is entry (0, 0) "
                                   "and its sums entries (0, j)")
        return CofactorRing(cq, column_type)
    return SumRing(cq, column_type)


def ring_problem(cq: ConjunctiveQuery, column_type: Callable[[str], str]) -> str | None:
    """Why the query's aggregates make no ring given its columns' types (an argument over float or
    numeric columns that expands into monomials PostgreSQL's row-by-row value differs from), or None."""
    try:
        ring_for(cq, column_type)
    except UnsupportedQuery as refused:
        return refused.message
    return None
