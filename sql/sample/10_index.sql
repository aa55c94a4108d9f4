-- The dynamic index of §4 (Algorithms 7 and 9, and 10 and 11 with grouping) over the tables of
-- 00_state.sql, written once for every query: nodes, edges and keys are numbers. Deletes (which the paper leaves out) use the
-- same moves with the sign reversed; c̃nt then shrinks only when cnt falls to a quarter of it, so
-- a count wobbling around a power of two does not cascade on every update (cnt <= c̃nt < 4 cnt:
-- every key batch stays at least 1/4 real instead of 1/2).

-- xorshift64 (Marsaglia 2003, shifts 13, 7, 17): the view's own seeded random stream, so that a
-- view is reproducible and nobody else's random() is disturbed. >> is arithmetic on bigint: the
-- mask makes it logical.
CREATE FUNCTION {rng_next}(s bigint) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $pgivm$
BEGIN
    s := s # (s << 13);
    s := s # ((s >> 7) & 144115188075855871);
    RETURN s # (s << 17);
END;
$pgivm$;

-- The top 53 bits of the state as a number in (0, 1): never 0, so ln() is always defined.
CREATE FUNCTION {unit}(s bigint) RETURNS float8
LANGUAGE sql SECURITY DEFINER IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $pgivm$
    SELECT (((s >> 11) & 9007199254740991)::float8 + 0.5) / 9007199254740992.0
$pgivm$;

-- A uniform integer in [0, 2^bits), 53 random bits at a time (positions of J0 can pass 2^53).
CREATE FUNCTION {rand_bits}(s bigint, bits int, OUT s_next bigint, OUT z numeric)
LANGUAGE plpgsql SECURITY DEFINER IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    take int;
BEGIN
    z := 0;
    s_next := s;
    WHILE bits > 0 LOOP
        take := least(bits, 53);
        s_next := {rng_next}(s_next);
        z := z * 2::numeric ^ take + ((s_next >> (64 - take)) & ((1::bigint << take) - 1));
        bits := bits - take;
    END LOOP;
END;
$pgivm$;

-- The smallest e with 2^e >= c, exactly (c is numeric: counts pass 2^64 on deep trees).
CREATE FUNCTION {ceil_log2}(c numeric) RETURNS int
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
CREATE FUNCTION {tuple_exp}(children int[], cedges int[], kids bigint[]) RETURNS int
LANGUAGE plpgsql SECURITY DEFINER STABLE SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    total int := 0;
    e int;
    i int;
