"""Reading trace files: finding them under a trace root and cutting them into blocks of lines.

A trace root is any storage root (`mpg.storage`: a folder, `gs://`, `s3://`). Trace files are read
as *blocks* of whole lines (about `block_bytes` each) so a file of any size streams through
bounded memory, and `.jsonl.gz` is decompressed on the fly. A line longer than `MAX_LINE_BYTES` is
never held whole: it becomes one quarantined record. The worker that reads a file to its end also
hashes its bytes as stored, so no process ever reads the fleet's files just to know them.

A large uncompressed file is read in parts (`file_parts`), each by a worker of its own, so that one
big file is not one worker's work while the others wait. A part reads the lines that start in its
byte range, numbered as in the whole file: it counts the line breaks before its range to know
where its numbering starts, and the last part, which reads the file to its end, hashes all of it.
"""

from __future__ import annotations

import hashlib
import itertools
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import pyarrow as pa

from mpg.core.errors import TraceFileError, TraceRootError, os_reason
from mpg.schemas import QUARANTINE, SOURCES, conform
from mpg.storage import Storage
from mpg.transforms.parse import Bounds, line_bounds

TRACE_SUFFIXES = (".jsonl", ".jsonl.gz")
DEFAULT_BLOCK_BYTES = 32 * 1024 * 1024
# Decompressed bytes per step at most: also the most of one over-long line held at once.
_READ_BYTES = 1024 * 1024
# Compressed bytes fed to zlib per call: what a damaged stream may need to replay byte by byte.
_INFLATE_BYTES = 64 * 1024
# The longest line read as a record, line break excluded. Exporters write lines of a few hundred
# bytes; a longer one is a broken writer or hostile input, and parsing it whole would hold it all
# in memory (a 50 MB line took 4 s). It becomes one quarantined record instead.
MAX_LINE_BYTES = 1024 * 1024
LINE_TOO_LONG = f"line too long: more than {MAX_LINE_BYTES} bytes"
# What the quarantine keeps of a record the reader sets aside (its `raw`).
EXCERPT_BYTES = 1024
# A file is read in parts of at least PART_BLOCKS blocks, in at most MAX_PARTS parts: each part
# reads the bytes before it again to count their lines, so k parts read (k + 1) / 2 times the file.
PART_BLOCKS = 4
MAX_PARTS = 4


@dataclass(frozen=True)
class TraceFile:
    """One input file, as a listing of its trace root describes it."""

    source: str
    root: str  # the trace root's URI
    name: str  # path relative to the trace root, as written to the quarantine and provenance
    size: int
    mtime_ns: int

    def open(self) -> pa.NativeFile:
        """Its bytes as stored (not decompressed)."""
        return Storage(self.root).open_input_stream(self.name)

    @classmethod
    def at(cls, root: str, name: str, source: str) -> TraceFile:
        """The file `name` (relative to the trace root `root`) as a listing would describe it."""
        entry = Storage(root).info(name)  # None: not a file, which reading it will say
        size, mtime_ns = (entry.size, entry.mtime_ns) if entry else (0, 0)
        return cls(source, Storage(root).uri, name, size, mtime_ns)


@dataclass(frozen=True)
class FilePart:
    """The lines of a trace file that start in its bytes [start, end) (`end` None: to the end of
    the file): what one worker reads."""

    file: TraceFile
    start: int = 0
    end: int | None = None

    @property
    def size(self) -> int:
        """Its bytes, as the listing's size gives them."""
        return (self.file.size if self.end is None else self.end) - self.start


