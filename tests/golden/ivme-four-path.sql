-- pgivm golden install plan: system ivme, case four-path, options {'epsilon': 0.5, 'partitions': 'single', 'batch_threshold': 384}
-- view public.triangles AS SELECT count(*) FROM r JOIN s ON r.a = s.a JOIN t ON s.b = t.b JOIN u ON t.c = u.c
-- regenerate: PGIVM_REGENERATE_GOLDEN=1 python -m pytest tests/systems/test_golden_plans.py

-- phase: state (3 statements)

-- IVMε state shared by the whole view: the maintained count and the threshold bookkeeping.
-- Rendered once per view. Placeholders are quoted identifiers and literals filled in by
-- pgivm.systems.ivme; every name is schema-qualified.

-- (the schema itself: pgivm_catalog.create_state_schema, as the view's owner)
COMMENT ON SCHEMA "pgivm_triangles" IS 'pgivm state of view triangles (strategy ivme, 4-path count): SELECT count(*) FROM r JOIN s ON r.a = s.a JOIN t ON s.b = t.b JOIN u ON t.c = u.c';

CREATE TABLE "pgivm_triangles"."state" (
    singleton        boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    epsilon          float8 NOT NULL CHECK (epsilon BETWEEN 0 AND 1),
    n                bigint NOT NULL,           -- threshold base N; invariant floor(N/4) <= |D| < N
    theta            float8 NOT NULL,           -- heavy/light threshold N^epsilon
    db_size          bigint NOT NULL,           -- |D|: distinct tuples of R, S and T together
    updates_applied  bigint NOT NULL DEFAULT 0, -- base-table row changes maintained so far
    major_rebalances bigint NOT NULL DEFAULT 0,
    minor_rebalances bigint NOT NULL DEFAULT 0
);
COMMENT ON TABLE "pgivm_triangles"."state" IS 'IVMε state: epsilon, threshold base N, theta = N^epsilon, |D|, counters. '
    'Every maintaining transaction updates this row first, which serializes writers of the view.';

CREATE TABLE "pgivm_triangles"."result" (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    count     bigint NOT NULL
);
COMMENT ON TABLE "pgivm_triangles"."result" IS 'pgivm: the maintained result of view triangles';

INSERT INTO "pgivm_triangles"."state" (epsilon, n, theta, db_size) VALUES (0.5, 1, 1, 0); INSERT INTO "pgivm_triangles"."result" (count) VALUES (0);

-- The state of a 4-path count Q = sum over a, b, c of R(a) S(a,b) T(b,c) U(c) (Kara et al., long version,
-- Appendix G), beside the count and the bookkeeping of 00_view_state.sql. Rendered once per view.
--
-- S is partitioned on both of its variables and so is T (G.1): a tuple's part is the pair of its
-- values' parts, kept on the tuple as two flags (S_hl: heavy A-value, light B-value) and, per
-- value, in a degree table. R and U are not partitioned. The auxiliary views are Figure 14's, or
-- sums of them (each view below names the paper's), keyed as their names say:
--
--   w_r(b)    = sum_a R(a) S(a,b) over S_ll, S_lh, S_hh       (V_RS_ll + V_RS_lh + V_RS_hh)
--   w_u(b)    = sum_c T(b,c) U(c) over T_ll, T_hl, T_hh       (V_T_ll_U + V_T_hl_U + V_T_hh_U)
--   p_r(a,c)  = sum_b S_ll(a,b) T_lh(b,c)                     (V_S_ll_T_lh)
--   p_u(c,a)  = sum_b S_hl(a,b) T_ll(b,c)                     (V_S_hl_T_ll)
--   q(a,c)    = sum_b S_hl(a,b) T_lh(b,c)                     (V_S_hl_T_lh)
--   z_r(b)    = [b heavy in S] sum_c T_lh(b,c) U(c)           (V_S_lh_T_lh_U, the indicator being B's part in S)
--   z_u(b)    = [b heavy in T] sum_a R(a) S_hl(a,b)           (V_RS_hl_T_hl, likewise)
--   y_r(a)    = sum over b, c of S_hl(a,b) T_ll(b,c) U(c)            (V_S_hl_T_ll_U)
--   y_u(c)    = sum over a, b of R(a) S_ll(a,b) T_lh(b,c)            (V_RS_ll_T_lh)
--
-- (T's parts are written B-part first, then C-part: T_lh is light on B and heavy on C.) Figure 14's
-- V_S_hl_T_hh and V_S_hh_T_lh are not needed: an update to R at a heavy A-value reads S_hh's
-- B-values, heavy in S, through z_r, and S_hl's through a loop over T's heavy B-values.
-- Every view's entries are nonzero (a partial index finds those an upsert brings to 0).

CREATE TABLE "pgivm_triangles"."r" (a integer PRIMARY KEY, mult bigint NOT NULL);
COMMENT ON TABLE "pgivm_triangles"."r" IS 'IVMε (4-path): R(A), one row per distinct value with its multiplicity';
CREATE TABLE "pgivm_triangles"."u" (c integer PRIMARY KEY, mult bigint NOT NULL);
COMMENT ON TABLE "pgivm_triangles"."u" IS 'IVMε (4-path): U(C), one row per distinct value with its multiplicity';

CREATE TABLE "pgivm_triangles"."s" (
    a    integer NOT NULL,
    b    integer NOT NULL,
    mult bigint NOT NULL,
    ha   boolean NOT NULL,  -- the A-value's part (heavy: degree in S on A >= theta, with the slack of minor rebalancing)
    hb   boolean NOT NULL,  -- the B-value's part
    PRIMARY KEY (a, b) INCLUDE (mult, hb)
);
CREATE INDEX ON "pgivm_triangles"."s" (b, a) INCLUDE (mult, ha);
CREATE INDEX ON "pgivm_triangles"."s" (a, b) INCLUDE (mult) WHERE hb;  -- S_lh and S_hh at one A-value: at most 2 N^(1-eps) heavy B-values
COMMENT ON TABLE "pgivm_triangles"."s" IS 'IVMε (4-path): S(A,B) partitioned on A and on B, the parts as flags';

CREATE TABLE "pgivm_triangles"."t" (
    b    integer NOT NULL,
    c    integer NOT NULL,
    mult bigint NOT NULL,
    hb   boolean NOT NULL,
    hc   boolean NOT NULL,
    PRIMARY KEY (c, b) INCLUDE (mult, hb)
);
CREATE INDEX ON "pgivm_triangles"."t" (b, c) INCLUDE (mult, hc);
CREATE INDEX ON "pgivm_triangles"."t" (c, b) INCLUDE (mult) WHERE hb;
COMMENT ON TABLE "pgivm_triangles"."t" IS 'IVMε (4-path): T(B,C) partitioned on B and on C, the parts as flags';

CREATE TABLE "pgivm_triangles"."s_a_degree" (a integer PRIMARY KEY, degree bigint NOT NULL, heavy boolean NOT NULL);
CREATE TABLE "pgivm_triangles"."s_b_degree" (b integer PRIMARY KEY, degree bigint NOT NULL, heavy boolean NOT NULL);
CREATE INDEX ON "pgivm_triangles"."s_b_degree" (b) WHERE heavy;  -- S's heavy B-values: fewer than 2 N^(1-eps)
CREATE TABLE "pgivm_triangles"."t_c_degree" (c integer PRIMARY KEY, degree bigint NOT NULL, heavy boolean NOT NULL);
CREATE TABLE "pgivm_triangles"."t_b_degree" (b integer PRIMARY KEY, degree bigint NOT NULL, heavy boolean NOT NULL);
CREATE INDEX ON "pgivm_triangles"."t_b_degree" (b) WHERE heavy;
COMMENT ON TABLE "pgivm_triangles"."s_a_degree" IS 'IVMε: per A-value of S, its degree (distinct tuples) and its part';
COMMENT ON TABLE "pgivm_triangles"."s_b_degree" IS 'IVMε: per B-value of S, its degree (distinct tuples) and its part';
COMMENT ON TABLE "pgivm_triangles"."t_c_degree" IS 'IVMε: per C-value of T, its degree (distinct tuples) and its part';
COMMENT ON TABLE "pgivm_triangles"."t_b_degree" IS 'IVMε: per B-value of T, its degree (distinct tuples) and its part';

CREATE TABLE "pgivm_triangles"."w_r" (b integer PRIMARY KEY, mult bigint NOT NULL);
CREATE TABLE "pgivm_triangles"."w_u" (b integer PRIMARY KEY, mult bigint NOT NULL);
CREATE TABLE "pgivm_triangles"."p_r" (a integer NOT NULL, c integer NOT NULL, mult bigint NOT NULL, PRIMARY KEY (a, c) INCLUDE (mult));
CREATE TABLE "pgivm_triangles"."p_u" (c integer NOT NULL, a integer NOT NULL, mult bigint NOT NULL, PRIMARY KEY (c, a) INCLUDE (mult));
CREATE TABLE "pgivm_triangles"."q" (a integer NOT NULL, c integer NOT NULL, mult bigint NOT NULL, PRIMARY KEY (a, c) INCLUDE (mult));
CREATE INDEX ON "pgivm_triangles"."q" (c, a) INCLUDE (mult);
CREATE TABLE "pgivm_triangles"."z_r" (b integer PRIMARY KEY, mult bigint NOT NULL);
CREATE TABLE "pgivm_triangles"."z_u" (b integer PRIMARY KEY, mult bigint NOT NULL);
CREATE TABLE "pgivm_triangles"."y_r" (a integer PRIMARY KEY, mult bigint NOT NULL);
CREATE TABLE "pgivm_triangles"."y_u" (c integer PRIMARY KEY, mult bigint NOT NULL);
CREATE INDEX ON "pgivm_triangles"."w_r" (mult) WHERE mult = 0;
CREATE INDEX ON "pgivm_triangles"."w_u" (mult) WHERE mult = 0;
CREATE INDEX ON "pgivm_triangles"."p_r" (mult) WHERE mult = 0;
CREATE INDEX ON "pgivm_triangles"."p_u" (mult) WHERE mult = 0;
CREATE INDEX ON "pgivm_triangles"."q" (mult) WHERE mult = 0;
CREATE INDEX ON "pgivm_triangles"."z_r" (mult) WHERE mult = 0;
CREATE INDEX ON "pgivm_triangles"."z_u" (mult) WHERE mult = 0;
CREATE INDEX ON "pgivm_triangles"."y_r" (mult) WHERE mult = 0;
CREATE INDEX ON "pgivm_triangles"."y_u" (mult) WHERE mult = 0;
COMMENT ON TABLE "pgivm_triangles"."w_r" IS 'IVMε (4-path) view: sum_a R(a) S(a,b) over every part of S but S_hl';
COMMENT ON TABLE "pgivm_triangles"."w_u" IS 'IVMε (4-path) view: sum_c T(b,c) U(c) over every part of T but T_lh';
COMMENT ON TABLE "pgivm_triangles"."p_r" IS 'IVMε (4-path) view V_S_ll_T_lh(a,c)';
COMMENT ON TABLE "pgivm_triangles"."p_u" IS 'IVMε (4-path) view V_S_hl_T_ll(a,c)';
COMMENT ON TABLE "pgivm_triangles"."q" IS 'IVMε (4-path) view V_S_hl_T_lh(a,c)';
COMMENT ON TABLE "pgivm_triangles"."z_r" IS 'IVMε (4-path) view: for B-values heavy in S, sum_c T_lh(b,c) U(c)';
COMMENT ON TABLE "pgivm_triangles"."z_u" IS 'IVMε (4-path) view: for B-values heavy in T, sum_a R(a) S_hl(a,b)';
COMMENT ON TABLE "pgivm_triangles"."y_r" IS 'IVMε (4-path) view V_S_hl_T_ll_U(a)';
COMMENT ON TABLE "pgivm_triangles"."y_u" IS 'IVMε (4-path) view V_RS_ll_T_lh(c)';

-- A multi-row statement's net change of each relation, applied set at a time by apply_batch_K, with
-- the parts of its values before the batch (an end's value: its part in the middle next to it; NULL
-- if it has no tuple there) and, for a middle's tuple, its multiplicity after the batch.
CREATE TABLE "pgivm_triangles"."r_delta" (a integer NOT NULL, mult bigint NOT NULL, heavy boolean);
CREATE TABLE "pgivm_triangles"."s_delta" (a integer NOT NULL, b integer NOT NULL, mult bigint NOT NULL, hx boolean, hb boolean, new_mult bigint);
CREATE TABLE "pgivm_triangles"."t_delta" (b integer NOT NULL, c integer NOT NULL, mult bigint NOT NULL, hx boolean, hb boolean, new_mult bigint);
CREATE TABLE "pgivm_triangles"."u_delta" (c integer NOT NULL, mult bigint NOT NULL, heavy boolean);

-- phase: functions (10 statements)

-- OnUpdate's size invariant floor(N/4) <= |D| < N for the variants that keep their relations as one
-- table with flags (refined partitions, the 4-path count), rendered once per view: |D| set; when it
-- breaks, N = 2|D| + 1 and a major rebalancing (true: the caller skips its minor rebalancing,
-- everything was repartitioned). n_now: N as the caller read it with the state row (only this
-- function changes N).
CREATE FUNCTION "pgivm_triangles"."resize"(size bigint, n_now bigint)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    IF size >= n_now OR size < n_now / 4 THEN
        UPDATE "pgivm_triangles"."state" SET db_size = size, n = 2 * size + 1;
        PERFORM "pgivm_triangles"."major_rebalance"();
        RETURN true;
    END IF;
    UPDATE "pgivm_triangles"."state" SET db_size = size;
    RETURN false;
END;
$pgivm$;

-- View-wide maintenance of a 4-path count ([L] Appendix G.5): major rebalancing, every view from
-- its definition, the count from the state, and the restart after a build or a TRUNCATE (the size
-- invariant: 48_resize.sql). Rendered once per view.

-- MajorRebalancing: theta = N^epsilon, S and T strictly repartitioned on both variables (heavy iff
-- degree >= theta), every view recomputed.
CREATE FUNCTION "pgivm_triangles"."major_rebalance"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
DECLARE
    st "pgivm_triangles"."state"%ROWTYPE;
BEGIN
    UPDATE "pgivm_triangles"."state" SET theta = power(n::float8, epsilon), major_rebalances = major_rebalances + 1 RETURNING * INTO st;
    UPDATE "pgivm_triangles"."s_a_degree" SET heavy = (degree >= st.theta OR st.epsilon = 0) WHERE heavy <> (degree >= st.theta OR st.epsilon = 0);
    UPDATE "pgivm_triangles"."s_b_degree" SET heavy = (degree >= st.theta OR st.epsilon = 0) WHERE heavy <> (degree >= st.theta OR st.epsilon = 0);
    UPDATE "pgivm_triangles"."t_b_degree" SET heavy = (degree >= st.theta OR st.epsilon = 0) WHERE heavy <> (degree >= st.theta OR st.epsilon = 0);
    UPDATE "pgivm_triangles"."t_c_degree" SET heavy = (degree >= st.theta OR st.epsilon = 0) WHERE heavy <> (degree >= st.theta OR st.epsilon = 0);
    UPDATE "pgivm_triangles"."s" k SET ha = d.heavy FROM "pgivm_triangles"."s_a_degree" d WHERE d.a = k.a AND k.ha <> d.heavy;
    UPDATE "pgivm_triangles"."s" k SET hb = d.heavy FROM "pgivm_triangles"."s_b_degree" d WHERE d.b = k.b AND k.hb <> d.heavy;
    UPDATE "pgivm_triangles"."t" k SET hb = d.heavy FROM "pgivm_triangles"."t_b_degree" d WHERE d.b = k.b AND k.hb <> d.heavy;
    UPDATE "pgivm_triangles"."t" k SET hc = d.heavy FROM "pgivm_triangles"."t_c_degree" d WHERE d.c = k.c AND k.hc <> d.heavy;
    PERFORM "pgivm_triangles"."recompute_views"();
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."major_rebalance"() IS 'IVMε MajorRebalancing (4-path): strict repartition at theta = N^epsilon, every view recomputed';


-- Every auxiliary view from its definition over the parts (80_fp_tables.sql), set at a time.
CREATE FUNCTION "pgivm_triangles"."recompute_views"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."w_r";
    INSERT INTO "pgivm_triangles"."w_r" (b, mult)
    SELECT k.b, sum(e.mult * k.mult) FROM "pgivm_triangles"."s" k JOIN "pgivm_triangles"."r" e ON e.a = k.a WHERE NOT (k.ha AND NOT k.hb) GROUP BY k.b HAVING sum(e.mult * k.mult) <> 0;
    DELETE FROM "pgivm_triangles"."w_u";
    INSERT INTO "pgivm_triangles"."w_u" (b, mult)
    SELECT k.b, sum(k.mult * e.mult) FROM "pgivm_triangles"."t" k JOIN "pgivm_triangles"."u" e ON e.c = k.c WHERE NOT (k.hc AND NOT k.hb) GROUP BY k.b HAVING sum(k.mult * e.mult) <> 0;
    DELETE FROM "pgivm_triangles"."p_r";
    INSERT INTO "pgivm_triangles"."p_r" (a, c, mult)
    SELECT s.a, t.c, sum(s.mult * t.mult) FROM "pgivm_triangles"."s" s JOIN "pgivm_triangles"."t" t ON t.b = s.b WHERE NOT s.ha AND NOT s.hb AND NOT t.hb AND t.hc GROUP BY s.a, t.c HAVING sum(s.mult * t.mult) <> 0;
    DELETE FROM "pgivm_triangles"."p_u";
    INSERT INTO "pgivm_triangles"."p_u" (c, a, mult)
    SELECT t.c, s.a, sum(s.mult * t.mult) FROM "pgivm_triangles"."s" s JOIN "pgivm_triangles"."t" t ON t.b = s.b WHERE s.ha AND NOT s.hb AND NOT t.hb AND NOT t.hc GROUP BY t.c, s.a HAVING sum(s.mult * t.mult) <> 0;
    DELETE FROM "pgivm_triangles"."q";
    INSERT INTO "pgivm_triangles"."q" (a, c, mult)
    SELECT s.a, t.c, sum(s.mult * t.mult) FROM "pgivm_triangles"."s" s JOIN "pgivm_triangles"."t" t ON t.b = s.b WHERE s.ha AND NOT s.hb AND NOT t.hb AND t.hc GROUP BY s.a, t.c HAVING sum(s.mult * t.mult) <> 0;
    DELETE FROM "pgivm_triangles"."z_r";
    INSERT INTO "pgivm_triangles"."z_r" (b, mult)
    SELECT t.b, sum(t.mult * u.mult) FROM "pgivm_triangles"."t" t JOIN "pgivm_triangles"."u" u ON u.c = t.c JOIN "pgivm_triangles"."s_b_degree" d ON d.b = t.b WHERE d.heavy AND NOT t.hb AND t.hc GROUP BY t.b HAVING sum(t.mult * u.mult) <> 0;
    DELETE FROM "pgivm_triangles"."z_u";
    INSERT INTO "pgivm_triangles"."z_u" (b, mult)
    SELECT s.b, sum(r.mult * s.mult) FROM "pgivm_triangles"."s" s JOIN "pgivm_triangles"."r" r ON r.a = s.a JOIN "pgivm_triangles"."t_b_degree" d ON d.b = s.b WHERE d.heavy AND s.ha AND NOT s.hb GROUP BY s.b HAVING sum(r.mult * s.mult) <> 0;
    DELETE FROM "pgivm_triangles"."y_r";
    INSERT INTO "pgivm_triangles"."y_r" (a, mult)
    SELECT s.a, sum(s.mult * t.mult * u.mult) FROM "pgivm_triangles"."s" s JOIN "pgivm_triangles"."t" t ON t.b = s.b JOIN "pgivm_triangles"."u" u ON u.c = t.c WHERE s.ha AND NOT s.hb AND NOT t.hb AND NOT t.hc GROUP BY s.a HAVING sum(s.mult * t.mult * u.mult) <> 0;
    DELETE FROM "pgivm_triangles"."y_u";
    INSERT INTO "pgivm_triangles"."y_u" (c, mult)
    SELECT t.c, sum(r.mult * s.mult * t.mult) FROM "pgivm_triangles"."r" r JOIN "pgivm_triangles"."s" s ON s.a = r.a JOIN "pgivm_triangles"."t" t ON t.b = s.b WHERE NOT s.ha AND NOT s.hb AND NOT t.hb AND t.hc GROUP BY t.c HAVING sum(r.mult * s.mult * t.mult) <> 0;
END;
$pgivm$;


-- The count from the state, factorized at B: sum_b (sum_a R(a) S(a,b)) (sum_c T(b,c) U(c)), linear
-- in |D| where the four-way join is not. Used by the build, TRUNCATE and verify; the query is COUNT in
-- pgivm/systems/ivme/four_path.py (the Spark build runs it too).
CREATE FUNCTION "pgivm_triangles"."count_from_state"()
RETURNS bigint LANGUAGE sql SECURITY DEFINER STABLE
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
    SELECT coalesce((SELECT sum(l.v * x.v) FROM (SELECT k.b, sum(e.mult * k.mult) AS v FROM "pgivm_triangles"."s" k JOIN "pgivm_triangles"."r" e ON e.a = k.a GROUP BY k.b) l JOIN (SELECT k.b, sum(k.mult * e.mult) AS v FROM "pgivm_triangles"."t" k JOIN "pgivm_triangles"."u" e ON e.c = k.c GROUP BY k.b) x ON x.b = l.b), 0)::bigint
$pgivm$;


-- Preprocessing: N = 2|D| + 1, strict partitions, the views, the count.
CREATE FUNCTION "pgivm_triangles"."restart"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
DECLARE
    size bigint := (SELECT count(*) FROM "pgivm_triangles"."r") + (SELECT count(*) FROM "pgivm_triangles"."s") + (SELECT count(*) FROM "pgivm_triangles"."t") + (SELECT count(*) FROM "pgivm_triangles"."u");
BEGIN
    UPDATE "pgivm_triangles"."state" SET db_size = size, n = 2 * size + 1;
    PERFORM "pgivm_triangles"."major_rebalance"();
    UPDATE "pgivm_triangles"."result" SET count = "pgivm_triangles"."count_from_state"();
END;
$pgivm$;

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
CREATE FUNCTION "pgivm_triangles"."apply_r"(x_value integer, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st        "pgivm_triangles"."state"%ROWTYPE;
    heavy     boolean;  -- the value's part in M (NULL: M has no tuple with it, and no path goes through it)
    delta_q   bigint := 0;
    new_mult  bigint;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    SELECT d.heavy INTO heavy FROM "pgivm_triangles"."s_a_degree" d WHERE d."a" = x_value;
    IF NOT heavy THEN
        -- A light value's M-tuples (< 3/2 N^eps): F beyond each through w_G (every part but F_lh) and
        -- z_E (F_lh, at B-values heavy in M); M_ll joined with F_lh is p_E, one row per heavy Y-value.
        -- (each loop scans its bounded side with a point lookup per row: hash and merge joins are
        -- off in the capture trigger, and a correlated lookup cannot become the driver)
        delta_q := coalesce((SELECT sum(k.mult * (coalesce((SELECT w.mult FROM "pgivm_triangles"."w_u" w WHERE w.b = k.b), 0)
                                                  + CASE WHEN k.hb THEN coalesce((SELECT z.mult FROM "pgivm_triangles"."z_r" z WHERE z.b = k.b), 0)
                                                         ELSE 0 END))
                               FROM "pgivm_triangles"."s" k WHERE k."a" = x_value), 0)
                 + coalesce((SELECT sum(p.mult * (SELECT g.mult FROM "pgivm_triangles"."u" g WHERE g."c" = p."c"))
                               FROM "pgivm_triangles"."p_r" p WHERE p."a" = x_value), 0);
        -- w_E(b) += m M(x,b) (a light value has no M_hl tuple); y_G(y) += m p_E(x,y).
        INSERT INTO "pgivm_triangles"."w_r" AS v (b, mult) SELECT k.b, m * k.mult FROM "pgivm_triangles"."s" k WHERE k."a" = x_value
            ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM "pgivm_triangles"."w_r" WHERE mult = 0;
        INSERT INTO "pgivm_triangles"."y_u" AS v ("c", mult) SELECT p."c", m * p.mult FROM "pgivm_triangles"."p_r" p WHERE p."a" = x_value
            ON CONFLICT ("c") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM "pgivm_triangles"."y_u" WHERE mult = 0;
    ELSIF heavy THEN
        -- A heavy value: its M_hh tuples sit at B-values heavy in M (< 2 N^(1-eps)), each read with w_G
        -- and z_E; its M_hl tuples are many, so they are reached through y_E (F_ll), a loop over F's
        -- heavy B-values probing M (F_hl and F_hh, all of w_G there), and q (F_lh).
        -- The loop over F's heavy B-values reads each M_hl(x,b) once for both of its uses: the δQ term
        -- with w_G(b), and z_G(b) += m M_hl(x,b) (z_G is in no term of an update of E).
        WITH hl AS MATERIALIZED (
            SELECT d.b, k.mult
              FROM "pgivm_triangles"."t_b_degree" d
             CROSS JOIN LATERAL (SELECT j.mult FROM "pgivm_triangles"."s" j WHERE j."a" = x_value AND j.b = d.b AND NOT j.hb OFFSET 0) k
             WHERE d.heavy
        ), z AS (
            INSERT INTO "pgivm_triangles"."z_u" AS v (b, mult) SELECT hl.b, m * hl.mult FROM hl
                ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult
        )
        SELECT coalesce(sum(hl.mult * (SELECT w.mult FROM "pgivm_triangles"."w_u" w WHERE w.b = hl.b)), 0) INTO delta_q FROM hl;
        DELETE FROM "pgivm_triangles"."z_u" WHERE mult = 0;
        delta_q := delta_q
                 + coalesce((SELECT sum(k.mult * (coalesce((SELECT w.mult FROM "pgivm_triangles"."w_u" w WHERE w.b = k.b), 0)
                                                  + coalesce((SELECT z.mult FROM "pgivm_triangles"."z_r" z WHERE z.b = k.b), 0)))
                               FROM "pgivm_triangles"."s" k WHERE k."a" = x_value AND k.hb), 0)
                 + coalesce((SELECT y.mult FROM "pgivm_triangles"."y_r" y WHERE y."a" = x_value), 0)
                 + coalesce((SELECT sum(k.mult * (SELECT g.mult FROM "pgivm_triangles"."u" g WHERE g."c" = k."c"))
                               FROM "pgivm_triangles"."q" k WHERE k."a" = x_value), 0);
        -- w_E(b) += m M_hh(x,b).
        INSERT INTO "pgivm_triangles"."w_r" AS v (b, mult) SELECT k.b, m * k.mult FROM "pgivm_triangles"."s" k WHERE k."a" = x_value AND k.hb
            ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM "pgivm_triangles"."w_r" WHERE mult = 0;
    END IF;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + m * delta_q;
    END IF;

    -- E(x) += m; |D| counts distinct tuples, so only a value appearing or vanishing changes it.
    INSERT INTO "pgivm_triangles"."r" AS p ("a", mult) VALUES (x_value, m)
        ON CONFLICT ("a") DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
    IF new_mult = 0 THEN
        DELETE FROM "pgivm_triangles"."r" WHERE "a" = x_value;
        PERFORM "pgivm_triangles"."resize"(st.db_size - 1, st.n);
    ELSIF new_mult = m THEN
        PERFORM "pgivm_triangles"."resize"(st.db_size + 1, st.n);
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_r"(integer, bigint) IS 'IVMε ApplyUpdate4Path for a single-tuple update to R (Appendix G, Figure 15)';


-- A multi-row statement's net change of E, set at a time: Figure 15's terms for every value of the
-- batch at once (each a join of the batch with M's parts or with p_E, q, y_E), on the state before
-- it (E is in none of them), then the views it feeds, then E and |D|.
CREATE FUNCTION "pgivm_triangles"."apply_batch_r"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
SET random_page_cost = 1.1
AS $pgivm$
DECLARE
    st        "pgivm_triangles"."state"%ROWTYPE;
    delta_q   numeric;
    size_diff bigint;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    -- One row per distinct value (a deferred refresh may hand several), with its part in M.
    WITH merged AS (DELETE FROM "pgivm_triangles"."r_delta" RETURNING "a", mult)
    INSERT INTO "pgivm_triangles"."r_delta" ("a", mult) SELECT "a", sum(mult) FROM merged GROUP BY "a" HAVING sum(mult) <> 0;
    UPDATE "pgivm_triangles"."r_delta" d SET heavy = (SELECT g.heavy FROM "pgivm_triangles"."s_a_degree" g WHERE g."a" = d."a");
    ANALYZE "pgivm_triangles"."r_delta";

    -- delta Q: the light values' M-tuples with w_G and z_E, their p_E rows; the heavy values' M_hh
    -- tuples, y_E, their M_hl tuples at F's heavy B-values, their q rows.
    SELECT coalesce((SELECT sum(d.mult * k.mult * (coalesce(w.mult, 0) + CASE WHEN k.hb THEN coalesce(z.mult, 0) ELSE 0 END))
                       FROM "pgivm_triangles"."r_delta" d JOIN "pgivm_triangles"."s" k ON k."a" = d."a" LEFT JOIN "pgivm_triangles"."w_u" w ON w.b = k.b LEFT JOIN "pgivm_triangles"."z_r" z ON z.b = k.b
                      WHERE NOT d.heavy OR k.hb), 0)
         + coalesce((SELECT sum(d.mult * p.mult * g.mult) FROM "pgivm_triangles"."r_delta" d JOIN "pgivm_triangles"."p_r" p ON p."a" = d."a"
                       JOIN "pgivm_triangles"."u" g ON g."c" = p."c" WHERE NOT d.heavy), 0)
         + coalesce((SELECT sum(d.mult * y.mult) FROM "pgivm_triangles"."r_delta" d JOIN "pgivm_triangles"."y_r" y ON y."a" = d."a" WHERE d.heavy), 0)
         + coalesce((SELECT sum(d.mult * k.mult * w.mult) FROM "pgivm_triangles"."r_delta" d JOIN "pgivm_triangles"."s" k ON k."a" = d."a" AND NOT k.hb
                       JOIN "pgivm_triangles"."t_b_degree" fd ON fd.b = k.b AND fd.heavy JOIN "pgivm_triangles"."w_u" w ON w.b = k.b WHERE d.heavy), 0)
         + coalesce((SELECT sum(d.mult * k.mult * g.mult) FROM "pgivm_triangles"."r_delta" d JOIN "pgivm_triangles"."q" k ON k."a" = d."a"
                       JOIN "pgivm_triangles"."u" g ON g."c" = k."c" WHERE d.heavy), 0)
      INTO delta_q;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + delta_q::bigint;
    END IF;

    -- w_E(b) += dE(x) M(x,b) but M_hl; y_G(y) += dE(x) p_E(x,y); z_G(b) += dE(x) M_hl(x,b) at F's heavy B-values.
    INSERT INTO "pgivm_triangles"."w_r" AS v (b, mult)
    SELECT k.b, sum(d.mult * k.mult) FROM "pgivm_triangles"."r_delta" d JOIN "pgivm_triangles"."s" k ON k."a" = d."a" WHERE NOT d.heavy OR k.hb
     GROUP BY k.b HAVING sum(d.mult * k.mult) <> 0
        ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."w_r" WHERE mult = 0;
    INSERT INTO "pgivm_triangles"."y_u" AS v ("c", mult)
    SELECT p."c", sum(d.mult * p.mult) FROM "pgivm_triangles"."r_delta" d JOIN "pgivm_triangles"."p_r" p ON p."a" = d."a"
     GROUP BY p."c" HAVING sum(d.mult * p.mult) <> 0
        ON CONFLICT ("c") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."y_u" WHERE mult = 0;
    INSERT INTO "pgivm_triangles"."z_u" AS v (b, mult)
    SELECT k.b, sum(d.mult * k.mult) FROM "pgivm_triangles"."r_delta" d JOIN "pgivm_triangles"."s" k ON k."a" = d."a" AND NOT k.hb
      JOIN "pgivm_triangles"."t_b_degree" fd ON fd.b = k.b AND fd.heavy
     WHERE d.heavy
     GROUP BY k.b HAVING sum(d.mult * k.mult) <> 0
        ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."z_u" WHERE mult = 0;

    -- E += dE; |D| by the values that appeared (+1) or vanished (-1).
    WITH changed AS (
        INSERT INTO "pgivm_triangles"."r" AS p ("a", mult) SELECT "a", mult FROM "pgivm_triangles"."r_delta"
            ON CONFLICT ("a") DO UPDATE SET mult = p.mult + EXCLUDED.mult
        RETURNING p."a", p.mult AS new_mult)
    SELECT coalesce(sum(CASE WHEN c.new_mult = 0 THEN -1 WHEN c.new_mult = d.mult THEN 1 ELSE 0 END), 0)
      INTO size_diff FROM changed c JOIN "pgivm_triangles"."r_delta" d ON d."a" = c."a";
    DELETE FROM "pgivm_triangles"."r" WHERE mult = 0;
    DELETE FROM "pgivm_triangles"."r_delta";
    IF size_diff <> 0 THEN
        PERFORM "pgivm_triangles"."resize"(st.db_size + size_diff, st.n);
    END IF;
END;
$pgivm$;


-- E emptied after a TRUNCATE of its table (the caller restarts from what remains).
CREATE FUNCTION "pgivm_triangles"."clear_r"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."r";
END;
$pgivm$;

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
CREATE FUNCTION "pgivm_triangles"."apply_u"(x_value integer, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st        "pgivm_triangles"."state"%ROWTYPE;
    heavy     boolean;  -- the value's part in M (NULL: M has no tuple with it, and no path goes through it)
    delta_q   bigint := 0;
    new_mult  bigint;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    SELECT d.heavy INTO heavy FROM "pgivm_triangles"."t_c_degree" d WHERE d."c" = x_value;
    IF NOT heavy THEN
        -- A light value's M-tuples (< 3/2 N^eps): F beyond each through w_G (every part but F_lh) and
        -- z_E (F_lh, at B-values heavy in M); M_ll joined with F_lh is p_E, one row per heavy Y-value.
        -- (each loop scans its bounded side with a point lookup per row: hash and merge joins are
        -- off in the capture trigger, and a correlated lookup cannot become the driver)
        delta_q := coalesce((SELECT sum(k.mult * (coalesce((SELECT w.mult FROM "pgivm_triangles"."w_r" w WHERE w.b = k.b), 0)
                                                  + CASE WHEN k.hb THEN coalesce((SELECT z.mult FROM "pgivm_triangles"."z_u" z WHERE z.b = k.b), 0)
                                                         ELSE 0 END))
                               FROM "pgivm_triangles"."t" k WHERE k."c" = x_value), 0)
                 + coalesce((SELECT sum(p.mult * (SELECT g.mult FROM "pgivm_triangles"."r" g WHERE g."a" = p."a"))
                               FROM "pgivm_triangles"."p_u" p WHERE p."c" = x_value), 0);
        -- w_E(b) += m M(x,b) (a light value has no M_hl tuple); y_G(y) += m p_E(x,y).
        INSERT INTO "pgivm_triangles"."w_u" AS v (b, mult) SELECT k.b, m * k.mult FROM "pgivm_triangles"."t" k WHERE k."c" = x_value
            ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM "pgivm_triangles"."w_u" WHERE mult = 0;
        INSERT INTO "pgivm_triangles"."y_r" AS v ("a", mult) SELECT p."a", m * p.mult FROM "pgivm_triangles"."p_u" p WHERE p."c" = x_value
            ON CONFLICT ("a") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM "pgivm_triangles"."y_r" WHERE mult = 0;
    ELSIF heavy THEN
        -- A heavy value: its M_hh tuples sit at B-values heavy in M (< 2 N^(1-eps)), each read with w_G
        -- and z_E; its M_hl tuples are many, so they are reached through y_E (F_ll), a loop over F's
        -- heavy B-values probing M (F_hl and F_hh, all of w_G there), and q (F_lh).
        -- The loop over F's heavy B-values reads each M_hl(x,b) once for both of its uses: the δQ term
        -- with w_G(b), and z_G(b) += m M_hl(x,b) (z_G is in no term of an update of E).
        WITH hl AS MATERIALIZED (
            SELECT d.b, k.mult
              FROM "pgivm_triangles"."s_b_degree" d
             CROSS JOIN LATERAL (SELECT j.mult FROM "pgivm_triangles"."t" j WHERE j."c" = x_value AND j.b = d.b AND NOT j.hb OFFSET 0) k
             WHERE d.heavy
        ), z AS (
            INSERT INTO "pgivm_triangles"."z_r" AS v (b, mult) SELECT hl.b, m * hl.mult FROM hl
                ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult
        )
        SELECT coalesce(sum(hl.mult * (SELECT w.mult FROM "pgivm_triangles"."w_r" w WHERE w.b = hl.b)), 0) INTO delta_q FROM hl;
        DELETE FROM "pgivm_triangles"."z_r" WHERE mult = 0;
        delta_q := delta_q
                 + coalesce((SELECT sum(k.mult * (coalesce((SELECT w.mult FROM "pgivm_triangles"."w_r" w WHERE w.b = k.b), 0)
                                                  + coalesce((SELECT z.mult FROM "pgivm_triangles"."z_u" z WHERE z.b = k.b), 0)))
                               FROM "pgivm_triangles"."t" k WHERE k."c" = x_value AND k.hb), 0)
                 + coalesce((SELECT y.mult FROM "pgivm_triangles"."y_u" y WHERE y."c" = x_value), 0)
                 + coalesce((SELECT sum(k.mult * (SELECT g.mult FROM "pgivm_triangles"."r" g WHERE g."a" = k."a"))
                               FROM "pgivm_triangles"."q" k WHERE k."c" = x_value), 0);
        -- w_E(b) += m M_hh(x,b).
        INSERT INTO "pgivm_triangles"."w_u" AS v (b, mult) SELECT k.b, m * k.mult FROM "pgivm_triangles"."t" k WHERE k."c" = x_value AND k.hb
            ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM "pgivm_triangles"."w_u" WHERE mult = 0;
    END IF;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + m * delta_q;
    END IF;

    -- E(x) += m; |D| counts distinct tuples, so only a value appearing or vanishing changes it.
    INSERT INTO "pgivm_triangles"."u" AS p ("c", mult) VALUES (x_value, m)
        ON CONFLICT ("c") DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
    IF new_mult = 0 THEN
        DELETE FROM "pgivm_triangles"."u" WHERE "c" = x_value;
        PERFORM "pgivm_triangles"."resize"(st.db_size - 1, st.n);
    ELSIF new_mult = m THEN
        PERFORM "pgivm_triangles"."resize"(st.db_size + 1, st.n);
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_u"(integer, bigint) IS 'IVMε ApplyUpdate4Path for a single-tuple update to U (Appendix G, Figure 15)';


-- A multi-row statement's net change of E, set at a time: Figure 15's terms for every value of the
-- batch at once (each a join of the batch with M's parts or with p_E, q, y_E), on the state before
-- it (E is in none of them), then the views it feeds, then E and |D|.
CREATE FUNCTION "pgivm_triangles"."apply_batch_u"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
SET random_page_cost = 1.1
AS $pgivm$
DECLARE
    st        "pgivm_triangles"."state"%ROWTYPE;
    delta_q   numeric;
    size_diff bigint;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    -- One row per distinct value (a deferred refresh may hand several), with its part in M.
    WITH merged AS (DELETE FROM "pgivm_triangles"."u_delta" RETURNING "c", mult)
    INSERT INTO "pgivm_triangles"."u_delta" ("c", mult) SELECT "c", sum(mult) FROM merged GROUP BY "c" HAVING sum(mult) <> 0;
    UPDATE "pgivm_triangles"."u_delta" d SET heavy = (SELECT g.heavy FROM "pgivm_triangles"."t_c_degree" g WHERE g."c" = d."c");
    ANALYZE "pgivm_triangles"."u_delta";

    -- delta Q: the light values' M-tuples with w_G and z_E, their p_E rows; the heavy values' M_hh
    -- tuples, y_E, their M_hl tuples at F's heavy B-values, their q rows.
    SELECT coalesce((SELECT sum(d.mult * k.mult * (coalesce(w.mult, 0) + CASE WHEN k.hb THEN coalesce(z.mult, 0) ELSE 0 END))
                       FROM "pgivm_triangles"."u_delta" d JOIN "pgivm_triangles"."t" k ON k."c" = d."c" LEFT JOIN "pgivm_triangles"."w_r" w ON w.b = k.b LEFT JOIN "pgivm_triangles"."z_u" z ON z.b = k.b
                      WHERE NOT d.heavy OR k.hb), 0)
         + coalesce((SELECT sum(d.mult * p.mult * g.mult) FROM "pgivm_triangles"."u_delta" d JOIN "pgivm_triangles"."p_u" p ON p."c" = d."c"
                       JOIN "pgivm_triangles"."r" g ON g."a" = p."a" WHERE NOT d.heavy), 0)
         + coalesce((SELECT sum(d.mult * y.mult) FROM "pgivm_triangles"."u_delta" d JOIN "pgivm_triangles"."y_u" y ON y."c" = d."c" WHERE d.heavy), 0)
         + coalesce((SELECT sum(d.mult * k.mult * w.mult) FROM "pgivm_triangles"."u_delta" d JOIN "pgivm_triangles"."t" k ON k."c" = d."c" AND NOT k.hb
                       JOIN "pgivm_triangles"."s_b_degree" fd ON fd.b = k.b AND fd.heavy JOIN "pgivm_triangles"."w_r" w ON w.b = k.b WHERE d.heavy), 0)
         + coalesce((SELECT sum(d.mult * k.mult * g.mult) FROM "pgivm_triangles"."u_delta" d JOIN "pgivm_triangles"."q" k ON k."c" = d."c"
                       JOIN "pgivm_triangles"."r" g ON g."a" = k."a" WHERE d.heavy), 0)
      INTO delta_q;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + delta_q::bigint;
    END IF;

    -- w_E(b) += dE(x) M(x,b) but M_hl; y_G(y) += dE(x) p_E(x,y); z_G(b) += dE(x) M_hl(x,b) at F's heavy B-values.
    INSERT INTO "pgivm_triangles"."w_u" AS v (b, mult)
    SELECT k.b, sum(d.mult * k.mult) FROM "pgivm_triangles"."u_delta" d JOIN "pgivm_triangles"."t" k ON k."c" = d."c" WHERE NOT d.heavy OR k.hb
     GROUP BY k.b HAVING sum(d.mult * k.mult) <> 0
        ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."w_u" WHERE mult = 0;
    INSERT INTO "pgivm_triangles"."y_r" AS v ("a", mult)
    SELECT p."a", sum(d.mult * p.mult) FROM "pgivm_triangles"."u_delta" d JOIN "pgivm_triangles"."p_u" p ON p."c" = d."c"
     GROUP BY p."a" HAVING sum(d.mult * p.mult) <> 0
        ON CONFLICT ("a") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."y_r" WHERE mult = 0;
    INSERT INTO "pgivm_triangles"."z_r" AS v (b, mult)
    SELECT k.b, sum(d.mult * k.mult) FROM "pgivm_triangles"."u_delta" d JOIN "pgivm_triangles"."t" k ON k."c" = d."c" AND NOT k.hb
      JOIN "pgivm_triangles"."s_b_degree" fd ON fd.b = k.b AND fd.heavy
     WHERE d.heavy
     GROUP BY k.b HAVING sum(d.mult * k.mult) <> 0
        ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."z_r" WHERE mult = 0;

    -- E += dE; |D| by the values that appeared (+1) or vanished (-1).
    WITH changed AS (
        INSERT INTO "pgivm_triangles"."u" AS p ("c", mult) SELECT "c", mult FROM "pgivm_triangles"."u_delta"
            ON CONFLICT ("c") DO UPDATE SET mult = p.mult + EXCLUDED.mult
        RETURNING p."c", p.mult AS new_mult)
    SELECT coalesce(sum(CASE WHEN c.new_mult = 0 THEN -1 WHEN c.new_mult = d.mult THEN 1 ELSE 0 END), 0)
      INTO size_diff FROM changed c JOIN "pgivm_triangles"."u_delta" d ON d."c" = c."c";
    DELETE FROM "pgivm_triangles"."u" WHERE mult = 0;
    DELETE FROM "pgivm_triangles"."u_delta";
    IF size_diff <> 0 THEN
        PERFORM "pgivm_triangles"."resize"(st.db_size + size_diff, st.n);
    END IF;
END;
$pgivm$;


-- E emptied after a TRUNCATE of its table (the caller restarts from what remains).
CREATE FUNCTION "pgivm_triangles"."clear_u"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."u";
END;
$pgivm$;

-- Maintenance of a middle relation M of a 4-path count ([L] Appendix G, Figure 16), rendered twice:
-- for M = S (X = A, E = R; F = T, Y = C, G = U) and, mirrored, for M = T (X = C, E = U; F = S,
-- Y = A, G = R). The views are named as in 82_fp_end.sql. M is partitioned on X and on B; a tuple's
-- part is the pair of its values' parts, read from the degree tables before any loop runs.

-- ApplyUpdate4Path for a single-tuple update of M (Figure 16), then OnUpdate for both of its values.
CREATE FUNCTION "pgivm_triangles"."apply_s"("x_a" integer, "x_b" integer, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    x_value   integer := "x_a";
    b_value   integer := "x_b";
    st        "pgivm_triangles"."state"%ROWTYPE;
    hx        boolean;  -- routing: the parts of the tuple's values in M (a new value starts light, heavy at eps = 0)
    hb        boolean;
    hb_f      boolean;  -- the B-value's part in F (NULL: F has no tuple with it)
    e_mult    bigint;
    delta_q   bigint := 0;
    new_mult  bigint;
    x_degree  bigint;
    b_degree  bigint;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    hx := coalesce((SELECT d.heavy FROM "pgivm_triangles"."s_a_degree" d WHERE d."a" = x_value), st.epsilon = 0);
    hb := coalesce((SELECT d.heavy FROM "pgivm_triangles"."s_b_degree" d WHERE d.b = b_value), st.epsilon = 0);
    hb_f := (SELECT d.heavy FROM "pgivm_triangles"."t_b_degree" d WHERE d.b = b_value);
    e_mult := coalesce((SELECT e.mult FROM "pgivm_triangles"."r" e WHERE e."a" = x_value), 0);

    -- delta Q = E(x) m sum_y F(b,y) G(y): w_G(b) holds F's parts but F_lh, whose tuples at a light
    -- B-value (< 3/2 N^eps) are read; at a heavy B-value F has none.
    IF e_mult <> 0 AND hb_f IS NOT NULL THEN
        delta_q := coalesce((SELECT w.mult FROM "pgivm_triangles"."w_u" w WHERE w.b = b_value), 0);
        IF NOT hb_f THEN
            delta_q := delta_q + coalesce((SELECT sum(f.mult * (SELECT g.mult FROM "pgivm_triangles"."u" g WHERE g."c" = f."c"))
                                             FROM "pgivm_triangles"."t" f WHERE f.b = b_value AND f."hc"), 0);
        END IF;
        IF delta_q <> 0 THEN
            UPDATE "pgivm_triangles"."result" SET count = count + e_mult * m * delta_q;
        END IF;
    END IF;

    PERFORM "pgivm_triangles"."views_s"(x_value, b_value, m, hx, hb);

    -- M(x,b) += m, in the part the flags name; a tuple reaching multiplicity 0 is deleted.
    INSERT INTO "pgivm_triangles"."s" AS p ("a", b, mult, "ha", hb) VALUES (x_value, b_value, m, hx, hb)
        ON CONFLICT ("a", b) DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
    -- Degrees and |D| count distinct tuples: only a tuple appearing or vanishing changes them.
    IF new_mult = m THEN
        INSERT INTO "pgivm_triangles"."s_a_degree" AS d ("a", degree, heavy) VALUES (x_value, 1, hx)
            ON CONFLICT ("a") DO UPDATE SET degree = d.degree + 1 RETURNING degree INTO x_degree;
        INSERT INTO "pgivm_triangles"."s_b_degree" AS d (b, degree, heavy) VALUES (b_value, 1, hb)
            ON CONFLICT (b) DO UPDATE SET degree = d.degree + 1 RETURNING degree INTO b_degree;
        IF "pgivm_triangles"."resize"(st.db_size + 1, st.n) THEN
            RETURN;  -- a major rebalancing repartitioned everything
        END IF;
    ELSIF new_mult = 0 THEN
        DELETE FROM "pgivm_triangles"."s" WHERE "a" = x_value AND b = b_value;
        UPDATE "pgivm_triangles"."s_a_degree" SET degree = degree - 1 WHERE "a" = x_value AND degree > 1 RETURNING degree INTO x_degree;
        IF NOT FOUND THEN
            DELETE FROM "pgivm_triangles"."s_a_degree" WHERE "a" = x_value;
            x_degree := 0;
        END IF;
        UPDATE "pgivm_triangles"."s_b_degree" SET degree = degree - 1 WHERE b = b_value AND degree > 1 RETURNING degree INTO b_degree;
        IF NOT FOUND THEN
            DELETE FROM "pgivm_triangles"."s_b_degree" WHERE b = b_value;
            DELETE FROM "pgivm_triangles"."z_r" WHERE b = b_value;  -- z_E's indicator: the value left M, heavy or not
            b_degree := 0;
        END IF;
        IF "pgivm_triangles"."resize"(st.db_size - 1, st.n) THEN
            RETURN;
        END IF;
    ELSE
        RETURN;
    END IF;

    -- OnUpdate, minor rebalancing: a value whose degree left [theta/2, 3/2 theta) of its part moves.
    IF NOT hx AND x_degree >= 1.5 * st.theta THEN
        PERFORM "pgivm_triangles"."move_s_a"(x_value, true);
    ELSIF hx AND x_degree > 0 AND x_degree < 0.5 * st.theta THEN
        PERFORM "pgivm_triangles"."move_s_a"(x_value, false);
    END IF;
    IF NOT hb AND b_degree >= 1.5 * st.theta THEN
        PERFORM "pgivm_triangles"."move_s_b"(b_value, true);
    ELSIF hb AND b_degree > 0 AND b_degree < 0.5 * st.theta THEN
        PERFORM "pgivm_triangles"."move_s_b"(b_value, false);
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_s"(integer, integer, bigint) IS 'IVMε ApplyUpdate4Path for a single-tuple update to S (Appendix G, Figure 16)';


-- The auxiliary views' part of a change m of M(x,b) in part (hx, hb) (Figure 16, lines 8-22, and
-- the views it leaves out). Reads no tuple of M, so a minor move runs it once out of the old part
-- and once into the new one, per moved tuple. Each loop reads F's tuples at a light B-value.
CREATE FUNCTION "pgivm_triangles"."views_s"(x_value integer, b_value integer, m bigint, hx boolean, hb boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    hb_f   boolean := (SELECT d.heavy FROM "pgivm_triangles"."t_b_degree" d WHERE d.b = b_value);
    e_mult bigint := coalesce((SELECT e.mult FROM "pgivm_triangles"."r" e WHERE e."a" = x_value), 0);
BEGIN
    IF NOT (hx AND NOT hb) AND e_mult <> 0 THEN  -- w_E(b) += E(x) m: every part but M_hl
        INSERT INTO "pgivm_triangles"."w_r" AS v (b, mult) VALUES (b_value, e_mult * m)
            ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM "pgivm_triangles"."w_r" WHERE mult = 0;
    END IF;
    IF hb OR hb_f IS NULL THEN
        RETURN;  -- M_lh, M_hh are in w_E alone; without an F-tuple at b no join view changes
    END IF;
    IF hb_f THEN
        IF hx AND e_mult <> 0 THEN  -- M_hl at a B-value heavy in F: z_G(b) += E(x) m
            INSERT INTO "pgivm_triangles"."z_u" AS v (b, mult) VALUES (b_value, e_mult * m)
                ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
            DELETE FROM "pgivm_triangles"."z_u" WHERE mult = 0;
        END IF;
        RETURN;  -- F's tuples at a heavy B-value are in neither F_ll nor F_lh
    END IF;
    IF NOT hx THEN
        -- M_ll: p_E(x,y) += m F_lh(b,y); y_G(y) += E(x) m F_lh(b,y)
        INSERT INTO "pgivm_triangles"."p_r" AS v ("a", "c", mult) SELECT x_value, f."c", m * f.mult FROM "pgivm_triangles"."t" f WHERE f.b = b_value AND f."hc"
            ON CONFLICT ("a", "c") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM "pgivm_triangles"."p_r" WHERE mult = 0;
        IF e_mult <> 0 THEN
            INSERT INTO "pgivm_triangles"."y_u" AS v ("c", mult) SELECT f."c", e_mult * m * f.mult FROM "pgivm_triangles"."t" f WHERE f.b = b_value AND f."hc"
                ON CONFLICT ("c") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
            DELETE FROM "pgivm_triangles"."y_u" WHERE mult = 0;
        END IF;
    ELSE
        -- M_hl: q(x,y) += m F_lh(b,y); p_G(y,x) += m F_ll(b,y); y_E(x) += m sum_y F_ll(b,y) G(y)
        INSERT INTO "pgivm_triangles"."q" AS v ("a", "c", mult) SELECT x_value, f."c", m * f.mult FROM "pgivm_triangles"."t" f WHERE f.b = b_value AND f."hc"
            ON CONFLICT ("a", "c") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM "pgivm_triangles"."q" WHERE mult = 0;
        INSERT INTO "pgivm_triangles"."p_u" AS v ("c", "a", mult) SELECT f."c", x_value, m * f.mult FROM "pgivm_triangles"."t" f WHERE f.b = b_value AND NOT f."hc"
            ON CONFLICT ("c", "a") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM "pgivm_triangles"."p_u" WHERE mult = 0;
        INSERT INTO "pgivm_triangles"."y_r" AS v ("a", mult)
        SELECT x_value, m * sum(f.mult * (SELECT g.mult FROM "pgivm_triangles"."u" g WHERE g."c" = f."c")) FROM "pgivm_triangles"."t" f
         WHERE f.b = b_value AND NOT f."hc"
        HAVING sum(f.mult * (SELECT g.mult FROM "pgivm_triangles"."u" g WHERE g."c" = f."c")) <> 0
            ON CONFLICT ("a") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM "pgivm_triangles"."y_r" WHERE mult = 0;
    END IF;
END;
$pgivm$;


-- MinorRebalancing on X: every tuple of the value moves to the other part (out of the old part's
-- views, into the new one's); the count does not change.
CREATE FUNCTION "pgivm_triangles"."move_s_a"(value integer, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    moved record;
BEGIN
    FOR moved IN SELECT b, mult, hb FROM "pgivm_triangles"."s" WHERE "a" = value LOOP
        PERFORM "pgivm_triangles"."views_s"(value, moved.b, -moved.mult, NOT to_heavy, moved.hb);
        PERFORM "pgivm_triangles"."views_s"(value, moved.b, moved.mult, to_heavy, moved.hb);
    END LOOP;
    UPDATE "pgivm_triangles"."s" SET "ha" = to_heavy WHERE "a" = value;
    UPDATE "pgivm_triangles"."s_a_degree" SET heavy = to_heavy WHERE "a" = value;
    UPDATE "pgivm_triangles"."state" SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;


-- MinorRebalancing on B: likewise, and z_E's indicator of the value follows its new part.
CREATE FUNCTION "pgivm_triangles"."move_s_b"(value integer, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    moved record;
BEGIN
    FOR moved IN SELECT "a" AS x_value, mult, "ha" AS hx FROM "pgivm_triangles"."s" WHERE b = value LOOP
        PERFORM "pgivm_triangles"."views_s"(moved.x_value, value, -moved.mult, moved.hx, NOT to_heavy);
        PERFORM "pgivm_triangles"."views_s"(moved.x_value, value, moved.mult, moved.hx, to_heavy);
    END LOOP;
    UPDATE "pgivm_triangles"."s" SET hb = to_heavy WHERE b = value;
    UPDATE "pgivm_triangles"."s_b_degree" SET heavy = to_heavy WHERE b = value;
    DELETE FROM "pgivm_triangles"."z_r" WHERE b = value;
    IF to_heavy AND NOT coalesce((SELECT d.heavy FROM "pgivm_triangles"."t_b_degree" d WHERE d.b = value), true) THEN
        INSERT INTO "pgivm_triangles"."z_r" (b, mult)
        SELECT value, sum(f.mult * (SELECT g.mult FROM "pgivm_triangles"."u" g WHERE g."c" = f."c")) FROM "pgivm_triangles"."t" f
         WHERE f.b = value AND f."hc"
        HAVING sum(f.mult * (SELECT g.mult FROM "pgivm_triangles"."u" g WHERE g."c" = f."c")) <> 0;
    END IF;
    UPDATE "pgivm_triangles"."state" SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;


-- A multi-row statement's net change of M, set at a time (as the Loomis-Whitney counts' batch): every
-- delta on the state before the batch, the tuples routed by their values' parts before it (a new
-- value light, heavy at epsilon = 0); Figure 16's rules read E, F and G only, so each view's delta is
-- a join of the batch with them. Then M, the degrees and |D|, then the invariants: a size-invariant
-- violation resets N with a major rebalancing, else every value of the batch that crossed a
-- threshold moves.
CREATE FUNCTION "pgivm_triangles"."apply_batch_s"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
SET random_page_cost = 1.1
AS $pgivm$
DECLARE
    st        "pgivm_triangles"."state"%ROWTYPE;
    delta_q   numeric;
    size_diff bigint;
    moving    record;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    WITH merged AS (DELETE FROM "pgivm_triangles"."s_delta" RETURNING "a", "b", mult)
    INSERT INTO "pgivm_triangles"."s_delta" ("a", "b", mult) SELECT "a", "b", sum(mult) FROM merged GROUP BY "a", "b" HAVING sum(mult) <> 0;
    UPDATE "pgivm_triangles"."s_delta" d
       SET hx = coalesce((SELECT g.heavy FROM "pgivm_triangles"."s_a_degree" g WHERE g."a" = d."a"), st.epsilon = 0),
           hb = coalesce((SELECT g.heavy FROM "pgivm_triangles"."s_b_degree" g WHERE g.b = d.b), st.epsilon = 0),
           new_mult = d.mult + coalesce((SELECT k.mult FROM "pgivm_triangles"."s" k WHERE k."a" = d."a" AND k.b = d.b), 0);
    ANALYZE "pgivm_triangles"."s_delta";

    -- delta Q = sum dM(x,b) E(x) (w_G(b) + sum_y F_lh(b,y) G(y)), F_lh read at B-values light in F.
    SELECT coalesce((SELECT sum(d.mult * e.mult * w.mult) FROM "pgivm_triangles"."s_delta" d JOIN "pgivm_triangles"."r" e ON e."a" = d."a"
                       JOIN "pgivm_triangles"."w_u" w ON w.b = d.b), 0)
         + coalesce((SELECT sum(d.mult * e.mult * f.mult * g.mult) FROM "pgivm_triangles"."s_delta" d JOIN "pgivm_triangles"."r" e ON e."a" = d."a"
                       JOIN "pgivm_triangles"."t" f ON f.b = d.b AND NOT f.hb AND f."hc" JOIN "pgivm_triangles"."u" g ON g."c" = f."c"), 0)
      INTO delta_q;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + delta_q::bigint;
    END IF;

    -- w_E(b) += dM E(x) but M_hl
    INSERT INTO "pgivm_triangles"."w_r" AS v (b, mult)
    SELECT d.b, sum(d.mult * e.mult) FROM "pgivm_triangles"."s_delta" d JOIN "pgivm_triangles"."r" e ON e."a" = d."a" WHERE NOT (d.hx AND NOT d.hb)
     GROUP BY d.b HAVING sum(d.mult * e.mult) <> 0
        ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."w_r" WHERE mult = 0;
    -- M_ll: p_E(x,y) += dM F_lh(b,y); y_G(y) += dM E(x) F_lh(b,y)   (F_lh: b light in F, y heavy)
    INSERT INTO "pgivm_triangles"."p_r" AS v ("a", "c", mult)
    SELECT d."a", f."c", sum(d.mult * f.mult) FROM "pgivm_triangles"."s_delta" d JOIN "pgivm_triangles"."t" f ON f.b = d.b AND NOT f.hb AND f."hc"
     WHERE NOT d.hx AND NOT d.hb
     GROUP BY d."a", f."c" HAVING sum(d.mult * f.mult) <> 0
        ON CONFLICT ("a", "c") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."p_r" WHERE mult = 0;
    INSERT INTO "pgivm_triangles"."y_u" AS v ("c", mult)
    SELECT f."c", sum(d.mult * e.mult * f.mult) FROM "pgivm_triangles"."s_delta" d JOIN "pgivm_triangles"."r" e ON e."a" = d."a"
      JOIN "pgivm_triangles"."t" f ON f.b = d.b AND NOT f.hb AND f."hc"
     WHERE NOT d.hx AND NOT d.hb
     GROUP BY f."c" HAVING sum(d.mult * e.mult * f.mult) <> 0
        ON CONFLICT ("c") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."y_u" WHERE mult = 0;
    -- M_hl: q(x,y) += dM F_lh(b,y); p_G(y,x) += dM F_ll(b,y); y_E(x) += dM sum_y F_ll(b,y) G(y);
    -- at a B-value heavy in F: z_G(b) += dM E(x)
    INSERT INTO "pgivm_triangles"."q" AS v ("a", "c", mult)
    SELECT d."a", f."c", sum(d.mult * f.mult) FROM "pgivm_triangles"."s_delta" d JOIN "pgivm_triangles"."t" f ON f.b = d.b AND NOT f.hb AND f."hc"
     WHERE d.hx AND NOT d.hb
     GROUP BY d."a", f."c" HAVING sum(d.mult * f.mult) <> 0
        ON CONFLICT ("a", "c") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."q" WHERE mult = 0;
    INSERT INTO "pgivm_triangles"."p_u" AS v ("c", "a", mult)
    SELECT f."c", d."a", sum(d.mult * f.mult) FROM "pgivm_triangles"."s_delta" d JOIN "pgivm_triangles"."t" f ON f.b = d.b AND NOT f.hb AND NOT f."hc"
     WHERE d.hx AND NOT d.hb
     GROUP BY f."c", d."a" HAVING sum(d.mult * f.mult) <> 0
        ON CONFLICT ("c", "a") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."p_u" WHERE mult = 0;
    INSERT INTO "pgivm_triangles"."y_r" AS v ("a", mult)
    SELECT d."a", sum(d.mult * f.mult * g.mult) FROM "pgivm_triangles"."s_delta" d JOIN "pgivm_triangles"."t" f ON f.b = d.b AND NOT f.hb AND NOT f."hc"
      JOIN "pgivm_triangles"."u" g ON g."c" = f."c"
     WHERE d.hx AND NOT d.hb
     GROUP BY d."a" HAVING sum(d.mult * f.mult * g.mult) <> 0
        ON CONFLICT ("a") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."y_r" WHERE mult = 0;
    INSERT INTO "pgivm_triangles"."z_u" AS v (b, mult)
    SELECT d.b, sum(d.mult * e.mult) FROM "pgivm_triangles"."s_delta" d JOIN "pgivm_triangles"."r" e ON e."a" = d."a"
      JOIN "pgivm_triangles"."t_b_degree" fd ON fd.b = d.b AND fd.heavy
     WHERE d.hx AND NOT d.hb
     GROUP BY d.b HAVING sum(d.mult * e.mult) <> 0
        ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."z_u" WHERE mult = 0;

    -- The batch into M: new tuples inserted, changed ones updated, vanished ones deleted.
    INSERT INTO "pgivm_triangles"."s" AS p ("a", b, mult, "ha", hb) SELECT "a", b, new_mult, hx, hb FROM "pgivm_triangles"."s_delta" WHERE new_mult <> 0
        ON CONFLICT ("a", b) DO UPDATE SET mult = EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."s" p USING "pgivm_triangles"."s_delta" d WHERE d.new_mult = 0 AND p."a" = d."a" AND p.b = d.b;

    -- Degrees and |D|: +1 per tuple that appeared, -1 per tuple that vanished.
    INSERT INTO "pgivm_triangles"."s_a_degree" AS g ("a", degree, heavy)
    SELECT "a", sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(hx)
      FROM "pgivm_triangles"."s_delta" WHERE new_mult = mult OR new_mult = 0 GROUP BY "a"
    ON CONFLICT ("a") DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM "pgivm_triangles"."s_a_degree" g USING "pgivm_triangles"."s_delta" d WHERE g."a" = d."a" AND g.degree = 0;
    INSERT INTO "pgivm_triangles"."s_b_degree" AS g (b, degree, heavy)
    SELECT b, sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(hb)
      FROM "pgivm_triangles"."s_delta" WHERE new_mult = mult OR new_mult = 0 GROUP BY b
    ON CONFLICT (b) DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM "pgivm_triangles"."z_r" z USING "pgivm_triangles"."s_delta" d WHERE z.b = d.b AND NOT EXISTS (SELECT FROM "pgivm_triangles"."s_b_degree" g WHERE g.b = d.b AND g.degree > 0);
    DELETE FROM "pgivm_triangles"."s_b_degree" g USING "pgivm_triangles"."s_delta" d WHERE g.b = d.b AND g.degree = 0;
    SELECT coalesce(sum(CASE WHEN new_mult = mult THEN 1 WHEN new_mult = 0 THEN -1 ELSE 0 END), 0)
      INTO size_diff FROM "pgivm_triangles"."s_delta";

    -- Restore the invariants.
    IF NOT "pgivm_triangles"."resize"(st.db_size + size_diff, st.n) THEN
        FOR moving IN
            SELECT g."a" AS value, NOT g.heavy AS to_heavy FROM "pgivm_triangles"."s_a_degree" g
             WHERE g."a" IN (SELECT "a" FROM "pgivm_triangles"."s_delta")
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM "pgivm_triangles"."move_s_a"(moving.value, moving.to_heavy);
        END LOOP;
        FOR moving IN
            SELECT g.b AS value, NOT g.heavy AS to_heavy FROM "pgivm_triangles"."s_b_degree" g
             WHERE g.b IN (SELECT b FROM "pgivm_triangles"."s_delta")
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM "pgivm_triangles"."move_s_b"(moving.value, moving.to_heavy);
        END LOOP;
    END IF;
    DELETE FROM "pgivm_triangles"."s_delta";
END;
$pgivm$;


-- M emptied after a TRUNCATE of its table (the caller restarts from what remains).
CREATE FUNCTION "pgivm_triangles"."clear_s"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."s";
    DELETE FROM "pgivm_triangles"."s_a_degree";
    DELETE FROM "pgivm_triangles"."s_b_degree";
END;
$pgivm$;

-- Maintenance of a middle relation M of a 4-path count ([L] Appendix G, Figure 16), rendered twice:
-- for M = S (X = A, E = R; F = T, Y = C, G = U) and, mirrored, for M = T (X = C, E = U; F = S,
-- Y = A, G = R). The views are named as in 82_fp_end.sql. M is partitioned on X and on B; a tuple's
-- part is the pair of its values' parts, read from the degree tables before any loop runs.

-- ApplyUpdate4Path for a single-tuple update of M (Figure 16), then OnUpdate for both of its values.
CREATE FUNCTION "pgivm_triangles"."apply_t"("x_b" integer, "x_c" integer, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    x_value   integer := "x_c";
    b_value   integer := "x_b";
    st        "pgivm_triangles"."state"%ROWTYPE;
    hx        boolean;  -- routing: the parts of the tuple's values in M (a new value starts light, heavy at eps = 0)
    hb        boolean;
    hb_f      boolean;  -- the B-value's part in F (NULL: F has no tuple with it)
    e_mult    bigint;
    delta_q   bigint := 0;
    new_mult  bigint;
    x_degree  bigint;
    b_degree  bigint;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    hx := coalesce((SELECT d.heavy FROM "pgivm_triangles"."t_c_degree" d WHERE d."c" = x_value), st.epsilon = 0);
    hb := coalesce((SELECT d.heavy FROM "pgivm_triangles"."t_b_degree" d WHERE d.b = b_value), st.epsilon = 0);
    hb_f := (SELECT d.heavy FROM "pgivm_triangles"."s_b_degree" d WHERE d.b = b_value);
    e_mult := coalesce((SELECT e.mult FROM "pgivm_triangles"."u" e WHERE e."c" = x_value), 0);

    -- delta Q = E(x) m sum_y F(b,y) G(y): w_G(b) holds F's parts but F_lh, whose tuples at a light
    -- B-value (< 3/2 N^eps) are read; at a heavy B-value F has none.
    IF e_mult <> 0 AND hb_f IS NOT NULL THEN
        delta_q := coalesce((SELECT w.mult FROM "pgivm_triangles"."w_r" w WHERE w.b = b_value), 0);
        IF NOT hb_f THEN
            delta_q := delta_q + coalesce((SELECT sum(f.mult * (SELECT g.mult FROM "pgivm_triangles"."r" g WHERE g."a" = f."a"))
                                             FROM "pgivm_triangles"."s" f WHERE f.b = b_value AND f."ha"), 0);
        END IF;
        IF delta_q <> 0 THEN
            UPDATE "pgivm_triangles"."result" SET count = count + e_mult * m * delta_q;
        END IF;
    END IF;

    PERFORM "pgivm_triangles"."views_t"(x_value, b_value, m, hx, hb);

    -- M(x,b) += m, in the part the flags name; a tuple reaching multiplicity 0 is deleted.
    INSERT INTO "pgivm_triangles"."t" AS p ("c", b, mult, "hc", hb) VALUES (x_value, b_value, m, hx, hb)
        ON CONFLICT ("c", b) DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
    -- Degrees and |D| count distinct tuples: only a tuple appearing or vanishing changes them.
    IF new_mult = m THEN
        INSERT INTO "pgivm_triangles"."t_c_degree" AS d ("c", degree, heavy) VALUES (x_value, 1, hx)
            ON CONFLICT ("c") DO UPDATE SET degree = d.degree + 1 RETURNING degree INTO x_degree;
        INSERT INTO "pgivm_triangles"."t_b_degree" AS d (b, degree, heavy) VALUES (b_value, 1, hb)
            ON CONFLICT (b) DO UPDATE SET degree = d.degree + 1 RETURNING degree INTO b_degree;
        IF "pgivm_triangles"."resize"(st.db_size + 1, st.n) THEN
            RETURN;  -- a major rebalancing repartitioned everything
        END IF;
    ELSIF new_mult = 0 THEN
        DELETE FROM "pgivm_triangles"."t" WHERE "c" = x_value AND b = b_value;
        UPDATE "pgivm_triangles"."t_c_degree" SET degree = degree - 1 WHERE "c" = x_value AND degree > 1 RETURNING degree INTO x_degree;
        IF NOT FOUND THEN
            DELETE FROM "pgivm_triangles"."t_c_degree" WHERE "c" = x_value;
            x_degree := 0;
        END IF;
        UPDATE "pgivm_triangles"."t_b_degree" SET degree = degree - 1 WHERE b = b_value AND degree > 1 RETURNING degree INTO b_degree;
        IF NOT FOUND THEN
            DELETE FROM "pgivm_triangles"."t_b_degree" WHERE b = b_value;
            DELETE FROM "pgivm_triangles"."z_u" WHERE b = b_value;  -- z_E's indicator: the value left M, heavy or not
            b_degree := 0;
        END IF;
        IF "pgivm_triangles"."resize"(st.db_size - 1, st.n) THEN
            RETURN;
        END IF;
    ELSE
        RETURN;
    END IF;

    -- OnUpdate, minor rebalancing: a value whose degree left [theta/2, 3/2 theta) of its part moves.
    IF NOT hx AND x_degree >= 1.5 * st.theta THEN
        PERFORM "pgivm_triangles"."move_t_c"(x_value, true);
    ELSIF hx AND x_degree > 0 AND x_degree < 0.5 * st.theta THEN
        PERFORM "pgivm_triangles"."move_t_c"(x_value, false);
    END IF;
    IF NOT hb AND b_degree >= 1.5 * st.theta THEN
        PERFORM "pgivm_triangles"."move_t_b"(b_value, true);
    ELSIF hb AND b_degree > 0 AND b_degree < 0.5 * st.theta THEN
        PERFORM "pgivm_triangles"."move_t_b"(b_value, false);
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_t"(integer, integer, bigint) IS 'IVMε ApplyUpdate4Path for a single-tuple update to T (Appendix G, Figure 16)';


-- The auxiliary views' part of a change m of M(x,b) in part (hx, hb) (Figure 16, lines 8-22, and
-- the views it leaves out). Reads no tuple of M, so a minor move runs it once out of the old part
-- and once into the new one, per moved tuple. Each loop reads F's tuples at a light B-value.
CREATE FUNCTION "pgivm_triangles"."views_t"(x_value integer, b_value integer, m bigint, hx boolean, hb boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    hb_f   boolean := (SELECT d.heavy FROM "pgivm_triangles"."s_b_degree" d WHERE d.b = b_value);
    e_mult bigint := coalesce((SELECT e.mult FROM "pgivm_triangles"."u" e WHERE e."c" = x_value), 0);
BEGIN
    IF NOT (hx AND NOT hb) AND e_mult <> 0 THEN  -- w_E(b) += E(x) m: every part but M_hl
        INSERT INTO "pgivm_triangles"."w_u" AS v (b, mult) VALUES (b_value, e_mult * m)
            ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM "pgivm_triangles"."w_u" WHERE mult = 0;
    END IF;
    IF hb OR hb_f IS NULL THEN
        RETURN;  -- M_lh, M_hh are in w_E alone; without an F-tuple at b no join view changes
    END IF;
    IF hb_f THEN
        IF hx AND e_mult <> 0 THEN  -- M_hl at a B-value heavy in F: z_G(b) += E(x) m
            INSERT INTO "pgivm_triangles"."z_r" AS v (b, mult) VALUES (b_value, e_mult * m)
                ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
            DELETE FROM "pgivm_triangles"."z_r" WHERE mult = 0;
        END IF;
        RETURN;  -- F's tuples at a heavy B-value are in neither F_ll nor F_lh
    END IF;
    IF NOT hx THEN
        -- M_ll: p_E(x,y) += m F_lh(b,y); y_G(y) += E(x) m F_lh(b,y)
        INSERT INTO "pgivm_triangles"."p_u" AS v ("c", "a", mult) SELECT x_value, f."a", m * f.mult FROM "pgivm_triangles"."s" f WHERE f.b = b_value AND f."ha"
            ON CONFLICT ("c", "a") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM "pgivm_triangles"."p_u" WHERE mult = 0;
        IF e_mult <> 0 THEN
            INSERT INTO "pgivm_triangles"."y_r" AS v ("a", mult) SELECT f."a", e_mult * m * f.mult FROM "pgivm_triangles"."s" f WHERE f.b = b_value AND f."ha"
                ON CONFLICT ("a") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
            DELETE FROM "pgivm_triangles"."y_r" WHERE mult = 0;
        END IF;
    ELSE
        -- M_hl: q(x,y) += m F_lh(b,y); p_G(y,x) += m F_ll(b,y); y_E(x) += m sum_y F_ll(b,y) G(y)
        INSERT INTO "pgivm_triangles"."q" AS v ("c", "a", mult) SELECT x_value, f."a", m * f.mult FROM "pgivm_triangles"."s" f WHERE f.b = b_value AND f."ha"
            ON CONFLICT ("c", "a") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM "pgivm_triangles"."q" WHERE mult = 0;
        INSERT INTO "pgivm_triangles"."p_r" AS v ("a", "c", mult) SELECT f."a", x_value, m * f.mult FROM "pgivm_triangles"."s" f WHERE f.b = b_value AND NOT f."ha"
            ON CONFLICT ("a", "c") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM "pgivm_triangles"."p_r" WHERE mult = 0;
        INSERT INTO "pgivm_triangles"."y_u" AS v ("c", mult)
        SELECT x_value, m * sum(f.mult * (SELECT g.mult FROM "pgivm_triangles"."r" g WHERE g."a" = f."a")) FROM "pgivm_triangles"."s" f
         WHERE f.b = b_value AND NOT f."ha"
        HAVING sum(f.mult * (SELECT g.mult FROM "pgivm_triangles"."r" g WHERE g."a" = f."a")) <> 0
            ON CONFLICT ("c") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM "pgivm_triangles"."y_u" WHERE mult = 0;
    END IF;
END;
$pgivm$;


-- MinorRebalancing on X: every tuple of the value moves to the other part (out of the old part's
-- views, into the new one's); the count does not change.
CREATE FUNCTION "pgivm_triangles"."move_t_c"(value integer, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    moved record;
BEGIN
    FOR moved IN SELECT b, mult, hb FROM "pgivm_triangles"."t" WHERE "c" = value LOOP
        PERFORM "pgivm_triangles"."views_t"(value, moved.b, -moved.mult, NOT to_heavy, moved.hb);
        PERFORM "pgivm_triangles"."views_t"(value, moved.b, moved.mult, to_heavy, moved.hb);
    END LOOP;
    UPDATE "pgivm_triangles"."t" SET "hc" = to_heavy WHERE "c" = value;
    UPDATE "pgivm_triangles"."t_c_degree" SET heavy = to_heavy WHERE "c" = value;
    UPDATE "pgivm_triangles"."state" SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;


-- MinorRebalancing on B: likewise, and z_E's indicator of the value follows its new part.
CREATE FUNCTION "pgivm_triangles"."move_t_b"(value integer, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    moved record;
BEGIN
    FOR moved IN SELECT "c" AS x_value, mult, "hc" AS hx FROM "pgivm_triangles"."t" WHERE b = value LOOP
        PERFORM "pgivm_triangles"."views_t"(moved.x_value, value, -moved.mult, moved.hx, NOT to_heavy);
        PERFORM "pgivm_triangles"."views_t"(moved.x_value, value, moved.mult, moved.hx, to_heavy);
    END LOOP;
    UPDATE "pgivm_triangles"."t" SET hb = to_heavy WHERE b = value;
    UPDATE "pgivm_triangles"."t_b_degree" SET heavy = to_heavy WHERE b = value;
    DELETE FROM "pgivm_triangles"."z_u" WHERE b = value;
    IF to_heavy AND NOT coalesce((SELECT d.heavy FROM "pgivm_triangles"."s_b_degree" d WHERE d.b = value), true) THEN
        INSERT INTO "pgivm_triangles"."z_u" (b, mult)
        SELECT value, sum(f.mult * (SELECT g.mult FROM "pgivm_triangles"."r" g WHERE g."a" = f."a")) FROM "pgivm_triangles"."s" f
         WHERE f.b = value AND f."ha"
        HAVING sum(f.mult * (SELECT g.mult FROM "pgivm_triangles"."r" g WHERE g."a" = f."a")) <> 0;
    END IF;
    UPDATE "pgivm_triangles"."state" SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;


-- A multi-row statement's net change of M, set at a time (as the Loomis-Whitney counts' batch): every
-- delta on the state before the batch, the tuples routed by their values' parts before it (a new
-- value light, heavy at epsilon = 0); Figure 16's rules read E, F and G only, so each view's delta is
-- a join of the batch with them. Then M, the degrees and |D|, then the invariants: a size-invariant
-- violation resets N with a major rebalancing, else every value of the batch that crossed a
-- threshold moves.
CREATE FUNCTION "pgivm_triangles"."apply_batch_t"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
SET random_page_cost = 1.1
AS $pgivm$
DECLARE
    st        "pgivm_triangles"."state"%ROWTYPE;
    delta_q   numeric;
    size_diff bigint;
    moving    record;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    WITH merged AS (DELETE FROM "pgivm_triangles"."t_delta" RETURNING "b", "c", mult)
    INSERT INTO "pgivm_triangles"."t_delta" ("b", "c", mult) SELECT "b", "c", sum(mult) FROM merged GROUP BY "b", "c" HAVING sum(mult) <> 0;
    UPDATE "pgivm_triangles"."t_delta" d
       SET hx = coalesce((SELECT g.heavy FROM "pgivm_triangles"."t_c_degree" g WHERE g."c" = d."c"), st.epsilon = 0),
           hb = coalesce((SELECT g.heavy FROM "pgivm_triangles"."t_b_degree" g WHERE g.b = d.b), st.epsilon = 0),
           new_mult = d.mult + coalesce((SELECT k.mult FROM "pgivm_triangles"."t" k WHERE k."c" = d."c" AND k.b = d.b), 0);
    ANALYZE "pgivm_triangles"."t_delta";

    -- delta Q = sum dM(x,b) E(x) (w_G(b) + sum_y F_lh(b,y) G(y)), F_lh read at B-values light in F.
    SELECT coalesce((SELECT sum(d.mult * e.mult * w.mult) FROM "pgivm_triangles"."t_delta" d JOIN "pgivm_triangles"."u" e ON e."c" = d."c"
                       JOIN "pgivm_triangles"."w_r" w ON w.b = d.b), 0)
         + coalesce((SELECT sum(d.mult * e.mult * f.mult * g.mult) FROM "pgivm_triangles"."t_delta" d JOIN "pgivm_triangles"."u" e ON e."c" = d."c"
                       JOIN "pgivm_triangles"."s" f ON f.b = d.b AND NOT f.hb AND f."ha" JOIN "pgivm_triangles"."r" g ON g."a" = f."a"), 0)
      INTO delta_q;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + delta_q::bigint;
    END IF;

    -- w_E(b) += dM E(x) but M_hl
    INSERT INTO "pgivm_triangles"."w_u" AS v (b, mult)
    SELECT d.b, sum(d.mult * e.mult) FROM "pgivm_triangles"."t_delta" d JOIN "pgivm_triangles"."u" e ON e."c" = d."c" WHERE NOT (d.hx AND NOT d.hb)
     GROUP BY d.b HAVING sum(d.mult * e.mult) <> 0
        ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."w_u" WHERE mult = 0;
    -- M_ll: p_E(x,y) += dM F_lh(b,y); y_G(y) += dM E(x) F_lh(b,y)   (F_lh: b light in F, y heavy)
    INSERT INTO "pgivm_triangles"."p_u" AS v ("c", "a", mult)
    SELECT d."c", f."a", sum(d.mult * f.mult) FROM "pgivm_triangles"."t_delta" d JOIN "pgivm_triangles"."s" f ON f.b = d.b AND NOT f.hb AND f."ha"
     WHERE NOT d.hx AND NOT d.hb
     GROUP BY d."c", f."a" HAVING sum(d.mult * f.mult) <> 0
        ON CONFLICT ("c", "a") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."p_u" WHERE mult = 0;
    INSERT INTO "pgivm_triangles"."y_r" AS v ("a", mult)
    SELECT f."a", sum(d.mult * e.mult * f.mult) FROM "pgivm_triangles"."t_delta" d JOIN "pgivm_triangles"."u" e ON e."c" = d."c"
      JOIN "pgivm_triangles"."s" f ON f.b = d.b AND NOT f.hb AND f."ha"
     WHERE NOT d.hx AND NOT d.hb
     GROUP BY f."a" HAVING sum(d.mult * e.mult * f.mult) <> 0
        ON CONFLICT ("a") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."y_r" WHERE mult = 0;
    -- M_hl: q(x,y) += dM F_lh(b,y); p_G(y,x) += dM F_ll(b,y); y_E(x) += dM sum_y F_ll(b,y) G(y);
    -- at a B-value heavy in F: z_G(b) += dM E(x)
    INSERT INTO "pgivm_triangles"."q" AS v ("c", "a", mult)
    SELECT d."c", f."a", sum(d.mult * f.mult) FROM "pgivm_triangles"."t_delta" d JOIN "pgivm_triangles"."s" f ON f.b = d.b AND NOT f.hb AND f."ha"
     WHERE d.hx AND NOT d.hb
     GROUP BY d."c", f."a" HAVING sum(d.mult * f.mult) <> 0
        ON CONFLICT ("c", "a") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."q" WHERE mult = 0;
    INSERT INTO "pgivm_triangles"."p_r" AS v ("a", "c", mult)
    SELECT f."a", d."c", sum(d.mult * f.mult) FROM "pgivm_triangles"."t_delta" d JOIN "pgivm_triangles"."s" f ON f.b = d.b AND NOT f.hb AND NOT f."ha"
     WHERE d.hx AND NOT d.hb
     GROUP BY f."a", d."c" HAVING sum(d.mult * f.mult) <> 0
        ON CONFLICT ("a", "c") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."p_r" WHERE mult = 0;
    INSERT INTO "pgivm_triangles"."y_u" AS v ("c", mult)
    SELECT d."c", sum(d.mult * f.mult * g.mult) FROM "pgivm_triangles"."t_delta" d JOIN "pgivm_triangles"."s" f ON f.b = d.b AND NOT f.hb AND NOT f."ha"
      JOIN "pgivm_triangles"."r" g ON g."a" = f."a"
     WHERE d.hx AND NOT d.hb
     GROUP BY d."c" HAVING sum(d.mult * f.mult * g.mult) <> 0
        ON CONFLICT ("c") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."y_u" WHERE mult = 0;
    INSERT INTO "pgivm_triangles"."z_r" AS v (b, mult)
    SELECT d.b, sum(d.mult * e.mult) FROM "pgivm_triangles"."t_delta" d JOIN "pgivm_triangles"."u" e ON e."c" = d."c"
      JOIN "pgivm_triangles"."s_b_degree" fd ON fd.b = d.b AND fd.heavy
     WHERE d.hx AND NOT d.hb
     GROUP BY d.b HAVING sum(d.mult * e.mult) <> 0
        ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."z_r" WHERE mult = 0;

    -- The batch into M: new tuples inserted, changed ones updated, vanished ones deleted.
    INSERT INTO "pgivm_triangles"."t" AS p ("c", b, mult, "hc", hb) SELECT "c", b, new_mult, hx, hb FROM "pgivm_triangles"."t_delta" WHERE new_mult <> 0
        ON CONFLICT ("c", b) DO UPDATE SET mult = EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."t" p USING "pgivm_triangles"."t_delta" d WHERE d.new_mult = 0 AND p."c" = d."c" AND p.b = d.b;

    -- Degrees and |D|: +1 per tuple that appeared, -1 per tuple that vanished.
    INSERT INTO "pgivm_triangles"."t_c_degree" AS g ("c", degree, heavy)
    SELECT "c", sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(hx)
      FROM "pgivm_triangles"."t_delta" WHERE new_mult = mult OR new_mult = 0 GROUP BY "c"
    ON CONFLICT ("c") DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM "pgivm_triangles"."t_c_degree" g USING "pgivm_triangles"."t_delta" d WHERE g."c" = d."c" AND g.degree = 0;
    INSERT INTO "pgivm_triangles"."t_b_degree" AS g (b, degree, heavy)
    SELECT b, sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(hb)
      FROM "pgivm_triangles"."t_delta" WHERE new_mult = mult OR new_mult = 0 GROUP BY b
    ON CONFLICT (b) DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM "pgivm_triangles"."z_u" z USING "pgivm_triangles"."t_delta" d WHERE z.b = d.b AND NOT EXISTS (SELECT FROM "pgivm_triangles"."t_b_degree" g WHERE g.b = d.b AND g.degree > 0);
    DELETE FROM "pgivm_triangles"."t_b_degree" g USING "pgivm_triangles"."t_delta" d WHERE g.b = d.b AND g.degree = 0;
    SELECT coalesce(sum(CASE WHEN new_mult = mult THEN 1 WHEN new_mult = 0 THEN -1 ELSE 0 END), 0)
      INTO size_diff FROM "pgivm_triangles"."t_delta";

    -- Restore the invariants.
    IF NOT "pgivm_triangles"."resize"(st.db_size + size_diff, st.n) THEN
        FOR moving IN
            SELECT g."c" AS value, NOT g.heavy AS to_heavy FROM "pgivm_triangles"."t_c_degree" g
             WHERE g."c" IN (SELECT "c" FROM "pgivm_triangles"."t_delta")
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM "pgivm_triangles"."move_t_c"(moving.value, moving.to_heavy);
        END LOOP;
        FOR moving IN
            SELECT g.b AS value, NOT g.heavy AS to_heavy FROM "pgivm_triangles"."t_b_degree" g
             WHERE g.b IN (SELECT b FROM "pgivm_triangles"."t_delta")
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM "pgivm_triangles"."move_t_b"(moving.value, moving.to_heavy);
        END LOOP;
    END IF;
    DELETE FROM "pgivm_triangles"."t_delta";
END;
$pgivm$;


-- M emptied after a TRUNCATE of its table (the caller restarts from what remains).
CREATE FUNCTION "pgivm_triangles"."clear_t"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."t";
    DELETE FROM "pgivm_triangles"."t_c_degree";
    DELETE FROM "pgivm_triangles"."t_b_degree";
END;
$pgivm$;

-- Change capture for one base table that feeds relations of the view (one relation, or several
-- for a self-join such as the graph form over one edge table). Rendered once per base table by the
-- systems that capture changes (ivme and first-order apply them at once: apply_K(columns, m) and
-- apply_batch_K()); the triggers that call these functions come from pgivm.capture.CaptureTrigger.
--
-- Statement-level triggers with transition tables: a statement's net change of each relation
-- (inserted rows +1, deleted rows -1, grouped by the join columns, NULL keys dropped since they
-- never join) goes to R, then S, then T, each applied on the state left by the previous one,
-- which is exactly the delta of the (self-)join count. An UPDATE that leaves the join columns
-- alone nets to nothing. The sink then takes the net change of each atom (see pgivm.capture.SINKS).
-- A base column is read only qualified (new_rows.col) and renamed at once: the net change names it
-- after its relation's variable (a, b, c) or its place in its atom (c1, c2, ...), never after
-- itself, so a base column called like a variable below (changed_rows, change) or like a column of
-- pgivm's own (m, mult) is just a column.
--
-- These are the only entry points: SECURITY DEFINER so that writers of the base table need no
-- privileges on the state. None of them looks a base table up by name: they read the trigger's
-- transition tables and pgivm's own state, so renaming a base table, or putting another object
-- under its old name, changes nothing here. Every function has a fixed search_path.

-- Before it touches a row, every writing statement has taken the writers' locks of the base tables
-- of every immediate view over its table, in one order (pgivm_catalog.lock_writes, the BEFORE
-- statement trigger): writers of one view queue there instead of deadlocking on each other's
-- base-table rows, and views over shared tables queue on the same rows.

CREATE FUNCTION "pgivm_triangles"."on_change_r"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
-- A disabled plan node carries a huge cost (PostgreSQL <= 15), which would trigger JIT compilation
-- of every statement: milliseconds spent compiling a one-row lookup.
SET jit = off
-- The single-tuple statements have one good plan whatever the values; without this PL/pgSQL may
-- keep planning some of them anew on every call. (The batch functions re-plan after ANALYZE.)
SET plan_cache_mode = force_generic_plan
AS $pgivm$
DECLARE
    changed_rows bigint;
    change       record;
    still_open   integer;  -- first-order: this statement's writes not yet done (see 45_statements.sql)
BEGIN
    -- the rows the statement changed, counted into the state row (which also serializes writers)
    IF TG_OP = 'DELETE' THEN
        UPDATE "pgivm_triangles"."state" SET updates_applied = updates_applied + c.n
          FROM (SELECT count(*) AS n FROM old_rows) AS c WHERE singleton RETURNING c.n INTO changed_rows;
    ELSE
        UPDATE "pgivm_triangles"."state" SET updates_applied = updates_applied + c.n
          FROM (SELECT count(*) AS n FROM new_rows) AS c WHERE singleton RETURNING c.n INTO changed_rows;
    END IF;
    IF NOT FOUND THEN
        -- The state row is missing only from a snapshot taken before the view was created
        -- (REPEATABLE READ or SERIALIZABLE): maintaining it from there would lose this change.
        -- (A snapshot that predates another writer's update of the row fails above, 40001.)
        RAISE EXCEPTION USING
            ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'triangles'),
            HINT = 'Retry the transaction.';
    END IF;
    IF TG_OP = 'INSERT' THEN
        -- R
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."a", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL) AS changes GROUP BY changes."a" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_r"(change."a", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."r_delta" ("a", mult) SELECT changes."a", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL) AS changes GROUP BY changes."a" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_r"();
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        -- R
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."a", sum(changes.m)::bigint AS m FROM (SELECT old_rows."a" AS "a", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL) AS changes GROUP BY changes."a" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_r"(change."a", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."r_delta" ("a", mult) SELECT changes."a", sum(changes.m)::bigint AS m FROM (SELECT old_rows."a" AS "a", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL) AS changes GROUP BY changes."a" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_r"();
        END IF;
    ELSE
        -- R
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."a", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL UNION ALL SELECT old_rows."a" AS "a", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL) AS changes GROUP BY changes."a" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_r"(change."a", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."r_delta" ("a", mult) SELECT changes."a", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL UNION ALL SELECT old_rows."a" AS "a", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL) AS changes GROUP BY changes."a" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_r"();
        END IF;
    END IF;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_change_r"() IS 'pgivm view triangles: maintain the IVMε state for changes of public.r as R';

-- TRUNCATE of a partition (or of a partitioned table, which fires this on every partition) takes
-- only that partition's rows away: read them just before they go and hand them to the sink as a
-- deletion, set at a time (with the log sink, a TRUNCATE of a plain table goes this way too). The partition is found by the trigger's oid (TG_RELID), named from the oid at
-- this moment, and the query names its tableoid column, so it cannot run anything but a read of
-- that table; row_security = off makes a policy an error instead of code that runs here.
CREATE FUNCTION "pgivm_triangles"."on_truncate_rows_r"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
SET jit = off
AS $pgivm$
BEGIN
    UPDATE "pgivm_triangles"."state" SET updates_applied = updates_applied + 1 WHERE singleton;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'triangles'),
            HINT = 'Retry the transaction.';
    END IF;
    -- R
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_triangles"."r_delta" ("a", mult) SELECT base."a", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."a" IS NOT NULL GROUP BY 1', TG_RELID::pg_catalog.regclass, TG_RELID);
    PERFORM "pgivm_triangles"."apply_batch_r"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_truncate_rows_r"() IS 'pgivm view triangles: before TRUNCATE of public.r or a partition of it, take its rows away as a deletion';

-- With the apply sink, TRUNCATE of a plain table empties every relation it feeds: clear them and
-- restart (N, the partition and the views from the remaining relations). Nothing needs to be read.
CREATE FUNCTION "pgivm_triangles"."on_truncate_r"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $pgivm$
BEGIN
    UPDATE "pgivm_triangles"."state" SET updates_applied = updates_applied + 1 WHERE singleton;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'triangles'),
            HINT = 'Retry the transaction.';
    END IF;
    PERFORM "pgivm_triangles"."clear_r"();
    PERFORM "pgivm_triangles"."restart"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_truncate_r"() IS 'pgivm view triangles: clear the IVMε state of public.r as R after TRUNCATE';

-- Change capture for one base table that feeds relations of the view (one relation, or several
-- for a self-join such as the graph form over one edge table). Rendered once per base table by the
-- systems that capture changes (ivme and first-order apply them at once: apply_K(columns, m) and
-- apply_batch_K()); the triggers that call these functions come from pgivm.capture.CaptureTrigger.
--
-- Statement-level triggers with transition tables: a statement's net change of each relation
-- (inserted rows +1, deleted rows -1, grouped by the join columns, NULL keys dropped since they
-- never join) goes to R, then S, then T, each applied on the state left by the previous one,
-- which is exactly the delta of the (self-)join count. An UPDATE that leaves the join columns
-- alone nets to nothing. The sink then takes the net change of each atom (see pgivm.capture.SINKS).
-- A base column is read only qualified (new_rows.col) and renamed at once: the net change names it
-- after its relation's variable (a, b, c) or its place in its atom (c1, c2, ...), never after
-- itself, so a base column called like a variable below (changed_rows, change) or like a column of
-- pgivm's own (m, mult) is just a column.
--
-- These are the only entry points: SECURITY DEFINER so that writers of the base table need no
-- privileges on the state. None of them looks a base table up by name: they read the trigger's
-- transition tables and pgivm's own state, so renaming a base table, or putting another object
-- under its old name, changes nothing here. Every function has a fixed search_path.

-- Before it touches a row, every writing statement has taken the writers' locks of the base tables
-- of every immediate view over its table, in one order (pgivm_catalog.lock_writes, the BEFORE
-- statement trigger): writers of one view queue there instead of deadlocking on each other's
-- base-table rows, and views over shared tables queue on the same rows.

CREATE FUNCTION "pgivm_triangles"."on_change_s"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
-- A disabled plan node carries a huge cost (PostgreSQL <= 15), which would trigger JIT compilation
-- of every statement: milliseconds spent compiling a one-row lookup.
SET jit = off
-- The single-tuple statements have one good plan whatever the values; without this PL/pgSQL may
-- keep planning some of them anew on every call. (The batch functions re-plan after ANALYZE.)
SET plan_cache_mode = force_generic_plan
AS $pgivm$
DECLARE
    changed_rows bigint;
    change       record;
    still_open   integer;  -- first-order: this statement's writes not yet done (see 45_statements.sql)
BEGIN
    -- the rows the statement changed, counted into the state row (which also serializes writers)
    IF TG_OP = 'DELETE' THEN
        UPDATE "pgivm_triangles"."state" SET updates_applied = updates_applied + c.n
          FROM (SELECT count(*) AS n FROM old_rows) AS c WHERE singleton RETURNING c.n INTO changed_rows;
    ELSE
        UPDATE "pgivm_triangles"."state" SET updates_applied = updates_applied + c.n
          FROM (SELECT count(*) AS n FROM new_rows) AS c WHERE singleton RETURNING c.n INTO changed_rows;
    END IF;
    IF NOT FOUND THEN
        -- The state row is missing only from a snapshot taken before the view was created
        -- (REPEATABLE READ or SERIALIZABLE): maintaining it from there would lose this change.
        -- (A snapshot that predates another writer's update of the row fails above, 40001.)
        RAISE EXCEPTION USING
            ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'triangles'),
            HINT = 'Retry the transaction.';
    END IF;
    IF TG_OP = 'INSERT' THEN
        -- S
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."a", changes."b", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", new_rows."b" AS "b", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL AND new_rows."b" IS NOT NULL) AS changes GROUP BY changes."a", changes."b" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_s"(change."a", change."b", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."s_delta" ("a", "b", mult) SELECT changes."a", changes."b", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", new_rows."b" AS "b", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL AND new_rows."b" IS NOT NULL) AS changes GROUP BY changes."a", changes."b" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_s"();
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        -- S
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."a", changes."b", sum(changes.m)::bigint AS m FROM (SELECT old_rows."a" AS "a", old_rows."b" AS "b", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL AND old_rows."b" IS NOT NULL) AS changes GROUP BY changes."a", changes."b" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_s"(change."a", change."b", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."s_delta" ("a", "b", mult) SELECT changes."a", changes."b", sum(changes.m)::bigint AS m FROM (SELECT old_rows."a" AS "a", old_rows."b" AS "b", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL AND old_rows."b" IS NOT NULL) AS changes GROUP BY changes."a", changes."b" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_s"();
        END IF;
    ELSE
        -- S
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."a", changes."b", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", new_rows."b" AS "b", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL AND new_rows."b" IS NOT NULL UNION ALL SELECT old_rows."a" AS "a", old_rows."b" AS "b", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL AND old_rows."b" IS NOT NULL) AS changes GROUP BY changes."a", changes."b" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_s"(change."a", change."b", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."s_delta" ("a", "b", mult) SELECT changes."a", changes."b", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", new_rows."b" AS "b", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL AND new_rows."b" IS NOT NULL UNION ALL SELECT old_rows."a" AS "a", old_rows."b" AS "b", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL AND old_rows."b" IS NOT NULL) AS changes GROUP BY changes."a", changes."b" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_s"();
        END IF;
    END IF;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_change_s"() IS 'pgivm view triangles: maintain the IVMε state for changes of public.s as S';

-- TRUNCATE of a partition (or of a partitioned table, which fires this on every partition) takes
-- only that partition's rows away: read them just before they go and hand them to the sink as a
-- deletion, set at a time (with the log sink, a TRUNCATE of a plain table goes this way too). The partition is found by the trigger's oid (TG_RELID), named from the oid at
-- this moment, and the query names its tableoid column, so it cannot run anything but a read of
-- that table; row_security = off makes a policy an error instead of code that runs here.
CREATE FUNCTION "pgivm_triangles"."on_truncate_rows_s"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
SET jit = off
AS $pgivm$
BEGIN
    UPDATE "pgivm_triangles"."state" SET updates_applied = updates_applied + 1 WHERE singleton;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'triangles'),
            HINT = 'Retry the transaction.';
    END IF;
    -- S
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_triangles"."s_delta" ("a", "b", mult) SELECT base."a", base."b", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."a" IS NOT NULL AND base."b" IS NOT NULL GROUP BY 1, 2', TG_RELID::pg_catalog.regclass, TG_RELID);
    PERFORM "pgivm_triangles"."apply_batch_s"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_truncate_rows_s"() IS 'pgivm view triangles: before TRUNCATE of public.s or a partition of it, take its rows away as a deletion';

-- With the apply sink, TRUNCATE of a plain table empties every relation it feeds: clear them and
-- restart (N, the partition and the views from the remaining relations). Nothing needs to be read.
CREATE FUNCTION "pgivm_triangles"."on_truncate_s"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $pgivm$
BEGIN
    UPDATE "pgivm_triangles"."state" SET updates_applied = updates_applied + 1 WHERE singleton;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'triangles'),
            HINT = 'Retry the transaction.';
    END IF;
    PERFORM "pgivm_triangles"."clear_s"();
    PERFORM "pgivm_triangles"."restart"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_truncate_s"() IS 'pgivm view triangles: clear the IVMε state of public.s as S after TRUNCATE';

-- Change capture for one base table that feeds relations of the view (one relation, or several
-- for a self-join such as the graph form over one edge table). Rendered once per base table by the
-- systems that capture changes (ivme and first-order apply them at once: apply_K(columns, m) and
-- apply_batch_K()); the triggers that call these functions come from pgivm.capture.CaptureTrigger.
--
-- Statement-level triggers with transition tables: a statement's net change of each relation
-- (inserted rows +1, deleted rows -1, grouped by the join columns, NULL keys dropped since they
-- never join) goes to R, then S, then T, each applied on the state left by the previous one,
-- which is exactly the delta of the (self-)join count. An UPDATE that leaves the join columns
-- alone nets to nothing. The sink then takes the net change of each atom (see pgivm.capture.SINKS).
-- A base column is read only qualified (new_rows.col) and renamed at once: the net change names it
-- after its relation's variable (a, b, c) or its place in its atom (c1, c2, ...), never after
-- itself, so a base column called like a variable below (changed_rows, change) or like a column of
-- pgivm's own (m, mult) is just a column.
--
-- These are the only entry points: SECURITY DEFINER so that writers of the base table need no
-- privileges on the state. None of them looks a base table up by name: they read the trigger's
-- transition tables and pgivm's own state, so renaming a base table, or putting another object
-- under its old name, changes nothing here. Every function has a fixed search_path.

-- Before it touches a row, every writing statement has taken the writers' locks of the base tables
-- of every immediate view over its table, in one order (pgivm_catalog.lock_writes, the BEFORE
-- statement trigger): writers of one view queue there instead of deadlocking on each other's
-- base-table rows, and views over shared tables queue on the same rows.

CREATE FUNCTION "pgivm_triangles"."on_change_t"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
-- A disabled plan node carries a huge cost (PostgreSQL <= 15), which would trigger JIT compilation
-- of every statement: milliseconds spent compiling a one-row lookup.
SET jit = off
-- The single-tuple statements have one good plan whatever the values; without this PL/pgSQL may
-- keep planning some of them anew on every call. (The batch functions re-plan after ANALYZE.)
SET plan_cache_mode = force_generic_plan
AS $pgivm$
DECLARE
    changed_rows bigint;
    change       record;
    still_open   integer;  -- first-order: this statement's writes not yet done (see 45_statements.sql)
BEGIN
    -- the rows the statement changed, counted into the state row (which also serializes writers)
    IF TG_OP = 'DELETE' THEN
        UPDATE "pgivm_triangles"."state" SET updates_applied = updates_applied + c.n
          FROM (SELECT count(*) AS n FROM old_rows) AS c WHERE singleton RETURNING c.n INTO changed_rows;
    ELSE
        UPDATE "pgivm_triangles"."state" SET updates_applied = updates_applied + c.n
          FROM (SELECT count(*) AS n FROM new_rows) AS c WHERE singleton RETURNING c.n INTO changed_rows;
    END IF;
    IF NOT FOUND THEN
        -- The state row is missing only from a snapshot taken before the view was created
        -- (REPEATABLE READ or SERIALIZABLE): maintaining it from there would lose this change.
        -- (A snapshot that predates another writer's update of the row fails above, 40001.)
        RAISE EXCEPTION USING
            ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'triangles'),
            HINT = 'Retry the transaction.';
    END IF;
    IF TG_OP = 'INSERT' THEN
        -- T
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."b" AS "b", new_rows."c" AS "c", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL AND new_rows."c" IS NOT NULL) AS changes GROUP BY changes."b", changes."c" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_t"(change."b", change."c", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."t_delta" ("b", "c", mult) SELECT changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."b" AS "b", new_rows."c" AS "c", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL AND new_rows."c" IS NOT NULL) AS changes GROUP BY changes."b", changes."c" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_t"();
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        -- T
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT old_rows."b" AS "b", old_rows."c" AS "c", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL AND old_rows."c" IS NOT NULL) AS changes GROUP BY changes."b", changes."c" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_t"(change."b", change."c", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."t_delta" ("b", "c", mult) SELECT changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT old_rows."b" AS "b", old_rows."c" AS "c", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL AND old_rows."c" IS NOT NULL) AS changes GROUP BY changes."b", changes."c" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_t"();
        END IF;
    ELSE
        -- T
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."b" AS "b", new_rows."c" AS "c", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL AND new_rows."c" IS NOT NULL UNION ALL SELECT old_rows."b" AS "b", old_rows."c" AS "c", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL AND old_rows."c" IS NOT NULL) AS changes GROUP BY changes."b", changes."c" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_t"(change."b", change."c", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."t_delta" ("b", "c", mult) SELECT changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."b" AS "b", new_rows."c" AS "c", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL AND new_rows."c" IS NOT NULL UNION ALL SELECT old_rows."b" AS "b", old_rows."c" AS "c", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL AND old_rows."c" IS NOT NULL) AS changes GROUP BY changes."b", changes."c" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_t"();
        END IF;
    END IF;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_change_t"() IS 'pgivm view triangles: maintain the IVMε state for changes of public.t as T';

-- TRUNCATE of a partition (or of a partitioned table, which fires this on every partition) takes
-- only that partition's rows away: read them just before they go and hand them to the sink as a
-- deletion, set at a time (with the log sink, a TRUNCATE of a plain table goes this way too). The partition is found by the trigger's oid (TG_RELID), named from the oid at
-- this moment, and the query names its tableoid column, so it cannot run anything but a read of
-- that table; row_security = off makes a policy an error instead of code that runs here.
CREATE FUNCTION "pgivm_triangles"."on_truncate_rows_t"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
SET jit = off
AS $pgivm$
BEGIN
    UPDATE "pgivm_triangles"."state" SET updates_applied = updates_applied + 1 WHERE singleton;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'triangles'),
            HINT = 'Retry the transaction.';
    END IF;
    -- T
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_triangles"."t_delta" ("b", "c", mult) SELECT base."b", base."c", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."b" IS NOT NULL AND base."c" IS NOT NULL GROUP BY 1, 2', TG_RELID::pg_catalog.regclass, TG_RELID);
    PERFORM "pgivm_triangles"."apply_batch_t"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_truncate_rows_t"() IS 'pgivm view triangles: before TRUNCATE of public.t or a partition of it, take its rows away as a deletion';

-- With the apply sink, TRUNCATE of a plain table empties every relation it feeds: clear them and
-- restart (N, the partition and the views from the remaining relations). Nothing needs to be read.
CREATE FUNCTION "pgivm_triangles"."on_truncate_t"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $pgivm$
BEGIN
    UPDATE "pgivm_triangles"."state" SET updates_applied = updates_applied + 1 WHERE singleton;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'triangles'),
            HINT = 'Retry the transaction.';
    END IF;
    PERFORM "pgivm_triangles"."clear_t"();
    PERFORM "pgivm_triangles"."restart"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_truncate_t"() IS 'pgivm view triangles: clear the IVMε state of public.t as T after TRUNCATE';

-- Change capture for one base table that feeds relations of the view (one relation, or several
-- for a self-join such as the graph form over one edge table). Rendered once per base table by the
-- systems that capture changes (ivme and first-order apply them at once: apply_K(columns, m) and
-- apply_batch_K()); the triggers that call these functions come from pgivm.capture.CaptureTrigger.
--
-- Statement-level triggers with transition tables: a statement's net change of each relation
-- (inserted rows +1, deleted rows -1, grouped by the join columns, NULL keys dropped since they
-- never join) goes to R, then S, then T, each applied on the state left by the previous one,
-- which is exactly the delta of the (self-)join count. An UPDATE that leaves the join columns
-- alone nets to nothing. The sink then takes the net change of each atom (see pgivm.capture.SINKS).
-- A base column is read only qualified (new_rows.col) and renamed at once: the net change names it
-- after its relation's variable (a, b, c) or its place in its atom (c1, c2, ...), never after
-- itself, so a base column called like a variable below (changed_rows, change) or like a column of
-- pgivm's own (m, mult) is just a column.
--
-- These are the only entry points: SECURITY DEFINER so that writers of the base table need no
-- privileges on the state. None of them looks a base table up by name: they read the trigger's
-- transition tables and pgivm's own state, so renaming a base table, or putting another object
-- under its old name, changes nothing here. Every function has a fixed search_path.

-- Before it touches a row, every writing statement has taken the writers' locks of the base tables
-- of every immediate view over its table, in one order (pgivm_catalog.lock_writes, the BEFORE
-- statement trigger): writers of one view queue there instead of deadlocking on each other's
-- base-table rows, and views over shared tables queue on the same rows.

CREATE FUNCTION "pgivm_triangles"."on_change_u"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
-- A disabled plan node carries a huge cost (PostgreSQL <= 15), which would trigger JIT compilation
-- of every statement: milliseconds spent compiling a one-row lookup.
SET jit = off
-- The single-tuple statements have one good plan whatever the values; without this PL/pgSQL may
-- keep planning some of them anew on every call. (The batch functions re-plan after ANALYZE.)
SET plan_cache_mode = force_generic_plan
AS $pgivm$
DECLARE
    changed_rows bigint;
    change       record;
    still_open   integer;  -- first-order: this statement's writes not yet done (see 45_statements.sql)
BEGIN
    -- the rows the statement changed, counted into the state row (which also serializes writers)
    IF TG_OP = 'DELETE' THEN
        UPDATE "pgivm_triangles"."state" SET updates_applied = updates_applied + c.n
          FROM (SELECT count(*) AS n FROM old_rows) AS c WHERE singleton RETURNING c.n INTO changed_rows;
    ELSE
        UPDATE "pgivm_triangles"."state" SET updates_applied = updates_applied + c.n
          FROM (SELECT count(*) AS n FROM new_rows) AS c WHERE singleton RETURNING c.n INTO changed_rows;
    END IF;
    IF NOT FOUND THEN
        -- The state row is missing only from a snapshot taken before the view was created
        -- (REPEATABLE READ or SERIALIZABLE): maintaining it from there would lose this change.
        -- (A snapshot that predates another writer's update of the row fails above, 40001.)
        RAISE EXCEPTION USING
            ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'triangles'),
            HINT = 'Retry the transaction.';
    END IF;
    IF TG_OP = 'INSERT' THEN
        -- U
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."c" AS "c", 1 AS m FROM new_rows WHERE new_rows."c" IS NOT NULL) AS changes GROUP BY changes."c" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_u"(change."c", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."u_delta" ("c", mult) SELECT changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."c" AS "c", 1 AS m FROM new_rows WHERE new_rows."c" IS NOT NULL) AS changes GROUP BY changes."c" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_u"();
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        -- U
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."c", sum(changes.m)::bigint AS m FROM (SELECT old_rows."c" AS "c", -1 AS m FROM old_rows WHERE old_rows."c" IS NOT NULL) AS changes GROUP BY changes."c" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_u"(change."c", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."u_delta" ("c", mult) SELECT changes."c", sum(changes.m)::bigint AS m FROM (SELECT old_rows."c" AS "c", -1 AS m FROM old_rows WHERE old_rows."c" IS NOT NULL) AS changes GROUP BY changes."c" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_u"();
        END IF;
    ELSE
        -- U
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."c" AS "c", 1 AS m FROM new_rows WHERE new_rows."c" IS NOT NULL UNION ALL SELECT old_rows."c" AS "c", -1 AS m FROM old_rows WHERE old_rows."c" IS NOT NULL) AS changes GROUP BY changes."c" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_u"(change."c", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."u_delta" ("c", mult) SELECT changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."c" AS "c", 1 AS m FROM new_rows WHERE new_rows."c" IS NOT NULL UNION ALL SELECT old_rows."c" AS "c", -1 AS m FROM old_rows WHERE old_rows."c" IS NOT NULL) AS changes GROUP BY changes."c" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_u"();
        END IF;
    END IF;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_change_u"() IS 'pgivm view triangles: maintain the IVMε state for changes of public.u as U';

-- TRUNCATE of a partition (or of a partitioned table, which fires this on every partition) takes
-- only that partition's rows away: read them just before they go and hand them to the sink as a
-- deletion, set at a time (with the log sink, a TRUNCATE of a plain table goes this way too). The partition is found by the trigger's oid (TG_RELID), named from the oid at
-- this moment, and the query names its tableoid column, so it cannot run anything but a read of
-- that table; row_security = off makes a policy an error instead of code that runs here.
CREATE FUNCTION "pgivm_triangles"."on_truncate_rows_u"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
SET jit = off
AS $pgivm$
BEGIN
    UPDATE "pgivm_triangles"."state" SET updates_applied = updates_applied + 1 WHERE singleton;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'triangles'),
            HINT = 'Retry the transaction.';
    END IF;
    -- U
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_triangles"."u_delta" ("c", mult) SELECT base."c", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."c" IS NOT NULL GROUP BY 1', TG_RELID::pg_catalog.regclass, TG_RELID);
    PERFORM "pgivm_triangles"."apply_batch_u"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_truncate_rows_u"() IS 'pgivm view triangles: before TRUNCATE of public.u or a partition of it, take its rows away as a deletion';