BEGIN
    FOR i IN 1..coalesce(array_length(children, 1), 0) LOOP
        SELECT ct INTO e FROM {cnt} WHERE node = children[i] AND kid = kids[cedges[i] + 1];
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
CREATE FUNCTION {entry_move}(node_ int, key_ bigint, eid_ bigint, old_e int, new_e int) RETURNS bigint
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
        DELETE FROM {bucket} WHERE node = node_ AND eid = eid_ RETURNING pos INTO hole;
        UPDATE {bsize} SET size = size - 1 WHERE node = node_ AND kid = key_ AND exp = old_e RETURNING size INTO last;
        IF last = 0 THEN
            DELETE FROM {bsize} WHERE node = node_ AND kid = key_ AND exp = old_e;
        ELSIF hole <> last THEN
            UPDATE {bucket} SET pos = hole WHERE node = node_ AND kid = key_ AND exp = old_e AND pos = last;
        END IF;
    END IF;
    IF new_e IS NOT NULL THEN
        UPDATE {bsize} SET size = size + 1 WHERE node = node_ AND kid = key_ AND exp = new_e RETURNING size - 1 INTO last;
        IF NOT FOUND THEN
            INSERT INTO {bsize} VALUES (node_, key_, new_e, 1);
            last := 0;
        END IF;
        INSERT INTO {bucket} VALUES (node_, key_, new_e, last, eid_);
    END IF;
    UPDATE {cnt} SET cnt = cnt + delta WHERE node = node_ AND kid = key_ RETURNING cnt, ct INTO c, old_ct;
    IF NOT FOUND THEN  -- cnt was 0
        new_ct := {ceil_log2}(delta);
        INSERT INTO {cnt} VALUES (node_, key_, delta, new_ct);
    ELSIF c <= 0 THEN
        DELETE FROM {cnt} WHERE node = node_ AND kid = key_;
        new_ct := NULL;
    ELSIF c > 2::numeric ^ old_ct OR 4 * c <= 2::numeric ^ old_ct THEN
        new_ct := {ceil_log2}(c);
        UPDATE {cnt} SET ct = new_ct WHERE node = node_ AND kid = key_;
    ELSE
        new_ct := old_ct;
    END IF;
    IF old_ct IS DISTINCT FROM new_ct THEN
        RETURN {propagate}(node_, key_, old_ct, new_ct);
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
CREATE FUNCTION {propagate}(node_ int, kid_ bigint, old_ct int, new_ct int) RETURNS bigint
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
    SELECT pn.*, me.pedge AS up INTO p FROM {node} me JOIN {node} pn ON pn.node = me.parent WHERE me.node = node_;
    IF NOT FOUND OR NOT p.bucketed THEN
        RETURN 0;
    END IF;
    FOR r IN SELECT m.eid, coalesce(g.kids, x.kids) AS kids, coalesce(g.fct, 0) AS fct
               FROM {member} m
               LEFT JOIN {grp} g ON p.grouped AND g.gid = m.eid
               LEFT JOIN {rows} x ON NOT p.grouped AND x.rid = m.eid
              WHERE m.edge = p.up AND m.unit = p.unit AND m.kid = kid_ LOOP
        pkey := CASE WHEN p.pedge IS NULL THEN 0 ELSE r.kids[p.pedge + 1] END;
        SELECT exp INTO old_e FROM {bucket} WHERE node = p.node AND eid = r.eid;
        IF old_e IS NOT NULL AND old_ct IS NOT NULL AND new_ct IS NOT NULL THEN
            new_e := old_e + new_ct - old_ct;
        ELSE
            new_e := {tuple_exp}(p.children, p.cedges, r.kids) + r.fct;
        END IF;
        IF new_e IS DISTINCT FROM old_e THEN
            moved := moved + 1 + {entry_move}(p.node, pkey, r.eid, old_e, new_e);
        END IF;
    END LOOP;
    RETURN moved;
END;
$pgivm$;

