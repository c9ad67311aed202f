"""Reading trace files: discovery, gzip (multi-member, truncated), blocks of whole lines, lines
over the limit, files read in parts, files that cannot be read."""

from __future__ import annotations

import gzip
import hashlib
import random
import tracemalloc
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from mpg.core.errors import TraceFileError, TraceRootError
from mpg.pipelines.io import (
    LINE_TOO_LONG,
    MAX_LINE_BYTES,
    MAX_PARTS,
    PART_BLOCKS,
    LineBlock,
    TraceFile,
    _wanted_lines,
    discover_trace_files,
    file_parts,
    read_line_blocks,
    recover_raw_text,
)
from mpg.schemas import QUARANTINE_REF
from mpg.transforms.parse import split_lines

LINES = [b'{"n": %d}' % i for i in range(2000)]
TEXT = b"\n".join(LINES) + b"\n"


def _file(path: Path) -> TraceFile:
    return TraceFile.at(str(path.parent), path.name, "runtime")


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


def _numbered(blocks: list[LineBlock]) -> list[tuple[int, bytes | str]]:
    """Each line's number and bytes; a line set aside shows as its problem."""
    out: list[tuple[int, bytes | str]] = []
    for b in blocks:
        if b.problem is not None:
            out.append((b.first_line, b.problem))
        else:
            table = split_lines(b.data, b.first_line)
            out += zip(table["line"].to_pylist(), table["raw_bytes"].to_pylist(), strict=True)
    return out


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("block_bytes", [64, 1 << 20, 32 << 20])
def test_a_line_over_1_mib_is_one_quarantined_record(
    tmp_path: Path, gz: bool, block_bytes: int
) -> None:
    limit = MAX_LINE_BYTES
    lines = [b"a", b"x" * (limit + 1), b"b" * limit, b"c" * (20 * limit), b"d", b"e" * limit]
    # The sixth line ends with "\r\n"; the last one has no line break at all.
    text = b"\n".join(lines) + b"\r\n" + b"z" * (limit + 1)
    path = tmp_path / ("a.jsonl.gz" if gz else "a.jsonl")
    path.write_bytes(gzip.compress(text) if gz else text)
    blocks = list(read_line_blocks(_file(path), block_bytes))
    assert _numbered(blocks) == [
        (1, b"a"),
        (2, LINE_TOO_LONG),
        (3, b"b" * limit),
        (4, LINE_TOO_LONG),
        (5, b"d"),
        (6, b"e" * limit),  # at the limit: its '\r' belongs to the line break
        (7, LINE_TOO_LONG),
    ]
    assert LINE_TOO_LONG == "line too long: more than 1048576 bytes"
    assert {b.data for b in blocks if b.problem} == {b"x" * 1024, b"c" * 1024, b"z" * 1024}


def _random_lines(
    rng: random.Random, count: int, sizes: list[int]
) -> tuple[list[bytes], list[bytes], bytes]:
    """`count` lines of the given lengths or around the line limit, their line breaks ("\\n"
    or "\\r\\n") and the text they make."""
    limit = MAX_LINE_BYTES
    lengths = [*sizes, limit, limit + 1, 3 * limit]
    lines = [bytes([97 + i % 26]) * rng.choice(lengths) for i in range(count)]
    breaks = [rng.choice([b"\n", b"\r\n"]) for _ in lines]
    return lines, breaks, b"".join(line + brk for line, brk in zip(lines, breaks, strict=True))


