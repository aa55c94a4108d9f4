-- what is not maintained yet is refused in one line, and nothing is created
CREATE TABLE r (a int, b int);
CREATE TABLE s (b int, c int);
-- pgivm: create i
SELECT r.a FROM r WHERE r.b IN (SELECT s.b FROM s FULL JOIN r AS r2 ON r2.a = s.c GROUP BY s.b);
-- pgivm: create u
SELECT r.a FROM r EXCEPT SELECT s.c FROM s;
-- pgivm: create g
SELECT count(*) FROM r, generate_series(1, r.a) AS g;
-- pgivm: create n
SELECT r.a, now() FROM r;
-- pgivm: create rw
SELECT r.a, row_number() OVER () FROM r;
-- pgivm: create l
SELECT r.a FROM r ORDER BY r.a LIMIT 3;
-- pgivm: create rc
WITH RECURSIVE t AS (SELECT a FROM r) SELECT count(*) FROM t;
-- pgivm: create ru
SELECT r.a, count(*) FROM r GROUP BY ROLLUP (r.a);
SELECT count(*) FROM pg_class WHERE relname IN ('x', 'i', 'u', 'g', 'n', 'rw', 'l', 'rc', 'ru');
