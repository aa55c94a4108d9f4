-- TRUNCATE of a plain base table empties its atoms: every stored view over one of them is empty
-- (a join with an empty relation), the other views are unchanged. Nothing needs to be read.
CREATE FUNCTION {clear}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
{statements}
END;
$pgivm$;
COMMENT ON FUNCTION {clear}() IS {comment};
