-- The batched reservoir with a predicate (Algorithms 4 and 5 of the paper, with the errata of the
-- notes: q = floor(ln(u) / ln(1 - w)), u never 0, ln(1 - w) through a series for small w).

-- q ~ Geo(w): the number of failures before the first success of probability w.
CREATE FUNCTION {skip}(w float8, u float8) RETURNS numeric
LANGUAGE sql SECURITY DEFINER IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $pgivm$
    SELECT CASE
        WHEN w <= 0 THEN 1e300::numeric  -- w underflowed: nothing more is ever taken
        WHEN w >= 1 THEN 0::numeric
        ELSE floor(ln(u) / CASE WHEN w < 1e-4 THEN -(w + w * w / 2 + w * w * w / 3) ELSE ln(1 - w) END)::numeric
    END
$pgivm$;

-- A result of the batch is real when every part is (Retrieve gave no dummy) and the conditions of
-- the view that span tables hold (§3: the predicate reservoir takes any θ).
-- {pred} is generated per view (80_view.sql).

-- BatchUpdate (Algorithm 5) over the batch a new row rid_ creates at the root of the tree rooted
-- at its unit (root_, with its children and the edges to them): {{t}} × the batches of its
-- children, of size ∏ c̃nt (never materialized: only the positions the skips land on are
-- retrieved). The reservoir's variables (rng, w, q, filled and the counters) come in and go back
-- in st, a copy of the state row the caller writes once per statement, not once per batch.
CREATE FUNCTION {reservoir_batch}(root_ int, children int[], cedges int[], rid_ bigint, kids bigint[], st {state})
RETURNS {state}
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    e int;
    nb numeric;
    pos numeric := 0;
    x bigint[];
