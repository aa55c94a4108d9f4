-- Deferred maintenance of one view: what is pending per base table (pgivm.deferred; the tables in
-- 00_state.sql). Rendered when the layer is made and again by every upgrade.

-- One row per base table: s[i] = pending, and everything the planner and status read. Over one
-- table, so its own columns can be updated through it (the cost functions). arrived is halved
-- lazily: a session's count as of its last append, halved once for every W steps since.
CREATE OR REPLACE VIEW {deferred_table} AS
    SELECT t.number, t.label, t.atoms,
           coalesce((SELECT sum(a.appended) FROM {arrival} AS a WHERE a.number = t.number), 0)::bigint - t.taken AS pending,
           coalesce((SELECT sum(a.arrived >> least(greatest(h.now - a.halvings, 0), 62)::integer)
                       FROM {arrival} AS a,
                            (SELECT (CASE WHEN s.is_called THEN s.last_value ELSE 0 END) / {rate_window} AS now
                               FROM {steps} AS s) AS h
                      WHERE a.number = t.number), 0)::bigint AS arrived,
           t.a_ms, t.b_ms, t.calibrated, t.points, t.actions, t.processed
      FROM {action} AS t;
COMMENT ON VIEW {deferred_table} IS {deferred_table_comment};
