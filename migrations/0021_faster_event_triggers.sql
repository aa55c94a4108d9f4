-- The event triggers cost more than the rest of a create: every CREATE FUNCTION of a state ran
-- on_trust_changed, which scanned every function of the database (3,500 in an empty one) with
-- a subquery per function; every DDL command ran on_ddl_command_end, which took each pair of a
-- command and a base table (or a view of the catalog) through subqueries of its own. Measured on
-- a triangle count's create and drop: 115 ms and 72 ms of about 400. Same checks, same results
-- and messages; only how the rows are found changes:
-- - on_trust_changed finds a state schema's functions through pg_depend's index on the schema:
--   PostgreSQL records that dependency for every function outside its pinned schemas (at its
--   creation, and again when ALTER FUNCTION or ALTER EXTENSION moves it), and a state schema is
--   never pinned; only a superuser editing pg_depend by hand could hide one (pronamespace is
--   checked too);
-- - on_ddl_command_end finds each command's related relations once (partition ancestors and
--   tree, inheritance parents and children) and matches base tables by equality; the relation
--   of a command, its schema and the catalog's shown views are looked up once, not per pair.

CREATE OR REPLACE FUNCTION pgivm_catalog.on_ddl_command_end()
RETURNS event_trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off  -- as 0006 set it on every catalog function (CREATE OR REPLACE resets it)
AS $$
DECLARE
    affected record;
    problem  text;
    problems text[] := '{}';
    views    text[] := '{}';  -- the views with a problem, in the order found
    checked  text[] := '{}';  -- the views whose detached partitions were looked at
BEGIN
    FOR affected IN
        WITH cmd AS MATERIALIZED (SELECT c.classid, c.objid, c.command_tag FROM pg_event_trigger_ddl_commands() c),
        -- each relation a command changed, with its partition ancestors and tree and its
        -- inheritance parents and children: found once per command, then matched by equality
        related(table_oid) AS (
            SELECT objid FROM cmd WHERE classid = 'pg_class'::regclass
            UNION SELECT a.relid FROM cmd, pg_partition_ancestors(cmd.objid) a WHERE cmd.classid = 'pg_class'::regclass
            UNION SELECT t.relid FROM cmd, pg_partition_tree(cmd.objid) t WHERE cmd.classid = 'pg_class'::regclass
            UNION SELECT i.inhparent FROM cmd JOIN pg_inherits i ON i.inhrelid = cmd.objid WHERE cmd.classid = 'pg_class'::regclass
            UNION SELECT i.inhrelid FROM cmd JOIN pg_inherits i ON i.inhparent = cmd.objid WHERE cmd.classid = 'pg_class'::regclass)
        SELECT DISTINCT b.view_name, b.table_oid
          FROM pgivm_catalog.base_tables b
         WHERE b.table_oid IN (SELECT table_oid FROM related)
            OR EXISTS (SELECT FROM cmd JOIN pg_trigger g ON g.oid = cmd.objid
                        WHERE cmd.classid = 'pg_trigger'::regclass AND cmd.command_tag = 'ALTER TRIGGER'  -- not our own CREATE TRIGGER
                          AND (g.tgrelid = b.table_oid OR g.tgrelid IN (SELECT relid FROM pg_partition_tree(b.table_oid))))
         ORDER BY b.view_name, b.table_oid
    LOOP
        FOR problem IN
            SELECT * FROM pgivm_catalog.check_base_table(affected.view_name, affected.table_oid, true)
            UNION ALL  -- once per view, not per table of it
            SELECT * FROM pgivm_catalog.check_detached(affected.view_name, true) WHERE NOT affected.view_name = ANY (checked)
        LOOP
            problems := problems || problem;
            IF NOT affected.view_name = ANY (views) THEN
                views := views || affected.view_name;
            END IF;
        END LOOP;
        checked := checked || affected.view_name;
    END LOOP;
    IF cardinality(problems) > 0 THEN
        RAISE EXCEPTION 'pgivm: %', problems[1] || CASE WHEN cardinality(views) > 1
                THEN format('; it breaks pgivm view%s %s too (see DETAIL)',
                            CASE WHEN cardinality(views) > 2 THEN 's' ELSE '' END, array_to_string(views[2:], ', ')) ELSE '' END
            USING ERRCODE = 'object_in_use', DETAIL = array_to_string(problems, E'\n');
    END IF;
    FOR affected IN
        WITH cmd AS MATERIALIZED (
            -- the relation a command changed: itself, or the table of a trigger, rule or policy,
            -- and the schema that relation is in
            SELECT c.objid, c.schema_name, rel.oid AS rel, n.nspname AS rel_schema
              FROM pg_event_trigger_ddl_commands() c
              LEFT JOIN LATERAL (
                  SELECT coalesce(CASE WHEN c.classid = 'pg_class'::regclass THEN c.objid END,
                                  (SELECT g.tgrelid FROM pg_trigger g WHERE c.classid = 'pg_trigger'::regclass AND g.oid = c.objid),
                                  (SELECT w.ev_class FROM pg_rewrite w WHERE c.classid = 'pg_rewrite'::regclass AND w.oid = c.objid),
                                  (SELECT p.polrelid FROM pg_policy p WHERE c.classid = 'pg_policy'::regclass AND p.oid = c.objid)) AS oid
              ) rel ON true
              LEFT JOIN pg_class r ON r.oid = rel.oid
              LEFT JOIN pg_namespace n ON n.oid = r.relnamespace),
        -- the views each pgivm view shows in the user's schema (looked up once, not per command)
        shown AS MATERIALIZED (
            SELECT v.name, to_regclass(format('%I.%I', o ->> 'schema', o ->> 'name')) AS rel
              FROM pgivm_catalog.views v, jsonb_array_elements(v.objects) o WHERE o ->> 'kind' = 'view')
        SELECT DISTINCT v.name, cmd.objid
          FROM cmd
          JOIN pgivm_catalog.views v
            ON cmd.schema_name = v.state_schema
            OR cmd.rel_schema = v.state_schema
            OR EXISTS (SELECT FROM shown s WHERE s.name = v.name AND s.rel = cmd.rel)
    LOOP
        FOR problem IN SELECT * FROM pgivm_catalog.state_problems(affected.name, affected.objid) LOOP
            RAISE EXCEPTION 'pgivm: %', problem USING ERRCODE = 'insufficient_privilege',
                HINT = 'The state of a pgivm view is read and called by other roles: pgivm keeps it safe for them.';
        END LOOP;
    END LOOP;