BEGIN
    st.batches := st.batches + 1;
    e := CASE WHEN cardinality(children) = 0 THEN 0 ELSE {tuple_exp}(children, cedges, kids) END;
    IF e IS NULL THEN
        RETURN st;  -- an empty batch: no result joins this row yet
    END IF;
    nb := 2::numeric ^ e;
    -- Fill: while |S| < k, every position is looked at and every real result kept.
    WHILE st.filled < st.k AND pos < nb LOOP
        x := {retrieve_tuple}(root_, rid_, pos);
        pos := pos + 1;
        st.retrieved := st.retrieved + 1;
        IF x IS NOT NULL AND {pred}(x) THEN
            INSERT INTO {sample} VALUES (st.filled, x);
            st.filled := st.filled + 1;
        END IF;
    END LOOP;
    IF st.filled >= st.k THEN
        IF st.w IS NULL THEN  -- the reservoir just became full: w and the first skip (Alg. 5 lines 6-8)
            st.rng := {rng_next}(st.rng); st.w := exp(ln({unit}(st.rng)) / st.k);
            st.rng := {rng_next}(st.rng); st.q := {skip}(st.w, {unit}(st.rng));
        END IF;
        WHILE nb - pos > st.q LOOP
            pos := pos + st.q + 1;
            x := {retrieve_tuple}(root_, rid_, pos - 1);
            st.retrieved := st.retrieved + 1;
            IF x IS NOT NULL AND {pred}(x) THEN
                -- A real result: it replaces a uniformly chosen slot, and w shrinks by u^(1/k).
                st.rng := {rng_next}(st.rng);
                UPDATE {sample} SET rids = x WHERE slot = floor({unit}(st.rng) * st.k)::bigint;
                st.rng := {rng_next}(st.rng); st.w := st.w * exp(ln({unit}(st.rng)) / st.k);
                st.replacements := st.replacements + 1;
            END IF;
            -- Real or dummy, the next skip is drawn afresh with the current w (memorylessness).
            st.rng := {rng_next}(st.rng); st.q := {skip}(st.w, {unit}(st.rng));
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
CREATE FUNCTION {repair}() RETURNS bigint
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
    SELECT * INTO st FROM {state} WHERE singleton;
    SELECT count(*) INTO kept FROM {sample};
    d := st.filled - kept;
    IF d = 0 THEN
        RETURN 0;
    END IF;
    -- Dense slots again: the highest slots move into the holes.
    FOR hole IN SELECT s FROM generate_series(0, kept - 1) AS s
                 WHERE NOT EXISTS (SELECT FROM {sample} WHERE slot = s) LOOP
        SELECT max(slot) INTO mover FROM {sample};
        UPDATE {sample} SET slot = hole WHERE slot = mover;
    END LOOP;
    IF st.w IS NULL THEN  -- S was all of Q, and still is
        UPDATE {state} SET filled = kept WHERE singleton;
        RETURN d;
    END IF;
    rng := st.rng;
    SELECT 2::numeric ^ ct INTO total FROM {cnt} WHERE node = 0 AND kid = 0;
    total := coalesce(total, 0);
    WHILE got < d AND pos < total LOOP
        x := {retrieve_key}(0, 0, pos);
        pos := pos + 1;
        looked := looked + 1;
        IF x IS NOT NULL AND {pred}(x) AND NOT EXISTS (SELECT FROM {sample} WHERE rids = x) THEN
            INSERT INTO {sample} VALUES (kept + got, x);
            got := got + 1;
        END IF;
    END LOOP;
    IF got < d THEN
        UPDATE {state} SET filled = kept + got, w = NULL, q = 0, rng = rng,
               refilled = refilled + got, retrieved = retrieved + looked WHERE singleton;
        RETURN d;
    END IF;
    rng := {rng_next}(rng); w2 := exp(ln({unit}(rng)) / d);
    rng := {rng_next}(rng); q2 := {skip}(w2, {unit}(rng));
    WHILE total - pos > q2 LOOP
        pos := pos + q2 + 1;
        x := {retrieve_key}(0, 0, pos - 1);
        looked := looked + 1;
        IF x IS NOT NULL AND {pred}(x) AND NOT EXISTS (SELECT FROM {sample} WHERE rids = x AND slot < kept) THEN
            rng := {rng_next}(rng);
            UPDATE {sample} SET rids = x WHERE slot = kept + floor({unit}(rng) * d)::bigint;
            rng := {rng_next}(rng); w2 := w2 * exp(ln({unit}(rng)) / d);
        END IF;
        rng := {rng_next}(rng); q2 := {skip}(w2, {unit}(rng));
    END LOOP;
    w2 := st.w + (1 - st.w) * w2;
    rng := {rng_next}(rng);
    UPDATE {state} SET filled = st.k, w = w2, q = {skip}(w2, {unit}(rng)), rng = rng,
           refilled = refilled + d, retrieved = retrieved + looked WHERE singleton;
    RETURN d;
END;
$pgivm$;

-- k independent uniform results of the current join, with replacement (`pgivm sample --fresh`):
-- a uniform position of J0, retried while it is a dummy or fails the conditions. The view's
-- state is not touched (its own generator is seeded by the caller).
CREATE FUNCTION {fresh}(n bigint, seed bigint) RETURNS TABLE (draw bigint, rids bigint[], tries bigint)
LANGUAGE plpgsql SECURITY DEFINER STABLE SET search_path = pg_catalog, pg_temp AS $pgivm$
DECLARE
    bits int;
    rng bigint := seed;
    r record;
    x bigint[];
    i bigint;
    t bigint;
BEGIN
    SELECT ct INTO bits FROM {cnt} WHERE node = 0 AND kid = 0;
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
            r := {rand_bits}(rng, bits);
            rng := r.s_next;
            x := {retrieve_key}(0, 0, r.z);
            EXIT WHEN x IS NOT NULL AND {pred}(x);
        END LOOP;
        draw := i; rids := x; tries := t;
        RETURN NEXT;
    END LOOP;
END;
$pgivm$;
