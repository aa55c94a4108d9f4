-- Column types of the user's in a view's state: range types over PostgreSQL's own subtypes (as
-- enums already were), and types whose equality an extension defines (citext, pgvector's vector)
-- when it is found in a schema only superusers write. safe_type() says which types of the user's
-- run only PostgreSQL's code; trusted_schema() which schemas a state function may look operators
-- up in (its search_path: pg_catalog, then those, then pg_temp), and path_problem() checks a
-- function's path against it. state_problems() now asks both (the rest of it is 0018's), and a
-- DDL guard of its own (pgivm_trust_changed) refuses a GRANT, owner change or new object that
-- would let another role put code in such a schema while a view's functions look there.

-- A type that is not PostgreSQL's own but runs only PostgreSQL's code: an enum (its values are
-- data, its functions enum_in, enum_cmp, ...), or a range or multirange over PostgreSQL's own
-- subtype compared by pg_catalog's operator class, with no canonical function but PostgreSQL's
-- (range_in, range_cmp, ...: none of a range's properties can be altered once it exists; its
-- constructor functions are the owner's, and pgivm never calls them).
CREATE FUNCTION pgivm_catalog.safe_type(p_type oid) RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
    SELECT EXISTS (SELECT FROM pg_type t WHERE t.oid = p_type AND t.typtype = 'e')
        OR EXISTS (SELECT FROM pg_range rg JOIN pg_opclass so ON so.oid = rg.rngsubopc
                    WHERE p_type IN (rg.rngtypid, rg.rngmultitypid)
                      AND so.opcnamespace = 'pg_catalog'::regnamespace
                      AND rg.rngsubtype < 16384 AND rg.rngcanonical::oid < 16384)
$$;

-- A schema where only superusers can create objects and every function and operator is a
-- superuser's (an extension a superuser installed): owned by a superuser (or by
-- pg_database_owner in a database a superuser owns, as public is), CREATE granted to superusers
-- alone. Its code can be changed only by superusers, so any role may run it.
CREATE FUNCTION pgivm_catalog.trusted_schema(p_schema oid) RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
    WITH super AS (
        SELECT r.oid FROM pg_roles r WHERE r.rolsuper
        UNION ALL
        SELECT 'pg_database_owner'::regrole::oid FROM pg_database d JOIN pg_roles o ON o.oid = d.datdba
         WHERE d.datname = current_database() AND o.rolsuper
    )
    SELECT EXISTS (SELECT FROM pg_namespace n WHERE n.oid = p_schema AND n.nspowner IN (SELECT oid FROM super))
       AND NOT EXISTS (SELECT FROM pg_namespace n, aclexplode(coalesce(n.nspacl, acldefault('n', n.nspowner))) a
                        WHERE n.oid = p_schema AND a.privilege_type = 'CREATE' AND a.grantee NOT IN (SELECT oid FROM super))
       AND NOT EXISTS (SELECT FROM pg_proc f WHERE f.pronamespace = p_schema AND f.proowner NOT IN (SELECT oid FROM super))
       AND NOT EXISTS (SELECT FROM pg_operator o WHERE o.oprnamespace = p_schema AND o.oprowner NOT IN (SELECT oid FROM super))
$$;

-- A type, operator class or family, operator or function in a trusted schema (an operator's
-- function too: it may live elsewhere).
CREATE FUNCTION pgivm_catalog.trusted_object(p_class oid, p_object oid) RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
    SELECT coalesce(pgivm_catalog.trusted_schema(CASE p_class
               WHEN 'pg_type'::regclass THEN (SELECT typnamespace FROM pg_type WHERE oid = p_object)
               WHEN 'pg_opclass'::regclass THEN (SELECT opcnamespace FROM pg_opclass WHERE oid = p_object)
               WHEN 'pg_opfamily'::regclass THEN (SELECT opfnamespace FROM pg_opfamily WHERE oid = p_object)
               WHEN 'pg_operator'::regclass THEN (SELECT oprnamespace FROM pg_operator WHERE oid = p_object)
               WHEN 'pg_proc'::regclass THEN (SELECT pronamespace FROM pg_proc WHERE oid = p_object) END)
           AND (p_class <> 'pg_operator'::regclass
                OR (SELECT r.rolsuper FROM pg_operator o JOIN pg_proc f ON f.oid = o.oprcode
                      JOIN pg_roles r ON r.oid = f.proowner WHERE o.oid = p_object)), false)
$$;

-- What is wrong with a state function's settings (NULL: nothing): its search_path must be
-- pg_catalog, pg_temp, or pg_catalog, then trusted schemas (unquoted names), then pg_temp.
CREATE FUNCTION pgivm_catalog.path_problem(p_config text[]) RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
    setting text;
    schemas text[];
    s text;
BEGIN
    SELECT substr(c, length('search_path=') + 1) INTO setting FROM unnest(p_config) c WHERE starts_with(c, 'search_path=');
    schemas := string_to_array(setting, ', ');
    IF setting IS NULL OR cardinality(schemas) < 2 OR schemas[1] <> 'pg_catalog' OR schemas[cardinality(schemas)] <> 'pg_temp' THEN
        RETURN 'has no fixed search_path (pg_catalog, pg_temp)';
    END IF;
    FOREACH s IN ARRAY schemas[2:cardinality(schemas) - 1] LOOP
        IF s !~ '^[a-z_][a-z0-9_]*$' OR to_regnamespace(s) IS NULL THEN
            RETURN format('has search_path %s, which names %s, not a schema', setting, s);
        ELSIF NOT pgivm_catalog.trusted_schema(to_regnamespace(s)) THEN
            RETURN format('looks operators up in schema %s, where a role other than a superuser may now create '
                          'objects or owns a function or operator (see pgivm_catalog.trusted_schema)', s);
        END IF;
    END LOOP;
    RETURN NULL;
END;
$$;
GRANT EXECUTE ON FUNCTION pgivm_catalog.safe_type(oid), pgivm_catalog.trusted_schema(oid),
    pgivm_catalog.trusted_object(oid, oid), pgivm_catalog.path_problem(text[]) TO PUBLIC;  -- as safe_builtin: state_problems runs as its caller

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
        ELSIF r.relkind NOT IN ('r', 'v', 'S', 'i') THEN
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
                                                     'truncate_rows', 'truncated', 'refresh']) AS kind)
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

-- The guard of the schemas state functions look operators up in: after a command that may let
-- another role put code in one (a GRANT, an owner changed, a function or operator made or moved),
-- every function whose path names such a schema is checked again (functions without a fixed path
-- are the main guard's and state_problems' business).
CREATE FUNCTION pgivm_catalog.on_trust_changed()
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
               JOIN pg_proc p ON p.pronamespace = n.oid
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
REVOKE ALL ON FUNCTION pgivm_catalog.on_trust_changed() FROM PUBLIC;
DO $$
BEGIN
    IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        CREATE EVENT TRIGGER pgivm_trust_changed ON ddl_command_end
            WHEN TAG IN ('GRANT', 'REVOKE', 'ALTER SCHEMA', 'ALTER FUNCTION', 'ALTER PROCEDURE', 'ALTER ROUTINE',
                         'ALTER OPERATOR', 'ALTER EXTENSION', 'CREATE FUNCTION', 'CREATE PROCEDURE', 'CREATE OPERATOR',
                         'CREATE EXTENSION', 'ALTER DEFAULT PRIVILEGES')
            EXECUTE FUNCTION pgivm_catalog.on_trust_changed();
    END IF;
END;
$$;
