-- The invariants of a sample view's index (§4.3 of the paper; notes §7.2), each recomputed from
-- the stored rows with plain SQL. Every query returns the rows that break its invariant.

-- check: index.cnt_is_sum_of_weights: cnt[T,e,t] = Σ over the rows of e under key t of 2^exp
WITH w AS (
    SELECT wt.node, CASE WHEN n.pedge IS NULL THEN 0 ELSE r.kids[n.pedge + 1] END AS kid,
           sum(2::numeric ^ wt.exp) AS cnt
      FROM {bucket} wt JOIN {node} n ON n.node = wt.node JOIN {rows} r ON r.rid = wt.rid
     GROUP BY 1, 2)
(SELECT 'stored', node, kid, cnt FROM {cnt} EXCEPT SELECT 'stored', node, kid, cnt FROM w)
UNION ALL
(SELECT 'recomputed', node, kid, cnt FROM w EXCEPT SELECT 'recomputed', node, kid, cnt FROM {cnt})

-- check: index.rounding: c̃nt is a power of two with cnt <= c̃nt < 4 cnt (2 cnt while only inserts came)
SELECT node, kid, cnt, ct FROM {cnt} WHERE cnt <= 0 OR 2::numeric ^ ct < cnt OR 2::numeric ^ ct >= 4 * cnt

-- check: index.weight_is_product_of_children: a row's exp is Σ of its children's ct (no row when a child has no match)
WITH expected AS (
    SELECT n.node, r.rid,
           CASE WHEN count(c.ct) = cardinality(n.children) THEN coalesce(sum(c.ct), 0) END AS exp
      FROM {node} n
      JOIN {rows} r ON r.atom = n.atom
      LEFT JOIN LATERAL unnest(n.children, n.cedges) AS ch(child, edge) ON true
      LEFT JOIN {cnt} c ON c.node = ch.child AND c.kid = r.kids[ch.edge + 1]
     WHERE n.bucketed
     GROUP BY n.node, r.rid, n.children)
SELECT coalesce(e.node, w.node), coalesce(e.rid, w.rid), e.exp AS expected, w.exp AS stored
  FROM expected e FULL JOIN {bucket} w ON w.node = e.node AND w.rid = e.rid
 WHERE e.exp IS DISTINCT FROM w.exp

-- check: index.bucket_key: every bucketed row sits under its own key (the kid of the edge to its parent)
SELECT b.node, b.kid, b.rid FROM {bucket} b JOIN {node} n ON n.node = b.node JOIN {rows} r ON r.rid = b.rid
 WHERE b.kid IS DISTINCT FROM CASE WHEN n.pedge IS NULL THEN 0 ELSE r.kids[n.pedge + 1] END OR r.atom <> n.atom

-- check: index.bucket_positions_dense: a bucket of size s holds positions 0..s-1
SELECT coalesce(b.node, s.node), coalesce(b.kid, s.kid), coalesce(b.exp, s.exp), b.n, b.m, s.size
  FROM (SELECT node, kid, exp, count(*) AS n, max(pos) AS m FROM {bucket} GROUP BY 1, 2, 3) b
  FULL JOIN {bsize} s ON s.node = b.node AND s.kid = b.kid AND s.exp = b.exp
 WHERE s.size IS DISTINCT FROM b.n OR b.m <> b.n - 1

-- check: index.members_match_rows: R_e ⋉ kid lists exactly the rows with that key
(SELECT 'member', edge, atom, kid, rid FROM {member}
 EXCEPT SELECT 'member', i - 1, x.atom, x.kids[i], x.rid FROM {rows} x, generate_subscripts(x.kids, 1) AS i WHERE x.kids[i] IS NOT NULL)
UNION ALL
(SELECT 'rows', i - 1, x.atom, x.kids[i], x.rid FROM {rows} x, generate_subscripts(x.kids, 1) AS i WHERE x.kids[i] IS NOT NULL
 EXCEPT SELECT 'rows', edge, atom, kid, rid FROM {member})

-- check: sample.slots_dense: the sample's slots are 0..|S|-1, and |S| is the state's count
SELECT count(*), min(slot), max(slot), (SELECT filled FROM {state}) FROM {sample}
HAVING count(*) <> (SELECT filled FROM {state}) OR (count(*) > 0 AND (min(slot) <> 0 OR max(slot) <> count(*) - 1))