-- With the apply sink, TRUNCATE of a plain table empties every relation it feeds: clear them and
-- restart (N, the partition and the views from the remaining relations). Nothing needs to be read.
CREATE FUNCTION "pgivm_triangles"."on_truncate_u"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $pgivm$
BEGIN
    UPDATE "pgivm_triangles"."state" SET updates_applied = updates_applied + 1 WHERE singleton;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'triangles'),
            HINT = 'Retry the transaction.';
    END IF;
    PERFORM "pgivm_triangles"."clear_u"();
    PERFORM "pgivm_triangles"."restart"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_truncate_u"() IS 'pgivm view triangles: clear the IVMε state of public.u as U after TRUNCATE';

-- phase: build (2 statements)

INSERT INTO "pgivm_triangles"."r" ("a", mult) SELECT base."a", count(*) AS mult FROM "public"."r" base WHERE "base".tableoid = 16384::pg_catalog.oid AND base."a" IS NOT NULL GROUP BY 1;
INSERT INTO "pgivm_triangles"."u" ("c", mult) SELECT base."c", count(*) AS mult FROM "public"."u" base WHERE "base".tableoid = 16387::pg_catalog.oid AND base."c" IS NOT NULL GROUP BY 1;
WITH "agg_s" ("a", "b", mult) AS MATERIALIZED (SELECT base."a", base."b", count(*) AS mult FROM "public"."s" base WHERE "base".tableoid = 16385::pg_catalog.oid AND base."a" IS NOT NULL AND base."b" IS NOT NULL GROUP BY 1, 2),
     "agg_t" ("b", "c", mult) AS MATERIALIZED (SELECT base."b", base."c", count(*) AS mult FROM "public"."t" base WHERE "base".tableoid = 16386::pg_catalog.oid AND base."b" IS NOT NULL AND base."c" IS NOT NULL GROUP BY 1, 2),
     th AS (SELECT power((2 * ((SELECT count(*) FROM "agg_s") + (SELECT count(*) FROM "agg_t") + (SELECT count(*) FROM "pgivm_triangles"."r") + (SELECT count(*) FROM "pgivm_triangles"."u")) + 1)::float8, st.epsilon) AS theta, st.epsilon = 0 AS all_heavy FROM "pgivm_triangles"."state" st),
     "load_s" AS (INSERT INTO "pgivm_triangles"."s" ("a", "b", mult, "ha", "hb") SELECT k."a", k."b", k.mult, count(*) OVER (PARTITION BY k."a") >= th.theta OR th.all_heavy, count(*) OVER (PARTITION BY k."b") >= th.theta OR th.all_heavy FROM "agg_s" k, th),
     "load_t" AS (INSERT INTO "pgivm_triangles"."t" ("b", "c", mult, "hb", "hc") SELECT k."b", k."c", k.mult, count(*) OVER (PARTITION BY k."b") >= th.theta OR th.all_heavy, count(*) OVER (PARTITION BY k."c") >= th.theta OR th.all_heavy FROM "agg_t" k, th) SELECT 1;
