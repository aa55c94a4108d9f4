-- pgivm catalog, version 3: one catalog for every maintenance system.
--
-- Per view: its system, the system's parameters as jsonb (those kept in the view's state, such as
-- IVMε's epsilon, live there only), the version of the stored query model, the version of the SQL
-- templates it was installed with (`pgivm upgrade` reinstalls a view whose templates changed), and
-- the objects it installed besides its capture triggers (recorded per base table), so that `drop`
-- removes what was installed rather than a hard-coded list.

ALTER TABLE pgivm_catalog.views RENAME COLUMN strategy TO system;
ALTER TABLE pgivm_catalog.views ADD COLUMN params jsonb NOT NULL DEFAULT '{}'::jsonb;
ALTER TABLE pgivm_catalog.views ADD COLUMN model_version integer NOT NULL DEFAULT 1;
ALTER TABLE pgivm_catalog.views ADD COLUMN template_version text NOT NULL DEFAULT 'v1';
ALTER TABLE pgivm_catalog.views ADD COLUMN objects jsonb NOT NULL DEFAULT '[]'::jsonb;
COMMENT ON COLUMN pgivm_catalog.views.system IS 'the maintenance system (pgivm.systems.registry)';
COMMENT ON COLUMN pgivm_catalog.views.params IS 'the system''s parameters not kept in the view''s state';
COMMENT ON COLUMN pgivm_catalog.views.model_version IS 'version of the query model stored in model';
COMMENT ON COLUMN pgivm_catalog.views.template_version IS 'version of the SQL templates the view was installed with';
COMMENT ON COLUMN pgivm_catalog.views.objects IS 'objects installed besides the capture triggers: the user view, the state schema';

-- Views of version 1: the batch threshold was rendered into their trigger functions only.
UPDATE pgivm_catalog.views v
   SET params = CASE WHEN v.system IN ('ivme', 'first-order') THEN jsonb_build_object('batch_threshold', coalesce(
                    (SELECT (substring(p.prosrc FROM 'changed_rows <= (\d+)'))::integer
                       FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
                      WHERE n.nspname = v.state_schema AND p.proname LIKE 'on\_change\_%' LIMIT 1), 384))
                ELSE '{}'::jsonb END,
       objects = jsonb_build_array(jsonb_build_object('kind', 'view', 'schema', v.view_schema, 'name', v.name),
                                   jsonb_build_object('kind', 'schema', 'name', v.state_schema));

-- IVMε's epsilon lives in the view's state row, which its functions read; not here as well.
ALTER TABLE pgivm_catalog.views DROP COLUMN epsilon;
