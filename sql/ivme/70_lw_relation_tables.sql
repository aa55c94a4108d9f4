-- The state of one relation R_i of a Loomis-Whitney count of degree n >= 4 (Kara et al., long
-- version, Appendix F), rendered for each relation: R_i is over every variable but A_(i-1) and
-- partitioned on A_i ({pvar}). The triangle's state (10_relation_tables.sql) with n - 1 columns.
--
--   K_heavy, K_light  tuples whose A_i-value is heavy / light, one row per distinct tuple, with its multiplicity
--   K_degree          per A_i-value: its degree (distinct tuples) and its part
--   V_i               the auxiliary view over R_i's variables: sum over A_(i-1) of the heavy parts of
--                     every other relation but R_(i-1), and R_(i-1)'s light part (F.1, case 2)
CREATE TABLE {k_heavy} (
{column_defs},
    mult bigint NOT NULL,
    PRIMARY KEY ({others_then_pvar}) INCLUDE (mult)  -- a tuple's lookup; a heavy A_i-value per binding of the others
);
CREATE INDEX ON {k_heavy} ({pvar_then_others}) INCLUDE (mult);  -- the tuples of one A_i-value (moves)
COMMENT ON TABLE {k_heavy} IS {k_heavy_comment};

CREATE TABLE {k_light} (
{column_defs},
    mult bigint NOT NULL,
    PRIMARY KEY ({others_then_pvar}) INCLUDE (mult)
);
-- The tuples of one light A_i-value: fewer than 3/2 N^eps, the bounded loops of F.1 cases 3 and 4.
CREATE INDEX ON {k_light} ({pvar_then_others}) INCLUDE (mult);
COMMENT ON TABLE {k_light} IS {k_light_comment};

CREATE TABLE {k_degree} (
    {pvar} {pvar_type} PRIMARY KEY,
    degree bigint NOT NULL,
    heavy  boolean NOT NULL
);
COMMENT ON TABLE {k_degree} IS {k_degree_comment};

CREATE TABLE {v_k} (
{column_defs},
    mult bigint NOT NULL,
    PRIMARY KEY ({columns})
);
-- The entries a batch's upsert brings to 0, deleted at once after it (never there between statements).
CREATE INDEX ON {v_k} (mult) WHERE mult = 0;
COMMENT ON TABLE {v_k} IS {v_k_comment};

-- A multi-row statement's net change of R_i, applied set at a time by apply_batch_K.
CREATE TABLE {k_delta} (
{column_defs},
    mult     bigint NOT NULL,  -- net change of the tuple's multiplicity in the statement
    heavy    boolean,          -- the part the tuple goes to (its partition value's part before the batch)
    new_mult bigint            -- its multiplicity after the batch (0: it vanished; = mult: it is new)
);
COMMENT ON TABLE {k_delta} IS {k_delta_comment};
