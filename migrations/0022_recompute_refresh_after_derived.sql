-- recompute's refresh trigger is named pgivm_<view>_zz_refresh (it was pgivm_<view>_refresh), so
-- that on a table a derived table reads it fires after the derived table's triggers
-- (pgivm_<view>_zd<N>_<event>: AFTER triggers fire in name order) and reads the derived tables
-- recounted: before, it refreshed the view against the subquery's result of before the statement,
-- and a division by a count that had been 0 failed every write. The catalog's two lists of
-- pgivm's trigger names (what record_base_table takes, what state_problems lets a state table
-- carry) take the new name; the old one stays for views not yet upgraded. Nothing else changes.

CREATE OR REPLACE FUNCTION pgivm_catalog.record_base_table(p_view text, p_table oid, p_partitioned boolean, p_columns jsonb,
                                                p_triggers jsonb)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off  -- as 0006 set it on every catalog function (CREATE OR REPLACE resets it)
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
        IF (t ->> 'name' NOT IN (SELECT 'pgivm_' || p_view || '_' || kind
                                   FROM unnest(ARRAY['lock', 'open', 'insert', 'delete', 'update', 'truncate', 'truncate_rows',
                                                     'truncated', 'refresh', 'zz_refresh']) AS kind)
            -- a derived table's triggers on the tables it reads: pgivm_<view>_zd<N>_<event>
            AND NOT (starts_with(t ->> 'name', 'pgivm_' || p_view || '_zd')
                     AND substr(t ->> 'name', length('pgivm_' || p_view || '_zd') + 1) ~ '^[0-9]+_(insert|delete|update|truncate)$'))
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

CREATE OR REPLACE FUNCTION pgivm_catalog.state_problems(p_view text, p_object oid DEFAULT NULL)
RETURNS SETOF text LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
SET jit = off
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
    FOR r IN SELECT p.oid::regprocedure AS f, p.proowner, p.prosecdef, pgivm_catalog.path_problem(p.proconfig) AS path FROM pg_proc p
              WHERE p.pronamespace = ns AND (p_object IS NULL OR p.oid = p_object) ORDER BY p.oid LOOP
        IF r.proowner <> v.owner THEN
            RETURN NEXT format('function %s belongs to role %s, not to the owner of pgivm view %s (%s)', r.f, r.proowner::regrole,
                               p_view, v.owner::regrole);
        ELSIF NOT r.prosecdef THEN
            RETURN NEXT format('function %s is not SECURITY DEFINER: a role calling it would run its owner''s code with its own rights', r.f);
        ELSIF r.path IS NOT NULL THEN
            RETURN NEXT format('function %s %s', r.f, r.path);
        END IF;
    END LOOP;
    FOR r IN SELECT c.oid::regclass AS rel, c.relowner, c.relkind, c.relrowsecurity FROM pg_class c
              WHERE c.oid = ANY (rels) AND (p_object IS NULL OR c.oid = p_object) ORDER BY c.oid LOOP
        IF r.relowner <> v.owner THEN
            RETURN NEXT format('%s belongs to role %s, not to the owner of pgivm view %s (%s)', r.rel, r.relowner::regrole, p_view,
                               v.owner::regrole);
        ELSIF r.relkind NOT IN ('r', 'v', 'S', 'i', 'c') THEN
            RETURN NEXT format('%s (relkind %s) is not something pgivm makes in the state of view %s', r.rel, r.relkind, p_view);
        ELSIF r.relrowsecurity THEN
            RETURN NEXT format('%s has row-level security enabled, which pgivm does not use', r.rel);
        END IF;
    END LOOP;
    FOR r IN SELECT g.tgname, g.tgrelid::regclass AS rel, p.pronamespace, p.proname FROM pg_trigger g JOIN pg_proc p ON p.oid = g.tgfoid
              WHERE g.tgrelid = ANY (rels) AND NOT g.tgisinternal AND (p_object IS NULL OR g.oid = p_object OR g.tgrelid = p_object)
              ORDER BY g.oid LOOP
        IF (r.tgname NOT IN ('costs_changed', 'budget_changed') OR r.pronamespace <> ns)
           -- a derived table's capture triggers: the view's names, calling the state's functions
           -- (checked above: SECURITY DEFINER, the owner's, a fixed search_path) or the catalog's lock
           AND NOT (r.tgname IN (SELECT 'pgivm_' || p_view || '_' || kind
                                   FROM unnest(ARRAY['lock', 'open', 'insert', 'delete', 'update', 'truncate',
                                                     'truncate_rows', 'truncated', 'refresh', 'zz_refresh']) AS kind)
                    AND (r.pronamespace = ns
                         OR (r.pronamespace = 'pgivm_catalog'::regnamespace AND r.proname = 'lock_writes')))
           -- a derived table's triggers on another derived table it reads, calling the state's functions
           AND NOT (starts_with(r.tgname, 'pgivm_' || p_view || '_zd')
                    AND substr(r.tgname, length('pgivm_' || p_view || '_zd') + 1) ~ '^[0-9]+_(insert|delete|update|truncate)$'
                    AND r.pronamespace = ns) THEN
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
             -- first-order's base_N views read the view's base tables, which run no code when read
             -- (a table, whose tableoid the view reads: it cannot become a view; row_security is
             -- off where they are read), and their columns may have the tables' domain types
             OR (d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass
                 AND EXISTS (SELECT FROM pg_class c WHERE c.oid = d.refobjid AND c.relkind IN ('r', 'p')))
             OR (d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_type'::regclass
                 AND EXISTS (SELECT FROM pg_class c WHERE c.oid = d.objid AND c.relkind = 'v')
                 AND EXISTS (SELECT FROM pg_type t WHERE t.oid = d.refobjid AND t.typtype = 'd'))
             OR (d.refclassid = 'pg_type'::regclass
                 AND (d.refobjid < 16384 OR EXISTS (SELECT FROM pg_type t WHERE t.oid = d.refobjid AND t.typnamespace = ns
                                                                           AND t.typrelid <> 0)
                      OR pgivm_catalog.safe_type(d.refobjid)))
             -- an extension's type, operator class, operator or function, in a schema only
             -- superusers write (pgvector's vector and vector_ops: superusers' code)
             OR pgivm_catalog.trusted_object(d.refclassid, d.refobjid)
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
