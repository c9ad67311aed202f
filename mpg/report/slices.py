"""The slices' charts and the worst jobs: a slice's goodput over time, where its chip-hours went,
and from a slice to its worst jobs.

One spec per slice column (chip generation, workload class, framework), so that a selection can
cross its charts without any script of ours: clicking a slice's bar picks it (double-click, or a
click beside the bars, clears), its lines stand out in the four goodput panels, and the worst-jobs
panel beside shows that slice's worst jobs (the fleet's while none is picked). The rows those jobs
come from are the union of every slice's worst (worst_jobs.sql), so each pick needs no query.
"""

from __future__ import annotations

import altair as alt
import polars as pl

from mpg.definitions.figures import usd
from mpg.report.blocks import Chart
from mpg.report.charts import long_metrics
from mpg.report.data import WORST_JOBS, WORST_JOBS_PER_SLICE, ReportData
from mpg.report.theme import (
    FULL_WIDTH,
    LOSSES,
    METRIC_TITLES,
    METRICS,
    category_order_expr,
    day_axis,
    ledger_color,
    ledger_order,
    ratio_axis,
    tooltips,
    values,
    with_category_order,
)

SLICE_TITLES = {
    "chip_generation": "chip generation",
    "workload_class": "workload class",
    "framework": "framework",
}
_PANEL_WIDTH = 190
_BAR_WIDTH = 350
WORST_JOBS_WIDTH = FULL_WIDTH - 350
LABEL_LIMIT = 300  # px of a worst job's label: its dollars lost and owner
_JOB_TOOLTIP = tooltips(
    alt.Tooltip("job_id:N", title="job"),
    alt.Tooltip("rank:Q", title="rank (dollars lost)"),
    "owner:N",
    "workload_class:N",
    "framework:N",
    "chip_generation:N",
    "chips_requested:Q",
    alt.Tooltip("wanted_chip_h:Q", format=",.1f", title="wanted chip-h"),
    alt.Tooltip("lost_chip_h:Q", format=",.1f", title="lost chip-h"),
    alt.Tooltip("lost_label:N", title="dollars lost"),
    alt.Tooltip("unprofiled_chip_h:Q", format=",.1f", title="of which unprofiled chip-h"),
)


def job_rows(data: ReportData) -> pl.DataFrame:
    """The ranked jobs as the charts draw them: chip-hours by category (LOSSES), dollars lost as
    a label (no price: said)."""
    jobs = data.worst_jobs
    return jobs.select(
        "job_id",
        pl.col("owner").fill_null(""),
        "team",
        "rank",
        "priced",
        "priced_rank",
        *(f"{kind}_rank" for kind in (*SLICE_TITLES, "team")),
        "workload_class",
        "framework",
        "chip_generation",
        "chips_requested",
        (pl.col("wanted_chip_s") / 3600).alias("wanted_chip_h"),
        (pl.col("lost_chip_s") / 3600).alias("lost_chip_h"),
        (pl.col("productive_unprofiled_chip_s") / 3600).alias("unprofiled_chip_h"),
        pl.col("lost_usd").map_elements(usd, return_dtype=pl.String).fill_null("no price")
        .alias("lost_label"),
        *((pl.col(f"{c}_chip_s") / 3600).alias(c) for c in LOSSES),
    )  # fmt: skip


def _jobs(data: ReportData) -> alt.Chart:
    return alt.Chart(values(job_rows(data)))


