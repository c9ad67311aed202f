"""The source expectation suites inside a run, on the records of the jobs that changed.

    BucketUpdates | CheckSourceSuites -> one VALIDATION_RESULTS table

Great Expectations costs a fixed few milliseconds per expectation and call, whatever the rows
(mpg/quality/engine.py), so buckets are checked together: `CheckSourceSuites` gathers the
buckets' references (their record counts, nothing more) and cuts them into groups of at most
RECORDS_PER_BUCKET records; each group's accepted records are read back from scratch and checked
in one call, and the parts are added up (`combine_results`). Memory stays within one bucket's
worth of records, and a run of many small buckets pays GX's fixed cost once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import apache_beam as beam
import pyarrow as pa

from mpg.catalog import ChipCatalog
from mpg.pipelines.buckets import BucketUpdate, read_records
from mpg.pipelines.state import RECORDS_PER_BUCKET
from mpg.pipelines.store import OutputStore
from mpg.schemas import VALIDATION_RESULTS
from mpg.transforms.reconcile import JobRecords


def groups_by_size(
    updates: Iterable[BucketUpdate], limit: int = RECORDS_PER_BUCKET
) -> list[list[str]]:
    """The updates' scratch names, in groups of at most `limit` records (a bigger bucket alone)."""
    groups: list[list[str]] = []
    size = 0
    for update in sorted(updates, key=lambda u: u.bucket):
        if not groups or size + update.accepted > limit:
            groups.append([])
            size = 0
        groups[-1].append(update.records)
        size += update.accepted
    return groups


class _CheckGroup(beam.DoFn):
    """Runs the source suites; Great Expectations starts once per worker."""

    def __init__(self, store: OutputStore, run_id: str, catalog: ChipCatalog) -> None:
        self._store, self._run_id, self._catalog = store, run_id, catalog
        self._validator = None

    def setup(self) -> None:
        from mpg.quality import BucketValidator

        self._validator = BucketValidator(self._catalog)

    def process(self, names: list[str]) -> Iterator[pa.Table]:
        assert self._validator is not None
        parts = [read_records(self._store, self._run_id, n) for n in names]
        yield self._validator(JobRecords.merged(parts))


def _combine(parts: Iterable[pa.Table]) -> pa.Table:
    from mpg.quality import combine_results

    parts = list(parts)
    return combine_results(parts) if parts else VALIDATION_RESULTS.empty_table()


class CheckSourceSuites(beam.PTransform):
    """BucketUpdates -> the source suites' VALIDATION_RESULTS over their changed jobs' records
    (no element when no bucket changed)."""

    def __init__(self, store: OutputStore, run_id: str, catalog: ChipCatalog) -> None:
        super().__init__()
        self._fn = _CheckGroup(store, run_id, catalog)

    def expand(self, updates):
        return (
            updates
            | "GatherBuckets" >> beam.combiners.ToList()
            | "GroupBySize" >> beam.FlatMap(groups_by_size)
            | "CheckGroup" >> beam.ParDo(self._fn)
            | "CombineResults" >> beam.CombineGlobally(_combine).without_defaults()
        )
