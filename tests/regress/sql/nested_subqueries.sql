-- subqueries that aggregate over subqueries that aggregate (TPC-H Q15): the best supplier by the
-- sum of its sales, a WITH query read twice (its rows, and their maximum); and Q20's shape, an IN
-- over a join whose WHERE holds an IN of its own and a correlated scalar subquery
CREATE TABLE supplier (id int, name text);
CREATE TABLE sale (supplier int, part int, amount numeric);
CREATE TABLE part (id int, kind text);
INSERT INTO supplier VALUES (1, 'ann'), (2, 'bob'), (3, 'cy');
INSERT INTO sale VALUES (1, 10, 5), (1, 11, 5), (2, 10, 7), (3, 12, 1);
INSERT INTO part VALUES (10, 'bolt'), (11, 'nut'), (12, 'bolt');
-- pgivm: create best
WITH revenue AS (SELECT supplier, sum(amount) AS total FROM sale GROUP BY supplier)
SELECT s.name, r.total FROM supplier s JOIN revenue r ON r.supplier = s.id
 WHERE r.total = (SELECT max(total) FROM revenue);
-- pgivm: create bolt_sellers
SELECT s.name FROM supplier s
 WHERE s.id IN (SELECT sale.supplier FROM sale JOIN part ON part.id = sale.part
                 WHERE sale.part IN (SELECT id FROM part WHERE kind = 'bolt')
                   AND sale.amount > (SELECT avg(x.amount) FROM sale x WHERE x.part = sale.part) / 2);
SELECT * FROM best ORDER BY name;
SELECT * FROM bolt_sellers ORDER BY name;
-- ann's total falls to bob's 7: a tie
INSERT INTO sale VALUES (1, 12, -3);
SELECT * FROM best ORDER BY name;
-- cy's 9 is the maximum now
UPDATE sale SET amount = 9 WHERE supplier = 3;
SELECT * FROM best ORDER BY name;
SELECT * FROM bolt_sellers ORDER BY name;
-- part 10 is a nut now: only part 12's sellers
UPDATE part SET kind = 'nut' WHERE id = 10;
SELECT * FROM bolt_sellers ORDER BY name;
DELETE FROM sale WHERE supplier = 2;
SELECT * FROM best ORDER BY name;
SELECT * FROM bolt_sellers ORDER BY name;
TRUNCATE sale;
SELECT * FROM best ORDER BY name;
SELECT * FROM bolt_sellers ORDER BY name;
