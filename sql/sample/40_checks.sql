-- The invariants of a sample view's index (§4.3 and §4.4 of the paper; notes §7.2), each
-- recomputed from the stored unit rows with plain SQL. Every query returns the rows that break its
-- invariant. An entry of a bucket is a unit row, or a group of them at a grouped node.

-- check: index.cnt_is_sum_of_weights: cnt[T,e,t] = Σ over the entries of e under key t of 2^exp
WITH entry AS (SELECT rid AS eid, kids FROM {rows} UNION ALL SELECT gid, kids FROM {grp}),
w AS (
    SELECT b.node, CASE WHEN n.pedge IS NULL THEN 0 ELSE e.kids[n.pedge + 1] END AS kid,
           sum(2::numeric ^ b.exp) AS cnt
      FROM {bucket} b JOIN {node} n ON n.node = b.node JOIN entry e ON e.eid = b.eid
     GROUP BY 1, 2)
(SELECT 'stored', node, kid, cnt FROM {cnt} EXCEPT SELECT 'stored', node, kid, cnt FROM w)
UNION ALL
(SELECT 'recomputed', node, kid, cnt FROM w EXCEPT SELECT 'recomputed', node, kid, cnt FROM {cnt})

-- check: index.rounding: c̃nt is a power of two with cnt <= c̃nt < 4 cnt (2 cnt while only inserts came)
SELECT node, kid, cnt, ct FROM {cnt} WHERE cnt <= 0 OR 2::numeric ^ ct < cnt OR 2::numeric ^ ct >= 4 * cnt

-- check: index.weight_is_product_of_children: an entry's exp is Σ of its children's ct, plus its group's fct (no entry when a child has no match)
WITH entry AS (
    SELECT n.node, n.children, n.cedges, x.rid AS eid, x.kids, 0 AS fct
      FROM {node} n JOIN {rows} x ON x.unit = n.unit WHERE n.bucketed AND NOT n.grouped
    UNION ALL
    SELECT n.node, n.children, n.cedges, g.gid, g.kids, g.fct
      FROM {node} n JOIN {grp} g ON g.unit = n.unit WHERE n.bucketed AND n.grouped),
expected AS (
    SELECT e.node, e.eid,
           CASE WHEN count(c.ct) = cardinality(e.children) THEN coalesce(sum(c.ct), 0) + e.fct END AS exp
      FROM entry e
      LEFT JOIN LATERAL unnest(e.children, e.cedges) AS ch(child, edge) ON true
      LEFT JOIN {cnt} c ON c.node = ch.child AND c.kid = e.kids[ch.edge + 1]
     GROUP BY e.node, e.eid, e.children, e.fct)
SELECT coalesce(e.node, w.node), coalesce(e.eid, w.eid), e.exp AS expected, w.exp AS stored
  FROM expected e FULL JOIN {bucket} w ON w.node = e.node AND w.eid = e.eid
 WHERE e.exp IS DISTINCT FROM w.exp

-- check: index.bucket_key: every entry sits under its own key (the kid of the edge to its parent) at a node of its unit
WITH entry AS (SELECT rid AS eid, unit, kids FROM {rows} UNION ALL SELECT gid, unit, kids FROM {grp})
SELECT b.node, b.kid, b.eid FROM {bucket} b JOIN {node} n ON n.node = b.node LEFT JOIN entry e ON e.eid = b.eid
 WHERE e.eid IS NULL OR e.unit <> n.unit
    OR b.kid IS DISTINCT FROM CASE WHEN n.pedge IS NULL THEN 0 ELSE e.kids[n.pedge + 1] END

-- check: index.bucket_positions_dense: a bucket of size s holds positions 0..s-1
SELECT coalesce(b.node, s.node), coalesce(b.kid, s.kid), coalesce(b.exp, s.exp), b.n, b.m, s.size
  FROM (SELECT node, kid, exp, count(*) AS n, max(pos) AS m FROM {bucket} GROUP BY 1, 2, 3) b
  FULL JOIN {bsize} s ON s.node = b.node AND s.kid = b.kid AND s.exp = b.exp
 WHERE s.size IS DISTINCT FROM b.n OR b.m <> b.n - 1

-- check: index.members_match_entries: R_e ⋉ kid lists exactly a unit's entries with that key (groups in a grouped unit, else rows)
WITH grouped AS (SELECT DISTINCT unit FROM {node} WHERE grouped),
expected AS (
    SELECT i - 1 AS edge, x.unit, x.kids[i] AS kid, x.rid AS eid
      FROM {rows} x, generate_subscripts(x.kids, 1) AS i
     WHERE x.kids[i] IS NOT NULL AND x.unit NOT IN (SELECT unit FROM grouped)
    UNION ALL
    SELECT i - 1, g.unit, g.kids[i], g.gid FROM {grp} g, generate_subscripts(g.kids, 1) AS i WHERE g.kids[i] IS NOT NULL)
(SELECT 'member', edge, unit, kid, eid FROM {member} EXCEPT SELECT 'member', * FROM expected)
UNION ALL
(SELECT 'expected', * FROM expected EXCEPT SELECT 'expected', edge, unit, kid, eid FROM {member})

-- check: groups.are_the_rows_with_equal_keys: each row of a grouped unit is a member of the one group of its keys
WITH grouped AS (SELECT DISTINCT unit FROM {node} WHERE grouped)
SELECT x.rid, x.unit, g.gid FROM {rows} x LEFT JOIN {gmem} m ON m.rid = x.rid LEFT JOIN {grp} g ON g.gid = m.gid
 WHERE x.unit IN (SELECT unit FROM grouped) AND (g.gid IS NULL OR g.kids <> x.kids OR g.unit <> x.unit)
UNION ALL
SELECT m.rid, NULL, m.gid FROM {gmem} m LEFT JOIN {rows} x ON x.rid = m.rid WHERE x.rid IS NULL

-- check: groups.frequency: feq members at positions 0..feq-1, and f̃eq = 2^fct with feq <= f̃eq < 4 feq
SELECT g.gid, g.feq, g.fct, count(m.rid), max(m.pos)
  FROM {grp} g LEFT JOIN {gmem} m ON m.gid = g.gid
 GROUP BY g.gid
HAVING count(m.rid) <> g.feq OR max(m.pos) <> g.feq - 1 OR 2::numeric ^ g.fct < g.feq OR 2::numeric ^ g.fct >= 4 * g.feq

-- check: units.parts_found_from_each_atom_row: a merged unit's row is listed under each of its atom rows
WITH expected AS (
    SELECT p AS arid, x.rid FROM {rows} x, unnest(x.parts) AS p
     WHERE p IS NOT NULL AND (SELECT count(*) FROM unnest(x.parts) AS q WHERE q IS NOT NULL) > 1)
(SELECT 'part', arid, rid FROM {part} EXCEPT SELECT 'part', * FROM expected)
UNION ALL
(SELECT 'expected', * FROM expected EXCEPT SELECT 'expected', arid, rid FROM {part})

-- check: sample.slots_dense: the sample's slots are 0..|S|-1, and |S| is the state's count
SELECT count(*), min(slot), max(slot), (SELECT filled FROM {state}) FROM {sample}
HAVING count(*) <> (SELECT filled FROM {state}) OR (count(*) > 0 AND (min(slot) <> 0 OR max(slot) <> count(*) - 1))