def worst_jobs_layers(
    ranked: alt.Chart, width: int, name: str, owners: bool = True
) -> alt.LayerChart:
    """Ranked jobs (a `shown_rank` field, 1 the worst) as bars of chip-hours split by cause,
    each labelled with its dollars lost and (where `owners`, on a chart with room for them) its
    owner; a label longer than LABEL_LIMIT px ends in an ellipsis."""
    y = alt.Y(
        "job_id:N",
        sort=alt.EncodingSortField("shown_rank", op="min"),
        title=None,
        axis=alt.Axis(labelLimit=200),
    )
    bars = (
        ranked.transform_fold(list(LOSSES), as_=["category", "chip_h"])
        .transform_filter("datum.chip_h != 0")
        .transform_calculate(category_order=category_order_expr())
        .mark_bar()
        .encode(
            y=y,
            x=alt.X("chip_h:Q", stack="zero", title="lost chip-hours (wanted - ideal), by cause"),
            color=ledger_color(),
            order=ledger_order(),
            tooltip=tooltips(
                "category:N",
                alt.Tooltip("chip_h:Q", format=",.1f", title="chip-h"),
                *_JOB_TOOLTIP,
            ),
        )
        .properties(name=f"{name}_bars", width=width)
    )
    labels = (
        ranked.transform_calculate(
            label="datum.lost_label + ' · ' + datum.owner" if owners else "datum.lost_label"
        )
        .mark_text(align="left", dx=4, fontSize=11, limit=LABEL_LIMIT if owners else 80)
        .encode(y=y, x="lost_chip_h:Q", text="label:N", tooltip=_JOB_TOOLTIP)
        .properties(name=f"{name}_owners", width=width)
    )
    return alt.layer(bars, labels)


def worst_jobs_chart(data: ReportData, priced: bool) -> alt.LayerChart:
    """The first WORST_JOBS of the ranking among the priced jobs (or the unpriced ones)."""
    jobs = _jobs(data).transform_filter(
        f"{'' if priced else '!'}datum.priced && datum.priced_rank <= {WORST_JOBS}"
    )
    name = "worst" if priced else "unpriced"
    return worst_jobs_layers(
        jobs.transform_calculate(shown_rank="datum.rank"), WORST_JOBS_WIDTH, name
    )


def _panels(data: ReportData, kind: str, pick: alt.Parameter) -> alt.HConcatChart:
    rows = data.slice_days.filter(pl.col("slice_kind") == kind).with_columns(
        (pl.col("wanted_chip_s") / 3600).alias("wanted_chip_h")
    )
    base = alt.Chart(values(long_metrics(rows, ["day", "slice", "wanted_chip_h"])))
    panels = [
        base.transform_filter(alt.datum.metric == metric)
        .mark_line(point=True)
        .encode(
            x=day_axis(),
            y=ratio_axis(METRIC_TITLES[metric], full=False),
            color=alt.Color("slice:N", title=SLICE_TITLES[kind]),
            opacity=alt.condition(pick, alt.value(1.0), alt.value(0.12)),
            strokeWidth=alt.condition(pick, alt.value(2.2), alt.value(1.0)),
            tooltip=tooltips(
                "day:T",
                alt.Tooltip("slice:N", title=SLICE_TITLES[kind]),
                alt.Tooltip("metric_title:N", title="metric"),
                alt.Tooltip("value:Q", format=".2%"),
                alt.Tooltip("wanted_chip_h:Q", format=",.1f", title="wanted chip-h that day"),
            ),
        )
        .properties(width=_PANEL_WIDTH, height=170, title=METRIC_TITLES[metric])
        for metric in METRICS
    ]
    return alt.hconcat(*panels, spacing=18).resolve_scale(y="independent")


def _slice_bars(data: ReportData, kind: str, pick: alt.Parameter) -> alt.Chart:
    """Each slice's wanted chip-hours over the period, split by ledger category; a click picks
    the slice. (The totals are in the axis labels: a text layer beside the bars would make
    Altair declare the selection in both layers, which Vega refuses.)"""
    rows = with_category_order(data.slice_ledger.filter(pl.col("slice_kind") == kind))
    rows = rows.with_columns(
        pl.format(
            "{} ({} chip-h)",
            "slice",
            pl.col("slice_chip_h")
            .round(0)
            .cast(pl.Int64)
            .map_elements(lambda v: f"{v:,}", return_dtype=pl.String),
        ).alias("slice_label"),
    )
    return (
        alt.Chart(values(rows))
        .mark_bar(cursor="pointer")
        .encode(
            y=alt.Y(
                "slice_label:N",
                sort=alt.EncodingSortField("slice_chip_h", op="max", order="descending"),
                title=None,
                axis=alt.Axis(labelLimit=260),
            ),
            x=alt.X("chip_h:Q", stack="zero", title="wanted chip-hours over the period"),
            color=ledger_color(),
            order=ledger_order(),
            opacity=alt.condition(pick, alt.value(1.0), alt.value(0.3)),
            tooltip=tooltips(
                alt.Tooltip("slice:N", title=SLICE_TITLES[kind]),
                "category:N",
                alt.Tooltip("chip_h:Q", format=",.1f", title="chip-h"),
                alt.Tooltip("share:Q", format=".1%", title="share of the slice's wanted"),
                alt.Tooltip("slice_chip_h:Q", format=",.1f", title="slice's wanted chip-h"),
            ),
        )
        .add_params(pick)
        .properties(name=f"{kind}_bars", width=_BAR_WIDTH)
    )


