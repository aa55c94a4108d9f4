"""Float sums kept exactly: classified sums, their ring product and how they are read.

PostgreSQL sums float8 (and real) row by row in IEEE arithmetic. A term x·y of a joined row is
+Inf·(finite > 0) = +Inf, +Inf·(finite < 0) = -Inf, ±Inf·0 = NaN, NaN·anything = NaN, signs multiply;
the sum is NaN if any term is NaN or +Inf and -Inf terms meet, ±Inf if only those occur, else the sum
of the finite terms. A float8 accumulator cannot take a row back out (Inf - Inf is NaN, 1e16 + 1 -
1e16 is 0), so each float sum is kept as exact sums instead, one column each, of *characters* χ of
its term x (each with the row's multiplicity):

    value           Σ x [x finite]            numeric, x as its shortest exact decimal (``exact_numeric``)
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
sum without such variables (integers) needs only value, nonzero_finite and sign_finite (finite = total,
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
to the root. Not followed, as no sum can follow it: PostgreSQL raises when a *finite* product in
one row overflows or underflows float8, when its running float sum overflows on the way (the order
of the rows decides), and in avg(float8) when its running sum of squares overflows (|x| > ~1e154);
the view raises only if the exact result is out of range, and otherwise answers.

numeric has the same three special values (PostgreSQL 14 on) with the same arithmetic (NaN·x and
±Inf·0 are NaN, Inf − Inf is NaN, signs multiply) and its sum keeps the same counts, so a sum over a
numeric column is classified the same way; its finite value is the column itself, and it reads as
numeric. A numeric(p,s) column cannot hold ±Inf (numeric field overflow), only NaN, which spoils
every term it enters: there only a column that vanishes from the expansion (0·x, x − x) would be
lost (``specials_of``).
"""

from __future__ import annotations

from dataclasses import dataclass

from psycopg import sql

from pgivm.systems.fivm import scales

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


def is_float(kind: str) -> bool:
    return kind in FLOAT_TYPES


def specials_of(kind: str) -> str:
    """Which special values a column of this type holds: "all" (NaN and ±Inf: float8, real,
    numeric), "nan" (numeric(p,s): ±Inf overflows its precision) or "" (integers and the rest)."""
    if kind in FLOAT_TYPES or kind == "numeric":
        return "all"
    return "nan" if kind.startswith("numeric(") else ""


def may_be_special(kind: str) -> bool:
    """Whether a value of this type can be NaN or ±Inf: its sums are classified."""
    return specials_of(kind) != ""


def kept_parts(special: bool) -> tuple[str, ...]:
    """The characters a sum keeps as columns beside its value while it is still multiplied."""
    return (FINITE, NONZERO_FINITE, SIGN_FINITE, NONZERO, SIGN) if special else (NONZERO_FINITE, SIGN_FINITE)


def stored_as(part: str, special: bool) -> str:
    """The column a character is read from: without a variable that can be special some characters coincide."""
    if special:
        return part
    return {FINITE: TOTAL, NONZERO: NONZERO_FINITE, SIGN: SIGN_FINITE}.get(part, part)


def _num(value: int) -> sql.Composable:
    return sql.SQL("{}::numeric").format(sql.Literal(str(value)))


def _float8(text: str) -> sql.Composable:
    return sql.SQL("{}::double precision").format(sql.Literal(text))


def _special(text: str, kind: str) -> sql.Composable:
    """'NaN', 'Infinity' or '-Infinity' as a value of the column's type (float8 for a float)."""
    return sql.SQL("{}::numeric").format(sql.Literal(text)) if kind.startswith("numeric") else _float8(text)


def _is_finite(value: sql.Composable, kind: str = "double precision") -> sql.Composable:
    # NaN sorts above Infinity in both types: abs(NaN) < Infinity is false
    return sql.SQL("pg_catalog.abs({}) < {}").format(value, _special("Infinity", kind))


def _times(factor: sql.Composable, exponent: int) -> sql.Composable:
    return sql.SQL(" * ").join([factor] * exponent)


def exact_numeric(value: sql.Composable) -> sql.Composable:
    """A finite float8 as numeric: its shortest decimal that reads back as the same float8 (at most
    17 digits; x::numeric keeps only 15). Deterministic, so a delete takes out exactly what its
    insert put in, as long as extra_float_digits > 0 (≤ 0 rounds the text to fewer digits): every
    statement that converts for the state runs with it set (``PINNED``)."""
    return sql.SQL("({})::text::numeric").format(value)


# Set on the functions that maintain a view with float sums, and for its build and verify.
PINNED = ("extra_float_digits", "1")


def pin_setting() -> sql.Composable:
    """Pins the text form of floats for the rest of the transaction (build, verify)."""
    return sql.SQL("SELECT pg_catalog.set_config({}, {}, true)").format(sql.Literal(PINNED[0]), sql.Literal(PINNED[1]))


def function_setting() -> sql.Composable:
    """The same as a SET clause of a function (scoped to each call)."""
    return sql.SQL("\nSET {} = {}").format(sql.Identifier(PINNED[0]), sql.Literal(PINNED[1]))


