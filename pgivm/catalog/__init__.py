"""Installing and tracking views: the ``pgivm`` catalog schema and its migrations."""

from pgivm.catalog import migrate, views

__all__ = ["migrate", "views"]
