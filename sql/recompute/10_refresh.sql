-- The recount reads the base tables, so it names them from their oids at the moment it runs
-- (the format string below holds their places, the query naming tableoid so that a view under a base
-- table's name cannot even be parsed), with row_security off so that a policy is an error rather
-- than code running with this function's rights.
CREATE FUNCTION {refresh}()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
AS $pgivm$
DECLARE
    recount bigint;
BEGIN
    UPDATE {state} SET updates_applied = updates_applied + 1;
    IF NOT FOUND THEN  -- a snapshot from before the view was created (see capture_functions.sql)
        RAISE EXCEPTION USING
            ERRCODE = 'serialization_failure',
            MESSAGE = format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', {view_literal}),
            HINT = 'Retry the transaction.';
    END IF;
    EXECUTE format({count_format}, {table_oids}) INTO recount;
    UPDATE {result} SET count = recount;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION {refresh}() IS {refresh_comment};
