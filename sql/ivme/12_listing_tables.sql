-- The listing state of one relation K(X,Y) of the cycle, for a view of the triangles themselves
-- rather than their number (Kara et al., long version, Appendix E, Figure 12). Rendered for K = R,
-- S, T with L the next relation and M the previous one; only for a listing view.
--
--   W_KL(X,Y,Z) = K_heavy(X,Y) * L_light(Y,Z)          the paper's V_RS(a,b,c) for K = R
--   P_KLM(X,Z)  = sum_Y W_KL(X,Y,Z) * M(Z,X)             the paper's Q_hlt(a,c): the triangles of
--                                                       K_heavy L_light M, one row per (X,Z) that has one
-- sum_Y W_KL is the count's V_KL (10_relation_tables.sql). Both hold O(N^(1+min(eps,1-eps))) rows.
-- Multiplicities are never 0 once a maintenance statement ends (an upsert reaching 0 deletes the row).

CREATE TABLE {w_kl} (
    {x}  {type_x} NOT NULL,
    {y}  {type_y} NOT NULL,
    {z}  {type_z} NOT NULL,
    mult bigint NOT NULL,
    PRIMARY KEY ({x}, {z}, {y}) INCLUDE (mult)  -- enumeration reads the Y-values of one (X, Z)
);
-- An update (beta, gamma) of L_light changes W_KL(., beta, gamma): at most 2 N^(1-eps) heavy X-values.
CREATE INDEX ON {w_kl} ({y}, {z}, {x});
COMMENT ON TABLE {w_kl} IS {w_kl_comment};

CREATE TABLE {p_klm} (
    {x}  {type_x} NOT NULL,
    {z}  {type_z} NOT NULL,
    mult bigint NOT NULL,
    PRIMARY KEY ({x}, {z})
);
COMMENT ON TABLE {p_klm} IS {p_klm_comment};
