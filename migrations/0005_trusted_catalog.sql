-- pgivm catalog, version 5: a catalog every role can trust, the locks writers take, and the worker.
--
-- * Schema pgivm_catalog (pg_ivm installs itself into a schema named pgivm; the runner renamed
--   the catalog of pgivm's earlier versions before version 1 ran, and creates this schema itself,
--   refusing one it did not make).
-- * Only the catalog's owner writes its tables. Other roles record, change and forget views
--   through the SECURITY DEFINER functions below, which check what they are told against the
--   system catalogs: each view names its owner (the owner of its state schema), and a session
--   changes only the rows of views whose owner it is or belongs to. So the catalog holds no row
--   that a superuser's command could be led astray by (a state schema named after another
--   schema, objects to drop that are not the view's, triggers on tables the owner may not touch).
-- * state_problems() and pin_state(): what must hold of a view's state before any role other
--   than its owner reads it or calls into it (every function SECURITY DEFINER and the owner's,
--   so that whoever calls it runs it with the owner's rights, never the other way round; no
--   trigger, rule or expression that could run code outside the state with the reader's rights).
--   pin_state() also locks what it checked until the transaction ends.
-- * write_locks, write_covers and lock_writes(): the locks a writing statement takes before it
--   changes a row, in one order: the base tables of every immediate view over the table written.
--   Views over shared tables then serialize their writers on the same rows instead of on a lock
--   per view taken as each view's trigger fires (two writers took two views' locks in opposite
--   orders and deadlocked).
-- * worker: the one `pgivm worker` serving the database, registered by a role that may
--   (superusers, the catalog's owner, roles it grants EXECUTE on register_worker), and alive.

-- --- ownership of views ---------------------------------------------------------------------------

ALTER TABLE pgivm_catalog.views ADD COLUMN owner oid;
UPDATE pgivm_catalog.views v
   SET owner = coalesce((SELECT n.nspowner FROM pg_catalog.pg_namespace n WHERE n.nspname = v.state_schema),
                        (SELECT n.nspowner FROM pg_catalog.pg_namespace n WHERE n.nspname = 'pgivm_catalog'));
ALTER TABLE pgivm_catalog.views ALTER COLUMN owner SET NOT NULL;
COMMENT ON COLUMN pgivm_catalog.views.owner IS 'the role that owns the view''s state schema and every object of the view';


-- Raise unless the session acts for role p_owner (is it, or belongs to it). SECURITY DEFINER
-- functions see the session user, not their caller; a session can only SET ROLE to roles it
-- belongs to, so this is what the caller could do itself.
CREATE FUNCTION pgivm_catalog.check_acting_for(p_owner oid, p_what text)
RETURNS void LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT pg_has_role(session_user, p_owner, 'MEMBER') THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = format('pgivm: %s belongs to role %s; session user %s may not change it', p_what, p_owner::regrole, session_user),
            HINT = 'Run the command as the view''s owner or as a superuser.';
    END IF;
END;
$$;


-- The objects a view may list for `pgivm drop`: its view and stale view, its state schema.
CREATE FUNCTION pgivm_catalog.check_objects(p_name text, p_view_schema text, p_objects jsonb)
RETURNS void LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF jsonb_typeof(p_objects) <> 'array' OR EXISTS (
        SELECT FROM jsonb_array_elements(p_objects) o
         WHERE NOT ((o ->> 'kind' = 'view' AND o ->> 'schema' = p_view_schema AND o ->> 'name' IN (p_name, p_name || '_stale'))
                    OR (o ->> 'kind' = 'schema' AND o ->> 'name' = 'pgivm_' || p_name))) THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('pgivm: view %s may only list its own view, stale view and state schema as objects', p_name);
    END IF;
END;
$$;


-- A new view's state schema, pgivm_<name>, owned by p_owner: so that a role without CREATE on the
-- database can keep views (CREATE on the schema of its view is what it needs, as for any view).
CREATE FUNCTION pgivm_catalog.create_state_schema(p_name text, p_owner oid, p_view_schema text)
RETURNS text LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    state text := 'pgivm_' || p_name;
BEGIN
    PERFORM pgivm_catalog.check_acting_for(p_owner, format('a view of role %s', p_owner::regrole));
    IF p_name IS NULL OR length(p_name) = 0 OR octet_length(p_name) > 40 OR p_name ~ '[\x01-\x1f]' THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_name', MESSAGE = format('pgivm: invalid view name %L', p_name);
    END IF;
    IF NOT has_schema_privilege(p_owner, p_view_schema, 'CREATE') THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = format('pgivm: role %s may not create objects in schema %I', p_owner::regrole, p_view_schema),
            HINT = format('GRANT CREATE ON SCHEMA %I TO %s, or choose another schema.', p_view_schema, p_owner::regrole);
    END IF;
    EXECUTE format('CREATE SCHEMA %I AUTHORIZATION %s', state, p_owner::regrole);
    RETURN state;
END;
$$;


CREATE FUNCTION pgivm_catalog.record_view(p_name text, p_owner oid, p_view_schema text, p_system text, p_definition text,
                                          p_model jsonb, p_params jsonb, p_model_version integer,
                                          p_template_version text, p_objects jsonb)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM pgivm_catalog.check_acting_for(p_owner, format('view %s', p_name));
    IF NOT EXISTS (SELECT FROM pg_namespace n WHERE n.nspname = 'pgivm_' || p_name AND n.nspowner = p_owner) THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = format('pgivm: schema %I does not exist or does not belong to role %s', 'pgivm_' || p_name, p_owner::regrole);
    END IF;
    IF NOT EXISTS (SELECT FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname = p_view_schema AND c.relname = p_name AND c.relkind = 'v' AND c.relowner = p_owner) THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = format('pgivm: view %I.%I does not exist or does not belong to role %s', p_view_schema, p_name, p_owner::regrole);
    END IF;
    PERFORM pgivm_catalog.check_objects(p_name, p_view_schema, p_objects);
    INSERT INTO pgivm_catalog.views (name, view_schema, state_schema, system, definition, model, params, model_version,
                                     template_version, objects, owner)
    VALUES (p_name, p_view_schema, 'pgivm_' || p_name, p_system, p_definition, p_model, p_params, p_model_version,
            p_template_version, p_objects, p_owner);
END;
$$;


CREATE FUNCTION pgivm_catalog.owner_of(p_name text)
RETURNS oid LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    owner_oid oid;
BEGIN
    SELECT v.owner INTO owner_oid FROM pgivm_catalog.views v WHERE v.name = p_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'undefined_object', MESSAGE = format('no pgivm view named %s', p_name);
    END IF;
    RETURN owner_oid;
END;
$$;


-- --- the locks writers take ----------------------------------------------------------------------

CREATE TABLE pgivm_catalog.write_locks (
    table_oid oid PRIMARY KEY  -- a base table of some view: its row is the lock (never updated)
);
COMMENT ON TABLE pgivm_catalog.write_locks IS 'pgivm: one row per base table, locked by writing statements (lock_writes)';

CREATE TABLE pgivm_catalog.write_covers (
    table_oid oid PRIMARY KEY,
    covers    oid[] NOT NULL  -- the base tables of every immediate view over this table, in oid order
);
COMMENT ON TABLE pgivm_catalog.write_covers IS 'pgivm: which write_locks rows a statement writing a base table locks';

-- Recompute write_covers for these tables (the catalog's write functions call it: the caller
-- holds the tables locked against writers, so no writer reads a half-made set).
CREATE FUNCTION pgivm_catalog.recompute_covers(p_tables oid[])
RETURNS void LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO pgivm_catalog.write_locks (table_oid)
    SELECT DISTINCT b.table_oid FROM pgivm_catalog.base_tables b WHERE b.table_oid = ANY (p_tables)
    ON CONFLICT DO NOTHING;
    DELETE FROM pgivm_catalog.write_covers WHERE table_oid = ANY (p_tables);
    INSERT INTO pgivm_catalog.write_covers (table_oid, covers)
    SELECT b1.table_oid, array_agg(DISTINCT b2.table_oid ORDER BY b2.table_oid)
      FROM pgivm_catalog.base_tables b1
      JOIN pgivm_catalog.views v ON v.name = b1.view_name AND v.params ->> 'refresh' IS DISTINCT FROM 'deferred'
      JOIN pgivm_catalog.base_tables b2 ON b2.view_name = b1.view_name
     WHERE b1.table_oid = ANY (p_tables)
     GROUP BY b1.table_oid;
$$;

-- The BEFORE statement trigger of every view on its base tables (and partitions). A trigger
-- function, so it runs only for a statement that writes the table it fires on: no session can
-- take these locks otherwise, and nobody but the catalog's owner may lock write_locks rows.
-- Immediate views need their writers serialized (a delta joins the other tables' state); the
-- rows of all their tables are locked at the first statement, in one order, so a transaction
-- that goes on to write another of them already holds what it needs. Deferred views' writers
-- only append to logs, and take nothing here.
CREATE FUNCTION pgivm_catalog.lock_writes()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
    covered oid[];
BEGIN
    SELECT w.covers INTO covered FROM pgivm_catalog.write_covers w WHERE w.table_oid = TG_RELID;
    IF NOT FOUND THEN  -- a partition: its base table is one of its ancestors
        SELECT w.covers INTO covered
          FROM pg_catalog.pg_partition_ancestors(TG_RELID) a JOIN pgivm_catalog.write_covers w ON w.table_oid = a.relid
         LIMIT 1;
    END IF;
    IF covered IS NOT NULL THEN
        PERFORM FROM pgivm_catalog.write_locks l WHERE l.table_oid = ANY (covered) ORDER BY l.table_oid FOR NO KEY UPDATE;
    END IF;
    RETURN NULL;
END;
$$;

INSERT INTO pgivm_catalog.write_locks (table_oid) SELECT DISTINCT table_oid FROM pgivm_catalog.base_tables ON CONFLICT DO NOTHING;
SELECT pgivm_catalog.recompute_covers(array_agg(DISTINCT table_oid)) FROM pgivm_catalog.base_tables;


CREATE FUNCTION pgivm_catalog.record_base_table(p_view text, p_table oid, p_partitioned boolean, p_columns jsonb,
                                                p_triggers jsonb)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v pgivm_catalog.views%ROWTYPE;
    t jsonb;
BEGIN
    SELECT * INTO v FROM pgivm_catalog.views WHERE name = p_view;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'undefined_object', MESSAGE = format('no pgivm view named %s', p_view);
    END IF;
    PERFORM pgivm_catalog.check_acting_for(v.owner, format('view %s', p_view));
    IF NOT has_table_privilege(v.owner, p_table, 'SELECT') THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = format('pgivm: role %s may not read table %s', v.owner::regrole, p_table::regclass);
    END IF;
    IF p_partitioned IS DISTINCT FROM (SELECT c.relkind = 'p' FROM pg_class c WHERE c.oid = p_table) THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value', MESSAGE = format('pgivm: %s is not as described', p_table::regclass);
    END IF;
    FOR t IN SELECT * FROM jsonb_array_elements(p_triggers) LOOP
        -- pgivm's names, pgivm's functions, and present on the table (created by someone who could)
        IF t ->> 'name' NOT IN (SELECT 'pgivm_' || p_view || '_' || kind
                                  FROM unnest(ARRAY['lock', 'insert', 'delete', 'update', 'truncate', 'truncate_rows',
                                                    'refresh']) AS kind)
           OR NOT (t -> 'function' = jsonb_build_array(v.state_schema, t -> 'function' ->> 1)
                   OR t -> 'function' = '["pgivm_catalog", "lock_writes"]'::jsonb)
           OR t ->> 'scope' NOT IN ('all', 'plain', 'leaf', 'rows')
           OR (pgivm_catalog.trigger_applies(t, true, p_partitioned, false)
               AND NOT EXISTS (SELECT FROM pg_trigger g JOIN pg_proc p ON p.oid = g.tgfoid JOIN pg_namespace n ON n.oid = p.pronamespace
                                WHERE g.tgrelid = p_table AND g.tgname = t ->> 'name'
                                  AND n.nspname = t -> 'function' ->> 0 AND p.proname = t -> 'function' ->> 1)) THEN
            RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
                MESSAGE = format('pgivm: trigger %s of view %s on %s is not one of its capture triggers', t ->> 'name', p_view, p_table::regclass);
        END IF;
    END LOOP;
    INSERT INTO pgivm_catalog.base_tables (view_name, table_oid, partitioned, columns, triggers)
    VALUES (p_view, p_table, p_partitioned, p_columns, p_triggers);
    PERFORM pgivm_catalog.recompute_covers(array_agg(b.table_oid)) FROM pgivm_catalog.base_tables b WHERE b.view_name = p_view;
END;
$$;


CREATE FUNCTION pgivm_catalog.forget_base_tables(p_view text)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    gone oid[];
BEGIN
    PERFORM pgivm_catalog.check_acting_for(pgivm_catalog.owner_of(p_view), format('view %s', p_view));
    WITH d AS (DELETE FROM pgivm_catalog.base_tables WHERE view_name = p_view RETURNING table_oid)
    SELECT array_agg(table_oid) INTO gone FROM d;
    PERFORM pgivm_catalog.recompute_covers(coalesce(gone, '{}'));
END;
$$;


CREATE FUNCTION pgivm_catalog.forget_view(p_view text)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM pgivm_catalog.forget_base_tables(p_view);
    DELETE FROM pgivm_catalog.views WHERE name = p_view;
END;
$$;


CREATE FUNCTION pgivm_catalog.set_template_version(p_view text, p_version text)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM pgivm_catalog.check_acting_for(pgivm_catalog.owner_of(p_view), format('view %s', p_view));
    UPDATE pgivm_catalog.views SET template_version = p_version WHERE name = p_view;
END;
$$;


CREATE FUNCTION pgivm_catalog.set_params(p_view text, p_params jsonb, p_objects jsonb)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v pgivm_catalog.views%ROWTYPE;
BEGIN
    SELECT * INTO v FROM pgivm_catalog.views WHERE name = p_view;
    PERFORM pgivm_catalog.check_acting_for(pgivm_catalog.owner_of(p_view), format('view %s', p_view));
    PERFORM pgivm_catalog.check_objects(p_view, v.view_schema, p_objects);
    UPDATE pgivm_catalog.views SET params = p_params, objects = p_objects WHERE name = p_view;
    PERFORM pgivm_catalog.recompute_covers(array_agg(b.table_oid)) FROM pgivm_catalog.base_tables b WHERE b.view_name = p_view;
END;
$$;


-- --- what must hold of a view's state before another role uses it ---------------------------------

-- PostgreSQL's own functions that an expression of the state may call: immutable ones (they read
-- nothing, change nothing, run no SQL given as text) and the clocks and transaction id the logs
-- record. Anything else (set_config, pg_read_file, query_to_xml, ...) would run with the rights
-- of whoever reads the view or writes the table.
CREATE FUNCTION pgivm_catalog.safe_builtin(p_function oid)
RETURNS boolean LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT p_function < 16384  -- FirstNormalObjectId: part of PostgreSQL itself
       AND (p.provolatile = 'i'
            OR p.proname IN ('now', 'statement_timestamp', 'transaction_timestamp', 'clock_timestamp', 'pg_current_xact_id'))
       AND p.proname !~ '_to_xml' AND p.proname NOT IN ('ts_stat', 'ts_rewrite')
      FROM pg_catalog.pg_proc p WHERE p.oid = p_function
$$;

-- What is wrong with the state of view p_view for a role other than its owner to read it or call
-- into it (none when all is well); p_object narrows the check to one object (the DDL guard).
CREATE FUNCTION pgivm_catalog.state_problems(p_view text, p_object oid DEFAULT NULL)
RETURNS SETOF text LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v pgivm_catalog.views%ROWTYPE;
    ns oid;
    rels oid[];
    r record;
BEGIN
    SELECT * INTO v FROM pgivm_catalog.views WHERE name = p_view;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT n.oid INTO ns FROM pg_namespace n WHERE n.nspname = v.state_schema;
    IF NOT FOUND THEN
        RETURN NEXT format('the state schema %I of pgivm view %s is missing', v.state_schema, p_view);
        RETURN;
    END IF;
    IF (SELECT n.nspowner FROM pg_namespace n WHERE n.oid = ns) <> v.owner THEN
        RETURN NEXT format('schema %I belongs to role %s, not to the owner of pgivm view %s (%s)', v.state_schema,
                           (SELECT n.nspowner FROM pg_namespace n WHERE n.oid = ns)::regrole, p_view, v.owner::regrole);
    END IF;
    -- the state's relations and the view's own views in the user's schema
    SELECT array_agg(c.oid) INTO rels FROM pg_class c
     WHERE c.relnamespace = ns
        OR c.oid IN (SELECT to_regclass(format('%I.%I', o ->> 'schema', o ->> 'name'))
                       FROM jsonb_array_elements(v.objects) o WHERE o ->> 'kind' = 'view');
    rels := coalesce(rels, '{}');
    FOR r IN SELECT p.oid::regprocedure AS f, p.proowner, p.prosecdef, p.proconfig FROM pg_proc p
              WHERE p.pronamespace = ns AND (p_object IS NULL OR p.oid = p_object) ORDER BY p.oid LOOP
        IF r.proowner <> v.owner THEN
            RETURN NEXT format('function %s belongs to role %s, not to the owner of pgivm view %s (%s)', r.f, r.proowner::regrole,
                               p_view, v.owner::regrole);
        ELSIF NOT r.prosecdef THEN
            RETURN NEXT format('function %s is not SECURITY DEFINER: a role calling it would run its owner''s code with its own rights', r.f);
        ELSIF r.proconfig IS NULL OR NOT ('search_path=pg_catalog, pg_temp' = ANY (r.proconfig)) THEN
            RETURN NEXT format('function %s has no fixed search_path (pg_catalog, pg_temp)', r.f);
        END IF;
    END LOOP;
    FOR r IN SELECT c.oid::regclass AS rel, c.relowner, c.relkind, c.relrowsecurity FROM pg_class c
              WHERE c.oid = ANY (rels) AND (p_object IS NULL OR c.oid = p_object) ORDER BY c.oid LOOP
        IF r.relowner <> v.owner THEN
            RETURN NEXT format('%s belongs to role %s, not to the owner of pgivm view %s (%s)', r.rel, r.relowner::regrole, p_view,
                               v.owner::regrole);
        ELSIF r.relkind NOT IN ('r', 'v', 'S', 'i') THEN
            RETURN NEXT format('%s (relkind %s) is not something pgivm makes in the state of view %s', r.rel, r.relkind, p_view);
        ELSIF r.relrowsecurity THEN
            RETURN NEXT format('%s has row-level security enabled, which pgivm does not use', r.rel);
        END IF;
    END LOOP;
    FOR r IN SELECT g.tgname, g.tgrelid::regclass AS rel, p.pronamespace FROM pg_trigger g JOIN pg_proc p ON p.oid = g.tgfoid
              WHERE g.tgrelid = ANY (rels) AND NOT g.tgisinternal AND (p_object IS NULL OR g.oid = p_object OR g.tgrelid = p_object)
              ORDER BY g.oid LOOP
        IF r.tgname NOT IN ('costs_changed', 'budget_changed') OR r.pronamespace <> ns THEN
            RETURN NEXT format('trigger %I on %s was not made by pgivm: drop it (a state table carries pgivm''s triggers only)',
                               r.tgname, r.rel);
        END IF;
    END LOOP;
    FOR r IN SELECT w.rulename, w.ev_class::regclass AS rel FROM pg_rewrite w
              WHERE w.ev_class = ANY (rels) AND w.rulename <> '_RETURN' AND (p_object IS NULL OR w.oid = p_object OR w.ev_class = p_object)
              ORDER BY w.oid LOOP
        RETURN NEXT format('rule %I on %s was not made by pgivm: drop it', r.rulename, r.rel);
    END LOOP;
    -- what the views, defaults, constraints and indexes of the state call or read: the state
    -- itself, or PostgreSQL's own functions that neither change anything nor run SQL given as text
    FOR r IN
        SELECT DISTINCT d.refclassid::regclass AS kind, d.refobjid,
               pg_describe_object(d.refclassid, d.refobjid, 0) AS what,
               pg_describe_object(d.classid, d.objid, d.objsubid) AS used_by
          FROM pg_depend d
         WHERE d.deptype = 'n'
           AND ((d.classid = 'pg_rewrite'::regclass
                 AND d.objid IN (SELECT w.oid FROM pg_rewrite w WHERE w.ev_class = ANY (rels)
                                    AND (p_object IS NULL OR w.ev_class = p_object OR w.oid = p_object)))
             OR (d.classid = 'pg_attrdef'::regclass
                 AND d.objid IN (SELECT a.oid FROM pg_attrdef a WHERE a.adrelid = ANY (rels) AND (p_object IS NULL OR a.adrelid = p_object)))
             OR (d.classid = 'pg_constraint'::regclass
                 AND d.objid IN (SELECT k.oid FROM pg_constraint k WHERE k.conrelid = ANY (rels)
                                    AND (p_object IS NULL OR k.conrelid = p_object OR k.oid = p_object)))
             OR (d.classid = 'pg_class'::regclass AND d.objid = ANY (rels)
                 AND (p_object IS NULL OR d.objid = p_object
                      OR d.objid IN (SELECT i.indexrelid FROM pg_index i WHERE i.indrelid = p_object))))
           AND NOT (
                (d.refclassid = 'pg_class'::regclass AND d.refobjid = ANY (rels))
             OR (d.refclassid = 'pg_proc'::regclass
                 AND (pgivm_catalog.safe_builtin(d.refobjid)
                      OR EXISTS (SELECT FROM pg_proc p WHERE p.oid = d.refobjid AND p.pronamespace = ns)))
             OR (d.refclassid = 'pg_operator'::regclass
                 AND (SELECT pgivm_catalog.safe_builtin(o.oprcode::oid) FROM pg_operator o WHERE o.oid = d.refobjid))
             OR (d.refclassid = 'pg_type'::regclass
                 AND (d.refobjid < 16384 OR EXISTS (SELECT FROM pg_type t WHERE t.oid = d.refobjid AND t.typnamespace = ns
                                                                           AND t.typrelid <> 0)))
             OR d.refclassid = 'pg_namespace'::regclass  -- where a relation lives: no code
             OR (d.refclassid IN ('pg_collation'::regclass, 'pg_am'::regclass,
                                  'pg_opclass'::regclass, 'pg_opfamily'::regclass, 'pg_cast'::regclass)
                 AND d.refobjid < 16384))
         ORDER BY 3
    LOOP
        RETURN NEXT format('%s uses %s, which is neither part of the view''s state nor a read-only function of PostgreSQL',
                           r.used_by, r.what);
    END LOOP;
END;
$$;

-- state_problems(), after locking what it checks until the transaction ends: the state schema's
-- name and owner, its functions (no CREATE OR REPLACE), its relations and the view's own views (no
-- new trigger, rule, index or definition: SHARE UPDATE EXCLUSIVE, which writers never wait for).
-- A superuser's command calls this before it reads the view or calls into its state. The catalog
-- rows it relies on are locked too: in a REPEATABLE READ transaction, whose snapshot may predate
-- a change committed before these locks were granted, locking a changed row fails (40001) instead
-- of checking an old definition while the executor runs the new one.
CREATE FUNCTION pgivm_catalog.pin_state(p_view text)
RETURNS SETOF text LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v pgivm_catalog.views%ROWTYPE;
    ns oid;
    rels oid[];
    r record;
