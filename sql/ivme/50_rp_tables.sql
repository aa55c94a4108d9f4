-- The state of one relation K(X,Y) of the cycle R(A,B) -> S(B,C) -> T(C,A) under refined partitions
-- (Kara et al., long version, Appendix D): K partitioned on both of its variables. Rendered three
-- times by rotation (K = R, S, T; L the next relation, M the previous one).
--
--   K             one row per distinct tuple with its multiplicity and its part, two flags: h1, the
--                 X-value's part (heavy: degree in K on X >= theta/2; >= theta right after a major
--                 rebalancing), h2, the Y-value's (Definition 17: each judged by its degree in all of K)
--   K_x_degree    per X-value: its degree in K (distinct tuples) and its part; K_y_degree likewise
--   V_KL          V_KL(X,Z) = sum_Y K_hl(X,Y) * L_lh(Y,Z): light on the variable joined away, heavy on
--                 both it keeps (Figure 8), so at most 2 N^(1-eps) * 2 N^(1-eps) and N * 3/2 N^eps rows
CREATE TABLE {k} (
    {x}  {type_x} NOT NULL,
    {y}  {type_y} NOT NULL,
    mult bigint NOT NULL,
    h1   boolean NOT NULL,
    h2   boolean NOT NULL,
    PRIMARY KEY ({x}, {y}) INCLUDE (mult, h2)
);
CREATE INDEX ON {k} ({y}, {x}) INCLUDE (mult, h1);
-- K's tuples at one X-value whose Y-value is heavy (fewer than 2 N^(1-eps) of them), and at one
-- Y-value whose X-value is heavy: the loops of an update whose other two values are both heavy.
CREATE INDEX ON {k} ({x}, {y}) INCLUDE (mult) WHERE h2;
CREATE INDEX ON {k} ({y}, {x}) INCLUDE (mult) WHERE h1;
COMMENT ON TABLE {k} IS {k_comment};

CREATE TABLE {k_x_degree} ({x} {type_x} PRIMARY KEY, degree bigint NOT NULL, heavy boolean NOT NULL);
CREATE TABLE {k_y_degree} ({y} {type_y} PRIMARY KEY, degree bigint NOT NULL, heavy boolean NOT NULL);

CREATE TABLE {v_kl} (
    {x}  {type_x} NOT NULL,
    {z}  {type_z} NOT NULL,
    mult bigint NOT NULL,
    PRIMARY KEY ({x}, {z}) INCLUDE (mult)
);
CREATE INDEX ON {v_kl} (mult) WHERE mult = 0;  -- entries an upsert brings to 0, deleted at once
COMMENT ON TABLE {v_kl} IS {v_kl_comment};

-- A multi-row statement's net change of K, applied set at a time by apply_batch_K, with the parts
-- of its values before the batch and its multiplicity after it.
CREATE TABLE {k_delta} (
    {x}      {type_x} NOT NULL,
    {y}      {type_y} NOT NULL,
    mult     bigint NOT NULL,
    h1       boolean,
    h2       boolean,
    new_mult bigint
);
