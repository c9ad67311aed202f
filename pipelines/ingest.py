r"""The ingest pipeline: trace files -> the validated, de-duplicated record store.

    files | ReadLineBlocks | ParseTraceRecords | ReconcileJobs | WriteRecordStore
                                                             \ RecoverRawText (quarantine rows)

Writes, under a staging folder: `records/source=S/day=D/bucket=NNNN/part-0.parquet` (accepted
records with their file and line), `tables/quarantine/*.parquet` and
`tables/record_counts/part-0.parquet`. Every file is named after the bucket or input block it
holds, so a retried bundle overwrites its own output.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import apache_beam as beam
import pyarrow as pa
import pyarrow.compute as pc

from mpg.catalog import load_catalog
from mpg.pipelines.io import (
    TraceFile,
    read_line_blocks,
    record_store_file,
    recover_raw_text,
    stable_id,
    write_by_day,
    write_parquet,
)
from mpg.schemas import DAY_COLUMN, RECORD_COUNTS, SOURCES
from mpg.transforms.parse import ParsedBlock
from mpg.transforms.reconcile import BucketRecords
from mpg.transforms.steps import CountRecords, Counts, ParseTraceRecords, ReconcileJobs


def _write_parse_quarantine(parsed: ParsedBlock, staging: str) -> None:
    if parsed.quarantine.num_rows:
        first = parsed.quarantine.column("line")[0].as_py()
        name = f"part-{stable_id(f'{parsed.file}:{first}')}.parquet"
        write_parquet(parsed.quarantine, Path(staging) / "tables" / "quarantine" / name)


def _write_bucket(bucket: BucketRecords, staging: str) -> None:
    """The accepted records of one bucket into the record store."""
    records = bucket.records
    for source in SOURCES:
        write_by_day(
            records.table(source),
            DAY_COLUMN[source],
            Path(staging) / "records" / f"source={source}",
            record_store_file(records.bucket),
        )


def quarantine_refs_by_file(bucket: BucketRecords) -> Iterator[tuple[str, pa.Table]]:
    """The bucket's per-job quarantine rows, one table per input file they point into."""
    refs = bucket.quarantine
    for name in pc.unique(refs.column("file")).to_pylist():
        yield name, refs.filter(pc.equal(refs.column("file"), name))


def _write_recovered(
    grouped: tuple[str, Iterable[pa.Table]], files: dict[str, TraceFile], staging: str
) -> None:
    """Quarantine rows decided per job, with their raw text read back from input file `name`."""
    name, refs = grouped
    rows = recover_raw_text(files[name], pa.concat_tables(refs).sort_by("line"))
    out = Path(staging) / "tables" / "quarantine" / f"part-{stable_id(name)}-jobs.parquet"
    write_parquet(rows, out)


def _write_counts(per_source: list[tuple[str, Counts]], staging: str) -> None:
    totals = dict(per_source)
    rows = [(s, *totals.get(s, (0, 0, 0, 0))) for s in SOURCES]
    table = pa.table(
        {name: [r[i] for r in rows] for i, name in enumerate(RECORD_COUNTS.names)},
        schema=RECORD_COUNTS,
    )
    write_parquet(table, Path(staging) / "tables" / "record_counts" / "part-0.parquet")


def build_ingest(
    p: beam.Pipeline, files: list[TraceFile], buckets: int, block_bytes: int, staging: Path
) -> None:
    """Compose the ingest steps on `p`; step labels are stable (runners key state by them)."""
    out = str(staging)
    parsed = (
        p
        | "ListTraceFiles" >> beam.Create(files)
        | "ReadLineBlocks" >> beam.FlatMap(read_line_blocks, block_bytes)
        | "ParseTraceRecords" >> ParseTraceRecords(load_catalog())
    )
    reconciled = parsed | "ReconcileJobs" >> ReconcileJobs(buckets)
    _ = parsed | "WriteParseQuarantine" >> beam.Map(_write_parse_quarantine, out)
    _ = reconciled | "WriteRecordStore" >> beam.Map(_write_bucket, out)
    _ = (
        reconciled
        | "QuarantineRefsByFile" >> beam.FlatMap(quarantine_refs_by_file)
        | "GroupRefsByFile" >> beam.GroupByKey()
        | "RecoverRawText" >> beam.Map(_write_recovered, {f.name: f for f in files}, out)
    )
    _ = (
        (parsed, reconciled)
        | "CountRecords" >> CountRecords()
        | "GatherCounts" >> beam.combiners.ToList()
        | "WriteRecordCounts" >> beam.Map(_write_counts, out)
    )
