-- Maintenance of one relation K(X,Y) of the cycle, with L(Y,Z) the next relation and M(Z,X) the
-- previous one (rendered for K = R, S, T). Follows ApplyUpdate and OnUpdate of Kara et al.,
-- "Counting Triangles under Updates in Worst-Case Optimal Time", Figures 3 and 4.
--
-- For a single-tuple update (alpha, beta) -> m to K:
--   delta Q = m * sum_z L(beta, z) * M(z, alpha)
-- beta lives in exactly one part of L, so only two of the paper's four delta terms can be nonzero:
--   beta heavy in L:  sum_z L_heavy(beta,z) * M_heavy(z,alpha)   loop over M_heavy(., alpha): <= 2 N^(1-eps)
--                     + V_LM(beta, alpha)                          one lookup
--   beta light in L:  sum_z L_light(beta,z) * M_light(z,alpha)    loop over L_light(beta, .): < 3/2 N^eps
--                     + sum_z M_heavy(z,alpha) * L_light(beta,z)  loop over M_heavy(., alpha): <= 2 N^(1-eps)
-- Every loop is written as an outer scan of the bounded side with correlated point lookups, so
-- PostgreSQL cannot pick the unbounded side as the driver. The function runs with seqscan, hash
-- and merge joins disabled (set by the calling trigger): each statement is an index nested loop.
-- One exception, for speed at the same bound: when the unbounded side of a loop turns out to be at
-- most a few times the bounded side (counted, and the count stops there), the sum is a merge of
-- the two lists, both sorted by z, which reads a row for a fraction of what a probe costs
-- (light_paths_k and heavy_paths_k below).

