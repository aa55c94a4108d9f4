"""Benchmark: how to store F-IVM's degree-m matrix ring payloads in PostgreSQL.

F-IVM (Nikolic & Olteanu, SIGMOD 2018) maintains linear regression over a join with payloads in the
degree-m matrix ring (notes: ``shared/notes/f-ivm.md`` §1.4.3). A payload is ``(c, s, Q)`` with
c an integer, s in R^m and Q in R^{m×m} (symmetric), and

    a + b = (c_a + c_b, s_a + s_b, Q_a + Q_b)
    a * b = (c_a c_b, c_b s_a + c_a s_b, c_b Q_a + c_a Q_b + s_a s_bᵀ + s_b s_aᵀ)
    lift_j(x) = (1, x e_j, x² e_j e_jᵀ)

This module measures the candidate encodings of such payloads in view tables, on a star join
F(k, x1..x_h) ⋈ D(k, x_{h+1}..x_m) with h = m // 2 and the view tree

    leaf_F[k] = Σ_{rows of F with key k} lift_1(x1) * ... * lift_h(x_h)
    leaf_D[k] = Σ_{rows of D with key k} lift_{h+1}(x_{h+1}) * ... * lift_m(x_m)
    root      = Σ_k leaf_F[k] * leaf_D[k]

It times the build of the three views, then batches of fact inserts maintained incrementally
(δleaf_F from the batch grouped by k, upserted into leaf_F with ring addition; δroot =
Σ_k δleaf_F[k] * leaf_D[k] added into the root), and checks every encoding's root against a plain
SQL recomputation (count(*), sum(x_i), sum(x_i * x_j) over F ⋈ D): a mismatch raises
:class:`EncodingMismatch`.

Encodings (the ``encodings`` argument of :func:`run`; default: all of them):

A. One column per entry (``c bigint``, ``s<j> float8``, ``q<i>_<j> float8`` for i ≤ j), ring
   operations generated as inline SQL expressions, ⊕ by PostgreSQL's native ``sum``.

   ``columns``        the generator knows which entries are structurally zero (leaf_F only has
                      entries of F's features, leaf_D of D's; the paper stores "only blocks of
                      matrices with non-zero values") and neither stores nor computes them.
   ``columns_dense``  every view has all 1 + m + m(m+1)/2 columns and the generic product
                      formula: the same information content as the arrays below.

B. ``float8[]`` arrays holding every entry (dense: the generic functions cannot know the zero
   blocks), with ring operations as functions and ⊕ as a custom aggregate. Two layouts:

   ``packed``  one ``p float8[]`` = [c, s_1..s_m, q_11, q_12, ..., q_1m, q_22, ..., q_mm]
               (upper triangle, row-major); ring_add / ring_sum (CREATE AGGREGATE) act on it whole.
   ``split``   ``c bigint, s float8[], q float8[]`` (q packed as above); ⊕ is componentwise:
               ``sum(c)`` and ``vec_sum`` (CREATE AGGREGATE over vec_add) on s and on q.

   and two implementations of the functions (ring_add / vec_add, ring_mul, lift, lift_block):

   ``sql``      LANGUAGE sql, array arithmetic by ``array_agg`` over multi-argument ``unnest``
                (faster than ``ARRAY(SELECT ...)`` and than an SQL-standard ``RETURN`` body here;
                SQL functions with sub-queries are not inlined, and declaring them RETURNS TABLE
                so that LATERAL calls inline made the build ~3x slower).
   ``plpgsql``  LANGUAGE plpgsql loops over subscripts (arrays are expanded in place; the
                aggregate's state is taken over read/write, not copied, on every call).

   giving ``packed_sql``, ``packed_plpgsql``, ``split_sql``, ``split_plpgsql``. All functions are
   IMMUTABLE STRICT PARALLEL SAFE and the aggregates have a combine function (parallel
   aggregation is allowed, as it is for native ``sum``).

   ``packed_inline`` is a hybrid for reference: packed-array storage, but every operation is
   generated per entry (``ARRAY[sum(x1), ...]``, ``ARRAY[l.p[1] + excluded.p[1], ...]``) with no
   function calls, i.e. encoding A's code over B's storage.

In every encoding the per-row payload of a leaf is the closed form of the product of its features'
lifts, (1, x restricted to the block, x xᵀ restricted to the block): the columns encodings inline it
and the array encodings call ``lift_block`` (which :func:`_check_ring_functions` checks against
``lift`` and ``ring_mul`` and against a Python reference of the ring, before any timing).

What is timed: each build statement (CREATE TABLE AS, ADD PRIMARY KEY) of the three views; per
batch, the one maintenance statement (δleaf_F, upsert, δroot, root update) in its own transaction
(autocommit, prepared), reading the batch from the staged inserts ``f_batches`` by its number;
the insertion of the batch into F itself is the same for every encoding and is not timed. Autovacuum is off on the view
tables (no background vacuum in the timed stream), and the session's ``work_mem`` is raised to
64MB (so that no encoding's hash aggregation spills).
"""

from __future__ import annotations

import argparse
import math
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from pgivm.connection import connect, search_path_of

__all__ = ["ENCODINGS", "EncodingMismatch", "main", "run"]

ENCODINGS = (
    "columns",
    "columns_dense",
    "packed_plpgsql",
    "packed_sql",
    "split_plpgsql",
    "split_sql",
    "packed_inline",
)
#: Relative tolerance of the final check (count must match exactly).
REL_TOL = 1e-9
WORK_MEM = "64MB"
VIEW_TABLES = ("leaf_f", "leaf_d", "root")
# The batch being applied, as the maintenance statement reads it: one batch of the staged inserts
# (as a trigger would read its transition table). A parameter rather than a table refilled per
# batch keeps the prepared statement's plan valid (TRUNCATE would invalidate it every batch).
DELTA_SOURCE = "(SELECT * FROM f_batches WHERE f_batches.b = %(b)s) AS f_delta"


