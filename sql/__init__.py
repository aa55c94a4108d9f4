"""PL/pgSQL templates rendered by pgivm.strategies (shipped in the wheel as pgivm.sql)."""