BEGIN
    SELECT * INTO v FROM pgivm_catalog.views WHERE name = p_view;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT n.oid INTO ns FROM pg_namespace n WHERE n.nspname = v.state_schema FOR SHARE;
    SELECT array_agg(c.oid ORDER BY c.oid) INTO rels FROM pg_class c
     WHERE (c.relnamespace = ns AND c.relkind IN ('r', 'v', 'p'))
        OR c.oid IN (SELECT to_regclass(format('%I.%I', o ->> 'schema', o ->> 'name'))
                       FROM jsonb_array_elements(v.objects) o WHERE o ->> 'kind' = 'view');
    FOR r IN SELECT unnest(rels) AS oid LOOP
        EXECUTE format('LOCK TABLE %s IN SHARE UPDATE EXCLUSIVE MODE', r.oid::regclass);
    END LOOP;
    PERFORM FROM pg_class c WHERE c.oid = ANY (rels) OR c.relnamespace = ns FOR SHARE;
    PERFORM FROM pg_rewrite w WHERE w.ev_class = ANY (rels) FOR SHARE;
    PERFORM FROM pg_trigger g WHERE g.tgrelid = ANY (rels) FOR SHARE;
    PERFORM FROM pg_proc p WHERE p.pronamespace = ns FOR SHARE;
    RETURN QUERY SELECT * FROM pgivm_catalog.state_problems(p_view);
