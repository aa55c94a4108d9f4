-- HAVING over shown and hidden aggregates and GROUP BY columns: groups cross the bound both ways
CREATE TABLE r (a int, b int);
CREATE TABLE s (b int, c int);
INSERT INTO r VALUES (1, 1), (2, 1), (3, 2), (NULL, 2);
INSERT INTO s VALUES (1, 1), (2, 2), (2, 3);
-- pgivm: create h first-order
SELECT s.c, count(*) AS n FROM r JOIN s ON r.b = s.b GROUP BY s.c HAVING sum(r.a) > 2 AND s.c <> 3;
-- pgivm: create hf fivm
SELECT s.c, count(*) AS n FROM r JOIN s ON r.b = s.b GROUP BY s.c HAVING sum(r.a) > 2 AND s.c <> 3;
SELECT * FROM h ORDER BY c;
INSERT INTO r VALUES (5, 1);
SELECT * FROM h ORDER BY c;
DELETE FROM r WHERE a = 3;
SELECT * FROM h ORDER BY c;
INSERT INTO r VALUES (4, 2);
SELECT * FROM hf ORDER BY c;
