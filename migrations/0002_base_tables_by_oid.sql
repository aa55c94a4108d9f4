-- pgivm catalog, version 2: base tables pinned by oid, and DDL on them checked.
--
-- A view's base tables are recorded once, by oid, with the columns it reads (by attribute number,
-- name and type) and the capture triggers it put on them. pgivm never looks a base table up by a
-- name again: renaming a table (or its schema) changes nothing, and an object put under the old
-- name is never read. pgivm_catalog.check_base_table() compares a base table with that record; `verify`
-- reports what it finds, and the DDL event triggers below refuse a command that breaks a view
-- (renaming, retyping or dropping a column it reads, dropping the table, disabling its triggers)
-- and give a new partition of a partitioned base table the view's triggers.

CREATE TABLE pgivm_catalog.base_tables (
    view_name   text NOT NULL REFERENCES pgivm_catalog.views (name) ON DELETE CASCADE,
    table_oid   oid NOT NULL,
    partitioned boolean NOT NULL,
    columns     jsonb NOT NULL,  -- [{"attnum": 1, "name": "a", "type": "integer"}, ...]: the columns the view reads
    triggers    jsonb NOT NULL,  -- [pgivm.capture.CaptureTrigger as JSON, ...]: its capture triggers
    PRIMARY KEY (view_name, table_oid)
);
CREATE INDEX ON pgivm_catalog.base_tables (table_oid);
COMMENT ON TABLE pgivm_catalog.base_tables IS 'pgivm: the base tables of each view, by oid, with the columns it reads and its capture triggers';

-- Views created by version 1 recorded their tables by name: pin them now. Their triggers are the
-- version 1 set (lock, insert, delete, update, truncate or refresh); `pgivm upgrade` reinstalls
-- them from the current templates.
INSERT INTO pgivm_catalog.base_tables (view_name, table_oid, partitioned, columns, triggers)
SELECT v.name, c.oid, c.relkind = 'p',
       (SELECT jsonb_agg(DISTINCT jsonb_build_object('attnum', a.attnum, 'name', a.attname,
                                                     'type', pg_catalog.format_type(a.atttypid, a.atttypmod)))
          FROM jsonb_array_elements(v.model -> 'atoms') x
          JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attname IN (x ->> 'first', x ->> 'second')
         WHERE x -> 'table' ->> 'name' = c.relname AND x -> 'table' ->> 'schema' = n.nspname),
       CASE WHEN v.strategy = 'recompute' THEN
            jsonb_build_array(jsonb_build_object(
                'name', 'pgivm_' || v.name || '_refresh', 'timing', 'AFTER',
                'events', jsonb_build_array('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE'),
                'function', jsonb_build_array(v.state_schema, 'refresh'),
                'old_table', false, 'new_table', false, 'scope', 'all'))
       ELSE
            (SELECT jsonb_agg(jsonb_build_object(
                        'name', 'pgivm_' || v.name || '_' || e.event, 'timing', e.timing, 'events', e.events,
                        'function', jsonb_build_array(v.state_schema, e.fn || '_' || letters.letters),
                        'old_table', e.old_table, 'new_table', e.new_table, 'scope', e.scope) ORDER BY e.ord)
               FROM (VALUES (1, 'lock', 'BEFORE', '["INSERT", "UPDATE", "DELETE", "TRUNCATE"]'::jsonb, 'on_statement', false, false, 'all'),
                            (2, 'insert', 'AFTER', '["INSERT"]', 'on_change', false, true, 'all'),
                            (3, 'delete', 'AFTER', '["DELETE"]', 'on_change', true, false, 'all'),
                            (4, 'update', 'AFTER', '["UPDATE"]', 'on_change', true, true, 'all'),
                            (5, 'truncate', 'AFTER', '["TRUNCATE"]', 'on_truncate', false, false, 'plain'))
                    AS e (ord, event, timing, events, fn, old_table, new_table, scope),
                    (SELECT string_agg(x ->> 'relation', '' ORDER BY x ->> 'relation') AS letters
                       FROM jsonb_array_elements(v.model -> 'atoms') x
                      WHERE x -> 'table' ->> 'name' = c.relname AND x -> 'table' ->> 'schema' = n.nspname) letters)
       END
  FROM pgivm_catalog.views v
  JOIN LATERAL (SELECT DISTINCT x -> 'table' ->> 'schema' AS schema_name, x -> 'table' ->> 'name' AS table_name
                  FROM jsonb_array_elements(v.model -> 'atoms') x) t ON true
  JOIN pg_catalog.pg_namespace n ON n.nspname = t.schema_name
  JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = t.table_name;


