-- DISTINCT keeps each row's multiplicity: a row leaves when its last copy does
CREATE TABLE r (a int, b int);
CREATE TABLE s (b int, c text);
INSERT INTO r VALUES (1, 1), (1, 1), (2, 1), (3, 2);
INSERT INTO s VALUES (1, 'x'), (2, 'y'), (2, 'y');
-- pgivm: create d
SELECT DISTINCT r.a, s.c FROM r JOIN s ON r.b = s.b;
SELECT * FROM d ORDER BY a, c;
DELETE FROM r WHERE ctid = (SELECT ctid FROM r WHERE a = 1 LIMIT 1);
SELECT * FROM d ORDER BY a, c;
DELETE FROM r WHERE a = 1;
SELECT * FROM d ORDER BY a, c;
DELETE FROM s WHERE ctid = (SELECT ctid FROM s WHERE b = 2 LIMIT 1);
SELECT * FROM d ORDER BY a, c;
UPDATE s SET c = 'z' WHERE b = 1;
SELECT * FROM d ORDER BY a, c;
