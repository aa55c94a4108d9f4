-- pgivm golden install plan: system ivme, case loomis-whitney-4, options {'epsilon': 0.5, 'partitions': 'single', 'batch_threshold': 384}
-- view public.triangles AS SELECT count(*) FROM r1 JOIN r2 ON r1.b = r2.b AND r1.c = r2.c JOIN r3 ON r3.c = r1.c AND r3.d = r2.d AND r3.a = r1.a JOIN r4 ON r4.d = r2.d AND r4.a = r1.a AND r4.b = r1.b
-- regenerate: PGIVM_REGENERATE_GOLDEN=1 python -m pytest tests/systems/test_golden_plans.py

-- phase: state (6 statements)

-- IVMε state shared by the whole view: the maintained count and the threshold bookkeeping.
-- Rendered once per view. Placeholders are quoted identifiers and literals filled in by
-- pgivm.systems.ivme; every name is schema-qualified.

-- (the schema itself: pgivm_catalog.create_state_schema, as the view's owner)
COMMENT ON SCHEMA "pgivm_triangles" IS 'pgivm state of view triangles (strategy ivme, Loomis-Whitney of degree 4): SELECT count(*) FROM r1 JOIN r2 ON r1.b = r2.b AND r1.c = r2.c JOIN r3 ON r3.c = r1.c AND r3.d = r2.d AND r3.a = r1.a JOIN r4 ON r4.d = r2.d AND r4.a = r1.a AND r4.b = r1.b';

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

-- The state of one relation R_i of a Loomis-Whitney count of degree n >= 4 (Kara et al., long
-- version, Appendix F), rendered for each relation: R_i is over every variable but A_(i-1) and
-- partitioned on A_i ("a"). The triangle's state (10_relation_tables.sql) with n - 1 columns.
--
--   K_heavy, K_light  tuples whose A_i-value is heavy / light, one row per distinct tuple, with its multiplicity
--   K_degree          per A_i-value: its degree (distinct tuples) and its part
--   V_i               the auxiliary view over R_i's variables: sum over A_(i-1) of the heavy parts of
--                     every other relation but R_(i-1), and R_(i-1)'s light part (F.1, case 2)
CREATE TABLE "pgivm_triangles"."k1_heavy" (
    "a" integer NOT NULL,
    "b" integer NOT NULL,
    "c" integer NOT NULL,
    mult bigint NOT NULL,
    PRIMARY KEY ("b", "c", "a") INCLUDE (mult)  -- a tuple's lookup; a heavy A_i-value per binding of the others
);
CREATE INDEX ON "pgivm_triangles"."k1_heavy" ("a", "b", "c") INCLUDE (mult);  -- the tuples of one A_i-value (moves)
COMMENT ON TABLE "pgivm_triangles"."k1_heavy" IS 'IVMε (Loomis-Whitney): heavy part of K1, partitioned on A';

CREATE TABLE "pgivm_triangles"."k1_light" (
    "a" integer NOT NULL,
    "b" integer NOT NULL,
    "c" integer NOT NULL,
    mult bigint NOT NULL,
    PRIMARY KEY ("b", "c", "a") INCLUDE (mult)
);
-- The tuples of one light A_i-value: fewer than 3/2 N^eps, the bounded loops of F.1 cases 3 and 4.
CREATE INDEX ON "pgivm_triangles"."k1_light" ("a", "b", "c") INCLUDE (mult);
COMMENT ON TABLE "pgivm_triangles"."k1_light" IS 'IVMε (Loomis-Whitney): light part of K1, partitioned on A';

CREATE TABLE "pgivm_triangles"."k1_degree" (
    "a" integer PRIMARY KEY,
    degree bigint NOT NULL,
    heavy  boolean NOT NULL
);
COMMENT ON TABLE "pgivm_triangles"."k1_degree" IS 'IVMε: per A-value of K1, its degree and whether it is heavy';

CREATE TABLE "pgivm_triangles"."v_k1" (
    "a" integer NOT NULL,
    "b" integer NOT NULL,
    "c" integer NOT NULL,
    mult bigint NOT NULL,
    PRIMARY KEY ("a", "b", "c")
);
-- The entries a batch's upsert brings to 0, deleted at once after it (never there between statements).
CREATE INDEX ON "pgivm_triangles"."v_k1" (mult) WHERE mult = 0;
COMMENT ON TABLE "pgivm_triangles"."v_k1" IS 'IVMε auxiliary view V_1 over K1''s variables: serves updates to K1';

-- A multi-row statement's net change of R_i, applied set at a time by apply_batch_K.
CREATE TABLE "pgivm_triangles"."k1_delta" (
    "a" integer NOT NULL,
    "b" integer NOT NULL,
    "c" integer NOT NULL,
    mult     bigint NOT NULL,  -- net change of the tuple's multiplicity in the statement
    heavy    boolean,          -- the part the tuple goes to (its partition value's part before the batch)
    new_mult bigint            -- its multiplicity after the batch (0: it vanished; = mult: it is new)
);
COMMENT ON TABLE "pgivm_triangles"."k1_delta" IS 'pgivm scratch: the net change of K1 by the current multi-row statement';

-- The state of one relation R_i of a Loomis-Whitney count of degree n >= 4 (Kara et al., long
-- version, Appendix F), rendered for each relation: R_i is over every variable but A_(i-1) and
-- partitioned on A_i ("b"). The triangle's state (10_relation_tables.sql) with n - 1 columns.
--
--   K_heavy, K_light  tuples whose A_i-value is heavy / light, one row per distinct tuple, with its multiplicity
--   K_degree          per A_i-value: its degree (distinct tuples) and its part
--   V_i               the auxiliary view over R_i's variables: sum over A_(i-1) of the heavy parts of
--                     every other relation but R_(i-1), and R_(i-1)'s light part (F.1, case 2)
CREATE TABLE "pgivm_triangles"."k2_heavy" (
    "b" integer NOT NULL,
    "c" integer NOT NULL,
    "d" integer NOT NULL,
    mult bigint NOT NULL,
    PRIMARY KEY ("c", "d", "b") INCLUDE (mult)  -- a tuple's lookup; a heavy A_i-value per binding of the others
);
CREATE INDEX ON "pgivm_triangles"."k2_heavy" ("b", "c", "d") INCLUDE (mult);  -- the tuples of one A_i-value (moves)
COMMENT ON TABLE "pgivm_triangles"."k2_heavy" IS 'IVMε (Loomis-Whitney): heavy part of K2, partitioned on B';

CREATE TABLE "pgivm_triangles"."k2_light" (
    "b" integer NOT NULL,
    "c" integer NOT NULL,
    "d" integer NOT NULL,
    mult bigint NOT NULL,
    PRIMARY KEY ("c", "d", "b") INCLUDE (mult)
);
-- The tuples of one light A_i-value: fewer than 3/2 N^eps, the bounded loops of F.1 cases 3 and 4.
CREATE INDEX ON "pgivm_triangles"."k2_light" ("b", "c", "d") INCLUDE (mult);
COMMENT ON TABLE "pgivm_triangles"."k2_light" IS 'IVMε (Loomis-Whitney): light part of K2, partitioned on B';

CREATE TABLE "pgivm_triangles"."k2_degree" (
    "b" integer PRIMARY KEY,
    degree bigint NOT NULL,
    heavy  boolean NOT NULL
);
COMMENT ON TABLE "pgivm_triangles"."k2_degree" IS 'IVMε: per B-value of K2, its degree and whether it is heavy';

CREATE TABLE "pgivm_triangles"."v_k2" (
    "b" integer NOT NULL,
    "c" integer NOT NULL,
    "d" integer NOT NULL,
    mult bigint NOT NULL,
    PRIMARY KEY ("b", "c", "d")
);
-- The entries a batch's upsert brings to 0, deleted at once after it (never there between statements).
CREATE INDEX ON "pgivm_triangles"."v_k2" (mult) WHERE mult = 0;
COMMENT ON TABLE "pgivm_triangles"."v_k2" IS 'IVMε auxiliary view V_2 over K2''s variables: serves updates to K2';

-- A multi-row statement's net change of R_i, applied set at a time by apply_batch_K.
CREATE TABLE "pgivm_triangles"."k2_delta" (
    "b" integer NOT NULL,
    "c" integer NOT NULL,
    "d" integer NOT NULL,
    mult     bigint NOT NULL,  -- net change of the tuple's multiplicity in the statement
    heavy    boolean,          -- the part the tuple goes to (its partition value's part before the batch)
    new_mult bigint            -- its multiplicity after the batch (0: it vanished; = mult: it is new)
);
COMMENT ON TABLE "pgivm_triangles"."k2_delta" IS 'pgivm scratch: the net change of K2 by the current multi-row statement';

-- The state of one relation R_i of a Loomis-Whitney count of degree n >= 4 (Kara et al., long
-- version, Appendix F), rendered for each relation: R_i is over every variable but A_(i-1) and
-- partitioned on A_i ("c"). The triangle's state (10_relation_tables.sql) with n - 1 columns.
--
--   K_heavy, K_light  tuples whose A_i-value is heavy / light, one row per distinct tuple, with its multiplicity
--   K_degree          per A_i-value: its degree (distinct tuples) and its part
--   V_i               the auxiliary view over R_i's variables: sum over A_(i-1) of the heavy parts of
--                     every other relation but R_(i-1), and R_(i-1)'s light part (F.1, case 2)
CREATE TABLE "pgivm_triangles"."k3_heavy" (
    "a" integer NOT NULL,
    "c" integer NOT NULL,
    "d" integer NOT NULL,
    mult bigint NOT NULL,
    PRIMARY KEY ("a", "d", "c") INCLUDE (mult)  -- a tuple's lookup; a heavy A_i-value per binding of the others
);
CREATE INDEX ON "pgivm_triangles"."k3_heavy" ("c", "a", "d") INCLUDE (mult);  -- the tuples of one A_i-value (moves)
COMMENT ON TABLE "pgivm_triangles"."k3_heavy" IS 'IVMε (Loomis-Whitney): heavy part of K3, partitioned on C';

CREATE TABLE "pgivm_triangles"."k3_light" (
    "a" integer NOT NULL,
    "c" integer NOT NULL,
    "d" integer NOT NULL,
    mult bigint NOT NULL,
    PRIMARY KEY ("a", "d", "c") INCLUDE (mult)
);
-- The tuples of one light A_i-value: fewer than 3/2 N^eps, the bounded loops of F.1 cases 3 and 4.
CREATE INDEX ON "pgivm_triangles"."k3_light" ("c", "a", "d") INCLUDE (mult);
COMMENT ON TABLE "pgivm_triangles"."k3_light" IS 'IVMε (Loomis-Whitney): light part of K3, partitioned on C';

CREATE TABLE "pgivm_triangles"."k3_degree" (
    "c" integer PRIMARY KEY,
    degree bigint NOT NULL,
    heavy  boolean NOT NULL
);
COMMENT ON TABLE "pgivm_triangles"."k3_degree" IS 'IVMε: per C-value of K3, its degree and whether it is heavy';

CREATE TABLE "pgivm_triangles"."v_k3" (
    "a" integer NOT NULL,
    "c" integer NOT NULL,
    "d" integer NOT NULL,
    mult bigint NOT NULL,
    PRIMARY KEY ("a", "c", "d")
);
-- The entries a batch's upsert brings to 0, deleted at once after it (never there between statements).
CREATE INDEX ON "pgivm_triangles"."v_k3" (mult) WHERE mult = 0;
COMMENT ON TABLE "pgivm_triangles"."v_k3" IS 'IVMε auxiliary view V_3 over K3''s variables: serves updates to K3';

-- A multi-row statement's net change of R_i, applied set at a time by apply_batch_K.
CREATE TABLE "pgivm_triangles"."k3_delta" (
    "a" integer NOT NULL,
    "c" integer NOT NULL,
    "d" integer NOT NULL,
    mult     bigint NOT NULL,  -- net change of the tuple's multiplicity in the statement
    heavy    boolean,          -- the part the tuple goes to (its partition value's part before the batch)
    new_mult bigint            -- its multiplicity after the batch (0: it vanished; = mult: it is new)
);
COMMENT ON TABLE "pgivm_triangles"."k3_delta" IS 'pgivm scratch: the net change of K3 by the current multi-row statement';

-- The state of one relation R_i of a Loomis-Whitney count of degree n >= 4 (Kara et al., long
-- version, Appendix F), rendered for each relation: R_i is over every variable but A_(i-1) and
-- partitioned on A_i ("d"). The triangle's state (10_relation_tables.sql) with n - 1 columns.
--
--   K_heavy, K_light  tuples whose A_i-value is heavy / light, one row per distinct tuple, with its multiplicity
--   K_degree          per A_i-value: its degree (distinct tuples) and its part
--   V_i               the auxiliary view over R_i's variables: sum over A_(i-1) of the heavy parts of
--                     every other relation but R_(i-1), and R_(i-1)'s light part (F.1, case 2)
CREATE TABLE "pgivm_triangles"."k4_heavy" (
    "a" integer NOT NULL,
    "b" integer NOT NULL,
    "d" integer NOT NULL,
    mult bigint NOT NULL,
    PRIMARY KEY ("a", "b", "d") INCLUDE (mult)  -- a tuple's lookup; a heavy A_i-value per binding of the others
);
CREATE INDEX ON "pgivm_triangles"."k4_heavy" ("d", "a", "b") INCLUDE (mult);  -- the tuples of one A_i-value (moves)
COMMENT ON TABLE "pgivm_triangles"."k4_heavy" IS 'IVMε (Loomis-Whitney): heavy part of K4, partitioned on D';

CREATE TABLE "pgivm_triangles"."k4_light" (
    "a" integer NOT NULL,
    "b" integer NOT NULL,
    "d" integer NOT NULL,
    mult bigint NOT NULL,
    PRIMARY KEY ("a", "b", "d") INCLUDE (mult)
);
-- The tuples of one light A_i-value: fewer than 3/2 N^eps, the bounded loops of F.1 cases 3 and 4.
CREATE INDEX ON "pgivm_triangles"."k4_light" ("d", "a", "b") INCLUDE (mult);
COMMENT ON TABLE "pgivm_triangles"."k4_light" IS 'IVMε (Loomis-Whitney): light part of K4, partitioned on D';

CREATE TABLE "pgivm_triangles"."k4_degree" (
    "d" integer PRIMARY KEY,
    degree bigint NOT NULL,
    heavy  boolean NOT NULL
);
COMMENT ON TABLE "pgivm_triangles"."k4_degree" IS 'IVMε: per D-value of K4, its degree and whether it is heavy';

CREATE TABLE "pgivm_triangles"."v_k4" (
    "a" integer NOT NULL,
    "b" integer NOT NULL,
    "d" integer NOT NULL,
    mult bigint NOT NULL,
    PRIMARY KEY ("a", "b", "d")
);
-- The entries a batch's upsert brings to 0, deleted at once after it (never there between statements).
CREATE INDEX ON "pgivm_triangles"."v_k4" (mult) WHERE mult = 0;
COMMENT ON TABLE "pgivm_triangles"."v_k4" IS 'IVMε auxiliary view V_4 over K4''s variables: serves updates to K4';

-- A multi-row statement's net change of R_i, applied set at a time by apply_batch_K.
CREATE TABLE "pgivm_triangles"."k4_delta" (
    "a" integer NOT NULL,
    "b" integer NOT NULL,
    "d" integer NOT NULL,
    mult     bigint NOT NULL,  -- net change of the tuple's multiplicity in the statement
    heavy    boolean,          -- the part the tuple goes to (its partition value's part before the batch)
    new_mult bigint            -- its multiplicity after the batch (0: it vanished; = mult: it is new)
);
COMMENT ON TABLE "pgivm_triangles"."k4_delta" IS 'pgivm scratch: the net change of K4 by the current multi-row statement';

-- phase: functions (9 statements)

-- Maintenance of one relation R_i of a Loomis-Whitney count (Kara et al., long version, Appendix
-- F.1), rendered for each relation. An update to R_i binds every variable but A_(i-1) (F below);
-- R_(i-1), partitioned on F, is "P"; the other n - 2 relations are the "middles", each partitioned
-- on a variable the update binds, so each middle's part is known before any loop runs.

-- ApplyUpdate + OnUpdate for a single-tuple update of R_i.
CREATE FUNCTION "pgivm_triangles"."apply_k1"("x_a" integer, "x_b" integer, "x_c" integer, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st          "pgivm_triangles"."state"%ROWTYPE;
    own_heavy   boolean;  -- routing: is the A_i-value heavy in R_i?
    "h_k2" boolean;
    "h_k3" boolean;
    delta_q     bigint := 0;
    new_mult    bigint;
    new_degree  bigint;
BEGIN
    -- Each relation's part of the value the update binds for its partition variable (NULL: absent).
    SELECT s.*, "d0".heavy, "d1".heavy, "d2".heavy
      INTO st.singleton, st.epsilon, st.n, st.theta, st.db_size, st.updates_applied, st.major_rebalances,
           st.minor_rebalances, "own_heavy", "h_k2", "h_k3"
      FROM "pgivm_triangles"."state" s
      LEFT JOIN "pgivm_triangles"."k1_degree" "d0" ON "d0"."a" = "x_a"
      LEFT JOIN "pgivm_triangles"."k2_degree" "d1" ON "d1"."b" = "x_b"
      LEFT JOIN "pgivm_triangles"."k3_degree" "d2" ON "d2"."c" = "x_c";
    own_heavy := coalesce(own_heavy, st.epsilon = 0);  -- a new value starts light (heavy at epsilon = 0)

    -- F.1: the change of the count, delta Q = m * sum_F prod(the other relations at the bound values).
    IF "h_k2" IS NULL OR "h_k3" IS NULL THEN
        delta_q := 0;  -- a middle has no tuple at the bound value
    ELSIF "h_k2" AND "h_k3" THEN  -- every middle heavy: P's heavy F-values (<= 2 N^(1-eps)), then V_i for P's light part
        delta_q := coalesce((SELECT sum(src.mult * (SELECT q.mult FROM "pgivm_triangles"."k2_heavy" q WHERE q."b" = "x_b" AND q."c" = "x_c" AND q."d" = "src"."d") * (SELECT q.mult FROM "pgivm_triangles"."k3_heavy" q WHERE q."a" = "x_a" AND q."c" = "x_c" AND q."d" = "src"."d")) FROM "pgivm_triangles"."k4_heavy" src WHERE "src"."a" = "x_a" AND "src"."b" = "x_b"), 0)
                 + coalesce((SELECT v.mult FROM "pgivm_triangles"."v_k1" v WHERE v."a" = "x_a" AND v."b" = "x_b" AND v."c" = "x_c"), 0);
    ELSIF NOT "h_k2" THEN  -- R2 light: its tuples at the bound value, probing the others and P
        delta_q := coalesce((SELECT sum(src.mult * CASE WHEN "h_k3" THEN (SELECT q.mult FROM "pgivm_triangles"."k3_heavy" q WHERE q."a" = "x_a" AND q."c" = "x_c" AND q."d" = "src"."d") ELSE (SELECT q.mult FROM "pgivm_triangles"."k3_light" q WHERE q."a" = "x_a" AND q."c" = "x_c" AND q."d" = "src"."d") END * coalesce((SELECT q.mult FROM "pgivm_triangles"."k4_heavy" q WHERE q."a" = "x_a" AND q."b" = "x_b" AND q."d" = "src"."d"), (SELECT q.mult FROM "pgivm_triangles"."k4_light" q WHERE q."a" = "x_a" AND q."b" = "x_b" AND q."d" = "src"."d"))) FROM "pgivm_triangles"."k2_light" src WHERE "src"."b" = "x_b" AND "src"."c" = "x_c"), 0);
    ELSIF NOT "h_k3" THEN  -- R3 light: its tuples at the bound value, probing the others and P
        delta_q := coalesce((SELECT sum(src.mult * CASE WHEN "h_k2" THEN (SELECT q.mult FROM "pgivm_triangles"."k2_heavy" q WHERE q."b" = "x_b" AND q."c" = "x_c" AND q."d" = "src"."d") ELSE (SELECT q.mult FROM "pgivm_triangles"."k2_light" q WHERE q."b" = "x_b" AND q."c" = "x_c" AND q."d" = "src"."d") END * coalesce((SELECT q.mult FROM "pgivm_triangles"."k4_heavy" q WHERE q."a" = "x_a" AND q."b" = "x_b" AND q."d" = "src"."d"), (SELECT q.mult FROM "pgivm_triangles"."k4_light" q WHERE q."a" = "x_a" AND q."b" = "x_b" AND q."d" = "src"."d"))) FROM "pgivm_triangles"."k3_light" src WHERE "src"."a" = "x_a" AND "src"."c" = "x_c"), 0);
    END IF;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + m * delta_q;
    END IF;

    -- The auxiliary views that read R_i's part (the other relations' parts as looked up above).
    PERFORM "pgivm_triangles"."views_k1"("x_a", "x_b", "x_c", m, own_heavy, "h_k2", "h_k3");

    -- R_i's part += m; a tuple reaching multiplicity 0 is deleted.
    IF own_heavy THEN
        INSERT INTO "pgivm_triangles"."k1_heavy" AS p ("a", "b", "c", mult) VALUES ("x_a", "x_b", "x_c", m)
            ON CONFLICT ("a", "b", "c") DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
        IF new_mult = 0 THEN
            DELETE FROM "pgivm_triangles"."k1_heavy" WHERE "a" = "x_a" AND "b" = "x_b" AND "c" = "x_c";
        END IF;
    ELSE
        INSERT INTO "pgivm_triangles"."k1_light" AS p ("a", "b", "c", mult) VALUES ("x_a", "x_b", "x_c", m)
            ON CONFLICT ("a", "b", "c") DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
        IF new_mult = 0 THEN
            DELETE FROM "pgivm_triangles"."k1_light" WHERE "a" = "x_a" AND "b" = "x_b" AND "c" = "x_c";
        END IF;
    END IF;

    -- Degrees and |D| count distinct tuples: only a tuple appearing or vanishing changes them.
    IF new_mult = m THEN
        INSERT INTO "pgivm_triangles"."k1_degree" AS d ("a", degree, heavy) VALUES ("x_a", 1, own_heavy)
            ON CONFLICT ("a") DO UPDATE SET degree = d.degree + 1 RETURNING degree INTO new_degree;
        st.db_size := st.db_size + 1;
    ELSIF new_mult = 0 THEN
        UPDATE "pgivm_triangles"."k1_degree" SET degree = degree - 1 WHERE "a" = "x_a" AND degree > 1 RETURNING degree INTO new_degree;
        IF NOT FOUND THEN
            DELETE FROM "pgivm_triangles"."k1_degree" WHERE "a" = "x_a";
            new_degree := 0;
        END IF;
        st.db_size := st.db_size - 1;
    ELSE
        RETURN;
    END IF;

    -- OnUpdate: the size invariant floor(N/4) <= |D| < N first (major), else the value's degree (minor).
    IF st.db_size = st.n THEN
        UPDATE "pgivm_triangles"."state" SET db_size = st.db_size, n = 2 * st.n;
        PERFORM "pgivm_triangles"."major_rebalance"();
    ELSIF st.db_size < st.n / 4 THEN
        UPDATE "pgivm_triangles"."state" SET db_size = st.db_size, n = st.n / 2 - 1;
        PERFORM "pgivm_triangles"."major_rebalance"();
    ELSE
        UPDATE "pgivm_triangles"."state" SET db_size = st.db_size;
        IF NOT own_heavy AND new_degree >= 1.5 * st.theta THEN
            PERFORM "pgivm_triangles"."move_k1"("x_a", true);
        ELSIF own_heavy AND new_degree > 0 AND new_degree < 0.5 * st.theta THEN
            PERFORM "pgivm_triangles"."move_k1"("x_a", false);
        END IF;
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_k1"(integer, integer, integer, bigint) IS 'IVMε ApplyUpdate + OnUpdate for a single-tuple update to K1 (Appendix F)';


-- The auxiliary views' part of a change m of one tuple of R_i in part `heavy` (F.1, "Maintaining
-- Auxiliary Views"): as a heavy tuple it is in V_k for every k but i and i+1, each delta a loop over
-- R_(k-1)'s light tuples at a bound value (< 3/2 N^eps); as a light tuple it is in V_(i+1) only, a
-- loop over P's heavy tuples at the bound values (<= 2 N^(1-eps)). The other relations' parts of
-- the values the tuple binds come in as parameters (apply_k has looked them up; views_moved_k looks
-- them up for each tuple a minor move takes). Reads no part of R_i, so a minor move runs it once
-- out of the old part and once into the new one, per moved tuple.
CREATE FUNCTION "pgivm_triangles"."views_k1"("x_a" integer, "x_b" integer, "x_c" integer, m bigint, heavy boolean, "h_k2" boolean, "h_k3" boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    zeros_f     integer[];
BEGIN
    IF heavy THEN
    IF NOT "h_k2" THEN  -- V_3: loop over R2's light tuples
        WITH changed AS (
            INSERT INTO "pgivm_triangles"."v_k3" AS v ("a", "c", "d", mult)
            SELECT "x_a", "x_c", d.f, d.mult FROM (SELECT src."d" AS f, m * src.mult * (SELECT q.mult FROM "pgivm_triangles"."k4_heavy" q WHERE q."a" = "x_a" AND q."b" = "x_b" AND q."d" = "src"."d") AS mult
                                           FROM "pgivm_triangles"."k2_light" src WHERE "src"."b" = "x_b" AND "src"."c" = "x_c") d
             WHERE d.mult IS NOT NULL
            ON CONFLICT ("a", "c", "d") DO UPDATE SET mult = v.mult + EXCLUDED.mult
            RETURNING v."d", v.mult)
        SELECT array_agg("d") INTO zeros_f FROM changed WHERE mult = 0;
        IF zeros_f IS NOT NULL THEN
            DELETE FROM "pgivm_triangles"."v_k3" WHERE "a" = "x_a" AND "c" = "x_c" AND "d" = ANY (zeros_f);
        END IF;
    END IF;
    IF NOT "h_k3" AND "h_k2" THEN  -- V_4: loop over R3's light tuples
        WITH changed AS (
            INSERT INTO "pgivm_triangles"."v_k4" AS v ("a", "b", "d", mult)
            SELECT "x_a", "x_b", d.f, d.mult FROM (SELECT src."d" AS f, m * src.mult * (SELECT q.mult FROM "pgivm_triangles"."k2_heavy" q WHERE q."b" = "x_b" AND q."c" = "x_c" AND q."d" = "src"."d") AS mult
                                           FROM "pgivm_triangles"."k3_light" src WHERE "src"."a" = "x_a" AND "src"."c" = "x_c") d
             WHERE d.mult IS NOT NULL
            ON CONFLICT ("a", "b", "d") DO UPDATE SET mult = v.mult + EXCLUDED.mult
            RETURNING v."d", v.mult)
        SELECT array_agg("d") INTO zeros_f FROM changed WHERE mult = 0;
        IF zeros_f IS NOT NULL THEN
            DELETE FROM "pgivm_triangles"."v_k4" WHERE "a" = "x_a" AND "b" = "x_b" AND "d" = ANY (zeros_f);
        END IF;
    END IF;
    ELSE
    IF TRUE AND "h_k3" THEN  -- V_2: loop over P's heavy tuples
        WITH changed AS (
            INSERT INTO "pgivm_triangles"."v_k2" AS v ("b", "c", "d", mult)
            SELECT "x_b", "x_c", d.f, d.mult FROM (SELECT src."d" AS f, m * src.mult * (SELECT q.mult FROM "pgivm_triangles"."k3_heavy" q WHERE q."a" = "x_a" AND q."c" = "x_c" AND q."d" = "src"."d") AS mult
                                           FROM "pgivm_triangles"."k4_heavy" src WHERE "src"."a" = "x_a" AND "src"."b" = "x_b") d
             WHERE d.mult IS NOT NULL
            ON CONFLICT ("b", "c", "d") DO UPDATE SET mult = v.mult + EXCLUDED.mult
            RETURNING v."d", v.mult)
        SELECT array_agg("d") INTO zeros_f FROM changed WHERE mult = 0;
        IF zeros_f IS NOT NULL THEN
            DELETE FROM "pgivm_triangles"."v_k2" WHERE "b" = "x_b" AND "c" = "x_c" AND "d" = ANY (zeros_f);
        END IF;
    END IF;
    END IF;
END;
$pgivm$;

-- views_k for a tuple a minor move takes to the other part: the other relations' parts first.
CREATE FUNCTION "pgivm_triangles"."views_moved_k1"("x_a" integer, "x_b" integer, "x_c" integer, m bigint, heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    "h_k2" boolean;
    "h_k3" boolean;
BEGIN
    SELECT "d1".heavy, "d2".heavy INTO "h_k2", "h_k3"
      FROM (SELECT) s
      LEFT JOIN "pgivm_triangles"."k2_degree" "d1" ON "d1"."b" = "x_b"
      LEFT JOIN "pgivm_triangles"."k3_degree" "d2" ON "d2"."c" = "x_c";
    PERFORM "pgivm_triangles"."views_k1"("x_a", "x_b", "x_c", m, heavy, "h_k2", "h_k3");
END;
$pgivm$;


-- MinorRebalancing: move every tuple whose A_i-value is `value` to the other part. The count does
-- not change; each tuple leaves the views of its old part and enters those of the new one.
CREATE FUNCTION "pgivm_triangles"."move_k1"(value integer, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    moved record;
BEGIN
    FOR moved IN SELECT "a", "b", "c", mult FROM "pgivm_triangles"."k1_light" WHERE "a" = value AND to_heavy
                 UNION ALL SELECT "a", "b", "c", mult FROM "pgivm_triangles"."k1_heavy" WHERE "a" = value AND NOT to_heavy LOOP
        PERFORM "pgivm_triangles"."views_moved_k1"(moved."a", moved."b", moved."c", -moved.mult, NOT to_heavy);
        PERFORM "pgivm_triangles"."views_moved_k1"(moved."a", moved."b", moved."c", moved.mult, to_heavy);
    END LOOP;
    IF to_heavy THEN
        WITH gone AS (DELETE FROM "pgivm_triangles"."k1_light" WHERE "a" = value RETURNING "a", "b", "c", mult)
        INSERT INTO "pgivm_triangles"."k1_heavy" ("a", "b", "c", mult) SELECT "a", "b", "c", mult FROM gone;
    ELSE
        WITH gone AS (DELETE FROM "pgivm_triangles"."k1_heavy" WHERE "a" = value RETURNING "a", "b", "c", mult)
        INSERT INTO "pgivm_triangles"."k1_light" ("a", "b", "c", mult) SELECT "a", "b", "c", mult FROM gone;
    END IF;
    UPDATE "pgivm_triangles"."k1_degree" SET heavy = to_heavy WHERE "a" = value;
    UPDATE "pgivm_triangles"."state" SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;


-- A multi-row statement's net change of R_i, set at a time (as the triangle's apply_batch_K): every
-- delta on the state before the batch (R_i is in none of its own), the batch into its values'
-- current parts, then the invariants: a size-invariant violation resets N = 2|D| + 1 with a major
-- rebalancing, else every value of the batch that crossed a threshold moves.
CREATE FUNCTION "pgivm_triangles"."apply_batch_k1"()
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
    -- One row per distinct tuple (a deferred refresh may hand several), then statistics for the planner.
    WITH merged AS (DELETE FROM "pgivm_triangles"."k1_delta" RETURNING "a", "b", "c", mult)
    INSERT INTO "pgivm_triangles"."k1_delta" ("a", "b", "c", mult)
    SELECT "a", "b", "c", sum(mult) FROM merged GROUP BY "a", "b", "c" HAVING sum(mult) <> 0;
    ANALYZE "pgivm_triangles"."k1_delta";

    -- Routing as OnUpdate: the partition value's current part (a new one light, heavy at epsilon = 0),
    -- and each tuple's multiplicity after the batch (a tuple lives in its value's part).
    UPDATE "pgivm_triangles"."k1_delta" d
       SET heavy = st.epsilon = 0 OR coalesce((SELECT g.heavy FROM "pgivm_triangles"."k1_degree" g WHERE g."a" = d."a"), false),
           new_mult = d.mult + coalesce((SELECT p.mult FROM "pgivm_triangles"."k1_heavy" p WHERE p."a" = d."a" AND p."b" = d."b" AND p."c" = d."c"),
                                        (SELECT p.mult FROM "pgivm_triangles"."k1_light" p WHERE p."a" = d."a" AND p."b" = d."b" AND p."c" = d."c"), 0);

    -- delta Q: the batch joined with every other relation.
    SELECT coalesce(sum("t0".mult * "t1".mult * "t2".mult * "t3".mult), 0) INTO delta_q
      FROM "pgivm_triangles"."k1_delta" "t0"
      JOIN (SELECT "b", "c", "d", mult FROM "pgivm_triangles"."k2_heavy" UNION ALL SELECT "b", "c", "d", mult FROM "pgivm_triangles"."k2_light") "t1" ON "t1"."b" = "t0"."b" AND "t1"."c" = "t0"."c"
      JOIN (SELECT "a", "c", "d", mult FROM "pgivm_triangles"."k3_heavy" UNION ALL SELECT "a", "c", "d", mult FROM "pgivm_triangles"."k3_light") "t2" ON "t2"."a" = "t0"."a" AND "t2"."c" = "t0"."c" AND "t2"."d" = "t1"."d"
      JOIN (SELECT "a", "b", "d", mult FROM "pgivm_triangles"."k4_heavy" UNION ALL SELECT "a", "b", "d", mult FROM "pgivm_triangles"."k4_light") "t3" ON "t3"."a" = "t0"."a" AND "t3"."b" = "t0"."b" AND "t3"."d" = "t1"."d";
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + delta_q::bigint;
    END IF;

    -- V_3 from the batch's heavy tuples; entries that reach 0 go (a partial index finds them)
    INSERT INTO "pgivm_triangles"."v_k3" AS v ("a", "c", "d", mult)
    SELECT "t0"."a", "t0"."c", "t1"."d", sum("t0".mult * "t1".mult * "t2".mult)
      FROM (SELECT "a", "b", "c", mult FROM "pgivm_triangles"."k1_delta" WHERE heavy) "t0"
      JOIN "pgivm_triangles"."k4_heavy" "t1" ON "t1"."a" = "t0"."a" AND "t1"."b" = "t0"."b"
      JOIN "pgivm_triangles"."k2_light" "t2" ON "t2"."b" = "t0"."b" AND "t2"."c" = "t0"."c" AND "t2"."d" = "t1"."d"
     GROUP BY "t0"."a", "t0"."c", "t1"."d"
    HAVING sum("t0".mult * "t1".mult * "t2".mult) <> 0
    ON CONFLICT ("a", "c", "d") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."v_k3" WHERE mult = 0;
    -- V_4 from the batch's heavy tuples; entries that reach 0 go (a partial index finds them)
    INSERT INTO "pgivm_triangles"."v_k4" AS v ("a", "b", "d", mult)
    SELECT "t0"."a", "t0"."b", "t1"."d", sum("t0".mult * "t1".mult * "t2".mult)
      FROM (SELECT "a", "b", "c", mult FROM "pgivm_triangles"."k1_delta" WHERE heavy) "t0"
      JOIN "pgivm_triangles"."k2_heavy" "t1" ON "t1"."b" = "t0"."b" AND "t1"."c" = "t0"."c"
      JOIN "pgivm_triangles"."k3_light" "t2" ON "t2"."a" = "t0"."a" AND "t2"."c" = "t0"."c" AND "t2"."d" = "t1"."d"
     GROUP BY "t0"."a", "t0"."b", "t1"."d"
    HAVING sum("t0".mult * "t1".mult * "t2".mult) <> 0
    ON CONFLICT ("a", "b", "d") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."v_k4" WHERE mult = 0;
    -- V_2 from the batch's light tuples; entries that reach 0 go (a partial index finds them)
    INSERT INTO "pgivm_triangles"."v_k2" AS v ("b", "c", "d", mult)
    SELECT "t0"."b", "t0"."c", "t1"."d", sum("t0".mult * "t1".mult * "t2".mult)
      FROM (SELECT "a", "b", "c", mult FROM "pgivm_triangles"."k1_delta" WHERE NOT heavy) "t0"
      JOIN "pgivm_triangles"."k3_heavy" "t1" ON "t1"."a" = "t0"."a" AND "t1"."c" = "t0"."c"
      JOIN "pgivm_triangles"."k4_heavy" "t2" ON "t2"."a" = "t0"."a" AND "t2"."b" = "t0"."b" AND "t2"."d" = "t1"."d"
     GROUP BY "t0"."b", "t0"."c", "t1"."d"
    HAVING sum("t0".mult * "t1".mult * "t2".mult) <> 0
    ON CONFLICT ("b", "c", "d") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."v_k2" WHERE mult = 0;

    -- The batch into the parts: new tuples inserted, changed ones updated, vanished ones deleted.
    INSERT INTO "pgivm_triangles"."k1_heavy" AS p ("a", "b", "c", mult) SELECT "a", "b", "c", new_mult FROM "pgivm_triangles"."k1_delta" WHERE heavy AND new_mult <> 0
        ON CONFLICT ("a", "b", "c") DO UPDATE SET mult = EXCLUDED.mult;
    INSERT INTO "pgivm_triangles"."k1_light" AS p ("a", "b", "c", mult) SELECT "a", "b", "c", new_mult FROM "pgivm_triangles"."k1_delta" WHERE NOT heavy AND new_mult <> 0
        ON CONFLICT ("a", "b", "c") DO UPDATE SET mult = EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."k1_heavy" p USING "pgivm_triangles"."k1_delta" d WHERE d.heavy AND d.new_mult = 0 AND p."a" = d."a" AND p."b" = d."b" AND p."c" = d."c";
    DELETE FROM "pgivm_triangles"."k1_light" p USING "pgivm_triangles"."k1_delta" d WHERE NOT d.heavy AND d.new_mult = 0 AND p."a" = d."a" AND p."b" = d."b" AND p."c" = d."c";

    -- Degrees and |D|: +1 per tuple that appeared, -1 per tuple that vanished.
    INSERT INTO "pgivm_triangles"."k1_degree" AS g ("a", degree, heavy)
    SELECT "a", sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(heavy)
      FROM "pgivm_triangles"."k1_delta" WHERE new_mult = mult OR new_mult = 0
     GROUP BY "a"
    ON CONFLICT ("a") DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM "pgivm_triangles"."k1_degree" g USING "pgivm_triangles"."k1_delta" d WHERE g."a" = d."a" AND g.degree = 0;
    SELECT coalesce(sum(CASE WHEN new_mult = mult THEN 1 WHEN new_mult = 0 THEN -1 ELSE 0 END), 0)
      INTO size_diff FROM "pgivm_triangles"."k1_delta";
    st.db_size := st.db_size + size_diff;
    UPDATE "pgivm_triangles"."state" SET db_size = st.db_size;

    -- Restore the invariants.
    IF st.db_size >= st.n OR st.db_size < st.n / 4 THEN
        UPDATE "pgivm_triangles"."state" SET n = 2 * st.db_size + 1;
        PERFORM "pgivm_triangles"."major_rebalance"();
    ELSE
        FOR moving IN
            SELECT g."a" AS value, NOT g.heavy AS to_heavy
              FROM "pgivm_triangles"."k1_degree" g
             WHERE g."a" IN (SELECT "a" FROM "pgivm_triangles"."k1_delta")
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM "pgivm_triangles"."move_k1"(moving.value, moving.to_heavy);
        END LOOP;
    END IF;
    DELETE FROM "pgivm_triangles"."k1_delta";
END;
$pgivm$;


-- Strict repartition of R_i at the current theta (part of MajorRebalancing): heavy iff degree >= theta.
CREATE FUNCTION "pgivm_triangles"."repartition_k1"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st "pgivm_triangles"."state"%ROWTYPE;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    UPDATE "pgivm_triangles"."k1_degree" SET heavy = (degree >= st.theta OR st.epsilon = 0)
     WHERE heavy IS DISTINCT FROM (degree >= st.theta OR st.epsilon = 0);
    WITH gone AS (DELETE FROM "pgivm_triangles"."k1_light" k USING "pgivm_triangles"."k1_degree" d WHERE d."a" = k."a" AND d.heavy
                  RETURNING k."a", k."b", k."c", k.mult)
    INSERT INTO "pgivm_triangles"."k1_heavy" ("a", "b", "c", mult) SELECT "a", "b", "c", mult FROM gone;
    WITH gone AS (DELETE FROM "pgivm_triangles"."k1_heavy" k USING "pgivm_triangles"."k1_degree" d WHERE d."a" = k."a" AND NOT d.heavy
                  RETURNING k."a", k."b", k."c", k.mult)
    INSERT INTO "pgivm_triangles"."k1_light" ("a", "b", "c", mult) SELECT "a", "b", "c", mult FROM gone;
END;
$pgivm$;


-- V_i from scratch (MajorRebalancing, the build): the join of its parts, summed over A_(i-1).
CREATE FUNCTION "pgivm_triangles"."recompute_v_k1"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."v_k1";
    INSERT INTO "pgivm_triangles"."v_k1" ("a", "b", "c", mult)
    SELECT "t1"."a", "t0"."b", "t0"."c", sum("t0".mult * "t1".mult * "t2".mult)
      FROM "pgivm_triangles"."k2_heavy" "t0"
      JOIN "pgivm_triangles"."k3_heavy" "t1" ON "t1"."c" = "t0"."c" AND "t1"."d" = "t0"."d"
      JOIN "pgivm_triangles"."k4_light" "t2" ON "t2"."a" = "t1"."a" AND "t2"."b" = "t0"."b" AND "t2"."d" = "t0"."d"
     GROUP BY "t1"."a", "t0"."b", "t0"."c"
    HAVING sum("t0".mult * "t1".mult * "t2".mult) <> 0;
END;
$pgivm$;


-- R_i emptied after a TRUNCATE of its table (the caller restarts from what remains).
CREATE FUNCTION "pgivm_triangles"."clear_k1"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."k1_heavy";
    DELETE FROM "pgivm_triangles"."k1_light";
    DELETE FROM "pgivm_triangles"."k1_degree";
END;
$pgivm$;

-- Maintenance of one relation R_i of a Loomis-Whitney count (Kara et al., long version, Appendix
-- F.1), rendered for each relation. An update to R_i binds every variable but A_(i-1) (F below);
-- R_(i-1), partitioned on F, is "P"; the other n - 2 relations are the "middles", each partitioned
-- on a variable the update binds, so each middle's part is known before any loop runs.

-- ApplyUpdate + OnUpdate for a single-tuple update of R_i.
CREATE FUNCTION "pgivm_triangles"."apply_k2"("x_b" integer, "x_c" integer, "x_d" integer, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st          "pgivm_triangles"."state"%ROWTYPE;
    own_heavy   boolean;  -- routing: is the A_i-value heavy in R_i?
    "h_k3" boolean;
    "h_k4" boolean;
    delta_q     bigint := 0;
    new_mult    bigint;
    new_degree  bigint;
BEGIN
    -- Each relation's part of the value the update binds for its partition variable (NULL: absent).
    SELECT s.*, "d1".heavy, "d2".heavy, "d3".heavy
      INTO st.singleton, st.epsilon, st.n, st.theta, st.db_size, st.updates_applied, st.major_rebalances,
           st.minor_rebalances, "own_heavy", "h_k3", "h_k4"
      FROM "pgivm_triangles"."state" s
      LEFT JOIN "pgivm_triangles"."k2_degree" "d1" ON "d1"."b" = "x_b"
      LEFT JOIN "pgivm_triangles"."k3_degree" "d2" ON "d2"."c" = "x_c"
      LEFT JOIN "pgivm_triangles"."k4_degree" "d3" ON "d3"."d" = "x_d";
    own_heavy := coalesce(own_heavy, st.epsilon = 0);  -- a new value starts light (heavy at epsilon = 0)

    -- F.1: the change of the count, delta Q = m * sum_F prod(the other relations at the bound values).
    IF "h_k3" IS NULL OR "h_k4" IS NULL THEN
        delta_q := 0;  -- a middle has no tuple at the bound value
    ELSIF "h_k3" AND "h_k4" THEN  -- every middle heavy: P's heavy F-values (<= 2 N^(1-eps)), then V_i for P's light part
        delta_q := coalesce((SELECT sum(src.mult * (SELECT q.mult FROM "pgivm_triangles"."k3_heavy" q WHERE q."a" = "src"."a" AND q."c" = "x_c" AND q."d" = "x_d") * (SELECT q.mult FROM "pgivm_triangles"."k4_heavy" q WHERE q."a" = "src"."a" AND q."b" = "x_b" AND q."d" = "x_d")) FROM "pgivm_triangles"."k1_heavy" src WHERE "src"."b" = "x_b" AND "src"."c" = "x_c"), 0)
                 + coalesce((SELECT v.mult FROM "pgivm_triangles"."v_k2" v WHERE v."b" = "x_b" AND v."c" = "x_c" AND v."d" = "x_d"), 0);
    ELSIF NOT "h_k3" THEN  -- R3 light: its tuples at the bound value, probing the others and P
        delta_q := coalesce((SELECT sum(src.mult * CASE WHEN "h_k4" THEN (SELECT q.mult FROM "pgivm_triangles"."k4_heavy" q WHERE q."a" = "src"."a" AND q."b" = "x_b" AND q."d" = "x_d") ELSE (SELECT q.mult FROM "pgivm_triangles"."k4_light" q WHERE q."a" = "src"."a" AND q."b" = "x_b" AND q."d" = "x_d") END * coalesce((SELECT q.mult FROM "pgivm_triangles"."k1_heavy" q WHERE q."a" = "src"."a" AND q."b" = "x_b" AND q."c" = "x_c"), (SELECT q.mult FROM "pgivm_triangles"."k1_light" q WHERE q."a" = "src"."a" AND q."b" = "x_b" AND q."c" = "x_c"))) FROM "pgivm_triangles"."k3_light" src WHERE "src"."c" = "x_c" AND "src"."d" = "x_d"), 0);
    ELSIF NOT "h_k4" THEN  -- R4 light: its tuples at the bound value, probing the others and P
        delta_q := coalesce((SELECT sum(src.mult * CASE WHEN "h_k3" THEN (SELECT q.mult FROM "pgivm_triangles"."k3_heavy" q WHERE q."a" = "src"."a" AND q."c" = "x_c" AND q."d" = "x_d") ELSE (SELECT q.mult FROM "pgivm_triangles"."k3_light" q WHERE q."a" = "src"."a" AND q."c" = "x_c" AND q."d" = "x_d") END * coalesce((SELECT q.mult FROM "pgivm_triangles"."k1_heavy" q WHERE q."a" = "src"."a" AND q."b" = "x_b" AND q."c" = "x_c"), (SELECT q.mult FROM "pgivm_triangles"."k1_light" q WHERE q."a" = "src"."a" AND q."b" = "x_b" AND q."c" = "x_c"))) FROM "pgivm_triangles"."k4_light" src WHERE "src"."b" = "x_b" AND "src"."d" = "x_d"), 0);
    END IF;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + m * delta_q;
    END IF;

    -- The auxiliary views that read R_i's part (the other relations' parts as looked up above).
    PERFORM "pgivm_triangles"."views_k2"("x_b", "x_c", "x_d", m, own_heavy, "h_k3", "h_k4");

    -- R_i's part += m; a tuple reaching multiplicity 0 is deleted.
    IF own_heavy THEN
        INSERT INTO "pgivm_triangles"."k2_heavy" AS p ("b", "c", "d", mult) VALUES ("x_b", "x_c", "x_d", m)
            ON CONFLICT ("b", "c", "d") DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
        IF new_mult = 0 THEN
            DELETE FROM "pgivm_triangles"."k2_heavy" WHERE "b" = "x_b" AND "c" = "x_c" AND "d" = "x_d";
        END IF;
    ELSE
        INSERT INTO "pgivm_triangles"."k2_light" AS p ("b", "c", "d", mult) VALUES ("x_b", "x_c", "x_d", m)
            ON CONFLICT ("b", "c", "d") DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
        IF new_mult = 0 THEN
            DELETE FROM "pgivm_triangles"."k2_light" WHERE "b" = "x_b" AND "c" = "x_c" AND "d" = "x_d";
        END IF;
    END IF;

    -- Degrees and |D| count distinct tuples: only a tuple appearing or vanishing changes them.
    IF new_mult = m THEN
        INSERT INTO "pgivm_triangles"."k2_degree" AS d ("b", degree, heavy) VALUES ("x_b", 1, own_heavy)
            ON CONFLICT ("b") DO UPDATE SET degree = d.degree + 1 RETURNING degree INTO new_degree;
        st.db_size := st.db_size + 1;
    ELSIF new_mult = 0 THEN
        UPDATE "pgivm_triangles"."k2_degree" SET degree = degree - 1 WHERE "b" = "x_b" AND degree > 1 RETURNING degree INTO new_degree;
        IF NOT FOUND THEN
            DELETE FROM "pgivm_triangles"."k2_degree" WHERE "b" = "x_b";
            new_degree := 0;
        END IF;
        st.db_size := st.db_size - 1;
    ELSE
        RETURN;
    END IF;

    -- OnUpdate: the size invariant floor(N/4) <= |D| < N first (major), else the value's degree (minor).
    IF st.db_size = st.n THEN
        UPDATE "pgivm_triangles"."state" SET db_size = st.db_size, n = 2 * st.n;
        PERFORM "pgivm_triangles"."major_rebalance"();
    ELSIF st.db_size < st.n / 4 THEN
        UPDATE "pgivm_triangles"."state" SET db_size = st.db_size, n = st.n / 2 - 1;
        PERFORM "pgivm_triangles"."major_rebalance"();
    ELSE
        UPDATE "pgivm_triangles"."state" SET db_size = st.db_size;
        IF NOT own_heavy AND new_degree >= 1.5 * st.theta THEN
            PERFORM "pgivm_triangles"."move_k2"("x_b", true);
        ELSIF own_heavy AND new_degree > 0 AND new_degree < 0.5 * st.theta THEN
            PERFORM "pgivm_triangles"."move_k2"("x_b", false);
        END IF;
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_k2"(integer, integer, integer, bigint) IS 'IVMε ApplyUpdate + OnUpdate for a single-tuple update to K2 (Appendix F)';


-- The auxiliary views' part of a change m of one tuple of R_i in part `heavy` (F.1, "Maintaining
-- Auxiliary Views"): as a heavy tuple it is in V_k for every k but i and i+1, each delta a loop over
-- R_(k-1)'s light tuples at a bound value (< 3/2 N^eps); as a light tuple it is in V_(i+1) only, a
-- loop over P's heavy tuples at the bound values (<= 2 N^(1-eps)). The other relations' parts of
-- the values the tuple binds come in as parameters (apply_k has looked them up; views_moved_k looks
-- them up for each tuple a minor move takes). Reads no part of R_i, so a minor move runs it once
-- out of the old part and once into the new one, per moved tuple.
CREATE FUNCTION "pgivm_triangles"."views_k2"("x_b" integer, "x_c" integer, "x_d" integer, m bigint, heavy boolean, "h_k3" boolean, "h_k4" boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    zeros_f     integer[];
BEGIN
    IF heavy THEN
    IF NOT "h_k4" AND "h_k3" THEN  -- V_1: loop over R4's light tuples
        WITH changed AS (
            INSERT INTO "pgivm_triangles"."v_k1" AS v ("a", "b", "c", mult)
            SELECT d.f, "x_b", "x_c", d.mult FROM (SELECT src."a" AS f, m * src.mult * (SELECT q.mult FROM "pgivm_triangles"."k3_heavy" q WHERE q."a" = "src"."a" AND q."c" = "x_c" AND q."d" = "x_d") AS mult
                                           FROM "pgivm_triangles"."k4_light" src WHERE "src"."b" = "x_b" AND "src"."d" = "x_d") d
             WHERE d.mult IS NOT NULL
            ON CONFLICT ("a", "b", "c") DO UPDATE SET mult = v.mult + EXCLUDED.mult
            RETURNING v."a", v.mult)
        SELECT array_agg("a") INTO zeros_f FROM changed WHERE mult = 0;
        IF zeros_f IS NOT NULL THEN
            DELETE FROM "pgivm_triangles"."v_k1" WHERE "b" = "x_b" AND "c" = "x_c" AND "a" = ANY (zeros_f);
        END IF;
    END IF;
    IF NOT "h_k3" THEN  -- V_4: loop over R3's light tuples
        WITH changed AS (
            INSERT INTO "pgivm_triangles"."v_k4" AS v ("a", "b", "d", mult)
            SELECT d.f, "x_b", "x_d", d.mult FROM (SELECT src."a" AS f, m * src.mult * (SELECT q.mult FROM "pgivm_triangles"."k1_heavy" q WHERE q."a" = "src"."a" AND q."b" = "x_b" AND q."c" = "x_c") AS mult
                                           FROM "pgivm_triangles"."k3_light" src WHERE "src"."c" = "x_c" AND "src"."d" = "x_d") d
             WHERE d.mult IS NOT NULL
            ON CONFLICT ("a", "b", "d") DO UPDATE SET mult = v.mult + EXCLUDED.mult
            RETURNING v."a", v.mult)
        SELECT array_agg("a") INTO zeros_f FROM changed WHERE mult = 0;
        IF zeros_f IS NOT NULL THEN
            DELETE FROM "pgivm_triangles"."v_k4" WHERE "b" = "x_b" AND "d" = "x_d" AND "a" = ANY (zeros_f);
        END IF;
    END IF;
    ELSE
    IF TRUE AND "h_k4" THEN  -- V_3: loop over P's heavy tuples
        WITH changed AS (
            INSERT INTO "pgivm_triangles"."v_k3" AS v ("a", "c", "d", mult)
            SELECT d.f, "x_c", "x_d", d.mult FROM (SELECT src."a" AS f, m * src.mult * (SELECT q.mult FROM "pgivm_triangles"."k4_heavy" q WHERE q."a" = "src"."a" AND q."b" = "x_b" AND q."d" = "x_d") AS mult
                                           FROM "pgivm_triangles"."k1_heavy" src WHERE "src"."b" = "x_b" AND "src"."c" = "x_c") d
             WHERE d.mult IS NOT NULL
            ON CONFLICT ("a", "c", "d") DO UPDATE SET mult = v.mult + EXCLUDED.mult
            RETURNING v."a", v.mult)
        SELECT array_agg("a") INTO zeros_f FROM changed WHERE mult = 0;
        IF zeros_f IS NOT NULL THEN
            DELETE FROM "pgivm_triangles"."v_k3" WHERE "c" = "x_c" AND "d" = "x_d" AND "a" = ANY (zeros_f);
        END IF;
    END IF;
    END IF;
END;
$pgivm$;

-- views_k for a tuple a minor move takes to the other part: the other relations' parts first.
CREATE FUNCTION "pgivm_triangles"."views_moved_k2"("x_b" integer, "x_c" integer, "x_d" integer, m bigint, heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    "h_k3" boolean;
    "h_k4" boolean;
BEGIN
    SELECT "d2".heavy, "d3".heavy INTO "h_k3", "h_k4"
      FROM (SELECT) s
      LEFT JOIN "pgivm_triangles"."k3_degree" "d2" ON "d2"."c" = "x_c"
      LEFT JOIN "pgivm_triangles"."k4_degree" "d3" ON "d3"."d" = "x_d";
    PERFORM "pgivm_triangles"."views_k2"("x_b", "x_c", "x_d", m, heavy, "h_k3", "h_k4");
END;
$pgivm$;


-- MinorRebalancing: move every tuple whose A_i-value is `value` to the other part. The count does
-- not change; each tuple leaves the views of its old part and enters those of the new one.
CREATE FUNCTION "pgivm_triangles"."move_k2"(value integer, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    moved record;
BEGIN
    FOR moved IN SELECT "b", "c", "d", mult FROM "pgivm_triangles"."k2_light" WHERE "b" = value AND to_heavy
                 UNION ALL SELECT "b", "c", "d", mult FROM "pgivm_triangles"."k2_heavy" WHERE "b" = value AND NOT to_heavy LOOP
        PERFORM "pgivm_triangles"."views_moved_k2"(moved."b", moved."c", moved."d", -moved.mult, NOT to_heavy);
        PERFORM "pgivm_triangles"."views_moved_k2"(moved."b", moved."c", moved."d", moved.mult, to_heavy);
    END LOOP;
    IF to_heavy THEN
        WITH gone AS (DELETE FROM "pgivm_triangles"."k2_light" WHERE "b" = value RETURNING "b", "c", "d", mult)
        INSERT INTO "pgivm_triangles"."k2_heavy" ("b", "c", "d", mult) SELECT "b", "c", "d", mult FROM gone;
    ELSE
        WITH gone AS (DELETE FROM "pgivm_triangles"."k2_heavy" WHERE "b" = value RETURNING "b", "c", "d", mult)
        INSERT INTO "pgivm_triangles"."k2_light" ("b", "c", "d", mult) SELECT "b", "c", "d", mult FROM gone;
    END IF;
    UPDATE "pgivm_triangles"."k2_degree" SET heavy = to_heavy WHERE "b" = value;
    UPDATE "pgivm_triangles"."state" SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;


-- A multi-row statement's net change of R_i, set at a time (as the triangle's apply_batch_K): every
-- delta on the state before the batch (R_i is in none of its own), the batch into its values'
-- current parts, then the invariants: a size-invariant violation resets N = 2|D| + 1 with a major
-- rebalancing, else every value of the batch that crossed a threshold moves.
CREATE FUNCTION "pgivm_triangles"."apply_batch_k2"()
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
    -- One row per distinct tuple (a deferred refresh may hand several), then statistics for the planner.
    WITH merged AS (DELETE FROM "pgivm_triangles"."k2_delta" RETURNING "b", "c", "d", mult)
    INSERT INTO "pgivm_triangles"."k2_delta" ("b", "c", "d", mult)
    SELECT "b", "c", "d", sum(mult) FROM merged GROUP BY "b", "c", "d" HAVING sum(mult) <> 0;
    ANALYZE "pgivm_triangles"."k2_delta";

    -- Routing as OnUpdate: the partition value's current part (a new one light, heavy at epsilon = 0),
    -- and each tuple's multiplicity after the batch (a tuple lives in its value's part).
    UPDATE "pgivm_triangles"."k2_delta" d
       SET heavy = st.epsilon = 0 OR coalesce((SELECT g.heavy FROM "pgivm_triangles"."k2_degree" g WHERE g."b" = d."b"), false),
           new_mult = d.mult + coalesce((SELECT p.mult FROM "pgivm_triangles"."k2_heavy" p WHERE p."b" = d."b" AND p."c" = d."c" AND p."d" = d."d"),
                                        (SELECT p.mult FROM "pgivm_triangles"."k2_light" p WHERE p."b" = d."b" AND p."c" = d."c" AND p."d" = d."d"), 0);

    -- delta Q: the batch joined with every other relation.
    SELECT coalesce(sum("t0".mult * "t1".mult * "t2".mult * "t3".mult), 0) INTO delta_q
      FROM "pgivm_triangles"."k2_delta" "t0"
      JOIN (SELECT "a", "b", "c", mult FROM "pgivm_triangles"."k1_heavy" UNION ALL SELECT "a", "b", "c", mult FROM "pgivm_triangles"."k1_light") "t1" ON "t1"."b" = "t0"."b" AND "t1"."c" = "t0"."c"
      JOIN (SELECT "a", "c", "d", mult FROM "pgivm_triangles"."k3_heavy" UNION ALL SELECT "a", "c", "d", mult FROM "pgivm_triangles"."k3_light") "t2" ON "t2"."a" = "t1"."a" AND "t2"."c" = "t0"."c" AND "t2"."d" = "t0"."d"
      JOIN (SELECT "a", "b", "d", mult FROM "pgivm_triangles"."k4_heavy" UNION ALL SELECT "a", "b", "d", mult FROM "pgivm_triangles"."k4_light") "t3" ON "t3"."a" = "t1"."a" AND "t3"."b" = "t0"."b" AND "t3"."d" = "t0"."d";
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + delta_q::bigint;
    END IF;

    -- V_1 from the batch's heavy tuples; entries that reach 0 go (a partial index finds them)
    INSERT INTO "pgivm_triangles"."v_k1" AS v ("a", "b", "c", mult)
    SELECT "t1"."a", "t0"."b", "t0"."c", sum("t0".mult * "t1".mult * "t2".mult)
      FROM (SELECT "b", "c", "d", mult FROM "pgivm_triangles"."k2_delta" WHERE heavy) "t0"
      JOIN "pgivm_triangles"."k3_heavy" "t1" ON "t1"."c" = "t0"."c" AND "t1"."d" = "t0"."d"
      JOIN "pgivm_triangles"."k4_light" "t2" ON "t2"."a" = "t1"."a" AND "t2"."b" = "t0"."b" AND "t2"."d" = "t0"."d"
     GROUP BY "t1"."a", "t0"."b", "t0"."c"
    HAVING sum("t0".mult * "t1".mult * "t2".mult) <> 0
    ON CONFLICT ("a", "b", "c") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."v_k1" WHERE mult = 0;
    -- V_4 from the batch's heavy tuples; entries that reach 0 go (a partial index finds them)
    INSERT INTO "pgivm_triangles"."v_k4" AS v ("a", "b", "d", mult)
    SELECT "t1"."a", "t0"."b", "t0"."d", sum("t0".mult * "t1".mult * "t2".mult)
      FROM (SELECT "b", "c", "d", mult FROM "pgivm_triangles"."k2_delta" WHERE heavy) "t0"
      JOIN "pgivm_triangles"."k1_heavy" "t1" ON "t1"."b" = "t0"."b" AND "t1"."c" = "t0"."c"
      JOIN "pgivm_triangles"."k3_light" "t2" ON "t2"."a" = "t1"."a" AND "t2"."c" = "t0"."c" AND "t2"."d" = "t0"."d"
     GROUP BY "t1"."a", "t0"."b", "t0"."d"
    HAVING sum("t0".mult * "t1".mult * "t2".mult) <> 0
    ON CONFLICT ("a", "b", "d") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."v_k4" WHERE mult = 0;
    -- V_3 from the batch's light tuples; entries that reach 0 go (a partial index finds them)
    INSERT INTO "pgivm_triangles"."v_k3" AS v ("a", "c", "d", mult)
    SELECT "t1"."a", "t0"."c", "t0"."d", sum("t0".mult * "t1".mult * "t2".mult)
      FROM (SELECT "b", "c", "d", mult FROM "pgivm_triangles"."k2_delta" WHERE NOT heavy) "t0"
      JOIN "pgivm_triangles"."k1_heavy" "t1" ON "t1"."b" = "t0"."b" AND "t1"."c" = "t0"."c"
      JOIN "pgivm_triangles"."k4_heavy" "t2" ON "t2"."a" = "t1"."a" AND "t2"."b" = "t0"."b" AND "t2"."d" = "t0"."d"
     GROUP BY "t1"."a", "t0"."c", "t0"."d"
    HAVING sum("t0".mult * "t1".mult * "t2".mult) <> 0
    ON CONFLICT ("a", "c", "d") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."v_k3" WHERE mult = 0;

    -- The batch into the parts: new tuples inserted, changed ones updated, vanished ones deleted.
    INSERT INTO "pgivm_triangles"."k2_heavy" AS p ("b", "c", "d", mult) SELECT "b", "c", "d", new_mult FROM "pgivm_triangles"."k2_delta" WHERE heavy AND new_mult <> 0
        ON CONFLICT ("b", "c", "d") DO UPDATE SET mult = EXCLUDED.mult;
    INSERT INTO "pgivm_triangles"."k2_light" AS p ("b", "c", "d", mult) SELECT "b", "c", "d", new_mult FROM "pgivm_triangles"."k2_delta" WHERE NOT heavy AND new_mult <> 0
        ON CONFLICT ("b", "c", "d") DO UPDATE SET mult = EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."k2_heavy" p USING "pgivm_triangles"."k2_delta" d WHERE d.heavy AND d.new_mult = 0 AND p."b" = d."b" AND p."c" = d."c" AND p."d" = d."d";
    DELETE FROM "pgivm_triangles"."k2_light" p USING "pgivm_triangles"."k2_delta" d WHERE NOT d.heavy AND d.new_mult = 0 AND p."b" = d."b" AND p."c" = d."c" AND p."d" = d."d";

    -- Degrees and |D|: +1 per tuple that appeared, -1 per tuple that vanished.
    INSERT INTO "pgivm_triangles"."k2_degree" AS g ("b", degree, heavy)
    SELECT "b", sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(heavy)
      FROM "pgivm_triangles"."k2_delta" WHERE new_mult = mult OR new_mult = 0
     GROUP BY "b"
    ON CONFLICT ("b") DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM "pgivm_triangles"."k2_degree" g USING "pgivm_triangles"."k2_delta" d WHERE g."b" = d."b" AND g.degree = 0;
    SELECT coalesce(sum(CASE WHEN new_mult = mult THEN 1 WHEN new_mult = 0 THEN -1 ELSE 0 END), 0)
      INTO size_diff FROM "pgivm_triangles"."k2_delta";
    st.db_size := st.db_size + size_diff;
    UPDATE "pgivm_triangles"."state" SET db_size = st.db_size;

    -- Restore the invariants.
    IF st.db_size >= st.n OR st.db_size < st.n / 4 THEN
        UPDATE "pgivm_triangles"."state" SET n = 2 * st.db_size + 1;
        PERFORM "pgivm_triangles"."major_rebalance"();
    ELSE
        FOR moving IN
            SELECT g."b" AS value, NOT g.heavy AS to_heavy
              FROM "pgivm_triangles"."k2_degree" g
             WHERE g."b" IN (SELECT "b" FROM "pgivm_triangles"."k2_delta")
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM "pgivm_triangles"."move_k2"(moving.value, moving.to_heavy);
        END LOOP;
    END IF;
    DELETE FROM "pgivm_triangles"."k2_delta";
END;
$pgivm$;


-- Strict repartition of R_i at the current theta (part of MajorRebalancing): heavy iff degree >= theta.
CREATE FUNCTION "pgivm_triangles"."repartition_k2"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st "pgivm_triangles"."state"%ROWTYPE;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    UPDATE "pgivm_triangles"."k2_degree" SET heavy = (degree >= st.theta OR st.epsilon = 0)
     WHERE heavy IS DISTINCT FROM (degree >= st.theta OR st.epsilon = 0);
    WITH gone AS (DELETE FROM "pgivm_triangles"."k2_light" k USING "pgivm_triangles"."k2_degree" d WHERE d."b" = k."b" AND d.heavy
                  RETURNING k."b", k."c", k."d", k.mult)
    INSERT INTO "pgivm_triangles"."k2_heavy" ("b", "c", "d", mult) SELECT "b", "c", "d", mult FROM gone;
    WITH gone AS (DELETE FROM "pgivm_triangles"."k2_heavy" k USING "pgivm_triangles"."k2_degree" d WHERE d."b" = k."b" AND NOT d.heavy
                  RETURNING k."b", k."c", k."d", k.mult)
    INSERT INTO "pgivm_triangles"."k2_light" ("b", "c", "d", mult) SELECT "b", "c", "d", mult FROM gone;
END;
$pgivm$;


-- V_i from scratch (MajorRebalancing, the build): the join of its parts, summed over A_(i-1).
CREATE FUNCTION "pgivm_triangles"."recompute_v_k2"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."v_k2";
    INSERT INTO "pgivm_triangles"."v_k2" ("b", "c", "d", mult)
    SELECT "t1"."b", "t0"."c", "t0"."d", sum("t0".mult * "t1".mult * "t2".mult)
      FROM "pgivm_triangles"."k3_heavy" "t0"
      JOIN "pgivm_triangles"."k4_heavy" "t1" ON "t1"."a" = "t0"."a" AND "t1"."d" = "t0"."d"
      JOIN "pgivm_triangles"."k1_light" "t2" ON "t2"."a" = "t0"."a" AND "t2"."b" = "t1"."b" AND "t2"."c" = "t0"."c"
     GROUP BY "t1"."b", "t0"."c", "t0"."d"
    HAVING sum("t0".mult * "t1".mult * "t2".mult) <> 0;
END;
$pgivm$;


-- R_i emptied after a TRUNCATE of its table (the caller restarts from what remains).
CREATE FUNCTION "pgivm_triangles"."clear_k2"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."k2_heavy";
    DELETE FROM "pgivm_triangles"."k2_light";
    DELETE FROM "pgivm_triangles"."k2_degree";
END;
$pgivm$;

-- Maintenance of one relation R_i of a Loomis-Whitney count (Kara et al., long version, Appendix
-- F.1), rendered for each relation. An update to R_i binds every variable but A_(i-1) (F below);
-- R_(i-1), partitioned on F, is "P"; the other n - 2 relations are the "middles", each partitioned
-- on a variable the update binds, so each middle's part is known before any loop runs.

-- ApplyUpdate + OnUpdate for a single-tuple update of R_i.
CREATE FUNCTION "pgivm_triangles"."apply_k3"("x_a" integer, "x_c" integer, "x_d" integer, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st          "pgivm_triangles"."state"%ROWTYPE;
    own_heavy   boolean;  -- routing: is the A_i-value heavy in R_i?
    "h_k1" boolean;
    "h_k4" boolean;
    delta_q     bigint := 0;
    new_mult    bigint;
    new_degree  bigint;
BEGIN
    -- Each relation's part of the value the update binds for its partition variable (NULL: absent).
    SELECT s.*, "d0".heavy, "d2".heavy, "d3".heavy
      INTO st.singleton, st.epsilon, st.n, st.theta, st.db_size, st.updates_applied, st.major_rebalances,
           st.minor_rebalances, "h_k1", "own_heavy", "h_k4"
      FROM "pgivm_triangles"."state" s
      LEFT JOIN "pgivm_triangles"."k1_degree" "d0" ON "d0"."a" = "x_a"
      LEFT JOIN "pgivm_triangles"."k3_degree" "d2" ON "d2"."c" = "x_c"
      LEFT JOIN "pgivm_triangles"."k4_degree" "d3" ON "d3"."d" = "x_d";
    own_heavy := coalesce(own_heavy, st.epsilon = 0);  -- a new value starts light (heavy at epsilon = 0)

    -- F.1: the change of the count, delta Q = m * sum_F prod(the other relations at the bound values).
    IF "h_k4" IS NULL OR "h_k1" IS NULL THEN
        delta_q := 0;  -- a middle has no tuple at the bound value
    ELSIF "h_k4" AND "h_k1" THEN  -- every middle heavy: P's heavy F-values (<= 2 N^(1-eps)), then V_i for P's light part
        delta_q := coalesce((SELECT sum(src.mult * (SELECT q.mult FROM "pgivm_triangles"."k4_heavy" q WHERE q."a" = "x_a" AND q."b" = "src"."b" AND q."d" = "x_d") * (SELECT q.mult FROM "pgivm_triangles"."k1_heavy" q WHERE q."a" = "x_a" AND q."b" = "src"."b" AND q."c" = "x_c")) FROM "pgivm_triangles"."k2_heavy" src WHERE "src"."c" = "x_c" AND "src"."d" = "x_d"), 0)
                 + coalesce((SELECT v.mult FROM "pgivm_triangles"."v_k3" v WHERE v."a" = "x_a" AND v."c" = "x_c" AND v."d" = "x_d"), 0);
    ELSIF NOT "h_k4" THEN  -- R4 light: its tuples at the bound value, probing the others and P
        delta_q := coalesce((SELECT sum(src.mult * CASE WHEN "h_k1" THEN (SELECT q.mult FROM "pgivm_triangles"."k1_heavy" q WHERE q."a" = "x_a" AND q."b" = "src"."b" AND q."c" = "x_c") ELSE (SELECT q.mult FROM "pgivm_triangles"."k1_light" q WHERE q."a" = "x_a" AND q."b" = "src"."b" AND q."c" = "x_c") END * coalesce((SELECT q.mult FROM "pgivm_triangles"."k2_heavy" q WHERE q."b" = "src"."b" AND q."c" = "x_c" AND q."d" = "x_d"), (SELECT q.mult FROM "pgivm_triangles"."k2_light" q WHERE q."b" = "src"."b" AND q."c" = "x_c" AND q."d" = "x_d"))) FROM "pgivm_triangles"."k4_light" src WHERE "src"."a" = "x_a" AND "src"."d" = "x_d"), 0);
    ELSIF NOT "h_k1" THEN  -- R1 light: its tuples at the bound value, probing the others and P
        delta_q := coalesce((SELECT sum(src.mult * CASE WHEN "h_k4" THEN (SELECT q.mult FROM "pgivm_triangles"."k4_heavy" q WHERE q."a" = "x_a" AND q."b" = "src"."b" AND q."d" = "x_d") ELSE (SELECT q.mult FROM "pgivm_triangles"."k4_light" q WHERE q."a" = "x_a" AND q."b" = "src"."b" AND q."d" = "x_d") END * coalesce((SELECT q.mult FROM "pgivm_triangles"."k2_heavy" q WHERE q."b" = "src"."b" AND q."c" = "x_c" AND q."d" = "x_d"), (SELECT q.mult FROM "pgivm_triangles"."k2_light" q WHERE q."b" = "src"."b" AND q."c" = "x_c" AND q."d" = "x_d"))) FROM "pgivm_triangles"."k1_light" src WHERE "src"."a" = "x_a" AND "src"."c" = "x_c"), 0);
    END IF;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + m * delta_q;
    END IF;

    -- The auxiliary views that read R_i's part (the other relations' parts as looked up above).
    PERFORM "pgivm_triangles"."views_k3"("x_a", "x_c", "x_d", m, own_heavy, "h_k1", "h_k4");

    -- R_i's part += m; a tuple reaching multiplicity 0 is deleted.
    IF own_heavy THEN
        INSERT INTO "pgivm_triangles"."k3_heavy" AS p ("a", "c", "d", mult) VALUES ("x_a", "x_c", "x_d", m)
            ON CONFLICT ("a", "c", "d") DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
        IF new_mult = 0 THEN
            DELETE FROM "pgivm_triangles"."k3_heavy" WHERE "a" = "x_a" AND "c" = "x_c" AND "d" = "x_d";
        END IF;
    ELSE
        INSERT INTO "pgivm_triangles"."k3_light" AS p ("a", "c", "d", mult) VALUES ("x_a", "x_c", "x_d", m)
            ON CONFLICT ("a", "c", "d") DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
        IF new_mult = 0 THEN
            DELETE FROM "pgivm_triangles"."k3_light" WHERE "a" = "x_a" AND "c" = "x_c" AND "d" = "x_d";
        END IF;
    END IF;

    -- Degrees and |D| count distinct tuples: only a tuple appearing or vanishing changes them.
    IF new_mult = m THEN
        INSERT INTO "pgivm_triangles"."k3_degree" AS d ("c", degree, heavy) VALUES ("x_c", 1, own_heavy)
            ON CONFLICT ("c") DO UPDATE SET degree = d.degree + 1 RETURNING degree INTO new_degree;
        st.db_size := st.db_size + 1;
    ELSIF new_mult = 0 THEN
        UPDATE "pgivm_triangles"."k3_degree" SET degree = degree - 1 WHERE "c" = "x_c" AND degree > 1 RETURNING degree INTO new_degree;
        IF NOT FOUND THEN
            DELETE FROM "pgivm_triangles"."k3_degree" WHERE "c" = "x_c";
            new_degree := 0;
        END IF;
        st.db_size := st.db_size - 1;
    ELSE
        RETURN;
    END IF;

    -- OnUpdate: the size invariant floor(N/4) <= |D| < N first (major), else the value's degree (minor).
    IF st.db_size = st.n THEN
        UPDATE "pgivm_triangles"."state" SET db_size = st.db_size, n = 2 * st.n;
        PERFORM "pgivm_triangles"."major_rebalance"();
    ELSIF st.db_size < st.n / 4 THEN
        UPDATE "pgivm_triangles"."state" SET db_size = st.db_size, n = st.n / 2 - 1;
        PERFORM "pgivm_triangles"."major_rebalance"();
    ELSE
        UPDATE "pgivm_triangles"."state" SET db_size = st.db_size;
        IF NOT own_heavy AND new_degree >= 1.5 * st.theta THEN
            PERFORM "pgivm_triangles"."move_k3"("x_c", true);
        ELSIF own_heavy AND new_degree > 0 AND new_degree < 0.5 * st.theta THEN
            PERFORM "pgivm_triangles"."move_k3"("x_c", false);
        END IF;
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_k3"(integer, integer, integer, bigint) IS 'IVMε ApplyUpdate + OnUpdate for a single-tuple update to K3 (Appendix F)';


-- The auxiliary views' part of a change m of one tuple of R_i in part `heavy` (F.1, "Maintaining
-- Auxiliary Views"): as a heavy tuple it is in V_k for every k but i and i+1, each delta a loop over
-- R_(k-1)'s light tuples at a bound value (< 3/2 N^eps); as a light tuple it is in V_(i+1) only, a
-- loop over P's heavy tuples at the bound values (<= 2 N^(1-eps)). The other relations' parts of
-- the values the tuple binds come in as parameters (apply_k has looked them up; views_moved_k looks
-- them up for each tuple a minor move takes). Reads no part of R_i, so a minor move runs it once
-- out of the old part and once into the new one, per moved tuple.
CREATE FUNCTION "pgivm_triangles"."views_k3"("x_a" integer, "x_c" integer, "x_d" integer, m bigint, heavy boolean, "h_k1" boolean, "h_k4" boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    zeros_f     integer[];
BEGIN
    IF heavy THEN
    IF NOT "h_k4" THEN  -- V_1: loop over R4's light tuples
        WITH changed AS (
            INSERT INTO "pgivm_triangles"."v_k1" AS v ("a", "b", "c", mult)
            SELECT "x_a", d.f, "x_c", d.mult FROM (SELECT src."b" AS f, m * src.mult * (SELECT q.mult FROM "pgivm_triangles"."k2_heavy" q WHERE q."b" = "src"."b" AND q."c" = "x_c" AND q."d" = "x_d") AS mult
                                           FROM "pgivm_triangles"."k4_light" src WHERE "src"."a" = "x_a" AND "src"."d" = "x_d") d
             WHERE d.mult IS NOT NULL
            ON CONFLICT ("a", "b", "c") DO UPDATE SET mult = v.mult + EXCLUDED.mult
            RETURNING v."b", v.mult)
        SELECT array_agg("b") INTO zeros_f FROM changed WHERE mult = 0;
        IF zeros_f IS NOT NULL THEN
            DELETE FROM "pgivm_triangles"."v_k1" WHERE "a" = "x_a" AND "c" = "x_c" AND "b" = ANY (zeros_f);
        END IF;
    END IF;
    IF NOT "h_k1" AND "h_k4" THEN  -- V_2: loop over R1's light tuples
        WITH changed AS (
            INSERT INTO "pgivm_triangles"."v_k2" AS v ("b", "c", "d", mult)
            SELECT d.f, "x_c", "x_d", d.mult FROM (SELECT src."b" AS f, m * src.mult * (SELECT q.mult FROM "pgivm_triangles"."k4_heavy" q WHERE q."a" = "x_a" AND q."b" = "src"."b" AND q."d" = "x_d") AS mult
                                           FROM "pgivm_triangles"."k1_light" src WHERE "src"."a" = "x_a" AND "src"."c" = "x_c") d
             WHERE d.mult IS NOT NULL
            ON CONFLICT ("b", "c", "d") DO UPDATE SET mult = v.mult + EXCLUDED.mult
            RETURNING v."b", v.mult)
        SELECT array_agg("b") INTO zeros_f FROM changed WHERE mult = 0;
        IF zeros_f IS NOT NULL THEN
            DELETE FROM "pgivm_triangles"."v_k2" WHERE "c" = "x_c" AND "d" = "x_d" AND "b" = ANY (zeros_f);
        END IF;
    END IF;
    ELSE
    IF TRUE AND "h_k1" THEN  -- V_4: loop over P's heavy tuples
        WITH changed AS (
            INSERT INTO "pgivm_triangles"."v_k4" AS v ("a", "b", "d", mult)
            SELECT "x_a", d.f, "x_d", d.mult FROM (SELECT src."b" AS f, m * src.mult * (SELECT q.mult FROM "pgivm_triangles"."k1_heavy" q WHERE q."a" = "x_a" AND q."b" = "src"."b" AND q."c" = "x_c") AS mult
                                           FROM "pgivm_triangles"."k2_heavy" src WHERE "src"."c" = "x_c" AND "src"."d" = "x_d") d
             WHERE d.mult IS NOT NULL
            ON CONFLICT ("a", "b", "d") DO UPDATE SET mult = v.mult + EXCLUDED.mult
            RETURNING v."b", v.mult)
        SELECT array_agg("b") INTO zeros_f FROM changed WHERE mult = 0;
        IF zeros_f IS NOT NULL THEN
            DELETE FROM "pgivm_triangles"."v_k4" WHERE "a" = "x_a" AND "d" = "x_d" AND "b" = ANY (zeros_f);
        END IF;
    END IF;
    END IF;
END;
$pgivm$;

-- views_k for a tuple a minor move takes to the other part: the other relations' parts first.
CREATE FUNCTION "pgivm_triangles"."views_moved_k3"("x_a" integer, "x_c" integer, "x_d" integer, m bigint, heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    "h_k1" boolean;
    "h_k4" boolean;
BEGIN
    SELECT "d0".heavy, "d3".heavy INTO "h_k1", "h_k4"
      FROM (SELECT) s
      LEFT JOIN "pgivm_triangles"."k1_degree" "d0" ON "d0"."a" = "x_a"
      LEFT JOIN "pgivm_triangles"."k4_degree" "d3" ON "d3"."d" = "x_d";
    PERFORM "pgivm_triangles"."views_k3"("x_a", "x_c", "x_d", m, heavy, "h_k1", "h_k4");
END;
$pgivm$;


-- MinorRebalancing: move every tuple whose A_i-value is `value` to the other part. The count does
-- not change; each tuple leaves the views of its old part and enters those of the new one.
CREATE FUNCTION "pgivm_triangles"."move_k3"(value integer, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    moved record;
BEGIN
    FOR moved IN SELECT "a", "c", "d", mult FROM "pgivm_triangles"."k3_light" WHERE "c" = value AND to_heavy
                 UNION ALL SELECT "a", "c", "d", mult FROM "pgivm_triangles"."k3_heavy" WHERE "c" = value AND NOT to_heavy LOOP
        PERFORM "pgivm_triangles"."views_moved_k3"(moved."a", moved."c", moved."d", -moved.mult, NOT to_heavy);
        PERFORM "pgivm_triangles"."views_moved_k3"(moved."a", moved."c", moved."d", moved.mult, to_heavy);
    END LOOP;
    IF to_heavy THEN
        WITH gone AS (DELETE FROM "pgivm_triangles"."k3_light" WHERE "c" = value RETURNING "a", "c", "d", mult)
        INSERT INTO "pgivm_triangles"."k3_heavy" ("a", "c", "d", mult) SELECT "a", "c", "d", mult FROM gone;
    ELSE
        WITH gone AS (DELETE FROM "pgivm_triangles"."k3_heavy" WHERE "c" = value RETURNING "a", "c", "d", mult)
        INSERT INTO "pgivm_triangles"."k3_light" ("a", "c", "d", mult) SELECT "a", "c", "d", mult FROM gone;
    END IF;
    UPDATE "pgivm_triangles"."k3_degree" SET heavy = to_heavy WHERE "c" = value;
    UPDATE "pgivm_triangles"."state" SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;


-- A multi-row statement's net change of R_i, set at a time (as the triangle's apply_batch_K): every
-- delta on the state before the batch (R_i is in none of its own), the batch into its values'
-- current parts, then the invariants: a size-invariant violation resets N = 2|D| + 1 with a major
-- rebalancing, else every value of the batch that crossed a threshold moves.
CREATE FUNCTION "pgivm_triangles"."apply_batch_k3"()
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
    -- One row per distinct tuple (a deferred refresh may hand several), then statistics for the planner.
    WITH merged AS (DELETE FROM "pgivm_triangles"."k3_delta" RETURNING "a", "c", "d", mult)
    INSERT INTO "pgivm_triangles"."k3_delta" ("a", "c", "d", mult)
    SELECT "a", "c", "d", sum(mult) FROM merged GROUP BY "a", "c", "d" HAVING sum(mult) <> 0;
    ANALYZE "pgivm_triangles"."k3_delta";

    -- Routing as OnUpdate: the partition value's current part (a new one light, heavy at epsilon = 0),
    -- and each tuple's multiplicity after the batch (a tuple lives in its value's part).
    UPDATE "pgivm_triangles"."k3_delta" d
       SET heavy = st.epsilon = 0 OR coalesce((SELECT g.heavy FROM "pgivm_triangles"."k3_degree" g WHERE g."c" = d."c"), false),
           new_mult = d.mult + coalesce((SELECT p.mult FROM "pgivm_triangles"."k3_heavy" p WHERE p."a" = d."a" AND p."c" = d."c" AND p."d" = d."d"),
                                        (SELECT p.mult FROM "pgivm_triangles"."k3_light" p WHERE p."a" = d."a" AND p."c" = d."c" AND p."d" = d."d"), 0);

    -- delta Q: the batch joined with every other relation.
    SELECT coalesce(sum("t0".mult * "t1".mult * "t2".mult * "t3".mult), 0) INTO delta_q
      FROM "pgivm_triangles"."k3_delta" "t0"
      JOIN (SELECT "a", "b", "c", mult FROM "pgivm_triangles"."k1_heavy" UNION ALL SELECT "a", "b", "c", mult FROM "pgivm_triangles"."k1_light") "t1" ON "t1"."a" = "t0"."a" AND "t1"."c" = "t0"."c"
      JOIN (SELECT "b", "c", "d", mult FROM "pgivm_triangles"."k2_heavy" UNION ALL SELECT "b", "c", "d", mult FROM "pgivm_triangles"."k2_light") "t2" ON "t2"."b" = "t1"."b" AND "t2"."c" = "t0"."c" AND "t2"."d" = "t0"."d"
      JOIN (SELECT "a", "b", "d", mult FROM "pgivm_triangles"."k4_heavy" UNION ALL SELECT "a", "b", "d", mult FROM "pgivm_triangles"."k4_light") "t3" ON "t3"."a" = "t0"."a" AND "t3"."b" = "t1"."b" AND "t3"."d" = "t0"."d";
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + delta_q::bigint;
    END IF;

    -- V_1 from the batch's heavy tuples; entries that reach 0 go (a partial index finds them)
    INSERT INTO "pgivm_triangles"."v_k1" AS v ("a", "b", "c", mult)
    SELECT "t0"."a", "t1"."b", "t0"."c", sum("t0".mult * "t1".mult * "t2".mult)
      FROM (SELECT "a", "c", "d", mult FROM "pgivm_triangles"."k3_delta" WHERE heavy) "t0"
      JOIN "pgivm_triangles"."k2_heavy" "t1" ON "t1"."c" = "t0"."c" AND "t1"."d" = "t0"."d"
      JOIN "pgivm_triangles"."k4_light" "t2" ON "t2"."a" = "t0"."a" AND "t2"."b" = "t1"."b" AND "t2"."d" = "t0"."d"
     GROUP BY "t0"."a", "t1"."b", "t0"."c"
    HAVING sum("t0".mult * "t1".mult * "t2".mult) <> 0
    ON CONFLICT ("a", "b", "c") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."v_k1" WHERE mult = 0;
    -- V_2 from the batch's heavy tuples; entries that reach 0 go (a partial index finds them)
    INSERT INTO "pgivm_triangles"."v_k2" AS v ("b", "c", "d", mult)
    SELECT "t1"."b", "t0"."c", "t0"."d", sum("t0".mult * "t1".mult * "t2".mult)
      FROM (SELECT "a", "c", "d", mult FROM "pgivm_triangles"."k3_delta" WHERE heavy) "t0"
      JOIN "pgivm_triangles"."k4_heavy" "t1" ON "t1"."a" = "t0"."a" AND "t1"."d" = "t0"."d"
      JOIN "pgivm_triangles"."k1_light" "t2" ON "t2"."a" = "t0"."a" AND "t2"."b" = "t1"."b" AND "t2"."c" = "t0"."c"
     GROUP BY "t1"."b", "t0"."c", "t0"."d"
    HAVING sum("t0".mult * "t1".mult * "t2".mult) <> 0
    ON CONFLICT ("b", "c", "d") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."v_k2" WHERE mult = 0;
    -- V_4 from the batch's light tuples; entries that reach 0 go (a partial index finds them)
    INSERT INTO "pgivm_triangles"."v_k4" AS v ("a", "b", "d", mult)
    SELECT "t0"."a", "t1"."b", "t0"."d", sum("t0".mult * "t1".mult * "t2".mult)
      FROM (SELECT "a", "c", "d", mult FROM "pgivm_triangles"."k3_delta" WHERE NOT heavy) "t0"
      JOIN "pgivm_triangles"."k1_heavy" "t1" ON "t1"."a" = "t0"."a" AND "t1"."c" = "t0"."c"
      JOIN "pgivm_triangles"."k2_heavy" "t2" ON "t2"."b" = "t1"."b" AND "t2"."c" = "t0"."c" AND "t2"."d" = "t0"."d"
     GROUP BY "t0"."a", "t1"."b", "t0"."d"
    HAVING sum("t0".mult * "t1".mult * "t2".mult) <> 0
    ON CONFLICT ("a", "b", "d") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."v_k4" WHERE mult = 0;

    -- The batch into the parts: new tuples inserted, changed ones updated, vanished ones deleted.
    INSERT INTO "pgivm_triangles"."k3_heavy" AS p ("a", "c", "d", mult) SELECT "a", "c", "d", new_mult FROM "pgivm_triangles"."k3_delta" WHERE heavy AND new_mult <> 0
        ON CONFLICT ("a", "c", "d") DO UPDATE SET mult = EXCLUDED.mult;
    INSERT INTO "pgivm_triangles"."k3_light" AS p ("a", "c", "d", mult) SELECT "a", "c", "d", new_mult FROM "pgivm_triangles"."k3_delta" WHERE NOT heavy AND new_mult <> 0
        ON CONFLICT ("a", "c", "d") DO UPDATE SET mult = EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."k3_heavy" p USING "pgivm_triangles"."k3_delta" d WHERE d.heavy AND d.new_mult = 0 AND p."a" = d."a" AND p."c" = d."c" AND p."d" = d."d";
    DELETE FROM "pgivm_triangles"."k3_light" p USING "pgivm_triangles"."k3_delta" d WHERE NOT d.heavy AND d.new_mult = 0 AND p."a" = d."a" AND p."c" = d."c" AND p."d" = d."d";

    -- Degrees and |D|: +1 per tuple that appeared, -1 per tuple that vanished.
    INSERT INTO "pgivm_triangles"."k3_degree" AS g ("c", degree, heavy)
    SELECT "c", sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(heavy)
      FROM "pgivm_triangles"."k3_delta" WHERE new_mult = mult OR new_mult = 0
     GROUP BY "c"
    ON CONFLICT ("c") DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM "pgivm_triangles"."k3_degree" g USING "pgivm_triangles"."k3_delta" d WHERE g."c" = d."c" AND g.degree = 0;
    SELECT coalesce(sum(CASE WHEN new_mult = mult THEN 1 WHEN new_mult = 0 THEN -1 ELSE 0 END), 0)
      INTO size_diff FROM "pgivm_triangles"."k3_delta";
    st.db_size := st.db_size + size_diff;
    UPDATE "pgivm_triangles"."state" SET db_size = st.db_size;

    -- Restore the invariants.
    IF st.db_size >= st.n OR st.db_size < st.n / 4 THEN
        UPDATE "pgivm_triangles"."state" SET n = 2 * st.db_size + 1;
        PERFORM "pgivm_triangles"."major_rebalance"();
    ELSE
        FOR moving IN
            SELECT g."c" AS value, NOT g.heavy AS to_heavy
              FROM "pgivm_triangles"."k3_degree" g
             WHERE g."c" IN (SELECT "c" FROM "pgivm_triangles"."k3_delta")
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM "pgivm_triangles"."move_k3"(moving.value, moving.to_heavy);
        END LOOP;
    END IF;
    DELETE FROM "pgivm_triangles"."k3_delta";
END;
$pgivm$;


-- Strict repartition of R_i at the current theta (part of MajorRebalancing): heavy iff degree >= theta.
CREATE FUNCTION "pgivm_triangles"."repartition_k3"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st "pgivm_triangles"."state"%ROWTYPE;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    UPDATE "pgivm_triangles"."k3_degree" SET heavy = (degree >= st.theta OR st.epsilon = 0)
     WHERE heavy IS DISTINCT FROM (degree >= st.theta OR st.epsilon = 0);
    WITH gone AS (DELETE FROM "pgivm_triangles"."k3_light" k USING "pgivm_triangles"."k3_degree" d WHERE d."c" = k."c" AND d.heavy
                  RETURNING k."a", k."c", k."d", k.mult)
    INSERT INTO "pgivm_triangles"."k3_heavy" ("a", "c", "d", mult) SELECT "a", "c", "d", mult FROM gone;
    WITH gone AS (DELETE FROM "pgivm_triangles"."k3_heavy" k USING "pgivm_triangles"."k3_degree" d WHERE d."c" = k."c" AND NOT d.heavy
                  RETURNING k."a", k."c", k."d", k.mult)
    INSERT INTO "pgivm_triangles"."k3_light" ("a", "c", "d", mult) SELECT "a", "c", "d", mult FROM gone;
END;
$pgivm$;


-- V_i from scratch (MajorRebalancing, the build): the join of its parts, summed over A_(i-1).
CREATE FUNCTION "pgivm_triangles"."recompute_v_k3"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."v_k3";
    INSERT INTO "pgivm_triangles"."v_k3" ("a", "c", "d", mult)
    SELECT "t0"."a", "t0"."c", "t1"."d", sum("t0".mult * "t1".mult * "t2".mult)
      FROM "pgivm_triangles"."k1_heavy" "t0"
      JOIN "pgivm_triangles"."k4_heavy" "t1" ON "t1"."a" = "t0"."a" AND "t1"."b" = "t0"."b"
      JOIN "pgivm_triangles"."k2_light" "t2" ON "t2"."b" = "t0"."b" AND "t2"."c" = "t0"."c" AND "t2"."d" = "t1"."d"
     GROUP BY "t0"."a", "t0"."c", "t1"."d"
    HAVING sum("t0".mult * "t1".mult * "t2".mult) <> 0;
END;
$pgivm$;


-- R_i emptied after a TRUNCATE of its table (the caller restarts from what remains).
CREATE FUNCTION "pgivm_triangles"."clear_k3"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."k3_heavy";
    DELETE FROM "pgivm_triangles"."k3_light";
    DELETE FROM "pgivm_triangles"."k3_degree";
END;
$pgivm$;

-- Maintenance of one relation R_i of a Loomis-Whitney count (Kara et al., long version, Appendix
-- F.1), rendered for each relation. An update to R_i binds every variable but A_(i-1) (F below);
-- R_(i-1), partitioned on F, is "P"; the other n - 2 relations are the "middles", each partitioned
-- on a variable the update binds, so each middle's part is known before any loop runs.

-- ApplyUpdate + OnUpdate for a single-tuple update of R_i.
CREATE FUNCTION "pgivm_triangles"."apply_k4"("x_a" integer, "x_b" integer, "x_d" integer, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st          "pgivm_triangles"."state"%ROWTYPE;
    own_heavy   boolean;  -- routing: is the A_i-value heavy in R_i?
    "h_k1" boolean;
    "h_k2" boolean;
    delta_q     bigint := 0;
    new_mult    bigint;
    new_degree  bigint;
BEGIN
    -- Each relation's part of the value the update binds for its partition variable (NULL: absent).
    SELECT s.*, "d0".heavy, "d1".heavy, "d3".heavy
      INTO st.singleton, st.epsilon, st.n, st.theta, st.db_size, st.updates_applied, st.major_rebalances,
           st.minor_rebalances, "h_k1", "h_k2", "own_heavy"
      FROM "pgivm_triangles"."state" s
      LEFT JOIN "pgivm_triangles"."k1_degree" "d0" ON "d0"."a" = "x_a"
      LEFT JOIN "pgivm_triangles"."k2_degree" "d1" ON "d1"."b" = "x_b"
      LEFT JOIN "pgivm_triangles"."k4_degree" "d3" ON "d3"."d" = "x_d";
    own_heavy := coalesce(own_heavy, st.epsilon = 0);  -- a new value starts light (heavy at epsilon = 0)

    -- F.1: the change of the count, delta Q = m * sum_F prod(the other relations at the bound values).
    IF "h_k1" IS NULL OR "h_k2" IS NULL THEN
        delta_q := 0;  -- a middle has no tuple at the bound value
    ELSIF "h_k1" AND "h_k2" THEN  -- every middle heavy: P's heavy F-values (<= 2 N^(1-eps)), then V_i for P's light part
        delta_q := coalesce((SELECT sum(src.mult * (SELECT q.mult FROM "pgivm_triangles"."k1_heavy" q WHERE q."a" = "x_a" AND q."b" = "x_b" AND q."c" = "src"."c") * (SELECT q.mult FROM "pgivm_triangles"."k2_heavy" q WHERE q."b" = "x_b" AND q."c" = "src"."c" AND q."d" = "x_d")) FROM "pgivm_triangles"."k3_heavy" src WHERE "src"."a" = "x_a" AND "src"."d" = "x_d"), 0)
                 + coalesce((SELECT v.mult FROM "pgivm_triangles"."v_k4" v WHERE v."a" = "x_a" AND v."b" = "x_b" AND v."d" = "x_d"), 0);
    ELSIF NOT "h_k1" THEN  -- R1 light: its tuples at the bound value, probing the others and P
        delta_q := coalesce((SELECT sum(src.mult * CASE WHEN "h_k2" THEN (SELECT q.mult FROM "pgivm_triangles"."k2_heavy" q WHERE q."b" = "x_b" AND q."c" = "src"."c" AND q."d" = "x_d") ELSE (SELECT q.mult FROM "pgivm_triangles"."k2_light" q WHERE q."b" = "x_b" AND q."c" = "src"."c" AND q."d" = "x_d") END * coalesce((SELECT q.mult FROM "pgivm_triangles"."k3_heavy" q WHERE q."a" = "x_a" AND q."c" = "src"."c" AND q."d" = "x_d"), (SELECT q.mult FROM "pgivm_triangles"."k3_light" q WHERE q."a" = "x_a" AND q."c" = "src"."c" AND q."d" = "x_d"))) FROM "pgivm_triangles"."k1_light" src WHERE "src"."a" = "x_a" AND "src"."b" = "x_b"), 0);
    ELSIF NOT "h_k2" THEN  -- R2 light: its tuples at the bound value, probing the others and P
        delta_q := coalesce((SELECT sum(src.mult * CASE WHEN "h_k1" THEN (SELECT q.mult FROM "pgivm_triangles"."k1_heavy" q WHERE q."a" = "x_a" AND q."b" = "x_b" AND q."c" = "src"."c") ELSE (SELECT q.mult FROM "pgivm_triangles"."k1_light" q WHERE q."a" = "x_a" AND q."b" = "x_b" AND q."c" = "src"."c") END * coalesce((SELECT q.mult FROM "pgivm_triangles"."k3_heavy" q WHERE q."a" = "x_a" AND q."c" = "src"."c" AND q."d" = "x_d"), (SELECT q.mult FROM "pgivm_triangles"."k3_light" q WHERE q."a" = "x_a" AND q."c" = "src"."c" AND q."d" = "x_d"))) FROM "pgivm_triangles"."k2_light" src WHERE "src"."b" = "x_b" AND "src"."d" = "x_d"), 0);
    END IF;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + m * delta_q;
    END IF;

    -- The auxiliary views that read R_i's part (the other relations' parts as looked up above).
    PERFORM "pgivm_triangles"."views_k4"("x_a", "x_b", "x_d", m, own_heavy, "h_k1", "h_k2");

    -- R_i's part += m; a tuple reaching multiplicity 0 is deleted.
    IF own_heavy THEN
        INSERT INTO "pgivm_triangles"."k4_heavy" AS p ("a", "b", "d", mult) VALUES ("x_a", "x_b", "x_d", m)
            ON CONFLICT ("a", "b", "d") DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
        IF new_mult = 0 THEN
            DELETE FROM "pgivm_triangles"."k4_heavy" WHERE "a" = "x_a" AND "b" = "x_b" AND "d" = "x_d";
        END IF;
    ELSE
        INSERT INTO "pgivm_triangles"."k4_light" AS p ("a", "b", "d", mult) VALUES ("x_a", "x_b", "x_d", m)
            ON CONFLICT ("a", "b", "d") DO UPDATE SET mult = p.mult + EXCLUDED.mult RETURNING mult INTO new_mult;
        IF new_mult = 0 THEN
            DELETE FROM "pgivm_triangles"."k4_light" WHERE "a" = "x_a" AND "b" = "x_b" AND "d" = "x_d";
        END IF;
    END IF;

    -- Degrees and |D| count distinct tuples: only a tuple appearing or vanishing changes them.
    IF new_mult = m THEN
        INSERT INTO "pgivm_triangles"."k4_degree" AS d ("d", degree, heavy) VALUES ("x_d", 1, own_heavy)
            ON CONFLICT ("d") DO UPDATE SET degree = d.degree + 1 RETURNING degree INTO new_degree;
        st.db_size := st.db_size + 1;
    ELSIF new_mult = 0 THEN
        UPDATE "pgivm_triangles"."k4_degree" SET degree = degree - 1 WHERE "d" = "x_d" AND degree > 1 RETURNING degree INTO new_degree;
        IF NOT FOUND THEN
            DELETE FROM "pgivm_triangles"."k4_degree" WHERE "d" = "x_d";
            new_degree := 0;
        END IF;
        st.db_size := st.db_size - 1;
    ELSE
        RETURN;
    END IF;

    -- OnUpdate: the size invariant floor(N/4) <= |D| < N first (major), else the value's degree (minor).
    IF st.db_size = st.n THEN
        UPDATE "pgivm_triangles"."state" SET db_size = st.db_size, n = 2 * st.n;
        PERFORM "pgivm_triangles"."major_rebalance"();
    ELSIF st.db_size < st.n / 4 THEN
        UPDATE "pgivm_triangles"."state" SET db_size = st.db_size, n = st.n / 2 - 1;
        PERFORM "pgivm_triangles"."major_rebalance"();
    ELSE
        UPDATE "pgivm_triangles"."state" SET db_size = st.db_size;
        IF NOT own_heavy AND new_degree >= 1.5 * st.theta THEN
            PERFORM "pgivm_triangles"."move_k4"("x_d", true);
        ELSIF own_heavy AND new_degree > 0 AND new_degree < 0.5 * st.theta THEN
            PERFORM "pgivm_triangles"."move_k4"("x_d", false);
        END IF;
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_k4"(integer, integer, integer, bigint) IS 'IVMε ApplyUpdate + OnUpdate for a single-tuple update to K4 (Appendix F)';


-- The auxiliary views' part of a change m of one tuple of R_i in part `heavy` (F.1, "Maintaining
-- Auxiliary Views"): as a heavy tuple it is in V_k for every k but i and i+1, each delta a loop over
-- R_(k-1)'s light tuples at a bound value (< 3/2 N^eps); as a light tuple it is in V_(i+1) only, a
-- loop over P's heavy tuples at the bound values (<= 2 N^(1-eps)). The other relations' parts of
-- the values the tuple binds come in as parameters (apply_k has looked them up; views_moved_k looks
-- them up for each tuple a minor move takes). Reads no part of R_i, so a minor move runs it once
-- out of the old part and once into the new one, per moved tuple.
CREATE FUNCTION "pgivm_triangles"."views_k4"("x_a" integer, "x_b" integer, "x_d" integer, m bigint, heavy boolean, "h_k1" boolean, "h_k2" boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    zeros_f     integer[];
BEGIN
    IF heavy THEN
    IF NOT "h_k1" THEN  -- V_2: loop over R1's light tuples
        WITH changed AS (
            INSERT INTO "pgivm_triangles"."v_k2" AS v ("b", "c", "d", mult)
            SELECT "x_b", d.f, "x_d", d.mult FROM (SELECT src."c" AS f, m * src.mult * (SELECT q.mult FROM "pgivm_triangles"."k3_heavy" q WHERE q."a" = "x_a" AND q."c" = "src"."c" AND q."d" = "x_d") AS mult
                                           FROM "pgivm_triangles"."k1_light" src WHERE "src"."a" = "x_a" AND "src"."b" = "x_b") d
             WHERE d.mult IS NOT NULL
            ON CONFLICT ("b", "c", "d") DO UPDATE SET mult = v.mult + EXCLUDED.mult
            RETURNING v."c", v.mult)
        SELECT array_agg("c") INTO zeros_f FROM changed WHERE mult = 0;
        IF zeros_f IS NOT NULL THEN
            DELETE FROM "pgivm_triangles"."v_k2" WHERE "b" = "x_b" AND "d" = "x_d" AND "c" = ANY (zeros_f);
        END IF;
    END IF;
    IF NOT "h_k2" AND "h_k1" THEN  -- V_3: loop over R2's light tuples
        WITH changed AS (
            INSERT INTO "pgivm_triangles"."v_k3" AS v ("a", "c", "d", mult)
            SELECT "x_a", d.f, "x_d", d.mult FROM (SELECT src."c" AS f, m * src.mult * (SELECT q.mult FROM "pgivm_triangles"."k1_heavy" q WHERE q."a" = "x_a" AND q."b" = "x_b" AND q."c" = "src"."c") AS mult
                                           FROM "pgivm_triangles"."k2_light" src WHERE "src"."b" = "x_b" AND "src"."d" = "x_d") d
             WHERE d.mult IS NOT NULL
            ON CONFLICT ("a", "c", "d") DO UPDATE SET mult = v.mult + EXCLUDED.mult
            RETURNING v."c", v.mult)
        SELECT array_agg("c") INTO zeros_f FROM changed WHERE mult = 0;
        IF zeros_f IS NOT NULL THEN
            DELETE FROM "pgivm_triangles"."v_k3" WHERE "a" = "x_a" AND "d" = "x_d" AND "c" = ANY (zeros_f);
        END IF;
    END IF;
    ELSE
    IF TRUE AND "h_k2" THEN  -- V_1: loop over P's heavy tuples
        WITH changed AS (
            INSERT INTO "pgivm_triangles"."v_k1" AS v ("a", "b", "c", mult)
            SELECT "x_a", "x_b", d.f, d.mult FROM (SELECT src."c" AS f, m * src.mult * (SELECT q.mult FROM "pgivm_triangles"."k2_heavy" q WHERE q."b" = "x_b" AND q."c" = "src"."c" AND q."d" = "x_d") AS mult
                                           FROM "pgivm_triangles"."k3_heavy" src WHERE "src"."a" = "x_a" AND "src"."d" = "x_d") d
             WHERE d.mult IS NOT NULL
            ON CONFLICT ("a", "b", "c") DO UPDATE SET mult = v.mult + EXCLUDED.mult
            RETURNING v."c", v.mult)
        SELECT array_agg("c") INTO zeros_f FROM changed WHERE mult = 0;
        IF zeros_f IS NOT NULL THEN
            DELETE FROM "pgivm_triangles"."v_k1" WHERE "a" = "x_a" AND "b" = "x_b" AND "c" = ANY (zeros_f);
        END IF;
    END IF;
    END IF;
END;
$pgivm$;

-- views_k for a tuple a minor move takes to the other part: the other relations' parts first.
CREATE FUNCTION "pgivm_triangles"."views_moved_k4"("x_a" integer, "x_b" integer, "x_d" integer, m bigint, heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    "h_k1" boolean;
    "h_k2" boolean;
BEGIN
    SELECT "d0".heavy, "d1".heavy INTO "h_k1", "h_k2"
      FROM (SELECT) s
      LEFT JOIN "pgivm_triangles"."k1_degree" "d0" ON "d0"."a" = "x_a"
      LEFT JOIN "pgivm_triangles"."k2_degree" "d1" ON "d1"."b" = "x_b";
    PERFORM "pgivm_triangles"."views_k4"("x_a", "x_b", "x_d", m, heavy, "h_k1", "h_k2");
END;
$pgivm$;


-- MinorRebalancing: move every tuple whose A_i-value is `value` to the other part. The count does
-- not change; each tuple leaves the views of its old part and enters those of the new one.
CREATE FUNCTION "pgivm_triangles"."move_k4"(value integer, to_heavy boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    moved record;
BEGIN
    FOR moved IN SELECT "a", "b", "d", mult FROM "pgivm_triangles"."k4_light" WHERE "d" = value AND to_heavy
                 UNION ALL SELECT "a", "b", "d", mult FROM "pgivm_triangles"."k4_heavy" WHERE "d" = value AND NOT to_heavy LOOP
        PERFORM "pgivm_triangles"."views_moved_k4"(moved."a", moved."b", moved."d", -moved.mult, NOT to_heavy);
        PERFORM "pgivm_triangles"."views_moved_k4"(moved."a", moved."b", moved."d", moved.mult, to_heavy);
    END LOOP;
    IF to_heavy THEN
        WITH gone AS (DELETE FROM "pgivm_triangles"."k4_light" WHERE "d" = value RETURNING "a", "b", "d", mult)
        INSERT INTO "pgivm_triangles"."k4_heavy" ("a", "b", "d", mult) SELECT "a", "b", "d", mult FROM gone;
    ELSE
        WITH gone AS (DELETE FROM "pgivm_triangles"."k4_heavy" WHERE "d" = value RETURNING "a", "b", "d", mult)
        INSERT INTO "pgivm_triangles"."k4_light" ("a", "b", "d", mult) SELECT "a", "b", "d", mult FROM gone;
    END IF;
    UPDATE "pgivm_triangles"."k4_degree" SET heavy = to_heavy WHERE "d" = value;
    UPDATE "pgivm_triangles"."state" SET minor_rebalances = minor_rebalances + 1;
END;
$pgivm$;


-- A multi-row statement's net change of R_i, set at a time (as the triangle's apply_batch_K): every
-- delta on the state before the batch (R_i is in none of its own), the batch into its values'
-- current parts, then the invariants: a size-invariant violation resets N = 2|D| + 1 with a major
-- rebalancing, else every value of the batch that crossed a threshold moves.
CREATE FUNCTION "pgivm_triangles"."apply_batch_k4"()
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
    -- One row per distinct tuple (a deferred refresh may hand several), then statistics for the planner.
    WITH merged AS (DELETE FROM "pgivm_triangles"."k4_delta" RETURNING "a", "b", "d", mult)
    INSERT INTO "pgivm_triangles"."k4_delta" ("a", "b", "d", mult)
    SELECT "a", "b", "d", sum(mult) FROM merged GROUP BY "a", "b", "d" HAVING sum(mult) <> 0;
    ANALYZE "pgivm_triangles"."k4_delta";

    -- Routing as OnUpdate: the partition value's current part (a new one light, heavy at epsilon = 0),
    -- and each tuple's multiplicity after the batch (a tuple lives in its value's part).
    UPDATE "pgivm_triangles"."k4_delta" d
       SET heavy = st.epsilon = 0 OR coalesce((SELECT g.heavy FROM "pgivm_triangles"."k4_degree" g WHERE g."d" = d."d"), false),
           new_mult = d.mult + coalesce((SELECT p.mult FROM "pgivm_triangles"."k4_heavy" p WHERE p."a" = d."a" AND p."b" = d."b" AND p."d" = d."d"),
                                        (SELECT p.mult FROM "pgivm_triangles"."k4_light" p WHERE p."a" = d."a" AND p."b" = d."b" AND p."d" = d."d"), 0);

    -- delta Q: the batch joined with every other relation.
    SELECT coalesce(sum("t0".mult * "t1".mult * "t2".mult * "t3".mult), 0) INTO delta_q
      FROM "pgivm_triangles"."k4_delta" "t0"
      JOIN (SELECT "a", "b", "c", mult FROM "pgivm_triangles"."k1_heavy" UNION ALL SELECT "a", "b", "c", mult FROM "pgivm_triangles"."k1_light") "t1" ON "t1"."a" = "t0"."a" AND "t1"."b" = "t0"."b"
      JOIN (SELECT "b", "c", "d", mult FROM "pgivm_triangles"."k2_heavy" UNION ALL SELECT "b", "c", "d", mult FROM "pgivm_triangles"."k2_light") "t2" ON "t2"."b" = "t0"."b" AND "t2"."c" = "t1"."c" AND "t2"."d" = "t0"."d"
      JOIN (SELECT "a", "c", "d", mult FROM "pgivm_triangles"."k3_heavy" UNION ALL SELECT "a", "c", "d", mult FROM "pgivm_triangles"."k3_light") "t3" ON "t3"."a" = "t0"."a" AND "t3"."c" = "t1"."c" AND "t3"."d" = "t0"."d";
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + delta_q::bigint;
    END IF;

    -- V_2 from the batch's heavy tuples; entries that reach 0 go (a partial index finds them)
    INSERT INTO "pgivm_triangles"."v_k2" AS v ("b", "c", "d", mult)
    SELECT "t0"."b", "t1"."c", "t0"."d", sum("t0".mult * "t1".mult * "t2".mult)
      FROM (SELECT "a", "b", "d", mult FROM "pgivm_triangles"."k4_delta" WHERE heavy) "t0"
      JOIN "pgivm_triangles"."k3_heavy" "t1" ON "t1"."a" = "t0"."a" AND "t1"."d" = "t0"."d"
      JOIN "pgivm_triangles"."k1_light" "t2" ON "t2"."a" = "t0"."a" AND "t2"."b" = "t0"."b" AND "t2"."c" = "t1"."c"
     GROUP BY "t0"."b", "t1"."c", "t0"."d"
    HAVING sum("t0".mult * "t1".mult * "t2".mult) <> 0
    ON CONFLICT ("b", "c", "d") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."v_k2" WHERE mult = 0;
    -- V_3 from the batch's heavy tuples; entries that reach 0 go (a partial index finds them)
    INSERT INTO "pgivm_triangles"."v_k3" AS v ("a", "c", "d", mult)
    SELECT "t0"."a", "t1"."c", "t0"."d", sum("t0".mult * "t1".mult * "t2".mult)
      FROM (SELECT "a", "b", "d", mult FROM "pgivm_triangles"."k4_delta" WHERE heavy) "t0"
      JOIN "pgivm_triangles"."k1_heavy" "t1" ON "t1"."a" = "t0"."a" AND "t1"."b" = "t0"."b"
      JOIN "pgivm_triangles"."k2_light" "t2" ON "t2"."b" = "t0"."b" AND "t2"."c" = "t1"."c" AND "t2"."d" = "t0"."d"
     GROUP BY "t0"."a", "t1"."c", "t0"."d"
    HAVING sum("t0".mult * "t1".mult * "t2".mult) <> 0
    ON CONFLICT ("a", "c", "d") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."v_k3" WHERE mult = 0;
    -- V_1 from the batch's light tuples; entries that reach 0 go (a partial index finds them)
    INSERT INTO "pgivm_triangles"."v_k1" AS v ("a", "b", "c", mult)
    SELECT "t0"."a", "t0"."b", "t1"."c", sum("t0".mult * "t1".mult * "t2".mult)
      FROM (SELECT "a", "b", "d", mult FROM "pgivm_triangles"."k4_delta" WHERE NOT heavy) "t0"
      JOIN "pgivm_triangles"."k2_heavy" "t1" ON "t1"."b" = "t0"."b" AND "t1"."d" = "t0"."d"
      JOIN "pgivm_triangles"."k3_heavy" "t2" ON "t2"."a" = "t0"."a" AND "t2"."c" = "t1"."c" AND "t2"."d" = "t0"."d"
     GROUP BY "t0"."a", "t0"."b", "t1"."c"
    HAVING sum("t0".mult * "t1".mult * "t2".mult) <> 0
    ON CONFLICT ("a", "b", "c") DO UPDATE SET mult = v.mult + EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."v_k1" WHERE mult = 0;

    -- The batch into the parts: new tuples inserted, changed ones updated, vanished ones deleted.
    INSERT INTO "pgivm_triangles"."k4_heavy" AS p ("a", "b", "d", mult) SELECT "a", "b", "d", new_mult FROM "pgivm_triangles"."k4_delta" WHERE heavy AND new_mult <> 0
        ON CONFLICT ("a", "b", "d") DO UPDATE SET mult = EXCLUDED.mult;
    INSERT INTO "pgivm_triangles"."k4_light" AS p ("a", "b", "d", mult) SELECT "a", "b", "d", new_mult FROM "pgivm_triangles"."k4_delta" WHERE NOT heavy AND new_mult <> 0
        ON CONFLICT ("a", "b", "d") DO UPDATE SET mult = EXCLUDED.mult;
    DELETE FROM "pgivm_triangles"."k4_heavy" p USING "pgivm_triangles"."k4_delta" d WHERE d.heavy AND d.new_mult = 0 AND p."a" = d."a" AND p."b" = d."b" AND p."d" = d."d";
    DELETE FROM "pgivm_triangles"."k4_light" p USING "pgivm_triangles"."k4_delta" d WHERE NOT d.heavy AND d.new_mult = 0 AND p."a" = d."a" AND p."b" = d."b" AND p."d" = d."d";

    -- Degrees and |D|: +1 per tuple that appeared, -1 per tuple that vanished.
    INSERT INTO "pgivm_triangles"."k4_degree" AS g ("d", degree, heavy)
    SELECT "d", sum(CASE WHEN new_mult = mult THEN 1 ELSE -1 END), bool_or(heavy)
      FROM "pgivm_triangles"."k4_delta" WHERE new_mult = mult OR new_mult = 0
     GROUP BY "d"
    ON CONFLICT ("d") DO UPDATE SET degree = g.degree + EXCLUDED.degree;
    DELETE FROM "pgivm_triangles"."k4_degree" g USING "pgivm_triangles"."k4_delta" d WHERE g."d" = d."d" AND g.degree = 0;
    SELECT coalesce(sum(CASE WHEN new_mult = mult THEN 1 WHEN new_mult = 0 THEN -1 ELSE 0 END), 0)
      INTO size_diff FROM "pgivm_triangles"."k4_delta";
    st.db_size := st.db_size + size_diff;
    UPDATE "pgivm_triangles"."state" SET db_size = st.db_size;

    -- Restore the invariants.
    IF st.db_size >= st.n OR st.db_size < st.n / 4 THEN
        UPDATE "pgivm_triangles"."state" SET n = 2 * st.db_size + 1;
        PERFORM "pgivm_triangles"."major_rebalance"();
    ELSE
        FOR moving IN
            SELECT g."d" AS value, NOT g.heavy AS to_heavy
              FROM "pgivm_triangles"."k4_degree" g
             WHERE g."d" IN (SELECT "d" FROM "pgivm_triangles"."k4_delta")
               AND ((NOT g.heavy AND g.degree >= 1.5 * st.theta) OR (g.heavy AND g.degree < 0.5 * st.theta))
        LOOP
            PERFORM "pgivm_triangles"."move_k4"(moving.value, moving.to_heavy);
        END LOOP;
    END IF;
    DELETE FROM "pgivm_triangles"."k4_delta";
END;
$pgivm$;


-- Strict repartition of R_i at the current theta (part of MajorRebalancing): heavy iff degree >= theta.
CREATE FUNCTION "pgivm_triangles"."repartition_k4"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    st "pgivm_triangles"."state"%ROWTYPE;
BEGIN
    SELECT * INTO st FROM "pgivm_triangles"."state";
    UPDATE "pgivm_triangles"."k4_degree" SET heavy = (degree >= st.theta OR st.epsilon = 0)
     WHERE heavy IS DISTINCT FROM (degree >= st.theta OR st.epsilon = 0);
    WITH gone AS (DELETE FROM "pgivm_triangles"."k4_light" k USING "pgivm_triangles"."k4_degree" d WHERE d."d" = k."d" AND d.heavy
                  RETURNING k."a", k."b", k."d", k.mult)
    INSERT INTO "pgivm_triangles"."k4_heavy" ("a", "b", "d", mult) SELECT "a", "b", "d", mult FROM gone;
    WITH gone AS (DELETE FROM "pgivm_triangles"."k4_heavy" k USING "pgivm_triangles"."k4_degree" d WHERE d."d" = k."d" AND NOT d.heavy
                  RETURNING k."a", k."b", k."d", k.mult)
    INSERT INTO "pgivm_triangles"."k4_light" ("a", "b", "d", mult) SELECT "a", "b", "d", mult FROM gone;
END;
$pgivm$;


-- V_i from scratch (MajorRebalancing, the build): the join of its parts, summed over A_(i-1).
CREATE FUNCTION "pgivm_triangles"."recompute_v_k4"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."v_k4";
    INSERT INTO "pgivm_triangles"."v_k4" ("a", "b", "d", mult)
    SELECT "t0"."a", "t0"."b", "t1"."d", sum("t0".mult * "t1".mult * "t2".mult)
      FROM "pgivm_triangles"."k1_heavy" "t0"
      JOIN "pgivm_triangles"."k2_heavy" "t1" ON "t1"."b" = "t0"."b" AND "t1"."c" = "t0"."c"
      JOIN "pgivm_triangles"."k3_light" "t2" ON "t2"."a" = "t0"."a" AND "t2"."c" = "t0"."c" AND "t2"."d" = "t1"."d"
     GROUP BY "t0"."a", "t0"."b", "t1"."d"
    HAVING sum("t0".mult * "t1".mult * "t2".mult) <> 0;
END;
$pgivm$;


-- R_i emptied after a TRUNCATE of its table (the caller restarts from what remains).
CREATE FUNCTION "pgivm_triangles"."clear_k4"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."k4_heavy";
    DELETE FROM "pgivm_triangles"."k4_light";
    DELETE FROM "pgivm_triangles"."k4_degree";
END;
$pgivm$;

-- View-wide maintenance of a Loomis-Whitney count (Appendix F): major rebalancing, the count from
-- the partitioned state, and the restart after a build or a TRUNCATE. Rendered once per view.

-- MajorRebalancing: theta = N^epsilon, a strict repartition of every relation, every V_i recomputed.
CREATE FUNCTION "pgivm_triangles"."major_rebalance"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
BEGIN
    UPDATE "pgivm_triangles"."state" SET theta = power(n::float8, epsilon), major_rebalances = major_rebalances + 1;
    PERFORM "pgivm_triangles"."repartition_k1"();
    PERFORM "pgivm_triangles"."repartition_k2"();
    PERFORM "pgivm_triangles"."repartition_k3"();
    PERFORM "pgivm_triangles"."repartition_k4"();
    PERFORM "pgivm_triangles"."recompute_v_k1"();
    PERFORM "pgivm_triangles"."recompute_v_k2"();
    PERFORM "pgivm_triangles"."recompute_v_k3"();
    PERFORM "pgivm_triangles"."recompute_v_k4"();
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."major_rebalance"() IS 'IVMε MajorRebalancing: strict repartition at theta = N^epsilon and every V_i recomputed';


-- The count from the state: the join of every relation's two parts (each tuple in one of them).
-- Used by the build, TRUNCATE and verify.
CREATE FUNCTION "pgivm_triangles"."count_from_state"()
RETURNS bigint LANGUAGE sql SECURITY DEFINER STABLE
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
    SELECT coalesce(sum("t0".mult * "t1".mult * "t2".mult * "t3".mult), 0)::bigint
      FROM (SELECT "a", "b", "c", mult FROM "pgivm_triangles"."k1_heavy" UNION ALL SELECT "a", "b", "c", mult FROM "pgivm_triangles"."k1_light") "t0"
      JOIN (SELECT "b", "c", "d", mult FROM "pgivm_triangles"."k2_heavy" UNION ALL SELECT "b", "c", "d", mult FROM "pgivm_triangles"."k2_light") "t1" ON "t1"."b" = "t0"."b" AND "t1"."c" = "t0"."c"
      JOIN (SELECT "a", "c", "d", mult FROM "pgivm_triangles"."k3_heavy" UNION ALL SELECT "a", "c", "d", mult FROM "pgivm_triangles"."k3_light") "t2" ON "t2"."a" = "t0"."a" AND "t2"."c" = "t0"."c" AND "t2"."d" = "t1"."d"
      JOIN (SELECT "a", "b", "d", mult FROM "pgivm_triangles"."k4_heavy" UNION ALL SELECT "a", "b", "d", mult FROM "pgivm_triangles"."k4_light") "t3" ON "t3"."a" = "t0"."a" AND "t3"."b" = "t0"."b" AND "t3"."d" = "t1"."d"
$pgivm$;


-- Preprocessing: N = 2|D| + 1, strict partitions, the views, the count.
CREATE FUNCTION "pgivm_triangles"."restart"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
DECLARE
    size bigint;
BEGIN
    SELECT (SELECT count(*) FROM "pgivm_triangles"."k1_heavy") + (SELECT count(*) FROM "pgivm_triangles"."k1_light") + (SELECT count(*) FROM "pgivm_triangles"."k2_heavy") + (SELECT count(*) FROM "pgivm_triangles"."k2_light") + (SELECT count(*) FROM "pgivm_triangles"."k3_heavy") + (SELECT count(*) FROM "pgivm_triangles"."k3_light") + (SELECT count(*) FROM "pgivm_triangles"."k4_heavy") + (SELECT count(*) FROM "pgivm_triangles"."k4_light") INTO size;
    UPDATE "pgivm_triangles"."state" SET db_size = size, n = 2 * size + 1;
    PERFORM "pgivm_triangles"."major_rebalance"();
    UPDATE "pgivm_triangles"."result" SET count = "pgivm_triangles"."count_from_state"();
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

CREATE FUNCTION "pgivm_triangles"."on_change_k1"()
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
        -- K1
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."a", changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", new_rows."b" AS "b", new_rows."c" AS "c", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL AND new_rows."b" IS NOT NULL AND new_rows."c" IS NOT NULL) AS changes GROUP BY changes."a", changes."b", changes."c" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_k1"(change."a", change."b", change."c", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."k1_delta" ("a", "b", "c", mult) SELECT changes."a", changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", new_rows."b" AS "b", new_rows."c" AS "c", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL AND new_rows."b" IS NOT NULL AND new_rows."c" IS NOT NULL) AS changes GROUP BY changes."a", changes."b", changes."c" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_k1"();
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        -- K1
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."a", changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT old_rows."a" AS "a", old_rows."b" AS "b", old_rows."c" AS "c", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL AND old_rows."b" IS NOT NULL AND old_rows."c" IS NOT NULL) AS changes GROUP BY changes."a", changes."b", changes."c" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_k1"(change."a", change."b", change."c", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."k1_delta" ("a", "b", "c", mult) SELECT changes."a", changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT old_rows."a" AS "a", old_rows."b" AS "b", old_rows."c" AS "c", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL AND old_rows."b" IS NOT NULL AND old_rows."c" IS NOT NULL) AS changes GROUP BY changes."a", changes."b", changes."c" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_k1"();
        END IF;
    ELSE
        -- K1
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."a", changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", new_rows."b" AS "b", new_rows."c" AS "c", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL AND new_rows."b" IS NOT NULL AND new_rows."c" IS NOT NULL UNION ALL SELECT old_rows."a" AS "a", old_rows."b" AS "b", old_rows."c" AS "c", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL AND old_rows."b" IS NOT NULL AND old_rows."c" IS NOT NULL) AS changes GROUP BY changes."a", changes."b", changes."c" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_k1"(change."a", change."b", change."c", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."k1_delta" ("a", "b", "c", mult) SELECT changes."a", changes."b", changes."c", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", new_rows."b" AS "b", new_rows."c" AS "c", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL AND new_rows."b" IS NOT NULL AND new_rows."c" IS NOT NULL UNION ALL SELECT old_rows."a" AS "a", old_rows."b" AS "b", old_rows."c" AS "c", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL AND old_rows."b" IS NOT NULL AND old_rows."c" IS NOT NULL) AS changes GROUP BY changes."a", changes."b", changes."c" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_k1"();
        END IF;
    END IF;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_change_k1"() IS 'pgivm view triangles: maintain the IVMε state for changes of public.r1 as K1';

-- TRUNCATE of a partition (or of a partitioned table, which fires this on every partition) takes
-- only that partition's rows away: read them just before they go and hand them to the sink as a
-- deletion, set at a time (with the log sink, a TRUNCATE of a plain table goes this way too). The partition is found by the trigger's oid (TG_RELID), named from the oid at
-- this moment, and the query names its tableoid column, so it cannot run anything but a read of
-- that table; row_security = off makes a policy an error instead of code that runs here.
CREATE FUNCTION "pgivm_triangles"."on_truncate_rows_k1"()
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
    -- K1
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_triangles"."k1_delta" ("a", "b", "c", mult) SELECT base."a", base."b", base."c", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."a" IS NOT NULL AND base."b" IS NOT NULL AND base."c" IS NOT NULL GROUP BY 1, 2, 3', TG_RELID::pg_catalog.regclass, TG_RELID);
    PERFORM "pgivm_triangles"."apply_batch_k1"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_truncate_rows_k1"() IS 'pgivm view triangles: before TRUNCATE of public.r1 or a partition of it, take its rows away as a deletion';

-- With the apply sink, TRUNCATE of a plain table empties every relation it feeds: clear them and
-- restart (N, the partition and the views from the remaining relations). Nothing needs to be read.
CREATE FUNCTION "pgivm_triangles"."on_truncate_k1"()
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
    PERFORM "pgivm_triangles"."clear_k1"();
    PERFORM "pgivm_triangles"."restart"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_truncate_k1"() IS 'pgivm view triangles: clear the IVMε state of public.r1 as K1 after TRUNCATE';

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

CREATE FUNCTION "pgivm_triangles"."on_change_k2"()
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
        -- K2
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."b", changes."c", changes."d", sum(changes.m)::bigint AS m FROM (SELECT new_rows."b" AS "b", new_rows."c" AS "c", new_rows."d" AS "d", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL AND new_rows."c" IS NOT NULL AND new_rows."d" IS NOT NULL) AS changes GROUP BY changes."b", changes."c", changes."d" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_k2"(change."b", change."c", change."d", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."k2_delta" ("b", "c", "d", mult) SELECT changes."b", changes."c", changes."d", sum(changes.m)::bigint AS m FROM (SELECT new_rows."b" AS "b", new_rows."c" AS "c", new_rows."d" AS "d", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL AND new_rows."c" IS NOT NULL AND new_rows."d" IS NOT NULL) AS changes GROUP BY changes."b", changes."c", changes."d" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_k2"();
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        -- K2
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."b", changes."c", changes."d", sum(changes.m)::bigint AS m FROM (SELECT old_rows."b" AS "b", old_rows."c" AS "c", old_rows."d" AS "d", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL AND old_rows."c" IS NOT NULL AND old_rows."d" IS NOT NULL) AS changes GROUP BY changes."b", changes."c", changes."d" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_k2"(change."b", change."c", change."d", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."k2_delta" ("b", "c", "d", mult) SELECT changes."b", changes."c", changes."d", sum(changes.m)::bigint AS m FROM (SELECT old_rows."b" AS "b", old_rows."c" AS "c", old_rows."d" AS "d", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL AND old_rows."c" IS NOT NULL AND old_rows."d" IS NOT NULL) AS changes GROUP BY changes."b", changes."c", changes."d" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_k2"();
        END IF;
    ELSE
        -- K2
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."b", changes."c", changes."d", sum(changes.m)::bigint AS m FROM (SELECT new_rows."b" AS "b", new_rows."c" AS "c", new_rows."d" AS "d", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL AND new_rows."c" IS NOT NULL AND new_rows."d" IS NOT NULL UNION ALL SELECT old_rows."b" AS "b", old_rows."c" AS "c", old_rows."d" AS "d", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL AND old_rows."c" IS NOT NULL AND old_rows."d" IS NOT NULL) AS changes GROUP BY changes."b", changes."c", changes."d" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_k2"(change."b", change."c", change."d", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."k2_delta" ("b", "c", "d", mult) SELECT changes."b", changes."c", changes."d", sum(changes.m)::bigint AS m FROM (SELECT new_rows."b" AS "b", new_rows."c" AS "c", new_rows."d" AS "d", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL AND new_rows."c" IS NOT NULL AND new_rows."d" IS NOT NULL UNION ALL SELECT old_rows."b" AS "b", old_rows."c" AS "c", old_rows."d" AS "d", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL AND old_rows."c" IS NOT NULL AND old_rows."d" IS NOT NULL) AS changes GROUP BY changes."b", changes."c", changes."d" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_k2"();
        END IF;
    END IF;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_change_k2"() IS 'pgivm view triangles: maintain the IVMε state for changes of public.r2 as K2';

-- TRUNCATE of a partition (or of a partitioned table, which fires this on every partition) takes
-- only that partition's rows away: read them just before they go and hand them to the sink as a
-- deletion, set at a time (with the log sink, a TRUNCATE of a plain table goes this way too). The partition is found by the trigger's oid (TG_RELID), named from the oid at
-- this moment, and the query names its tableoid column, so it cannot run anything but a read of
-- that table; row_security = off makes a policy an error instead of code that runs here.
CREATE FUNCTION "pgivm_triangles"."on_truncate_rows_k2"()
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
    -- K2
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_triangles"."k2_delta" ("b", "c", "d", mult) SELECT base."b", base."c", base."d", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."b" IS NOT NULL AND base."c" IS NOT NULL AND base."d" IS NOT NULL GROUP BY 1, 2, 3', TG_RELID::pg_catalog.regclass, TG_RELID);
    PERFORM "pgivm_triangles"."apply_batch_k2"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_truncate_rows_k2"() IS 'pgivm view triangles: before TRUNCATE of public.r2 or a partition of it, take its rows away as a deletion';

-- With the apply sink, TRUNCATE of a plain table empties every relation it feeds: clear them and
-- restart (N, the partition and the views from the remaining relations). Nothing needs to be read.
CREATE FUNCTION "pgivm_triangles"."on_truncate_k2"()
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
    PERFORM "pgivm_triangles"."clear_k2"();
    PERFORM "pgivm_triangles"."restart"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_truncate_k2"() IS 'pgivm view triangles: clear the IVMε state of public.r2 as K2 after TRUNCATE';

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

CREATE FUNCTION "pgivm_triangles"."on_change_k3"()
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
        -- K3
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."a", changes."c", changes."d", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", new_rows."c" AS "c", new_rows."d" AS "d", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL AND new_rows."c" IS NOT NULL AND new_rows."d" IS NOT NULL) AS changes GROUP BY changes."a", changes."c", changes."d" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_k3"(change."a", change."c", change."d", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."k3_delta" ("a", "c", "d", mult) SELECT changes."a", changes."c", changes."d", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", new_rows."c" AS "c", new_rows."d" AS "d", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL AND new_rows."c" IS NOT NULL AND new_rows."d" IS NOT NULL) AS changes GROUP BY changes."a", changes."c", changes."d" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_k3"();
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        -- K3
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."a", changes."c", changes."d", sum(changes.m)::bigint AS m FROM (SELECT old_rows."a" AS "a", old_rows."c" AS "c", old_rows."d" AS "d", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL AND old_rows."c" IS NOT NULL AND old_rows."d" IS NOT NULL) AS changes GROUP BY changes."a", changes."c", changes."d" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_k3"(change."a", change."c", change."d", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."k3_delta" ("a", "c", "d", mult) SELECT changes."a", changes."c", changes."d", sum(changes.m)::bigint AS m FROM (SELECT old_rows."a" AS "a", old_rows."c" AS "c", old_rows."d" AS "d", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL AND old_rows."c" IS NOT NULL AND old_rows."d" IS NOT NULL) AS changes GROUP BY changes."a", changes."c", changes."d" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_k3"();
        END IF;
    ELSE
        -- K3
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."a", changes."c", changes."d", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", new_rows."c" AS "c", new_rows."d" AS "d", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL AND new_rows."c" IS NOT NULL AND new_rows."d" IS NOT NULL UNION ALL SELECT old_rows."a" AS "a", old_rows."c" AS "c", old_rows."d" AS "d", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL AND old_rows."c" IS NOT NULL AND old_rows."d" IS NOT NULL) AS changes GROUP BY changes."a", changes."c", changes."d" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_k3"(change."a", change."c", change."d", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."k3_delta" ("a", "c", "d", mult) SELECT changes."a", changes."c", changes."d", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", new_rows."c" AS "c", new_rows."d" AS "d", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL AND new_rows."c" IS NOT NULL AND new_rows."d" IS NOT NULL UNION ALL SELECT old_rows."a" AS "a", old_rows."c" AS "c", old_rows."d" AS "d", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL AND old_rows."c" IS NOT NULL AND old_rows."d" IS NOT NULL) AS changes GROUP BY changes."a", changes."c", changes."d" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_k3"();
        END IF;
    END IF;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_change_k3"() IS 'pgivm view triangles: maintain the IVMε state for changes of public.r3 as K3';

-- TRUNCATE of a partition (or of a partitioned table, which fires this on every partition) takes
-- only that partition's rows away: read them just before they go and hand them to the sink as a
-- deletion, set at a time (with the log sink, a TRUNCATE of a plain table goes this way too). The partition is found by the trigger's oid (TG_RELID), named from the oid at
-- this moment, and the query names its tableoid column, so it cannot run anything but a read of
-- that table; row_security = off makes a policy an error instead of code that runs here.
CREATE FUNCTION "pgivm_triangles"."on_truncate_rows_k3"()
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
    -- K3
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_triangles"."k3_delta" ("a", "c", "d", mult) SELECT base."a", base."c", base."d", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."a" IS NOT NULL AND base."c" IS NOT NULL AND base."d" IS NOT NULL GROUP BY 1, 2, 3', TG_RELID::pg_catalog.regclass, TG_RELID);
    PERFORM "pgivm_triangles"."apply_batch_k3"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_truncate_rows_k3"() IS 'pgivm view triangles: before TRUNCATE of public.r3 or a partition of it, take its rows away as a deletion';

-- With the apply sink, TRUNCATE of a plain table empties every relation it feeds: clear them and
-- restart (N, the partition and the views from the remaining relations). Nothing needs to be read.
CREATE FUNCTION "pgivm_triangles"."on_truncate_k3"()
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
    PERFORM "pgivm_triangles"."clear_k3"();
    PERFORM "pgivm_triangles"."restart"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_truncate_k3"() IS 'pgivm view triangles: clear the IVMε state of public.r3 as K3 after TRUNCATE';

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

CREATE FUNCTION "pgivm_triangles"."on_change_k4"()
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
        -- K4
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."a", changes."b", changes."d", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", new_rows."b" AS "b", new_rows."d" AS "d", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL AND new_rows."b" IS NOT NULL AND new_rows."d" IS NOT NULL) AS changes GROUP BY changes."a", changes."b", changes."d" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_k4"(change."a", change."b", change."d", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."k4_delta" ("a", "b", "d", mult) SELECT changes."a", changes."b", changes."d", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", new_rows."b" AS "b", new_rows."d" AS "d", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL AND new_rows."b" IS NOT NULL AND new_rows."d" IS NOT NULL) AS changes GROUP BY changes."a", changes."b", changes."d" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_k4"();
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        -- K4
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."a", changes."b", changes."d", sum(changes.m)::bigint AS m FROM (SELECT old_rows."a" AS "a", old_rows."b" AS "b", old_rows."d" AS "d", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL AND old_rows."b" IS NOT NULL AND old_rows."d" IS NOT NULL) AS changes GROUP BY changes."a", changes."b", changes."d" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_k4"(change."a", change."b", change."d", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."k4_delta" ("a", "b", "d", mult) SELECT changes."a", changes."b", changes."d", sum(changes.m)::bigint AS m FROM (SELECT old_rows."a" AS "a", old_rows."b" AS "b", old_rows."d" AS "d", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL AND old_rows."b" IS NOT NULL AND old_rows."d" IS NOT NULL) AS changes GROUP BY changes."a", changes."b", changes."d" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_k4"();
        END IF;
    ELSE
        -- K4
        IF changed_rows <= 384 THEN
            FOR change IN SELECT changes."a", changes."b", changes."d", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", new_rows."b" AS "b", new_rows."d" AS "d", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL AND new_rows."b" IS NOT NULL AND new_rows."d" IS NOT NULL UNION ALL SELECT old_rows."a" AS "a", old_rows."b" AS "b", old_rows."d" AS "d", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL AND old_rows."b" IS NOT NULL AND old_rows."d" IS NOT NULL) AS changes GROUP BY changes."a", changes."b", changes."d" HAVING sum(changes.m) <> 0 LOOP
                PERFORM "pgivm_triangles"."apply_k4"(change."a", change."b", change."d", change.m);
            END LOOP;
        ELSE
            INSERT INTO "pgivm_triangles"."k4_delta" ("a", "b", "d", mult) SELECT changes."a", changes."b", changes."d", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "a", new_rows."b" AS "b", new_rows."d" AS "d", 1 AS m FROM new_rows WHERE new_rows."a" IS NOT NULL AND new_rows."b" IS NOT NULL AND new_rows."d" IS NOT NULL UNION ALL SELECT old_rows."a" AS "a", old_rows."b" AS "b", old_rows."d" AS "d", -1 AS m FROM old_rows WHERE old_rows."a" IS NOT NULL AND old_rows."b" IS NOT NULL AND old_rows."d" IS NOT NULL) AS changes GROUP BY changes."a", changes."b", changes."d" HAVING sum(changes.m) <> 0;
            PERFORM "pgivm_triangles"."apply_batch_k4"();
        END IF;
    END IF;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_change_k4"() IS 'pgivm view triangles: maintain the IVMε state for changes of public.r4 as K4';

-- TRUNCATE of a partition (or of a partitioned table, which fires this on every partition) takes
-- only that partition's rows away: read them just before they go and hand them to the sink as a
-- deletion, set at a time (with the log sink, a TRUNCATE of a plain table goes this way too). The partition is found by the trigger's oid (TG_RELID), named from the oid at
-- this moment, and the query names its tableoid column, so it cannot run anything but a read of
-- that table; row_security = off makes a policy an error instead of code that runs here.
CREATE FUNCTION "pgivm_triangles"."on_truncate_rows_k4"()
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
    -- K4
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_triangles"."k4_delta" ("a", "b", "d", mult) SELECT base."a", base."b", base."d", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."a" IS NOT NULL AND base."b" IS NOT NULL AND base."d" IS NOT NULL GROUP BY 1, 2, 3', TG_RELID::pg_catalog.regclass, TG_RELID);
    PERFORM "pgivm_triangles"."apply_batch_k4"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_truncate_rows_k4"() IS 'pgivm view triangles: before TRUNCATE of public.r4 or a partition of it, take its rows away as a deletion';

-- With the apply sink, TRUNCATE of a plain table empties every relation it feeds: clear them and
-- restart (N, the partition and the views from the remaining relations). Nothing needs to be read.
CREATE FUNCTION "pgivm_triangles"."on_truncate_k4"()
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
    PERFORM "pgivm_triangles"."clear_k4"();
    PERFORM "pgivm_triangles"."restart"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."on_truncate_k4"() IS 'pgivm view triangles: clear the IVMε state of public.r4 as K4 after TRUNCATE';

-- phase: build (2 statements)

INSERT INTO "pgivm_triangles"."k1_light" ("a", "b", "c", mult) SELECT base."a", base."b", base."c", count(*) FROM "public"."r1" base WHERE "base".tableoid = 16384::pg_catalog.oid AND base."a" IS NOT NULL AND base."b" IS NOT NULL AND base."c" IS NOT NULL GROUP BY 1, 2, 3;
INSERT INTO "pgivm_triangles"."k1_degree" ("a", degree, heavy) SELECT "a", count(*), false FROM "pgivm_triangles"."k1_light" GROUP BY "a";
INSERT INTO "pgivm_triangles"."k2_light" ("b", "c", "d", mult) SELECT base."b", base."c", base."d", count(*) FROM "public"."r2" base WHERE "base".tableoid = 16385::pg_catalog.oid AND base."b" IS NOT NULL AND base."c" IS NOT NULL AND base."d" IS NOT NULL GROUP BY 1, 2, 3;
INSERT INTO "pgivm_triangles"."k2_degree" ("b", degree, heavy) SELECT "b", count(*), false FROM "pgivm_triangles"."k2_light" GROUP BY "b";
INSERT INTO "pgivm_triangles"."k3_light" ("a", "c", "d", mult) SELECT base."a", base."c", base."d", count(*) FROM "public"."r3" base WHERE "base".tableoid = 16386::pg_catalog.oid AND base."a" IS NOT NULL AND base."c" IS NOT NULL AND base."d" IS NOT NULL GROUP BY 1, 2, 3;
INSERT INTO "pgivm_triangles"."k3_degree" ("c", degree, heavy) SELECT "c", count(*), false FROM "pgivm_triangles"."k3_light" GROUP BY "c";
INSERT INTO "pgivm_triangles"."k4_light" ("a", "b", "d", mult) SELECT base."a", base."b", base."d", count(*) FROM "public"."r4" base WHERE "base".tableoid = 16387::pg_catalog.oid AND base."a" IS NOT NULL AND base."b" IS NOT NULL AND base."d" IS NOT NULL GROUP BY 1, 2, 3;
INSERT INTO "pgivm_triangles"."k4_degree" ("d", degree, heavy) SELECT "d", count(*), false FROM "pgivm_triangles"."k4_light" GROUP BY "d";
SELECT "pgivm_triangles"."restart"();

ANALYZE "pgivm_triangles"."k1_heavy"; ANALYZE "pgivm_triangles"."k1_light"; ANALYZE "pgivm_triangles"."k1_degree"; ANALYZE "pgivm_triangles"."k2_heavy"; ANALYZE "pgivm_triangles"."k2_light"; ANALYZE "pgivm_triangles"."k2_degree"; ANALYZE "pgivm_triangles"."k3_heavy"; ANALYZE "pgivm_triangles"."k3_light"; ANALYZE "pgivm_triangles"."k3_degree"; ANALYZE "pgivm_triangles"."k4_heavy"; ANALYZE "pgivm_triangles"."k4_light"; ANALYZE "pgivm_triangles"."k4_degree"; ANALYZE "pgivm_triangles"."v_k1"; ANALYZE "pgivm_triangles"."v_k2"; ANALYZE "pgivm_triangles"."v_k3"; ANALYZE "pgivm_triangles"."v_k4";

-- phase: capture (20 statements)

CREATE TRIGGER "pgivm_triangles_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "public"."r1" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_triangles_insert" AFTER INSERT ON "public"."r1" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_k1"();

CREATE TRIGGER "pgivm_triangles_delete" AFTER DELETE ON "public"."r1" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_k1"();

CREATE TRIGGER "pgivm_triangles_update" AFTER UPDATE ON "public"."r1" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_k1"();

CREATE TRIGGER "pgivm_triangles_truncate" AFTER TRUNCATE ON "public"."r1" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_truncate_k1"();

CREATE TRIGGER "pgivm_triangles_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "public"."r2" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_triangles_insert" AFTER INSERT ON "public"."r2" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_k2"();

CREATE TRIGGER "pgivm_triangles_delete" AFTER DELETE ON "public"."r2" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_k2"();

CREATE TRIGGER "pgivm_triangles_update" AFTER UPDATE ON "public"."r2" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_k2"();

CREATE TRIGGER "pgivm_triangles_truncate" AFTER TRUNCATE ON "public"."r2" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_truncate_k2"();

CREATE TRIGGER "pgivm_triangles_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "public"."r3" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_triangles_insert" AFTER INSERT ON "public"."r3" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_k3"();

CREATE TRIGGER "pgivm_triangles_delete" AFTER DELETE ON "public"."r3" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_k3"();

CREATE TRIGGER "pgivm_triangles_update" AFTER UPDATE ON "public"."r3" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_k3"();

CREATE TRIGGER "pgivm_triangles_truncate" AFTER TRUNCATE ON "public"."r3" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_truncate_k3"();

CREATE TRIGGER "pgivm_triangles_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "public"."r4" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_triangles_insert" AFTER INSERT ON "public"."r4" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_k4"();

CREATE TRIGGER "pgivm_triangles_delete" AFTER DELETE ON "public"."r4" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_k4"();

CREATE TRIGGER "pgivm_triangles_update" AFTER UPDATE ON "public"."r4" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_k4"();

CREATE TRIGGER "pgivm_triangles_truncate" AFTER TRUNCATE ON "public"."r4" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_truncate_k4"();

-- phase: expose (2 statements)

CREATE OR REPLACE VIEW "public"."triangles" AS SELECT count AS "count" FROM "pgivm_triangles"."result"; COMMENT ON VIEW "public"."triangles" IS 'pgivm: maintained by IVMε, state in schema pgivm_triangles. Definition: SELECT count(*) FROM r1 JOIN r2 ON r1.b = r2.b AND r1.c = r2.c JOIN r3 ON r3.c = r1.c AND r3.d = r2.d AND r3.a = r1.a JOIN r4 ON r4.d = r2.d AND r4.a = r1.a AND r4.b = r1.b';

REVOKE ALL ON ALL TABLES IN SCHEMA "pgivm_triangles" FROM PUBLIC; REVOKE ALL ON ALL FUNCTIONS IN SCHEMA "pgivm_triangles" FROM PUBLIC;
