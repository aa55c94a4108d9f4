"""Float sums kept exactly: classified sums, their ring product and how they are read.

PostgreSQL sums float8 (and real) row by row in IEEE arithmetic. A term x·y of a joined row is
+Inf·(finite > 0) = +Inf, +Inf·(finite < 0) = -Inf, ±Inf·0 = NaN, NaN·anything = NaN, signs multiply;
the sum is NaN if any term is NaN or +Inf and -Inf terms meet, ±Inf if only those occur, else the sum
of the finite terms. A float8 accumulator cannot take a row back out (Inf - Inf is NaN, 1e16 + 1 -
1e16 is 0), so each float sum is kept as exact sums instead, one column each, of *characters* χ of
its term x (each with the row's multiplicity):

    value           Σ x [x finite]            numeric, x read exactly (``exact_numeric``)
    finite          Σ [x finite]
    nonzero_finite  Σ [x finite, x ≠ 0]
    sign_finite     Σ sign(x) [x finite]
    nonzero         Σ [x ≠ 0, x not NaN]       (±Inf included)
    sign            Σ sign(x) [x not NaN]      (sign(±Inf) = ±1)
    total           Σ 1                        (the sum's non-NULL count, kept anyway)

Each χ is multiplicative under IEEE multiplication, χ(x·y) = χ(x)·χ(y) (a product is finite iff
its factors are; it is finite and non-zero, or non-zero and not NaN, iff they all are; signs
multiply), so over a join Σ_{i,j} χ(x_i·y_j) = Σ_i χ(x_i) · Σ_j χ(y_j): the product of two
classified sums is component-wise, like every entry of F-IVM's sum ring (the factorized
Σ_a L(a)·R(a) of §4 of the paper). Addition is component-wise, a delete the additive inverse. A
sum without float variables needs only value, nonzero_finite and sign_finite (finite = total,
nonzero = nonzero_finite, sign = sign_finite). From the components:

    infinite terms i = nonzero − nonzero_finite,  signed σ = sign − sign_finite,
    +Inf terms (i + σ)/2,  −Inf terms (i − σ)/2,  NaN terms u = total − finite − i.

Where every variable of a sum has been summed (nothing multiplies it any more but counts), only
these three counts are needed, kept in one numeric ``specials`` = u + p·B + n·B² with B = 2^64:
each count is below 2^63 in a consistent state, so the digits never carry, and sums and multiples
keep it exact:  specials = total − finite + K1·(nonzero − nonzero_finite) + K2·(sign − sign_finite)
with K1 = (B + B²)/2 − 1, K2 = (B − B²)/2.

Read: NaN if u > 0, or if +Inf and −Inf terms both occur; +Inf or −Inf if only those; else the
finite value cast to float8 (or real), which raises 'out of range' beyond the type, as PostgreSQL's
own float addition raises 'value out of range: overflow'. A float GROUP BY column multiplying a sum
is read like another factor (its value may be ±Inf or NaN), so such a sum keeps its components up
to the root. Not followed: a *finite* product or sum that overflows or underflows float8 in one
row makes PostgreSQL raise, while the view only raises if the whole sum is out of range.
"""

from __future__ import annotations

from dataclasses import dataclass

from psycopg import sql

FLOAT_TYPES = {"real", "double precision"}

VALUE = "value"
TOTAL = "total"
FINITE = "finite"
NONZERO_FINITE = "nonzero_finite"
SIGN_FINITE = "sign_finite"
NONZERO = "nonzero"
SIGN = "sign"
SPECIALS = "specials"
CHARACTERS = (TOTAL, FINITE, NONZERO_FINITE, SIGN_FINITE, NONZERO, SIGN)

B = 2 ** 64
K1 = (B + B * B) // 2 - 1
K2 = (B - B * B) // 2
# An exact float8 -> numeric below this magnitude; above it, of x/2 (x*2 would overflow in between).
_HALVE_ABOVE = "1e300"


def is_float(kind: str) -> bool:
    return kind in FLOAT_TYPES


def kept_parts(has_float: bool) -> tuple[str, ...]:
    """The characters a sum keeps as columns beside its value while it is still multiplied."""
    return (FINITE, NONZERO_FINITE, SIGN_FINITE, NONZERO, SIGN) if has_float else (NONZERO_FINITE, SIGN_FINITE)


