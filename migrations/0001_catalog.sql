-- pgivm catalog, version 1: which maintained views exist in this database and how they are built.
-- The state of each view lives in its own schema (views.state_schema); this table only describes it.

CREATE TABLE pgivm_catalog.views (
    name         text PRIMARY KEY,              -- the name given to `pgivm create`
    view_schema  text NOT NULL,                 -- schema of the user-facing view that exposes the result
    state_schema text NOT NULL UNIQUE,          -- schema holding the state tables and trigger functions
    strategy     text NOT NULL,                 -- 'ivme', ...
    epsilon      float8 CHECK (epsilon BETWEEN 0 AND 1),
    definition   text NOT NULL,                 -- the SQL the view was created from
    model        jsonb NOT NULL,                -- the parsed query: tables, join columns, aggregate
    created_at   timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE pgivm_catalog.views IS 'pgivm: one row per maintained view';