END;
$$;

CREATE OR REPLACE FUNCTION pgivm_catalog.on_trust_changed()
RETURNS event_trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT v.name, p.oid::regprocedure AS f, pgivm_catalog.path_problem(p.proconfig) AS problem
               FROM pgivm_catalog.views v
               JOIN pg_namespace n ON n.nspname = v.state_schema
               -- a schema's functions through their dependency on it (pg_depend's index), not a
               -- scan of every function of the database
               JOIN pg_depend d ON d.refclassid = 'pg_namespace'::regclass AND d.refobjid = n.oid
                               AND d.classid = 'pg_proc'::regclass
               JOIN pg_proc p ON p.oid = d.objid AND p.pronamespace = n.oid
              WHERE EXISTS (SELECT FROM unnest(p.proconfig) c  -- a path widened by an extension's schema
                             WHERE starts_with(c, 'search_path=pg_catalog, ') AND c <> 'search_path=pg_catalog, pg_temp')
              ORDER BY v.name, p.oid LOOP
        CONTINUE WHEN r.problem IS NULL;
        RAISE EXCEPTION 'pgivm: function % of pgivm view % %', r.f, r.name, r.problem
            USING ERRCODE = 'insufficient_privilege',
                  HINT = format('pgivm view %s compares values with operators found there: undo the change, or drop the view first (pgivm drop %s)', r.name, r.name);
    END LOOP;
END;
$$;

-- The components of the tables' write graph, computed once a call (they were computed twice: for
-- the covers that go, then for the ones that stay or come; the two writes never touch one row).
CREATE OR REPLACE FUNCTION pgivm_catalog.recompute_covers(p_tables oid[])
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
BEGIN
    LOCK TABLE pgivm_catalog.write_covers IN EXCLUSIVE MODE;
    INSERT INTO pgivm_catalog.write_locks (table_oid)
    SELECT DISTINCT b.table_oid FROM pgivm_catalog.base_tables b WHERE b.table_oid = ANY (p_tables)
    ON CONFLICT DO NOTHING;
    WITH c AS MATERIALIZED (SELECT * FROM pgivm_catalog.table_components()),
    gone AS (DELETE FROM pgivm_catalog.write_covers w WHERE NOT EXISTS (SELECT FROM c WHERE c.table_oid = w.table_oid))
    INSERT INTO pgivm_catalog.write_covers (table_oid, covers)
    SELECT c.table_oid, c.covers FROM c
    ON CONFLICT (table_oid) DO UPDATE SET covers = EXCLUDED.covers
     WHERE pgivm_catalog.write_covers.covers IS DISTINCT FROM EXCLUDED.covers;
END;
$$;
