-- relations of constant rows: generate_series of constants and VALUES in FROM, a SELECT without
-- FROM; each kept as a table of the view's state schema, filled at create, read as a base table
CREATE TABLE r (a int, b int);
INSERT INTO r VALUES (1, 10), (2, 20), (2, 21), (NULL, 30);
-- pgivm: create series
SELECT r.a, g.x FROM r JOIN generate_series(1, 3) AS g(x) ON r.a = g.x;
-- pgivm: create crossed
SELECT r.a, r.b FROM r, generate_series(1, 2);
-- pgivm: create sums
SELECT g.x, count(r.b) AS n, sum(r.b) AS s FROM generate_series(0, 4, 2) AS g(x) LEFT JOIN r ON r.a = g.x GROUP BY g.x;
-- pgivm: create named
SELECT r.a, v.name FROM r JOIN (VALUES (1, 'one'), (2, 'two')) AS v(x, name) ON r.a = v.x;
-- pgivm: create one
SELECT 1 AS one;
-- pgivm: create each
SELECT 'row' AS kind FROM r;
SELECT * FROM series ORDER BY a, x;
SELECT * FROM crossed ORDER BY a, b;
SELECT * FROM sums ORDER BY x;
SELECT * FROM named ORDER BY a, name;
SELECT * FROM one;
SELECT count(*) FROM each;
INSERT INTO r VALUES (4, 40), (3, 30);
SELECT * FROM series ORDER BY a, x;
SELECT * FROM sums ORDER BY x;
UPDATE r SET a = 2 WHERE a = 1;
SELECT * FROM series ORDER BY a, x;
SELECT * FROM named ORDER BY a, name;
SELECT * FROM sums ORDER BY x;
DELETE FROM r WHERE a = 2;
SELECT * FROM series ORDER BY a, x;
SELECT * FROM crossed ORDER BY a, b;
SELECT * FROM sums ORDER BY x;
SELECT count(*) FROM each;
TRUNCATE r;
SELECT * FROM sums ORDER BY x;
SELECT count(*) FROM crossed;
SELECT * FROM one;
