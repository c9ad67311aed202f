"""The fleet's charts: goodput per day, SG by job size, the ledger per day and as a waterfall.

Each chart's rows travel inside its spec (`alt.Data(values=...)`): strings from the logs are data
that Vega draws as text, never markup. Colours of ledger categories come from `theme`.
"""

from __future__ import annotations

import altair as alt
import polars as pl

from mpg.report.blocks import Chart
from mpg.report.data import ReportData
from mpg.report.theme import (
    FULL_WIDTH,
    METRIC_TITLES,
    METRICS,
    chip_hours,
    day_axis,
    ledger_color,
    ledger_order,
    percent,
    ratio_axis,
    tooltips,
    values,
    with_category_order,
)

WATERFALL_WIDTH = 680
LOSSES_WIDTH = 330


def long_metrics(frame: pl.DataFrame, index: list[str]) -> pl.DataFrame:
    """One row per metric: `metric` and `value` (ratios), the `index` columns kept."""
    return frame.unpivot(on=list(METRICS), index=index, variable_name="metric").with_columns(
        pl.col("metric").replace_strict(METRIC_TITLES).alias("metric_title")
    )


def fleet_chart(data: ReportData) -> alt.VConcatChart:
    """MPG, SG, RG, PG per day, over the wanted chip-hours that weigh each day."""
    fleet = data.slice_days.filter(pl.col("slice_kind") == "fleet").with_columns(
        (pl.col("wanted_chip_s") / 3600).alias("wanted_chip_h")
    )
    lines = (
        alt.Chart(values(long_metrics(fleet, ["day", "wanted_chip_h"])), width=FULL_WIDTH)
        .mark_line(point=True)
        .encode(
            x=day_axis(None),
            y=ratio_axis("goodput"),
            color=alt.Color(
                "metric_title:N", sort=[METRIC_TITLES[m] for m in METRICS], title="metric"
            ),
            strokeWidth=alt.condition("datum.metric == 'mpg'", alt.value(3.5), alt.value(1.5)),
            tooltip=tooltips("day:T", "metric_title:N", alt.Tooltip("value:Q", format=".2%")),
        )
    )
    weight = (
        alt.Chart(values(fleet), width=FULL_WIDTH, height=70)
        .mark_area(color="#5f6b77", opacity=0.35, line=True, point=True)
        .encode(
            x=day_axis(),
            y=alt.Y("wanted_chip_h:Q", title="wanted chip-h", axis=alt.Axis(tickCount=3)),
            tooltip=tooltips(
                "day:T", alt.Tooltip("wanted_chip_h:Q", format=",.1f", title="wanted chip-h")
            ),
        )
    )
    return alt.vconcat(lines, weight, spacing=4)


def size_class_chart(data: ReportData) -> alt.Chart:
    order = data.size_class_days.sort("size_order")["size_class"].unique(maintain_order=True)
    rows = data.size_class_days.rename({"sg": "value"}).with_columns(
        (pl.col("wanted_chip_s") / 3600).alias("wanted_chip_h")
    )
    return (
        alt.Chart(values(rows), width=FULL_WIDTH, height=260)
        .mark_line(point=True)
        .encode(
            x=day_axis(),
            y=ratio_axis("SG (scheduling goodput)", full=False),
            color=alt.Color("size_class:N", sort=order.to_list(), title="chips requested"),
            tooltip=tooltips(
                "day:T",
                alt.Tooltip("size_class:N", title="chips requested"),
                alt.Tooltip("jobs:Q", title="job-days"),
                alt.Tooltip("wanted_chip_h:Q", format=",.1f", title="wanted chip-h"),
                alt.Tooltip("value:Q", format=".2%", title="SG"),
            ),
        )
    )


def ledger_area_chart(data: ReportData) -> alt.Chart:
    return (
        alt.Chart(values(with_category_order(data.ledger_days)), width=FULL_WIDTH)
        .mark_area()
        .encode(
            x=day_axis(),
            y=alt.Y("chip_h:Q", stack="zero", title="chip-hours"),
            color=ledger_color(),
            order=ledger_order(),
            tooltip=tooltips("day:T", "category:N", alt.Tooltip("chip_h:Q", format=",.1f")),
        )
    )


def _waterfall_rows(data: ReportData) -> pl.DataFrame:
    return data.ledger_waterfall.with_columns(
        pl.struct("chip_h", "share")
        .map_elements(
            lambda r: [chip_hours(r["chip_h"]), percent(r["share"], 1)],
            return_dtype=pl.List(pl.String),
        )
        .alias("label")
    )


