-- scalar subqueries compared in WHERE and HAVING (TPC-H Q11, Q17, Q22): each a join with a table of
-- its values; a correlated one grouped by its correlating column, a row without a match filtered
-- (the subquery's NULL), an uncorrelated one a single row every row is compared with
CREATE TABLE r (a int, b int, v numeric);
CREATE TABLE s (b int, w int);
INSERT INTO r VALUES (1, 1, 5), (2, 1, 1), (3, 2, 4), (4, 3, 9), (4, 3, 9);
INSERT INTO s VALUES (1, 2), (1, 4), (2, 8), (NULL, 1);
-- pgivm: create below
SELECT r.a, r.v FROM r WHERE r.v < (SELECT 2 * avg(s.w) FROM s WHERE s.b = r.b);
-- pgivm: create above
SELECT count(*) AS n, sum(r.v) AS total FROM r WHERE r.v > (SELECT avg(s.w) FROM s);
-- pgivm: create big
SELECT r.b, sum(r.v) AS total FROM r GROUP BY r.b HAVING sum(r.v) > (SELECT max(s.w) FROM s);
-- a count is 0 over no rows (Kim's COUNT bug): r.b = 3 has no row of s, and its rows count 0
-- pgivm: create fewer
SELECT r.a, r.v FROM r WHERE r.v > 3 * (SELECT count(*) FROM s WHERE s.b = r.b);
-- in the SELECT list: every row reads a value, over no rows too (count's 0, max's NULL)
-- pgivm: create listed
SELECT r.a, (SELECT count(*) FROM s WHERE s.b = r.b) AS n, (SELECT max(s.w) FROM s WHERE s.b = r.b) AS top FROM r;
SELECT * FROM below ORDER BY a;
SELECT * FROM above;
SELECT * FROM big ORDER BY b;
SELECT * FROM fewer ORDER BY a, v;
SELECT * FROM listed ORDER BY a, n;
-- r.b = 3 has no row of s: its rows have the subquery's NULL until one comes
INSERT INTO s VALUES (3, 6);
SELECT * FROM listed ORDER BY a, n;
SELECT * FROM below ORDER BY a;
SELECT * FROM above;
SELECT * FROM big ORDER BY b;
SELECT * FROM fewer ORDER BY a, v;
-- the average moves: rows cross it both ways
UPDATE s SET w = 1 WHERE b = 1;
SELECT * FROM below ORDER BY a;
SELECT * FROM above;
DELETE FROM s WHERE w = 8;
SELECT * FROM below ORDER BY a;
SELECT * FROM above;
SELECT * FROM big ORDER BY b;
SELECT * FROM fewer ORDER BY a, v;
UPDATE r SET b = 1 WHERE a = 3;
SELECT * FROM below ORDER BY a;
TRUNCATE s;
SELECT * FROM below ORDER BY a;
SELECT * FROM above;
SELECT * FROM big ORDER BY b;
SELECT * FROM fewer ORDER BY a, v;
SELECT * FROM listed ORDER BY a, n;
