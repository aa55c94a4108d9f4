-- Set-at-a-time maintenance of a multi-row change to relation K(X,Y) (rendered for K = R, S, T).
-- The statement trigger puts the statement's net change of K into K_delta, one row per distinct
-- (X,Y) with its multiplicity change, and calls apply_batch_K: a few set-based statements replace
-- one ApplyUpdate per row. Every delta is computed on the state before the batch; the batch then
-- goes into the parts (each X-value into its current part, new values light), and the invariants
-- are restored afterwards: a size-invariant violation resets N = 2|D|+1 with a major rebalancing
-- (as the initial build does), else every value of the batch that crossed a threshold is moved.


CREATE FUNCTION {apply_batch_k}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
-- The state is hot in memory: index probes cost about as much as sequential reads, so a small
-- batch is best served by index nested loops and only a large one by hash joins.
SET random_page_cost = 1.1
AS $pgivm$
DECLARE
    st        {state}%ROWTYPE;
    delta_q   numeric;
    size_diff bigint;
    zeros_a   {type_x}[];
    zeros_b   {type_z}[];
    zeros_c   {type_y}[];
    moving    record;
BEGIN
    SELECT * INTO st FROM {state};
    -- The planner must know the batch's size to choose index nested loops for a small batch and
    -- hash joins for a large one.
    ANALYZE {k_delta};

    -- Routing, as OnUpdate does it: alpha's current part; a new value is light (heavy at epsilon = 0).
    -- With it each tuple's multiplicity after the batch, from its current one: one pass over the
    -- batch (a tuple lives in its X-value's part, so at most one of the two parts holds it).
    UPDATE {k_delta} d
       SET heavy = cur.heavy, new_mult = d.mult + cur.mult
      FROM (SELECT b.{x}, b.{y}, st.epsilon = 0 OR coalesce(g.heavy, false) AS heavy,
                   coalesce(kh.mult, kl.mult, 0) AS mult
              FROM {k_delta} b
              LEFT JOIN {k_degree} g ON g.{x} = b.{x}
              LEFT JOIN {k_heavy} kh ON kh.{x} = b.{x} AND kh.{y} = b.{y}
              LEFT JOIN {k_light} kl ON kl.{x} = b.{x} AND kl.{y} = b.{y}) cur
     WHERE d.{x} = cur.{x} AND d.{y} = cur.{y};{listing_batch}

    -- delta Q = sum over the batch of m * sum_z L(beta, z) * M(z, alpha), with
    -- L(beta,.) M(., alpha) = L_heavy M_heavy + V_LM + L_light M_heavy + L_light M_light.
    -- Four plain joins (not a union of M's parts), so a small batch gets index nested loops.
    SELECT coalesce(sum(v), 0) INTO delta_q FROM (
        SELECT d.mult * mh.mult * lh.mult AS v
          FROM {k_delta} d
          JOIN {m_heavy} mh ON mh.{x} = d.{x}
          JOIN {l_heavy} lh ON lh.{y} = d.{y} AND lh.{z} = mh.{z}
        UNION ALL
        SELECT d.mult * v.mult
          FROM {k_delta} d JOIN {v_lm} v ON v.{y} = d.{y} AND v.{x} = d.{x}
        UNION ALL
        SELECT d.mult * ll.mult * mh.mult
          FROM {k_delta} d
          JOIN {l_light} ll ON ll.{y} = d.{y}
          JOIN {m_heavy} mh ON mh.{z} = ll.{z} AND mh.{x} = d.{x}
        UNION ALL
        SELECT d.mult * ll.mult * ml.mult
          FROM {k_delta} d
          JOIN {l_light} ll ON ll.{y} = d.{y}
          JOIN {m_light} ml ON ml.{z} = ll.{z} AND ml.{x} = d.{x}
    ) terms;
    IF delta_q <> 0 THEN
        UPDATE {result} SET count = count + delta_q::bigint;
    END IF;

    -- V_KL(alpha, z) += m * L_light(beta, z) for tuples going to K_heavy.
    WITH changed AS (
        INSERT INTO {v_kl} AS v ({x}, {z}, mult)
        SELECT d.{x}, ll.{z}, sum(d.mult * ll.mult)
          FROM {k_delta} d JOIN {l_light} ll ON ll.{y} = d.{y}
         WHERE d.heavy
         GROUP BY d.{x}, ll.{z}
        HAVING sum(d.mult * ll.mult) <> 0
        ON CONFLICT ({x}, {z}) DO UPDATE SET mult = v.mult + EXCLUDED.mult
        RETURNING v.{x}, v.{z}, v.mult)
    SELECT array_agg({x}), array_agg({z}) INTO zeros_a, zeros_b FROM changed WHERE mult = 0;
    DELETE FROM {v_kl} v USING (SELECT unnest(zeros_a) AS x, unnest(zeros_b) AS z) AS zero WHERE v.{x} = zero.x AND v.{z} = zero.z;

    -- V_MK(z, beta) += M_heavy(z, alpha) * m for tuples going to K_light.
    WITH changed AS (
        INSERT INTO {v_mk} AS v ({z}, {y}, mult)
        SELECT mh.{z}, d.{y}, sum(mh.mult * d.mult)
          FROM {k_delta} d JOIN {m_heavy} mh ON mh.{x} = d.{x}
         WHERE NOT d.heavy
         GROUP BY mh.{z}, d.{y}
        HAVING sum(mh.mult * d.mult) <> 0
        ON CONFLICT ({z}, {y}) DO UPDATE SET mult = v.mult + EXCLUDED.mult
        RETURNING v.{z}, v.{y}, v.mult)
    SELECT array_agg({z}), array_agg({y}) INTO zeros_b, zeros_c FROM changed WHERE mult = 0;
    DELETE FROM {v_mk} v USING (SELECT unnest(zeros_b) AS z, unnest(zeros_c) AS y) AS zero WHERE v.{z} = zero.z AND v.{y} = zero.y;

    -- The batch into the parts: new tuples inserted, changed ones updated, vanished ones deleted.
    INSERT INTO {k_heavy} AS p ({x}, {y}, mult)
    SELECT {x}, {y}, new_mult FROM {k_delta} WHERE heavy AND new_mult <> 0
    ON CONFLICT ({x}, {y}) DO UPDATE SET mult = EXCLUDED.mult;
    INSERT INTO {k_light} AS p ({x}, {y}, mult)
    SELECT {x}, {y}, new_mult FROM {k_delta} WHERE NOT heavy AND new_mult <> 0
    ON CONFLICT ({x}, {y}) DO UPDATE SET mult = EXCLUDED.mult;
    DELETE FROM {k_heavy} p USING {k_delta} d
     WHERE d.heavy AND d.new_mult = 0 AND p.{x} = d.{x} AND p.{y} = d.{y};
    DELETE FROM {k_light} p USING {k_delta} d
     WHERE NOT d.heavy AND d.new_mult = 0 AND p.{x} = d.{x} AND p.{y} = d.{y};

    -- Degrees and |D|: +1 per tuple that appeared, -1 per tuple that vanished.
    INSERT INTO {k_degree} AS g ({x}, degree, heavy)
    SELECT {x}, sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(heavy)
      FROM {k_delta} WHERE new_mult = mult OR new_mult = 0
     GROUP BY {x}
    ON CONFLICT ({x}) DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM {k_degree} g USING {k_delta} d WHERE g.{x} = d.{x} AND g.degree = 0;
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
            SELECT g.{x} AS value, NOT g.heavy AS to_heavy
              FROM {k_degree} g
             WHERE g.{x} IN (SELECT {x} FROM {k_delta})
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM {move_k}(moving.value, moving.to_heavy);
        END LOOP;
    END IF;
    DELETE FROM {k_delta};
END;
$pgivm$;
COMMENT ON FUNCTION {apply_batch_k}() IS {apply_batch_k_comment};
