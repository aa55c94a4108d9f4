-- Invariant checks of a listing's view-wide state ([L] Appendix E). Each query returns the
-- violating rows (at most 5); none means the check holds.

-- check: materialized_triangles: Q^L holds exactly the triangles R_h S_h T_h and R_l S_l T_l
SELECT a::text AS a, b::text AS b, c::text AS c, sum(mult) FILTER (WHERE stored) AS stored, sum(mult) FILTER (WHERE NOT stored) AS recomputed
  FROM (SELECT true AS stored, a, b, c, mult FROM {listing}
        UNION ALL SELECT false, r.a, r.b, s.c, r.mult * s.mult * t.mult
                    FROM {r_heavy} r JOIN {s_heavy} s ON s.b = r.b JOIN {t_heavy} t ON t.c = s.c AND t.a = r.a
        UNION ALL SELECT false, r.a, r.b, s.c, r.mult * s.mult * t.mult
                    FROM {r_light} r JOIN {s_light} s ON s.b = r.b JOIN {t_light} t ON t.c = s.c AND t.a = r.a) u
 GROUP BY a, b, c
HAVING sum(mult) FILTER (WHERE stored) IS DISTINCT FROM sum(mult) FILTER (WHERE NOT stored)
    OR count(*) FILTER (WHERE stored) > 1
 LIMIT 5;

-- check: listing_counts_the_triangles: the rows of the listing add up to the maintained count
SELECT r.count AS maintained, (SELECT sum(mult) FROM {rows}) AS listed
  FROM {result} r
 WHERE r.count <> coalesce((SELECT sum(mult) FROM {rows}), 0);
