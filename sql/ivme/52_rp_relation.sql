-- Maintenance of one relation K(X,Y) of the triangle count under refined partitions (Kara et al.,
-- long version, Appendix D, Figures 9 and 10), rendered for K = R, S, T by rotation: L(Y,Z) is the
-- next relation, M(Z,X) the previous one; L's first variable and M's second are the update's.

-- ApplyUpdateRP + OnUpdateRP for a single-tuple update of K.
CREATE FUNCTION {apply_k}(x_value {type_x}, y_value {type_y}, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st        {state}%ROWTYPE;
    h1        boolean;  -- routing: the parts of the tuple's values in K (a new value light, heavy at eps = 0)
    h2        boolean;
    l1        boolean;  -- Y's part in L, X's part in M (NULL: no tuple there, no triangle through the update)
    m2        boolean;
    delta_q   bigint := 0;
    new_mult  bigint;
    x_degree  bigint;
    y_degree  bigint;
BEGIN
    SELECT * INTO st FROM {state};
    h1 := coalesce((SELECT d.heavy FROM {k_x_degree} d WHERE d.{x} = x_value), st.epsilon = 0);
    h2 := coalesce((SELECT d.heavy FROM {k_y_degree} d WHERE d.{y} = y_value), st.epsilon = 0);
    l1 := (SELECT d.heavy FROM {l_y_degree} d WHERE d.{y} = y_value);
    m2 := (SELECT d.heavy FROM {m_x_degree} d WHERE d.{x} = x_value);

    -- delta Q = m * sum_z L(y,z) M(z,x) (Figure 9): a light side is a loop of < 3/2 N^eps tuples;
    -- with both heavy, the Z-values heavy in L (< 2 N^(1-eps)), those light in L but heavy in M
    -- (likewise), and V_LM for the Z-values light in both.
    -- Each loop scans its bounded side with a point lookup per row (the capture trigger turns hash
    -- and merge joins off, and a correlated lookup cannot become the driver).
    IF l1 IS NULL OR m2 IS NULL THEN
        delta_q := 0;
    ELSIF NOT l1 THEN
        delta_q := coalesce((SELECT sum(l.mult * (SELECT p.mult FROM {m_rel} p WHERE p.{z} = l.{z} AND p.{x} = x_value))
                               FROM {l} l WHERE l.{y} = y_value), 0);
    ELSIF NOT m2 THEN
        delta_q := coalesce((SELECT sum(p.mult * (SELECT l.mult FROM {l} l WHERE l.{y} = y_value AND l.{z} = p.{z}))
                               FROM {m_rel} p WHERE p.{x} = x_value), 0);
    ELSE
        delta_q := coalesce((SELECT sum(l.mult * (SELECT p.mult FROM {m_rel} p WHERE p.{z} = l.{z} AND p.{x} = x_value))
                               FROM {l} l WHERE l.{y} = y_value AND l.h2), 0)
                 + coalesce((SELECT sum(p.mult * (SELECT l.mult FROM {l} l WHERE l.{y} = y_value AND l.{z} = p.{z} AND NOT l.h2))
                               FROM {m_rel} p WHERE p.{x} = x_value AND p.h1), 0)
                 + coalesce((SELECT v.mult FROM {v_lm} v WHERE v.{y} = y_value AND v.{x} = x_value), 0);
    END IF;
    IF delta_q <> 0 THEN
        UPDATE {result} SET count = count + m * delta_q;
    END IF;

    PERFORM {views_k}(x_value, y_value, m, h1, h2);

    -- K(x,y) += m in the part the flags name; degrees and |D| count distinct tuples.
    INSERT INTO {k} AS p ({x}, {y}, mult, h1, h2) VALUES (x_value, y_value, m, h1, h2)
        ON CONFLICT ({x}, {y}) DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
    IF new_mult = m THEN
        INSERT INTO {k_x_degree} AS d ({x}, degree, heavy) VALUES (x_value, 1, h1)
            ON CONFLICT ({x}) DO UPDATE SET degree = d.degree + 1 RETURNING degree INTO x_degree;
        INSERT INTO {k_y_degree} AS d ({y}, degree, heavy) VALUES (y_value, 1, h2)
            ON CONFLICT ({y}) DO UPDATE SET degree = d.degree + 1 RETURNING degree INTO y_degree;
        IF {resize}(st.db_size + 1, st.n) THEN
            RETURN;  -- a major rebalancing repartitioned everything
        END IF;
    ELSIF new_mult = 0 THEN
        DELETE FROM {k} WHERE {x} = x_value AND {y} = y_value;
        UPDATE {k_x_degree} SET degree = degree - 1 WHERE {x} = x_value AND degree > 1 RETURNING degree INTO x_degree;
        IF NOT FOUND THEN
            DELETE FROM {k_x_degree} WHERE {x} = x_value;
            x_degree := 0;
        END IF;
        UPDATE {k_y_degree} SET degree = degree - 1 WHERE {y} = y_value AND degree > 1 RETURNING degree INTO y_degree;
        IF NOT FOUND THEN
            DELETE FROM {k_y_degree} WHERE {y} = y_value;
            y_degree := 0;
        END IF;
        IF {resize}(st.db_size - 1, st.n) THEN
            RETURN;
        END IF;
    ELSE
        RETURN;
    END IF;

    -- OnUpdateRP (Figure 10), minor rebalancing on each variable (lines 20-23 print "A, alpha" for
    -- both; the second pair moves the Y-value).
    IF NOT h1 AND x_degree >= 1.5 * st.theta THEN
        PERFORM {move_k_x}(x_value, true);
    ELSIF h1 AND x_degree > 0 AND x_degree < 0.5 * st.theta THEN
        PERFORM {move_k_x}(x_value, false);
    END IF;
    IF NOT h2 AND y_degree >= 1.5 * st.theta THEN
        PERFORM {move_k_y}(y_value, true);
    ELSIF h2 AND y_degree > 0 AND y_degree < 0.5 * st.theta THEN
        PERFORM {move_k_y}(y_value, false);
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION {apply_k}({type_x}, {type_y}, bigint) IS {apply_k_comment};


-- The views' part of a change m of K(x,y) in part (h1, h2) (Figure 9, lines 10-13): K_hl feeds
-- V_KL(x,z) += m L_lh(y,z), a loop over L's tuples at a Y-value light in L; K_lh feeds V_MK(z,y) +=
-- M_hl(z,x) m, a loop over M's tuples at an X-value light in M. Reads no tuple of K, so a minor
-- move runs it out of the old part and into the new one, per moved tuple.
CREATE FUNCTION {views_k}(x_value {type_x}, y_value {type_y}, m bigint, h1 boolean, h2 boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    IF h1 AND NOT h2 THEN
        IF NOT coalesce((SELECT d.heavy FROM {l_y_degree} d WHERE d.{y} = y_value), true) THEN
            INSERT INTO {v_kl} AS v ({x}, {z}, mult)
            SELECT x_value, l.{z}, m * l.mult FROM {l} l WHERE l.{y} = y_value AND l.h2
                ON CONFLICT ({x}, {z}) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
            DELETE FROM {v_kl} WHERE mult = 0;
        END IF;
    ELSIF h2 AND NOT h1 THEN
        IF NOT coalesce((SELECT d.heavy FROM {m_x_degree} d WHERE d.{x} = x_value), true) THEN
            INSERT INTO {v_mk} AS v ({z}, {y}, mult)
            SELECT p.{z}, y_value, m * p.mult FROM {m_rel} p WHERE p.{x} = x_value AND p.h1
                ON CONFLICT ({z}, {y}) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
            DELETE FROM {v_mk} WHERE mult = 0;
        END IF;
    END IF;
END;
$pgivm$;


-- MinorRebalancingRP on X: every tuple of the value moves to the other part; the count does not change.
CREATE FUNCTION {move_k_x}(value {type_x}, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    moved record;
BEGIN
    FOR moved IN SELECT {y} AS y_value, mult, h2 FROM {k} WHERE {x} = value LOOP
        PERFORM {views_k}(value, moved.y_value, -moved.mult, NOT to_heavy, moved.h2);
        PERFORM {views_k}(value, moved.y_value, moved.mult, to_heavy, moved.h2);
    END LOOP;
    UPDATE {k} SET h1 = to_heavy WHERE {x} = value;
    UPDATE {k_x_degree} SET heavy = to_heavy WHERE {x} = value;
    UPDATE {state} SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;


-- MinorRebalancingRP on Y.
CREATE FUNCTION {move_k_y}(value {type_y}, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    moved record;
BEGIN
    FOR moved IN SELECT {x} AS x_value, mult, h1 FROM {k} WHERE {y} = value LOOP
        PERFORM {views_k}(moved.x_value, value, -moved.mult, moved.h1, NOT to_heavy);
        PERFORM {views_k}(moved.x_value, value, moved.mult, moved.h1, to_heavy);
    END LOOP;
    UPDATE {k} SET h2 = to_heavy WHERE {y} = value;
    UPDATE {k_y_degree} SET heavy = to_heavy WHERE {y} = value;
    UPDATE {state} SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;


-- A multi-row statement's net change of K, set at a time: delta Q as the batch joined with L and M
-- (each batch tuple's triangles, on the state before it: K is in none of them), the views' deltas
-- as joins with L_lh and M_hl, then K, the degrees and |D|, then the invariants (a size violation
-- resets N by a major rebalancing, else each value that crossed a threshold moves).
CREATE FUNCTION {apply_batch_k}()
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
    WITH merged AS (DELETE FROM {k_delta} RETURNING {x}, {y}, mult)
    INSERT INTO {k_delta} ({x}, {y}, mult) SELECT {x}, {y}, sum(mult) FROM merged GROUP BY {x}, {y} HAVING sum(mult) <> 0;
    UPDATE {k_delta} d
       SET h1 = coalesce((SELECT g.heavy FROM {k_x_degree} g WHERE g.{x} = d.{x}), st.epsilon = 0),
           h2 = coalesce((SELECT g.heavy FROM {k_y_degree} g WHERE g.{y} = d.{y}), st.epsilon = 0),
           new_mult = d.mult + coalesce((SELECT k.mult FROM {k} k WHERE k.{x} = d.{x} AND k.{y} = d.{y}), 0);
    ANALYZE {k_delta};

    SELECT coalesce(sum(d.mult * l.mult * p.mult), 0) INTO delta_q
      FROM {k_delta} d JOIN {l} l ON l.{y} = d.{y} JOIN {m_rel} p ON p.{z} = l.{z} AND p.{x} = d.{x};
    IF delta_q <> 0 THEN
        UPDATE {result} SET count = count + delta_q::bigint;
    END IF;

    INSERT INTO {v_kl} AS v ({x}, {z}, mult)
    SELECT d.{x}, l.{z}, sum(d.mult * l.mult) FROM {k_delta} d JOIN {l} l ON l.{y} = d.{y} AND NOT l.h1 AND l.h2
     WHERE d.h1 AND NOT d.h2
     GROUP BY d.{x}, l.{z} HAVING sum(d.mult * l.mult) <> 0
        ON CONFLICT ({x}, {z}) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM {v_kl} WHERE mult = 0;
    INSERT INTO {v_mk} AS v ({z}, {y}, mult)
    SELECT p.{z}, d.{y}, sum(p.mult * d.mult) FROM {k_delta} d JOIN {m_rel} p ON p.{x} = d.{x} AND p.h1 AND NOT p.h2
     WHERE d.h2 AND NOT d.h1
     GROUP BY p.{z}, d.{y} HAVING sum(p.mult * d.mult) <> 0
        ON CONFLICT ({z}, {y}) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM {v_mk} WHERE mult = 0;

    INSERT INTO {k} AS p ({x}, {y}, mult, h1, h2) SELECT {x}, {y}, new_mult, h1, h2 FROM {k_delta} WHERE new_mult <> 0
        ON CONFLICT ({x}, {y}) DO UPDATE SET mult = EXCLUDED.mult;
    DELETE FROM {k} p USING {k_delta} d WHERE d.new_mult = 0 AND p.{x} = d.{x} AND p.{y} = d.{y};
    INSERT INTO {k_x_degree} AS g ({x}, degree, heavy)
    SELECT {x}, sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(h1)
      FROM {k_delta} WHERE new_mult = mult OR new_mult = 0 GROUP BY {x}
    ON CONFLICT ({x}) DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM {k_x_degree} g USING {k_delta} d WHERE g.{x} = d.{x} AND g.degree = 0;
    INSERT INTO {k_y_degree} AS g ({y}, degree, heavy)
    SELECT {y}, sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(h2)
      FROM {k_delta} WHERE new_mult = mult OR new_mult = 0 GROUP BY {y}
    ON CONFLICT ({y}) DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM {k_y_degree} g USING {k_delta} d WHERE g.{y} = d.{y} AND g.degree = 0;
    SELECT coalesce(sum(CASE WHEN new_mult = mult THEN 1 WHEN new_mult = 0 THEN -1 ELSE 0 END), 0)
      INTO size_diff FROM {k_delta};

    IF NOT {resize}(st.db_size + size_diff, st.n) THEN
        FOR moving IN
            SELECT g.{x} AS value, NOT g.heavy AS to_heavy FROM {k_x_degree} g
             WHERE g.{x} IN (SELECT {x} FROM {k_delta})
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM {move_k_x}(moving.value, moving.to_heavy);
        END LOOP;
        FOR moving IN
            SELECT g.{y} AS value, NOT g.heavy AS to_heavy FROM {k_y_degree} g
             WHERE g.{y} IN (SELECT {y} FROM {k_delta})
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM {move_k_y}(moving.value, moving.to_heavy);
        END LOOP;
    END IF;
    DELETE FROM {k_delta};
END;
$pgivm$;


-- K emptied after a TRUNCATE of its table (the caller restarts from what remains).
CREATE FUNCTION {clear_k}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM {k};
    DELETE FROM {k_x_degree};
    DELETE FROM {k_y_degree};
END;
$pgivm$;
