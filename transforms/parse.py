"""Parse and validate one block of a trace file, vectorised.

A block is a run of whole lines from one file (see `mpg.pipelines.io.read_line_blocks`, which
sets aside lines over its length limit). The lines are cut with numpy (no Python loop per line),
then DuckDB reads them in two steps per source:

1. the fast path (`sql/parse/<source>_ordinary.sql`) proves the ordinary lines usable: a record
   spelled exactly as json.dumps writes it, in the spec's field order, whose every value passes
   every check. This is nearly every line of an exporter's log, at a fraction of the full cost;
2. the full rule set (`sql/parse/<source>.sql`) decodes, checks and types every other line and
   gives each unusable one its reason.

Both statements' field lists are made from the trace format's one declaration
(`mpg.transforms.parse_sql`).

Rows with a reason go to the quarantine; the rest come out in the source's record schema
(`mpg.schemas`), in line order. The two steps agree on every line the first accepts, which
tests/unit/test_parse_differential.py checks against the parser as it was before the fast path.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from mpg.definitions.catalog import ChipCatalog
from mpg.definitions.vocabulary import (
    EVENT_TYPES,
    FRAMEWORKS,
    JOB_STATES,
    KINDS_WITH_STEP,
    SPAN_KINDS,
    WORKLOAD_CLASSES,
)
from mpg.schemas import QUARANTINE, RECORD_SCHEMAS, conform
from mpg.sql.files import load_sql
from mpg.transforms.parse_sql import parse_statement

_NEWLINE = 10
_CARRIAGE_RETURN = 13

# The instants a record may hold, [start, end): earlier ones are clock faults (epoch 0, zero
# dates), and one far-future instant would stretch every open job to it (docs/decisions.md).
TIME_WINDOW = (datetime(2000, 1, 1, tzinfo=UTC), datetime(2100, 1, 1, tzinfo=UTC))


@dataclass(frozen=True)
class ParsedBlock:
    """What one block of one file yields: typed records, quarantine rows and the count read."""

    source: str
    file: str
    records: pa.Table  # RECORD_SCHEMAS[source], with each record's file and line
    quarantine: pa.Table  # QUARANTINE
    lines_read: int

    @property
    def nbytes(self) -> int:
        """Its tables' size in memory."""
        return self.records.nbytes + self.quarantine.nbytes


# Where each line of a block starts, and where its text ends (`line_bounds`).
Bounds = tuple[np.ndarray, np.ndarray]


def line_bounds(buf: np.ndarray) -> Bounds:
    """Where each line of `buf` (bytes as uint8) starts, and where its text ends.

    A final line break ends the last line rather than starting an empty one; a '\\r' just before
    a line's end belongs to the line break, not to the text. Every other line, empty ones
    included, is a record to account for.
    """
    breaks = np.flatnonzero(buf == _NEWLINE)
    unterminated = len(buf) > 0 and buf[-1] != _NEWLINE
    ends = np.append(breaks, len(buf)) if unterminated else breaks
    starts = np.concatenate(([0], breaks + 1))[: len(ends)].astype(np.int64)
    crlf = (ends > starts) & (buf[np.maximum(ends - 1, 0)] == _CARRIAGE_RETURN)
    return starts, ends - crlf.astype(np.int64)


