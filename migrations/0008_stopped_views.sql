-- drop's first step stops a view (its trigger functions become no-ops) without touching a base
-- table; its second locks the tables and removes the rest. Between the two, write_covers still
-- named the stopped view's tables, so writers of them went on serializing on its write_locks rows
-- and held their table locks longer while they queued: four writers in a tight loop kept the
-- second step from its ACCESS EXCLUSIVE locks for 240 s (CI, stop 28). A stopped view covers
-- nothing: writers of its tables lock only for the views still maintained.

ALTER TABLE pgivm_catalog.views ADD COLUMN maintained boolean NOT NULL DEFAULT true;
COMMENT ON COLUMN pgivm_catalog.views.maintained IS
    'pgivm: false once drop has stopped the view and before it has removed it (pgivm drop again finishes)';

CREATE OR REPLACE FUNCTION pgivm_catalog.recompute_covers(p_tables oid[])
RETURNS void LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
    INSERT INTO pgivm_catalog.write_locks (table_oid)
    SELECT DISTINCT b.table_oid FROM pgivm_catalog.base_tables b WHERE b.table_oid = ANY (p_tables)
    ON CONFLICT DO NOTHING;
    DELETE FROM pgivm_catalog.write_covers WHERE table_oid = ANY (p_tables);
    INSERT INTO pgivm_catalog.write_covers (table_oid, covers)
    SELECT b1.table_oid, array_agg(DISTINCT b2.table_oid ORDER BY b2.table_oid)
      FROM pgivm_catalog.base_tables b1
      JOIN pgivm_catalog.views v ON v.name = b1.view_name AND v.maintained
                                AND v.params ->> 'refresh' IS DISTINCT FROM 'deferred'
      JOIN pgivm_catalog.base_tables b2 ON b2.view_name = b1.view_name
     WHERE b1.table_oid = ANY (p_tables)
     GROUP BY b1.table_oid;
$$;

-- drop's first step, after the view's trigger functions became no-ops in the same transaction.
-- The covers change without a lock on the tables: a writer that read the old ones locks more
-- rows than it needs, never fewer for a view still maintained.
CREATE FUNCTION pgivm_catalog.stop_view(p_view text)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
BEGIN
    PERFORM pgivm_catalog.check_acting_for(pgivm_catalog.owner_of(p_view), format('view %s', p_view));
    UPDATE pgivm_catalog.views SET maintained = false WHERE name = p_view;
    PERFORM pgivm_catalog.recompute_covers(array_agg(b.table_oid)) FROM pgivm_catalog.base_tables b WHERE b.view_name = p_view;
END;
$$;

COMMENT ON FUNCTION pgivm_catalog.stop_view(text) IS
    'pgivm: drop''s first step: the view no longer maintained, its tables'' writers no longer serialized for it';
GRANT EXECUTE ON FUNCTION pgivm_catalog.stop_view(text) TO PUBLIC;
