-- Recompute: the baseline users of REFRESH MATERIALIZED VIEW have today. After every statement that
-- writes a base table, the count is recomputed from scratch with the view's own join.
CREATE SCHEMA {schema};
COMMENT ON SCHEMA {schema} IS {schema_comment};

CREATE TABLE {state} (
    singleton       boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    updates_applied bigint NOT NULL DEFAULT 0  -- statements that refreshed the count
);
CREATE TABLE {result} (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    count     bigint NOT NULL
);
COMMENT ON TABLE {result} IS {result_comment};
INSERT INTO {state} DEFAULT VALUES;

CREATE FUNCTION {refresh}()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    UPDATE {state} SET updates_applied = updates_applied + 1;
    UPDATE {result} SET count = ({count_query});
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION {refresh}() IS {refresh_comment};
INSERT INTO {result} (count) VALUES (({count_query}));