class EncodingMismatch(AssertionError):
    """An encoding's root payload differs from the plain SQL recomputation."""


# --- shape of the problem ---------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """m features; F holds features 1..h, D holds h+1..m; q entries (i, j), i ≤ j, row-major."""

    m: int

    @property
    def h(self) -> int:
        return self.m // 2

    @property
    def f_features(self) -> list[int]:
        return list(range(1, self.h + 1))

    @property
    def d_features(self) -> list[int]:
        return list(range(self.h + 1, self.m + 1))

    @property
    def pairs(self) -> list[tuple[int, int]]:
        return [(i, j) for i in range(1, self.m + 1) for j in range(i, self.m + 1)]

    @property
    def n(self) -> int:
        """Number of q entries, m(m+1)/2."""
        return self.m * (self.m + 1) // 2

    @property
    def width(self) -> int:
        """Entries of a whole payload: 1 + m + m(m+1)/2."""
        return 1 + self.m + self.n

    def qpos(self, i: int, j: int) -> int:
        """1-based position of q_ij (i ≤ j) in the packed upper triangle."""
        return (i - 1) * self.m - (i - 1) * (i - 2) // 2 + (j - i) + 1

    def columns(self, features: Sequence[int] | None = None) -> list[str]:
        """Column names of the entries that can be non-zero when only ``features`` are lifted."""
        present = set(self.f_features + self.d_features if features is None else features)
        return (["c"] + [f"s{j}" for j in range(1, self.m + 1) if j in present]
                + [f"q{i}_{j}" for i, j in self.pairs if i in present and j in present])


Payload = tuple[int, list[float], dict[tuple[int, int], float]]  # c, s[0..m-1], q[(i, j)]


def _int_array(values: Sequence[int]) -> str:
    return "'{" + ",".join(map(str, values)) + "}'::int[]"


def _xs(shape: Shape, features: Sequence[int], alias: str) -> str:
    return "ARRAY[" + ", ".join(f"{alias}.x{j}" for j in features) + "]"


def _zero_packed(shape: Shape) -> str:
    return f"array_fill(0::float8, ARRAY[{shape.width}])"


# --- encoding A: one column per entry ---------------------------------------------------------


class ColumnsEncoding:
    """Generated per-entry SQL; ``dense`` stores and computes the structural zeros too."""

    def __init__(self, shape: Shape, dense: bool) -> None:
        self.shape, self.dense = shape, dense
        self.name = "columns_dense" if dense else "columns"
        self.f_cols = shape.columns(None if dense else shape.f_features)
        self.d_cols = shape.columns(None if dense else shape.d_features)
        self.root_cols = shape.columns()

    def functions(self) -> list[str]:
        return []

    def _leaf_select(self, features: Sequence[int], cols: Sequence[str], source: str) -> str:
        """Σ over the rows of ``source`` (a FROM item) per k of the product of the lifts of ``features``."""
        present = set(features)
        exprs = []
        for col in cols:
            if col == "c":
                exprs.append("count(*) AS c")
            elif col.startswith("s"):
                j = int(col[1:])
                exprs.append(f"sum(x{j}) AS {col}" if j in present else f"0::float8 AS {col}")
            else:
                i, j = map(int, col[1:].split("_"))
                exprs.append(f"sum(x{i} * x{j}) AS {col}" if i in present and j in present
                             else f"0::float8 AS {col}")
        return f"SELECT k, {', '.join(exprs)} FROM {source} GROUP BY k"

    def _product_sums(self, a: str, b: str) -> list[str]:
        """sum over the join of a * b, entry by entry, as 'expr AS col' (a: F side, b: D side)."""
        have_a, have_b = set(self.f_cols), set(self.d_cols)

        def term(alias: str, col: str, have: set[str]) -> str | None:
            return f"{alias}.{col}" if col in have else None

        exprs = []
        for col in self.root_cols:
            if col == "c":
                exprs.append(f"sum({a}.c * {b}.c)::bigint AS c")
                continue
            terms: list[str] = []
            if col.startswith("s"):
                if col in have_a:
                    terms.append(f"{b}.c * {a}.{col}")
                if col in have_b:
                    terms.append(f"{a}.c * {b}.{col}")
            else:
                i, j = map(int, col[1:].split("_"))
                if col in have_a:
                    terms.append(f"{b}.c * {a}.{col}")
                if col in have_b:
                    terms.append(f"{a}.c * {b}.{col}")
                si, sj = f"s{i}", f"s{j}"
                if i == j:
                    if si in have_a and si in have_b:
                        terms.append(f"2 * {a}.{si} * {b}.{si}")
                else:
                    for x, y in ((a, b), (b, a)):  # s_a s_bᵀ + s_b s_aᵀ at (i, j)
                        hx, hy = (have_a, have_b) if x == a else (have_b, have_a)
                        if si in hx and sj in hy:
                            terms.append(f"{x}.{si} * {y}.{sj}")
            exprs.append(f"sum({' + '.join(terms) or '0::float8'}) AS {col}")
        return exprs

    def build(self) -> list[str]:
        s = self.shape
        root = [f"coalesce({e.rsplit(' AS ', 1)[0]}, 0) AS {e.rsplit(' AS ', 1)[1]}"
                for e in self._product_sums("a", "b")]
        return [
            f"CREATE TABLE leaf_f AS {self._leaf_select(s.f_features, self.f_cols, 'f')}",
            "ALTER TABLE leaf_f ADD PRIMARY KEY (k)",
            f"CREATE TABLE leaf_d AS {self._leaf_select(s.d_features, self.d_cols, 'd')}",
            "ALTER TABLE leaf_d ADD PRIMARY KEY (k)",
            f"CREATE TABLE root AS SELECT {', '.join(root)} FROM leaf_f AS a JOIN leaf_d AS b USING (k)",
        ]

    def maintain(self) -> str:
        cols = ", ".join(self.f_cols)
        sets = ", ".join(f"{c} = l.{c} + EXCLUDED.{c}" for c in self.f_cols)
        root_sets = ", ".join(f"{c} = root.{c} + r.{c}" for c in self.root_cols)
        return f"""
WITH dl AS MATERIALIZED ({self._leaf_select(self.shape.f_features, self.f_cols, DELTA_SOURCE)}),
up AS (
  INSERT INTO leaf_f AS l (k, {cols}) SELECT k, {cols} FROM dl
  ON CONFLICT (k) DO UPDATE SET {sets}
),
r AS (SELECT {', '.join(self._product_sums('dl', 'b'))} FROM dl JOIN leaf_d AS b USING (k))
UPDATE root SET {root_sets} FROM r WHERE r.c IS NOT NULL"""

    def read_root(self, conn: psycopg.Connection) -> Payload:
        row = conn.execute(f"SELECT {', '.join(self.root_cols)} FROM root").fetchone()
        assert row is not None, "root is empty"
        values = dict(zip(self.root_cols, row))
        s = [float(values[f"s{j}"]) for j in range(1, self.shape.m + 1)]
        q = {(i, j): float(values[f"q{i}_{j}"]) for i, j in self.shape.pairs}
        return int(values["c"]), s, q


