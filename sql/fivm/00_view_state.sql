-- F-IVM (Nikolic & Olteanu, SIGMOD 2018): the state of one view. The view tree's stored views,
-- their scratch tables and the atoms' net-change tables are created after this (maintain.py).
-- (the schema itself: pgivm_catalog.create_state_schema, as the view's owner)
COMMENT ON SCHEMA {schema} IS {schema_comment};

CREATE TABLE {state} (
    singleton       boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    updates_applied bigint NOT NULL DEFAULT 0  -- base rows changed (and TRUNCATEs) since create
);
INSERT INTO {state} DEFAULT VALUES;
