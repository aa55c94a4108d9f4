-- Deferred maintenance of one view (He, Xie, Yang, Yu, "Asymmetric Batch Incremental View
-- Maintenance", ICDE 2005). Writers only append each statement's net change of every atom to
-- the atom's delta log (K_log); the view's state reflects the base tables minus what is pending.
-- For every atom K at every moment:  state(K) + K_log = base(K)  (the invariant verify checks).
--
-- The plan vectors of the paper are indexed by base table (a self-join's atoms of one table go
-- together, as one statement changes them together): s[i] = deferred_table.pending, the
-- predicted refresh cost f(s) = Σ_i f_i(s[i]) and the budget C (budget_ms). f_i(0) = 0 and, for
-- k > 0, f_i(k) = min_j (a_i[j]·k + b_i[j]): one line by default (linear with a setup cost, §3.3),
-- and after `pgivm calibrate` the least concave majorant of what it measured, a minimum of lines:
-- monotone and subadditive as §1.3 requires, and never below a measured point. Whenever an append makes f(s) > C, an action empties some logs (§4.3).

CREATE TABLE {deferred} (
    singleton    boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    budget_ms    float8 NOT NULL CHECK (budget_ms >= 0),      -- C
    planner      text NOT NULL CHECK (planner IN ('naive', 'online')),
    refreshed_step bigint NOT NULL DEFAULT 0, -- the step (deferred_steps) of the last refresh: t counts from it
    spent_ms     float8 NOT NULL DEFAULT 0,   -- predicted cost of the actions since then: F_t
    actions      bigint NOT NULL DEFAULT 0,   -- actions taken because f(s) passed C
    in_writer    bigint NOT NULL DEFAULT 0,   -- of which in a writing transaction
    refreshes    bigint NOT NULL DEFAULT 0,   -- full refreshes (reads, pgivm refresh)
    refreshed_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    work_predicted_ms float8 NOT NULL DEFAULT 0,  -- Σ f(q) over every action and refresh: the plan's cost
    work_actual_ms    float8 NOT NULL DEFAULT 0   -- what they took, measured (the paper's Figure 5)
);
COMMENT ON TABLE {deferred} IS {deferred_comment};
INSERT INTO {deferred} (budget_ms, planner) VALUES ({budget_ms}, {planner});

-- The paper's time: one step per logged statement (a sequence: no row version per write).
CREATE SEQUENCE {steps};

-- Who writes what. Writers only append: rows to their table's log, and counts to rows of
-- {arrival} that belong to their own session; they take no lock of the view's and wait for
-- nobody: no other writer, no reader, no action (a session idle in a transaction holds nothing a
-- writer needs). Actions, refreshes and reads apply, under the view's lock (the system's state
-- row): they take log rows, run the batch path, and count what they took in {action}. No row is
-- written by both sides, and the pending count of a table is the difference of the two.
-- {writers}: its row is visible to every transaction that may log into this layer; one whose
-- snapshot predates it (REPEATABLE READ) may hold changes nothing logged, and must start again.
CREATE TABLE {writers} (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton)
);
INSERT INTO {writers} DEFAULT VALUES;
COMMENT ON TABLE {writers} IS {writers_comment};

CREATE TABLE {action} (
    number     integer PRIMARY KEY,           -- i, the table's place in the plan vectors
    label      text NOT NULL,                 -- the base table as the view names it
    atoms      text[] NOT NULL,               -- the relations it feeds (their logs)
    taken      bigint NOT NULL DEFAULT 0,     -- log rows taken by actions and refreshes, ever
    a_ms       float8[] NOT NULL,             -- f_i(k) = min_j (a_ms[j]·k + b_ms[j]) for k > 0 (see cost)
    b_ms       float8[] NOT NULL CHECK (cardinality(a_ms) = cardinality(b_ms) AND cardinality(a_ms) > 0
                                        AND 0 <= ALL (a_ms) AND 0 <= ALL (b_ms)),
    calibrated timestamptz,                   -- when `pgivm calibrate` measured the lines (NULL: the defaults)
    points     jsonb,                         -- what it measured: [[k, ms], ...]
    actions    bigint NOT NULL DEFAULT 0,     -- times its logs were emptied
    processed  bigint NOT NULL DEFAULT 0      -- log rows processed
);
COMMENT ON TABLE {action} IS {action_comment};

-- Per base table and writing session: what it appended. A session's rows are its own (pid, and a
-- random token, since pids are reused), so no writer ever waits for another on a count; rows of
-- sessions that are gone are folded into one row per table (pid 0) by full refreshes.
CREATE TABLE {arrival} (
    number     integer NOT NULL REFERENCES {action},
    pid        integer NOT NULL,              -- the writing backend (0: sessions gone, folded)
    token      bigint NOT NULL,               -- that session's random id (pgivm.writer)
    appended   bigint NOT NULL DEFAULT 0,     -- log rows appended, ever
    arrived    bigint NOT NULL DEFAULT 0,     -- log rows appended lately: halved every {rate_window} steps (see choose)
    halvings   bigint NOT NULL DEFAULT 0,     -- ⌊step / {rate_window}⌋ when arrived was last updated (halved lazily from there)
    checks     bigint NOT NULL DEFAULT 0,     -- times this session summed f(s) after appending to this table
    PRIMARY KEY (number, pid, token)
);
COMMENT ON TABLE {arrival} IS {arrival_comment};

-- The allowances of the last sum of f(s) (see allow): check_at[i] is how far the appended count of
-- table i may go before a writer must sum f(s) again. A new row per sum, never an update: a writer
-- reads the newest row and waits for nobody.
CREATE TABLE {allowance} (
    check_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    check_at bigint[] NOT NULL
);
COMMENT ON TABLE {allowance} IS {allowance_comment};

