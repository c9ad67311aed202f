"""The report's advice sections: checkpoint intervals (Young/Daly, `checkpoint_advice`) and
step-time outliers (`step_time_stats`, `step_rank_stragglers`).

Checkpoint advice ranks the training jobs advised to change their interval by the chip-hours
it would save over their analysed lives, beside the interval observed and the RG the model
predicts at each; its slices come from the
`checkpoint_advice_by_slice` view (one definition, sql/views/). Step times look inside productive
time: the job-days whose slow steps took the largest share of it, their step-time quantiles, and
which rank was the straggler where several ranks reported. Job ids travel as chart data only.
"""

from __future__ import annotations

from collections.abc import Callable

import altair as alt
import polars as pl

from mpg.definitions.figures import usd
from mpg.report.blocks import Block, Chart, Figure, Figures, Note, Section, Table
from mpg.report.data import CHECKPOINT_JOBS, STEP_OUTLIERS, ReportData
from mpg.report.facts import absent_note
from mpg.report.slices import SLICE_TITLES
from mpg.report.theme import HALF_WIDTH, chip_hours, percent, tooltips, values

_PANEL = 280  # three panels and their axes within FULL_WIDTH (1280 px windows)
_ROW, _MIN_HEIGHT = 20, 140  # px a job, and the least height of a panel
_WHICH_COLORS = alt.Scale(
    domain=["observed", "predicted at observed", "advised"],
    range=["#5f6b77", "#e8a33d", "#2f8f3a"],
)
_QUANTILE_COLORS = alt.Scale(
    domain=["median", "p90", "p99", "max"], range=["#2f8f3a", "#e8a33d", "#d62728", "#5f6b77"]
)


def _job_axis(order: list[str]) -> alt.Y:
    return alt.Y("job_id:N", sort=order, title=None, axis=alt.Axis(labelLimit=220))


def checkpoint_rows(jobs: pl.DataFrame) -> pl.DataFrame:
    """The advised jobs, intervals in minutes."""
    return jobs.with_columns(
        (pl.col("observed_interval_s") / 60).alias("observed_interval_min"),
        (pl.col("advised_interval_s") / 60).alias("advised_interval_min"),
    )


