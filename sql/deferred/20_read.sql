-- Apply everything pending (what `pgivm refresh`, pgivm_catalog.refresh('view') and a read of the view
-- do): every log taken in one snapshot, then applied table by table, under the view's lock (the
-- system's state row), which only actions, refreshes, reads and TRUNCATE take: writers never
-- wait for it, so a session that read the view and then idles in its transaction stalls other
-- readers and the worker, never a writer. A REPEATABLE READ or SERIALIZABLE transaction whose
-- snapshot predates an action fails here (40001: every action updates the deferred row) rather
-- than refresh from a stale state. Then the counts of writing sessions that are gone are folded into one row per table.
CREATE FUNCTION {refresh}()
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    t record;
    done bigint := 0;
    counts bigint[];
    numbers integer[] := '{{}}';
    taken bigint[] := '{{}}';
    cost float8;
    started timestamptz;
BEGIN
    PERFORM FROM {state} AS st WHERE st.singleton FOR NO KEY UPDATE;
    PERFORM FROM {deferred} WHERE singleton FOR NO KEY UPDATE;  -- a snapshot older than the last action: 40001 (see act)
    cost := {predicted}();
    started := pg_catalog.clock_timestamp();
    counts := {take}((SELECT array_agg(number ORDER BY number) FROM {action}));
    FOR t IN SELECT number, pending FROM {deferred_table} ORDER BY number LOOP
        CONTINUE WHEN counts[t.number] = 0 AND t.pending = 0;
        numbers := numbers || t.number;
        taken := taken || (counts[t.number] + {process}(t.number));
    END LOOP;
    PERFORM {settle}(numbers, taken);
    SELECT coalesce(sum(x), 0) INTO done FROM unnest(taken) AS x;
    -- Nobody writes the rows of a session that is gone (a new session has a new token): folding
    -- them waits for no writer.
    WITH gone AS (
        DELETE FROM {arrival} AS a
         WHERE a.pid <> 0 AND NOT EXISTS (SELECT FROM pg_catalog.pg_stat_get_activity(a.pid))
        RETURNING a.number, a.appended, a.arrived, a.halvings
    ), now AS (
        SELECT (CASE WHEN s.is_called THEN s.last_value ELSE 0 END) / {rate_window} AS halvings FROM {steps} AS s
    )
    INSERT INTO {arrival} AS a (number, pid, token, appended, arrived, halvings)
    SELECT g.number, 0, 0, sum(g.appended), sum(g.arrived >> least(greatest(now.halvings - g.halvings, 0), 62)::integer),
           now.halvings
      FROM gone AS g, now GROUP BY g.number, now.halvings
    ON CONFLICT (number, pid, token) DO UPDATE
       SET appended = a.appended + excluded.appended,
           arrived = (a.arrived >> least(greatest(excluded.halvings - a.halvings, 0), 62)::integer) + excluded.arrived,
           halvings = excluded.halvings;
    -- only the newest allowances count
    DELETE FROM {allowance} AS w WHERE w.check_id < (SELECT max(x.check_id) FROM {allowance} AS x);
    UPDATE {deferred} SET refreshed_step = (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM {steps}), spent_ms = 0, refreshes = refreshes + 1,
           refreshed_at = pg_catalog.now(),
           work_predicted_ms = work_predicted_ms + cost,
           work_actual_ms = work_actual_ms + 1000 * extract(epoch FROM pg_catalog.clock_timestamp() - started)
     WHERE singleton;
    RETURN done;
END;
$pgivm$;
COMMENT ON FUNCTION {refresh}() IS {refresh_comment};

-- How far the last refreshed state lags: changes pending and seconds since the oldest of them.
CREATE FUNCTION {lag}(OUT pending bigint, OUT lag_seconds float8)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
    SELECT coalesce(sum(pending), 0)::bigint,
           coalesce(extract(epoch FROM pg_catalog.now() - {oldest}), 0)::float8
      FROM {deferred_table} WHERE pending > 0
$pgivm$;
COMMENT ON FUNCTION {lag}() IS {lag_comment};

-- A read of the view: exact, so first apply what is pending (its predicted cost is at most C),
-- then answer from the refreshed state. In a read-only transaction nothing can be applied.
CREATE FUNCTION {read}()
RETURNS SETOF {current} LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    pending_now boolean;
    answer_now boolean;
BEGIN
    LOOP
        -- With nothing pending: the answer, checked in its own snapshot (under READ COMMITTED a
        -- check and an answer in two statements could straddle an action that applies part of a
        -- transaction committed in between).
        RETURN QUERY SELECT c.* FROM {current} AS c WHERE NOT EXISTS (SELECT FROM {deferred_table} WHERE pending > 0);
        IF FOUND THEN
            RETURN;
        END IF;
        SELECT EXISTS (SELECT FROM {deferred_table} WHERE pending > 0), EXISTS (SELECT FROM {current})
          INTO pending_now, answer_now;
        IF NOT pending_now THEN
            IF NOT answer_now THEN
                RETURN;  -- nothing pending and nothing to answer, in one snapshot
            END IF;
            CONTINUE;  -- something committed between the two statements: look again
        END IF;
        IF pg_catalog.current_setting('transaction_read_only') = 'on' THEN
            RAISE EXCEPTION USING
                ERRCODE = 'read_only_sql_transaction',
                MESSAGE = pg_catalog.format('pgivm view %s has changes to apply, which a read-only transaction cannot do', {view_literal}),
                HINT = pg_catalog.format('Read %s for the last refreshed result (with how far it lags), or read %s in a read-write transaction.',
                                         {stale_literal}, {view_literal});
        END IF;
        -- Apply under the view's lock: nothing changes the state until this transaction ends, and
        -- what writers log meanwhile is not in this read's snapshot. How much it applied
        -- is what pgivm_catalog.refresh('view'), which reads the view, reports.
        PERFORM pg_catalog.set_config('pgivm.applied', {refresh}()::text, true);
        RETURN QUERY SELECT * FROM {current};
        RETURN;
    END LOOP;
END;
$pgivm$;
COMMENT ON FUNCTION {read}() IS {read_comment};

CREATE VIEW {view} AS SELECT * FROM {read}();
COMMENT ON VIEW {view} IS {view_comment};
CREATE VIEW {stale} AS
    SELECT c.*, l.pending AS pgivm_pending_changes, l.lag_seconds AS pgivm_lag_seconds
      FROM {current} AS c CROSS JOIN {lag}() AS l;
COMMENT ON VIEW {stale} IS {stale_comment};
