"""What ``verify`` (and Spark's ``validate``) compare a view against: the rows of its query
evaluated in plain SQL over the base tables pinned by oid (never the stored SQL text, whose names
the caller's search_path could lead elsewhere), matched as bags; float8 values agree to 1e-9
relative, since sums added in another order round otherwise.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import psycopg
from psycopg import sql

from pgivm.catalog import views as catalog
from pgivm.query.resolve import ResolvedView
from pgivm.systems import common

Row = tuple[Any, ...]


# From this many tables on, a one-value view's recount is planned by PostgreSQL's genetic search:
# the exhaustive one took 80 s on the 9-table recount of a Loomis-Whitney count of degree 9 (0.16 s
# genetic), each pair of tables joined on 7 columns.
GENETIC_FROM = 7


def recount(conn: psycopg.Connection, record: catalog.ViewRecord, resolved: ResolvedView) -> int | None:
    """A one-value view's figure (a triangle count, a Loomis-Whitney count) recomputed in plain SQL."""
    triangle_shape = resolved.query.analysis.triangle
    if triangle_shape is None or triangle_shape.packed:  # a Loomis-Whitney count, a 3R³ over tuples: its plain SQL
        from pgivm.query.plain import plain_query

        if len(resolved.query.atoms) >= GENETIC_FROM:  # (in verify's transaction: for it alone)
            conn.execute("SELECT pg_catalog.set_config('geqo_threshold', '2', true)")
        value = conn.execute(plain_query(resolved), prepare=False).fetchone()
        return None if value is None or value[0] is None else int(value[0])
    triangle = common.triangle_view(resolved)
    row = conn.execute(common.count_query(triangle)).fetchone()
    count = int(row[0]) if row else 0
    return None if count == 0 and triangle.query.aggregate == "sum" else count  # sum(1) of no rows is NULL


def float_key(value: float) -> float | str:
    """A float8 rounded to 10 digits for bag comparison; NaN as one value (it never equals itself)."""
    return "NaN" if value != value else float(f"{value:.9e}")


def floats_agree(a: float, b: float) -> bool:
    """Equal to 1e-9 relative; NaN agrees with NaN, and an infinity only with itself."""
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def values_agree(a: Any, b: Any) -> bool:
    return floats_agree(a, b) if isinstance(a, float) and isinstance(b, float) else a == b


def _float_differences(mine: list[Row], theirs: list[Row]) -> list[Row]:
    """Rows of either side without a partner on the other, floats agreeing to 1e-9."""
    def normalized(rows: list[Row]) -> Counter[Row]:
        return Counter(tuple(float_key(v) if isinstance(v, float) else v for v in r) for r in rows)

    if normalized(mine) == normalized(theirs):
        return []
    # rounding at a digit boundary can split equal values: pair the rows up by their exact columns
    def key(r: Row) -> Row:
        return tuple(v for v in r if not isinstance(v, float))

    by_key: dict[Row, list[Row]] = {}
    for r in sorted(theirs, key=repr):
        by_key.setdefault(key(r), []).append(r)
    differences = []
    for r in sorted(mine, key=repr):
        candidates = by_key.get(key(r), [])
        match = next((c for c in candidates if all(values_agree(a, b) for a, b in zip(r, c))), None)
        if match is None:
            differences.append(("view", *r))
        else:
            candidates.remove(match)
    return differences + [("plain sql", *r) for rs in by_key.values() for r in rs]


def compare_result(conn: psycopg.Connection, record: catalog.ViewRecord, resolved: ResolvedView) -> tuple[int, list[Row]]:
    """The view's rows against the plain SQL of its model (``pgivm.query.plain``): the recount's
    number of rows and up to 20 rows that differ, each headed by the side it is on."""
    from pgivm.install import uses_cofactor
    from pgivm.query.plain import plain_query

    types = (resolved.output_types or {}).values()
    has_floats = uses_cofactor(resolved.query) or "double precision" in types or "real" in types
    view = sql.Identifier(record.view_schema, record.name)
    recount_query = plain_query(resolved)
    row = conn.execute(sql.SQL("SELECT count(*) FROM ({}) AS q").format(recount_query)).fetchone()
    total = int(row[0]) if row else 0
    if has_floats:
        mine = conn.execute(sql.SQL("SELECT * FROM {}").format(view), prepare=False).fetchall()
        theirs = conn.execute(recount_query, prepare=False).fetchall()
        return total, _float_differences(mine, theirs)[:20]
    query = sql.SQL("(SELECT 'view' AS side, * FROM {v} EXCEPT ALL SELECT 'view', * FROM ({p}) AS q) UNION ALL "
                    "(SELECT 'plain sql', * FROM ({p}) AS q EXCEPT ALL SELECT 'plain sql', * FROM {v}) LIMIT 20").format(
        v=view, p=recount_query)
    return total, [tuple(r) for r in conn.execute(query, prepare=False).fetchall()]


def bag_differences(mine: list[Row], theirs: list[Row], sides: tuple[str, str] = ("view", "spark")) -> list[Row]:
    """The rows of either bag without a partner in the other, each headed by its side, numbers
    compared as floats to 1e-9 relative (Spark's avg is a double, PostgreSQL's numeric; sums of
    floats differ in their last bits with the order of addition)."""
    def norm(row: Row) -> Row:
        return tuple(float(v) if isinstance(v, (int, float)) or type(v).__name__ == "Decimal" else v for v in row)

    def normalized(rows: list[Row]) -> list[tuple[Row, Row]]:  # (normalized, as given), in one order
        return sorted(((norm(r), r) for r in rows), key=lambda pair: repr(pair[0]))

    unmatched = normalized(theirs)
    differences: list[Row] = []
    for key, row in normalized(mine):
        match = next((i for i, (other, _) in enumerate(unmatched) if all(
            (a is None and b is None) or values_agree(a, b) for a, b in zip(key, other))), None)
        if match is None:
            differences.append((sides[0], *row))
        else:
            unmatched.pop(match)
    return differences + [(sides[1], *r) for _, r in unmatched]
