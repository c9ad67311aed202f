"""A job's attempts and the steps each lost, from the accounting's own frames.

Which steps were lost is decided by the pipeline (`classify_spans` over `attempt_windows`, with
`keeps_every_step`); this module only reads those decisions back and says which checkpoint the
lost steps needed. Chip-time lost per attempt comes from `charge_segments` itself, so it obeys
the ledger's precedence: attempt a's share is the lost time with the lost steps of attempts <= a
less that with attempts < a. The shares add up to the ledger's lost_progress; a second under lost
steps of two attempts at once (counted once in the ledger) goes to the earlier attempt.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from mpg.explain.model import Attempt, Checkpoint, Scope, from_epoch_us
from mpg.explain.provenance import consecutive_runs, line_ranges
from mpg.transforms.account import ChipTimeSweep, charge_segments, keeps_every_step


def _lost_chip_s(sweep: ChipTimeSweep, scope: Scope) -> dict[int, float]:
    """Lost-progress chip-seconds per attempt on the shown days."""
    lost = sweep.spans.filter(pl.col("category") == "lost_step")
    others = sweep.spans.filter(pl.col("category") != "lost_step")
    shares: dict[int, float] = {}
    before = 0.0
    for attempt in sorted(lost["attempt"].unique().to_list()):
        spans = pl.concat([others, lost.filter(pl.col("attempt") <= attempt)])
        upto = (
            charge_segments(sweep.jobs, sweep.allocation, spans)
            .filter((pl.col("category") == "lost_step") & pl.col("day").is_in(scope.days))
            .get_column("chip_us")
            .sum()
        )
        # chip_us are whole numbers below 2**53, so the difference is exact.
        shares[attempt] = (upto - before) / 1e6
        before = upto
    return shares


def _saves(sweep: ChipTimeSweep) -> pl.DataFrame:
    """Each checkpoint_save, with whether it ended by its attempt's end (made progress durable)."""
    return (
        sweep.spans.filter(pl.col("kind") == "checkpoint_save")
        .join(sweep.attempts.select("attempt", "attempt_end", "durable_step"), on="attempt")
        .with_columns(
            (pl.col("attempt_end").is_null() | (pl.col("end") <= pl.col("attempt_end"))).alias(
                "in_time"
            )
        )
    )


def _checkpoint(row: dict[str, Any] | None) -> Checkpoint | None:
    return None if row is None else Checkpoint(step=row["step"], ended=from_epoch_us(row["end"]))


def _why_every_step_is_kept(workload_class: str, end_state: str | None) -> str:
    if workload_class != "training":
        return f"{workload_class}: every step is kept"
    if end_state is None:
        return "last attempt of a job still open: every step is kept"
    return f"last attempt of a {end_state} job: every step is kept"


def summarise_attempts(sweep: ChipTimeSweep, scope: Scope) -> tuple[Attempt, ...]:
    """The attempts of the one job in `sweep` that overlap the shown window, in attempt order."""
    job = sweep.jobs.row(0, named=True)
    attempts = (
        sweep.attempts.join(sweep.jobs.select("job_id", "workload_class", "end_state"), on="job_id")
        .with_columns(keeps_every_step().alias("keeps_every_step"))
        .filter(
            (pl.col("first_start") < scope.end_us)
            & (pl.col("attempt_end").fill_null(job["wanted_end_us"]) > scope.start_us)
        )
        .sort("attempt")
    )
    saves = _saves(sweep)
    durable = saves.filter(pl.col("in_time") & (pl.col("step") == pl.col("durable_step")))
    late = saves.filter(pl.col("in_time").not_())
    lost_chip_s = _lost_chip_s(sweep, scope)
    summaries = []
    for a in attempts.iter_rows(named=True):
        spans = sweep.spans.filter(pl.col("attempt") == a["attempt"])
        steps = spans.filter(pl.col("kind") == "step")["step"]
        lost = spans.filter(pl.col("category") == "lost_step")
        of_attempt = pl.col("attempt") == a["attempt"]
        durable_save = durable.filter(of_attempt).sort("end").head(1).to_dicts()
        late_save = late.filter(of_attempt).sort(["step", "end"], descending=[True, False])
        ended_by = (
            "next attempt started"
            if a["next_start"] is not None
            else f"JOB_END ({job['end_state']})"
            if a["end_us"] is not None
            else "still open"
        )
        summaries.append(
            Attempt(
                attempt=a["attempt"],
                start=from_epoch_us(a["first_start"]),
                end=None if a["attempt_end"] is None else from_epoch_us(a["attempt_end"]),
                ended_by=ended_by,
                steps=None if steps.is_empty() else (steps.min(), steps.max()),
                durable=_checkpoint(durable_save[0] if durable_save else None),
                late_save=_checkpoint(late_save.row(0, named=True) if late_save.height else None),
                keeps_every_step=_why_every_step_is_kept(a["workload_class"], a["end_state"])
                if a["keeps_every_step"]
                else None,
                lost_steps=consecutive_runs(lost["step"]),
                lost_chip_s=lost_chip_s.get(a["attempt"], 0.0),
                lost_records=line_ranges(lost),
            )
        )
    return tuple(summaries)
