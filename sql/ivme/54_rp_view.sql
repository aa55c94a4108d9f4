-- View-wide maintenance of a triangle count under refined partitions (Appendix D):
-- MajorRebalancingRP, the views from their definitions, the count, the restart after a build or a
-- TRUNCATE (the size invariant: 48_resize.sql). Rendered once per view.

-- MajorRebalancingRP: theta = N^epsilon, every relation strictly repartitioned on both variables
-- (heavy iff degree >= theta), the three views recomputed.
CREATE FUNCTION {major_rebalance}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
DECLARE
    st {state}%ROWTYPE;
BEGIN
    UPDATE {state} SET theta = power(n::float8, epsilon), major_rebalances = major_rebalances + 1 RETURNING * INTO st;
    UPDATE {r_a_degree} SET heavy = (degree >= st.theta OR st.epsilon = 0) WHERE heavy <> (degree >= st.theta OR st.epsilon = 0);
    UPDATE {r_b_degree} SET heavy = (degree >= st.theta OR st.epsilon = 0) WHERE heavy <> (degree >= st.theta OR st.epsilon = 0);
    UPDATE {s_b_degree} SET heavy = (degree >= st.theta OR st.epsilon = 0) WHERE heavy <> (degree >= st.theta OR st.epsilon = 0);
    UPDATE {s_c_degree} SET heavy = (degree >= st.theta OR st.epsilon = 0) WHERE heavy <> (degree >= st.theta OR st.epsilon = 0);
    UPDATE {t_c_degree} SET heavy = (degree >= st.theta OR st.epsilon = 0) WHERE heavy <> (degree >= st.theta OR st.epsilon = 0);
    UPDATE {t_a_degree} SET heavy = (degree >= st.theta OR st.epsilon = 0) WHERE heavy <> (degree >= st.theta OR st.epsilon = 0);
    UPDATE {r} k SET h1 = d.heavy FROM {r_a_degree} d WHERE d.a = k.a AND k.h1 <> d.heavy;
    UPDATE {r} k SET h2 = d.heavy FROM {r_b_degree} d WHERE d.b = k.b AND k.h2 <> d.heavy;
    UPDATE {s} k SET h1 = d.heavy FROM {s_b_degree} d WHERE d.b = k.b AND k.h1 <> d.heavy;
    UPDATE {s} k SET h2 = d.heavy FROM {s_c_degree} d WHERE d.c = k.c AND k.h2 <> d.heavy;
    UPDATE {t} k SET h1 = d.heavy FROM {t_c_degree} d WHERE d.c = k.c AND k.h1 <> d.heavy;
    UPDATE {t} k SET h2 = d.heavy FROM {t_a_degree} d WHERE d.a = k.a AND k.h2 <> d.heavy;
    DELETE FROM {v_rs};
    INSERT INTO {v_rs} (a, c, mult)
{v_rs_definition};
    DELETE FROM {v_st};
    INSERT INTO {v_st} (b, a, mult)
{v_st_definition};
    DELETE FROM {v_tr};
    INSERT INTO {v_tr} (c, b, mult)
{v_tr_definition};
END;
$pgivm$;
COMMENT ON FUNCTION {major_rebalance}() IS 'IVMε MajorRebalancingRP: strict repartition of both variables at theta = N^epsilon, V_RS, V_ST, V_TR recomputed';


-- The count from the state: each R-tuple's triangles through the side of smaller degree (S's tuples
-- at b, or T's at a), so the joins produce O(N^(3/2)) rows whatever the skew. Used by the build,
-- TRUNCATE and verify; the query is COUNT in pgivm/systems/ivme/refined.py (the Spark build runs it too).
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
    size bigint := (SELECT count(*) FROM {r}) + (SELECT count(*) FROM {s}) + (SELECT count(*) FROM {t});
BEGIN
    UPDATE {state} SET db_size = size, n = 2 * size + 1;
    PERFORM {major_rebalance}();
    UPDATE {result} SET count = {count_from_state}();
END;
$pgivm$;
