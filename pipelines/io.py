"""Reading trace files and writing partitioned Parquet: the I/O around the pure transforms.

Trace files are read as *blocks* of whole lines (about `block_bytes` each) so a file of any size
streams through bounded memory, and `.jsonl.gz` is decompressed on the fly. A line longer than
`MAX_LINE_BYTES` is never held whole: it becomes one quarantined record. Writers name every file
after what it holds (a bucket, an input file), so a retried step overwrites rather than
duplicates.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mpg.errors import StoreError, TraceFileError, TraceRootError, find_user_error
from mpg.schemas import QUARANTINE, RECORD_SCHEMAS, SOURCES, concat, conform
from mpg.transforms.parse import line_bounds, split_lines
from mpg.transforms.reconcile import JobRecords

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


@dataclass(frozen=True)
class TraceFile:
    source: str
    path: str  # absolute path, for reading
    name: str  # path relative to the trace root, as written to the quarantine and provenance


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


def discover_trace_files(root: Path) -> tuple[list[TraceFile], list[str]]:
    """The trace files under `root/<source>/` (any depth) and the names of other files skipped."""
    if not root.is_dir():
        raise TraceRootError(f"trace root {root} does not exist or is not a directory")
    if not any((root / s).is_dir() for s in SOURCES):
        raise TraceRootError(
            f"trace root {root} has none of the source folders {', '.join(SOURCES)}"
        )
    files: list[TraceFile] = []
    skipped: list[str] = []
    for source in SOURCES:
        folder = root / source
        for path in sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []:
            name = path.relative_to(root).as_posix()
            if path.name.endswith(TRACE_SUFFIXES):
                files.append(TraceFile(source=source, path=str(path.resolve()), name=name))
            else:
                skipped.append(name)
    if not files:
        raise TraceRootError(
            f"trace root {root} holds no *.jsonl or *.jsonl.gz files under {', '.join(SOURCES)}"
        )
    return files, skipped


def _decompressed(path: str) -> Iterator[bytes]:
    """The bytes of a file, gunzipped (every member of a multi-member gzip) when named .gz.

    Raises zlib.error or EOFError on a corrupt or truncated stream, after yielding everything that
    could be decompressed before the damage.
    """
    with Path(path).open("rb") as handle:
        pieces = iter(lambda: handle.read(_INFLATE_BYTES), b"")
        yield from _inflate(pieces) if path.endswith(".gz") else pieces


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
    file: TraceFile, block_bytes: int = DEFAULT_BLOCK_BYTES
) -> Iterator[LineBlock]:
    """Blocks of whole lines, each ending at a line break (the last one at end of file).

    Memory stays within about `block_bytes` plus MAX_LINE_BYTES whatever the lines: of an
    over-long line only its first bytes are kept while its end is looked for. A corrupt or
    truncated gzip stream keeps every whole line before the damage, and its unreadable rest is one
    record. A file that cannot be read at all (permissions, I/O error, gone) stops the run:
    guessing would be silent loss.
    """
    lines = _LineCutter(file)
    try:
        for chunk in _decompressed(file.path):
            yield from lines.feed(chunk, block_bytes)
    except (zlib.error, EOFError) as exc:
        yield from lines.close(problem=f"unreadable file: {exc}")
        return
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise TraceFileError(f"cannot read trace file {file.name}: {reason}") from exc
    yield from lines.close()


class _LineCutter:
    """Cuts one file's stream of bytes into LineBlocks, numbering lines as it goes."""

    def __init__(self, file: TraceFile) -> None:
        self._file = file
        self._pending = bytearray()  # whole lines not yet handed out, then an unfinished one
        self._tail = 0  # length of that unfinished line
        self._next_line = 1  # number of the first line in pending
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
            self._pending += kept
            self._tail = tail - (len(chunk) - len(kept))
            yield from self._whole_lines()
            self._too_long = bytes(self._pending[:EXCERPT_BYTES])
            self._pending.clear()
            self._tail = 0
            return
        self._pending += chunk
        self._tail = tail
        if len(self._pending) >= block_bytes:
            yield from self._whole_lines()

    def close(self, problem: str | None = None) -> Iterator[LineBlock]:
        """What is left at the end of the stream; with a `problem` (a corrupt stream), the
        unreadable rest after the last whole line is one record, even where it happens to parse."""
        if problem is None and self._too_long is not None:
            yield self._one_record(self._too_long, LINE_TOO_LONG)
        elif problem is None:
            yield from _blocks(self._file, self._next_line, bytes(self._pending))
        else:
            yield from self._whole_lines()
            rest = self._pending if self._too_long is None else self._too_long
            yield self._one_record(bytes(rest[:EXCERPT_BYTES]), problem)

    def _whole_lines(self) -> Iterator[LineBlock]:
        """Hand out every whole line in pending; the unfinished one stays."""
        cut = len(self._pending) - self._tail
        if cut == 0:
            return
        whole = bytes(memoryview(self._pending)[:cut])
        del self._pending[:cut]
        yield from _blocks(self._file, self._next_line, whole)
        self._next_line += whole.count(b"\n")

    def _one_record(self, excerpt: bytes, problem: str) -> LineBlock:
        """A record set aside for the quarantine (the parser never sees it), at the next line."""
        block = LineBlock(self._file, self._next_line, excerpt, problem=problem)
        self._next_line += 1
        return block


