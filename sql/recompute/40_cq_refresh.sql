-- After every writing statement: the result emptied and computed again from the base tables, named
-- from their oids at this moment (the format string holds their places; every read names tableoid,
-- so a view under a base table's name cannot even be parsed), with row_security off.
CREATE FUNCTION {refresh}()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
AS $pgivm$
BEGIN
    UPDATE {state} SET updates_applied = updates_applied + 1;
    IF NOT FOUND THEN  -- a snapshot from before the view was created (see capture_functions.sql)
        RAISE EXCEPTION USING
            ERRCODE = 'serialization_failure',
            MESSAGE = format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', {view_literal}),
            HINT = 'Retry the transaction.';
    END IF;
    DELETE FROM {maintained};
    EXECUTE format({insert_format}, {table_oids});
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION {refresh}() IS {refresh_comment};
