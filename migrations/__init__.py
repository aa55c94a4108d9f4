"""Catalog migrations applied in order by pgivm.catalog.migrate (shipped as pgivm.migrations)."""
