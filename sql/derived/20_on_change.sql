-- (see 10_functions.sql) One statement's change of one table the subquery reads: the groups its
-- changed rows join into, recounted; only the rows that differ written.
CREATE FUNCTION {on_change}()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
-- a statement touches a few groups: each recounted through an index on its keys where the table has
-- one (the scratch tables' statistics would otherwise guess thousands of keys and scan the table)
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
SET jit = off
AS $pgivm$
BEGIN
    UPDATE {lock} SET recounts = recounts + 1 WHERE singleton;  -- one writer at a time (see refill)
    IF TG_OP IN ('DELETE', 'UPDATE') THEN  -- what it takes away, for this and the client statement's later triggers' keys
        -- first, the rows earlier statements took from the tables: their keys were found then (one
        -- writer at a time: no other transaction's are open). Only here, where rows are added: the
        -- reads take this client statement's rows alone, so an INSERT skips these statements
{forget_gone}
        INSERT INTO {gone} ({gone_columns}, xid, at)
        SELECT {old_columns}, pg_catalog.pg_current_xact_id(), pg_catalog.statement_timestamp() FROM old_rows AS o;
    END IF;
    IF TG_OP = 'INSERT' THEN
        INSERT INTO {touched} {touched_by_insert};
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO {touched} {touched_by_delete};
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO {touched} {touched_by_update};
    ELSE  -- TRUNCATE
        PERFORM {refill}();
        RETURN NULL;
    END IF;
    INSERT INTO {fresh} {recount_touched};
    IF EXISTS (SELECT FROM {touched} AS t WHERE NOT ({touched_keys_not_null})) THEN
        -- a group with a NULL key: recount every such group, and replace them all
        INSERT INTO {fresh} {recount_null_keys};
        DELETE FROM {derived} AS d WHERE NOT ({derived_keys_not_null});
    END IF;
    DELETE FROM {derived} AS d
     WHERE {derived_touched}
       AND NOT EXISTS (SELECT FROM {fresh} AS f WHERE {keys_equal} AND ROW(f.*) IS NOT DISTINCT FROM ROW(d.*));
    INSERT INTO {derived} SELECT * FROM {fresh} AS f WHERE NOT EXISTS (SELECT FROM {derived} AS d WHERE {keys_equal});
    DELETE FROM {touched};
    DELETE FROM {fresh};
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION {on_change}() IS {on_change_comment};
