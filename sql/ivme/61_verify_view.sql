-- View-wide invariant checks. Each query returns the violating rows; none means the check holds.

-- check: size_invariant: floor(N/4) <= |D| < N, and |D| is the number of distinct tuples stored
SELECT s.n, s.db_size, p.actual
  FROM {state} s,
       (SELECT (SELECT count(*) FROM {r_heavy}) + (SELECT count(*) FROM {r_light})
             + (SELECT count(*) FROM {s_heavy}) + (SELECT count(*) FROM {s_light})
             + (SELECT count(*) FROM {t_heavy}) + (SELECT count(*) FROM {t_light}) AS actual) p
 WHERE NOT (s.n / 4 <= s.db_size AND s.db_size < s.n) OR s.db_size <> p.actual;

-- check: threshold: theta = N^epsilon
SELECT n, epsilon, theta FROM {state} WHERE theta <> power(n::float8, epsilon);

-- check: count_from_state: the maintained count equals the sum of the 8 heavy/light joins of the state
SELECT r.count AS maintained, {count_from_state}() AS from_state
  FROM {result} r
 WHERE r.count <> {count_from_state}();
