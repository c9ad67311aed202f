"""The errors a user can fix: each is reported as one line naming what to fix, with exit code 2.

Anything else escaping the `mpg` command is a bug and keeps its traceback. Errors raised inside a
Beam step reach the command wrapped by the runner; `find_user_error` looks through that chain,
and through the text a runner with remote workers sends instead (a portable runner's job service,
Dataflow), whose last line is the worker's error.
"""

from __future__ import annotations

import errno
import re

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
    return remote_user_error(exc)


# The last line of a worker's traceback, as the launcher receives it: `module.Class: message`.
_ERROR_LINE = re.compile(r"(?P<name>[\w.]+): (?P<message>.*)")
_OS_ERROR_MESSAGE = re.compile(r"\[Errno (?P<errno>\d+)\] (?P<strerror>[^:]+)(?:: '(?P<file>.*)')?")


def remote_user_error(exc: BaseException) -> UserError | OSError | None:
    """The user error a remote worker raised, rebuilt from the runner's error text, if its last
    line names one: an mpg user error by its class, or an OSError of the machine by its errno.

    Only the last line counts, so a bug raised while handling a user error stays a bug.
    """
    lines = str(exc).strip().splitlines()
    match = _ERROR_LINE.fullmatch(lines[-1]) if lines else None
    user_errors = {f"{c.__module__}.{c.__qualname__}": c for c in _subclasses(UserError)}
    while match is not None:
        if match["name"] in user_errors:
            return user_errors[match["name"]](match["message"])
        message = match["message"].split(" [while running ")[0]
        os_error = _OS_ERROR_MESSAGE.fullmatch(message)
        if os_error and int(os_error["errno"]) in _ENVIRONMENT_ERRNOS:
            return OSError(int(os_error["errno"]), os_error["strerror"], os_error["file"])
        # A worker thread's error reaches the launcher wrapped once more, its line prefixed by
        # the wrapper's name (`RuntimeError: OSError: [Errno 28] ...`): look inside.
        match = _ERROR_LINE.fullmatch(message)
    return None


def _subclasses(cls: type[UserError]) -> list[type[UserError]]:
    """Every subclass of `cls` defined so far, at any depth."""
    return [c for sub in cls.__subclasses__() for c in (sub, *_subclasses(sub))]


# pyarrow's filesystems word the operating system's errors their own way ("Failed to open local
# file '/a/b'. Detail: [errno 13] Permission denied", also as an OSError's strerror): the
# reason alone is what a user needs.
_DETAIL = re.compile(r"\[errno \d+\] (?P<reason>[^\n]+)$", re.IGNORECASE)


def os_reason(exc: OSError) -> str:
    """What went wrong, without the path (the message names the file already)."""
    text = exc.strerror or str(exc)
    detail = _DETAIL.search(text)
    if detail:
        return detail["reason"].strip()
    if "is a directory" in text:
        return "Is a directory"
    return text


def one_line(error: UserError | OSError) -> str:
    """The message for `error` on a single line: the file it names and what went wrong."""
    if isinstance(error, OSError) and not isinstance(error, UserError):
        text = f"{error.strerror or error}: {error.filename}" if error.filename else str(error)
    else:
        text = str(error)
    # Beam appends "[while running 'Step']" to a wrapped message: the step means nothing to a user.
    text = text.split(" [while running ")[0]
    return " ".join(text.split())
