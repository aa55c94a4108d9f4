-- pgivm's catalog functions run small queries over PostgreSQL's catalogs and pgivm's own tables,
-- on every DDL command (the event triggers), every write to a base table of an immediate view
-- (lock_writes) and every read of a deferred view. Their plans' cost estimates can pass
-- jit_above_cost (catalog tables without statistics, OR-joins over set-returning functions), and a
-- server built with LLVM then compiles them each time: about 0.85 s per DDL command on PostgreSQL
-- 15, which made every CREATE VIEW in the database wait that long and a deferred create take
-- minutes. JIT pays for itself on long analytical queries, never on these.

DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
              WHERE p.pronamespace = 'pgivm_catalog'::regnamespace AND p.prokind = 'f' ORDER BY p.oid LOOP
        EXECUTE format('ALTER FUNCTION %s SET jit = off', f);
    END LOOP;
END;
$$;
