"""Workload ``ivme-family``, fifth part: a count over three relations whose pairs join on tuples
([L] Appendix H.1, Definition 40): the 3-path count of the fourth part with R and S joined on two
columns (b and x, x a function of b) and a label g of all three tables, so that B = (b, x, g) and
C = (c, g). The data is the fourth part's, once per label: the same skew, twice the size. IVMε runs
the 3-path's strategy over the tuples, kept as composite values; the paper's exponents are the
3-path's.
"""

from __future__ import annotations

from pgivm.bench import three_path
from pgivm.bench.common import Strategy
from pgivm.bench.family import Database, Update, Workload

QUERY = ("SELECT count(*) FROM r JOIN s ON r.b = s.b AND r.x = s.x AND r.g = s.g "
         "JOIN t ON s.c = t.c AND t.g = s.g")
TABLES = {"r": ("b", "x", "g"), "s": ("b", "x", "c", "g"), "t": ("c", "g")}
LABELS = 2


def generate(n: int, inserts: int, seed: int = 1) -> Database:
    """The 3-path's database at size n under each label, its heavy b-values heavy at the N of all."""
    base = three_path.generate(n, inserts, seed, copies=LABELS)

    def labelled(table: str, row: tuple[int, ...], g: int) -> tuple[int, ...]:
        if table == "r":
            return (row[0], row[0] % 3, g)
        if table == "s":
            return (row[0], row[0] % 3, row[1], g)
        return (row[0], g)

    rows = {table: [labelled(table, row, g) for g in range(LABELS) for row in base.rows[table]] for table in base.rows}
    updates = [Update(u.table, labelled(u.table, u.row, i % LABELS)) for i, u in enumerate(base.probes + base.stream)]
    return Database(rows, updates[len(base.probes):], updates[:len(base.probes)])


WORKLOAD = Workload(
    title="the 3-path count over tuples (3R², H.1)", query=QUERY, tables=TABLES,
    strategies=(Strategy(None), Strategy("ivme", 0.5), Strategy("fivm"), Strategy("first-order")),
    predicted={"ivme": 0.5, "fivm": 1.0, "first-order": 1.0}, generate=generate, stream_label="R(hub) and T(hub)")
