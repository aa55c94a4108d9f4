-- Invariant checks for one relation K(X,Y) (Kara et al. section 9.10 of our notes), rendered for
-- R, S, T. Each check is a query that returns the violating rows (at most 5); none means it holds.

-- check: parts_match_base: K_heavy + K_light hold exactly the (X,Y) multiset of the base table
-- (the two sides grouped together rather than FULL JOINed: an extension's equality, pgvector's,
-- may be neither merge- nor hash-joinable, which a FULL JOIN needs; a key twice in the state is
-- a violation too)
SELECT x::text AS x, y::text AS y, sum(mult) FILTER (WHERE state) AS state_mult, sum(mult) FILTER (WHERE NOT state) AS base_mult
  FROM (SELECT true AS state, {x} AS x, {y} AS y, mult FROM {k_heavy}
        UNION ALL SELECT true, {x}, {y}, mult FROM {k_light}
        UNION ALL SELECT false, {base_x}, {base_y}, count(*)
                    FROM {base_table} base
                   WHERE {base_guard} AND {base_not_null}
                   GROUP BY 2, 3) u
 GROUP BY x, y
HAVING sum(mult) FILTER (WHERE state) IS DISTINCT FROM sum(mult) FILTER (WHERE NOT state)
    OR count(*) FILTER (WHERE state) > 1
 LIMIT 5;

-- check: domain_partition: no X-value has tuples in both K_heavy and K_light
SELECT h.{x}::text AS x
  FROM (SELECT DISTINCT {x} FROM {k_heavy}) h
  JOIN (SELECT DISTINCT {x} FROM {k_light}) l ON l.{x} = h.{x}
 LIMIT 5;

-- check: degrees: the degree table counts each X-value's distinct tuples and knows its part
SELECT x::text AS x, max(degree) FILTER (WHERE stored) AS stored_degree, max(degree) FILTER (WHERE NOT stored) AS actual_degree,
       bool_or(heavy) FILTER (WHERE stored) AS stored_heavy, bool_or(heavy) FILTER (WHERE NOT stored) AS actual_heavy
  FROM (SELECT true AS stored, {x} AS x, degree, heavy FROM {k_degree}
        UNION ALL SELECT false, {x}, count(*), bool_or(heavy)
                    FROM (SELECT {x}, true AS heavy FROM {k_heavy} UNION ALL SELECT {x}, false FROM {k_light}) p
                   GROUP BY {x}) u
 GROUP BY x
HAVING (max(degree) FILTER (WHERE stored), bool_or(heavy) FILTER (WHERE stored))
       IS DISTINCT FROM (max(degree) FILTER (WHERE NOT stored), bool_or(heavy) FILTER (WHERE NOT stored))
    OR count(*) FILTER (WHERE stored) > 1
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
SELECT x::text AS x, z::text AS z, sum(mult) FILTER (WHERE stored) AS stored, sum(mult) FILTER (WHERE NOT stored) AS recomputed
  FROM (SELECT true AS stored, {x} AS x, {z} AS z, mult FROM {v_kl}
        UNION ALL SELECT false, kh.{x}, ll.{z}, sum(kh.mult * ll.mult)
                    FROM {k_heavy} kh JOIN {l_light} ll ON ll.{y} = kh.{y}
                   GROUP BY kh.{x}, ll.{z}
                  HAVING sum(kh.mult * ll.mult) <> 0) u
 GROUP BY x, z
HAVING sum(mult) FILTER (WHERE stored) IS DISTINCT FROM sum(mult) FILTER (WHERE NOT stored)
    OR count(*) FILTER (WHERE stored) > 1
 LIMIT 5;