# --- encoding B: float8[] arrays --------------------------------------------------------------


def _pl(body: str) -> str:
    return f"LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$\n{body}\n$fn$"


def _sql(body: str) -> str:
    return f"LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$\n{body}\n$fn$"


class ArrayEncoding:
    """float8[] payloads with ring functions and custom aggregates (or, for ``inline``, generated
    per-entry SQL over packed arrays)."""

    def __init__(self, shape: Shape, layout: str, impl: str) -> None:
        assert layout in ("packed", "split") and impl in ("sql", "plpgsql", "inline")
        assert impl != "inline" or layout == "packed"
        self.shape, self.layout, self.impl = shape, layout, impl
        self.name = f"{layout}_{impl}"

    # -- functions

    def functions(self) -> list[str]:
        if self.impl == "inline":
            return []
        s = self.shape
        m, n, w = s.m, s.n, s.width
        ii = _int_array([i for i, _ in s.pairs])
        jj = _int_array([j for _, j in s.pairs])
        # Offset making qpos(i, j) = base(i) + j; base(i) = (i-1)m - (i-1)(i-2)/2 - i + 1.
        base = f"(i - 1) * {m} - (i - 1) * (i - 2) / 2 - i + 1"
        out: list[str] = []
        if self.layout == "packed":
            # p[1] = c, p[1 + j] = s_j, p[1 + m + qpos(i, j)] = q_ij.
            if self.impl == "plpgsql":
                out.append(f"""CREATE FUNCTION ring_add(a float8[], b float8[]) RETURNS float8[] {_pl('''
BEGIN
  FOR i IN 1 .. cardinality(a) LOOP a[i] := a[i] + b[i]; END LOOP;
  RETURN a;
END''')}""")
                out.append(f"""CREATE FUNCTION ring_mul(a float8[], b float8[]) RETURNS float8[] {_pl(f'''
DECLARE ca float8 := a[1]; cb float8 := b[1]; r float8[] := a; p int := {m + 1};
BEGIN
  r[1] := ca * cb;
  FOR i IN 2 .. {m + 1} LOOP r[i] := cb * a[i] + ca * b[i]; END LOOP;
  FOR i IN 2 .. {m + 1} LOOP
    FOR j IN i .. {m + 1} LOOP
      p := p + 1;
      r[p] := cb * a[p] + ca * b[p] + a[i] * b[j] + b[i] * a[j];
    END LOOP;
  END LOOP;
  RETURN r;
END''')}""")
                out.append(f"""CREATE FUNCTION lift_block(first int, xs float8[]) RETURNS float8[] {_pl(f'''
DECLARE r float8[] := {_zero_packed(s)}; last int := first + cardinality(xs) - 1; b int;
BEGIN
  r[1] := 1;
  FOR i IN first .. last LOOP
    r[1 + i] := xs[i - first + 1];
    b := {m + 1} + {base};
    FOR j IN i .. last LOOP r[b + j] := xs[i - first + 1] * xs[j - first + 1]; END LOOP;
  END LOOP;
  RETURN r;
END''')}""")
            else:
                out.append(f"""CREATE FUNCTION ring_add(a float8[], b float8[]) RETURNS float8[] {_sql(
                    'SELECT array_agg(x + y) FROM unnest(a, b) AS t(x, y)')}""")
                out.append(f"""CREATE FUNCTION ring_mul(a float8[], b float8[]) RETURNS float8[] {_sql(f'''
SELECT ARRAY[a[1] * b[1]]
  || (SELECT array_agg(b[1] * x + a[1] * y) FROM unnest(a[2:{m + 1}], b[2:{m + 1}]) AS t(x, y))
  || (SELECT array_agg(b[1] * x + a[1] * y + a[1 + i] * b[1 + j] + b[1 + i] * a[1 + j])
        FROM unnest(a[{m + 2}:{w}], b[{m + 2}:{w}], {ii}, {jj}) AS t(x, y, i, j))''')}""")
                out.append(f"""CREATE FUNCTION lift_block(first int, xs float8[]) RETURNS float8[] {_sql(f'''
SELECT ARRAY[1::float8] || array_fill(0::float8, ARRAY[first - 1]) || xs
  || array_fill(0::float8, ARRAY[{m} - first + 1 - cardinality(xs)])
  || (SELECT array_agg(coalesce(xs[i - first + 1] * xs[j - first + 1], 0))
        FROM unnest({ii}, {jj}) AS t(i, j))''')}""")
            out.append("CREATE FUNCTION lift(j int, x float8) RETURNS float8[] "
                       + _sql("SELECT lift_block(j, ARRAY[x])"))
            out.append("CREATE AGGREGATE ring_sum(float8[]) (sfunc = ring_add, stype = float8[], "
                       "combinefunc = ring_add, parallel = safe)")
            return out
        # split: (c bigint, s float8[], q float8[])
        triple_args = "ca bigint, sa float8[], qa float8[], cb bigint, sb float8[], qb float8[]"
        triple_out = "OUT c bigint, OUT s float8[], OUT q float8[]"
        if self.impl == "plpgsql":
            out.append(f"""CREATE FUNCTION vec_add(a float8[], b float8[]) RETURNS float8[] {_pl('''
BEGIN
  FOR i IN 1 .. cardinality(a) LOOP a[i] := a[i] + b[i]; END LOOP;
  RETURN a;
END''')}""")
            out.append(f"""CREATE FUNCTION ring_mul({triple_args}, {triple_out}) {_pl(f'''
DECLARE p int := 0;
BEGIN
  c := ca * cb;
  s := sa;
  FOR i IN 1 .. {m} LOOP s[i] := cb * sa[i] + ca * sb[i]; END LOOP;
  q := qa;
  FOR i IN 1 .. {m} LOOP
    FOR j IN i .. {m} LOOP
      p := p + 1;
      q[p] := cb * qa[p] + ca * qb[p] + sa[i] * sb[j] + sb[i] * sa[j];
    END LOOP;
  END LOOP;
END''')}""")
            out.append(f"""CREATE FUNCTION lift_block(first int, xs float8[], {triple_out}) {_pl(f'''
DECLARE last int := first + cardinality(xs) - 1; b int;
BEGIN
  c := 1;
  s := array_fill(0::float8, ARRAY[{m}]);
  q := array_fill(0::float8, ARRAY[{n}]);
  FOR i IN first .. last LOOP
    s[i] := xs[i - first + 1];
    b := {base};
    FOR j IN i .. last LOOP q[b + j] := xs[i - first + 1] * xs[j - first + 1]; END LOOP;
  END LOOP;
END''')}""")
        else:
            out.append(f"""CREATE FUNCTION vec_add(a float8[], b float8[]) RETURNS float8[] {_sql(
                'SELECT array_agg(x + y) FROM unnest(a, b) AS t(x, y)')}""")
            out.append(f"""CREATE FUNCTION ring_mul({triple_args}, {triple_out}) {_sql(f'''
SELECT ca * cb,
  (SELECT array_agg(cb * x + ca * y) FROM unnest(sa, sb) AS t(x, y)),
  (SELECT array_agg(cb * x + ca * y + sa[i] * sb[j] + sb[i] * sa[j])
     FROM unnest(qa, qb, {ii}, {jj}) AS t(x, y, i, j))''')}""")
            out.append(f"""CREATE FUNCTION lift_block(first int, xs float8[], {triple_out}) {_sql(f'''
SELECT 1::bigint,
  array_fill(0::float8, ARRAY[first - 1]) || xs
    || array_fill(0::float8, ARRAY[{m} - first + 1 - cardinality(xs)]),
  (SELECT array_agg(coalesce(xs[i - first + 1] * xs[j - first + 1], 0))
     FROM unnest({ii}, {jj}) AS t(i, j))''')}""")
        out.append(f"CREATE FUNCTION lift(j int, x float8, {triple_out}) "
                   + _sql("SELECT * FROM lift_block(j, ARRAY[x])"))
        out.append(f"CREATE FUNCTION ring_add({triple_args}, {triple_out}) "
                   + _sql("SELECT ca + cb, vec_add(sa, sb), vec_add(qa, qb)"))
        out.append("CREATE AGGREGATE vec_sum(float8[]) (sfunc = vec_add, stype = float8[], "
                   "combinefunc = vec_add, parallel = safe)")
        return out

    # -- views

    def _leaf_select(self, features: Sequence[int], table: str, source: str | None = None) -> str:
        """Σ over the rows of ``table`` (alias; ``source`` is its FROM item if not the table itself)
        per k of the product of the lifts of ``features``."""
        s = self.shape
        xs = _xs(s, features, table)
        source = source or table
        t = table
        if self.impl == "inline":
            present = set(features)
            entries = ["count(*)::float8"]
            entries += [f"sum({t}.x{j})" if j in present else "0" for j in range(1, s.m + 1)]
            entries += [f"sum({t}.x{i} * {t}.x{j})" if i in present and j in present else "0"
                        for i, j in s.pairs]
            return f"SELECT {t}.k, ARRAY[{', '.join(entries)}]::float8[] AS p FROM {source} GROUP BY {t}.k"
        if self.layout == "packed":
            return (f"SELECT {t}.k, ring_sum(lift_block({features[0]}, {xs})) AS p "
                    f"FROM {source} GROUP BY {t}.k")
        return (f"SELECT {t}.k, sum(l.c)::bigint AS c, vec_sum(l.s) AS s, vec_sum(l.q) AS q "
                f"FROM {source} CROSS JOIN LATERAL lift_block({features[0]}, {xs}) AS l GROUP BY {t}.k")

    def _product_sum(self, a: str, b: str) -> str:
        """SELECT list and FROM tail of Σ_k a[k] * b[k] (a: F side, b: D side, aliases)."""
        s = self.shape
        if self.impl == "inline":
            m = s.m
            entries = [f"sum({a}.p[1] * {b}.p[1])"]
            entries += [f"sum({b}.p[1] * {a}.p[{1 + j}] + {a}.p[1] * {b}.p[{1 + j}])" for j in range(1, m + 1)]
            for i, j in s.pairs:
                t = 1 + m + s.qpos(i, j)
                entries.append(f"sum({b}.p[1] * {a}.p[{t}] + {a}.p[1] * {b}.p[{t}] + {a}.p[{1 + i}] * "
                               f"{b}.p[{1 + j}] + {b}.p[{1 + i}] * {a}.p[{1 + j}])")
            return f"ARRAY[{', '.join(entries)}] AS p"
        if self.layout == "packed":
            return f"ring_sum(ring_mul({a}.p, {b}.p)) AS p"
        return "sum(pr.c)::bigint AS c, vec_sum(pr.s) AS s, vec_sum(pr.q) AS q"

    def _product_from(self, a_table: str, a: str) -> str:
        tail = f"{a_table} AS {a} JOIN leaf_d AS b USING (k)"
        if self.layout == "split":
            tail += f" CROSS JOIN LATERAL ring_mul({a}.c, {a}.s, {a}.q, b.c, b.s, b.q) AS pr"
        return tail

    def build(self) -> list[str]:
        s = self.shape
        if self.layout == "split":
            root = (f"SELECT coalesce(sum(pr.c), 0)::bigint AS c, "
                    f"coalesce(vec_sum(pr.s), array_fill(0::float8, ARRAY[{s.m}])) AS s, "
                    f"coalesce(vec_sum(pr.q), array_fill(0::float8, ARRAY[{s.n}])) AS q "
                    f"FROM {self._product_from('leaf_f', 'a')}")
        else:
            root = (f"SELECT coalesce({self._product_sum('a', 'b').rsplit(' AS ', 1)[0]}, {_zero_packed(s)}) "
                    f"AS p FROM {self._product_from('leaf_f', 'a')}")
            if self.impl == "inline":  # ARRAY[sum(), ...] over an empty join is all NULLs, not NULL
                root = (f"SELECT coalesce(r.p, {_zero_packed(s)}) AS p FROM "
                        f"(SELECT CASE WHEN count(*) > 0 THEN {self._product_sum('a', 'b').rsplit(' AS ', 1)[0]} "
                        f"END AS p FROM {self._product_from('leaf_f', 'a')}) AS r")
        return [
            f"CREATE TABLE leaf_f AS {self._leaf_select(s.f_features, 'f')}",
            "ALTER TABLE leaf_f ADD PRIMARY KEY (k)",
            f"CREATE TABLE leaf_d AS {self._leaf_select(s.d_features, 'd')}",
            "ALTER TABLE leaf_d ADD PRIMARY KEY (k)",
            f"CREATE TABLE root AS {root}",
        ]

    def maintain(self) -> str:
        s = self.shape
        dl = self._leaf_select(s.f_features, "f_delta", DELTA_SOURCE)
        if self.layout == "split":
            return f"""
WITH dl AS MATERIALIZED ({dl}),
up AS (
  INSERT INTO leaf_f AS l (k, c, s, q) SELECT k, c, s, q FROM dl
  ON CONFLICT (k) DO UPDATE SET c = l.c + EXCLUDED.c, s = vec_add(l.s, EXCLUDED.s), q = vec_add(l.q, EXCLUDED.q)
),
r AS (SELECT {self._product_sum('dl', 'b')} FROM {self._product_from('dl', 'dl')})
UPDATE root SET c = root.c + r.c, s = vec_add(root.s, r.s), q = vec_add(root.q, r.q)
FROM r WHERE r.c IS NOT NULL"""
        if self.impl == "inline":
            add = ", ".join(f"l.p[{t}] + EXCLUDED.p[{t}]" for t in range(1, s.width + 1))
            root_add = ", ".join(f"root.p[{t}] + r.p[{t}]" for t in range(1, s.width + 1))
            return f"""
WITH dl AS MATERIALIZED ({dl}),
up AS (
  INSERT INTO leaf_f AS l (k, p) SELECT k, p FROM dl
  ON CONFLICT (k) DO UPDATE SET p = ARRAY[{add}]
),
r AS (SELECT {self._product_sum('dl', 'b')} FROM {self._product_from('dl', 'dl')})
UPDATE root SET p = ARRAY[{root_add}] FROM r WHERE r.p[1] IS NOT NULL"""
        return f"""
WITH dl AS MATERIALIZED ({dl}),
up AS (
  INSERT INTO leaf_f AS l (k, p) SELECT k, p FROM dl
  ON CONFLICT (k) DO UPDATE SET p = ring_add(l.p, EXCLUDED.p)
),
r AS (SELECT {self._product_sum('dl', 'b')} FROM {self._product_from('dl', 'dl')})
UPDATE root SET p = ring_add(root.p, r.p) FROM r WHERE r.p IS NOT NULL"""

    def read_root(self, conn: psycopg.Connection) -> Payload:
        s = self.shape
        if self.layout == "split":
            row = conn.execute("SELECT c, s, q FROM root").fetchone()
            assert row is not None, "root is empty"
            c, sv, qv = row
        else:
            row = conn.execute("SELECT p FROM root").fetchone()
            assert row is not None, "root is empty"
            p = row[0]
            assert len(p) == s.width, f"root payload has {len(p)} entries, not {s.width}"
            c, sv, qv = p[0], p[1:1 + s.m], p[1 + s.m:]
            assert float(c).is_integer(), f"root count {c} is not an integer"
        assert len(sv) == s.m and len(qv) == s.n, f"root payload has {len(sv)} + {len(qv)} entries"
        return int(c), [float(x) for x in sv], {pair: float(qv[t]) for t, pair in enumerate(s.pairs)}


