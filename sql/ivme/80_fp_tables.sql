-- The state of a 4-path count Q = sum over a, b, c of R(a) S(a,b) T(b,c) U(c) (Kara et al., long version,
-- Appendix G), beside the count and the bookkeeping of 00_view_state.sql. Rendered once per view.
--
-- S is partitioned on both of its variables and so is T (G.1): a tuple's part is the pair of its
-- values' parts, kept on the tuple as two flags (S_hl: heavy A-value, light B-value) and, per
-- value, in a degree table. R and U are not partitioned. The auxiliary views are Figure 14's, or
-- sums of them (each view below names the paper's), keyed as their names say:
--
--   w_r(b)    = sum_a R(a) S(a,b) over S_ll, S_lh, S_hh       (V_RS_ll + V_RS_lh + V_RS_hh)
--   w_u(b)    = sum_c T(b,c) U(c) over T_ll, T_hl, T_hh       (V_T_ll_U + V_T_hl_U + V_T_hh_U)
--   p_r(a,c)  = sum_b S_ll(a,b) T_lh(b,c)                     (V_S_ll_T_lh)
--   p_u(c,a)  = sum_b S_hl(a,b) T_ll(b,c)                     (V_S_hl_T_ll)
--   q(a,c)    = sum_b S_hl(a,b) T_lh(b,c)                     (V_S_hl_T_lh)
--   z_r(b)    = [b heavy in S] sum_c T_lh(b,c) U(c)           (V_S_lh_T_lh_U, the indicator being B's part in S)
--   z_u(b)    = [b heavy in T] sum_a R(a) S_hl(a,b)           (V_RS_hl_T_hl, likewise)
--   y_r(a)    = sum over b, c of S_hl(a,b) T_ll(b,c) U(c)            (V_S_hl_T_ll_U)
--   y_u(c)    = sum over a, b of R(a) S_ll(a,b) T_lh(b,c)            (V_RS_ll_T_lh)
--
-- (T's parts are written B-part first, then C-part: T_lh is light on B and heavy on C.) Figure 14's
-- V_S_hl_T_hh and V_S_hh_T_lh are not needed: an update to R at a heavy A-value reads S_hh's
-- B-values, heavy in S, through z_r, and S_hl's through a loop over T's heavy B-values.
-- Every view's entries are nonzero (a partial index finds those an upsert brings to 0).

CREATE TABLE {r} (a {a_type} PRIMARY KEY, mult bigint NOT NULL);
COMMENT ON TABLE {r} IS 'IVMε (4-path): R(A), one row per distinct value with its multiplicity';
CREATE TABLE {u} (c {c_type} PRIMARY KEY, mult bigint NOT NULL);
COMMENT ON TABLE {u} IS 'IVMε (4-path): U(C), one row per distinct value with its multiplicity';

CREATE TABLE {s} (
    a    {a_type} NOT NULL,
    b    {b_type} NOT NULL,
    mult bigint NOT NULL,
    ha   boolean NOT NULL,  -- the A-value's part (heavy: degree in S on A >= theta, with the slack of minor rebalancing)
    hb   boolean NOT NULL,  -- the B-value's part
    PRIMARY KEY (a, b) INCLUDE (mult, hb)
);
CREATE INDEX ON {s} (b, a) INCLUDE (mult, ha);
CREATE INDEX ON {s} (a, b) INCLUDE (mult) WHERE hb;  -- S_lh and S_hh at one A-value: at most 2 N^(1-eps) heavy B-values
COMMENT ON TABLE {s} IS 'IVMε (4-path): S(A,B) partitioned on A and on B, the parts as flags';

CREATE TABLE {t} (
    b    {b_type} NOT NULL,
    c    {c_type} NOT NULL,
    mult bigint NOT NULL,
    hb   boolean NOT NULL,
    hc   boolean NOT NULL,
    PRIMARY KEY (c, b) INCLUDE (mult, hb)
);
CREATE INDEX ON {t} (b, c) INCLUDE (mult, hc);
CREATE INDEX ON {t} (c, b) INCLUDE (mult) WHERE hb;
COMMENT ON TABLE {t} IS 'IVMε (4-path): T(B,C) partitioned on B and on C, the parts as flags';

CREATE TABLE {s_a_degree} (a {a_type} PRIMARY KEY, degree bigint NOT NULL, heavy boolean NOT NULL);
CREATE TABLE {s_b_degree} (b {b_type} PRIMARY KEY, degree bigint NOT NULL, heavy boolean NOT NULL);
CREATE INDEX ON {s_b_degree} (b) WHERE heavy;  -- S's heavy B-values: fewer than 2 N^(1-eps)
CREATE TABLE {t_c_degree} (c {c_type} PRIMARY KEY, degree bigint NOT NULL, heavy boolean NOT NULL);
CREATE TABLE {t_b_degree} (b {b_type} PRIMARY KEY, degree bigint NOT NULL, heavy boolean NOT NULL);
CREATE INDEX ON {t_b_degree} (b) WHERE heavy;
COMMENT ON TABLE {s_a_degree} IS 'IVMε: per A-value of S, its degree (distinct tuples) and its part';
COMMENT ON TABLE {s_b_degree} IS 'IVMε: per B-value of S, its degree (distinct tuples) and its part';
COMMENT ON TABLE {t_c_degree} IS 'IVMε: per C-value of T, its degree (distinct tuples) and its part';
COMMENT ON TABLE {t_b_degree} IS 'IVMε: per B-value of T, its degree (distinct tuples) and its part';

CREATE TABLE {w_r} (b {b_type} PRIMARY KEY, mult bigint NOT NULL);
CREATE TABLE {w_u} (b {b_type} PRIMARY KEY, mult bigint NOT NULL);
CREATE TABLE {p_r} (a {a_type} NOT NULL, c {c_type} NOT NULL, mult bigint NOT NULL, PRIMARY KEY (a, c) INCLUDE (mult));
CREATE TABLE {p_u} (c {c_type} NOT NULL, a {a_type} NOT NULL, mult bigint NOT NULL, PRIMARY KEY (c, a) INCLUDE (mult));
CREATE TABLE {q} (a {a_type} NOT NULL, c {c_type} NOT NULL, mult bigint NOT NULL, PRIMARY KEY (a, c) INCLUDE (mult));
CREATE INDEX ON {q} (c, a) INCLUDE (mult);
CREATE TABLE {z_r} (b {b_type} PRIMARY KEY, mult bigint NOT NULL);
CREATE TABLE {z_u} (b {b_type} PRIMARY KEY, mult bigint NOT NULL);
CREATE TABLE {y_r} (a {a_type} PRIMARY KEY, mult bigint NOT NULL);
CREATE TABLE {y_u} (c {c_type} PRIMARY KEY, mult bigint NOT NULL);
CREATE INDEX ON {w_r} (mult) WHERE mult = 0;
CREATE INDEX ON {w_u} (mult) WHERE mult = 0;
CREATE INDEX ON {p_r} (mult) WHERE mult = 0;
CREATE INDEX ON {p_u} (mult) WHERE mult = 0;
CREATE INDEX ON {q} (mult) WHERE mult = 0;
CREATE INDEX ON {z_r} (mult) WHERE mult = 0;
CREATE INDEX ON {z_u} (mult) WHERE mult = 0;
CREATE INDEX ON {y_r} (mult) WHERE mult = 0;
CREATE INDEX ON {y_u} (mult) WHERE mult = 0;
COMMENT ON TABLE {w_r} IS 'IVMε (4-path) view: sum_a R(a) S(a,b) over every part of S but S_hl';
COMMENT ON TABLE {w_u} IS 'IVMε (4-path) view: sum_c T(b,c) U(c) over every part of T but T_lh';
COMMENT ON TABLE {p_r} IS 'IVMε (4-path) view V_S_ll_T_lh(a,c)';
COMMENT ON TABLE {p_u} IS 'IVMε (4-path) view V_S_hl_T_ll(a,c)';
COMMENT ON TABLE {q} IS 'IVMε (4-path) view V_S_hl_T_lh(a,c)';
COMMENT ON TABLE {z_r} IS 'IVMε (4-path) view: for B-values heavy in S, sum_c T_lh(b,c) U(c)';
COMMENT ON TABLE {z_u} IS 'IVMε (4-path) view: for B-values heavy in T, sum_a R(a) S_hl(a,b)';
COMMENT ON TABLE {y_r} IS 'IVMε (4-path) view V_S_hl_T_ll_U(a)';
COMMENT ON TABLE {y_u} IS 'IVMε (4-path) view V_RS_ll_T_lh(c)';

-- A multi-row statement's net change of each relation, applied set at a time by apply_batch_K, with
-- the parts of its values before the batch (an end's value: its part in the middle next to it; NULL
-- if it has no tuple there) and, for a middle's tuple, its multiplicity after the batch.
CREATE TABLE {r_delta} (a {a_type} NOT NULL, mult bigint NOT NULL, heavy boolean);
CREATE TABLE {s_delta} (a {a_type} NOT NULL, b {b_type} NOT NULL, mult bigint NOT NULL, hx boolean, hb boolean, new_mult bigint);
CREATE TABLE {t_delta} (b {b_type} NOT NULL, c {c_type} NOT NULL, mult bigint NOT NULL, hx boolean, hb boolean, new_mult bigint);
CREATE TABLE {u_delta} (c {c_type} NOT NULL, mult bigint NOT NULL, heavy boolean);
