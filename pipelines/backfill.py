"""`mpg backfill`: one metric version recomputed over a range of days from the stored Parquet.

    mpg backfill --metric-version v2 --from 2026-01-01 --to 2026-06-30 --out DIR [--chunk-days 31]

A new metric definition is a new version written beside the old ones, never over them. Its
history is filled in from the record store of the current snapshot (the raw logs may be long
gone): every job with job-day rows in the range is accounted again, whole, for that version
alone, with the snapshot's end of data, and its rows on those days are written beside the other
versions' (`mpg.pipelines.job_tables.backfill_bucket`). The state then records the version's
coverage, so that later runs keep those days of it up to date when late data restates them.

The range is done in chunks of `--chunk-days`, each published as its own snapshot like a run:
a backfill killed at any point leaves what it had published, and running the same command
again does only the days not yet covered. A range already covered is up to date: nothing runs.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterator
from pathlib import Path

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions

from mpg import progress
from mpg.catalog import load_catalog
from mpg.errors import OptionsError, UserError
from mpg.metrics import METRIC_VERSIONS
from mpg.pipelines import runlog
from mpg.pipelines.bigquery_target import BigQueryTarget
from mpg.pipelines.buckets import UpdateContext
from mpg.pipelines.job_tables import backfill_bucket
from mpg.pipelines.layout import DATABASE, OutputLayout, link_snapshot
from mpg.pipelines.publish import PublishedRun
from mpg.pipelines.state import (
    CHANGED_DAYS,
    Previous,
    StateKey,
    bigquery_days,
    finish_state,
    load_previous,
)
from mpg.pipelines.transaction import publish, recorded, staged
from mpg.pipelines.update import write_json

Span = tuple[datetime.date, datetime.date]


@dataclasses.dataclass(frozen=True)
class BackfillOptions:
    out: Path
    metric_version: str
    first: datetime.date
    last: datetime.date
    chunk_days: int = 31
    beam_args: tuple[str, ...] = ()
    # Also publish each chunk's changed days to BigQuery (every table whole the first time).
    bigquery: BigQueryTarget | None = None

    def __post_init__(self) -> None:
        if self.metric_version not in METRIC_VERSIONS:
            known = ", ".join(METRIC_VERSIONS)
            raise OptionsError(f"unknown metric version {self.metric_version} (known: {known})")
        if self.first > self.last:
            raise OptionsError(f"--from {self.first} is after --to {self.last}")
        if self.chunk_days < 1:
            raise OptionsError("--chunk-days must be at least 1")


def uncovered(key: StateKey, version: str, first: datetime.date, last: datetime.date) -> list[Span]:
    """The parts of first..last that `version` has no rows for yet (all of it is covered for a
    version every run computes)."""
    if version in key.metric_versions:
        return []
    todo: list[Span] = []
    day = first
    for a, b in sorted(key.covered(version)):
        if b < day or a > last:
            continue
        if a > day:
            todo.append((day, a - datetime.timedelta(days=1)))
        day = max(day, b + datetime.timedelta(days=1))
    if day <= last:
        todo.append((day, last))
    return todo


def chunks(spans: list[Span], size: int) -> Iterator[Span]:
    for a, b in spans:
        while a <= b:
            end = min(b, a + datetime.timedelta(days=size - 1))
            yield a, end
            a = end + datetime.timedelta(days=1)


def backfill(opts: BackfillOptions) -> list[PublishedRun]:
    """Fill in `opts.metric_version` over the range, one published snapshot per chunk; returns
    what each published (empty when the range was already covered)."""
    layout = OutputLayout(opts.out)
    published = []
    with layout.locked():
        layout.clear_leftovers()
        runlog.settle_unfinished(layout.runs, layout.snapshot_ids())
        previous = load_previous(layout.current)
        if previous is None:
            raise UserError(f"nothing to backfill: {opts.out} has no published run with state")
        todo = uncovered(previous.key, opts.metric_version, opts.first, opts.last)
        days = sum((b - a).days + 1 for a, b in todo)
        with progress.phase("days", unit="days", total=days) as step:
            for first, last in chunks(todo, opts.chunk_days):
                published.append(_backfill_chunk(opts, layout, previous, first, last))
                previous = load_previous(layout.current)
                assert previous is not None
                step.advance((last - first).days + 1)
        progress.summary(days, unit="days")
    return published


def _backfill_chunk(
    opts: BackfillOptions,
    layout: OutputLayout,
    previous: Previous,
    first: datetime.date,
    last: datetime.date,
) -> PublishedRun:
    version = opts.metric_version
    key = previous.key.with_coverage(version, first, last)
    target = "" if opts.bigquery is None else opts.bigquery.location
    key = dataclasses.replace(key, bigquery=target)
    command = f"backfill {version} {first}..{last}"
    record = runlog.RunRecord.start(None, [], (version,), command=command)
    with recorded(layout, record), staged(layout, record) as staging:
        link_snapshot(previous.snapshot, staging)
        ctx = UpdateContext(
            staging=str(staging),
            previous=str(previous.snapshot),
            run_id=record.run_id,
            live={},
            new=frozenset(),
            catalog=load_catalog(),
            metric_versions=(version,),
            previous_data_end=previous.data_end,
            coverage=key.coverage,
        )
        buckets = sorted({b for b, _, _ in previous.bucket_ends()})
        with beam.Pipeline(options=PipelineOptions(list(opts.beam_args))) as p:
            _ = (
                p
                | "ListJobBuckets" >> beam.Create(buckets)
                | "BackfillBucket" >> beam.FlatMap(backfill_bucket, ctx, version, first, last)
                | "GatherChangedDays" >> beam.combiners.ToList()
                | "WriteChangedDays" >> beam.Map(write_json, staging / CHANGED_DAYS)
            )
        changed = finish_state(staging, previous.manifest, key)
        days = bigquery_days(previous.key, key, changed)
        done = publish(layout, staging, record, key.current_metric_version, opts.bigquery, days)
    return PublishedRun(
        run_id=record.run_id,
        database=opts.out / DATABASE,
        headline=done.headline,
        counts=done.counts,
        files=0,
        skipped=[],
        expectations=done.expectations,
        warnings=done.warnings,
        plan=command,
        changed_days=changed,
        bigquery=done.bigquery,
    )