def make_encoding(name: str, shape: Shape) -> ColumnsEncoding | ArrayEncoding:
    if name in ("columns", "columns_dense"):
        return ColumnsEncoding(shape, dense=name == "columns_dense")
    layout, _, impl = name.partition("_")
    if name not in ENCODINGS:
        raise ValueError(f"unknown encoding {name!r}; choose from {', '.join(ENCODINGS)}")
    return ArrayEncoding(shape, layout, impl)


# --- the ring in Python (reference for the function checks) -----------------------------------


def _py_mul(shape: Shape, a: Payload, b: Payload) -> Payload:
    ca, sa, qa = a
    cb, sb, qb = b
    s = [cb * x + ca * y for x, y in zip(sa, sb)]
    q = {(i, j): cb * qa[i, j] + ca * qb[i, j] + sa[i - 1] * sb[j - 1] + sb[i - 1] * sa[j - 1]
         for i, j in shape.pairs}
    return ca * cb, s, q


def _py_lift(shape: Shape, j: int, x: float) -> Payload:
    s = [x if t == j else 0.0 for t in range(1, shape.m + 1)]
    q = {(a, b): (x * x if a == b == j else 0.0) for a, b in shape.pairs}
    return 1, s, q


def _decode(shape: Shape, enc: ArrayEncoding, value: Any) -> Payload:
    if enc.layout == "packed":
        p = value
        return int(p[0]), [float(x) for x in p[1:1 + shape.m]], dict(zip(shape.pairs, map(float, p[1 + shape.m:])))
    c, s, q = value
    return int(c), [float(x) for x in s], dict(zip(shape.pairs, map(float, q)))


