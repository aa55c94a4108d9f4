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

-- Who writes what. Writers only append: rows to their table's log and counts to {arrival}, under
-- their own lock ({writers}); they never wait for an action. Actions, refreshes and reads apply,
-- under the view's lock (the system's state row): they take log rows, run the batch path, and
-- count what they took in {action}. No row is written by both sides, so neither waits for the
-- other on a count, and the pending count of a table is the difference of the two.
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

CREATE TABLE {arrival} (
    number     integer PRIMARY KEY REFERENCES {action},
    appended   bigint NOT NULL DEFAULT 0,     -- log rows appended, ever
    arrived    bigint NOT NULL DEFAULT 0,     -- log rows appended lately, halved every {rate_window} steps (see choose)
    check_at   bigint NOT NULL DEFAULT -1,    -- appended may reach this before f(s) is summed again (see allow)
    checks     bigint NOT NULL DEFAULT 0      -- times a writer summed f(s) after appending to this table
);
COMMENT ON TABLE {arrival} IS {arrival_comment};

-- One row per base table: s[i] = pending, and everything the planner and status read. Over one
-- table, so its own columns can be updated through it (the cost functions).
CREATE VIEW {deferred_table} AS
    SELECT t.number, t.label, t.atoms,
           (SELECT a.appended FROM {arrival} AS a WHERE a.number = t.number) - t.taken AS pending,
           (SELECT a.arrived FROM {arrival} AS a WHERE a.number = t.number) AS arrived,
           t.a_ms, t.b_ms, t.calibrated, t.points, t.actions, t.processed
      FROM {action} AS t;
COMMENT ON VIEW {deferred_table} IS {deferred_table_comment};
