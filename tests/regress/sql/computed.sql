-- aggregates over computed values, FILTER, bool_and and bool_or, GROUP BY expressions
CREATE TABLE r (a int, b int, f float8, ok boolean);
CREATE TABLE s (b int, t text);
INSERT INTO r VALUES (1, 1, 0.5, true), (4, 1, -2, false), (NULL, 2, 1.25, NULL), (6, 2, 3, true);
INSERT INTO s VALUES (1, 'Ab'), (2, 'ab'), (2, 'CD');
-- pgivm: create c
SELECT lower(s.t) AS lt, r.a % 2 AS parity, sum(CASE WHEN r.a > 2 THEN r.a ELSE 0 END) AS big, count(*) FILTER (WHERE r.f > 0) AS positive, avg(coalesce(r.a, 0) / 2.0) AS half, bool_and(r.ok), bool_or(r.ok) AS any_ok, max(abs(r.f)) AS widest FROM r JOIN s ON r.b = s.b GROUP BY lower(s.t), r.a % 2;
SELECT * FROM c ORDER BY lt, parity NULLS LAST;
INSERT INTO r VALUES (3, 1, -7.5, NULL), (NULL, 1, NULL, true);
SELECT * FROM c ORDER BY lt, parity NULLS LAST;
UPDATE r SET ok = false WHERE a = 6;
SELECT * FROM c ORDER BY lt, parity NULLS LAST;
DELETE FROM s WHERE t = 'CD';
SELECT * FROM c ORDER BY lt, parity NULLS LAST;
-- pgivm: create cf fivm
SELECT s.b, sum(CASE WHEN r.a > 2 THEN r.a END) FROM r JOIN s ON r.b = s.b GROUP BY s.b;
-- pgivm: create cd first-order
SELECT sum(r.a / r.b) FROM r JOIN s ON r.b = s.b;
INSERT INTO r VALUES (1, 0, 0, true);
INSERT INTO s VALUES (0, 'zero');
SELECT * FROM cd;