END;
$$;


-- --- reading a deferred view from SQL ------------------------------------------------------------

-- SELECT pgivm_catalog.refresh('view') applies every pending change of a deferred view: it reads
-- the view (which applies first), as the caller, who needs SELECT on it. Its owner's code runs in
-- the caller's session (inside the owner's SECURITY DEFINER functions): for a caller that is not
-- the owner, the state is checked (and for a superuser locked) first, and the search_path and
-- row_security the caller had come back afterwards, whatever that code set.
DROP FUNCTION IF EXISTS pgivm_catalog.refresh(text);

CREATE FUNCTION pgivm_catalog.refresh_view(p_view text)
RETURNS bigint LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v pgivm_catalog.views%ROWTYPE;
    shown regclass;
    problem text;
BEGIN
    SELECT * INTO v FROM pgivm_catalog.views WHERE name = p_view;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'undefined_object', MESSAGE = format('no pgivm view named %s', p_view),
            HINT = 'pgivm list shows the views of this database.';
    END IF;
    IF v.params ->> 'refresh' IS DISTINCT FROM 'deferred' THEN
        RAISE EXCEPTION USING ERRCODE = 'wrong_object_type',
            MESSAGE = format('pgivm view %s is immediate: every write maintains it, there is nothing to refresh', p_view),
            HINT = 'Only a view created with --refresh deferred has pending changes.';
    END IF;
    shown := to_regclass(format('%I.%I', v.view_schema, v.name));
    IF shown IS NULL OR NOT has_table_privilege(shown, 'SELECT') THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege', MESSAGE = format('permission denied for view %s', p_view);
    END IF;
    IF (SELECT r.oid FROM pg_roles r WHERE r.rolname = current_user) <> v.owner THEN
        IF (SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = current_user) THEN
            SELECT p INTO problem FROM pgivm_catalog.pin_state(p_view) AS p LIMIT 1;
        ELSE
            SELECT p INTO problem FROM pgivm_catalog.state_problems(p_view) AS p LIMIT 1;
        END IF;
        IF problem IS NOT NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
                MESSAGE = format('pgivm view %s is not safe to read as %s: %s', p_view, current_user, problem);
        END IF;
    END IF;
    PERFORM set_config('pgivm.applied', '0', true);
    EXECUTE format('SELECT count(*) FROM %s', shown);  -- a read applies everything pending, and says how much
    RETURN coalesce(nullif(current_setting('pgivm.applied', true), ''), '0')::bigint;
