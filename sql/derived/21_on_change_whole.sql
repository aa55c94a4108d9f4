-- (see 10_functions.sql) A subquery without GROUP BY has one row (or none, with HAVING): any
-- statement's change of one of its tables recounts it.
CREATE FUNCTION {on_change}()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
SET jit = off
AS $pgivm$
BEGIN
    PERFORM {refill}();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION {on_change}() IS {on_change_comment};
