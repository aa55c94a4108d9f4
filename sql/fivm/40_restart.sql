-- Called by the capture layer after a TRUNCATE has cleared the atoms of a plain table; F-IVM's
-- views need nothing more (there is no partition or threshold to recompute).
CREATE FUNCTION {restart}()
RETURNS void LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$ SELECT $pgivm$;
