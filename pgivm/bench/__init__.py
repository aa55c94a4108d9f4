"""Benchmarks users can run on their own machine: ``pgivm bench``. Each workload prints a table."""
