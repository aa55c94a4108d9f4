-- First-order IVM of one relation K(X,Y): the delta query, the merge, the clear, the batch path
-- (the tables are in 10_relation_tables.sql).

-- The loop is over L(beta, .), probing M; when M(., alpha) turns out short (counted, never past a
-- few times |L(beta, .)|) it is a merge of the two sorted lists instead: the same O(|L(beta, .)|)
-- bound with cheaper rows, as IVMε does it for its light parts.
CREATE FUNCTION {apply_k}(alpha {type_x}, beta {type_y}, m bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
DECLARE
    delta_q     bigint;
    new_mult    bigint;
    merge_limit bigint;
    partners    bigint;
BEGIN
    SELECT 4 * count(*) + 16 INTO merge_limit FROM {l_tuples} l WHERE l.{y} = beta;
    SELECT count(*) INTO partners FROM (SELECT FROM {m_tuples} mt WHERE mt.{x} = alpha LIMIT merge_limit) p;
    IF partners < merge_limit THEN
        delta_q := {paths_k}(alpha, beta);
    ELSE
        SELECT coalesce(sum(l.mult * (SELECT mt.mult FROM {m_tuples} mt WHERE mt.{z} = l.{z} AND mt.{x} = alpha)), 0)
          INTO delta_q
          FROM {l_tuples} l WHERE l.{y} = beta;
    END IF;
    IF delta_q <> 0 THEN
        UPDATE {result} SET count = count + m * delta_q;
    END IF;
    INSERT INTO {k_tuples} AS p ({x}, {y}, mult) VALUES (alpha, beta, m)
        ON CONFLICT ({x}, {y}) DO UPDATE SET mult = p.mult + EXCLUDED.mult
        RETURNING mult INTO new_mult;
    IF new_mult = 0 THEN
        DELETE FROM {k_tuples} WHERE {x} = alpha AND {y} = beta;
    END IF;
END;
$pgivm$;
COMMENT ON FUNCTION {apply_k}({type_x}, {type_y}, bigint) IS {apply_k_comment};

-- sum_z L(beta, z) * M(z, alpha) as a merge join of two index-only range scans sorted by z.
CREATE FUNCTION {paths_k}(alpha {type_x}, beta {type_y})
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_mergejoin = on SET enable_nestloop = off SET enable_hashjoin = off SET enable_seqscan = off
AS $pgivm$
BEGIN
    RETURN (SELECT coalesce(sum(l.mult * mt.mult), 0)
              FROM {l_tuples} l JOIN {m_tuples} mt ON mt.{z} = l.{z}
             WHERE l.{y} = beta AND mt.{x} = alpha);
END;
$pgivm$;

-- Clear K after a TRUNCATE of its base table (DELETE, not TRUNCATE: see ivme/40_relation_clear.sql).
CREATE FUNCTION {clear_k}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $pgivm$
BEGIN
    DELETE FROM {k_tuples};
END;
$pgivm$;

CREATE FUNCTION {apply_batch_k}()
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = on SET enable_hashjoin = on SET enable_mergejoin = on
-- The state is hot in memory: index probes cost about as much as sequential reads, so a small
-- batch is best served by index nested loops and only a large one by hash joins.
SET random_page_cost = 1.1
AS $pgivm$
DECLARE
    delta_q numeric;
BEGIN
    ANALYZE {k_delta};  -- index nested loops for a small batch, hash joins for a large one
    SELECT coalesce(sum(d.mult * l.mult * mt.mult), 0) INTO delta_q
      FROM {k_delta} d
      JOIN {l_tuples} l ON l.{y} = d.{y}
      JOIN {m_tuples} mt ON mt.{z} = l.{z} AND mt.{x} = d.{x};
    IF delta_q <> 0 THEN
        UPDATE {result} SET count = count + delta_q::bigint;
    END IF;
    WITH changed AS (
        INSERT INTO {k_tuples} AS p ({x}, {y}, mult)
        SELECT {x}, {y}, mult FROM {k_delta}
        ON CONFLICT ({x}, {y}) DO UPDATE SET mult = p.mult + EXCLUDED.mult
        RETURNING p.{x}, p.{y}, p.mult)
    UPDATE {k_delta} d SET new_mult = c.mult FROM changed c WHERE d.{x} = c.{x} AND d.{y} = c.{y};
    DELETE FROM {k_tuples} p USING {k_delta} d WHERE d.new_mult = 0 AND p.{x} = d.{x} AND p.{y} = d.{y};
    DELETE FROM {k_delta};
END;
$pgivm$;
