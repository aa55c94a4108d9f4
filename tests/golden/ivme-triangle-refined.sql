-- pgivm golden install plan: system ivme, case triangle-refined, options {'epsilon': 0.5, 'partitions': 'refined', 'batch_threshold': 384}
-- view public.triangles AS SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a
-- regenerate: PGIVM_REGENERATE_GOLDEN=1 python -m pytest tests/systems/test_golden_plans.py

-- phase: state (5 statements)

-- IVMε state shared by the whole view: the maintained count and the threshold bookkeeping.
-- Rendered once per view. Placeholders are quoted identifiers and literals filled in by
-- pgivm.systems.ivme; every name is schema-qualified.

-- (the schema itself: pgivm_catalog.create_state_schema, as the view's owner)
COMMENT ON SCHEMA "pgivm_triangles" IS 'pgivm state of view triangles (strategy ivme, refined partitions): SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a';

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

-- The state of one relation K(X,Y) of the cycle R(A,B) -> S(B,C) -> T(C,A) under refined partitions
-- (Kara et al., long version, Appendix D): K partitioned on both of its variables. Rendered three
-- times by rotation (K = R, S, T; L the next relation, M the previous one).
--
--   K             one row per distinct tuple with its multiplicity and its part, two flags: h1, the
--                 X-value's part (heavy: degree in K on X >= theta/2; >= theta right after a major
--                 rebalancing), h2, the Y-value's (Definition 17: each judged by its degree in all of K)
--   K_x_degree    per X-value: its degree in K (distinct tuples) and its part; K_y_degree likewise
--   V_KL          V_KL(X,Z) = sum_Y K_hl(X,Y) * L_lh(Y,Z): light on the variable joined away, heavy on
--                 both it keeps (Figure 8), so at most 2 N^(1-eps) * 2 N^(1-eps) and N * 3/2 N^eps rows
CREATE TABLE "pgivm_triangles"."r" (
    "a"  integer NOT NULL,
    "b"  integer NOT NULL,
    mult bigint NOT NULL,
    h1   boolean NOT NULL,
    h2   boolean NOT NULL,
    PRIMARY KEY ("a", "b") INCLUDE (mult, h2)
);
CREATE INDEX ON "pgivm_triangles"."r" ("b", "a") INCLUDE (mult, h1);
-- K's tuples at one X-value whose Y-value is heavy (fewer than 2 N^(1-eps) of them), and at one
-- Y-value whose X-value is heavy: the loops of an update whose other two values are both heavy.
CREATE INDEX ON "pgivm_triangles"."r" ("a", "b") INCLUDE (mult) WHERE h2;
CREATE INDEX ON "pgivm_triangles"."r" ("b", "a") INCLUDE (mult) WHERE h1;
COMMENT ON TABLE "pgivm_triangles"."r" IS 'IVMε (refined partitions): R(A,B), partitioned on both variables';

CREATE TABLE "pgivm_triangles"."r_a_degree" ("a" integer PRIMARY KEY, degree bigint NOT NULL, heavy boolean NOT NULL);
CREATE TABLE "pgivm_triangles"."r_b_degree" ("b" integer PRIMARY KEY, degree bigint NOT NULL, heavy boolean NOT NULL);

CREATE TABLE "pgivm_triangles"."v_rs" (
    "a"  integer NOT NULL,
    "c"  integer NOT NULL,
    mult bigint NOT NULL,
    PRIMARY KEY ("a", "c") INCLUDE (mult)
);
CREATE INDEX ON "pgivm_triangles"."v_rs" (mult) WHERE mult = 0;  -- entries an upsert brings to 0, deleted at once
COMMENT ON TABLE "pgivm_triangles"."v_rs" IS 'IVMε (refined partitions) view V_RS = R_hl * S_lh, summed over B';

-- A multi-row statement's net change of K, applied set at a time by apply_batch_K, with the parts
-- of its values before the batch and its multiplicity after it.
CREATE TABLE "pgivm_triangles"."r_delta" (
    "a"      integer NOT NULL,
    "b"      integer NOT NULL,
    mult     bigint NOT NULL,
    h1       boolean,
    h2       boolean,
    new_mult bigint
);

-- The state of one relation K(X,Y) of the cycle R(A,B) -> S(B,C) -> T(C,A) under refined partitions
-- (Kara et al., long version, Appendix D): K partitioned on both of its variables. Rendered three
-- times by rotation (K = R, S, T; L the next relation, M the previous one).
--
--   K             one row per distinct tuple with its multiplicity and its part, two flags: h1, the
--                 X-value's part (heavy: degree in K on X >= theta/2; >= theta right after a major
--                 rebalancing), h2, the Y-value's (Definition 17: each judged by its degree in all of K)
--   K_x_degree    per X-value: its degree in K (distinct tuples) and its part; K_y_degree likewise
--   V_KL          V_KL(X,Z) = sum_Y K_hl(X,Y) * L_lh(Y,Z): light on the variable joined away, heavy on
--                 both it keeps (Figure 8), so at most 2 N^(1-eps) * 2 N^(1-eps) and N * 3/2 N^eps rows
CREATE TABLE "pgivm_triangles"."s" (
    "b"  integer NOT NULL,
    "c"  integer NOT NULL,
    mult bigint NOT NULL,
    h1   boolean NOT NULL,
    h2   boolean NOT NULL,
    PRIMARY KEY ("b", "c") INCLUDE (mult, h2)
);
CREATE INDEX ON "pgivm_triangles"."s" ("c", "b") INCLUDE (mult, h1);
-- K's tuples at one X-value whose Y-value is heavy (fewer than 2 N^(1-eps) of them), and at one
-- Y-value whose X-value is heavy: the loops of an update whose other two values are both heavy.
CREATE INDEX ON "pgivm_triangles"."s" ("b", "c") INCLUDE (mult) WHERE h2;
CREATE INDEX ON "pgivm_triangles"."s" ("c", "b") INCLUDE (mult) WHERE h1;
COMMENT ON TABLE "pgivm_triangles"."s" IS 'IVMε (refined partitions): S(B,C), partitioned on both variables';

CREATE TABLE "pgivm_triangles"."s_b_degree" ("b" integer PRIMARY KEY, degree bigint NOT NULL, heavy boolean NOT NULL);
CREATE TABLE "pgivm_triangles"."s_c_degree" ("c" integer PRIMARY KEY, degree bigint NOT NULL, heavy boolean NOT NULL);

CREATE TABLE "pgivm_triangles"."v_st" (
    "b"  integer NOT NULL,
    "a"  integer NOT NULL,
    mult bigint NOT NULL,
    PRIMARY KEY ("b", "a") INCLUDE (mult)
);
CREATE INDEX ON "pgivm_triangles"."v_st" (mult) WHERE mult = 0;  -- entries an upsert brings to 0, deleted at once
COMMENT ON TABLE "pgivm_triangles"."v_st" IS 'IVMε (refined partitions) view V_ST = S_hl * T_lh, summed over C';

-- A multi-row statement's net change of K, applied set at a time by apply_batch_K, with the parts
-- of its values before the batch and its multiplicity after it.
CREATE TABLE "pgivm_triangles"."s_delta" (
    "b"      integer NOT NULL,
    "c"      integer NOT NULL,
    mult     bigint NOT NULL,
    h1       boolean,
    h2       boolean,
    new_mult bigint
);

-- The state of one relation K(X,Y) of the cycle R(A,B) -> S(B,C) -> T(C,A) under refined partitions
-- (Kara et al., long version, Appendix D): K partitioned on both of its variables. Rendered three
-- times by rotation (K = R, S, T; L the next relation, M the previous one).
--
--   K             one row per distinct tuple with its multiplicity and its part, two flags: h1, the
--                 X-value's part (heavy: degree in K on X >= theta/2; >= theta right after a major
--                 rebalancing), h2, the Y-value's (Definition 17: each judged by its degree in all of K)
--   K_x_degree    per X-value: its degree in K (distinct tuples) and its part; K_y_degree likewise
--   V_KL          V_KL(X,Z) = sum_Y K_hl(X,Y) * L_lh(Y,Z): light on the variable joined away, heavy on
--                 both it keeps (Figure 8), so at most 2 N^(1-eps) * 2 N^(1-eps) and N * 3/2 N^eps rows
CREATE TABLE "pgivm_triangles"."t" (
    "c"  integer NOT NULL,
    "a"  integer NOT NULL,
    mult bigint NOT NULL,
    h1   boolean NOT NULL,
    h2   boolean NOT NULL,
    PRIMARY KEY ("c", "a") INCLUDE (mult, h2)
);
CREATE INDEX ON "pgivm_triangles"."t" ("a", "c") INCLUDE (mult, h1);
-- K's tuples at one X-value whose Y-value is heavy (fewer than 2 N^(1-eps) of them), and at one
-- Y-value whose X-value is heavy: the loops of an update whose other two values are both heavy.
CREATE INDEX ON "pgivm_triangles"."t" ("c", "a") INCLUDE (mult) WHERE h2;
CREATE INDEX ON "pgivm_triangles"."t" ("a", "c") INCLUDE (mult) WHERE h1;
COMMENT ON TABLE "pgivm_triangles"."t" IS 'IVMε (refined partitions): T(C,A), partitioned on both variables';

CREATE TABLE "pgivm_triangles"."t_c_degree" ("c" integer PRIMARY KEY, degree bigint NOT NULL, heavy boolean NOT NULL);
CREATE TABLE "pgivm_triangles"."t_a_degree" ("a" integer PRIMARY KEY, degree bigint NOT NULL, heavy boolean NOT NULL);

