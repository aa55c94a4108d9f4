-- The count from the copies, and the restart after a build or TRUNCATE.
CREATE FUNCTION {count_from_state}()
RETURNS bigint LANGUAGE sql SECURITY DEFINER STABLE
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
    SELECT coalesce(sum(r.mult * s.mult * t.mult), 0)::bigint
      FROM {r_tuples} r
      JOIN {s_tuples} s ON s.b = r.b
      JOIN {t_tuples} t ON t.c = s.c AND t.a = r.a
$pgivm$;

CREATE FUNCTION {restart}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    UPDATE {result} SET count = {count_from_state}();
END;
$pgivm$;
