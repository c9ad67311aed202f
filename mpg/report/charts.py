"""The report's charts, as Vega-Lite specs built with Altair from the frames of `data.py`.

Each chart's rows travel inside its spec (`alt.Data(values=...)`): strings from the logs (job ids,
owners, slice values) are data that Vega draws as text, never markup.
"""

from __future__ import annotations

from dataclasses import dataclass

import altair as alt
import polars as pl

from mpg.metrics import LEDGER_CATEGORIES
from mpg.report.data import ReportData

METRICS = ("mpg", "sg", "rg", "pg")
_SLICE_TITLES = {
    "chip_generation": "chip generation",
    "workload_class": "workload class",
    "framework": "framework",
}
CHART_WIDTH = 640


@dataclass(frozen=True)
class Chart:
    """One chart of the page: its element id, heading, a sentence on how to read it, its spec."""

    id: str
    title: str
    caption: str
    chart: alt.TopLevelMixin

    @property
    def spec(self) -> dict:
        """The Vega-Lite spec, data included."""
        return self.chart.to_dict()


def _values(frame: pl.DataFrame) -> alt.Data:
    """Rows as JSON values, days as ISO dates (read as UTC by `utcyearmonthdate`)."""
    dates = [
        pl.col(name).dt.to_string("%Y-%m-%d") for name, t in frame.schema.items() if t == pl.Date
    ]
    return alt.Data(values=frame.with_columns(dates).to_dicts())


def _day_axis() -> alt.X:
    return alt.X(
        "utcyearmonthdate(day):T",
        title="day (UTC)",
        axis=alt.Axis(format="%b %d", tickCount={"interval": "day", "step": 1}),
    )


def _ratio_axis(title: str) -> alt.Y:
    return alt.Y("value:Q", title=title, scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))


def _long(frame: pl.DataFrame, index: list[str]) -> pl.DataFrame:
    return frame.unpivot(on=list(METRICS), index=index, variable_name="metric")


def fleet_chart(data: ReportData) -> alt.Chart:
    fleet = data.slice_days.filter(pl.col("slice_kind") == "fleet")
    return (
        alt.Chart(_values(_long(fleet, ["day"])), width=CHART_WIDTH)
        .mark_line(point=True)
        .encode(
            x=_day_axis(),
            y=_ratio_axis("goodput"),
            color=alt.Color("metric:N", sort=list(METRICS), title="metric"),
            tooltip=["day:T", "metric:N", alt.Tooltip("value:Q", format=".2%")],
        )
    )


