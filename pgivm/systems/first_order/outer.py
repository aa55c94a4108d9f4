"""First-order delta rules for a FROM clause with outer joins (issue 22).

A LEFT, RIGHT or FULL join is not linear in its NULL-extended side: a row of the kept side shows
once NULL-extended while nothing matches it, and that row goes when the first match arrives. The
joins are read left to right as PostgreSQL reads them, P_k = P_{k-1} ⋈_k A_k ON θ_k, and a change
of one atom A_i goes up the chain as a signed bag of joined rows D_k (the rules of Griffin and
Kumar's change propagation for outer joins, in the form of a difference new − old):

  k = i   D_i = P_{i-1} ⋈θ δA_i                          the rows δA_i matches
              ⊎ (LEFT, FULL)  for each row l of P_{i-1} that a row of δA_i matches: l NULL-extended,
                  +1 if it matches nothing now and did before, −1 if the other way round
              ⊎ (RIGHT, FULL) each row of δA_i that matches nothing in P_{i-1}, NULL-extended
  k > i   D_k = D_{k-1} ⋈θ A_k
              ⊎ (LEFT, FULL)  each row of D_{k-1} that matches nothing in A_k, NULL-extended: the
                  kept side is linear, a row's extension depends on A_k alone
              ⊎ (RIGHT, FULL) for each row a of A_k that a row of D_{k-1} matches: a NULL-extended,
                  +1 if it matches nothing in P_{k-1} now and did before, −1 the other way round

"Before" is now less the change: a row's number of matches before is its number now less the
signed sum of its matches in the change. WHERE then holds on D_n as on any joined row. Every table
other than A_i is read as it is now (immediate maintenance: the statement has changed A_i's table
alone), so the states P_k are plain joins of the base tables; but for a self-join through
[NOT] EXISTS (``WHERE NOT EXISTS (SELECT FROM r AS r2 WHERE r2.b = r.b AND r2.a > r.a)``), whose
test atom of A_i's table comes later and is read as it was before the statement (the order of a
self-join's terms, as in ``cq.py``): a signed bag, tested by its net count. A shown atom of A_i's
table after it (``r LEFT JOIN r AS r2``) is read the same way, as its rows before the statement,
one row each (``cq._term_chain``): the rules hold for one changed atom whatever fixed state the
others are read at, and the terms of a self-join's atoms add up to its change.

A semi-join (EXISTS, IN) or anti-join (NOT EXISTS, NOT IN) step keeps the rows so far that
match some (no) row of its atom: a row so far that δA_i matches shows or goes as its number of
matches leaves 0 or reaches it (k = i); a changed row so far keeps its test's answer (k > i).

Each D_k's columns are its shown atoms' columns, named ``position.column``, and ``mult``.
"""

from __future__ import annotations

from collections.abc import Callable

from psycopg import sql

from pgivm.query.cq import ColumnRef, ConjunctiveQuery, JoinStep
from pgivm.query.plain import on_condition
from pgivm.systems.fivm import maintain


def column_name(cq: ConjunctiveQuery, ref: ColumnRef) -> str:
    """A joined row's column in D_k and P_k: the atom's position, a dot, the column (an alias may
    hold a dot itself; a position does not, so no two names clash)."""
    return f"{[a.alias for a in cq.atoms].index(ref.alias)}.{ref.column}"


