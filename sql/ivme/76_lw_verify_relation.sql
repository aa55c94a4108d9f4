-- Invariant checks of one relation R_i of a Loomis-Whitney count (Appendix F), rendered for each.
-- Each query returns the violating rows (at most 5); none means the check holds.

-- check: parts_match_base: K_heavy + K_light hold exactly the multiset of the base table's join columns
SELECT key, sum(mult) FILTER (WHERE state) AS state_mult, sum(mult) FILTER (WHERE NOT state) AS base_mult
  FROM (SELECT true AS state, ROW({columns})::text AS key, mult FROM {k_heavy}
        UNION ALL SELECT true, ROW({columns})::text, mult FROM {k_light}
        UNION ALL SELECT false, ROW({base_columns})::text, count(*)
                    FROM {base_table} base WHERE {base_guard} AND {base_not_null}
                   GROUP BY {base_columns}) u
 GROUP BY key
HAVING sum(mult) FILTER (WHERE state) IS DISTINCT FROM sum(mult) FILTER (WHERE NOT state)
    OR count(*) FILTER (WHERE state) > 1
 LIMIT 5;

-- check: domain_partition: no partition value has tuples in both parts
SELECT h.{pvar}::text AS value
  FROM (SELECT DISTINCT {pvar} FROM {k_heavy}) h JOIN (SELECT DISTINCT {pvar} FROM {k_light}) l ON l.{pvar} = h.{pvar}
 LIMIT 5;

-- check: degrees: the degree table counts each partition value's distinct tuples and knows its part
SELECT value, max(degree) FILTER (WHERE stored) AS stored_degree, max(degree) FILTER (WHERE NOT stored) AS actual_degree
  FROM (SELECT true AS stored, {pvar}::text AS value, degree, heavy FROM {k_degree}
        UNION ALL SELECT false, {pvar}::text, count(*), bool_or(heavy)
                    FROM (SELECT {pvar}, true AS heavy FROM {k_heavy} UNION ALL SELECT {pvar}, false FROM {k_light}) p
                   GROUP BY {pvar}) u
 GROUP BY value
HAVING (max(degree) FILTER (WHERE stored), bool_or(heavy) FILTER (WHERE stored))
       IS DISTINCT FROM (max(degree) FILTER (WHERE NOT stored), bool_or(heavy) FILTER (WHERE NOT stored))
    OR count(*) FILTER (WHERE stored) > 1
 LIMIT 5;

-- check: thresholds: heavy values have degree >= theta/2, light ones < 3/2 theta (all heavy at epsilon = 0)
SELECT d.{pvar}::text AS value, d.degree, d.heavy, s.theta
  FROM {k_degree} d, {state} s
 WHERE (d.heavy AND d.degree < 0.5 * s.theta) OR (NOT d.heavy AND d.degree >= 1.5 * s.theta)
    OR (NOT d.heavy AND s.epsilon = 0)
 LIMIT 5;

-- check: strict_partition: (only right after a build or major rebalancing) heavy iff degree >= theta
SELECT d.{pvar}::text AS value, d.degree, d.heavy, s.theta
  FROM {k_degree} d, {state} s
 WHERE d.heavy <> (d.degree >= s.theta OR s.epsilon = 0)
 LIMIT 5;

-- check: auxiliary_view: V_i equals its definition recomputed from the parts, with no zero entries
SELECT key, sum(mult) FILTER (WHERE stored) AS stored, sum(mult) FILTER (WHERE NOT stored) AS recomputed
  FROM (SELECT true AS stored, ROW({columns})::text AS key, mult FROM {v_k}
        UNION ALL SELECT false, ROW({columns})::text, mult FROM (
{v_k_definition}) d ({columns}, mult)) u
 GROUP BY key
HAVING sum(mult) FILTER (WHERE stored) IS DISTINCT FROM sum(mult) FILTER (WHERE NOT stored)
    OR count(*) FILTER (WHERE stored) > 1
 LIMIT 5;