def checkpoint_chart(jobs: pl.DataFrame) -> alt.HConcatChart:
    """Per job, in saving order: chip-hours saved; observed beside advised interval; RG
    observed, predicted at the observed interval, and at the advised one."""
    rows = checkpoint_rows(jobs)
    order = rows.sort("saving_rank")["job_id"].to_list()
    base = alt.Chart(values(rows))
    job_tooltip = tooltips(
        alt.Tooltip("job_id:N", title="job"),
        "workload_class:N",
        "framework:N",
        "chip_generation:N",
        "chips_requested:Q",
        alt.Tooltip("interruptions:Q", title="interruptions"),
        alt.Tooltip("interruptions_per_hour:Q", format=".3f", title="interruptions an hour"),
        alt.Tooltip("mean_save_s:Q", format=",.1f", title="mean blocking save s"),
        alt.Tooltip("mean_restart_s:Q", format=",.1f", title="mean restart s"),
        alt.Tooltip("observed_interval_steps:Q", format=",.0f", title="steps between saves"),
        alt.Tooltip("advised_interval_steps:Q", format=",d", title="advised steps"),
        alt.Tooltip("chip_hours_saved:Q", format=",.2f", title="chip-h saved"),
        alt.Tooltip("usd_saved:Q", format="$,.2f", title="USD saved (no price: none)"),
    )
    savings = base.mark_bar(color="#2f8f3a").encode(
        y=_job_axis(order),
        x=alt.X("chip_hours_saved:Q", title="chip-hours saved over the job's life"),
        tooltip=job_tooltip,
    )
    saving_labels = base.mark_text(align="left", dx=3, fontSize=10).encode(
        y=_job_axis(order),
        x="chip_hours_saved:Q",
        text=alt.Text("chip_hours_saved:Q", format=",.1f"),
    )
    intervals = base.transform_fold(
        ["observed_interval_min", "advised_interval_min"], as_=["interval", "minutes"]
    ).transform_calculate(which="datum.interval == 'advised_interval_min' ? 'advised' : 'observed'")
    interval_rule = base.mark_rule(color="#999").encode(
        y=_job_axis(order), x="observed_interval_min:Q", x2="advised_interval_min:Q"
    )
    interval_points = intervals.mark_point(filled=True, size=60).encode(
        y=_job_axis(order),
        x=alt.X(
            "minutes:Q",
            title="checkpoint interval, minutes (log)",
            scale=alt.Scale(type="log"),
        ),
        color=alt.Color("which:N", scale=_WHICH_COLORS, title="interval / RG"),
        tooltip=tooltips(
            alt.Tooltip("job_id:N", title="job"),
            "which:N",
            alt.Tooltip("minutes:Q", format=",.1f"),
        ),
    )
    rg = (
        base.transform_fold(["rg", "rg_predicted", "rg_advised"], as_=["measure", "value"])
        .transform_calculate(
            which="{'rg': 'observed', 'rg_predicted': 'predicted at observed', "
            "'rg_advised': 'advised'}[datum.measure]"
        )
        .mark_point(filled=True, size=60)
        .encode(
            y=_job_axis(order),
            x=alt.X("value:Q", title="RG", scale=alt.Scale(zero=False), axis=alt.Axis(format="%")),
            color=alt.Color("which:N", scale=_WHICH_COLORS, title="interval / RG"),
            tooltip=tooltips(
                alt.Tooltip("job_id:N", title="job"),
                "which:N",
                alt.Tooltip("value:Q", format=".2%", title="RG"),
            ),
        )
    )
    # A row per job, but never so few rows' height that the panels' axes crowd each other.
    height = max(_MIN_HEIGHT, _ROW * rows.height)
    return alt.hconcat(
        alt.layer(savings, saving_labels).properties(width=_PANEL, height=height),
        alt.layer(interval_rule, interval_points).properties(width=_PANEL, height=height),
        rg.properties(width=_PANEL, height=height),
        spacing=12,
    )


def _minutes(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds / 60:,.1f}"


def _maybe(value: float | None, show: Callable[[float], str]) -> str:
    return "-" if value is None else show(value)


def _slices_table(slices: pl.DataFrame) -> Table:
    columns = (
        "slice", "jobs", "interruptions an hour", "mean save s", "interval min",
        "advised min", "RG", "RG predicted", "RG advised", "chip-h saved", "chip-h saved a day",
    )  # fmt: skip
    rows = tuple(
        (
            "fleet"
            if r["slice_kind"] == "fleet"
            else f"{SLICE_TITLES[r['slice_kind']]}: {r['slice']}",
            f"{r['jobs']:,}",
            _maybe(r["interruptions_per_hour"], "{:.3f}".format),
            _maybe(r["mean_save_s"], "{:,.1f}".format),
            _minutes(r["observed_interval_s"]),
            _minutes(r["advised_interval_s"]),
            percent(r["rg"]),
            percent(r["rg_predicted"]),
            percent(r["rg_advised"]),
            chip_hours(r["chip_hours_saved"]),
            chip_hours(r["chip_hours_saved_per_day"]),
        )
        for r in slices.iter_rows(named=True)
    )
    return Table(
        "Per slice (every published training job, whatever the period): means are ratios of "
        "sums, the advised interval Young/Daly's on the slice's means, chip-hours saved the sum "
        "of the jobs' and that a day of the period analysed (checkpoint_advice_by_slice)",
        columns,
        rows,
        frozenset(columns[1:]),
    )


