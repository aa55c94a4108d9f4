-- The listing's materialized part ([L] Appendix E, Figure 12): Q^L, the triangles whose three
-- tuples are all heavy or all light, each distinct (a, b, c) once with its multiplicity. The other
-- six combinations stay factorized (P_KLM and W_KL of each relation, 12_listing_tables.sql).
CREATE TABLE {listing} (
    a    {type_a} NOT NULL,
    b    {type_b} NOT NULL,
    c    {type_c} NOT NULL,
    mult bigint NOT NULL,  -- never 0 once a maintenance statement ends
    PRIMARY KEY (a, b, c)
);
COMMENT ON TABLE {listing} IS 'IVMε listing: the triangles R_h S_h T_h and R_l S_l T_l with their multiplicities';
