"""The writer's lease on an output folder (placeholder: local folders only, an flock)."""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path

from mpg.errors import UserError
from mpg.storage import Storage


class LeaseHeldError(UserError):
    """Another mpg process holds the folder's lease."""


@contextlib.contextmanager
def hold_lease(storage: Storage, path: str, owner: str, lease_s: float = 600.0) -> Iterator[None]:
    if storage.remote:
        yield
        return
    lock = Path(storage.full(path))
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LeaseHeldError(
                f"another mpg process is writing {storage.uri} (it holds {lock})"
            ) from None
        yield
