-- (Re)load relation K from its base table, set at a time: one row per distinct (X, Y) with its
-- multiplicity, all in the light part (the following restart() repartitions strictly).
-- Rows with a NULL join column never join and are not part of K.
CREATE FUNCTION {load_k}()
RETURNS void LANGUAGE plpgsql
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
AS $pgivm$
BEGIN
    TRUNCATE {k_heavy}, {k_light}, {k_degree};
    INSERT INTO {k_light} ({x}, {y}, mult)
    SELECT {base_x}, {base_y}, count(*)
      FROM {base_table} base
     WHERE base.{base_x_column} IS NOT NULL AND base.{base_y_column} IS NOT NULL
     GROUP BY 1, 2;
    INSERT INTO {k_degree} ({x}, degree, heavy)
    SELECT {x}, count(*), false FROM {k_light} GROUP BY {x};
END;
$pgivm$;