def _check_ring_functions(conn: psycopg.Connection, enc: ArrayEncoding, rng: random.Random) -> None:
    """lift, ring_mul and lift_block against the Python ring, on one random row per relation."""
    shape = enc.shape
    for features in (shape.f_features, shape.d_features):
        xs = [rng.uniform(-3, 3) for _ in features]
        expected = _py_lift(shape, features[0], xs[0])
        for j, x in zip(features[1:], xs[1:]):
            expected = _py_mul(shape, expected, _py_lift(shape, j, x))
        lifts = [f"lift({j}, {x!r}::float8)" for j, x in zip(features, xs)]
        block = f"lift_block({features[0]}, ARRAY[{', '.join(repr(x) + '::float8' for x in xs)}])"
        if enc.layout == "packed":
            chain = lifts[0]
            for lift in lifts[1:]:
                chain = f"ring_mul({chain}, {lift})"
            got_chain, got_block = conn.execute(f"SELECT {chain}, {block}").fetchone()  # type: ignore[misc]
        else:
            # (SELECT ROW(...) FROM lift(...) a, LATERAL ring_mul(a..., b...) ...) folded left to right.
            parts = [f"{lifts[0]} AS t0"]
            prev = "t0"
            for t, lift in enumerate(lifts[1:], start=1):
                parts.append(f"{lift} AS l{t}")
                parts.append(f"LATERAL ring_mul({prev}.c, {prev}.s, {prev}.q, l{t}.c, l{t}.s, l{t}.q) AS t{t}")
                prev = f"t{t}"
            row = conn.execute(
                f"SELECT {prev}.c, {prev}.s, {prev}.q, bl.c, bl.s, bl.q FROM {', '.join(parts)}, {block} AS bl"
            ).fetchone()
            assert row is not None
            got_chain, got_block = row[:3], row[3:]
        for label, got in (("ring_mul of lifts", got_chain), ("lift_block", got_block)):
            mismatches = _compare(shape, _decode(shape, enc, got), expected)
            if mismatches:
                raise EncodingMismatch(f"{enc.name}: {label} differs from the ring's definition: {mismatches[:5]}")
    # Dense operands too: products of lifts never exercise every term (e.g. s_b s_aᵀ is zero above
    # the diagonal when a's features precede b's).
    def payload() -> Payload:
        return (rng.randint(-5, 5), [rng.uniform(-3, 3) for _ in range(shape.m)],
                {pair: rng.uniform(-3, 3) for pair in shape.pairs})

    def params(p: Payload) -> list[Any]:
        q = [p[2][pair] for pair in shape.pairs]
        return [[float(p[0]), *p[1], *q]] if enc.layout == "packed" else [p[0], p[1], q]

    x, y = payload(), payload()
    expected_add: Payload = (x[0] + y[0], [u + v for u, v in zip(x[1], y[1])],
                             {pair: x[2][pair] + y[2][pair] for pair in shape.pairs})
    for label, want, args in (("ring_mul", _py_mul(shape, x, y), params(x) + params(y)),
                              ("ring_mul", _py_mul(shape, y, x), params(y) + params(x)),
                              ("ring_add", expected_add, params(x) + params(y))):
        fn = label
        if enc.layout == "packed":
            row = conn.execute(f"SELECT {fn}(%s::float8[], %s::float8[])", args).fetchone()
            got = row[0] if row else None
        else:
            got = conn.execute(f"SELECT c, s, q FROM {fn}(%s::bigint, %s::float8[], %s::float8[], "
                               f"%s::bigint, %s::float8[], %s::float8[])", args).fetchone()
        mismatches = _compare(shape, _decode(shape, enc, got), want)
        if mismatches:
            raise EncodingMismatch(f"{enc.name}: {label} differs from the ring's definition: {mismatches[:5]}")