def checkpoint_section(data: ReportData) -> Section:
    blocks: list[Block] = []
    jobs = data.checkpoint_jobs
    if jobs is None:
        blocks.append(absent_note("checkpoint_advice"))
    elif jobs.is_empty():
        blocks.append(
            Note(
                "No training job in the period is advised to change its checkpoint interval: "
                "none was interrupted often enough, with blocking saves to weigh, for the model "
                "to be sure a change helps."
            )
        )
    else:
        first = jobs.row(0, named=True)
        blocks += [
            Figures(
                (
                    Figure(
                        "jobs advised",
                        f"{first['jobs_advised']:,}",
                        f"of {first['jobs_in_period']:,} training jobs in the period",
                    ),
                    Figure(
                        "chip-hours saved",
                        chip_hours(first["chip_hours_saved_in_period"]),
                        f"over the analysed lives of the {first['jobs_advised']:,} advised jobs, "
                        f"{chip_hours(first['chip_hours_saved_a_day'])} a calendar day of their "
                        f"{first['days_analysed']}",
                    ),
                    Figure(
                        "dollars saved",
                        usd(first["usd_saved_in_period"]),
                        "at their generations' prices"
                        + (
                            f"; {chip_hours(first['unpriced_chip_hours_saved'])} chip-hours of "
                            "jobs without a price not in it"
                            if first["unpriced_chip_hours_saved"]
                            else ""
                        ),
                    ),
                )
            ),
            Chart(
                "checkpoint-jobs",
                "Jobs ranked by expected savings",
                f"The {jobs.height} training jobs (at most {CHECKPOINT_JOBS}) whose "
                "checkpointing at the Young/Daly "
                "interval, sqrt(2 x blocking save x mean time between interruptions), would save "
                "the most chip-hours over their lives, where the model's gain holds across "
                "MTBI's 90% interval (left); the interval observed beside the advised one "
                "(middle); RG observed, predicted by the model at the observed interval, and at "
                "the advised one (right). Advice is per job over all its days.",
                checkpoint_chart(jobs),
            ),
        ]
    if data.checkpoint_slices is None:
        blocks.append(absent_note("checkpoint_advice_by_slice"))
    elif not data.checkpoint_slices.is_empty():
        blocks.append(_slices_table(data.checkpoint_slices))
    return Section(
        "checkpoints",
        "Checkpoint advice",
        "Per training job (checkpoint_advice): interruptions per all-allocated hour, the "
        "blocking save and restart costs, the interval between saves, and the interval that "
        "minimises the model's lost progress plus save time (docs/metrics.md).",
        tuple(blocks),
    )


