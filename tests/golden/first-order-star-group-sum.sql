-- pgivm golden install plan: system first-order, case star-group-sum, options {'batch_threshold': 384}
-- view public.v AS SELECT h.rooms, count(*), sum(h.price * s.hours) AS revenue, avg(h.price) FROM house h JOIN shop s ON h.postcode = s.postcode GROUP BY h.rooms
-- regenerate: PGIVM_REGENERATE_GOLDEN=1 python -m pytest tests/systems/test_golden_plans.py

-- phase: state (4 statements)

-- F-IVM (Nikolic & Olteanu, SIGMOD 2018): the state of one view. The view tree's stored views,
-- their scratch tables and the atoms' net-change tables are created after this (maintain.py).
-- (the schema itself: pgivm_catalog.create_state_schema, as the view's owner)
COMMENT ON SCHEMA "pgivm_v" IS 'pgivm state of view v (system first-order): SELECT h.rooms, count(*), sum(h.price * s.hours) AS revenue, avg(h.price) FROM house h JOIN shop s ON h.postcode = s.postcode GROUP BY h.rooms';

CREATE TABLE "pgivm_v"."state" (
    singleton       boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    updates_applied bigint NOT NULL DEFAULT 0  -- base rows changed (and TRUNCATEs) since create
);
INSERT INTO "pgivm_v"."state" DEFAULT VALUES;

CREATE TABLE "pgivm_v"."maintained" ("h.rooms" integer, "count" bigint NOT NULL, "p1" bigint NOT NULL, "p2" numeric NOT NULL, "p3" bigint NOT NULL, "p4" numeric NOT NULL, UNIQUE NULLS NOT DISTINCT ("h.rooms")) WITH (fillfactor = 80); COMMENT ON TABLE "pgivm_v"."maintained" IS 'first-order IVM: the result of view v, its ring entries per group';

CREATE TABLE "pgivm_v"."a1_delta" ("c1" integer, "c2" integer, "c3" integer, mult bigint NOT NULL);

CREATE TABLE "pgivm_v"."a2_delta" ("c1" integer, "c2" integer, mult bigint NOT NULL);

-- phase: functions (15 statements)

DROP VIEW IF EXISTS "pgivm_v"."base_1"; CREATE VIEW "pgivm_v"."base_1" AS SELECT b.tableoid, b."postcode", b."price", b."rooms" FROM "public"."house" AS b; COMMENT ON VIEW "pgivm_v"."base_1" IS 'first-order IVM: the columns its delta queries read of base table public.house';

DROP VIEW IF EXISTS "pgivm_v"."base_2"; CREATE VIEW "pgivm_v"."base_2" AS SELECT b.tableoid, b."hours", b."postcode" FROM "public"."shop" AS b; COMMENT ON VIEW "pgivm_v"."base_2" IS 'first-order IVM: the columns its delta queries read of base table public.shop';

DO $pgivm$ BEGIN
    IF ARRAY(SELECT a.attname::text FROM pg_catalog.pg_attribute AS a
              WHERE a.attrelid = pg_catalog.to_regclass('"pgivm_v"."a1_delta"') AND a.attnum > 0 AND NOT a.attisdropped
              ORDER BY a.attnum) = '{postcode,price,rooms,mult}'::text[] THEN
        ALTER TABLE "pgivm_v"."a1_delta" RENAME COLUMN "postcode" TO "pgivm_renaming_0";
        ALTER TABLE "pgivm_v"."a1_delta" RENAME COLUMN "price" TO "pgivm_renaming_1";
        ALTER TABLE "pgivm_v"."a1_delta" RENAME COLUMN "rooms" TO "pgivm_renaming_2";
        ALTER TABLE "pgivm_v"."a1_delta" RENAME COLUMN "pgivm_renaming_0" TO "c1";
        ALTER TABLE "pgivm_v"."a1_delta" RENAME COLUMN "pgivm_renaming_1" TO "c2";
        ALTER TABLE "pgivm_v"."a1_delta" RENAME COLUMN "pgivm_renaming_2" TO "c3";
    END IF;
END $pgivm$;

DO $pgivm$ BEGIN
    IF ARRAY(SELECT a.attname::text FROM pg_catalog.pg_attribute AS a
              WHERE a.attrelid = pg_catalog.to_regclass('"pgivm_v"."a2_delta"') AND a.attnum > 0 AND NOT a.attisdropped
              ORDER BY a.attnum) = '{hours,postcode,mult}'::text[] THEN
        ALTER TABLE "pgivm_v"."a2_delta" RENAME COLUMN "hours" TO "pgivm_renaming_0";
        ALTER TABLE "pgivm_v"."a2_delta" RENAME COLUMN "postcode" TO "pgivm_renaming_1";
        ALTER TABLE "pgivm_v"."a2_delta" RENAME COLUMN "pgivm_renaming_0" TO "c1";
        ALTER TABLE "pgivm_v"."a2_delta" RENAME COLUMN "pgivm_renaming_1" TO "c2";
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
    MERGE INTO "pgivm_v"."maintained" AS v USING (SELECT "h"."c3" AS "h.rooms", sum(("h".mult * "s".mult)::bigint) AS "count", sum(("h".mult * "s".mult * ("h"."c2" IS NOT NULL)::int * ("s"."c1" IS NOT NULL)::int)::bigint) AS "p1", sum(("h".mult * "s".mult * coalesce(("h"."c2")::numeric, 0) * coalesce(("s"."c1")::numeric, 0))::numeric) AS "p2", sum(("h".mult * "s".mult * ("h"."c2" IS NOT NULL)::int)::bigint) AS "p3", sum(("h".mult * "s".mult * coalesce(("h"."c2")::numeric, 0))::numeric) AS "p4" FROM "pgivm_v"."a1_delta" AS "h", (SELECT b."hours" AS "c1", b."postcode" AS "c2", 1::bigint AS mult, true AS live FROM "pgivm_v"."base_2" AS b) AS "s" WHERE "h"."c1" = "s"."c2" GROUP BY 1 HAVING count(CASE WHEN "h".mult > 0 AND "s".live THEN ("h"."c2" * "s"."c1") END) >= 0) AS d ON (v."h.rooms" = d."h.rooms" OR (v."h.rooms" IS NULL AND d."h.rooms" IS NULL)) WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count", "p1" = v."p1" + d."p1", "p2" = v."p2" + d."p2", "p3" = v."p3" + d."p3", "p4" = v."p4" + d."p4" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("h.rooms", "count", "p1", "p2", "p3", "p4") VALUES (d."h.rooms", d."count", d."p1", d."p2", d."p3", d."p4");
    DELETE FROM "pgivm_v"."a1_delta";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."apply_bulk_a1"() IS 'first-order IVM view v: the delta query of atom h';

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
    MERGE INTO "pgivm_v"."maintained" AS v USING (SELECT "h"."c3" AS "h.rooms", sum(("h".mult * "s".mult)::bigint) AS "count", sum(("h".mult * "s".mult * ("h"."c2" IS NOT NULL)::int * ("s"."c1" IS NOT NULL)::int)::bigint) AS "p1", sum(("h".mult * "s".mult * coalesce(("h"."c2")::numeric, 0) * coalesce(("s"."c1")::numeric, 0))::numeric) AS "p2", sum(("h".mult * "s".mult * ("h"."c2" IS NOT NULL)::int)::bigint) AS "p3", sum(("h".mult * "s".mult * coalesce(("h"."c2")::numeric, 0))::numeric) AS "p4" FROM "pgivm_v"."a1_delta" AS "h", (SELECT b."hours" AS "c1", b."postcode" AS "c2", 1::bigint AS mult, true AS live FROM "pgivm_v"."base_2" AS b) AS "s" WHERE "h"."c1" = "s"."c2" GROUP BY 1 HAVING count(CASE WHEN "h".mult > 0 AND "s".live THEN ("h"."c2" * "s"."c1") END) >= 0) AS d ON (v."h.rooms" = d."h.rooms" OR (v."h.rooms" IS NULL AND d."h.rooms" IS NULL)) WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count", "p1" = v."p1" + d."p1", "p2" = v."p2" + d."p2", "p3" = v."p3" + d."p3", "p4" = v."p4" + d."p4" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("h.rooms", "count", "p1", "p2", "p3", "p4") VALUES (d."h.rooms", d."count", d."p1", d."p2", d."p3", d."p4");
    DELETE FROM "pgivm_v"."a1_delta";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."apply_batch_a1"() IS 'first-order IVM view v: the delta query of atom h';

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
CREATE FUNCTION "pgivm_v"."apply_bulk_many_a1"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
SET plan_cache_mode = force_custom_plan
AS $pgivm$
BEGIN
    MERGE INTO "pgivm_v"."maintained" AS v USING (SELECT "h"."c3" AS "h.rooms", sum(("h".mult * "s".mult)::bigint) AS "count", sum(("h".mult * "s".mult * ("h"."c2" IS NOT NULL)::int * ("s"."c1" IS NOT NULL)::int)::bigint) AS "p1", sum(("h".mult * "s".mult * coalesce(("h"."c2")::numeric, 0) * coalesce(("s"."c1")::numeric, 0))::numeric) AS "p2", sum(("h".mult * "s".mult * ("h"."c2" IS NOT NULL)::int)::bigint) AS "p3", sum(("h".mult * "s".mult * coalesce(("h"."c2")::numeric, 0))::numeric) AS "p4" FROM "pgivm_v"."a1_delta" AS "h", (SELECT b."hours" AS "c1", b."postcode" AS "c2", 1::bigint AS mult, true AS live FROM "pgivm_v"."base_2" AS b UNION ALL SELECT p."c1", p."c2", -p.mult, false FROM "pgivm_v"."a2_delta" AS p) AS "s" WHERE "h"."c1" = "s"."c2" GROUP BY 1 HAVING count(CASE WHEN "h".mult > 0 AND "s".live THEN ("h"."c2" * "s"."c1") END) >= 0) AS d ON (v."h.rooms" = d."h.rooms" OR (v."h.rooms" IS NULL AND d."h.rooms" IS NULL)) WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count", "p1" = v."p1" + d."p1", "p2" = v."p2" + d."p2", "p3" = v."p3" + d."p3", "p4" = v."p4" + d."p4" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("h.rooms", "count", "p1", "p2", "p3", "p4") VALUES (d."h.rooms", d."count", d."p1", d."p2", d."p3", d."p4");
    DELETE FROM "pgivm_v"."a1_delta";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."apply_bulk_many_a1"() IS 'first-order IVM view v: the delta query of atom h, one of several tables a statement wrote';

CREATE FUNCTION "pgivm_v"."apply_batch_many_a1"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
AS $pgivm$
BEGIN
    IF (SELECT count(*) FROM (SELECT FROM "pgivm_v"."a1_delta" LIMIT 64 + 1) AS rows) > 64 THEN
        PERFORM "pgivm_v"."apply_bulk_many_a1"();
        RETURN;
    END IF;
    MERGE INTO "pgivm_v"."maintained" AS v USING (SELECT "h"."c3" AS "h.rooms", sum(("h".mult * "s".mult)::bigint) AS "count", sum(("h".mult * "s".mult * ("h"."c2" IS NOT NULL)::int * ("s"."c1" IS NOT NULL)::int)::bigint) AS "p1", sum(("h".mult * "s".mult * coalesce(("h"."c2")::numeric, 0) * coalesce(("s"."c1")::numeric, 0))::numeric) AS "p2", sum(("h".mult * "s".mult * ("h"."c2" IS NOT NULL)::int)::bigint) AS "p3", sum(("h".mult * "s".mult * coalesce(("h"."c2")::numeric, 0))::numeric) AS "p4" FROM "pgivm_v"."a1_delta" AS "h", (SELECT b."hours" AS "c1", b."postcode" AS "c2", 1::bigint AS mult, true AS live FROM "pgivm_v"."base_2" AS b UNION ALL SELECT p."c1", p."c2", -p.mult, false FROM "pgivm_v"."a2_delta" AS p) AS "s" WHERE "h"."c1" = "s"."c2" GROUP BY 1 HAVING count(CASE WHEN "h".mult > 0 AND "s".live THEN ("h"."c2" * "s"."c1") END) >= 0) AS d ON (v."h.rooms" = d."h.rooms" OR (v."h.rooms" IS NULL AND d."h.rooms" IS NULL)) WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count", "p1" = v."p1" + d."p1", "p2" = v."p2" + d."p2", "p3" = v."p3" + d."p3", "p4" = v."p4" + d."p4" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("h.rooms", "count", "p1", "p2", "p3", "p4") VALUES (d."h.rooms", d."count", d."p1", d."p2", d."p3", d."p4");
    DELETE FROM "pgivm_v"."a1_delta";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."apply_batch_many_a1"() IS 'first-order IVM view v: the delta query of atom h, one of several tables a statement wrote';

-- TRUNCATE of a plain base table empties its atoms: every stored view over one of them is empty
-- (a join with an empty relation), the other views are unchanged. Nothing needs to be read.
CREATE FUNCTION "pgivm_v"."clear_a1"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_v"."maintained";
    DELETE FROM "pgivm_v"."a1_delta";
    DELETE FROM "pgivm_v"."a2_delta";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."clear_a1"() IS 'first-order IVM view v: TRUNCATE of atom h';

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
    MERGE INTO "pgivm_v"."maintained" AS v USING (SELECT "h"."c3" AS "h.rooms", sum(("h".mult * "s".mult)::bigint) AS "count", sum(("h".mult * "s".mult * ("h"."c2" IS NOT NULL)::int * ("s"."c1" IS NOT NULL)::int)::bigint) AS "p1", sum(("h".mult * "s".mult * coalesce(("h"."c2")::numeric, 0) * coalesce(("s"."c1")::numeric, 0))::numeric) AS "p2", sum(("h".mult * "s".mult * ("h"."c2" IS NOT NULL)::int)::bigint) AS "p3", sum(("h".mult * "s".mult * coalesce(("h"."c2")::numeric, 0))::numeric) AS "p4" FROM (SELECT b."postcode" AS "c1", b."price" AS "c2", b."rooms" AS "c3", 1::bigint AS mult, true AS live FROM "pgivm_v"."base_1" AS b) AS "h", "pgivm_v"."a2_delta" AS "s" WHERE "h"."c1" = "s"."c2" GROUP BY 1 HAVING count(CASE WHEN "h".live AND "s".mult > 0 THEN ("h"."c2" * "s"."c1") END) >= 0) AS d ON (v."h.rooms" = d."h.rooms" OR (v."h.rooms" IS NULL AND d."h.rooms" IS NULL)) WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count", "p1" = v."p1" + d."p1", "p2" = v."p2" + d."p2", "p3" = v."p3" + d."p3", "p4" = v."p4" + d."p4" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("h.rooms", "count", "p1", "p2", "p3", "p4") VALUES (d."h.rooms", d."count", d."p1", d."p2", d."p3", d."p4");
    DELETE FROM "pgivm_v"."a2_delta";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."apply_bulk_a2"() IS 'first-order IVM view v: the delta query of atom s';

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
    MERGE INTO "pgivm_v"."maintained" AS v USING (SELECT "h"."c3" AS "h.rooms", sum(("h".mult * "s".mult)::bigint) AS "count", sum(("h".mult * "s".mult * ("h"."c2" IS NOT NULL)::int * ("s"."c1" IS NOT NULL)::int)::bigint) AS "p1", sum(("h".mult * "s".mult * coalesce(("h"."c2")::numeric, 0) * coalesce(("s"."c1")::numeric, 0))::numeric) AS "p2", sum(("h".mult * "s".mult * ("h"."c2" IS NOT NULL)::int)::bigint) AS "p3", sum(("h".mult * "s".mult * coalesce(("h"."c2")::numeric, 0))::numeric) AS "p4" FROM (SELECT b."postcode" AS "c1", b."price" AS "c2", b."rooms" AS "c3", 1::bigint AS mult, true AS live FROM "pgivm_v"."base_1" AS b) AS "h", "pgivm_v"."a2_delta" AS "s" WHERE "h"."c1" = "s"."c2" GROUP BY 1 HAVING count(CASE WHEN "h".live AND "s".mult > 0 THEN ("h"."c2" * "s"."c1") END) >= 0) AS d ON (v."h.rooms" = d."h.rooms" OR (v."h.rooms" IS NULL AND d."h.rooms" IS NULL)) WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count", "p1" = v."p1" + d."p1", "p2" = v."p2" + d."p2", "p3" = v."p3" + d."p3", "p4" = v."p4" + d."p4" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("h.rooms", "count", "p1", "p2", "p3", "p4") VALUES (d."h.rooms", d."count", d."p1", d."p2", d."p3", d."p4");
    DELETE FROM "pgivm_v"."a2_delta";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."apply_batch_a2"() IS 'first-order IVM view v: the delta query of atom s';

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
CREATE FUNCTION "pgivm_v"."apply_bulk_many_a2"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
SET plan_cache_mode = force_custom_plan
AS $pgivm$
BEGIN
    MERGE INTO "pgivm_v"."maintained" AS v USING (SELECT "h"."c3" AS "h.rooms", sum(("h".mult * "s".mult)::bigint) AS "count", sum(("h".mult * "s".mult * ("h"."c2" IS NOT NULL)::int * ("s"."c1" IS NOT NULL)::int)::bigint) AS "p1", sum(("h".mult * "s".mult * coalesce(("h"."c2")::numeric, 0) * coalesce(("s"."c1")::numeric, 0))::numeric) AS "p2", sum(("h".mult * "s".mult * ("h"."c2" IS NOT NULL)::int)::bigint) AS "p3", sum(("h".mult * "s".mult * coalesce(("h"."c2")::numeric, 0))::numeric) AS "p4" FROM (SELECT b."postcode" AS "c1", b."price" AS "c2", b."rooms" AS "c3", 1::bigint AS mult, true AS live FROM "pgivm_v"."base_1" AS b) AS "h", "pgivm_v"."a2_delta" AS "s" WHERE "h"."c1" = "s"."c2" GROUP BY 1 HAVING count(CASE WHEN "h".live AND "s".mult > 0 THEN ("h"."c2" * "s"."c1") END) >= 0) AS d ON (v."h.rooms" = d."h.rooms" OR (v."h.rooms" IS NULL AND d."h.rooms" IS NULL)) WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count", "p1" = v."p1" + d."p1", "p2" = v."p2" + d."p2", "p3" = v."p3" + d."p3", "p4" = v."p4" + d."p4" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("h.rooms", "count", "p1", "p2", "p3", "p4") VALUES (d."h.rooms", d."count", d."p1", d."p2", d."p3", d."p4");
    DELETE FROM "pgivm_v"."a2_delta";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."apply_bulk_many_a2"() IS 'first-order IVM view v: the delta query of atom s, one of several tables a statement wrote';

CREATE FUNCTION "pgivm_v"."apply_batch_many_a2"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
AS $pgivm$
BEGIN
    IF (SELECT count(*) FROM (SELECT FROM "pgivm_v"."a2_delta" LIMIT 64 + 1) AS rows) > 64 THEN
        PERFORM "pgivm_v"."apply_bulk_many_a2"();
        RETURN;
    END IF;
    MERGE INTO "pgivm_v"."maintained" AS v USING (SELECT "h"."c3" AS "h.rooms", sum(("h".mult * "s".mult)::bigint) AS "count", sum(("h".mult * "s".mult * ("h"."c2" IS NOT NULL)::int * ("s"."c1" IS NOT NULL)::int)::bigint) AS "p1", sum(("h".mult * "s".mult * coalesce(("h"."c2")::numeric, 0) * coalesce(("s"."c1")::numeric, 0))::numeric) AS "p2", sum(("h".mult * "s".mult * ("h"."c2" IS NOT NULL)::int)::bigint) AS "p3", sum(("h".mult * "s".mult * coalesce(("h"."c2")::numeric, 0))::numeric) AS "p4" FROM (SELECT b."postcode" AS "c1", b."price" AS "c2", b."rooms" AS "c3", 1::bigint AS mult, true AS live FROM "pgivm_v"."base_1" AS b) AS "h", "pgivm_v"."a2_delta" AS "s" WHERE "h"."c1" = "s"."c2" GROUP BY 1 HAVING count(CASE WHEN "h".live AND "s".mult > 0 THEN ("h"."c2" * "s"."c1") END) >= 0) AS d ON (v."h.rooms" = d."h.rooms" OR (v."h.rooms" IS NULL AND d."h.rooms" IS NULL)) WHEN MATCHED AND v.count + d.count = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET "count" = v."count" + d."count", "p1" = v."p1" + d."p1", "p2" = v."p2" + d."p2", "p3" = v."p3" + d."p3", "p4" = v."p4" + d."p4" WHEN NOT MATCHED AND d.count <> 0 THEN INSERT ("h.rooms", "count", "p1", "p2", "p3", "p4") VALUES (d."h.rooms", d."count", d."p1", d."p2", d."p3", d."p4");
    DELETE FROM "pgivm_v"."a2_delta";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."apply_batch_many_a2"() IS 'first-order IVM view v: the delta query of atom s, one of several tables a statement wrote';

-- TRUNCATE of a plain base table empties its atoms: every stored view over one of them is empty
-- (a join with an empty relation), the other views are unchanged. Nothing needs to be read.
CREATE FUNCTION "pgivm_v"."clear_a2"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_v"."maintained";
    DELETE FROM "pgivm_v"."a1_delta";
    DELETE FROM "pgivm_v"."a2_delta";
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."clear_a2"() IS 'first-order IVM view v: TRUNCATE of atom s';

ALTER TABLE "pgivm_v"."state" ADD COLUMN IF NOT EXISTS statements_open integer NOT NULL DEFAULT 0;

-- One SQL statement may write several base tables of the view: a foreign key's ON DELETE CASCADE
-- deletes from the referencing table inside the DELETE, a data-modifying WITH writes one table per
-- query, INSERT ... ON CONFLICT DO UPDATE inserts and updates. Each write fires its own statement
-- trigger, and when the first of them runs, every table already shows all of the statement's
-- changes: a delta query joining the first change with the others' tables as they are now would
-- count the changes' cross term twice (a join of r's and s's new rows, once with each).
--
-- So a statement counts itself in (statement_open, the BEFORE trigger), and each AFTER trigger only
-- queues its net change in K_delta and counts itself out (in the update of the state row that counts
-- the rows changed, capture_functions.sql). The last one out (apply_pending) applies
-- every atom's queued change in order, each delta query reading the earlier atoms as they are now
-- and the later ones as they were (now, less their queued change): the delta rule of cq.py.
-- The counter lives in the state row, which every writer of the view updates anyway (writers of
-- one view are serialized there): a writer cannot set it, and a rolled-back statement takes its
-- count back with it.
CREATE FUNCTION "pgivm_v"."statement_open"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    UPDATE "pgivm_v"."state" SET statements_open = statements_open + 1 WHERE singleton;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."statement_open"() IS 'first-order IVM view v: a writing statement counts itself in';

CREATE FUNCTION "pgivm_v"."apply_pending"(still_open integer)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    queued boolean[];  -- per atom: a change waits in its K_delta
BEGIN
    IF still_open < 0 THEN  -- a statement that began before the view was made (create's locks prevent it)
        UPDATE "pgivm_v"."state" SET statements_open = 0 WHERE singleton;
    END IF;
    SELECT ARRAY[EXISTS (SELECT FROM "pgivm_v"."a1_delta"), EXISTS (SELECT FROM "pgivm_v"."a2_delta")] INTO queued;
    IF (queued[1])::int + (queued[2])::int > 1 THEN
        IF queued[1] THEN
            PERFORM "pgivm_v"."apply_batch_many_a1"();
        END IF;
        IF queued[2] THEN
            PERFORM "pgivm_v"."apply_batch_many_a2"();
        END IF;
        RETURN;
    END IF;
    IF queued[1] THEN
        PERFORM "pgivm_v"."apply_batch_a1"();
    END IF;
    IF queued[2] THEN
        PERFORM "pgivm_v"."apply_batch_a2"();
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."apply_pending"(integer) IS 'first-order IVM view v: a statement''s change queued; the last of one statement''s writes applies them all';

-- TRUNCATE of a partition: its BEFORE trigger queued the rows as a deletion and counted the
-- statement in, while the table still held them; this AFTER trigger applies once they are gone, so
-- that every delta query reads the live table as its new state, as for any other statement.
CREATE FUNCTION "pgivm_v"."statement_close"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    still_open integer;
BEGIN
    UPDATE "pgivm_v"."state" SET statements_open = statements_open - 1 WHERE singleton RETURNING statements_open INTO still_open;
    IF still_open <= 0 THEN
        PERFORM "pgivm_v"."apply_pending"(still_open);
    END IF;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."statement_close"() IS 'first-order IVM view v: a partition''s TRUNCATE applied once its rows are gone';

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
        UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + c.n, statements_open = statements_open - 1
          FROM (SELECT count(*) AS n FROM old_rows) AS c WHERE singleton RETURNING c.n, statements_open INTO changed_rows, still_open;
    ELSE
        UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + c.n, statements_open = statements_open - 1
          FROM (SELECT count(*) AS n FROM new_rows) AS c WHERE singleton RETURNING c.n, statements_open INTO changed_rows, still_open;
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
        INSERT INTO "pgivm_v"."a1_delta" ("c1", "c2", "c3", mult) SELECT changes."c1", changes."c2", changes."c3", sum(changes.m)::bigint AS m FROM (SELECT new_rows."postcode" AS "c1", new_rows."price" AS "c2", new_rows."rooms" AS "c3", 1 AS m FROM new_rows WHERE new_rows."postcode" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2", changes."c3" HAVING sum(changes.m) <> 0;
        IF still_open <= 0 THEN
            PERFORM "pgivm_v"."apply_pending"(still_open);
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO "pgivm_v"."a1_delta" ("c1", "c2", "c3", mult) SELECT changes."c1", changes."c2", changes."c3", sum(changes.m)::bigint AS m FROM (SELECT old_rows."postcode" AS "c1", old_rows."price" AS "c2", old_rows."rooms" AS "c3", -1 AS m FROM old_rows WHERE old_rows."postcode" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2", changes."c3" HAVING sum(changes.m) <> 0;
        IF still_open <= 0 THEN
            PERFORM "pgivm_v"."apply_pending"(still_open);
        END IF;
    ELSE
        INSERT INTO "pgivm_v"."a1_delta" ("c1", "c2", "c3", mult) SELECT changes."c1", changes."c2", changes."c3", sum(changes.m)::bigint AS m FROM (SELECT new_rows."postcode" AS "c1", new_rows."price" AS "c2", new_rows."rooms" AS "c3", 1 AS m FROM new_rows WHERE new_rows."postcode" IS NOT NULL UNION ALL SELECT old_rows."postcode" AS "c1", old_rows."price" AS "c2", old_rows."rooms" AS "c3", -1 AS m FROM old_rows WHERE old_rows."postcode" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2", changes."c3" HAVING sum(changes.m) <> 0;
        IF still_open <= 0 THEN
            PERFORM "pgivm_v"."apply_pending"(still_open);
        END IF;
    END IF;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_change_a1"() IS 'pgivm view v: maintain the first-order IVM state for changes of public.house as A1';

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
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_v"."a1_delta" ("c1", "c2", "c3", mult) SELECT base."postcode", base."price", base."rooms", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."postcode" IS NOT NULL GROUP BY 1, 2, 3', TG_RELID::pg_catalog.regclass, TG_RELID);
    UPDATE "pgivm_v"."state" SET statements_open = statements_open + 1 WHERE singleton;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_truncate_rows_a1"() IS 'pgivm view v: before TRUNCATE of public.house or a partition of it, take its rows away as a deletion';

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
COMMENT ON FUNCTION "pgivm_v"."on_truncate_a1"() IS 'pgivm view v: clear the first-order IVM state of public.house as A1 after TRUNCATE';

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
        UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + c.n, statements_open = statements_open - 1
          FROM (SELECT count(*) AS n FROM old_rows) AS c WHERE singleton RETURNING c.n, statements_open INTO changed_rows, still_open;
    ELSE
        UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + c.n, statements_open = statements_open - 1
          FROM (SELECT count(*) AS n FROM new_rows) AS c WHERE singleton RETURNING c.n, statements_open INTO changed_rows, still_open;
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
        INSERT INTO "pgivm_v"."a2_delta" ("c1", "c2", mult) SELECT changes."c1", changes."c2", sum(changes.m)::bigint AS m FROM (SELECT new_rows."hours" AS "c1", new_rows."postcode" AS "c2", 1 AS m FROM new_rows WHERE new_rows."postcode" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2" HAVING sum(changes.m) <> 0;
        IF still_open <= 0 THEN
            PERFORM "pgivm_v"."apply_pending"(still_open);
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO "pgivm_v"."a2_delta" ("c1", "c2", mult) SELECT changes."c1", changes."c2", sum(changes.m)::bigint AS m FROM (SELECT old_rows."hours" AS "c1", old_rows."postcode" AS "c2", -1 AS m FROM old_rows WHERE old_rows."postcode" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2" HAVING sum(changes.m) <> 0;
        IF still_open <= 0 THEN
            PERFORM "pgivm_v"."apply_pending"(still_open);
        END IF;
    ELSE
        INSERT INTO "pgivm_v"."a2_delta" ("c1", "c2", mult) SELECT changes."c1", changes."c2", sum(changes.m)::bigint AS m FROM (SELECT new_rows."hours" AS "c1", new_rows."postcode" AS "c2", 1 AS m FROM new_rows WHERE new_rows."postcode" IS NOT NULL UNION ALL SELECT old_rows."hours" AS "c1", old_rows."postcode" AS "c2", -1 AS m FROM old_rows WHERE old_rows."postcode" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2" HAVING sum(changes.m) <> 0;
        IF still_open <= 0 THEN
            PERFORM "pgivm_v"."apply_pending"(still_open);
        END IF;
    END IF;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_change_a2"() IS 'pgivm view v: maintain the first-order IVM state for changes of public.shop as A2';

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
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_v"."a2_delta" ("c1", "c2", mult) SELECT base."hours", base."postcode", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."postcode" IS NOT NULL GROUP BY 1, 2', TG_RELID::pg_catalog.regclass, TG_RELID);
    UPDATE "pgivm_v"."state" SET statements_open = statements_open + 1 WHERE singleton;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_truncate_rows_a2"() IS 'pgivm view v: before TRUNCATE of public.shop or a partition of it, take its rows away as a deletion';

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
COMMENT ON FUNCTION "pgivm_v"."on_truncate_a2"() IS 'pgivm view v: clear the first-order IVM state of public.shop as A2 after TRUNCATE';

-- phase: build (10 statements)

INSERT INTO "pgivm_v"."maintained" SELECT "h"."rooms" AS "h.rooms", sum((1::bigint)::bigint) AS "count", sum((1::bigint * ("h"."price" IS NOT NULL)::int * ("s"."hours" IS NOT NULL)::int)::bigint) AS "p1", sum((1::bigint * coalesce(("h"."price")::numeric, 0) * coalesce(("s"."hours")::numeric, 0))::numeric) AS "p2", sum((1::bigint * ("h"."price" IS NOT NULL)::int)::bigint) AS "p3", sum((1::bigint * coalesce(("h"."price")::numeric, 0))::numeric) AS "p4" FROM "public"."house" AS "h", "public"."shop" AS "s" WHERE "h"."postcode" = "s"."postcode" AND "h".tableoid = 16384::pg_catalog.oid AND "s".tableoid = 16385::pg_catalog.oid GROUP BY 1 HAVING count(CASE WHEN true THEN ("h"."price" * "s"."hours") END) >= 0;

ANALYZE "pgivm_v"."maintained";

SELECT "pgivm_v"."apply_batch_a1"();

SELECT "pgivm_v"."apply_bulk_a1"();

SELECT "pgivm_v"."apply_batch_a2"();

SELECT "pgivm_v"."apply_bulk_a2"();

SELECT "pgivm_v"."apply_batch_many_a1"();

SELECT "pgivm_v"."apply_bulk_many_a1"();

SELECT "pgivm_v"."apply_batch_many_a2"();

SELECT "pgivm_v"."apply_bulk_many_a2"();

-- phase: capture (12 statements)

CREATE TRIGGER "pgivm_v_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "public"."house" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_v_open" BEFORE INSERT OR UPDATE OR DELETE ON "public"."house" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."statement_open"();

CREATE TRIGGER "pgivm_v_insert" AFTER INSERT ON "public"."house" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a1"();

CREATE TRIGGER "pgivm_v_delete" AFTER DELETE ON "public"."house" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a1"();

CREATE TRIGGER "pgivm_v_update" AFTER UPDATE ON "public"."house" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a1"();

CREATE TRIGGER "pgivm_v_truncate" AFTER TRUNCATE ON "public"."house" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_truncate_a1"();

CREATE TRIGGER "pgivm_v_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "public"."shop" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_v_open" BEFORE INSERT OR UPDATE OR DELETE ON "public"."shop" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."statement_open"();

CREATE TRIGGER "pgivm_v_insert" AFTER INSERT ON "public"."shop" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a2"();

CREATE TRIGGER "pgivm_v_delete" AFTER DELETE ON "public"."shop" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a2"();

CREATE TRIGGER "pgivm_v_update" AFTER UPDATE ON "public"."shop" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a2"();

CREATE TRIGGER "pgivm_v_truncate" AFTER TRUNCATE ON "public"."shop" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_truncate_a2"();

-- phase: expose (3 statements)

CREATE OR REPLACE VIEW "pgivm_v"."result" AS SELECT (SELECT count(*) FROM (SELECT "r"."h.rooms"::integer AS "rooms", ("r"."count")::bigint AS "count", (CASE WHEN "r"."p1" > 0 THEN '1'::numeric * "r"."p2" END)::bigint AS "revenue", (CASE WHEN "r"."p3" > 0 THEN ('1'::numeric * "r"."p4") / "r"."p3" END)::numeric AS "avg" FROM "pgivm_v"."maintained" AS r) AS rows) AS count;

CREATE OR REPLACE VIEW "public"."v" AS SELECT "r"."h.rooms"::integer AS "rooms", ("r"."count")::bigint AS "count", (CASE WHEN "r"."p1" > 0 THEN '1'::numeric * "r"."p2" END)::bigint AS "revenue", (CASE WHEN "r"."p3" > 0 THEN ('1'::numeric * "r"."p4") / "r"."p3" END)::numeric AS "avg" FROM "pgivm_v"."maintained" AS r; COMMENT ON VIEW "public"."v" IS 'pgivm: maintained by first-order IVM, state in schema pgivm_v. Definition: SELECT h.rooms, count(*), sum(h.price * s.hours) AS revenue, avg(h.price) FROM house h JOIN shop s ON h.postcode = s.postcode GROUP BY h.rooms';

REVOKE ALL ON ALL TABLES IN SCHEMA "pgivm_v" FROM PUBLIC; REVOKE ALL ON ALL FUNCTIONS IN SCHEMA "pgivm_v" FROM PUBLIC;
