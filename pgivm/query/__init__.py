"""Understanding a view definition: SQL text -> a small logical model."""

from pgivm.query.model import Atom, TableRef, TriangleCount
from pgivm.query.parse import parse_view_sql

__all__ = ["Atom", "TableRef", "TriangleCount", "parse_view_sql"]