def split_lines(data: bytes, first_line: int) -> pa.Table:
    """Cut `data` into lines: a table of (line number, bytes without the line break)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    starts, ends = line_bounds(buf)
    numbers = pa.array(np.arange(first_line, first_line + len(ends), dtype=np.int64))
    return pa.table({"line": numbers, "raw_bytes": _copied_lines(buf, starts, ends)})


def _viewed_lines(data: bytes, first_line: int, bounds: Bounds | None = None) -> pa.Table:
    """`split_lines`, with the bytes as a binary view array over `data` itself: each line is a
    16-byte view (its length, and its offset in `data` or, up to 12 bytes, the line itself), so
    no line is copied. (pyarrow 25 cannot filter such an array: `_some_lines` selects.) `bounds`:
    `line_bounds` of `data` when known already."""
    buf = np.frombuffer(data, dtype=np.uint8)
    if len(buf) >= 2**31:  # a view's offset is 32 bits
        return split_lines(data, first_line)
    starts, ends = line_bounds(buf) if bounds is None else bounds
    numbers = pa.array(np.arange(first_line, first_line + len(ends), dtype=np.int64))
    return pa.table({"line": numbers, "raw_bytes": _line_views(data, buf, starts, ends)})


def _some_lines(lines: pa.Table, keep: np.ndarray) -> pa.Table:
    """The lines where `keep` is true, their views (or bytes) selected without copying a line."""
    raw = lines.column("raw_bytes").combine_chunks()
    numbers = lines.column("line").filter(pa.array(keep))
    if pa.types.is_binary_view(raw.type) and len(raw.buffers()) != 3:
        raw = raw.cast(pa.large_binary())  # views into several data buffers: not ours
    if not pa.types.is_binary_view(raw.type):
        return pa.table({"line": numbers, "raw_bytes": raw.filter(pa.array(keep))})
    _, views, data = raw.buffers()
    kept = np.frombuffer(views, dtype=np.int32).reshape(-1, 4)[raw.offset :][: len(raw)][keep]
    selected = pa.Array.from_buffers(
        pa.binary_view(), len(kept), [None, pa.py_buffer(kept.copy()), data]
    )
    return pa.table({"line": numbers, "raw_bytes": selected})


def _line_views(data: bytes, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> pa.Array:
    """Arrow's binary view layout: per value 4 bytes of length, then either the value itself
    (up to 12 bytes, zero-padded) or its first 4 bytes, a buffer index (0) and an offset."""
    lengths = (ends - starts).astype(np.int32)
    views = np.zeros((len(starts), 4), dtype=np.int32)
    views[:, 0] = lengths
    long = lengths > _INLINE_BYTES
    at = starts[long]
    views[long, 1] = buf[at[:, None] + np.arange(4)].view(np.int32)[:, 0]
    views[long, 3] = at
    short = np.flatnonzero(~long)
    if len(short):  # empty lines, mostly: the bytes go into the view
        place = np.arange(_INLINE_BYTES)
        inside = place < lengths[short, None]
        at = np.where(inside, starts[short, None] + place, 0)
        inline = np.where(inside, buf[at] if len(buf) else 0, 0).astype(np.uint8)
        views.view(np.uint8).reshape(len(starts), 16)[short, 4:] = inline
    return pa.Array.from_buffers(
        pa.binary_view(), len(starts), [None, pa.py_buffer(views), pa.py_buffer(data)]
    )


_INLINE_BYTES = 12  # the longest value a binary view holds itself


def _copied_lines(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> pa.Array:
    """The lines as one large binary array: their bytes copied, the line breaks left out."""
    gap = np.append(starts[1:], len(buf)) - ends  # a line break's one or two bytes
    keep = np.ones(len(buf), dtype=bool)
    keep[ends[gap > 0]] = False
    keep[ends[gap > 1] + 1] = False
    offsets = np.concatenate(([0], np.cumsum(ends - starts))).astype(np.int64)
    return pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), len(ends), [None, pa.py_buffer(offsets), pa.py_buffer(buf[keep])]
    )


class BlockParser:
    """Holds one in-memory DuckDB connection with the parse macros loaded; reuse it per worker.

    `batch_rows`: cut each block into Arrow record batches of this many lines before DuckDB
    reads it (DuckDB's threads then take batches in any order; a test makes them small to
    shuffle small blocks). By default a block is one batch: cutting it measured no faster.
    `threads`: DuckDB's threads for this connection (by default, one per core).
    """

    def __init__(
        self, catalog: ChipCatalog, batch_rows: int | None = None, threads: int | None = None
    ) -> None:
        self._batch_rows = batch_rows
        self._statements: dict[tuple[str, bool], duckdb.DuckDBPyRelation] = {}
        self._con = duckdb.connect(config={} if threads is None else {"threads": threads})
        self._con.execute("SET TimeZone = 'UTC'")
        self._con.execute(load_sql("parse/macros.sql"))
        window = {"min_time": TIME_WINDOW[0], "max_time": TIME_WINDOW[1]}
        self._params: dict[str, dict[str, list[str] | datetime]] = {
            "scheduler": {
                "event_types": list(EVENT_TYPES),
                "chip_generations": catalog.generations,
                "workload_classes": list(WORKLOAD_CLASSES),
                "frameworks": list(FRAMEWORKS),
                "job_states": list(JOB_STATES),
                **window,
            },
            "runtime": {
                "span_kinds": list(SPAN_KINDS),
                "kinds_with_step": list(KINDS_WITH_STEP),
                **window,
            },
            "profiles": window,
        }

    def close(self) -> None:
        self._con.close()

    def parse(
        self, source: str, file: str, data: bytes, first_line: int = 1, bounds: Bounds | None = None
    ) -> ParsedBlock:
        """The block's records and quarantine rows; `bounds`: `line_bounds` of `data`, when
        the reader found them already."""
        lines = _viewed_lines(data, first_line, bounds)
        fast = self._run(source, lines, ordinary=True)
        records = [_records(source, file, _where(fast, fast.column("ordinary")))]
        rejected = _REJECTED.empty_table()
        if records[0].num_rows < lines.num_rows:
            seen = np.zeros(lines.num_rows, dtype=bool)
            seen[_positions(records[0], first_line)] = True
            checked = self._run(source, _some_lines(lines, ~seen))
            bad = pc.is_valid(checked.column("reason"))
            records.append(_records(source, file, checked.filter(pc.invert(bad))))
            rejected = checked.filter(bad).select(_REJECTED.names)
        return ParsedBlock(
            source=source,
            file=file,
            records=_in_line_order(pa.concat_tables(records), first_line),
            quarantine=_quarantine_rows(source, file, _in_line_order(rejected, first_line), lines),
            lines_read=lines.num_rows,
        )

    def _run(self, source: str, lines: pa.Table, ordinary: bool = False) -> pa.Table:
        """The source's fast path (`ordinary`) or full rule set over `lines`, with the source's
        parameters: rows in any order.

        DuckDB promises no order across its threads (and gives none across record batches); the
        caller puts the rows in line order from their line numbers. A statement is a lazy relation,
        made once and run again for each block: it reads whatever is registered as `lines` when
        it runs, and is parsed and bound once less per block (~5 ms, which is most of the cost
        of the full rule set on a block's few unusual lines).
        """
        if self._batch_rows is not None:
            batches = lines.to_batches(max_chunksize=self._batch_rows)
            lines = pa.Table.from_batches(batches, lines.schema)
        self._con.register("lines", lines)
        try:
            statement = self._statements.get((source, ordinary))
            if statement is None:
                text = parse_statement(source, ordinary)
                statement = self._con.sql(text, params=self._params[source])
                self._statements[source, ordinary] = statement
            return statement.to_arrow_table()
        finally:
            self._con.unregister("lines")


# What the full rule set says of a line it rejects.
_REJECTED = pa.schema([("line", pa.int64()), ("raw", pa.string()), ("reason", pa.string())])


def _records(source: str, file: str, rows: pa.Table) -> pa.Table:
    """Usable rows of either step in the source's record schema, with their file."""
    with_file = rows.append_column("file", pa.repeat(pa.scalar(file), rows.num_rows))
    return conform(with_file, RECORD_SCHEMAS[source])


def _positions(rows: pa.Table, first_line: int) -> np.ndarray:
    """Each row's index among the block's lines."""
    return rows.column("line").to_numpy() - first_line


def _where(rows: pa.Table, keep: pa.ChunkedArray) -> pa.Table:
    """`rows.filter(keep)`, as zero-copy slices where only a few rows go (the usual case)."""
    dropped = np.flatnonzero(~keep.to_numpy(zero_copy_only=False))
    if len(dropped) == 0:
        return rows
    if len(dropped) >= _MAX_RUNS:
        return rows.filter(keep)
    starts = np.concatenate(([0], dropped + 1)).tolist()
    ends = np.concatenate((dropped, [rows.num_rows])).tolist()
    return pa.concat_tables(
        [rows.slice(a, b - a) for a, b in zip(starts, ends, strict=True) if b > a]
        or [rows.slice(0, 0)]
    )


def _in_line_order(rows: pa.Table, first_line: int) -> pa.Table:
    """`rows` (each from a different line of one block) sorted by line, in linear time.

    The rows usually come as a few runs already in order (DuckDB returns the rows of each record
    batch it scanned together, and the few lines the full rule set accepted follow the rest):
    those runs are sliced into place without copying. Only a shuffle costs a `take`.
    """
    at = _positions(rows, first_line)
    if np.all(at[1:] > at[:-1]):
        return rows
    present = np.zeros(int(at.max()) + 1, dtype=bool)
    present[at] = True
    rank = np.cumsum(present) - 1  # a line's place among the lines present
    order = np.empty(len(at), dtype=np.int64)
    order[rank[at]] = np.arange(len(at))
    cuts = np.flatnonzero(order[1:] != order[:-1] + 1) + 1
    if len(cuts) >= _MAX_RUNS:
        return rows.take(order)
    starts = np.concatenate(([0], cuts)).tolist()
    ends = np.concatenate((cuts, [len(order)])).tolist()
    return pa.concat_tables(
        [rows.slice(int(order[a]), b - a) for a, b in zip(starts, ends, strict=True)]
    )


_MAX_RUNS = 256  # beyond this many runs, one take is cheaper than the slices


def _quarantine_rows(source: str, file: str, rejected: pa.Table, lines: pa.Table) -> pa.Table:
    raw = rejected.column("raw")
    if raw.null_count:
        # Lines that are not UTF-8 keep their text with replacement characters; they are rare, so
        # this loop runs over rejected lines only.
        first = lines.column("line")[0].as_py() if lines.num_rows else 0
        raw_bytes = lines.column("raw_bytes")
        raw = pa.array(
            [
                text
                if text is not None
                else raw_bytes[line - first].as_py().decode("utf-8", "replace")
                for text, line in zip(
                    raw.to_pylist(), rejected.column("line").to_pylist(), strict=True
                )
            ],
            pa.string(),
        )
    n = rejected.num_rows
    return pa.table(
        {
            "source": pa.repeat(pa.scalar(source), n),
            "file": pa.repeat(pa.scalar(file), n),
            "line": rejected.column("line"),
            "reason": rejected.column("reason"),
            "raw": raw,
            "job_id": pa.nulls(n, pa.string()),
        },
        schema=QUARANTINE,
    )


def quarantine_row(source: str, file: str, line: int, reason: str, raw: str) -> pa.Table:
    """One quarantine row for a record the reader set aside (an over-long line, a corrupt gzip
    stream's unreadable rest)."""
    return pa.table(
        {
            "source": [source],
            "file": [file],
            "line": [line],
            "reason": [reason],
            "raw": [raw],
            "job_id": pa.nulls(1, pa.string()),
        },
        schema=QUARANTINE,
    )