INSERT INTO "pgivm_triangles"."s_a_degree" ("a", degree, heavy) SELECT "a", count(*), bool_or("ha") FROM "pgivm_triangles"."s" GROUP BY "a";
INSERT INTO "pgivm_triangles"."s_b_degree" ("b", degree, heavy) SELECT "b", count(*), bool_or("hb") FROM "pgivm_triangles"."s" GROUP BY "b";
INSERT INTO "pgivm_triangles"."t_b_degree" ("b", degree, heavy) SELECT "b", count(*), bool_or("hb") FROM "pgivm_triangles"."t" GROUP BY "b";
INSERT INTO "pgivm_triangles"."t_c_degree" ("c", degree, heavy) SELECT "c", count(*), bool_or("hc") FROM "pgivm_triangles"."t" GROUP BY "c";
SELECT "pgivm_triangles"."restart"();

ANALYZE "pgivm_triangles"."r"; ANALYZE "pgivm_triangles"."s"; ANALYZE "pgivm_triangles"."t"; ANALYZE "pgivm_triangles"."u"; ANALYZE "pgivm_triangles"."s_a_degree"; ANALYZE "pgivm_triangles"."s_b_degree"; ANALYZE "pgivm_triangles"."t_b_degree"; ANALYZE "pgivm_triangles"."t_c_degree"; ANALYZE "pgivm_triangles"."w_r"; ANALYZE "pgivm_triangles"."w_u"; ANALYZE "pgivm_triangles"."p_r"; ANALYZE "pgivm_triangles"."p_u"; ANALYZE "pgivm_triangles"."q"; ANALYZE "pgivm_triangles"."z_r"; ANALYZE "pgivm_triangles"."z_u"; ANALYZE "pgivm_triangles"."y_r"; ANALYZE "pgivm_triangles"."y_u";

