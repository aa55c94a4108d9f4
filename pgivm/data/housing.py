"""The synthetic *Housing* dataset of the F-IVM paper (§8.1): a star of six relations on ``postcode``.

The paper (after Schleich, Olteanu and Ciucanu, SIGMOD 2016) describes House, Shop, Institution,
Restaurant, Demographics and Transport "arranged into a star schema", 27 attributes in their
natural join, 25,000 postcodes "regardless of the scale", 150,000 tuples at scale 1 and about
1.4M at scale 20, and a flat join that grows cubically with the scale while its factorized form
grows linearly. The original generator is not public; this one reproduces those figures:

- **Attributes.** The 27 of the F-IVM repository's Housing queries (``postcode`` plus 26), renamed
  only where a column would share its table's name (``house`` becomes ``ishouse``, and ``flat``
  and ``unknown`` follow). All integers, but for two ``numeric(_, 1)`` rates, so that sums over
  the join (cofactor matrices included) are exact and comparable between maintained and
  recomputed views.
- **Rows per postcode** at scale ``s`` (exact, not random): House ``s``, Shop ``s``, Institution
  ``ceil(s/2)``, Restaurant, Demographics and Transport one each. So every postcode joins
  ``s · s · ceil(s/2)`` tuples: the flat join has ``P·s²·ceil(s/2)`` rows (cubic in ``s``) while
  the base data has ``P·(2s + ceil(s/2) + 3)`` (linear): 150,000 rows at ``s = 1`` and
  1,325,000 at ``s = 20`` for ``P = 25,000``, the paper's "1.4M" to within 6%. The split matches
  the F-IVM repository's scale-4 files (four Shop rows and two Institution rows per postcode, one
  Demographics and one Transport row per postcode).
- **Values.** Each postcode has a latent desirability in [0, 1), a hash of ``(seed, postcode)``
  shared by all six relations, which raises prices, salaries, bus lines and restaurant prices and
  lowers crime, unemployment and distance to the centre. A regression over the join therefore
  has signal to find, yet every relation can be generated on its own.

Everything is a pure function of ``(scale, seed, postcodes)``: each relation draws from its own
``random.Random`` seeded with a string naming the seed, the relation and the purpose (load or
stream), so the same arguments give the same rows in any process, and the stream's rows are new
draws from the same distribution.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from itertools import islice

import psycopg

from pgivm.data import Row, analyze, copy_rows, create_index, create_table, round_robin

POSTCODES = 25_000  # the paper's number of postcodes, fixed across scales
BATCH = 1_000  # the paper's update batch size

TABLES: tuple[str, ...] = ("house", "shop", "institution", "restaurant", "demographics", "transport")

COLUMNS: dict[str, list[tuple[str, str]]] = {
    "house": [("postcode", "integer"), ("livingarea", "integer"), ("price", "integer"),
              ("nbbedrooms", "integer"), ("nbbathrooms", "integer"), ("kitchensize", "integer"),
              ("ishouse", "integer"), ("isflat", "integer"), ("isunknown", "integer"),
              ("garden", "integer"), ("parking", "integer")],
    "shop": [("postcode", "integer"), ("openinghoursshop", "integer"), ("pricerangeshop", "integer"),
             ("sainsburys", "integer"), ("tesco", "integer"), ("ms", "integer")],
    "institution": [("postcode", "integer"), ("typeeducation", "integer"), ("sizeinstitution", "integer")],
    "restaurant": [("postcode", "integer"), ("openinghoursrest", "integer"), ("pricerangerest", "integer")],
    "demographics": [("postcode", "integer"), ("averagesalary", "integer"), ("crimesperyear", "integer"),
                     ("unemployment", "numeric(4,1)"), ("nbhospitals", "integer")],
    "transport": [("postcode", "integer"), ("nbbuslines", "integer"), ("nbtrainstations", "integer"),
                  ("distancecitycentre", "numeric(5,1)")],
}

JOIN_COLUMN = "postcode"

_MASK64 = (1 << 64) - 1


# --- sizes ------------------------------------------------------------------------------------


def rows_per_postcode(table: str, scale: int) -> int:
    """How many rows ``table`` has for each postcode at ``scale`` (see the module docstring)."""
    _check_table(table)
    _check_positive("scale", scale)
    if table in ("house", "shop"):
        return scale
    if table == "institution":
        return (scale + 1) // 2
    return 1


def row_count(table: str, scale: int, postcodes: int = POSTCODES) -> int:
    """The number of rows :func:`rows` yields for ``table``."""
    _check_positive("postcodes", postcodes)
    return rows_per_postcode(table, scale) * postcodes


def join_size(scale: int, postcodes: int = POSTCODES) -> int:
    """The number of tuples in the flat natural join of the six relations: cubic in ``scale``."""
    size = postcodes
    for table in TABLES:
        size *= rows_per_postcode(table, scale)
    return size


# --- rows -------------------------------------------------------------------------------------


def rows(table: str, scale: int, seed: int = 0, postcodes: int = POSTCODES) -> Iterator[Row]:
    """The rows of ``table`` at ``scale``, postcode by postcode (1 to ``postcodes``), deterministic."""
    row_count(table, scale, postcodes)  # validates now: the rows themselves come lazily
    return _rows(table, scale, seed, range(1, postcodes + 1), purpose="load")


def stream(scale: int, seed: int = 0, postcodes: int = POSTCODES, batch: int = BATCH,
           per_table: int | None = None) -> Iterator[tuple[str, list[Row]]]:
    """The paper's update workload: ``(table, rows)`` batches of inserts, relation by relation in turn.

    The rows are new (drawn from a random stream separate from :func:`rows`'s) but follow the same
    distribution: each relation walks the postcodes in its own shuffled order and emits, per
    postcode, as many rows as it has per postcode at ``scale``, so updates land all over the join
    key rather than sweeping it in order. By default each relation streams as many rows as
    :func:`generate` loaded into it (the paper's streams are whole datasets); ``per_table`` caps
    every relation at that many rows instead. Exhausted relations leave the rotation.
    """
    for table in TABLES:
        row_count(table, scale, postcodes)  # validates now: the rows themselves come lazily
    sources = []
    for table in TABLES:
        order = list(range(1, postcodes + 1))
        random.Random(f"housing:{seed}:{table}:order").shuffle(order)
        source = _rows(table, scale, seed, order, purpose="stream")
        if per_table is not None:
            source = islice(source, max(per_table, 0))
        sources.append((table, source))
    return round_robin(sources, batch)


def _rows(table: str, scale: int, seed: int, postcodes: Iterable[int], *, purpose: str) -> Iterator[Row]:
    """Rows of ``table`` for each postcode of ``postcodes`` in turn, from the ``purpose`` random stream."""
    count = rows_per_postcode(table, scale)
    make = _MAKERS[table]
    rng = random.Random(f"housing:{seed}:{table}:{purpose}")
    for postcode in postcodes:
        desirability = _desirability(seed, postcode)
        for _ in range(count):
            yield make(rng, postcode, desirability)


def _desirability(seed: int, postcode: int) -> float:
    """The postcode's latent quality in [0, 1): a splitmix64 hash of ``(seed, postcode)``.

    Hashed rather than drawn so that all six relations agree on it while each is generated on its own.
    """
    x = (postcode * 0x9E3779B97F4A7C15 + seed * 0xD1B54A32D192ED03 + 0x632BE59BD9B4E019) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return (x ^ (x >> 31)) / 2.0**64


def _tenths(value: int) -> Decimal:
    """``value / 10`` as an exact numeric with one decimal (``Decimal('1.0')``, not ``Decimal('1')``)."""
    return Decimal(value).scaleb(-1)


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def _house(rng: random.Random, postcode: int, d: float) -> Row:
    """A dwelling: size, price driven by size, kind and the postcode, rooms driven by size."""
    living = _clamp(round(rng.gauss(90, 30)), 25, 300)
    bedrooms = _clamp(living // 30 + rng.randint(-1, 1), 1, 8)
    bathrooms = _clamp(1 + living // 90 + (rng.random() < 0.2), 1, 5)
    kitchen = _clamp(round(living * rng.uniform(0.07, 0.15)), 4, 40)
    kind = rng.random()
    is_house, is_flat = int(kind < 0.55), int(0.55 <= kind < 0.95)
    is_unknown = 1 - is_house - is_flat
    garden = int(rng.random() < (0.8 if is_house else 0.1))
    parking = int(rng.random() < 0.3 + 0.4 * (1 - d))
    per_m2 = (1_500 + 4_000 * d) * (1.15 if is_house else 1.0) * rng.uniform(0.85, 1.15)
    price = round(living * per_m2, -3)
    return (postcode, living, int(price), bedrooms, bathrooms, kitchen, is_house, is_flat, is_unknown, garden, parking)


def _shop(rng: random.Random, postcode: int, d: float) -> Row:
    """A shop: weekly opening hours, a price range rising with the postcode, three chain flags."""
    price_range = _clamp(1 + int(2 * d + rng.random()), 1, 3)
    return (postcode, rng.randint(40, 100), price_range,
            int(rng.random() < 0.3), int(rng.random() < 0.35), int(rng.random() < 0.1 + 0.2 * d))


def _institution(rng: random.Random, postcode: int, d: float) -> Row:
    """An educational institution: one of 12 kinds and a number of pupils."""
    return (postcode, rng.randint(0, 11), rng.randint(50, 2_000))


def _restaurant(rng: random.Random, postcode: int, d: float) -> Row:
    """A restaurant: weekly opening hours and a price range rising with the postcode."""
    return (postcode, rng.randint(30, 90), _clamp(1 + int(3 * d + rng.random()), 1, 4))


def _demographics(rng: random.Random, postcode: int, d: float) -> Row:
    """The postcode's salary, crime, unemployment rate (percent) and hospitals."""
    salary = _clamp(int(round(rng.gauss(22_000 + 30_000 * d, 4_000), -1)), 8_000, 200_000)
    crimes = rng.randint(0, int(200 * (1.2 - d)))
    unemployment = _tenths(rng.randint(10, 150 - int(80 * d)))
    return (postcode, salary, crimes, unemployment, rng.randint(0, 3))


def _transport(rng: random.Random, postcode: int, d: float) -> Row:
    """The postcode's bus lines, train stations and distance to the city centre (km)."""
    return (postcode, rng.randint(0, 5 + int(20 * d)), rng.randint(0, 1 + int(3 * d)),
            _tenths(rng.randint(1, 10 + int(400 * (1 - d)))))


_MAKERS: dict[str, Callable[[random.Random, int, float], Row]] = {
    "house": _house, "shop": _shop, "institution": _institution,
    "restaurant": _restaurant, "demographics": _demographics, "transport": _transport,
}


# --- database ---------------------------------------------------------------------------------


def create_tables(conn: psycopg.Connection, schema: str = "public", drop: bool = False, index: bool = True) -> None:
    """Create the six empty relations in ``schema`` (created if missing); ``drop`` replaces existing ones.

    ``index`` adds a btree index on ``postcode`` to each, which a view's delta queries probe.
    """
    for table in TABLES:
        create_table(conn, schema, table, COLUMNS[table], drop=drop)
        if index:
            create_index(conn, schema, table, JOIN_COLUMN)


def generate(conn: psycopg.Connection, scale: int, seed: int = 0, schema: str = "public",
             postcodes: int = POSTCODES, *, drop: bool = False, index: bool = True) -> dict[str, int]:
    """Create the six relations in ``schema`` and fill them with COPY; returns the row count of each.

    One transaction (a savepoint if the connection is already in one), so a failure leaves
    nothing behind. Indexes are built after the COPY, which is faster than maintaining them
    during it, and the tables are ANALYZEd.
    """
    _check_positive("scale", scale)
    _check_positive("postcodes", postcodes)
    counts: dict[str, int] = {}
    with conn.transaction():
        create_tables(conn, schema, drop=drop, index=False)
        for table in TABLES:
            counts[table] = copy_rows(conn, schema, table, COLUMNS[table], rows(table, scale, seed, postcodes))
        if index:
            for table in TABLES:
                create_index(conn, schema, table, JOIN_COLUMN)
        analyze(conn, schema, TABLES)
    return counts


def insert(conn: psycopg.Connection, table: str, batch: list[Row], schema: str = "public") -> int:
    """Apply one batch of :func:`stream` (COPY, which fires the tables' triggers); returns its size."""
    _check_table(table)
    return copy_rows(conn, schema, table, COLUMNS[table], batch)


def _check_table(table: str) -> None:
    if table not in COLUMNS:
        raise ValueError(f"unknown Housing table {table!r}: expected one of {', '.join(TABLES)}")


def _check_positive(name: str, value: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer, not {value!r}")
