-- After TRUNCATE of a plain table (its atoms' rows and their units' rows are gone, clear_K): the
-- join is empty, so is the sample, and the reservoir starts again (w = +inf). The index (groups
-- and members too) is rebuilt from the unit rows left, in row-id order, through the same
-- IndexUpdate as inserts: O(N log N), no batch (no result can exist while an atom is empty).
CREATE FUNCTION {restart}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    r record;
BEGIN
    DELETE FROM {sample};
    UPDATE {state} SET w = NULL, q = 0, filled = 0 WHERE singleton;
    DELETE FROM {cnt};
    DELETE FROM {bucket};
    DELETE FROM {bsize};
    DELETE FROM {member};
    DELETE FROM {gmem};
    DELETE FROM {grp};
    FOR r IN SELECT * FROM {rows} ORDER BY rid LOOP
        PERFORM {index_insert}(r.unit, r.rid, r.kids);
    END LOOP;
END;
$pgivm$;
