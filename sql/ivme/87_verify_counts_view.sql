-- View-wide invariant checks of a count of the IVMε family other than the triangle's single
-- partitions (refined partitions, Loomis-Whitney, the 4-path and the 3-path counts). Each query
-- returns the violating rows.

-- check: size_invariant: floor(N/4) <= |D| < N, and |D| is the number of distinct tuples stored
SELECT s.n, s.db_size, p.actual
  FROM {state} s, (SELECT {stored} AS actual) p
 WHERE NOT (s.n / 4 <= s.db_size AND s.db_size < s.n) OR s.db_size <> p.actual;

-- check: threshold: theta = N^epsilon
SELECT n, epsilon, theta FROM {state} WHERE theta <> power(n::float8, epsilon);

-- check: count_from_state: the maintained count equals the join of the relations
SELECT r.count AS maintained, {count_from_state}() AS from_state
  FROM {result} r
 WHERE r.count <> {count_from_state}();
