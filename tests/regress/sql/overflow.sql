-- integer arithmetic fails where PostgreSQL's query does: F-IVM refuses it, first-order checks each joined row
CREATE TABLE r (k int, a int);
CREATE TABLE s (k int, b int);
INSERT INTO r VALUES (1, 3), (2, 50000);
INSERT INTO s VALUES (1, 10);
-- pgivm: create p fivm
SELECT r.k, sum(r.a * s.b) AS p FROM r JOIN s ON r.k = s.k GROUP BY r.k;
-- pgivm: create p
SELECT r.k, sum(r.a * s.b) AS p FROM r JOIN s ON r.k = s.k GROUP BY r.k;
-- pgivm: create q
SELECT r.k, sum(1.0 * r.a * s.b) AS p FROM r JOIN s ON r.k = s.k GROUP BY r.k;
INSERT INTO s VALUES (2, 50000);
INSERT INTO s VALUES (2, 4);
SELECT * FROM p ORDER BY k;
SELECT * FROM q ORDER BY k;
