"""The errors a user can fix: each is reported as one line naming what to fix, with exit code 2.

Anything else escaping the `mpg` command is a bug and keeps its traceback. Errors raised inside a
Beam step reach the command wrapped by the runner; `find_user_error` looks through that chain.
"""

from __future__ import annotations

import errno

# Errors of the machine rather than of the code: a full disk, a missing permission, a read-only or
# failing filesystem, too many open files. Reported in one line with the file they name.
_ENVIRONMENT_ERRNOS = frozenset(
    {
        errno.ENOSPC,
        errno.EDQUOT,
        errno.EACCES,
        errno.EPERM,
        errno.EROFS,
        errno.EIO,
        errno.EMFILE,
        errno.ENFILE,
        errno.EFBIG,
    }
)


class UserError(Exception):
    """A problem with the input, the options or the machine that the user can fix."""


class TraceRootError(UserError):
    """The trace root cannot be used at all (missing, not a folder, no trace files)."""


class TraceFileError(UserError):
    """An input file that cannot be read (permissions, I/O error): the run stops, not guesses."""


class StoreError(UserError):
    """A file of the output folder that cannot be read or written (a corrupt Parquet partition)."""


class OptionsError(UserError, ValueError):
    """An option value that cannot work."""


def find_user_error(exc: BaseException) -> UserError | OSError | None:
    """The user-fixable error behind `exc`, looking through causes and contexts (Beam wraps them).

    An OSError counts when its errno is one of the machine's (a full disk, no permission).
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, UserError):
            return current
        if isinstance(current, OSError) and current.errno in _ENVIRONMENT_ERRNOS:
            return current
        current = current.__cause__ or current.__context__
    return None


def one_line(error: UserError | OSError) -> str:
    """The message for `error` on a single line: the file it names and what went wrong."""
    if isinstance(error, OSError) and not isinstance(error, UserError):
        text = f"{error.strerror or error}: {error.filename}" if error.filename else str(error)
    else:
        text = str(error)
    # Beam appends "[while running 'Step']" to a wrapped message: the step means nothing to a user.
    text = text.split(" [while running ")[0]
    return " ".join(text.split())
