-- IVMε state shared by the whole view: the maintained count and the threshold bookkeeping.
-- Rendered once per view. Placeholders are quoted identifiers and literals filled in by
-- pgivm.systems.ivme; every name is schema-qualified.

-- (the schema itself: pgivm_catalog.create_state_schema, as the view's owner)
COMMENT ON SCHEMA {schema} IS {schema_comment};

CREATE TABLE {state} (
    singleton        boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    epsilon          float8 NOT NULL CHECK (epsilon BETWEEN 0 AND 1),
    n                bigint NOT NULL,           -- threshold base N; invariant floor(N/4) <= |D| < N
    theta            float8 NOT NULL,           -- heavy/light threshold N^epsilon
    db_size          bigint NOT NULL,           -- |D|: distinct tuples of R, S and T together
    updates_applied  bigint NOT NULL DEFAULT 0, -- base-table row changes maintained so far
    major_rebalances bigint NOT NULL DEFAULT 0,
    minor_rebalances bigint NOT NULL DEFAULT 0
);
COMMENT ON TABLE {state} IS 'IVMε state: epsilon, threshold base N, theta = N^epsilon, |D|, counters. '
    'Every maintaining transaction updates this row first, which serializes writers of the view.';

CREATE TABLE {result} (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    count     bigint NOT NULL
);
COMMENT ON TABLE {result} IS {result_comment};
