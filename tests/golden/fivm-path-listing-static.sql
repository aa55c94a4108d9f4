-- pgivm golden install plan: system fivm, case path-listing-static, options {'order': None, 'static': 't'}
-- view public.v AS SELECT r.a, r.x, t.z FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c
-- regenerate: PGIVM_REGENERATE_GOLDEN=1 python -m pytest tests/systems/test_golden_plans.py

-- phase: state (17 statements)

-- F-IVM (Nikolic & Olteanu, SIGMOD 2018): the state of one view. The view tree's stored views,
-- their scratch tables and the atoms' net-change tables are created after this (maintain.py).
-- (the schema itself: pgivm_catalog.create_state_schema, as the view's owner)
COMMENT ON SCHEMA "pgivm_v" IS 'pgivm state of view v (system fivm): SELECT r.a, r.x, t.z FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c';

CREATE TABLE "pgivm_v"."state" (
    singleton       boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    updates_applied bigint NOT NULL DEFAULT 0  -- base rows changed (and TRUNCATEs) since create
);
INSERT INTO "pgivm_v"."state" DEFAULT VALUES;

CREATE TABLE "pgivm_v"."leaf_s" ("s.c" integer, "r.b" integer, "count" bigint NOT NULL, UNIQUE NULLS NOT DISTINCT ("s.c", "r.b")) WITH (fillfactor = 80); COMMENT ON TABLE "pgivm_v"."leaf_s" IS 'F-IVM view leaf_s[s.c, r.b] = atom s; ring sum';

CREATE TABLE "pgivm_v"."list_leaf_s" ("s.c" integer, "r.b" integer, "count" bigint NOT NULL, UNIQUE NULLS NOT DISTINCT ("s.c", "r.b")) WITH (fillfactor = 80); COMMENT ON TABLE "pgivm_v"."list_leaf_s" IS 'F-IVM list of atom s: its rows with multiplicities';

CREATE TABLE "pgivm_v"."leaf_t" ("s.c" integer, "count" bigint NOT NULL, UNIQUE NULLS NOT DISTINCT ("s.c")) WITH (fillfactor = 80); COMMENT ON TABLE "pgivm_v"."leaf_t" IS 'F-IVM view leaf_t[s.c] = atom t; ring sum';

CREATE TABLE "pgivm_v"."list_leaf_t" ("s.c" integer, "t.z" integer, "count" bigint NOT NULL, UNIQUE NULLS NOT DISTINCT ("s.c", "t.z")) WITH (fillfactor = 80); COMMENT ON TABLE "pgivm_v"."list_leaf_t" IS 'F-IVM list of atom t: its rows with multiplicities';

CREATE TABLE "pgivm_v"."at_s_c" ("r.b" integer, "count" bigint NOT NULL, UNIQUE NULLS NOT DISTINCT ("r.b")) WITH (fillfactor = 80); COMMENT ON TABLE "pgivm_v"."at_s_c" IS 'F-IVM view at_s_c[r.b] = ⊕_s.cleaf_s ⊗ leaf_t; ring sum';

CREATE TABLE "pgivm_v"."w_at_s_c" ("r.b" integer, "s.c" integer, "count" bigint NOT NULL, UNIQUE NULLS NOT DISTINCT ("r.b", "s.c")) WITH (fillfactor = 80); COMMENT ON TABLE "pgivm_v"."w_at_s_c" IS 'F-IVM W@s.c: at_s_c before s.c is summed away';

CREATE TABLE "pgivm_v"."d_at_s_c" ("r.b" integer, "count" bigint NOT NULL); COMMENT ON TABLE "pgivm_v"."d_at_s_c" IS 'scratch: the delta of at_s_c during a statement';

CREATE TABLE "pgivm_v"."dw_at_s_c" ("r.b" integer, "s.c" integer, "count" bigint NOT NULL); COMMENT ON TABLE "pgivm_v"."dw_at_s_c" IS 'scratch: the delta of w_at_s_c during a statement';

CREATE TABLE "pgivm_v"."leaf_r" ("r.b" integer, "count" bigint NOT NULL, UNIQUE NULLS NOT DISTINCT ("r.b")) WITH (fillfactor = 80); COMMENT ON TABLE "pgivm_v"."leaf_r" IS 'F-IVM view leaf_r[r.b] = atom r; ring sum';

CREATE TABLE "pgivm_v"."list_leaf_r" ("r.b" integer, "r.a" integer, "r.x" integer, "count" bigint NOT NULL, UNIQUE NULLS NOT DISTINCT ("r.b", "r.a", "r.x")) WITH (fillfactor = 80); COMMENT ON TABLE "pgivm_v"."list_leaf_r" IS 'F-IVM list of atom r: its rows with multiplicities';

CREATE TABLE "pgivm_v"."at_r_b" ("count" bigint NOT NULL) WITH (fillfactor = 80); COMMENT ON TABLE "pgivm_v"."at_r_b" IS 'F-IVM view at_r_b[] = ⊕_r.bat_s_c ⊗ leaf_r; ring sum';

CREATE TABLE "pgivm_v"."w_at_r_b" ("r.b" integer, "count" bigint NOT NULL, UNIQUE NULLS NOT DISTINCT ("r.b")) WITH (fillfactor = 80); COMMENT ON TABLE "pgivm_v"."w_at_r_b" IS 'F-IVM W@r.b: at_r_b before r.b is summed away';

CREATE TABLE "pgivm_v"."dw_at_r_b" ("r.b" integer, "count" bigint NOT NULL); COMMENT ON TABLE "pgivm_v"."dw_at_r_b" IS 'scratch: the delta of w_at_r_b during a statement';

CREATE TABLE "pgivm_v"."a1_delta" ("c1" integer, "c2" integer, "c3" integer, mult bigint NOT NULL); COMMENT ON TABLE "pgivm_v"."a1_delta" IS 'scratch: the net change of atom r during a statement';

CREATE TABLE "pgivm_v"."a2_delta" ("c1" integer, "c2" integer, mult bigint NOT NULL); COMMENT ON TABLE "pgivm_v"."a2_delta" IS 'scratch: the net change of atom s during a statement';

CREATE TABLE "pgivm_v"."a3_delta" ("c1" integer, "c2" integer, mult bigint NOT NULL); COMMENT ON TABLE "pgivm_v"."a3_delta" IS 'scratch: the net change of atom t during a statement';

-- phase: functions (13 statements)

DO $pgivm$ BEGIN
    IF ARRAY(SELECT a.attname::text FROM pg_catalog.pg_attribute AS a
              WHERE a.attrelid = pg_catalog.to_regclass('"pgivm_v"."a1_delta"') AND a.attnum > 0 AND NOT a.attisdropped
              ORDER BY a.attnum) = '{a,b,x,mult}'::text[] THEN
        ALTER TABLE "pgivm_v"."a1_delta" RENAME COLUMN "a" TO "pgivm_renaming_0";
        ALTER TABLE "pgivm_v"."a1_delta" RENAME COLUMN "b" TO "pgivm_renaming_1";
        ALTER TABLE "pgivm_v"."a1_delta" RENAME COLUMN "x" TO "pgivm_renaming_2";
        ALTER TABLE "pgivm_v"."a1_delta" RENAME COLUMN "pgivm_renaming_0" TO "c1";
        ALTER TABLE "pgivm_v"."a1_delta" RENAME COLUMN "pgivm_renaming_1" TO "c2";
        ALTER TABLE "pgivm_v"."a1_delta" RENAME COLUMN "pgivm_renaming_2" TO "c3";
    END IF;
END $pgivm$;

DO $pgivm$ BEGIN
    IF ARRAY(SELECT a.attname::text FROM pg_catalog.pg_attribute AS a
              WHERE a.attrelid = pg_catalog.to_regclass('"pgivm_v"."a2_delta"') AND a.attnum > 0 AND NOT a.attisdropped
              ORDER BY a.attnum) = '{b,c,mult}'::text[] THEN
        ALTER TABLE "pgivm_v"."a2_delta" RENAME COLUMN "b" TO "pgivm_renaming_0";
        ALTER TABLE "pgivm_v"."a2_delta" RENAME COLUMN "c" TO "pgivm_renaming_1";
        ALTER TABLE "pgivm_v"."a2_delta" RENAME COLUMN "pgivm_renaming_0" TO "c1";
        ALTER TABLE "pgivm_v"."a2_delta" RENAME COLUMN "pgivm_renaming_1" TO "c2";
    END IF;
END $pgivm$;

DO $pgivm$ BEGIN
    IF ARRAY(SELECT a.attname::text FROM pg_catalog.pg_attribute AS a
              WHERE a.attrelid = pg_catalog.to_regclass('"pgivm_v"."a3_delta"') AND a.attnum > 0 AND NOT a.attisdropped
              ORDER BY a.attnum) = '{c,z,mult}'::text[] THEN
        ALTER TABLE "pgivm_v"."a3_delta" RENAME COLUMN "c" TO "pgivm_renaming_0";
        ALTER TABLE "pgivm_v"."a3_delta" RENAME COLUMN "z" TO "pgivm_renaming_1";
        ALTER TABLE "pgivm_v"."a3_delta" RENAME COLUMN "pgivm_renaming_0" TO "c1";
        ALTER TABLE "pgivm_v"."a3_delta" RENAME COLUMN "pgivm_renaming_1" TO "c2";
    END IF;
END $pgivm$;

-- Called by the capture layer after a TRUNCATE has cleared the atoms of a plain table; F-IVM's
-- views need nothing more (there is no partition or threshold to recompute).
CREATE FUNCTION "pgivm_v"."restart"()
RETURNS void LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$ SELECT $pgivm$;

-- The delta tree of one atom (§4.3 of the paper): the statement's net change of the atom, waiting in
-- its _delta table, goes up the path from the atom's leaf to the root, set at a time: each view on
-- the path is the previous delta joined with the stored siblings (lifted with g_X and summed
-- where X is bound), and each stored view is merged with its delta. Called by the capture
-- functions, which hold the view's lock; the scratch tables are empty again when it returns.
--
-- Two copies of the same statements. A small change runs under the capture functions' settings
-- (nested loops over index lookups, plans kept from call to call): each row costs a few lookups
-- whatever the size of the views. A change of more than 64 rows is planned afresh with
-- every join method allowed, so that joining it with a sibling view may scan that view once
-- instead of looking it up row by row. A view with float sums reads floats as text, which
-- extra_float_digits shapes: such a view sets it on both functions (see ../floats.py).
--
-- (first-order renders this template too, with delta queries that read the base tables: with
-- row_security off a row-level security policy on one is an error, not code run as the view's
-- owner.)
CREATE FUNCTION "pgivm_v"."apply_bulk_a1"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
SET plan_cache_mode = force_custom_plan
AS $pgivm$
BEGIN
    MERGE INTO "pgivm_v"."list_leaf_r" AS v USING (SELECT "r"."c2" AS "r.b", "r"."c1" AS "r.a", "r"."c3" AS "r.x", sum("r"."mult") AS "count" FROM "pgivm_v"."a1_delta" AS r WHERE "r"."c2" IS NOT NULL GROUP BY 1, 2, 3) AS d ON v."r.b" = d."r.b" AND (v."r.a" = d."r.a" OR (v."r.a" IS NULL AND d."r.a" IS NULL)) AND (v."r.x" = d."r.x" OR (v."r.x" IS NULL AND d."r.x" IS NULL)) WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("r.b", "r.a", "r.x", "count") VALUES (d."r.b", d."r.a", d."r.x", d."count");
    MERGE INTO "pgivm_v"."leaf_r" AS v USING (SELECT "r"."c2" AS "r.b", sum("r"."mult") AS "count" FROM "pgivm_v"."a1_delta" AS r WHERE "r"."c2" IS NOT NULL GROUP BY 1) AS d ON v."r.b" = d."r.b" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("r.b", "count") VALUES (d."r.b", d."count");
    INSERT INTO "pgivm_v"."dw_at_r_b" SELECT "c0"."r.b" AS "r.b", sum("c0"."count" * "c1"."count") AS "count" FROM "pgivm_v"."at_s_c" AS "c0" JOIN (SELECT "r"."c2" AS "r.b", sum("r"."mult") AS "count" FROM "pgivm_v"."a1_delta" AS r WHERE "r"."c2" IS NOT NULL GROUP BY 1) AS "c1" ON "c1"."r.b" = "c0"."r.b" GROUP BY 1;
    MERGE INTO "pgivm_v"."w_at_r_b" AS v USING "pgivm_v"."dw_at_r_b" AS d ON v."r.b" = d."r.b" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("r.b", "count") VALUES (d."r.b", d."count");
    MERGE INTO "pgivm_v"."at_r_b" AS v USING (SELECT sum("w"."count") AS "count" FROM "pgivm_v"."dw_at_r_b" AS w HAVING count(*) > 0) AS d ON true WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("count") VALUES (d."count");
    DELETE FROM "pgivm_v"."dw_at_r_b";
    DELETE FROM "pgivm_v"."a1_delta";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."apply_bulk_a1"() IS 'F-IVM view v: the delta tree of atom r (r)';

CREATE FUNCTION "pgivm_v"."apply_batch_a1"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
AS $pgivm$
BEGIN
    IF (SELECT count(*) FROM (SELECT FROM "pgivm_v"."a1_delta" LIMIT 64 + 1) AS rows) > 64 THEN
        PERFORM "pgivm_v"."apply_bulk_a1"();
        RETURN;
    END IF;
    MERGE INTO "pgivm_v"."list_leaf_r" AS v USING (SELECT "r"."c2" AS "r.b", "r"."c1" AS "r.a", "r"."c3" AS "r.x", sum("r"."mult") AS "count" FROM "pgivm_v"."a1_delta" AS r WHERE "r"."c2" IS NOT NULL GROUP BY 1, 2, 3) AS d ON v."r.b" = d."r.b" AND (v."r.a" = d."r.a" OR (v."r.a" IS NULL AND d."r.a" IS NULL)) AND (v."r.x" = d."r.x" OR (v."r.x" IS NULL AND d."r.x" IS NULL)) WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("r.b", "r.a", "r.x", "count") VALUES (d."r.b", d."r.a", d."r.x", d."count");
    MERGE INTO "pgivm_v"."leaf_r" AS v USING (SELECT "r"."c2" AS "r.b", sum("r"."mult") AS "count" FROM "pgivm_v"."a1_delta" AS r WHERE "r"."c2" IS NOT NULL GROUP BY 1) AS d ON v."r.b" = d."r.b" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("r.b", "count") VALUES (d."r.b", d."count");
    INSERT INTO "pgivm_v"."dw_at_r_b" SELECT "c0"."r.b" AS "r.b", sum("c0"."count" * "c1"."count") AS "count" FROM "pgivm_v"."at_s_c" AS "c0" JOIN (SELECT "r"."c2" AS "r.b", sum("r"."mult") AS "count" FROM "pgivm_v"."a1_delta" AS r WHERE "r"."c2" IS NOT NULL GROUP BY 1) AS "c1" ON "c1"."r.b" = "c0"."r.b" GROUP BY 1;
    MERGE INTO "pgivm_v"."w_at_r_b" AS v USING "pgivm_v"."dw_at_r_b" AS d ON v."r.b" = d."r.b" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("r.b", "count") VALUES (d."r.b", d."count");
    MERGE INTO "pgivm_v"."at_r_b" AS v USING (SELECT sum("w"."count") AS "count" FROM "pgivm_v"."dw_at_r_b" AS w HAVING count(*) > 0) AS d ON true WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("count") VALUES (d."count");
    DELETE FROM "pgivm_v"."dw_at_r_b";
    DELETE FROM "pgivm_v"."a1_delta";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."apply_batch_a1"() IS 'F-IVM view v: the delta tree of atom r (r)';

-- TRUNCATE of a plain base table empties its atoms: every stored view over one of them is empty
-- (a join with an empty relation), the other views are unchanged. Nothing needs to be read.
CREATE FUNCTION "pgivm_v"."clear_a1"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_v"."leaf_r";
    DELETE FROM "pgivm_v"."list_leaf_r";
    DELETE FROM "pgivm_v"."at_r_b";
    DELETE FROM "pgivm_v"."w_at_r_b";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."clear_a1"() IS 'F-IVM view v: TRUNCATE of atom r';

-- The delta tree of one atom (§4.3 of the paper): the statement's net change of the atom, waiting in
-- its _delta table, goes up the path from the atom's leaf to the root, set at a time: each view on
-- the path is the previous delta joined with the stored siblings (lifted with g_X and summed
-- where X is bound), and each stored view is merged with its delta. Called by the capture
-- functions, which hold the view's lock; the scratch tables are empty again when it returns.
--
-- Two copies of the same statements. A small change runs under the capture functions' settings
-- (nested loops over index lookups, plans kept from call to call): each row costs a few lookups
-- whatever the size of the views. A change of more than 64 rows is planned afresh with
-- every join method allowed, so that joining it with a sibling view may scan that view once
-- instead of looking it up row by row. A view with float sums reads floats as text, which
-- extra_float_digits shapes: such a view sets it on both functions (see ../floats.py).
--
-- (first-order renders this template too, with delta queries that read the base tables: with
-- row_security off a row-level security policy on one is an error, not code run as the view's
-- owner.)
CREATE FUNCTION "pgivm_v"."apply_bulk_a2"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
SET plan_cache_mode = force_custom_plan
AS $pgivm$
BEGIN
    MERGE INTO "pgivm_v"."list_leaf_s" AS v USING (SELECT "r"."c2" AS "s.c", "r"."c1" AS "r.b", sum("r"."mult") AS "count" FROM "pgivm_v"."a2_delta" AS r WHERE "r"."c1" IS NOT NULL AND "r"."c2" IS NOT NULL GROUP BY 1, 2) AS d ON v."s.c" = d."s.c" AND v."r.b" = d."r.b" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("s.c", "r.b", "count") VALUES (d."s.c", d."r.b", d."count");
    MERGE INTO "pgivm_v"."leaf_s" AS v USING (SELECT "r"."c2" AS "s.c", "r"."c1" AS "r.b", sum("r"."mult") AS "count" FROM "pgivm_v"."a2_delta" AS r WHERE "r"."c1" IS NOT NULL AND "r"."c2" IS NOT NULL GROUP BY 1, 2) AS d ON v."s.c" = d."s.c" AND v."r.b" = d."r.b" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("s.c", "r.b", "count") VALUES (d."s.c", d."r.b", d."count");
    INSERT INTO "pgivm_v"."dw_at_s_c" SELECT "c0"."r.b" AS "r.b", "c0"."s.c" AS "s.c", sum("c0"."count" * "c1"."count") AS "count" FROM (SELECT "r"."c2" AS "s.c", "r"."c1" AS "r.b", sum("r"."mult") AS "count" FROM "pgivm_v"."a2_delta" AS r WHERE "r"."c1" IS NOT NULL AND "r"."c2" IS NOT NULL GROUP BY 1, 2) AS "c0" JOIN "pgivm_v"."leaf_t" AS "c1" ON "c1"."s.c" = "c0"."s.c" GROUP BY 1, 2;
    MERGE INTO "pgivm_v"."w_at_s_c" AS v USING "pgivm_v"."dw_at_s_c" AS d ON v."r.b" = d."r.b" AND v."s.c" = d."s.c" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("r.b", "s.c", "count") VALUES (d."r.b", d."s.c", d."count");
    INSERT INTO "pgivm_v"."d_at_s_c" SELECT "w"."r.b" AS "r.b", sum("w"."count") AS "count" FROM "pgivm_v"."dw_at_s_c" AS w GROUP BY 1;
    MERGE INTO "pgivm_v"."at_s_c" AS v USING "pgivm_v"."d_at_s_c" AS d ON v."r.b" = d."r.b" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("r.b", "count") VALUES (d."r.b", d."count");
    INSERT INTO "pgivm_v"."dw_at_r_b" SELECT "c0"."r.b" AS "r.b", sum("c0"."count" * "c1"."count") AS "count" FROM "pgivm_v"."d_at_s_c" AS "c0" JOIN "pgivm_v"."leaf_r" AS "c1" ON "c1"."r.b" = "c0"."r.b" GROUP BY 1;
    MERGE INTO "pgivm_v"."w_at_r_b" AS v USING "pgivm_v"."dw_at_r_b" AS d ON v."r.b" = d."r.b" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("r.b", "count") VALUES (d."r.b", d."count");
    MERGE INTO "pgivm_v"."at_r_b" AS v USING (SELECT sum("w"."count") AS "count" FROM "pgivm_v"."dw_at_r_b" AS w HAVING count(*) > 0) AS d ON true WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("count") VALUES (d."count");
    DELETE FROM "pgivm_v"."dw_at_s_c";
    DELETE FROM "pgivm_v"."d_at_s_c";
    DELETE FROM "pgivm_v"."dw_at_r_b";
    DELETE FROM "pgivm_v"."a2_delta";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."apply_bulk_a2"() IS 'F-IVM view v: the delta tree of atom s (s)';

CREATE FUNCTION "pgivm_v"."apply_batch_a2"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
AS $pgivm$
BEGIN
    IF (SELECT count(*) FROM (SELECT FROM "pgivm_v"."a2_delta" LIMIT 64 + 1) AS rows) > 64 THEN
        PERFORM "pgivm_v"."apply_bulk_a2"();
        RETURN;
    END IF;
    MERGE INTO "pgivm_v"."list_leaf_s" AS v USING (SELECT "r"."c2" AS "s.c", "r"."c1" AS "r.b", sum("r"."mult") AS "count" FROM "pgivm_v"."a2_delta" AS r WHERE "r"."c1" IS NOT NULL AND "r"."c2" IS NOT NULL GROUP BY 1, 2) AS d ON v."s.c" = d."s.c" AND v."r.b" = d."r.b" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("s.c", "r.b", "count") VALUES (d."s.c", d."r.b", d."count");
    MERGE INTO "pgivm_v"."leaf_s" AS v USING (SELECT "r"."c2" AS "s.c", "r"."c1" AS "r.b", sum("r"."mult") AS "count" FROM "pgivm_v"."a2_delta" AS r WHERE "r"."c1" IS NOT NULL AND "r"."c2" IS NOT NULL GROUP BY 1, 2) AS d ON v."s.c" = d."s.c" AND v."r.b" = d."r.b" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("s.c", "r.b", "count") VALUES (d."s.c", d."r.b", d."count");
    INSERT INTO "pgivm_v"."dw_at_s_c" SELECT "c0"."r.b" AS "r.b", "c0"."s.c" AS "s.c", sum("c0"."count" * "c1"."count") AS "count" FROM (SELECT "r"."c2" AS "s.c", "r"."c1" AS "r.b", sum("r"."mult") AS "count" FROM "pgivm_v"."a2_delta" AS r WHERE "r"."c1" IS NOT NULL AND "r"."c2" IS NOT NULL GROUP BY 1, 2) AS "c0" JOIN "pgivm_v"."leaf_t" AS "c1" ON "c1"."s.c" = "c0"."s.c" GROUP BY 1, 2;
    MERGE INTO "pgivm_v"."w_at_s_c" AS v USING "pgivm_v"."dw_at_s_c" AS d ON v."r.b" = d."r.b" AND v."s.c" = d."s.c" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("r.b", "s.c", "count") VALUES (d."r.b", d."s.c", d."count");
    INSERT INTO "pgivm_v"."d_at_s_c" SELECT "w"."r.b" AS "r.b", sum("w"."count") AS "count" FROM "pgivm_v"."dw_at_s_c" AS w GROUP BY 1;
    MERGE INTO "pgivm_v"."at_s_c" AS v USING "pgivm_v"."d_at_s_c" AS d ON v."r.b" = d."r.b" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("r.b", "count") VALUES (d."r.b", d."count");
    INSERT INTO "pgivm_v"."dw_at_r_b" SELECT "c0"."r.b" AS "r.b", sum("c0"."count" * "c1"."count") AS "count" FROM "pgivm_v"."d_at_s_c" AS "c0" JOIN "pgivm_v"."leaf_r" AS "c1" ON "c1"."r.b" = "c0"."r.b" GROUP BY 1;
    MERGE INTO "pgivm_v"."w_at_r_b" AS v USING "pgivm_v"."dw_at_r_b" AS d ON v."r.b" = d."r.b" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("r.b", "count") VALUES (d."r.b", d."count");
    MERGE INTO "pgivm_v"."at_r_b" AS v USING (SELECT sum("w"."count") AS "count" FROM "pgivm_v"."dw_at_r_b" AS w HAVING count(*) > 0) AS d ON true WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("count") VALUES (d."count");
    DELETE FROM "pgivm_v"."dw_at_s_c";
    DELETE FROM "pgivm_v"."d_at_s_c";
    DELETE FROM "pgivm_v"."dw_at_r_b";
    DELETE FROM "pgivm_v"."a2_delta";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."apply_batch_a2"() IS 'F-IVM view v: the delta tree of atom s (s)';

-- TRUNCATE of a plain base table empties its atoms: every stored view over one of them is empty
-- (a join with an empty relation), the other views are unchanged. Nothing needs to be read.
CREATE FUNCTION "pgivm_v"."clear_a2"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_v"."leaf_s";
    DELETE FROM "pgivm_v"."list_leaf_s";
    DELETE FROM "pgivm_v"."at_s_c";
    DELETE FROM "pgivm_v"."w_at_s_c";
    DELETE FROM "pgivm_v"."at_r_b";
    DELETE FROM "pgivm_v"."w_at_r_b";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."clear_a2"() IS 'F-IVM view v: TRUNCATE of atom s';

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

CREATE FUNCTION "pgivm_v"."on_change_a1"()
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
        UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + c.n
          FROM (SELECT count(*) AS n FROM old_rows) AS c WHERE singleton RETURNING c.n INTO changed_rows;
    ELSE
        UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + c.n
          FROM (SELECT count(*) AS n FROM new_rows) AS c WHERE singleton RETURNING c.n INTO changed_rows;
    END IF;
    IF NOT FOUND THEN
        -- The state row is missing only from a snapshot taken before the view was created
        -- (REPEATABLE READ or SERIALIZABLE): maintaining it from there would lose this change.
        -- (A snapshot that predates another writer's update of the row fails above, 40001.)
        RAISE EXCEPTION USING
            ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'v'),
            HINT = 'Retry the transaction.';
    END IF;
    IF TG_OP = 'INSERT' THEN
        INSERT INTO "pgivm_v"."a1_delta" ("c1", "c2", "c3", mult) SELECT changes."c1", changes."c2", changes."c3", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "c1", new_rows."b" AS "c2", new_rows."x" AS "c3", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2", changes."c3" HAVING sum(changes.m) <> 0;
        PERFORM "pgivm_v"."apply_batch_a1"();
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO "pgivm_v"."a1_delta" ("c1", "c2", "c3", mult) SELECT changes."c1", changes."c2", changes."c3", sum(changes.m)::bigint AS m FROM (SELECT old_rows."a" AS "c1", old_rows."b" AS "c2", old_rows."x" AS "c3", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2", changes."c3" HAVING sum(changes.m) <> 0;
        PERFORM "pgivm_v"."apply_batch_a1"();
    ELSE
        INSERT INTO "pgivm_v"."a1_delta" ("c1", "c2", "c3", mult) SELECT changes."c1", changes."c2", changes."c3", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "c1", new_rows."b" AS "c2", new_rows."x" AS "c3", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL UNION ALL SELECT old_rows."a" AS "c1", old_rows."b" AS "c2", old_rows."x" AS "c3", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2", changes."c3" HAVING sum(changes.m) <> 0;
        PERFORM "pgivm_v"."apply_batch_a1"();
    END IF;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_change_a1"() IS 'pgivm view v: maintain the F-IVM state for changes of public.r as A1';

-- TRUNCATE of a partition (or of a partitioned table, which fires this on every partition) takes
-- only that partition's rows away: read them just before they go and hand them to the sink as a
-- deletion, set at a time (with the log sink, a TRUNCATE of a plain table goes this way too). The partition is found by the trigger's oid (TG_RELID), named from the oid at
-- this moment, and the query names its tableoid column, so it cannot run anything but a read of
-- that table; row_security = off makes a policy an error instead of code that runs here.
CREATE FUNCTION "pgivm_v"."on_truncate_rows_a1"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
SET jit = off
AS $pgivm$
BEGIN
    UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + 1 WHERE singleton;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'v'),
            HINT = 'Retry the transaction.';
    END IF;
    -- A1
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_v"."a1_delta" ("c1", "c2", "c3", mult) SELECT base."a", base."b", base."x", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."b" IS NOT NULL GROUP BY 1, 2, 3', TG_RELID::pg_catalog.regclass, TG_RELID);
    PERFORM "pgivm_v"."apply_batch_a1"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_truncate_rows_a1"() IS 'pgivm view v: before TRUNCATE of public.r or a partition of it, take its rows away as a deletion';

-- With the apply sink, TRUNCATE of a plain table empties every relation it feeds: clear them and
-- restart (N, the partition and the views from the remaining relations). Nothing needs to be read.
CREATE FUNCTION "pgivm_v"."on_truncate_a1"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $pgivm$
BEGIN
    UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + 1 WHERE singleton;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'v'),
            HINT = 'Retry the transaction.';
    END IF;
    PERFORM "pgivm_v"."clear_a1"();
    PERFORM "pgivm_v"."restart"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_truncate_a1"() IS 'pgivm view v: clear the F-IVM state of public.r as A1 after TRUNCATE';

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

