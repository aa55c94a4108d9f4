-- pgivm golden install plan: system recompute, case edge, options {}
-- view public.triangles AS SELECT count(*) FROM e AS x JOIN e AS y ON x.dst = y.src JOIN e AS z ON y.dst = z.src AND z.dst = x.src
-- regenerate: PGIVM_REGENERATE_GOLDEN=1 python -m pytest tests/systems/test_golden_plans.py

-- phase: state (1 statement)

-- Recompute: the baseline users of REFRESH MATERIALIZED VIEW have today. After every statement that
-- writes a base table, the count is recomputed from scratch with the view's join.
-- (the schema itself: pgivm_catalog.create_state_schema, as the view's owner)
COMMENT ON SCHEMA "pgivm_triangles" IS 'pgivm state of view triangles (strategy recompute): SELECT count(*) FROM e AS x JOIN e AS y ON x.dst = y.src JOIN e AS z ON y.dst = z.src AND z.dst = x.src';

CREATE TABLE "pgivm_triangles"."state" (
    singleton       boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    updates_applied bigint NOT NULL DEFAULT 0  -- statements that refreshed the count
);
CREATE TABLE "pgivm_triangles"."result" (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    count     bigint NOT NULL
);
COMMENT ON TABLE "pgivm_triangles"."result" IS 'pgivm: the result of view triangles, recomputed after every write';
INSERT INTO "pgivm_triangles"."state" DEFAULT VALUES;

-- phase: functions (1 statement)

-- The recount reads the base tables, so it names them from their oids at the moment it runs
-- (the format string below holds their places, the query naming tableoid so that a view under a base
-- table's name cannot even be parsed), with row_security off so that a policy is an error rather
-- than code running with this function's rights.
CREATE FUNCTION "pgivm_triangles"."refresh"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
AS $pgivm$
DECLARE
    recount bigint;
BEGIN
    UPDATE "pgivm_triangles"."state" SET updates_applied = updates_applied + 1;
    IF NOT FOUND THEN  -- a snapshot from before the view was created (see capture_functions.sql)
        RAISE EXCEPTION USING
            ERRCODE = 'serialization_failure',
            MESSAGE = format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'triangles'),
            HINT = 'Retry the transaction.';
    END IF;
    EXECUTE format('SELECT count(*) FROM %1$s AS r JOIN %1$s AS s ON "r"."dst" = "s"."src" JOIN %1$s AS t ON "s"."dst" = "t"."src" AND "t"."dst" = "r"."src" WHERE "r".tableoid = 16384::pg_catalog.oid AND "s".tableoid = 16384::pg_catalog.oid AND "t".tableoid = 16384::pg_catalog.oid', 16384::pg_catalog.regclass) INTO recount;
    UPDATE "pgivm_triangles"."result" SET count = recount;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."refresh"() IS 'pgivm view triangles: recompute the count after a statement';

-- phase: build (1 statement)

-- The first count, recomputed once by `pgivm create` under its locks.
INSERT INTO "pgivm_triangles"."result" (count) VALUES ((SELECT count(*) FROM "public"."e" AS r JOIN "public"."e" AS s ON "r"."dst" = "s"."src" JOIN "public"."e" AS t ON "s"."dst" = "t"."src" AND "t"."dst" = "r"."src" WHERE "r".tableoid = 16384::pg_catalog.oid AND "s".tableoid = 16384::pg_catalog.oid AND "t".tableoid = 16384::pg_catalog.oid));

-- phase: capture (2 statements)

CREATE TRIGGER "pgivm_triangles_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "public"."e" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_triangles_zz_refresh" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "public"."e" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."refresh"();

-- phase: expose (2 statements)

CREATE OR REPLACE VIEW "public"."triangles" AS SELECT count AS "count" FROM "pgivm_triangles"."result"; COMMENT ON VIEW "public"."triangles" IS 'pgivm: maintained by recompute, state in schema pgivm_triangles. Definition: SELECT count(*) FROM e AS x JOIN e AS y ON x.dst = y.src JOIN e AS z ON y.dst = z.src AND z.dst = x.src';

REVOKE ALL ON ALL TABLES IN SCHEMA "pgivm_triangles" FROM PUBLIC; REVOKE ALL ON ALL FUNCTIONS IN SCHEMA "pgivm_triangles" FROM PUBLIC;