# --- data -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Data:
    f_copy: bytes  # COPY text of F's initial rows
    d_copy: bytes
    batches_copy: bytes  # (b, k, x1..x_h)


def _value(rng: random.Random, j: int) -> float:
    """Feature j's values: positive, of scale j (distinct per feature, so that a swapped entry shows)."""
    return j * (0.5 + rng.random())


def make_data(shape: Shape, fact_rows: int, keys: int, batch: int, batches: int, seed: int) -> Data:
    rng = random.Random(seed)
    f_lines = []
    for _ in range(fact_rows):
        f_lines.append("\t".join([str(rng.randrange(keys))] + [repr(_value(rng, j)) for j in shape.f_features]))
    d_lines = ["\t".join([str(k)] + [repr(_value(rng, j)) for j in shape.d_features]) for k in range(keys)]
    b_lines = []
    for b in range(batches):
        for _ in range(batch):
            b_lines.append("\t".join([str(b), str(rng.randrange(keys))]
                                     + [repr(_value(rng, j)) for j in shape.f_features]))

    def text(lines: list[str]) -> bytes:
        return ("\n".join(lines) + "\n").encode() if lines else b""

    return Data(text(f_lines), text(d_lines), text(b_lines))


def _copy(conn: psycopg.Connection, table: str, data: bytes) -> None:
    with conn.cursor().copy(f"COPY {table} FROM STDIN") as copy:
        copy.write(data)


