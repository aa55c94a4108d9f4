-- f_i(k): 0 for k = 0, else the least of the table's lines a[j]·k + b[j] (00_state.sql).
CREATE FUNCTION {cost}(a float8[], b float8[], k float8)
RETURNS float8 LANGUAGE sql SECURITY DEFINER IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $pgivm$
    SELECT CASE WHEN k > 0 THEN (SELECT min(x * k + y) FROM unnest(a, b) AS line(x, y)) ELSE 0 END
$pgivm$;

-- The predicted refresh cost f(s) = Σ_i f_i(s[i]) of what is pending (§2, the constraint f(s) ≤ C).
CREATE FUNCTION {predicted}()
RETURNS float8 LANGUAGE sql SECURITY DEFINER STABLE
SET search_path = pg_catalog, pg_temp
AS $pgivm$
    SELECT coalesce(sum({cost}(a_ms, b_ms, pending)), 0)::float8 FROM {deferred_table}
$pgivm$;

-- TIMETOFULL(s) of ONLINE (§4.3): the steps until arrivals at rates v make f(s + k·v) > C again,
-- counts interpolated (the notes' suggestion); a search by doubling, then bisection, capped.
CREATE FUNCTION {time_to_full}(s float8[], v float8[], budget float8)
RETURNS float8 LANGUAGE plpgsql SECURITY DEFINER STABLE
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    lo float8 := 0;
    hi float8 := 1;
    mid float8;
    cap constant float8 := 1e9;
    cost_k float8;
BEGIN
    LOOP
        SELECT coalesce(sum({cost}(t.a_ms, t.b_ms, s[t.number] + hi * v[t.number])), 0) INTO cost_k FROM {deferred_table} AS t;
        EXIT WHEN cost_k > budget;
        IF hi >= cap THEN
            RETURN cap;
        END IF;
        lo := hi;
        hi := hi * 2;
    END LOOP;
    WHILE hi - lo > 1 LOOP
        mid := floor((lo + hi) / 2);
        SELECT coalesce(sum({cost}(t.a_ms, t.b_ms, s[t.number] + mid * v[t.number])), 0) INTO cost_k FROM {deferred_table} AS t;
        IF cost_k > budget THEN
            hi := mid;
        ELSE
            lo := mid;
        END IF;
    END LOOP;
    RETURN hi;
END;
$pgivm$;

-- The action taken when f(s) > C: which tables to empty.
--   naive:  all of them (symmetric batch maintenance, the paper's NAIVE);
--   online: among the greedy (each table emptied or left), minimal (putting any emptied table
--           back would pass C) and valid (what stays costs ≤ C) actions q, the one minimizing the
--           amortized cost H(q) = (F_t + f(q)) / (t + TIMETOFULL(s − q)) (§4.3); ties: the lower
--           f(q), then the lower table numbers. n is the number of base tables: 2^n − 1 subsets.
-- The same rule as pgivm.deferred.planners.online, which tests/deferred/test_planners.py holds to the paper.
CREATE FUNCTION {choose}()
RETURNS integer[] LANGUAGE plpgsql SECURITY DEFINER STABLE
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    d record;
    s float8[]; v float8[]; nums integer[];
    n integer;
    mask integer;
    i integer;
    f float8[];
    rest float8; fq float8; h float8; ttf float8;
    valid boolean;
    after float8[];
    best integer := 0; best_h float8; best_f float8;
    chosen integer[] := '{{}}';
    step bigint;
BEGIN
    SELECT * INTO d FROM {deferred} WHERE singleton;
    SELECT CASE WHEN is_called THEN last_value ELSE 0 END INTO step FROM {steps};  -- 0: no step yet
    -- arrived is halved every W = {rate_window} steps: after h = step / W halvings, at a steady rate r it
    -- holds r·(W·(1 − 2^−h) + step mod W), and v[i] is its rows per step over that span
    SELECT array_agg(pending::float8 ORDER BY number), array_agg({cost}(a_ms, b_ms, pending) ORDER BY number),
           array_agg(arrived::float8 / greatest({rate_window} * (1 - power(2::float8, -least(step / {rate_window}, 60)))
                                                + step % {rate_window}, 1) ORDER BY number),
           array_agg(number ORDER BY number)
      INTO s, f, v, nums FROM {deferred_table};
    n := coalesce(array_length(nums, 1), 0);
    IF d.planner = 'naive' THEN
        FOR i IN 1 .. n LOOP
            IF s[i] > 0 THEN
                chosen := chosen || nums[i];
            END IF;
        END LOOP;
        RETURN chosen;
    END IF;
    FOR mask IN 1 .. (1 << n) - 1 LOOP
        rest := 0; fq := 0; valid := true;
        after := s;
        FOR i IN 1 .. n LOOP
            IF mask & (1 << (i - 1)) <> 0 THEN
                IF s[i] = 0 THEN
                    valid := false;  -- emptying an empty log is no action: the mask without it says the same
                END IF;
                fq := fq + f[i];
                after[i] := 0;
            ELSE
                rest := rest + f[i];
            END IF;
        END LOOP;
        CONTINUE WHEN NOT valid OR rest > d.budget_ms;
        FOR i IN 1 .. n LOOP  -- minimal: every emptied table is needed
            IF mask & (1 << (i - 1)) <> 0 AND rest + f[i] <= d.budget_ms THEN
                valid := false;
            END IF;
        END LOOP;
        CONTINUE WHEN NOT valid;
        ttf := {time_to_full}(after, v, d.budget_ms);
        h := (d.spent_ms + fq) / (greatest(step - d.refreshed_step, 0) + ttf);
        IF best = 0 OR h < best_h OR (h = best_h AND fq < best_f) THEN
            best := mask; best_h := h; best_f := fq;
        END IF;
    END LOOP;
    FOR i IN 1 .. n LOOP
        IF best & (1 << (i - 1)) <> 0 THEN
            chosen := chosen || nums[i];
        END IF;
    END LOOP;
    RETURN chosen;
END;
$pgivm$;

-- What actions and refreshes took, counted on their side only ({action}): the pending count is
-- appended − taken, so no count is written by both writers and actions.
CREATE FUNCTION {settle}(numbers integer[], taken bigint[])
RETURNS void LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
    UPDATE {action} AS t
       SET taken = t.taken + d.taken, actions = t.actions + 1, processed = t.processed + d.taken
      FROM unnest($1, $2) AS d(number, taken)  -- numbers, taken: positional, as "taken" is also a column
     WHERE t.number = d.number
$pgivm$;

-- Take the action: empty the chosen logs. The caller holds the view's lock (the worker, a
-- refresh, or a writer that found it free), so no other action or read applies meanwhile.
-- Writers go on appending: take reads every chosen log in one snapshot, and what is committed
-- after it stays pending.
CREATE FUNCTION {act}(from_writer boolean)
RETURNS integer[] LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    chosen integer[];
    cost float8;
    table_number integer;
    counts bigint[];
    taken bigint[] := '{{}}';
    started timestamptz := pg_catalog.clock_timestamp();
BEGIN
    -- Every action and refresh updates this row: a REPEATABLE READ or SERIALIZABLE transaction
    -- whose snapshot predates one fails here (40001), before it applies anything to a state it
    -- cannot see (applying would repeat the other action's inserts: a duplicate key).
    PERFORM FROM {deferred} WHERE singleton FOR NO KEY UPDATE;
    chosen := {choose}();
    SELECT coalesce(sum({cost}(a_ms, b_ms, pending)), 0) INTO cost FROM {deferred_table} WHERE number = ANY (chosen);
    counts := {take}(chosen);
    FOREACH table_number IN ARRAY chosen LOOP
        taken := taken || (counts[table_number] + {process}(table_number));
    END LOOP;
    PERFORM {settle}(chosen, taken);
    UPDATE {deferred} SET spent_ms = spent_ms + cost, actions = actions + 1,
           in_writer = in_writer + CASE WHEN from_writer THEN 1 ELSE 0 END,
           work_predicted_ms = work_predicted_ms + cost,
           work_actual_ms = work_actual_ms + 1000 * extract(epoch FROM pg_catalog.clock_timestamp() - started)
     WHERE singleton;
    RETURN chosen;
END;
$pgivm$;

-- How many more rows each table may append before a writer must sum f(s) again: summing it over
-- every table is most of what an append costs, and it cannot pass C sooner. f_i is nondecreasing
-- and, past k = 0, the least of lines, so from s_i pending r more rows add at most r·a_i (a_i: the
-- slope of the line f_i(s_i) lies on; for s_i = 0 add the jump f_i(1) and take the line at k = 1).
-- Each of the n tables gets an equal share of the headroom C − f(s). The allowances go into a new
-- row of {allowance}, which every writer compares its table's appended count (all sessions) with:
-- a writer never waits for another here, and statements one after another keep f(s) ≤ C. (Writers
-- in flight at once each see what the others committed, not what they have pending: together they
-- may pass C by that until the next sum.) Actions and TRUNCATEs only lower s, so an allowance
-- stays safe; new cost functions or a new C reset it (reset_allowance, below). checked: the table
-- whose append summed f(s).
CREATE FUNCTION {allow}(checked integer)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    share float8;
    writer bigint := nullif(current_setting('pgivm.writer', true), '')::bigint;
BEGIN
    -- (at most 1e15: a budget set past what create allows must not overflow the arithmetic below)
    SELECT least(((SELECT d.budget_ms FROM {deferred} AS d WHERE d.singleton) - coalesce(sum({cost}(t.a_ms, t.b_ms, t.pending)), 0))
                 / greatest(count(*), 1), 1e15)
      INTO share FROM {deferred_table} AS t;
    INSERT INTO {allowance} (check_at)
    SELECT array_agg(coalesce((SELECT sum(a.appended) FROM {arrival} AS a WHERE a.number = d.number), 0)::bigint
                     + CASE WHEN share < d.jump THEN 0
                            WHEN d.slope < 1e-12 THEN 1e15
                            ELSE least(floor((share - d.jump) / d.slope), 1e15) END::bigint
                     ORDER BY d.number)
      FROM (SELECT t.number,
                   CASE WHEN t.pending > 0 THEN 0 ELSE {cost}(t.a_ms, t.b_ms, 1) END AS jump,
                   (SELECT l.x FROM unnest(t.a_ms, t.b_ms) AS l(x, y)
                     ORDER BY l.x * greatest(t.pending, 1) + l.y, l.x DESC LIMIT 1) AS slope
              FROM {deferred_table} AS t) AS d;
    UPDATE {arrival} AS a SET checks = a.checks + 1
     WHERE a.number = checked AND a.pid = pg_backend_pid() AND a.token = writer;
END;
$pgivm$;

-- A writer's append passed its table's allowance: sum f(s), act if it passes C (or wake the
-- worker), and hand out new allowances.
CREATE FUNCTION {check}(table_number integer)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    cost float8;
    budget float8;
BEGIN
    SELECT coalesce(sum({cost}(t.a_ms, t.b_ms, t.pending)), 0),
           (SELECT d.budget_ms FROM {deferred} AS d WHERE d.singleton)
      INTO cost, budget FROM {deferred_table} AS t;
    IF cost > budget THEN
        -- Writers do not pay for the action while a `pgivm worker` serves this database (one is
        -- registered in the catalog and its backend lives): it is woken at our commit instead.
        -- Only roles the catalog's owner allows can register, so no other session can make
        -- writers believe a worker runs.
        IF pgivm_catalog.worker_pid() IS NOT NULL THEN
            PERFORM pg_catalog.pg_notify({channel}, {view_literal});
        ELSE
            -- Only if no action or read is applying now: a writer never waits for one.
            BEGIN
                PERFORM FROM {state} AS st WHERE st.singleton FOR NO KEY UPDATE SKIP LOCKED;
                IF FOUND THEN
                    PERFORM {act}(true);
                END IF;
            EXCEPTION WHEN serialization_failure THEN
                -- a REPEATABLE READ writer whose snapshot predates another action: acting from
                -- it would apply logs to a state it cannot see. The action is left to the next
                -- writer, read or worker; this writer's statement goes on.
                NULL;
            END;
        END IF;
    END IF;
    PERFORM {allow}(table_number);
END;
$pgivm$;

-- Count an append of this session (rows to a log of table table_number) in its own row, and sum
-- f(s) once the table's appended count (every session's) passes its allowance. The step (the
-- paper's time) advances once per statement: after its table's last atom (a self-join's other
-- atoms may still hold the statement's change in their _delta tables before that). The lean
-- capture function of each table does the same inline.
CREATE FUNCTION {appended}(table_number integer, rows bigint, last_atom boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    writer bigint := nullif(current_setting('pgivm.writer', true), '')::bigint;
BEGIN
    IF rows > 0 THEN
        IF writer IS NULL THEN
            writer := (random() * 9e18)::bigint;
            PERFORM set_config('pgivm.writer', writer::text, false);
        END IF;
        INSERT INTO {arrival} AS a (number, pid, token, appended, arrived, halvings)
        SELECT table_number, pg_backend_pid(), writer, rows, rows,
               (CASE WHEN s.is_called THEN s.last_value ELSE 0 END) / {rate_window}
          FROM {steps} AS s
        ON CONFLICT (number, pid, token) DO UPDATE
           SET appended = a.appended + excluded.appended,
               arrived = (a.arrived >> least(greatest(excluded.halvings - a.halvings, 0), 62)::integer) + excluded.arrived,
               halvings = excluded.halvings;
    END IF;
    IF NOT last_atom THEN
        RETURN;
    END IF;
    PERFORM nextval({steps_literal});
    IF (SELECT sum(a.appended) FROM {arrival} AS a WHERE a.number = table_number)
       > coalesce((SELECT w.check_at[table_number] FROM {allowance} AS w ORDER BY w.check_id DESC LIMIT 1), -1) THEN
        PERFORM {check}(table_number);
    END IF;
END;
$pgivm$;

-- New cost functions (calibrate, or an UPDATE of deferred_table) or a new C: every writer sums
-- f(s) at its next append.
CREATE FUNCTION {reset_allowance}()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    INSERT INTO {allowance} (check_at)
    SELECT array_fill(-1::bigint, ARRAY[coalesce(max(t.number), 0)]) FROM {action} AS t;
    RETURN NULL;
END;
$pgivm$;
CREATE OR REPLACE TRIGGER costs_changed AFTER UPDATE OF a_ms, b_ms ON {action}
    FOR EACH STATEMENT EXECUTE FUNCTION {reset_allowance}();
CREATE OR REPLACE TRIGGER budget_changed AFTER UPDATE OF budget_ms ON {deferred}
    FOR EACH STATEMENT EXECUTE FUNCTION {reset_allowance}();

-- The worker's turn (pgivm.deferred.worker): take the view's lock, act if f(s) > C. Writers do
-- not wait for it, nor it for them.
CREATE FUNCTION {work}()
RETURNS integer[] LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    -- Not while a session holds the view's lock (a read or a TRUNCATE, to its commit): the worker
    -- serves every deferred view in turn and would stall them all; it comes back at the next poll.
    PERFORM FROM {state} WHERE singleton FOR NO KEY UPDATE SKIP LOCKED;
    IF FOUND AND {predicted}() > (SELECT budget_ms FROM {deferred} WHERE singleton) THEN
        RETURN {act}(false);
    END IF;
    RETURN '{{}}';
END;
$pgivm$;
