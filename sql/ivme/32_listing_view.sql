-- The listing's view-wide parts ([L] Appendix E): Q^L from scratch, and the enumeration.

-- Q^L (the hhh and lll triangles), W_KL and P_KLM of R, S and T from scratch: part of
-- MajorRebalancing and of the build, after the partitions and V_RS, V_ST, V_TR. O(N^(3/2)) at eps = 1/2.
CREATE FUNCTION {recompute_listing}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
BEGIN
    DELETE FROM {listing};  -- not TRUNCATE, which would empty it for snapshots taken before (verify)
    INSERT INTO {listing} (a, b, c, mult)
    SELECT r.a, r.b, s.c, r.mult * s.mult * t.mult
      FROM {r_heavy} r JOIN {s_heavy} s ON s.b = r.b JOIN {t_heavy} t ON t.c = s.c AND t.a = r.a
    UNION ALL  -- an (a, b) tuple of R is in one part: no triangle is in both
    SELECT r.a, r.b, s.c, r.mult * s.mult * t.mult
      FROM {r_light} r JOIN {s_light} s ON s.b = r.b JOIN {t_light} t ON t.c = s.c AND t.a = r.a;
    PERFORM {recompute_w_rs}();
    PERFORM {recompute_w_st}();
    PERFORM {recompute_w_tr}();
END;
$pgivm$;

-- The triangles with their multiplicities, the eight heavy/light combinations each once:
-- hhh and lll from Q^L; R_h S_l T_* from P_RS and W_RS; R_* S_h T_l from P_ST and W_ST; R_l S_* T_h
-- from P_TR and W_TR. Each row of a P gives at least one triangle (its multiplicity is not 0), and
-- each W row of it one: constant delay. So the reading is driven by P: each W range is a LATERAL
-- subquery (OFFSET 0 keeps it one, an index range scan per P row, never a hash join reading all of W)
-- and the closing tuple a lookup in its two parts.
CREATE OR REPLACE VIEW {rows} AS  -- (OR REPLACE: upgrade makes the functions again over the kept state)
SELECT a, b, c, mult FROM {listing}
UNION ALL
SELECT p.a, w.b, p.c, w.mult * coalesce((SELECT t.mult FROM {t_heavy} t WHERE t.c = p.c AND t.a = p.a),
                                        (SELECT t.mult FROM {t_light} t WHERE t.c = p.c AND t.a = p.a))
  FROM {p_rs} p
 CROSS JOIN LATERAL (SELECT w.b, w.mult FROM {w_rs} w WHERE w.a = p.a AND w.c = p.c OFFSET 0) w
UNION ALL
SELECT p.a, p.b, w.c, w.mult * coalesce((SELECT r.mult FROM {r_heavy} r WHERE r.a = p.a AND r.b = p.b),
                                        (SELECT r.mult FROM {r_light} r WHERE r.a = p.a AND r.b = p.b))
  FROM {p_st} p
 CROSS JOIN LATERAL (SELECT w.c, w.mult FROM {w_st} w WHERE w.b = p.b AND w.a = p.a OFFSET 0) w
UNION ALL
SELECT w.a, p.b, p.c, w.mult * coalesce((SELECT s.mult FROM {s_heavy} s WHERE s.b = p.b AND s.c = p.c),
                                        (SELECT s.mult FROM {s_light} s WHERE s.b = p.b AND s.c = p.c))
  FROM {p_tr} p
 CROSS JOIN LATERAL (SELECT w.a, w.mult FROM {w_tr} w WHERE w.c = p.c AND w.b = p.b OFFSET 0) w;
COMMENT ON VIEW {rows} IS 'IVMε listing: each distinct triangle (a, b, c) with its multiplicity';
