"""Accounting a job bucket: chip-time per job and day, as soon as the data allows.

    Updated | settle_bucket -> BucketUpdate, (day, DayRef)          in the update step
    (BucketUpdates, idle buckets), end of data | AccountJobs -> (day, DayRef)  job-table rows
                                                             -> jobs           the bucket's index

A job that ended (JOB_END) has rows the rest of the fleet cannot change, so the update step
accounts its changed ones at once, on the records it has just reconciled (`settle_bucket`): no
second pass over them. A job without JOB_END wants chips up to the end of data, the latest
accepted record over the whole fleet, so its accounting waits for every bucket's update; then
each bucket accounts its changed open jobs and, when the end of data moved, all its open ones
(read back from the record store, `RecordStore.history`, where no update touched them). Rows go
to scratch sorted by day, a batch per day, with the jobs whose rows that day holds or held:
`mpg.pipelines.days` replaces exactly those jobs' rows.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import apache_beam as beam
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from mpg.definitions.catalog import ChipCatalog
from mpg.output.state_key import Coverage
from mpg.output.store import RunFiles
from mpg.pipelines.buckets import (
    _UPDATED,
    BucketUpdate,
    RecordStore,
    Updated,
    read_records,
    write_records,
)
from mpg.schemas import JOB_INDEX, PUBLISHED, SOURCES, conform
from mpg.transforms.account import goodput_tables, sweep_chip_time
from mpg.transforms.checkpoints import checkpoint_advice
from mpg.transforms.reconcile import JobRecords, reconcile_jobs
from mpg.transforms.step_times import step_time_stats

# What accounting a job gives, per day (checkpoint advice: on the job's last day).
JOB_TABLES = (
    "job_day_goodput",
    "chip_time_ledger",
    "step_time_stats",
    "step_rank_stragglers",
    "checkpoint_advice",
)
# Of them, those each metric version has rows of (a backfill replaces one version's rows).
VERSIONED = ("job_day_goodput", "chip_time_ledger")
# Per day, the jobs whose rows are replaced there (those it held, and those it gets).
REPLACED = pa.schema([pa.field("job_id", pa.string(), nullable=False)])


@dataclass(frozen=True)
class Accounting:
    """How to account: the chip catalog and the metric versions (each within its coverage)."""

    catalog: ChipCatalog
    metric_versions: tuple[str, ...]
    coverage: Coverage = ()

    def account(self, records: JobRecords, data_end: int | None) -> dict[str, pa.Table]:
        """The JOB_TABLES rows of some whole jobs' accepted records, each job's together and in
        RECORD_ORDER (as `reconcile_jobs` leaves them, and filters and concatenations of whole
        jobs keep them)."""
        if not records.scheduler.num_rows or data_end is None:
            return {t: PUBLISHED[t].empty_table() for t in JOB_TABLES}
        sweep = sweep_chip_time(
            records.scheduler, records.runtime, records.profiles, data_end, in_job_order=True
        )
        job_days, ledger = goodput_tables(sweep, self.catalog, self.metric_versions)
        steps, ranks = step_time_stats(sweep)
        return {
            "job_day_goodput": in_coverage(job_days, self.coverage),
            "chip_time_ledger": in_coverage(ledger, self.coverage),
            "step_time_stats": steps,
            "step_rank_stragglers": ranks,
            "checkpoint_advice": checkpoint_advice(sweep),
        }


def in_coverage(rows: pa.Table, coverage: Coverage) -> pa.Table:
    """Rows of backfilled versions only on the days each is backfilled over."""
    days = rows.column("day")
    for version, spans in coverage:
        keep = pc.not_equal(rows.column("metric_version"), version)
        for first, last in spans:
            keep = pc.or_(keep, pc.and_(pc.greater_equal(days, first), pc.less_equal(days, last)))
        rows, days = rows.filter(keep), days.filter(keep)
    return rows


@dataclass(frozen=True)
class DayRef:
    """One bucket's rows of one day: batch `batch` of its scratch files of that day's tables."""

    name: str  # scratch name of the bucket's files (`day_files`)
    batch: int


def day_files(run: RunFiles, name: str) -> dict[str, str]:
    """The scratch files of one bucket's job-table rows, a batch per day, and the jobs replaced."""
    return {t: run.day_rows(name, t) for t in (*JOB_TABLES, "replaced")}


