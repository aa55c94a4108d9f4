-- OnUpdate's size invariant floor(N/4) <= |D| < N for the variants that keep their relations as one
-- table with flags (refined partitions, the 4-path count), rendered once per view: |D| set; when it
-- breaks, N = 2|D| + 1 and a major rebalancing (true: the caller skips its minor rebalancing,
-- everything was repartitioned). n_now: N as the caller read it with the state row (only this
-- function changes N).
CREATE FUNCTION {resize}(size bigint, n_now bigint)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    IF size >= n_now OR size < n_now / 4 THEN
        UPDATE {state} SET db_size = size, n = 2 * size + 1;
        PERFORM {major_rebalance}();
        RETURN true;
    END IF;
    UPDATE {state} SET db_size = size;
    RETURN false;
END;
$pgivm$;


