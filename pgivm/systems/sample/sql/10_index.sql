-- The dynamic index of §4 (Algorithms 7 and 9) over the tables of 00_state.sql, written once for
-- every query: nodes, edges and keys are numbers. Deletes (which the paper leaves out) use the
-- same moves with the sign reversed; c̃nt then shrinks only when cnt falls to a quarter of it, so
-- a count wobbling around a power of two does not cascade on every update (cnt <= c̃nt < 4 cnt:
-- every key batch stays at least 1/4 real instead of 1/2).

-- xorshift64 (Marsaglia 2003, shifts 13, 7, 17): the view's own seeded random stream, so that a
-- view is reproducible and nobody else's random() is disturbed. >> is arithmetic on bigint: the
-- mask makes it logical.
CREATE FUNCTION {rng_next}(s bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $pgivm$
BEGIN
    s := s # (s << 13);
    s := s # ((s >> 7) & 144115188075855871);
    RETURN s # (s << 17);
END;
$pgivm$;

-- The top 53 bits of the state as a number in (0, 1): never 0, so ln() is always defined.
CREATE FUNCTION {unit}(s bigint) RETURNS float8
LANGUAGE sql IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $pgivm$
    SELECT (((s >> 11) & 9007199254740991)::float8 + 0.5) / 9007199254740992.0
$pgivm$;

-- A uniform integer in [0, 2^bits), 53 random bits at a time (positions of J0 can pass 2^53).
CREATE FUNCTION {rand_bits}(s bigint, bits int, OUT s_next bigint, OUT z numeric)
LANGUAGE plpgsql IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $pgivm$
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
LANGUAGE plpgsql IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    e int := greatest(0, ceil(ln(c::float8) / ln(2.0))::int);
BEGIN
    WHILE 2::numeric ^ e < c LOOP e := e + 1; END LOOP;
    WHILE e > 0 AND 2::numeric ^ (e - 1) >= c LOOP e := e - 1; END LOOP;
    RETURN e;
END;
$pgivm$;

-- cnt[node, kid] += delta; returns c̃nt's exponent before and after (NULL: no row, cnt = 0).
CREATE FUNCTION {cnt_add}(node_ int, kid_ bigint, delta numeric, OUT old_ct int, OUT new_ct int)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    c numeric;
BEGIN
    SELECT cnt + delta, ct INTO c, old_ct FROM {cnt} WHERE node = node_ AND kid = kid_;
    IF NOT FOUND THEN
        new_ct := {ceil_log2}(delta);
        INSERT INTO {cnt} VALUES (node_, kid_, delta, new_ct);
        RETURN;
    END IF;
    IF c <= 0 THEN
        DELETE FROM {cnt} WHERE node = node_ AND kid = kid_;
        new_ct := NULL;
        RETURN;
    END IF;
    new_ct := old_ct;
    IF c > 2::numeric ^ old_ct OR 4 * c <= 2::numeric ^ old_ct THEN
        new_ct := {ceil_log2}(c);
    END IF;
    UPDATE {cnt} SET cnt = c, ct = new_ct WHERE node = node_ AND kid = kid_;
END;
$pgivm$;

CREATE FUNCTION {bucket_add}(node_ int, kid_ bigint, exp_ int, rid_ bigint) RETURNS bigint
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    p bigint;
BEGIN
    UPDATE {bsize} SET size = size + 1 WHERE node = node_ AND kid = kid_ AND exp = exp_ RETURNING size - 1 INTO p;
    IF NOT FOUND THEN
        INSERT INTO {bsize} VALUES (node_, kid_, exp_, 1);
        p := 0;
    END IF;
    INSERT INTO {bucket} VALUES (node_, kid_, exp_, p, rid_);
    RETURN p;
END;
$pgivm$;

-- Take the row at pos out of its bucket: the bucket's last row moves into the hole.
CREATE FUNCTION {bucket_remove}(node_ int, kid_ bigint, exp_ int, pos_ bigint, rid_ bigint) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    last bigint;
BEGIN
    UPDATE {bsize} SET size = size - 1 WHERE node = node_ AND kid = kid_ AND exp = exp_ RETURNING size INTO last;
    IF last = 0 THEN
        DELETE FROM {bsize} WHERE node = node_ AND kid = kid_ AND exp = exp_;
    END IF;
    DELETE FROM {bucket} WHERE node = node_ AND kid = kid_ AND exp = exp_ AND pos = pos_;
    IF pos_ <> last THEN
        UPDATE {bucket} SET pos = pos_ WHERE node = node_ AND kid = kid_ AND exp = exp_ AND pos = last;
    END IF;
END;
$pgivm$;

-- log2 of ∏ c̃nt[child, key] over the node's children for a row with these kids; NULL when a
-- child has no match (the product is 0: such a row is in no bucket). A leaf's product is 1.
CREATE FUNCTION {tuple_exp}(children int[], cedges int[], kids bigint[]) RETURNS int
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $pgivm$
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

-- Algorithm 7's lines 8-11: c̃nt of (node_, kid_) changed from 2^old_ct to 2^new_ct, so every
-- parent row under that key has a new product: move it to its new bucket and pass the change of
-- its own key's count upwards. Stops under a root (nothing is bucketed there), except tree 0's
-- root, whose virtual parent holds no rows. The common case, a row that stays weighted, shifts
-- its exp by new_ct - old_ct and moves in place (no product recomputed); a row that gains or loses
-- its weight (a count from or to 0) goes the long way.
CREATE FUNCTION {propagate}(node_ int, kid_ bigint, old_ct int, new_ct int) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    me record;
    p record;
    r record;
    pkey bigint;
    new_e int;
    old_e int;
    old_pos bigint;
    new_pos bigint;
    last bigint;
    c numeric;
    pct int;
    nct int;
    ch record;
BEGIN
    SELECT * INTO me FROM {node} WHERE node = node_;
    IF me.parent IS NULL THEN
        RETURN;
    END IF;
    SELECT * INTO p FROM {node} WHERE node = me.parent;
    IF NOT p.bucketed THEN
        RETURN;
    END IF;
    FOR r IN SELECT m.rid, x.kids FROM {member} m JOIN {rows} x ON x.rid = m.rid
              WHERE m.edge = me.pedge AND m.atom = p.atom AND m.kid = kid_ LOOP
        pkey := CASE WHEN p.pedge IS NULL THEN 0 ELSE r.kids[p.pedge + 1] END;
        -- read now, not with the loop's rows: an earlier move may have filled a hole with this row
        SELECT exp, pos INTO old_e, old_pos FROM {bucket} WHERE node = p.node AND rid = r.rid;
        IF old_e IS NOT NULL AND old_ct IS NOT NULL AND new_ct IS NOT NULL THEN
            new_e := old_e + new_ct - old_ct;
            UPDATE {bsize} SET size = size + 1 WHERE node = p.node AND kid = pkey AND exp = new_e RETURNING size - 1 INTO new_pos;
            IF NOT FOUND THEN
                INSERT INTO {bsize} VALUES (p.node, pkey, new_e, 1);
                new_pos := 0;
            END IF;
            UPDATE {bucket} SET exp = new_e, pos = new_pos WHERE node = p.node AND rid = r.rid;
            UPDATE {bsize} SET size = size - 1 WHERE node = p.node AND kid = pkey AND exp = old_e RETURNING size INTO last;
            IF last = 0 THEN
                DELETE FROM {bsize} WHERE node = p.node AND kid = pkey AND exp = old_e;
            ELSIF old_pos <> last THEN
                UPDATE {bucket} SET pos = old_pos WHERE node = p.node AND kid = pkey AND exp = old_e AND pos = last;
            END IF;
            UPDATE {cnt} SET cnt = cnt + (2::numeric ^ new_e - 2::numeric ^ old_e)
             WHERE node = p.node AND kid = pkey RETURNING cnt, ct INTO c, pct;
            IF c > 2::numeric ^ pct OR 4 * c <= 2::numeric ^ pct THEN
                nct := {ceil_log2}(c);
                UPDATE {cnt} SET ct = nct WHERE node = p.node AND kid = pkey;
                PERFORM {propagate}(p.node, pkey, pct, nct);
            END IF;
            CONTINUE;
        END IF;
        new_e := {tuple_exp}(p.children, p.cedges, r.kids);
        IF new_e IS NOT DISTINCT FROM old_e THEN
            CONTINUE;
        END IF;
        IF old_e IS NOT NULL THEN
            PERFORM {bucket_remove}(p.node, pkey, old_e, old_pos, r.rid);
        END IF;
        IF new_e IS NOT NULL THEN
            PERFORM {bucket_add}(p.node, pkey, new_e, r.rid);
        END IF;
        SELECT * INTO ch FROM {cnt_add}(p.node, pkey,
            coalesce(2::numeric ^ new_e, 0) - coalesce(2::numeric ^ old_e, 0));
        IF ch.old_ct IS DISTINCT FROM ch.new_ct THEN
            PERFORM {propagate}(p.node, pkey, ch.old_ct, ch.new_ct);
        END IF;
    END LOOP;
END;
$pgivm$;

-- A row joins its atom: its keys, and the lists R_e ⋉ kid it is in.
CREATE FUNCTION {row_add}(atom_ int, rid_ bigint, kids bigint[]) RETURNS void
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $pgivm$
    INSERT INTO {rows} VALUES (rid_, atom_, kids);
    INSERT INTO {member} SELECT i - 1, atom_, kids[i], rid_ FROM generate_subscripts(kids, 1) AS i WHERE kids[i] IS NOT NULL;
$pgivm$;

-- IndexUpdate(T, e, t, 0) for every rooted tree T (Algorithm 7) when row rid_ joins its atom.
CREATE FUNCTION {index_insert}(atom_ int, rid_ bigint, kids bigint[]) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    nd record;
    key_ bigint;
    e int;
    ch record;
BEGIN
    FOR nd IN SELECT * FROM {node} WHERE atom = atom_ AND bucketed LOOP
        key_ := CASE WHEN nd.pedge IS NULL THEN 0 ELSE kids[nd.pedge + 1] END;
        e := {tuple_exp}(nd.children, nd.cedges, kids);
        CONTINUE WHEN e IS NULL;
        PERFORM {bucket_add}(nd.node, key_, e, rid_);
        SELECT * INTO ch FROM {cnt_add}(nd.node, key_, 2::numeric ^ e);
        IF ch.old_ct IS DISTINCT FROM ch.new_ct THEN
            PERFORM {propagate}(nd.node, key_, ch.old_ct, ch.new_ct);
        END IF;
    END LOOP;
END;
$pgivm$;

-- The reverse of index_insert: the row leaves every tree's buckets and counts.
CREATE FUNCTION {index_delete}(rid_ bigint) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    me record;
    nd record;
    w record;
    key_ bigint;
    ch record;
BEGIN
    SELECT * INTO me FROM {rows} WHERE rid = rid_;
    FOR nd IN SELECT * FROM {node} WHERE atom = me.atom AND bucketed LOOP
        SELECT exp, pos INTO w FROM {bucket} WHERE node = nd.node AND rid = rid_;
        CONTINUE WHEN NOT FOUND;
        key_ := CASE WHEN nd.pedge IS NULL THEN 0 ELSE me.kids[nd.pedge + 1] END;
        PERFORM {bucket_remove}(nd.node, key_, w.exp, w.pos, rid_);
        SELECT * INTO ch FROM {cnt_add}(nd.node, key_, -(2::numeric ^ w.exp));
        IF ch.old_ct IS DISTINCT FROM ch.new_ct THEN
            PERFORM {propagate}(nd.node, key_, ch.old_ct, ch.new_ct);
        END IF;
    END LOOP;
    DELETE FROM {member} m USING generate_subscripts(me.kids, 1) AS i
     WHERE m.edge = i - 1 AND m.atom = me.atom AND m.kid = me.kids[i] AND m.rid = rid_;
    DELETE FROM {rows} WHERE rid = rid_;
END;
$pgivm$;

-- Algorithm 9, a key: position z of the batch of key kid_ at node_ (its rows in bucket order,
-- each 2^exp positions, then c̃nt - cnt dummies). A result is its atoms' rids; NULL is a dummy.
CREATE FUNCTION {retrieve_key}(node_ int, kid_ bigint, z numeric) RETURNS bigint[]
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    c numeric;
    acc numeric := 0;
    span numeric;
    b record;
    j numeric;
    r bigint;
BEGIN
    SELECT cnt INTO c FROM {cnt} WHERE node = node_ AND kid = kid_;
    IF NOT FOUND OR z >= c THEN
        RETURN NULL;
    END IF;
    FOR b IN SELECT exp, size FROM {bsize} WHERE node = node_ AND kid = kid_ ORDER BY exp LOOP
        span := b.size * 2::numeric ^ b.exp;
        IF z < acc + span THEN
            j := floor((z - acc) / 2::numeric ^ b.exp);
            SELECT rid INTO r FROM {bucket} WHERE node = node_ AND kid = kid_ AND exp = b.exp AND pos = j;
            RETURN {retrieve_tuple}(node_, r, z - acc - j * 2::numeric ^ b.exp);
        END IF;
        acc := acc + span;
    END LOOP;
    RAISE EXCEPTION 'pgivm sample index: position % of key % at node % is past its buckets', z, kid_, node_;
END;
$pgivm$;

-- Algorithm 9, a row: position z of {{t}} × B_1 × ... × B_m (row-major: z in mixed radix over the
-- children's c̃nt, the last child fastest).
CREATE FUNCTION {retrieve_tuple}(node_ int, rid_ bigint, z numeric) RETURNS bigint[]
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    nd record;
    kids bigint[];
    result bigint[] := array_fill(NULL::bigint, ARRAY[{atoms}]);
    part bigint[];
    radix numeric;
    i int;
    a int;
    e int;
BEGIN
    SELECT * INTO nd FROM {node} WHERE node = node_;
    SELECT x.kids INTO kids FROM {rows} x WHERE x.rid = rid_;
    result[nd.atom + 1] := rid_;
    FOR i IN REVERSE cardinality(nd.children)..1 LOOP
        SELECT ct INTO e FROM {cnt} WHERE node = nd.children[i] AND kid = kids[nd.cedges[i] + 1];
        IF NOT FOUND THEN
            RETURN NULL;
        END IF;
        radix := 2::numeric ^ e;
        part := {retrieve_key}(nd.children[i], kids[nd.cedges[i] + 1], mod(z, radix));
        IF part IS NULL THEN
            RETURN NULL;
        END IF;
        z := floor(z / radix);
        FOR a IN 1..{atoms} LOOP
            IF part[a] IS NOT NULL THEN
                result[a] := part[a];
            END IF;
        END LOOP;
    END LOOP;
    RETURN result;
END;
$pgivm$;
