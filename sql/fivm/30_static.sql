-- A table declared static (--static) has no delta tree: the views that only its changes would
-- update are not stored (μ of Figure 5 with U = the other tables). A write to it would leave the
-- view wrong, so it is refused.
CREATE FUNCTION {refuse}()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    RAISE EXCEPTION USING
        ERRCODE = 'object_not_in_prerequisite_state',
        MESSAGE = format('table %s is static for pgivm view %s: it cannot change while the view exists',
                         TG_RELID::regclass, {view_literal}),
        HINT = format('Drop the view (pgivm drop %s) or create it again without --static.', {view_literal});
END;
$pgivm$;
COMMENT ON FUNCTION {refuse}() IS {comment};
