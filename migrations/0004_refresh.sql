-- pgivm catalog, version 4: deferred views (pgivm.deferred).
--
-- SELECT pgivm_catalog.refresh('view') applies every pending change of a deferred view, as `pgivm
-- refresh` does, from any SQL client. SECURITY DEFINER to read the catalog; it runs nothing but the
-- view's own refresh function, named from the catalog, and takes the view's lock as writers do.

CREATE FUNCTION pgivm_catalog.refresh(view_name text)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    found_view record;
    applied bigint;
BEGIN
    SELECT * INTO found_view FROM pgivm_catalog.views WHERE name = view_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'undefined_object',
            MESSAGE = format('no pgivm view named %s', view_name),
            HINT = 'pgivm list shows the views of this database.';
    END IF;
    IF found_view.params->>'refresh' IS DISTINCT FROM 'deferred' THEN
        RAISE EXCEPTION USING ERRCODE = 'wrong_object_type',
            MESSAGE = format('pgivm view %s is immediate: every write maintains it, there is nothing to refresh', view_name),
            HINT = 'Only a view created with --refresh deferred has pending changes.';
    END IF;
    EXECUTE format('SELECT %I.refresh()', found_view.state_schema) INTO applied;
    RETURN applied;
END;
$pgivm$;
COMMENT ON FUNCTION pgivm_catalog.refresh(text) IS 'apply every pending change of a deferred pgivm view; returns the log rows applied';