class Chain:
    """The joins of one view, read left to right, for the delta query of one changed atom. A
    parenthesized join on the right side of a join is read the same way, inside: its rows are the
    right side's rows, its change (the signed rows D of its own joins) the right side's change."""

    def __init__(self, ctx: maintain.Context, table_rows: Callable[[str], sql.Composable]) -> None:
        """``table_rows(alias)``: the atom's rows as they are now, its columns named as in D_k."""
        self.ctx = ctx
        self.cq: ConjunctiveQuery = ctx.cq
        self.aliases = [a.alias for a in self.cq.atoms]
        self.shown = {a.alias for a in self.cq.shown_atoms}
        self.table_rows = table_rows
        self.operands = {o.position: o for o in self.cq.join_operands}
        self.joins_from: dict[int, list[int]] = {}  # the joins of the atoms from one on, left to right
        for o in self.cq.join_operands:
            self.joins_from.setdefault(o.left.start, []).append(o.position)

    def _shown(self, atoms: range) -> list[str]:
        """The atoms among ``atoms`` whose columns a joined row has."""
        return [self.aliases[i] for i in atoms if self.aliases[i] in self.shown]

    def _sides(self, k: int) -> tuple[list[str], list[str]]:
        """The shown atoms of join k's left side and of its right side."""
        o = self.operands[k]
        return self._shown(range(o.left.start, k)), self._shown(o.right)

    def _columns(self, aliases: list[str], relation: str | None) -> list[sql.Composable]:
        """The atoms' columns read from ``relation``, or (None) NULLs of their types."""
        out: list[sql.Composable] = []
        for alias in aliases:
            for c in self.ctx.capture_atom(alias).columns:
                name = sql.Identifier(column_name(self.cq, ColumnRef(alias, c.column)))
                out.append(sql.SQL("NULL::{} AS {}").format(sql.SQL(c.target_type), name) if relation is None else  # type: ignore[arg-type]
                           sql.SQL("{}.{}").format(sql.Identifier(relation), name))
        return out

    def _on(self, k: int) -> sql.Composable:
        """θ of join k over ``l`` (the rows of its left side) and ``r`` (those of its right side)."""
        right = {self.aliases[i] for i in self.operands[k].right}
        return on_condition(self.cq.joins[k - 1], lambda ref: sql.SQL("{}.{}").format(
            sql.Identifier("r" if ref.alias in right else "l"), sql.Identifier(column_name(self.cq, ref))))

    def _select(self, left: list[str], right: list[str], left_from: str | None, right_from: str | None,
                mult: sql.Composable, rest: sql.Composable) -> sql.Composable:
        items = [*self._columns(left, left_from), *self._columns(right, right_from), sql.SQL("{} AS mult").format(mult)]
        return sql.SQL("SELECT {} {}").format(sql.SQL(", ").join(items), rest)

    def _rows_from(self, lo: int) -> sql.Composable:
        """The atoms from ``lo`` on joined, as the tables are now: all of FROM (``lo`` 0), or a
        parenthesized join's (its first atom's position); atom ``lo`` alone where no join follows."""
        joins = self.joins_from.get(lo)
        return self.state(joins[-1]) if joins else self.table_rows(self.aliases[lo])

    def _left_rows(self, k: int) -> sql.Composable:
        """The rows of join k's left side, as the tables are now."""
        start = self.operands[k].left.start
        earlier = [p for p in self.joins_from[start] if p < k]
        return self.state(earlier[-1]) if earlier else self.table_rows(self.aliases[start])

    def _right_rows(self, k: int) -> sql.Composable:
        """The rows of join k's right side: its atom's, or its parenthesized join's."""
        return self._rows_from(k)

    def whole(self) -> sql.Composable:
        """The joined rows of FROM (and its EXISTS and IN tests), as the tables are now."""
        return self._rows_from(0)

    def state(self, k: int) -> sql.Composable:
        """P_k: the rows of join k's left side joined with those of its right side, as the tables are now."""
        step, (before, right) = self.cq.joins[k - 1], self._sides(k)
        if step.tests:
            return sql.SQL("(SELECT {} FROM {} AS l WHERE {}EXISTS (SELECT FROM {} AS r WHERE {}))").format(
                sql.SQL(", ").join(self._columns(before, "l")), self._left_rows(k),
                sql.SQL("NOT " if step.kind == "anti" else ""), self._right_rows(k), self._on(k))
        return sql.SQL("(SELECT {} FROM {} AS l {} JOIN {} AS r ON {})").format(
            sql.SQL(", ").join(self._columns(before, "l") + self._columns(right, "r")), self._left_rows(k),
            sql.SQL(step.kind.upper()), self._right_rows(k), self._on(k))

    @staticmethod
    def _matches(side: str, rows: sql.Composable, change: sql.Composable, on: sql.Composable) -> sql.Composable:
        """For each row the change touches, its matches (on ``side``): ``m.moved``, the signed
        number in the change, and ``n.now``, the number in ``rows`` now, counted to |moved| + 1 at
        most: enough to tell whether it is 0 and whether it was 0 before (now − moved), and a
        lookup of |moved| + 1 rows where a count would read every match (a group's hundreds)."""
        return sql.SQL("CROSS JOIN LATERAL (SELECT sum({a}.mult) AS moved FROM {change} AS {a} WHERE {on}) AS m "
                       "CROSS JOIN LATERAL (SELECT count(*) AS now FROM (SELECT FROM {rows} AS {a} WHERE {on} "
                       "LIMIT abs(m.moved) + 1) AS c) AS n").format(a=sql.Identifier(side), change=change, rows=rows, on=on)

    @staticmethod
    def _flip(shown_at_zero: bool = True) -> tuple[sql.Composable, sql.Composable]:
        """The signed change of a row that shows while its matches number 0 (NULL-extended, or
        kept by an anti-join), or (``shown_at_zero`` False) while they do not (a semi-join), and
        when it has one (``_matches``: now − moved were its matches before)."""
        test = sql.SQL("= 0" if shown_at_zero else "> 0")
        return (sql.SQL("CASE WHEN n.now {t} THEN 1 ELSE -1 END").format(t=test),
                sql.SQL("m.moved <> 0 AND (n.now {t}) <> (n.now - m.moved {t})").format(t=test))

    def delta(self, changed: int, delta_rows: sql.Composable, older: dict[str, sql.Composable] | None = None
              ) -> sql.Composable:
        """D_n for a change ``delta_rows`` (its columns named as in D_k, and mult) of atom
        ``changed``: a WITH query whose result is the signed joined rows. ``older``: the later
        [NOT] EXISTS atoms of the changed table, each as its rows before the statement (signed: the
        rows now, less the net change), which a self-join's term for atom ``changed`` reads."""
        ctes: list[sql.Composable] = []

        def cte(body: sql.Composable) -> sql.Identifier:
            name = sql.Identifier(f"pgivm_d{len(ctes)}")
            ctes.append(sql.SQL("{} AS ({})").format(name, body))
            return name

        def change_from(lo: int) -> sql.Composable:
            """The change of the rows of the atoms from ``lo`` on (those of a parenthesized join
            there), the changed atom among them."""
            current = cte(sql.SQL("SELECT * FROM {} AS d").format(delta_rows)) if changed == lo else None
            for k in self.joins_from.get(lo, []):
                if current is not None:
                    current = cte(self._passing(k, current, older or {}))
                elif changed in self.operands[k].right:
                    current = cte(self._arriving(k, delta_rows if k == changed and self.cq.joins[k - 1].width == 1
                                                 else change_from(k)))
            assert current is not None
            return current

        if self.cq.union_branches and changed > 0:
            last = cte(self._branch_change(changed, change_from))
        else:
            last = change_from(0)
        return sql.SQL("WITH {} SELECT * FROM {}").format(sql.SQL(", ").join(ctes), last)

    def _branch_change(self, changed: int, change_from: Callable[[int], sql.Composable]) -> sql.Composable:
        """D_n of a UNION read as joins (``pgivm.query.union``): the change of the changed atom's
        branch (its parenthesized join's own change) beside the one row of branch numbers it meets,
        every other branch's columns NULL. The general rules give the same rows and NULL-extended
        ones that WHERE drops (no branch marker set), but read every other branch's rows to do so."""
        k = next(p for p in self.joins_from[0] if changed in self.operands[p].right)
        first, branch = self.aliases[0], self._shown(self.operands[k].right)
        others = [a for a in self._shown(range(len(self.aliases))) if a not in (first, *branch)]
        items = [*self._columns([first], "l"), *self._columns(branch, "r"), *self._columns(others, None),
                 sql.SQL("r.mult AS mult")]
        return sql.SQL("SELECT {} FROM {} AS l JOIN {} AS r ON {}").format(
            sql.SQL(", ").join(items), self.table_rows(self.aliases[0]), change_from(k), self._on(k))

    def _arriving(self, k: int, change: sql.Composable) -> sql.Composable:
        """D_k where join k's right side changed (``change``): its left side's rows are as they are."""
        step, (before, right) = self.cq.joins[k - 1], self._sides(k)
        on, rows_so_far = self._on(k), self._left_rows(k)
        sign, flipped = self._flip(shown_at_zero=step.kind != "semi")
        # a row so far that the change matches shows or goes (NULL-extended, or by its test): see _flip
        flips = self._select(before, [] if step.tests else right, "l", None, sign, sql.SQL(
            "FROM {} AS l {} WHERE EXISTS (SELECT FROM {} AS r WHERE {}) AND {}").format(
            rows_so_far, self._matches("r", self._right_rows(k), change, on), change, on, flipped))
        if step.tests:
            return flips
        parts = [self._select(before, right, "l", "r", sql.SQL("r.mult"), sql.SQL(
            "FROM {} AS l JOIN {} AS r ON {}").format(rows_so_far, change, on))]
        if step.kind in ("left", "full"):
            parts.append(flips)
        if step.kind in ("right", "full"):
            parts.append(self._select(before, right, None, "r", sql.SQL("r.mult"), sql.SQL(
                "FROM {} AS r WHERE NOT EXISTS (SELECT FROM {} AS l WHERE {})").format(change, rows_so_far, on)))
        return sql.SQL(" UNION ALL ").join(parts)

    def _passing(self, k: int, change: sql.Composable, older: dict[str, sql.Composable]) -> sql.Composable:
        """D_k where join k's left side changed by ``change`` and its right side is as it is (or,
        in ``older``, as it was before the statement)."""
        step, (before, right) = self.cq.joins[k - 1], self._sides(k)
        on, rows = self._on(k), self._right_rows(k)
        if step.tests and step.alias in older:  # the table's rows before: a net count of signed rows
            return self._select(before, [], "l", None, sql.SQL("l.mult"), sql.SQL(
                "FROM {} AS l WHERE (SELECT coalesce(sum(r.mult), 0) FROM {} AS r WHERE {}) {}").format(
                change, older[step.alias], on, sql.SQL("= 0" if step.kind == "anti" else "> 0")))
        if step.tests:  # linear in the rows so far: each keeps its test's answer
            return self._select(before, [], "l", None, sql.SQL("l.mult"), sql.SQL(
                "FROM {} AS l WHERE {}EXISTS (SELECT FROM {} AS r WHERE {})").format(
                change, sql.SQL("NOT " if step.kind == "anti" else ""), rows, on))
        parts = [self._select(before, right, "l", "r", sql.SQL("l.mult"), sql.SQL(
            "FROM {} AS l JOIN {} AS r ON {}").format(change, rows, on))]
        if step.kind in ("left", "full"):
            parts.append(self._select(before, right, "l", None, sql.SQL("l.mult"), sql.SQL(
                "FROM {} AS l WHERE NOT EXISTS (SELECT FROM {} AS r WHERE {})").format(change, rows, on)))
        if step.kind in ("right", "full"):  # a row of the right side that the change matches: see _flip
            sign, flipped = self._flip()
            parts.append(self._select(before, right, None, "r", sign, sql.SQL(
                "FROM {} AS r {} WHERE EXISTS (SELECT FROM {} AS l WHERE {}) AND {}").format(
                rows, self._matches("l", self._left_rows(k), change, on), change, on, flipped)))
        return sql.SQL(" UNION ALL ").join(parts)