-- phase: capture (20 statements)

CREATE TRIGGER "pgivm_triangles_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "public"."r" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_triangles_insert" AFTER INSERT ON "public"."r" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_r"();

CREATE TRIGGER "pgivm_triangles_delete" AFTER DELETE ON "public"."r" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_r"();

CREATE TRIGGER "pgivm_triangles_update" AFTER UPDATE ON "public"."r" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_r"();

CREATE TRIGGER "pgivm_triangles_truncate" AFTER TRUNCATE ON "public"."r" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_truncate_r"();

CREATE TRIGGER "pgivm_triangles_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "public"."s" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_triangles_insert" AFTER INSERT ON "public"."s" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_s"();

CREATE TRIGGER "pgivm_triangles_delete" AFTER DELETE ON "public"."s" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_s"();

CREATE TRIGGER "pgivm_triangles_update" AFTER UPDATE ON "public"."s" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_s"();

CREATE TRIGGER "pgivm_triangles_truncate" AFTER TRUNCATE ON "public"."s" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_truncate_s"();

CREATE TRIGGER "pgivm_triangles_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "public"."t" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_triangles_insert" AFTER INSERT ON "public"."t" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_t"();

CREATE TRIGGER "pgivm_triangles_delete" AFTER DELETE ON "public"."t" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_t"();