def waterfall_chart(data: ReportData) -> alt.LayerChart:
    """Wanted chip-hours stepping down to ideal, each bar labelled with its chip-hours and share
    of wanted; a dashed line marks what fleet MPG makes of wanted (see `reconciliation`)."""
    rows = _waterfall_rows(data)
    order = rows["category"].to_list()
    base = alt.Chart(values(rows), width=WATERFALL_WIDTH, height=320).encode(
        x=alt.X("category:N", sort=order, title=None, axis=alt.Axis(labelAngle=-35)),
    )
    tooltip = tooltips(
        "category:N",
        alt.Tooltip("chip_h:Q", format=",.1f", title="chip-hours"),
        alt.Tooltip("share:Q", format=".2%", title="share of wanted"),
    )
    bars = base.mark_bar().encode(
        y=alt.Y("bar_start:Q", title="chip-hours"),
        y2="bar_end:Q",
        color=ledger_color(legend=False),
        tooltip=tooltip,
    )
    # Two lines (chip-hours, share): Vega draws the second below the first, so lift both.
    labels = base.mark_text(baseline="bottom", dy=-14, fontSize=10).encode(
        y="bar_start:Q", text="label:N"
    )
    layers = [bars, labels]
    fleet = data.fleet
    if fleet["mpg"] is not None:
        at = fleet["mpg_wanted_chip_s"] / 3600
        mark = pl.DataFrame(
            {
                "at": [at],
                "label": [f"fleet MPG x wanted: {chip_hours(at)} ({percent(fleet['mpg'])})"],
            }
        )
        line = alt.Chart(values(mark))
        layers += [
            line.mark_rule(strokeDash=[6, 4], color="#222").encode(y="at:Q"),
            line.mark_text(align="center", baseline="bottom", dy=-3, x=WATERFALL_WIDTH / 2).encode(
                y="at:Q", text="label:N"
            ),
        ]
    return alt.layer(*layers)


def losses_chart(data: ReportData) -> alt.LayerChart:
    """The chip-hours that made no kept progress (wanted - productive) on their own scale, so that
    the waterfall's small categories are bars here, not slivers."""
    productive = ("wanted", "productive_unprofiled", "program_loss", "ideal")
    rows = _waterfall_rows(data).filter(~pl.col("category").is_in(productive))
    base = alt.Chart(values(rows), width=LOSSES_WIDTH, height=320).encode(
        y=alt.Y("category:N", sort=rows["category"].to_list(), title=None),
        x=alt.X("chip_h:Q", title="chip-hours", scale=alt.Scale(nice=True)),
    )
    bars = base.mark_bar().encode(
        color=ledger_color(legend=False),
        tooltip=tooltips(
            "category:N",
            alt.Tooltip("chip_h:Q", format=",.1f", title="chip-hours"),
            alt.Tooltip("share:Q", format=".2%", title="share of wanted"),
        ),
    )
    labels = base.mark_text(align="left", dx=3, fontSize=10).encode(
        text=alt.Text("share:Q", format=".1%")
    )
    return alt.layer(bars, labels)


def fleet_charts(data: ReportData) -> list[Chart]:
    return [
        Chart(
            "fleet",
            "Fleet goodput per day",
            "MPG = SG x RG x PG per UTC day (MPG the thick line); below, the wanted chip-hours "
            "each day weighs in the period's figures.",
            fleet_chart(data),
        )
    ]


def ledger_charts(data: ReportData) -> list[Chart]:
    return [
        Chart(
            "ledger",
            "Per day",
            "The chip-time ledger summed over jobs, stacked per day, ideal time at the bottom.",
            ledger_area_chart(data),
        ),
        Chart(
            "waterfall",
            "From wanted to ideal chip-hours",
            "The whole period's ledger: each category takes its chip-hours (and share of "
            "wanted) off the wanted chip-hours; the dashed line is fleet MPG x wanted.",
            waterfall_chart(data),
        ),
        Chart(
            "losses",
            "The non-productive chip-hours on their own scale",
            "The waterfall's categories before productive time (wanted - productive), each "
            "labelled with its share of wanted.",
            losses_chart(data),
        ),
    ]


def size_class_charts(data: ReportData) -> list[Chart]:
    return [
        Chart(
            "by-size",
            "Scheduling goodput by job size",
            "SG of the jobs in each class of chips requested (1, 2-8, 9-64, 65-512, 513+), per "
            "day; the axis fits the values, it does not start at 0%.",
            size_class_chart(data),
        )
    ]