CREATE TABLE "pgivm_triangles"."v_tr" (
    "c"  integer NOT NULL,
    "b"  integer NOT NULL,
    mult bigint NOT NULL,
    PRIMARY KEY ("c", "b") INCLUDE (mult)
);
CREATE INDEX ON "pgivm_triangles"."v_tr" (mult) WHERE mult = 0;  -- entries an upsert brings to 0, deleted at once
COMMENT ON TABLE "pgivm_triangles"."v_tr" IS 'IVMε (refined partitions) view V_TR = T_hl * R_lh, summed over A';

-- A multi-row statement's net change of K, applied set at a time by apply_batch_K, with the parts
-- of its values before the batch and its multiplicity after it.
CREATE TABLE "pgivm_triangles"."t_delta" (
    "c"      integer NOT NULL,
    "a"      integer NOT NULL,
    mult     bigint NOT NULL,
    h1       boolean,
    h2       boolean,
    new_mult bigint
);

-- phase: functions (8 statements)

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

-- View-wide maintenance of a triangle count under refined partitions (Appendix D):
-- MajorRebalancingRP, the views from their definitions, the count, the restart after a build or a
-- TRUNCATE (the size invariant: 48_resize.sql). Rendered once per view.

-- MajorRebalancingRP: theta = N^epsilon, every relation strictly repartitioned on both variables
-- (heavy iff degree >= theta), the three views recomputed.
CREATE FUNCTION "pgivm_triangles"."major_rebalance"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
DECLARE
    st "pgivm_triangles"."state"%ROWTYPE;
BEGIN
    UPDATE "pgivm_triangles"."state" SET theta = power(n::float8, epsilon), major_rebalances = major_rebalances + 1 RETURNING * INTO st;
    UPDATE "pgivm_triangles"."r_a_degree" SET heavy = (degree >= st.theta OR st.epsilon = 0) WHERE heavy <> (degree >= st.theta OR st.epsilon = 0);
    UPDATE "pgivm_triangles"."r_b_degree" SET heavy = (degree >= st.theta OR st.epsilon = 0) WHERE heavy <> (degree >= st.theta OR st.epsilon = 0);
    UPDATE "pgivm_triangles"."s_b_degree" SET heavy = (degree >= st.theta OR st.epsilon = 0) WHERE heavy <> (degree >= st.theta OR st.epsilon = 0);
    UPDATE "pgivm_triangles"."s_c_degree" SET heavy = (degree >= st.theta OR st.epsilon = 0) WHERE heavy <> (degree >= st.theta OR st.epsilon = 0);
    UPDATE "pgivm_triangles"."t_c_degree" SET heavy = (degree >= st.theta OR st.epsilon = 0) WHERE heavy <> (degree >= st.theta OR st.epsilon = 0);
    UPDATE "pgivm_triangles"."t_a_degree" SET heavy = (degree >= st.theta OR st.epsilon = 0) WHERE heavy <> (degree >= st.theta OR st.epsilon = 0);
    UPDATE "pgivm_triangles"."r" k SET h1 = d.heavy FROM "pgivm_triangles"."r_a_degree" d WHERE d.a = k.a AND k.h1 <> d.heavy;
    UPDATE "pgivm_triangles"."r" k SET h2 = d.heavy FROM "pgivm_triangles"."r_b_degree" d WHERE d.b = k.b AND k.h2 <> d.heavy;
    UPDATE "pgivm_triangles"."s" k SET h1 = d.heavy FROM "pgivm_triangles"."s_b_degree" d WHERE d.b = k.b AND k.h1 <> d.heavy;
    UPDATE "pgivm_triangles"."s" k SET h2 = d.heavy FROM "pgivm_triangles"."s_c_degree" d WHERE d.c = k.c AND k.h2 <> d.heavy;
    UPDATE "pgivm_triangles"."t" k SET h1 = d.heavy FROM "pgivm_triangles"."t_c_degree" d WHERE d.c = k.c AND k.h1 <> d.heavy;
    UPDATE "pgivm_triangles"."t" k SET h2 = d.heavy FROM "pgivm_triangles"."t_a_degree" d WHERE d.a = k.a AND k.h2 <> d.heavy;
    DELETE FROM "pgivm_triangles"."v_rs";
    INSERT INTO "pgivm_triangles"."v_rs" (a, c, mult)
    SELECT k.a, l.c, sum(k.mult * l.mult) FROM "pgivm_triangles"."r" k JOIN "pgivm_triangles"."s" l ON l.b = k.b WHERE k.h1 AND NOT k.h2 AND NOT l.h1 AND l.h2 GROUP BY k.a, l.c HAVING sum(k.mult * l.mult) <> 0;
    DELETE FROM "pgivm_triangles"."v_st";
    INSERT INTO "pgivm_triangles"."v_st" (b, a, mult)
    SELECT k.b, l.a, sum(k.mult * l.mult) FROM "pgivm_triangles"."s" k JOIN "pgivm_triangles"."t" l ON l.c = k.c WHERE k.h1 AND NOT k.h2 AND NOT l.h1 AND l.h2 GROUP BY k.b, l.a HAVING sum(k.mult * l.mult) <> 0;
    DELETE FROM "pgivm_triangles"."v_tr";
    INSERT INTO "pgivm_triangles"."v_tr" (c, b, mult)
    SELECT k.c, l.b, sum(k.mult * l.mult) FROM "pgivm_triangles"."t" k JOIN "pgivm_triangles"."r" l ON l.a = k.a WHERE k.h1 AND NOT k.h2 AND NOT l.h1 AND l.h2 GROUP BY k.c, l.b HAVING sum(k.mult * l.mult) <> 0;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."major_rebalance"() IS 'IVMε MajorRebalancingRP: strict repartition of both variables at theta = N^epsilon, V_RS, V_ST, V_TR recomputed';


-- The count from the state: each R-tuple's triangles through the side of smaller degree (S's tuples
-- at b, or T's at a), so the joins produce O(N^(3/2)) rows whatever the skew. Used by the build,
-- TRUNCATE and verify; the query is COUNT in pgivm/systems/ivme/refined.py (the Spark build runs it too).
CREATE FUNCTION "pgivm_triangles"."count_from_state"()
RETURNS bigint LANGUAGE sql SECURITY DEFINER STABLE
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
    SELECT coalesce((WITH sides AS (SELECT r.a, r.b, r.mult, coalesce(ds.degree, 0) <= coalesce(dt.degree, 0) AS through_s FROM "pgivm_triangles"."r" r LEFT JOIN "pgivm_triangles"."s_b_degree" ds ON ds.b = r.b LEFT JOIN "pgivm_triangles"."t_a_degree" dt ON dt.a = r.a) SELECT coalesce((SELECT sum(x.mult * s.mult * t.mult) FROM sides x JOIN "pgivm_triangles"."s" s ON s.b = x.b JOIN "pgivm_triangles"."t" t ON t.c = s.c AND t.a = x.a WHERE x.through_s), 0) + coalesce((SELECT sum(x.mult * s.mult * t.mult) FROM sides x JOIN "pgivm_triangles"."t" t ON t.a = x.a JOIN "pgivm_triangles"."s" s ON s.b = x.b AND s.c = t.c WHERE NOT x.through_s), 0)), 0)::bigint
$pgivm$;


-- Preprocessing: N = 2|D| + 1, strict partitions, the views, the count.
CREATE FUNCTION "pgivm_triangles"."restart"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
DECLARE
    size bigint := (SELECT count(*) FROM "pgivm_triangles"."r") + (SELECT count(*) FROM "pgivm_triangles"."s") + (SELECT count(*) FROM "pgivm_triangles"."t");
BEGIN
    UPDATE "pgivm_triangles"."state" SET db_size = size, n = 2 * size + 1;
    PERFORM "pgivm_triangles"."major_rebalance"();
    UPDATE "pgivm_triangles"."result" SET count = "pgivm_triangles"."count_from_state"();
END;
$pgivm$;

-- Maintenance of one relation K(X,Y) of the triangle count under refined partitions (Kara et al.,
-- long version, Appendix D, Figures 9 and 10), rendered for K = R, S, T by rotation: L(Y,Z) is the
-- next relation, M(Z,X) the previous one; L's first variable and M's second are the update's.

