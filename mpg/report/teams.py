"""The report's "Teams and queues" section: who pays for the chip-hours and where jobs waited.

A table of teams worst first (the scorecard's team rows: dollars lost, the unpriced after the
priced, against the previous period of equal length), the same for queues, then one chart: each
team's lost chip-hours by cause; a click on a team's bar picks it and the panel beside shows that
team's worst jobs (the fleet's while none is picked), as the slices' panels do. Then each queue's
waiting (sql/semantic/queues.sql). Every figure is a column of the layer's rows
(sql/report/teams.sql, queue_waiting.sql, worst_jobs.sql); this module formats them.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import polars as pl

from mpg.definitions import figures
from mpg.definitions.figures import NONE_NAMED, chip_hours, named, percent
from mpg.report.blocks import Block, Chart, Note, Section, Table
from mpg.report.data import WORST_JOBS_PER_SLICE, ReportData
from mpg.report.slices import job_rows, worst_jobs_layers
from mpg.report.theme import CATEGORY_LABELS, LOSSES, ledger_color, ledger_order, tooltips, values

_BAR_WIDTH = 350
_COLUMNS = (
    "jobs", "wanted chip-hours", "MPG", "SG", "RG", "PG", "dollars wanted", "dollars lost",
    "chip-hours lost", "main loss", "MPG change", "dollars lost change",
)  # fmt: skip
_QUEUE_COLUMNS = (
    "queue", "job size", "jobs", "of which waited", "waiting chip-hours", "of wanted",
    "dollars of waiting", "median wait", "p90 wait", "longest wait",
    "chip-hours interruptions cost",
)  # fmt: skip


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 120:
        return f"{seconds:,.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:,.1f} min"
    return f"{seconds / 3600:,.1f} h"


def _row(r: dict[str, Any]) -> tuple[str, ...]:
    return (
        named(r["slice"]),
        f"{r['jobs']:,}",
        chip_hours(r["wanted_chip_s"] / 3600),
        *(percent(r[m]) for m in ("mpg", "sg", "rg", "pg")),
        "no price" if r["wanted_usd"] is None else figures.usd(r["wanted_usd"]),
        "no price" if r["lost_usd"] is None else figures.usd(r["lost_usd"]),
        chip_hours(r["lost_chip_s"] / 3600),
        CATEGORY_LABELS.get(r["main_loss"], "-"),
        figures.points(r["mpg_change"]),
        figures.usd_change(r["lost_usd_change"]),
    )


def _table(data: ReportData, kind: str, title: str) -> Table:
    rows = data.teams.filter(pl.col("slice_kind") == kind).sort("rank")
    return Table(
        f"Per {title}, worst first (dollars lost; unpriced after, by chip-hours lost); changes "
        "against the previous period of equal length, where it is all published",
        (title, *_COLUMNS),
        tuple(_row(r) for r in rows.iter_rows(named=True)),
        frozenset(_COLUMNS) - {"main loss"},
    )


def _queue_table(data: ReportData) -> Table:
    def size(r: dict[str, Any]) -> str:
        return "all" if r["size_class"] is None else r["size_class"]

    rows = tuple(
        (
            named(r["queue"]),
            size(r),
            f"{r['jobs']:,}",
            f"{r['jobs_waiting']:,}",
            chip_hours(r["waiting_chip_s"] / 3600),
            percent(r["waiting_share"]),
            "no price" if r["waiting_usd"] is None else figures.usd(r["waiting_usd"]),
            _duration(r["wait_median_s"]),
            _duration(r["wait_p90_s"]),
            _duration(r["wait_max_s"]),
            chip_hours(r["interrupted_chip_s"] / 3600),
        )
        for r in data.queue_waiting.iter_rows(named=True)
    )
    return Table(
        "Per queue and job size (chips requested), most waiting first: a job waits while it "
        "wants to run without all its chips (the ledger's scheduling: queueing, waiting again "
        "after a preemption or failure, partial allocation); its wait is that chip-time over "
        "its chips; median and p90 over the jobs (nearest rank, a job that never waited "
        "counting 0); interruptions cost = lost progress + checkpoint restore",
        _QUEUE_COLUMNS,
        rows,
        frozenset(_QUEUE_COLUMNS) - {"queue", "job size"},
    )


def team_chart(data: ReportData) -> alt.HConcatChart:
    """Each team's lost chip-hours by cause; clicking a bar picks the team, and the panel beside
    shows its worst jobs by their rank within it (team_rank: the one ranking), the fleet's while
    none is picked. The rows hold every team's worst (worst_jobs.sql), so a pick needs no
    query."""
    pick = alt.selection_point(name="pick_team", fields=["team"], on="click", clear="dblclick")
    teams = data.teams.filter(pl.col("slice_kind") == "team").with_columns(
        pl.col("slice").fill_null(NONE_NAMED).alias("team"),
        (pl.col("lost_chip_s") / 3600).alias("lost_chip_h"),
        pl.col("lost_usd").map_elements(figures.usd, return_dtype=pl.String)
        .fill_null("no price").alias("lost_label"),
        *((pl.col(f"{c}_chip_s") / 3600).alias(c) for c in LOSSES),
    ).select("team", "rank", "lost_chip_h", "lost_label", *LOSSES)  # fmt: skip
    bars = (
        alt.Chart(values(teams))
        .transform_fold(list(LOSSES), as_=["category", "chip_h"])
        .transform_filter("datum.chip_h != 0")
        .mark_bar(cursor="pointer")
        .encode(
            y=alt.Y(
                "team:N",
                sort=alt.EncodingSortField("rank", op="min"),
                title=None,
                axis=alt.Axis(labelLimit=200),
            ),
            x=alt.X("chip_h:Q", stack="zero", title="lost chip-hours over the period, by cause"),
            color=ledger_color(),
            order=ledger_order(),
            opacity=alt.condition(pick, alt.value(1.0), alt.value(0.3)),
            tooltip=tooltips(
                "team:N",
                alt.Tooltip("rank:Q", title="rank (dollars lost)"),
                alt.Tooltip("lost_label:N", title="dollars lost"),
                "category:N",
                alt.Tooltip("chip_h:Q", format=",.1f", title="chip-h"),
                alt.Tooltip("lost_chip_h:Q", format=",.1f", title="team's lost chip-h"),
            ),
        )
        .add_params(pick)
        .properties(name="team_bars", width=_BAR_WIDTH)
    )
    jobs = job_rows(data).with_columns(pl.col("team").fill_null(NONE_NAMED))
    ranked = (
        alt.Chart(values(jobs))
        .transform_filter(pick)
        .transform_calculate(shown_rank="pick_team.team ? datum.team_rank : datum.rank")
        .transform_filter(f"datum.shown_rank <= {WORST_JOBS_PER_SLICE}")
    )
    worst = worst_jobs_layers(ranked, _BAR_WIDTH, "team_worst", owners=True).properties(
        title=alt.Title(
            alt.ExprRef(
                "pick_team.team ? 'Worst jobs of ' + pick_team.team"
                " : 'Worst jobs of the fleet: click a team to pick it'"
            ),
            anchor="start",
            fontSize=12,
        )
    )
    return alt.hconcat(bars, worst, spacing=40).resolve_scale(color="shared")


def team_section(data: ReportData) -> Section:
    blocks: list[Block] = []
    if data.teams.filter(pl.col("slice_kind") == "team").is_empty():
        blocks.append(Note("No job-day in the period.", "absent"))
    else:
        blocks += [
            _table(data, "team", "team"),
            Chart(
                "by-team",
                "Lost chip-hours per team, and a team's worst jobs",
                "Left: each team's lost chip-hours (every ledger category but ideal) by cause, "
                "worst first by dollars lost; click a bar to pick the team (double-click to "
                f"clear). Right: the {WORST_JOBS_PER_SLICE} jobs of the picked team that lost "
                "the most dollars (the fleet's while none is picked), their dollars lost and "
                "owner beside them.",
                team_chart(data),
            ),
            _table(data, "queue", "queue"),
            _queue_table(data),
        ]
    return Section(
        "teams",
        "Teams and queues",
        "Who pays (a team: a Slurm account, a Kubernetes namespace, a Philly virtual cluster) and "
        f"where jobs waited (a queue: a Slurm partition, a Kueue LocalQueue); {NONE_NAMED}: the "
        "input named none. Teams' and queues' figures add up to the fleet's. Monthly chargeback "
        "is the chargeback_by_month view (docs/chargeback.md).",
        tuple(blocks),
    )
