-- A view's owner could leave its own view out of the checks: set_params accepted any subset of
-- the view, stale view and state schema as the view's objects, and state_problems, pin_state and
-- the DDL guard look at the views that list names. With objects = '[]' the owner could then
-- redefine the view to call a function of its own, which a superuser's verify, validate or
-- regress read (SELECT * FROM the view) would run with the superuser's rights. Now every view's
-- objects list its view and its state schema (pgivm has always written both), and views whose
-- lists lost either get them back.

CREATE OR REPLACE FUNCTION pgivm_catalog.check_objects(p_name text, p_view_schema text, p_objects jsonb)
RETURNS void LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
SET jit = off  -- as 0006 set it on every catalog function (CREATE OR REPLACE resets it)
AS $$
BEGIN
    IF jsonb_typeof(p_objects) <> 'array' OR EXISTS (
        SELECT FROM jsonb_array_elements(p_objects) o
         WHERE NOT ((o ->> 'kind' = 'view' AND o ->> 'schema' = p_view_schema AND o ->> 'name' IN (p_name, p_name || '_stale'))
                    OR (o ->> 'kind' = 'schema' AND o ->> 'name' = 'pgivm_' || p_name))) THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('pgivm: view %s may only list its own view, stale view and state schema as objects', p_name);
    END IF;
    IF NOT (p_objects @> jsonb_build_array(jsonb_build_object('kind', 'view', 'schema', p_view_schema, 'name', p_name))
            AND p_objects @> jsonb_build_array(jsonb_build_object('kind', 'schema', 'name', 'pgivm_' || p_name))) THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('pgivm: view %s must list its own view and its state schema as objects', p_name);
    END IF;
END;
$$;

UPDATE pgivm_catalog.views v
   SET objects = jsonb_build_array(jsonb_build_object('kind', 'view', 'schema', v.view_schema, 'name', v.name)) || v.objects
 WHERE NOT v.objects @> jsonb_build_array(jsonb_build_object('kind', 'view', 'schema', v.view_schema, 'name', v.name));

UPDATE pgivm_catalog.views v
   SET objects = v.objects || jsonb_build_array(jsonb_build_object('kind', 'schema', 'name', 'pgivm_' || v.name))
 WHERE NOT v.objects @> jsonb_build_array(jsonb_build_object('kind', 'schema', 'name', 'pgivm_' || v.name));
