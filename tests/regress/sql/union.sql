-- UNION ALL and UNION: each branch's rows once per row of the branch (UNION: each row once), the
-- columns named after the first branch's, types resolved as UNION resolves them
CREATE TABLE r (a int, b int);
CREATE TABLE s (b int, c numeric);
INSERT INTO r VALUES (1, 10), (2, 20), (2, 20), (NULL, 30);
INSERT INTO s VALUES (10, 1.5), (20, 2.5);
-- pgivm: create u
SELECT a AS x, b AS y FROM r UNION ALL SELECT b, c FROM s;
-- pgivm: create d
SELECT r.b FROM r UNION SELECT s.b FROM s;
-- pgivm: create j
SELECT r.a, s.c FROM r JOIN s ON r.b = s.b WHERE r.a > 1 UNION ALL SELECT r.a, NULL FROM r WHERE r.a IS NULL;
SELECT * FROM u ORDER BY x, y;
SELECT * FROM d ORDER BY b;
SELECT * FROM j ORDER BY a, c;
INSERT INTO s VALUES (30, 3.5);
SELECT * FROM u ORDER BY x, y;
SELECT * FROM d ORDER BY b;
SELECT * FROM j ORDER BY a, c;
DELETE FROM r WHERE b = 20;
SELECT * FROM u ORDER BY x, y;
SELECT * FROM d ORDER BY b;
SELECT * FROM j ORDER BY a, c;
UPDATE r SET a = 5 WHERE a IS NULL;
SELECT * FROM j ORDER BY a, c;
TRUNCATE s;
SELECT * FROM u ORDER BY x, y;
SELECT * FROM d ORDER BY b;