def _load_base(conn: psycopg.Connection, shape: Shape, data: Data) -> None:
    """(Re)create F, D and F's staged insert batches (column b: batch number), and load them."""
    fx = ", ".join(f"x{j} float8 NOT NULL" for j in shape.f_features)
    dx = ", ".join(f"x{j} float8 NOT NULL" for j in shape.d_features)
    for table in ("f", "d", "f_batches"):
        conn.execute(f"DROP TABLE IF EXISTS {table}")
    conn.execute(f"CREATE TABLE f (k int NOT NULL, {fx})")
    conn.execute(f"CREATE TABLE d (k int NOT NULL, {dx})")
    conn.execute(f"CREATE TABLE f_batches (b int NOT NULL, k int NOT NULL, {fx})")
    _copy(conn, "f", data.f_copy)
    _copy(conn, "d", data.d_copy)
    _copy(conn, "f_batches", data.batches_copy)
    conn.execute("CREATE INDEX ON f_batches (b)")
    conn.execute("VACUUM ANALYZE f, d, f_batches")


# --- checking ---------------------------------------------------------------------------------


def reference_root(conn: psycopg.Connection, shape: Shape) -> Payload:
    """count(*), sum(x_j), sum(x_i * x_j) over F ⋈ D, in plain SQL."""
    exprs = ["count(*)"] + [f"sum(x{j})" for j in range(1, shape.m + 1)]
    exprs += [f"sum(x{i} * x{j})" for i, j in shape.pairs]
    row = conn.execute(f"SELECT {', '.join(exprs)} FROM f JOIN d USING (k)").fetchone()
    assert row is not None
    c, rest = int(row[0]), [float(v) if v is not None else 0.0 for v in row[1:]]
    return c, rest[:shape.m], dict(zip(shape.pairs, rest[shape.m:]))


def _close(x: float, y: float) -> bool:
    return math.isfinite(x) and math.isfinite(y) and abs(x - y) <= REL_TOL * max(abs(x), abs(y))


def _compare(shape: Shape, got: Payload, expected: Payload) -> list[str]:
    """Descriptions of the entries that differ (c exactly, s and q to REL_TOL)."""
    out = []
    if got[0] != expected[0]:
        out.append(f"c: {got[0]} != {expected[0]}")
    for j in range(shape.m):
        if not _close(got[1][j], expected[1][j]):
            out.append(f"s{j + 1}: {got[1][j]!r} != {expected[1][j]!r}")
    for pair in shape.pairs:
        if not _close(got[2][pair], expected[2][pair]):
            out.append(f"q{pair[0]}_{pair[1]}: {got[2][pair]!r} != {expected[2][pair]!r}")
    return out


# --- running ----------------------------------------------------------------------------------


@contextmanager
def _scratch_schema(conn: psycopg.Connection) -> Iterator[str]:
    """A new schema first on the search path, with work_mem raised; all undone afterwards."""
    schema = f"pgivm_encbench_{uuid.uuid4().hex[:10]}"
    old_autocommit = conn.autocommit
    conn.autocommit = True
    old = conn.execute("SELECT current_setting('search_path'), current_setting('work_mem')").fetchone()
    assert old is not None
    conn.execute(f"CREATE SCHEMA {schema}")
    try:
        conn.execute("SELECT set_config('search_path', %s, false), set_config('work_mem', %s, false)",
                     (f"{schema}, pg_catalog", WORK_MEM))
        with search_path_of(conn, f"{schema}, pg_catalog, pg_temp"):  # its own schema, which only it creates in
            yield schema
    finally:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        conn.execute("SELECT set_config('search_path', %s, false), set_config('work_mem', %s, false)", old)
        conn.autocommit = old_autocommit


def _checkpoint(conn: psycopg.Connection) -> None:
    """Flush what the load or build dirtied, so that no checkpoint lands inside a timed statement
    (needs superuser or pg_checkpoint; skipped without)."""
    try:
        conn.execute("CHECKPOINT")
    except psycopg.errors.InsufficientPrivilege:
        pass


def _view_bytes(conn: psycopg.Connection) -> int:
    row = conn.execute(
        "SELECT " + " + ".join(f"pg_total_relation_size('{t}')" for t in VIEW_TABLES)).fetchone()
    assert row is not None
    return int(row[0])


def _drop_encoding(conn: psycopg.Connection, enc: ColumnsEncoding | ArrayEncoding) -> None:
    for table in VIEW_TABLES:
        conn.execute(f"DROP TABLE IF EXISTS {table}")
    for aggregate in ("ring_sum(float8[])", "vec_sum(float8[])"):
        conn.execute(f"DROP AGGREGATE IF EXISTS {aggregate}")
    for function in ("ring_add", "vec_add", "ring_mul", "lift", "lift_block"):
        conn.execute(f"DROP FUNCTION IF EXISTS {function}")


