-- Maintenance of a middle relation M of a 4-path count ([L] Appendix G, Figure 16), rendered twice:
-- for M = S (X = A, E = R; F = T, Y = C, G = U) and, mirrored, for M = T (X = C, E = U; F = S,
-- Y = A, G = R). The views are named as in 82_fp_end.sql. M is partitioned on X and on B; a tuple's
-- part is the pair of its values' parts, read from the degree tables before any loop runs.

-- ApplyUpdate4Path for a single-tuple update of M (Figure 16), then OnUpdate for both of its values.
-- (apply_M below wraps it for the capture layer, as apply_E does in 82_fp_end.sql.)
CREATE FUNCTION {update_m}({parameters}, m bigint)
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
            delta_q := delta_q + coalesce((SELECT sum(f.mult * g.mult) FROM {f} f JOIN {g} g ON g.{y} = f.{y}
                                            WHERE f.b = b_value AND f.{hy}), 0);
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
        IF {resize}(st.db_size + 1) THEN
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
        IF {resize}(st.db_size - 1) THEN
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
COMMENT ON FUNCTION {update_m}({parameter_types}, bigint) IS {apply_m_comment};

CREATE FUNCTION {apply_m}({parameters}, m bigint)
RETURNS void LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
    SELECT {update_m}({arguments}, m)
$pgivm$;


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
        SELECT x_value, m * sum(f.mult * g.mult) FROM {f} f JOIN {g} g ON g.{y} = f.{y}
         WHERE f.b = b_value AND NOT f.{hy}
        HAVING sum(f.mult * g.mult) <> 0
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
        SELECT value, sum(f.mult * g.mult) FROM {f} f JOIN {g} g ON g.{y} = f.{y}
         WHERE f.b = value AND f.{hy}
        HAVING sum(f.mult * g.mult) <> 0;
    END IF;
    UPDATE {state} SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;


-- A multi-row statement's net change of M: one single-tuple update per distinct tuple.
CREATE FUNCTION {apply_batch_m}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    change record;
BEGIN
    FOR change IN SELECT {columns}, sum(mult)::bigint AS m FROM {m_delta} GROUP BY {columns} HAVING sum(mult) <> 0 LOOP
        PERFORM {update_m}({change_columns}, change.m);
    END LOOP;
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
