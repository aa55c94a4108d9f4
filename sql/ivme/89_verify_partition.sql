-- Invariant checks of a relation partitioned on one of its variables with the part kept as a flag
-- on each tuple (the 4-path count's S and T, refined partitions' R, S, T on each variable), rendered
-- per relation and variable. Each returns the violating rows.

-- check: degrees: the degree table counts each value's distinct tuples
SELECT value, max(degree) FILTER (WHERE stored) AS stored_degree, max(degree) FILTER (WHERE NOT stored) AS actual_degree
  FROM (SELECT true AS stored, {var}::text AS value, degree FROM {degree}
        UNION ALL SELECT false, {var}::text, count(*) FROM {k} GROUP BY {var}) u
 GROUP BY value
HAVING max(degree) FILTER (WHERE stored) IS DISTINCT FROM max(degree) FILTER (WHERE NOT stored)
    OR count(*) FILTER (WHERE stored) > 1
 LIMIT 5;

-- check: flags: every tuple's flag is its value's part in the degree table
SELECT k.{var}::text AS value, k.{flag} AS tuple_heavy, d.heavy AS value_heavy
  FROM {k} k JOIN {degree} d ON d.{var} = k.{var}
 WHERE k.{flag} <> d.heavy
 LIMIT 5;

-- check: thresholds: heavy values have degree >= theta/2, light ones < 3/2 theta (all heavy at epsilon = 0)
SELECT d.{var}::text AS value, d.degree, d.heavy, s.theta
  FROM {degree} d, {state} s
 WHERE (d.heavy AND d.degree < 0.5 * s.theta) OR (NOT d.heavy AND d.degree >= 1.5 * s.theta)
    OR (NOT d.heavy AND s.epsilon = 0)
 LIMIT 5;

-- check: strict_partition: (only right after a build or major rebalancing) heavy iff degree >= theta
SELECT d.{var}::text AS value, d.degree, d.heavy, s.theta
  FROM {degree} d, {state} s
 WHERE d.heavy <> (d.degree >= s.theta OR s.epsilon = 0)
 LIMIT 5;
