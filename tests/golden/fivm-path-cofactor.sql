-- pgivm golden install plan: system fivm, case path-cofactor, options {'order': None, 'static': None}
-- view public.v AS SELECT cofactor(r.x, s.c, t.z) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c
-- regenerate: PGIVM_REGENERATE_GOLDEN=1 python -m pytest tests/systems/test_golden_plans.py

-- phase: state (10 statements)

-- F-IVM (Nikolic & Olteanu, SIGMOD 2018): the state of one view. The view tree's stored views,
-- their scratch tables and the atoms' net-change tables are created after this (maintain.py).
-- (the schema itself: pgivm_catalog.create_state_schema, as the view's owner)
COMMENT ON SCHEMA "pgivm_v" IS 'pgivm state of view v (system fivm): SELECT cofactor(r.x, s.c, t.z) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c';

CREATE TABLE "pgivm_v"."state" (
    singleton       boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    updates_applied bigint NOT NULL DEFAULT 0  -- base rows changed (and TRUNCATEs) since create
);
INSERT INTO "pgivm_v"."state" DEFAULT VALUES;

CREATE TABLE "pgivm_v"."leaf_s" ("s.c" integer, "r.b" integer, "count" bigint NOT NULL, UNIQUE NULLS NOT DISTINCT ("s.c", "r.b")) WITH (fillfactor = 80); COMMENT ON TABLE "pgivm_v"."leaf_s" IS 'F-IVM view leaf_s[s.c, r.b] = atom s; ring cofactor';

CREATE TABLE "pgivm_v"."leaf_t" ("s.c" integer, "count" bigint NOT NULL, "s3" numeric NOT NULL, "q3_3" numeric NOT NULL, UNIQUE NULLS NOT DISTINCT ("s.c")) WITH (fillfactor = 80); COMMENT ON TABLE "pgivm_v"."leaf_t" IS 'F-IVM view leaf_t[s.c] = atom t, summing t.z; ring cofactor';

CREATE TABLE "pgivm_v"."at_s_c" ("r.b" integer, "count" bigint NOT NULL, "s2" numeric NOT NULL, "s3" numeric NOT NULL, "q2_2" numeric NOT NULL, "q2_3" numeric NOT NULL, "q3_3" numeric NOT NULL, UNIQUE NULLS NOT DISTINCT ("r.b")) WITH (fillfactor = 80); COMMENT ON TABLE "pgivm_v"."at_s_c" IS 'F-IVM view at_s_c[r.b] = ⊕_s.cleaf_s ⊗ leaf_t; ring cofactor';

CREATE TABLE "pgivm_v"."d_at_s_c" ("r.b" integer, "count" bigint NOT NULL, "s2" numeric NOT NULL, "s3" numeric NOT NULL, "q2_2" numeric NOT NULL, "q2_3" numeric NOT NULL, "q3_3" numeric NOT NULL); COMMENT ON TABLE "pgivm_v"."d_at_s_c" IS 'scratch: the delta of at_s_c during a statement';

CREATE TABLE "pgivm_v"."leaf_r" ("r.b" integer, "count" bigint NOT NULL, "s1" numeric NOT NULL, "q1_1" numeric NOT NULL, UNIQUE NULLS NOT DISTINCT ("r.b")) WITH (fillfactor = 80); COMMENT ON TABLE "pgivm_v"."leaf_r" IS 'F-IVM view leaf_r[r.b] = atom r, summing r.x; ring cofactor';

CREATE TABLE "pgivm_v"."at_r_b" ("count" bigint NOT NULL, "s1" numeric NOT NULL, "s2" numeric NOT NULL, "s3" numeric NOT NULL, "q1_1" numeric NOT NULL, "q1_2" numeric NOT NULL, "q1_3" numeric NOT NULL, "q2_2" numeric NOT NULL, "q2_3" numeric NOT NULL, "q3_3" numeric NOT NULL) WITH (fillfactor = 80); COMMENT ON TABLE "pgivm_v"."at_r_b" IS 'F-IVM view at_r_b[] = ⊕_r.bat_s_c ⊗ leaf_r; ring cofactor';

CREATE TABLE "pgivm_v"."a1_delta" ("c1" integer, "c2" integer, mult bigint NOT NULL); COMMENT ON TABLE "pgivm_v"."a1_delta" IS 'scratch: the net change of atom r during a statement';

CREATE TABLE "pgivm_v"."a2_delta" ("c1" integer, "c2" integer, mult bigint NOT NULL); COMMENT ON TABLE "pgivm_v"."a2_delta" IS 'scratch: the net change of atom s during a statement';

CREATE TABLE "pgivm_v"."a3_delta" ("c1" integer, "c2" integer, mult bigint NOT NULL); COMMENT ON TABLE "pgivm_v"."a3_delta" IS 'scratch: the net change of atom t during a statement';

-- phase: functions (13 statements)

DO $pgivm$ BEGIN
    IF ARRAY(SELECT a.attname::text FROM pg_catalog.pg_attribute AS a
              WHERE a.attrelid = pg_catalog.to_regclass('"pgivm_v"."a1_delta"') AND a.attnum > 0 AND NOT a.attisdropped
              ORDER BY a.attnum) = '{b,x,mult}'::text[] THEN
        ALTER TABLE "pgivm_v"."a1_delta" RENAME COLUMN "b" TO "pgivm_renaming_0";
        ALTER TABLE "pgivm_v"."a1_delta" RENAME COLUMN "x" TO "pgivm_renaming_1";
        ALTER TABLE "pgivm_v"."a1_delta" RENAME COLUMN "pgivm_renaming_0" TO "c1";
        ALTER TABLE "pgivm_v"."a1_delta" RENAME COLUMN "pgivm_renaming_1" TO "c2";
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
    MERGE INTO "pgivm_v"."leaf_r" AS v USING (SELECT "r"."c1" AS "r.b", sum("r"."mult") AS "count", sum(("r"."mult" * ("r"."c2")::numeric)::numeric) AS "s1", sum(("r"."mult" * ("r"."c2")::numeric * ("r"."c2")::numeric)::numeric) AS "q1_1" FROM "pgivm_v"."a1_delta" AS r WHERE "r"."c1" IS NOT NULL AND "r"."c2" IS NOT NULL GROUP BY 1) AS d ON v."r.b" = d."r.b" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count", "s1" = v."s1" + d."s1", "q1_1" = v."q1_1" + d."q1_1" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("r.b", "count", "s1", "q1_1") VALUES (d."r.b", d."count", d."s1", d."q1_1");
    MERGE INTO "pgivm_v"."at_r_b" AS v USING (SELECT sum(("c0"."count" * "c1"."count")::bigint) AS "count", sum(("c1"."s1" * "c0"."count")::numeric) AS "s1", sum(("c0"."s2" * "c1"."count")::numeric) AS "s2", sum(("c0"."s3" * "c1"."count")::numeric) AS "s3", sum(("c1"."q1_1" * "c0"."count")::numeric) AS "q1_1", sum(("c1"."s1" * "c0"."s2")::numeric) AS "q1_2", sum(("c1"."s1" * "c0"."s3")::numeric) AS "q1_3", sum(("c0"."q2_2" * "c1"."count")::numeric) AS "q2_2", sum(("c0"."q2_3" * "c1"."count")::numeric) AS "q2_3", sum(("c0"."q3_3" * "c1"."count")::numeric) AS "q3_3" FROM "pgivm_v"."at_s_c" AS "c0" JOIN (SELECT "r"."c1" AS "r.b", sum("r"."mult") AS "count", sum(("r"."mult" * ("r"."c2")::numeric)::numeric) AS "s1", sum(("r"."mult" * ("r"."c2")::numeric * ("r"."c2")::numeric)::numeric) AS "q1_1" FROM "pgivm_v"."a1_delta" AS r WHERE "r"."c1" IS NOT NULL AND "r"."c2" IS NOT NULL GROUP BY 1) AS "c1" ON "c1"."r.b" = "c0"."r.b" HAVING count(*) > 0) AS d ON true WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count", "s1" = v."s1" + d."s1", "s2" = v."s2" + d."s2", "s3" = v."s3" + d."s3", "q1_1" = v."q1_1" + d."q1_1", "q1_2" = v."q1_2" + d."q1_2", "q1_3" = v."q1_3" + d."q1_3", "q2_2" = v."q2_2" + d."q2_2", "q2_3" = v."q2_3" + d."q2_3", "q3_3" = v."q3_3" + d."q3_3" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("count", "s1", "s2", "s3", "q1_1", "q1_2", "q1_3", "q2_2", "q2_3", "q3_3") VALUES (d."count", d."s1", d."s2", d."s3", d."q1_1", d."q1_2", d."q1_3", d."q2_2", d."q2_3", d."q3_3");
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
    MERGE INTO "pgivm_v"."leaf_r" AS v USING (SELECT "r"."c1" AS "r.b", sum("r"."mult") AS "count", sum(("r"."mult" * ("r"."c2")::numeric)::numeric) AS "s1", sum(("r"."mult" * ("r"."c2")::numeric * ("r"."c2")::numeric)::numeric) AS "q1_1" FROM "pgivm_v"."a1_delta" AS r WHERE "r"."c1" IS NOT NULL AND "r"."c2" IS NOT NULL GROUP BY 1) AS d ON v."r.b" = d."r.b" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count", "s1" = v."s1" + d."s1", "q1_1" = v."q1_1" + d."q1_1" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("r.b", "count", "s1", "q1_1") VALUES (d."r.b", d."count", d."s1", d."q1_1");
    MERGE INTO "pgivm_v"."at_r_b" AS v USING (SELECT sum(("c0"."count" * "c1"."count")::bigint) AS "count", sum(("c1"."s1" * "c0"."count")::numeric) AS "s1", sum(("c0"."s2" * "c1"."count")::numeric) AS "s2", sum(("c0"."s3" * "c1"."count")::numeric) AS "s3", sum(("c1"."q1_1" * "c0"."count")::numeric) AS "q1_1", sum(("c1"."s1" * "c0"."s2")::numeric) AS "q1_2", sum(("c1"."s1" * "c0"."s3")::numeric) AS "q1_3", sum(("c0"."q2_2" * "c1"."count")::numeric) AS "q2_2", sum(("c0"."q2_3" * "c1"."count")::numeric) AS "q2_3", sum(("c0"."q3_3" * "c1"."count")::numeric) AS "q3_3" FROM "pgivm_v"."at_s_c" AS "c0" JOIN (SELECT "r"."c1" AS "r.b", sum("r"."mult") AS "count", sum(("r"."mult" * ("r"."c2")::numeric)::numeric) AS "s1", sum(("r"."mult" * ("r"."c2")::numeric * ("r"."c2")::numeric)::numeric) AS "q1_1" FROM "pgivm_v"."a1_delta" AS r WHERE "r"."c1" IS NOT NULL AND "r"."c2" IS NOT NULL GROUP BY 1) AS "c1" ON "c1"."r.b" = "c0"."r.b" HAVING count(*) > 0) AS d ON true WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count", "s1" = v."s1" + d."s1", "s2" = v."s2" + d."s2", "s3" = v."s3" + d."s3", "q1_1" = v."q1_1" + d."q1_1", "q1_2" = v."q1_2" + d."q1_2", "q1_3" = v."q1_3" + d."q1_3", "q2_2" = v."q2_2" + d."q2_2", "q2_3" = v."q2_3" + d."q2_3", "q3_3" = v."q3_3" + d."q3_3" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("count", "s1", "s2", "s3", "q1_1", "q1_2", "q1_3", "q2_2", "q2_3", "q3_3") VALUES (d."count", d."s1", d."s2", d."s3", d."q1_1", d."q1_2", d."q1_3", d."q2_2", d."q2_3", d."q3_3");
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
    DELETE FROM "pgivm_v"."at_r_b";
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
    MERGE INTO "pgivm_v"."leaf_s" AS v USING (SELECT "r"."c2" AS "s.c", "r"."c1" AS "r.b", sum("r"."mult") AS "count" FROM "pgivm_v"."a2_delta" AS r WHERE "r"."c1" IS NOT NULL AND "r"."c2" IS NOT NULL GROUP BY 1, 2) AS d ON v."s.c" = d."s.c" AND v."r.b" = d."r.b" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("s.c", "r.b", "count") VALUES (d."s.c", d."r.b", d."count");
    INSERT INTO "pgivm_v"."d_at_s_c" SELECT "c0"."r.b" AS "r.b", sum(("c0"."count" * "c1"."count")::bigint) AS "count", sum((("c0"."s.c")::numeric * "c0"."count" * "c1"."count")::numeric) AS "s2", sum(("c1"."s3" * "c0"."count")::numeric) AS "s3", sum((("c0"."s.c")::numeric * ("c0"."s.c")::numeric * "c0"."count" * "c1"."count")::numeric) AS "q2_2", sum((("c0"."s.c")::numeric * "c1"."s3" * "c0"."count")::numeric) AS "q2_3", sum(("c1"."q3_3" * "c0"."count")::numeric) AS "q3_3" FROM (SELECT "r"."c2" AS "s.c", "r"."c1" AS "r.b", sum("r"."mult") AS "count" FROM "pgivm_v"."a2_delta" AS r WHERE "r"."c1" IS NOT NULL AND "r"."c2" IS NOT NULL GROUP BY 1, 2) AS "c0" JOIN "pgivm_v"."leaf_t" AS "c1" ON "c1"."s.c" = "c0"."s.c" GROUP BY 1;
    MERGE INTO "pgivm_v"."at_s_c" AS v USING "pgivm_v"."d_at_s_c" AS d ON v."r.b" = d."r.b" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count", "s2" = v."s2" + d."s2", "s3" = v."s3" + d."s3", "q2_2" = v."q2_2" + d."q2_2", "q2_3" = v."q2_3" + d."q2_3", "q3_3" = v."q3_3" + d."q3_3" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("r.b", "count", "s2", "s3", "q2_2", "q2_3", "q3_3") VALUES (d."r.b", d."count", d."s2", d."s3", d."q2_2", d."q2_3", d."q3_3");
    MERGE INTO "pgivm_v"."at_r_b" AS v USING (SELECT sum(("c0"."count" * "c1"."count")::bigint) AS "count", sum(("c1"."s1" * "c0"."count")::numeric) AS "s1", sum(("c0"."s2" * "c1"."count")::numeric) AS "s2", sum(("c0"."s3" * "c1"."count")::numeric) AS "s3", sum(("c1"."q1_1" * "c0"."count")::numeric) AS "q1_1", sum(("c1"."s1" * "c0"."s2")::numeric) AS "q1_2", sum(("c1"."s1" * "c0"."s3")::numeric) AS "q1_3", sum(("c0"."q2_2" * "c1"."count")::numeric) AS "q2_2", sum(("c0"."q2_3" * "c1"."count")::numeric) AS "q2_3", sum(("c0"."q3_3" * "c1"."count")::numeric) AS "q3_3" FROM "pgivm_v"."d_at_s_c" AS "c0" JOIN "pgivm_v"."leaf_r" AS "c1" ON "c1"."r.b" = "c0"."r.b" HAVING count(*) > 0) AS d ON true WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count", "s1" = v."s1" + d."s1", "s2" = v."s2" + d."s2", "s3" = v."s3" + d."s3", "q1_1" = v."q1_1" + d."q1_1", "q1_2" = v."q1_2" + d."q1_2", "q1_3" = v."q1_3" + d."q1_3", "q2_2" = v."q2_2" + d."q2_2", "q2_3" = v."q2_3" + d."q2_3", "q3_3" = v."q3_3" + d."q3_3" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("count", "s1", "s2", "s3", "q1_1", "q1_2", "q1_3", "q2_2", "q2_3", "q3_3") VALUES (d."count", d."s1", d."s2", d."s3", d."q1_1", d."q1_2", d."q1_3", d."q2_2", d."q2_3", d."q3_3");
    DELETE FROM "pgivm_v"."d_at_s_c";
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
    MERGE INTO "pgivm_v"."leaf_s" AS v USING (SELECT "r"."c2" AS "s.c", "r"."c1" AS "r.b", sum("r"."mult") AS "count" FROM "pgivm_v"."a2_delta" AS r WHERE "r"."c1" IS NOT NULL AND "r"."c2" IS NOT NULL GROUP BY 1, 2) AS d ON v."s.c" = d."s.c" AND v."r.b" = d."r.b" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("s.c", "r.b", "count") VALUES (d."s.c", d."r.b", d."count");
    INSERT INTO "pgivm_v"."d_at_s_c" SELECT "c0"."r.b" AS "r.b", sum(("c0"."count" * "c1"."count")::bigint) AS "count", sum((("c0"."s.c")::numeric * "c0"."count" * "c1"."count")::numeric) AS "s2", sum(("c1"."s3" * "c0"."count")::numeric) AS "s3", sum((("c0"."s.c")::numeric * ("c0"."s.c")::numeric * "c0"."count" * "c1"."count")::numeric) AS "q2_2", sum((("c0"."s.c")::numeric * "c1"."s3" * "c0"."count")::numeric) AS "q2_3", sum(("c1"."q3_3" * "c0"."count")::numeric) AS "q3_3" FROM (SELECT "r"."c2" AS "s.c", "r"."c1" AS "r.b", sum("r"."mult") AS "count" FROM "pgivm_v"."a2_delta" AS r WHERE "r"."c1" IS NOT NULL AND "r"."c2" IS NOT NULL GROUP BY 1, 2) AS "c0" JOIN "pgivm_v"."leaf_t" AS "c1" ON "c1"."s.c" = "c0"."s.c" GROUP BY 1;
    MERGE INTO "pgivm_v"."at_s_c" AS v USING "pgivm_v"."d_at_s_c" AS d ON v."r.b" = d."r.b" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count", "s2" = v."s2" + d."s2", "s3" = v."s3" + d."s3", "q2_2" = v."q2_2" + d."q2_2", "q2_3" = v."q2_3" + d."q2_3", "q3_3" = v."q3_3" + d."q3_3" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("r.b", "count", "s2", "s3", "q2_2", "q2_3", "q3_3") VALUES (d."r.b", d."count", d."s2", d."s3", d."q2_2", d."q2_3", d."q3_3");
    MERGE INTO "pgivm_v"."at_r_b" AS v USING (SELECT sum(("c0"."count" * "c1"."count")::bigint) AS "count", sum(("c1"."s1" * "c0"."count")::numeric) AS "s1", sum(("c0"."s2" * "c1"."count")::numeric) AS "s2", sum(("c0"."s3" * "c1"."count")::numeric) AS "s3", sum(("c1"."q1_1" * "c0"."count")::numeric) AS "q1_1", sum(("c1"."s1" * "c0"."s2")::numeric) AS "q1_2", sum(("c1"."s1" * "c0"."s3")::numeric) AS "q1_3", sum(("c0"."q2_2" * "c1"."count")::numeric) AS "q2_2", sum(("c0"."q2_3" * "c1"."count")::numeric) AS "q2_3", sum(("c0"."q3_3" * "c1"."count")::numeric) AS "q3_3" FROM "pgivm_v"."d_at_s_c" AS "c0" JOIN "pgivm_v"."leaf_r" AS "c1" ON "c1"."r.b" = "c0"."r.b" HAVING count(*) > 0) AS d ON true WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count", "s1" = v."s1" + d."s1", "s2" = v."s2" + d."s2", "s3" = v."s3" + d."s3", "q1_1" = v."q1_1" + d."q1_1", "q1_2" = v."q1_2" + d."q1_2", "q1_3" = v."q1_3" + d."q1_3", "q2_2" = v."q2_2" + d."q2_2", "q2_3" = v."q2_3" + d."q2_3", "q3_3" = v."q3_3" + d."q3_3" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("count", "s1", "s2", "s3", "q1_1", "q1_2", "q1_3", "q2_2", "q2_3", "q3_3") VALUES (d."count", d."s1", d."s2", d."s3", d."q1_1", d."q1_2", d."q1_3", d."q2_2", d."q2_3", d."q3_3");
    DELETE FROM "pgivm_v"."d_at_s_c";
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
    DELETE FROM "pgivm_v"."at_s_c";
    DELETE FROM "pgivm_v"."at_r_b";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."clear_a2"() IS 'F-IVM view v: TRUNCATE of atom s';

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
CREATE FUNCTION "pgivm_v"."apply_bulk_a3"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
SET plan_cache_mode = force_custom_plan
AS $pgivm$
BEGIN
    MERGE INTO "pgivm_v"."leaf_t" AS v USING (SELECT "r"."c1" AS "s.c", sum("r"."mult") AS "count", sum(("r"."mult" * ("r"."c2")::numeric)::numeric) AS "s3", sum(("r"."mult" * ("r"."c2")::numeric * ("r"."c2")::numeric)::numeric) AS "q3_3" FROM "pgivm_v"."a3_delta" AS r WHERE "r"."c1" IS NOT NULL AND "r"."c2" IS NOT NULL GROUP BY 1) AS d ON v."s.c" = d."s.c" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count", "s3" = v."s3" + d."s3", "q3_3" = v."q3_3" + d."q3_3" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("s.c", "count", "s3", "q3_3") VALUES (d."s.c", d."count", d."s3", d."q3_3");
    INSERT INTO "pgivm_v"."d_at_s_c" SELECT "c0"."r.b" AS "r.b", sum(("c0"."count" * "c1"."count")::bigint) AS "count", sum((("c0"."s.c")::numeric * "c0"."count" * "c1"."count")::numeric) AS "s2", sum(("c1"."s3" * "c0"."count")::numeric) AS "s3", sum((("c0"."s.c")::numeric * ("c0"."s.c")::numeric * "c0"."count" * "c1"."count")::numeric) AS "q2_2", sum((("c0"."s.c")::numeric * "c1"."s3" * "c0"."count")::numeric) AS "q2_3", sum(("c1"."q3_3" * "c0"."count")::numeric) AS "q3_3" FROM "pgivm_v"."leaf_s" AS "c0" JOIN (SELECT "r"."c1" AS "s.c", sum("r"."mult") AS "count", sum(("r"."mult" * ("r"."c2")::numeric)::numeric) AS "s3", sum(("r"."mult" * ("r"."c2")::numeric * ("r"."c2")::numeric)::numeric) AS "q3_3" FROM "pgivm_v"."a3_delta" AS r WHERE "r"."c1" IS NOT NULL AND "r"."c2" IS NOT NULL GROUP BY 1) AS "c1" ON "c1"."s.c" = "c0"."s.c" GROUP BY 1;
    MERGE INTO "pgivm_v"."at_s_c" AS v USING "pgivm_v"."d_at_s_c" AS d ON v."r.b" = d."r.b" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count", "s2" = v."s2" + d."s2", "s3" = v."s3" + d."s3", "q2_2" = v."q2_2" + d."q2_2", "q2_3" = v."q2_3" + d."q2_3", "q3_3" = v."q3_3" + d."q3_3" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("r.b", "count", "s2", "s3", "q2_2", "q2_3", "q3_3") VALUES (d."r.b", d."count", d."s2", d."s3", d."q2_2", d."q2_3", d."q3_3");
    MERGE INTO "pgivm_v"."at_r_b" AS v USING (SELECT sum(("c0"."count" * "c1"."count")::bigint) AS "count", sum(("c1"."s1" * "c0"."count")::numeric) AS "s1", sum(("c0"."s2" * "c1"."count")::numeric) AS "s2", sum(("c0"."s3" * "c1"."count")::numeric) AS "s3", sum(("c1"."q1_1" * "c0"."count")::numeric) AS "q1_1", sum(("c1"."s1" * "c0"."s2")::numeric) AS "q1_2", sum(("c1"."s1" * "c0"."s3")::numeric) AS "q1_3", sum(("c0"."q2_2" * "c1"."count")::numeric) AS "q2_2", sum(("c0"."q2_3" * "c1"."count")::numeric) AS "q2_3", sum(("c0"."q3_3" * "c1"."count")::numeric) AS "q3_3" FROM "pgivm_v"."d_at_s_c" AS "c0" JOIN "pgivm_v"."leaf_r" AS "c1" ON "c1"."r.b" = "c0"."r.b" HAVING count(*) > 0) AS d ON true WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count", "s1" = v."s1" + d."s1", "s2" = v."s2" + d."s2", "s3" = v."s3" + d."s3", "q1_1" = v."q1_1" + d."q1_1", "q1_2" = v."q1_2" + d."q1_2", "q1_3" = v."q1_3" + d."q1_3", "q2_2" = v."q2_2" + d."q2_2", "q2_3" = v."q2_3" + d."q2_3", "q3_3" = v."q3_3" + d."q3_3" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("count", "s1", "s2", "s3", "q1_1", "q1_2", "q1_3", "q2_2", "q2_3", "q3_3") VALUES (d."count", d."s1", d."s2", d."s3", d."q1_1", d."q1_2", d."q1_3", d."q2_2", d."q2_3", d."q3_3");
    DELETE FROM "pgivm_v"."d_at_s_c";
    DELETE FROM "pgivm_v"."a3_delta";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."apply_bulk_a3"() IS 'F-IVM view v: the delta tree of atom t (t)';

CREATE FUNCTION "pgivm_v"."apply_batch_a3"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
AS $pgivm$
BEGIN
    IF (SELECT count(*) FROM (SELECT FROM "pgivm_v"."a3_delta" LIMIT 64 + 1) AS rows) > 64 THEN
        PERFORM "pgivm_v"."apply_bulk_a3"();
        RETURN;
    END IF;
    MERGE INTO "pgivm_v"."leaf_t" AS v USING (SELECT "r"."c1" AS "s.c", sum("r"."mult") AS "count", sum(("r"."mult" * ("r"."c2")::numeric)::numeric) AS "s3", sum(("r"."mult" * ("r"."c2")::numeric * ("r"."c2")::numeric)::numeric) AS "q3_3" FROM "pgivm_v"."a3_delta" AS r WHERE "r"."c1" IS NOT NULL AND "r"."c2" IS NOT NULL GROUP BY 1) AS d ON v."s.c" = d."s.c" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count", "s3" = v."s3" + d."s3", "q3_3" = v."q3_3" + d."q3_3" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("s.c", "count", "s3", "q3_3") VALUES (d."s.c", d."count", d."s3", d."q3_3");
    INSERT INTO "pgivm_v"."d_at_s_c" SELECT "c0"."r.b" AS "r.b", sum(("c0"."count" * "c1"."count")::bigint) AS "count", sum((("c0"."s.c")::numeric * "c0"."count" * "c1"."count")::numeric) AS "s2", sum(("c1"."s3" * "c0"."count")::numeric) AS "s3", sum((("c0"."s.c")::numeric * ("c0"."s.c")::numeric * "c0"."count" * "c1"."count")::numeric) AS "q2_2", sum((("c0"."s.c")::numeric * "c1"."s3" * "c0"."count")::numeric) AS "q2_3", sum(("c1"."q3_3" * "c0"."count")::numeric) AS "q3_3" FROM "pgivm_v"."leaf_s" AS "c0" JOIN (SELECT "r"."c1" AS "s.c", sum("r"."mult") AS "count", sum(("r"."mult" * ("r"."c2")::numeric)::numeric) AS "s3", sum(("r"."mult" * ("r"."c2")::numeric * ("r"."c2")::numeric)::numeric) AS "q3_3" FROM "pgivm_v"."a3_delta" AS r WHERE "r"."c1" IS NOT NULL AND "r"."c2" IS NOT NULL GROUP BY 1) AS "c1" ON "c1"."s.c" = "c0"."s.c" GROUP BY 1;
    MERGE INTO "pgivm_v"."at_s_c" AS v USING "pgivm_v"."d_at_s_c" AS d ON v."r.b" = d."r.b" WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count", "s2" = v."s2" + d."s2", "s3" = v."s3" + d."s3", "q2_2" = v."q2_2" + d."q2_2", "q2_3" = v."q2_3" + d."q2_3", "q3_3" = v."q3_3" + d."q3_3" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("r.b", "count", "s2", "s3", "q2_2", "q2_3", "q3_3") VALUES (d."r.b", d."count", d."s2", d."s3", d."q2_2", d."q2_3", d."q3_3");
    MERGE INTO "pgivm_v"."at_r_b" AS v USING (SELECT sum(("c0"."count" * "c1"."count")::bigint) AS "count", sum(("c1"."s1" * "c0"."count")::numeric) AS "s1", sum(("c0"."s2" * "c1"."count")::numeric) AS "s2", sum(("c0"."s3" * "c1"."count")::numeric) AS "s3", sum(("c1"."q1_1" * "c0"."count")::numeric) AS "q1_1", sum(("c1"."s1" * "c0"."s2")::numeric) AS "q1_2", sum(("c1"."s1" * "c0"."s3")::numeric) AS "q1_3", sum(("c0"."q2_2" * "c1"."count")::numeric) AS "q2_2", sum(("c0"."q2_3" * "c1"."count")::numeric) AS "q2_3", sum(("c0"."q3_3" * "c1"."count")::numeric) AS "q3_3" FROM "pgivm_v"."d_at_s_c" AS "c0" JOIN "pgivm_v"."leaf_r" AS "c1" ON "c1"."r.b" = "c0"."r.b" HAVING count(*) > 0) AS d ON true WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count", "s1" = v."s1" + d."s1", "s2" = v."s2" + d."s2", "s3" = v."s3" + d."s3", "q1_1" = v."q1_1" + d."q1_1", "q1_2" = v."q1_2" + d."q1_2", "q1_3" = v."q1_3" + d."q1_3", "q2_2" = v."q2_2" + d."q2_2", "q2_3" = v."q2_3" + d."q2_3", "q3_3" = v."q3_3" + d."q3_3" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("count", "s1", "s2", "s3", "q1_1", "q1_2", "q1_3", "q2_2", "q2_3", "q3_3") VALUES (d."count", d."s1", d."s2", d."s3", d."q1_1", d."q1_2", d."q1_3", d."q2_2", d."q2_3", d."q3_3");
    DELETE FROM "pgivm_v"."d_at_s_c";
    DELETE FROM "pgivm_v"."a3_delta";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."apply_batch_a3"() IS 'F-IVM view v: the delta tree of atom t (t)';

-- TRUNCATE of a plain base table empties its atoms: every stored view over one of them is empty
-- (a join with an empty relation), the other views are unchanged. Nothing needs to be read.
CREATE FUNCTION "pgivm_v"."clear_a3"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_v"."leaf_t";
    DELETE FROM "pgivm_v"."at_s_c";
    DELETE FROM "pgivm_v"."at_r_b";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."clear_a3"() IS 'F-IVM view v: TRUNCATE of atom t';

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
        INSERT INTO "pgivm_v"."a1_delta" ("c1", "c2", mult) SELECT changes."c1", changes."c2", sum(changes.m)::bigint AS m FROM (SELECT new_rows."b" AS "c1", new_rows."x" AS "c2", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2" HAVING sum(changes.m) <> 0;
        PERFORM "pgivm_v"."apply_batch_a1"();
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO "pgivm_v"."a1_delta" ("c1", "c2", mult) SELECT changes."c1", changes."c2", sum(changes.m)::bigint AS m FROM (SELECT old_rows."b" AS "c1", old_rows."x" AS "c2", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2" HAVING sum(changes.m) <> 0;
        PERFORM "pgivm_v"."apply_batch_a1"();
    ELSE
        INSERT INTO "pgivm_v"."a1_delta" ("c1", "c2", mult) SELECT changes."c1", changes."c2", sum(changes.m)::bigint AS m FROM (SELECT new_rows."b" AS "c1", new_rows."x" AS "c2", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL UNION ALL SELECT old_rows."b" AS "c1", old_rows."x" AS "c2", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2" HAVING sum(changes.m) <> 0;
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
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_v"."a1_delta" ("c1", "c2", mult) SELECT base."b", base."x", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."b" IS NOT NULL GROUP BY 1, 2', TG_RELID::pg_catalog.regclass, TG_RELID);
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

CREATE FUNCTION "pgivm_v"."on_change_a3"()
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
        INSERT INTO "pgivm_v"."a3_delta" ("c1", "c2", mult) SELECT changes."c1", changes."c2", sum(changes.m)::bigint AS m FROM (SELECT new_rows."c" AS "c1", new_rows."z" AS "c2", 1 AS m FROM new_rows WHERE new_rows."c" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2" HAVING sum(changes.m) <> 0;
        PERFORM "pgivm_v"."apply_batch_a3"();
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO "pgivm_v"."a3_delta" ("c1", "c2", mult) SELECT changes."c1", changes."c2", sum(changes.m)::bigint AS m FROM (SELECT old_rows."c" AS "c1", old_rows."z" AS "c2", -1 AS m FROM old_rows WHERE old_rows."c" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2" HAVING sum(changes.m) <> 0;
        PERFORM "pgivm_v"."apply_batch_a3"();
    ELSE
        INSERT INTO "pgivm_v"."a3_delta" ("c1", "c2", mult) SELECT changes."c1", changes."c2", sum(changes.m)::bigint AS m FROM (SELECT new_rows."c" AS "c1", new_rows."z" AS "c2", 1 AS m FROM new_rows WHERE new_rows."c" IS NOT NULL UNION ALL SELECT old_rows."c" AS "c1", old_rows."z" AS "c2", -1 AS m FROM old_rows WHERE old_rows."c" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2" HAVING sum(changes.m) <> 0;
        PERFORM "pgivm_v"."apply_batch_a3"();
    END IF;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_change_a3"() IS 'pgivm view v: maintain the F-IVM state for changes of public.t as A3';

-- TRUNCATE of a partition (or of a partitioned table, which fires this on every partition) takes
-- only that partition's rows away: read them just before they go and hand them to the sink as a
-- deletion, set at a time (with the log sink, a TRUNCATE of a plain table goes this way too). The partition is found by the trigger's oid (TG_RELID), named from the oid at
-- this moment, and the query names its tableoid column, so it cannot run anything but a read of
-- that table; row_security = off makes a policy an error instead of code that runs here.
CREATE FUNCTION "pgivm_v"."on_truncate_rows_a3"()
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
    -- A3
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_v"."a3_delta" ("c1", "c2", mult) SELECT base."c", base."z", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."c" IS NOT NULL GROUP BY 1, 2', TG_RELID::pg_catalog.regclass, TG_RELID);
    PERFORM "pgivm_v"."apply_batch_a3"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_truncate_rows_a3"() IS 'pgivm view v: before TRUNCATE of public.t or a partition of it, take its rows away as a deletion';

-- With the apply sink, TRUNCATE of a plain table empties every relation it feeds: clear them and
-- restart (N, the partition and the views from the remaining relations). Nothing needs to be read.
CREATE FUNCTION "pgivm_v"."on_truncate_a3"()
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
    PERFORM "pgivm_v"."clear_a3"();
    PERFORM "pgivm_v"."restart"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_truncate_a3"() IS 'pgivm view v: clear the F-IVM state of public.t as A3 after TRUNCATE';

-- phase: build (6 statements)

INSERT INTO "pgivm_v"."leaf_s" SELECT "r"."c" AS "s.c", "r"."b" AS "r.b", sum(1::bigint) AS "count" FROM "public"."s" AS r WHERE "r"."b" IS NOT NULL AND "r"."c" IS NOT NULL AND "r".tableoid = 16385::pg_catalog.oid GROUP BY 1, 2;

INSERT INTO "pgivm_v"."leaf_t" SELECT "r"."c" AS "s.c", sum(1::bigint) AS "count", sum((1::bigint * ("r"."z")::numeric)::numeric) AS "s3", sum((1::bigint * ("r"."z")::numeric * ("r"."z")::numeric)::numeric) AS "q3_3" FROM "public"."t" AS r WHERE "r"."c" IS NOT NULL AND "r"."z" IS NOT NULL AND "r".tableoid = 16386::pg_catalog.oid GROUP BY 1;

INSERT INTO "pgivm_v"."at_s_c" SELECT "c0"."r.b" AS "r.b", sum(("c0"."count" * "c1"."count")::bigint) AS "count", sum((("c0"."s.c")::numeric * "c0"."count" * "c1"."count")::numeric) AS "s2", sum(("c1"."s3" * "c0"."count")::numeric) AS "s3", sum((("c0"."s.c")::numeric * ("c0"."s.c")::numeric * "c0"."count" * "c1"."count")::numeric) AS "q2_2", sum((("c0"."s.c")::numeric * "c1"."s3" * "c0"."count")::numeric) AS "q2_3", sum(("c1"."q3_3" * "c0"."count")::numeric) AS "q3_3" FROM "pgivm_v"."leaf_s" AS "c0" JOIN "pgivm_v"."leaf_t" AS "c1" ON "c1"."s.c" = "c0"."s.c" GROUP BY 1;

INSERT INTO "pgivm_v"."leaf_r" SELECT "r"."b" AS "r.b", sum(1::bigint) AS "count", sum((1::bigint * ("r"."x")::numeric)::numeric) AS "s1", sum((1::bigint * ("r"."x")::numeric * ("r"."x")::numeric)::numeric) AS "q1_1" FROM "public"."r" AS r WHERE "r"."b" IS NOT NULL AND "r"."x" IS NOT NULL AND "r".tableoid = 16384::pg_catalog.oid GROUP BY 1;

INSERT INTO "pgivm_v"."at_r_b" SELECT sum(("c0"."count" * "c1"."count")::bigint) AS "count", sum(("c1"."s1" * "c0"."count")::numeric) AS "s1", sum(("c0"."s2" * "c1"."count")::numeric) AS "s2", sum(("c0"."s3" * "c1"."count")::numeric) AS "s3", sum(("c1"."q1_1" * "c0"."count")::numeric) AS "q1_1", sum(("c1"."s1" * "c0"."s2")::numeric) AS "q1_2", sum(("c1"."s1" * "c0"."s3")::numeric) AS "q1_3", sum(("c0"."q2_2" * "c1"."count")::numeric) AS "q2_2", sum(("c0"."q2_3" * "c1"."count")::numeric) AS "q2_3", sum(("c0"."q3_3" * "c1"."count")::numeric) AS "q3_3" FROM "pgivm_v"."at_s_c" AS "c0" JOIN "pgivm_v"."leaf_r" AS "c1" ON "c1"."r.b" = "c0"."r.b" HAVING count(*) > 0;

ANALYZE "pgivm_v"."leaf_s"; ANALYZE "pgivm_v"."leaf_t"; ANALYZE "pgivm_v"."at_s_c"; ANALYZE "pgivm_v"."leaf_r"; ANALYZE "pgivm_v"."at_r_b";

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

CREATE OR REPLACE VIEW "pgivm_v"."result" AS SELECT (SELECT count(*) FROM (SELECT e.i, e.j, e.value FROM "pgivm_v"."at_r_b" AS r CROSS JOIN LATERAL (VALUES (0, 0, r.count::double precision), (0, 1, "r"."s1"::double precision), (1, 0, "r"."s1"::double precision), (0, 2, "r"."s2"::double precision), (2, 0, "r"."s2"::double precision), (0, 3, "r"."s3"::double precision), (3, 0, "r"."s3"::double precision), (1, 1, "r"."q1_1"::double precision), (1, 2, "r"."q1_2"::double precision), (1, 3, "r"."q1_3"::double precision), (2, 1, "r"."q1_2"::double precision), (2, 2, "r"."q2_2"::double precision), (2, 3, "r"."q2_3"::double precision), (3, 1, "r"."q1_3"::double precision), (3, 2, "r"."q2_3"::double precision), (3, 3, "r"."q3_3"::double precision)) AS e(i, j, value)) AS rows) AS count; COMMENT ON VIEW "pgivm_v"."result" IS 'pgivm: the number of rows of the view (O(1) for a listing: the root''s count)';

CREATE OR REPLACE VIEW "public"."v" AS SELECT e.i, e.j, e.value FROM "pgivm_v"."at_r_b" AS r CROSS JOIN LATERAL (VALUES (0, 0, r.count::double precision), (0, 1, "r"."s1"::double precision), (1, 0, "r"."s1"::double precision), (0, 2, "r"."s2"::double precision), (2, 0, "r"."s2"::double precision), (0, 3, "r"."s3"::double precision), (3, 0, "r"."s3"::double precision), (1, 1, "r"."q1_1"::double precision), (1, 2, "r"."q1_2"::double precision), (1, 3, "r"."q1_3"::double precision), (2, 1, "r"."q1_2"::double precision), (2, 2, "r"."q2_2"::double precision), (2, 3, "r"."q2_3"::double precision), (3, 1, "r"."q1_3"::double precision), (3, 2, "r"."q2_3"::double precision), (3, 3, "r"."q3_3"::double precision)) AS e(i, j, value); COMMENT ON VIEW "public"."v" IS 'pgivm: maintained by F-IVM, state in schema pgivm_v. Definition: SELECT cofactor(r.x, s.c, t.z) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c';

REVOKE ALL ON ALL TABLES IN SCHEMA "pgivm_v" FROM PUBLIC; REVOKE ALL ON ALL FUNCTIONS IN SCHEMA "pgivm_v" FROM PUBLIC;
