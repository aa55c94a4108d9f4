-- pgivm golden install plan: system first-order, case partitioned, options {'batch_threshold': 384}
-- view public.triangles AS SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a
-- regenerate: PGIVM_REGENERATE_GOLDEN=1 python -m pytest tests/systems/test_golden_plans.py

-- phase: state (4 statements)

-- First-order (classical) IVM of the triangle count: the state shared by the whole view.
-- (the schema itself: pgivm_catalog.create_state_schema, as the view's owner)
COMMENT ON SCHEMA "pgivm_triangles" IS 'pgivm state of view triangles (strategy first-order): SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a';

CREATE TABLE "pgivm_triangles"."state" (
    singleton       boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    updates_applied bigint NOT NULL DEFAULT 0  -- base-table row changes maintained so far
);
COMMENT ON TABLE "pgivm_triangles"."state" IS 'first-order IVM state; every maintaining transaction updates this row first, which serializes writers of the view';

CREATE TABLE "pgivm_triangles"."result" (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    count     bigint NOT NULL
);
COMMENT ON TABLE "pgivm_triangles"."result" IS 'pgivm: the maintained result of view triangles';
INSERT INTO "pgivm_triangles"."state" DEFAULT VALUES;
INSERT INTO "pgivm_triangles"."result" (count) VALUES (0);

-- First-order IVM of one relation K(X,Y) of the cycle, with L(Y,Z) next and M(Z,X) previous
-- (rendered for K = R, S, T). The classical delta query for an update (alpha, beta) -> m:
--   delta Q = m * sum_z L(beta, z) * M(z, alpha)
-- one loop over L(beta, .) probing M(z, alpha): O(N) per update when beta has high degree.
-- The relations are kept as indexed copies (one row per distinct tuple with its multiplicity):
-- row triggers of a multi-row statement see the statement's final base table, and a self-join
-- would read the very table being changed, so the delta must read a copy kept in step.

CREATE TABLE "pgivm_triangles"."r_tuples" (
    "a"  integer NOT NULL,
    "b"  integer NOT NULL,
    mult bigint NOT NULL,  -- never 0 once a maintenance statement ends
    PRIMARY KEY ("a", "b") INCLUDE (mult)  -- the delta loop's scan and probes read the index alone
);
COMMENT ON TABLE "pgivm_triangles"."r_tuples" IS 'first-order IVM: relation R(A,B) with multiplicities';

-- M by its second column, for the merge in 20_relation_functions.sql.
CREATE INDEX ON "pgivm_triangles"."r_tuples" ("b", "a") INCLUDE (mult);

-- A multi-row statement's net change of K, applied set at a time (see sql/capture/capture_functions.sql).
CREATE TABLE "pgivm_triangles"."r_delta" (
    "a"      integer NOT NULL,
    "b"      integer NOT NULL,
    mult     bigint NOT NULL,
    new_mult bigint,
    PRIMARY KEY ("a", "b")
);

-- First-order IVM of one relation K(X,Y) of the cycle, with L(Y,Z) next and M(Z,X) previous
-- (rendered for K = R, S, T). The classical delta query for an update (alpha, beta) -> m:
--   delta Q = m * sum_z L(beta, z) * M(z, alpha)
-- one loop over L(beta, .) probing M(z, alpha): O(N) per update when beta has high degree.
-- The relations are kept as indexed copies (one row per distinct tuple with its multiplicity):
-- row triggers of a multi-row statement see the statement's final base table, and a self-join
-- would read the very table being changed, so the delta must read a copy kept in step.

CREATE TABLE "pgivm_triangles"."s_tuples" (
    "b"  integer NOT NULL,
    "c"  integer NOT NULL,
    mult bigint NOT NULL,  -- never 0 once a maintenance statement ends
    PRIMARY KEY ("b", "c") INCLUDE (mult)  -- the delta loop's scan and probes read the index alone
);
COMMENT ON TABLE "pgivm_triangles"."s_tuples" IS 'first-order IVM: relation S(B,C) with multiplicities';

-- M by its second column, for the merge in 20_relation_functions.sql.
CREATE INDEX ON "pgivm_triangles"."s_tuples" ("c", "b") INCLUDE (mult);

-- A multi-row statement's net change of K, applied set at a time (see sql/capture/capture_functions.sql).
CREATE TABLE "pgivm_triangles"."s_delta" (
    "b"      integer NOT NULL,
    "c"      integer NOT NULL,
    mult     bigint NOT NULL,
    new_mult bigint,
    PRIMARY KEY ("b", "c")
);

-- First-order IVM of one relation K(X,Y) of the cycle, with L(Y,Z) next and M(Z,X) previous
-- (rendered for K = R, S, T). The classical delta query for an update (alpha, beta) -> m:
--   delta Q = m * sum_z L(beta, z) * M(z, alpha)
-- one loop over L(beta, .) probing M(z, alpha): O(N) per update when beta has high degree.
-- The relations are kept as indexed copies (one row per distinct tuple with its multiplicity):
-- row triggers of a multi-row statement see the statement's final base table, and a self-join
-- would read the very table being changed, so the delta must read a copy kept in step.

CREATE TABLE "pgivm_triangles"."t_tuples" (
    "c"  integer NOT NULL,
    "a"  integer NOT NULL,
    mult bigint NOT NULL,  -- never 0 once a maintenance statement ends
    PRIMARY KEY ("c", "a") INCLUDE (mult)  -- the delta loop's scan and probes read the index alone
);
COMMENT ON TABLE "pgivm_triangles"."t_tuples" IS 'first-order IVM: relation T(C,A) with multiplicities';

-- M by its second column, for the merge in 20_relation_functions.sql.
CREATE INDEX ON "pgivm_triangles"."t_tuples" ("a", "c") INCLUDE (mult);

-- A multi-row statement's net change of K, applied set at a time (see sql/capture/capture_functions.sql).
CREATE TABLE "pgivm_triangles"."t_delta" (
    "c"      integer NOT NULL,
    "a"      integer NOT NULL,
    mult     bigint NOT NULL,
    new_mult bigint,
    PRIMARY KEY ("c", "a")
);

-- phase: functions (7 statements)

-- First-order IVM of one relation K(X,Y): the delta query, the merge, the clear, the batch path
-- (the tables are in 10_relation_tables.sql).

-- The loop is over L(beta, .), probing M; when M(., alpha) turns out short (counted, never past a
-- few times |L(beta, .)|) it is a merge of the two sorted lists instead: the same O(|L(beta, .)|)
-- bound with cheaper rows, as IVMε does it for its light parts.
CREATE FUNCTION "pgivm_triangles"."apply_r"(alpha integer, beta integer, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    delta_q     bigint;
    new_mult    bigint;
    merge_limit bigint;
    partners    bigint;
BEGIN
    SELECT 4 * count(*) + 16 INTO merge_limit FROM "pgivm_triangles"."s_tuples" l WHERE l."b" = beta;
    SELECT count(*) INTO partners FROM (SELECT FROM "pgivm_triangles"."t_tuples" mt WHERE mt."a" = alpha LIMIT merge_limit) p;
    IF partners < merge_limit THEN
        delta_q := "pgivm_triangles"."paths_r"(alpha, beta);
    ELSE
        SELECT coalesce(sum(l.mult * (SELECT mt.mult FROM "pgivm_triangles"."t_tuples" mt WHERE mt."c" = l."c" AND mt."a" = alpha)), 0)
          INTO delta_q
          FROM "pgivm_triangles"."s_tuples" l WHERE l."b" = beta;
    END IF;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + m * delta_q;
    END IF;
    INSERT INTO "pgivm_triangles"."r_tuples" AS p ("a", "b", mult) VALUES (alpha, beta, m)
        ON CONFLICT ("a", "b") DO UPDATE SET mult = p.mult + EXCLUDED.mult
        RETURNING mult INTO new_mult;
    IF new_mult = 0 THEN
        DELETE FROM "pgivm_triangles"."r_tuples" WHERE "a" = alpha AND "b" = beta;
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_r"(integer, integer, bigint) IS 'first-order IVM: the delta query for a single-tuple update to R';

-- sum_z L(beta, z) * M(z, alpha) as a merge join of two index-only range scans sorted by z.
CREATE FUNCTION "pgivm_triangles"."paths_r"(alpha integer, beta integer)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_mergejoin = on SET enable_nestloop = off SET enable_hashjoin = off SET enable_seqscan = off
AS $pgivm$
BEGIN
    RETURN (SELECT coalesce(sum(l.mult * mt.mult), 0)
              FROM "pgivm_triangles"."s_tuples" l JOIN "pgivm_triangles"."t_tuples" mt ON mt."c" = l."c"
             WHERE l."b" = beta AND mt."a" = alpha);
END;
$pgivm$;

-- Clear K after a TRUNCATE of its base table (DELETE, not TRUNCATE: see ivme/40_relation_clear.sql).
CREATE FUNCTION "pgivm_triangles"."clear_r"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."r_tuples";
END;
$pgivm$;

CREATE FUNCTION "pgivm_triangles"."apply_batch_r"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
-- The state is hot in memory: index probes cost about as much as sequential reads, so a small
-- batch is best served by index nested loops and only a large one by hash joins.
SET random_page_cost = 1.1
AS $pgivm$
DECLARE
    delta_q numeric;
BEGIN
    ANALYZE "pgivm_triangles"."r_delta";  -- index nested loops for a small batch, hash joins for a large one
    SELECT coalesce(sum(d.mult * l.mult * mt.mult), 0) INTO delta_q
      FROM "pgivm_triangles"."r_delta" d
      JOIN "pgivm_triangles"."s_tuples" l ON l."b" = d."b"
      JOIN "pgivm_triangles"."t_tuples" mt ON mt."c" = l."c" AND mt."a" = d."a";
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + delta_q::bigint;
    END IF;
    WITH changed AS (
        INSERT INTO "pgivm_triangles"."r_tuples" AS p ("a", "b", mult)
        SELECT "a", "b", mult FROM "pgivm_triangles"."r_delta"
        ON CONFLICT ("a", "b") DO UPDATE SET mult = p.mult + EXCLUDED.mult
        RETURNING p."a", p."b", p.mult)
    UPDATE "pgivm_triangles"."r_delta" d SET new_mult = c.mult FROM changed c WHERE d."a" = c."a" AND d."b" = c."b";
    DELETE FROM "pgivm_triangles"."r_tuples" p USING "pgivm_triangles"."r_delta" d WHERE d.new_mult = 0 AND p."a" = d."a" AND p."b" = d."b";
    DELETE FROM "pgivm_triangles"."r_delta";
END;
$pgivm$;

-- First-order IVM of one relation K(X,Y): the delta query, the merge, the clear, the batch path
-- (the tables are in 10_relation_tables.sql).

-- The loop is over L(beta, .), probing M; when M(., alpha) turns out short (counted, never past a
-- few times |L(beta, .)|) it is a merge of the two sorted lists instead: the same O(|L(beta, .)|)
-- bound with cheaper rows, as IVMε does it for its light parts.
CREATE FUNCTION "pgivm_triangles"."apply_s"(alpha integer, beta integer, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    delta_q     bigint;
    new_mult    bigint;
    merge_limit bigint;
    partners    bigint;
BEGIN
    SELECT 4 * count(*) + 16 INTO merge_limit FROM "pgivm_triangles"."t_tuples" l WHERE l."c" = beta;
    SELECT count(*) INTO partners FROM (SELECT FROM "pgivm_triangles"."r_tuples" mt WHERE mt."b" = alpha LIMIT merge_limit) p;
    IF partners < merge_limit THEN
        delta_q := "pgivm_triangles"."paths_s"(alpha, beta);
    ELSE
        SELECT coalesce(sum(l.mult * (SELECT mt.mult FROM "pgivm_triangles"."r_tuples" mt WHERE mt."a" = l."a" AND mt."b" = alpha)), 0)
          INTO delta_q
          FROM "pgivm_triangles"."t_tuples" l WHERE l."c" = beta;
    END IF;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + m * delta_q;
    END IF;
    INSERT INTO "pgivm_triangles"."s_tuples" AS p ("b", "c", mult) VALUES (alpha, beta, m)
        ON CONFLICT ("b", "c") DO UPDATE SET mult = p.mult + EXCLUDED.mult
        RETURNING mult INTO new_mult;
    IF new_mult = 0 THEN
        DELETE FROM "pgivm_triangles"."s_tuples" WHERE "b" = alpha AND "c" = beta;
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_s"(integer, integer, bigint) IS 'first-order IVM: the delta query for a single-tuple update to S';

-- sum_z L(beta, z) * M(z, alpha) as a merge join of two index-only range scans sorted by z.
CREATE FUNCTION "pgivm_triangles"."paths_s"(alpha integer, beta integer)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_mergejoin = on SET enable_nestloop = off SET enable_hashjoin = off SET enable_seqscan = off
AS $pgivm$
BEGIN
    RETURN (SELECT coalesce(sum(l.mult * mt.mult), 0)
              FROM "pgivm_triangles"."t_tuples" l JOIN "pgivm_triangles"."r_tuples" mt ON mt."a" = l."a"
             WHERE l."c" = beta AND mt."b" = alpha);
END;
$pgivm$;

-- Clear K after a TRUNCATE of its base table (DELETE, not TRUNCATE: see ivme/40_relation_clear.sql).
CREATE FUNCTION "pgivm_triangles"."clear_s"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."s_tuples";
END;
$pgivm$;

CREATE FUNCTION "pgivm_triangles"."apply_batch_s"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
-- The state is hot in memory: index probes cost about as much as sequential reads, so a small
-- batch is best served by index nested loops and only a large one by hash joins.
SET random_page_cost = 1.1
AS $pgivm$
DECLARE
    delta_q numeric;
BEGIN
    ANALYZE "pgivm_triangles"."s_delta";  -- index nested loops for a small batch, hash joins for a large one
    SELECT coalesce(sum(d.mult * l.mult * mt.mult), 0) INTO delta_q
      FROM "pgivm_triangles"."s_delta" d
      JOIN "pgivm_triangles"."t_tuples" l ON l."c" = d."c"
      JOIN "pgivm_triangles"."r_tuples" mt ON mt."a" = l."a" AND mt."b" = d."b";
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + delta_q::bigint;
    END IF;
    WITH changed AS (
        INSERT INTO "pgivm_triangles"."s_tuples" AS p ("b", "c", mult)
        SELECT "b", "c", mult FROM "pgivm_triangles"."s_delta"
        ON CONFLICT ("b", "c") DO UPDATE SET mult = p.mult + EXCLUDED.mult
        RETURNING p."b", p."c", p.mult)
    UPDATE "pgivm_triangles"."s_delta" d SET new_mult = c.mult FROM changed c WHERE d."b" = c."b" AND d."c" = c."c";
    DELETE FROM "pgivm_triangles"."s_tuples" p USING "pgivm_triangles"."s_delta" d WHERE d.new_mult = 0 AND p."b" = d."b" AND p."c" = d."c";
    DELETE FROM "pgivm_triangles"."s_delta";
END;
$pgivm$;

-- First-order IVM of one relation K(X,Y): the delta query, the merge, the clear, the batch path
-- (the tables are in 10_relation_tables.sql).

-- The loop is over L(beta, .), probing M; when M(., alpha) turns out short (counted, never past a
-- few times |L(beta, .)|) it is a merge of the two sorted lists instead: the same O(|L(beta, .)|)
-- bound with cheaper rows, as IVMε does it for its light parts.
CREATE FUNCTION "pgivm_triangles"."apply_t"(alpha integer, beta integer, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    delta_q     bigint;
    new_mult    bigint;
    merge_limit bigint;
    partners    bigint;
BEGIN
    SELECT 4 * count(*) + 16 INTO merge_limit FROM "pgivm_triangles"."r_tuples" l WHERE l."a" = beta;
    SELECT count(*) INTO partners FROM (SELECT FROM "pgivm_triangles"."s_tuples" mt WHERE mt."c" = alpha LIMIT merge_limit) p;
    IF partners < merge_limit THEN
        delta_q := "pgivm_triangles"."paths_t"(alpha, beta);
    ELSE
        SELECT coalesce(sum(l.mult * (SELECT mt.mult FROM "pgivm_triangles"."s_tuples" mt WHERE mt."b" = l."b" AND mt."c" = alpha)), 0)
          INTO delta_q
          FROM "pgivm_triangles"."r_tuples" l WHERE l."a" = beta;
    END IF;
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + m * delta_q;
    END IF;
    INSERT INTO "pgivm_triangles"."t_tuples" AS p ("c", "a", mult) VALUES (alpha, beta, m)
        ON CONFLICT ("c", "a") DO UPDATE SET mult = p.mult + EXCLUDED.mult
        RETURNING mult INTO new_mult;
    IF new_mult = 0 THEN
        DELETE FROM "pgivm_triangles"."t_tuples" WHERE "c" = alpha AND "a" = beta;
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_triangles"."apply_t"(integer, integer, bigint) IS 'first-order IVM: the delta query for a single-tuple update to T';

-- sum_z L(beta, z) * M(z, alpha) as a merge join of two index-only range scans sorted by z.
CREATE FUNCTION "pgivm_triangles"."paths_t"(alpha integer, beta integer)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_mergejoin = on SET enable_nestloop = off SET enable_hashjoin = off SET enable_seqscan = off
AS $pgivm$
BEGIN
    RETURN (SELECT coalesce(sum(l.mult * mt.mult), 0)
              FROM "pgivm_triangles"."r_tuples" l JOIN "pgivm_triangles"."s_tuples" mt ON mt."b" = l."b"
             WHERE l."a" = beta AND mt."c" = alpha);
END;
$pgivm$;

-- Clear K after a TRUNCATE of its base table (DELETE, not TRUNCATE: see ivme/40_relation_clear.sql).
CREATE FUNCTION "pgivm_triangles"."clear_t"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM "pgivm_triangles"."t_tuples";
END;
$pgivm$;

CREATE FUNCTION "pgivm_triangles"."apply_batch_t"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
-- The state is hot in memory: index probes cost about as much as sequential reads, so a small
-- batch is best served by index nested loops and only a large one by hash joins.
SET random_page_cost = 1.1
AS $pgivm$
DECLARE
    delta_q numeric;
BEGIN
    ANALYZE "pgivm_triangles"."t_delta";  -- index nested loops for a small batch, hash joins for a large one
    SELECT coalesce(sum(d.mult * l.mult * mt.mult), 0) INTO delta_q
      FROM "pgivm_triangles"."t_delta" d
      JOIN "pgivm_triangles"."r_tuples" l ON l."a" = d."a"
      JOIN "pgivm_triangles"."s_tuples" mt ON mt."b" = l."b" AND mt."c" = d."c";
    IF delta_q <> 0 THEN
        UPDATE "pgivm_triangles"."result" SET count = count + delta_q::bigint;
    END IF;
    WITH changed AS (
        INSERT INTO "pgivm_triangles"."t_tuples" AS p ("c", "a", mult)
        SELECT "c", "a", mult FROM "pgivm_triangles"."t_delta"
        ON CONFLICT ("c", "a") DO UPDATE SET mult = p.mult + EXCLUDED.mult
        RETURNING p."c", p."a", p.mult)
    UPDATE "pgivm_triangles"."t_delta" d SET new_mult = c.mult FROM changed c WHERE d."c" = c."c" AND d."a" = c."a";
    DELETE FROM "pgivm_triangles"."t_tuples" p USING "pgivm_triangles"."t_delta" d WHERE d.new_mult = 0 AND p."c" = d."c" AND p."a" = d."a";
    DELETE FROM "pgivm_triangles"."t_delta";
END;
$pgivm$;

-- The count from the copies, and the restart after a build or TRUNCATE.
CREATE FUNCTION "pgivm_triangles"."count_from_state"()
RETURNS bigint LANGUAGE sql SECURITY DEFINER STABLE
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
    SELECT coalesce(sum(r.mult * s.mult * t.mult), 0)::bigint
      FROM "pgivm_triangles"."r_tuples" r
      JOIN "pgivm_triangles"."s_tuples" s ON s.b = r.b
      JOIN "pgivm_triangles"."t_tuples" t ON t.c = s.c AND t.a = r.a
$pgivm$;

CREATE FUNCTION "pgivm_triangles"."restart"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
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
COMMENT ON FUNCTION "pgivm_triangles"."on_change_r"() IS 'pgivm view triangles: maintain the first-order IVM state for changes of public.r as R';

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
COMMENT ON FUNCTION "pgivm_triangles"."on_truncate_r"() IS 'pgivm view triangles: clear the first-order IVM state of public.r as R after TRUNCATE';

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
COMMENT ON FUNCTION "pgivm_triangles"."on_change_s"() IS 'pgivm view triangles: maintain the first-order IVM state for changes of public.s as S';

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
COMMENT ON FUNCTION "pgivm_triangles"."on_truncate_s"() IS 'pgivm view triangles: clear the first-order IVM state of public.s as S after TRUNCATE';

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
COMMENT ON FUNCTION "pgivm_triangles"."on_change_t"() IS 'pgivm view triangles: maintain the first-order IVM state for changes of public.t as T';

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
COMMENT ON FUNCTION "pgivm_triangles"."on_truncate_t"() IS 'pgivm view triangles: clear the first-order IVM state of public.t as T after TRUNCATE';

-- phase: build (5 statements)

-- The initial build of K from its base table, set at a time (see ivme/45_relation_build.sql).
INSERT INTO "pgivm_triangles"."r_tuples" ("a", "b", mult)
SELECT base."a", base."b", count(*)
  FROM "public"."r" base
 WHERE "base".tableoid IS NOT NULL AND base."a" IS NOT NULL AND base."b" IS NOT NULL
 GROUP BY 1, 2;

-- The initial build of K from its base table, set at a time (see ivme/45_relation_build.sql).
INSERT INTO "pgivm_triangles"."s_tuples" ("b", "c", mult)
SELECT base."b", base."c", count(*)
  FROM "public"."s" base
 WHERE "base".tableoid = 16385::pg_catalog.oid AND base."b" IS NOT NULL AND base."c" IS NOT NULL
 GROUP BY 1, 2;

-- The initial build of K from its base table, set at a time (see ivme/45_relation_build.sql).
INSERT INTO "pgivm_triangles"."t_tuples" ("c", "a", mult)
SELECT base."c", base."a", count(*)
  FROM "public"."t" base
 WHERE "base".tableoid = 16386::pg_catalog.oid AND base."c" IS NOT NULL AND base."a" IS NOT NULL
 GROUP BY 1, 2;

SELECT "pgivm_triangles"."restart"();

ANALYZE "pgivm_triangles"."r_tuples"; ANALYZE "pgivm_triangles"."s_tuples"; ANALYZE "pgivm_triangles"."t_tuples";

-- phase: capture (33 statements)

CREATE TRIGGER "pgivm_triangles_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "public"."r" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_triangles_insert" AFTER INSERT ON "public"."r" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_r"();

CREATE TRIGGER "pgivm_triangles_delete" AFTER DELETE ON "public"."r" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_r"();

CREATE TRIGGER "pgivm_triangles_update" AFTER UPDATE ON "public"."r" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_r"();

CREATE TRIGGER "pgivm_triangles_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON public.r_1 FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_triangles_insert" AFTER INSERT ON public.r_1 REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_r"();

CREATE TRIGGER "pgivm_triangles_delete" AFTER DELETE ON public.r_1 REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_r"();

CREATE TRIGGER "pgivm_triangles_update" AFTER UPDATE ON public.r_1 REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_r"();

CREATE TRIGGER "pgivm_triangles_truncate_rows" BEFORE TRUNCATE ON public.r_1 FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_truncate_rows_r"();

CREATE TRIGGER "pgivm_triangles_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON public.r_2 FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_triangles_insert" AFTER INSERT ON public.r_2 REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_r"();

CREATE TRIGGER "pgivm_triangles_delete" AFTER DELETE ON public.r_2 REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_r"();

CREATE TRIGGER "pgivm_triangles_update" AFTER UPDATE ON public.r_2 REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_r"();

CREATE TRIGGER "pgivm_triangles_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON public.r_2_1 FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_triangles_insert" AFTER INSERT ON public.r_2_1 REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_r"();

CREATE TRIGGER "pgivm_triangles_delete" AFTER DELETE ON public.r_2_1 REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_r"();

CREATE TRIGGER "pgivm_triangles_update" AFTER UPDATE ON public.r_2_1 REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_r"();

CREATE TRIGGER "pgivm_triangles_truncate_rows" BEFORE TRUNCATE ON public.r_2_1 FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_truncate_rows_r"();

CREATE TRIGGER "pgivm_triangles_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON public.r_2_2 FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_triangles_insert" AFTER INSERT ON public.r_2_2 REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_r"();

CREATE TRIGGER "pgivm_triangles_delete" AFTER DELETE ON public.r_2_2 REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_r"();

CREATE TRIGGER "pgivm_triangles_update" AFTER UPDATE ON public.r_2_2 REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_change_r"();

CREATE TRIGGER "pgivm_triangles_truncate_rows" BEFORE TRUNCATE ON public.r_2_2 FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_triangles"."on_truncate_rows_r"();

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

CREATE OR REPLACE VIEW "public"."triangles" AS SELECT count AS "count" FROM "pgivm_triangles"."result"; COMMENT ON VIEW "public"."triangles" IS 'pgivm: maintained by first-order IVM, state in schema pgivm_triangles. Definition: SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a';

REVOKE ALL ON ALL TABLES IN SCHEMA "pgivm_triangles" FROM PUBLIC; REVOKE ALL ON ALL FUNCTIONS IN SCHEMA "pgivm_triangles" FROM PUBLIC;
