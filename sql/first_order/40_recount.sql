-- After a TRUNCATE, a view with an outer join is not empty: the other side's rows stay, NULL-
-- extended. Its result is counted again from the base tables (named from their oids, as the delta
-- queries name them), with row_security off as they run: a row-level security policy on a base
-- table is then an error, not code run as the view's owner.
CREATE FUNCTION {recount}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off{settings}
AS $pgivm$
BEGIN
{statements}
END;
$pgivm$;
COMMENT ON FUNCTION {recount}() IS {comment};
