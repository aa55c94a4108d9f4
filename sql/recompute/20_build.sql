-- The first count, recomputed once by `pgivm create` under its locks.
INSERT INTO {result} (count) VALUES (({count_query}));
