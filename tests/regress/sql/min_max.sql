-- min, max and count(DISTINCT) under first-order: the current maximum deleted again and again,
-- NULL values and a NULL group, a group emptied and refilled
CREATE TABLE r (a int, b int);
CREATE TABLE s (b int, c int);
INSERT INTO r VALUES (1, 1), (5, 1), (5, 1), (9, 1), (NULL, 1), (3, 2), (7, 2);
INSERT INTO s VALUES (1, 10), (2, 20), (2, NULL);
-- pgivm: create mm
SELECT s.c, min(r.a) AS lo, max(r.a) AS hi, count(DISTINCT r.a) AS d, count(*) AS n FROM r JOIN s ON r.b = s.b GROUP BY s.c;
SELECT * FROM mm ORDER BY c NULLS LAST;
DELETE FROM r WHERE a = 9;
SELECT * FROM mm ORDER BY c NULLS LAST;
DELETE FROM r WHERE ctid = (SELECT ctid FROM r WHERE a = 5 LIMIT 1);
SELECT * FROM mm ORDER BY c NULLS LAST;
DELETE FROM r WHERE a = 5;
SELECT * FROM mm ORDER BY c NULLS LAST;
DELETE FROM r WHERE b = 2;
SELECT * FROM mm ORDER BY c NULLS LAST;
INSERT INTO r VALUES (4, 2), (NULL, 2);
SELECT * FROM mm ORDER BY c NULLS LAST;
UPDATE r SET a = a * 10 WHERE b = 1;
SELECT * FROM mm ORDER BY c NULLS LAST;
TRUNCATE r;
SELECT * FROM mm ORDER BY c NULLS LAST;
