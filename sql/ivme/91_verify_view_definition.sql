-- Invariant check of one auxiliary view against its definition (the 4-path count's nine, refined
-- partitions' three), rendered for each.

-- check: view: the stored view equals its definition recomputed from the parts, with no zero entries
SELECT key, sum(mult) FILTER (WHERE stored) AS stored, sum(mult) FILTER (WHERE NOT stored) AS recomputed
  FROM (SELECT true AS stored, ROW({columns})::text AS key, mult FROM {view}
        UNION ALL SELECT false, ROW({columns})::text, mult FROM (
{definition}) d ({columns}, mult)) u
 GROUP BY key
HAVING sum(mult) FILTER (WHERE stored) IS DISTINCT FROM sum(mult) FILTER (WHERE NOT stored)
    OR count(*) FILTER (WHERE stored) > 1
 LIMIT 5;
