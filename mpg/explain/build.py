"""Build one job's `Explanation` from an output folder of `mpg run`.

The figures are the published ones. The job's records are read back from the record store and
accounted again with the pipeline's own functions (`sweep_chip_time`, `goodput_tables`), which
gives the attempts, the lost steps and the lines behind each figure, and checks that the store
still gives the published ledger.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path
from typing import Any

import polars as pl

from mpg.core.errors import StoreError, UserError
from mpg.definitions.catalog import load_catalog
from mpg.definitions.config import metric_version_to_read
from mpg.explain.advice import checkpoint_advice, step_times
from mpg.explain.attempts import summarise_attempts
from mpg.explain.ledger import compare_ledgers, job_days, ratios, waterfall
from mpg.explain.model import Explanation, JobHeader, Lost, Scope, from_epoch_us, to_epoch_us
from mpg.explain.provenance import figure_records
from mpg.explain.store import read_published, read_stored_job
from mpg.transforms.account import DAY_US, goodput_tables, sweep_chip_time


class NoRowOnDayError(UserError):
    """The job has no published row on the day asked for."""


def _scope(days: tuple[dt.date, ...], day: dt.date | None, job: dict[str, Any]) -> Scope:
    """The job's wanted window, cut to `day` when one is asked for."""
    start, end = job["submit_us"], job["wanted_end_us"]
    if day is not None:
        midnight = to_epoch_us(dt.datetime.combine(day, dt.time(), dt.UTC))
        start, end = max(start, midnight), min(end, midnight + DAY_US)
    return Scope(days=days, start_us=start, end_us=end)


def explain_job(out: Path, job_id: str, day: dt.date | None, metric_version: str) -> Explanation:
    """Everything `mpg explain` shows about `job_id` on `day` (None: the job's whole lifetime)."""
    metric_version = metric_version_to_read(out, metric_version)
    published = read_published(out, job_id, metric_version)
    day_rows = published.goodput.filter(pl.col("day").is_not_null())
    days = tuple(day_rows["day"].to_list())
    if day is not None and day not in days:
        on = ", ".join(d.isoformat() for d in days)
        raise NoRowOnDayError(f"job {job_id!r} has no row on {day.isoformat()} (its days: {on})")
    shown = days if day is None else (day,)
    # The published rows for the shown days: the day's own, or those for all days (day null).
    on_show = pl.col("day").is_null() if day is None else pl.col("day") == day
    summary = published.goodput.filter(on_show).row(0, named=True)
    ledger = published.ledger.filter(on_show)

    stored = read_stored_job(out, job_id)
    sweep = sweep_chip_time(
        stored.scheduler, stored.runtime, stored.profiles, to_epoch_us(stored.data_end.instant)
    )
    if sweep.jobs.is_empty():
        raise StoreError(
            f"the record store of {out} has no JOB_SUBMIT of job {job_id!r}, which "
            f"{published.database} publishes: they are not from the same run"
        )
    job = sweep.jobs.row(0, named=True)
    scope = _scope(shown, day, job)
    _, recomputed = goodput_tables(sweep, load_catalog(), (metric_version,))
    is_open = job["end_us"] is None
    return Explanation(
        job=JobHeader(
            job_id=job_id,
            workload_class=summary["workload_class"],
            framework=summary["framework"],
            chip_generation=summary["chip_generation"],
            chips_requested=summary["chips_requested"],
            submitted=from_epoch_us(job["submit_us"]),
            ended=None if is_open else from_epoch_us(job["end_us"]),
            end_state=job["end_state"],
            data_end=stored.data_end if is_open else None,
        ),
        metric_version=metric_version,
        database=str(published.database),
        day=day,
        days=days,
        waterfall=waterfall(
            summary, ledger, figure_records(sweep, scope, stored.data_end if is_open else None)
        ),
        ratios=ratios(summary),
        per_day=job_days(day_rows.filter(pl.col("day").is_in(shown)), published.ledger),
        attempts=summarise_attempts(sweep, scope),
        records_read=stored.records,
        differences=compare_ledgers(published.ledger, pl.from_arrow(recomputed), shown),
        lost=Lost(**{f.name: summary[f.name] for f in dataclasses.fields(Lost)}),
        checkpoint_advice=checkpoint_advice(published.checkpoint_advice),
        step_times=step_times(published.step_times, shown),
    )
