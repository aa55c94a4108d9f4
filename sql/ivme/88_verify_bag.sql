-- Invariant check of a relation kept as one table of distinct tuples with multiplicities (the 4-path
-- count's four, refined partitions' three), rendered for each. Returns the violating rows (at most
-- 5); none means the check holds.

-- check: parts_match_base: the relation holds exactly the multiset of the base table's join columns
SELECT key, sum(mult) FILTER (WHERE state) AS state_mult, sum(mult) FILTER (WHERE NOT state) AS base_mult
  FROM (SELECT true AS state, ROW({columns})::text AS key, mult FROM {k}
        UNION ALL SELECT false, ROW({base_columns})::text, count(*)
                    FROM {base_table} base WHERE {base_guard} AND {base_not_null}
                   GROUP BY {base_columns}) u
 GROUP BY key
HAVING sum(mult) FILTER (WHERE state) IS DISTINCT FROM sum(mult) FILTER (WHERE NOT state)
    OR count(*) FILTER (WHERE state) > 1
 LIMIT 5;
