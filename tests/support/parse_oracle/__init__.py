"""The block parser as it was before issue 13's fast path: a frozen oracle for the differential
test (tests/unit/test_parse_differential.py), never used by the pipeline.

The SQL beside this file is a verbatim copy of `sql/parse/` at commit 12cf9d5, and the code
below the parse logic of `mpg.transforms.parse` at that commit. The new parser must produce the
same records, quarantine rows and line counts as this one on every input; change nothing here
unless a rule in docs/decisions.md ("Reading records") itself changes, and then in the same
commit as the parser.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from mpg.definitions.catalog import ChipCatalog
from mpg.definitions.vocabulary import (
    FRAMEWORKS,
    JOB_STATES,
    KINDS_WITH_STEP,
    SPAN_KINDS,
    WORKLOAD_CLASSES,
)
from mpg.schemas import QUARANTINE, RECORD_SCHEMAS, conform
from mpg.transforms.parse import TIME_WINDOW, ParsedBlock

_SQL = Path(__file__).parent
_NEWLINE = 10
_CARRIAGE_RETURN = 13


def _line_bounds(buf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    breaks = np.flatnonzero(buf == _NEWLINE)
    unterminated = len(buf) > 0 and buf[-1] != _NEWLINE
    ends = np.append(breaks, len(buf)) if unterminated else breaks
    starts = np.concatenate(([0], breaks + 1))[: len(ends)].astype(np.int64)
    crlf = (ends > starts) & (buf[np.maximum(ends - 1, 0)] == _CARRIAGE_RETURN)
    return starts, ends - crlf.astype(np.int64)


def _split_lines(data: bytes, first_line: int) -> pa.Table:
    buf = np.frombuffer(data, dtype=np.uint8)
    starts, ends = _line_bounds(buf)
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


class OracleParser:
    """`BlockParser` as of commit 12cf9d5: same constructor, `parse` and `close`."""

    def __init__(self, catalog: ChipCatalog) -> None:
        self._con = duckdb.connect()
        self._con.execute("SET TimeZone = 'UTC'")
        self._con.execute((_SQL / "macros.sql").read_text())
        window = {"min_time": TIME_WINDOW[0], "max_time": TIME_WINDOW[1]}
        self._params: dict[str, dict[str, list[str] | datetime]] = {
            "scheduler": {
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
        lines = _split_lines(data, first_line)
        self._con.register("lines", lines)
        try:
            checked = self._con.sql(
                (_SQL / f"{source}.sql").read_text(), params=self._params[source]
            ).to_arrow_table()
        finally:
            self._con.unregister("lines")
        bad = pc.is_valid(checked.column("reason"))
        good = checked.filter(pc.invert(bad))
        for name in set(RECORD_SCHEMAS[source].names) - {*good.column_names, "file"}:
            # Columns the schemas gained after the freeze (a step's rank): the old rules read
            # none, so none is what they would have given.
            good = good.append_column(name, pa.nulls(good.num_rows, pa.int64()))
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
            "job_id": pa.nulls(n, pa.string()),  # a column added since: a parse row names none
        },
        schema=QUARANTINE,
    )