-- ApplyUpdateRP + OnUpdateRP for a single-tuple update of K.
CREATE FUNCTION "pgivm_triangles"."apply_r"(x_value integer, y_value integer, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st        "pgivm_triangles"."state"%ROWTYPE;
    h1        boolean;  -- routing: the parts of the tuple's values in K (a new value light, heavy at eps = 0)
    h2        boolean;
    l1        boolean;  -- Y's part in L, X's part in M (NULL: no tuple there, no triangle through the update)
    m2        boolean;
    delta_q   bigint := 0;
    new_mult  bigint;
    x_degree  bigint;
    y_degree  bigint;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    h1 := coalesce((SELECT d.heavy FROM "pgivm_triangles"."r_a_degree" d WHERE d."a" = x_value), st.epsilon = 0);
    h2 := coalesce((SELECT d.heavy FROM "pgivm_triangles"."r_b_degree" d WHERE d."b" = y_value), st.epsilon = 0);
    l1 := (SELECT d.heavy FROM "pgivm_triangles"."s_b_degree" d WHERE d."b" = y_value);
    m2 := (SELECT d.heavy FROM "pgivm_triangles"."t_a_degree" d WHERE d."a" = x_value);

    -- delta Q = m * sum_z L(y,z) M(z,x) (Figure 9): a light side is a loop of < 3/2 N^eps tuples;
    -- with both heavy, the Z-values heavy in L (< 2 N^(1-eps)), those light in L but heavy in M
    -- (likewise), and V_LM for the Z-values light in both.
    -- Each loop scans its bounded side with a point lookup per row (the capture trigger turns hash
    -- and merge joins off, and a correlated lookup cannot become the driver).
    IF l1 IS NULL OR m2 IS NULL THEN
        delta_q := 0;
    ELSIF NOT l1 THEN
        delta_q := coalesce((SELECT sum(l.mult * (SELECT p.mult FROM "pgivm_triangles"."t" p WHERE p."c" = l."c" AND p."a" = x_value))
                               FROM "pgivm_triangles"."s" l WHERE l."b" = y_value), 0);
    ELSIF NOT m2 THEN
        delta_q := coalesce((SELECT sum(p.mult * (SELECT l.mult FROM "pgivm_triangles"."s" l WHERE l."b" = y_value AND l."c" = p."c"))
                               FROM "pgivm_triangles"."t" p WHERE p."a" = x_value), 0);
    ELSE
        delta_q := coalesce((SELECT sum(l.mult * (SELECT p.mult FROM "pgivm_triangles"."t" p WHERE p."c" = l."c" AND p."a" = x_value))
                               FROM "pgivm_triangles"."s" l WHERE l."b" = y_value AND l.h2), 0)
                 + coalesce((SELECT sum(p.mult * (SELECT l.mult FROM "pgivm_triangles"."s" l WHERE l."b" = y_value AND l."c" = p."c" AND NOT l.h2))
                               FROM "pgivm_triangles"."t" p WHERE p."a" = x_value AND p.h1), 0)
                 + coalesce((SELECT v.mult FROM "pgivm_triangles"."v_st" v WHERE v."b" = y_value AND v."a" = x_value), 0);
    END IF;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + m * delta_q;
    END IF;

    PERFORM "pgivm_triangles"."views_r"(x_value, y_value, m, h1, h2);

    -- K(x,y) += m in the part the flags name; degrees and |D| count distinct tuples.
    INSERT INTO "pgivm_triangles"."r" AS p ("a", "b", mult, h1, h2) VALUES (x_value, y_value, m, h1, h2)
        ON CONFLICT ("a", "b") DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
    IF new_mult = m THEN
        INSERT INTO "pgivm_triangles"."r_a_degree" AS d ("a", degree, heavy) VALUES (x_value, 1, h1)
            ON CONFLICT ("a") DO UPDATE SET degree = d.degree + 1 RETURNING degree INTO x_degree;
        INSERT INTO "pgivm_triangles"."r_b_degree" AS d ("b", degree, heavy) VALUES (y_value, 1, h2)
            ON CONFLICT ("b") DO UPDATE SET degree = d.degree + 1 RETURNING degree INTO y_degree;
        IF "pgivm_triangles"."resize"(st.db_size + 1, st.n) THEN
            RETURN;  -- a major rebalancing repartitioned everything
        END IF;
    ELSIF new_mult = 0 THEN
        DELETE FROM "pgivm_triangles"."r" WHERE "a" = x_value AND "b" = y_value;
        UPDATE "pgivm_triangles"."r_a_degree" SET degree = degree - 1 WHERE "a" = x_value AND degree > 1 RETURNING degree INTO x_degree;
        IF NOT FOUND THEN
            DELETE FROM "pgivm_triangles"."r_a_degree" WHERE "a" = x_value;
            x_degree := 0;
        END IF;
        UPDATE "pgivm_triangles"."r_b_degree" SET degree = degree - 1 WHERE "b" = y_value AND degree > 1 RETURNING degree INTO y_degree;
        IF NOT FOUND THEN
            DELETE FROM "pgivm_triangles"."r_b_degree" WHERE "b" = y_value;
            y_degree := 0;
        END IF;
        IF "pgivm_triangles"."resize"(st.db_size - 1, st.n) THEN
            RETURN;
        END IF;
    ELSE
        RETURN;
    END IF;

    -- OnUpdateRP (Figure 10), minor rebalancing on each variable (lines 20-23 print "A, alpha" for
    -- both; the second pair moves the Y-value).
    IF NOT h1 AND x_degree >= 1.5 * st.theta THEN
        PERFORM "pgivm_triangles"."move_r_a"(x_value, true);
    ELSIF h1 AND x_degree > 0 AND x_degree < 0.5 * st.theta THEN
        PERFORM "pgivm_triangles"."move_r_a"(x_value, false);
    END IF;
    IF NOT h2 AND y_degree >= 1.5 * st.theta THEN
        PERFORM "pgivm_triangles"."move_r_b"(y_value, true);
    ELSIF h2 AND y_degree > 0 AND y_degree < 0.5 * st.theta THEN
        PERFORM "pgivm_triangles"."move_r_b"(y_value, false);
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_r"(integer, integer, bigint) IS 'IVMε ApplyUpdateRP + OnUpdateRP for a single-tuple update to R (Appendix D)';


-- The views' part of a change m of K(x,y) in part (h1, h2) (Figure 9, lines 10-13): K_hl feeds
-- V_KL(x,z) += m L_lh(y,z), a loop over L's tuples at a Y-value light in L; K_lh feeds V_MK(z,y) +=
-- M_hl(z,x) m, a loop over M's tuples at an X-value light in M. Reads no tuple of K, so a minor
-- move runs it out of the old part and into the new one, per moved tuple.
CREATE FUNCTION "pgivm_triangles"."views_r"(x_value integer, y_value integer, m bigint, h1 boolean, h2 boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    IF h1 AND NOT h2 THEN
        IF NOT coalesce((SELECT d.heavy FROM "pgivm_triangles"."s_b_degree" d WHERE d."b" = y_value), true) THEN
            INSERT INTO "pgivm_triangles"."v_rs" AS v ("a", "c", mult)
            SELECT x_value, l."c", m * l.mult FROM "pgivm_triangles"."s" l WHERE l."b" = y_value AND l.h2
                ON CONFLICT ("a", "c") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
            DELETE FROM "pgivm_triangles"."v_rs" WHERE mult = 0;
        END IF;
    ELSIF h2 AND NOT h1 THEN
        IF NOT coalesce((SELECT d.heavy FROM "pgivm_triangles"."t_a_degree" d WHERE d."a" = x_value), true) THEN
            INSERT INTO "pgivm_triangles"."v_tr" AS v ("c", "b", mult)
            SELECT p."c", y_value, m * p.mult FROM "pgivm_triangles"."t" p WHERE p."a" = x_value AND p.h1
                ON CONFLICT ("c", "b") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
            DELETE FROM "pgivm_triangles"."v_tr" WHERE mult = 0;
        END IF;
    END IF;
END;
$pgivm$;


-- MinorRebalancingRP on X: every tuple of the value moves to the other part; the count does not change.
CREATE FUNCTION "pgivm_triangles"."move_r_a"(value integer, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    moved record;
BEGIN
    FOR moved IN SELECT "b" AS y_value, mult, h2 FROM "pgivm_triangles"."r" WHERE "a" = value LOOP
        PERFORM "pgivm_triangles"."views_r"(value, moved.y_value, -moved.mult, NOT to_heavy, moved.h2);
        PERFORM "pgivm_triangles"."views_r"(value, moved.y_value, moved.mult, to_heavy, moved.h2);
    END LOOP;
    UPDATE "pgivm_triangles"."r" SET h1 = to_heavy WHERE "a" = value;
    UPDATE "pgivm_triangles"."r_a_degree" SET heavy = to_heavy WHERE "a" = value;
    UPDATE "pgivm_triangles"."state" SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;


-- MinorRebalancingRP on Y.
CREATE FUNCTION "pgivm_triangles"."move_r_b"(value integer, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    moved record;
BEGIN
    FOR moved IN SELECT "a" AS x_value, mult, h1 FROM "pgivm_triangles"."r" WHERE "b" = value LOOP
        PERFORM "pgivm_triangles"."views_r"(moved.x_value, value, -moved.mult, moved.h1, NOT to_heavy);
        PERFORM "pgivm_triangles"."views_r"(moved.x_value, value, moved.mult, moved.h1, to_heavy);
    END LOOP;
    UPDATE "pgivm_triangles"."r" SET h2 = to_heavy WHERE "b" = value;
    UPDATE "pgivm_triangles"."r_b_degree" SET heavy = to_heavy WHERE "b" = value;
    UPDATE "pgivm_triangles"."state" SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;


-- A multi-row statement's net change of K, set at a time: delta Q as the batch joined with L and M
-- (each batch tuple's triangles, on the state before it: K is in none of them), the views' deltas
-- as joins with L_lh and M_hl, then K, the degrees and |D|, then the invariants (a size violation
-- resets N by a major rebalancing, else each value that crossed a threshold moves).
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
    moving    record;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    WITH merged AS (DELETE FROM "pgivm_triangles"."r_delta" RETURNING "a", "b", mult)
    INSERT INTO "pgivm_triangles"."r_delta" ("a", "b", mult) SELECT "a", "b", sum(mult) FROM merged GROUP BY "a", "b" HAVING sum(mult) <> 0;
    UPDATE "pgivm_triangles"."r_delta" d
       SET h1 = coalesce((SELECT g.heavy FROM "pgivm_triangles"."r_a_degree" g WHERE g."a" = d."a"), st.epsilon = 0),
           h2 = coalesce((SELECT g.heavy FROM "pgivm_triangles"."r_b_degree" g WHERE g."b" = d."b"), st.epsilon = 0),
           new_mult = d.mult + coalesce((SELECT k.mult FROM "pgivm_triangles"."r" k WHERE k."a" = d."a" AND k."b" = d."b"), 0);
    ANALYZE "pgivm_triangles"."r_delta";

    SELECT coalesce(sum(d.mult * l.mult * p.mult), 0) INTO delta_q
      FROM "pgivm_triangles"."r_delta" d JOIN "pgivm_triangles"."s" l ON l."b" = d."b" JOIN "pgivm_triangles"."t" p ON p."c" = l."c" AND p."a" = d."a";
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + delta_q::bigint;
    END IF;

    INSERT INTO "pgivm_triangles"."v_rs" AS v ("a", "c", mult)
    SELECT d."a", l."c", sum(d.mult * l.mult) FROM "pgivm_triangles"."r_delta" d JOIN "pgivm_triangles"."s" l ON l."b" = d."b" AND NOT l.h1 AND l.h2
     WHERE d.h1 AND NOT d.h2
     GROUP BY d."a", l."c" HAVING sum(d.mult * l.mult) <> 0
        ON CONFLICT ("a", "c") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."v_rs" WHERE mult = 0;
    INSERT INTO "pgivm_triangles"."v_tr" AS v ("c", "b", mult)
    SELECT p."c", d."b", sum(p.mult * d.mult) FROM "pgivm_triangles"."r_delta" d JOIN "pgivm_triangles"."t" p ON p."a" = d."a" AND p.h1 AND NOT p.h2
     WHERE d.h2 AND NOT d.h1
     GROUP BY p."c", d."b" HAVING sum(p.mult * d.mult) <> 0
        ON CONFLICT ("c", "b") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."v_tr" WHERE mult = 0;

    INSERT INTO "pgivm_triangles"."r" AS p ("a", "b", mult, h1, h2) SELECT "a", "b", new_mult, h1, h2 FROM "pgivm_triangles"."r_delta" WHERE new_mult <> 0
        ON CONFLICT ("a", "b") DO UPDATE SET mult = EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."r" p USING "pgivm_triangles"."r_delta" d WHERE d.new_mult = 0 AND p."a" = d."a" AND p."b" = d."b";
    INSERT INTO "pgivm_triangles"."r_a_degree" AS g ("a", degree, heavy)
    SELECT "a", sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(h1)
      FROM "pgivm_triangles"."r_delta" WHERE new_mult = mult OR new_mult = 0 GROUP BY "a"
    ON CONFLICT ("a") DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM "pgivm_triangles"."r_a_degree" g USING "pgivm_triangles"."r_delta" d WHERE g."a" = d."a" AND g.degree = 0;
    INSERT INTO "pgivm_triangles"."r_b_degree" AS g ("b", degree, heavy)
    SELECT "b", sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(h2)
      FROM "pgivm_triangles"."r_delta" WHERE new_mult = mult OR new_mult = 0 GROUP BY "b"
    ON CONFLICT ("b") DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM "pgivm_triangles"."r_b_degree" g USING "pgivm_triangles"."r_delta" d WHERE g."b" = d."b" AND g.degree = 0;
    SELECT coalesce(sum(CASE WHEN new_mult = mult THEN 1 WHEN new_mult = 0 THEN -1 ELSE 0 END), 0)
      INTO size_diff FROM "pgivm_triangles"."r_delta";

    IF NOT "pgivm_triangles"."resize"(st.db_size + size_diff, st.n) THEN
        FOR moving IN
            SELECT g."a" AS value, NOT g.heavy AS to_heavy FROM "pgivm_triangles"."r_a_degree" g
             WHERE g."a" IN (SELECT "a" FROM "pgivm_triangles"."r_delta")
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM "pgivm_triangles"."move_r_a"(moving.value, moving.to_heavy);
        END LOOP;
        FOR moving IN
            SELECT g."b" AS value, NOT g.heavy AS to_heavy FROM "pgivm_triangles"."r_b_degree" g
             WHERE g."b" IN (SELECT "b" FROM "pgivm_triangles"."r_delta")
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM "pgivm_triangles"."move_r_b"(moving.value, moving.to_heavy);
        END LOOP;
    END IF;
    DELETE FROM "pgivm_triangles"."r_delta";
END;
$pgivm$;


-- K emptied after a TRUNCATE of its table (the caller restarts from what remains).
CREATE FUNCTION "pgivm_triangles"."clear_r"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."r";
    DELETE FROM "pgivm_triangles"."r_a_degree";
    DELETE FROM "pgivm_triangles"."r_b_degree";
END;
$pgivm$;

-- Maintenance of one relation K(X,Y) of the triangle count under refined partitions (Kara et al.,
-- long version, Appendix D, Figures 9 and 10), rendered for K = R, S, T by rotation: L(Y,Z) is the
-- next relation, M(Z,X) the previous one; L's first variable and M's second are the update's.

-- ApplyUpdateRP + OnUpdateRP for a single-tuple update of K.
CREATE FUNCTION "pgivm_triangles"."apply_s"(x_value integer, y_value integer, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st        "pgivm_triangles"."state"%ROWTYPE;
    h1        boolean;  -- routing: the parts of the tuple's values in K (a new value light, heavy at eps = 0)
    h2        boolean;
    l1        boolean;  -- Y's part in L, X's part in M (NULL: no tuple there, no triangle through the update)
    m2        boolean;
    delta_q   bigint := 0;
    new_mult  bigint;
    x_degree  bigint;
    y_degree  bigint;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    h1 := coalesce((SELECT d.heavy FROM "pgivm_triangles"."s_b_degree" d WHERE d."b" = x_value), st.epsilon = 0);
    h2 := coalesce((SELECT d.heavy FROM "pgivm_triangles"."s_c_degree" d WHERE d."c" = y_value), st.epsilon = 0);
    l1 := (SELECT d.heavy FROM "pgivm_triangles"."t_c_degree" d WHERE d."c" = y_value);
    m2 := (SELECT d.heavy FROM "pgivm_triangles"."r_b_degree" d WHERE d."b" = x_value);

    -- delta Q = m * sum_z L(y,z) M(z,x) (Figure 9): a light side is a loop of < 3/2 N^eps tuples;
    -- with both heavy, the Z-values heavy in L (< 2 N^(1-eps)), those light in L but heavy in M
    -- (likewise), and V_LM for the Z-values light in both.
    -- Each loop scans its bounded side with a point lookup per row (the capture trigger turns hash
    -- and merge joins off, and a correlated lookup cannot become the driver).
    IF l1 IS NULL OR m2 IS NULL THEN
        delta_q := 0;
    ELSIF NOT l1 THEN
        delta_q := coalesce((SELECT sum(l.mult * (SELECT p.mult FROM "pgivm_triangles"."r" p WHERE p."a" = l."a" AND p."b" = x_value))
                               FROM "pgivm_triangles"."t" l WHERE l."c" = y_value), 0);
    ELSIF NOT m2 THEN
        delta_q := coalesce((SELECT sum(p.mult * (SELECT l.mult FROM "pgivm_triangles"."t" l WHERE l."c" = y_value AND l."a" = p."a"))
                               FROM "pgivm_triangles"."r" p WHERE p."b" = x_value), 0);
    ELSE
        delta_q := coalesce((SELECT sum(l.mult * (SELECT p.mult FROM "pgivm_triangles"."r" p WHERE p."a" = l."a" AND p."b" = x_value))
                               FROM "pgivm_triangles"."t" l WHERE l."c" = y_value AND l.h2), 0)
                 + coalesce((SELECT sum(p.mult * (SELECT l.mult FROM "pgivm_triangles"."t" l WHERE l."c" = y_value AND l."a" = p."a" AND NOT l.h2))
                               FROM "pgivm_triangles"."r" p WHERE p."b" = x_value AND p.h1), 0)
                 + coalesce((SELECT v.mult FROM "pgivm_triangles"."v_tr" v WHERE v."c" = y_value AND v."b" = x_value), 0);
    END IF;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + m * delta_q;
    END IF;

    PERFORM "pgivm_triangles"."views_s"(x_value, y_value, m, h1, h2);

    -- K(x,y) += m in the part the flags name; degrees and |D| count distinct tuples.
    INSERT INTO "pgivm_triangles"."s" AS p ("b", "c", mult, h1, h2) VALUES (x_value, y_value, m, h1, h2)
        ON CONFLICT ("b", "c") DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
    IF new_mult = m THEN
        INSERT INTO "pgivm_triangles"."s_b_degree" AS d ("b", degree, heavy) VALUES (x_value, 1, h1)
            ON CONFLICT ("b") DO UPDATE SET degree = d.degree + 1 RETURNING degree INTO x_degree;
        INSERT INTO "pgivm_triangles"."s_c_degree" AS d ("c", degree, heavy) VALUES (y_value, 1, h2)
            ON CONFLICT ("c") DO UPDATE SET degree = d.degree + 1 RETURNING degree INTO y_degree;
        IF "pgivm_triangles"."resize"(st.db_size + 1, st.n) THEN
            RETURN;  -- a major rebalancing repartitioned everything
        END IF;
    ELSIF new_mult = 0 THEN
        DELETE FROM "pgivm_triangles"."s" WHERE "b" = x_value AND "c" = y_value;
        UPDATE "pgivm_triangles"."s_b_degree" SET degree = degree - 1 WHERE "b" = x_value AND degree > 1 RETURNING degree INTO x_degree;
        IF NOT FOUND THEN
            DELETE FROM "pgivm_triangles"."s_b_degree" WHERE "b" = x_value;
            x_degree := 0;
        END IF;
        UPDATE "pgivm_triangles"."s_c_degree" SET degree = degree - 1 WHERE "c" = y_value AND degree > 1 RETURNING degree INTO y_degree;
        IF NOT FOUND THEN
            DELETE FROM "pgivm_triangles"."s_c_degree" WHERE "c" = y_value;
            y_degree := 0;
        END IF;
        IF "pgivm_triangles"."resize"(st.db_size - 1, st.n) THEN
            RETURN;
        END IF;
    ELSE
        RETURN;
    END IF;

    -- OnUpdateRP (Figure 10), minor rebalancing on each variable (lines 20-23 print "A, alpha" for
    -- both; the second pair moves the Y-value).
    IF NOT h1 AND x_degree >= 1.5 * st.theta THEN
        PERFORM "pgivm_triangles"."move_s_b"(x_value, true);
    ELSIF h1 AND x_degree > 0 AND x_degree < 0.5 * st.theta THEN
        PERFORM "pgivm_triangles"."move_s_b"(x_value, false);
    END IF;
    IF NOT h2 AND y_degree >= 1.5 * st.theta THEN
        PERFORM "pgivm_triangles"."move_s_c"(y_value, true);
    ELSIF h2 AND y_degree > 0 AND y_degree < 0.5 * st.theta THEN
        PERFORM "pgivm_triangles"."move_s_c"(y_value, false);
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_s"(integer, integer, bigint) IS 'IVMε ApplyUpdateRP + OnUpdateRP for a single-tuple update to S (Appendix D)';


-- The views' part of a change m of K(x,y) in part (h1, h2) (Figure 9, lines 10-13): K_hl feeds
-- V_KL(x,z) += m L_lh(y,z), a loop over L's tuples at a Y-value light in L; K_lh feeds V_MK(z,y) +=
-- M_hl(z,x) m, a loop over M's tuples at an X-value light in M. Reads no tuple of K, so a minor
-- move runs it out of the old part and into the new one, per moved tuple.
CREATE FUNCTION "pgivm_triangles"."views_s"(x_value integer, y_value integer, m bigint, h1 boolean, h2 boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    IF h1 AND NOT h2 THEN
        IF NOT coalesce((SELECT d.heavy FROM "pgivm_triangles"."t_c_degree" d WHERE d."c" = y_value), true) THEN
            INSERT INTO "pgivm_triangles"."v_st" AS v ("b", "a", mult)
            SELECT x_value, l."a", m * l.mult FROM "pgivm_triangles"."t" l WHERE l."c" = y_value AND l.h2
                ON CONFLICT ("b", "a") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
            DELETE FROM "pgivm_triangles"."v_st" WHERE mult = 0;
        END IF;
    ELSIF h2 AND NOT h1 THEN
        IF NOT coalesce((SELECT d.heavy FROM "pgivm_triangles"."r_b_degree" d WHERE d."b" = x_value), true) THEN
            INSERT INTO "pgivm_triangles"."v_rs" AS v ("a", "c", mult)
            SELECT p."a", y_value, m * p.mult FROM "pgivm_triangles"."r" p WHERE p."b" = x_value AND p.h1
                ON CONFLICT ("a", "c") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
            DELETE FROM "pgivm_triangles"."v_rs" WHERE mult = 0;
        END IF;
    END IF;
END;
$pgivm$;


-- MinorRebalancingRP on X: every tuple of the value moves to the other part; the count does not change.
CREATE FUNCTION "pgivm_triangles"."move_s_b"(value integer, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    moved record;
BEGIN
    FOR moved IN SELECT "c" AS y_value, mult, h2 FROM "pgivm_triangles"."s" WHERE "b" = value LOOP
        PERFORM "pgivm_triangles"."views_s"(value, moved.y_value, -moved.mult, NOT to_heavy, moved.h2);
        PERFORM "pgivm_triangles"."views_s"(value, moved.y_value, moved.mult, to_heavy, moved.h2);
    END LOOP;
    UPDATE "pgivm_triangles"."s" SET h1 = to_heavy WHERE "b" = value;
    UPDATE "pgivm_triangles"."s_b_degree" SET heavy = to_heavy WHERE "b" = value;
    UPDATE "pgivm_triangles"."state" SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;


-- MinorRebalancingRP on Y.
CREATE FUNCTION "pgivm_triangles"."move_s_c"(value integer, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    moved record;
BEGIN
    FOR moved IN SELECT "b" AS x_value, mult, h1 FROM "pgivm_triangles"."s" WHERE "c" = value LOOP
        PERFORM "pgivm_triangles"."views_s"(moved.x_value, value, -moved.mult, moved.h1, NOT to_heavy);
        PERFORM "pgivm_triangles"."views_s"(moved.x_value, value, moved.mult, moved.h1, to_heavy);
    END LOOP;
    UPDATE "pgivm_triangles"."s" SET h2 = to_heavy WHERE "c" = value;
    UPDATE "pgivm_triangles"."s_c_degree" SET heavy = to_heavy WHERE "c" = value;
    UPDATE "pgivm_triangles"."state" SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;


-- A multi-row statement's net change of K, set at a time: delta Q as the batch joined with L and M
-- (each batch tuple's triangles, on the state before it: K is in none of them), the views' deltas
-- as joins with L_lh and M_hl, then K, the degrees and |D|, then the invariants (a size violation
-- resets N by a major rebalancing, else each value that crossed a threshold moves).
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
    WITH merged AS (DELETE FROM "pgivm_triangles"."s_delta" RETURNING "b", "c", mult)
    INSERT INTO "pgivm_triangles"."s_delta" ("b", "c", mult) SELECT "b", "c", sum(mult) FROM merged GROUP BY "b", "c" HAVING sum(mult) <> 0;
    UPDATE "pgivm_triangles"."s_delta" d
       SET h1 = coalesce((SELECT g.heavy FROM "pgivm_triangles"."s_b_degree" g WHERE g."b" = d."b"), st.epsilon = 0),
           h2 = coalesce((SELECT g.heavy FROM "pgivm_triangles"."s_c_degree" g WHERE g."c" = d."c"), st.epsilon = 0),
           new_mult = d.mult + coalesce((SELECT k.mult FROM "pgivm_triangles"."s" k WHERE k."b" = d."b" AND k."c" = d."c"), 0);
    ANALYZE "pgivm_triangles"."s_delta";

    SELECT coalesce(sum(d.mult * l.mult * p.mult), 0) INTO delta_q
      FROM "pgivm_triangles"."s_delta" d JOIN "pgivm_triangles"."t" l ON l."c" = d."c" JOIN "pgivm_triangles"."r" p ON p."a" = l."a" AND p."b" = d."b";
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + delta_q::bigint;
    END IF;

    INSERT INTO "pgivm_triangles"."v_st" AS v ("b", "a", mult)
    SELECT d."b", l."a", sum(d.mult * l.mult) FROM "pgivm_triangles"."s_delta" d JOIN "pgivm_triangles"."t" l ON l."c" = d."c" AND NOT l.h1 AND l.h2
     WHERE d.h1 AND NOT d.h2
     GROUP BY d."b", l."a" HAVING sum(d.mult * l.mult) <> 0
        ON CONFLICT ("b", "a") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."v_st" WHERE mult = 0;
    INSERT INTO "pgivm_triangles"."v_rs" AS v ("a", "c", mult)
    SELECT p."a", d."c", sum(p.mult * d.mult) FROM "pgivm_triangles"."s_delta" d JOIN "pgivm_triangles"."r" p ON p."b" = d."b" AND p.h1 AND NOT p.h2
     WHERE d.h2 AND NOT d.h1
     GROUP BY p."a", d."c" HAVING sum(p.mult * d.mult) <> 0
        ON CONFLICT ("a", "c") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."v_rs" WHERE mult = 0;

    INSERT INTO "pgivm_triangles"."s" AS p ("b", "c", mult, h1, h2) SELECT "b", "c", new_mult, h1, h2 FROM "pgivm_triangles"."s_delta" WHERE new_mult <> 0
        ON CONFLICT ("b", "c") DO UPDATE SET mult = EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."s" p USING "pgivm_triangles"."s_delta" d WHERE d.new_mult = 0 AND p."b" = d."b" AND p."c" = d."c";
    INSERT INTO "pgivm_triangles"."s_b_degree" AS g ("b", degree, heavy)
    SELECT "b", sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(h1)
      FROM "pgivm_triangles"."s_delta" WHERE new_mult = mult OR new_mult = 0 GROUP BY "b"
    ON CONFLICT ("b") DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM "pgivm_triangles"."s_b_degree" g USING "pgivm_triangles"."s_delta" d WHERE g."b" = d."b" AND g.degree = 0;
    INSERT INTO "pgivm_triangles"."s_c_degree" AS g ("c", degree, heavy)
    SELECT "c", sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(h2)
      FROM "pgivm_triangles"."s_delta" WHERE new_mult = mult OR new_mult = 0 GROUP BY "c"
    ON CONFLICT ("c") DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM "pgivm_triangles"."s_c_degree" g USING "pgivm_triangles"."s_delta" d WHERE g."c" = d."c" AND g.degree = 0;
    SELECT coalesce(sum(CASE WHEN new_mult = mult THEN 1 WHEN new_mult = 0 THEN -1 ELSE 0 END), 0)
      INTO size_diff FROM "pgivm_triangles"."s_delta";

    IF NOT "pgivm_triangles"."resize"(st.db_size + size_diff, st.n) THEN
        FOR moving IN
            SELECT g."b" AS value, NOT g.heavy AS to_heavy FROM "pgivm_triangles"."s_b_degree" g
             WHERE g."b" IN (SELECT "b" FROM "pgivm_triangles"."s_delta")
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM "pgivm_triangles"."move_s_b"(moving.value, moving.to_heavy);
        END LOOP;
        FOR moving IN
            SELECT g."c" AS value, NOT g.heavy AS to_heavy FROM "pgivm_triangles"."s_c_degree" g
             WHERE g."c" IN (SELECT "c" FROM "pgivm_triangles"."s_delta")
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM "pgivm_triangles"."move_s_c"(moving.value, moving.to_heavy);
        END LOOP;
    END IF;
    DELETE FROM "pgivm_triangles"."s_delta";
END;
$pgivm$;


-- K emptied after a TRUNCATE of its table (the caller restarts from what remains).
CREATE FUNCTION "pgivm_triangles"."clear_s"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."s";
    DELETE FROM "pgivm_triangles"."s_b_degree";
    DELETE FROM "pgivm_triangles"."s_c_degree";
END;
$pgivm$;

-- Maintenance of one relation K(X,Y) of the triangle count under refined partitions (Kara et al.,
-- long version, Appendix D, Figures 9 and 10), rendered for K = R, S, T by rotation: L(Y,Z) is the
-- next relation, M(Z,X) the previous one; L's first variable and M's second are the update's.

-- ApplyUpdateRP + OnUpdateRP for a single-tuple update of K.
CREATE FUNCTION "pgivm_triangles"."apply_t"(x_value integer, y_value integer, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st        "pgivm_triangles"."state"%ROWTYPE;
    h1        boolean;  -- routing: the parts of the tuple's values in K (a new value light, heavy at eps = 0)
    h2        boolean;
    l1        boolean;  -- Y's part in L, X's part in M (NULL: no tuple there, no triangle through the update)
    m2        boolean;
    delta_q   bigint := 0;
    new_mult  bigint;
    x_degree  bigint;
    y_degree  bigint;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    h1 := coalesce((SELECT d.heavy FROM "pgivm_triangles"."t_c_degree" d WHERE d."c" = x_value), st.epsilon = 0);
    h2 := coalesce((SELECT d.heavy FROM "pgivm_triangles"."t_a_degree" d WHERE d."a" = y_value), st.epsilon = 0);
    l1 := (SELECT d.heavy FROM "pgivm_triangles"."r_a_degree" d WHERE d."a" = y_value);
    m2 := (SELECT d.heavy FROM "pgivm_triangles"."s_c_degree" d WHERE d."c" = x_value);

    -- delta Q = m * sum_z L(y,z) M(z,x) (Figure 9): a light side is a loop of < 3/2 N^eps tuples;
    -- with both heavy, the Z-values heavy in L (< 2 N^(1-eps)), those light in L but heavy in M
    -- (likewise), and V_LM for the Z-values light in both.
    -- Each loop scans its bounded side with a point lookup per row (the capture trigger turns hash
    -- and merge joins off, and a correlated lookup cannot become the driver).
    IF l1 IS NULL OR m2 IS NULL THEN
        delta_q := 0;
    ELSIF NOT l1 THEN
        delta_q := coalesce((SELECT sum(l.mult * (SELECT p.mult FROM "pgivm_triangles"."s" p WHERE p."b" = l."b" AND p."c" = x_value))
                               FROM "pgivm_triangles"."r" l WHERE l."a" = y_value), 0);
    ELSIF NOT m2 THEN
        delta_q := coalesce((SELECT sum(p.mult * (SELECT l.mult FROM "pgivm_triangles"."r" l WHERE l."a" = y_value AND l."b" = p."b"))
                               FROM "pgivm_triangles"."s" p WHERE p."c" = x_value), 0);
    ELSE
        delta_q := coalesce((SELECT sum(l.mult * (SELECT p.mult FROM "pgivm_triangles"."s" p WHERE p."b" = l."b" AND p."c" = x_value))
                               FROM "pgivm_triangles"."r" l WHERE l."a" = y_value AND l.h2), 0)
                 + coalesce((SELECT sum(p.mult * (SELECT l.mult FROM "pgivm_triangles"."r" l WHERE l."a" = y_value AND l."b" = p."b" AND NOT l.h2))
                               FROM "pgivm_triangles"."s" p WHERE p."c" = x_value AND p.h1), 0)
                 + coalesce((SELECT v.mult FROM "pgivm_triangles"."v_rs" v WHERE v."a" = y_value AND v."c" = x_value), 0);
    END IF;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + m * delta_q;
    END IF;

    PERFORM "pgivm_triangles"."views_t"(x_value, y_value, m, h1, h2);

    -- K(x,y) += m in the part the flags name; degrees and |D| count distinct tuples.
    INSERT INTO "pgivm_triangles"."t" AS p ("c", "a", mult, h1, h2) VALUES (x_value, y_value, m, h1, h2)
        ON CONFLICT ("c", "a") DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
    IF new_mult = m THEN
        INSERT INTO "pgivm_triangles"."t_c_degree" AS d ("c", degree, heavy) VALUES (x_value, 1, h1)
            ON CONFLICT ("c") DO UPDATE SET degree = d.degree + 1 RETURNING degree INTO x_degree;
        INSERT INTO "pgivm_triangles"."t_a_degree" AS d ("a", degree, heavy) VALUES (y_value, 1, h2)
            ON CONFLICT ("a") DO UPDATE SET degree = d.degree + 1 RETURNING degree INTO y_degree;
        IF "pgivm_triangles"."resize"(st.db_size + 1, st.n) THEN
            RETURN;  -- a major rebalancing repartitioned everything
        END IF;
    ELSIF new_mult = 0 THEN
        DELETE FROM "pgivm_triangles"."t" WHERE "c" = x_value AND "a" = y_value;
        UPDATE "pgivm_triangles"."t_c_degree" SET degree = degree - 1 WHERE "c" = x_value AND degree > 1 RETURNING degree INTO x_degree;
        IF NOT FOUND THEN
            DELETE FROM "pgivm_triangles"."t_c_degree" WHERE "c" = x_value;
            x_degree := 0;
        END IF;
        UPDATE "pgivm_triangles"."t_a_degree" SET degree = degree - 1 WHERE "a" = y_value AND degree > 1 RETURNING degree INTO y_degree;
        IF NOT FOUND THEN
            DELETE FROM "pgivm_triangles"."t_a_degree" WHERE "a" = y_value;
            y_degree := 0;
        END IF;
        IF "pgivm_triangles"."resize"(st.db_size - 1, st.n) THEN
            RETURN;
        END IF;
    ELSE
        RETURN;
    END IF;

    -- OnUpdateRP (Figure 10), minor rebalancing on each variable (lines 20-23 print "A, alpha" for
    -- both; the second pair moves the Y-value).
    IF NOT h1 AND x_degree >= 1.5 * st.theta THEN
        PERFORM "pgivm_triangles"."move_t_c"(x_value, true);
    ELSIF h1 AND x_degree > 0 AND x_degree < 0.5 * st.theta THEN
        PERFORM "pgivm_triangles"."move_t_c"(x_value, false);
    END IF;
    IF NOT h2 AND y_degree >= 1.5 * st.theta THEN
        PERFORM "pgivm_triangles"."move_t_a"(y_value, true);
    ELSIF h2 AND y_degree > 0 AND y_degree < 0.5 * st.theta THEN
        PERFORM "pgivm_triangles"."move_t_a"(y_value, false);
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_t"(integer, integer, bigint) IS 'IVMε ApplyUpdateRP + OnUpdateRP for a single-tuple update to T (Appendix D)';


-- The views' part of a change m of K(x,y) in part (h1, h2) (Figure 9, lines 10-13): K_hl feeds
-- V_KL(x,z) += m L_lh(y,z), a loop over L's tuples at a Y-value light in L; K_lh feeds V_MK(z,y) +=
-- M_hl(z,x) m, a loop over M's tuples at an X-value light in M. Reads no tuple of K, so a minor
-- move runs it out of the old part and into the new one, per moved tuple.
CREATE FUNCTION "pgivm_triangles"."views_t"(x_value integer, y_value integer, m bigint, h1 boolean, h2 boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    IF h1 AND NOT h2 THEN
        IF NOT coalesce((SELECT d.heavy FROM "pgivm_triangles"."r_a_degree" d WHERE d."a" = y_value), true) THEN
            INSERT INTO "pgivm_triangles"."v_tr" AS v ("c", "b", mult)
            SELECT x_value, l."b", m * l.mult FROM "pgivm_triangles"."r" l WHERE l."a" = y_value AND l.h2
                ON CONFLICT ("c", "b") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
            DELETE FROM "pgivm_triangles"."v_tr" WHERE mult = 0;
        END IF;
    ELSIF h2 AND NOT h1 THEN
        IF NOT coalesce((SELECT d.heavy FROM "pgivm_triangles"."s_c_degree" d WHERE d."c" = x_value), true) THEN
            INSERT INTO "pgivm_triangles"."v_st" AS v ("b", "a", mult)
            SELECT p."b", y_value, m * p.mult FROM "pgivm_triangles"."s" p WHERE p."c" = x_value AND p.h1
                ON CONFLICT ("b", "a") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
            DELETE FROM "pgivm_triangles"."v_st" WHERE mult = 0;
        END IF;
    END IF;
END;
$pgivm$;


-- MinorRebalancingRP on X: every tuple of the value moves to the other part; the count does not change.
CREATE FUNCTION "pgivm_triangles"."move_t_c"(value integer, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    moved record;
BEGIN
    FOR moved IN SELECT "a" AS y_value, mult, h2 FROM "pgivm_triangles"."t" WHERE "c" = value LOOP
        PERFORM "pgivm_triangles"."views_t"(value, moved.y_value, -moved.mult, NOT to_heavy, moved.h2);
        PERFORM "pgivm_triangles"."views_t"(value, moved.y_value, moved.mult, to_heavy, moved.h2);
    END LOOP;
    UPDATE "pgivm_triangles"."t" SET h1 = to_heavy WHERE "c" = value;
    UPDATE "pgivm_triangles"."t_c_degree" SET heavy = to_heavy WHERE "c" = value;
    UPDATE "pgivm_triangles"."state" SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;


-- MinorRebalancingRP on Y.
CREATE FUNCTION "pgivm_triangles"."move_t_a"(value integer, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    moved record;
BEGIN
    FOR moved IN SELECT "c" AS x_value, mult, h1 FROM "pgivm_triangles"."t" WHERE "a" = value LOOP
        PERFORM "pgivm_triangles"."views_t"(moved.x_value, value, -moved.mult, moved.h1, NOT to_heavy);
        PERFORM "pgivm_triangles"."views_t"(moved.x_value, value, moved.mult, moved.h1, to_heavy);
    END LOOP;
    UPDATE "pgivm_triangles"."t" SET h2 = to_heavy WHERE "a" = value;
    UPDATE "pgivm_triangles"."t_a_degree" SET heavy = to_heavy WHERE "a" = value;
    UPDATE "pgivm_triangles"."state" SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;


-- A multi-row statement's net change of K, set at a time: delta Q as the batch joined with L and M
-- (each batch tuple's triangles, on the state before it: K is in none of them), the views' deltas
-- as joins with L_lh and M_hl, then K, the degrees and |D|, then the invariants (a size violation
-- resets N by a major rebalancing, else each value that crossed a threshold moves).
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
    WITH merged AS (DELETE FROM "pgivm_triangles"."t_delta" RETURNING "c", "a", mult)
    INSERT INTO "pgivm_triangles"."t_delta" ("c", "a", mult) SELECT "c", "a", sum(mult) FROM merged GROUP BY "c", "a" HAVING sum(mult) <> 0;
    UPDATE "pgivm_triangles"."t_delta" d
       SET h1 = coalesce((SELECT g.heavy FROM "pgivm_triangles"."t_c_degree" g WHERE g."c" = d."c"), st.epsilon = 0),
           h2 = coalesce((SELECT g.heavy FROM "pgivm_triangles"."t_a_degree" g WHERE g."a" = d."a"), st.epsilon = 0),
           new_mult = d.mult + coalesce((SELECT k.mult FROM "pgivm_triangles"."t" k WHERE k."c" = d."c" AND k."a" = d."a"), 0);
    ANALYZE "pgivm_triangles"."t_delta";

    SELECT coalesce(sum(d.mult * l.mult * p.mult), 0) INTO delta_q
      FROM "pgivm_triangles"."t_delta" d JOIN "pgivm_triangles"."r" l ON l."a" = d."a" JOIN "pgivm_triangles"."s" p ON p."b" = l."b" AND p."c" = d."c";
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + delta_q::bigint;
    END IF;

    INSERT INTO "pgivm_triangles"."v_tr" AS v ("c", "b", mult)
    SELECT d."c", l."b", sum(d.mult * l.mult) FROM "pgivm_triangles"."t_delta" d JOIN "pgivm_triangles"."r" l ON l."a" = d."a" AND NOT l.h1 AND l.h2
     WHERE d.h1 AND NOT d.h2
     GROUP BY d."c", l."b" HAVING sum(d.mult * l.mult) <> 0
        ON CONFLICT ("c", "b") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."v_tr" WHERE mult = 0;
    INSERT INTO "pgivm_triangles"."v_st" AS v ("b", "a", mult)
    SELECT p."b", d."a", sum(p.mult * d.mult) FROM "pgivm_triangles"."t_delta" d JOIN "pgivm_triangles"."s" p ON p."c" = d."c" AND p.h1 AND NOT p.h2
     WHERE d.h2 AND NOT d.h1
     GROUP BY p."b", d."a" HAVING sum(p.mult * d.mult) <> 0
        ON CONFLICT ("b", "a") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."v_st" WHERE mult = 0;

    INSERT INTO "pgivm_triangles"."t" AS p ("c", "a", mult, h1, h2) SELECT "c", "a", new_mult, h1, h2 FROM "pgivm_triangles"."t_delta" WHERE new_mult <> 0
        ON CONFLICT ("c", "a") DO UPDATE SET mult = EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."t" p USING "pgivm_triangles"."t_delta" d WHERE d.new_mult = 0 AND p."c" = d."c" AND p."a" = d."a";
    INSERT INTO "pgivm_triangles"."t_c_degree" AS g ("c", degree, heavy)
    SELECT "c", sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(h1)
      FROM "pgivm_triangles"."t_delta" WHERE new_mult = mult OR new_mult = 0 GROUP BY "c"
    ON CONFLICT ("c") DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM "pgivm_triangles"."t_c_degree" g USING "pgivm_triangles"."t_delta" d WHERE g."c" = d."c" AND g.degree = 0;
    INSERT INTO "pgivm_triangles"."t_a_degree" AS g ("a", degree, heavy)
    SELECT "a", sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(h2)
      FROM "pgivm_triangles"."t_delta" WHERE new_mult = mult OR new_mult = 0 GROUP BY "a"
    ON CONFLICT ("a") DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM "pgivm_triangles"."t_a_degree" g USING "pgivm_triangles"."t_delta" d WHERE g."a" = d."a" AND g.degree = 0;
    SELECT coalesce(sum(CASE WHEN new_mult = mult THEN 1 WHEN new_mult = 0 THEN -1 ELSE 0 END), 0)
      INTO size_diff FROM "pgivm_triangles"."t_delta";

    IF NOT "pgivm_triangles"."resize"(st.db_size + size_diff, st.n) THEN
        FOR moving IN
            SELECT g."c" AS value, NOT g.heavy AS to_heavy FROM "pgivm_triangles"."t_c_degree" g
             WHERE g."c" IN (SELECT "c" FROM "pgivm_triangles"."t_delta")
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM "pgivm_triangles"."move_t_c"(moving.value, moving.to_heavy);
        END LOOP;
        FOR moving IN
            SELECT g."a" AS value, NOT g.heavy AS to_heavy FROM "pgivm_triangles"."t_a_degree" g
             WHERE g."a" IN (SELECT "a" FROM "pgivm_triangles"."t_delta")
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM "pgivm_triangles"."move_t_a"(moving.value, moving.to_heavy);
        END LOOP;
    END IF;
    DELETE FROM "pgivm_triangles"."t_delta";
END;
$pgivm$;


-- K emptied after a TRUNCATE of its table (the caller restarts from what remains).
CREATE FUNCTION "pgivm_triangles"."clear_t"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."t";
    DELETE FROM "pgivm_triangles"."t_c_degree";
    DELETE FROM "pgivm_triangles"."t_a_degree";
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
            FOR change IN SELECT changes."a", changes."b", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", new_rows."b" AS "b", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL AND new_rows."b" IS NOT NULL) AS changes GROUP BY changes."a", changes."b" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_r"(change."a", change."b", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."r_delta" ("a", "b", mult) SELECT changes."a", changes."b", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", new_rows."b" AS "b", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL AND new_rows."b" IS NOT NULL) AS changes GROUP BY changes."a", changes."b" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_r"();
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        -- R
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."a", changes."b", sum(changes.m)::bigint AS m FROM (SELECT old_rows."a" AS "a", old_rows."b" AS "b", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL AND old_rows."b" IS NOT NULL) AS changes GROUP BY changes."a", changes."b" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_r"(change."a", change."b", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."r_delta" ("a", "b", mult) SELECT changes."a", changes."b", sum(changes.m)::bigint AS m FROM (SELECT old_rows."a" AS "a", old_rows."b" AS "b", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL AND old_rows."b" IS NOT NULL) AS changes GROUP BY changes."a", changes."b" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_r"();
        END IF;
    ELSE
        -- R
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."a", changes."b", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", new_rows."b" AS "b", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL AND new_rows."b" IS NOT NULL UNION ALL SELECT old_rows."a" AS "a", old_rows."b" AS "b", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL AND old_rows."b" IS NOT NULL) AS changes GROUP BY changes."a", changes."b" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_r"(change."a", change."b", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."r_delta" ("a", "b", mult) SELECT changes."a", changes."b", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", new_rows."b" AS "b", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL AND new_rows."b" IS NOT NULL UNION ALL SELECT old_rows."a" AS "a", old_rows."b" AS "b", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL AND old_rows."b" IS NOT NULL) AS changes GROUP BY changes."a", changes."b" HAVING sum(changes.m) <> 0;
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
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_triangles"."r_delta" ("a", "b", mult) SELECT base."a", base."b", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."a" IS NOT NULL AND base."b" IS NOT NULL GROUP BY 1, 2', TG_RELID::pg_catalog.regclass, TG_RELID);
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
            FOR change IN SELECT changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."b" AS "b", new_rows."c" AS "c", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL AND new_rows."c" IS NOT NULL) AS changes GROUP BY changes."b", changes."c" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_s"(change."b", change."c", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."s_delta" ("b", "c", mult) SELECT changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."b" AS "b", new_rows."c" AS "c", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL AND new_rows."c" IS NOT NULL) AS changes GROUP BY changes."b", changes."c" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_s"();
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        -- S
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT old_rows."b" AS "b", old_rows."c" AS "c", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL AND old_rows."c" IS NOT NULL) AS changes GROUP BY changes."b", changes."c" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_s"(change."b", change."c", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."s_delta" ("b", "c", mult) SELECT changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT old_rows."b" AS "b", old_rows."c" AS "c", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL AND old_rows."c" IS NOT NULL) AS changes GROUP BY changes."b", changes."c" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_s"();
        END IF;
    ELSE
        -- S
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."b" AS "b", new_rows."c" AS "c", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL AND new_rows."c" IS NOT NULL UNION ALL SELECT old_rows."b" AS "b", old_rows."c" AS "c", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL AND old_rows."c" IS NOT NULL) AS changes GROUP BY changes."b", changes."c" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_s"(change."b", change."c", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."s_delta" ("b", "c", mult) SELECT changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."b" AS "b", new_rows."c" AS "c", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL AND new_rows."c" IS NOT NULL UNION ALL SELECT old_rows."b" AS "b", old_rows."c" AS "c", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL AND old_rows."c" IS NOT NULL) AS changes GROUP BY changes."b", changes."c" HAVING sum(changes.m) <> 0;
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
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_triangles"."s_delta" ("b", "c", mult) SELECT base."b", base."c", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."b" IS NOT NULL AND base."c" IS NOT NULL GROUP BY 1, 2', TG_RELID::pg_catalog.regclass, TG_RELID);
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
            FOR change IN SELECT changes."c", changes."a", sum(changes.m)::bigint AS m FROM (SELECT new_rows."c" AS "c", new_rows."a" AS "a", 1 AS m FROM new_rows WHERE new_rows."c" IS NOT NULL AND new_rows."a" IS NOT NULL) AS changes GROUP BY changes."c", changes."a" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_t"(change."c", change."a", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."t_delta" ("c", "a", mult) SELECT changes."c", changes."a", sum(changes.m)::bigint AS m FROM (SELECT new_rows."c" AS "c", new_rows."a" AS "a", 1 AS m FROM new_rows WHERE new_rows."c" IS NOT NULL AND new_rows."a" IS NOT NULL) AS changes GROUP BY changes."c", changes."a" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_t"();
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        -- T
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."c", changes."a", sum(changes.m)::bigint AS m FROM (SELECT old_rows."c" AS "c", old_rows."a" AS "a", -1 AS m FROM old_rows WHERE old_rows."c" IS NOT NULL AND old_rows."a" IS NOT NULL) AS changes GROUP BY changes."c", changes."a" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_t"(change."c", change."a", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."t_delta" ("c", "a", mult) SELECT changes."c", changes."a", sum(changes.m)::bigint AS m FROM (SELECT old_rows."c" AS "c", old_rows."a" AS "a", -1 AS m FROM old_rows WHERE old_rows."c" IS NOT NULL AND old_rows."a" IS NOT NULL) AS changes GROUP BY changes."c", changes."a" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_t"();
        END IF;
    ELSE
        -- T
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."c", changes."a", sum(changes.m)::bigint AS m FROM (SELECT new_rows."c" AS "c", new_rows."a" AS "a", 1 AS m FROM new_rows WHERE new_rows."c" IS NOT NULL AND new_rows."a" IS NOT NULL UNION ALL SELECT old_rows."c" AS "c", old_rows."a" AS "a", -1 AS m FROM old_rows WHERE old_rows."c" IS NOT NULL AND old_rows."a" IS NOT NULL) AS changes GROUP BY changes."c", changes."a" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_t"(change."c", change."a", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."t_delta" ("c", "a", mult) SELECT changes."c", changes."a", sum(changes.m)::bigint AS m FROM (SELECT new_rows."c" AS "c", new_rows."a" AS "a", 1 AS m FROM new_rows WHERE new_rows."c" IS NOT NULL AND new_rows."a" IS NOT NULL UNION ALL SELECT old_rows."c" AS "c", old_rows."a" AS "a", -1 AS m FROM old_rows WHERE old_rows."c" IS NOT NULL AND old_rows."a" IS NOT NULL) AS changes GROUP BY changes."c", changes."a" HAVING sum(changes.m) <> 0;
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
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_triangles"."t_delta" ("c", "a", mult) SELECT base."c", base."a", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."c" IS NOT NULL AND base."a" IS NOT NULL GROUP BY 1, 2', TG_RELID::pg_catalog.regclass, TG_RELID);
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

-- phase: build (2 statements)

WITH "agg_r" ("a", "b", mult) AS MATERIALIZED (SELECT base."a", base."b", count(*) AS mult FROM "public"."r" base WHERE "base".tableoid = 16384::pg_catalog.oid AND base."a" IS NOT NULL AND base."b" IS NOT NULL GROUP BY 1, 2),
     "agg_s" ("b", "c", mult) AS MATERIALIZED (SELECT base."b", base."c", count(*) AS mult FROM "public"."s" base WHERE "base".tableoid = 16385::pg_catalog.oid AND base."b" IS NOT NULL AND base."c" IS NOT NULL GROUP BY 1, 2),
     "agg_t" ("c", "a", mult) AS MATERIALIZED (SELECT base."c", base."a", count(*) AS mult FROM "public"."t" base WHERE "base".tableoid = 16386::pg_catalog.oid AND base."c" IS NOT NULL AND base."a" IS NOT NULL GROUP BY 1, 2),
     th AS (SELECT power((2 * ((SELECT count(*) FROM "agg_r") + (SELECT count(*) FROM "agg_s") + (SELECT count(*) FROM "agg_t")) + 1)::float8, st.epsilon) AS theta, st.epsilon = 0 AS all_heavy FROM "pgivm_triangles"."state" st),
     "load_r" AS (INSERT INTO "pgivm_triangles"."r" ("a", "b", mult, "h1", "h2") SELECT k."a", k."b", k.mult, count(*) OVER (PARTITION BY k."a") >= th.theta OR th.all_heavy, count(*) OVER (PARTITION BY k."b") >= th.theta OR th.all_heavy FROM "agg_r" k, th),
     "load_s" AS (INSERT INTO "pgivm_triangles"."s" ("b", "c", mult, "h1", "h2") SELECT k."b", k."c", k.mult, count(*) OVER (PARTITION BY k."b") >= th.theta OR th.all_heavy, count(*) OVER (PARTITION BY k."c") >= th.theta OR th.all_heavy FROM "agg_s" k, th),
     "load_t" AS (INSERT INTO "pgivm_triangles"."t" ("c", "a", mult, "h1", "h2") SELECT k."c", k."a", k.mult, count(*) OVER (PARTITION BY k."c") >= th.theta OR th.all_heavy, count(*) OVER (PARTITION BY k."a") >= th.theta OR th.all_heavy FROM "agg_t" k, th) SELECT 1;
INSERT INTO "pgivm_triangles"."r_a_degree" ("a", degree, heavy) SELECT "a", count(*), bool_or("h1") FROM "pgivm_triangles"."r" GROUP BY "a";
INSERT INTO "pgivm_triangles"."r_b_degree" ("b", degree, heavy) SELECT "b", count(*), bool_or("h2") FROM "pgivm_triangles"."r" GROUP BY "b";
INSERT INTO "pgivm_triangles"."s_b_degree" ("b", degree, heavy) SELECT "b", count(*), bool_or("h1") FROM "pgivm_triangles"."s" GROUP BY "b";
INSERT INTO "pgivm_triangles"."s_c_degree" ("c", degree, heavy) SELECT "c", count(*), bool_or("h2") FROM "pgivm_triangles"."s" GROUP BY "c";
INSERT INTO "pgivm_triangles"."t_c_degree" ("c", degree, heavy) SELECT "c", count(*), bool_or("h1") FROM "pgivm_triangles"."t" GROUP BY "c";
INSERT INTO "pgivm_triangles"."t_a_degree" ("a", degree, heavy) SELECT "a", count(*), bool_or("h2") FROM "pgivm_triangles"."t" GROUP BY "a";
SELECT "pgivm_triangles"."restart"();

ANALYZE "pgivm_triangles"."r"; ANALYZE "pgivm_triangles"."s"; ANALYZE "pgivm_triangles"."t"; ANALYZE "pgivm_triangles"."r_a_degree"; ANALYZE "pgivm_triangles"."r_b_degree"; ANALYZE "pgivm_triangles"."s_b_degree"; ANALYZE "pgivm_triangles"."s_c_degree"; ANALYZE "pgivm_triangles"."t_c_degree"; ANALYZE "pgivm_triangles"."t_a_degree"; ANALYZE "pgivm_triangles"."v_rs"; ANALYZE "pgivm_triangles"."v_st"; ANALYZE "pgivm_triangles"."v_tr";

-- phase: capture (15 statements)

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

-- phase: expose (2 statements)

CREATE OR REPLACE VIEW "public"."triangles" AS SELECT count AS "count" FROM "pgivm_triangles"."result"; COMMENT ON VIEW "public"."triangles" IS 'pgivm: maintained by IVMε, state in schema pgivm_triangles. Definition: SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a';

REVOKE ALL ON ALL TABLES IN SCHEMA "pgivm_triangles" FROM PUBLIC; REVOKE ALL ON ALL FUNCTIONS IN SCHEMA "pgivm_triangles" FROM PUBLIC;
