"""pgivm: incremental view maintenance for PostgreSQL, driven from Python.

The public API is :mod:`pgivm.command` (the CLI mirrors it one to one)::

    from pgivm import command
    command.create("tri", "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a")
"""

__version__ = "0.1.0"

from pgivm.errors import PgivmError  # noqa: E402

__all__ = ["PgivmError", "__version__"]
