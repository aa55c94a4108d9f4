-- The state of one relation K(X,Y) of the cycle R(A,B) -> S(B,C) -> T(C,A), partitioned on X.
-- Rendered three times by rotation: K = R, S, T with L the next relation and M the previous one.
--
--   K_heavy  tuples whose X-value is heavy (degree >= theta/2; >= theta right after a major rebalancing)
--   K_light  tuples whose X-value is light (degree < 3/2 theta; < theta right after a major rebalancing)
--   K_degree per X-value: its degree in K (distinct tuples) and which part holds it
--   V_KL     the auxiliary view V_KL(X,Z) = sum_Y K_heavy(X,Y) * L_light(Y,Z)
--
-- Tuples carry their multiplicity (a bag); rows whose multiplicity reaches 0 are deleted.

CREATE TABLE {k_heavy} (
    {x}  {type_x} NOT NULL,
    {y}  {type_y} NOT NULL,
    mult bigint NOT NULL,  -- never 0 once a maintenance statement ends (verify checks it)
    PRIMARY KEY ({x}, {y}) INCLUDE (mult)  -- the delta loops' scans and probes read the index alone
);
-- An update (alpha, beta) to the next relation L scans K_heavy by its second column: at most 2 N^(1-eps) rows.
CREATE INDEX ON {k_heavy} ({y}, {x}) INCLUDE (mult);
COMMENT ON TABLE {k_heavy} IS {k_heavy_comment};

CREATE TABLE {k_light} (
    {x}  {type_x} NOT NULL,
    {y}  {type_y} NOT NULL,
    mult bigint NOT NULL,  -- never 0 once a maintenance statement ends (verify checks it)
    PRIMARY KEY ({x}, {y}) INCLUDE (mult)  -- the delta loops' scans and probes read the index alone
);
-- ... and K_light by its second column, merged with L_light(y, .) when K_light(., y) is short.
CREATE INDEX ON {k_light} ({y}, {x}) INCLUDE (mult);
COMMENT ON TABLE {k_light} IS {k_light_comment};

CREATE TABLE {k_degree} (
    {x}    {type_x} PRIMARY KEY,
    degree bigint NOT NULL,  -- > 0 once a maintenance statement ends (verify checks it)
    heavy  boolean NOT NULL
);
COMMENT ON TABLE {k_degree} IS {k_degree_comment};

CREATE TABLE {v_kl} (
    {x}  {type_x} NOT NULL,
    {z}  {type_z} NOT NULL,
    mult bigint NOT NULL,  -- an upsert may pass through 0; the maintenance deletes such rows at once
    PRIMARY KEY ({x}, {z})
);
COMMENT ON TABLE {v_kl} IS {v_kl_comment};

-- A multi-row statement's net change of K, applied set at a time by apply_batch_K (25_relation_batch.sql).
CREATE TABLE {k_delta} (
    {x}      {type_x} NOT NULL,
    {y}      {type_y} NOT NULL,
    mult     bigint NOT NULL,  -- net change of the tuple's multiplicity in the statement (never 0)
    heavy    boolean,          -- the part the tuple goes to (alpha's part before the batch)
    new_mult bigint,           -- its multiplicity after the batch (0: it vanished; = mult: it is new)
    PRIMARY KEY ({x}, {y})
) WITH (fillfactor = 50);  -- room on every page for the one in-place (HOT) update of each row below
COMMENT ON TABLE {k_delta} IS {k_delta_comment};
