"""Reads through `mpg.storage.reads` (how `Storage` opens files on object stores): the bytes asked
for at any offset and size, Parquet and Arrow IPC read whole through it, a read that fails
transiently tried again (the file reopened) and one that fails for good not. The wrapper is
checked on pyarrow's local filesystem, its failures injected; tests/e2e/test_storage_faults.py reads
through it from the emulators behind a failing proxy."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

from mpg.storage import reads
from mpg.storage.reads import MIN_READ, open_safely

TABLE = pa.table({"job": [f"job-{i % 97}" for i in range(60_000)], "chips": range(60_000)})


def test_reads_return_the_bytes_asked_for(tmp_path: Path) -> None:
    data = os.urandom(3 * MIN_READ + 12_345)
    (tmp_path / "a.bin").write_bytes(data)
    file = open_safely(pafs.LocalFileSystem(), str(tmp_path / "a.bin"))
    draw = random.Random(7)
    for _ in range(2_000):
        offset = draw.randrange(len(data) + 1)
        size = draw.choice([0, 1, 10, 4_096, MIN_READ, 2 * MIN_READ + 7])
        assert file.read_at(size, offset) == data[offset : offset + size], (offset, size)
    file.seek(0)
    assert b"".join(iter(lambda: file.read(70_000), b"")) == data


def test_parquet_and_ipc_files_read_through_it(tmp_path: Path) -> None:
    fs = pafs.LocalFileSystem()
    pq.write_table(TABLE, tmp_path / "t.parquet", row_group_size=5_000)
    assert pq.ParquetFile(open_safely(fs, str(tmp_path / "t.parquet"))).read().equals(TABLE)
    with ipc.new_file(tmp_path / "t.arrow", TABLE.schema) as writer:
        for batch in TABLE.to_batches(7_000):
            writer.write_batch(batch)
    reader = ipc.open_file(open_safely(fs, str(tmp_path / "t.arrow")))
    assert reader.read_all().equals(TABLE)


class _Flaky:
    """What `_RetryingFile` needs of a filesystem (opening a file), the file's reads failing
    with `error` the first `times` times."""

    def __init__(self, error: OSError, times: int) -> None:
        self.local, self.error, self.left, self.opened = pafs.LocalFileSystem(), error, times, 0

    def open_input_file(self, path: str) -> pa.NativeFile:
        self.opened += 1
        native = self.local.open_input_file(path)
        handler = self

        class File:
            def size(self) -> int:
                return native.size()

            def read_at(self, nbytes: int, offset: int) -> bytes:
                if handler.left:
                    handler.left -= 1
                    raise handler.error
                return native.read_at(nbytes, offset)

            def close(self) -> None:
                native.close()

        return File()  # type: ignore[return-value]


BUSY = OSError("AWS Error INTERNAL_FAILURE during GetObject operation: Failed to flush response "
               "stream (eof: 0, bad: 1)")  # fmt: skip
LASTING = OSError("AWS Error ACCESS_DENIED during GetObject operation: Access Denied")


@pytest.mark.parametrize(("error", "times", "passes"), [(BUSY, 2, True), (LASTING, 1, False)])
def test_a_read_that_fails_transiently_is_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: OSError, times: int, passes: bool
) -> None:
    monkeypatch.setattr(reads, "_FIRST_BACKOFF_S", 0.0)
    (tmp_path / "a.bin").write_bytes(b"x" * 1_000)
    flaky = _Flaky(error, times)
    file = reads._RetryingFile(flaky, str(tmp_path / "a.bin"))  # type: ignore[arg-type]
    if passes:
        assert file.read(10) == b"x" * 10
        assert flaky.opened == 1 + times  # reopened before each new try
    else:
        with pytest.raises(OSError, match="Access Denied"):
            file.read(10)
        assert flaky.opened == 1