def slice_chart(data: ReportData, kind: str) -> alt.VConcatChart:
    """One slice column's section: four goodput panels, then each slice's chip-hours beside the
    worst jobs of the slice picked there."""
    pick = alt.selection_point(name=f"pick_{kind}", fields=["slice"], on="click", clear="dblclick")
    # The picked slice's jobs by their rank within it (the one ranking, worst_jobs.sql), the
    # fleet's while none is picked: the rows hold every slice's worst, so no query is needed.
    ranked = (
        _jobs(data)
        .transform_calculate(slice=f"datum.{kind}")
        .transform_filter(pick)
        .transform_calculate(shown_rank=f"pick_{kind}.slice ? datum.{kind}_rank : datum.rank")
        .transform_filter(f"datum.shown_rank <= {WORST_JOBS_PER_SLICE}")
    )
    bottom = alt.hconcat(
        _slice_bars(data, kind, pick),
        worst_jobs_layers(ranked, _BAR_WIDTH, f"{kind}_worst", owners=False).properties(
            title=alt.Title(
                # The picked slice's name, from the selection's own signal ({slice: [value]}).
                alt.ExprRef(
                    f"pick_{kind}.slice ? 'Worst jobs of ' + pick_{kind}.slice"
                    f" : 'Worst jobs of the fleet: click a {SLICE_TITLES[kind]} to pick it'"
                ),
                anchor="start",
                fontSize=12,
            )
        ),
        spacing=40,
    )
    return alt.vconcat(_panels(data, kind, pick), bottom, spacing=28).resolve_scale(
        color="independent"
    )


def slice_charts(data: ReportData, kind: str) -> list[Chart]:
    title = SLICE_TITLES[kind]
    return [
        Chart(
            f"by-{kind.replace('_', '-')}",
            f"Goodput per {title}",
            f"Top: each {title}'s MPG, SG, RG and PG per day (each axis fits its values). "
            f"Bottom left: each {title}'s wanted chip-hours, split by ledger category; click a "
            f"bar to pick the {title} (double-click to clear). Bottom right: the "
            f"{WORST_JOBS_PER_SLICE} jobs of the picked {title} that lost the most dollars "
            "(the fleet's while none is picked), their lost chip-hours by cause.",
            slice_chart(data, kind),
        )
    ]


def worst_jobs_charts(data: ReportData) -> list[Chart]:
    """The worst priced jobs by dollars lost; the worst jobs of generations without a price
    (ranked after every priced one: their dollars are unknown) on a chart of their own, by
    chip-hours lost, so that a large loss no price covers is not out of sight."""
    priced = data.worst_jobs["priced"]
    charts = []
    if priced.any():
        charts.append(
            Chart(
                "worst-jobs",
                "Jobs that lost the most dollars",
                f"The {WORST_JOBS} priced jobs that lost the most dollars, each bar the job's "
                "lost chip-hours (every ledger category but ideal) split by cause, its dollars "
                "lost and owner beside it. Unprofiled productive chip-hours are a cause of "
                "their own: nobody measured that work's efficiency.",
                worst_jobs_chart(data, priced=True),
            )
        )
    if not priced.all():
        charts.append(
            Chart(
                "worst-unpriced",
                "Jobs without a price that lost the most chip-hours",
                f"The {WORST_JOBS} jobs of chip generations with no price (set them in "
                "DIR/mpg.toml) that lost the most chip-hours: the ranking puts them after every "
                "priced job, since their dollars are unknown.",
                worst_jobs_chart(data, priced=False),
            )
        )
    return charts
