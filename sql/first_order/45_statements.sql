-- One SQL statement may write several base tables of the view: a foreign key's ON DELETE CASCADE
-- deletes from the referencing table inside the DELETE, a data-modifying WITH writes one table per
-- query, INSERT ... ON CONFLICT DO UPDATE inserts and updates. Each write fires its own statement
-- trigger, and when the first of them runs, every table already shows all of the statement's
-- changes: a delta query joining the first change with the others' tables as they are now would
-- count the changes' cross term twice (a join of r's and s's new rows, once with each).
--
-- So a statement counts itself in (statement_open, the BEFORE trigger), and each AFTER trigger only
-- queues its net change in K_delta and counts itself out (in the update of the state row that counts
-- the rows changed, capture_functions.sql). The last one out (apply_pending) applies
-- every atom's queued change in order, each delta query reading the earlier atoms as they are now
-- and the later ones as they were (now, less their queued change): the delta rule of cq.py.
-- The counter lives in the state row, which every writer of the view updates anyway (writers of
-- one view are serialized there): a writer cannot set it, and a rolled-back statement takes its
-- count back with it.
CREATE FUNCTION {statement_open}()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    UPDATE {state} SET statements_open = statements_open + 1 WHERE singleton;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION {statement_open}() IS {statement_open_comment};

CREATE FUNCTION {apply_pending}(still_open integer)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    queued boolean[];  -- per atom: a change waits in its K_delta
BEGIN
    IF still_open < 0 THEN  -- a statement that began before the view was made (create's locks prevent it)
        UPDATE {state} SET statements_open = 0 WHERE singleton;
    END IF;
    SELECT ARRAY[{queued}] INTO queued;
{apply}
END;
$pgivm$;
COMMENT ON FUNCTION {apply_pending}(integer) IS {apply_pending_comment};

-- TRUNCATE of a partition: its BEFORE trigger queued the rows as a deletion and counted the
-- statement in, while the table still held them; this AFTER trigger applies once they are gone, so
-- that every delta query reads the live table as its new state, as for any other statement.
CREATE FUNCTION {statement_close}()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    still_open integer;
BEGIN
    UPDATE {state} SET statements_open = statements_open - 1 WHERE singleton RETURNING statements_open INTO still_open;
    IF still_open <= 0 THEN
        PERFORM {apply_pending}(still_open);
    END IF;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION {statement_close}() IS {statement_close_comment};