def file_parts(files: Iterable[TraceFile], block_bytes: int) -> list[FilePart]:
    """The parts the files are read in, largest first.

    A file of n x PART_BLOCKS blocks is n parts of equal bytes (at most MAX_PARTS); a gzip file is
    one part, as its stream cannot be entered midway. Largest first: Beam's local runner deals the
    elements of a shuffle to its workers in turn, so in that order their shares differ by at most
    one part; a runner that balances as it goes does best with the largest first too.
    """
    parts = []
    for file in files:
        whole = file.name.endswith(".gz")
        n = 1 if whole else max(1, min(MAX_PARTS, file.size // (PART_BLOCKS * block_bytes)))
        bounds = [file.size * k // n for k in range(1, n)]
        parts += [
            FilePart(file, start, end)
            for start, end in zip([0, *bounds], [*bounds, None], strict=True)
        ]
    return sorted(parts, key=lambda part: part.size, reverse=True)


@dataclass(frozen=True)
class LineBlock:
    """Whole lines of one file, numbered from `first_line`, each at most MAX_LINE_BYTES long.

    With a `problem`, the block is instead one record the reader sets aside (a line over
    MAX_LINE_BYTES, or the unreadable rest of a corrupt stream): `problem` is its quarantine
    reason and `data` its first EXCERPT_BYTES bytes.
    """

    file: TraceFile
    first_line: int
    data: bytes
    problem: str | None = None
    # Where each line of `data` starts and its text ends (`line_bounds`), when the reader found
    # them already: the parser then need not scan the block for line breaks again.
    bounds: tuple[np.ndarray, np.ndarray] | None = field(default=None, compare=False, repr=False)

    @property
    def nbytes(self) -> int:
        """Its size in memory (what Beam's size estimate counts: `mpg.pipelines.coders`)."""
        return len(self.data) + sum(b.nbytes for b in self.bounds or ())


def discover_trace_files(root: str) -> tuple[list[TraceFile], list[str]]:
    """The trace files under `root/<source>/` (any depth) and the names of other files skipped."""
    store = Storage(root)
    listed = {source: store.list(source) for source in SOURCES}
    if not any(listed.values()):
        if not store.exists() or (not store.remote and not store.is_dir()):
            raise TraceRootError(f"trace root {store.uri} does not exist or is not a directory")
        raise TraceRootError(
            f"trace root {store.uri} has none of the source folders {', '.join(SOURCES)}"
        )
    files: list[TraceFile] = []
    skipped: list[str] = []
    for source, entries in listed.items():
        for entry in entries:
            if entry.path.endswith(TRACE_SUFFIXES):
                files.append(TraceFile(source, store.uri, entry.path, entry.size, entry.mtime_ns))
            else:
                skipped.append(entry.path)
    if not files:
        raise TraceRootError(
            f"trace root {store.uri} holds no *.jsonl or *.jsonl.gz files under "
            f"{', '.join(SOURCES)}"
        )
    return files, skipped


class Digest(Protocol):
    """What `read_line_blocks` feeds the stored bytes to (a `hashlib` object)."""

    def update(self, data: bytes, /) -> None: ...


def _decompressed(file: TraceFile, digest: Digest | None) -> Iterator[bytes]:
    """The bytes of a file, gunzipped (every member of a multi-member gzip) when named .gz; the
    bytes as stored go through `digest` on the way, all of them even past a damaged stream.

    Raises zlib.error or EOFError on a corrupt or truncated stream, after yielding everything that
    could be decompressed before the damage. A file that cannot be read at all (permissions, I/O
    error, gone) is a TraceFileError: guessing would be silent loss.
    """
    try:
        with file.open() as handle:
            pieces = iter(lambda: handle.read(_INFLATE_BYTES), b"")
            if digest is not None:
                pieces = _digested(pieces, digest)
            try:
                yield from _inflate(pieces) if file.name.endswith(".gz") else pieces
            except (zlib.error, EOFError):
                for _ in pieces:  # the rest still counts towards the file's hash
                    pass
                raise
    except OSError as exc:
        raise TraceFileError(f"cannot read trace file {file.name}: {os_reason(exc)}") from exc


def _digested(pieces: Iterator[bytes], digest: Digest) -> Iterator[bytes]:
    for piece in pieces:
        digest.update(piece)
        yield piece


def _inflate(pieces: Iterator[bytes]) -> Iterator[bytes]:
    inflater = zlib.decompressobj(wbits=31)
    in_member = False  # bytes of a gzip member have been fed since the last member ended
    for piece in pieces:
        while piece:
            in_member = True
            before = inflater.copy()
            try:
                # Bounded output per step: a highly compressed member cannot balloon one step.
                out = inflater.decompress(piece, _READ_BYTES)
            except zlib.error:
                # zlib drops a failing call's output: replay the piece a byte at a time from the
                # state before it, to keep every byte that precedes the damage.
                yield from _salvage(before, piece)
                raise
            yield out
            if inflater.eof:
                piece = inflater.unused_data
                inflater = zlib.decompressobj(wbits=31)
                in_member = False
            else:
                piece = inflater.unconsumed_tail
    yield inflater.flush()
    if in_member and not inflater.eof:
        raise EOFError("the gzip stream ends before its end marker")


def _salvage(inflater: zlib._Decompress, piece: bytes) -> Iterator[bytes]:  # type: ignore[name-defined]
    for i in range(len(piece)):
        try:
            yield inflater.decompress(piece[i : i + 1])
        except zlib.error:
            return


def read_line_blocks(
    file: TraceFile,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    digest: Digest | None = None,
    start: int = 0,
    end: int | None = None,
) -> Iterator[LineBlock]:
    """Blocks of whole lines, each ending at a line break (the last one at end of file); with
    `start` or `end`, those of a part (`FilePart`): the lines that start in bytes [start, end),
    numbered as in the whole file.

    Memory stays within about `block_bytes` plus MAX_LINE_BYTES whatever the lines: of an
    over-long line only its first bytes are kept while its end is looked for. A corrupt or
    truncated gzip stream keeps every whole line before the damage, and its unreadable rest is one
    record. A file that cannot be read at all (permissions, I/O error, gone) stops the run:
    guessing would be silent loss. `digest`, when given, sees every stored byte of a file read to
    its end (a damaged gzip stream's rest included), those before `start` too.
    """
    lines_before, at, stream = _from_part_start(_decompressed(file, digest), start)
    if end is not None:
        stream = _to_part_end(stream, at, end)
    lines = _LineCutter(file, first_line=lines_before + 1)
    try:
        for chunk in stream:
            yield from lines.feed(chunk, block_bytes)
    except (zlib.error, EOFError) as exc:
        yield from lines.close(problem=f"unreadable file: {exc}")
        return
    yield from lines.close()


def _from_part_start(pieces: Iterator[bytes], start: int) -> tuple[int, int, Iterator[bytes]]:
    """The lines before the first line that starts at or after byte `start`, where that line
    starts, and the stream from there on. The bytes before it are only counted."""
    if start == 0:
        return 0, 0, pieces
    lines = at = 0  # at: the stream position of the piece's first byte
    for piece in pieces:
        # the line break at or after byte start - 1 ends the last line before the part
        cut = piece.find(b"\n", max(start - 1 - at, 0))
        if cut >= 0:
            lines += piece.count(b"\n", 0, cut + 1)
            return lines, at + cut + 1, itertools.chain([piece[cut + 1 :]], pieces)
        lines += piece.count(b"\n")
        at += len(piece)
    return lines, at, iter(())


def _to_part_end(pieces: Iterator[bytes], at: int, end: int) -> Iterator[bytes]:
    """The stream from position `at` to the end of the line that holds byte end - 1: the lines
    that start before `end` (none where the first starts at or after it)."""
    if at >= end:
        return
    for piece in pieces:
        cut = piece.find(b"\n", max(end - 1 - at, 0))
        if cut >= 0:
            yield piece[: cut + 1]
            return
        yield piece
        at += len(piece)


class _LineCutter:
    """Cuts one file's stream of bytes into LineBlocks, numbering lines as it goes.

    The reads are kept as they came and joined once per block: the block's bytes are copied
    once (into the block), its lines' bounds found once (for the block, and for numbering the
    next one)."""

    def __init__(self, file: TraceFile, first_line: int = 1) -> None:
        self._file = file
        self._pending: list[bytes] = []  # whole lines not yet handed out, then an unfinished one
        self._size = 0  # bytes in pending
        self._tail = 0  # length of that unfinished line
        self._next_line = first_line  # number of the first line in pending
        self._too_long: bytes | None = None  # start of an over-long line whose end is looked for

    def feed(self, chunk: bytes, block_bytes: int) -> Iterator[LineBlock]:
        if self._too_long is not None:
            end = chunk.find(b"\n")
            if end < 0:
                return  # still inside the over-long line: nothing of it is kept
            yield self._one_record(self._too_long, LINE_TOO_LONG)
            self._too_long = None
            chunk = chunk[end + 1 :]
        last_break = chunk.rfind(b"\n")
        tail = self._tail + len(chunk) if last_break < 0 else len(chunk) - last_break - 1
        if tail > MAX_LINE_BYTES + 1:  # over the limit even if it ends with "\r\n"
            # Keep the whole lines before it and the first bytes of the line, nothing more.
            kept = chunk[: last_break + 1 + EXCERPT_BYTES]
            self._add(kept, tail - (len(chunk) - len(kept)))
            yield from self._whole_lines()
            self._too_long = self._joined()[:EXCERPT_BYTES]
            self._pending, self._size, self._tail = [], 0, 0
            return
        self._add(chunk, tail)
        if self._size >= block_bytes and last_break >= 0:
            yield from self._whole_lines()

    def close(self, problem: str | None = None) -> Iterator[LineBlock]:
        """What is left at the end of the stream; with a `problem` (a corrupt stream), the
        unreadable rest after the last whole line is one record, even where it happens to parse."""
        if problem is None and self._too_long is not None:
            yield self._one_record(self._too_long, LINE_TOO_LONG)
        elif problem is None:
            data = self._joined()
            yield from _blocks(self._file, self._next_line, data, _bounds(data))
        else:
            yield from self._whole_lines()
            rest = self._joined() if self._too_long is None else self._too_long
            yield self._one_record(rest[:EXCERPT_BYTES], problem)

    def _add(self, chunk: bytes, tail: int) -> None:
        self._pending.append(chunk)
        self._size += len(chunk)
        self._tail = tail

    def _joined(self) -> bytes:
        return b"".join(self._pending)

    def _whole_lines(self) -> Iterator[LineBlock]:
        """Hand out every whole line in pending; the unfinished one stays."""
        cut = self._size - self._tail
        if cut == 0:
            return
        last = self._pending[-1]
        keep = len(last) - self._tail
        if keep >= 0:  # the last line break is in the last read: only that read is cut
            whole = b"".join([*self._pending[:-1], last[:keep]])
            self._pending = [last[keep:]]
        else:
            joined = self._joined()
            whole, self._pending = joined[:cut], [joined[cut:]]
        self._size = self._tail
        bounds = _bounds(whole)
        yield from _blocks(self._file, self._next_line, whole, bounds)
        self._next_line += len(bounds[0])

    def _one_record(self, excerpt: bytes, problem: str) -> LineBlock:
        """A record set aside for the quarantine (the parser never sees it), at the next line."""
        block = LineBlock(self._file, self._next_line, excerpt, problem=problem)
        self._next_line += 1
        return block


def _bounds(data: bytes) -> Bounds:
    return line_bounds(np.frombuffer(data, dtype=np.uint8))


def _blocks(file: TraceFile, first_line: int, data: bytes, bounds: Bounds) -> Iterator[LineBlock]:
    """`data` (lines numbered from `first_line`, where `bounds` says) as LineBlocks; over-long
    lines set aside.

    Lines over the limit that ended inside one read are found here, all at once (the rare one
    costs a loop step, an ordinary line nothing).
    """
    if not data:
        return
    starts, ends = bounds
    over = np.flatnonzero(ends - starts > MAX_LINE_BYTES).tolist()
    first = 0  # index of the first line not handed out yet
    for i in over:
        if i > first:
            yield LineBlock(file, first_line + first, data[starts[first] : starts[i]])
        excerpt = data[starts[i] : starts[i] + EXCERPT_BYTES]
        yield LineBlock(file, first_line + i, excerpt, problem=LINE_TOO_LONG)
        first = i + 1
    if first == 0:
        yield LineBlock(file, first_line, data, bounds=(starts, ends))
    elif first < len(starts):
        yield LineBlock(file, first_line + first, data[starts[first] :])


def recover_raw_text(file: TraceFile, refs: pa.Table) -> pa.Table:
    """QUARANTINE rows for QUARANTINE_REF rows that point into `file`: its lines read again.

    Records quarantined after parsing (unknown job, conflicting lifecycle event) travel as
    references, so raw text never crosses the shuffle; they are rare, and only the files that
    hold one are read a second time. That reading only counts line breaks (`_wanted_lines`):
    the reader numbers lines the same way (an over-long line or a stream's damaged rest is one
    line too, and neither is ever a reference), and cutting every line costs three times as
    much.
    """
    wanted = refs.column("line").to_numpy()
    found = _wanted_lines(_until_damage(file), np.unique(wanted))
    raw = pa.array([found.get(n, "") for n in wanted.tolist()], pa.string())
    return conform(refs.append_column("raw", raw), QUARANTINE)


def _until_damage(file: TraceFile) -> Iterator[bytes]:
    """A file's bytes as `_decompressed` gives them, up to any damage (a reference is never to
    a line after it: the reader kept none)."""
    try:
        yield from _decompressed(file, None)
    except (zlib.error, EOFError):
        return


def _wanted_lines(chunks: Iterable[bytes], wanted: np.ndarray) -> dict[int, str]:
    """The text of the lines numbered `wanted` (sorted, from 1) in a stream of bytes, without
    its line break; a chunk holding none of them is only counted."""
    found: dict[int, str] = {}
    line = 1  # the number of the line the next byte belongs to
    partial: list[bytes] = []  # a wanted line's bytes that do not end in the chunk read so far
    for chunk in chunks:
        begin = 0
        if partial:
            end = chunk.find(b"\n")
            if end < 0:
                partial.append(chunk)
                continue
            partial.append(chunk[:end])
            found[line] = _text(b"".join(partial))
            partial, begin, line = [], end + 1, line + 1
        breaks = chunk.count(b"\n", begin)
        low, high = np.searchsorted(wanted, [line, line + breaks], side="left")
        if high < len(wanted) and wanted[high] == line + breaks:
            high += 1  # the chunk's last, unfinished line
        if high > low:
            ends = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8)[begin:] == ord("\n"))
            starts = np.concatenate(([0], ends + 1)) + begin
            for number in wanted[low:high].tolist():
                i = number - line
                if i < breaks:
                    found[number] = _text(chunk[starts[i] : begin + ends[i]])
                else:
                    partial = [chunk[starts[i] :]]
        line += breaks
    if partial:  # the last line, with no line break
        found[line] = _text(b"".join(partial))
    return found


def _text(line: bytes) -> str:
    return line.removesuffix(b"\r").decode("utf-8", "replace")


def stable_id(text: str) -> str:
    """A short, stable name for a file written on behalf of `text` (an input file, say)."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]