def _days_of(first: datetime.date | None, last: datetime.date | None) -> list[datetime.date]:
    if first is None or last is None:
        return []
    return [first + datetime.timedelta(days=i) for i in range((last - first).days + 1)]


def replaced_per_day(previous: pa.Table, job_days: pa.Table) -> pl.DataFrame:
    """(day, job_id): where each accounted job had rows (its previous JOB_INDEX range) or now
    has them; `previous` holds the accounted jobs' previous index rows."""
    held = [
        (day, job)
        for job, first, last in zip(
            previous.column("job_id").to_pylist(),
            previous.column("first_output_day").to_pylist(),
            previous.column("last_output_day").to_pylist(),
            strict=True,
        )
        for day in _days_of(first, last)
    ]
    old = pl.DataFrame(held, schema={"day": pl.Date, "job_id": pl.String}, orient="row")
    new = pl.from_arrow(job_days.select(["day", "job_id"]))
    return pl.concat([old, new]).unique().sort("day", "job_id")


def write_days(
    run: RunFiles, name: str, replaced: pl.DataFrame, tables: dict[str, pa.Table]
) -> Iterator[tuple[str, DayRef]]:
    """Scratch files with one batch per day (the same days in the same order in each), and a
    DayRef per day. `tables` holds JOB_TABLES rows, all of them for a run, only the VERSIONED
    ones for a backfill (which merges no others)."""
    days = replaced.get_column("day").unique().sort().to_list()
    if not days:
        return
    files = day_files(run, name)
    parts = {"replaced": conform(replaced.select("day", "job_id").to_arrow(), _REPLACED_DAY)}
    parts.update(tables)
    for table, rows in parts.items():
        column = rows.column("day")
        run.store.write_scratch(
            files[table],
            [
                rows.filter(pc.equal(column, pa.scalar(day, pa.date32()))).drop_columns(
                    ["day"] if table == "replaced" else []
                )
                for day in days
            ],
        )
    for batch, day in enumerate(days):
        yield day.isoformat(), DayRef(name, batch)  # keys must encode deterministically


_REPLACED_DAY = pa.schema([pa.field("day", pa.date32(), nullable=False), *REPLACED])


def _output_days(job_days: pa.Table) -> pl.DataFrame:
    return (
        pl.from_arrow(job_days.select(["job_id", "day"]))
        .group_by("job_id")
        .agg(
            pl.col("day").min().alias("first_output_day"),
            pl.col("day").max().alias("last_output_day"),
        )
    )


def settle_bucket(
    records: RecordStore, accounting: Accounting, updated: Updated
) -> tuple[BucketUpdate, list[tuple[str, DayRef]]]:
    """Account the bucket's changed jobs that ended while their records are in memory, and
    hand the rest on in scratch: to `account_bucket` the bucket's jobs (output days set where
    settled here) and its open jobs' records, to `RecoverQuarantinedText` the references of its
    refused records. Returns the update and the settled jobs' day refs."""
    run = records.run
    name = run.bucket_part(updated.bucket)
    jobs = updated.jobs.with_columns((pl.col("accounted") & pl.col("open").not_()).alias("settled"))
    settled = jobs.filter(pl.col("settled")).get_column("job_id")
    accepted, data_end = updated.accepted, updated.data_end
    ended = accepted.split(settled.to_arrow())
    tables = accounting.account(ended[0], data_end)  # which the end of data does not change
    job_days = tables["job_day_goodput"]
    previous = updated.index.filter(pc.is_in(updated.index.column("job_id"), settled.to_arrow()))
    settled_part = run.bucket_part(updated.bucket, settled=True)
    days = list(write_days(run, settled_part, replaced_per_day(previous, job_days), tables))
    jobs = jobs.drop("first_output_day", "last_output_day").join(
        _output_days(job_days), on="job_id", how="left", maintain_order="left"
    )
    jobs_path = run.bucket_jobs(updated.bucket)
    run.store.write_scratch(jobs_path, [conform(jobs.to_arrow(), _UPDATED)])
    write_records(run, name, ended[1])
    run.store.write_scratch(run.quarantine_refs(updated.bucket), [updated.refused])
    return BucketUpdate(updated.bucket, name, jobs_path, data_end, updated.vanished), days


