-- pgivm golden install plan: system ivme, case edge, options {'epsilon': 0.5, 'partitions': 'single', 'batch_threshold': 384}
-- view public.triangles AS SELECT count(*) FROM e AS x JOIN e AS y ON x.dst = y.src JOIN e AS z ON y.dst = z.src AND z.dst = x.src
-- regenerate: PGIVM_REGENERATE_GOLDEN=1 python -m pytest tests/systems/test_golden_plans.py

-- phase: state (5 statements)

-- IVMε state shared by the whole view: the maintained count and the threshold bookkeeping.
-- Rendered once per view. Placeholders are quoted identifiers and literals filled in by
-- pgivm.systems.ivme; every name is schema-qualified.

-- (the schema itself: pgivm_catalog.create_state_schema, as the view's owner)
COMMENT ON SCHEMA "pgivm_triangles" IS 'pgivm state of view triangles (strategy ivme): SELECT count(*) FROM e AS x JOIN e AS y ON x.dst = y.src JOIN e AS z ON y.dst = z.src AND z.dst = x.src';

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

-- The state of one relation K(X,Y) of the cycle R(A,B) -> S(B,C) -> T(C,A), partitioned on X.
-- Rendered three times by rotation: K = R, S, T with L the next relation and M the previous one.
--
--   K_heavy  tuples whose X-value is heavy (degree >= theta/2; >= theta right after a major rebalancing)
--   K_light  tuples whose X-value is light (degree < 3/2 theta; < theta right after a major rebalancing)
--   K_degree per X-value: its degree in K (distinct tuples) and which part holds it
--   V_KL     the auxiliary view V_KL(X,Z) = sum_Y K_heavy(X,Y) * L_light(Y,Z)
--
-- Tuples carry their multiplicity (a bag); rows whose multiplicity reaches 0 are deleted.

CREATE TABLE "pgivm_triangles"."r_heavy" (
    "a"  bigint NOT NULL,
    "b"  bigint NOT NULL,
    mult bigint NOT NULL,  -- never 0 once a maintenance statement ends (verify checks it)
    PRIMARY KEY ("a", "b") INCLUDE (mult)  -- the delta loops' scans and probes read the index alone
);
-- An update (alpha, beta) to the next relation L scans K_heavy by its second column: at most 2 N^(1-eps) rows.
CREATE INDEX ON "pgivm_triangles"."r_heavy" ("b", "a") INCLUDE (mult);
COMMENT ON TABLE "pgivm_triangles"."r_heavy" IS 'IVMε: heavy part of R(A,B), tuples whose A-value has high degree';

CREATE TABLE "pgivm_triangles"."r_light" (
    "a"  bigint NOT NULL,
    "b"  bigint NOT NULL,
    mult bigint NOT NULL,  -- never 0 once a maintenance statement ends (verify checks it)
    PRIMARY KEY ("a", "b") INCLUDE (mult)  -- the delta loops' scans and probes read the index alone
);
-- ... and K_light by its second column, merged with L_light(y, .) when K_light(., y) is short.
CREATE INDEX ON "pgivm_triangles"."r_light" ("b", "a") INCLUDE (mult);
COMMENT ON TABLE "pgivm_triangles"."r_light" IS 'IVMε: light part of R(A,B), tuples whose A-value has low degree';

CREATE TABLE "pgivm_triangles"."r_degree" (
    "a"    bigint PRIMARY KEY,
    degree bigint NOT NULL,  -- > 0 once a maintenance statement ends (verify checks it)
    heavy  boolean NOT NULL
);
COMMENT ON TABLE "pgivm_triangles"."r_degree" IS 'IVMε: per A-value of R, its degree (distinct tuples) and whether it is heavy';

CREATE TABLE "pgivm_triangles"."v_rs" (
    "a"  bigint NOT NULL,
    "c"  bigint NOT NULL,
    mult bigint NOT NULL,  -- an upsert may pass through 0; the maintenance deletes such rows at once
    PRIMARY KEY ("a", "c")
);
COMMENT ON TABLE "pgivm_triangles"."v_rs" IS 'IVMε auxiliary view V_RS(A,C) = sum_B R_heavy * S_light; serves updates to T';

-- A multi-row statement's net change of K, applied set at a time by apply_batch_K (25_relation_batch.sql).
CREATE TABLE "pgivm_triangles"."r_delta" (
    "a"      bigint NOT NULL,
    "b"      bigint NOT NULL,
    mult     bigint NOT NULL,  -- net change of the tuple's multiplicity in the statement (never 0)
    heavy    boolean,          -- the part the tuple goes to (alpha's part before the batch)
    new_mult bigint,           -- its multiplicity after the batch (0: it vanished; = mult: it is new)
    PRIMARY KEY ("a", "b")
) WITH (fillfactor = 50);  -- room on every page for the one in-place (HOT) update of each row below
COMMENT ON TABLE "pgivm_triangles"."r_delta" IS 'pgivm scratch: the net change of R by the current multi-row statement';

-- The state of one relation K(X,Y) of the cycle R(A,B) -> S(B,C) -> T(C,A), partitioned on X.
-- Rendered three times by rotation: K = R, S, T with L the next relation and M the previous one.
--
--   K_heavy  tuples whose X-value is heavy (degree >= theta/2; >= theta right after a major rebalancing)
--   K_light  tuples whose X-value is light (degree < 3/2 theta; < theta right after a major rebalancing)
--   K_degree per X-value: its degree in K (distinct tuples) and which part holds it
--   V_KL     the auxiliary view V_KL(X,Z) = sum_Y K_heavy(X,Y) * L_light(Y,Z)
--
-- Tuples carry their multiplicity (a bag); rows whose multiplicity reaches 0 are deleted.

CREATE TABLE "pgivm_triangles"."s_heavy" (
    "b"  bigint NOT NULL,
    "c"  bigint NOT NULL,
    mult bigint NOT NULL,  -- never 0 once a maintenance statement ends (verify checks it)
    PRIMARY KEY ("b", "c") INCLUDE (mult)  -- the delta loops' scans and probes read the index alone
);
-- An update (alpha, beta) to the next relation L scans K_heavy by its second column: at most 2 N^(1-eps) rows.
CREATE INDEX ON "pgivm_triangles"."s_heavy" ("c", "b") INCLUDE (mult);
COMMENT ON TABLE "pgivm_triangles"."s_heavy" IS 'IVMε: heavy part of S(B,C), tuples whose B-value has high degree';

CREATE TABLE "pgivm_triangles"."s_light" (
    "b"  bigint NOT NULL,
    "c"  bigint NOT NULL,
    mult bigint NOT NULL,  -- never 0 once a maintenance statement ends (verify checks it)
    PRIMARY KEY ("b", "c") INCLUDE (mult)  -- the delta loops' scans and probes read the index alone
);
-- ... and K_light by its second column, merged with L_light(y, .) when K_light(., y) is short.
CREATE INDEX ON "pgivm_triangles"."s_light" ("c", "b") INCLUDE (mult);
COMMENT ON TABLE "pgivm_triangles"."s_light" IS 'IVMε: light part of S(B,C), tuples whose B-value has low degree';

CREATE TABLE "pgivm_triangles"."s_degree" (
    "b"    bigint PRIMARY KEY,
    degree bigint NOT NULL,  -- > 0 once a maintenance statement ends (verify checks it)
    heavy  boolean NOT NULL
);
COMMENT ON TABLE "pgivm_triangles"."s_degree" IS 'IVMε: per B-value of S, its degree (distinct tuples) and whether it is heavy';

CREATE TABLE "pgivm_triangles"."v_st" (
    "b"  bigint NOT NULL,
    "a"  bigint NOT NULL,
    mult bigint NOT NULL,  -- an upsert may pass through 0; the maintenance deletes such rows at once
    PRIMARY KEY ("b", "a")
);
COMMENT ON TABLE "pgivm_triangles"."v_st" IS 'IVMε auxiliary view V_ST(B,A) = sum_C S_heavy * T_light; serves updates to R';

-- A multi-row statement's net change of K, applied set at a time by apply_batch_K (25_relation_batch.sql).
CREATE TABLE "pgivm_triangles"."s_delta" (
    "b"      bigint NOT NULL,
    "c"      bigint NOT NULL,
    mult     bigint NOT NULL,  -- net change of the tuple's multiplicity in the statement (never 0)
    heavy    boolean,          -- the part the tuple goes to (alpha's part before the batch)
    new_mult bigint,           -- its multiplicity after the batch (0: it vanished; = mult: it is new)
    PRIMARY KEY ("b", "c")
) WITH (fillfactor = 50);  -- room on every page for the one in-place (HOT) update of each row below
COMMENT ON TABLE "pgivm_triangles"."s_delta" IS 'pgivm scratch: the net change of S by the current multi-row statement';

-- The state of one relation K(X,Y) of the cycle R(A,B) -> S(B,C) -> T(C,A), partitioned on X.
-- Rendered three times by rotation: K = R, S, T with L the next relation and M the previous one.
--
--   K_heavy  tuples whose X-value is heavy (degree >= theta/2; >= theta right after a major rebalancing)
--   K_light  tuples whose X-value is light (degree < 3/2 theta; < theta right after a major rebalancing)
--   K_degree per X-value: its degree in K (distinct tuples) and which part holds it
--   V_KL     the auxiliary view V_KL(X,Z) = sum_Y K_heavy(X,Y) * L_light(Y,Z)
--
-- Tuples carry their multiplicity (a bag); rows whose multiplicity reaches 0 are deleted.

CREATE TABLE "pgivm_triangles"."t_heavy" (
    "c"  bigint NOT NULL,
    "a"  bigint NOT NULL,
    mult bigint NOT NULL,  -- never 0 once a maintenance statement ends (verify checks it)
    PRIMARY KEY ("c", "a") INCLUDE (mult)  -- the delta loops' scans and probes read the index alone
);
-- An update (alpha, beta) to the next relation L scans K_heavy by its second column: at most 2 N^(1-eps) rows.
CREATE INDEX ON "pgivm_triangles"."t_heavy" ("a", "c") INCLUDE (mult);
COMMENT ON TABLE "pgivm_triangles"."t_heavy" IS 'IVMε: heavy part of T(C,A), tuples whose C-value has high degree';

CREATE TABLE "pgivm_triangles"."t_light" (
    "c"  bigint NOT NULL,
    "a"  bigint NOT NULL,
    mult bigint NOT NULL,  -- never 0 once a maintenance statement ends (verify checks it)
    PRIMARY KEY ("c", "a") INCLUDE (mult)  -- the delta loops' scans and probes read the index alone
);
-- ... and K_light by its second column, merged with L_light(y, .) when K_light(., y) is short.
CREATE INDEX ON "pgivm_triangles"."t_light" ("a", "c") INCLUDE (mult);
COMMENT ON TABLE "pgivm_triangles"."t_light" IS 'IVMε: light part of T(C,A), tuples whose C-value has low degree';

CREATE TABLE "pgivm_triangles"."t_degree" (
    "c"    bigint PRIMARY KEY,
    degree bigint NOT NULL,  -- > 0 once a maintenance statement ends (verify checks it)
    heavy  boolean NOT NULL
);
COMMENT ON TABLE "pgivm_triangles"."t_degree" IS 'IVMε: per C-value of T, its degree (distinct tuples) and whether it is heavy';

CREATE TABLE "pgivm_triangles"."v_tr" (
    "c"  bigint NOT NULL,
    "b"  bigint NOT NULL,
    mult bigint NOT NULL,  -- an upsert may pass through 0; the maintenance deletes such rows at once
    PRIMARY KEY ("c", "b")
);
COMMENT ON TABLE "pgivm_triangles"."v_tr" IS 'IVMε auxiliary view V_TR(C,B) = sum_A T_heavy * R_light; serves updates to S';

-- A multi-row statement's net change of K, applied set at a time by apply_batch_K (25_relation_batch.sql).
CREATE TABLE "pgivm_triangles"."t_delta" (
    "c"      bigint NOT NULL,
    "a"      bigint NOT NULL,
    mult     bigint NOT NULL,  -- net change of the tuple's multiplicity in the statement (never 0)
    heavy    boolean,          -- the part the tuple goes to (alpha's part before the batch)
    new_mult bigint,           -- its multiplicity after the batch (0: it vanished; = mult: it is new)
    PRIMARY KEY ("c", "a")
) WITH (fillfactor = 50);  -- room on every page for the one in-place (HOT) update of each row below
COMMENT ON TABLE "pgivm_triangles"."t_delta" IS 'pgivm scratch: the net change of T by the current multi-row statement';

-- phase: functions (11 statements)

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

CREATE FUNCTION "pgivm_triangles"."apply_r"(alpha bigint, beta bigint, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st           "pgivm_triangles"."state"%ROWTYPE;
    alpha_heavy  boolean;  -- routing: is alpha in pi_X K_heavy?
    beta_heavy   boolean;  -- beta's part in L; NULL when beta does not occur in L
    beta_degree  bigint;   -- |L(beta, .)|
    partners     bigint;   -- |M_light(., alpha)| or |M_heavy(., alpha)|, counted up to merge_limit
    merge_limit  bigint;
    delta_q      bigint := 0;
    new_mult     bigint;
    new_degree   bigint;
    zeros_z      bigint[];  -- view entries this update brought to 0, deleted by key
BEGIN
    -- OnUpdate routing: to K_heavy iff alpha is heavy (or epsilon = 0); a new value starts light.
    SELECT s.*, ka.heavy, lb.heavy, lb.degree
      INTO st.singleton, st.epsilon, st.n, st.theta, st.db_size, st.updates_applied, st.major_rebalances,
           st.minor_rebalances, alpha_heavy, beta_heavy, beta_degree
      FROM "pgivm_triangles"."state" s
      LEFT JOIN "pgivm_triangles"."r_degree" ka ON ka."a" = alpha
      LEFT JOIN "pgivm_triangles"."s_degree" lb ON lb."b" = beta;
    alpha_heavy := coalesce(alpha_heavy, st.epsilon = 0);

    -- ApplyUpdate lines 3-7: the change of the count.
    IF beta_heavy THEN
        -- A probe into L_heavy(beta, .) per row of M_heavy(., alpha); or, when M_heavy(., alpha) has
        -- at least a quarter as many rows as L_heavy(beta, .) (the count stops there), a merge of
        -- the two, which then reads O(|M_heavy(., alpha)|) rows too.
        merge_limit := greatest((beta_degree - 16) / 4, 1);
        SELECT count(*) INTO partners FROM (SELECT FROM "pgivm_triangles"."t_heavy" mh WHERE mh."a" = alpha LIMIT merge_limit) p;
        IF partners >= merge_limit THEN
            delta_q := "pgivm_triangles"."heavy_paths_r"(alpha, beta);
        ELSE
            SELECT coalesce(sum(mh.mult * (SELECT lh.mult FROM "pgivm_triangles"."s_heavy" lh WHERE lh."b" = beta AND lh."c" = mh."c")), 0)
              INTO delta_q
              FROM "pgivm_triangles"."t_heavy" mh WHERE mh."a" = alpha;
        END IF;
        delta_q := delta_q + coalesce((SELECT v.mult FROM "pgivm_triangles"."v_st" v WHERE v."b" = beta AND v."a" = alpha), 0);
    ELSIF NOT beta_heavy THEN
        -- M = M_light + M_heavy. The light part: a merge of L_light(beta, .) with M_light(., alpha)
        -- if the latter has fewer than merge_limit rows (the count stops there, so it stays
        -- O(deg_L(beta))), else one probe into M_light per row of L_light(beta, .).
        merge_limit := 4 * beta_degree + 16;
        SELECT count(*) INTO partners FROM (SELECT FROM "pgivm_triangles"."t_light" ml WHERE ml."a" = alpha LIMIT merge_limit) p;
        IF partners < merge_limit THEN
            delta_q := "pgivm_triangles"."light_paths_r"(alpha, beta);
        ELSE
            SELECT coalesce(sum(ll.mult * (SELECT ml.mult FROM "pgivm_triangles"."t_light" ml WHERE ml."c" = ll."c" AND ml."a" = alpha)), 0)
              INTO delta_q
              FROM "pgivm_triangles"."s_light" ll WHERE ll."b" = beta;
        END IF;
        -- The heavy part: M_heavy(., alpha) (<= 2 N^(1-eps) rows, read below for V_MK anyway) probing L_light.
        delta_q := delta_q + coalesce(
            (SELECT sum(mh.mult * (SELECT ll.mult FROM "pgivm_triangles"."s_light" ll WHERE ll."b" = beta AND ll."c" = mh."c"))
               FROM "pgivm_triangles"."t_heavy" mh WHERE mh."a" = alpha), 0);
    END IF;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + m * delta_q;
    END IF;

    -- ApplyUpdate lines 8-11: the one auxiliary view this update touches. INSERT ... ON CONFLICT is
    -- always driven by its (bounded) SELECT; a MERGE could be planned from the view's side.
    IF alpha_heavy THEN
        -- V_KL(alpha, z) += m * L_light(beta, z); nothing to do unless beta is light in L.
        IF NOT beta_heavy THEN
            WITH changed AS (
                INSERT INTO "pgivm_triangles"."v_rs" AS v ("a", "c", mult)
                SELECT alpha, ll."c", m * ll.mult FROM "pgivm_triangles"."s_light" ll WHERE ll."b" = beta
                ON CONFLICT ("a", "c") DO UPDATE SET mult = v.mult + EXCLUDED.mult
                RETURNING v."c", v.mult)
            SELECT array_agg("c") INTO zeros_z FROM changed WHERE mult = 0;
            IF zeros_z IS NOT NULL THEN
                DELETE FROM "pgivm_triangles"."v_rs" WHERE "a" = alpha AND "c" = ANY (zeros_z);
            END IF;
        END IF;
    ELSE
        -- V_MK(z, beta) += M_heavy(z, alpha) * m.
        WITH changed AS (
            INSERT INTO "pgivm_triangles"."v_tr" AS v ("c", "b", mult)
            SELECT mh."c", beta, m * mh.mult FROM "pgivm_triangles"."t_heavy" mh WHERE mh."a" = alpha
            ON CONFLICT ("c", "b") DO UPDATE SET mult = v.mult + EXCLUDED.mult
            RETURNING v."c", v.mult)
        SELECT array_agg("c") INTO zeros_z FROM changed WHERE mult = 0;
        IF zeros_z IS NOT NULL THEN
            DELETE FROM "pgivm_triangles"."v_tr" WHERE "c" = ANY (zeros_z) AND "b" = beta;
        END IF;
    END IF;

    -- ApplyUpdate line 12: K_part(alpha, beta) += m. Stored multiplicities are never 0, so the
    -- new multiplicity is m exactly when the tuple is new, and 0 when it vanishes.
    IF alpha_heavy THEN
        INSERT INTO "pgivm_triangles"."r_heavy" AS p ("a", "b", mult) VALUES (alpha, beta, m)
            ON CONFLICT ("a", "b") DO UPDATE SET mult = p.mult + EXCLUDED.mult
            RETURNING mult INTO new_mult;
        IF new_mult = 0 THEN
            DELETE FROM "pgivm_triangles"."r_heavy" WHERE "a" = alpha AND "b" = beta;
        END IF;
    ELSE
        INSERT INTO "pgivm_triangles"."r_light" AS p ("a", "b", mult) VALUES (alpha, beta, m)
            ON CONFLICT ("a", "b") DO UPDATE SET mult = p.mult + EXCLUDED.mult
            RETURNING mult INTO new_mult;
        IF new_mult = 0 THEN
            DELETE FROM "pgivm_triangles"."r_light" WHERE "a" = alpha AND "b" = beta;
        END IF;
    END IF;

    -- Degrees and |D| count distinct tuples: only a tuple appearing or vanishing changes them,
    -- and only then can a rebalancing be due.
    IF new_mult = m THEN
        INSERT INTO "pgivm_triangles"."r_degree" AS d ("a", degree, heavy) VALUES (alpha, 1, alpha_heavy)
            ON CONFLICT ("a") DO UPDATE SET degree = d.degree + 1
            RETURNING degree INTO new_degree;
        st.db_size := st.db_size + 1;
    ELSIF new_mult = 0 THEN
        UPDATE "pgivm_triangles"."r_degree" SET degree = degree - 1 WHERE "a" = alpha AND degree > 1 RETURNING degree INTO new_degree;
        IF NOT FOUND THEN  -- alpha's last tuple: alpha leaves pi_X K
            DELETE FROM "pgivm_triangles"."r_degree" WHERE "a" = alpha;
            new_degree := 0;
        END IF;
        st.db_size := st.db_size - 1;
    ELSE
        RETURN;
    END IF;

    -- OnUpdate: size invariant floor(N/4) <= |D| < N first (major), else alpha's degree (minor).
    IF st.db_size = st.n THEN
        UPDATE "pgivm_triangles"."state" SET db_size = st.db_size, n = 2 * st.n;
        PERFORM "pgivm_triangles"."major_rebalance"();
    ELSIF st.db_size < st.n / 4 THEN
        UPDATE "pgivm_triangles"."state" SET db_size = st.db_size, n = st.n / 2 - 1;
        PERFORM "pgivm_triangles"."major_rebalance"();
    ELSE
        UPDATE "pgivm_triangles"."state" SET db_size = st.db_size;
        IF NOT alpha_heavy AND new_degree >= 1.5 * st.theta THEN
            PERFORM "pgivm_triangles"."move_r"(alpha, true);
        ELSIF alpha_heavy AND new_degree > 0 AND new_degree < 0.5 * st.theta THEN
            PERFORM "pgivm_triangles"."move_r"(alpha, false);
        END IF;
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_r"(bigint, bigint, bigint) IS 'IVMε ApplyUpdate + OnUpdate for a single-tuple update to R';


-- sum_z L_part(beta, z) * M_part(z, alpha) as a merge join of two index-only range scans, both
-- sorted by z: O(|L_part(beta, .)| + |M_part(., alpha)|). apply_k calls them only once it has
-- counted that neither side is more than a few times the bounded one.
CREATE FUNCTION "pgivm_triangles"."light_paths_r"(alpha bigint, beta bigint)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_mergejoin = on SET enable_nestloop = off SET enable_hashjoin = off SET enable_seqscan = off
AS $pgivm$
BEGIN
    RETURN (SELECT coalesce(sum(ll.mult * ml.mult), 0)
              FROM "pgivm_triangles"."s_light" ll JOIN "pgivm_triangles"."t_light" ml ON ml."c" = ll."c"
             WHERE ll."b" = beta AND ml."a" = alpha);
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."light_paths_r"(bigint, bigint) IS 'IVMε, for an update to R: sum over C of S_light * T_light, as a merge join';

CREATE FUNCTION "pgivm_triangles"."heavy_paths_r"(alpha bigint, beta bigint)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_mergejoin = on SET enable_nestloop = off SET enable_hashjoin = off SET enable_seqscan = off
AS $pgivm$
BEGIN
    RETURN (SELECT coalesce(sum(lh.mult * mh.mult), 0)
              FROM "pgivm_triangles"."s_heavy" lh JOIN "pgivm_triangles"."t_heavy" mh ON mh."c" = lh."c"
             WHERE lh."b" = beta AND mh."a" = alpha);
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."heavy_paths_r"(bigint, bigint) IS 'IVMε, for an update to R: sum over C of S_heavy * T_heavy, as a merge join';


-- MinorRebalancing: move every tuple with X = alpha between K_light and K_heavy.
-- Each moved tuple is a delete from one part and an insert into the other; the two cancel in
-- the count, so only the auxiliary views change: as a light tuple (alpha, y) fed
-- V_MK(z, y) += M_heavy(z, alpha) * mult, as a heavy tuple it feeds V_KL(alpha, z) += mult * L_light(y, z).
-- Cost O(N^eps * N^max(eps, 1-eps)), amortized over the >= N^eps / 2 updates since the last move.
CREATE FUNCTION "pgivm_triangles"."move_r"(alpha bigint, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    direction bigint := CASE WHEN to_heavy THEN 1 ELSE -1 END;  -- +1: light -> heavy
    zeros_z   bigint[];
    zeros_y   bigint[];
BEGIN
    -- Contributions to V_MK, which holds alpha's tuples while they are light.
    WITH changed AS (
        INSERT INTO "pgivm_triangles"."v_tr" AS v ("c", "b", mult)
        SELECT mh."c", k."b", -direction * mh.mult * k.mult
          FROM (SELECT "b", mult FROM "pgivm_triangles"."r_light" WHERE "a" = alpha AND to_heavy
                UNION ALL
                SELECT "b", mult FROM "pgivm_triangles"."r_heavy" WHERE "a" = alpha AND NOT to_heavy) k
         CROSS JOIN (SELECT "c", mult FROM "pgivm_triangles"."t_heavy" WHERE "a" = alpha) mh
        ON CONFLICT ("c", "b") DO UPDATE SET mult = v.mult + EXCLUDED.mult
        RETURNING v."c", v."b", v.mult)
    SELECT array_agg("c"), array_agg("b") INTO zeros_z, zeros_y FROM changed WHERE mult = 0;
    FOR i IN 1 .. coalesce(array_length(zeros_z, 1), 0) LOOP
        DELETE FROM "pgivm_triangles"."v_tr" WHERE "c" = zeros_z[i] AND "b" = zeros_y[i];
    END LOOP;

    -- Contributions to V_KL, which holds alpha's tuples while they are heavy.
    WITH changed AS (
        INSERT INTO "pgivm_triangles"."v_rs" AS v ("a", "c", mult)
        SELECT alpha, ll."c", direction * sum(k.mult * ll.mult)
          FROM (SELECT "b", mult FROM "pgivm_triangles"."r_light" WHERE "a" = alpha AND to_heavy
                UNION ALL
                SELECT "b", mult FROM "pgivm_triangles"."r_heavy" WHERE "a" = alpha AND NOT to_heavy) k
          JOIN "pgivm_triangles"."s_light" ll ON ll."b" = k."b"
         GROUP BY ll."c"
        HAVING sum(k.mult * ll.mult) <> 0
        ON CONFLICT ("a", "c") DO UPDATE SET mult = v.mult + EXCLUDED.mult
        RETURNING v."c", v.mult)
    SELECT array_agg("c") INTO zeros_z FROM changed WHERE mult = 0;
    IF zeros_z IS NOT NULL THEN
        DELETE FROM "pgivm_triangles"."v_rs" WHERE "a" = alpha AND "c" = ANY (zeros_z);
    END IF;

    IF to_heavy THEN
        WITH moved AS (DELETE FROM "pgivm_triangles"."r_light" WHERE "a" = alpha RETURNING "a", "b", mult)
        INSERT INTO "pgivm_triangles"."r_heavy" ("a", "b", mult) SELECT "a", "b", mult FROM moved;
    ELSE
        WITH moved AS (DELETE FROM "pgivm_triangles"."r_heavy" WHERE "a" = alpha RETURNING "a", "b", mult)
        INSERT INTO "pgivm_triangles"."r_light" ("a", "b", mult) SELECT "a", "b", mult FROM moved;
    END IF;
    UPDATE "pgivm_triangles"."r_degree" SET heavy = to_heavy WHERE "a" = alpha;
    UPDATE "pgivm_triangles"."state" SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."move_r"(bigint, boolean) IS 'IVMε MinorRebalancing of one A-value of R';


-- Strict repartition of K at the current theta (part of MajorRebalancing): heavy iff degree >= theta,
-- or always heavy when epsilon = 0. O(|K|).
CREATE FUNCTION "pgivm_triangles"."repartition_r"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st "pgivm_triangles"."state"%ROWTYPE;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    UPDATE "pgivm_triangles"."r_degree"
       SET heavy = (degree >= st.theta OR st.epsilon = 0)
     WHERE heavy IS DISTINCT FROM (degree >= st.theta OR st.epsilon = 0);
    WITH moved AS (
        DELETE FROM "pgivm_triangles"."r_light" k USING "pgivm_triangles"."r_degree" d WHERE d."a" = k."a" AND d.heavy
        RETURNING k."a", k."b", k.mult)
    INSERT INTO "pgivm_triangles"."r_heavy" ("a", "b", mult) SELECT "a", "b", mult FROM moved;
    WITH moved AS (
        DELETE FROM "pgivm_triangles"."r_heavy" k USING "pgivm_triangles"."r_degree" d WHERE d."a" = k."a" AND NOT d.heavy
        RETURNING k."a", k."b", k.mult)
    INSERT INTO "pgivm_triangles"."r_light" ("a", "b", mult) SELECT "a", "b", mult FROM moved;
END;
$pgivm$;


-- V_KL from scratch (part of MajorRebalancing and of the initial build): O(N^(1+min(eps, 1-eps))).
CREATE FUNCTION "pgivm_triangles"."recompute_v_rs"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."v_rs";  -- not TRUNCATE, which would empty it for snapshots taken before (verify)
    INSERT INTO "pgivm_triangles"."v_rs" ("a", "c", mult)
    SELECT kh."a", ll."c", sum(kh.mult * ll.mult)
      FROM "pgivm_triangles"."r_heavy" kh JOIN "pgivm_triangles"."s_light" ll ON ll."b" = kh."b"
     GROUP BY kh."a", ll."c"
    HAVING sum(kh.mult * ll.mult) <> 0;
END;
$pgivm$;

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

CREATE FUNCTION "pgivm_triangles"."apply_s"(alpha bigint, beta bigint, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st           "pgivm_triangles"."state"%ROWTYPE;
    alpha_heavy  boolean;  -- routing: is alpha in pi_X K_heavy?
    beta_heavy   boolean;  -- beta's part in L; NULL when beta does not occur in L
    beta_degree  bigint;   -- |L(beta, .)|
    partners     bigint;   -- |M_light(., alpha)| or |M_heavy(., alpha)|, counted up to merge_limit
    merge_limit  bigint;
    delta_q      bigint := 0;
    new_mult     bigint;
    new_degree   bigint;
    zeros_z      bigint[];  -- view entries this update brought to 0, deleted by key
BEGIN
    -- OnUpdate routing: to K_heavy iff alpha is heavy (or epsilon = 0); a new value starts light.
    SELECT s.*, ka.heavy, lb.heavy, lb.degree
      INTO st.singleton, st.epsilon, st.n, st.theta, st.db_size, st.updates_applied, st.major_rebalances,
           st.minor_rebalances, alpha_heavy, beta_heavy, beta_degree
      FROM "pgivm_triangles"."state" s
      LEFT JOIN "pgivm_triangles"."s_degree" ka ON ka."b" = alpha
      LEFT JOIN "pgivm_triangles"."t_degree" lb ON lb."c" = beta;
    alpha_heavy := coalesce(alpha_heavy, st.epsilon = 0);

    -- ApplyUpdate lines 3-7: the change of the count.
    IF beta_heavy THEN
        -- A probe into L_heavy(beta, .) per row of M_heavy(., alpha); or, when M_heavy(., alpha) has
        -- at least a quarter as many rows as L_heavy(beta, .) (the count stops there), a merge of
        -- the two, which then reads O(|M_heavy(., alpha)|) rows too.
        merge_limit := greatest((beta_degree - 16) / 4, 1);
        SELECT count(*) INTO partners FROM (SELECT FROM "pgivm_triangles"."r_heavy" mh WHERE mh."b" = alpha LIMIT merge_limit) p;
        IF partners >= merge_limit THEN
            delta_q := "pgivm_triangles"."heavy_paths_s"(alpha, beta);
        ELSE
            SELECT coalesce(sum(mh.mult * (SELECT lh.mult FROM "pgivm_triangles"."t_heavy" lh WHERE lh."c" = beta AND lh."a" = mh."a")), 0)
              INTO delta_q
              FROM "pgivm_triangles"."r_heavy" mh WHERE mh."b" = alpha;
        END IF;
        delta_q := delta_q + coalesce((SELECT v.mult FROM "pgivm_triangles"."v_tr" v WHERE v."c" = beta AND v."b" = alpha), 0);
    ELSIF NOT beta_heavy THEN
        -- M = M_light + M_heavy. The light part: a merge of L_light(beta, .) with M_light(., alpha)
        -- if the latter has fewer than merge_limit rows (the count stops there, so it stays
        -- O(deg_L(beta))), else one probe into M_light per row of L_light(beta, .).
        merge_limit := 4 * beta_degree + 16;
        SELECT count(*) INTO partners FROM (SELECT FROM "pgivm_triangles"."r_light" ml WHERE ml."b" = alpha LIMIT merge_limit) p;
        IF partners < merge_limit THEN
            delta_q := "pgivm_triangles"."light_paths_s"(alpha, beta);
        ELSE
            SELECT coalesce(sum(ll.mult * (SELECT ml.mult FROM "pgivm_triangles"."r_light" ml WHERE ml."a" = ll."a" AND ml."b" = alpha)), 0)
              INTO delta_q
              FROM "pgivm_triangles"."t_light" ll WHERE ll."c" = beta;
        END IF;
        -- The heavy part: M_heavy(., alpha) (<= 2 N^(1-eps) rows, read below for V_MK anyway) probing L_light.
        delta_q := delta_q + coalesce(
            (SELECT sum(mh.mult * (SELECT ll.mult FROM "pgivm_triangles"."t_light" ll WHERE ll."c" = beta AND ll."a" = mh."a"))
               FROM "pgivm_triangles"."r_heavy" mh WHERE mh."b" = alpha), 0);
    END IF;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + m * delta_q;
    END IF;

    -- ApplyUpdate lines 8-11: the one auxiliary view this update touches. INSERT ... ON CONFLICT is
    -- always driven by its (bounded) SELECT; a MERGE could be planned from the view's side.
    IF alpha_heavy THEN
        -- V_KL(alpha, z) += m * L_light(beta, z); nothing to do unless beta is light in L.
        IF NOT beta_heavy THEN
            WITH changed AS (
                INSERT INTO "pgivm_triangles"."v_st" AS v ("b", "a", mult)
                SELECT alpha, ll."a", m * ll.mult FROM "pgivm_triangles"."t_light" ll WHERE ll."c" = beta
                ON CONFLICT ("b", "a") DO UPDATE SET mult = v.mult + EXCLUDED.mult
                RETURNING v."a", v.mult)
            SELECT array_agg("a") INTO zeros_z FROM changed WHERE mult = 0;
            IF zeros_z IS NOT NULL THEN
                DELETE FROM "pgivm_triangles"."v_st" WHERE "b" = alpha AND "a" = ANY (zeros_z);
            END IF;
        END IF;
    ELSE
        -- V_MK(z, beta) += M_heavy(z, alpha) * m.
        WITH changed AS (
            INSERT INTO "pgivm_triangles"."v_rs" AS v ("a", "c", mult)
            SELECT mh."a", beta, m * mh.mult FROM "pgivm_triangles"."r_heavy" mh WHERE mh."b" = alpha
            ON CONFLICT ("a", "c") DO UPDATE SET mult = v.mult + EXCLUDED.mult
            RETURNING v."a", v.mult)
        SELECT array_agg("a") INTO zeros_z FROM changed WHERE mult = 0;
        IF zeros_z IS NOT NULL THEN
            DELETE FROM "pgivm_triangles"."v_rs" WHERE "a" = ANY (zeros_z) AND "c" = beta;
        END IF;
    END IF;

    -- ApplyUpdate line 12: K_part(alpha, beta) += m. Stored multiplicities are never 0, so the
    -- new multiplicity is m exactly when the tuple is new, and 0 when it vanishes.
    IF alpha_heavy THEN
        INSERT INTO "pgivm_triangles"."s_heavy" AS p ("b", "c", mult) VALUES (alpha, beta, m)
            ON CONFLICT ("b", "c") DO UPDATE SET mult = p.mult + EXCLUDED.mult
            RETURNING mult INTO new_mult;
        IF new_mult = 0 THEN
            DELETE FROM "pgivm_triangles"."s_heavy" WHERE "b" = alpha AND "c" = beta;
        END IF;
    ELSE
        INSERT INTO "pgivm_triangles"."s_light" AS p ("b", "c", mult) VALUES (alpha, beta, m)
            ON CONFLICT ("b", "c") DO UPDATE SET mult = p.mult + EXCLUDED.mult
            RETURNING mult INTO new_mult;
        IF new_mult = 0 THEN
            DELETE FROM "pgivm_triangles"."s_light" WHERE "b" = alpha AND "c" = beta;
        END IF;
    END IF;

    -- Degrees and |D| count distinct tuples: only a tuple appearing or vanishing changes them,
    -- and only then can a rebalancing be due.
    IF new_mult = m THEN
        INSERT INTO "pgivm_triangles"."s_degree" AS d ("b", degree, heavy) VALUES (alpha, 1, alpha_heavy)
            ON CONFLICT ("b") DO UPDATE SET degree = d.degree + 1
            RETURNING degree INTO new_degree;
        st.db_size := st.db_size + 1;
    ELSIF new_mult = 0 THEN
        UPDATE "pgivm_triangles"."s_degree" SET degree = degree - 1 WHERE "b" = alpha AND degree > 1 RETURNING degree INTO new_degree;
        IF NOT FOUND THEN  -- alpha's last tuple: alpha leaves pi_X K
            DELETE FROM "pgivm_triangles"."s_degree" WHERE "b" = alpha;
            new_degree := 0;
        END IF;
        st.db_size := st.db_size - 1;
    ELSE
        RETURN;
    END IF;

    -- OnUpdate: size invariant floor(N/4) <= |D| < N first (major), else alpha's degree (minor).
    IF st.db_size = st.n THEN
        UPDATE "pgivm_triangles"."state" SET db_size = st.db_size, n = 2 * st.n;
        PERFORM "pgivm_triangles"."major_rebalance"();
    ELSIF st.db_size < st.n / 4 THEN
        UPDATE "pgivm_triangles"."state" SET db_size = st.db_size, n = st.n / 2 - 1;
        PERFORM "pgivm_triangles"."major_rebalance"();
    ELSE
        UPDATE "pgivm_triangles"."state" SET db_size = st.db_size;
        IF NOT alpha_heavy AND new_degree >= 1.5 * st.theta THEN
            PERFORM "pgivm_triangles"."move_s"(alpha, true);
        ELSIF alpha_heavy AND new_degree > 0 AND new_degree < 0.5 * st.theta THEN
            PERFORM "pgivm_triangles"."move_s"(alpha, false);
        END IF;
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_s"(bigint, bigint, bigint) IS 'IVMε ApplyUpdate + OnUpdate for a single-tuple update to S';


-- sum_z L_part(beta, z) * M_part(z, alpha) as a merge join of two index-only range scans, both
-- sorted by z: O(|L_part(beta, .)| + |M_part(., alpha)|). apply_k calls them only once it has
-- counted that neither side is more than a few times the bounded one.
CREATE FUNCTION "pgivm_triangles"."light_paths_s"(alpha bigint, beta bigint)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_mergejoin = on SET enable_nestloop = off SET enable_hashjoin = off SET enable_seqscan = off
AS $pgivm$
BEGIN
    RETURN (SELECT coalesce(sum(ll.mult * ml.mult), 0)
              FROM "pgivm_triangles"."t_light" ll JOIN "pgivm_triangles"."r_light" ml ON ml."a" = ll."a"
             WHERE ll."c" = beta AND ml."b" = alpha);
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."light_paths_s"(bigint, bigint) IS 'IVMε, for an update to S: sum over A of T_light * R_light, as a merge join';

CREATE FUNCTION "pgivm_triangles"."heavy_paths_s"(alpha bigint, beta bigint)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_mergejoin = on SET enable_nestloop = off SET enable_hashjoin = off SET enable_seqscan = off
AS $pgivm$
BEGIN
    RETURN (SELECT coalesce(sum(lh.mult * mh.mult), 0)
              FROM "pgivm_triangles"."t_heavy" lh JOIN "pgivm_triangles"."r_heavy" mh ON mh."a" = lh."a"
             WHERE lh."c" = beta AND mh."b" = alpha);
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."heavy_paths_s"(bigint, bigint) IS 'IVMε, for an update to S: sum over A of T_heavy * R_heavy, as a merge join';


-- MinorRebalancing: move every tuple with X = alpha between K_light and K_heavy.
-- Each moved tuple is a delete from one part and an insert into the other; the two cancel in
-- the count, so only the auxiliary views change: as a light tuple (alpha, y) fed
-- V_MK(z, y) += M_heavy(z, alpha) * mult, as a heavy tuple it feeds V_KL(alpha, z) += mult * L_light(y, z).
-- Cost O(N^eps * N^max(eps, 1-eps)), amortized over the >= N^eps / 2 updates since the last move.
CREATE FUNCTION "pgivm_triangles"."move_s"(alpha bigint, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    direction bigint := CASE WHEN to_heavy THEN 1 ELSE -1 END;  -- +1: light -> heavy
    zeros_z   bigint[];
    zeros_y   bigint[];
BEGIN
    -- Contributions to V_MK, which holds alpha's tuples while they are light.
    WITH changed AS (
        INSERT INTO "pgivm_triangles"."v_rs" AS v ("a", "c", mult)
        SELECT mh."a", k."c", -direction * mh.mult * k.mult
          FROM (SELECT "c", mult FROM "pgivm_triangles"."s_light" WHERE "b" = alpha AND to_heavy
                UNION ALL
                SELECT "c", mult FROM "pgivm_triangles"."s_heavy" WHERE "b" = alpha AND NOT to_heavy) k
         CROSS JOIN (SELECT "a", mult FROM "pgivm_triangles"."r_heavy" WHERE "b" = alpha) mh
        ON CONFLICT ("a", "c") DO UPDATE SET mult = v.mult + EXCLUDED.mult
        RETURNING v."a", v."c", v.mult)
    SELECT array_agg("a"), array_agg("c") INTO zeros_z, zeros_y FROM changed WHERE mult = 0;
    FOR i IN 1 .. coalesce(array_length(zeros_z, 1), 0) LOOP
        DELETE FROM "pgivm_triangles"."v_rs" WHERE "a" = zeros_z[i] AND "c" = zeros_y[i];
    END LOOP;

    -- Contributions to V_KL, which holds alpha's tuples while they are heavy.
    WITH changed AS (
        INSERT INTO "pgivm_triangles"."v_st" AS v ("b", "a", mult)
        SELECT alpha, ll."a", direction * sum(k.mult * ll.mult)
          FROM (SELECT "c", mult FROM "pgivm_triangles"."s_light" WHERE "b" = alpha AND to_heavy
                UNION ALL
                SELECT "c", mult FROM "pgivm_triangles"."s_heavy" WHERE "b" = alpha AND NOT to_heavy) k
          JOIN "pgivm_triangles"."t_light" ll ON ll."c" = k."c"
         GROUP BY ll."a"
        HAVING sum(k.mult * ll.mult) <> 0
        ON CONFLICT ("b", "a") DO UPDATE SET mult = v.mult + EXCLUDED.mult
        RETURNING v."a", v.mult)
    SELECT array_agg("a") INTO zeros_z FROM changed WHERE mult = 0;
    IF zeros_z IS NOT NULL THEN
        DELETE FROM "pgivm_triangles"."v_st" WHERE "b" = alpha AND "a" = ANY (zeros_z);
    END IF;

    IF to_heavy THEN
        WITH moved AS (DELETE FROM "pgivm_triangles"."s_light" WHERE "b" = alpha RETURNING "b", "c", mult)
        INSERT INTO "pgivm_triangles"."s_heavy" ("b", "c", mult) SELECT "b", "c", mult FROM moved;
    ELSE
        WITH moved AS (DELETE FROM "pgivm_triangles"."s_heavy" WHERE "b" = alpha RETURNING "b", "c", mult)
        INSERT INTO "pgivm_triangles"."s_light" ("b", "c", mult) SELECT "b", "c", mult FROM moved;
    END IF;
    UPDATE "pgivm_triangles"."s_degree" SET heavy = to_heavy WHERE "b" = alpha;
    UPDATE "pgivm_triangles"."state" SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."move_s"(bigint, boolean) IS 'IVMε MinorRebalancing of one B-value of S';


-- Strict repartition of K at the current theta (part of MajorRebalancing): heavy iff degree >= theta,
-- or always heavy when epsilon = 0. O(|K|).
CREATE FUNCTION "pgivm_triangles"."repartition_s"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st "pgivm_triangles"."state"%ROWTYPE;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    UPDATE "pgivm_triangles"."s_degree"
       SET heavy = (degree >= st.theta OR st.epsilon = 0)
     WHERE heavy IS DISTINCT FROM (degree >= st.theta OR st.epsilon = 0);
    WITH moved AS (
        DELETE FROM "pgivm_triangles"."s_light" k USING "pgivm_triangles"."s_degree" d WHERE d."b" = k."b" AND d.heavy
        RETURNING k."b", k."c", k.mult)
    INSERT INTO "pgivm_triangles"."s_heavy" ("b", "c", mult) SELECT "b", "c", mult FROM moved;
    WITH moved AS (
        DELETE FROM "pgivm_triangles"."s_heavy" k USING "pgivm_triangles"."s_degree" d WHERE d."b" = k."b" AND NOT d.heavy
        RETURNING k."b", k."c", k.mult)
    INSERT INTO "pgivm_triangles"."s_light" ("b", "c", mult) SELECT "b", "c", mult FROM moved;
END;
$pgivm$;


-- V_KL from scratch (part of MajorRebalancing and of the initial build): O(N^(1+min(eps, 1-eps))).
CREATE FUNCTION "pgivm_triangles"."recompute_v_st"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."v_st";  -- not TRUNCATE, which would empty it for snapshots taken before (verify)
    INSERT INTO "pgivm_triangles"."v_st" ("b", "a", mult)
    SELECT kh."b", ll."a", sum(kh.mult * ll.mult)
      FROM "pgivm_triangles"."s_heavy" kh JOIN "pgivm_triangles"."t_light" ll ON ll."c" = kh."c"
     GROUP BY kh."b", ll."a"
    HAVING sum(kh.mult * ll.mult) <> 0;
END;
$pgivm$;

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

CREATE FUNCTION "pgivm_triangles"."apply_t"(alpha bigint, beta bigint, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st           "pgivm_triangles"."state"%ROWTYPE;
    alpha_heavy  boolean;  -- routing: is alpha in pi_X K_heavy?
    beta_heavy   boolean;  -- beta's part in L; NULL when beta does not occur in L
    beta_degree  bigint;   -- |L(beta, .)|
    partners     bigint;   -- |M_light(., alpha)| or |M_heavy(., alpha)|, counted up to merge_limit
    merge_limit  bigint;
    delta_q      bigint := 0;
    new_mult     bigint;
    new_degree   bigint;
    zeros_z      bigint[];  -- view entries this update brought to 0, deleted by key
BEGIN
    -- OnUpdate routing: to K_heavy iff alpha is heavy (or epsilon = 0); a new value starts light.
    SELECT s.*, ka.heavy, lb.heavy, lb.degree
      INTO st.singleton, st.epsilon, st.n, st.theta, st.db_size, st.updates_applied, st.major_rebalances,
           st.minor_rebalances, alpha_heavy, beta_heavy, beta_degree
      FROM "pgivm_triangles"."state" s
      LEFT JOIN "pgivm_triangles"."t_degree" ka ON ka."c" = alpha
      LEFT JOIN "pgivm_triangles"."r_degree" lb ON lb."a" = beta;
    alpha_heavy := coalesce(alpha_heavy, st.epsilon = 0);

    -- ApplyUpdate lines 3-7: the change of the count.
    IF beta_heavy THEN
        -- A probe into L_heavy(beta, .) per row of M_heavy(., alpha); or, when M_heavy(., alpha) has
        -- at least a quarter as many rows as L_heavy(beta, .) (the count stops there), a merge of
        -- the two, which then reads O(|M_heavy(., alpha)|) rows too.
        merge_limit := greatest((beta_degree - 16) / 4, 1);
        SELECT count(*) INTO partners FROM (SELECT FROM "pgivm_triangles"."s_heavy" mh WHERE mh."c" = alpha LIMIT merge_limit) p;
        IF partners >= merge_limit THEN
            delta_q := "pgivm_triangles"."heavy_paths_t"(alpha, beta);
        ELSE
            SELECT coalesce(sum(mh.mult * (SELECT lh.mult FROM "pgivm_triangles"."r_heavy" lh WHERE lh."a" = beta AND lh."b" = mh."b")), 0)
              INTO delta_q
              FROM "pgivm_triangles"."s_heavy" mh WHERE mh."c" = alpha;
        END IF;
        delta_q := delta_q + coalesce((SELECT v.mult FROM "pgivm_triangles"."v_rs" v WHERE v."a" = beta AND v."c" = alpha), 0);
    ELSIF NOT beta_heavy THEN
        -- M = M_light + M_heavy. The light part: a merge of L_light(beta, .) with M_light(., alpha)
        -- if the latter has fewer than merge_limit rows (the count stops there, so it stays
        -- O(deg_L(beta))), else one probe into M_light per row of L_light(beta, .).
        merge_limit := 4 * beta_degree + 16;
        SELECT count(*) INTO partners FROM (SELECT FROM "pgivm_triangles"."s_light" ml WHERE ml."c" = alpha LIMIT merge_limit) p;
        IF partners < merge_limit THEN
            delta_q := "pgivm_triangles"."light_paths_t"(alpha, beta);
        ELSE
            SELECT coalesce(sum(ll.mult * (SELECT ml.mult FROM "pgivm_triangles"."s_light" ml WHERE ml."b" = ll."b" AND ml."c" = alpha)), 0)
              INTO delta_q
              FROM "pgivm_triangles"."r_light" ll WHERE ll."a" = beta;
        END IF;
        -- The heavy part: M_heavy(., alpha) (<= 2 N^(1-eps) rows, read below for V_MK anyway) probing L_light.
        delta_q := delta_q + coalesce(
            (SELECT sum(mh.mult * (SELECT ll.mult FROM "pgivm_triangles"."r_light" ll WHERE ll."a" = beta AND ll."b" = mh."b"))
               FROM "pgivm_triangles"."s_heavy" mh WHERE mh."c" = alpha), 0);
    END IF;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + m * delta_q;
    END IF;

    -- ApplyUpdate lines 8-11: the one auxiliary view this update touches. INSERT ... ON CONFLICT is
    -- always driven by its (bounded) SELECT; a MERGE could be planned from the view's side.
    IF alpha_heavy THEN
        -- V_KL(alpha, z) += m * L_light(beta, z); nothing to do unless beta is light in L.
        IF NOT beta_heavy THEN
            WITH changed AS (
                INSERT INTO "pgivm_triangles"."v_tr" AS v ("c", "b", mult)
                SELECT alpha, ll."b", m * ll.mult FROM "pgivm_triangles"."r_light" ll WHERE ll."a" = beta
                ON CONFLICT ("c", "b") DO UPDATE SET mult = v.mult + EXCLUDED.mult
                RETURNING v."b", v.mult)
            SELECT array_agg("b") INTO zeros_z FROM changed WHERE mult = 0;
            IF zeros_z IS NOT NULL THEN
                DELETE FROM "pgivm_triangles"."v_tr" WHERE "c" = alpha AND "b" = ANY (zeros_z);
            END IF;
        END IF;
    ELSE
        -- V_MK(z, beta) += M_heavy(z, alpha) * m.
        WITH changed AS (
            INSERT INTO "pgivm_triangles"."v_st" AS v ("b", "a", mult)
            SELECT mh."b", beta, m * mh.mult FROM "pgivm_triangles"."s_heavy" mh WHERE mh."c" = alpha
            ON CONFLICT ("b", "a") DO UPDATE SET mult = v.mult + EXCLUDED.mult
            RETURNING v."b", v.mult)
        SELECT array_agg("b") INTO zeros_z FROM changed WHERE mult = 0;
        IF zeros_z IS NOT NULL THEN
            DELETE FROM "pgivm_triangles"."v_st" WHERE "b" = ANY (zeros_z) AND "a" = beta;
        END IF;
    END IF;

    -- ApplyUpdate line 12: K_part(alpha, beta) += m. Stored multiplicities are never 0, so the
    -- new multiplicity is m exactly when the tuple is new, and 0 when it vanishes.
    IF alpha_heavy THEN
        INSERT INTO "pgivm_triangles"."t_heavy" AS p ("c", "a", mult) VALUES (alpha, beta, m)
            ON CONFLICT ("c", "a") DO UPDATE SET mult = p.mult + EXCLUDED.mult
            RETURNING mult INTO new_mult;
        IF new_mult = 0 THEN
            DELETE FROM "pgivm_triangles"."t_heavy" WHERE "c" = alpha AND "a" = beta;
        END IF;
    ELSE
        INSERT INTO "pgivm_triangles"."t_light" AS p ("c", "a", mult) VALUES (alpha, beta, m)
            ON CONFLICT ("c", "a") DO UPDATE SET mult = p.mult + EXCLUDED.mult
            RETURNING mult INTO new_mult;
        IF new_mult = 0 THEN
            DELETE FROM "pgivm_triangles"."t_light" WHERE "c" = alpha AND "a" = beta;
        END IF;
    END IF;

    -- Degrees and |D| count distinct tuples: only a tuple appearing or vanishing changes them,
    -- and only then can a rebalancing be due.
    IF new_mult = m THEN
        INSERT INTO "pgivm_triangles"."t_degree" AS d ("c", degree, heavy) VALUES (alpha, 1, alpha_heavy)
            ON CONFLICT ("c") DO UPDATE SET degree = d.degree + 1
            RETURNING degree INTO new_degree;
        st.db_size := st.db_size + 1;
    ELSIF new_mult = 0 THEN
        UPDATE "pgivm_triangles"."t_degree" SET degree = degree - 1 WHERE "c" = alpha AND degree > 1 RETURNING degree INTO new_degree;
        IF NOT FOUND THEN  -- alpha's last tuple: alpha leaves pi_X K
            DELETE FROM "pgivm_triangles"."t_degree" WHERE "c" = alpha;
            new_degree := 0;
        END IF;
        st.db_size := st.db_size - 1;
    ELSE
        RETURN;
    END IF;

    -- OnUpdate: size invariant floor(N/4) <= |D| < N first (major), else alpha's degree (minor).
    IF st.db_size = st.n THEN
        UPDATE "pgivm_triangles"."state" SET db_size = st.db_size, n = 2 * st.n;
        PERFORM "pgivm_triangles"."major_rebalance"();
    ELSIF st.db_size < st.n / 4 THEN
        UPDATE "pgivm_triangles"."state" SET db_size = st.db_size, n = st.n / 2 - 1;
        PERFORM "pgivm_triangles"."major_rebalance"();
    ELSE
        UPDATE "pgivm_triangles"."state" SET db_size = st.db_size;
        IF NOT alpha_heavy AND new_degree >= 1.5 * st.theta THEN
            PERFORM "pgivm_triangles"."move_t"(alpha, true);
        ELSIF alpha_heavy AND new_degree > 0 AND new_degree < 0.5 * st.theta THEN
            PERFORM "pgivm_triangles"."move_t"(alpha, false);
        END IF;
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_t"(bigint, bigint, bigint) IS 'IVMε ApplyUpdate + OnUpdate for a single-tuple update to T';


-- sum_z L_part(beta, z) * M_part(z, alpha) as a merge join of two index-only range scans, both
-- sorted by z: O(|L_part(beta, .)| + |M_part(., alpha)|). apply_k calls them only once it has
-- counted that neither side is more than a few times the bounded one.
CREATE FUNCTION "pgivm_triangles"."light_paths_t"(alpha bigint, beta bigint)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_mergejoin = on SET enable_nestloop = off SET enable_hashjoin = off SET enable_seqscan = off
AS $pgivm$
BEGIN
    RETURN (SELECT coalesce(sum(ll.mult * ml.mult), 0)
              FROM "pgivm_triangles"."r_light" ll JOIN "pgivm_triangles"."s_light" ml ON ml."b" = ll."b"
             WHERE ll."a" = beta AND ml."c" = alpha);
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."light_paths_t"(bigint, bigint) IS 'IVMε, for an update to T: sum over B of R_light * S_light, as a merge join';

CREATE FUNCTION "pgivm_triangles"."heavy_paths_t"(alpha bigint, beta bigint)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_mergejoin = on SET enable_nestloop = off SET enable_hashjoin = off SET enable_seqscan = off
AS $pgivm$
BEGIN
    RETURN (SELECT coalesce(sum(lh.mult * mh.mult), 0)
              FROM "pgivm_triangles"."r_heavy" lh JOIN "pgivm_triangles"."s_heavy" mh ON mh."b" = lh."b"
             WHERE lh."a" = beta AND mh."c" = alpha);
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."heavy_paths_t"(bigint, bigint) IS 'IVMε, for an update to T: sum over B of R_heavy * S_heavy, as a merge join';


-- MinorRebalancing: move every tuple with X = alpha between K_light and K_heavy.
-- Each moved tuple is a delete from one part and an insert into the other; the two cancel in
-- the count, so only the auxiliary views change: as a light tuple (alpha, y) fed
-- V_MK(z, y) += M_heavy(z, alpha) * mult, as a heavy tuple it feeds V_KL(alpha, z) += mult * L_light(y, z).
-- Cost O(N^eps * N^max(eps, 1-eps)), amortized over the >= N^eps / 2 updates since the last move.
CREATE FUNCTION "pgivm_triangles"."move_t"(alpha bigint, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    direction bigint := CASE WHEN to_heavy THEN 1 ELSE -1 END;  -- +1: light -> heavy
    zeros_z   bigint[];
    zeros_y   bigint[];
BEGIN
    -- Contributions to V_MK, which holds alpha's tuples while they are light.
    WITH changed AS (
        INSERT INTO "pgivm_triangles"."v_st" AS v ("b", "a", mult)
        SELECT mh."b", k."a", -direction * mh.mult * k.mult
          FROM (SELECT "a", mult FROM "pgivm_triangles"."t_light" WHERE "c" = alpha AND to_heavy
                UNION ALL
                SELECT "a", mult FROM "pgivm_triangles"."t_heavy" WHERE "c" = alpha AND NOT to_heavy) k
         CROSS JOIN (SELECT "b", mult FROM "pgivm_triangles"."s_heavy" WHERE "c" = alpha) mh
        ON CONFLICT ("b", "a") DO UPDATE SET mult = v.mult + EXCLUDED.mult
        RETURNING v."b", v."a", v.mult)
    SELECT array_agg("b"), array_agg("a") INTO zeros_z, zeros_y FROM changed WHERE mult = 0;
    FOR i IN 1 .. coalesce(array_length(zeros_z, 1), 0) LOOP
        DELETE FROM "pgivm_triangles"."v_st" WHERE "b" = zeros_z[i] AND "a" = zeros_y[i];
    END LOOP;

    -- Contributions to V_KL, which holds alpha's tuples while they are heavy.
    WITH changed AS (
        INSERT INTO "pgivm_triangles"."v_tr" AS v ("c", "b", mult)
        SELECT alpha, ll."b", direction * sum(k.mult * ll.mult)
          FROM (SELECT "a", mult FROM "pgivm_triangles"."t_light" WHERE "c" = alpha AND to_heavy
                UNION ALL
                SELECT "a", mult FROM "pgivm_triangles"."t_heavy" WHERE "c" = alpha AND NOT to_heavy) k
          JOIN "pgivm_triangles"."r_light" ll ON ll."a" = k."a"
         GROUP BY ll."b"
        HAVING sum(k.mult * ll.mult) <> 0
        ON CONFLICT ("c", "b") DO UPDATE SET mult = v.mult + EXCLUDED.mult
        RETURNING v."b", v.mult)
    SELECT array_agg("b") INTO zeros_z FROM changed WHERE mult = 0;
    IF zeros_z IS NOT NULL THEN
        DELETE FROM "pgivm_triangles"."v_tr" WHERE "c" = alpha AND "b" = ANY (zeros_z);
    END IF;

    IF to_heavy THEN
        WITH moved AS (DELETE FROM "pgivm_triangles"."t_light" WHERE "c" = alpha RETURNING "c", "a", mult)
        INSERT INTO "pgivm_triangles"."t_heavy" ("c", "a", mult) SELECT "c", "a", mult FROM moved;
    ELSE
        WITH moved AS (DELETE FROM "pgivm_triangles"."t_heavy" WHERE "c" = alpha RETURNING "c", "a", mult)
        INSERT INTO "pgivm_triangles"."t_light" ("c", "a", mult) SELECT "c", "a", mult FROM moved;
    END IF;
    UPDATE "pgivm_triangles"."t_degree" SET heavy = to_heavy WHERE "c" = alpha;
    UPDATE "pgivm_triangles"."state" SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."move_t"(bigint, boolean) IS 'IVMε MinorRebalancing of one C-value of T';


-- Strict repartition of K at the current theta (part of MajorRebalancing): heavy iff degree >= theta,
-- or always heavy when epsilon = 0. O(|K|).
CREATE FUNCTION "pgivm_triangles"."repartition_t"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st "pgivm_triangles"."state"%ROWTYPE;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    UPDATE "pgivm_triangles"."t_degree"
       SET heavy = (degree >= st.theta OR st.epsilon = 0)
     WHERE heavy IS DISTINCT FROM (degree >= st.theta OR st.epsilon = 0);
    WITH moved AS (
        DELETE FROM "pgivm_triangles"."t_light" k USING "pgivm_triangles"."t_degree" d WHERE d."c" = k."c" AND d.heavy
        RETURNING k."c", k."a", k.mult)
    INSERT INTO "pgivm_triangles"."t_heavy" ("c", "a", mult) SELECT "c", "a", mult FROM moved;
    WITH moved AS (
        DELETE FROM "pgivm_triangles"."t_heavy" k USING "pgivm_triangles"."t_degree" d WHERE d."c" = k."c" AND NOT d.heavy
        RETURNING k."c", k."a", k.mult)
    INSERT INTO "pgivm_triangles"."t_light" ("c", "a", mult) SELECT "c", "a", mult FROM moved;
END;
$pgivm$;


-- V_KL from scratch (part of MajorRebalancing and of the initial build): O(N^(1+min(eps, 1-eps))).
CREATE FUNCTION "pgivm_triangles"."recompute_v_tr"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."v_tr";  -- not TRUNCATE, which would empty it for snapshots taken before (verify)
    INSERT INTO "pgivm_triangles"."v_tr" ("c", "b", mult)
    SELECT kh."c", ll."b", sum(kh.mult * ll.mult)
      FROM "pgivm_triangles"."t_heavy" kh JOIN "pgivm_triangles"."r_light" ll ON ll."a" = kh."a"
     GROUP BY kh."c", ll."b"
    HAVING sum(kh.mult * ll.mult) <> 0;
END;
$pgivm$;

-- Set-at-a-time maintenance of a multi-row change to relation K(X,Y) (rendered for K = R, S, T).
-- The statement trigger puts the statement's net change of K into K_delta, one row per distinct
-- (X,Y) with its multiplicity change, and calls apply_batch_K: a few set-based statements replace
-- one ApplyUpdate per row. Every delta is computed on the state before the batch; the batch then
-- goes into the parts (each X-value into its current part, new values light), and the invariants
-- are restored afterwards: a size-invariant violation resets N = 2|D|+1 with a major rebalancing
-- (as the initial build does), else every value of the batch that crossed a threshold is moved.


CREATE FUNCTION "pgivm_triangles"."apply_batch_r"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
-- The state is hot in memory: index probes cost about as much as sequential reads, so a small
-- batch is best served by index nested loops and only a large one by hash joins.
SET random_page_cost = 1.1
AS $pgivm$
DECLARE
    st        "pgivm_triangles"."state"%ROWTYPE;
    delta_q   numeric;
    size_diff bigint;
    zeros_a   bigint[];
    zeros_b   bigint[];
    zeros_c   bigint[];
    moving    record;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    -- The planner must know the batch's size to choose index nested loops for a small batch and
    -- hash joins for a large one.
    ANALYZE "pgivm_triangles"."r_delta";

    -- Routing, as OnUpdate does it: alpha's current part; a new value is light (heavy at epsilon = 0).
    -- With it each tuple's multiplicity after the batch, from its current one: one pass over the
    -- batch (a tuple lives in its X-value's part, so at most one of the two parts holds it).
    UPDATE "pgivm_triangles"."r_delta" d
       SET heavy = cur.heavy, new_mult = d.mult + cur.mult
      FROM (SELECT b."a", b."b", st.epsilon = 0 OR coalesce(g.heavy, false) AS heavy,
                   coalesce(kh.mult, kl.mult, 0) AS mult
              FROM "pgivm_triangles"."r_delta" b
              LEFT JOIN "pgivm_triangles"."r_degree" g ON g."a" = b."a"
              LEFT JOIN "pgivm_triangles"."r_heavy" kh ON kh."a" = b."a" AND kh."b" = b."b"
              LEFT JOIN "pgivm_triangles"."r_light" kl ON kl."a" = b."a" AND kl."b" = b."b") cur
     WHERE d."a" = cur."a" AND d."b" = cur."b";

    -- delta Q = sum over the batch of m * sum_z L(beta, z) * M(z, alpha), with
    -- L(beta,.) M(., alpha) = L_heavy M_heavy + V_LM + L_light M_heavy + L_light M_light.
    -- Four plain joins (not a union of M's parts), so a small batch gets index nested loops.
    SELECT coalesce(sum(v), 0) INTO delta_q FROM (
        SELECT d.mult * mh.mult * lh.mult AS v
          FROM "pgivm_triangles"."r_delta" d
          JOIN "pgivm_triangles"."t_heavy" mh ON mh."a" = d."a"
          JOIN "pgivm_triangles"."s_heavy" lh ON lh."b" = d."b" AND lh."c" = mh."c"
        UNION ALL
        SELECT d.mult * v.mult
          FROM "pgivm_triangles"."r_delta" d JOIN "pgivm_triangles"."v_st" v ON v."b" = d."b" AND v."a" = d."a"
        UNION ALL
        SELECT d.mult * ll.mult * mh.mult
          FROM "pgivm_triangles"."r_delta" d
          JOIN "pgivm_triangles"."s_light" ll ON ll."b" = d."b"
          JOIN "pgivm_triangles"."t_heavy" mh ON mh."c" = ll."c" AND mh."a" = d."a"
        UNION ALL
        SELECT d.mult * ll.mult * ml.mult
          FROM "pgivm_triangles"."r_delta" d
          JOIN "pgivm_triangles"."s_light" ll ON ll."b" = d."b"
          JOIN "pgivm_triangles"."t_light" ml ON ml."c" = ll."c" AND ml."a" = d."a"
    ) terms;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + delta_q::bigint;
    END IF;

    -- V_KL(alpha, z) += m * L_light(beta, z) for tuples going to K_heavy.
    WITH changed AS (
        INSERT INTO "pgivm_triangles"."v_rs" AS v ("a", "c", mult)
        SELECT d."a", ll."c", sum(d.mult * ll.mult)
          FROM "pgivm_triangles"."r_delta" d JOIN "pgivm_triangles"."s_light" ll ON ll."b" = d."b"
         WHERE d.heavy
         GROUP BY d."a", ll."c"
        HAVING sum(d.mult * ll.mult) <> 0
        ON CONFLICT ("a", "c") DO UPDATE SET mult = v.mult + EXCLUDED.mult
        RETURNING v."a", v."c", v.mult)
    SELECT array_agg("a"), array_agg("c") INTO zeros_a, zeros_b FROM changed WHERE mult = 0;
    DELETE FROM "pgivm_triangles"."v_rs" v USING (SELECT unnest(zeros_a) AS x, unnest(zeros_b) AS z) AS zero WHERE v."a" = zero.x AND v."c" = zero.z;

    -- V_MK(z, beta) += M_heavy(z, alpha) * m for tuples going to K_light.
    WITH changed AS (
        INSERT INTO "pgivm_triangles"."v_tr" AS v ("c", "b", mult)
        SELECT mh."c", d."b", sum(mh.mult * d.mult)
          FROM "pgivm_triangles"."r_delta" d JOIN "pgivm_triangles"."t_heavy" mh ON mh."a" = d."a"
         WHERE NOT d.heavy
         GROUP BY mh."c", d."b"
        HAVING sum(mh.mult * d.mult) <> 0
        ON CONFLICT ("c", "b") DO UPDATE SET mult = v.mult + EXCLUDED.mult
        RETURNING v."c", v."b", v.mult)
    SELECT array_agg("c"), array_agg("b") INTO zeros_b, zeros_c FROM changed WHERE mult = 0;
    DELETE FROM "pgivm_triangles"."v_tr" v USING (SELECT unnest(zeros_b) AS z, unnest(zeros_c) AS y) AS zero WHERE v."c" = zero.z AND v."b" = zero.y;

    -- The batch into the parts: new tuples inserted, changed ones updated, vanished ones deleted.
    INSERT INTO "pgivm_triangles"."r_heavy" AS p ("a", "b", mult)
    SELECT "a", "b", new_mult FROM "pgivm_triangles"."r_delta" WHERE heavy AND new_mult <> 0
    ON CONFLICT ("a", "b") DO UPDATE SET mult = EXCLUDED.mult;
    INSERT INTO "pgivm_triangles"."r_light" AS p ("a", "b", mult)
    SELECT "a", "b", new_mult FROM "pgivm_triangles"."r_delta" WHERE NOT heavy AND new_mult <> 0
    ON CONFLICT ("a", "b") DO UPDATE SET mult = EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."r_heavy" p USING "pgivm_triangles"."r_delta" d
     WHERE d.heavy AND d.new_mult = 0 AND p."a" = d."a" AND p."b" = d."b";
    DELETE FROM "pgivm_triangles"."r_light" p USING "pgivm_triangles"."r_delta" d
     WHERE NOT d.heavy AND d.new_mult = 0 AND p."a" = d."a" AND p."b" = d."b";

    -- Degrees and |D|: +1 per tuple that appeared, -1 per tuple that vanished.
    INSERT INTO "pgivm_triangles"."r_degree" AS g ("a", degree, heavy)
    SELECT "a", sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(heavy)
      FROM "pgivm_triangles"."r_delta" WHERE new_mult = mult OR new_mult = 0
     GROUP BY "a"
    ON CONFLICT ("a") DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM "pgivm_triangles"."r_degree" g USING "pgivm_triangles"."r_delta" d WHERE g."a" = d."a" AND g.degree = 0;
    SELECT coalesce(sum(CASE WHEN new_mult = mult THEN 1 WHEN new_mult = 0 THEN -1 ELSE 0 END), 0)
      INTO size_diff FROM "pgivm_triangles"."r_delta";
    st.db_size := st.db_size + size_diff;
    UPDATE "pgivm_triangles"."state" SET db_size = st.db_size;

    -- Restore the invariants.
    IF st.db_size >= st.n OR st.db_size < st.n / 4 THEN
        UPDATE "pgivm_triangles"."state" SET n = 2 * st.db_size + 1;
        PERFORM "pgivm_triangles"."major_rebalance"();
    ELSE
        FOR moving IN
            SELECT g."a" AS value, NOT g.heavy AS to_heavy
              FROM "pgivm_triangles"."r_degree" g
             WHERE g."a" IN (SELECT "a" FROM "pgivm_triangles"."r_delta")
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM "pgivm_triangles"."move_r"(moving.value, moving.to_heavy);
        END LOOP;
    END IF;
    DELETE FROM "pgivm_triangles"."r_delta";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_batch_r"() IS 'IVMε, set at a time: apply the multi-row change in r_delta to R';

-- Set-at-a-time maintenance of a multi-row change to relation K(X,Y) (rendered for K = R, S, T).
-- The statement trigger puts the statement's net change of K into K_delta, one row per distinct
-- (X,Y) with its multiplicity change, and calls apply_batch_K: a few set-based statements replace
-- one ApplyUpdate per row. Every delta is computed on the state before the batch; the batch then
-- goes into the parts (each X-value into its current part, new values light), and the invariants
-- are restored afterwards: a size-invariant violation resets N = 2|D|+1 with a major rebalancing
-- (as the initial build does), else every value of the batch that crossed a threshold is moved.


CREATE FUNCTION "pgivm_triangles"."apply_batch_s"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
-- The state is hot in memory: index probes cost about as much as sequential reads, so a small
-- batch is best served by index nested loops and only a large one by hash joins.
SET random_page_cost = 1.1
AS $pgivm$
DECLARE
    st        "pgivm_triangles"."state"%ROWTYPE;
    delta_q   numeric;
    size_diff bigint;
    zeros_a   bigint[];
    zeros_b   bigint[];
    zeros_c   bigint[];
    moving    record;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    -- The planner must know the batch's size to choose index nested loops for a small batch and
    -- hash joins for a large one.
    ANALYZE "pgivm_triangles"."s_delta";

    -- Routing, as OnUpdate does it: alpha's current part; a new value is light (heavy at epsilon = 0).
    -- With it each tuple's multiplicity after the batch, from its current one: one pass over the
    -- batch (a tuple lives in its X-value's part, so at most one of the two parts holds it).
    UPDATE "pgivm_triangles"."s_delta" d
       SET heavy = cur.heavy, new_mult = d.mult + cur.mult
      FROM (SELECT b."b", b."c", st.epsilon = 0 OR coalesce(g.heavy, false) AS heavy,
                   coalesce(kh.mult, kl.mult, 0) AS mult
              FROM "pgivm_triangles"."s_delta" b
              LEFT JOIN "pgivm_triangles"."s_degree" g ON g."b" = b."b"
              LEFT JOIN "pgivm_triangles"."s_heavy" kh ON kh."b" = b."b" AND kh."c" = b."c"
              LEFT JOIN "pgivm_triangles"."s_light" kl ON kl."b" = b."b" AND kl."c" = b."c") cur
     WHERE d."b" = cur."b" AND d."c" = cur."c";

    -- delta Q = sum over the batch of m * sum_z L(beta, z) * M(z, alpha), with
    -- L(beta,.) M(., alpha) = L_heavy M_heavy + V_LM + L_light M_heavy + L_light M_light.
    -- Four plain joins (not a union of M's parts), so a small batch gets index nested loops.
    SELECT coalesce(sum(v), 0) INTO delta_q FROM (
        SELECT d.mult * mh.mult * lh.mult AS v
          FROM "pgivm_triangles"."s_delta" d
          JOIN "pgivm_triangles"."r_heavy" mh ON mh."b" = d."b"
          JOIN "pgivm_triangles"."t_heavy" lh ON lh."c" = d."c" AND lh."a" = mh."a"
        UNION ALL
        SELECT d.mult * v.mult
          FROM "pgivm_triangles"."s_delta" d JOIN "pgivm_triangles"."v_tr" v ON v."c" = d."c" AND v."b" = d."b"
        UNION ALL
        SELECT d.mult * ll.mult * mh.mult
          FROM "pgivm_triangles"."s_delta" d
          JOIN "pgivm_triangles"."t_light" ll ON ll."c" = d."c"
          JOIN "pgivm_triangles"."r_heavy" mh ON mh."a" = ll."a" AND mh."b" = d."b"
        UNION ALL
        SELECT d.mult * ll.mult * ml.mult
          FROM "pgivm_triangles"."s_delta" d
          JOIN "pgivm_triangles"."t_light" ll ON ll."c" = d."c"
          JOIN "pgivm_triangles"."r_light" ml ON ml."a" = ll."a" AND ml."b" = d."b"
    ) terms;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + delta_q::bigint;
    END IF;

    -- V_KL(alpha, z) += m * L_light(beta, z) for tuples going to K_heavy.
    WITH changed AS (
        INSERT INTO "pgivm_triangles"."v_st" AS v ("b", "a", mult)
        SELECT d."b", ll."a", sum(d.mult * ll.mult)
          FROM "pgivm_triangles"."s_delta" d JOIN "pgivm_triangles"."t_light" ll ON ll."c" = d."c"
         WHERE d.heavy
         GROUP BY d."b", ll."a"
        HAVING sum(d.mult * ll.mult) <> 0
        ON CONFLICT ("b", "a") DO UPDATE SET mult = v.mult + EXCLUDED.mult
        RETURNING v."b", v."a", v.mult)
    SELECT array_agg("b"), array_agg("a") INTO zeros_a, zeros_b FROM changed WHERE mult = 0;
    DELETE FROM "pgivm_triangles"."v_st" v USING (SELECT unnest(zeros_a) AS x, unnest(zeros_b) AS z) AS zero WHERE v."b" = zero.x AND v."a" = zero.z;

    -- V_MK(z, beta) += M_heavy(z, alpha) * m for tuples going to K_light.
    WITH changed AS (
        INSERT INTO "pgivm_triangles"."v_rs" AS v ("a", "c", mult)
        SELECT mh."a", d."c", sum(mh.mult * d.mult)
          FROM "pgivm_triangles"."s_delta" d JOIN "pgivm_triangles"."r_heavy" mh ON mh."b" = d."b"
         WHERE NOT d.heavy
         GROUP BY mh."a", d."c"
        HAVING sum(mh.mult * d.mult) <> 0
        ON CONFLICT ("a", "c") DO UPDATE SET mult = v.mult + EXCLUDED.mult
        RETURNING v."a", v."c", v.mult)
    SELECT array_agg("a"), array_agg("c") INTO zeros_b, zeros_c FROM changed WHERE mult = 0;
    DELETE FROM "pgivm_triangles"."v_rs" v USING (SELECT unnest(zeros_b) AS z, unnest(zeros_c) AS y) AS zero WHERE v."a" = zero.z AND v."c" = zero.y;

    -- The batch into the parts: new tuples inserted, changed ones updated, vanished ones deleted.
    INSERT INTO "pgivm_triangles"."s_heavy" AS p ("b", "c", mult)
    SELECT "b", "c", new_mult FROM "pgivm_triangles"."s_delta" WHERE heavy AND new_mult <> 0
    ON CONFLICT ("b", "c") DO UPDATE SET mult = EXCLUDED.mult;
    INSERT INTO "pgivm_triangles"."s_light" AS p ("b", "c", mult)
    SELECT "b", "c", new_mult FROM "pgivm_triangles"."s_delta" WHERE NOT heavy AND new_mult <> 0
    ON CONFLICT ("b", "c") DO UPDATE SET mult = EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."s_heavy" p USING "pgivm_triangles"."s_delta" d
     WHERE d.heavy AND d.new_mult = 0 AND p."b" = d."b" AND p."c" = d."c";
    DELETE FROM "pgivm_triangles"."s_light" p USING "pgivm_triangles"."s_delta" d
     WHERE NOT d.heavy AND d.new_mult = 0 AND p."b" = d."b" AND p."c" = d."c";

    -- Degrees and |D|: +1 per tuple that appeared, -1 per tuple that vanished.
    INSERT INTO "pgivm_triangles"."s_degree" AS g ("b", degree, heavy)
    SELECT "b", sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(heavy)
      FROM "pgivm_triangles"."s_delta" WHERE new_mult = mult OR new_mult = 0
     GROUP BY "b"
    ON CONFLICT ("b") DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM "pgivm_triangles"."s_degree" g USING "pgivm_triangles"."s_delta" d WHERE g."b" = d."b" AND g.degree = 0;
    SELECT coalesce(sum(CASE WHEN new_mult = mult THEN 1 WHEN new_mult = 0 THEN -1 ELSE 0 END), 0)
      INTO size_diff FROM "pgivm_triangles"."s_delta";
    st.db_size := st.db_size + size_diff;
    UPDATE "pgivm_triangles"."state" SET db_size = st.db_size;

    -- Restore the invariants.
    IF st.db_size >= st.n OR st.db_size < st.n / 4 THEN
        UPDATE "pgivm_triangles"."state" SET n = 2 * st.db_size + 1;
        PERFORM "pgivm_triangles"."major_rebalance"();
    ELSE
        FOR moving IN
            SELECT g."b" AS value, NOT g.heavy AS to_heavy
              FROM "pgivm_triangles"."s_degree" g
             WHERE g."b" IN (SELECT "b" FROM "pgivm_triangles"."s_delta")
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM "pgivm_triangles"."move_s"(moving.value, moving.to_heavy);
        END LOOP;
    END IF;
    DELETE FROM "pgivm_triangles"."s_delta";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_batch_s"() IS 'IVMε, set at a time: apply the multi-row change in s_delta to S';

-- Set-at-a-time maintenance of a multi-row change to relation K(X,Y) (rendered for K = R, S, T).
-- The statement trigger puts the statement's net change of K into K_delta, one row per distinct
-- (X,Y) with its multiplicity change, and calls apply_batch_K: a few set-based statements replace
-- one ApplyUpdate per row. Every delta is computed on the state before the batch; the batch then
-- goes into the parts (each X-value into its current part, new values light), and the invariants
-- are restored afterwards: a size-invariant violation resets N = 2|D|+1 with a major rebalancing
-- (as the initial build does), else every value of the batch that crossed a threshold is moved.


CREATE FUNCTION "pgivm_triangles"."apply_batch_t"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
-- The state is hot in memory: index probes cost about as much as sequential reads, so a small
-- batch is best served by index nested loops and only a large one by hash joins.
SET random_page_cost = 1.1
AS $pgivm$
DECLARE
    st        "pgivm_triangles"."state"%ROWTYPE;
    delta_q   numeric;
    size_diff bigint;
    zeros_a   bigint[];
    zeros_b   bigint[];
    zeros_c   bigint[];
    moving    record;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    -- The planner must know the batch's size to choose index nested loops for a small batch and
    -- hash joins for a large one.
    ANALYZE "pgivm_triangles"."t_delta";

    -- Routing, as OnUpdate does it: alpha's current part; a new value is light (heavy at epsilon = 0).
    -- With it each tuple's multiplicity after the batch, from its current one: one pass over the
    -- batch (a tuple lives in its X-value's part, so at most one of the two parts holds it).
    UPDATE "pgivm_triangles"."t_delta" d
       SET heavy = cur.heavy, new_mult = d.mult + cur.mult
      FROM (SELECT b."c", b."a", st.epsilon = 0 OR coalesce(g.heavy, false) AS heavy,
                   coalesce(kh.mult, kl.mult, 0) AS mult
              FROM "pgivm_triangles"."t_delta" b
              LEFT JOIN "pgivm_triangles"."t_degree" g ON g."c" = b."c"
              LEFT JOIN "pgivm_triangles"."t_heavy" kh ON kh."c" = b."c" AND kh."a" = b."a"
              LEFT JOIN "pgivm_triangles"."t_light" kl ON kl."c" = b."c" AND kl."a" = b."a") cur
     WHERE d."c" = cur."c" AND d."a" = cur."a";

    -- delta Q = sum over the batch of m * sum_z L(beta, z) * M(z, alpha), with
    -- L(beta,.) M(., alpha) = L_heavy M_heavy + V_LM + L_light M_heavy + L_light M_light.
    -- Four plain joins (not a union of M's parts), so a small batch gets index nested loops.
    SELECT coalesce(sum(v), 0) INTO delta_q FROM (
        SELECT d.mult * mh.mult * lh.mult AS v
          FROM "pgivm_triangles"."t_delta" d
          JOIN "pgivm_triangles"."s_heavy" mh ON mh."c" = d."c"
          JOIN "pgivm_triangles"."r_heavy" lh ON lh."a" = d."a" AND lh."b" = mh."b"
        UNION ALL
        SELECT d.mult * v.mult
          FROM "pgivm_triangles"."t_delta" d JOIN "pgivm_triangles"."v_rs" v ON v."a" = d."a" AND v."c" = d."c"
        UNION ALL
        SELECT d.mult * ll.mult * mh.mult
          FROM "pgivm_triangles"."t_delta" d
          JOIN "pgivm_triangles"."r_light" ll ON ll."a" = d."a"
          JOIN "pgivm_triangles"."s_heavy" mh ON mh."b" = ll."b" AND mh."c" = d."c"
        UNION ALL
        SELECT d.mult * ll.mult * ml.mult
          FROM "pgivm_triangles"."t_delta" d
          JOIN "pgivm_triangles"."r_light" ll ON ll."a" = d."a"
          JOIN "pgivm_triangles"."s_light" ml ON ml."b" = ll."b" AND ml."c" = d."c"
    ) terms;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + delta_q::bigint;
    END IF;

    -- V_KL(alpha, z) += m * L_light(beta, z) for tuples going to K_heavy.
    WITH changed AS (
        INSERT INTO "pgivm_triangles"."v_tr" AS v ("c", "b", mult)
        SELECT d."c", ll."b", sum(d.mult * ll.mult)
          FROM "pgivm_triangles"."t_delta" d JOIN "pgivm_triangles"."r_light" ll ON ll."a" = d."a"
         WHERE d.heavy
         GROUP BY d."c", ll."b"
        HAVING sum(d.mult * ll.mult) <> 0
        ON CONFLICT ("c", "b") DO UPDATE SET mult = v.mult + EXCLUDED.mult
        RETURNING v."c", v."b", v.mult)
    SELECT array_agg("c"), array_agg("b") INTO zeros_a, zeros_b FROM changed WHERE mult = 0;
    DELETE FROM "pgivm_triangles"."v_tr" v USING (SELECT unnest(zeros_a) AS x, unnest(zeros_b) AS z) AS zero WHERE v."c" = zero.x AND v."b" = zero.z;

    -- V_MK(z, beta) += M_heavy(z, alpha) * m for tuples going to K_light.
    WITH changed AS (
        INSERT INTO "pgivm_triangles"."v_st" AS v ("b", "a", mult)
        SELECT mh."b", d."a", sum(mh.mult * d.mult)
          FROM "pgivm_triangles"."t_delta" d JOIN "pgivm_triangles"."s_heavy" mh ON mh."c" = d."c"
         WHERE NOT d.heavy
         GROUP BY mh."b", d."a"
        HAVING sum(mh.mult * d.mult) <> 0
        ON CONFLICT ("b", "a") DO UPDATE SET mult = v.mult + EXCLUDED.mult
        RETURNING v."b", v."a", v.mult)
    SELECT array_agg("b"), array_agg("a") INTO zeros_b, zeros_c FROM changed WHERE mult = 0;
    DELETE FROM "pgivm_triangles"."v_st" v USING (SELECT unnest(zeros_b) AS z, unnest(zeros_c) AS y) AS zero WHERE v."b" = zero.z AND v."a" = zero.y;

    -- The batch into the parts: new tuples inserted, changed ones updated, vanished ones deleted.
    INSERT INTO "pgivm_triangles"."t_heavy" AS p ("c", "a", mult)
    SELECT "c", "a", new_mult FROM "pgivm_triangles"."t_delta" WHERE heavy AND new_mult <> 0
    ON CONFLICT ("c", "a") DO UPDATE SET mult = EXCLUDED.mult;
    INSERT INTO "pgivm_triangles"."t_light" AS p ("c", "a", mult)
    SELECT "c", "a", new_mult FROM "pgivm_triangles"."t_delta" WHERE NOT heavy AND new_mult <> 0
    ON CONFLICT ("c", "a") DO UPDATE SET mult = EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."t_heavy" p USING "pgivm_triangles"."t_delta" d
     WHERE d.heavy AND d.new_mult = 0 AND p."c" = d."c" AND p."a" = d."a";
    DELETE FROM "pgivm_triangles"."t_light" p USING "pgivm_triangles"."t_delta" d
     WHERE NOT d.heavy AND d.new_mult = 0 AND p."c" = d."c" AND p."a" = d."a";

    -- Degrees and |D|: +1 per tuple that appeared, -1 per tuple that vanished.
    INSERT INTO "pgivm_triangles"."t_degree" AS g ("c", degree, heavy)
    SELECT "c", sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(heavy)
      FROM "pgivm_triangles"."t_delta" WHERE new_mult = mult OR new_mult = 0
     GROUP BY "c"
    ON CONFLICT ("c") DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM "pgivm_triangles"."t_degree" g USING "pgivm_triangles"."t_delta" d WHERE g."c" = d."c" AND g.degree = 0;
    SELECT coalesce(sum(CASE WHEN new_mult = mult THEN 1 WHEN new_mult = 0 THEN -1 ELSE 0 END), 0)
      INTO size_diff FROM "pgivm_triangles"."t_delta";
    st.db_size := st.db_size + size_diff;
    UPDATE "pgivm_triangles"."state" SET db_size = st.db_size;

    -- Restore the invariants.
    IF st.db_size >= st.n OR st.db_size < st.n / 4 THEN
        UPDATE "pgivm_triangles"."state" SET n = 2 * st.db_size + 1;
        PERFORM "pgivm_triangles"."major_rebalance"();
    ELSE
        FOR moving IN
            SELECT g."c" AS value, NOT g.heavy AS to_heavy
              FROM "pgivm_triangles"."t_degree" g
             WHERE g."c" IN (SELECT "c" FROM "pgivm_triangles"."t_delta")
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM "pgivm_triangles"."move_t"(moving.value, moving.to_heavy);
        END LOOP;
    END IF;
    DELETE FROM "pgivm_triangles"."t_delta";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_batch_t"() IS 'IVMε, set at a time: apply the multi-row change in t_delta to T';

-- View-wide maintenance: major rebalancing, the count from the partitioned state, and the
-- set-at-a-time build from the base tables. Rendered once per view.

-- MajorRebalancing (Kara et al., Figure 4): strict repartition of R, S and T at the new threshold
-- N^epsilon, then V_RS, V_ST and V_TR from scratch. The count is unchanged.
-- Runs with the planner's full toolbox: these are bulk statements, not point lookups.
CREATE FUNCTION "pgivm_triangles"."major_rebalance"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
BEGIN
    UPDATE "pgivm_triangles"."state" SET theta = power(n::float8, epsilon), major_rebalances = major_rebalances + 1;
    PERFORM "pgivm_triangles"."repartition_r"();
    PERFORM "pgivm_triangles"."repartition_s"();
    PERFORM "pgivm_triangles"."repartition_t"();
    PERFORM "pgivm_triangles"."recompute_v_rs"();
    PERFORM "pgivm_triangles"."recompute_v_st"();
    PERFORM "pgivm_triangles"."recompute_v_tr"();
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."major_rebalance"() IS 'IVMε MajorRebalancing: strict repartition at theta = N^epsilon and recompute V_RS, V_ST, V_TR';


-- The count from the partitioned state, sum over the 8 heavy/light combinations R_r S_s T_t:
--   V_RS * T covers (h,l,*), V_ST * R covers (*,h,l), V_TR * S covers (l,*,h); then hhh and lll.
-- O(N^(1+max(eps, 1-eps))) at worst (the hhh and lll joins); used by the build, TRUNCATE and verify.
CREATE FUNCTION "pgivm_triangles"."count_from_state"()
RETURNS bigint LANGUAGE sql SECURITY DEFINER STABLE
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
    SELECT (
        (SELECT coalesce(sum(v.mult * t.mult), 0)
           FROM "pgivm_triangles"."v_rs" v
           JOIN (SELECT c, a, mult FROM "pgivm_triangles"."t_heavy" UNION ALL SELECT c, a, mult FROM "pgivm_triangles"."t_light") t
             ON t.c = v.c AND t.a = v.a)
      + (SELECT coalesce(sum(v.mult * r.mult), 0)
           FROM "pgivm_triangles"."v_st" v
           JOIN (SELECT a, b, mult FROM "pgivm_triangles"."r_heavy" UNION ALL SELECT a, b, mult FROM "pgivm_triangles"."r_light") r
             ON r.a = v.a AND r.b = v.b)
      + (SELECT coalesce(sum(v.mult * s.mult), 0)
           FROM "pgivm_triangles"."v_tr" v
           JOIN (SELECT b, c, mult FROM "pgivm_triangles"."s_heavy" UNION ALL SELECT b, c, mult FROM "pgivm_triangles"."s_light") s
             ON s.b = v.b AND s.c = v.c)
      + (SELECT coalesce(sum(r.mult * s.mult * t.mult), 0)
           FROM "pgivm_triangles"."r_heavy" r
           JOIN "pgivm_triangles"."t_heavy" t ON t.a = r.a
           JOIN "pgivm_triangles"."s_heavy" s ON s.b = r.b AND s.c = t.c)
      + (SELECT coalesce(sum(r.mult * s.mult * t.mult), 0)
           FROM "pgivm_triangles"."r_light" r
           JOIN "pgivm_triangles"."s_light" s ON s.b = r.b
           JOIN "pgivm_triangles"."t_light" t ON t.c = s.c AND t.a = r.a)
    )::bigint
$pgivm$;


-- Preprocessing (Kara et al., Prop. 8): N = 2|D| + 1, strict partitions, views, count.
-- Called after the parts of some relations were (re)loaded; O(N^(3/2)) for epsilon = 1/2.
CREATE FUNCTION "pgivm_triangles"."restart"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
DECLARE
    size bigint;
BEGIN
    SELECT (SELECT count(*) FROM "pgivm_triangles"."r_heavy") + (SELECT count(*) FROM "pgivm_triangles"."r_light")
         + (SELECT count(*) FROM "pgivm_triangles"."s_heavy") + (SELECT count(*) FROM "pgivm_triangles"."s_light")
         + (SELECT count(*) FROM "pgivm_triangles"."t_heavy") + (SELECT count(*) FROM "pgivm_triangles"."t_light")
      INTO size;
    UPDATE "pgivm_triangles"."state" SET db_size = size, n = 2 * size + 1;
    PERFORM "pgivm_triangles"."major_rebalance"();
    UPDATE "pgivm_triangles"."result" SET count = "pgivm_triangles"."count_from_state"();
END;
$pgivm$;

-- Clear relation K after a TRUNCATE of the table it is read from: with that table empty, K is
-- empty too. The caller then restarts (N, strict partition, views, count) from what remains.
-- DELETE rather than TRUNCATE: TRUNCATE would make the tables look empty to snapshots taken
-- before it, such as a concurrent `pgivm verify`.
CREATE FUNCTION "pgivm_triangles"."clear_r"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."r_heavy";
    DELETE FROM "pgivm_triangles"."r_light";
    DELETE FROM "pgivm_triangles"."r_degree";
END;
$pgivm$;

-- Clear relation K after a TRUNCATE of the table it is read from: with that table empty, K is
-- empty too. The caller then restarts (N, strict partition, views, count) from what remains.
-- DELETE rather than TRUNCATE: TRUNCATE would make the tables look empty to snapshots taken
-- before it, such as a concurrent `pgivm verify`.
CREATE FUNCTION "pgivm_triangles"."clear_s"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."s_heavy";
    DELETE FROM "pgivm_triangles"."s_light";
    DELETE FROM "pgivm_triangles"."s_degree";
END;
$pgivm$;

-- Clear relation K after a TRUNCATE of the table it is read from: with that table empty, K is
-- empty too. The caller then restarts (N, strict partition, views, count) from what remains.
-- DELETE rather than TRUNCATE: TRUNCATE would make the tables look empty to snapshots taken
-- before it, such as a concurrent `pgivm verify`.
CREATE FUNCTION "pgivm_triangles"."clear_t"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."t_heavy";
    DELETE FROM "pgivm_triangles"."t_light";
    DELETE FROM "pgivm_triangles"."t_degree";
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

CREATE FUNCTION "pgivm_triangles"."on_change_rst"()
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
            FOR change IN SELECT changes."a", changes."b", sum(changes.m)::bigint AS m FROM (SELECT new_rows."src" AS "a", new_rows."dst" AS "b", 1 AS m FROM new_rows WHERE new_rows."src" IS NOT NULL AND new_rows."dst" IS NOT NULL) AS changes GROUP BY changes."a", changes."b" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_r"(change."a", change."b", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."r_delta" ("a", "b", mult) SELECT changes."a", changes."b", sum(changes.m)::bigint AS m FROM (SELECT new_rows."src" AS "a", new_rows."dst" AS "b", 1 AS m FROM new_rows WHERE new_rows."src" IS NOT NULL AND new_rows."dst" IS NOT NULL) AS changes GROUP BY changes."a", changes."b" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_r"();
        END IF;
        -- S
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."src" AS "b", new_rows."dst" AS "c", 1 AS m FROM new_rows WHERE new_rows."src" IS NOT NULL AND new_rows."dst" IS NOT NULL) AS changes GROUP BY changes."b", changes."c" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_s"(change."b", change."c", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."s_delta" ("b", "c", mult) SELECT changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."src" AS "b", new_rows."dst" AS "c", 1 AS m FROM new_rows WHERE new_rows."src" IS NOT NULL AND new_rows."dst" IS NOT NULL) AS changes GROUP BY changes."b", changes."c" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_s"();
        END IF;
        -- T
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."c", changes."a", sum(changes.m)::bigint AS m FROM (SELECT new_rows."src" AS "c", new_rows."dst" AS "a", 1 AS m FROM new_rows WHERE new_rows."src" IS NOT NULL AND new_rows."dst" IS NOT NULL) AS changes GROUP BY changes."c", changes."a" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_t"(change."c", change."a", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."t_delta" ("c", "a", mult) SELECT changes."c", changes."a", sum(changes.m)::bigint AS m FROM (SELECT new_rows."src" AS "c", new_rows."dst" AS "a", 1 AS m FROM new_rows WHERE new_rows."src" IS NOT NULL AND new_rows."dst" IS NOT NULL) AS changes GROUP BY changes."c", changes."a" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_t"();
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        -- R
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."a", changes."b", sum(changes.m)::bigint AS m FROM (SELECT old_rows."src" AS "a", old_rows."dst" AS "b", -1 AS m FROM old_rows WHERE old_rows."src" IS NOT NULL AND old_rows."dst" IS NOT NULL) AS changes GROUP BY changes."a", changes."b" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_r"(change."a", change."b", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."r_delta" ("a", "b", mult) SELECT changes."a", changes."b", sum(changes.m)::bigint AS m FROM (SELECT old_rows."src" AS "a", old_rows."dst" AS "b", -1 AS m FROM old_rows WHERE old_rows."src" IS NOT NULL AND old_rows."dst" IS NOT NULL) AS changes GROUP BY changes."a", changes."b" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_r"();
        END IF;
        -- S
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT old_rows."src" AS "b", old_rows."dst" AS "c", -1 AS m FROM old_rows WHERE old_rows."src" IS NOT NULL AND old_rows."dst" IS NOT NULL) AS changes GROUP BY changes."b", changes."c" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_s"(change."b", change."c", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."s_delta" ("b", "c", mult) SELECT changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT old_rows."src" AS "b", old_rows."dst" AS "c", -1 AS m FROM old_rows WHERE old_rows."src" IS NOT NULL AND old_rows."dst" IS NOT NULL) AS changes GROUP BY changes."b", changes."c" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_s"();
        END IF;
        -- T
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."c", changes."a", sum(changes.m)::bigint AS m FROM (SELECT old_rows."src" AS "c", old_rows."dst" AS "a", -1 AS m FROM old_rows WHERE old_rows."src" IS NOT NULL AND old_rows."dst" IS NOT NULL) AS changes GROUP BY changes."c", changes."a" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_t"(change."c", change."a", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."t_delta" ("c", "a", mult) SELECT changes."c", changes."a", sum(changes.m)::bigint AS m FROM (SELECT old_rows."src" AS "c", old_rows."dst" AS "a", -1 AS m FROM old_rows WHERE old_rows."src" IS NOT NULL AND old_rows."dst" IS NOT NULL) AS changes GROUP BY changes."c", changes."a" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_t"();
        END IF;
    ELSE
        -- R
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."a", changes."b", sum(changes.m)::bigint AS m FROM (SELECT new_rows."src" AS "a", new_rows."dst" AS "b", 1 AS m FROM new_rows WHERE new_rows."src" IS NOT NULL AND new_rows."dst" IS NOT NULL UNION ALL SELECT old_rows."src" AS "a", old_rows."dst" AS "b", -1 AS m FROM old_rows WHERE old_rows."src" IS NOT NULL AND old_rows."dst" IS NOT NULL) AS changes GROUP BY changes."a", changes."b" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_r"(change."a", change."b", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."r_delta" ("a", "b", mult) SELECT changes."a", changes."b", sum(changes.m)::bigint AS m FROM (SELECT new_rows."src" AS "a", new_rows."dst" AS "b", 1 AS m FROM new_rows WHERE new_rows."src" IS NOT NULL AND new_rows."dst" IS NOT NULL UNION ALL SELECT old_rows."src" AS "a", old_rows."dst" AS "b", -1 AS m FROM old_rows WHERE old_rows."src" IS NOT NULL AND old_rows."dst" IS NOT NULL) AS changes GROUP BY changes."a", changes."b" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_r"();
        END IF;
        -- S
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."src" AS "b", new_rows."dst" AS "c", 1 AS m FROM new_rows WHERE new_rows."src" IS NOT NULL AND new_rows."dst" IS NOT NULL UNION ALL SELECT old_rows."src" AS "b", old_rows."dst" AS "c", -1 AS m FROM old_rows WHERE old_rows."src" IS NOT NULL AND old_rows."dst" IS NOT NULL) AS changes GROUP BY changes."b", changes."c" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_s"(change."b", change."c", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."s_delta" ("b", "c", mult) SELECT changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."src" AS "b", new_rows."dst" AS "c", 1 AS m FROM new_rows WHERE new_rows."src" IS NOT NULL AND new_rows."dst" IS NOT NULL UNION ALL SELECT old_rows."src" AS "b", old_rows."dst" AS "c", -1 AS m FROM old_rows WHERE old_rows."src" IS NOT NULL AND old_rows."dst" IS NOT NULL) AS changes GROUP BY changes."b", changes."c" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_s"();
        END IF;
        -- T
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."c", changes."a", sum(changes.m)::bigint AS m FROM (SELECT new_rows."src" AS "c", new_rows."dst" AS "a", 1 AS m FROM new_rows WHERE new_rows."src" IS NOT NULL AND new_rows."dst" IS NOT NULL UNION ALL SELECT old_rows."src" AS "c", old_rows."dst" AS "a", -1 AS m FROM old_rows WHERE old_rows."src" IS NOT NULL AND old_rows."dst" IS NOT NULL) AS changes GROUP BY changes."c", changes."a" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_t"(change."c", change."a", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."t_delta" ("c", "a", mult) SELECT changes."c", changes."a", sum(changes.m)::bigint AS m FROM (SELECT new_rows."src" AS "c", new_rows."dst" AS "a", 1 AS m FROM new_rows WHERE new_rows."src" IS NOT NULL AND new_rows."dst" IS NOT NULL UNION ALL SELECT old_rows."src" AS "c", old_rows."dst" AS "a", -1 AS m FROM old_rows WHERE old_rows."src" IS NOT NULL AND old_rows."dst" IS NOT NULL) AS changes GROUP BY changes."c", changes."a" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_t"();
        END IF;
    END IF;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_change_rst"() IS 'pgivm view triangles: maintain the IVMε state for changes of public.e as R, S, T';

-- TRUNCATE of a partition (or of a partitioned table, which fires this on every partition) takes
-- only that partition's rows away: read them just before they go and hand them to the sink as a
-- deletion, set at a time (with the log sink, a TRUNCATE of a plain table goes this way too). The partition is found by the trigger's oid (TG_RELID), named from the oid at
-- this moment, and the query names its tableoid column, so it cannot run anything but a read of
-- that table; row_security = off makes a policy an error instead of code that runs here.
CREATE FUNCTION "pgivm_triangles"."on_truncate_rows_rst"()
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
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_triangles"."r_delta" ("a", "b", mult) SELECT base."src", base."dst", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."src" IS NOT NULL AND base."dst" IS NOT NULL GROUP BY 1, 2', TG_RELID::pg_catalog.regclass, TG_RELID);
    PERFORM "pgivm_triangles"."apply_batch_r"();
    -- S
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_triangles"."s_delta" ("b", "c", mult) SELECT base."src", base."dst", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."src" IS NOT NULL AND base."dst" IS NOT NULL GROUP BY 1, 2', TG_RELID::pg_catalog.regclass, TG_RELID);
    PERFORM "pgivm_triangles"."apply_batch_s"();
    -- T
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_triangles"."t_delta" ("c", "a", mult) SELECT base."src", base."dst", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."src" IS NOT NULL AND base."dst" IS NOT NULL GROUP BY 1, 2', TG_RELID::pg_catalog.regclass, TG_RELID);
    PERFORM "pgivm_triangles"."apply_batch_t"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_truncate_rows_rst"() IS 'pgivm view triangles: before TRUNCATE of public.e or a partition of it, take its rows away as a deletion';

-- With the apply sink, TRUNCATE of a plain table empties every relation it feeds: clear them and
-- restart (N, the partition and the views from the remaining relations). Nothing needs to be read.
CREATE FUNCTION "pgivm_triangles"."on_truncate_rst"()
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
    PERFORM "pgivm_triangles"."clear_s"();
    PERFORM "pgivm_triangles"."clear_t"();
    PERFORM "pgivm_triangles"."restart"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_truncate_rst"() IS 'pgivm view triangles: clear the IVMε state of public.e as R, S, T after TRUNCATE';

-- phase: build (2 statements)

-- The initial build of relation K from its base table, set at a time: one row per distinct (X, Y)
-- with its multiplicity, all in the light part (the following restart() repartitions strictly).
-- Rows with a NULL join column never join and are not part of K. Run once by `pgivm create` in its
-- own transaction, with the base table locked and pinned by oid (the guard names tableoid, so
-- the statement fails to parse if the name no longer led to that table).
INSERT INTO "pgivm_triangles"."r_light" ("a", "b", mult)
SELECT base."src", base."dst", count(*)
  FROM "public"."e" base
 WHERE "base".tableoid = 16384::pg_catalog.oid AND base."src" IS NOT NULL AND base."dst" IS NOT NULL
 GROUP BY 1, 2;
INSERT INTO "pgivm_triangles"."r_degree" ("a", degree, heavy)
SELECT "a", count(*), false FROM "pgivm_triangles"."r_light" GROUP BY "a";

-- The initial build of relation K from its base table, set at a time: one row per distinct (X, Y)
-- with its multiplicity, all in the light part (the following restart() repartitions strictly).
-- Rows with a NULL join column never join and are not part of K. Run once by `pgivm create` in its
-- own transaction, with the base table locked and pinned by oid (the guard names tableoid, so
-- the statement fails to parse if the name no longer led to that table).
INSERT INTO "pgivm_triangles"."s_light" ("b", "c", mult)
SELECT base."src", base."dst", count(*)
  FROM "public"."e" base
 WHERE "base".tableoid = 16384::pg_catalog.oid AND base."src" IS NOT NULL AND base."dst" IS NOT NULL
 GROUP BY 1, 2;
INSERT INTO "pgivm_triangles"."s_degree" ("b", degree, heavy)
SELECT "b", count(*), false FROM "pgivm_triangles"."s_light" GROUP BY "b";

-- The initial build of relation K from its base table, set at a time: one row per distinct (X, Y)
-- with its multiplicity, all in the light part (the following restart() repartitions strictly).
-- Rows with a NULL join column never join and are not part of K. Run once by `pgivm create` in its
-- own transaction, with the base table locked and pinned by oid (the guard names tableoid, so
-- the statement fails to parse if the name no longer led to that table).
INSERT INTO "pgivm_triangles"."t_light" ("c", "a", mult)
SELECT base."src", base."dst", count(*)
  FROM "public"."e" base
 WHERE "base".tableoid = 16384::pg_catalog.oid AND base."src" IS NOT NULL AND base."dst" IS NOT NULL
 GROUP BY 1, 2;
INSERT INTO "pgivm_triangles"."t_degree" ("c", degree, heavy)
SELECT "c", count(*), false FROM "pgivm_triangles"."t_light" GROUP BY "c";

SELECT "pgivm_triangles"."restart"();

ANALYZE "pgivm_triangles"."r_heavy"; ANALYZE "pgivm_triangles"."r_light"; ANALYZE "pgivm_triangles"."r_degree"; ANALYZE "pgivm_triangles"."s_heavy"; ANALYZE "pgivm_triangles"."s_light"; ANALYZE "pgivm_triangles"."s_degree"; ANALYZE "pgivm_triangles"."t_heavy"; ANALYZE "pgivm_triangles"."t_light"; ANALYZE "pgivm_triangles"."t_degree"; ANALYZE "pgivm_triangles"."v_rs"; ANALYZE "pgivm_triangles"."v_st"; ANALYZE "pgivm_triangles"."v_tr";

-- phase: capture (5 statements)

CREATE TRIGGER "pgivm_triangles_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "public"."e" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_triangles_insert" AFTER INSERT ON "public"."e" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_rst"();

CREATE TRIGGER "pgivm_triangles_delete" AFTER DELETE ON "public"."e" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_rst"();

CREATE TRIGGER "pgivm_triangles_update" AFTER UPDATE ON "public"."e" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_rst"();

CREATE TRIGGER "pgivm_triangles_truncate" AFTER TRUNCATE ON "public"."e" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_truncate_rst"();

-- phase: expose (2 statements)

CREATE OR REPLACE VIEW "public"."triangles" AS SELECT count AS "count" FROM "pgivm_triangles"."result"; COMMENT ON VIEW "public"."triangles" IS 'pgivm: maintained by IVMε, state in schema pgivm_triangles. Definition: SELECT count(*) FROM e AS x JOIN e AS y ON x.dst = y.src JOIN e AS z ON y.dst = z.src AND z.dst = x.src';

REVOKE ALL ON ALL TABLES IN SCHEMA "pgivm_triangles" FROM PUBLIC; REVOKE ALL ON ALL FUNCTIONS IN SCHEMA "pgivm_triangles" FROM PUBLIC;
