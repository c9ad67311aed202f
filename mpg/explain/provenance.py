"""Which input lines are behind each figure of a job's ledger: pure Polars over the accounting's
own frames (`ChipTimeSweep`), so a line is named because the pipeline used it, not because a
second reading of the rules says so.

Per figure, on the shown window (`Scope`):
- wanted: the JOB_SUBMIT and JOB_END (or, for an open job, the record that set the end of data);
- scheduling, all_allocated, runtime_idle: those and the task events that decided the chips held
  (in the window, plus each task's last event before it, which carries its holding in);
- a span category: the spans charged to it that overlap the window (lost_progress: lost steps;
  productive and productive_unprofiled: kept steps);
- ideal, program_loss: the profile records of the shown days (PG's inputs).
"""

from __future__ import annotations

import polars as pl

from mpg.explain.model import LineRanges, Provenance, Record, Scope
from mpg.transforms.account import ChipTimeSweep, utc_day

# Ledger categories (and waterfall totals) that are the time under one span category.
SPAN_FIGURES = {
    "lost_progress": "lost_step",
    "checkpoint_save": "checkpoint_save",
    "checkpoint_restore": "checkpoint_restore",
    "compile": "compile",
    "init": "init",
    "data_wait": "data_wait",
    "productive": "kept_step",
    "productive_unprofiled": "kept_step",
}
SCHEDULER_FIGURES = ("scheduling", "all_allocated", "runtime_idle")
PROFILE_FIGURES = ("ideal", "program_loss")


def consecutive_runs(values: pl.Series) -> tuple[tuple[int, int], ...]:
    """Distinct integers as inclusive ranges of consecutive values: 4, 5, 6, 9 -> (4, 6), (9, 9)."""
    runs = (
        values.unique()
        .sort()
        .to_frame("v")
        .with_columns((pl.col("v").diff() != 1).fill_null(True).cum_sum().alias("run"))
        .group_by("run", maintain_order=True)
        .agg(pl.col("v").first().alias("first"), pl.col("v").last().alias("last"))
    )
    return tuple(zip(runs["first"].to_list(), runs["last"].to_list(), strict=True))


def line_ranges(records: pl.DataFrame) -> Provenance:
    """The `file`, `line` of some records as ranges of consecutive lines per file."""
    return tuple(
        LineRanges(file=file, ranges=consecutive_runs(group["line"]))
        for (file,), group in records.sort("file").group_by("file", maintain_order=True)
    )


def _task_events(sweep: ChipTimeSweep, scope: Scope) -> pl.DataFrame:
    """The task events that decided the chips held in the shown window."""
    tasks = sweep.scheduler.filter(pl.col("type").str.starts_with("TASK_"))
    # Each task's holding on entering the window was set at its last instant before it: every
    # event of that instant counts (their order within the instant is the accounting's business).
    before = tasks.filter(pl.col("ts") < scope.start_us)
    carried_in = before.filter(pl.col("ts") == pl.col("ts").max().over("task_index"))
    in_window = tasks.filter(pl.col("ts").is_between(scope.start_us, scope.end_us, closed="left"))
    return pl.concat([carried_in, in_window]).select("file", "line")


def figure_records(
    sweep: ChipTimeSweep, scope: Scope, data_end: Record | None
) -> dict[str, Provenance]:
    """The input lines behind each ledger category and waterfall total, on the shown window.

    `data_end` is the record that set the end of data, passed for a job still open.
    """
    lifecycle = sweep.scheduler.filter(pl.col("type").is_in(["JOB_SUBMIT", "JOB_END"]))
    wanted = lifecycle.select("file", "line")
    if data_end is not None:
        end = pl.DataFrame({"file": [data_end.file], "line": [data_end.line]}, schema=wanted.schema)
        wanted = pl.concat([wanted, end])
    scheduler = line_ranges(
        pl.concat([lifecycle.select("file", "line"), _task_events(sweep, scope)])
    )
    spans = sweep.spans.filter((pl.col("start") < scope.end_us) & (pl.col("end") > scope.start_us))
    profiles = line_ranges(sweep.profiles.filter(utc_day("ts").is_in(scope.days)))
    return {
        "wanted": line_ranges(wanted),
        **{figure: scheduler for figure in SCHEDULER_FIGURES},
        **{f: line_ranges(spans.filter(pl.col("category") == c)) for f, c in SPAN_FIGURES.items()},
        **{figure: profiles for figure in PROFILE_FIGURES},
    }
