-- pgivm golden install plan: system sample, case path-sample-ungrouped, options {'size': 5, 'seed': 7, 'merge': 'none', 'grouping': False}
-- view public.v AS SELECT r.a, r.x, t.z FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c
-- regenerate: PGIVM_REGENERATE_GOLDEN=1 python -m pytest tests/systems/test_golden_plans.py

-- phase: state (13 statements)

-- Reservoir sampling over joins (Dai, Hu & Yi, SIGMOD 2024; seed 003, notes
-- ../shared/notes/reservoir-sampling-over-joins.md): the state of one sample view.
--
-- Every atom (an occurrence of a table in FROM) keeps its rows with a row id (rid, unique across
-- atoms), in a table of its own (generated per view). A join key value of a join-tree edge is a
-- number (kid) from that edge's dictionary, so the index below is written once for every query:
-- it only ever compares kids.
-- (the schema itself: pgivm_catalog.create_state_schema, as the view's owner)
COMMENT ON SCHEMA "pgivm_v" IS 'pgivm state of view v (system sample): SELECT r.a, r.x, t.z FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c';

CREATE TABLE "pgivm_v"."state" (
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
CREATE TABLE "pgivm_v"."node" (
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
-- their own, and "pgivm_v"."part" finds them from any of their atom rows.
CREATE TABLE "pgivm_v"."rows" (
    rid   bigint PRIMARY KEY,
    unit  int NOT NULL,
    kids  bigint[] NOT NULL,  -- kids[edge + 1]: the row's key on each join-tree edge (NULL if not on it)
    parts bigint[] NOT NULL
);
CREATE TABLE "pgivm_v"."part" (
    arid bigint NOT NULL,
    rid  bigint NOT NULL,
    PRIMARY KEY (arid, rid)
);
CREATE INDEX ON "pgivm_v"."part" (rid);
-- Row ids, group ids and unit-row ids come from one sequence: an index entry is either.
CREATE SEQUENCE "pgivm_v"."rid_seq";
CREATE SEQUENCE "pgivm_v"."kid_seq" START 1;

-- Grouping (§4.4): the rows of a unit with equal keys, feq of them at dense positions 0..feq-1,
-- and their frequency padded to a power of two f̃eq = 2^fct (feq <= f̃eq < 4 feq, as for c̃nt).
CREATE TABLE "pgivm_v"."grp" (
    gid  bigint PRIMARY KEY,
    unit int NOT NULL,
    kids bigint[] NOT NULL,
    feq  bigint NOT NULL,
    fct  int NOT NULL,
    UNIQUE (unit, kids)
);
CREATE TABLE "pgivm_v"."gmem" (
    gid bigint NOT NULL,
    pos bigint NOT NULL,
    rid bigint NOT NULL UNIQUE,
    PRIMARY KEY (gid, pos)
);

-- R_e ⋉ kid: a unit's entries (its groups if it is grouped, else its rows) with a key on an edge,
-- which a change of that key's count below moves.
CREATE TABLE "pgivm_v"."member" (
    edge int NOT NULL,
    unit int NOT NULL,
    kid  bigint NOT NULL,
    eid  bigint NOT NULL,
    PRIMARY KEY (edge, unit, kid, eid)
);

-- cnt[T,e,t] (numeric: it can pass 2^64) and its power of two c̃nt = 2^ct.
CREATE TABLE "pgivm_v"."cnt" (
    node int NOT NULL,
    kid  bigint NOT NULL,
    cnt  numeric NOT NULL,
    ct   int NOT NULL,
    PRIMARY KEY (node, kid)
);

-- The buckets Φ_i,e(t): each entry (row or group) under its node's key, in bucket exp (its weight,
-- f̃eq times the product of its children's c̃nt, is 2^exp) at a dense position 0..size-1 (swap with
-- the last on removal), so the j-th member is one index lookup; (node, eid) finds an entry's place.
CREATE TABLE "pgivm_v"."bucket" (
    node int NOT NULL,
    kid  bigint NOT NULL,
    exp  int NOT NULL,
    pos  bigint NOT NULL,
    eid  bigint NOT NULL,
    PRIMARY KEY (node, kid, exp, pos),
    UNIQUE (node, eid)
);
CREATE TABLE "pgivm_v"."bsize" (
    node int NOT NULL,
    kid  bigint NOT NULL,
    exp  int NOT NULL,
    size bigint NOT NULL,
    PRIMARY KEY (node, kid, exp)
);

-- The sample S: slot 0..filled-1, each a join result as its atoms' rids (rids[atom + 1]).
CREATE TABLE "pgivm_v"."sample" (
    slot bigint PRIMARY KEY,
    rids bigint[] NOT NULL UNIQUE
);
CREATE INDEX ON "pgivm_v"."sample" USING gin (rids);

CREATE TABLE "pgivm_v"."a1" (rid bigint PRIMARY KEY, "c1" integer, "c2" integer, "c3" integer); COMMENT ON TABLE "pgivm_v"."a1" IS 'the rows of atom r (r) the sample can use, each with its row id';

CREATE INDEX ON "pgivm_v"."a1" ("c2");

CREATE TABLE "pgivm_v"."a1_delta" ("c1" integer, "c2" integer, "c3" integer, mult bigint NOT NULL);

CREATE TABLE "pgivm_v"."a2" (rid bigint PRIMARY KEY, "c1" integer, "c2" integer); COMMENT ON TABLE "pgivm_v"."a2" IS 'the rows of atom s (s) the sample can use, each with its row id';

CREATE INDEX ON "pgivm_v"."a2" ("c1", "c2");

CREATE TABLE "pgivm_v"."a2_delta" ("c1" integer, "c2" integer, mult bigint NOT NULL);

CREATE TABLE "pgivm_v"."a3" (rid bigint PRIMARY KEY, "c1" integer, "c2" integer); COMMENT ON TABLE "pgivm_v"."a3" IS 'the rows of atom t (t) the sample can use, each with its row id';

CREATE INDEX ON "pgivm_v"."a3" ("c1");

CREATE TABLE "pgivm_v"."a3_delta" ("c1" integer, "c2" integer, mult bigint NOT NULL);

CREATE TABLE "pgivm_v"."dict_0" (kid bigint PRIMARY KEY DEFAULT nextval('"pgivm_v"."kid_seq"'), "k0" integer NOT NULL, UNIQUE ("k0")); COMMENT ON TABLE "pgivm_v"."dict_0" IS 'join-tree edge 0 on (r.b): each key value''s number (kid)';

CREATE TABLE "pgivm_v"."dict_1" (kid bigint PRIMARY KEY DEFAULT nextval('"pgivm_v"."kid_seq"'), "k0" integer NOT NULL, UNIQUE ("k0")); COMMENT ON TABLE "pgivm_v"."dict_1" IS 'join-tree edge 1 on (s.c): each key value''s number (kid)';

INSERT INTO "pgivm_v"."node" VALUES (0, 0, 0, NULL, NULL, ARRAY[1]::int[], ARRAY[0]::int[], true, false), (1, 0, 1, 0, 0, ARRAY[2]::int[], ARRAY[1]::int[], true, false), (2, 0, 2, 1, 1, ARRAY[]::int[], ARRAY[]::int[], true, false), (3, 1, 0, 4, 0, ARRAY[]::int[], ARRAY[]::int[], true, false), (4, 1, 1, NULL, NULL, ARRAY[3, 5]::int[], ARRAY[0, 1]::int[], false, false), (5, 1, 2, 4, 1, ARRAY[]::int[], ARRAY[]::int[], true, false), (6, 2, 0, 7, 0, ARRAY[]::int[], ARRAY[]::int[], true, false), (7, 2, 1, 8, 1, ARRAY[6]::int[], ARRAY[0]::int[], true, false), (8, 2, 2, NULL, NULL, ARRAY[7]::int[], ARRAY[1]::int[], false, false);

-- phase: functions (24 statements)

DO $pgivm$ BEGIN
    IF ARRAY(SELECT a.attname::text FROM pg_catalog.pg_attribute AS a
              WHERE a.attrelid = pg_catalog.to_regclass('"pgivm_v"."a1"') AND a.attnum > 0 AND NOT a.attisdropped
              ORDER BY a.attnum) = '{rid,a,b,x}'::text[] THEN
        ALTER TABLE "pgivm_v"."a1" RENAME COLUMN "a" TO "pgivm_renaming_1";
        ALTER TABLE "pgivm_v"."a1" RENAME COLUMN "b" TO "pgivm_renaming_2";
        ALTER TABLE "pgivm_v"."a1" RENAME COLUMN "x" TO "pgivm_renaming_3";
        ALTER TABLE "pgivm_v"."a1" RENAME COLUMN "pgivm_renaming_1" TO "c1";
        ALTER TABLE "pgivm_v"."a1" RENAME COLUMN "pgivm_renaming_2" TO "c2";
        ALTER TABLE "pgivm_v"."a1" RENAME COLUMN "pgivm_renaming_3" TO "c3";
    END IF;
END $pgivm$;

DO $pgivm$ BEGIN
    IF ARRAY(SELECT a.attname::text FROM pg_catalog.pg_attribute AS a
              WHERE a.attrelid = pg_catalog.to_regclass('"pgivm_v"."a1_delta"') AND a.attnum > 0 AND NOT a.attisdropped
              ORDER BY a.attnum) = '{a,b,x,mult}'::text[] THEN
        ALTER TABLE "pgivm_v"."a1_delta" RENAME COLUMN "a" TO "pgivm_renaming_0";
        ALTER TABLE "pgivm_v"."a1_delta" RENAME COLUMN "b" TO "pgivm_renaming_1";
        ALTER TABLE "pgivm_v"."a1_delta" RENAME COLUMN "x" TO "pgivm_renaming_2";
        ALTER TABLE "pgivm_v"."a1_delta" RENAME COLUMN "pgivm_renaming_0" TO "c1";
        ALTER TABLE "pgivm_v"."a1_delta" RENAME COLUMN "pgivm_renaming_1" TO "c2";
        ALTER TABLE "pgivm_v"."a1_delta" RENAME COLUMN "pgivm_renaming_2" TO "c3";
    END IF;
END $pgivm$;

DO $pgivm$ BEGIN
    IF ARRAY(SELECT a.attname::text FROM pg_catalog.pg_attribute AS a
              WHERE a.attrelid = pg_catalog.to_regclass('"pgivm_v"."a2"') AND a.attnum > 0 AND NOT a.attisdropped
              ORDER BY a.attnum) = '{rid,b,c}'::text[] THEN
        ALTER TABLE "pgivm_v"."a2" RENAME COLUMN "b" TO "pgivm_renaming_1";
        ALTER TABLE "pgivm_v"."a2" RENAME COLUMN "c" TO "pgivm_renaming_2";
        ALTER TABLE "pgivm_v"."a2" RENAME COLUMN "pgivm_renaming_1" TO "c1";
        ALTER TABLE "pgivm_v"."a2" RENAME COLUMN "pgivm_renaming_2" TO "c2";
    END IF;
END $pgivm$;

DO $pgivm$ BEGIN
    IF ARRAY(SELECT a.attname::text FROM pg_catalog.pg_attribute AS a
              WHERE a.attrelid = pg_catalog.to_regclass('"pgivm_v"."a2_delta"') AND a.attnum > 0 AND NOT a.attisdropped
              ORDER BY a.attnum) = '{b,c,mult}'::text[] THEN
        ALTER TABLE "pgivm_v"."a2_delta" RENAME COLUMN "b" TO "pgivm_renaming_0";
        ALTER TABLE "pgivm_v"."a2_delta" RENAME COLUMN "c" TO "pgivm_renaming_1";
        ALTER TABLE "pgivm_v"."a2_delta" RENAME COLUMN "pgivm_renaming_0" TO "c1";
        ALTER TABLE "pgivm_v"."a2_delta" RENAME COLUMN "pgivm_renaming_1" TO "c2";
    END IF;
END $pgivm$;

DO $pgivm$ BEGIN
    IF ARRAY(SELECT a.attname::text FROM pg_catalog.pg_attribute AS a
              WHERE a.attrelid = pg_catalog.to_regclass('"pgivm_v"."a3"') AND a.attnum > 0 AND NOT a.attisdropped
              ORDER BY a.attnum) = '{rid,c,z}'::text[] THEN
        ALTER TABLE "pgivm_v"."a3" RENAME COLUMN "c" TO "pgivm_renaming_1";
        ALTER TABLE "pgivm_v"."a3" RENAME COLUMN "z" TO "pgivm_renaming_2";
        ALTER TABLE "pgivm_v"."a3" RENAME COLUMN "pgivm_renaming_1" TO "c1";
        ALTER TABLE "pgivm_v"."a3" RENAME COLUMN "pgivm_renaming_2" TO "c2";
    END IF;
END $pgivm$;

DO $pgivm$ BEGIN
    IF ARRAY(SELECT a.attname::text FROM pg_catalog.pg_attribute AS a
              WHERE a.attrelid = pg_catalog.to_regclass('"pgivm_v"."a3_delta"') AND a.attnum > 0 AND NOT a.attisdropped
              ORDER BY a.attnum) = '{c,z,mult}'::text[] THEN
        ALTER TABLE "pgivm_v"."a3_delta" RENAME COLUMN "c" TO "pgivm_renaming_0";
        ALTER TABLE "pgivm_v"."a3_delta" RENAME COLUMN "z" TO "pgivm_renaming_1";
        ALTER TABLE "pgivm_v"."a3_delta" RENAME COLUMN "pgivm_renaming_0" TO "c1";
        ALTER TABLE "pgivm_v"."a3_delta" RENAME COLUMN "pgivm_renaming_1" TO "c2";
    END IF;
END $pgivm$;

-- The dynamic index of §4 (Algorithms 7 and 9, and 10 and 11 with grouping) over the tables of
-- 00_state.sql, written once for every query: nodes, edges and keys are numbers. Deletes (which the paper leaves out) use the
-- same moves with the sign reversed; c̃nt then shrinks only when cnt falls to a quarter of it, so
-- a count wobbling around a power of two does not cascade on every update (cnt <= c̃nt < 4 cnt:
-- every key batch stays at least 1/4 real instead of 1/2).

-- xorshift64 (Marsaglia 2003, shifts 13, 7, 17): the view's own seeded random stream, so that a
-- view is reproducible and nobody else's random() is disturbed. >> is arithmetic on bigint: the
-- mask makes it logical.
CREATE FUNCTION "pgivm_v"."rng_next"(s bigint) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $pgivm$
BEGIN
    s := s # (s << 13);
    s := s # ((s >> 7) & 144115188075855871);
    RETURN s # (s << 17);
END;
$pgivm$;

-- The top 53 bits of the state as a number in (0, 1): never 0, so ln() is always defined.
CREATE FUNCTION "pgivm_v"."unit"(s bigint) RETURNS float8
LANGUAGE sql SECURITY DEFINER IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $pgivm$
    SELECT (((s >> 11) & 9007199254740991)::float8 + 0.5) / 9007199254740992.0
$pgivm$;

-- A uniform integer in [0, 2^bits), 53 random bits at a time (positions of J0 can pass 2^53).
CREATE FUNCTION "pgivm_v"."rand_bits"(s bigint, bits int, OUT s_next bigint, OUT z numeric)
LANGUAGE plpgsql SECURITY DEFINER IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    take int;
BEGIN
    z := 0;
    s_next := s;
    WHILE bits > 0 LOOP
        take := least(bits, 53);
        s_next := "pgivm_v"."rng_next"(s_next);
        z := z * 2::numeric ^ take + ((s_next >> (64 - take)) & ((1::bigint << take) - 1));
        bits := bits - take;
    END LOOP;
END;
$pgivm$;

-- The smallest e with 2^e >= c, exactly (c is numeric: counts pass 2^64 on deep trees).
CREATE FUNCTION "pgivm_v"."ceil_log2"(c numeric) RETURNS int
LANGUAGE plpgsql SECURITY DEFINER IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    e int := greatest(0, ceil(ln(c::float8) / ln(2.0))::int);
BEGIN
    WHILE 2::numeric ^ e < c LOOP e := e + 1; END LOOP;
    WHILE e > 0 AND 2::numeric ^ (e - 1) >= c LOOP e := e - 1; END LOOP;
    RETURN e;
END;
$pgivm$;

-- log2 of ∏ c̃nt[child, key] over the node's children for keys kids; NULL when a child has no
-- match (the product is 0: such an entry is in no bucket). A leaf's product is 1.
CREATE FUNCTION "pgivm_v"."tuple_exp"(children int[], cedges int[], kids bigint[]) RETURNS int
LANGUAGE plpgsql SECURITY DEFINER STABLE SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    total int := 0;
    e int;
    i int;
BEGIN
    FOR i IN 1..coalesce(array_length(children, 1), 0) LOOP
        SELECT ct INTO e FROM "pgivm_v"."cnt" WHERE node = children[i] AND kid = kids[cedges[i] + 1];
        IF NOT FOUND THEN
            RETURN NULL;
        END IF;
        total := total + e;
    END LOOP;
    RETURN total;
END;
$pgivm$;

-- Where an entry's change of weight goes at one node (Algorithm 7's lines 9-11): out of bucket
-- 2^old_e of key key_ (the bucket's last entry fills the hole, so positions stay dense), into the
-- end of bucket 2^new_e (NULL: no weight, no bucket), cnt[node_, key_] += 2^new_e - 2^old_e, and
-- up from there when c̃nt changes. c̃nt = 2^ct is rounded again only when cnt leaves
-- (c̃nt / 4, c̃nt] (cnt <= c̃nt < 4 cnt); a cnt that falls to 0 loses its row (c̃nt(0) = 0, notes
-- §7.3). One statement per step (c̃nt's own only when it changes), no helper calls: this runs for
-- every entry the index moves, and a row updated again in the same transaction is slower to find.
-- Returns the number of entries moved above.
CREATE FUNCTION "pgivm_v"."entry_move"(node_ int, key_ bigint, eid_ bigint, old_e int, new_e int) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    hole bigint;
    last bigint;
    delta numeric := coalesce(2::numeric ^ new_e, 0) - coalesce(2::numeric ^ old_e, 0);
    c numeric;
    old_ct int;
    new_ct int;
BEGIN
    IF old_e IS NOT DISTINCT FROM new_e THEN
        RETURN 0;
    END IF;
    IF old_e IS NOT NULL THEN
        DELETE FROM "pgivm_v"."bucket" WHERE node = node_ AND eid = eid_ RETURNING pos INTO hole;
        UPDATE "pgivm_v"."bsize" SET size = size - 1 WHERE node = node_ AND kid = key_ AND exp = old_e RETURNING size INTO last;
        IF last = 0 THEN
            DELETE FROM "pgivm_v"."bsize" WHERE node = node_ AND kid = key_ AND exp = old_e;
        ELSIF hole <> last THEN
            UPDATE "pgivm_v"."bucket" SET pos = hole WHERE node = node_ AND kid = key_ AND exp = old_e AND pos = last;
        END IF;
    END IF;
    IF new_e IS NOT NULL THEN
        UPDATE "pgivm_v"."bsize" SET size = size + 1 WHERE node = node_ AND kid = key_ AND exp = new_e RETURNING size - 1 INTO last;
        IF NOT FOUND THEN
            INSERT INTO "pgivm_v"."bsize" VALUES (node_, key_, new_e, 1);
            last := 0;
        END IF;
        INSERT INTO "pgivm_v"."bucket" VALUES (node_, key_, new_e, last, eid_);
    END IF;
    UPDATE "pgivm_v"."cnt" SET cnt = cnt + delta WHERE node = node_ AND kid = key_ RETURNING cnt, ct INTO c, old_ct;
    IF NOT FOUND THEN  -- cnt was 0
        new_ct := "pgivm_v"."ceil_log2"(delta);
        INSERT INTO "pgivm_v"."cnt" VALUES (node_, key_, delta, new_ct);
    ELSIF c <= 0 THEN
        DELETE FROM "pgivm_v"."cnt" WHERE node = node_ AND kid = key_;
        new_ct := NULL;
    ELSIF c > 2::numeric ^ old_ct OR 4 * c <= 2::numeric ^ old_ct THEN
        new_ct := "pgivm_v"."ceil_log2"(c);
        UPDATE "pgivm_v"."cnt" SET ct = new_ct WHERE node = node_ AND kid = key_;
    ELSE
        new_ct := old_ct;
    END IF;
    IF old_ct IS DISTINCT FROM new_ct THEN
        RETURN "pgivm_v"."propagate"(node_, key_, old_ct, new_ct);
    END IF;
    RETURN 0;
END;
$pgivm$;

-- Algorithm 7's lines 8-11 (Algorithm 10's with grouping): c̃nt of (node_, kid_) changed from
-- 2^old_ct to 2^new_ct, so every parent entry under that key (a row, or a group at a grouped
-- node) has a new weight: move it to its new bucket and pass the change of its own key's count
-- upwards (entry_move). Stops under a root (nothing is bucketed there), except tree 0's root,
-- whose virtual parent holds no entries. The common case, an entry that stays weighted, shifts
-- its exp by new_ct - old_ct; one that gains or loses its weight (a count from or to 0) has its
-- product of the children's c̃nt taken again. Returns the number of entries moved.
CREATE FUNCTION "pgivm_v"."propagate"(node_ int, kid_ bigint, old_ct int, new_ct int) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    p record;
    r record;
    pkey bigint;
    new_e int;
    old_e int;
    moved bigint := 0;
BEGIN
    -- the parent node, and the edge that leads to it from node_
    SELECT pn.*, me.pedge AS up INTO p FROM "pgivm_v"."node" me JOIN "pgivm_v"."node" pn ON pn.node = me.parent WHERE me.node = node_;
    IF NOT FOUND OR NOT p.bucketed THEN
        RETURN 0;
    END IF;
    FOR r IN SELECT m.eid, coalesce(g.kids, x.kids) AS kids, coalesce(g.fct, 0) AS fct
               FROM "pgivm_v"."member" m
               LEFT JOIN "pgivm_v"."grp" g ON p.grouped AND g.gid = m.eid
               LEFT JOIN "pgivm_v"."rows" x ON NOT p.grouped AND x.rid = m.eid
              WHERE m.edge = p.up AND m.unit = p.unit AND m.kid = kid_ LOOP
        pkey := CASE WHEN p.pedge IS NULL THEN 0 ELSE r.kids[p.pedge + 1] END;
        SELECT exp INTO old_e FROM "pgivm_v"."bucket" WHERE node = p.node AND eid = r.eid;
        IF old_e IS NOT NULL AND old_ct IS NOT NULL AND new_ct IS NOT NULL THEN
            new_e := old_e + new_ct - old_ct;
        ELSE
            new_e := "pgivm_v"."tuple_exp"(p.children, p.cedges, r.kids) + r.fct;
        END IF;
        IF new_e IS DISTINCT FROM old_e THEN
            moved := moved + 1 + "pgivm_v"."entry_move"(p.node, pkey, r.eid, old_e, new_e);
        END IF;
    END LOOP;
    RETURN moved;
END;
$pgivm$;

-- IndexUpdate(T, e, t, 0) for every rooted tree T (Algorithm 7) when row rid_ joins its unit. In a
-- grouped unit the row joins the group of its keys (Algorithm 10): the group's weight changes only
-- when f̃eq does, but the row is always added to the group's members (the notes' erratum), so that
-- Retrieve finds it. Returns the number of entries moved above.
CREATE FUNCTION "pgivm_v"."index_insert"(unit_ int, rid_ bigint, kids_ bigint[]) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    nd record;
    g record;
    gid_ bigint;
    old_fct int;
    new_fct int;
    key_ bigint;
    e int;
    old_e int;
    moved bigint := 0;
BEGIN
    IF EXISTS (SELECT FROM "pgivm_v"."node" WHERE unit = unit_ AND grouped) THEN
        SELECT * INTO g FROM "pgivm_v"."grp" WHERE unit = unit_ AND kids = kids_;
        IF NOT FOUND THEN
            gid_ := nextval('"pgivm_v"."rid_seq"');
            new_fct := 0;
            INSERT INTO "pgivm_v"."grp" VALUES (gid_, unit_, kids_, 1, 0);
            INSERT INTO "pgivm_v"."gmem" VALUES (gid_, 0, rid_);
            INSERT INTO "pgivm_v"."member" SELECT i - 1, unit_, kids_[i], gid_ FROM generate_subscripts(kids_, 1) AS i WHERE kids_[i] IS NOT NULL;
        ELSE
            gid_ := g.gid;
            old_fct := g.fct;
            new_fct := g.fct;
            IF g.feq + 1 > 2::numeric ^ g.fct THEN
                new_fct := "pgivm_v"."ceil_log2"(g.feq + 1);
            END IF;
            INSERT INTO "pgivm_v"."gmem" VALUES (gid_, g.feq, rid_);
            UPDATE "pgivm_v"."grp" SET feq = feq + 1, fct = new_fct WHERE gid = gid_;
        END IF;
    ELSE
        INSERT INTO "pgivm_v"."member" SELECT i - 1, unit_, kids_[i], rid_ FROM generate_subscripts(kids_, 1) AS i WHERE kids_[i] IS NOT NULL;
    END IF;
    -- (a leaf's product is 1: tuple_exp is not asked)
    FOR nd IN SELECT * FROM "pgivm_v"."node" WHERE unit = unit_ AND bucketed LOOP
        key_ := CASE WHEN nd.pedge IS NULL THEN 0 ELSE kids_[nd.pedge + 1] END;
        IF nd.grouped THEN
            CONTINUE WHEN old_fct IS NOT DISTINCT FROM new_fct;  -- f̃eq, hence the group's weight, unchanged
            old_e := NULL;
            IF old_fct IS NOT NULL THEN
                SELECT exp INTO old_e FROM "pgivm_v"."bucket" WHERE node = nd.node AND eid = gid_;
                CONTINUE WHEN NOT FOUND;  -- a child has no match: the group weighs 0 either way
                e := old_e + new_fct - old_fct;
            ELSE
                e := CASE WHEN cardinality(nd.children) = 0 THEN 0 ELSE "pgivm_v"."tuple_exp"(nd.children, nd.cedges, kids_) END + new_fct;
            END IF;
            moved := moved + "pgivm_v"."entry_move"(nd.node, key_, gid_, old_e, e);
        ELSE
            e := CASE WHEN cardinality(nd.children) = 0 THEN 0 ELSE "pgivm_v"."tuple_exp"(nd.children, nd.cedges, kids_) END;
            CONTINUE WHEN e IS NULL;
            moved := moved + "pgivm_v"."entry_move"(nd.node, key_, rid_, NULL, e);
        END IF;
    END LOOP;
    RETURN moved;
END;
$pgivm$;

-- The reverse of index_insert: the row leaves its group (swap with the group's last member; f̃eq
-- shrinks only when feq falls to a quarter of it), every tree's buckets and counts, and its unit.
CREATE FUNCTION "pgivm_v"."index_delete"(rid_ bigint) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    me record;
    nd record;
    g record;
    gm record;
    old_fct int;
    new_fct int;
    key_ bigint;
    old_e int;
    e int;
    moved bigint := 0;
BEGIN
    SELECT * INTO me FROM "pgivm_v"."rows" WHERE rid = rid_;
    IF EXISTS (SELECT FROM "pgivm_v"."node" WHERE unit = me.unit AND grouped) THEN
        SELECT * INTO gm FROM "pgivm_v"."gmem" WHERE rid = rid_;
        SELECT * INTO g FROM "pgivm_v"."grp" WHERE gid = gm.gid;
        DELETE FROM "pgivm_v"."gmem" WHERE gid = g.gid AND pos = gm.pos;
        IF gm.pos <> g.feq - 1 THEN
            UPDATE "pgivm_v"."gmem" SET pos = gm.pos WHERE gid = g.gid AND pos = g.feq - 1;
        END IF;
        old_fct := g.fct;
        IF g.feq = 1 THEN
            new_fct := NULL;
            DELETE FROM "pgivm_v"."grp" WHERE gid = g.gid;
            DELETE FROM "pgivm_v"."member" m USING generate_subscripts(g.kids, 1) AS i
             WHERE m.edge = i - 1 AND m.unit = g.unit AND m.kid = g.kids[i] AND m.eid = g.gid;
        ELSE
            new_fct := g.fct;
            IF 4 * (g.feq - 1) <= 2::numeric ^ g.fct THEN
                new_fct := "pgivm_v"."ceil_log2"(g.feq - 1);
            END IF;
            UPDATE "pgivm_v"."grp" SET feq = feq - 1, fct = new_fct WHERE gid = g.gid;
        END IF;
    ELSE
        DELETE FROM "pgivm_v"."member" m USING generate_subscripts(me.kids, 1) AS i
         WHERE m.edge = i - 1 AND m.unit = me.unit AND m.kid = me.kids[i] AND m.eid = rid_;
    END IF;
    FOR nd IN SELECT * FROM "pgivm_v"."node" WHERE unit = me.unit AND bucketed LOOP
        key_ := CASE WHEN nd.pedge IS NULL THEN 0 ELSE me.kids[nd.pedge + 1] END;
        IF nd.grouped THEN
            CONTINUE WHEN old_fct IS NOT DISTINCT FROM new_fct;
            SELECT exp INTO old_e FROM "pgivm_v"."bucket" WHERE node = nd.node AND eid = g.gid;
            CONTINUE WHEN NOT FOUND;
            moved := moved + "pgivm_v"."entry_move"(nd.node, key_, g.gid, old_e, old_e + new_fct - old_fct);
        ELSE
            SELECT exp INTO old_e FROM "pgivm_v"."bucket" WHERE node = nd.node AND eid = rid_;
            CONTINUE WHEN NOT FOUND;
            moved := moved + "pgivm_v"."entry_move"(nd.node, key_, rid_, old_e, NULL);
        END IF;
    END LOOP;
    DELETE FROM "pgivm_v"."part" WHERE rid = rid_;
    DELETE FROM "pgivm_v"."rows" WHERE rid = rid_;
    RETURN moved;
END;
$pgivm$;

-- Algorithm 9 (Retrieve; 11 at a grouped node) is generated per view from the shapes of its trees,
-- one statement a node: pgivm/systems/sample/retrieve.py.;

-- Algorithm 9 at a tree's root: position z of {rid_} x its children's batches (retrieve.py)
CREATE FUNCTION "pgivm_v"."retrieve_tuple"(node_ int, rid_ bigint, z numeric) RETURNS bigint[]
LANGUAGE plpgsql SECURITY DEFINER STABLE SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    "ct_1" int;
    "ct_2" int;
    "ct_3" int;
    "ct_5" int;
    "ct_6" int;
    "ct_7" int;
    "kids_0" bigint[];
    "kids_1" bigint[];
    "kids_2" bigint[];
    "kids_3" bigint[];
    "kids_4" bigint[];
    "kids_5" bigint[];
    "kids_6" bigint[];
    "kids_7" bigint[];
    "kids_8" bigint[];
    "l_1" numeric;
    "l_2" numeric;
    "l_3" numeric;
    "l_5" numeric;
    "l_6" numeric;
    "l_7" numeric;
    "parts_0" bigint[];
    "parts_1" bigint[];
    "parts_2" bigint[];
    "parts_3" bigint[];
    "parts_4" bigint[];
    "parts_5" bigint[];
    "parts_6" bigint[];
    "parts_7" bigint[];
    "parts_8" bigint[];
    "z_1" numeric;
    "z_2" numeric;
    "z_3" numeric;
    "z_5" numeric;
    "z_6" numeric;
    "z_7" numeric;
BEGIN
CASE node_
WHEN 0 THEN
    SELECT "x0".kids, "x0".parts, "c1".ct INTO "kids_0", "parts_0", "ct_1" FROM "pgivm_v"."rows" AS "x0" JOIN "pgivm_v"."cnt" AS "c1" ON "c1".node = 1 AND "c1".kid = "x0".kids[1] WHERE "x0".rid = "rid_";
    IF NOT FOUND THEN RETURN NULL; END IF;
    "z_1" := mod(floor("z" / 2::numeric ^ (0)), 2::numeric ^ "ct_1");
    SELECT "x1".kids, "x1".parts, mod(b.off, 2::numeric ^ b.exp), "c2".ct INTO "kids_1", "parts_1", "l_1", "ct_2" FROM (SELECT s.exp, "z_1" - s.start AS off FROM (SELECT exp, size, sum(size * 2::numeric ^ exp) OVER (ORDER BY exp ROWS UNBOUNDED PRECEDING) - size * 2::numeric ^ exp AS start FROM "pgivm_v"."bsize" WHERE node = 1 AND kid = "kids_0"[1]) AS s WHERE "z_1" >= s.start AND "z_1" < s.start + s.size * 2::numeric ^ s.exp) AS b CROSS JOIN LATERAL (SELECT eid FROM "pgivm_v"."bucket" WHERE node = 1 AND kid = "kids_0"[1] AND exp = b.exp AND pos = floor(b.off / 2::numeric ^ b.exp)::bigint OFFSET 0) AS k JOIN "pgivm_v"."rows" AS "x1" ON "x1".rid = k.eid JOIN "pgivm_v"."cnt" AS "c2" ON "c2".node = 2 AND "c2".kid = "x1".kids[2];
    IF NOT FOUND THEN RETURN NULL; END IF;
    "z_2" := mod(floor("l_1" / 2::numeric ^ (0)), 2::numeric ^ "ct_2");
    SELECT "x2".kids, "x2".parts, mod(b.off, 2::numeric ^ b.exp) INTO "kids_2", "parts_2", "l_2" FROM (SELECT s.exp, "z_2" - s.start AS off FROM (SELECT exp, size, sum(size * 2::numeric ^ exp) OVER (ORDER BY exp ROWS UNBOUNDED PRECEDING) - size * 2::numeric ^ exp AS start FROM "pgivm_v"."bsize" WHERE node = 2 AND kid = "kids_1"[2]) AS s WHERE "z_2" >= s.start AND "z_2" < s.start + s.size * 2::numeric ^ s.exp) AS b CROSS JOIN LATERAL (SELECT eid FROM "pgivm_v"."bucket" WHERE node = 2 AND kid = "kids_1"[2] AND exp = b.exp AND pos = floor(b.off / 2::numeric ^ b.exp)::bigint OFFSET 0) AS k JOIN "pgivm_v"."rows" AS "x2" ON "x2".rid = k.eid;
    IF NOT FOUND THEN RETURN NULL; END IF;
    RETURN ARRAY["parts_0"[1], "parts_1"[2], "parts_2"[3]]::bigint[];
WHEN 4 THEN
    SELECT "x4".kids, "x4".parts, "c3".ct, "c5".ct INTO "kids_4", "parts_4", "ct_3", "ct_5" FROM "pgivm_v"."rows" AS "x4" JOIN "pgivm_v"."cnt" AS "c3" ON "c3".node = 3 AND "c3".kid = "x4".kids[1] JOIN "pgivm_v"."cnt" AS "c5" ON "c5".node = 5 AND "c5".kid = "x4".kids[2] WHERE "x4".rid = "rid_";
    IF NOT FOUND THEN RETURN NULL; END IF;
    "z_3" := mod(floor("z" / 2::numeric ^ ("ct_5")), 2::numeric ^ "ct_3");
    SELECT "x3".kids, "x3".parts, mod(b.off, 2::numeric ^ b.exp) INTO "kids_3", "parts_3", "l_3" FROM (SELECT s.exp, "z_3" - s.start AS off FROM (SELECT exp, size, sum(size * 2::numeric ^ exp) OVER (ORDER BY exp ROWS UNBOUNDED PRECEDING) - size * 2::numeric ^ exp AS start FROM "pgivm_v"."bsize" WHERE node = 3 AND kid = "kids_4"[1]) AS s WHERE "z_3" >= s.start AND "z_3" < s.start + s.size * 2::numeric ^ s.exp) AS b CROSS JOIN LATERAL (SELECT eid FROM "pgivm_v"."bucket" WHERE node = 3 AND kid = "kids_4"[1] AND exp = b.exp AND pos = floor(b.off / 2::numeric ^ b.exp)::bigint OFFSET 0) AS k JOIN "pgivm_v"."rows" AS "x3" ON "x3".rid = k.eid;
    IF NOT FOUND THEN RETURN NULL; END IF;
    "z_5" := mod(floor("z" / 2::numeric ^ (0)), 2::numeric ^ "ct_5");
    SELECT "x5".kids, "x5".parts, mod(b.off, 2::numeric ^ b.exp) INTO "kids_5", "parts_5", "l_5" FROM (SELECT s.exp, "z_5" - s.start AS off FROM (SELECT exp, size, sum(size * 2::numeric ^ exp) OVER (ORDER BY exp ROWS UNBOUNDED PRECEDING) - size * 2::numeric ^ exp AS start FROM "pgivm_v"."bsize" WHERE node = 5 AND kid = "kids_4"[2]) AS s WHERE "z_5" >= s.start AND "z_5" < s.start + s.size * 2::numeric ^ s.exp) AS b CROSS JOIN LATERAL (SELECT eid FROM "pgivm_v"."bucket" WHERE node = 5 AND kid = "kids_4"[2] AND exp = b.exp AND pos = floor(b.off / 2::numeric ^ b.exp)::bigint OFFSET 0) AS k JOIN "pgivm_v"."rows" AS "x5" ON "x5".rid = k.eid;
    IF NOT FOUND THEN RETURN NULL; END IF;
    RETURN ARRAY["parts_3"[1], "parts_4"[2], "parts_5"[3]]::bigint[];
WHEN 8 THEN
    SELECT "x8".kids, "x8".parts, "c7".ct INTO "kids_8", "parts_8", "ct_7" FROM "pgivm_v"."rows" AS "x8" JOIN "pgivm_v"."cnt" AS "c7" ON "c7".node = 7 AND "c7".kid = "x8".kids[2] WHERE "x8".rid = "rid_";
    IF NOT FOUND THEN RETURN NULL; END IF;
    "z_7" := mod(floor("z" / 2::numeric ^ (0)), 2::numeric ^ "ct_7");
    SELECT "x7".kids, "x7".parts, mod(b.off, 2::numeric ^ b.exp), "c6".ct INTO "kids_7", "parts_7", "l_7", "ct_6" FROM (SELECT s.exp, "z_7" - s.start AS off FROM (SELECT exp, size, sum(size * 2::numeric ^ exp) OVER (ORDER BY exp ROWS UNBOUNDED PRECEDING) - size * 2::numeric ^ exp AS start FROM "pgivm_v"."bsize" WHERE node = 7 AND kid = "kids_8"[2]) AS s WHERE "z_7" >= s.start AND "z_7" < s.start + s.size * 2::numeric ^ s.exp) AS b CROSS JOIN LATERAL (SELECT eid FROM "pgivm_v"."bucket" WHERE node = 7 AND kid = "kids_8"[2] AND exp = b.exp AND pos = floor(b.off / 2::numeric ^ b.exp)::bigint OFFSET 0) AS k JOIN "pgivm_v"."rows" AS "x7" ON "x7".rid = k.eid JOIN "pgivm_v"."cnt" AS "c6" ON "c6".node = 6 AND "c6".kid = "x7".kids[1];
    IF NOT FOUND THEN RETURN NULL; END IF;
    "z_6" := mod(floor("l_7" / 2::numeric ^ (0)), 2::numeric ^ "ct_6");
    SELECT "x6".kids, "x6".parts, mod(b.off, 2::numeric ^ b.exp) INTO "kids_6", "parts_6", "l_6" FROM (SELECT s.exp, "z_6" - s.start AS off FROM (SELECT exp, size, sum(size * 2::numeric ^ exp) OVER (ORDER BY exp ROWS UNBOUNDED PRECEDING) - size * 2::numeric ^ exp AS start FROM "pgivm_v"."bsize" WHERE node = 6 AND kid = "kids_7"[1]) AS s WHERE "z_6" >= s.start AND "z_6" < s.start + s.size * 2::numeric ^ s.exp) AS b CROSS JOIN LATERAL (SELECT eid FROM "pgivm_v"."bucket" WHERE node = 6 AND kid = "kids_7"[1] AND exp = b.exp AND pos = floor(b.off / 2::numeric ^ b.exp)::bigint OFFSET 0) AS k JOIN "pgivm_v"."rows" AS "x6" ON "x6".rid = k.eid;
    IF NOT FOUND THEN RETURN NULL; END IF;
    RETURN ARRAY["parts_6"[1], "parts_7"[2], "parts_8"[3]]::bigint[];
END CASE;  -- any other node: CASE_NOT_FOUND (only these are asked)
END;
$pgivm$;

-- Algorithm 9 (11 if grouped) over J0: position z of the whole join (retrieve.py)
CREATE FUNCTION "pgivm_v"."retrieve_key"(node_ int, kid_ bigint, z numeric) RETURNS bigint[]
LANGUAGE plpgsql SECURITY DEFINER STABLE SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    "ct_1" int;
    "ct_2" int;
    "kids_0" bigint[];
    "kids_1" bigint[];
    "kids_2" bigint[];
    "l_0" numeric;
    "l_1" numeric;
    "l_2" numeric;
    "parts_0" bigint[];
    "parts_1" bigint[];
    "parts_2" bigint[];
    "z_1" numeric;
    "z_2" numeric;
BEGIN
CASE node_
WHEN 0 THEN
    IF kid_ <> 0 THEN RETURN NULL; END IF;  -- J0 has one key
    SELECT "x0".kids, "x0".parts, mod(b.off, 2::numeric ^ b.exp), "c1".ct INTO "kids_0", "parts_0", "l_0", "ct_1" FROM (SELECT s.exp, "z" - s.start AS off FROM (SELECT exp, size, sum(size * 2::numeric ^ exp) OVER (ORDER BY exp ROWS UNBOUNDED PRECEDING) - size * 2::numeric ^ exp AS start FROM "pgivm_v"."bsize" WHERE node = 0 AND kid = kid_) AS s WHERE "z" >= s.start AND "z" < s.start + s.size * 2::numeric ^ s.exp) AS b CROSS JOIN LATERAL (SELECT eid FROM "pgivm_v"."bucket" WHERE node = 0 AND kid = kid_ AND exp = b.exp AND pos = floor(b.off / 2::numeric ^ b.exp)::bigint OFFSET 0) AS k JOIN "pgivm_v"."rows" AS "x0" ON "x0".rid = k.eid JOIN "pgivm_v"."cnt" AS "c1" ON "c1".node = 1 AND "c1".kid = "x0".kids[1];
    IF NOT FOUND THEN RETURN NULL; END IF;
    "z_1" := mod(floor("l_0" / 2::numeric ^ (0)), 2::numeric ^ "ct_1");
    SELECT "x1".kids, "x1".parts, mod(b.off, 2::numeric ^ b.exp), "c2".ct INTO "kids_1", "parts_1", "l_1", "ct_2" FROM (SELECT s.exp, "z_1" - s.start AS off FROM (SELECT exp, size, sum(size * 2::numeric ^ exp) OVER (ORDER BY exp ROWS UNBOUNDED PRECEDING) - size * 2::numeric ^ exp AS start FROM "pgivm_v"."bsize" WHERE node = 1 AND kid = "kids_0"[1]) AS s WHERE "z_1" >= s.start AND "z_1" < s.start + s.size * 2::numeric ^ s.exp) AS b CROSS JOIN LATERAL (SELECT eid FROM "pgivm_v"."bucket" WHERE node = 1 AND kid = "kids_0"[1] AND exp = b.exp AND pos = floor(b.off / 2::numeric ^ b.exp)::bigint OFFSET 0) AS k JOIN "pgivm_v"."rows" AS "x1" ON "x1".rid = k.eid JOIN "pgivm_v"."cnt" AS "c2" ON "c2".node = 2 AND "c2".kid = "x1".kids[2];
    IF NOT FOUND THEN RETURN NULL; END IF;
    "z_2" := mod(floor("l_1" / 2::numeric ^ (0)), 2::numeric ^ "ct_2");
    SELECT "x2".kids, "x2".parts, mod(b.off, 2::numeric ^ b.exp) INTO "kids_2", "parts_2", "l_2" FROM (SELECT s.exp, "z_2" - s.start AS off FROM (SELECT exp, size, sum(size * 2::numeric ^ exp) OVER (ORDER BY exp ROWS UNBOUNDED PRECEDING) - size * 2::numeric ^ exp AS start FROM "pgivm_v"."bsize" WHERE node = 2 AND kid = "kids_1"[2]) AS s WHERE "z_2" >= s.start AND "z_2" < s.start + s.size * 2::numeric ^ s.exp) AS b CROSS JOIN LATERAL (SELECT eid FROM "pgivm_v"."bucket" WHERE node = 2 AND kid = "kids_1"[2] AND exp = b.exp AND pos = floor(b.off / 2::numeric ^ b.exp)::bigint OFFSET 0) AS k JOIN "pgivm_v"."rows" AS "x2" ON "x2".rid = k.eid;
    IF NOT FOUND THEN RETURN NULL; END IF;
    RETURN ARRAY["parts_0"[1], "parts_1"[2], "parts_2"[3]]::bigint[];
END CASE;  -- any other node: CASE_NOT_FOUND (only these are asked)
END;
$pgivm$;

-- The batched reservoir with a predicate (Algorithms 4 and 5 of the paper, with the errata of the
-- notes: q = floor(ln(u) / ln(1 - w)), u never 0, ln(1 - w) through a series for small w).

-- q ~ Geo(w): the number of failures before the first success of probability w.
CREATE FUNCTION "pgivm_v"."skip"(w float8, u float8) RETURNS numeric
LANGUAGE sql SECURITY DEFINER IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $pgivm$
    SELECT CASE
        WHEN w <= 0 THEN 1e300::numeric  -- w underflowed: nothing more is ever taken
        WHEN w >= 1 THEN 0::numeric
        ELSE floor(ln(u) / CASE WHEN w < 1e-4 THEN -(w + w * w / 2 + w * w * w / 3) ELSE ln(1 - w) END)::numeric
    END
$pgivm$;

-- A result of the batch is real when every part is (Retrieve gave no dummy) and the conditions of
-- the view that span tables hold (§3: the predicate reservoir takes any θ).
-- "pgivm_v"."pred" is generated per view (80_view.sql).

-- BatchUpdate (Algorithm 5) over the batch a new row rid_ creates at the root of the tree rooted
-- at its unit (root_, with its children and the edges to them): {t} × the batches of its
-- children, of size ∏ c̃nt (never materialized: only the positions the skips land on are
-- retrieved). The reservoir's variables (rng, w, q, filled and the counters) come in and go back
-- in st, a copy of the state row the caller writes once per statement, not once per batch.
CREATE FUNCTION "pgivm_v"."reservoir_batch"(root_ int, children int[], cedges int[], rid_ bigint, kids bigint[], st "pgivm_v"."state")
RETURNS "pgivm_v"."state"
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    e int;
    nb numeric;
    pos numeric := 0;
    x bigint[];
BEGIN
    st.batches := st.batches + 1;
    e := CASE WHEN cardinality(children) = 0 THEN 0 ELSE "pgivm_v"."tuple_exp"(children, cedges, kids) END;
    IF e IS NULL THEN
        RETURN st;  -- an empty batch: no result joins this row yet
    END IF;
    nb := 2::numeric ^ e;
    -- Fill: while |S| < k, every position is looked at and every real result kept.
    WHILE st.filled < st.k AND pos < nb LOOP
        x := "pgivm_v"."retrieve_tuple"(root_, rid_, pos);
        pos := pos + 1;
        st.retrieved := st.retrieved + 1;
        IF x IS NOT NULL AND "pgivm_v"."pred"(x) THEN
            INSERT INTO "pgivm_v"."sample" VALUES (st.filled, x);
            st.filled := st.filled + 1;
        END IF;
    END LOOP;
    IF st.filled >= st.k THEN
        IF st.w IS NULL THEN  -- the reservoir just became full: w and the first skip (Alg. 5 lines 6-8)
            st.rng := "pgivm_v"."rng_next"(st.rng); st.w := exp(ln("pgivm_v"."unit"(st.rng)) / st.k);
            st.rng := "pgivm_v"."rng_next"(st.rng); st.q := "pgivm_v"."skip"(st.w, "pgivm_v"."unit"(st.rng));
        END IF;
        WHILE nb - pos > st.q LOOP
            pos := pos + st.q + 1;
            x := "pgivm_v"."retrieve_tuple"(root_, rid_, pos - 1);
            st.retrieved := st.retrieved + 1;
            IF x IS NOT NULL AND "pgivm_v"."pred"(x) THEN
                -- A real result: it replaces a uniformly chosen slot, and w shrinks by u^(1/k).
                st.rng := "pgivm_v"."rng_next"(st.rng);
                UPDATE "pgivm_v"."sample" SET rids = x WHERE slot = floor("pgivm_v"."unit"(st.rng) * st.k)::bigint;
                st.rng := "pgivm_v"."rng_next"(st.rng); st.w := st.w * exp(ln("pgivm_v"."unit"(st.rng)) / st.k);
                st.replacements := st.replacements + 1;
            END IF;
            -- Real or dummy, the next skip is drawn afresh with the current w (memorylessness).
            st.rng := "pgivm_v"."rng_next"(st.rng); st.q := "pgivm_v"."skip"(st.w, "pgivm_v"."unit"(st.rng));
        END LOOP;
        st.q := st.q - (nb - pos);  -- carried into the next batch
    END IF;
    RETURN st;
END;
$pgivm$;

-- After deletes: sampled results that lost a row are gone (apply_pending deleted every sampled
-- result that uses a deleted row). Slots are
-- made dense again, and if the reservoir was full the d free slots are refilled so that S is
-- again the k smallest of i.i.d. uniform keys over the current join result:
--   - the kept k - d results have keys below w, every other result a key uniform in (w, 1);
--   - the d smallest of those are a uniform d-subset of them, found by running the same
--     predicate reservoir with size d over the whole join J0 (tree 0's root batch), where the
--     kept results count as dummies; its final w' is the d-th smallest of their keys, scaled;
--   - so w becomes w + (1 - w) w', and the next skip is drawn afresh.
-- If J0 has fewer than d other results, the join now has fewer than k: S is all of it and the
-- reservoir is not full any more (w = +inf). Cost: about d / density positions to fill, then
-- d ln(|J0| / d) skips, each one Retrieve (O(log N) index lookups per tree level).
CREATE FUNCTION "pgivm_v"."repair"() RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$
#variable_conflict use_variable
DECLARE
    st record;
    kept bigint;
    d bigint;
    hole bigint;
    mover bigint;
    total numeric;
    pos numeric := 0;
    x bigint[];
    got bigint := 0;
    rng bigint;
    w2 float8;
    q2 numeric;
    looked bigint := 0;
BEGIN
    SELECT * INTO st FROM "pgivm_v"."state" WHERE singleton;
    SELECT count(*) INTO kept FROM "pgivm_v"."sample";
    d := st.filled - kept;
    IF d = 0 THEN
        RETURN 0;
    END IF;
    -- Dense slots again: the highest slots move into the holes.
    FOR hole IN SELECT s FROM generate_series(0, kept - 1) AS s
                 WHERE NOT EXISTS (SELECT FROM "pgivm_v"."sample" WHERE slot = s) LOOP
        SELECT max(slot) INTO mover FROM "pgivm_v"."sample";
        UPDATE "pgivm_v"."sample" SET slot = hole WHERE slot = mover;
    END LOOP;
    IF st.w IS NULL THEN  -- S was all of Q, and still is
        UPDATE "pgivm_v"."state" SET filled = kept WHERE singleton;
        RETURN d;
    END IF;
    rng := st.rng;
    SELECT 2::numeric ^ ct INTO total FROM "pgivm_v"."cnt" WHERE node = 0 AND kid = 0;
    total := coalesce(total, 0);
    WHILE got < d AND pos < total LOOP
        x := "pgivm_v"."retrieve_key"(0, 0, pos);
        pos := pos + 1;
        looked := looked + 1;
        IF x IS NOT NULL AND "pgivm_v"."pred"(x) AND NOT EXISTS (SELECT FROM "pgivm_v"."sample" WHERE rids = x) THEN
            INSERT INTO "pgivm_v"."sample" VALUES (kept + got, x);
            got := got + 1;
        END IF;
    END LOOP;
    IF got < d THEN
        UPDATE "pgivm_v"."state" SET filled = kept + got, w = NULL, q = 0, rng = rng,
               refilled = refilled + got, retrieved = retrieved + looked WHERE singleton;
        RETURN d;
    END IF;
    rng := "pgivm_v"."rng_next"(rng); w2 := exp(ln("pgivm_v"."unit"(rng)) / d);
    rng := "pgivm_v"."rng_next"(rng); q2 := "pgivm_v"."skip"(w2, "pgivm_v"."unit"(rng));
    WHILE total - pos > q2 LOOP
        pos := pos + q2 + 1;
        x := "pgivm_v"."retrieve_key"(0, 0, pos - 1);
        looked := looked + 1;
        IF x IS NOT NULL AND "pgivm_v"."pred"(x) AND NOT EXISTS (SELECT FROM "pgivm_v"."sample" WHERE rids = x AND slot < kept) THEN
            rng := "pgivm_v"."rng_next"(rng);
            UPDATE "pgivm_v"."sample" SET rids = x WHERE slot = kept + floor("pgivm_v"."unit"(rng) * d)::bigint;
            rng := "pgivm_v"."rng_next"(rng); w2 := w2 * exp(ln("pgivm_v"."unit"(rng)) / d);
        END IF;
        rng := "pgivm_v"."rng_next"(rng); q2 := "pgivm_v"."skip"(w2, "pgivm_v"."unit"(rng));
    END LOOP;
    w2 := st.w + (1 - st.w) * w2;
    rng := "pgivm_v"."rng_next"(rng);
    UPDATE "pgivm_v"."state" SET filled = st.k, w = w2, q = "pgivm_v"."skip"(w2, "pgivm_v"."unit"(rng)), rng = rng,
           refilled = refilled + d, retrieved = retrieved + looked WHERE singleton;
    RETURN d;
END;
$pgivm$;

-- k independent uniform results of the current join, with replacement (`pgivm sample --fresh`):
-- a uniform position of J0, retried while it is a dummy or fails the conditions. The view's
-- state is not touched (its own generator is seeded by the caller).
CREATE FUNCTION "pgivm_v"."fresh"(n bigint, seed bigint) RETURNS TABLE (draw bigint, rids bigint[], tries bigint)
LANGUAGE plpgsql SECURITY DEFINER STABLE SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    bits int;
    rng bigint := seed;
    r record;
    x bigint[];
    i bigint;
    t bigint;
BEGIN
    SELECT ct INTO bits FROM "pgivm_v"."cnt" WHERE node = 0 AND kid = 0;
    IF bits IS NULL THEN
        RETURN;
    END IF;
    FOR i IN 1..n LOOP
        t := 0;
        LOOP
            t := t + 1;
            IF t > 1000000 THEN
                RAISE EXCEPTION 'no result found after % uniform positions: the join is empty under the view''s conditions', t - 1;
            END IF;
            r := "pgivm_v"."rand_bits"(rng, bits);
            rng := r.s_next;
            x := "pgivm_v"."retrieve_key"(0, 0, r.z);
            EXIT WHEN x IS NOT NULL AND "pgivm_v"."pred"(x);
        END LOOP;
        draw := i; rids := x; tries := t;
        RETURN NEXT;
    END LOOP;
END;
$pgivm$;

CREATE FUNCTION "pgivm_v"."pred"(x bigint[]) RETURNS boolean LANGUAGE sql SECURITY DEFINER STABLE SET search_path = pg_catalog, pg_temp AS $pgivm$ SELECT true $pgivm$;

CREATE FUNCTION "pgivm_v"."kid_0"("v0" integer) RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE k bigint;
BEGIN
    SELECT kid INTO k FROM "pgivm_v"."dict_0" WHERE "k0" = "v0";
    IF NOT FOUND THEN
        INSERT INTO "pgivm_v"."dict_0" ("k0") VALUES ("v0") RETURNING kid INTO k;
    END IF;
    RETURN k;
END;
$pgivm$;

CREATE FUNCTION "pgivm_v"."kid_1"("v0" integer) RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE k bigint;
BEGIN
    SELECT kid INTO k FROM "pgivm_v"."dict_1" WHERE "k0" = "v0";
    IF NOT FOUND THEN
        INSERT INTO "pgivm_v"."dict_1" ("k0") VALUES ("v0") RETURNING kid INTO k;
    END IF;
    RETURN k;
END;
$pgivm$;

CREATE FUNCTION "pgivm_v"."apply_pending"() RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    r record;
    u record;
    victim bigint;
    unit_rid bigint;
    gone bigint := 0;
    moved bigint := 0;
    new_rid bigint;
    kids bigint[];
    i bigint;
    st "pgivm_v"."state";
    batches_before bigint;
BEGIN
    FOR r IN SELECT * FROM "pgivm_v"."a1_delta" AS d WHERE d.mult < 0 LOOP
        FOR victim IN SELECT x.rid FROM "pgivm_v"."a1" AS x WHERE x."c1" IS NOT DISTINCT FROM r."c1" AND x."c2" = r."c2" AND x."c3" IS NOT DISTINCT FROM r."c3" ORDER BY x.rid DESC LIMIT -r.mult LOOP
            moved := moved + "pgivm_v"."index_delete"(victim);
            DELETE FROM "pgivm_v"."sample" WHERE rids @> ARRAY[victim];
            DELETE FROM "pgivm_v"."a1" AS x WHERE x.rid = victim;
            gone := gone + 1;
        END LOOP;
    END LOOP;
    FOR r IN SELECT * FROM "pgivm_v"."a2_delta" AS d WHERE d.mult < 0 LOOP
        FOR victim IN SELECT x.rid FROM "pgivm_v"."a2" AS x WHERE x."c1" = r."c1" AND x."c2" = r."c2" ORDER BY x.rid DESC LIMIT -r.mult LOOP
            moved := moved + "pgivm_v"."index_delete"(victim);
            DELETE FROM "pgivm_v"."sample" WHERE rids @> ARRAY[victim];
            DELETE FROM "pgivm_v"."a2" AS x WHERE x.rid = victim;
            gone := gone + 1;
        END LOOP;
    END LOOP;
    FOR r IN SELECT * FROM "pgivm_v"."a3_delta" AS d WHERE d.mult < 0 LOOP
        FOR victim IN SELECT x.rid FROM "pgivm_v"."a3" AS x WHERE x."c1" = r."c1" AND x."c2" IS NOT DISTINCT FROM r."c2" ORDER BY x.rid DESC LIMIT -r.mult LOOP
            moved := moved + "pgivm_v"."index_delete"(victim);
            DELETE FROM "pgivm_v"."sample" WHERE rids @> ARRAY[victim];
            DELETE FROM "pgivm_v"."a3" AS x WHERE x.rid = victim;
            gone := gone + 1;
        END LOOP;
    END LOOP;
    IF gone > 0 THEN
        PERFORM "pgivm_v"."repair"();
    END IF;
    SELECT * INTO st FROM "pgivm_v"."state" WHERE singleton;
    batches_before := st.batches;
    FOR r IN SELECT * FROM "pgivm_v"."a1_delta" AS d WHERE d.mult > 0 ORDER BY 1, 2, 3 LOOP
        FOR i IN 1..r.mult LOOP
            new_rid := nextval('"pgivm_v"."rid_seq"');
            INSERT INTO "pgivm_v"."a1" VALUES (new_rid, r."c1", r."c2", r."c3");
            kids := ARRAY["pgivm_v"."kid_0"(r."c2"), NULL]::bigint[];
            INSERT INTO "pgivm_v"."rows" VALUES (new_rid, 0, kids, ARRAY[new_rid, NULL, NULL]::bigint[]);
            moved := moved + "pgivm_v"."index_insert"(0, new_rid, kids);
            st := "pgivm_v"."reservoir_batch"(0, ARRAY[1]::int[], ARRAY[0]::int[], new_rid, kids, st);
        END LOOP;
    END LOOP;
    FOR r IN SELECT * FROM "pgivm_v"."a2_delta" AS d WHERE d.mult > 0 ORDER BY 1, 2 LOOP
        FOR i IN 1..r.mult LOOP
            new_rid := nextval('"pgivm_v"."rid_seq"');
            INSERT INTO "pgivm_v"."a2" VALUES (new_rid, r."c1", r."c2");
            kids := ARRAY["pgivm_v"."kid_0"(r."c1"), "pgivm_v"."kid_1"(r."c2")]::bigint[];
            INSERT INTO "pgivm_v"."rows" VALUES (new_rid, 1, kids, ARRAY[NULL, new_rid, NULL]::bigint[]);
            moved := moved + "pgivm_v"."index_insert"(1, new_rid, kids);
            st := "pgivm_v"."reservoir_batch"(4, ARRAY[3, 5]::int[], ARRAY[0, 1]::int[], new_rid, kids, st);
        END LOOP;
    END LOOP;
    FOR r IN SELECT * FROM "pgivm_v"."a3_delta" AS d WHERE d.mult > 0 ORDER BY 1, 2 LOOP
        FOR i IN 1..r.mult LOOP
            new_rid := nextval('"pgivm_v"."rid_seq"');
            INSERT INTO "pgivm_v"."a3" VALUES (new_rid, r."c1", r."c2");
            kids := ARRAY[NULL, "pgivm_v"."kid_1"(r."c1")]::bigint[];
            INSERT INTO "pgivm_v"."rows" VALUES (new_rid, 2, kids, ARRAY[NULL, NULL, new_rid]::bigint[]);
            moved := moved + "pgivm_v"."index_insert"(2, new_rid, kids);
            st := "pgivm_v"."reservoir_batch"(8, ARRAY[7]::int[], ARRAY[1]::int[], new_rid, kids, st);
        END LOOP;
    END LOOP;
    DELETE FROM "pgivm_v"."a1_delta";
    DELETE FROM "pgivm_v"."a2_delta";
    DELETE FROM "pgivm_v"."a3_delta";
    IF st.batches <> batches_before OR moved > 0 THEN
        UPDATE "pgivm_v"."state" SET rng = st.rng, w = st.w, q = st.q, filled = st.filled, replacements = st.replacements,
               batches = st.batches, retrieved = st.retrieved, moves = moves + moved WHERE singleton;
    END IF;
END;
$pgivm$; COMMENT ON FUNCTION "pgivm_v"."apply_pending"() IS 'the statement''s net change of every atom: deletes (and one repair), then inserts';

CREATE FUNCTION "pgivm_v"."apply_batch_a1"() RETURNS void LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$ SELECT "pgivm_v"."apply_pending"() $pgivm$;

CREATE FUNCTION "pgivm_v"."clear_a1"() RETURNS void LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$ DELETE FROM "pgivm_v"."a1"; DELETE FROM "pgivm_v"."part" WHERE rid IN (SELECT rid FROM "pgivm_v"."rows" WHERE unit = 0); DELETE FROM "pgivm_v"."rows" WHERE unit = 0 $pgivm$;

CREATE FUNCTION "pgivm_v"."apply_batch_a2"() RETURNS void LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$ SELECT "pgivm_v"."apply_pending"() $pgivm$;

CREATE FUNCTION "pgivm_v"."clear_a2"() RETURNS void LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$ DELETE FROM "pgivm_v"."a2"; DELETE FROM "pgivm_v"."part" WHERE rid IN (SELECT rid FROM "pgivm_v"."rows" WHERE unit = 1); DELETE FROM "pgivm_v"."rows" WHERE unit = 1 $pgivm$;

CREATE FUNCTION "pgivm_v"."apply_batch_a3"() RETURNS void LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$ SELECT "pgivm_v"."apply_pending"() $pgivm$;

CREATE FUNCTION "pgivm_v"."clear_a3"() RETURNS void LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$ DELETE FROM "pgivm_v"."a3"; DELETE FROM "pgivm_v"."part" WHERE rid IN (SELECT rid FROM "pgivm_v"."rows" WHERE unit = 2); DELETE FROM "pgivm_v"."rows" WHERE unit = 2 $pgivm$;

-- After TRUNCATE of a plain table (its atoms' rows and their units' rows are gone, clear_K): the
-- join is empty, so is the sample, and the reservoir starts again (w = +inf). The index (groups
-- and members too) is rebuilt from the unit rows left, in row-id order, through the same
-- IndexUpdate as inserts: O(N log N), no batch (no result can exist while an atom is empty).
CREATE FUNCTION "pgivm_v"."restart"()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    r record;
BEGIN
    DELETE FROM "pgivm_v"."sample";
    UPDATE "pgivm_v"."state" SET w = NULL, q = 0, filled = 0 WHERE singleton;
    DELETE FROM "pgivm_v"."cnt";
    DELETE FROM "pgivm_v"."bucket";
    DELETE FROM "pgivm_v"."bsize";
    DELETE FROM "pgivm_v"."member";
    DELETE FROM "pgivm_v"."gmem";
    DELETE FROM "pgivm_v"."grp";
    FOR r IN SELECT * FROM "pgivm_v"."rows" ORDER BY rid LOOP
        PERFORM "pgivm_v"."index_insert"(r.unit, r.rid, r.kids);
    END LOOP;
END;
$pgivm$;

-- Change capture for one base table that feeds relations of the view (one relation, or several
-- for a self-join such as the graph form over one edge table). Rendered once per base table by the
-- systems that capture changes (ivme and first-order apply them at once: apply_K(columns, m) and
-- apply_batch_K()); the triggers that call these functions come from pgivm.capture.CaptureTrigger.
--
-- Statement-level triggers with transition tables: a statement's net change of each relation
-- (inserted rows +1, deleted rows -1, grouped by the join columns, NULL keys dropped since they
-- never join) goes to R, then S, then T, each applied on the state left by the previous one,
-- which is exactly the delta of the (self-)join count. An UPDATE that leaves the join columns
-- alone nets to nothing. The sink then takes the net change of each atom (see pgivm.capture.SINKS).
-- A base column is read only qualified (new_rows.col) and renamed at once: the net change names it
-- after its relation's variable (a, b, c) or its place in its atom (c1, c2, ...), never after
-- itself, so a base column called like a variable below (changed_rows, change) or like a column of
-- pgivm's own (m, mult) is just a column.
--
-- These are the only entry points: SECURITY DEFINER so that writers of the base table need no
-- privileges on the state. None of them looks a base table up by name: they read the trigger's
-- transition tables and pgivm's own state, so renaming a base table, or putting another object
-- under its old name, changes nothing here. Every function has a fixed search_path.

-- Before it touches a row, every writing statement has taken the writers' locks of the base tables
-- of every immediate view over its table, in one order (pgivm_catalog.lock_writes, the BEFORE
-- statement trigger): writers of one view queue there instead of deadlocking on each other's
-- base-table rows, and views over shared tables queue on the same rows.

CREATE FUNCTION "pgivm_v"."on_change_a1"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
-- A disabled plan node carries a huge cost (PostgreSQL <= 15), which would trigger JIT compilation
-- of every statement: milliseconds spent compiling a one-row lookup.
SET jit = off
-- The single-tuple statements have one good plan whatever the values; without this PL/pgSQL may
-- keep planning some of them anew on every call. (The batch functions re-plan after ANALYZE.)
SET plan_cache_mode = force_generic_plan
AS $pgivm$
DECLARE
    changed_rows bigint;
    change       record;
    still_open   integer;  -- first-order: this statement's writes not yet done (see 45_statements.sql)
BEGIN
    -- the rows the statement changed, counted into the state row (which also serializes writers)
    IF TG_OP = 'DELETE' THEN
        UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + c.n
          FROM (SELECT count(*) AS n FROM old_rows) AS c WHERE singleton RETURNING c.n INTO changed_rows;
    ELSE
        UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + c.n
          FROM (SELECT count(*) AS n FROM new_rows) AS c WHERE singleton RETURNING c.n INTO changed_rows;
    END IF;
    IF NOT FOUND THEN
        -- The state row is missing only from a snapshot taken before the view was created
        -- (REPEATABLE READ or SERIALIZABLE): maintaining it from there would lose this change.
        -- (A snapshot that predates another writer's update of the row fails above, 40001.)
        RAISE EXCEPTION USING
            ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'v'),
            HINT = 'Retry the transaction.';
    END IF;
    IF TG_OP = 'INSERT' THEN
        INSERT INTO "pgivm_v"."a1_delta" ("c1", "c2", "c3", mult) SELECT changes."c1", changes."c2", changes."c3", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "c1", new_rows."b" AS "c2", new_rows."x" AS "c3", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2", changes."c3" HAVING sum(changes.m) <> 0;
        PERFORM "pgivm_v"."apply_batch_a1"();
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO "pgivm_v"."a1_delta" ("c1", "c2", "c3", mult) SELECT changes."c1", changes."c2", changes."c3", sum(changes.m)::bigint AS m FROM (SELECT old_rows."a" AS "c1", old_rows."b" AS "c2", old_rows."x" AS "c3", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2", changes."c3" HAVING sum(changes.m) <> 0;
        PERFORM "pgivm_v"."apply_batch_a1"();
    ELSE
        INSERT INTO "pgivm_v"."a1_delta" ("c1", "c2", "c3", mult) SELECT changes."c1", changes."c2", changes."c3", sum(changes.m)::bigint AS m FROM (SELECT new_rows."a" AS "c1", new_rows."b" AS "c2", new_rows."x" AS "c3", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL UNION ALL SELECT old_rows."a" AS "c1", old_rows."b" AS "c2", old_rows."x" AS "c3", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2", changes."c3" HAVING sum(changes.m) <> 0;
        PERFORM "pgivm_v"."apply_batch_a1"();
    END IF;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_change_a1"() IS 'pgivm view v: maintain the reservoir sampling state for changes of public.r as A1';

-- TRUNCATE of a partition (or of a partitioned table, which fires this on every partition) takes
-- only that partition's rows away: read them just before they go and hand them to the sink as a
-- deletion, set at a time (with the log sink, a TRUNCATE of a plain table goes this way too). The partition is found by the trigger's oid (TG_RELID), named from the oid at
-- this moment, and the query names its tableoid column, so it cannot run anything but a read of
-- that table; row_security = off makes a policy an error instead of code that runs here.
CREATE FUNCTION "pgivm_v"."on_truncate_rows_a1"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
SET jit = off
AS $pgivm$
BEGIN
    UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + 1 WHERE singleton;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'v'),
            HINT = 'Retry the transaction.';
    END IF;
    -- A1
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_v"."a1_delta" ("c1", "c2", "c3", mult) SELECT base."a", base."b", base."x", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."b" IS NOT NULL GROUP BY 1, 2, 3', TG_RELID::pg_catalog.regclass, TG_RELID);
    PERFORM "pgivm_v"."apply_batch_a1"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_truncate_rows_a1"() IS 'pgivm view v: before TRUNCATE of public.r or a partition of it, take its rows away as a deletion';

-- With the apply sink, TRUNCATE of a plain table empties every relation it feeds: clear them and
-- restart (N, the partition and the views from the remaining relations). Nothing needs to be read.
CREATE FUNCTION "pgivm_v"."on_truncate_a1"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $pgivm$
BEGIN
    UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + 1 WHERE singleton;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'v'),
            HINT = 'Retry the transaction.';
    END IF;
    PERFORM "pgivm_v"."clear_a1"();
    PERFORM "pgivm_v"."restart"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_truncate_a1"() IS 'pgivm view v: clear the reservoir sampling state of public.r as A1 after TRUNCATE';

-- Change capture for one base table that feeds relations of the view (one relation, or several
-- for a self-join such as the graph form over one edge table). Rendered once per base table by the
-- systems that capture changes (ivme and first-order apply them at once: apply_K(columns, m) and
-- apply_batch_K()); the triggers that call these functions come from pgivm.capture.CaptureTrigger.
--
-- Statement-level triggers with transition tables: a statement's net change of each relation
-- (inserted rows +1, deleted rows -1, grouped by the join columns, NULL keys dropped since they
-- never join) goes to R, then S, then T, each applied on the state left by the previous one,
-- which is exactly the delta of the (self-)join count. An UPDATE that leaves the join columns
-- alone nets to nothing. The sink then takes the net change of each atom (see pgivm.capture.SINKS).
-- A base column is read only qualified (new_rows.col) and renamed at once: the net change names it
-- after its relation's variable (a, b, c) or its place in its atom (c1, c2, ...), never after
-- itself, so a base column called like a variable below (changed_rows, change) or like a column of
-- pgivm's own (m, mult) is just a column.
--
-- These are the only entry points: SECURITY DEFINER so that writers of the base table need no
-- privileges on the state. None of them looks a base table up by name: they read the trigger's
-- transition tables and pgivm's own state, so renaming a base table, or putting another object
-- under its old name, changes nothing here. Every function has a fixed search_path.

-- Before it touches a row, every writing statement has taken the writers' locks of the base tables
-- of every immediate view over its table, in one order (pgivm_catalog.lock_writes, the BEFORE
-- statement trigger): writers of one view queue there instead of deadlocking on each other's
-- base-table rows, and views over shared tables queue on the same rows.

CREATE FUNCTION "pgivm_v"."on_change_a2"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
-- A disabled plan node carries a huge cost (PostgreSQL <= 15), which would trigger JIT compilation
-- of every statement: milliseconds spent compiling a one-row lookup.
SET jit = off
-- The single-tuple statements have one good plan whatever the values; without this PL/pgSQL may
-- keep planning some of them anew on every call. (The batch functions re-plan after ANALYZE.)
SET plan_cache_mode = force_generic_plan
AS $pgivm$
DECLARE
    changed_rows bigint;
    change       record;
    still_open   integer;  -- first-order: this statement's writes not yet done (see 45_statements.sql)
BEGIN
    -- the rows the statement changed, counted into the state row (which also serializes writers)
    IF TG_OP = 'DELETE' THEN
        UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + c.n
          FROM (SELECT count(*) AS n FROM old_rows) AS c WHERE singleton RETURNING c.n INTO changed_rows;
    ELSE
        UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + c.n
          FROM (SELECT count(*) AS n FROM new_rows) AS c WHERE singleton RETURNING c.n INTO changed_rows;
    END IF;
    IF NOT FOUND THEN
        -- The state row is missing only from a snapshot taken before the view was created
        -- (REPEATABLE READ or SERIALIZABLE): maintaining it from there would lose this change.
        -- (A snapshot that predates another writer's update of the row fails above, 40001.)
        RAISE EXCEPTION USING
            ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'v'),
            HINT = 'Retry the transaction.';
    END IF;
    IF TG_OP = 'INSERT' THEN
        INSERT INTO "pgivm_v"."a2_delta" ("c1", "c2", mult) SELECT changes."c1", changes."c2", sum(changes.m)::bigint AS m FROM (SELECT new_rows."b" AS "c1", new_rows."c" AS "c2", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL AND new_rows."c" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2" HAVING sum(changes.m) <> 0;
        PERFORM "pgivm_v"."apply_batch_a2"();
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO "pgivm_v"."a2_delta" ("c1", "c2", mult) SELECT changes."c1", changes."c2", sum(changes.m)::bigint AS m FROM (SELECT old_rows."b" AS "c1", old_rows."c" AS "c2", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL AND old_rows."c" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2" HAVING sum(changes.m) <> 0;
        PERFORM "pgivm_v"."apply_batch_a2"();
    ELSE
        INSERT INTO "pgivm_v"."a2_delta" ("c1", "c2", mult) SELECT changes."c1", changes."c2", sum(changes.m)::bigint AS m FROM (SELECT new_rows."b" AS "c1", new_rows."c" AS "c2", 1 AS m FROM new_rows WHERE new_rows."b" IS NOT NULL AND new_rows."c" IS NOT NULL UNION ALL SELECT old_rows."b" AS "c1", old_rows."c" AS "c2", -1 AS m FROM old_rows WHERE old_rows."b" IS NOT NULL AND old_rows."c" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2" HAVING sum(changes.m) <> 0;
        PERFORM "pgivm_v"."apply_batch_a2"();
    END IF;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_change_a2"() IS 'pgivm view v: maintain the reservoir sampling state for changes of public.s as A2';

-- TRUNCATE of a partition (or of a partitioned table, which fires this on every partition) takes
-- only that partition's rows away: read them just before they go and hand them to the sink as a
-- deletion, set at a time (with the log sink, a TRUNCATE of a plain table goes this way too). The partition is found by the trigger's oid (TG_RELID), named from the oid at
-- this moment, and the query names its tableoid column, so it cannot run anything but a read of
-- that table; row_security = off makes a policy an error instead of code that runs here.
CREATE FUNCTION "pgivm_v"."on_truncate_rows_a2"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
SET jit = off
AS $pgivm$
BEGIN
    UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + 1 WHERE singleton;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'v'),
            HINT = 'Retry the transaction.';
    END IF;
    -- A2
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_v"."a2_delta" ("c1", "c2", mult) SELECT base."b", base."c", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."b" IS NOT NULL AND base."c" IS NOT NULL GROUP BY 1, 2', TG_RELID::pg_catalog.regclass, TG_RELID);
    PERFORM "pgivm_v"."apply_batch_a2"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_truncate_rows_a2"() IS 'pgivm view v: before TRUNCATE of public.s or a partition of it, take its rows away as a deletion';

-- With the apply sink, TRUNCATE of a plain table empties every relation it feeds: clear them and
-- restart (N, the partition and the views from the remaining relations). Nothing needs to be read.
CREATE FUNCTION "pgivm_v"."on_truncate_a2"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $pgivm$
BEGIN
    UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + 1 WHERE singleton;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'v'),
            HINT = 'Retry the transaction.';
    END IF;
    PERFORM "pgivm_v"."clear_a2"();
    PERFORM "pgivm_v"."restart"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_truncate_a2"() IS 'pgivm view v: clear the reservoir sampling state of public.s as A2 after TRUNCATE';

-- Change capture for one base table that feeds relations of the view (one relation, or several
-- for a self-join such as the graph form over one edge table). Rendered once per base table by the
-- systems that capture changes (ivme and first-order apply them at once: apply_K(columns, m) and
-- apply_batch_K()); the triggers that call these functions come from pgivm.capture.CaptureTrigger.
--
-- Statement-level triggers with transition tables: a statement's net change of each relation
-- (inserted rows +1, deleted rows -1, grouped by the join columns, NULL keys dropped since they
-- never join) goes to R, then S, then T, each applied on the state left by the previous one,
-- which is exactly the delta of the (self-)join count. An UPDATE that leaves the join columns
-- alone nets to nothing. The sink then takes the net change of each atom (see pgivm.capture.SINKS).
-- A base column is read only qualified (new_rows.col) and renamed at once: the net change names it
-- after its relation's variable (a, b, c) or its place in its atom (c1, c2, ...), never after
-- itself, so a base column called like a variable below (changed_rows, change) or like a column of
-- pgivm's own (m, mult) is just a column.
--
-- These are the only entry points: SECURITY DEFINER so that writers of the base table need no
-- privileges on the state. None of them looks a base table up by name: they read the trigger's
-- transition tables and pgivm's own state, so renaming a base table, or putting another object
-- under its old name, changes nothing here. Every function has a fixed search_path.

-- Before it touches a row, every writing statement has taken the writers' locks of the base tables
-- of every immediate view over its table, in one order (pgivm_catalog.lock_writes, the BEFORE
-- statement trigger): writers of one view queue there instead of deadlocking on each other's
-- base-table rows, and views over shared tables queue on the same rows.

CREATE FUNCTION "pgivm_v"."on_change_a3"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
-- A disabled plan node carries a huge cost (PostgreSQL <= 15), which would trigger JIT compilation
-- of every statement: milliseconds spent compiling a one-row lookup.
SET jit = off
-- The single-tuple statements have one good plan whatever the values; without this PL/pgSQL may
-- keep planning some of them anew on every call. (The batch functions re-plan after ANALYZE.)
SET plan_cache_mode = force_generic_plan
AS $pgivm$
DECLARE
    changed_rows bigint;
    change       record;
    still_open   integer;  -- first-order: this statement's writes not yet done (see 45_statements.sql)
BEGIN
    -- the rows the statement changed, counted into the state row (which also serializes writers)
    IF TG_OP = 'DELETE' THEN
        UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + c.n
          FROM (SELECT count(*) AS n FROM old_rows) AS c WHERE singleton RETURNING c.n INTO changed_rows;
    ELSE
        UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + c.n
          FROM (SELECT count(*) AS n FROM new_rows) AS c WHERE singleton RETURNING c.n INTO changed_rows;
    END IF;
    IF NOT FOUND THEN
        -- The state row is missing only from a snapshot taken before the view was created
        -- (REPEATABLE READ or SERIALIZABLE): maintaining it from there would lose this change.
        -- (A snapshot that predates another writer's update of the row fails above, 40001.)
        RAISE EXCEPTION USING
            ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'v'),
            HINT = 'Retry the transaction.';
    END IF;
    IF TG_OP = 'INSERT' THEN
        INSERT INTO "pgivm_v"."a3_delta" ("c1", "c2", mult) SELECT changes."c1", changes."c2", sum(changes.m)::bigint AS m FROM (SELECT new_rows."c" AS "c1", new_rows."z" AS "c2", 1 AS m FROM new_rows WHERE new_rows."c" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2" HAVING sum(changes.m) <> 0;
        PERFORM "pgivm_v"."apply_batch_a3"();
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO "pgivm_v"."a3_delta" ("c1", "c2", mult) SELECT changes."c1", changes."c2", sum(changes.m)::bigint AS m FROM (SELECT old_rows."c" AS "c1", old_rows."z" AS "c2", -1 AS m FROM old_rows WHERE old_rows."c" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2" HAVING sum(changes.m) <> 0;
        PERFORM "pgivm_v"."apply_batch_a3"();
    ELSE
        INSERT INTO "pgivm_v"."a3_delta" ("c1", "c2", mult) SELECT changes."c1", changes."c2", sum(changes.m)::bigint AS m FROM (SELECT new_rows."c" AS "c1", new_rows."z" AS "c2", 1 AS m FROM new_rows WHERE new_rows."c" IS NOT NULL UNION ALL SELECT old_rows."c" AS "c1", old_rows."z" AS "c2", -1 AS m FROM old_rows WHERE old_rows."c" IS NOT NULL) AS changes GROUP BY changes."c1", changes."c2" HAVING sum(changes.m) <> 0;
        PERFORM "pgivm_v"."apply_batch_a3"();
    END IF;
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_change_a3"() IS 'pgivm view v: maintain the reservoir sampling state for changes of public.t as A3';

-- TRUNCATE of a partition (or of a partitioned table, which fires this on every partition) takes
-- only that partition's rows away: read them just before they go and hand them to the sink as a
-- deletion, set at a time (with the log sink, a TRUNCATE of a plain table goes this way too). The partition is found by the trigger's oid (TG_RELID), named from the oid at
-- this moment, and the query names its tableoid column, so it cannot run anything but a read of
-- that table; row_security = off makes a policy an error instead of code that runs here.
CREATE FUNCTION "pgivm_v"."on_truncate_rows_a3"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET row_security = off
SET jit = off
AS $pgivm$
BEGIN
    UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + 1 WHERE singleton;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'v'),
            HINT = 'Retry the transaction.';
    END IF;
    -- A3
    EXECUTE pg_catalog.format('INSERT INTO "pgivm_v"."a3_delta" ("c1", "c2", mult) SELECT base."c", base."z", -count(*) FROM ONLY %1$s base WHERE base.tableoid = %2$s::pg_catalog.oid AND base."c" IS NOT NULL GROUP BY 1, 2', TG_RELID::pg_catalog.regclass, TG_RELID);
    PERFORM "pgivm_v"."apply_batch_a3"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_truncate_rows_a3"() IS 'pgivm view v: before TRUNCATE of public.t or a partition of it, take its rows away as a deletion';

-- With the apply sink, TRUNCATE of a plain table empties every relation it feeds: clear them and
-- restart (N, the partition and the views from the remaining relations). Nothing needs to be read.
CREATE FUNCTION "pgivm_v"."on_truncate_a3"()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $pgivm$
BEGIN
    UPDATE "pgivm_v"."state" SET updates_applied = updates_applied + 1 WHERE singleton;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
            MESSAGE = pg_catalog.format('could not serialize access: pgivm view %s was created after this transaction took its snapshot', 'v'),
            HINT = 'Retry the transaction.';
    END IF;
    PERFORM "pgivm_v"."clear_a3"();
    PERFORM "pgivm_v"."restart"();
    RETURN NULL;
END;
$pgivm$;
COMMENT ON FUNCTION "pgivm_v"."on_truncate_a3"() IS 'pgivm view v: clear the reservoir sampling state of public.t as A3 after TRUNCATE';

-- phase: build (8 statements)

INSERT INTO "pgivm_v"."state" (k, seed, rng) VALUES (5, 7, 7191089600892374487);

INSERT INTO "pgivm_v"."a1_delta" ("c1", "c2", "c3", mult) SELECT b."a", b."b", b."x", count(*) FROM "public"."r" AS b WHERE "b".tableoid = 16384::pg_catalog.oid AND b."b" IS NOT NULL GROUP BY 1, 2, 3;

SELECT "pgivm_v"."apply_pending"();

INSERT INTO "pgivm_v"."a2_delta" ("c1", "c2", mult) SELECT b."b", b."c", count(*) FROM "public"."s" AS b WHERE "b".tableoid = 16385::pg_catalog.oid AND b."b" IS NOT NULL AND b."c" IS NOT NULL GROUP BY 1, 2;

SELECT "pgivm_v"."apply_pending"();

INSERT INTO "pgivm_v"."a3_delta" ("c1", "c2", mult) SELECT b."c", b."z", count(*) FROM "public"."t" AS b WHERE "b".tableoid = 16386::pg_catalog.oid AND b."c" IS NOT NULL GROUP BY 1, 2;

SELECT "pgivm_v"."apply_pending"();

ANALYZE "pgivm_v"."cnt";

-- phase: capture (15 statements)

CREATE TRIGGER "pgivm_v_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "public"."r" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_v_insert" AFTER INSERT ON "public"."r" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a1"();

CREATE TRIGGER "pgivm_v_delete" AFTER DELETE ON "public"."r" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a1"();

CREATE TRIGGER "pgivm_v_update" AFTER UPDATE ON "public"."r" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a1"();

CREATE TRIGGER "pgivm_v_truncate" AFTER TRUNCATE ON "public"."r" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_truncate_a1"();

CREATE TRIGGER "pgivm_v_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "public"."s" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_v_insert" AFTER INSERT ON "public"."s" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a2"();

CREATE TRIGGER "pgivm_v_delete" AFTER DELETE ON "public"."s" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a2"();

CREATE TRIGGER "pgivm_v_update" AFTER UPDATE ON "public"."s" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a2"();

CREATE TRIGGER "pgivm_v_truncate" AFTER TRUNCATE ON "public"."s" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_truncate_a2"();

CREATE TRIGGER "pgivm_v_lock" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "public"."t" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_catalog"."lock_writes"();

CREATE TRIGGER "pgivm_v_insert" AFTER INSERT ON "public"."t" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a3"();

CREATE TRIGGER "pgivm_v_delete" AFTER DELETE ON "public"."t" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a3"();

CREATE TRIGGER "pgivm_v_update" AFTER UPDATE ON "public"."t" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_change_a3"();

CREATE TRIGGER "pgivm_v_truncate" AFTER TRUNCATE ON "public"."t" FOR EACH STATEMENT EXECUTE FUNCTION "pgivm_v"."on_truncate_a3"();

-- phase: expose (3 statements)

CREATE OR REPLACE VIEW "pgivm_v"."result" AS SELECT filled AS count FROM "pgivm_v"."state"; COMMENT ON VIEW "pgivm_v"."result" IS 'pgivm: the number of sampled join results';

CREATE OR REPLACE VIEW "public"."v" AS SELECT "a1"."c1" AS "a", "a1"."c3" AS "x", "a3"."c2" AS "z" FROM "pgivm_v"."sample" AS pgivm_sampled JOIN "pgivm_v"."a1" AS "a1" ON "a1".rid = pgivm_sampled.rids[1] JOIN "pgivm_v"."a2" AS "a2" ON "a2".rid = pgivm_sampled.rids[2] JOIN "pgivm_v"."a3" AS "a3" ON "a3".rid = pgivm_sampled.rids[3] ORDER BY pgivm_sampled.slot; COMMENT ON VIEW "public"."v" IS 'pgivm: a uniform sample of at most 5 results, kept by reservoir sampling over joins, state in schema pgivm_v. Definition: SELECT r.a, r.x, t.z FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c';

REVOKE ALL ON ALL TABLES IN SCHEMA "pgivm_v" FROM PUBLIC; REVOKE ALL ON ALL FUNCTIONS IN SCHEMA "pgivm_v" FROM PUBLIC;
