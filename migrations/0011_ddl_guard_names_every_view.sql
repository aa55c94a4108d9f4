-- The DDL guard named one view where a change breaks several (issue 25): renaming a column two
-- views read said "read by pgivm view v" and nothing of w, so the user dropped v, tried again and
-- was refused again. Both event triggers now gather every problem of every view before raising:
-- the message is the first problem, then the other views' names when there are any, and
-- DETAIL lists every problem, one per line. Nothing else changes (same checks, same order).

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
        SELECT DISTINCT b.view_name, b.table_oid
          FROM pg_event_trigger_ddl_commands() cmd
          JOIN pgivm_catalog.base_tables b
            ON (cmd.classid = 'pg_class'::regclass
                AND (b.table_oid = cmd.objid
                     OR b.table_oid IN (SELECT relid FROM pg_partition_ancestors(cmd.objid))
                     OR b.table_oid IN (SELECT relid FROM pg_partition_tree(cmd.objid))
                     OR b.table_oid IN (SELECT inhparent FROM pg_inherits WHERE inhrelid = cmd.objid)
                     OR b.table_oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = cmd.objid)))
            OR (cmd.classid = 'pg_trigger'::regclass AND cmd.command_tag = 'ALTER TRIGGER'  -- not our own CREATE TRIGGER
                AND EXISTS (SELECT 1 FROM pg_trigger g WHERE g.oid = cmd.objid
                               AND (g.tgrelid = b.table_oid OR g.tgrelid IN (SELECT relid FROM pg_partition_tree(b.table_oid)))))
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
        WITH cmd AS (
            -- the relation a command changed: itself, or the table of a trigger, rule or policy
            SELECT c.classid, c.objid, c.schema_name,
                   coalesce(CASE WHEN c.classid = 'pg_class'::regclass THEN c.objid END,
                            (SELECT g.tgrelid FROM pg_trigger g WHERE c.classid = 'pg_trigger'::regclass AND g.oid = c.objid),
                            (SELECT w.ev_class FROM pg_rewrite w WHERE c.classid = 'pg_rewrite'::regclass AND w.oid = c.objid),
                            (SELECT p.polrelid FROM pg_policy p WHERE c.classid = 'pg_policy'::regclass AND p.oid = c.objid)) AS rel
              FROM pg_event_trigger_ddl_commands() c)
        SELECT DISTINCT v.name, cmd.objid
          FROM cmd
          JOIN pgivm_catalog.views v
            ON cmd.schema_name = v.state_schema
            OR (SELECT n.nspname FROM pg_class r JOIN pg_namespace n ON n.oid = r.relnamespace WHERE r.oid = cmd.rel) = v.state_schema
            OR cmd.rel IN (SELECT to_regclass(format('%I.%I', o ->> 'schema', o ->> 'name'))
                             FROM jsonb_array_elements(v.objects) o WHERE o ->> 'kind' = 'view')
    LOOP
        FOR problem IN SELECT * FROM pgivm_catalog.state_problems(affected.name, affected.objid) LOOP
            RAISE EXCEPTION 'pgivm: %', problem USING ERRCODE = 'insufficient_privilege',
                HINT = 'The state of a pgivm view is read and called by other roles: pgivm keeps it safe for them.';
        END LOOP;
    END LOOP;
END;
$$;

-- A table or column dropped: one error naming every view that reads it.
CREATE OR REPLACE FUNCTION pgivm_catalog.on_sql_drop()
RETURNS event_trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off  -- as 0006 set it on every catalog function (CREATE OR REPLACE resets it)
AS $$
DECLARE
    dropped record;
BEGIN
    FOR dropped IN
        SELECT d.object_identity, d.objsubid,
               array_agg(b.view_name ORDER BY b.view_name) AS views
          FROM pg_event_trigger_dropped_objects() d
          JOIN pgivm_catalog.base_tables b ON d.classid = 'pg_class'::regclass AND d.objid = b.table_oid
         WHERE d.objsubid = 0
            OR EXISTS (SELECT 1 FROM jsonb_array_elements(b.columns) c WHERE (c ->> 'attnum')::int = d.objsubid)
         GROUP BY d.object_identity, d.objsubid
         ORDER BY d.objsubid, d.object_identity
    LOOP
        RAISE EXCEPTION 'pgivm: % % %: drop % first (%)',
            CASE WHEN dropped.objsubid = 0 THEN '' ELSE 'column ' END || dropped.object_identity,
            CASE WHEN dropped.objsubid = 0 THEN 'is a base table of' ELSE 'is read by' END,
            CASE WHEN cardinality(dropped.views) = 1 THEN 'pgivm view ' ELSE 'pgivm views ' END || array_to_string(dropped.views, ', '),
            CASE WHEN cardinality(dropped.views) = 1 THEN 'the view' ELSE 'them' END,
            (SELECT string_agg(format('pgivm drop %s', v), '; ') FROM unnest(dropped.views) v)
            USING ERRCODE = 'dependent_objects_still_exist';
    END LOOP;
    -- A capture trigger dropped while its view is still in the catalog (unchanged from 0005).
    FOR dropped IN
        SELECT DISTINCT d.object_identity, b.view_name,
               substr(d.object_identity, length(quote_ident(x ->> 'name')) + 5) AS table_identity
          FROM pg_event_trigger_dropped_objects() d
          JOIN pgivm_catalog.base_tables b ON d.object_type = 'trigger'
          JOIN LATERAL jsonb_array_elements(b.triggers) x
            ON starts_with(d.object_identity, quote_ident(x ->> 'name') || ' on ')
    LOOP
        IF EXISTS (SELECT 1 FROM pg_event_trigger_dropped_objects() t
                    WHERE t.object_type = 'table' AND t.object_identity = dropped.table_identity) THEN
            RAISE EXCEPTION 'pgivm: dropping % would take rows out of pgivm view % unseen: empty it and detach it first, '
                            'or drop the view first (pgivm drop %)', dropped.table_identity, dropped.view_name, dropped.view_name
                USING ERRCODE = 'dependent_objects_still_exist';
        END IF;
        IF EXISTS (SELECT 1 FROM pgivm_catalog.base_tables b
                    WHERE b.view_name = dropped.view_name
                      AND (b.table_oid = pg_catalog.to_regclass(dropped.table_identity)
                           OR pg_catalog.to_regclass(dropped.table_identity) IN (SELECT relid FROM pg_partition_tree(b.table_oid)))) THEN
            RAISE EXCEPTION 'pgivm: dropping % would leave pgivm view % unmaintained: drop the view first (pgivm drop %)',
                dropped.object_identity, dropped.view_name, dropped.view_name USING ERRCODE = 'dependent_objects_still_exist';
        END IF;
    END LOOP;
END;
$$;