-- Does the capture trigger described by t belong on a relation of this kind? (pgivm.capture.CaptureTrigger.applies_to)
CREATE FUNCTION pgivm_catalog.trigger_applies(t jsonb, is_base boolean, partitioned boolean, leaf boolean)
RETURNS boolean LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE t ->> 'scope'
               WHEN 'all' THEN true
               WHEN 'plain' THEN is_base AND NOT partitioned
               WHEN 'leaf' THEN NOT is_base AND leaf
               ELSE (NOT is_base AND leaf) OR (is_base AND NOT partitioned)  -- 'rows'
           END
$$;


-- The CREATE TRIGGER statement for a capture trigger on a relation, built from the record's parts
-- (each checked against the few values it may take, names quoted), never from stored SQL text.
CREATE FUNCTION pgivm_catalog.trigger_sql(t jsonb, rel regclass)
RETURNS text LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    events text;
    referencing text := '';
BEGIN
    IF t ->> 'timing' NOT IN ('BEFORE', 'AFTER') THEN
        RAISE EXCEPTION 'pgivm: bad trigger timing %', t ->> 'timing';
    END IF;
    SELECT string_agg(e, ' OR ') INTO events FROM jsonb_array_elements_text(t -> 'events') e;
    IF events IS NULL OR EXISTS (SELECT 1 FROM jsonb_array_elements_text(t -> 'events') e
                                  WHERE e NOT IN ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE')) THEN
        RAISE EXCEPTION 'pgivm: bad trigger events %', t -> 'events';
    END IF;
    IF (t ->> 'old_table')::boolean OR (t ->> 'new_table')::boolean THEN
        referencing := ' REFERENCING'
            || CASE WHEN (t ->> 'old_table')::boolean THEN ' OLD TABLE AS old_rows' ELSE '' END
            || CASE WHEN (t ->> 'new_table')::boolean THEN ' NEW TABLE AS new_rows' ELSE '' END;
    END IF;
    RETURN format('CREATE TRIGGER %I %s %s ON %s%s FOR EACH STATEMENT EXECUTE FUNCTION %I.%I()',
                  t ->> 'name', t ->> 'timing', events, rel, referencing, t -> 'function' ->> 0, t -> 'function' ->> 1);
END;
$$;


-- Does a relation (with everything below it) hold any row? Read by the oid's name at this moment;
-- the query names tableoid, so a view under that name could not even be parsed, and row_security
-- is off (a policy is an error, not code that runs here).
CREATE FUNCTION pgivm_catalog.has_rows(rel regclass)
RETURNS boolean LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
SET row_security = off
AS $$
DECLARE
    found boolean;
BEGIN
    EXECUTE format('SELECT EXISTS (SELECT FROM %s t WHERE t.tableoid IS NOT NULL)', rel) INTO found;
    RETURN found;
END;
$$;


-- What is wrong with base table p_table of view p_view, compared with the catalog: one row per
-- problem, none when all is well. With p_repair (only the DDL event trigger, as the catalog's
-- owner), a new partition that holds no rows gets the view's capture triggers, and a detached one
-- that holds no rows loses them, instead of being reported.
CREATE FUNCTION pgivm_catalog.check_base_table(p_view text, p_table oid, p_repair boolean DEFAULT false)
RETURNS SETOF text LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    b        pgivm_catalog.base_tables%ROWTYPE;
    rel      record;
    col      jsonb;
    att      record;
    part     record;
    t        jsonb;
    missing  jsonb;
    tg       record;
BEGIN
    SELECT * INTO b FROM pgivm_catalog.base_tables WHERE view_name = p_view AND table_oid = p_table;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT c.oid::regclass AS name, c.relkind, c.relispartition, c.relrowsecurity INTO rel
      FROM pg_class c WHERE c.oid = p_table;
    IF NOT FOUND THEN
        RETURN NEXT format('base table %s of pgivm view %s no longer exists: drop the view (pgivm drop %s)', p_table, p_view, p_view);
        RETURN;
    END IF;
    IF rel.relkind <> (CASE WHEN b.partitioned THEN 'p' ELSE 'r' END) THEN
        RETURN NEXT format('%s, a base table of pgivm view %s, is no longer a %s', rel.name, p_view,
                           CASE WHEN b.partitioned THEN 'partitioned table' ELSE 'plain table' END);
    END IF;
    IF rel.relispartition THEN
        RETURN NEXT format('%s, a base table of pgivm view %s, became a partition: writes through its parent would not be maintained; '
                           'detach it, or drop the view first (pgivm drop %s)', rel.name, p_view, p_view);
    END IF;
    IF NOT b.partitioned AND EXISTS (SELECT 1 FROM pg_inherits WHERE inhrelid = p_table OR inhparent = p_table) THEN
        RETURN NEXT format('%s, a base table of pgivm view %s, takes part in table inheritance, which pgivm does not maintain: '
                           'undo the INHERIT, or drop the view first (pgivm drop %s)', rel.name, p_view, p_view);
    END IF;
    IF rel.relrowsecurity THEN
        RETURN NEXT format('%s, a base table of pgivm view %s, has row-level security enabled: pgivm must see every row; '
                           'disable it, or drop the view first (pgivm drop %s)', rel.name, p_view, p_view);
    END IF;

    FOR col IN SELECT * FROM jsonb_array_elements(b.columns) LOOP
        SELECT a.attname, format_type(a.atttypid, a.atttypmod) AS type_name, a.attisdropped INTO att
          FROM pg_attribute a WHERE a.attrelid = p_table AND a.attnum = (col ->> 'attnum')::int2;
        IF NOT FOUND OR att.attisdropped THEN
            RETURN NEXT format('column %s of %s, read by pgivm view %s, was dropped: drop the view first (pgivm drop %s)',
                               col ->> 'name', rel.name, p_view, p_view);
        ELSIF att.attname <> col ->> 'name' THEN
            RETURN NEXT format('column %s of %s, read by pgivm view %s, was renamed to %s: rename it back, or drop the view first (pgivm drop %s)',
                               col ->> 'name', rel.name, p_view, att.attname, p_view);
        ELSIF att.type_name <> col ->> 'type' THEN
            RETURN NEXT format('column %s of %s, read by pgivm view %s, changed type from %s to %s: drop the view first (pgivm drop %s)',
                               col ->> 'name', rel.name, p_view, col ->> 'type', att.type_name, p_view);
        END IF;
    END LOOP;

    -- Every relation of the base table (itself, and all its partitions) carries the triggers that
    -- belong on it, enabled.
    FOR part IN
        SELECT c.oid, c.oid::regclass AS name, c.relkind, c.relrowsecurity, c.oid = p_table AS is_base
          FROM pg_class c
         WHERE c.oid = p_table OR c.oid IN (SELECT relid FROM pg_partition_tree(p_table))
    LOOP
        IF NOT part.is_base AND part.relkind NOT IN ('r', 'p') THEN
            RETURN NEXT format('partition %s of %s (pgivm view %s) is not a table (relkind %s): pgivm cannot see writes to it; detach it',
                               part.name, rel.name, p_view, part.relkind);
            CONTINUE;
        END IF;
        IF NOT part.is_base AND part.relrowsecurity THEN
            RETURN NEXT format('partition %s of %s (pgivm view %s) has row-level security enabled: pgivm must see every row',
                               part.name, rel.name, p_view);
        END IF;
        SELECT jsonb_agg(x) INTO missing
          FROM jsonb_array_elements(b.triggers) x
         WHERE pgivm_catalog.trigger_applies(x, part.is_base, b.partitioned, part.relkind = 'r')
           AND NOT EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = part.oid AND g.tgname = x ->> 'name');
        IF missing IS NOT NULL THEN
            IF part.is_base THEN
                RETURN NEXT format('capture triggers of pgivm view %s are missing on %s: %s; drop the view (pgivm drop %s) and create it again',
                                   p_view, rel.name, (SELECT string_agg(x ->> 'name', ', ') FROM jsonb_array_elements(missing) x), p_view);
            ELSIF NOT p_repair THEN
                RETURN NEXT format('partition %s of %s has no capture triggers of pgivm view %s (the DDL event trigger installs them; '
                                   'it needs `pgivm init` run by a superuser)', part.name, rel.name, p_view);
            ELSIF pgivm_catalog.has_rows(part.oid) THEN
                RETURN NEXT format('partition %s was attached to %s with rows, which pgivm view %s would never see: '
                                   'attach it empty and insert its rows through %s', part.name, rel.name, p_view, rel.name);
            ELSE
                FOR t IN SELECT * FROM jsonb_array_elements(missing) LOOP
                    -- Only a SECURITY DEFINER function of the view's own state schema: it runs as its
                    -- owner, the view owner, whoever writes the partition.
                    IF NOT EXISTS (SELECT 1 FROM pg_proc p
                                     JOIN pg_namespace n ON n.oid = p.pronamespace
                                     JOIN pgivm_catalog.views v ON v.state_schema = n.nspname AND v.name = p_view
                                    WHERE n.nspname = t -> 'function' ->> 0 AND p.proname = t -> 'function' ->> 1
                                      AND p.prosecdef AND p.pronargs = 0) THEN
                        RETURN NEXT format('capture function %I.%I of pgivm view %s is missing: drop the view (pgivm drop %s) and create it again',
                                           t -> 'function' ->> 0, t -> 'function' ->> 1, p_view, p_view);
                        CONTINUE;
                    END IF;
                    EXECUTE pgivm_catalog.trigger_sql(t, part.oid);
                END LOOP;
            END IF;
        END IF;
        FOR tg IN
            SELECT g.tgname FROM pg_trigger g
             WHERE g.tgrelid = part.oid AND g.tgenabled NOT IN ('O', 'A')
               AND g.tgname IN (SELECT x ->> 'name' FROM jsonb_array_elements(b.triggers) x)
        LOOP
            RETURN NEXT format('trigger %s on %s is disabled, so pgivm view %s misses changes: ALTER TABLE %s ENABLE TRIGGER %I',
                               tg.tgname, part.name, p_view, part.name, tg.tgname);
        END LOOP;
    END LOOP;