END;
$$;

-- No SET clause here, so that the caller's own settings can be put back: only qualified names.
CREATE FUNCTION pgivm_catalog.refresh(view_name pg_catalog.text)
RETURNS pg_catalog.int8 LANGUAGE plpgsql
AS $$
DECLARE
    saved_path pg_catalog.text := pg_catalog.current_setting('search_path');
    saved_row_security pg_catalog.text := pg_catalog.current_setting('row_security');
    applied pg_catalog.int8;
BEGIN
    applied := pgivm_catalog.refresh_view(view_name);
    PERFORM pg_catalog.set_config('search_path', saved_path, false), pg_catalog.set_config('row_security', saved_row_security, false);
    RETURN applied;
END;
$$;
COMMENT ON FUNCTION pgivm_catalog.refresh(pg_catalog.text) IS 'apply every pending change of a deferred pgivm view; returns the log rows applied';


-- --- the worker ------------------------------------------------------------------------------------

CREATE TABLE pgivm_catalog.worker (
    singleton     boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    pid           integer NOT NULL,
    backend_start timestamptz NOT NULL,
    role          name NOT NULL,
    registered_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE pgivm_catalog.worker IS 'pgivm: the `pgivm worker` serving this database (registered by register_worker)';

-- The registered worker's process id while that backend lives, else NULL. Writers past the budget
-- ask this (as the catalog's owner, who may see every backend's start time).
CREATE FUNCTION pgivm_catalog.worker_pid()
RETURNS integer LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT w.pid FROM pgivm_catalog.worker w, pg_catalog.pg_stat_get_activity(w.pid) a
     WHERE a.backend_start = w.backend_start
$$;

-- Claim the worker's role for this backend: refused while another registered worker lives. Not
-- for PUBLIC: a session that claimed it and idled would leave every deferred view without one.
CREATE FUNCTION pgivm_catalog.register_worker()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    other integer;
BEGIN
    LOCK TABLE pgivm_catalog.worker IN EXCLUSIVE MODE;
    other := pgivm_catalog.worker_pid();
    IF other IS NOT NULL AND other <> pg_backend_pid() THEN
        RAISE EXCEPTION USING ERRCODE = 'lock_not_available',
            MESSAGE = format('another pgivm worker already serves this database (server pid %s)', other),
            HINT = 'One worker serves every deferred view of a database: stop the other one first.';
    END IF;
    DELETE FROM pgivm_catalog.worker;
    INSERT INTO pgivm_catalog.worker (pid, backend_start, role)
    SELECT a.pid, a.backend_start, session_user FROM pg_catalog.pg_stat_get_activity(pg_backend_pid()) a;
END;
$$;

CREATE FUNCTION pgivm_catalog.unregister_worker()
RETURNS void LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    DELETE FROM pgivm_catalog.worker WHERE pid = pg_catalog.pg_backend_pid()
$$;


-- --- the DDL guard -------------------------------------------------------------------------------

-- A capture trigger added to a new partition calls a SECURITY DEFINER function of the view's own
-- state schema, or lock_writes.
CREATE OR REPLACE FUNCTION pgivm_catalog.check_base_table(p_view text, p_table oid, p_repair boolean DEFAULT false)
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
                    -- Only lock_writes or a SECURITY DEFINER function of the view's own state schema, owned by
                    -- the view's owner: it runs as that owner, whoever writes the partition.
                    IF t -> 'function' <> '["pgivm_catalog", "lock_writes"]'::jsonb
                       AND NOT EXISTS (SELECT 1 FROM pg_proc p
                                         JOIN pg_namespace n ON n.oid = p.pronamespace
                                         JOIN pgivm_catalog.views v ON v.state_schema = n.nspname AND v.name = p_view
                                        WHERE n.nspname = t -> 'function' ->> 0 AND p.proname = t -> 'function' ->> 1
                                          AND p.prosecdef AND p.pronargs = 0 AND p.proowner = v.owner) THEN
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

-- DDL on a view's state (or its own views) that would let its owner's code run with another
-- role's rights is refused: a function that is not SECURITY DEFINER, a trigger or rule pgivm did
-- not make, an expression calling code outside the state (see state_problems).
CREATE OR REPLACE FUNCTION pgivm_catalog.on_ddl_command_end()
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


-- Catalogs of earlier versions lived in schema pgivm: these functions named it in their bodies.
CREATE OR REPLACE FUNCTION pgivm_catalog.check_detached(p_view text, p_repair boolean DEFAULT false)
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
          JOIN pgivm_catalog.views v ON v.name = p_view
         WHERE g.tgname LIKE 'pgivm\_%'
           AND (n.nspname = v.state_schema  -- the view's capture triggers, and its lock trigger:
                OR (p.oid = 'pgivm_catalog.lock_writes()'::regprocedure AND g.tgname = 'pgivm_' || p_view || '_lock'))
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


CREATE OR REPLACE FUNCTION pgivm_catalog.on_sql_drop()
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



-- --- who may do what -----------------------------------------------------------------------------

-- Roles that were granted writes on the catalog by the README of earlier versions lose them.
DO $$
DECLARE
    g record;
BEGIN
    FOR g IN SELECT DISTINCT c.oid::regclass AS rel, a.grantee
               FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace,
                    LATERAL aclexplode(c.relacl) a
              WHERE n.nspname = 'pgivm_catalog' AND a.grantee <> c.relowner
                AND a.privilege_type IN ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'TRIGGER', 'REFERENCES')
    LOOP
        EXECUTE format('REVOKE ALL ON %s FROM %s', g.rel, CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE g.grantee::regrole::text END);
    END LOOP;