CREATE FUNCTION "pgivm_v"."on_change_a2"()
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
        UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + c.n
          FROM (SELECT count(*) AS n FROM old_rows) AS c WHERE singleton RETURNING c.n INTO changed_rows;
    ELSE
        UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + c.n
          FROM (SELECT count(*) AS n FROM new_rows) AS c WHERE singleton RETURNING c.n INTO changed_rows;
    END IF;
    IF NOT FOUND THEN
        -- The state row is missing only from a snapshot taken before the view was created
        -- (REPEATABLE READ or SERIALIZABLE): maintaining it from there would lose this change.
        -- (A snapshot that predates another writer's update of the row fails above, 40001.)
        RAISE EXCEPTION USING
            ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'v'),
            HINT = 'Retry the transaction.';
    END IF;
    IF TG_OP = 'INSERT' THEN
        INSERT INTO "pgivm_v"."a2_delta" ("c1", "c2", mult) SELECT changes."c1", changes."c2", sum(changes.m)::bigint AS m FROM (SELECT new_rows."b" AS "c1", new_rows."c" AS "c2", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL AND new_rows."c" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2" HAVING sum(changes.m) <> 0;
        PERFORM "pgivm_v"."apply_batch_a2"();
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO "pgivm_v"."a2_delta" ("c1", "c2", mult) SELECT changes."c1", changes."c2", sum(changes.m)::bigint AS m FROM (SELECT old_rows."b" AS "c1", old_rows."c" AS "c2", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL AND old_rows."c" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2" HAVING sum(changes.m) <> 0;
        PERFORM "pgivm_v"."apply_batch_a2"();
    ELSE
        INSERT INTO "pgivm_v"."a2_delta" ("c1", "c2", mult) SELECT changes."c1", changes."c2", sum(changes.m)::bigint AS m FROM (SELECT new_rows."b" AS "c1", new_rows."c" AS "c2", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL AND new_rows."c" IS NOT NULL UNION ALL SELECT old_rows."b" AS "c1", old_rows."c" AS "c2", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL AND old_rows."c" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2" HAVING sum(changes.m) <> 0;
        PERFORM "pgivm_v"."apply_batch_a2"();
    END IF;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_change_a2"() IS 'pgivm view v: maintain the F-IVM state for changes of public.s as A2';

-- TRUNCATE of a partition (or of a partitioned table, which fires this on every partition) takes
-- only that partition's rows away: read them just before they go and hand them to the sink as a
-- deletion, set at a time (with the log sink, a TRUNCATE of a plain table goes this way too). The partition is found by the trigger's oid (TG_RELID), named from the oid at
-- this moment, and the query names its tableoid column, so it cannot run anything but a read of
-- that table; row_security = off makes a policy an error instead of code that runs here.
CREATE FUNCTION "pgivm_v"."on_truncate_rows_a2"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
SET jit = off
AS $pgivm$
BEGIN
    UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + 1 WHERE singleton;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'v'),
            HINT = 'Retry the transaction.';
    END IF;
    -- A2
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_v"."a2_delta" ("c1", "c2", mult) SELECT base."b", base."c", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."b" IS NOT NULL AND base."c" IS NOT NULL GROUP BY 1, 2', TG_RELID::pg_catalog.regclass, TG_RELID);
    PERFORM "pgivm_v"."apply_batch_a2"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_truncate_rows_a2"() IS 'pgivm view v: before TRUNCATE of public.s or a partition of it, take its rows away as a deletion';

-- With the apply sink, TRUNCATE of a plain table empties every relation it feeds: clear them and
-- restart (N, the partition and the views from the remaining relations). Nothing needs to be read.
CREATE FUNCTION "pgivm_v"."on_truncate_a2"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $pgivm$
BEGIN
    UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + 1 WHERE singleton;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'v'),
            HINT = 'Retry the transaction.';
    END IF;
    PERFORM "pgivm_v"."clear_a2"();
    PERFORM "pgivm_v"."restart"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_truncate_a2"() IS 'pgivm view v: clear the F-IVM state of public.s as A2 after TRUNCATE';

-- A table declared static (--static) has no delta tree: the views that only its changes would
-- update are not stored (μ of Figure 5 with U = the other tables). A write to it would leave the
-- view wrong, so it is refused.
CREATE FUNCTION "pgivm_v"."on_change_a3"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    RAISE EXCEPTION USING
        ERRCODE = 'object_not_in_prerequisite_state',
        MESSAGE = format('table %s is static for pgivm view %s: it cannot change while the view exists',
                         TG_RELID::regclass, 'v'),
        HINT = format('Drop the view (pgivm drop %s) or create it again without --static.', 'v');
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_change_a3"() IS 'pgivm view v: public.t is static';

-- A table declared static (--static) has no delta tree: the views that only its changes would
-- update are not stored (μ of Figure 5 with U = the other tables). A write to it would leave the
-- view wrong, so it is refused.
CREATE FUNCTION "pgivm_v"."on_truncate_a3"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    RAISE EXCEPTION USING
        ERRCODE = 'object_not_in_prerequisite_state',
        MESSAGE = format('table %s is static for pgivm view %s: it cannot change while the view exists',
                         TG_RELID::regclass, 'v'),
        HINT = format('Drop the view (pgivm drop %s) or create it again without --static.', 'v');
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_truncate_a3"() IS 'pgivm view v: public.t is static';

-- A table declared static (--static) has no delta tree: the views that only its changes would
-- update are not stored (μ of Figure 5 with U = the other tables). A write to it would leave the
-- view wrong, so it is refused.
CREATE FUNCTION "pgivm_v"."on_truncate_rows_a3"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    RAISE EXCEPTION USING
        ERRCODE = 'object_not_in_prerequisite_state',
        MESSAGE = format('table %s is static for pgivm view %s: it cannot change while the view exists',
                         TG_RELID::regclass, 'v'),
        HINT = format('Drop the view (pgivm drop %s) or create it again without --static.', 'v');
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_truncate_rows_a3"() IS 'pgivm view v: public.t is static';

-- phase: build (11 statements)

INSERT INTO "pgivm_v"."list_leaf_s" SELECT "r"."c" AS "s.c", "r"."b" AS "r.b", sum(1::bigint) AS "count" FROM "public"."s" AS r WHERE "r"."b" IS NOT NULL AND "r"."c" IS NOT NULL AND "r".tableoid = 16385::pg_catalog.oid GROUP BY 1, 2;

INSERT INTO "pgivm_v"."leaf_s" SELECT "r"."c" AS "s.c", "r"."b" AS "r.b", sum(1::bigint) AS "count" FROM "public"."s" AS r WHERE "r"."b" IS NOT NULL AND "r"."c" IS NOT NULL AND "r".tableoid = 16385::pg_catalog.oid GROUP BY 1, 2;

INSERT INTO "pgivm_v"."list_leaf_t" SELECT "r"."c" AS "s.c", "r"."z" AS "t.z", sum(1::bigint) AS "count" FROM "public"."t" AS r WHERE "r"."c" IS NOT NULL AND "r".tableoid = 16386::pg_catalog.oid GROUP BY 1, 2;

INSERT INTO "pgivm_v"."leaf_t" SELECT "r"."c" AS "s.c", sum(1::bigint) AS "count" FROM "public"."t" AS r WHERE "r"."c" IS NOT NULL AND "r".tableoid = 16386::pg_catalog.oid GROUP BY 1;

INSERT INTO "pgivm_v"."w_at_s_c" SELECT "c0"."r.b" AS "r.b", "c0"."s.c" AS "s.c", sum("c0"."count" * "c1"."count") AS "count" FROM "pgivm_v"."leaf_s" AS "c0" JOIN "pgivm_v"."leaf_t" AS "c1" ON "c1"."s.c" = "c0"."s.c" GROUP BY 1, 2;

INSERT INTO "pgivm_v"."at_s_c" SELECT "w"."r.b" AS "r.b", sum("w"."count") AS "count" FROM "pgivm_v"."w_at_s_c" AS w GROUP BY 1;

INSERT INTO "pgivm_v"."list_leaf_r" SELECT "r"."b" AS "r.b", "r"."a" AS "r.a", "r"."x" AS "r.x", sum(1::bigint) AS "count" FROM "public"."r" AS r WHERE "r"."b" IS NOT NULL AND "r".tableoid = 16384::pg_catalog.oid GROUP BY 1, 2, 3;

INSERT INTO "pgivm_v"."leaf_r" SELECT "r"."b" AS "r.b", sum(1::bigint) AS "count" FROM "public"."r" AS r WHERE "r"."b" IS NOT NULL AND "r".tableoid = 16384::pg_catalog.oid GROUP BY 1;

INSERT INTO "pgivm_v"."w_at_r_b" SELECT "c0"."r.b" AS "r.b", sum("c0"."count" * "c1"."count") AS "count" FROM "pgivm_v"."at_s_c" AS "c0" JOIN "pgivm_v"."leaf_r" AS "c1" ON "c1"."r.b" = "c0"."r.b" GROUP BY 1;

INSERT INTO "pgivm_v"."at_r_b" SELECT sum("w"."count") AS "count" FROM "pgivm_v"."w_at_r_b" AS w HAVING count(*) > 0;

ANALYZE "pgivm_v"."leaf_s"; ANALYZE "pgivm_v"."list_leaf_s"; ANALYZE "pgivm_v"."leaf_t"; ANALYZE "pgivm_v"."list_leaf_t"; ANALYZE "pgivm_v"."at_s_c"; ANALYZE "pgivm_v"."w_at_s_c"; ANALYZE "pgivm_v"."leaf_r"; ANALYZE "pgivm_v"."list_leaf_r"; ANALYZE "pgivm_v"."at_r_b"; ANALYZE "pgivm_v"."w_at_r_b";

-- phase: capture (15 statements)

CREATE TRIGGER "pgivm_v_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "public"."r" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_v_insert" AFTER INSERT ON "public"."r" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a1"();

CREATE TRIGGER "pgivm_v_delete" AFTER DELETE ON "public"."r" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a1"();

CREATE TRIGGER "pgivm_v_update" AFTER UPDATE ON "public"."r" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a1"();

CREATE TRIGGER "pgivm_v_truncate" AFTER TRUNCATE ON "public"."r" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_truncate_a1"();

CREATE TRIGGER "pgivm_v_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "public"."s" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_v_insert" AFTER INSERT ON "public"."s" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a2"();

CREATE TRIGGER "pgivm_v_delete" AFTER DELETE ON "public"."s" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a2"();

CREATE TRIGGER "pgivm_v_update" AFTER UPDATE ON "public"."s" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a2"();

CREATE TRIGGER "pgivm_v_truncate" AFTER TRUNCATE ON "public"."s" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_truncate_a2"();

CREATE TRIGGER "pgivm_v_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "public"."t" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_v_insert" AFTER INSERT ON "public"."t" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a3"();

CREATE TRIGGER "pgivm_v_delete" AFTER DELETE ON "public"."t" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a3"();

CREATE TRIGGER "pgivm_v_update" AFTER UPDATE ON "public"."t" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a3"();

CREATE TRIGGER "pgivm_v_truncate" AFTER TRUNCATE ON "public"."t" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_truncate_a3"();

-- phase: expose (3 statements)

CREATE OR REPLACE VIEW "pgivm_v"."result" AS SELECT (SELECT coalesce(sum(count), 0)::bigint FROM "pgivm_v"."at_r_b") AS count; COMMENT ON VIEW "pgivm_v"."result" IS 'pgivm: the number of rows of the view (O(1) for a listing: the root''s count)';

CREATE OR REPLACE VIEW "public"."v" AS SELECT "e5"."r.a" AS "a", "e5"."r.x" AS "x", "e4"."t.z" AS "z" FROM (SELECT * FROM "pgivm_v"."w_at_r_b" AS t OFFSET 0) AS "e1" CROSS JOIN LATERAL (SELECT * FROM "pgivm_v"."w_at_s_c" AS t WHERE t."r.b" = "e1"."r.b" OFFSET 0) AS "e2" CROSS JOIN LATERAL (SELECT * FROM "pgivm_v"."list_leaf_s" AS t WHERE t."s.c" = "e2"."s.c" AND t."r.b" = "e1"."r.b" OFFSET 0) AS "e3" CROSS JOIN LATERAL (SELECT * FROM "pgivm_v"."list_leaf_t" AS t WHERE t."s.c" = "e2"."s.c" OFFSET 0) AS "e4" CROSS JOIN LATERAL (SELECT * FROM "pgivm_v"."list_leaf_r" AS t WHERE t."r.b" = "e1"."r.b" OFFSET 0) AS "e5" CROSS JOIN LATERAL generate_series(1, "e3"."count" * "e4"."count" * "e5"."count") AS times; COMMENT ON VIEW "public"."v" IS 'pgivm: maintained by F-IVM, state in schema pgivm_v. Definition: SELECT r.a, r.x, t.z FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c';

REVOKE ALL ON ALL TABLES IN SCHEMA "pgivm_v" FROM PUBLIC; REVOKE ALL ON ALL FUNCTIONS IN SCHEMA "pgivm_v" FROM PUBLIC;
