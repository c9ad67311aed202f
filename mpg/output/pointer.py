"""Whether an output folder has been published to: its pointer `current.json` (`POINTER`), looked
for with the standard library alone.

A reader's first check, before anything heavy is imported: `mpg sql`, `mpg explain` and
`mpg report` on a folder that `mpg run` never published to say so in one line as fast as Python
starts (tests/e2e/test_startup.py). What the pointer names is read by `mpg.output.snapshot`, and
the folder opened by `mpg.output.published`.
"""

from __future__ import annotations

from pathlib import Path

from mpg.core.errors import UserError
from mpg.core.locations import POINTER, is_remote, local_path


class NoPublishedTablesError(UserError):
    """The output folder has no current snapshot: `mpg run` has not published there."""

    def __init__(self, out: str | Path) -> None:
        super().__init__(f"no published tables in {out}: run mpg run first")


def require_published(out: str | Path) -> None:
    """NoPublishedTablesError unless `out` has a current snapshot: a reader's first check,
    cheap (one small object), before anything heavy is imported or queried."""
    if is_remote(out):
        from mpg.storage import Storage  # a storage client only for a folder on object storage

        found = Storage(out).info(POINTER) is not None
    else:  # no storage client to import for one file's existence
        found = (Path(local_path(out)) / POINTER).is_file()
    if not found:
        raise NoPublishedTablesError(out)