@pytest.mark.parametrize("seed", range(4))
def test_any_lines_in_any_reads_come_out_whole_and_numbered(tmp_path: Path, seed: int) -> None:
    """Lines of every length (empty, CRLF, across reads and blocks, over the limit) in random
    block sizes: each line once, numbered, as splitting the whole text gives them."""
    rng = random.Random(seed)
    limit = MAX_LINE_BYTES
    lines, _, text = _random_lines(rng, 60, [0, 1, 7, 300, 70_000, 200_000])
    expected = [(n, LINE_TOO_LONG if len(x) > limit else x) for n, x in enumerate(lines, 1)]
    for gz in (False, True):
        path = tmp_path / ("a.jsonl.gz" if gz else "a.jsonl")
        path.write_bytes(gzip.compress(text) if gz else text)
        for block_bytes in (rng.randrange(1, 1 << 16), rng.randrange(1 << 16, 4 << 20)):
            blocks = list(read_line_blocks(_file(path), block_bytes))
            assert _numbered(blocks) == expected, (gz, block_bytes)
            assert all(b.problem or b.data.endswith(b"\n") for b in blocks)


def test_large_files_are_read_in_parts_of_equal_bytes_largest_first() -> None:
    block = 1000
    part = PART_BLOCKS * block

    def file(name: str, size: int) -> TraceFile:
        return TraceFile("runtime", "/r", name, size, 0)

    files = [file("small", part - 1), file("two", 2 * part + 1), file("big.gz", 9 * part)]
    files.append(file("many", 9 * part))
    assert [(p.file.name, p.start, p.end) for p in file_parts(files, block)] == [
        ("big.gz", 0, None),  # a gzip stream cannot be entered midway
        ("many", 0, 9 * part // 4),  # at most MAX_PARTS
        ("many", 9 * part // 4, 9 * part // 2),
        ("many", 9 * part // 2, 27 * part // 4),
        ("many", 27 * part // 4, None),
        ("two", part, None),
        ("two", 0, part),
        ("small", 0, None),
    ]
    assert MAX_PARTS == 4
    assert [p.size for p in file_parts(files[1:2], block)] == [part + 1, part]


@pytest.mark.parametrize("seed", range(4))
def test_a_file_read_in_parts_gives_each_line_once_numbered_as_in_the_whole(
    tmp_path: Path, seed: int
) -> None:
    """Parts cut anywhere (inside a line, at a line's start, inside an over-long line, in a run
    of empty lines, past the end): together the parts give the whole file's lines, each once,
    numbered as reading it whole numbers them; the last part hashes every byte."""
    rng = random.Random(seed)
    lines, breaks, text = _random_lines(rng, 40, [0, 0, 1, 7, 300, 70_000])
    text += rng.choice([b"", b"tail without a break"])
    path = tmp_path / "a.jsonl"
    path.write_bytes(text)
    whole = _numbered(list(read_line_blocks(_file(path), 1 << 16)))
    starts = [sum(len(x) + len(b) for x, b in zip(lines[:i], breaks, strict=False)) for i in (3, 4)]
    for _ in range(6):
        cuts = sorted({*rng.sample(range(1, len(text) + 2), 3), rng.choice(starts)})
        bounds = list(zip([0, *cuts], [*cuts, None], strict=True))
        digests = [hashlib.sha256() for _ in bounds]
        parts = [
            _numbered(list(read_line_blocks(_file(path), rng.randrange(1, 1 << 20), d, s, e)))
            for (s, e), d in zip(bounds, digests, strict=True)
        ]
        assert [line for part in parts for line in part] == whole, cuts
        assert digests[-1].hexdigest() == hashlib.sha256(text).hexdigest()


def test_parts_of_a_listed_file_cover_it(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(TEXT)
    parts = file_parts([_file(path)], block_bytes=len(TEXT) // (3 * PART_BLOCKS))
    assert len(parts) == 3
    read = [read_line_blocks(p.file, 1 << 20, None, p.start, p.end) for p in parts]
    by_start = sorted(zip(parts, read, strict=True), key=lambda pr: pr[0].start)
    assert _lines(b for _, blocks in by_start for b in blocks) == list(enumerate(LINES, start=1))


def test_an_over_long_line_is_never_held_whole(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"a\n" + b"x" * (50 * MAX_LINE_BYTES) + b"\nb\n")
    tracemalloc.start()
    try:
        blocks = list(read_line_blocks(_file(path), block_bytes=1 << 20))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [(b.first_line, b.problem) for b in blocks] == [(1, None), (2, LINE_TOO_LONG), (3, None)]
    assert peak < 4 * MAX_LINE_BYTES  # a block, plus at most the limit of one line


def test_an_unreadable_trace_file_is_a_user_error(tmp_path: Path) -> None:
    folder = tmp_path / "runtime" / "a.jsonl"  # not a file: open() fails as a locked file would
    folder.mkdir(parents=True)
    with pytest.raises(TraceFileError, match=r"^cannot read trace file a\.jsonl: Is a directory$"):
        list(read_line_blocks(_file(folder)))


def test_a_damaged_stream_keeps_the_first_1024_bytes_of_its_rest(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl.gz"
    path.write_bytes(gzip.compress(b"a\n" + b"y" * 5000)[:-10])
    *good, last = list(read_line_blocks(_file(path)))
    assert [b.data for b in good] == [b"a\n"]
    assert (last.first_line, last.data) == (2, b"y" * 1024)
    assert last.problem is not None and last.problem.startswith("unreadable file:")


@pytest.mark.parametrize("seed", range(3))
def test_refused_records_get_the_text_of_the_lines_the_reader_numbered(
    tmp_path: Path, seed: int
) -> None:
    """Recovery counts line breaks where the reader cuts lines: the same numbers, the same text,
    for lines across reads, CRLF, empty lines, lines after an over-long one and an unfinished
    last line; a number past the end has no text."""
    rng = random.Random(seed)
    sizes = [0, 1, 300, 70_000, 200_000, MAX_LINE_BYTES + 1]
    lines = [bytes([97 + i % 26]) * rng.choice(sizes) for i in range(40)]
    text = b"".join(line + rng.choice([b"\n", b"\r\n"]) for line in lines)[: -rng.randint(0, 1)]
    for gz in (False, True):
        path = tmp_path / ("a.jsonl.gz" if gz else "a.jsonl")
        path.write_bytes(gzip.compress(text) if gz else text)
        numbered = [(n, x) for n, x in _numbered(list(read_line_blocks(_file(path)))) if n % 3]
        wanted = [n for n, x in numbered if isinstance(x, bytes)] + [len(lines) + 1]
        refs = pa.table(
            {
                "source": ["runtime"] * len(wanted),
                "file": [path.name] * len(wanted),
                "line": wanted,
                "reason": ["unknown job"] * len(wanted),
                "job_id": [None] * len(wanted),
            },
            QUARANTINE_REF,
        )
        rows = recover_raw_text(_file(path), refs)
        expected = [x.decode() for n, x in numbered if isinstance(x, bytes)] + [""]
        assert rows.column("raw").to_pylist() == expected, gz
        assert rows.column("line").to_pylist() == wanted


@pytest.mark.parametrize("seed", range(20))
def test_wanted_lines_are_cut_out_of_reads_of_any_size(seed: int) -> None:
    """Reads of 1 to 7 bytes: lines across reads, a read ending on a line break, a CR at a
    read's end, empty lines, an unfinished last line, numbers past the end."""
    rng = random.Random(seed)
    pieces = [
        rng.choice([b"", b"a", b"bc", b"def\r"]) + rng.choice([b"\n", b"\r\n"]) for _ in range(30)
    ]
    text = b"".join(pieces) + rng.choice([b"", b"tail", b"tail\r"])
    reads, at = [], 0
    while at < len(text):
        size = rng.randint(1, 7)
        reads.append(text[at : at + size])
        at += size
    wanted = np.array(sorted(rng.sample(range(1, 36), 15)))
    lines = text.split(b"\n")
    expected = {
        n: lines[n - 1].removesuffix(b"\r").decode() for n in wanted.tolist() if n <= len(lines)
    }
    found = _wanted_lines(reads, wanted)
    assert {n: found.get(n, "") for n in wanted.tolist()} == {
        n: expected.get(n, "") for n in wanted.tolist()
    }
