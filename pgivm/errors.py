"""Errors pgivm reports to users.

Every mistake a user can make (bad SQL, unknown view, missing table, unreachable server) is raised
as a PgivmError whose message is one line saying what is wrong and, where possible, what to do.
The CLI prints it without a traceback; anything else is a bug in pgivm.
"""

from __future__ import annotations


class PgivmError(Exception):
    """A user-facing error: ``str(err)`` is a complete, one-line explanation."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(f"{message} ({hint})" if hint else message)


class UnsupportedQuery(PgivmError):
    """The view definition uses a construct pgivm cannot maintain."""


class UnknownView(PgivmError):
    """No pgivm view of that name is installed in this database."""


class ConnectionFailed(PgivmError):
    """The database could not be reached."""


class VerificationFailed(PgivmError):
    """A maintained result or an invariant differs from a recomputation."""


class LockDenied(PgivmError):
    """The role may not lock a base table in the mode a command needs (removing a view's triggers
    takes the table's owner: a view owner with SELECT and TRIGGER only cannot)."""


class NeedsColumns(UnsupportedQuery):
    """The query (``SELECT *``, ``USING`` after several tables) cannot be read without the tables'
    columns: parsing again with a database to look them up resolves it."""
