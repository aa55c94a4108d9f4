-- Maintenance of one relation R_i of a Loomis-Whitney count (Kara et al., long version, Appendix
-- F.1), rendered for each relation. An update to R_i binds every variable but A_(i-1) (F below);
-- R_(i-1), partitioned on F, is "P"; the other n - 2 relations are the "middles", each partitioned
-- on a variable the update binds, so each middle's part is known before any loop runs.

-- ApplyUpdate + OnUpdate for a single-tuple update of R_i.
CREATE FUNCTION {apply_k}({parameters}, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp{join_order}
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

    -- The auxiliary views that read R_i's part (the other relations' parts as looked up above).
    PERFORM {views_k}({arguments}, m, own_heavy, {view_part_variables});

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
COMMENT ON FUNCTION {apply_k}({parameter_types}, bigint) IS {apply_k_comment};


-- The auxiliary views' part of a change m of one tuple of R_i in part `heavy` (F.1, "Maintaining
-- Auxiliary Views"): as a heavy tuple it is in V_k for every k but i and i+1, each delta a loop over
-- R_(k-1)'s light tuples at a bound value (< 3/2 N^eps); as a light tuple it is in V_(i+1) only, a
-- loop over P's heavy tuples at the bound values (<= 2 N^(1-eps)). The other relations' parts of
-- the values the tuple binds come in as parameters (apply_k has looked them up; views_moved_k looks
-- them up for each tuple a minor move takes). Reads no part of R_i, so a minor move runs it once
-- out of the old part and once into the new one, per moved tuple.
CREATE FUNCTION {views_k}({parameters}, m bigint, heavy boolean, {view_part_parameters})
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp{join_order}
AS $pgivm$
DECLARE
    zeros_f     {free_type}[];
BEGIN
{views}
END;
$pgivm$;

-- views_k for a tuple a minor move takes to the other part: the other relations' parts first.
CREATE FUNCTION {views_moved_k}({parameters}, m bigint, heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp{join_order}
AS $pgivm$
DECLARE
{part_declarations}
BEGIN
    SELECT {view_part_columns} INTO {view_part_variables}
      FROM (SELECT) s
{view_part_joins};
    PERFORM {views_k}({arguments}, m, heavy, {view_part_variables});
END;
$pgivm$;


-- MinorRebalancing: move every tuple whose A_i-value is `value` to the other part. The count does
-- not change; each tuple leaves the views of its old part and enters those of the new one.
CREATE FUNCTION {move_k}(value {pvar_type}, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp{join_order}
AS $pgivm$
DECLARE
    moved record;
BEGIN
    FOR moved IN SELECT {columns}, mult FROM {k_light} WHERE {pvar} = value AND to_heavy
                 UNION ALL SELECT {columns}, mult FROM {k_heavy} WHERE {pvar} = value AND NOT to_heavy LOOP
        PERFORM {views_moved_k}({moved_arguments}, -moved.mult, NOT to_heavy);
        PERFORM {views_moved_k}({moved_arguments}, moved.mult, to_heavy);
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


-- A multi-row statement's net change of R_i, set at a time (as the triangle's apply_batch_K): every
-- delta on the state before the batch (R_i is in none of its own), the batch into its values'
-- current parts, then the invariants: a size-invariant violation resets N = 2|D| + 1 with a major
-- rebalancing, else every value of the batch that crossed a threshold moves.
CREATE FUNCTION {apply_batch_k}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp{join_order}
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
SET random_page_cost = 1.1
AS $pgivm$
DECLARE
    st        {state}%ROWTYPE;
    delta_q   numeric;
    size_diff bigint;
    moving    record;
BEGIN
    SELECT * INTO st FROM {state};
    -- One row per distinct tuple (a deferred refresh may hand several), then statistics for the planner.
    WITH merged AS (DELETE FROM {k_delta} RETURNING {columns}, mult)
    INSERT INTO {k_delta} ({columns}, mult)
    SELECT {columns}, sum(mult) FROM merged GROUP BY {columns} HAVING sum(mult) <> 0;
    ANALYZE {k_delta};

    -- Routing as OnUpdate: the partition value's current part (a new one light, heavy at epsilon = 0),
    -- and each tuple's multiplicity after the batch (a tuple lives in its value's part).
    UPDATE {k_delta} d
       SET heavy = st.epsilon = 0 OR coalesce((SELECT g.heavy FROM {k_degree} g WHERE g.{pvar} = d.{pvar}), false),
           new_mult = d.mult + coalesce((SELECT p.mult FROM {k_heavy} p WHERE {delta_match}),
                                        (SELECT p.mult FROM {k_light} p WHERE {delta_match}), 0);

    -- delta Q: the batch joined with every other relation.
    {batch_delta_q};
    IF delta_q <> 0 THEN
        UPDATE {result} SET count = count + delta_q::bigint;
    END IF;

{batch_views}

    -- The batch into the parts: new tuples inserted, changed ones updated, vanished ones deleted.
    INSERT INTO {k_heavy} AS p ({columns}, mult) SELECT {columns}, new_mult FROM {k_delta} WHERE heavy AND new_mult <> 0
        ON CONFLICT ({columns}) DO UPDATE SET mult = EXCLUDED.mult;
    INSERT INTO {k_light} AS p ({columns}, mult) SELECT {columns}, new_mult FROM {k_delta} WHERE NOT heavy AND new_mult <> 0
        ON CONFLICT ({columns}) DO UPDATE SET mult = EXCLUDED.mult;
    DELETE FROM {k_heavy} p USING {k_delta} d WHERE d.heavy AND d.new_mult = 0 AND {delta_match};
    DELETE FROM {k_light} p USING {k_delta} d WHERE NOT d.heavy AND d.new_mult = 0 AND {delta_match};

    -- Degrees and |D|: +1 per tuple that appeared, -1 per tuple that vanished.
    INSERT INTO {k_degree} AS g ({pvar}, degree, heavy)
    SELECT {pvar}, sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(heavy)
      FROM {k_delta} WHERE new_mult = mult OR new_mult = 0
     GROUP BY {pvar}
    ON CONFLICT ({pvar}) DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM {k_degree} g USING {k_delta} d WHERE g.{pvar} = d.{pvar} AND g.degree = 0;
    SELECT coalesce(sum(CASE WHEN new_mult = mult THEN 1 WHEN new_mult = 0 THEN -1 ELSE 0 END), 0)
      INTO size_diff FROM {k_delta};
    st.db_size := st.db_size + size_diff;
    UPDATE {state} SET db_size = st.db_size;

    -- Restore the invariants.
    IF st.db_size >= st.n OR st.db_size < st.n / 4 THEN
        UPDATE {state} SET n = 2 * st.db_size + 1;
        PERFORM {major_rebalance}();
    ELSE
        FOR moving IN
            SELECT g.{pvar} AS value, NOT g.heavy AS to_heavy
              FROM {k_degree} g
             WHERE g.{pvar} IN (SELECT {pvar} FROM {k_delta})
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM {move_k}(moving.value, moving.to_heavy);
        END LOOP;
    END IF;
    DELETE FROM {k_delta};
END;
$pgivm$;


-- Strict repartition of R_i at the current theta (part of MajorRebalancing): heavy iff degree >= theta.
CREATE FUNCTION {repartition_k}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp{join_order}
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
SET search_path = pg_catalog, pg_temp{join_order}
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
SET search_path = pg_catalog, pg_temp{join_order}
AS $pgivm$
BEGIN
    DELETE FROM {k_heavy};
    DELETE FROM {k_light};
    DELETE FROM {k_degree};
END;
$pgivm$;
