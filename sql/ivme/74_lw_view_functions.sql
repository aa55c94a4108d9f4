-- View-wide maintenance of a Loomis-Whitney count (Appendix F): major rebalancing, the count from
-- the partitioned state, and the restart after a build or a TRUNCATE. Rendered once per view.

-- MajorRebalancing: theta = N^epsilon, a strict repartition of every relation, every V_i recomputed.
CREATE FUNCTION {major_rebalance}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp{join_order}
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
BEGIN
    UPDATE {state} SET theta = power(n::float8, epsilon), major_rebalances = major_rebalances + 1;
{repartitions}
{recomputes}
END;
$pgivm$;
COMMENT ON FUNCTION {major_rebalance}() IS 'IVMε MajorRebalancing: strict repartition at theta = N^epsilon and every V_i recomputed';


-- The count from the state: the join of every relation's two parts (each tuple in one of them).
-- Used by the build, TRUNCATE and verify.
CREATE FUNCTION {count_from_state}()
RETURNS bigint LANGUAGE sql SECURITY DEFINER STABLE
SET search_path = pg_catalog, pg_temp{join_order}
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
    SELECT coalesce(sum({product}), 0)::bigint
      FROM {join}
$pgivm$;


-- Preprocessing: N = 2|D| + 1, strict partitions, the views, the count.
CREATE FUNCTION {restart}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp{join_order}
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
DECLARE
    size bigint;
BEGIN
    SELECT {sizes} INTO size;
    UPDATE {state} SET db_size = size, n = 2 * size + 1;
    PERFORM {major_rebalance}();
    UPDATE {result} SET count = {count_from_state}();
END;
$pgivm$;