def _job_day(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(
        pl.format("{} · {}", "job_id", pl.col("day").dt.to_string("%Y-%m-%d")).alias("job_day")
    )


def step_outliers_chart(outliers: pl.DataFrame) -> alt.HConcatChart:
    """Per job-day, in share order: the slow steps' share of productive chip-time; the day's
    median, p90, p99 and slowest step."""
    rows = _job_day(outliers).with_columns(
        (pl.col("slow_step_chip_s") / 3600).alias("slow_step_chip_h")
    )
    order = rows.sort("share_rank")["job_day"].to_list()
    y = alt.Y("job_day:N", sort=order, title=None, axis=alt.Axis(labelLimit=260))
    base = alt.Chart(values(rows))
    detail = tooltips(
        alt.Tooltip("job_day:N", title="job · day"),
        "workload_class:N",
        "chip_generation:N",
        "chips_requested:Q",
        "steps:Q",
        alt.Tooltip("slow_step_share:Q", format=".2%", title="slow-step share"),
        alt.Tooltip("slow_step_chip_h:Q", format=",.2f", title="slow-step chip-h"),
        alt.Tooltip("step_time_deviation_s:Q", format=",.3f", title="step-time deviation s"),
    )
    share = base.mark_bar(color="#e8a33d").encode(
        y=y,
        x=alt.X(
            "slow_step_share:Q",
            title="slow steps' share of productive chip-time",
            axis=alt.Axis(format="%"),
        ),
        tooltip=detail,
    )
    share_labels = base.mark_text(align="left", dx=3, fontSize=10).encode(
        y=y, x="slow_step_share:Q", text=alt.Text("slow_step_share:Q", format=".1%")
    )
    quantiles = (
        base.transform_fold(
            ["median_step_s", "p90_step_s", "p99_step_s", "max_step_s"], as_=["q", "seconds"]
        )
        .transform_calculate(
            quantile="{'median_step_s': 'median', 'p90_step_s': 'p90', 'p99_step_s': 'p99', "
            "'max_step_s': 'max'}[datum.q]"
        )
        .mark_point(filled=True, size=50)
        .encode(
            y=y,
            x=alt.X("seconds:Q", title="step time, s (log)", scale=alt.Scale(type="log")),
            color=alt.Color("quantile:N", scale=_QUANTILE_COLORS, title="step time"),
            tooltip=tooltips(
                alt.Tooltip("job_day:N", title="job · day"),
                "quantile:N",
                alt.Tooltip("seconds:Q", format=",.2f"),
            ),
        )
    )
    return alt.hconcat(
        alt.layer(share, share_labels).properties(width=HALF_WIDTH - 40),
        quantiles.properties(width=HALF_WIDTH - 40),
        spacing=16,
    )


def stragglers_chart(stragglers: pl.DataFrame) -> alt.Chart:
    """Per job-day, each rank's share of the steps it was the slowest in (they add up to 1)."""
    rows = _job_day(stragglers)
    order = rows.sort("job_day_rank")["job_day"].unique(maintain_order=True).to_list()
    return (
        alt.Chart(values(rows), width=HALF_WIDTH * 2, height=max(120, 24 * len(order)))
        .mark_bar()
        .encode(
            y=alt.Y("job_day:N", sort=order, title=None, axis=alt.Axis(labelLimit=260)),
            x=alt.X(
                "slowest_share:Q",
                stack="zero",
                title="share of several-rank steps where the rank was the slowest",
                axis=alt.Axis(format="%"),
            ),
            color=alt.Color("rank:N", title="rank"),
            order=alt.Order("rank:Q"),
            tooltip=tooltips(
                alt.Tooltip("job_day:N", title="job · day"),
                "rank:N",
                alt.Tooltip("slowest_steps:Q", title="steps it was slowest in"),
                alt.Tooltip("steps:Q", title="steps it reported"),
                alt.Tooltip("slowest_share:Q", format=".1%", title="share"),
                alt.Tooltip("mean_step_s:Q", format=",.3f", title="its mean step s"),
            ),
        )
    )


def step_time_section(data: ReportData) -> Section:
    blocks: list[Block] = []
    if data.step_outliers is None:
        blocks.append(absent_note("step_time_stats"))
    elif data.step_outliers.is_empty():
        blocks.append(Note("No job-day in the period has kept steps."))
    else:
        total = data.step_outliers.row(0, named=True)["job_days_in_period"]
        blocks.append(
            Chart(
                "step-outliers",
                "Job-days whose slow steps cost most",
                f"The {data.step_outliers.height} of {total:,} job-days with kept steps (at most "
                f"{STEP_OUTLIERS}) whose steps slower "
                "than the day's median took the largest share of productive chip-time, the sum "
                "over steps of (step time - median) x chips (left); the day's median, p90, p99 "
                "and slowest step (right). This looks inside productive time: no ledger row "
                "moves.",
                step_outliers_chart(data.step_outliers),
            )
        )
    if data.stragglers is None:
        blocks.append(absent_note("step_rank_stragglers"))
    elif data.stragglers.is_empty():
        blocks.append(
            Note(
                "No step in the period was reported by several ranks (per-rank traces): no "
                "straggler rank to show."
            )
        )
    else:
        blocks.append(
            Chart(
                "stragglers",
                "Stragglers by rank",
                "For the job-days whose steps several ranks reported, how often each rank was "
                "the slowest of a step: one rank taking most of the bar is a straggler.",
                stragglers_chart(data.stragglers),
            )
        )
    return Section(
        "step-times",
        "Step-time outliers",
        "Step times inside productive time (step_time_stats): the job-days whose slow steps "
        "took the most of it, and which rank was the straggler where several ranks reported.",
        tuple(blocks),
    )
