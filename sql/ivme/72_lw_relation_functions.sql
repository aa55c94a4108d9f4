-- Maintenance of one relation R_i of a Loomis-Whitney count (Kara et al., long version, Appendix
-- F.1), rendered for each relation. An update to R_i binds every variable but A_(i-1) (F below);
-- R_(i-1), partitioned on F, is "P"; the other n - 2 relations are the "middles", each partitioned
-- on a variable the update binds, so each middle's part is known before any loop runs.

-- ApplyUpdate + OnUpdate for a single-tuple update of R_i (apply_K below is its entry point).
CREATE FUNCTION {update_k}({parameters}, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st          {state}%ROWTYPE;
    own_heavy   boolean;  -- routing: is the A_i-value heavy in R_i?
{part_declarations}
    delta_q     bigint := 0;
    new_mult    bigint;
    new_degree  bigint;
BEGIN
    -- Each relation's part of the value the update binds for its partition variable (NULL: absent).
    SELECT s.*, {part_columns}
      INTO st.singleton, st.epsilon, st.n, st.theta, st.db_size, st.updates_applied, st.major_rebalances,
           st.minor_rebalances, {part_variables}
      FROM {state} s
{part_joins};
    own_heavy := coalesce(own_heavy, st.epsilon = 0);  -- a new value starts light (heavy at epsilon = 0)

    -- F.1: the change of the count, delta Q = m * sum_F prod(the other relations at the bound values).
{delta_q}
    IF delta_q <> 0 THEN
        UPDATE {result} SET count = count + m * delta_q;
    END IF;

    -- The auxiliary views that read R_i's part.
    PERFORM {views_k}({arguments}, m, own_heavy);

    -- R_i's part += m; a tuple reaching multiplicity 0 is deleted.
    IF own_heavy THEN
        INSERT INTO {k_heavy} AS p ({columns}, mult) VALUES ({arguments}, m)
            ON CONFLICT ({columns}) DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
        IF new_mult = 0 THEN
            DELETE FROM {k_heavy} WHERE {match_arguments};
        END IF;
    ELSE
        INSERT INTO {k_light} AS p ({columns}, mult) VALUES ({arguments}, m)
            ON CONFLICT ({columns}) DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
        IF new_mult = 0 THEN
            DELETE FROM {k_light} WHERE {match_arguments};
        END IF;
    END IF;

    -- Degrees and |D| count distinct tuples: only a tuple appearing or vanishing changes them.
    IF new_mult = m THEN
        INSERT INTO {k_degree} AS d ({pvar}, degree, heavy) VALUES ({pvar_argument}, 1, own_heavy)
            ON CONFLICT ({pvar}) DO UPDATE SET degree = d.degree + 1 RETURNING degree INTO new_degree;
        st.db_size := st.db_size + 1;
    ELSIF new_mult = 0 THEN
        UPDATE {k_degree} SET degree = degree - 1 WHERE {pvar} = {pvar_argument} AND degree > 1 RETURNING degree INTO new_degree;
        IF NOT FOUND THEN
            DELETE FROM {k_degree} WHERE {pvar} = {pvar_argument};
            new_degree := 0;
        END IF;
        st.db_size := st.db_size - 1;
    ELSE
        RETURN;
    END IF;

    -- OnUpdate: the size invariant floor(N/4) <= |D| < N first (major), else the value's degree (minor).
    IF st.db_size = st.n THEN
        UPDATE {state} SET db_size = st.db_size, n = 2 * st.n;
        PERFORM {major_rebalance}();
    ELSIF st.db_size < st.n / 4 THEN
        UPDATE {state} SET db_size = st.db_size, n = st.n / 2 - 1;
        PERFORM {major_rebalance}();
    ELSE
        UPDATE {state} SET db_size = st.db_size;
        IF NOT own_heavy AND new_degree >= 1.5 * st.theta THEN
            PERFORM {move_k}({pvar_argument}, true);
        ELSIF own_heavy AND new_degree > 0 AND new_degree < 0.5 * st.theta THEN
            PERFORM {move_k}({pvar_argument}, false);
        END IF;
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION {update_k}({parameter_types}, bigint) IS {apply_k_comment};

-- The capture's entry point for one tuple (a deferred view replaces it with one that logs the
-- change; the batch path calls update_K directly, so that it always maintains).
CREATE FUNCTION {apply_k}({parameters}, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    PERFORM {update_k}({arguments}, m);
END;
$pgivm$;


-- The auxiliary views' part of a change m of one tuple of R_i in part `heavy` (F.1, "Maintaining
-- Auxiliary Views"): as a heavy tuple it is in V_k for every k but i and i+1, each delta a loop over
-- R_(k-1)'s light tuples at a bound value (< 3/2 N^eps); as a light tuple it is in V_(i+1) only, a
-- loop over P's heavy tuples at the bound values (<= 2 N^(1-eps)). Reads no part of R_i, so a minor
-- move runs it once out of the old part and once into the new one, per moved tuple.
CREATE FUNCTION {views_k}({parameters}, m bigint, heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
{part_declarations}
BEGIN
    SELECT {view_part_columns} INTO {view_part_variables}
      FROM (SELECT) s
{view_part_joins};
{views}
END;
$pgivm$;


-- MinorRebalancing: move every tuple whose A_i-value is `value` to the other part. The count does
-- not change; each tuple leaves the views of its old part and enters those of the new one.
CREATE FUNCTION {move_k}(value {pvar_type}, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    moved record;
BEGIN
    FOR moved IN SELECT {columns}, mult FROM {k_light} WHERE {pvar} = value AND to_heavy
                 UNION ALL SELECT {columns}, mult FROM {k_heavy} WHERE {pvar} = value AND NOT to_heavy LOOP
        PERFORM {views_k}({moved_arguments}, -moved.mult, NOT to_heavy);
        PERFORM {views_k}({moved_arguments}, moved.mult, to_heavy);
    END LOOP;
    IF to_heavy THEN
        WITH gone AS (DELETE FROM {k_light} WHERE {pvar} = value RETURNING {columns}, mult)
        INSERT INTO {k_heavy} ({columns}, mult) SELECT {columns}, mult FROM gone;
    ELSE
        WITH gone AS (DELETE FROM {k_heavy} WHERE {pvar} = value RETURNING {columns}, mult)
        INSERT INTO {k_light} ({columns}, mult) SELECT {columns}, mult FROM gone;
    END IF;
    UPDATE {k_degree} SET heavy = to_heavy WHERE {pvar} = value;
    UPDATE {state} SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;


-- A multi-row statement's net change, one ApplyUpdate per distinct tuple (no set-at-a-time path
-- for these queries yet: each row costs what a single-row statement does).
CREATE FUNCTION {apply_batch_k}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
AS $pgivm$
DECLARE
    change record;  -- (not "d": a variable may be called so)
BEGIN
    FOR change IN SELECT {columns}, sum(mult)::bigint AS mult FROM {k_delta} GROUP BY {columns} HAVING sum(mult) <> 0 LOOP
        PERFORM {update_k}({delta_arguments}, change.mult);
    END LOOP;
    DELETE FROM {k_delta};
END;
$pgivm$;


-- Strict repartition of R_i at the current theta (part of MajorRebalancing): heavy iff degree >= theta.
CREATE FUNCTION {repartition_k}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st {state}%ROWTYPE;
BEGIN
    SELECT * INTO st FROM {state};
    UPDATE {k_degree} SET heavy = (degree >= st.theta OR st.epsilon = 0)
     WHERE heavy IS DISTINCT FROM (degree >= st.theta OR st.epsilon = 0);
    WITH gone AS (DELETE FROM {k_light} k USING {k_degree} d WHERE d.{pvar} = k.{pvar} AND d.heavy
                  RETURNING {k_columns}, k.mult)
    INSERT INTO {k_heavy} ({columns}, mult) SELECT {columns}, mult FROM gone;
    WITH gone AS (DELETE FROM {k_heavy} k USING {k_degree} d WHERE d.{pvar} = k.{pvar} AND NOT d.heavy
                  RETURNING {k_columns}, k.mult)
    INSERT INTO {k_light} ({columns}, mult) SELECT {columns}, mult FROM gone;
END;
$pgivm$;


-- V_i from scratch (MajorRebalancing, the build): the join of its parts, summed over A_(i-1).
CREATE FUNCTION {recompute_v_k}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM {v_k};
    INSERT INTO {v_k} ({columns}, mult)
{v_k_definition};
END;
$pgivm$;


-- R_i emptied after a TRUNCATE of its table (the caller restarts from what remains).
CREATE FUNCTION {clear_k}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM {k_heavy};
    DELETE FROM {k_light};
    DELETE FROM {k_degree};
END;
$pgivm$;
