"""Reading trace files: discovery, gzip (multi-member, truncated), blocks of whole lines."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import pytest

from mpg.errors import TraceRootError
from mpg.pipelines.io import TraceFile, discover_trace_files, read_line_blocks

LINES = [b'{"n": %d}' % i for i in range(2000)]
TEXT = b"\n".join(LINES) + b"\n"


def _file(path: Path) -> TraceFile:
    return TraceFile(source="runtime", path=str(path), name=path.name)


def _lines(blocks) -> list[tuple[int, bytes]]:
    out = []
    for b in blocks:
        out += [(b.first_line + i, line) for i, line in enumerate(b.data.split(b"\n")[:-1])]
    return out


@pytest.mark.parametrize("block_bytes", [64, 1000, 1 << 20])
def test_blocks_hold_whole_lines_numbered_from_one(tmp_path: Path, block_bytes: int) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(TEXT)
    blocks = list(read_line_blocks(_file(path), block_bytes))
    assert all(b.data.endswith(b"\n") and b.problem is None for b in blocks)
    assert _lines(blocks) == list(enumerate(LINES, start=1))


def test_multi_member_gzip_reads_every_member(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl.gz"
    path.write_bytes(gzip.compress(TEXT[:5000]) + gzip.compress(TEXT[5000:]))
    blocks = list(read_line_blocks(_file(path), 1 << 20))
    assert b"".join(b.data for b in blocks) == TEXT


def test_truncated_gzip_keeps_whole_lines_and_reports_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl.gz"
    path.write_bytes(gzip.compress(TEXT)[:3000])
    blocks = list(read_line_blocks(_file(path), 1 << 20))
    *good, last = blocks
    assert last.problem == "unreadable file: the gzip stream ends before its end marker"
    read = _lines(good)
    assert read == list(enumerate(LINES[: len(read)], start=1))
    assert last.first_line == len(read) + 1


def test_discovery_finds_trace_files_in_source_folders_only(tmp_path: Path) -> None:
    for name in (
        "scheduler/a.jsonl",
        "runtime/x/b.jsonl.gz",
        "profiles/notes.txt",
        "other/c.jsonl",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    files, skipped = discover_trace_files(tmp_path)
    assert [(f.source, f.name) for f in files] == [
        ("scheduler", "scheduler/a.jsonl"),
        ("runtime", "runtime/x/b.jsonl.gz"),
    ]
    assert skipped == ["profiles/notes.txt"]


@pytest.mark.parametrize("make", ["missing", "empty"])
def test_unusable_trace_root_is_a_user_error(tmp_path: Path, make: str) -> None:
    root = tmp_path / "traces"
    if make == "empty":
        root.mkdir()
    with pytest.raises(TraceRootError, match="trace root"):
        discover_trace_files(root)


def test_a_highly_compressed_member_decompresses_in_bounded_steps(tmp_path: Path) -> None:
    # 64 MiB of one repeated line compresses to ~64 KiB; it must still come out whole and in order.
    line = b'{"job_id": "j", "attempt": 0}\n'
    path = tmp_path / "a.jsonl.gz"
    path.write_bytes(gzip.compress(line * (64 * 1024 * 1024 // len(line)), compresslevel=9))
    blocks = list(read_line_blocks(_file(path), 8 * 1024 * 1024))
    assert len(blocks) > 1 and all(b.problem is None for b in blocks)
    assert [b.first_line for b in blocks][:2] == [1, 1 + blocks[0].data.count(b"\n")]
    assert sum(len(b.data) for b in blocks) == len(line) * (64 * 1024 * 1024 // len(line))


def _damaged_midway(path: Path) -> None:
    """Twenty lines; a full flush after the tenth, then a deflate block of invalid type."""
    packer = zlib.compressobj(wbits=31)
    first = packer.compress(b"".join(line + b"\n" for line in LINES[:10]))
    first += packer.flush(zlib.Z_FULL_FLUSH)
    path.write_bytes(first + bytes([0b110]) + b"\x00" * 64)


def test_damage_midway_keeps_every_line_before_it(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl.gz"
    _damaged_midway(path)
    *good, last = list(read_line_blocks(_file(path), 1 << 20))
    assert _lines(good) == list(enumerate(LINES[:10], start=1))
    assert last.first_line == 11
    assert last.problem is not None and last.problem.startswith("unreadable file:")


def test_a_bad_checksum_keeps_the_whole_text(tmp_path: Path) -> None:
    data = bytearray(gzip.compress(TEXT))
    data[-8] ^= 0xFF  # the CRC-32 of the member
    path = tmp_path / "a.jsonl.gz"
    path.write_bytes(bytes(data))
    *good, last = list(read_line_blocks(_file(path), 1 << 20))
    assert b"".join(b.data for b in good) == TEXT
    assert last.first_line == len(LINES) + 1 and last.data == b""
    assert last.problem is not None and "unreadable file" in last.problem
