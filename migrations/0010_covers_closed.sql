-- A writing statement locks, before it changes a row, the write_locks rows of every table that
-- shares a view with the table it writes, in oid order (0005). Over two views that share some
-- tables, V1 over r, s and V2 over s, t, that set grew within a transaction: a writer of t locked
-- s and t, one of r locked r and waited for s, and the first, going on to write s, then needed r:
-- a deadlock between READ COMMITTED writers (found by the isolation spec of outer-join views,
-- issue 22). The set is now closed: every table linked to the written one through a chain of
-- immediate views (the connected component), so a transaction takes at its first write all it
-- will need while it writes within that component. Creates and drops compute it one at a time
-- (write_covers locked), each seeing the others' committed views.

-- Each table a maintained immediate view reads, with its component: it reaches the tables of its
-- views, and theirs, until nothing new.
CREATE FUNCTION pgivm_catalog.table_components()
RETURNS TABLE (table_oid oid, covers oid[]) LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
    WITH RECURSIVE edge(a, b) AS (
        SELECT b1.table_oid, b2.table_oid
          FROM pgivm_catalog.base_tables b1
          JOIN pgivm_catalog.views v ON v.name = b1.view_name AND v.maintained
                                    AND v.params ->> 'refresh' IS DISTINCT FROM 'deferred'
          JOIN pgivm_catalog.base_tables b2 ON b2.view_name = b1.view_name
    ), reach(a, b) AS (
        SELECT a, b FROM edge
        UNION
        SELECT r.a, e.b FROM reach r JOIN edge e ON e.a = r.b
    )
    SELECT a, array_agg(DISTINCT b ORDER BY b) FROM reach GROUP BY a;
$$;
REVOKE ALL ON FUNCTION pgivm_catalog.table_components() FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgivm_catalog.recompute_covers(p_tables oid[])
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
BEGIN
    LOCK TABLE pgivm_catalog.write_covers IN EXCLUSIVE MODE;
    INSERT INTO pgivm_catalog.write_locks (table_oid)
    SELECT DISTINCT b.table_oid FROM pgivm_catalog.base_tables b WHERE b.table_oid = ANY (p_tables)
    ON CONFLICT DO NOTHING;
    DELETE FROM pgivm_catalog.write_covers w
     WHERE NOT EXISTS (SELECT FROM pgivm_catalog.table_components() c WHERE c.table_oid = w.table_oid);
    INSERT INTO pgivm_catalog.write_covers (table_oid, covers)
    SELECT c.table_oid, c.covers FROM pgivm_catalog.table_components() c
    ON CONFLICT (table_oid) DO UPDATE SET covers = EXCLUDED.covers
     WHERE pgivm_catalog.write_covers.covers IS DISTINCT FROM EXCLUDED.covers;
END;
$$;

SELECT pgivm_catalog.recompute_covers('{}');
