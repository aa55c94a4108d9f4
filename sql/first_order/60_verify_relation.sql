-- Checks for one relation K of a first-order view: each query returns violating rows.

-- check: tuples_match_base: the copy of K holds exactly the (X,Y) multiset of the base table
-- (both sides grouped together, not FULL JOINed: an extension's equality, pgvector's, may be
-- neither merge- nor hash-joinable, which a FULL JOIN needs; a key twice in the copy is a
-- violation too)
SELECT x::text AS x, y::text AS y, sum(mult) FILTER (WHERE state) AS state_mult, sum(mult) FILTER (WHERE NOT state) AS base_mult
  FROM (SELECT true AS state, {x} AS x, {y} AS y, mult FROM {k_tuples}
        UNION ALL SELECT false, {base_x}, {base_y}, count(*)
                    FROM {base_table} base
                   WHERE {base_guard} AND base.{base_x_column} IS NOT NULL AND base.{base_y_column} IS NOT NULL
                   GROUP BY 2, 3) u
 GROUP BY x, y
HAVING sum(mult) FILTER (WHERE state) IS DISTINCT FROM sum(mult) FILTER (WHERE NOT state)
    OR count(*) FILTER (WHERE state) > 1
 LIMIT 5;
