-- Invariant checks of a listing's state of one relation K(X,Y) ([L] Appendix E), rendered for R,
-- S, T. Each query returns the violating rows (at most 5); none means the check holds.

-- check: w_view: W_KL equals K_heavy * L_light recomputed, with no zero entries
SELECT x::text AS x, y::text AS y, z::text AS z, sum(mult) FILTER (WHERE stored) AS stored, sum(mult) FILTER (WHERE NOT stored) AS recomputed
  FROM (SELECT true AS stored, {x} AS x, {y} AS y, {z} AS z, mult FROM {w_kl}
        UNION ALL SELECT false, kh.{x}, kh.{y}, ll.{z}, kh.mult * ll.mult
                    FROM {k_heavy} kh JOIN {l_light} ll ON ll.{y} = kh.{y}) u
 GROUP BY x, y, z
HAVING sum(mult) FILTER (WHERE stored) IS DISTINCT FROM sum(mult) FILTER (WHERE NOT stored)
    OR count(*) FILTER (WHERE stored) > 1
 LIMIT 5;

-- check: p_view: P_KLM equals sum_Y W_KL * M recomputed, one row per (X, Z) with a triangle and no other
SELECT x::text AS x, z::text AS z, sum(mult) FILTER (WHERE stored) AS stored, sum(mult) FILTER (WHERE NOT stored) AS recomputed
  FROM (SELECT true AS stored, {x} AS x, {z} AS z, mult FROM {p_klm}
        UNION ALL SELECT false, kh.{x}, ll.{z}, sum(kh.mult * ll.mult * m.mult)
                    FROM {k_heavy} kh JOIN {l_light} ll ON ll.{y} = kh.{y}
                    JOIN (SELECT {z}, {x}, mult FROM {m_heavy} UNION ALL SELECT {z}, {x}, mult FROM {m_light}) m
                      ON m.{z} = ll.{z} AND m.{x} = kh.{x}
                   GROUP BY kh.{x}, ll.{z}) u
 GROUP BY x, z
HAVING sum(mult) FILTER (WHERE stored) IS DISTINCT FROM sum(mult) FILTER (WHERE NOT stored)
    OR count(*) FILTER (WHERE stored) > 1
 LIMIT 5;
