"""Parse and validate one block of a trace file, vectorised.

A block is a run of whole lines from one file (see `mpg.pipelines.io.read_line_blocks`, which
sets aside lines over its length limit). The lines are cut with numpy (no Python loop per line),
then one DuckDB query per source (`sql/parse/<source>.sql`) decodes UTF-8, parses the JSON, checks
every field and types the columns. Rows with a reason go to the quarantine; the rest come out in
the source's record schema (`mpg.schemas`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from mpg.catalog import ChipCatalog
from mpg.schemas import QUARANTINE, RECORD_SCHEMAS, conform
from mpg.sqlfiles import load_sql
from mpg.vocabulary import (
    EVENT_TYPES,
    FRAMEWORKS,
    JOB_STATES,
    KINDS_WITH_STEP,
    SPAN_KINDS,
    WORKLOAD_CLASSES,
)

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


def line_bounds(buf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
    # Between a line's text and the next line lie its line break's one or two bytes: drop them.
    gap = np.append(starts[1:], len(buf)) - ends
    keep = np.ones(len(buf), dtype=bool)
    keep[ends[gap > 0]] = False
    keep[ends[gap > 1] + 1] = False
    offsets = np.concatenate(([0], np.cumsum(ends - starts))).astype(np.int64)
    raw = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), len(ends), [None, pa.py_buffer(offsets), pa.py_buffer(buf[keep])]
    )
    numbers = pa.array(np.arange(first_line, first_line + len(ends), dtype=np.int64))
    return pa.table({"line": numbers, "raw_bytes": raw})


class BlockParser:
    """Holds one in-memory DuckDB connection with the parse macros loaded; reuse it per worker."""

    def __init__(self, catalog: ChipCatalog) -> None:
        self._con = duckdb.connect()
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

    def parse(self, source: str, file: str, data: bytes, first_line: int = 1) -> ParsedBlock:
        lines = split_lines(data, first_line)
        self._con.register("lines", lines)
        try:
            checked = self._con.sql(
                load_sql(f"parse/{source}.sql"), params=self._params[source]
            ).to_arrow_table()
        finally:
            self._con.unregister("lines")
        bad = pc.is_valid(checked.column("reason"))
        good = checked.filter(pc.invert(bad))
        records = conform(
            good.append_column("file", pa.repeat(pa.scalar(file), good.num_rows)),
            RECORD_SCHEMAS[source],
        )
        return ParsedBlock(
            source=source,
            file=file,
            records=records,
            quarantine=_quarantine_rows(source, file, checked.filter(bad), lines),
            lines_read=lines.num_rows,
        )


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
        },
        schema=QUARANTINE,
    )


def quarantine_row(source: str, file: str, line: int, reason: str, raw: str) -> pa.Table:
    """One quarantine row for a record the reader set aside (an over-long line, a corrupt gzip
    stream's unreadable rest)."""
    return pa.table(
        {"source": [source], "file": [file], "line": [line], "reason": [reason], "raw": [raw]},
        schema=QUARANTINE,
    )