CREATE TRIGGER "pgivm_triangles_update" AFTER UPDATE ON "public"."t" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_t"();

CREATE TRIGGER "pgivm_triangles_truncate" AFTER TRUNCATE ON "public"."t" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_truncate_t"();

CREATE TRIGGER "pgivm_triangles_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "public"."u" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_triangles_insert" AFTER INSERT ON "public"."u" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_u"();

CREATE TRIGGER "pgivm_triangles_delete" AFTER DELETE ON "public"."u" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_u"();

CREATE TRIGGER "pgivm_triangles_update" AFTER UPDATE ON "public"."u" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_u"();

CREATE TRIGGER "pgivm_triangles_truncate" AFTER TRUNCATE ON "public"."u" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_truncate_u"();

-- phase: expose (2 statements)

CREATE OR REPLACE VIEW "public"."triangles" AS SELECT count AS "count" FROM "pgivm_triangles"."result"; COMMENT ON VIEW "public"."triangles" IS 'pgivm: maintained by IVMε, state in schema pgivm_triangles. Definition: SELECT count(*) FROM r JOIN s ON r.a = s.a JOIN t ON s.b = t.b JOIN u ON t.c = u.c';

REVOKE ALL ON ALL TABLES IN SCHEMA "pgivm_triangles" FROM PUBLIC; REVOKE ALL ON ALL FUNCTIONS IN SCHEMA "pgivm_triangles" FROM PUBLIC;
