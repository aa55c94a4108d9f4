-- After TRUNCATE of a plain table (its atoms' rows are gone, clear_K): the join is empty, so is
-- the sample, and the reservoir starts again (w = +inf). The index is rebuilt from the rows left,
-- in row-id order, through the same IndexUpdate as inserts: O(N log N), no batch (no result can
-- exist while an atom is empty).
CREATE FUNCTION {restart}()
RETURNS void LANGUAGE plpgsql
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
    INSERT INTO {member}
    SELECT i - 1, x.atom, x.kids[i], x.rid FROM {rows} x, generate_subscripts(x.kids, 1) AS i WHERE x.kids[i] IS NOT NULL;
    FOR r IN SELECT * FROM {rows} ORDER BY rid LOOP
        PERFORM {index_insert}(r.atom, r.rid, r.kids);
    END LOOP;
END;
$pgivm$;
