-- View-wide maintenance: major rebalancing, the count from the partitioned state, and the
-- set-at-a-time build from the base tables. Rendered once per view.

-- MajorRebalancing (Kara et al., Figure 4): strict repartition of R, S and T at the new threshold
-- N^epsilon, then V_RS, V_ST and V_TR from scratch. The count is unchanged.
-- Runs with the planner's full toolbox: these are bulk statements, not point lookups.
CREATE FUNCTION {major_rebalance}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
BEGIN
    UPDATE {state} SET theta = power(n::float8, epsilon), major_rebalances = major_rebalances + 1;
    PERFORM {repartition_r}();
    PERFORM {repartition_s}();
    PERFORM {repartition_t}();
    PERFORM {recompute_v_rs}();
    PERFORM {recompute_v_st}();
    PERFORM {recompute_v_tr}();{listing_rebuild}
END;
$pgivm$;
COMMENT ON FUNCTION {major_rebalance}() IS 'IVMε MajorRebalancing: strict repartition at theta = N^epsilon and recompute V_RS, V_ST, V_TR';


-- The count from the partitioned state, sum over the 8 heavy/light combinations R_r S_s T_t:
--   V_RS * T covers (h,l,*), V_ST * R covers (*,h,l), V_TR * S covers (l,*,h); then hhh and lll.
-- O(N^(1+max(eps, 1-eps))) at worst (the hhh and lll joins); used by the build, TRUNCATE and verify.
CREATE FUNCTION {count_from_state}()
RETURNS bigint LANGUAGE sql SECURITY DEFINER STABLE
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
    SELECT (
        (SELECT coalesce(sum(v.mult * t.mult), 0)
           FROM {v_rs} v
           JOIN (SELECT c, a, mult FROM {t_heavy} UNION ALL SELECT c, a, mult FROM {t_light}) t
             ON t.c = v.c AND t.a = v.a)
      + (SELECT coalesce(sum(v.mult * r.mult), 0)
           FROM {v_st} v
           JOIN (SELECT a, b, mult FROM {r_heavy} UNION ALL SELECT a, b, mult FROM {r_light}) r
             ON r.a = v.a AND r.b = v.b)
      + (SELECT coalesce(sum(v.mult * s.mult), 0)
           FROM {v_tr} v
           JOIN (SELECT b, c, mult FROM {s_heavy} UNION ALL SELECT b, c, mult FROM {s_light}) s
             ON s.b = v.b AND s.c = v.c)
      + (SELECT coalesce(sum(r.mult * s.mult * t.mult), 0)
           FROM {r_heavy} r
           JOIN {t_heavy} t ON t.a = r.a
           JOIN {s_heavy} s ON s.b = r.b AND s.c = t.c)
      + (SELECT coalesce(sum(r.mult * s.mult * t.mult), 0)
           FROM {r_light} r
           JOIN {s_light} s ON s.b = r.b
           JOIN {t_light} t ON t.c = s.c AND t.a = r.a)
    )::bigint
$pgivm$;


-- Preprocessing (Kara et al., Prop. 8): N = 2|D| + 1, strict partitions, views, count.
-- Called after the parts of some relations were (re)loaded; O(N^(3/2)) for epsilon = 1/2.
CREATE FUNCTION {restart}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
DECLARE
    size bigint;
BEGIN
    SELECT (SELECT count(*) FROM {r_heavy}) + (SELECT count(*) FROM {r_light})
         + (SELECT count(*) FROM {s_heavy}) + (SELECT count(*) FROM {s_light})
         + (SELECT count(*) FROM {t_heavy}) + (SELECT count(*) FROM {t_light})
      INTO size;
    UPDATE {state} SET db_size = size, n = 2 * size + 1;
    PERFORM {major_rebalance}();
    UPDATE {result} SET count = {count_from_state}();
END;
$pgivm$;
