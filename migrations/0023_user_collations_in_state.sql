-- state_problems takes a column of a collation anyone created (CREATE COLLATION mine FROM "C", an
-- ICU locale of the user's): it took PostgreSQL's own collations only, so `verify` reported
-- state_safe_for_other_roles for a first-order or recompute view over such a column, the view
-- itself exact. A collation runs no code: it is a locale's rules for comparing text, which its
-- owner can rename or move but not change (ALTER COLLATION has no clause for its rules), and a
-- state's column keeps it from being dropped. Nothing else of the function changes.

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
             -- a collation, anyone's: a locale's rules for comparing text, no code (a nondeterministic
             -- one is refused at create: a state compares bytes)
             OR d.refclassid = 'pg_collation'::regclass
             OR (d.refclassid IN ('pg_am'::regclass, 'pg_opclass'::regclass, 'pg_opfamily'::regclass, 'pg_cast'::regclass)
                 AND d.refobjid < 16384))
         ORDER BY 3
    LOOP
        RETURN NEXT format('%s uses %s, which is neither part of the view''s state nor a read-only function of PostgreSQL',
                           r.used_by, r.what);
    END LOOP;
END;
$$;