def character(part: str, value: sql.Composable, kind: str, exponent: int) -> sql.Composable:
    """χ(v^exponent) for one value v of type ``kind`` (0 or NULL when v is NULL: callers coalesce);
    for ``scales.SCALES``, the factor of its display scale."""
    if part == scales.SCALES:
        return scales.factor(value, exponent)
    special = may_be_special(kind)
    v = sql.SQL("{}::double precision").format(value) if kind == "real" else value
    if part in (SIGN_FINITE, SIGN) and exponent % 2 == 0:
        part = NONZERO_FINITE if part == SIGN_FINITE else NONZERO
    finite = _is_finite(v, kind)
    if part == VALUE:
        if not special:
            return _times(sql.SQL("({})::numeric").format(value), exponent)
        exact = exact_numeric(v) if is_float(kind) else sql.SQL("({})::numeric").format(v)
        return sql.SQL("CASE WHEN {} THEN {} ELSE 0 END").format(finite, _times(exact, exponent))
    if part == FINITE:
        return sql.SQL("({})::int").format(finite if special else sql.SQL("{} IS NOT NULL").format(v))
    if part == NONZERO_FINITE:
        if special:
            return sql.SQL("({} AND {} <> 0)::int").format(finite, v)
        return sql.SQL("({} <> 0)::int").format(v)
    if part == SIGN_FINITE:
        if special:
            return sql.SQL("(CASE WHEN {} THEN pg_catalog.sign({}) ELSE 0 END)::int").format(finite, v)
        return sql.SQL("pg_catalog.sign({})::int").format(v)
    # sign(NaN) is 0 for float8 but NaN for numeric, sign(±Inf) is ±1 for both
    not_nan = sql.SQL("{} <> {}").format(v, _special("NaN", kind))
    if part == NONZERO:
        if is_float(kind):
            return sql.SQL("pg_catalog.abs(pg_catalog.sign({}))::int").format(v)
        if special:
            return sql.SQL("({} <> 0 AND {})::int").format(v, not_nan)
        return sql.SQL("({} <> 0)::int").format(v)
    if part == SIGN:
        if special and not is_float(kind):
            return sql.SQL("(CASE WHEN {} THEN pg_catalog.sign({}) ELSE 0 END)::int").format(not_nan, v)
        return sql.SQL("pg_catalog.sign({})::int").format(v)
    raise AssertionError(part)


def row_specials(values: list[tuple[sql.Composable, str, int]], scale: list[sql.Composable]) -> sql.Composable:
    """``specials`` of one row's term Π v^e, from its values (v, type, e), times ``scale`` (the
    row's multiplicity and non-NULL indicators): 1 for NaN, B for +Inf, B² for −Inf, else 0."""
    specials = [(v, kind) for v, kind, _ in values if may_be_special(kind)]
    finite = sql.SQL(" AND ").join(_is_finite(v, kind) for v, kind in specials)
    nan = sql.SQL(" OR ").join(sql.SQL("{} = {}").format(v, _special("NaN", kind)) for v, kind in specials)
    if len(values) > 1:  # ±Inf times 0 in the same row
        zero = sql.SQL(" OR ").join(sql.SQL("{} = 0").format(v) for v, _, _ in values)
        nan = sql.SQL("{} OR {}").format(nan, zero)  # not all finite: a zero makes NaN
    odd = [sql.SQL("pg_catalog.sign({})").format(v) for v, _, e in values if e % 2 == 1]
    negative = sql.SQL("{} < 0").format(sql.SQL(" * ").join(odd)) if odd else sql.SQL("false")
    code = sql.SQL("(CASE WHEN {nan} THEN {one} WHEN {neg} THEN {b2} ELSE {b} END)").format(
        nan=nan, neg=negative, one=_num(1), b=_num(B), b2=_num(B * B))
    return sql.SQL("(CASE WHEN {finite} THEN {zero} ELSE ({scale})::numeric * {code} END)").format(
        finite=finite, zero=_num(0), scale=sql.SQL(" * ").join(scale), code=code)


def specials_code(products: dict[str, sql.Composable]) -> sql.Composable:
    """``specials`` from the characters (total, finite, ...) of a sum whose last variable is summed
    (0 without a numeric operation when every term is finite, the usual case)."""
    p = products
    return sql.SQL("(CASE WHEN {t} = {a} AND {nz} = {nzf} AND {s} = {sf} THEN {zero} "
                   "ELSE ({t} - {a}) + {k1} * ({nz} - {nzf}) + {k2} * ({s} - {sf}) END)").format(
        t=p[TOTAL], a=p[FINITE], nz=p[NONZERO], nzf=p[NONZERO_FINITE], s=p[SIGN], sf=p[SIGN_FINITE],
        zero=_num(0), k1=_num(K1), k2=_num(K2))


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


def read(finite: sql.Composable, specials: list[Specials], kind: str = "double precision") -> sql.Composable:
    """What PostgreSQL's row-by-row sum gives: NaN, ±Inf, or ``finite`` (of type ``kind``: float8,
    real or numeric)."""
    if not specials:
        return finite
    nan = sql.SQL(" OR ").join(s.nan for s in specials)
    positive = sql.SQL(" OR ").join(s.positive for s in specials)
    negative = sql.SQL(" OR ").join(s.negative for s in specials)
    return sql.SQL("(CASE WHEN {nan} OR (({pos}) AND ({neg})) THEN {n} WHEN {pos} THEN {pi} WHEN {neg} THEN {ni} "
                   "ELSE {finite} END)").format(nan=nan, pos=positive, neg=negative, n=_special("NaN", kind),
                                                pi=_special("Infinity", kind), ni=_special("-Infinity", kind),
                                                finite=finite)