def account_bucket(
    item: BucketUpdate | int,
    records: RecordStore,
    accounting: Accounting,
    previous_end: int | None,
    data_end: int | None,
) -> Iterator:
    """Account one bucket (its update, or the number of a bucket nothing touched whose open
    jobs the end of data may move); yields (day, DayRef), then its index rows' scratch path
    (`jobs`)."""
    run = records.run
    bucket = item if isinstance(item, int) else item.bucket
    moved = data_end != previous_end
    index = records.previous_index(bucket)
    vanished: tuple[str, ...] = ()
    if isinstance(item, int):
        updated, accepted = pl.from_arrow(_UPDATED.empty_table()), JobRecords.empty()
    else:
        updated = pl.from_arrow(run.store.read_scratch(item.jobs))
        accepted = read_records(run, item.records)
        vanished = item.vanished
    gone = pl.Series(vanished, dtype=pl.String)
    rewritten = pl.concat([updated.get_column("job_id"), gone])
    untouched = pl.from_arrow(index).filter(pl.col("job_id").is_in(rewritten.implode()).not_())
    woken = untouched.filter(pl.col("open")) if moved else untouched.clear()
    if woken.height:
        history = records.history(bucket, woken.to_arrow())
        again = reconcile_jobs({s: history[s].drop_columns(["job_hash"]) for s in SOURCES})
        accepted = JobRecords.merged([accepted, again.records])
    # What the update did not settle: its changed open jobs, and every open one if the end of
    # data moved.
    unsettled = pl.col("accounted") & pl.col("settled").not_()
    to_account = updated.filter(unsettled | (pl.col("open") & moved))
    ids = pl.concat([to_account.get_column("job_id"), woken.get_column("job_id")])
    # The update left the open jobs' records: only an end of data that did not move leaves some
    # of them out (no pass over the records when it moved).
    if to_account.height < updated.filter(pl.col("open")).height:
        accepted = JobRecords(
            **{
                s: accepted.table(s).filter(
                    pc.is_in(accepted.table(s).column("job_id"), ids.to_arrow())
                )
                for s in SOURCES
            }
        )
    tables = accounting.account(accepted, data_end)
    job_days = tables["job_day_goodput"]
    # Where the accounted jobs had rows, and the jobs that vanished (they get none now).
    previous = pl.from_arrow(index).filter(pl.col("job_id").is_in(pl.concat([ids, gone]).implode()))
    replaced = replaced_per_day(previous.to_arrow(), job_days)
    if moved and previous_end is not None and data_end is not None:
        # Open jobs accounted only because the end of data moved (later, or earlier when files
        # were retracted): their records are as they were, so their rows before the day of the
        # earlier end are too.
        unchanged = pl.concat(
            [
                woken.get_column("job_id"),
                updated.filter(pl.col("accounted").not_()).get_column("job_id"),
            ]
        )
        since = _day_of(min(previous_end, data_end))
        replaced, tables = _since(since, unchanged, replaced, tables)
    yield from write_days(run, run.bucket_part(bucket), replaced, tables)
    jobs = _index_rows(updated, woken, pl.from_arrow(index), ids, job_days)
    jobs_path = run.bucket_index(bucket)
    run.store.write_scratch(jobs_path, [jobs])
    yield beam.pvalue.TaggedOutput("jobs", jobs_path)


