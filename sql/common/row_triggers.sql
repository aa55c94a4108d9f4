-- Triggers on one base table that feeds relations of the view (one relation, or several for a
-- self-join such as the graph form over one edge table). Rendered once per base table, for every
-- strategy that maintains per relation with apply_<k>(x, y, m) functions (ivme, first-order).
--
-- Each row change is applied to every relation the table feeds, in the order R, S, T, each
-- seeing the state left by the previous one: that is exactly the delta of the self-join count.
-- An UPDATE is a delete of the old row followed by an insert of the new one.
-- These are the only entry points: SECURITY DEFINER so that writers of the base table need no
-- privileges on the state, with a fixed search_path, and with seqscan, hash and merge joins off
-- so every maintenance statement is an index nested loop from the bounded side.

-- Every writing statement takes the view's lock before it touches a row: writers of one view then
-- queue on this row instead of deadlocking on each other's base-table rows.
CREATE FUNCTION {on_statement}()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $pgivm$
BEGIN
    UPDATE {state} SET updates_applied = updates_applied WHERE singleton;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION {on_statement}() IS {on_statement_comment};

CREATE FUNCTION {on_write}()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
-- A disabled plan node carries a huge cost (PostgreSQL <= 15), which would trigger JIT compilation
-- of every statement: milliseconds spent compiling a one-row lookup.
SET jit = off
AS $pgivm$
BEGIN
    -- Serializes the view's writers; under REPEATABLE READ or SERIALIZABLE a concurrent writer
    -- that committed first makes this a serialization failure instead of a lost triangle.
    UPDATE {state} SET updates_applied = updates_applied + 1;
    IF TG_OP <> 'INSERT' THEN
{apply_old}
    END IF;
    IF TG_OP <> 'DELETE' THEN
{apply_new}
    END IF;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION {on_write}() IS {on_write_comment};

CREATE FUNCTION {on_truncate}()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $pgivm$
BEGIN
    UPDATE {state} SET updates_applied = updates_applied + 1;
{reload}
    PERFORM {restart}();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION {on_truncate}() IS {on_truncate_comment};

CREATE TRIGGER {lock_trigger} BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table}
    FOR EACH STATEMENT EXECUTE FUNCTION {on_statement}();
CREATE TRIGGER {insert_trigger} AFTER INSERT ON {table}
    FOR EACH ROW EXECUTE FUNCTION {on_write}();
CREATE TRIGGER {delete_trigger} AFTER DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION {on_write}();
-- Only an UPDATE that changes a join column changes the view.
CREATE TRIGGER {update_trigger} AFTER UPDATE ON {table}
    FOR EACH ROW WHEN ({join_columns_changed}) EXECUTE FUNCTION {on_write}();
CREATE TRIGGER {truncate_trigger} AFTER TRUNCATE ON {table}
    FOR EACH STATEMENT EXECUTE FUNCTION {on_truncate}();