def slice_chart(data: ReportData, kind: str) -> alt.FacetChart:
    """MPG, SG, RG and PG of each value of one slice column, one panel per metric."""
    rows = data.slice_days.filter(pl.col("slice_kind") == kind)
    return (
        alt.Chart(_values(_long(rows, ["day", "slice"])), width=CHART_WIDTH // 4 - 10, height=180)
        .mark_line(point=True)
        .encode(
            x=_day_axis(),
            y=_ratio_axis(""),
            color=alt.Color("slice:N", title=_SLICE_TITLES[kind]),
            tooltip=["day:T", "slice:N", "metric:N", alt.Tooltip("value:Q", format=".2%")],
        )
        .facet(column=alt.Column("metric:N", sort=list(METRICS), title=None))
    )


def size_class_chart(data: ReportData) -> alt.Chart:
    order = data.size_class_days.sort("size_order")["size_class"].unique(maintain_order=True)
    return (
        alt.Chart(_values(data.size_class_days.rename({"sg": "value"})), width=CHART_WIDTH)
        .mark_line(point=True)
        .encode(
            x=_day_axis(),
            y=_ratio_axis("SG (scheduling goodput)"),
            color=alt.Color("size_class:N", sort=order.to_list(), title="chips requested"),
            tooltip=["day:T", "size_class:N", "jobs:Q", alt.Tooltip("value:Q", format=".2%")],
        )
    )


def _category_color(title: str) -> alt.Color:
    return alt.Color(
        "category:N",
        sort=list(LEDGER_CATEGORIES),
        title=title,
        scale=alt.Scale(scheme="tableau20"),
    )


def ledger_area_chart(data: ReportData) -> alt.Chart:
    order = {category: i for i, category in enumerate(LEDGER_CATEGORIES)}
    rows = data.ledger_days.with_columns(
        pl.col("category").replace_strict(order, default=len(order)).alias("order")
    )
    return (
        alt.Chart(_values(rows), width=CHART_WIDTH)
        .mark_area()
        .encode(
            x=_day_axis(),
            y=alt.Y("chip_h:Q", stack="zero", title="chip-hours"),
            color=_category_color("ledger category"),
            order=alt.Order("order:Q"),
            tooltip=["day:T", "category:N", alt.Tooltip("chip_h:Q", format=",.1f")],
        )
    )


def waterfall_chart(data: ReportData) -> alt.Chart:
    order = data.ledger_waterfall["category"].to_list()
    return (
        alt.Chart(_values(data.ledger_waterfall), width=CHART_WIDTH)
        .mark_bar()
        .encode(
            x=alt.X("category:N", sort=order, title=None, axis=alt.Axis(labelAngle=-40)),
            y=alt.Y("bar_start:Q", title="chip-hours"),
            y2="bar_end:Q",
            color=alt.Color(
                "category:N", sort=order, legend=None, scale=alt.Scale(scheme="tableau20")
            ),
            tooltip=["category:N", alt.Tooltip("chip_h:Q", format=",.1f")],
        )
    )


def worst_jobs_chart(data: ReportData) -> alt.LayerChart:
    rows = data.worst_jobs.with_columns(pl.col("owner").fill_null(""))
    base = alt.Chart(_values(rows), width=CHART_WIDTH // 2).encode(
        y=alt.Y("job_id:N", sort=None, title="job", axis=alt.Axis(labelLimit=400))
    )
    tooltip = [
        "job_id:N",
        "owner:N",
        "workload_class:N",
        "framework:N",
        "chip_generation:N",
        "chips_requested:Q",
        alt.Tooltip("wanted_chip_h:Q", format=",.1f"),
        alt.Tooltip("lost_chip_h:Q", format=",.1f"),
    ]
    bars = base.mark_bar().encode(
        x=alt.X("lost_chip_h:Q", title="lost chip-hours (wanted - productive)"),
        tooltip=tooltip,
    )
    owners = base.mark_text(align="left", dx=4).encode(x="lost_chip_h:Q", text="owner:N")
    return alt.layer(bars, owners)


def _percent(ratio: float | None) -> str:
    return "n/a" if ratio is None else f"{ratio:.2%}"


def opening_line(data: ReportData) -> str:
    """The sentence above the charts: the metric version every figure below is of, and the fleet's
    goodput over the whole period (ratios of the period's chip-time sums, as every roll-up)."""
    fleet = data.period_fleet.row(0, named=True)
    coverage = (
        "no job-day has a program profile, so PG and MPG are unknown"
        if fleet["pg"] is None
        else f"PG from the {fleet['pg_coverage']:.1%} of productive chip-time that was profiled"
    )
    return (
        f"Metric version {data.metric_version}. From {data.first} to {data.last}, "
        f"{fleet['jobs']:,} jobs wanted {fleet['wanted_chip_s'] / 3600:,.1f} chip-hours: "
        f"fleet MPG {_percent(fleet['mpg'])} = SG {_percent(fleet['sg'])} x "
        f"RG {_percent(fleet['rg'])} x PG {_percent(fleet['pg'])} ({coverage})."
    )


def charts(data: ReportData) -> list[Chart]:
    """Every chart of the report, in page order."""
    return [
        Chart("fleet", "Fleet goodput", "MPG = SG x RG x PG, per UTC day.", fleet_chart(data)),
        *(
            Chart(
                f"by-{kind.replace('_', '-')}",
                f"Goodput per {title}",
                f"Each {title}'s MPG, SG, RG and PG per day.",
                slice_chart(data, kind),
            )
            for kind, title in _SLICE_TITLES.items()
        ),
        Chart(
            "by-size",
            "Scheduling goodput by job size",
            "SG of the jobs in each class of chips requested: 1, 2-8, 9-64, 65-512, 513+.",
            size_class_chart(data),
        ),
        Chart(
            "ledger",
            "Where the chip-hours went",
            "The chip-time ledger summed over jobs, per day.",
            ledger_area_chart(data),
        ),
        Chart(
            "waterfall",
            "From wanted to ideal chip-hours",
            "The whole period's ledger: each category takes its share off the wanted chip-hours.",
            waterfall_chart(data),
        ),
        Chart(
            "worst-jobs",
            "Jobs that lost the most chip-hours",
            "Wanted but not productive chip-hours over the period, with the job's owner.",
            worst_jobs_chart(data),
        ),
    ]
