-- WITH, subqueries and plain views in FROM, inlined into the maintained view
CREATE TABLE r (a int, b int);
CREATE TABLE s (b int, c int);
INSERT INTO r VALUES (1, 1), (2, 1), (3, 2);
INSERT INTO s VALUES (1, 5), (2, 6);
CREATE VIEW big_r AS SELECT a, b FROM r WHERE a > 1;
-- pgivm: create w
WITH cs AS (SELECT s.b, s.c FROM s WHERE s.c <> 7) SELECT cs.c, count(*) AS n FROM r JOIN cs ON r.b = cs.b GROUP BY cs.c;
-- pgivm: create sub
SELECT q.a, q.c FROM (SELECT r.a, s.c FROM r JOIN s ON r.b = s.b) AS q WHERE q.a <> 2;
-- pgivm: create v
SELECT big_r.a, s.c FROM big_r JOIN s ON big_r.b = s.b;
INSERT INTO r VALUES (4, 2), (1, 2);
UPDATE s SET c = 7 WHERE b = 1;
SELECT * FROM w ORDER BY c;
SELECT * FROM sub ORDER BY a, c;
SELECT * FROM v ORDER BY a, c;
