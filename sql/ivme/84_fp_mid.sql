-- Maintenance of a middle relation M of a 4-path count ([L] Appendix G, Figure 16), rendered twice:
-- for M = S (X = A, E = R; F = T, Y = C, G = U) and, mirrored, for M = T (X = C, E = U; F = S,
-- Y = A, G = R). The views are named as in 82_fp_end.sql. M is partitioned on X and on B; a tuple's
-- part is the pair of its values' parts, read from the degree tables before any loop runs.

-- ApplyUpdate4Path for a single-tuple update of M (Figure 16), then OnUpdate for both of its values.
CREATE FUNCTION {apply_m}({parameters}, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    x_value   {x_type} := {x_parameter};
    b_value   {b_type} := {b_parameter};
    st        {state}%ROWTYPE;
    hx        boolean;  -- routing: the parts of the tuple's values in M (a new value starts light, heavy at eps = 0)
    hb        boolean;
    hb_f      boolean;  -- the B-value's part in F (NULL: F has no tuple with it)
    e_mult    bigint;
    delta_q   bigint := 0;
    new_mult  bigint;
    x_degree  bigint;
    b_degree  bigint;
BEGIN
    SELECT * INTO st FROM {state};
    hx := coalesce((SELECT d.heavy FROM {m_x_degree} d WHERE d.{x} = x_value), st.epsilon = 0);
    hb := coalesce((SELECT d.heavy FROM {m_b_degree} d WHERE d.b = b_value), st.epsilon = 0);
    hb_f := (SELECT d.heavy FROM {f_b_degree} d WHERE d.b = b_value);
    e_mult := coalesce((SELECT e.mult FROM {e} e WHERE e.{x} = x_value), 0);

    -- delta Q = E(x) m sum_y F(b,y) G(y): w_G(b) holds F's parts but F_lh, whose tuples at a light
    -- B-value (< 3/2 N^eps) are read; at a heavy B-value F has none.
    IF e_mult <> 0 AND hb_f IS NOT NULL THEN
        delta_q := coalesce((SELECT w.mult FROM {w_g} w WHERE w.b = b_value), 0);
        IF NOT hb_f THEN
            delta_q := delta_q + coalesce((SELECT sum(f.mult * (SELECT g.mult FROM {g} g WHERE g.{y} = f.{y}))
                                             FROM {f} f WHERE f.b = b_value AND f.{hy}), 0);
        END IF;
        IF delta_q <> 0 THEN
            UPDATE {result} SET count = count + e_mult * m * delta_q;
        END IF;
    END IF;

    PERFORM {views_m}(x_value, b_value, m, hx, hb);

    -- M(x,b) += m, in the part the flags name; a tuple reaching multiplicity 0 is deleted.
    INSERT INTO {m} AS p ({x}, b, mult, {hx}, hb) VALUES (x_value, b_value, m, hx, hb)
        ON CONFLICT ({x}, b) DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
    -- Degrees and |D| count distinct tuples: only a tuple appearing or vanishing changes them.
    IF new_mult = m THEN
        INSERT INTO {m_x_degree} AS d ({x}, degree, heavy) VALUES (x_value, 1, hx)
            ON CONFLICT ({x}) DO UPDATE SET degree = d.degree + 1 RETURNING degree INTO x_degree;
        INSERT INTO {m_b_degree} AS d (b, degree, heavy) VALUES (b_value, 1, hb)
            ON CONFLICT (b) DO UPDATE SET degree = d.degree + 1 RETURNING degree INTO b_degree;
        IF {resize}(st.db_size + 1, st.n) THEN
            RETURN;  -- a major rebalancing repartitioned everything
        END IF;
    ELSIF new_mult = 0 THEN
        DELETE FROM {m} WHERE {x} = x_value AND b = b_value;
        UPDATE {m_x_degree} SET degree = degree - 1 WHERE {x} = x_value AND degree > 1 RETURNING degree INTO x_degree;
        IF NOT FOUND THEN
            DELETE FROM {m_x_degree} WHERE {x} = x_value;
            x_degree := 0;
        END IF;
        UPDATE {m_b_degree} SET degree = degree - 1 WHERE b = b_value AND degree > 1 RETURNING degree INTO b_degree;
        IF NOT FOUND THEN
            DELETE FROM {m_b_degree} WHERE b = b_value;
            DELETE FROM {z_e} WHERE b = b_value;  -- z_E's indicator: the value left M, heavy or not
            b_degree := 0;
        END IF;
        IF {resize}(st.db_size - 1, st.n) THEN
            RETURN;
        END IF;
    ELSE
        RETURN;
    END IF;

    -- OnUpdate, minor rebalancing: a value whose degree left [theta/2, 3/2 theta) of its part moves.
    IF NOT hx AND x_degree >= 1.5 * st.theta THEN
        PERFORM {move_m_x}(x_value, true);
    ELSIF hx AND x_degree > 0 AND x_degree < 0.5 * st.theta THEN
        PERFORM {move_m_x}(x_value, false);
    END IF;
    IF NOT hb AND b_degree >= 1.5 * st.theta THEN
        PERFORM {move_m_b}(b_value, true);
    ELSIF hb AND b_degree > 0 AND b_degree < 0.5 * st.theta THEN
        PERFORM {move_m_b}(b_value, false);
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION {apply_m}({parameter_types}, bigint) IS {apply_m_comment};


-- The auxiliary views' part of a change m of M(x,b) in part (hx, hb) (Figure 16, lines 8-22, and
-- the views it leaves out). Reads no tuple of M, so a minor move runs it once out of the old part
-- and once into the new one, per moved tuple. Each loop reads F's tuples at a light B-value.
CREATE FUNCTION {views_m}(x_value {x_type}, b_value {b_type}, m bigint, hx boolean, hb boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    hb_f   boolean := (SELECT d.heavy FROM {f_b_degree} d WHERE d.b = b_value);
    e_mult bigint := coalesce((SELECT e.mult FROM {e} e WHERE e.{x} = x_value), 0);
BEGIN
    IF NOT (hx AND NOT hb) AND e_mult <> 0 THEN  -- w_E(b) += E(x) m: every part but M_hl
        INSERT INTO {w_e} AS v (b, mult) VALUES (b_value, e_mult * m)
            ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM {w_e} WHERE mult = 0;
    END IF;
    IF hb OR hb_f IS NULL THEN
        RETURN;  -- M_lh, M_hh are in w_E alone; without an F-tuple at b no join view changes
    END IF;
    IF hb_f THEN
        IF hx AND e_mult <> 0 THEN  -- M_hl at a B-value heavy in F: z_G(b) += E(x) m
            INSERT INTO {z_g} AS v (b, mult) VALUES (b_value, e_mult * m)
                ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
            DELETE FROM {z_g} WHERE mult = 0;
        END IF;
        RETURN;  -- F's tuples at a heavy B-value are in neither F_ll nor F_lh
    END IF;
    IF NOT hx THEN
        -- M_ll: p_E(x,y) += m F_lh(b,y); y_G(y) += E(x) m F_lh(b,y)
        INSERT INTO {p_e} AS v ({x}, {y}, mult) SELECT x_value, f.{y}, m * f.mult FROM {f} f WHERE f.b = b_value AND f.{hy}
            ON CONFLICT ({x}, {y}) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM {p_e} WHERE mult = 0;
        IF e_mult <> 0 THEN
            INSERT INTO {y_g} AS v ({y}, mult) SELECT f.{y}, e_mult * m * f.mult FROM {f} f WHERE f.b = b_value AND f.{hy}
                ON CONFLICT ({y}) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
            DELETE FROM {y_g} WHERE mult = 0;
        END IF;
    ELSE
        -- M_hl: q(x,y) += m F_lh(b,y); p_G(y,x) += m F_ll(b,y); y_E(x) += m sum_y F_ll(b,y) G(y)
        INSERT INTO {q} AS v ({x}, {y}, mult) SELECT x_value, f.{y}, m * f.mult FROM {f} f WHERE f.b = b_value AND f.{hy}
            ON CONFLICT ({x}, {y}) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM {q} WHERE mult = 0;
        INSERT INTO {p_g} AS v ({y}, {x}, mult) SELECT f.{y}, x_value, m * f.mult FROM {f} f WHERE f.b = b_value AND NOT f.{hy}
            ON CONFLICT ({y}, {x}) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM {p_g} WHERE mult = 0;
        INSERT INTO {y_e} AS v ({x}, mult)
        SELECT x_value, m * sum(f.mult * (SELECT g.mult FROM {g} g WHERE g.{y} = f.{y})) FROM {f} f
         WHERE f.b = b_value AND NOT f.{hy}
        HAVING sum(f.mult * (SELECT g.mult FROM {g} g WHERE g.{y} = f.{y})) <> 0
            ON CONFLICT ({x}) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM {y_e} WHERE mult = 0;
    END IF;
END;
$pgivm$;


-- MinorRebalancing on X: every tuple of the value moves to the other part (out of the old part's
-- views, into the new one's); the count does not change.
CREATE FUNCTION {move_m_x}(value {x_type}, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    moved record;
BEGIN
    FOR moved IN SELECT b, mult, hb FROM {m} WHERE {x} = value LOOP
        PERFORM {views_m}(value, moved.b, -moved.mult, NOT to_heavy, moved.hb);
        PERFORM {views_m}(value, moved.b, moved.mult, to_heavy, moved.hb);
    END LOOP;
    UPDATE {m} SET {hx} = to_heavy WHERE {x} = value;
    UPDATE {m_x_degree} SET heavy = to_heavy WHERE {x} = value;
    UPDATE {state} SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;


-- MinorRebalancing on B: likewise, and z_E's indicator of the value follows its new part.
CREATE FUNCTION {move_m_b}(value {b_type}, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    moved record;
BEGIN
    FOR moved IN SELECT {x} AS x_value, mult, {hx} AS hx FROM {m} WHERE b = value LOOP
        PERFORM {views_m}(moved.x_value, value, -moved.mult, moved.hx, NOT to_heavy);
        PERFORM {views_m}(moved.x_value, value, moved.mult, moved.hx, to_heavy);
    END LOOP;
    UPDATE {m} SET hb = to_heavy WHERE b = value;
    UPDATE {m_b_degree} SET heavy = to_heavy WHERE b = value;
    DELETE FROM {z_e} WHERE b = value;
    IF to_heavy AND NOT coalesce((SELECT d.heavy FROM {f_b_degree} d WHERE d.b = value), true) THEN
        INSERT INTO {z_e} (b, mult)
        SELECT value, sum(f.mult * (SELECT g.mult FROM {g} g WHERE g.{y} = f.{y})) FROM {f} f
         WHERE f.b = value AND f.{hy}
        HAVING sum(f.mult * (SELECT g.mult FROM {g} g WHERE g.{y} = f.{y})) <> 0;
    END IF;
    UPDATE {state} SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;


-- A multi-row statement's net change of M, set at a time (as the Loomis-Whitney counts' batch): every
-- delta on the state before the batch, the tuples routed by their values' parts before it (a new
-- value light, heavy at epsilon = 0); Figure 16's rules read E, F and G only, so each view's delta is
-- a join of the batch with them. Then M, the degrees and |D|, then the invariants: a size-invariant
-- violation resets N with a major rebalancing, else every value of the batch that crossed a
-- threshold moves.
CREATE FUNCTION {apply_batch_m}()
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
    WITH merged AS (DELETE FROM {m_delta} RETURNING {columns}, mult)
    INSERT INTO {m_delta} ({columns}, mult) SELECT {columns}, sum(mult) FROM merged GROUP BY {columns} HAVING sum(mult) <> 0;
    UPDATE {m_delta} d
       SET hx = coalesce((SELECT g.heavy FROM {m_x_degree} g WHERE g.{x} = d.{x}), st.epsilon = 0),
           hb = coalesce((SELECT g.heavy FROM {m_b_degree} g WHERE g.b = d.b), st.epsilon = 0),
           new_mult = d.mult + coalesce((SELECT k.mult FROM {m} k WHERE k.{x} = d.{x} AND k.b = d.b), 0);
    ANALYZE {m_delta};

    -- delta Q = sum dM(x,b) E(x) (w_G(b) + sum_y F_lh(b,y) G(y)), F_lh read at B-values light in F.
    SELECT coalesce((SELECT sum(d.mult * e.mult * w.mult) FROM {m_delta} d JOIN {e} e ON e.{x} = d.{x}
                       JOIN {w_g} w ON w.b = d.b), 0)
         + coalesce((SELECT sum(d.mult * e.mult * f.mult * g.mult) FROM {m_delta} d JOIN {e} e ON e.{x} = d.{x}
                       JOIN {f} f ON f.b = d.b AND NOT f.hb AND f.{hy} JOIN {g} g ON g.{y} = f.{y}), 0)
      INTO delta_q;
    IF delta_q <> 0 THEN
        UPDATE {result} SET count = count + delta_q::bigint;
    END IF;

    -- w_E(b) += dM E(x) but M_hl
    INSERT INTO {w_e} AS v (b, mult)
    SELECT d.b, sum(d.mult * e.mult) FROM {m_delta} d JOIN {e} e ON e.{x} = d.{x} WHERE NOT (d.hx AND NOT d.hb)
     GROUP BY d.b HAVING sum(d.mult * e.mult) <> 0
        ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM {w_e} WHERE mult = 0;
    -- M_ll: p_E(x,y) += dM F_lh(b,y); y_G(y) += dM E(x) F_lh(b,y)   (F_lh: b light in F, y heavy)
    INSERT INTO {p_e} AS v ({x}, {y}, mult)
    SELECT d.{x}, f.{y}, sum(d.mult * f.mult) FROM {m_delta} d JOIN {f} f ON f.b = d.b AND NOT f.hb AND f.{hy}
     WHERE NOT d.hx AND NOT d.hb
     GROUP BY d.{x}, f.{y} HAVING sum(d.mult * f.mult) <> 0
        ON CONFLICT ({x}, {y}) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM {p_e} WHERE mult = 0;
    INSERT INTO {y_g} AS v ({y}, mult)
    SELECT f.{y}, sum(d.mult * e.mult * f.mult) FROM {m_delta} d JOIN {e} e ON e.{x} = d.{x}
      JOIN {f} f ON f.b = d.b AND NOT f.hb AND f.{hy}
     WHERE NOT d.hx AND NOT d.hb
     GROUP BY f.{y} HAVING sum(d.mult * e.mult * f.mult) <> 0
        ON CONFLICT ({y}) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM {y_g} WHERE mult = 0;
    -- M_hl: q(x,y) += dM F_lh(b,y); p_G(y,x) += dM F_ll(b,y); y_E(x) += dM sum_y F_ll(b,y) G(y);
    -- at a B-value heavy in F: z_G(b) += dM E(x)
    INSERT INTO {q} AS v ({x}, {y}, mult)
    SELECT d.{x}, f.{y}, sum(d.mult * f.mult) FROM {m_delta} d JOIN {f} f ON f.b = d.b AND NOT f.hb AND f.{hy}
     WHERE d.hx AND NOT d.hb
     GROUP BY d.{x}, f.{y} HAVING sum(d.mult * f.mult) <> 0
        ON CONFLICT ({x}, {y}) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM {q} WHERE mult = 0;
    INSERT INTO {p_g} AS v ({y}, {x}, mult)
    SELECT f.{y}, d.{x}, sum(d.mult * f.mult) FROM {m_delta} d JOIN {f} f ON f.b = d.b AND NOT f.hb AND NOT f.{hy}
     WHERE d.hx AND NOT d.hb
     GROUP BY f.{y}, d.{x} HAVING sum(d.mult * f.mult) <> 0
        ON CONFLICT ({y}, {x}) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM {p_g} WHERE mult = 0;
    INSERT INTO {y_e} AS v ({x}, mult)
    SELECT d.{x}, sum(d.mult * f.mult * g.mult) FROM {m_delta} d JOIN {f} f ON f.b = d.b AND NOT f.hb AND NOT f.{hy}
      JOIN {g} g ON g.{y} = f.{y}
     WHERE d.hx AND NOT d.hb
     GROUP BY d.{x} HAVING sum(d.mult * f.mult * g.mult) <> 0
        ON CONFLICT ({x}) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM {y_e} WHERE mult = 0;
    INSERT INTO {z_g} AS v (b, mult)
    SELECT d.b, sum(d.mult * e.mult) FROM {m_delta} d JOIN {e} e ON e.{x} = d.{x}
      JOIN {f_b_degree} fd ON fd.b = d.b AND fd.heavy
     WHERE d.hx AND NOT d.hb
     GROUP BY d.b HAVING sum(d.mult * e.mult) <> 0
        ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM {z_g} WHERE mult = 0;

    -- The batch into M: new tuples inserted, changed ones updated, vanished ones deleted.
    INSERT INTO {m} AS p ({x}, b, mult, {hx}, hb) SELECT {x}, b, new_mult, hx, hb FROM {m_delta} WHERE new_mult <> 0
        ON CONFLICT ({x}, b) DO UPDATE SET mult = EXCLUDED.mult;
    DELETE FROM {m} p USING {m_delta} d WHERE d.new_mult = 0 AND p.{x} = d.{x} AND p.b = d.b;

    -- Degrees and |D|: +1 per tuple that appeared, -1 per tuple that vanished.
    INSERT INTO {m_x_degree} AS g ({x}, degree, heavy)
    SELECT {x}, sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(hx)
      FROM {m_delta} WHERE new_mult = mult OR new_mult = 0 GROUP BY {x}
    ON CONFLICT ({x}) DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM {m_x_degree} g USING {m_delta} d WHERE g.{x} = d.{x} AND g.degree = 0;
    INSERT INTO {m_b_degree} AS g (b, degree, heavy)
    SELECT b, sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(hb)
      FROM {m_delta} WHERE new_mult = mult OR new_mult = 0 GROUP BY b
    ON CONFLICT (b) DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM {z_e} z USING {m_delta} d WHERE z.b = d.b AND NOT EXISTS (SELECT FROM {m_b_degree} g WHERE g.b = d.b AND g.degree > 0);
    DELETE FROM {m_b_degree} g USING {m_delta} d WHERE g.b = d.b AND g.degree = 0;
    SELECT coalesce(sum(CASE WHEN new_mult = mult THEN 1 WHEN new_mult = 0 THEN -1 ELSE 0 END), 0)
      INTO size_diff FROM {m_delta};

    -- Restore the invariants.
    IF NOT {resize}(st.db_size + size_diff, st.n) THEN
        FOR moving IN
            SELECT g.{x} AS value, NOT g.heavy AS to_heavy FROM {m_x_degree} g
             WHERE g.{x} IN (SELECT {x} FROM {m_delta})
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM {move_m_x}(moving.value, moving.to_heavy);
        END LOOP;
        FOR moving IN
            SELECT g.b AS value, NOT g.heavy AS to_heavy FROM {m_b_degree} g
             WHERE g.b IN (SELECT b FROM {m_delta})
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM {move_m_b}(moving.value, moving.to_heavy);
        END LOOP;
    END IF;
    DELETE FROM {m_delta};
END;
$pgivm$;


-- M emptied after a TRUNCATE of its table (the caller restarts from what remains).
CREATE FUNCTION {clear_m}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM {m};
    DELETE FROM {m_x_degree};
    DELETE FROM {m_b_degree};
END;
$pgivm$;
