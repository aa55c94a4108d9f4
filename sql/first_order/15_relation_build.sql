-- The initial build of K from its base table, set at a time (see ivme/45_relation_build.sql).
INSERT INTO {k_tuples} ({x}, {y}, mult)
SELECT {base_x}, {base_y}, count(*)
  FROM {base_table} base
 WHERE {base_guard} AND base.{base_x_column} IS NOT NULL AND base.{base_y_column} IS NOT NULL
 GROUP BY 1, 2;
