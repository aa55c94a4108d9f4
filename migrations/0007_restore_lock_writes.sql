-- `drop` of any immediate view replaced the trigger functions its triggers called by no-ops, and
-- one of them is lock_writes, which every immediate view's lock trigger calls: after the first
-- drop in a database, writers of the remaining views took no lock before changing their state,
-- and writers of views over shared tables deadlocked again (issue 21, item 15). drop now leaves
-- the catalog's functions alone; this puts lock_writes back as 0005 made it.

CREATE OR REPLACE FUNCTION pgivm_catalog.lock_writes()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
    covered oid[];
BEGIN
    SELECT w.covers INTO covered FROM pgivm_catalog.write_covers w WHERE w.table_oid = TG_RELID;
    IF NOT FOUND THEN  -- a partition: its base table is one of its ancestors
        SELECT w.covers INTO covered
          FROM pg_catalog.pg_partition_ancestors(TG_RELID) a JOIN pgivm_catalog.write_covers w ON w.table_oid = a.relid
         LIMIT 1;
    END IF;
    IF covered IS NOT NULL THEN
        PERFORM FROM pgivm_catalog.write_locks l WHERE l.table_oid = ANY (covered) ORDER BY l.table_oid FOR NO KEY UPDATE;
    END IF;
    RETURN NULL;
END;
$$;

COMMENT ON FUNCTION pgivm_catalog.lock_writes() IS
    'pgivm: locks the write_locks rows of every immediate view over the table a statement writes, in one order';