END;
$$;


-- Tables that still carry capture triggers of view p_view but belong to none of its base tables:
-- partitions detached since. One that holds no rows loses the triggers (with p_repair); one that
-- does took rows out of the view that pgivm never saw leave.
CREATE FUNCTION pgivm_catalog.check_detached(p_view text, p_repair boolean DEFAULT false)
RETURNS SETOF text LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    orphan record;
BEGIN
    FOR orphan IN
        SELECT g.tgrelid::regclass AS name, g.tgrelid, array_agg(g.tgname) AS names
          FROM pg_trigger g
          JOIN pg_proc p ON p.oid = g.tgfoid
          JOIN pg_namespace n ON n.oid = p.pronamespace
          JOIN pgivm_catalog.views v ON v.state_schema = n.nspname AND v.name = p_view
         WHERE g.tgname LIKE 'pgivm\_%'
           AND NOT EXISTS (SELECT 1 FROM pgivm_catalog.base_tables b
                            WHERE b.view_name = p_view
                              AND (b.table_oid = g.tgrelid OR g.tgrelid IN (SELECT relid FROM pg_partition_tree(b.table_oid))))
         GROUP BY g.tgrelid
    LOOP
        IF NOT p_repair THEN
            RETURN NEXT format('%s carries capture triggers of pgivm view %s but is not part of its base tables', orphan.name, p_view);
        ELSIF pgivm_catalog.has_rows(orphan.tgrelid) THEN
            RETURN NEXT format('partition %s was detached with rows, which would leave pgivm view %s without it noticing: '
                               'delete them through the parent table first, then detach it', orphan.name, p_view);
        ELSE
            EXECUTE (SELECT string_agg(format('DROP TRIGGER %I ON %s', t, orphan.name), '; ') FROM unnest(orphan.names) t);
        END IF;
    END LOOP;