-- IndexUpdate(T, e, t, 0) for every rooted tree T (Algorithm 7) when row rid_ joins its unit. In a
-- grouped unit the row joins the group of its keys (Algorithm 10): the group's weight changes only
-- when f̃eq does, but the row is always added to the group's members (the notes' erratum), so that
-- Retrieve finds it. Returns the number of entries moved above.
CREATE FUNCTION {index_insert}(unit_ int, rid_ bigint, kids_ bigint[]) RETURNS bigint
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
    IF EXISTS (SELECT FROM {node} WHERE unit = unit_ AND grouped) THEN
        SELECT * INTO g FROM {grp} WHERE unit = unit_ AND kids = kids_;
        IF NOT FOUND THEN
            gid_ := nextval({rid_seq_text});
            new_fct := 0;
            INSERT INTO {grp} VALUES (gid_, unit_, kids_, 1, 0);
            INSERT INTO {gmem} VALUES (gid_, 0, rid_);
            INSERT INTO {member} SELECT i - 1, unit_, kids_[i], gid_ FROM generate_subscripts(kids_, 1) AS i WHERE kids_[i] IS NOT NULL;
        ELSE
            gid_ := g.gid;
            old_fct := g.fct;
            new_fct := g.fct;
            IF g.feq + 1 > 2::numeric ^ g.fct THEN
                new_fct := {ceil_log2}(g.feq + 1);
            END IF;
            INSERT INTO {gmem} VALUES (gid_, g.feq, rid_);
            UPDATE {grp} SET feq = feq + 1, fct = new_fct WHERE gid = gid_;
        END IF;
    ELSE
        INSERT INTO {member} SELECT i - 1, unit_, kids_[i], rid_ FROM generate_subscripts(kids_, 1) AS i WHERE kids_[i] IS NOT NULL;
    END IF;
    -- (a leaf's product is 1: tuple_exp is not asked)
    FOR nd IN SELECT * FROM {node} WHERE unit = unit_ AND bucketed LOOP
        key_ := CASE WHEN nd.pedge IS NULL THEN 0 ELSE kids_[nd.pedge + 1] END;
        IF nd.grouped THEN
            CONTINUE WHEN old_fct IS NOT DISTINCT FROM new_fct;  -- f̃eq, hence the group's weight, unchanged
            old_e := NULL;
            IF old_fct IS NOT NULL THEN
                SELECT exp INTO old_e FROM {bucket} WHERE node = nd.node AND eid = gid_;
                CONTINUE WHEN NOT FOUND;  -- a child has no match: the group weighs 0 either way
                e := old_e + new_fct - old_fct;
            ELSE
                e := CASE WHEN cardinality(nd.children) = 0 THEN 0 ELSE {tuple_exp}(nd.children, nd.cedges, kids_) END + new_fct;
            END IF;
            moved := moved + {entry_move}(nd.node, key_, gid_, old_e, e);
        ELSE
            e := CASE WHEN cardinality(nd.children) = 0 THEN 0 ELSE {tuple_exp}(nd.children, nd.cedges, kids_) END;
            CONTINUE WHEN e IS NULL;
            moved := moved + {entry_move}(nd.node, key_, rid_, NULL, e);
        END IF;
    END LOOP;
    RETURN moved;
END;
$pgivm$;

-- The reverse of index_insert: the row leaves its group (swap with the group's last member; f̃eq
-- shrinks only when feq falls to a quarter of it), every tree's buckets and counts, and its unit.
CREATE FUNCTION {index_delete}(rid_ bigint) RETURNS bigint
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
    SELECT * INTO me FROM {rows} WHERE rid = rid_;
    IF EXISTS (SELECT FROM {node} WHERE unit = me.unit AND grouped) THEN
        SELECT * INTO gm FROM {gmem} WHERE rid = rid_;
        SELECT * INTO g FROM {grp} WHERE gid = gm.gid;
        DELETE FROM {gmem} WHERE gid = g.gid AND pos = gm.pos;
        IF gm.pos <> g.feq - 1 THEN
            UPDATE {gmem} SET pos = gm.pos WHERE gid = g.gid AND pos = g.feq - 1;
        END IF;
        old_fct := g.fct;
        IF g.feq = 1 THEN
            new_fct := NULL;
            DELETE FROM {grp} WHERE gid = g.gid;
            DELETE FROM {member} m USING generate_subscripts(g.kids, 1) AS i
             WHERE m.edge = i - 1 AND m.unit = g.unit AND m.kid = g.kids[i] AND m.eid = g.gid;
        ELSE
            new_fct := g.fct;
            IF 4 * (g.feq - 1) <= 2::numeric ^ g.fct THEN
                new_fct := {ceil_log2}(g.feq - 1);
            END IF;
            UPDATE {grp} SET feq = feq - 1, fct = new_fct WHERE gid = g.gid;
        END IF;
    ELSE
        DELETE FROM {member} m USING generate_subscripts(me.kids, 1) AS i
         WHERE m.edge = i - 1 AND m.unit = me.unit AND m.kid = me.kids[i] AND m.eid = rid_;
    END IF;
    FOR nd IN SELECT * FROM {node} WHERE unit = me.unit AND bucketed LOOP
        key_ := CASE WHEN nd.pedge IS NULL THEN 0 ELSE me.kids[nd.pedge + 1] END;
        IF nd.grouped THEN
            CONTINUE WHEN old_fct IS NOT DISTINCT FROM new_fct;
            SELECT exp INTO old_e FROM {bucket} WHERE node = nd.node AND eid = g.gid;
            CONTINUE WHEN NOT FOUND;
            moved := moved + {entry_move}(nd.node, key_, g.gid, old_e, old_e + new_fct - old_fct);
        ELSE
            SELECT exp INTO old_e FROM {bucket} WHERE node = nd.node AND eid = rid_;
            CONTINUE WHEN NOT FOUND;
            moved := moved + {entry_move}(nd.node, key_, rid_, old_e, NULL);
        END IF;
    END LOOP;
    DELETE FROM {part} WHERE rid = rid_;
    DELETE FROM {rows} WHERE rid = rid_;
    RETURN moved;
END;
$pgivm$;

-- Algorithm 9 (Retrieve; 11 at a grouped node) is generated per view from the shapes of its trees,
-- one statement a node: pgivm/systems/sample/retrieve.py.
