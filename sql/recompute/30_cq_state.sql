-- Recompute of a join-aggregate: the result as plain SQL computes it, kept in a table.
-- (the schema itself: pgivm_catalog.create_state_schema, as the view's owner)
COMMENT ON SCHEMA {schema} IS {schema_comment};

CREATE TABLE {state} (
    singleton       boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    updates_applied bigint NOT NULL DEFAULT 0  -- statements that recomputed the result
);
INSERT INTO {state} DEFAULT VALUES;
CREATE TABLE {maintained} AS {query} WITH NO DATA;