END;
$$;


-- The DDL event triggers. They run as the catalog's owner (SECURITY DEFINER, which requires the
-- superuser that creates event triggers), read only the catalogs and pgivm's own tables, and
-- either refuse the command with one line naming the view and what to do, or repair partitions.
CREATE FUNCTION pgivm_catalog.on_ddl_command_end()
RETURNS event_trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    affected record;
    problem  text;
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
    LOOP
        FOR problem IN
            SELECT * FROM pgivm_catalog.check_base_table(affected.view_name, affected.table_oid, true)
            UNION ALL
            SELECT * FROM pgivm_catalog.check_detached(affected.view_name, true)
        LOOP
            RAISE EXCEPTION 'pgivm: %', problem USING ERRCODE = 'object_in_use';
        END LOOP;
    END LOOP;
END;
$$;

CREATE FUNCTION pgivm_catalog.on_sql_drop()
RETURNS event_trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    dropped record;
BEGIN
    FOR dropped IN
        SELECT d.object_type, d.object_identity, d.objsubid, b.view_name, b.columns
          FROM pg_event_trigger_dropped_objects() d
          JOIN pgivm_catalog.base_tables b ON d.classid = 'pg_class'::regclass AND d.objid = b.table_oid
    LOOP
        IF dropped.objsubid = 0 THEN
            RAISE EXCEPTION 'pgivm: % is a base table of pgivm view %: drop the view first (pgivm drop %)',
                dropped.object_identity, dropped.view_name, dropped.view_name USING ERRCODE = 'dependent_objects_still_exist';
        ELSIF EXISTS (SELECT 1 FROM jsonb_array_elements(dropped.columns) c WHERE (c ->> 'attnum')::int = dropped.objsubid) THEN
            RAISE EXCEPTION 'pgivm: column % is read by pgivm view %: drop the view first (pgivm drop %)',
                dropped.object_identity, dropped.view_name, dropped.view_name USING ERRCODE = 'dependent_objects_still_exist';
        END IF;
    END LOOP;
    -- A capture trigger dropped while its view is still in the catalog: by hand, with the view's
    -- state schema, or with its table (a partition, whose rows would leave the view unseen). The
    -- one drop allowed is of the triggers of a table that is no longer part of the view (an empty
    -- detached partition, which pgivm_catalog.check_detached() cleans up).
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

-- Event triggers need a superuser: anyone else gets the catalog without them (and `pgivm init`
-- says so); `verify` still reports every problem pgivm_catalog.check_base_table() finds.
DO $$
BEGIN
    IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        CREATE EVENT TRIGGER pgivm_ddl_command_end ON ddl_command_end EXECUTE FUNCTION pgivm_catalog.on_ddl_command_end();
        CREATE EVENT TRIGGER pgivm_sql_drop ON sql_drop EXECUTE FUNCTION pgivm_catalog.on_sql_drop();
    END IF;
END;
$$;

-- The stored query model names each atom's table as it was written; add the oid it was pinned to.
UPDATE pgivm_catalog.views v
   SET model = jsonb_set(v.model, '{atoms}', (
       SELECT jsonb_agg(jsonb_set(x, '{table,oid}',
                        to_jsonb(pg_catalog.to_regclass(format('%I.%I', x -> 'table' ->> 'schema', x -> 'table' ->> 'name'))::oid::int8))
                        ORDER BY i)
         FROM jsonb_array_elements(v.model -> 'atoms') WITH ORDINALITY a (x, i)));
