-- outer joins: a row of the kept side shows NULL-extended while nothing matches it, and that row
-- goes when the first match arrives (and comes back when the last one leaves)
CREATE TABLE r (a int, b int);
CREATE TABLE s (b int, c int);
CREATE TABLE t (c int, d int);
INSERT INTO r VALUES (1, 1), (2, 2), (3, NULL);
INSERT INTO s VALUES (1, 10), (1, 11), (4, 40);
INSERT INTO t VALUES (10, 100);
-- pgivm: create lj
SELECT r.a, r.b, s.c FROM r LEFT JOIN s ON r.b = s.b;
-- pgivm: create fj
SELECT r.a, s.b, s.c FROM r FULL JOIN s ON r.b = s.b;
-- pgivm: create chain
SELECT r.a, s.c, t.d FROM r LEFT JOIN s ON r.b = s.b RIGHT JOIN t ON t.c = s.c;
-- pgivm: create agg
SELECT r.b, count(*) AS n, count(s.c) AS matched, max(s.c) AS hi FROM r LEFT JOIN s ON r.b = s.b AND s.c > 10 GROUP BY r.b;
SELECT * FROM lj ORDER BY a, c;
SELECT * FROM fj ORDER BY a, b, c;
SELECT * FROM chain ORDER BY a, c, d;
SELECT * FROM agg ORDER BY b;
INSERT INTO s VALUES (2, 20);
SELECT * FROM lj ORDER BY a, c;
SELECT * FROM fj ORDER BY a, b, c;
SELECT * FROM agg ORDER BY b;
DELETE FROM s WHERE b = 1;
SELECT * FROM lj ORDER BY a, c;
SELECT * FROM fj ORDER BY a, b, c;
SELECT * FROM chain ORDER BY a, c, d;
SELECT * FROM agg ORDER BY b;
UPDATE r SET b = 4 WHERE a = 3;
SELECT * FROM lj ORDER BY a, c;
SELECT * FROM fj ORDER BY a, b, c;
INSERT INTO t VALUES (20, 200), (40, 400);
SELECT * FROM chain ORDER BY a, c, d;
TRUNCATE s;
SELECT * FROM lj ORDER BY a, c;
SELECT * FROM fj ORDER BY a, b, c;
SELECT * FROM chain ORDER BY a, c, d;
SELECT * FROM agg ORDER BY b;
