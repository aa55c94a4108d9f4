-- With the apply sink, TRUNCATE of a plain table empties every relation it feeds: clear them and
-- restart (N, the partition and the views from the remaining relations). Nothing needs to be read.
CREATE FUNCTION {on_truncate}()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $pgivm$
BEGIN
    UPDATE {state} SET updates_applied = updates_applied + 1 WHERE singleton;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', {view_literal}),
            HINT = 'Retry the transaction.';
    END IF;
{clear}
    PERFORM {restart}();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION {on_truncate}() IS {on_truncate_comment};