def stored_as(part: str, has_float: bool) -> str:
    """The column a character is read from: without a float variable some characters coincide."""
    if has_float:
        return part
    return {FINITE: TOTAL, NONZERO: NONZERO_FINITE, SIGN: SIGN_FINITE}.get(part, part)


def _num(value: int) -> sql.Composable:
    return sql.SQL("{}::numeric").format(sql.Literal(str(value)))


def _float8(text: str) -> sql.Composable:
    return sql.SQL("{}::double precision").format(sql.Literal(text))


def _is_finite(value: sql.Composable) -> sql.Composable:
    return sql.SQL("pg_catalog.abs({}) < {}").format(value, _float8("Infinity"))


def _times(factor: sql.Composable, exponent: int) -> sql.Composable:
    return sql.SQL(" * ").join([factor] * exponent)


def exact_numeric(value: sql.Composable) -> sql.Composable:
    """A finite float8 as numeric, deterministically and to ~30 digits (x::numeric alone keeps 15).

    r = x − (x::numeric)::float8 is exact (Sterbenz: the two are within 1e-14 of each other), so
    x::numeric + r::numeric is within 1e-29 of x; the same x always gives the same numeric, so a
    delete takes out exactly what its insert put in. No setting (extra_float_digits) is involved."""
    def split(x: sql.Composable) -> sql.Composable:
        return sql.SQL("({x}::numeric + ({x} - {x}::numeric::double precision)::numeric)").format(x=x)

    half = sql.SQL("({} * {})").format(value, _float8("0.5"))
    return sql.SQL("CASE WHEN pg_catalog.abs({v}) < {limit} THEN {low} ELSE 2 * {high} END").format(
        v=value, limit=_float8(_HALVE_ABOVE), low=split(value), high=split(half))


def character(part: str, value: sql.Composable, kind: str, exponent: int) -> sql.Composable:
    """χ(v^exponent) for one value v of type ``kind`` (0 or NULL when v is NULL: callers coalesce)."""
    floating = is_float(kind)
    v = sql.SQL("{}::double precision").format(value) if kind == "real" else value
    if part in (SIGN_FINITE, SIGN) and exponent % 2 == 0:
        part = NONZERO_FINITE if part == SIGN_FINITE else NONZERO
    if part == VALUE:
        if not floating:
            return _times(sql.SQL("({})::numeric").format(value), exponent)
        return sql.SQL("CASE WHEN {} THEN {} ELSE 0 END").format(_is_finite(v), _times(exact_numeric(v), exponent))
    if part == FINITE:
        return sql.SQL("({})::int").format(_is_finite(v) if floating else sql.SQL("{} IS NOT NULL").format(v))
    if part == NONZERO_FINITE:
        if floating:
            return sql.SQL("({} AND {} <> 0)::int").format(_is_finite(v), v)
        return sql.SQL("({} <> 0)::int").format(v)
    if part == SIGN_FINITE:
        if floating:
            return sql.SQL("(CASE WHEN {} THEN pg_catalog.sign({}) ELSE 0 END)::int").format(_is_finite(v), v)
        return sql.SQL("pg_catalog.sign({})::int").format(v)
    if part == NONZERO:  # sign(NaN) is 0 in PostgreSQL, sign(±Inf) is ±1
        if floating:
            return sql.SQL("pg_catalog.abs(pg_catalog.sign({}))::int").format(v)
        return sql.SQL("({} <> 0)::int").format(v)
    if part == SIGN:
        return sql.SQL("pg_catalog.sign({})::int").format(v)
    raise AssertionError(part)


