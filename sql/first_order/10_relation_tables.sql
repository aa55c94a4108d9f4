-- First-order IVM of one relation K(X,Y) of the cycle, with L(Y,Z) next and M(Z,X) previous
-- (rendered for K = R, S, T). The classical delta query for an update (alpha, beta) -> m:
--   delta Q = m * sum_z L(beta, z) * M(z, alpha)
-- one loop over L(beta, .) probing M(z, alpha): O(N) per update when beta has high degree.
-- The relations are kept as indexed copies (one row per distinct tuple with its multiplicity):
-- row triggers of a multi-row statement see the statement's final base table, and a self-join
-- would read the very table being changed, so the delta must read a copy kept in step.

CREATE TABLE {k_tuples} (
    {x}  {type_x} NOT NULL,
    {y}  {type_y} NOT NULL,
    mult bigint NOT NULL,  -- never 0 once a maintenance statement ends
    PRIMARY KEY ({x}, {y}) INCLUDE (mult)  -- the delta loop's scan and probes read the index alone
);
COMMENT ON TABLE {k_tuples} IS {k_tuples_comment};

-- M by its second column, for the merge in 20_relation_functions.sql.
CREATE INDEX ON {k_tuples} ({y}, {x}) INCLUDE (mult);

-- A multi-row statement's net change of K, applied set at a time (see sql/capture/capture_functions.sql).
CREATE TABLE {k_delta} (
    {x}      {type_x} NOT NULL,
    {y}      {type_y} NOT NULL,
    mult     bigint NOT NULL,
    new_mult bigint,
    PRIMARY KEY ({x}, {y})
);
