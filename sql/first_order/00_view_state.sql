-- First-order (classical) IVM of the triangle count: the state shared by the whole view.
-- (the schema itself: pgivm_catalog.create_state_schema, as the view's owner)
COMMENT ON SCHEMA {schema} IS {schema_comment};

CREATE TABLE {state} (
    singleton       boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    updates_applied bigint NOT NULL DEFAULT 0  -- base-table row changes maintained so far
);
COMMENT ON TABLE {state} IS 'first-order IVM state; every maintaining transaction updates this row first, which serializes writers of the view';

CREATE TABLE {result} (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    count     bigint NOT NULL
);
COMMENT ON TABLE {result} IS {result_comment};
INSERT INTO {state} DEFAULT VALUES;
INSERT INTO {result} (count) VALUES (0);
