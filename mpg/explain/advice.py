"""What `mpg explain` adds beside a job's ledger (issue 15): its checkpoint advice and its step
times, as published (`checkpoint_advice`, `step_time_stats`), and how the terminal shows them.

Advice is one row per training job over its whole life, so it is shown whatever day is asked
for; step times are per day, shown for the days on show. Neither moves a ledger row.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass

import polars as pl
from rich import box
from rich.table import Table
from rich.text import Text


@dataclass(frozen=True)
class CheckpointAdvice:
    """The job's `checkpoint_advice` row: observed interruptions, save and restart costs and
    interval, the Young/Daly interval and how sure it is, RG observed and as the model predicts it
    at each, the advice, and the chip-hours it would save over the job's analysed life
    (docs/metrics.md)."""

    interruptions: int
    interruptions_from_scheduler_only: int
    interruptions_per_hour: float | None
    mtbi_s: float | None
    mtbi_low_s: float | None
    mtbi_high_s: float | None
    confidence: float
    saves: int
    mean_save_s: float | None
    restarts: int
    mean_restart_s: float | None
    observed_interval_s: float | None
    advised_interval_s: float | None
    observed_interval_steps: float | None
    advised_interval_steps: int | None
    advice: str
    rg: float | None
    rg_predicted: float | None
    rg_advised: float | None
    chip_hours_saved: float
    usd_saved: float | None  # at its generation's price (mpg_advice); None: no price


@dataclass(frozen=True)
class StepTimes:
    """One day's `step_time_stats` row of the job (kept steps only)."""

    day: dt.date
    steps: int
    mean_step_s: float
    median_step_s: float
    p90_step_s: float
    p99_step_s: float
    max_step_s: float
    step_time_deviation_s: float | None
    slow_step_chip_s: float
    slow_step_share: float | None
    ranks: int
    straggler_rank: int | None
    straggler_share: float | None


def _fields(cls: type, row: dict) -> dict:
    """The columns of a published row that `cls` (a dataclass) keeps."""
    return {f.name: row[f.name] for f in dataclasses.fields(cls)}


def checkpoint_advice(rows: pl.DataFrame) -> CheckpointAdvice | None:
    """The job's advice from its (zero or one) published rows."""
    return (
        CheckpointAdvice(**_fields(CheckpointAdvice, rows.row(0, named=True)))
        if rows.height
        else None
    )


def step_times(rows: pl.DataFrame, days: tuple[dt.date, ...]) -> tuple[StepTimes, ...]:
    """The job's step times on `days`."""
    return tuple(
        StepTimes(**_fields(StepTimes, r)) for r in rows.iter_rows(named=True) if r["day"] in days
    )


def _n(value: float | None, fmt: str = ",.1f") -> str:
    return "-" if value is None else format(value, fmt)


def _table(title: str, *columns: str) -> Table:
    table = Table(box=box.SIMPLE_HEAD, title=Text(title), title_justify="left", pad_edge=False)
    for i, name in enumerate(columns):
        table.add_column(name, justify="left" if i == 0 else "right", no_wrap=True)
    return table


def advice_table(advice: CheckpointAdvice) -> Table:
    """Observed beside advised: interval and RG, then the inputs and the saving."""
    table = _table("Checkpoint advice (the job's whole life)", "", "observed", "advised")
    minutes = (_n(s / 60 if s is not None else None) for s in (
        advice.observed_interval_s, advice.advised_interval_s))  # fmt: skip
    table.add_row("interval between saves, min", *minutes)
    table.add_row(
        "steps between saves",
        _n(advice.observed_interval_steps, ",.0f"),
        _n(advice.advised_interval_steps, ",d"),
    )
    table.add_row(
        "RG (advised: the model's at that interval)",
        _n(advice.rg, ".3f"),
        _n(advice.rg_advised, ".3f"),
    )
    table.add_row(
        "RG the model predicts at the observed interval", _n(advice.rg_predicted, ".3f"), ""
    )
    table.add_row(
        "interruptions (an all-allocated hour)",
        f"{advice.interruptions} ({_n(advice.interruptions_per_hour, '.3f')})",
        "",
    )
    table.add_row(
        f"mean time between interruptions, s ({advice.confidence:.0%} interval)",
        f"{_n(advice.mtbi_s)} ({_n(advice.mtbi_low_s)}-{_n(advice.mtbi_high_s)})",
        "",
    )
    table.add_row(f"blocking saves, mean s (of {advice.saves})", _n(advice.mean_save_s), "")
    table.add_row(f"restarts, mean s (of {advice.restarts})", _n(advice.mean_restart_s), "")
    table.add_row("advice (docs/metrics.md)", "", advice.advice)
    dollars = "" if advice.usd_saved is None else f" (${advice.usd_saved:,.2f})"
    table.add_row(
        "chip-hours saved over the job's life", "", _n(advice.chip_hours_saved, ",.2f") + dollars
    )
    return table


def step_times_table(days: tuple[StepTimes, ...]) -> Table:
    columns = ("day", "steps", "median s", "p90 s", "p99 s", "max s", "deviation s",
               "slow-step chip-h", "slow share", "straggler rank")  # fmt: skip
    table = _table("Step times (kept steps; inside productive time)", *columns)
    for d in days:
        straggler = (
            "-" if d.straggler_rank is None
            else f"{d.straggler_rank} ({_n(d.straggler_share, '.0%')} of {d.ranks} ranks' steps)"
        )  # fmt: skip
        seconds = (d.median_step_s, d.p90_step_s, d.p99_step_s, d.max_step_s)
        table.add_row(
            d.day.isoformat(), f"{d.steps:,}", *(_n(s, ",.2f") for s in seconds),
            _n(d.step_time_deviation_s, ",.3f"), _n(d.slow_step_chip_s / 3600, ",.3f"),
            _n(d.slow_step_share, ".1%"), straggler,
        )  # fmt: skip
    return table
