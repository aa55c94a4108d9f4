-- pgivm golden install plan: system ivme, case three-path, options {'epsilon': 0.5, 'partitions': 'single', 'batch_threshold': 384}
-- view public.triangles AS SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c
-- regenerate: PGIVM_REGENERATE_GOLDEN=1 python -m pytest tests/systems/test_golden_plans.py

-- phase: state (3 statements)

-- IVMε state shared by the whole view: the maintained count and the threshold bookkeeping.
-- Rendered once per view. Placeholders are quoted identifiers and literals filled in by
-- pgivm.systems.ivme; every name is schema-qualified.

-- (the schema itself: pgivm_catalog.create_state_schema, as the view's owner)
COMMENT ON SCHEMA "pgivm_triangles" IS 'pgivm state of view triangles (strategy ivme, 3-path count, class 3R²): SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c';

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

-- The state of a 3-path count Q = sum over b, c of R(b) S(b,c) T(c), the 3R² class of counts over
-- three relations (Kara et al., long version, Appendix H.3, Figure 22), beside the count and the
-- bookkeeping of 00_view_state.sql. Rendered once per view.
--
-- In the paper's letters (Figure 22 takes A_ST empty) the middle relation is R(a_RT, a_RS), the
-- unpartitioned end T(a_RT) and the other end S(a_RS); here they are S(b,c), R(b) and T(c). The
-- middle is partitioned on the variable it shares with the unpartitioned end (Definition 40:
-- R on A_RT), kept on each tuple as a flag and, per value, in a degree table. The other end would
-- be partitioned on its whole key: every value's degree is 1, so it is light at every epsilon > 0
-- and kept whole (at epsilon = 0 the paper's S_h terms are this state's st_heavy terms, reading all of
-- S either way). The two auxiliary views of Figure 22:
--
--   rs_light(c) = sum_b R(b) S_l(b,c)            (V_RlT: the light B-values' paths into c)
--   st_heavy(b) = sum_c S_h(b,c) T(c)            (V_RhSl: one row per heavy B-value)
--
-- Both are linear in |D| (rs_light has at most one row per tuple of S_l, st_heavy one per heavy value), so
-- the state is linear, as Theorem 37 says of 3R². Every view's entries are nonzero (a partial index
-- finds those an upsert brings to 0).

CREATE TABLE "pgivm_triangles"."r" (b integer PRIMARY KEY, mult bigint NOT NULL);
COMMENT ON TABLE "pgivm_triangles"."r" IS 'IVMε (3-path): R(B), one row per distinct value with its multiplicity';
CREATE TABLE "pgivm_triangles"."t" (c integer PRIMARY KEY, mult bigint NOT NULL);
COMMENT ON TABLE "pgivm_triangles"."t" IS 'IVMε (3-path): T(C), one row per distinct value with its multiplicity';

CREATE TABLE "pgivm_triangles"."s" (
    b    integer NOT NULL,
    c    integer NOT NULL,
    mult bigint NOT NULL,
    hb   boolean NOT NULL,  -- the B-value's part (heavy: degree in S on B >= theta, with the slack of minor rebalancing)
    PRIMARY KEY (b, c) INCLUDE (mult, hb)
);
-- S_h at one C-value: at most one tuple per heavy B-value, fewer than 2 N^(1-eps)
CREATE INDEX ON "pgivm_triangles"."s" (c, b) INCLUDE (mult) WHERE hb;
COMMENT ON TABLE "pgivm_triangles"."s" IS 'IVMε (3-path): S(B,C) partitioned on B, the part as a flag';

CREATE TABLE "pgivm_triangles"."s_b_degree" (b integer PRIMARY KEY, degree bigint NOT NULL, heavy boolean NOT NULL);
COMMENT ON TABLE "pgivm_triangles"."s_b_degree" IS 'IVMε: per B-value of S, its degree (distinct tuples) and its part';

CREATE TABLE "pgivm_triangles"."rs_light" (c integer PRIMARY KEY, mult bigint NOT NULL);
CREATE TABLE "pgivm_triangles"."st_heavy" (b integer PRIMARY KEY, mult bigint NOT NULL);
CREATE INDEX ON "pgivm_triangles"."rs_light" (mult) WHERE mult = 0;
CREATE INDEX ON "pgivm_triangles"."st_heavy" (mult) WHERE mult = 0;
COMMENT ON TABLE "pgivm_triangles"."rs_light" IS 'IVMε (3-path) view V_RlT: sum_b R(b) S_l(b,c)';
COMMENT ON TABLE "pgivm_triangles"."st_heavy" IS 'IVMε (3-path) view V_RhSl: for B-values heavy in S, sum_c S_h(b,c) T(c)';

-- A multi-row statement's net change of each relation, applied set at a time by apply_batch_K: for
-- R, its values' parts in S before the batch (NULL: S has no tuple with it); for S, the parts of
-- its B-values before the batch and each tuple's multiplicity after it.
CREATE TABLE "pgivm_triangles"."r_delta" (b integer NOT NULL, mult bigint NOT NULL, heavy boolean);
CREATE TABLE "pgivm_triangles"."s_delta" (b integer NOT NULL, c integer NOT NULL, mult bigint NOT NULL, hb boolean, new_mult bigint);
CREATE TABLE "pgivm_triangles"."t_delta" (c integer NOT NULL, mult bigint NOT NULL);

-- phase: functions (6 statements)

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

-- Maintenance of the middle relation S(b,c) of a 3-path count (Appendix H.3, Figure 22), partitioned
-- on B, and the view-wide functions: major rebalancing, the views from their definitions, the count
-- from the state, the restart (the size invariant: 48_resize.sql). Rendered once per view.

-- A single-tuple update of S. In the paper's letters an update to R_r (the middle): delta Q =
-- dR_r(alpha) S(alpha_RS) T(alpha_RT), O(1); delta V_RhSl = dR_h S_l(alpha_RS) at a heavy value,
-- delta V_RlT = dR_l T(alpha_RT) at a light one, O(1). Then OnUpdate: |D|, the degree, a minor
-- rebalancing of the B-value.
CREATE FUNCTION "pgivm_triangles"."apply_s"(x_b integer, x_c integer, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st       "pgivm_triangles"."state"%ROWTYPE;
    hb       boolean;  -- routing: the B-value's part (a new value starts light, heavy at eps = 0)
    delta_q  bigint;
    new_mult bigint;
    degree_b bigint;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    hb := coalesce((SELECT d.heavy FROM "pgivm_triangles"."s_b_degree" d WHERE d.b = x_b), st.epsilon = 0);
    delta_q := coalesce((SELECT r.mult FROM "pgivm_triangles"."r" r WHERE r.b = x_b), 0) * coalesce((SELECT t.mult FROM "pgivm_triangles"."t" t WHERE t.c = x_c), 0);
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + m * delta_q;
    END IF;
    PERFORM "pgivm_triangles"."views_s"(x_b, x_c, m, hb);

    -- S(b,c) += m, in the part the flag names; a tuple reaching multiplicity 0 is deleted.
    INSERT INTO "pgivm_triangles"."s" AS p (b, c, mult, hb) VALUES (x_b, x_c, m, hb)
        ON CONFLICT (b, c) DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
    -- The degree and |D| count distinct tuples: only a tuple appearing or vanishing changes them.
    IF new_mult = m THEN
        INSERT INTO "pgivm_triangles"."s_b_degree" AS d (b, degree, heavy) VALUES (x_b, 1, hb)
            ON CONFLICT (b) DO UPDATE SET degree = d.degree + 1 RETURNING degree INTO degree_b;
        IF "pgivm_triangles"."resize"(st.db_size + 1, st.n) THEN
            RETURN;  -- a major rebalancing repartitioned everything
        END IF;
    ELSIF new_mult = 0 THEN
        DELETE FROM "pgivm_triangles"."s" WHERE b = x_b AND c = x_c;
        UPDATE "pgivm_triangles"."s_b_degree" SET degree = degree - 1 WHERE b = x_b AND degree > 1 RETURNING degree INTO degree_b;
        IF NOT FOUND THEN
            DELETE FROM "pgivm_triangles"."s_b_degree" WHERE b = x_b;
            degree_b := 0;
        END IF;
        IF "pgivm_triangles"."resize"(st.db_size - 1, st.n) THEN
            RETURN;
        END IF;
    ELSE
        RETURN;
    END IF;

    -- OnUpdate, minor rebalancing: a value whose degree left [theta/2, 3/2 theta) of its part moves.
    IF NOT hb AND degree_b >= 1.5 * st.theta THEN
        PERFORM "pgivm_triangles"."move_s_b"(x_b, true);
    ELSIF hb AND degree_b > 0 AND degree_b < 0.5 * st.theta THEN
        PERFORM "pgivm_triangles"."move_s_b"(x_b, false);
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_s"(integer, integer, bigint) IS 'IVMε 3R² (Appendix H.3, Figure 22): a single-tuple update of S, the middle';


-- The views' part of a change m of S(b,c) in part hb: st_heavy(b) += m T(c) at a heavy B-value,
-- rs_light(c) += R(b) m at a light one. Reads no tuple of S.
CREATE FUNCTION "pgivm_triangles"."views_s"(x_b integer, x_c integer, m bigint, hb boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    other bigint;
BEGIN
    IF hb THEN
        other := (SELECT t.mult FROM "pgivm_triangles"."t" t WHERE t.c = x_c);
        IF other IS NOT NULL THEN
            INSERT INTO "pgivm_triangles"."st_heavy" AS v (b, mult) VALUES (x_b, m * other) ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
            DELETE FROM "pgivm_triangles"."st_heavy" WHERE mult = 0;
        END IF;
    ELSE
        other := (SELECT r.mult FROM "pgivm_triangles"."r" r WHERE r.b = x_b);
        IF other IS NOT NULL THEN
            INSERT INTO "pgivm_triangles"."rs_light" AS v (c, mult) VALUES (x_c, m * other) ON CONFLICT (c) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
            DELETE FROM "pgivm_triangles"."rs_light" WHERE mult = 0;
        END IF;
    END IF;
END;
$pgivm$;


-- MinorRebalancing on B, set at a time: the value's tuples (< 3/2 theta + 1 of them) leave the old
-- part's view and enter the new one's; the count does not change.
CREATE FUNCTION "pgivm_triangles"."move_s_b"(value integer, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    r_mult bigint := (SELECT r.mult FROM "pgivm_triangles"."r" r WHERE r.b = value);
BEGIN
    IF r_mult IS NOT NULL THEN  -- rs_light(c) -/+= R(b) S(b,c)
        INSERT INTO "pgivm_triangles"."rs_light" AS v (c, mult)
        SELECT k.c, CASE WHEN to_heavy THEN -1 ELSE 1 END * r_mult * k.mult FROM "pgivm_triangles"."s" k WHERE k.b = value
            ON CONFLICT (c) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM "pgivm_triangles"."rs_light" WHERE mult = 0;
    END IF;
    DELETE FROM "pgivm_triangles"."st_heavy" WHERE b = value;
    IF to_heavy THEN  -- st_heavy(b) = sum_c S(b,c) T(c)
        INSERT INTO "pgivm_triangles"."st_heavy" (b, mult)
        SELECT value, sum(k.mult * t.mult) FROM "pgivm_triangles"."s" k JOIN "pgivm_triangles"."t" t ON t.c = k.c WHERE k.b = value
        HAVING sum(k.mult * t.mult) <> 0;
    END IF;
    UPDATE "pgivm_triangles"."s" SET hb = to_heavy WHERE b = value;
    UPDATE "pgivm_triangles"."s_b_degree" SET heavy = to_heavy WHERE b = value;
    UPDATE "pgivm_triangles"."state" SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;


-- A multi-row statement's net change of S, set at a time: every delta on the state before the
-- batch, each tuple routed by its B-value's part before it; then S, the degrees and |D|; then the
-- invariants (a size-invariant violation resets N with a major rebalancing, else every B-value of
-- the batch that crossed a threshold moves).
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
    WITH merged AS (DELETE FROM "pgivm_triangles"."s_delta" RETURNING b, c, mult)
    INSERT INTO "pgivm_triangles"."s_delta" (b, c, mult) SELECT b, c, sum(mult) FROM merged GROUP BY b, c HAVING sum(mult) <> 0;
    UPDATE "pgivm_triangles"."s_delta" d
       SET hb = coalesce((SELECT g.heavy FROM "pgivm_triangles"."s_b_degree" g WHERE g.b = d.b), st.epsilon = 0),
           new_mult = d.mult + coalesce((SELECT k.mult FROM "pgivm_triangles"."s" k WHERE k.b = d.b AND k.c = d.c), 0);
    ANALYZE "pgivm_triangles"."s_delta";

    SELECT coalesce(sum(d.mult * r.mult * t.mult), 0) INTO delta_q
      FROM "pgivm_triangles"."s_delta" d JOIN "pgivm_triangles"."r" r ON r.b = d.b JOIN "pgivm_triangles"."t" t ON t.c = d.c;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + delta_q::bigint;
    END IF;
    INSERT INTO "pgivm_triangles"."st_heavy" AS v (b, mult)
    SELECT d.b, sum(d.mult * t.mult) FROM "pgivm_triangles"."s_delta" d JOIN "pgivm_triangles"."t" t ON t.c = d.c WHERE d.hb
     GROUP BY d.b HAVING sum(d.mult * t.mult) <> 0
        ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."st_heavy" WHERE mult = 0;
    INSERT INTO "pgivm_triangles"."rs_light" AS v (c, mult)
    SELECT d.c, sum(d.mult * r.mult) FROM "pgivm_triangles"."s_delta" d JOIN "pgivm_triangles"."r" r ON r.b = d.b WHERE NOT d.hb
     GROUP BY d.c HAVING sum(d.mult * r.mult) <> 0
        ON CONFLICT (c) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."rs_light" WHERE mult = 0;

    -- The batch into S: new tuples inserted, changed ones updated, vanished ones deleted.
    INSERT INTO "pgivm_triangles"."s" AS p (b, c, mult, hb) SELECT b, c, new_mult, hb FROM "pgivm_triangles"."s_delta" WHERE new_mult <> 0
        ON CONFLICT (b, c) DO UPDATE SET mult = EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."s" p USING "pgivm_triangles"."s_delta" d WHERE d.new_mult = 0 AND p.b = d.b AND p.c = d.c;

    -- Degrees and |D|: +1 per tuple that appeared, -1 per tuple that vanished.
    INSERT INTO "pgivm_triangles"."s_b_degree" AS g (b, degree, heavy)
    SELECT b, sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(hb)
      FROM "pgivm_triangles"."s_delta" WHERE new_mult = mult OR new_mult = 0 GROUP BY b
    ON CONFLICT (b) DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM "pgivm_triangles"."s_b_degree" g USING "pgivm_triangles"."s_delta" d WHERE g.b = d.b AND g.degree = 0;
    SELECT coalesce(sum(CASE WHEN new_mult = mult THEN 1 WHEN new_mult = 0 THEN -1 ELSE 0 END), 0)
      INTO size_diff FROM "pgivm_triangles"."s_delta";

    IF NOT "pgivm_triangles"."resize"(st.db_size + size_diff, st.n) THEN
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


-- S emptied after a TRUNCATE of its table (the caller restarts from what remains).
CREATE FUNCTION "pgivm_triangles"."clear_s"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."s";
    DELETE FROM "pgivm_triangles"."s_b_degree";
END;
$pgivm$;


-- MajorRebalancing: theta = N^epsilon, S strictly repartitioned on B (heavy iff degree >= theta),
-- both views recomputed.
CREATE FUNCTION "pgivm_triangles"."major_rebalance"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
DECLARE
    st "pgivm_triangles"."state"%ROWTYPE;
BEGIN
    UPDATE "pgivm_triangles"."state" SET theta = power(n::float8, epsilon), major_rebalances = major_rebalances + 1 RETURNING * INTO st;
    UPDATE "pgivm_triangles"."s_b_degree" SET heavy = (degree >= st.theta OR st.epsilon = 0) WHERE heavy <> (degree >= st.theta OR st.epsilon = 0);
    UPDATE "pgivm_triangles"."s" k SET hb = d.heavy FROM "pgivm_triangles"."s_b_degree" d WHERE d.b = k.b AND k.hb <> d.heavy;
    PERFORM "pgivm_triangles"."recompute_views"();
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."major_rebalance"() IS 'IVMε MajorRebalancing (3R²): strict repartition at theta = N^epsilon, both views recomputed';


-- Both auxiliary views from their definitions over the parts (92_tp_tables.sql), set at a time.
CREATE FUNCTION "pgivm_triangles"."recompute_views"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."rs_light";
    INSERT INTO "pgivm_triangles"."rs_light" (c, mult)
    SELECT k.c, sum(r.mult * k.mult) FROM "pgivm_triangles"."s" k JOIN "pgivm_triangles"."r" r ON r.b = k.b WHERE NOT k.hb GROUP BY k.c HAVING sum(r.mult * k.mult) <> 0;
    DELETE FROM "pgivm_triangles"."st_heavy";
    INSERT INTO "pgivm_triangles"."st_heavy" (b, mult)
    SELECT k.b, sum(k.mult * t.mult) FROM "pgivm_triangles"."s" k JOIN "pgivm_triangles"."t" t ON t.c = k.c WHERE k.hb GROUP BY k.b HAVING sum(k.mult * t.mult) <> 0;
END;
$pgivm$;


-- The count from the state: S's tuples each with R and T at its values (one row each), linear in
-- |D|. Used by the build, TRUNCATE and verify; the query is COUNT in pgivm/systems/ivme/three_path.py
-- (the Spark build runs it too).
CREATE FUNCTION "pgivm_triangles"."count_from_state"()
RETURNS bigint LANGUAGE sql SECURITY DEFINER STABLE
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
    SELECT coalesce((SELECT sum(r.mult * k.mult * t.mult) FROM "pgivm_triangles"."s" k JOIN "pgivm_triangles"."r" r ON r.b = k.b JOIN "pgivm_triangles"."t" t ON t.c = k.c), 0)::bigint
$pgivm$;


-- Preprocessing: N = 2|D| + 1, the strict partition, the views, the count.
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

-- Maintenance of the ends of a 3-path count (Appendix H.3, Figure 22's delta strategies; the
-- views in 92_tp_tables.sql): R(b), next to the partitioned variable, and T(c). Rendered once per
-- view. Every delta reads the state before the update; R and T appear in no term of their own.

-- A single-tuple update of R. In the paper's letters an update to T (the unpartitioned end):
-- delta Q_RlST = dT sum R_l(alpha, a_RS) S(a_RS), O(N^eps) at a light value, and
-- delta Q_RhST = dT V_RhSl(alpha), O(1) at a heavy one; delta V_RlT = dT R_l(alpha, a_RS).
CREATE FUNCTION "pgivm_triangles"."apply_r"(b_value integer, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st       "pgivm_triangles"."state"%ROWTYPE;
    heavy    boolean;  -- the value's part in S (NULL: S has no tuple with it, and no path goes through it)
    delta_q  bigint := 0;
    new_mult bigint;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    SELECT d.heavy INTO heavy FROM "pgivm_triangles"."s_b_degree" d WHERE d.b = b_value;
    IF heavy THEN
        delta_q := coalesce((SELECT v.mult FROM "pgivm_triangles"."st_heavy" v WHERE v.b = b_value), 0);
    ELSIF NOT heavy THEN
        -- A light value's S-tuples (< 3/2 N^eps), each with T at its C-value; rs_light(c) += m S_l(b,c).
        delta_q := coalesce((SELECT sum(k.mult * (SELECT t.mult FROM "pgivm_triangles"."t" t WHERE t.c = k.c))
                               FROM "pgivm_triangles"."s" k WHERE k.b = b_value), 0);
        INSERT INTO "pgivm_triangles"."rs_light" AS v (c, mult) SELECT k.c, m * k.mult FROM "pgivm_triangles"."s" k WHERE k.b = b_value
            ON CONFLICT (c) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
        DELETE FROM "pgivm_triangles"."rs_light" WHERE mult = 0;
    END IF;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + m * delta_q;
    END IF;

    -- R(b) += m; |D| counts distinct tuples, so only a value appearing or vanishing changes it.
    INSERT INTO "pgivm_triangles"."r" AS p (b, mult) VALUES (b_value, m)
        ON CONFLICT (b) DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
    IF new_mult = 0 THEN
        DELETE FROM "pgivm_triangles"."r" WHERE b = b_value;
        PERFORM "pgivm_triangles"."resize"(st.db_size - 1, st.n);
    ELSIF new_mult = m THEN
        PERFORM "pgivm_triangles"."resize"(st.db_size + 1, st.n);
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_r"(integer, bigint) IS 'IVMε 3R² (Appendix H.3, Figure 22): a single-tuple update of R, the end next to the partitioned variable';


-- A single-tuple update of T. In the paper's letters an update to S (the end partitioned on its
-- whole key): delta Q = dS (V_RlT(alpha) + sum R_h(a_RT, alpha) T(a_RT)), the sum over the heavy
-- B-values (< 2 N^(1-eps)), and delta V_RhSl(a_RT) = dS R_h(a_RT, alpha) over the same tuples,
-- read once for both through S's partial index on (c, b) WHERE hb.
CREATE FUNCTION "pgivm_triangles"."apply_t"(c_value integer, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st       "pgivm_triangles"."state"%ROWTYPE;
    delta_q  bigint;
    new_mult bigint;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    WITH h AS MATERIALIZED (
        SELECT k.b, k.mult FROM "pgivm_triangles"."s" k WHERE k.c = c_value AND k.hb
    ), v AS (
        INSERT INTO "pgivm_triangles"."st_heavy" AS v (b, mult) SELECT h.b, m * h.mult FROM h
            ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult
    )
    SELECT coalesce((SELECT v.mult FROM "pgivm_triangles"."rs_light" v WHERE v.c = c_value), 0)
         + coalesce(sum(h.mult * (SELECT r.mult FROM "pgivm_triangles"."r" r WHERE r.b = h.b)), 0)
      INTO delta_q FROM h;
    DELETE FROM "pgivm_triangles"."st_heavy" WHERE mult = 0;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + m * delta_q;
    END IF;

    INSERT INTO "pgivm_triangles"."t" AS p (c, mult) VALUES (c_value, m)
        ON CONFLICT (c) DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
    IF new_mult = 0 THEN
        DELETE FROM "pgivm_triangles"."t" WHERE c = c_value;
        PERFORM "pgivm_triangles"."resize"(st.db_size - 1, st.n);
    ELSIF new_mult = m THEN
        PERFORM "pgivm_triangles"."resize"(st.db_size + 1, st.n);
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_t"(integer, bigint) IS 'IVMε 3R² (Appendix H.3, Figure 22): a single-tuple update of T, the other end';


-- A multi-row statement's net change of R, set at a time: the same terms for every value of the
-- batch at once, on the state before it, then rs_light, then R and |D|.
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
    -- One row per distinct value (a deferred refresh may hand several), with its part in S.
    WITH merged AS (DELETE FROM "pgivm_triangles"."r_delta" RETURNING b, mult)
    INSERT INTO "pgivm_triangles"."r_delta" (b, mult) SELECT b, sum(mult) FROM merged GROUP BY b HAVING sum(mult) <> 0;
    UPDATE "pgivm_triangles"."r_delta" d SET heavy = (SELECT g.heavy FROM "pgivm_triangles"."s_b_degree" g WHERE g.b = d.b);
    ANALYZE "pgivm_triangles"."r_delta";

    SELECT coalesce((SELECT sum(d.mult * v.mult) FROM "pgivm_triangles"."r_delta" d JOIN "pgivm_triangles"."st_heavy" v ON v.b = d.b WHERE d.heavy), 0)
         + coalesce((SELECT sum(d.mult * k.mult * t.mult) FROM "pgivm_triangles"."r_delta" d JOIN "pgivm_triangles"."s" k ON k.b = d.b
                       JOIN "pgivm_triangles"."t" t ON t.c = k.c WHERE NOT d.heavy), 0)
      INTO delta_q;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + delta_q::bigint;
    END IF;
    INSERT INTO "pgivm_triangles"."rs_light" AS v (c, mult)
    SELECT k.c, sum(d.mult * k.mult) FROM "pgivm_triangles"."r_delta" d JOIN "pgivm_triangles"."s" k ON k.b = d.b WHERE NOT d.heavy
     GROUP BY k.c HAVING sum(d.mult * k.mult) <> 0
        ON CONFLICT (c) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."rs_light" WHERE mult = 0;

    WITH changed AS (
        INSERT INTO "pgivm_triangles"."r" AS p (b, mult) SELECT b, mult FROM "pgivm_triangles"."r_delta"
            ON CONFLICT (b) DO UPDATE SET mult = p.mult + EXCLUDED.mult
        RETURNING p.b, p.mult AS new_mult)
    SELECT coalesce(sum(CASE WHEN c.new_mult = 0 THEN -1 WHEN c.new_mult = d.mult THEN 1 ELSE 0 END), 0)
      INTO size_diff FROM changed c JOIN "pgivm_triangles"."r_delta" d ON d.b = c.b;
    DELETE FROM "pgivm_triangles"."r" WHERE mult = 0;
    DELETE FROM "pgivm_triangles"."r_delta";
    IF size_diff <> 0 THEN
        PERFORM "pgivm_triangles"."resize"(st.db_size + size_diff, st.n);
    END IF;
END;
$pgivm$;


-- A multi-row statement's net change of T, set at a time.
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
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    WITH merged AS (DELETE FROM "pgivm_triangles"."t_delta" RETURNING c, mult)
    INSERT INTO "pgivm_triangles"."t_delta" (c, mult) SELECT c, sum(mult) FROM merged GROUP BY c HAVING sum(mult) <> 0;
    ANALYZE "pgivm_triangles"."t_delta";

    SELECT coalesce((SELECT sum(d.mult * v.mult) FROM "pgivm_triangles"."t_delta" d JOIN "pgivm_triangles"."rs_light" v ON v.c = d.c), 0)
         + coalesce((SELECT sum(d.mult * k.mult * r.mult) FROM "pgivm_triangles"."t_delta" d JOIN "pgivm_triangles"."s" k ON k.c = d.c AND k.hb
                       JOIN "pgivm_triangles"."r" r ON r.b = k.b), 0)
      INTO delta_q;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + delta_q::bigint;
    END IF;
    INSERT INTO "pgivm_triangles"."st_heavy" AS v (b, mult)
    SELECT k.b, sum(d.mult * k.mult) FROM "pgivm_triangles"."t_delta" d JOIN "pgivm_triangles"."s" k ON k.c = d.c AND k.hb
     GROUP BY k.b HAVING sum(d.mult * k.mult) <> 0
        ON CONFLICT (b) DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."st_heavy" WHERE mult = 0;

    WITH changed AS (
        INSERT INTO "pgivm_triangles"."t" AS p (c, mult) SELECT c, mult FROM "pgivm_triangles"."t_delta"
            ON CONFLICT (c) DO UPDATE SET mult = p.mult + EXCLUDED.mult
        RETURNING p.c, p.mult AS new_mult)
    SELECT coalesce(sum(CASE WHEN x.new_mult = 0 THEN -1 WHEN x.new_mult = d.mult THEN 1 ELSE 0 END), 0)
      INTO size_diff FROM changed x JOIN "pgivm_triangles"."t_delta" d ON d.c = x.c;
    DELETE FROM "pgivm_triangles"."t" WHERE mult = 0;
    DELETE FROM "pgivm_triangles"."t_delta";
    IF size_diff <> 0 THEN
        PERFORM "pgivm_triangles"."resize"(st.db_size + size_diff, st.n);
    END IF;
END;
$pgivm$;


-- R and T emptied after a TRUNCATE of their table (the caller restarts from what remains).
CREATE FUNCTION "pgivm_triangles"."clear_r"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."r";
END;
$pgivm$;

CREATE FUNCTION "pgivm_triangles"."clear_t"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."t";
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
            FOR change IN SELECT changes."b", sum(changes.m)::bigint AS m FROM (SELECT new_rows."b" AS "b", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL) AS changes GROUP BY changes."b" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_r"(change."b", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."r_delta" ("b", mult) SELECT changes."b", sum(changes.m)::bigint AS m FROM (SELECT new_rows."b" AS "b", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL) AS changes GROUP BY changes."b" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_r"();
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        -- R
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."b", sum(changes.m)::bigint AS m FROM (SELECT old_rows."b" AS "b", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL) AS changes GROUP BY changes."b" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_r"(change."b", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."r_delta" ("b", mult) SELECT changes."b", sum(changes.m)::bigint AS m FROM (SELECT old_rows."b" AS "b", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL) AS changes GROUP BY changes."b" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_r"();
        END IF;
    ELSE
        -- R
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."b", sum(changes.m)::bigint AS m FROM (SELECT new_rows."b" AS "b", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL UNION ALL SELECT old_rows."b" AS "b", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL) AS changes GROUP BY changes."b" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_r"(change."b", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."r_delta" ("b", mult) SELECT changes."b", sum(changes.m)::bigint AS m FROM (SELECT new_rows."b" AS "b", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL UNION ALL SELECT old_rows."b" AS "b", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL) AS changes GROUP BY changes."b" HAVING sum(changes.m) <> 0;
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
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_triangles"."r_delta" ("b", mult) SELECT base."b", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."b" IS NOT NULL GROUP BY 1', TG_RELID::pg_catalog.regclass, TG_RELID);
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
            FOR change IN SELECT changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."c" AS "c", 1 AS m FROM new_rows WHERE new_rows."c" IS NOT NULL) AS changes GROUP BY changes."c" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_t"(change."c", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."t_delta" ("c", mult) SELECT changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."c" AS "c", 1 AS m FROM new_rows WHERE new_rows."c" IS NOT NULL) AS changes GROUP BY changes."c" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_t"();
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        -- T
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."c", sum(changes.m)::bigint AS m FROM (SELECT old_rows."c" AS "c", -1 AS m FROM old_rows WHERE old_rows."c" IS NOT NULL) AS changes GROUP BY changes."c" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_t"(change."c", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."t_delta" ("c", mult) SELECT changes."c", sum(changes.m)::bigint AS m FROM (SELECT old_rows."c" AS "c", -1 AS m FROM old_rows WHERE old_rows."c" IS NOT NULL) AS changes GROUP BY changes."c" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_t"();
        END IF;
    ELSE
        -- T
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."c" AS "c", 1 AS m FROM new_rows WHERE new_rows."c" IS NOT NULL UNION ALL SELECT old_rows."c" AS "c", -1 AS m FROM old_rows WHERE old_rows."c" IS NOT NULL) AS changes GROUP BY changes."c" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_t"(change."c", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."t_delta" ("c", mult) SELECT changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."c" AS "c", 1 AS m FROM new_rows WHERE new_rows."c" IS NOT NULL UNION ALL SELECT old_rows."c" AS "c", -1 AS m FROM old_rows WHERE old_rows."c" IS NOT NULL) AS changes GROUP BY changes."c" HAVING sum(changes.m) <> 0;
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
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_triangles"."t_delta" ("c", mult) SELECT base."c", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."c" IS NOT NULL GROUP BY 1', TG_RELID::pg_catalog.regclass, TG_RELID);
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

INSERT INTO "pgivm_triangles"."r" ("b", mult) SELECT base."b", count(*) AS mult FROM "public"."r" base WHERE "base".tableoid = 16384::pg_catalog.oid AND base."b" IS NOT NULL GROUP BY 1;
INSERT INTO "pgivm_triangles"."t" ("c", mult) SELECT base."c", count(*) AS mult FROM "public"."t" base WHERE "base".tableoid = 16386::pg_catalog.oid AND base."c" IS NOT NULL GROUP BY 1;
WITH "agg_s" ("b", "c", mult) AS MATERIALIZED (SELECT base."b", base."c", count(*) AS mult FROM "public"."s" base WHERE "base".tableoid = 16385::pg_catalog.oid AND base."b" IS NOT NULL AND base."c" IS NOT NULL GROUP BY 1, 2),
     th AS (SELECT power((2 * ((SELECT count(*) FROM "agg_s") + (SELECT count(*) FROM "pgivm_triangles"."r") + (SELECT count(*) FROM "pgivm_triangles"."t")) + 1)::float8, st.epsilon) AS theta, st.epsilon = 0 AS all_heavy FROM "pgivm_triangles"."state" st),
     "load_s" AS (INSERT INTO "pgivm_triangles"."s" ("b", "c", mult, "hb") SELECT k."b", k."c", k.mult, count(*) OVER (PARTITION BY k."b") >= th.theta OR th.all_heavy FROM "agg_s" k, th) SELECT 1;
INSERT INTO "pgivm_triangles"."s_b_degree" ("b", degree, heavy) SELECT "b", count(*), bool_or("hb") FROM "pgivm_triangles"."s" GROUP BY "b";
SELECT "pgivm_triangles"."restart"();

ANALYZE "pgivm_triangles"."r"; ANALYZE "pgivm_triangles"."s"; ANALYZE "pgivm_triangles"."t"; ANALYZE "pgivm_triangles"."s_b_degree"; ANALYZE "pgivm_triangles"."rs_light"; ANALYZE "pgivm_triangles"."st_heavy";

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

CREATE OR REPLACE VIEW "public"."triangles" AS SELECT count AS "count" FROM "pgivm_triangles"."result"; COMMENT ON VIEW "public"."triangles" IS 'pgivm: maintained by IVMε, state in schema pgivm_triangles. Definition: SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c';

REVOKE ALL ON ALL TABLES IN SCHEMA "pgivm_triangles" FROM PUBLIC; REVOKE ALL ON ALL FUNCTIONS IN SCHEMA "pgivm_triangles" FROM PUBLIC;
