-- The listing's part of a single-tuple update (alpha, beta) -> m to relation K(X,Y), in part
-- `heavy` of K, with beta in part `beta_heavy` of L (NULL: beta is not in L): ApplyUpdateEnum of Kara et al. (long version, Appendix E, Figure 13), rendered for
-- K = R, S, T with L the next relation and M the previous one. Figure 13 writes lines 5-7 and 10-11
-- with "=": they are increments. Reads L and M only, never K: apply_K calls it before K changes, and
-- move_K once per moved tuple, out of its old part (-mult) and into its new one (+mult).
-- Every loop is an outer scan of the bounded side with correlated point lookups (see apply_K), and
-- none reads the part of L that does not hold beta (empty, but after a rebalancing its index may
-- still hold beta's moved tuples, dead until VACUUM).
CREATE FUNCTION {list_k}(alpha {type_x}, beta {type_y}, m bigint, heavy boolean, beta_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    zeros_z {type_z}[];
    zeros_x {type_x}[];
BEGIN
    IF heavy AND beta_heavy THEN
        -- line 4: Q^L(alpha, beta, z) += m * L_heavy(beta, z) * M_heavy(z, alpha), over M_heavy(., alpha): <= 2 N^(1-eps)
        WITH changed AS (
            INSERT INTO {listing} AS q ({x}, {y}, {z}, mult)
            SELECT alpha, beta, p.{z}, m * p.mult
              FROM (SELECT mh.{z}, mh.mult * (SELECT lh.mult FROM {l_heavy} lh WHERE lh.{y} = beta AND lh.{z} = mh.{z}) AS mult
                      FROM {m_heavy} mh WHERE mh.{x} = alpha) p
             WHERE p.mult IS NOT NULL
            ON CONFLICT ({x}, {y}, {z}) DO UPDATE SET mult = q.mult + EXCLUDED.mult
            RETURNING q.{z}, q.mult)
        SELECT array_agg({z}) INTO zeros_z FROM changed WHERE mult = 0;
        IF zeros_z IS NOT NULL THEN
            DELETE FROM {listing} WHERE {x} = alpha AND {y} = beta AND {z} = ANY (zeros_z);
        END IF;
    ELSIF heavy AND NOT beta_heavy THEN
        -- line 5: W_KL(alpha, beta, z) += m * L_light(beta, z), over L_light(beta, .): < 3/2 N^eps
        WITH changed AS (
            INSERT INTO {w_kl} AS w ({x}, {y}, {z}, mult)
            SELECT alpha, beta, ll.{z}, m * ll.mult FROM {l_light} ll WHERE ll.{y} = beta
            ON CONFLICT ({x}, {z}, {y}) DO UPDATE SET mult = w.mult + EXCLUDED.mult
            RETURNING w.{z}, w.mult)
        SELECT array_agg({z}) INTO zeros_z FROM changed WHERE mult = 0;
        IF zeros_z IS NOT NULL THEN
            DELETE FROM {w_kl} WHERE {x} = alpha AND {y} = beta AND {z} = ANY (zeros_z);
        END IF;
        -- lines 6-7: P_KLM(alpha, z) += m * L_light(beta, z) * M(z, alpha), the same loop; (z, alpha)
        -- is in M_heavy or M_light (z's part), probed in both
        WITH changed AS (
            INSERT INTO {p_klm} AS p ({x}, {z}, mult)
            SELECT alpha, d.{z}, m * d.mult
              FROM (SELECT ll.{z}, ll.mult * coalesce(
                               (SELECT mh.mult FROM {m_heavy} mh WHERE mh.{z} = ll.{z} AND mh.{x} = alpha),
                               (SELECT ml.mult FROM {m_light} ml WHERE ml.{z} = ll.{z} AND ml.{x} = alpha)) AS mult
                      FROM {l_light} ll WHERE ll.{y} = beta) d
             WHERE d.mult IS NOT NULL
            ON CONFLICT ({x}, {z}) DO UPDATE SET mult = p.mult + EXCLUDED.mult
            RETURNING p.{z}, p.mult)
        SELECT array_agg({z}) INTO zeros_z FROM changed WHERE mult = 0;
        IF zeros_z IS NOT NULL THEN
            DELETE FROM {p_klm} WHERE {x} = alpha AND {z} = ANY (zeros_z);
        END IF;
    ELSIF NOT heavy THEN
        IF NOT beta_heavy THEN
            -- line 9: Q^L(alpha, beta, z) += m * L_light(beta, z) * M_light(z, alpha), over L_light(beta, .): < 3/2 N^eps
            WITH changed AS (
                INSERT INTO {listing} AS q ({x}, {y}, {z}, mult)
                SELECT alpha, beta, p.{z}, m * p.mult
                  FROM (SELECT ll.{z}, ll.mult * (SELECT ml.mult FROM {m_light} ml WHERE ml.{z} = ll.{z} AND ml.{x} = alpha) AS mult
                          FROM {l_light} ll WHERE ll.{y} = beta) p
                 WHERE p.mult IS NOT NULL
                ON CONFLICT ({x}, {y}, {z}) DO UPDATE SET mult = q.mult + EXCLUDED.mult
                RETURNING q.{z}, q.mult)
            SELECT array_agg({z}) INTO zeros_z FROM changed WHERE mult = 0;
            IF zeros_z IS NOT NULL THEN
                DELETE FROM {listing} WHERE {x} = alpha AND {y} = beta AND {z} = ANY (zeros_z);
            END IF;
        END IF;
        -- line 10: W_MK(z, alpha, beta) += M_heavy(z, alpha) * m, over M_heavy(., alpha): <= 2 N^(1-eps)
        WITH changed AS (
            INSERT INTO {w_mk} AS w ({z}, {x}, {y}, mult)
            SELECT mh.{z}, alpha, beta, mh.mult * m FROM {m_heavy} mh WHERE mh.{x} = alpha
            ON CONFLICT ({z}, {y}, {x}) DO UPDATE SET mult = w.mult + EXCLUDED.mult
            RETURNING w.{z}, w.mult)
        SELECT array_agg({z}) INTO zeros_z FROM changed WHERE mult = 0;
        IF zeros_z IS NOT NULL THEN
            DELETE FROM {w_mk} WHERE {z} = ANY (zeros_z) AND {x} = alpha AND {y} = beta;
        END IF;
        -- lines 11-12: P_MKL(z, beta) += M_heavy(z, alpha) * m * L(beta, z), the same loop, probing beta's part of L
        WITH changed AS (
            INSERT INTO {p_mkl} AS p ({z}, {y}, mult)
            SELECT d.{z}, beta, m * d.mult
              FROM (SELECT mh.{z}, mh.mult * CASE WHEN beta_heavy
                               THEN (SELECT lh.mult FROM {l_heavy} lh WHERE lh.{y} = beta AND lh.{z} = mh.{z})
                               ELSE (SELECT ll.mult FROM {l_light} ll WHERE ll.{y} = beta AND ll.{z} = mh.{z}) END AS mult
                      FROM {m_heavy} mh WHERE mh.{x} = alpha AND beta_heavy IS NOT NULL) d
             WHERE d.mult IS NOT NULL
            ON CONFLICT ({z}, {y}) DO UPDATE SET mult = p.mult + EXCLUDED.mult
            RETURNING p.{z}, p.mult)
        SELECT array_agg({z}) INTO zeros_z FROM changed WHERE mult = 0;
        IF zeros_z IS NOT NULL THEN
            DELETE FROM {p_mkl} WHERE {z} = ANY (zeros_z) AND {y} = beta;
        END IF;
    END IF;
    -- line 13: P_LMK(beta, alpha) += m * V_LM(beta, alpha), one lookup (K's part does not matter)
    WITH changed AS (
        INSERT INTO {p_lmk} AS p ({y}, {x}, mult)
        SELECT beta, alpha, m * v.mult FROM {v_lm} v WHERE v.{y} = beta AND v.{x} = alpha
        ON CONFLICT ({y}, {x}) DO UPDATE SET mult = p.mult + EXCLUDED.mult
        RETURNING p.mult)
    SELECT array_agg(alpha) INTO zeros_x FROM changed WHERE mult = 0;
    IF zeros_x IS NOT NULL THEN
        DELETE FROM {p_lmk} WHERE {y} = beta AND {x} = alpha;
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION {list_k}({type_x}, {type_y}, bigint, boolean, boolean) IS {list_k_comment};


-- W_KL and P_KLM from scratch (part of MajorRebalancing and of the build): O(N^(1+min(eps, 1-eps))).
CREATE FUNCTION {recompute_w_kl}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM {w_kl};  -- not TRUNCATE, which would empty it for snapshots taken before (verify)
    INSERT INTO {w_kl} ({x}, {y}, {z}, mult)
    SELECT kh.{x}, kh.{y}, ll.{z}, kh.mult * ll.mult
      FROM {k_heavy} kh JOIN {l_light} ll ON ll.{y} = kh.{y};
    DELETE FROM {p_klm};
    INSERT INTO {p_klm} ({x}, {z}, mult)
    SELECT w.{x}, w.{z}, sum(w.mult) * m.mult
      FROM {w_kl} w
      JOIN (SELECT {z}, {x}, mult FROM {m_heavy} UNION ALL SELECT {z}, {x}, mult FROM {m_light}) m
        ON m.{z} = w.{z} AND m.{x} = w.{x}
     GROUP BY w.{x}, w.{z}, m.mult;
END;
$pgivm$;
