-- The delta tree of one atom (§4.3 of the paper): the statement's net change of the atom, waiting in
-- its _delta table, goes up the path from the atom's leaf to the root, set at a time: each view on
-- the path is the previous delta joined with the stored siblings (lifted with g_X and summed
-- where X is bound), and each stored view is merged with its delta. Called by the capture
-- functions, which hold the view's lock; the scratch tables are empty again when it returns.
--
-- Two copies of the same statements. A small change runs under the capture functions' settings
-- (nested loops over index lookups, plans kept from call to call): each row costs a few lookups
-- whatever the size of the views. A change of more than {bulk_rows} rows is planned afresh with
-- every join method allowed, so that joining it with a sibling view may scan that view once
-- instead of looking it up row by row. A view with float sums reads floats as text, which
-- extra_float_digits shapes: such a view sets it on both functions (see ../floats.py).
--
-- (first-order renders this template too, with delta queries that read the base tables: with
-- row_security off a row-level security policy on one is an error, not code run as the view's
-- owner.)
CREATE FUNCTION {apply_bulk}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
SET plan_cache_mode = force_custom_plan{settings}
AS $pgivm$
BEGIN
{statements}
END;
$pgivm$;
COMMENT ON FUNCTION {apply_bulk}() IS {comment};

CREATE FUNCTION {apply_batch}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off{settings}
AS $pgivm$
BEGIN
    IF (SELECT count(*) FROM (SELECT FROM {delta} LIMIT {bulk_rows} + 1) AS rows) > {bulk_rows} THEN
        PERFORM {apply_bulk}();
        RETURN;
    END IF;
{statements}
END;
$pgivm$;
COMMENT ON FUNCTION {apply_batch}() IS {comment};