def _day_of(instant_us: int) -> datetime.date:
    """The UTC day of an instant in epoch microseconds."""
    return (datetime.datetime(1970, 1, 1) + datetime.timedelta(microseconds=instant_us)).date()


def _since(
    day: datetime.date, jobs: pl.Series, replaced: pl.DataFrame, tables: dict[str, pa.Table]
) -> tuple[pl.DataFrame, dict[str, pa.Table]]:
    """`replaced` and `tables` without `jobs`' rows before `day`: for an open job whose records
    did not change, moving the end of data changes its wanted and allocated time from the
    earlier end on, and moves its advice to its new last day; nothing before that day changes.
    Merging those days again would read (and, on object storage, fetch) every day of its
    history to write nothing (docs/operations.md, "Cost")."""
    if jobs.is_empty():
        return replaced, tables
    earlier = pl.col("job_id").is_in(jobs.implode()) & (pl.col("day") < day)
    replaced = replaced.filter(earlier.not_())
    ids = pa.array(jobs.to_list(), pa.string())
    kept = {
        name: rows.filter(
            pc.invert(
                pc.and_(
                    pc.is_in(rows.column("job_id"), ids),
                    pc.less(rows.column("day"), pa.scalar(day, pa.date32())),
                )
            )
        )
        for name, rows in tables.items()
    }
    return replaced, kept


def _index_rows(
    updated: pl.DataFrame,
    woken: pl.DataFrame,
    index: pl.DataFrame,
    accounted: pl.Series,
    job_days: pa.Table,
) -> pa.Table:
    """JOB_INDEX rows of every job the bucket rewrote or accounted: output days from this run
    where it accounted the job (here, or settled in the update), else from the previous index."""
    days = _output_days(job_days)
    old_days = index.select("job_id", "first_output_day", "last_output_day")
    settled = updated.filter(pl.col("settled")).drop("accounted", "settled")
    rows = pl.concat(
        [
            updated.filter(pl.col("settled").not_()).drop(
                "accounted", "settled", "first_output_day", "last_output_day"
            ),
            woken.drop("first_output_day", "last_output_day"),
        ]
    )
    fresh = rows.filter(pl.col("job_id").is_in(accounted.implode())).join(
        days, on="job_id", how="left"
    )
    kept = rows.filter(pl.col("job_id").is_in(accounted.implode()).not_()).join(
        old_days, on="job_id", how="left"
    )
    return conform(
        pl.concat([settled, fresh, kept], how="diagonal").sort("job_hash", "job_id").to_arrow(),
        JOB_INDEX,
    )


def latest(ends: Iterable[int | None]) -> int | None:
    """The end of data over some buckets' ends (None: none has data)."""
    return max((end for end in ends if end is not None), default=None)


def _account_bucket_at_end(
    item: BucketUpdate | int,
    records: RecordStore,
    accounting: Accounting,
    previous_end: int | None,
    ends: list[int | None],
) -> Iterator:
    """`account_bucket` at the end of data, the latest of every bucket's `ends`."""
    return account_bucket(item, records, accounting, previous_end, latest(ends))


class AccountJobs(beam.PTransform):
    """(BucketUpdates and idle bucket numbers, every bucket's end of data) -> (day, DayRef)
    (`days`), index scratch paths (`jobs`). The end of data is the latest of the buckets' ends,
    read whole as a side input (a CombineGlobally would be one step more)."""

    def __init__(
        self, records: RecordStore, accounting: Accounting, previous_end: int | None
    ) -> None:
        super().__init__()
        self._records, self._accounting, self._previous_end = records, accounting, previous_end

    def expand(self, inputs):
        buckets, ends = inputs
        accounted = buckets | "AccountBucket" >> beam.FlatMap(
            _account_bucket_at_end,
            self._records,
            self._accounting,
            self._previous_end,
            ends=beam.pvalue.AsList(ends),
        ).with_outputs("jobs", main="days")
        return {"days": accounted.days, "jobs": accounted.jobs}
