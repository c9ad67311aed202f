r"""The domain steps as Beam PTransforms: thin wrappers that apply the pure functions to coarse
elements (blocks of lines, job buckets), so Beam's per-element cost is paid per block, not per
record.

    blocks | ParseTraceRecords(catalog) | split_by_bucket ...  (mpg.pipelines.update)
    job buckets' records | ValidateRecords(catalog)
"""

from __future__ import annotations

from collections.abc import Iterator

import apache_beam as beam
import numpy as np
import pyarrow as pa

from mpg.catalog import ChipCatalog
from mpg.quality import BucketValidator, combine_results
from mpg.schemas import RECORD_SCHEMAS
from mpg.transforms.parse import BlockParser, ParsedBlock, quarantine_row
from mpg.transforms.reconcile import JobRecords, bucket_of


class _ParseBlocks(beam.DoFn):
    def __init__(self, catalog: ChipCatalog) -> None:
        self._catalog = catalog
        self._parser: BlockParser | None = None

    def setup(self) -> None:
        self._parser = BlockParser(self._catalog)

    def teardown(self) -> None:
        if self._parser is not None:
            self._parser.close()

    def process(self, block) -> Iterator[ParsedBlock]:  # block: mpg.pipelines.io.LineBlock
        assert self._parser is not None
        yield parse_block(self._parser, block)


def parse_block(parser: BlockParser, block) -> ParsedBlock:  # block: mpg.pipelines.io.LineBlock
    """One block of lines parsed; or the record the reader set aside, quarantined."""
    source, name = block.file.source, block.file.name
    if block.problem is None:
        return parser.parse(source, name, block.data, block.first_line)
    # A line over the length limit, or a corrupt stream's unreadable rest: one quarantined record,
    # even where its text happens to parse.
    return ParsedBlock(
        source=source,
        file=name,
        records=RECORD_SCHEMAS[source].empty_table(),
        quarantine=quarantine_row(
            source, name, block.first_line, block.problem, block.data.decode("utf-8", "replace")
        ),
        lines_read=1,
    )


class ParseTraceRecords(beam.PTransform):
    """Blocks of trace lines -> ParsedBlock (typed records, quarantine rows)."""

    def __init__(self, catalog: ChipCatalog) -> None:
        super().__init__()
        self._catalog = catalog

    def expand(self, blocks):
        return blocks | "ParseBlock" >> beam.ParDo(_ParseBlocks(self._catalog))


def split_by_bucket(
    parsed: ParsedBlock, buckets: int
) -> Iterator[tuple[int, tuple[str, pa.Table]]]:
    """The records of one block, cut into one table per job bucket present.

    One stable sort by bucket, then a `take` per bucket: compact tables, never slices (a pickled
    slice of an Arrow table carries its parent's whole buffers through the shuffle).
    """
    records = parsed.records
    if records.num_rows == 0:
        return
    bucket = bucket_of(records.column("job_id"), buckets).to_numpy()
    order = np.argsort(bucket, kind="stable")
    keys = bucket[order]
    starts = np.flatnonzero(np.diff(keys, prepend=-1))
    ends = np.append(starts[1:], len(keys))
    for start, end in zip(starts, ends, strict=True):
        yield int(keys[start]), (parsed.source, records.take(pa.array(order[start:end])))


class _CheckSourceSuites(beam.DoFn):
    """Runs the source expectation suites; Great Expectations starts once per worker."""

    def __init__(self, catalog: ChipCatalog) -> None:
        self._catalog = catalog
        self._validator: BucketValidator | None = None

    def setup(self) -> None:
        self._validator = BucketValidator(self._catalog)

    def process(self, buckets: list[JobRecords]) -> Iterator[pa.Table]:
        yield self._validator(JobRecords.merged(buckets))


class ValidateRecords(beam.PTransform):
    """JobRecords -> one VALIDATION_RESULTS table: the source suites over every bucket's records.

    Great Expectations costs a fixed few milliseconds per expectation and call, whatever the
    rows, so buckets are checked several at a time; the parts then add up (`combine_results`).
    """

    def __init__(self, catalog: ChipCatalog, buckets_per_check: int = 16) -> None:
        super().__init__()
        self._catalog = catalog
        self._size = buckets_per_check

    def expand(self, buckets):
        return (
            buckets
            | "BatchBuckets" >> beam.BatchElements(self._size, self._size)
            | "CheckSourceSuites" >> beam.ParDo(_CheckSourceSuites(self._catalog))
            | "CombineResults" >> beam.CombineGlobally(combine_results)
        )
