-- The delta tree of one atom (§4.3 of the paper): the statement's net change of the atom, waiting in
-- its _delta table, goes up the path from the atom's leaf to the root, set at a time: each view on
-- the path is the previous delta joined with the stored siblings (lifted with g_X and summed
-- where X is bound), and each stored view is merged with its delta. Called by the capture
-- functions, which hold the view's lock; the scratch tables are empty again when it returns.
CREATE FUNCTION {apply_batch}()
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
{statements}
END;
$pgivm$;
COMMENT ON FUNCTION {apply_batch}() IS {comment};
