-- Checks for one relation K of a first-order view: each query returns violating rows.

-- check: tuples_match_base: the copy of K holds exactly the (X,Y) multiset of the base table
SELECT coalesce(p.{x}, b.{x})::text AS x, coalesce(p.{y}, b.{y})::text AS y, p.mult AS state_mult, b.mult AS base_mult
  FROM {k_tuples} p
  FULL JOIN (SELECT {base_x} AS {x}, {base_y} AS {y}, count(*) AS mult
               FROM {base_table} base
              WHERE {base_guard} AND base.{base_x_column} IS NOT NULL AND base.{base_y_column} IS NOT NULL
              GROUP BY 1, 2) b
    ON b.{x} = p.{x} AND b.{y} = p.{y}
 WHERE p.mult IS DISTINCT FROM b.mult
 LIMIT 5;
