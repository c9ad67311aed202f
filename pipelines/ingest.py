"""Ingest: new trace files read, parsed and validated, their records cut into job buckets.

    parts | ReadLineBlocks     -> blocks of whole lines          (+ `digests`: each file's SHA-256)
          | ParseTraceRecords  -> typed records and refused lines (mpg.transforms.steps)
          | WriteParsedRecords -> (bucket, ParsedRef)            (+ `refused`, `counts`)
    (digests, counts) | DescribeFiles -> FileStats, the manifest's row per file

One worker reads a file's part (`mpg.pipelines.io.file_parts`: a whole file, or a large file's
share) in blocks (`read_line_blocks`); the one that reads a file to its end hashes its bytes as
they pass, so no process reads the fleet just to hash it. The three steps fuse: a block goes to
the process's parsers as soon as it is read (`mpg.transforms.steps`), is written as soon as it is
parsed, and never crosses a shuffle. Each block's records go to one scratch file, a record batch
per job bucket; only the file's name and the batch's number go on through the shuffle
(`ParsedRef`), never the records, which the local runner would hold in memory.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import apache_beam as beam
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from mpg.definitions.catalog import ChipCatalog
from mpg.output.store import RunFiles
from mpg.pipelines.coders import in_memory
from mpg.pipelines.io import FilePart, LineBlock, read_line_blocks, stable_id
from mpg.schemas import STORED_SCHEMAS
from mpg.transforms.parse import ParsedBlock
from mpg.transforms.reconcile import bucket_of_hash, job_hash_of
from mpg.transforms.steps import ParseTraceRecords

in_memory(LineBlock, ParsedBlock)


@dataclass(frozen=True)
class ParsedRef:
    """One job bucket's share of one block's parsed records: a batch of a scratch file."""

    source: str
    path: str
    batch: int
    rows: int


@dataclass(frozen=True)
class FileStats:
    """What ingesting one input file found: its manifest row."""

    source: str
    name: str
    size: int
    mtime_ns: int
    sha256: str
    lines_read: int
    quarantined: int

    def row(self) -> dict[str, object]:
        return dict(self.__dict__)


def file_rows(stats: Iterable[FileStats]) -> list[dict[str, object]]:
    """The files' manifest rows, by name (the same files give the same bytes)."""
    return [s.row() for s in sorted(stats, key=lambda s: s.name)]


def by_bucket(records: pa.Table, buckets: int) -> list[tuple[int, pa.Table]]:
    """Records with their job hash, put in job-bucket order by one `take` and cut into a slice
    per job bucket present. The slices share that table's buffers: they are for one scratch
    file, whose IPC writer stores each slice's own rows (a slice pickled alone would carry the
    whole table; one `take` per bucket cost 2-4x as much)."""
    hashes = job_hash_of(records.column("job_id"))
    records = records.add_column(0, "job_hash", hashes)
    bucket = bucket_of_hash(hashes.to_numpy(), buckets)
    order = np.argsort(bucket, kind="stable")
    keys = bucket[order]
    starts = np.flatnonzero(np.diff(keys, prepend=-1))
    ends = np.append(starts[1:], len(keys))
    ordered = records.take(pa.array(order))
    return [(int(keys[s]), ordered.slice(s, e - s)) for s, e in zip(starts, ends, strict=True)]


class _ReadBlocks(beam.DoFn):
    def __init__(self, block_bytes: int) -> None:
        self._block_bytes = block_bytes

    def process(self, part: FilePart) -> Iterator:
        # the part read to the file's end reads, and hashes, all of it
        digest = hashlib.sha256() if part.end is None else None
        yield from read_line_blocks(part.file, self._block_bytes, digest, part.start, part.end)
        if digest is not None:
            file = part.file
            yield beam.pvalue.TaggedOutput("digests", (file.name, (file, digest.hexdigest())))


def _first_line(parsed: ParsedBlock) -> int:
    """The block's first line number: every line of a block is a record or refused."""
    lines = [t.column("line") for t in (parsed.records, parsed.quarantine) if t.num_rows]
    return min(pc.min(c).as_py() for c in lines)


class _WriteParsed(beam.DoFn):
    def __init__(self, run: RunFiles, buckets: int) -> None:
        self._run, self._buckets = run, buckets

    def process(self, parsed: ParsedBlock) -> Iterator:
        block = (parsed.source, stable_id(parsed.file), _first_line(parsed))
        store = self._run.store
        if parsed.records.num_rows:
            parts = by_bucket(parsed.records, self._buckets)
            path = self._run.parsed(*block)
            schema = STORED_SCHEMAS[parsed.source]
            store.write_scratch(path, [t.cast(schema) for _, t in parts])
            for batch, (bucket, table) in enumerate(parts):
                yield bucket, ParsedRef(parsed.source, path, batch, table.num_rows)
        if parsed.quarantine.num_rows:
            path = self._run.refused(*block)
            store.write_scratch(path, [parsed.quarantine])
            yield beam.pvalue.TaggedOutput("refused", path)
        counts = (parsed.lines_read, parsed.quarantine.num_rows)
        yield beam.pvalue.TaggedOutput("counts", (parsed.file, counts))


def _add_counts(counts: Iterable[tuple[int, int]]) -> tuple[int, int]:
    lines = refused = 0
    for a, b in counts:
        lines, refused = lines + a, refused + b
    return lines, refused


def _file_stats(element: tuple[str, dict[str, list]]) -> FileStats:
    _, found = element
    (file, sha256), counts = found["digests"][0], found["counts"]
    lines, refused = counts[0] if counts else (0, 0)
    return FileStats(file.source, file.name, file.size, file.mtime_ns, sha256, lines, refused)


class IngestTraceFiles(beam.PTransform):
    """Trace files' parts (`FilePart`) -> (bucket, ParsedRef) (`parsed`), scratch paths of
    refused lines (`refused`) and one FileStats per file (`files`)."""

    def __init__(self, run: RunFiles, catalog: ChipCatalog, buckets: int, block_bytes: int) -> None:
        super().__init__()
        self._run, self._catalog = run, catalog
        self._buckets, self._block_bytes = buckets, block_bytes

    def expand(self, parts):
        # blocks and parsed blocks: types with their own coder (`mpg.pipelines.coders`), never
        # encoded, as they go from one fused step to the next
        reader = beam.ParDo(_ReadBlocks(self._block_bytes)).with_output_types(
            LineBlock, digests=beam.typehints.Any
        )
        read = parts | "ReadLineBlocks" >> reader.with_outputs("digests", main="blocks")
        written = (
            read.blocks
            | "ParseTraceRecords" >> ParseTraceRecords(self._catalog)
            | "WriteParsedRecords"
            >> beam.ParDo(_WriteParsed(self._run, self._buckets)).with_outputs(
                "refused", "counts", main="parsed"
            )
        )
        per_file = written.counts | "SumPerFile" >> beam.CombinePerKey(_add_counts)
        stats = (
            {"digests": read.digests, "counts": per_file}
            | "JoinPerFile" >> beam.CoGroupByKey()
            | "DescribeFiles" >> beam.Map(_file_stats)
        )
        return {"parsed": written.parsed, "refused": written.refused, "files": stats}