def _run_one(conn: psycopg.Connection, shape: Shape, data: Data, enc: ColumnsEncoding | ArrayEncoding,
             batches: int, batch: int, expected: Payload | None, rng: random.Random) -> tuple[dict[str, Any], Payload]:
    _load_base(conn, shape, data)  # a fresh F: every encoding starts from the same data
    _drop_encoding(conn, enc)
    for ddl in enc.functions():
        conn.execute(ddl)
    if isinstance(enc, ArrayEncoding) and enc.impl != "inline":
        _check_ring_functions(conn, enc, rng)
    _checkpoint(conn)

    started = time.perf_counter()
    for statement in enc.build():
        conn.execute(statement)
    build_s = time.perf_counter() - started
    for table in VIEW_TABLES:
        conn.execute(f"ALTER TABLE {table} SET (autovacuum_enabled = off)")
    conn.execute("VACUUM ANALYZE leaf_f, leaf_d, root")
    build_bytes = _view_bytes(conn)
    _checkpoint(conn)

    maintain = enc.maintain()
    columns = ", ".join(f"x{j}" for j in shape.f_features)
    times = []
    for b in range(batches):
        started = time.perf_counter()
        conn.execute(maintain, {"b": b}, prepare=True)
        times.append(time.perf_counter() - started)
        conn.execute(f"INSERT INTO f SELECT k, {columns} FROM f_batches WHERE b = %s", (b,))
    after_bytes = _view_bytes(conn)

    got = enc.read_root(conn)
    if expected is None:
        expected = reference_root(conn, shape)
    mismatches = _compare(shape, got, expected)
    if mismatches:
        raise EncodingMismatch(
            f"{enc.name} (m={shape.m}): root payload differs from SQL recomputation in "
            f"{len(mismatches)} entries, e.g. {'; '.join(mismatches[:5])}")
    row = {
        "encoding": enc.name,
        "m": shape.m,
        "build_s": build_s,
        "median_ms": statistics.median(times) * 1e3 if times else float("nan"),
        "mean_ms": statistics.fmean(times) * 1e3 if times else float("nan"),
        "batch": batch,
        "bytes": build_bytes,
        "bytes_after_batches": after_bytes,
        "checked": True,
    }
    _drop_encoding(conn, enc)
    return row, expected


def run(conn: psycopg.Connection, m: int = 10, fact_rows: int = 200_000, keys: int = 5_000,
        batch: int = 1_000, batches: int = 20, seed: int = 0,
        encodings: Sequence[str] = ENCODINGS) -> list[dict]:
    """Build and maintain the view tree under each encoding; one result row per encoding.

    Rows: encoding, m, build_s (three views), median_ms and mean_ms (per maintenance statement of
    one ``batch``-row insert batch), batch, bytes (pg_total_relation_size of leaf_f + leaf_d + root
    right after the build), bytes_after_batches (the same after the batches, dead tuples included),
    checked (the root matched the SQL recomputation; otherwise EncodingMismatch was raised).
    Everything lives in a scratch schema dropped at the end.
    """
    if m < 2:
        raise ValueError("m must be at least 2 (one feature on each side of the join)")
    shape = Shape(m)
    data = make_data(shape, fact_rows, keys, batch, batches, seed)
    rng = random.Random(seed + 1)
    rows: list[dict] = []
    expected: Payload | None = None
    with _scratch_schema(conn):
        for name in encodings:
            row, expected = _run_one(conn, shape, data, make_encoding(name, shape), batches, batch, expected, rng)
            rows.append(row)
    return rows


# --- command line -----------------------------------------------------------------------------


@contextmanager
def _embedded_dsn() -> Iterator[str]:
    """A throw-away embedded server (pgivm.server) for runs without --dsn."""
    from pgivm.server import EmbeddedServer

    data_dir = Path(tempfile.mkdtemp(prefix="pgivm-encbench-")) / "pgdata"
    server = EmbeddedServer(data_dir, settings={"fsync": "off", "synchronous_commit": "off",
                                                "full_page_writes": "off"})
    try:
        server.start()
        yield server.dsn()
    finally:
        server.stop()
        shutil.rmtree(data_dir.parent, ignore_errors=True)


def _table(rows: Sequence[dict]) -> None:
    from pgivm.report import print_table

    best: dict[int, float] = {}
    for r in rows:
        best[r["m"]] = min(best.get(r["m"], math.inf), r["median_ms"])
    headers = ["encoding", "m", "build (s)", "median ms/batch", "mean ms/batch", "vs best (×)",
               "views (MB)", "after batches (MB)"]
    print_table(headers, [[
        r["encoding"], r["m"], f"{r['build_s']:.2f}", f"{r['median_ms']:.1f}", f"{r['mean_ms']:.1f}",
        f"{r['median_ms'] / best[r['m']]:.2f}", f"{r['bytes'] / 2**20:.2f}",
        f"{r['bytes_after_batches'] / 2**20:.2f}"] for r in rows])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dsn", help="server to use (a scratch schema is created and dropped); "
                                      "default: a temporary embedded server")
    parser.add_argument("--m", default="10,20", help="comma-separated numbers of features (default 10,20)")
    parser.add_argument("--fact-rows", type=int, default=200_000)
    parser.add_argument("--keys", type=int, default=5_000)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--encodings", default=",".join(ENCODINGS),
                        help=f"comma-separated, from {', '.join(ENCODINGS)}")
    args = parser.parse_args(argv)
    ms = [int(v) for v in args.m.split(",") if v.strip()]
    encodings = [e.strip() for e in args.encodings.split(",") if e.strip()]
    for name in encodings:
        if name not in ENCODINGS:
            parser.error(f"unknown encoding {name!r}")

    def go(dsn: str) -> list[dict]:
        rows: list[dict] = []
        with connect(dsn, autocommit=True) as conn:
            print(conn.execute("SELECT version()").fetchone()[0], file=sys.stderr)  # type: ignore[index]
            for m in ms:
                print(f"m = {m} ...", file=sys.stderr)
                rows += run(conn, m=m, fact_rows=args.fact_rows, keys=args.keys, batch=args.batch,
                            batches=args.batches, seed=args.seed, encodings=encodings)
        return rows

    if args.dsn:
        rows = go(args.dsn)
    else:
        with _embedded_dsn() as dsn:
            rows = go(dsn)
    print(f"fact rows {args.fact_rows:,}, keys {args.keys:,}, {args.batches} batches of {args.batch:,} fact rows; "
          "every root checked against SQL recomputation")
    _table(rows)


if __name__ == "__main__":
    main()
