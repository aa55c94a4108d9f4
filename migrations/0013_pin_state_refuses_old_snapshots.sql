-- pin_state locks a view's state, then checks it. In a REPEATABLE READ or SERIALIZABLE
-- transaction the check reads the transaction's snapshot, which may be older than the locks,
-- while the executor runs the newest definitions: a view its owner dropped and made again after
-- that snapshot (a new oid, so no locked catalog row changed) was checked in its old form and run
-- in its new one, with the rights of the superuser reading it. The DDL guard refuses every such
-- change when it happens; with the guard off, pin_state now refuses such a transaction outright.
-- (pgivm's own commands take their REPEATABLE READ snapshot in `pgivm.transactions.snapshot`.)

CREATE OR REPLACE FUNCTION pgivm_catalog.ddl_guard_on()
RETURNS boolean LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
    SELECT count(*) = 2 AND coalesce(current_setting('event_triggers', true), 'on') <> 'off'
      FROM pg_event_trigger
     WHERE evtname IN ('pgivm_ddl_command_end', 'pgivm_sql_drop') AND evtenabled IN ('O', 'A')
$$;

CREATE OR REPLACE FUNCTION pgivm_catalog.pin_state(p_view text)
RETURNS SETOF text LANGUAGE plpgsql SECURITY DEFINER
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
    IF current_setting('transaction_isolation') <> 'read committed' AND NOT pgivm_catalog.ddl_guard_on() THEN
        RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = format('view %s belongs to another role and pgivm''s DDL guard is off: a %s snapshot may be '
                             'older than the locks that make its state safe to use', p_view,
                             upper(current_setting('transaction_isolation'))),
            HINT = 'Turn the guard back on (ALTER EVENT TRIGGER pgivm_ddl_command_end ENABLE; ALTER EVENT TRIGGER '
                   'pgivm_sql_drop ENABLE), use the view as its owner, or in a READ COMMITTED transaction.';
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

REVOKE ALL ON FUNCTION pgivm_catalog.pin_state(text) FROM PUBLIC;
