-- A subquery of the view that aggregates, kept as a table of the state, derived_N
-- (pgivm.query.derived): its result, one row per group, the group's key values first in hidden
-- columns. Statement triggers on each table it reads call derived_N_on_M (20_on_change.sql),
-- named to fire after the view's own capture triggers on that table (AFTER triggers fire in name
-- order): the view first applies the table's change against the subquery's old result, then the
-- capture triggers on derived_N apply the result's change against the table's new rows, which
-- together are the change of the join.
--
-- A statement's change is handled by recounting the groups it touched: the keys of the groups its
-- changed rows join into (derived_N_touched), those groups recounted from the tables
-- (derived_N_fresh), and then only the rows that differ deleted and inserted, so the view's
-- capture sees the net change of the subquery's result. A group with a NULL key (never equal to
-- itself) is recounted with every other such group. A TRUNCATE, and a subquery without GROUP BY
-- (one row), recount everything (refill below). The cost: reading the touched groups' rows of the
-- tables (an index on the GROUP BY columns keeps that to the groups), writing only what changed.
--
-- The tables are read through views of the state bound to their oids (derived_N_table_M); the
-- recount is the subquery as pgivm parsed it, its identifiers quoted, its functions aggregates and
-- PostgreSQL's listed immutable ones, found in pg_catalog. SECURITY DEFINER and the view owner's,
-- as every capture function: a writer of the tables runs the owner's code with the owner's rights.

CREATE FUNCTION {refill}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
SET jit = off
AS $pgivm$
BEGIN
    -- one writer of the subquery's tables at a time recounts, and sees the last one's rows (each
    -- statement below reads what committed before it; a REPEATABLE READ snapshot older than the
    -- last update of this row fails with 40001 instead): two recounts of one group, each blind to
    -- the other's uncommitted rows, would keep only one of them (a deferred view's writers take no
    -- lock of the view's; an immediate view's are serialized already)
    UPDATE {lock} SET recounts = recounts + 1 WHERE singleton;
    INSERT INTO {fresh} {recount_all};
    DELETE FROM {derived} AS d
     WHERE NOT EXISTS (SELECT FROM {fresh} AS f WHERE {keys_equal} AND ROW(f.*) IS NOT DISTINCT FROM ROW(d.*));
    INSERT INTO {derived} SELECT * FROM {fresh} AS f WHERE NOT EXISTS (SELECT FROM {derived} AS d WHERE {keys_equal});
    DELETE FROM {fresh};
END;
$pgivm$;
COMMENT ON FUNCTION {refill}() IS {refill_comment};

CREATE FUNCTION {check}()
RETURNS bigint LANGUAGE sql SECURITY DEFINER STABLE
SET search_path = pg_catalog, pg_temp
SET row_security = off
SET jit = off
AS $pgivm$
    SELECT count(*) FROM ((SELECT * FROM {derived} EXCEPT ALL ({recount_all}))
                          UNION ALL (({recount_all}) EXCEPT ALL SELECT * FROM {derived})) AS differing
$pgivm$;
COMMENT ON FUNCTION {check}() IS {check_comment};
