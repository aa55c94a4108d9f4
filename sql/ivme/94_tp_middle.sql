-- Maintenance of the middle relation S(b,c) of a 3-path count (Appendix H.3, Figure 22), partitioned
-- on B, and the view-wide functions: major rebalancing, the views from their definitions, the count
-- from the state, the restart (the size invariant: 48_resize.sql). Rendered once per view.

-- A single-tuple update of S. In the paper's letters an update to R_r (the middle): delta Q =
-- dR_r(alpha) S(alpha_RS) T(alpha_RT), O(1); delta V_RhSl = dR_h S_l(alpha_RS) at a heavy value,
-- delta V_RlT = dR_l T(alpha_RT) at a light one, O(1). Then OnUpdate: |D|, the degree, a minor
-- rebalancing of the B-value.
CREATE FUNCTION {apply_s}(x_b {b_type}, x_c {c_type}, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st       {state}%ROWTYPE;
    hb       boolean;  -- routing: the B-value's part (a new value starts light, heavy at eps = 0)
    delta_q  bigint;
    new_mult bigint;
    degree_b bigint;
BEGIN
    SELECT * INTO st FROM {state};
    hb := coalesce((SELECT d.heavy FROM {s_b_degree} d WHERE d.b = x_b), st.epsilon = 0);
    delta_q := coalesce((SELECT r.mult FROM {r} r WHERE r.b = x_b), 0) * coalesce((SELECT t.mult FROM {t} t WHERE t.c = x_c), 0);
    IF delta_q <> 0 THEN
        UPDATE {result} SET count = count + m * delta_q;
    END IF;
    PERFORM {views_s}(x_b, x_c, m, hb);

    -- S(b,c) += m, in the part the flag names; a tuple reaching multiplicity 0 is deleted.
    INSERT INTO {s} AS p (b, c, mult, hb) VALUES (x_b, x_c, m, hb)
        ON CONFLICT (b, c) DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
    -- The degree and |D| count distinct tuples: only a tuple appearing or vanishing changes them.
    IF new_mult = m THEN
        INSERT INTO {s_b_degree} AS d (b, degree, heavy) VALUES (x_b, 1, hb)
            ON CONFLICT (b) DO UPDATE SET degree = d.degree + 1 RETURNING degree INTO degree_b;
        IF {resize}(st.db_size + 1, st.n) THEN
            RETURN;  -- a major rebalancing repartitioned everything
        END IF;
    ELSIF new_mult = 0 THEN
        DELETE FROM {s} WHERE b = x_b AND c = x_c;
        UPDATE {s_b_degree} SET degree = degree - 1 WHERE b = x_b AND degree > 1 RETURNING degree INTO degree_b;
        IF NOT FOUND THEN
            DELETE FROM {s_b_degree} WHERE b = x_b;
            degree_b := 0;
        END IF;
        IF {resize}(st.db_size - 1, st.n) THEN
            RETURN;
        END IF;
    ELSE
        RETURN;
    END IF;

    -- OnUpdate, minor rebalancing: a value whose degree left [theta/2, 3/2 theta) of its part moves.
    IF NOT hb AND degree_b >= 1.5 * st.theta THEN
        PERFORM {move_s_b}(x_b, true);
    ELSIF hb AND degree_b > 0 AND degree_b < 0.5 * st.theta THEN
        PERFORM {move_s_b}(x_b, false);
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION {apply_s}({b_type}, {c_type}, bigint) IS 'IVMε 3R² (Appendix H.3, Figure 22): a single-tuple update of S, the middle';


-- The views' part of a change m of S(b,c) in part hb: st_heavy(b) += m T(c) at a heavy B-value,
-- rs_light(c) += R(b) m at a light one. Reads no tuple of S.
CREATE FUNCTION {views_s}(x_b {b_type}, x_c {c_type}, m bigint, hb boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    other bigint;
BEGIN
    IF hb THEN
        other := (SELECT t.mult FROM {t} t WHERE t.c = x_c);
        IF other IS NOT NULL THEN
            INSERT INTO {st_heavy} AS v (b, mult) VALUES (x_b, m * other) ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
            DELETE FROM {st_heavy} WHERE mult = 0;
        END IF;
    ELSE
        other := (SELECT r.mult FROM {r} r WHERE r.b = x_b);
        IF other IS NOT NULL THEN
            INSERT INTO {rs_light} AS v (c, mult) VALUES (x_c, m * other) ON CONFLICT (c) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
            DELETE FROM {rs_light} WHERE mult = 0;
        END IF;
    END IF;
END;
$pgivm$;


-- MinorRebalancing on B, set at a time: the value's tuples (< 3/2 theta + 1 of them) leave the old
-- part's view and enter the new one's; the count does not change.
CREATE FUNCTION {move_s_b}(value {b_type}, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    r_mult bigint := (SELECT r.mult FROM {r} r WHERE r.b = value);
BEGIN
    IF r_mult IS NOT NULL THEN  -- rs_light(c) -/+= R(b) S(b,c)
        INSERT INTO {rs_light} AS v (c, mult)
        SELECT k.c, CASE WHEN to_heavy THEN -1 ELSE 1 END * r_mult * k.mult FROM {s} k WHERE k.b = value
            ON CONFLICT (c) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM {rs_light} WHERE mult = 0;
    END IF;
    DELETE FROM {st_heavy} WHERE b = value;
    IF to_heavy THEN  -- st_heavy(b) = sum_c S(b,c) T(c)
        INSERT INTO {st_heavy} (b, mult)
        SELECT value, sum(k.mult * t.mult) FROM {s} k JOIN {t} t ON t.c = k.c WHERE k.b = value
        HAVING sum(k.mult * t.mult) <> 0;
    END IF;
    UPDATE {s} SET hb = to_heavy WHERE b = value;
    UPDATE {s_b_degree} SET heavy = to_heavy WHERE b = value;
    UPDATE {state} SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;


-- A multi-row statement's net change of S, set at a time: every delta on the state before the
-- batch, each tuple routed by its B-value's part before it; then S, the degrees and |D|; then the
-- invariants (a size-invariant violation resets N with a major rebalancing, else every B-value of
-- the batch that crossed a threshold moves).
CREATE FUNCTION {apply_batch_s}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
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
    WITH merged AS (DELETE FROM {s_delta} RETURNING b, c, mult)
    INSERT INTO {s_delta} (b, c, mult) SELECT b, c, sum(mult) FROM merged GROUP BY b, c HAVING sum(mult) <> 0;
    UPDATE {s_delta} d
       SET hb = coalesce((SELECT g.heavy FROM {s_b_degree} g WHERE g.b = d.b), st.epsilon = 0),
           new_mult = d.mult + coalesce((SELECT k.mult FROM {s} k WHERE k.b = d.b AND k.c = d.c), 0);
    ANALYZE {s_delta};

    SELECT coalesce(sum(d.mult * r.mult * t.mult), 0) INTO delta_q
      FROM {s_delta} d JOIN {r} r ON r.b = d.b JOIN {t} t ON t.c = d.c;
    IF delta_q <> 0 THEN
        UPDATE {result} SET count = count + delta_q::bigint;
    END IF;
    INSERT INTO {st_heavy} AS v (b, mult)
    SELECT d.b, sum(d.mult * t.mult) FROM {s_delta} d JOIN {t} t ON t.c = d.c WHERE d.hb
     GROUP BY d.b HAVING sum(d.mult * t.mult) <> 0
        ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM {st_heavy} WHERE mult = 0;
    INSERT INTO {rs_light} AS v (c, mult)
    SELECT d.c, sum(d.mult * r.mult) FROM {s_delta} d JOIN {r} r ON r.b = d.b WHERE NOT d.hb
     GROUP BY d.c HAVING sum(d.mult * r.mult) <> 0
        ON CONFLICT (c) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM {rs_light} WHERE mult = 0;

    -- The batch into S: new tuples inserted, changed ones updated, vanished ones deleted.
    INSERT INTO {s} AS p (b, c, mult, hb) SELECT b, c, new_mult, hb FROM {s_delta} WHERE new_mult <> 0
        ON CONFLICT (b, c) DO UPDATE SET mult = EXCLUDED.mult;
    DELETE FROM {s} p USING {s_delta} d WHERE d.new_mult = 0 AND p.b = d.b AND p.c = d.c;

    -- Degrees and |D|: +1 per tuple that appeared, -1 per tuple that vanished.
    INSERT INTO {s_b_degree} AS g (b, degree, heavy)
    SELECT b, sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(hb)
      FROM {s_delta} WHERE new_mult = mult OR new_mult = 0 GROUP BY b
    ON CONFLICT (b) DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM {s_b_degree} g USING {s_delta} d WHERE g.b = d.b AND g.degree = 0;
    SELECT coalesce(sum(CASE WHEN new_mult = mult THEN 1 WHEN new_mult = 0 THEN -1 ELSE 0 END), 0)
      INTO size_diff FROM {s_delta};

    IF NOT {resize}(st.db_size + size_diff, st.n) THEN
        FOR moving IN
            SELECT g.b AS value, NOT g.heavy AS to_heavy FROM {s_b_degree} g
             WHERE g.b IN (SELECT b FROM {s_delta})
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM {move_s_b}(moving.value, moving.to_heavy);
        END LOOP;
    END IF;
    DELETE FROM {s_delta};
END;
$pgivm$;


-- S emptied after a TRUNCATE of its table (the caller restarts from what remains).
CREATE FUNCTION {clear_s}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM {s};
    DELETE FROM {s_b_degree};
END;
$pgivm$;


-- MajorRebalancing: theta = N^epsilon, S strictly repartitioned on B (heavy iff degree >= theta),
-- both views recomputed.
CREATE FUNCTION {major_rebalance}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
DECLARE
    st {state}%ROWTYPE;
BEGIN
    UPDATE {state} SET theta = power(n::float8, epsilon), major_rebalances = major_rebalances + 1 RETURNING * INTO st;
    UPDATE {s_b_degree} SET heavy = (degree >= st.theta OR st.epsilon = 0) WHERE heavy <> (degree >= st.theta OR st.epsilon = 0);
    UPDATE {s} k SET hb = d.heavy FROM {s_b_degree} d WHERE d.b = k.b AND k.hb <> d.heavy;
    PERFORM {recompute_views}();
END;
$pgivm$;
COMMENT ON FUNCTION {major_rebalance}() IS 'IVMε MajorRebalancing (3R²): strict repartition at theta = N^epsilon, both views recomputed';


-- Both auxiliary views from their definitions over the parts (92_tp_tables.sql), set at a time.
CREATE FUNCTION {recompute_views}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
BEGIN
    DELETE FROM {rs_light};
    INSERT INTO {rs_light} (c, mult)
{rs_light_definition};
    DELETE FROM {st_heavy};
    INSERT INTO {st_heavy} (b, mult)
{st_heavy_definition};
END;
$pgivm$;


-- The count from the state: S's tuples each with R and T at its values (one row each), linear in
-- |D|. Used by the build, TRUNCATE and verify; the query is COUNT in pgivm/systems/ivme/three_path.py
-- (the Spark build runs it too).
CREATE FUNCTION {count_from_state}()
RETURNS bigint LANGUAGE sql SECURITY DEFINER STABLE
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
    SELECT coalesce(({count_definition}), 0)::bigint
$pgivm$;


-- Preprocessing: N = 2|D| + 1, the strict partition, the views, the count.
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