def _blocks(file: TraceFile, first_line: int, data: bytes) -> Iterator[LineBlock]:
    """`data` (lines numbered from `first_line`) as LineBlocks; over-long lines set aside.

    Lines over the limit that ended inside one read are found here, all at once (the rare one
    costs a loop step, an ordinary line nothing).
    """
    if not data:
        return
    starts, ends = line_bounds(np.frombuffer(data, dtype=np.uint8))
    over = np.flatnonzero(ends - starts > MAX_LINE_BYTES).tolist()
    first = 0  # index of the first line not handed out yet
    for i in over:
        if i > first:
            yield LineBlock(file, first_line + first, data[starts[first] : starts[i]])
        excerpt = data[starts[i] : starts[i] + EXCERPT_BYTES]
        yield LineBlock(file, first_line + i, excerpt, problem=LINE_TOO_LONG)
        first = i + 1
    if first < len(starts):
        yield LineBlock(file, first_line + first, data if first == 0 else data[starts[first] :])


def record_store_file(bucket: int) -> str:
    """A bucket's file inside one `records/source=S/day=D/` partition."""
    return f"bucket={bucket:04d}/part-0.parquet"


def stored_buckets(store: Path) -> list[int]:
    """The job buckets that have records in the store (from its folder names)."""
    names = {p.name for p in store.glob("source=*/day=*/bucket=*")}
    return sorted(int(n.removeprefix("bucket=")) for n in names)


def read_job_bucket(bucket: int, store: str) -> JobRecords:
    """Every stored record of one job bucket, all days, as one table per source."""
    tables = {}
    for source in SOURCES:
        files = sorted(Path(store).glob(f"source={source}/day=*/{record_store_file(bucket)}"))
        schema = RECORD_SCHEMAS[source]
        tables[source] = concat((read_parquet(f, schema) for f in files), schema)
    return JobRecords(bucket=bucket, **tables)


def read_parquet(path: Path, schema: pa.Schema) -> pa.Table:
    """One stored Parquet file; a damaged one is a StoreError naming it, not a traceback."""
    try:
        return pq.read_table(path, schema=schema)
    except (pa.ArrowInvalid, OSError) as exc:
        if isinstance(exc, OSError) and find_user_error(exc) is not None:
            raise  # the machine's problem (permissions, I/O), reported as such
        raise StoreError(f"cannot read Parquet file {path}: {exc}") from exc


def recover_raw_text(file: TraceFile, refs: pa.Table) -> pa.Table:
    """QUARANTINE rows for QUARANTINE_REF rows that point into `file`: its lines read again.

    Records quarantined after parsing (unknown job, conflicting lifecycle event) travel as
    references, so raw text never crosses the shuffle; they are rare, and only the files that
    hold one are read a second time.
    """
    wanted = refs.column("line").to_numpy()
    found: dict[int, str] = {}
    for block in read_line_blocks(file):
        if block.problem is not None:
            continue  # set aside by the reader: never a record that a job could own
        lines = split_lines(block.data, block.first_line)
        hit = np.isin(lines.column("line").to_numpy(), wanted)
        for number, raw in zip(
            lines.column("line").filter(hit).to_pylist(),
            lines.column("raw_bytes").filter(hit).to_pylist(),
            strict=True,
        ):
            found[number] = raw.decode("utf-8", "replace")
    raw = pa.array([found.get(n, "") for n in wanted.tolist()], pa.string())
    return conform(refs.append_column("raw", raw), QUARANTINE)


def stable_id(text: str) -> str:
    """A short, stable name for a file written on behalf of `text` (an input file, say)."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def write_parquet(table: pa.Table, path: Path) -> None:
    """Write `table` to `path` under a temporary name, then rename it into place.

    The rename replaces the directory entry and never writes into an existing file: a path in a
    staging folder may be a hard link to a published snapshot's file, which must not change.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        pq.write_table(table, temporary, compression="zstd")
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        # Arrow's errors carry the errno but not the file name (a full disk, say): add it.
        if exc.filename is None and exc.errno is not None:
            raise OSError(exc.errno, os.strerror(exc.errno), str(path)) from exc
        raise
    temporary.replace(path)


def day_of(values: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    """The UTC day (date32) of timestamps; dates pass through."""
    if pa.types.is_timestamp(values.type):
        return pc.cast(pc.floor_temporal(values, unit="day"), pa.date32())
    return values


def write_by_day(table: pa.Table, day_column: str, folder: Path, basename: str) -> list[Path]:
    """Write `table` as `folder/day=YYYY-MM-DD/basename`, one file per UTC day present."""
    if table.num_rows == 0:
        return []
    days = day_of(table.column(day_column))
    written = []
    for day in pc.unique(days).to_pylist():
        path = folder / f"day={day.isoformat()}" / basename
        write_parquet(table.filter(pc.equal(days, pa.scalar(day, pa.date32()))), path)
        written.append(path)
    return written