END;
$$;

REVOKE ALL ON ALL TABLES IN SCHEMA pgivm_catalog FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA pgivm_catalog FROM PUBLIC;
GRANT USAGE ON SCHEMA pgivm_catalog TO PUBLIC;
GRANT SELECT ON pgivm_catalog.views, pgivm_catalog.base_tables, pgivm_catalog.schema_migrations TO PUBLIC;
GRANT EXECUTE ON FUNCTION
    pgivm_catalog.refresh(pg_catalog.text), pgivm_catalog.refresh_view(text),
    pgivm_catalog.state_problems(text, oid), pgivm_catalog.safe_builtin(oid),
    pgivm_catalog.check_acting_for(oid, text), pgivm_catalog.check_objects(text, text, jsonb), pgivm_catalog.owner_of(text),
    pgivm_catalog.create_state_schema(text, oid, text), pgivm_catalog.record_view(text, oid, text, text, text, jsonb, jsonb, integer, text, jsonb),
    pgivm_catalog.record_base_table(text, oid, boolean, jsonb, jsonb), pgivm_catalog.forget_base_tables(text),
    pgivm_catalog.forget_view(text), pgivm_catalog.set_template_version(text, text), pgivm_catalog.set_params(text, jsonb, jsonb),
    pgivm_catalog.lock_writes(), pgivm_catalog.worker_pid(), pgivm_catalog.unregister_worker(),
    pgivm_catalog.check_base_table(text, oid, boolean), pgivm_catalog.check_detached(text, boolean),
    pgivm_catalog.trigger_applies(jsonb, boolean, boolean, boolean), pgivm_catalog.trigger_sql(jsonb, regclass),
    pgivm_catalog.has_rows(regclass)
TO PUBLIC;
-- Not for PUBLIC: recompute_covers (internal), pin_state (locks another role's state), register_worker.
