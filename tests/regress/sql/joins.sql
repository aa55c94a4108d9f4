-- joins beyond a view tree: a 4-cycle, a cross product, a condition across tables, NATURAL JOIN
CREATE TABLE e (src int, dst int);
CREATE TABLE a (k int, x int);
CREATE TABLE b (k int, y int);
INSERT INTO e VALUES (1, 2), (2, 3), (3, 4), (4, 1), (1, 3), (3, 1);
INSERT INTO a VALUES (1, 1), (2, 5);
INSERT INTO b VALUES (1, 2), (2, 3), (3, 9);
-- pgivm: create cycle4
SELECT count(*) FROM e AS w JOIN e AS x ON w.dst = x.src JOIN e AS y ON x.dst = y.src JOIN e AS z ON y.dst = z.src AND z.dst = w.src;
-- pgivm: create crossed
SELECT a.x, count(*) AS n FROM a, b GROUP BY a.x;
-- pgivm: create across
SELECT a.k, b.k AS bk FROM a JOIN b ON a.x < b.y;
-- pgivm: create nat
SELECT * FROM a NATURAL JOIN b;
SELECT * FROM cycle4;
DELETE FROM e WHERE src = 4;
SELECT * FROM cycle4;
INSERT INTO e VALUES (4, 1), (2, 1);
SELECT * FROM cycle4;
INSERT INTO a VALUES (3, 2);
SELECT * FROM crossed ORDER BY x;
SELECT * FROM across ORDER BY k, bk;
SELECT * FROM nat ORDER BY k;
