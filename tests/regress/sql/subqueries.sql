-- EXISTS, NOT EXISTS, IN and NOT IN over a subquery of one table: semi- and anti-joins, a row of
-- r passing or failing its test as the rows of s it matches come and go; NOT IN keeps SQL's rule
-- (nothing passes NOT IN over a NULL, unless the subquery has no row)
CREATE TABLE r (a int, b int);
CREATE TABLE s (b int, c int);
INSERT INTO r VALUES (1, 1), (2, 2), (3, 3), (3, 3);
INSERT INTO s VALUES (1, 10), (1, 11), (2, NULL);
-- pgivm: create ex
SELECT r.a FROM r WHERE EXISTS (SELECT 1 FROM s WHERE s.b = r.b);
-- pgivm: create nex
SELECT r.a FROM r WHERE NOT EXISTS (SELECT 1 FROM s WHERE s.b = r.b);
-- pgivm: create i
SELECT r.b, count(*) AS n FROM r WHERE r.b IN (SELECT s.b FROM s WHERE s.c > 10) GROUP BY r.b;
-- pgivm: create ni
SELECT r.a FROM r WHERE r.a NOT IN (SELECT s.c FROM s WHERE s.b < 3);
-- EXISTS read as a value: in the SELECT list, under OR (a LEFT JOIN with s's DISTINCT values)
-- pgivm: create flagged
SELECT r.a, EXISTS (SELECT 1 FROM s WHERE s.b = r.b AND s.c > 10) AS big FROM r;
-- pgivm: create either
SELECT r.a FROM r WHERE EXISTS (SELECT 1 FROM s WHERE s.b = r.b) OR r.a = 3;
SELECT * FROM ex ORDER BY a;
SELECT * FROM nex ORDER BY a;
SELECT * FROM i ORDER BY b;
SELECT * FROM ni ORDER BY a;
SELECT * FROM flagged ORDER BY a, big;
SELECT * FROM either ORDER BY a;
INSERT INTO s VALUES (3, 11);
SELECT * FROM flagged ORDER BY a, big;
SELECT * FROM either ORDER BY a;
SELECT * FROM ex ORDER BY a;
SELECT * FROM nex ORDER BY a;
SELECT * FROM i ORDER BY b;
DELETE FROM s WHERE c IS NULL;
SELECT * FROM ex ORDER BY a;
SELECT * FROM ni ORDER BY a;
UPDATE s SET b = 2 WHERE c = 11;
SELECT * FROM ex ORDER BY a;
SELECT * FROM nex ORDER BY a;
SELECT * FROM i ORDER BY b;
SELECT * FROM ni ORDER BY a;
TRUNCATE s;
SELECT * FROM ex ORDER BY a;
SELECT * FROM nex ORDER BY a;
SELECT * FROM i ORDER BY b;
SELECT * FROM ni ORDER BY a;
SELECT * FROM flagged ORDER BY a, big;
SELECT * FROM either ORDER BY a;
-- IN read as a value is TRUE, FALSE or NULL: NULL when nothing matches and x is NULL or s holds a NULL
-- (a LEFT JOIN with s's DISTINCT non-NULL values and one with its counts)
-- pgivm: create member
SELECT r.a, r.b, r.b IN (SELECT s.c FROM s WHERE s.b = r.a) AS hit, r.b NOT IN (SELECT s.c FROM s) AS nowhere FROM r;
-- pgivm: create member_or
SELECT r.a FROM r WHERE r.b NOT IN (SELECT s.c FROM s) OR r.a = 1;
SELECT * FROM member ORDER BY a, b;
SELECT * FROM member_or ORDER BY a;
INSERT INTO r VALUES (NULL, NULL), (4, 11);
INSERT INTO s VALUES (4, 11), (4, NULL), (1, 1);
SELECT * FROM member ORDER BY a, b;
SELECT * FROM member_or ORDER BY a;
DELETE FROM s WHERE c IS NULL;
SELECT * FROM member ORDER BY a, b;
SELECT * FROM member_or ORDER BY a;
TRUNCATE s;
SELECT * FROM member ORDER BY a, b;
SELECT * FROM member_or ORDER BY a;
