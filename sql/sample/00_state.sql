-- Reservoir sampling over joins (Dai, Hu & Yi, SIGMOD 2024; seed 003, notes
-- ../shared/notes/reservoir-sampling-over-joins.md): the state of one sample view.
--
-- Every atom (an occurrence of a table in FROM) keeps its rows with a row id (rid, unique across
-- atoms), in a table of its own (generated per view). A join key value of a join-tree edge is a
-- number (kid) from that edge's dictionary, so the index below is written once for every query:
-- it only ever compares kids.
-- (the schema itself: pgivm_catalog.create_state_schema, as the view's owner)
COMMENT ON SCHEMA {schema} IS {schema_comment};

CREATE TABLE {state} (
    singleton       boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    updates_applied bigint NOT NULL DEFAULT 0,  -- base rows changed (and TRUNCATEs) since create
    k               bigint NOT NULL,            -- the sample size asked for
    seed            bigint NOT NULL,
    rng             bigint NOT NULL,            -- xorshift64 state: the view's own random stream
    w               float8,                     -- Algorithm 5's w; NULL is +inf (reservoir not yet full)
    q               numeric NOT NULL DEFAULT 0, -- skip carried into the next batch
    filled          bigint NOT NULL DEFAULT 0,  -- |S| = min(k, |Q|)
    replacements    bigint NOT NULL DEFAULT 0,  -- results that entered a full reservoir
    batches         bigint NOT NULL DEFAULT 0,  -- logical inserts processed (one batch each)
    retrieved       bigint NOT NULL DEFAULT 0,  -- batch positions looked at (Retrieve calls)
    refilled        bigint NOT NULL DEFAULT 0,  -- results drawn to replace deleted ones
    moves           bigint NOT NULL DEFAULT 0   -- index entries moved to a new weight (Alg. 7 lines 9-11)
);

-- The join tree over units (an atom, or atoms merged along foreign keys, §4.4) rooted at every
-- unit in turn (§4.3): node = tree * units + unit. A non-root node keeps buckets under its key
-- (the kid of the edge to its parent); so does the root of tree 0, under the one key 0 of a
-- virtual parent, which makes the whole join an array J0 that `pgivm sample --fresh` and the
-- refill after a delete draw from. A grouped node's buckets hold groups of rows (§4.4), not rows.
CREATE TABLE {node} (
    node     int PRIMARY KEY,
    tree     int NOT NULL,
    unit     int NOT NULL,
    parent   int,             -- NULL at the root
    pedge    int,             -- the join-tree edge to the parent (NULL at the root)
    children int[] NOT NULL,  -- child nodes, in Retrieve's mixed-radix order (last varies fastest)
    cedges   int[] NOT NULL,  -- the edge to each child
    bucketed boolean NOT NULL,
    grouped  boolean NOT NULL
);

-- The rows of the units: a unit row is one row of each of its atoms (parts[atom + 1], NULL for the
-- atoms of other units). A one-atom unit's row has its atom row's id; a merged unit's rows get
-- their own, and {part} finds them from any of their atom rows.
CREATE TABLE {rows} (
    rid   bigint PRIMARY KEY,
    unit  int NOT NULL,
    kids  bigint[] NOT NULL,  -- kids[edge + 1]: the row's key on each join-tree edge (NULL if not on it)
    parts bigint[] NOT NULL
);
CREATE TABLE {part} (
    arid bigint NOT NULL,
    rid  bigint NOT NULL,
    PRIMARY KEY (arid, rid)
);
CREATE INDEX ON {part} (rid);
-- Row ids, group ids and unit-row ids come from one sequence: an index entry is either.
CREATE SEQUENCE {rid_seq};
CREATE SEQUENCE {kid_seq} START 1;

-- Grouping (§4.4): the rows of a unit with equal keys, feq of them at dense positions 0..feq-1,
-- and their frequency padded to a power of two f̃eq = 2^fct (feq <= f̃eq < 4 feq, as for c̃nt).
CREATE TABLE {grp} (
    gid  bigint PRIMARY KEY,
    unit int NOT NULL,
    kids bigint[] NOT NULL,
    feq  bigint NOT NULL,
    fct  int NOT NULL,
    UNIQUE (unit, kids)
);
CREATE TABLE {gmem} (
    gid bigint NOT NULL,
    pos bigint NOT NULL,
    rid bigint NOT NULL UNIQUE,
    PRIMARY KEY (gid, pos)
);

-- R_e ⋉ kid: a unit's entries (its groups if it is grouped, else its rows) with a key on an edge,
-- which a change of that key's count below moves.
CREATE TABLE {member} (
    edge int NOT NULL,
    unit int NOT NULL,
    kid  bigint NOT NULL,
    eid  bigint NOT NULL,
    PRIMARY KEY (edge, unit, kid, eid)
);

-- cnt[T,e,t] (numeric: it can pass 2^64) and its power of two c̃nt = 2^ct.
CREATE TABLE {cnt} (
    node int NOT NULL,
    kid  bigint NOT NULL,
    cnt  numeric NOT NULL,
    ct   int NOT NULL,
    PRIMARY KEY (node, kid)
);

-- The buckets Φ_i,e(t): each entry (row or group) under its node's key, in bucket exp (its weight,
-- f̃eq times the product of its children's c̃nt, is 2^exp) at a dense position 0..size-1 (swap with
-- the last on removal), so the j-th member is one index lookup; (node, eid) finds an entry's place.
CREATE TABLE {bucket} (
    node int NOT NULL,
    kid  bigint NOT NULL,
    exp  int NOT NULL,
    pos  bigint NOT NULL,
    eid  bigint NOT NULL,
    PRIMARY KEY (node, kid, exp, pos),
    UNIQUE (node, eid)
);
CREATE TABLE {bsize} (
    node int NOT NULL,
    kid  bigint NOT NULL,
    exp  int NOT NULL,
    size bigint NOT NULL,
    PRIMARY KEY (node, kid, exp)
);

-- The sample S: slot 0..filled-1, each a join result as its atoms' rids (rids[atom + 1]).
CREATE TABLE {sample} (
    slot bigint PRIMARY KEY,
    rids bigint[] NOT NULL UNIQUE
);
CREATE INDEX ON {sample} USING gin (rids);
