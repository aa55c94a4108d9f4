-- Maintenance of an end relation E of a 4-path count ([L] Appendix G, Figure 15), rendered twice:
-- for E = R (its variable X = A; M = S, F = T, G = U, Y = C) and, by the path's mirror symmetry,
-- for E = U (X = C; M = T, F = S, G = R, Y = A). Read each statement with the first in mind:
-- M(x,b) is the middle relation next to E, F(b,y) the other one, G(y) the other end, and
--
--   w_E(b) = sum_x E(x) M(x,b) over M's parts but M_hl     w_G(b) = the same from the other end
--   p_E(x,y) = sum_b M_ll(x,b) F_lh(b,y)                    p_G(y,x) = sum_b M_hl(x,b) F_ll(b,y)
--   q(x,y) = sum_b M_hl(x,b) F_lh(b,y)
--   z_E(b) = [b heavy in M] sum_y F_lh(b,y) G(y)           z_G(b) = [b heavy in F] sum_x E(x) M_hl(x,b)
--   y_E(x) = sum_y p_G(y,x) G(y)                            y_G(y) = sum_x E(x) p_E(x,y)
--
-- where M_hl is heavy on X and light on B, and F_lh light on B and heavy on Y (80_fp_tables.sql).

-- ApplyUpdate4Path for a single-tuple update of E (Figure 15), and the size invariant.
CREATE FUNCTION {apply_e}(x_value {x_type}, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st        {state}%ROWTYPE;
    heavy     boolean;  -- the value's part in M (NULL: M has no tuple with it, and no path goes through it)
    delta_q   bigint := 0;
    new_mult  bigint;
BEGIN
    SELECT * INTO st FROM {state};
    SELECT d.heavy INTO heavy FROM {m_x_degree} d WHERE d.{x} = x_value;
    IF NOT heavy THEN
        -- A light value's M-tuples (< 3/2 N^eps): F beyond each through w_G (every part but F_lh) and
        -- z_E (F_lh, at B-values heavy in M); M_ll joined with F_lh is p_E, one row per heavy Y-value.
        -- (each loop scans its bounded side with a point lookup per row: hash and merge joins are
        -- off in the capture trigger, and a correlated lookup cannot become the driver)
        delta_q := coalesce((SELECT sum(k.mult * (coalesce((SELECT w.mult FROM {w_g} w WHERE w.b = k.b), 0)
                                                  + CASE WHEN k.hb THEN coalesce((SELECT z.mult FROM {z_e} z WHERE z.b = k.b), 0)
                                                         ELSE 0 END))
                               FROM {m} k WHERE k.{x} = x_value), 0)
                 + coalesce((SELECT sum(p.mult * (SELECT g.mult FROM {g} g WHERE g.{y} = p.{y}))
                               FROM {p_e} p WHERE p.{x} = x_value), 0);
        -- w_E(b) += m M(x,b) (a light value has no M_hl tuple); y_G(y) += m p_E(x,y).
        INSERT INTO {w_e} AS v (b, mult) SELECT k.b, m * k.mult FROM {m} k WHERE k.{x} = x_value
            ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM {w_e} WHERE mult = 0;
        INSERT INTO {y_g} AS v ({y}, mult) SELECT p.{y}, m * p.mult FROM {p_e} p WHERE p.{x} = x_value
            ON CONFLICT ({y}) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM {y_g} WHERE mult = 0;
    ELSIF heavy THEN
        -- A heavy value: its M_hh tuples sit at B-values heavy in M (< 2 N^(1-eps)), each read with w_G
        -- and z_E; its M_hl tuples are many, so they are reached through y_E (F_ll), a loop over F's
        -- heavy B-values probing M (F_hl and F_hh, all of w_G there), and q (F_lh).
        -- The loop over F's heavy B-values reads each M_hl(x,b) once for both of its uses: the δQ term
        -- with w_G(b), and z_G(b) += m M_hl(x,b) (z_G is in no term of an update of E).
        WITH hl AS MATERIALIZED (
            SELECT d.b, k.mult
              FROM {f_b_degree} d
             CROSS JOIN LATERAL (SELECT j.mult FROM {m} j WHERE j.{x} = x_value AND j.b = d.b AND NOT j.hb OFFSET 0) k
             WHERE d.heavy
        ), z AS (
            INSERT INTO {z_g} AS v (b, mult) SELECT hl.b, m * hl.mult FROM hl
                ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult
        )
        SELECT coalesce(sum(hl.mult * (SELECT w.mult FROM {w_g} w WHERE w.b = hl.b)), 0) INTO delta_q FROM hl;
        DELETE FROM {z_g} WHERE mult = 0;
        delta_q := delta_q
                 + coalesce((SELECT sum(k.mult * (coalesce((SELECT w.mult FROM {w_g} w WHERE w.b = k.b), 0)
                                                  + coalesce((SELECT z.mult FROM {z_e} z WHERE z.b = k.b), 0)))
                               FROM {m} k WHERE k.{x} = x_value AND k.hb), 0)
                 + coalesce((SELECT y.mult FROM {y_e} y WHERE y.{x} = x_value), 0)
                 + coalesce((SELECT sum(k.mult * (SELECT g.mult FROM {g} g WHERE g.{y} = k.{y}))
                               FROM {q} k WHERE k.{x} = x_value), 0);
        -- w_E(b) += m M_hh(x,b).
        INSERT INTO {w_e} AS v (b, mult) SELECT k.b, m * k.mult FROM {m} k WHERE k.{x} = x_value AND k.hb
            ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM {w_e} WHERE mult = 0;
    END IF;
    IF delta_q <> 0 THEN
        UPDATE {result} SET count = count + m * delta_q;
    END IF;

    -- E(x) += m; |D| counts distinct tuples, so only a value appearing or vanishing changes it.
    INSERT INTO {e} AS p ({x}, mult) VALUES (x_value, m)
        ON CONFLICT ({x}) DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
    IF new_mult = 0 THEN
        DELETE FROM {e} WHERE {x} = x_value;
        PERFORM {resize}(st.db_size - 1, st.n);
    ELSIF new_mult = m THEN
        PERFORM {resize}(st.db_size + 1, st.n);
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION {apply_e}({x_type}, bigint) IS {apply_e_comment};


-- A multi-row statement's net change of E, set at a time: Figure 15's terms for every value of the
-- batch at once (each a join of the batch with M's parts or with p_E, q, y_E), on the state before
-- it (E is in none of them), then the views it feeds, then E and |D|.
CREATE FUNCTION {apply_batch_e}()
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
    -- One row per distinct value (a deferred refresh may hand several), with its part in M.
    WITH merged AS (DELETE FROM {e_delta} RETURNING {x}, mult)
    INSERT INTO {e_delta} ({x}, mult) SELECT {x}, sum(mult) FROM merged GROUP BY {x} HAVING sum(mult) <> 0;
    UPDATE {e_delta} d SET heavy = (SELECT g.heavy FROM {m_x_degree} g WHERE g.{x} = d.{x});
    ANALYZE {e_delta};

    -- delta Q: the light values' M-tuples with w_G and z_E, their p_E rows; the heavy values' M_hh
    -- tuples, y_E, their M_hl tuples at F's heavy B-values, their q rows.
    SELECT coalesce((SELECT sum(d.mult * k.mult * (coalesce(w.mult, 0) + CASE WHEN k.hb THEN coalesce(z.mult, 0) ELSE 0 END))
                       FROM {e_delta} d JOIN {m} k ON k.{x} = d.{x} LEFT JOIN {w_g} w ON w.b = k.b LEFT JOIN {z_e} z ON z.b = k.b
                      WHERE NOT d.heavy OR k.hb), 0)
         + coalesce((SELECT sum(d.mult * p.mult * g.mult) FROM {e_delta} d JOIN {p_e} p ON p.{x} = d.{x}
                       JOIN {g} g ON g.{y} = p.{y} WHERE NOT d.heavy), 0)
         + coalesce((SELECT sum(d.mult * y.mult) FROM {e_delta} d JOIN {y_e} y ON y.{x} = d.{x} WHERE d.heavy), 0)
         + coalesce((SELECT sum(d.mult * k.mult * w.mult) FROM {e_delta} d JOIN {m} k ON k.{x} = d.{x} AND NOT k.hb
                       JOIN {f_b_degree} fd ON fd.b = k.b AND fd.heavy JOIN {w_g} w ON w.b = k.b WHERE d.heavy), 0)
         + coalesce((SELECT sum(d.mult * k.mult * g.mult) FROM {e_delta} d JOIN {q} k ON k.{x} = d.{x}
                       JOIN {g} g ON g.{y} = k.{y} WHERE d.heavy), 0)
      INTO delta_q;
    IF delta_q <> 0 THEN
        UPDATE {result} SET count = count + delta_q::bigint;
    END IF;

    -- w_E(b) += dE(x) M(x,b) but M_hl; y_G(y) += dE(x) p_E(x,y); z_G(b) += dE(x) M_hl(x,b) at F's heavy B-values.
    INSERT INTO {w_e} AS v (b, mult)
    SELECT k.b, sum(d.mult * k.mult) FROM {e_delta} d JOIN {m} k ON k.{x} = d.{x} WHERE NOT d.heavy OR k.hb
     GROUP BY k.b HAVING sum(d.mult * k.mult) <> 0
        ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM {w_e} WHERE mult = 0;
    INSERT INTO {y_g} AS v ({y}, mult)
    SELECT p.{y}, sum(d.mult * p.mult) FROM {e_delta} d JOIN {p_e} p ON p.{x} = d.{x}
     GROUP BY p.{y} HAVING sum(d.mult * p.mult) <> 0
        ON CONFLICT ({y}) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM {y_g} WHERE mult = 0;
    INSERT INTO {z_g} AS v (b, mult)
    SELECT k.b, sum(d.mult * k.mult) FROM {e_delta} d JOIN {m} k ON k.{x} = d.{x} AND NOT k.hb
      JOIN {f_b_degree} fd ON fd.b = k.b AND fd.heavy
     WHERE d.heavy
     GROUP BY k.b HAVING sum(d.mult * k.mult) <> 0
        ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM {z_g} WHERE mult = 0;

    -- E += dE; |D| by the values that appeared (+1) or vanished (-1).
    WITH changed AS (
        INSERT INTO {e} AS p ({x}, mult) SELECT {x}, mult FROM {e_delta}
            ON CONFLICT ({x}) DO UPDATE SET mult = p.mult + EXCLUDED.mult
        RETURNING p.{x}, p.mult AS new_mult)
    SELECT coalesce(sum(CASE WHEN c.new_mult = 0 THEN -1 WHEN c.new_mult = d.mult THEN 1 ELSE 0 END), 0)
      INTO size_diff FROM changed c JOIN {e_delta} d ON d.{x} = c.{x};
    DELETE FROM {e} WHERE mult = 0;
    DELETE FROM {e_delta};
    IF size_diff <> 0 THEN
        PERFORM {resize}(st.db_size + size_diff, st.n);
    END IF;
END;
$pgivm$;


-- E emptied after a TRUNCATE of its table (the caller restarts from what remains).
CREATE FUNCTION {clear_e}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM {e};
END;
$pgivm$;
