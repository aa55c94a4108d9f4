-- View-wide maintenance of a 4-path count ([L] Appendix G.5): major rebalancing, every view from
-- its definition, the count from the state, and the restart after a build or a TRUNCATE (the size
-- invariant: 48_resize.sql). Rendered once per view.

-- MajorRebalancing: theta = N^epsilon, S and T strictly repartitioned on both variables (heavy iff
-- degree >= theta), every view recomputed.
CREATE FUNCTION {major_rebalance}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
DECLARE
    st {state}%ROWTYPE;
BEGIN
    UPDATE {state} SET theta = power(n::float8, epsilon), major_rebalances = major_rebalances + 1 RETURNING * INTO st;
    UPDATE {s_a_degree} SET heavy = (degree >= st.theta OR st.epsilon = 0) WHERE heavy <> (degree >= st.theta OR st.epsilon = 0);
    UPDATE {s_b_degree} SET heavy = (degree >= st.theta OR st.epsilon = 0) WHERE heavy <> (degree >= st.theta OR st.epsilon = 0);
    UPDATE {t_b_degree} SET heavy = (degree >= st.theta OR st.epsilon = 0) WHERE heavy <> (degree >= st.theta OR st.epsilon = 0);
    UPDATE {t_c_degree} SET heavy = (degree >= st.theta OR st.epsilon = 0) WHERE heavy <> (degree >= st.theta OR st.epsilon = 0);
    UPDATE {s} k SET ha = d.heavy FROM {s_a_degree} d WHERE d.a = k.a AND k.ha <> d.heavy;
    UPDATE {s} k SET hb = d.heavy FROM {s_b_degree} d WHERE d.b = k.b AND k.hb <> d.heavy;
    UPDATE {t} k SET hb = d.heavy FROM {t_b_degree} d WHERE d.b = k.b AND k.hb <> d.heavy;
    UPDATE {t} k SET hc = d.heavy FROM {t_c_degree} d WHERE d.c = k.c AND k.hc <> d.heavy;
    PERFORM {recompute_views}();
END;
$pgivm$;
COMMENT ON FUNCTION {major_rebalance}() IS 'IVMε MajorRebalancing (4-path): strict repartition at theta = N^epsilon, every view recomputed';


-- Every auxiliary view from its definition over the parts (80_fp_tables.sql), set at a time.
CREATE FUNCTION {recompute_views}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
BEGIN
    DELETE FROM {w_r};
    INSERT INTO {w_r} (b, mult)
{w_r_definition};
    DELETE FROM {w_u};
    INSERT INTO {w_u} (b, mult)
{w_u_definition};
    DELETE FROM {p_r};
    INSERT INTO {p_r} (a, c, mult)
{p_r_definition};
    DELETE FROM {p_u};
    INSERT INTO {p_u} (c, a, mult)
{p_u_definition};
    DELETE FROM {q};
    INSERT INTO {q} (a, c, mult)
{q_definition};
    DELETE FROM {z_r};
    INSERT INTO {z_r} (b, mult)
{z_r_definition};
    DELETE FROM {z_u};
    INSERT INTO {z_u} (b, mult)
{z_u_definition};
    DELETE FROM {y_r};
    INSERT INTO {y_r} (a, mult)
{y_r_definition};
    DELETE FROM {y_u};
    INSERT INTO {y_u} (c, mult)
{y_u_definition};
END;
$pgivm$;


-- The count from the state, factorized at B: sum_b (sum_a R(a) S(a,b)) (sum_c T(b,c) U(c)), linear
-- in |D| where the four-way join is not. Used by the build, TRUNCATE and verify; the query is COUNT in
-- pgivm/systems/ivme/four_path.py (the Spark build runs it too).
CREATE FUNCTION {count_from_state}()
RETURNS bigint LANGUAGE sql SECURITY DEFINER STABLE
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
    SELECT coalesce(({count_definition}), 0)::bigint
$pgivm$;


-- Preprocessing: N = 2|D| + 1, strict partitions, the views, the count.
CREATE FUNCTION {restart}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
DECLARE
    size bigint := (SELECT count(*) FROM {r}) + (SELECT count(*) FROM {s}) + (SELECT count(*) FROM {t}) + (SELECT count(*) FROM {u});
BEGIN
    UPDATE {state} SET db_size = size, n = 2 * size + 1;
    PERFORM {major_rebalance}();
    UPDATE {result} SET count = {count_from_state}();
END;
$pgivm$;
