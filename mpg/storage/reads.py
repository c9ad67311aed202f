"""Reads from object stores that survive a busy store, and take fewer requests.

    with open_safely(pafs.S3FileSystem(...), "bucket/key") as handle:   # `Storage.open_input`
        pq.ParquetFile(handle).read()

pyarrow's S3 client reads a range into a buffer of exactly the range's size, and the AWS SDK
writes every answer's body there, an error's included: a 503 SlowDown (a few hundred bytes of
XML) to a read smaller than that (the 10 bytes at the end of an Arrow IPC file, a small
file) overflows it, and the read fails as `INTERNAL_FAILURE: Failed to flush response stream`,
which the SDK does not retry (apache/doris#66557 describes the same in another client). A busy
store then fails a run that its retries would have carried.

So the files `Storage` opens for reading on object stores are read through `_RetryingFile`: in
blocks of at least `MIN_READ` bytes (near the end of the file, its last `MIN_READ` bytes),
served from the last block when the reader asks for less (a small file, or an IPC or Parquet
file's footer and what it points to near the end, cost one request, not three or more), and a
read that fails in a way that passes is tried again, the file reopened, for up to `ATTEMPTS`
times with exponential back-off. Reads are idempotent, so trying again is always safe; writes
are left to the clients' own retries (docs/decisions.md, "Retries").

pyarrow Datasets get pyarrow's own filesystem, not these files: a Dataset scanned from Python
(DuckDB 2.0 does so) may wait on Arrow's I/O threads while holding the interpreter lock, which
those threads would need to call a Python file: a deadlock (seen on fake-gcs-server). Datasets
read Parquet, whose reads are large (footers of 64 KiB); Arrow IPC scratch files, whose footer
read is 10 bytes, are read through `Storage.open_input` only.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from mpg.storage import backends

# Reads smaller than this fetch this much (or the rest of the file) and keep it for the next.
MIN_READ = 256 * 1024
# Tries of one read that fails transiently (the clients have already retried each request).
ATTEMPTS = 5
_FIRST_BACKOFF_S = 0.5


def open_safely(fs: pafs.FileSystem, path: str) -> pa.NativeFile:
    """`path` of `fs` open for reading, with retried, coalesced reads (the module says why)."""
    return pa.PythonFile(_RetryingFile(fs, path), mode="r")


class _RetryingFile:
    """A file of an object store, read in blocks of at least MIN_READ bytes, each read tried
    again (the file reopened) when it fails transiently. A raw file object for `pa.PythonFile`."""

    def __init__(self, fs: pafs.FileSystem, path: str) -> None:
        self._fs, self._path = fs, path
        self._file = fs.open_input_file(path)
        self._size = self._file.size()
        self._position = 0
        self._block_start, self._block = 0, b""
        self.closed = False

    # -- what pa.PythonFile asks of a raw file ---------------------------------------------------

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def size(self) -> int:
        return self._size

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._position, 2: self._size}[whence]
        self._position = base + offset
        return self._position

    def read(self, nbytes: int | None = None) -> bytes:
        wanted = self._size - self._position if nbytes is None or nbytes < 0 else nbytes
        wanted = max(0, min(wanted, self._size - self._position))
        start = self._position
        if not (self._block_start <= start and start + wanted <= self._block_end):
            # At least MIN_READ bytes; near the end of the file, its last MIN_READ bytes, where
            # Parquet and Arrow IPC keep their footers (read first, then what they point to).
            end = min(self._size, max(start + wanted, start + MIN_READ))
            begin = max(0, min(start, end - MIN_READ))
            self._block_start, self._block = begin, self._read_at(begin, end - begin)
        offset = start - self._block_start
        data = self._block[offset : offset + wanted]
        self._position = start + len(data)
        return data

    @property
    def _block_end(self) -> int:
        return self._block_start + len(self._block)

    def close(self) -> None:
        if not self.closed:
            self._file.close()
            self._block = b""
            self.closed = True

    # -- retries -------------------------------------------------------------------------------

    def _read_at(self, offset: int, nbytes: int) -> bytes:
        if nbytes == 0:
            return b""
        backoff = _FIRST_BACKOFF_S
        for attempt in range(1, ATTEMPTS + 1):
            try:
                data = self._file.read_at(nbytes, offset)
            except OSError as exc:
                if attempt == ATTEMPTS or not _passes(exc):
                    raise
            else:
                if len(data) == nbytes:
                    return data
                if attempt == ATTEMPTS:  # the object changed under us, or the store lost it
                    raise OSError(f"{self._path}: read {len(data)} of {nbytes} bytes")
            time.sleep(backoff)
            backoff *= 2
            self._reopen()
        raise AssertionError("unreachable")

    def _reopen(self) -> None:
        with contextlib.suppress(OSError):
            self._file.close()
        self._file = self._fs.open_input_file(self._path)


def _passes(exc: Any) -> bool:
    """Whether a read's failure is of the kind that passes (the store's clients' view)."""
    return backends.describe(exc, "s3").transient
