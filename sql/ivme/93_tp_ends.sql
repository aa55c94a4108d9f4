-- Maintenance of the ends of a 3-path count (Appendix H.3, Figure 22's delta strategies; the
-- views in 92_tp_tables.sql): R(b), next to the partitioned variable, and T(c). Rendered once per
-- view. Every delta reads the state before the update; R and T appear in no term of their own.

-- A single-tuple update of R. In the paper's letters an update to T (the unpartitioned end):
-- delta Q_RlST = dT sum R_l(alpha, a_RS) S(a_RS), O(N^eps) at a light value, and
-- delta Q_RhST = dT V_RhSl(alpha), O(1) at a heavy one; delta V_RlT = dT R_l(alpha, a_RS).
CREATE FUNCTION {apply_r}(b_value {b_type}, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st       {state}%ROWTYPE;
    heavy    boolean;  -- the value's part in S (NULL: S has no tuple with it, and no path goes through it)
    delta_q  bigint := 0;
    new_mult bigint;
BEGIN
    SELECT * INTO st FROM {state};
    SELECT d.heavy INTO heavy FROM {s_b_degree} d WHERE d.b = b_value;
    IF heavy THEN
        delta_q := coalesce((SELECT v.mult FROM {st_heavy} v WHERE v.b = b_value), 0);
    ELSIF NOT heavy THEN
        -- A light value's S-tuples (< 3/2 N^eps), each with T at its C-value; rs_light(c) += m S_l(b,c).
        delta_q := coalesce((SELECT sum(k.mult * (SELECT t.mult FROM {t} t WHERE t.c = k.c))
                               FROM {s} k WHERE k.b = b_value), 0);
        INSERT INTO {rs_light} AS v (c, mult) SELECT k.c, m * k.mult FROM {s} k WHERE k.b = b_value
            ON CONFLICT (c) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM {rs_light} WHERE mult = 0;
    END IF;
    IF delta_q <> 0 THEN
        UPDATE {result} SET count = count + m * delta_q;
    END IF;

    -- R(b) += m; |D| counts distinct tuples, so only a value appearing or vanishing changes it.
    INSERT INTO {r} AS p (b, mult) VALUES (b_value, m)
        ON CONFLICT (b) DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
    IF new_mult = 0 THEN
        DELETE FROM {r} WHERE b = b_value;
        PERFORM {resize}(st.db_size - 1, st.n);
    ELSIF new_mult = m THEN
        PERFORM {resize}(st.db_size + 1, st.n);
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION {apply_r}({b_type}, bigint) IS 'IVMε 3R² (Appendix H.3, Figure 22): a single-tuple update of R, the end next to the partitioned variable';


-- A single-tuple update of T. In the paper's letters an update to S (the end partitioned on its
-- whole key): delta Q = dS (V_RlT(alpha) + sum R_h(a_RT, alpha) T(a_RT)), the sum over the heavy
-- B-values (< 2 N^(1-eps)), and delta V_RhSl(a_RT) = dS R_h(a_RT, alpha) over the same tuples,
-- read once for both through S's partial index on (c, b) WHERE hb.
CREATE FUNCTION {apply_t}(c_value {c_type}, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st       {state}%ROWTYPE;
    delta_q  bigint;
    new_mult bigint;
BEGIN
    SELECT * INTO st FROM {state};
    WITH h AS MATERIALIZED (
        SELECT k.b, k.mult FROM {s} k WHERE k.c = c_value AND k.hb
    ), v AS (
        INSERT INTO {st_heavy} AS v (b, mult) SELECT h.b, m * h.mult FROM h
            ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult
    )
    SELECT coalesce((SELECT v.mult FROM {rs_light} v WHERE v.c = c_value), 0)
         + coalesce(sum(h.mult * (SELECT r.mult FROM {r} r WHERE r.b = h.b)), 0)
      INTO delta_q FROM h;
    DELETE FROM {st_heavy} WHERE mult = 0;
    IF delta_q <> 0 THEN
        UPDATE {result} SET count = count + m * delta_q;
    END IF;

    INSERT INTO {t} AS p (c, mult) VALUES (c_value, m)
        ON CONFLICT (c) DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
    IF new_mult = 0 THEN
        DELETE FROM {t} WHERE c = c_value;
        PERFORM {resize}(st.db_size - 1, st.n);
    ELSIF new_mult = m THEN
        PERFORM {resize}(st.db_size + 1, st.n);
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION {apply_t}({c_type}, bigint) IS 'IVMε 3R² (Appendix H.3, Figure 22): a single-tuple update of T, the other end';


-- A multi-row statement's net change of R, set at a time: the same terms for every value of the
-- batch at once, on the state before it, then rs_light, then R and |D|.
CREATE FUNCTION {apply_batch_r}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
SET random_page_cost = 1.1
AS $pgivm$
DECLARE
    st        {state}%ROWTYPE;
    delta_q   numeric;
    size_diff bigint;
BEGIN
    SELECT * INTO st FROM {state};
    -- One row per distinct value (a deferred refresh may hand several), with its part in S.
    WITH merged AS (DELETE FROM {r_delta} RETURNING b, mult)
    INSERT INTO {r_delta} (b, mult) SELECT b, sum(mult) FROM merged GROUP BY b HAVING sum(mult) <> 0;
    UPDATE {r_delta} d SET heavy = (SELECT g.heavy FROM {s_b_degree} g WHERE g.b = d.b);
    ANALYZE {r_delta};

    SELECT coalesce((SELECT sum(d.mult * v.mult) FROM {r_delta} d JOIN {st_heavy} v ON v.b = d.b WHERE d.heavy), 0)
         + coalesce((SELECT sum(d.mult * k.mult * t.mult) FROM {r_delta} d JOIN {s} k ON k.b = d.b
                       JOIN {t} t ON t.c = k.c WHERE NOT d.heavy), 0)
      INTO delta_q;
    IF delta_q <> 0 THEN
        UPDATE {result} SET count = count + delta_q::bigint;
    END IF;
    INSERT INTO {rs_light} AS v (c, mult)
    SELECT k.c, sum(d.mult * k.mult) FROM {r_delta} d JOIN {s} k ON k.b = d.b WHERE NOT d.heavy
     GROUP BY k.c HAVING sum(d.mult * k.mult) <> 0
        ON CONFLICT (c) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM {rs_light} WHERE mult = 0;

    WITH changed AS (
        INSERT INTO {r} AS p (b, mult) SELECT b, mult FROM {r_delta}
            ON CONFLICT (b) DO UPDATE SET mult = p.mult + EXCLUDED.mult
        RETURNING p.b, p.mult AS new_mult)
    SELECT coalesce(sum(CASE WHEN c.new_mult = 0 THEN -1 WHEN c.new_mult = d.mult THEN 1 ELSE 0 END), 0)
      INTO size_diff FROM changed c JOIN {r_delta} d ON d.b = c.b;
    DELETE FROM {r} WHERE mult = 0;
    DELETE FROM {r_delta};
    IF size_diff <> 0 THEN
        PERFORM {resize}(st.db_size + size_diff, st.n);
    END IF;
END;
$pgivm$;


-- A multi-row statement's net change of T, set at a time.
CREATE FUNCTION {apply_batch_t}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
SET random_page_cost = 1.1
AS $pgivm$
DECLARE
    st        {state}%ROWTYPE;
    delta_q   numeric;
    size_diff bigint;
BEGIN
    SELECT * INTO st FROM {state};
    WITH merged AS (DELETE FROM {t_delta} RETURNING c, mult)
    INSERT INTO {t_delta} (c, mult) SELECT c, sum(mult) FROM merged GROUP BY c HAVING sum(mult) <> 0;
    ANALYZE {t_delta};

    SELECT coalesce((SELECT sum(d.mult * v.mult) FROM {t_delta} d JOIN {rs_light} v ON v.c = d.c), 0)
         + coalesce((SELECT sum(d.mult * k.mult * r.mult) FROM {t_delta} d JOIN {s} k ON k.c = d.c AND k.hb
                       JOIN {r} r ON r.b = k.b), 0)
      INTO delta_q;
    IF delta_q <> 0 THEN
        UPDATE {result} SET count = count + delta_q::bigint;
    END IF;
    INSERT INTO {st_heavy} AS v (b, mult)
    SELECT k.b, sum(d.mult * k.mult) FROM {t_delta} d JOIN {s} k ON k.c = d.c AND k.hb
     GROUP BY k.b HAVING sum(d.mult * k.mult) <> 0
        ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM {st_heavy} WHERE mult = 0;

    WITH changed AS (
        INSERT INTO {t} AS p (c, mult) SELECT c, mult FROM {t_delta}
            ON CONFLICT (c) DO UPDATE SET mult = p.mult + EXCLUDED.mult
        RETURNING p.c, p.mult AS new_mult)
    SELECT coalesce(sum(CASE WHEN x.new_mult = 0 THEN -1 WHEN x.new_mult = d.mult THEN 1 ELSE 0 END), 0)
      INTO size_diff FROM changed x JOIN {t_delta} d ON d.c = x.c;
    DELETE FROM {t} WHERE mult = 0;
    DELETE FROM {t_delta};
    IF size_diff <> 0 THEN
        PERFORM {resize}(st.db_size + size_diff, st.n);
    END IF;
END;
$pgivm$;


-- R and T emptied after a TRUNCATE of their table (the caller restarts from what remains).
CREATE FUNCTION {clear_r}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM {r};
END;
$pgivm$;

CREATE FUNCTION {clear_t}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM {t};
END;
$pgivm$;
