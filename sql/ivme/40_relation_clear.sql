-- Clear relation K after a TRUNCATE of the table it is read from: with that table empty, K is
-- empty too. The caller then restarts (N, strict partition, views, count) from what remains.
-- DELETE rather than TRUNCATE: TRUNCATE would make the tables look empty to snapshots taken
-- before it, such as a concurrent `pgivm verify`.
CREATE FUNCTION {clear_k}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM {k_heavy};
    DELETE FROM {k_light};
    DELETE FROM {k_degree};
END;
$pgivm$;
