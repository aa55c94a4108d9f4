-- Apply everything pending (what `pgivm refresh`, pgivm.refresh('view') and a read of the view
-- do): every log taken in one snapshot, then applied table by table. First the writers' lock,
-- then the view's: a session may write after it reads, so it takes them in the order writers
-- do (a read waits for writers in flight; only the worker, which never writes, takes the view's
-- lock alone). A REPEATABLE READ or SERIALIZABLE transaction whose snapshot predates an action
-- fails here or at the counts (40001) rather than refresh from a stale state.
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
    PERFORM FROM {writers} WHERE singleton FOR NO KEY UPDATE;
    PERFORM FROM {state} WHERE singleton FOR NO KEY UPDATE;
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
        -- Apply under the writers' lock and the view's: nothing changes the logs or the state
        -- until this transaction ends, so the answer that follows is exact.
        PERFORM {refresh}();
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
