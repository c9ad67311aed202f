"""`mpg backfill`: one metric version recomputed over a range of days from the record store.

    mpg backfill --metric-version v2 --from 2026-01-01 --to 2026-06-30 --out DIR [--chunk-days 31]

A new metric definition is a new version written beside the old ones, never over them. Its
history is filled in from the current snapshot's record store (the raw logs may be long gone):
every job with job-day rows in the range is accounted again, whole, for that version alone, with
the snapshot's end of data, and its rows on those days are written beside the other versions'
(the same bucket and day steps as a run: `mpg.pipelines.accounting`, `mpg.pipelines.days`). The
state then records the version's coverage, so that later runs keep those days of it up to date
when late data restates them.

The range is done in chunks of `--chunk-days`, each published as its own snapshot like a run: a
backfill killed at any point leaves what it had published, and running the same command again
does only the days not yet covered. A range already covered is up to date: nothing runs.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterator

import apache_beam as beam
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from mpg.cli import progress
from mpg.core.errors import OptionsError, UserError
from mpg.definitions.catalog import load_catalog
from mpg.definitions.metrics import METRIC_VERSIONS
from mpg.output import runlog
from mpg.output.database import table_files
from mpg.output.lookup import end_of_data
from mpg.output.snapshot import read_current
from mpg.output.state_key import StateKey
from mpg.output.store import OutputStore
from mpg.pipelines.accounting import Accounting, replaced_per_day, write_days
from mpg.pipelines.bigquery_target import BigQueryTarget
from mpg.pipelines.buckets import RecordStore
from mpg.pipelines.days import DayTables, MergeJobTableDays
from mpg.pipelines.finish import Staged, data_files_after, table_changes
from mpg.pipelines.publish import Destinations, Writing, database_ahead, publish
from mpg.pipelines.result import RunResult
from mpg.pipelines.run import _day_files, recorded, writing
from mpg.pipelines.runners import pipeline_options
from mpg.pipelines.sinks import TABLE_CHANGES, WriteDayFiles, WriteTableChanges
from mpg.pipelines.sizing import bucket_count
from mpg.schemas import COST_RATES, DATA_FILES, SOURCES, VALIDATION_RESULTS
from mpg.transforms.reconcile import bucket_of_hash, reconcile_jobs

Span = tuple[datetime.date, datetime.date]


@dataclasses.dataclass(frozen=True)
class BackfillOptions:
    out: str
    metric_version: str
    first: datetime.date
    last: datetime.date
    chunk_days: int = 31
    beam_args: tuple[str, ...] = ()
    # Also publish each chunk's changed days to BigQuery (every table whole the first time).
    bigquery: BigQueryTarget | None = None
    log_level: str | None = None  # as RunOptions.log_level

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


def backfill(opts: BackfillOptions) -> list[RunResult]:
    """Fill in `opts.metric_version` over the range, one published snapshot per chunk; returns
    what each published (empty when the range was already covered)."""
    store = OutputStore(opts.out)
    published = []
    lease = runlog.new_run_id(datetime.datetime.now(datetime.UTC))
    with writing(store, lease) as held:
        if held.current is None:
            raise UserError(f"nothing to backfill: {opts.out} has no published run")
        todo = uncovered(held.current.key, opts.metric_version, opts.first, opts.last)
        days = sum((b - a).days + 1 for a, b in todo)
        over = held
        with progress.phase("days", unit="days", total=days) as step:
            for first, last in chunks(todo, opts.chunk_days):
                published.append(_backfill_chunk(opts, store, over, first, last))
                current, version = read_current(store)
                over = dataclasses.replace(over, current=current, version=version)
                step.advance((last - first).days + 1)
        progress.summary(days, unit="days")
    return published


@dataclasses.dataclass(frozen=True)
class _Chunk:
    """One chunk's work, for its bucket step."""

    records: RecordStore
    accounting: Accounting
    first: datetime.date
    last: datetime.date
    data_end: int | None


def backfill_bucket(bucket: int, chunk: _Chunk) -> Iterator[tuple[str, object]]:
    """Account the version again for the bucket's jobs with rows in the chunk's days."""
    records = chunk.records
    index = records.previous_index(bucket)
    overlaps = pc.and_(
        pc.less_equal(index.column("first_output_day"), chunk.last),
        pc.greater_equal(index.column("last_output_day"), chunk.first),
    )
    jobs = index.filter(overlaps)
    if not jobs.num_rows:
        return
    history = records.history(bucket, jobs)
    accepted = reconcile_jobs({s: history[s].drop_columns(["job_hash"]) for s in SOURCES}).records
    accounted = chunk.accounting.account(accepted, chunk.data_end)
    in_range = pl.col("day").is_between(chunk.first, chunk.last)
    replaced = replaced_per_day(jobs, accounted["job_day_goodput"]).filter(in_range)
    tables = {
        t: pl.from_arrow(accounted[t]).filter(in_range).to_arrow()
        for t in ("job_day_goodput", "chip_time_ledger")
    }
    yield from write_days(records.run, records.run.bucket_part(bucket), replaced, tables)


