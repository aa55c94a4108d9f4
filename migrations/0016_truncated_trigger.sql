-- first-order applies a partition's TRUNCATE after the rows are gone: its BEFORE TRUNCATE trigger
-- only queues them as a deletion, and an AFTER TRUNCATE trigger on each partition,
-- pgivm_<view>_truncated, calling the state's statement_close(), applies what is queued (in the
-- BEFORE trigger the table still held the rows, which a self-join's later atom read as its new
-- state). record_base_table() accepts that trigger among a view's capture triggers; the rest of
-- the function is 0015's.

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
        IF t ->> 'name' NOT IN (SELECT 'pgivm_' || p_view || '_' || kind
                                  FROM unnest(ARRAY['lock', 'open', 'insert', 'delete', 'update', 'truncate', 'truncate_rows',
                                                    'truncated', 'refresh']) AS kind)
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
