-- Invariant checks for one relation K(X,Y) (Kara et al. section 9.10 of our notes), rendered for
-- R, S, T. Each check is a query that returns the violating rows (at most 5); none means it holds.

-- check: parts_match_base: K_heavy + K_light hold exactly the (X,Y) multiset of the base table
SELECT coalesce(p.{x}, b.{x})::text AS x, coalesce(p.{y}, b.{y})::text AS y, p.mult AS state_mult, b.mult AS base_mult
  FROM (SELECT {x}, {y}, mult FROM {k_heavy} UNION ALL SELECT {x}, {y}, mult FROM {k_light}) p
  FULL JOIN (SELECT {base_x} AS {x}, {base_y} AS {y}, count(*) AS mult
               FROM {base_table} base
              WHERE {base_guard} AND base.{base_x_column} IS NOT NULL AND base.{base_y_column} IS NOT NULL
              GROUP BY 1, 2) b
    ON b.{x} = p.{x} AND b.{y} = p.{y}
 WHERE p.mult IS DISTINCT FROM b.mult
 LIMIT 5;

-- check: domain_partition: no X-value has tuples in both K_heavy and K_light
SELECT h.{x}::text AS x
  FROM (SELECT DISTINCT {x} FROM {k_heavy}) h
  JOIN (SELECT DISTINCT {x} FROM {k_light}) l ON l.{x} = h.{x}
 LIMIT 5;

-- check: degrees: the degree table counts each X-value's distinct tuples and knows its part
SELECT coalesce(d.{x}, p.{x})::text AS x, d.degree AS stored_degree, p.degree AS actual_degree,
       d.heavy AS stored_heavy, p.heavy AS actual_heavy
  FROM {k_degree} d
  FULL JOIN (SELECT {x}, count(*) AS degree, bool_or(heavy) AS heavy
               FROM (SELECT {x}, true AS heavy FROM {k_heavy} UNION ALL SELECT {x}, false FROM {k_light}) u
              GROUP BY {x}) p
    ON p.{x} = d.{x}
 WHERE (d.degree, d.heavy) IS DISTINCT FROM (p.degree, p.heavy)
 LIMIT 5;

-- check: thresholds: heavy values have degree >= theta/2, light ones < 3/2 theta (all heavy at epsilon = 0)
SELECT d.{x}::text AS x, d.degree, d.heavy, s.theta
  FROM {k_degree} d, {state} s
 WHERE (d.heavy AND d.degree < 0.5 * s.theta)
    OR (NOT d.heavy AND d.degree >= 1.5 * s.theta)
    OR (NOT d.heavy AND s.epsilon = 0)
 LIMIT 5;

-- check: strict_partition: (only right after a build or major rebalancing) heavy iff degree >= theta
SELECT d.{x}::text AS x, d.degree, d.heavy, s.theta
  FROM {k_degree} d, {state} s
 WHERE d.heavy <> (d.degree >= s.theta OR s.epsilon = 0)
 LIMIT 5;

-- check: auxiliary_view: V_KL equals sum_Y K_heavy * L_light recomputed, with no zero entries
SELECT coalesce(v.{x}, e.{x})::text AS x, coalesce(v.{z}, e.{z})::text AS z, v.mult AS stored, e.mult AS recomputed
  FROM {v_kl} v
  FULL JOIN (SELECT kh.{x}, ll.{z}, sum(kh.mult * ll.mult) AS mult
               FROM {k_heavy} kh JOIN {l_light} ll ON ll.{y} = kh.{y}
              GROUP BY kh.{x}, ll.{z}
             HAVING sum(kh.mult * ll.mult) <> 0) e
    ON e.{x} = v.{x} AND e.{z} = v.{z}
 WHERE v.mult IS DISTINCT FROM e.mult
 LIMIT 5;
