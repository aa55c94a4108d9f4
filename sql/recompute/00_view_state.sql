-- Recompute: the baseline users of REFRESH MATERIALIZED VIEW have today. After every statement that
-- writes a base table, the count is recomputed from scratch with the view's join.
-- (the schema itself: pgivm_catalog.create_state_schema, as the view's owner)
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