def row_specials(values: list[tuple[sql.Composable, str, int]]) -> sql.Composable:
    """``specials`` of one row's term Π v^e, from its values (v, type, e): 1 for NaN, B for +Inf,
    B² for −Inf, else 0. Callers multiply by the row's multiplicity and its non-NULL indicators."""
    floats = [v for v, kind, _ in values if is_float(kind)]
    nan = sql.SQL(" OR ").join(sql.SQL("{} = {}").format(v, _float8("NaN")) for v in floats)
    infinite = sql.SQL(" OR ").join(sql.SQL("pg_catalog.abs({}) = {}").format(v, _float8("Infinity")) for v in floats)
    if len(values) > 1:  # ±Inf times 0 in the same row
        zero = sql.SQL(" OR ").join(sql.SQL("{} = 0").format(v) for v, _, _ in values)
        nan = sql.SQL("{} OR (({}) AND ({}))").format(nan, infinite, zero)
    odd = [sql.SQL("pg_catalog.sign({})").format(v) for v, _, e in values if e % 2 == 1]
    negative = sql.SQL("{} < 0").format(sql.SQL(" * ").join(odd)) if odd else sql.SQL("false")
    return sql.SQL("(CASE WHEN {nan} THEN {one} WHEN {inf} THEN (CASE WHEN {neg} THEN {b2} ELSE {b} END) "
                   "ELSE {zero} END)").format(nan=nan, inf=infinite, neg=negative, one=_num(1), b=_num(B),
                                              b2=_num(B * B), zero=_num(0))


def specials_code(products: dict[str, sql.Composable]) -> sql.Composable:
    """``specials`` from the characters (total, finite, ...) of a sum whose last variable is summed."""
    p = products
    return sql.SQL("(({} - {}) + {} * ({} - {}) + {} * ({} - {}))").format(
        p[TOTAL], p[FINITE], _num(K1), p[NONZERO], p[NONZERO_FINITE], _num(K2), p[SIGN], p[SIGN_FINITE])


@dataclass(frozen=True)
class Specials:
    """Whether a sum has NaN, +Inf and −Inf terms: three boolean SQL expressions."""

    nan: sql.Composable
    positive: sql.Composable
    negative: sql.Composable

    def times_sign(self, negative: bool) -> Specials:
        """The same terms times a constant of this sign (non-zero)."""
        return Specials(self.nan, self.negative, self.positive) if negative else self

    def times(self, factor: sql.Composable) -> Specials:
        """The same terms times a finite value per row (a GROUP BY value): ±Inf·0 is NaN."""
        either = sql.SQL("({} OR {})").format(self.positive, self.negative)
        return Specials(
            sql.SQL("({} OR ({} = 0 AND {}))").format(self.nan, factor, either),
            sql.SQL("(({f} > 0 AND {p}) OR ({f} < 0 AND {n}))").format(f=factor, p=self.positive, n=self.negative),
            sql.SQL("(({f} > 0 AND {n}) OR ({f} < 0 AND {p}))").format(f=factor, p=self.positive, n=self.negative))


def from_code(code: sql.Composable) -> Specials:
    return Specials(sql.SQL("pg_catalog.mod({}, {}) <> 0").format(code, _num(B)),
                    sql.SQL("pg_catalog.mod({}, {}) >= {}").format(code, _num(B * B), _num(B)),
                    sql.SQL("{} >= {}").format(code, _num(B * B)))


def from_characters(c: dict[str, sql.Composable]) -> Specials:
    infinite = sql.SQL("({} - {})").format(c[NONZERO], c[NONZERO_FINITE])
    signed = sql.SQL("({} - {})").format(c[SIGN], c[SIGN_FINITE])
    return Specials(sql.SQL("{} - {} - {} > 0").format(c[TOTAL], c[FINITE], infinite),
                    sql.SQL("{} + {} > 0").format(infinite, signed),
                    sql.SQL("{} - {} > 0").format(infinite, signed))


def read(finite: sql.Composable, specials: list[Specials]) -> sql.Composable:
    """The float8 PostgreSQL's row-by-row sum gives: NaN, ±Inf, or ``finite`` (a float8 expression)."""
    if not specials:
        return finite
    nan = sql.SQL(" OR ").join(s.nan for s in specials)
    positive = sql.SQL(" OR ").join(s.positive for s in specials)
    negative = sql.SQL(" OR ").join(s.negative for s in specials)
    return sql.SQL("(CASE WHEN {nan} OR (({pos}) AND ({neg})) THEN {n} WHEN {pos} THEN {pi} WHEN {neg} THEN {ni} "
                   "ELSE {finite} END)").format(nan=nan, pos=positive, neg=negative, n=_float8("NaN"),
                                                pi=_float8("Infinity"), ni=_float8("-Infinity"), finite=finite)
