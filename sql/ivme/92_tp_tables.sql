-- The state of a 3-path count Q = sum over b, c of R(b) S(b,c) T(c), the 3R² class of counts over
-- three relations (Kara et al., long version, Appendix H.3, Figure 22), beside the count and the
-- bookkeeping of 00_view_state.sql. Rendered once per view.
--
-- In the paper's letters (Figure 22 takes A_ST empty) the middle relation is R(a_RT, a_RS), the
-- unpartitioned end T(a_RT) and the other end S(a_RS); here they are S(b,c), R(b) and T(c). The
-- middle is partitioned on the variable it shares with the unpartitioned end (Definition 40:
-- R on A_RT), kept on each tuple as a flag and, per value, in a degree table. The other end would
-- be partitioned on its whole key: every value's degree is 1, so it is light at every epsilon > 0
-- and kept whole (at epsilon = 0 the paper's S_h terms are this state's st_heavy terms, reading all of
-- S either way). The two auxiliary views of Figure 22:
--
--   rs_light(c) = sum_b R(b) S_l(b,c)            (V_RlT: the light B-values' paths into c)
--   st_heavy(b) = sum_c S_h(b,c) T(c)            (V_RhSl: one row per heavy B-value)
--
-- Both are linear in |D| (rs_light has at most one row per tuple of S_l, st_heavy one per heavy value), so
-- the state is linear, as Theorem 37 says of 3R². Every view's entries are nonzero (a partial index
-- finds those an upsert brings to 0).

CREATE TABLE {r} (b {b_type} PRIMARY KEY, mult bigint NOT NULL);
COMMENT ON TABLE {r} IS 'IVMε (3-path): R(B), one row per distinct value with its multiplicity';
CREATE TABLE {t} (c {c_type} PRIMARY KEY, mult bigint NOT NULL);
COMMENT ON TABLE {t} IS 'IVMε (3-path): T(C), one row per distinct value with its multiplicity';

CREATE TABLE {s} (
    b    {b_type} NOT NULL,
    c    {c_type} NOT NULL,
    mult bigint NOT NULL,
    hb   boolean NOT NULL,  -- the B-value's part (heavy: degree in S on B >= theta, with the slack of minor rebalancing)
    PRIMARY KEY (b, c) INCLUDE (mult, hb)
);
-- S_h at one C-value: at most one tuple per heavy B-value, fewer than 2 N^(1-eps)
CREATE INDEX ON {s} (c, b) INCLUDE (mult) WHERE hb;
COMMENT ON TABLE {s} IS 'IVMε (3-path): S(B,C) partitioned on B, the part as a flag';

CREATE TABLE {s_b_degree} (b {b_type} PRIMARY KEY, degree bigint NOT NULL, heavy boolean NOT NULL);
COMMENT ON TABLE {s_b_degree} IS 'IVMε: per B-value of S, its degree (distinct tuples) and its part';

CREATE TABLE {rs_light} (c {c_type} PRIMARY KEY, mult bigint NOT NULL);
CREATE TABLE {st_heavy} (b {b_type} PRIMARY KEY, mult bigint NOT NULL);
CREATE INDEX ON {rs_light} (mult) WHERE mult = 0;
CREATE INDEX ON {st_heavy} (mult) WHERE mult = 0;
COMMENT ON TABLE {rs_light} IS 'IVMε (3-path) view V_RlT: sum_b R(b) S_l(b,c)';
COMMENT ON TABLE {st_heavy} IS 'IVMε (3-path) view V_RhSl: for B-values heavy in S, sum_c S_h(b,c) T(c)';

-- A multi-row statement's net change of each relation, applied set at a time by apply_batch_K: for
-- R, its values' parts in S before the batch (NULL: S has no tuple with it); for S, the parts of
-- its B-values before the batch and each tuple's multiplicity after it.
CREATE TABLE {r_delta} (b {b_type} NOT NULL, mult bigint NOT NULL, heavy boolean);
CREATE TABLE {s_delta} (b {b_type} NOT NULL, c {c_type} NOT NULL, mult bigint NOT NULL, hb boolean, new_mult bigint);
CREATE TABLE {t_delta} (c {c_type} NOT NULL, mult bigint NOT NULL);