CREATE FUNCTION {apply_k}(alpha {type_x}, beta {type_y}, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st           {state}%ROWTYPE;
    alpha_heavy  boolean;  -- routing: is alpha in pi_X K_heavy?
    beta_heavy   boolean;  -- beta's part in L; NULL when beta does not occur in L
    beta_degree  bigint;   -- |L(beta, .)|
    partners     bigint;   -- |M_light(., alpha)| or |M_heavy(., alpha)|, counted up to merge_limit
    merge_limit  bigint;
    delta_q      bigint := 0;
    new_mult     bigint;
    new_degree   bigint;
    zeros_z      {type_z}[];  -- view entries this update brought to 0, deleted by key
BEGIN
    -- OnUpdate routing: to K_heavy iff alpha is heavy (or epsilon = 0); a new value starts light.
    SELECT s.*, ka.heavy, lb.heavy, lb.degree
      INTO st.singleton, st.epsilon, st.n, st.theta, st.db_size, st.updates_applied, st.major_rebalances,
           st.minor_rebalances, alpha_heavy, beta_heavy, beta_degree
      FROM {state} s
      LEFT JOIN {k_degree} ka ON ka.{x} = alpha
      LEFT JOIN {l_degree} lb ON lb.{y} = beta;
    alpha_heavy := coalesce(alpha_heavy, st.epsilon = 0);{listing_apply}

    -- ApplyUpdate lines 3-7: the change of the count.
    IF beta_heavy THEN
        -- A probe into L_heavy(beta, .) per row of M_heavy(., alpha); or, when M_heavy(., alpha) has
        -- at least a quarter as many rows as L_heavy(beta, .) (the count stops there), a merge of
        -- the two, which then reads O(|M_heavy(., alpha)|) rows too.
        merge_limit := greatest((beta_degree - 16) / 4, 1);
        SELECT count(*) INTO partners FROM (SELECT FROM {m_heavy} mh WHERE mh.{x} = alpha LIMIT merge_limit) p;
        IF partners >= merge_limit THEN
            delta_q := {heavy_paths_k}(alpha, beta);
        ELSE
            SELECT coalesce(sum(mh.mult * (SELECT lh.mult FROM {l_heavy} lh WHERE lh.{y} = beta AND lh.{z} = mh.{z})), 0)
              INTO delta_q
              FROM {m_heavy} mh WHERE mh.{x} = alpha;
        END IF;
        delta_q := delta_q + coalesce((SELECT v.mult FROM {v_lm} v WHERE v.{y} = beta AND v.{x} = alpha), 0);
    ELSIF NOT beta_heavy THEN
        -- M = M_light + M_heavy. The light part: a merge of L_light(beta, .) with M_light(., alpha)
        -- if the latter has fewer than merge_limit rows (the count stops there, so it stays
        -- O(deg_L(beta))), else one probe into M_light per row of L_light(beta, .).
        merge_limit := 4 * beta_degree + 16;
        SELECT count(*) INTO partners FROM (SELECT FROM {m_light} ml WHERE ml.{x} = alpha LIMIT merge_limit) p;
        IF partners < merge_limit THEN
            delta_q := {light_paths_k}(alpha, beta);
        ELSE
            SELECT coalesce(sum(ll.mult * (SELECT ml.mult FROM {m_light} ml WHERE ml.{z} = ll.{z} AND ml.{x} = alpha)), 0)
              INTO delta_q
              FROM {l_light} ll WHERE ll.{y} = beta;
        END IF;
        -- The heavy part: M_heavy(., alpha) (<= 2 N^(1-eps) rows, read below for V_MK anyway) probing L_light.
        delta_q := delta_q + coalesce(
            (SELECT sum(mh.mult * (SELECT ll.mult FROM {l_light} ll WHERE ll.{y} = beta AND ll.{z} = mh.{z}))
               FROM {m_heavy} mh WHERE mh.{x} = alpha), 0);
    END IF;
    IF delta_q <> 0 THEN
        UPDATE {result} SET count = count + m * delta_q;
    END IF;

    -- ApplyUpdate lines 8-11: the one auxiliary view this update touches. INSERT ... ON CONFLICT is
    -- always driven by its (bounded) SELECT; a MERGE could be planned from the view's side.
    IF alpha_heavy THEN
        -- V_KL(alpha, z) += m * L_light(beta, z); nothing to do unless beta is light in L.
        IF NOT beta_heavy THEN
            WITH changed AS (
                INSERT INTO {v_kl} AS v ({x}, {z}, mult)
                SELECT alpha, ll.{z}, m * ll.mult FROM {l_light} ll WHERE ll.{y} = beta
                ON CONFLICT ({x}, {z}) DO UPDATE SET mult = v.mult + EXCLUDED.mult
                RETURNING v.{z}, v.mult)
            SELECT array_agg({z}) INTO zeros_z FROM changed WHERE mult = 0;
            IF zeros_z IS NOT NULL THEN
                DELETE FROM {v_kl} WHERE {x} = alpha AND {z} = ANY (zeros_z);
            END IF;
        END IF;
    ELSE
        -- V_MK(z, beta) += M_heavy(z, alpha) * m.
        WITH changed AS (
            INSERT INTO {v_mk} AS v ({z}, {y}, mult)
            SELECT mh.{z}, beta, m * mh.mult FROM {m_heavy} mh WHERE mh.{x} = alpha
            ON CONFLICT ({z}, {y}) DO UPDATE SET mult = v.mult + EXCLUDED.mult
            RETURNING v.{z}, v.mult)
        SELECT array_agg({z}) INTO zeros_z FROM changed WHERE mult = 0;
        IF zeros_z IS NOT NULL THEN
            DELETE FROM {v_mk} WHERE {z} = ANY (zeros_z) AND {y} = beta;
        END IF;
    END IF;

    -- ApplyUpdate line 12: K_part(alpha, beta) += m. Stored multiplicities are never 0, so the
    -- new multiplicity is m exactly when the tuple is new, and 0 when it vanishes.
    IF alpha_heavy THEN
        INSERT INTO {k_heavy} AS p ({x}, {y}, mult) VALUES (alpha, beta, m)
            ON CONFLICT ({x}, {y}) DO UPDATE SET mult = p.mult + EXCLUDED.mult
            RETURNING mult INTO new_mult;
        IF new_mult = 0 THEN
            DELETE FROM {k_heavy} WHERE {x} = alpha AND {y} = beta;
        END IF;
    ELSE
        INSERT INTO {k_light} AS p ({x}, {y}, mult) VALUES (alpha, beta, m)
            ON CONFLICT ({x}, {y}) DO UPDATE SET mult = p.mult + EXCLUDED.mult
            RETURNING mult INTO new_mult;
        IF new_mult = 0 THEN
            DELETE FROM {k_light} WHERE {x} = alpha AND {y} = beta;
        END IF;
    END IF;

    -- Degrees and |D| count distinct tuples: only a tuple appearing or vanishing changes them,
    -- and only then can a rebalancing be due.
    IF new_mult = m THEN
        INSERT INTO {k_degree} AS d ({x}, degree, heavy) VALUES (alpha, 1, alpha_heavy)
            ON CONFLICT ({x}) DO UPDATE SET degree = d.degree + 1
            RETURNING degree INTO new_degree;
        st.db_size := st.db_size + 1;
    ELSIF new_mult = 0 THEN
        UPDATE {k_degree} SET degree = degree - 1 WHERE {x} = alpha AND degree > 1 RETURNING degree INTO new_degree;
        IF NOT FOUND THEN  -- alpha's last tuple: alpha leaves pi_X K
            DELETE FROM {k_degree} WHERE {x} = alpha;
            new_degree := 0;
        END IF;
        st.db_size := st.db_size - 1;
    ELSE
        RETURN;
    END IF;

    -- OnUpdate: size invariant floor(N/4) <= |D| < N first (major), else alpha's degree (minor).
    IF st.db_size = st.n THEN
        UPDATE {state} SET db_size = st.db_size, n = 2 * st.n;
        PERFORM {major_rebalance}();
    ELSIF st.db_size < st.n / 4 THEN
        UPDATE {state} SET db_size = st.db_size, n = st.n / 2 - 1;
        PERFORM {major_rebalance}();
    ELSE
        UPDATE {state} SET db_size = st.db_size;
        IF NOT alpha_heavy AND new_degree >= 1.5 * st.theta THEN
            PERFORM {move_k}(alpha, true);
        ELSIF alpha_heavy AND new_degree > 0 AND new_degree < 0.5 * st.theta THEN
            PERFORM {move_k}(alpha, false);
        END IF;
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION {apply_k}({type_x}, {type_y}, bigint) IS {apply_k_comment};


-- sum_z L_part(beta, z) * M_part(z, alpha) as a merge join of two index-only range scans, both
-- sorted by z: O(|L_part(beta, .)| + |M_part(., alpha)|). apply_k calls them only once it has
-- counted that neither side is more than a few times the bounded one.
CREATE FUNCTION {light_paths_k}(alpha {type_x}, beta {type_y})
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_mergejoin = on SET enable_nestloop = off SET enable_hashjoin = off SET enable_seqscan = off
AS $pgivm$
BEGIN
    RETURN (SELECT coalesce(sum(ll.mult * ml.mult), 0)
              FROM {l_light} ll JOIN {m_light} ml ON ml.{z} = ll.{z}
             WHERE ll.{y} = beta AND ml.{x} = alpha);
END;
$pgivm$;
COMMENT ON FUNCTION {light_paths_k}({type_x}, {type_y}) IS {light_paths_k_comment};

CREATE FUNCTION {heavy_paths_k}(alpha {type_x}, beta {type_y})
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_mergejoin = on SET enable_nestloop = off SET enable_hashjoin = off SET enable_seqscan = off
AS $pgivm$
BEGIN
    RETURN (SELECT coalesce(sum(lh.mult * mh.mult), 0)
              FROM {l_heavy} lh JOIN {m_heavy} mh ON mh.{z} = lh.{z}
             WHERE lh.{y} = beta AND mh.{x} = alpha);
END;
$pgivm$;
COMMENT ON FUNCTION {heavy_paths_k}({type_x}, {type_y}) IS {heavy_paths_k_comment};


-- MinorRebalancing: move every tuple with X = alpha between K_light and K_heavy.
-- Each moved tuple is a delete from one part and an insert into the other; the two cancel in
-- the count, so only the auxiliary views change: as a light tuple (alpha, y) fed
-- V_MK(z, y) += M_heavy(z, alpha) * mult, as a heavy tuple it feeds V_KL(alpha, z) += mult * L_light(y, z).
-- Cost O(N^eps * N^max(eps, 1-eps)), amortized over the >= N^eps / 2 updates since the last move.
CREATE FUNCTION {move_k}(alpha {type_x}, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    direction bigint := CASE WHEN to_heavy THEN 1 ELSE -1 END;  -- +1: light -> heavy
    zeros_z   {type_z}[];
    zeros_y   {type_y}[];
BEGIN{listing_move}
    -- Contributions to V_MK, which holds alpha's tuples while they are light.
    WITH changed AS (
        INSERT INTO {v_mk} AS v ({z}, {y}, mult)
        SELECT mh.{z}, k.{y}, -direction * mh.mult * k.mult
          FROM (SELECT {y}, mult FROM {k_light} WHERE {x} = alpha AND to_heavy
                UNION ALL
                SELECT {y}, mult FROM {k_heavy} WHERE {x} = alpha AND NOT to_heavy) k
         CROSS JOIN (SELECT {z}, mult FROM {m_heavy} WHERE {x} = alpha) mh
        ON CONFLICT ({z}, {y}) DO UPDATE SET mult = v.mult + EXCLUDED.mult
        RETURNING v.{z}, v.{y}, v.mult)
    SELECT array_agg({z}), array_agg({y}) INTO zeros_z, zeros_y FROM changed WHERE mult = 0;
    FOR i IN 1 .. coalesce(array_length(zeros_z, 1), 0) LOOP
        DELETE FROM {v_mk} WHERE {z} = zeros_z[i] AND {y} = zeros_y[i];
    END LOOP;

    -- Contributions to V_KL, which holds alpha's tuples while they are heavy.
    WITH changed AS (
        INSERT INTO {v_kl} AS v ({x}, {z}, mult)
        SELECT alpha, ll.{z}, direction * sum(k.mult * ll.mult)
          FROM (SELECT {y}, mult FROM {k_light} WHERE {x} = alpha AND to_heavy
                UNION ALL
                SELECT {y}, mult FROM {k_heavy} WHERE {x} = alpha AND NOT to_heavy) k
          JOIN {l_light} ll ON ll.{y} = k.{y}
         GROUP BY ll.{z}
        HAVING sum(k.mult * ll.mult) <> 0
        ON CONFLICT ({x}, {z}) DO UPDATE SET mult = v.mult + EXCLUDED.mult
        RETURNING v.{z}, v.mult)
    SELECT array_agg({z}) INTO zeros_z FROM changed WHERE mult = 0;
    IF zeros_z IS NOT NULL THEN
        DELETE FROM {v_kl} WHERE {x} = alpha AND {z} = ANY (zeros_z);
    END IF;

    IF to_heavy THEN
        WITH moved AS (DELETE FROM {k_light} WHERE {x} = alpha RETURNING {x}, {y}, mult)
        INSERT INTO {k_heavy} ({x}, {y}, mult) SELECT {x}, {y}, mult FROM moved;
    ELSE
        WITH moved AS (DELETE FROM {k_heavy} WHERE {x} = alpha RETURNING {x}, {y}, mult)
        INSERT INTO {k_light} ({x}, {y}, mult) SELECT {x}, {y}, mult FROM moved;
    END IF;
    UPDATE {k_degree} SET heavy = to_heavy WHERE {x} = alpha;
    UPDATE {state} SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;
COMMENT ON FUNCTION {move_k}({type_x}, boolean) IS {move_k_comment};


-- Strict repartition of K at the current theta (part of MajorRebalancing): heavy iff degree >= theta,
-- or always heavy when epsilon = 0. O(|K|).
CREATE FUNCTION {repartition_k}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st {state}%ROWTYPE;
BEGIN
    SELECT * INTO st FROM {state};
    UPDATE {k_degree}
       SET heavy = (degree >= st.theta OR st.epsilon = 0)
     WHERE heavy IS DISTINCT FROM (degree >= st.theta OR st.epsilon = 0);
    WITH moved AS (
        DELETE FROM {k_light} k USING {k_degree} d WHERE d.{x} = k.{x} AND d.heavy
        RETURNING k.{x}, k.{y}, k.mult)
    INSERT INTO {k_heavy} ({x}, {y}, mult) SELECT {x}, {y}, mult FROM moved;
    WITH moved AS (
        DELETE FROM {k_heavy} k USING {k_degree} d WHERE d.{x} = k.{x} AND NOT d.heavy
        RETURNING k.{x}, k.{y}, k.mult)
    INSERT INTO {k_light} ({x}, {y}, mult) SELECT {x}, {y}, mult FROM moved;
END;
$pgivm$;


-- V_KL from scratch (part of MajorRebalancing and of the initial build): O(N^(1+min(eps, 1-eps))).
CREATE FUNCTION {recompute_v_kl}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM {v_kl};  -- not TRUNCATE, which would empty it for snapshots taken before (verify)
    INSERT INTO {v_kl} ({x}, {z}, mult)
    SELECT kh.{x}, ll.{z}, sum(kh.mult * ll.mult)
      FROM {k_heavy} kh JOIN {l_light} ll ON ll.{y} = kh.{y}
     GROUP BY kh.{x}, ll.{z}
    HAVING sum(kh.mult * ll.mult) <> 0;
END;
$pgivm$;