def _backfill_chunk(
    opts: BackfillOptions, store: OutputStore, over: Writing, first: datetime.date,
    last: datetime.date,
) -> RunResult:  # fmt: skip
    """Publish `opts.metric_version` over first..last, over the current snapshot."""
    current = over.current
    assert current is not None
    metric = opts.metric_version
    key = current.key.with_coverage(metric, first, last)
    target = "" if opts.bigquery is None else opts.bigquery.location
    key = dataclasses.replace(key, bigquery=target)
    command = f"backfill {metric} {first}..{last}"
    record = runlog.RunRecord.start(None, [], (metric,), command=command)
    run_id, run = record.run_id, store.run(record.run_id)
    ahead = database_ahead(run, key.current_metric_version)
    with recorded(store, record, opts.log_level), ahead as database:
        index = store.storage.parquet_file(current.state["jobs"]).read(
            columns=[
                "job_hash",
                "first_output_day",
                "last_output_day",
                *[f"rows_{s}" for s in SOURCES],
            ]
        )
        overlapping = index.filter(
            pc.and_(
                pc.less_equal(index.column("first_output_day"), last),
                pc.greater_equal(index.column("last_output_day"), first),
            )
        )
        rows = sum(pc.sum(overlapping.column(f"rows_{s}")).as_py() or 0 for s in SOURCES)
        buckets = bucket_count(rows)
        present = sorted(
            set(bucket_of_hash(overlapping.column("job_hash").to_numpy(), buckets).tolist())
        )
        files = store.read_parquet(current.state["files"], DATA_FILES)
        chunk = _Chunk(
            records=RecordStore(run, buckets, current.state["jobs"], frozenset()),
            accounting=Accounting(load_catalog(), (metric,), key.coverage),
            first=first,
            last=last,
            data_end=end_of_data(store, current)[0],
        )
        rates = store.read_parquets(table_files(files, "cost_rates"), COST_RATES)
        days = DayTables(run, _day_files(files), rates, frozenset([metric]))
        with beam.Pipeline(options=pipeline_options(opts.beam_args, buckets)) as p:
            _ = (
                p
                | "ListJobBuckets" >> beam.Create(present)
                | "BackfillBucket" >> beam.FlatMap(backfill_bucket, chunk)
                | "MergeJobTableDays" >> MergeJobTableDays(days)
                | "WriteDayFiles" >> WriteDayFiles(run)
                | "WriteTableChanges" >> WriteTableChanges(run)
            )
        changes = store.read_parquet(run.result(TABLE_CHANGES), DATA_FILES)
        kept = {t: _only(files, t) for t in ("quarantine", "record_counts", "cost_rates")}
        staged = Staged(
            run=run,
            key=key,
            state={k: v for k, v in current.state.items() if k != "files"},
            files=data_files_after(files, changes, kept),
            changes=table_changes(changes, {}, everything=False),
            source_results=_source_results(store, files),
            changed_days=tuple(
                (r["table"], r["day"])
                for r in changes.to_pylist()
                if r["table"] != "goodput_by_slice"
            ),
        )
        changed = sorted({d for _, d in staged.changed_days})
        bigquery_days = set(changed) if current.key.bigquery == key.bigquery else None
        to = Destinations(key.current_metric_version, opts.bigquery, bigquery_days)
        done = publish(staged, over, record, to, database)
    return RunResult(
        run_id=run_id,
        out=store.uri,
        scorecard=done.scorecard,
        days=done.days,
        counts=done.counts,
        files=0,
        skipped=[],
        expectations=done.expectations,
        warnings=done.warnings,
        plan=command,
        changed_days=[(t, d.isoformat()) for t, d in staged.changed_days],
        bigquery=done.bigquery,
        analyst=done.analyst,
    )


def _only(files: pa.Table, table: str) -> str | None:
    paths = files.filter(pc.equal(files.column("table"), table)).column("path").to_pylist()
    return paths[0] if paths else None


def _source_results(store: OutputStore, files: pa.Table) -> pa.Table:
    """The source suites' results as the current snapshot has them (a backfill reads no new
    records): its validation results less the output suites', which publishing runs again."""
    from mpg.quality import OUTPUT_SUITES

    path = _only(files, "validation_results")
    if path is None:
        return VALIDATION_RESULTS.empty_table()
    results = store.read_parquet(path, VALIDATION_RESULTS)
    outputs = pa.array(sorted({s.name for s in OUTPUT_SUITES}), pa.string())
    return results.filter(pc.invert(pc.is_in(results.column("suite"), outputs)))
