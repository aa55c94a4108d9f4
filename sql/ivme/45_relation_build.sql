-- The initial build of relation K from its base table, set at a time: one row per distinct (X, Y)
-- with its multiplicity, all in the light part (the following restart() repartitions strictly).
-- Rows with a NULL join column never join and are not part of K. Run once by `pgivm create` in its
-- own transaction, with the base table locked and pinned by oid (the guard names tableoid, so
-- the statement fails to parse if the name no longer led to that table).
INSERT INTO {k_light} ({x}, {y}, mult)
SELECT {base_x}, {base_y}, count(*)
  FROM {base_table} base
 WHERE {base_guard} AND {base_not_null}
 GROUP BY 1, 2;
INSERT INTO {k_degree} ({x}, degree, heavy)
SELECT {x}, count(*), false FROM {k_light} GROUP BY {x};
