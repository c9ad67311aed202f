"""The report's dollars and kWh: the ledger priced (`chip_time_cost`) by category, over time and
per slice, with what has no price said, never guessed.

Dollars are chip-hours x the price of the job's chip generation; a generation without a price
adds no dollars, and its chip-hours are counted apart and named. Dollars lost are the semantic
layer's (sql/semantic/job_days.sql: every ledger category but ideal), read from the period's
roll-up, never summed here. kWh are chip-hours x board power (TDP) x PUE: an estimate, never a
measurement, and every figure or axis that shows them says so.
"""

from __future__ import annotations

import altair as alt
import polars as pl

from mpg.definitions.figures import chip_hours_reconciliation, reconciliation, usd
from mpg.report.blocks import Block, Chart, Figure, Figures, Note, Section, Table
from mpg.report.data import ReportData
from mpg.report.slices import SLICE_TITLES
from mpg.report.theme import (
    FULL_WIDTH,
    HALF_WIDTH,
    chip_hours,
    day_axis,
    ledger_color,
    ledger_order,
    percent,
    tooltips,
    values,
    with_category_order,
)

KWH = "kWh (estimate: board power x PUE)"
_KWH_COLOR = "#6b8e23"


def lost_line(data: ReportData) -> str:
    """Dollars lost reconciled with their parts (mpg.definitions.figures.reconciliation), and the
    same in chip-hours, for every job, priced or not."""
    fleet = data.fleet
    return (
        f"Lost: {reconciliation(fleet, data.unpriced_generations())}. In chip-hours, "
        f"{chip_hours_reconciliation(fleet)}. Lost is every ledger category but ideal "
        "(docs/metrics.md)."
    )


def dollars_figure(data: ReportData) -> Figure:
    """The summary's dollars lost: the layer's (every ledger category but ideal, priced)."""
    fleet = data.fleet
    if fleet["lost_usd"] is None:
        return Figure("dollars lost", "n/a", "no chip-time here has a price")
    return Figure("dollars lost", usd(fleet["lost_usd"]), f"of {usd(fleet['wanted_usd'])} wanted")


def _figures(data: ReportData) -> Figures:
    f = data.fleet
    return Figures(
        (
            Figure(
                "dollars wanted",
                usd(f["wanted_usd"]),
                f"{chip_hours(f['priced_chip_s'] / 3600)} priced chip-hours",
            ),
            dollars_figure(data),
            Figure(
                "unpriced chip-hours",
                chip_hours(f["unpriced_chip_s"] / 3600),
                f"{percent(f['unpriced_share'], 1)} of wanted: no price, left out",
            ),
            Figure(
                "kWh (estimate)",
                f"{f['kwh'] or 0:,.0f}",
                f"board power x PUE; {chip_hours(f['unpowered_chip_s'] / 3600)} chip-h of "
                "unknown power",
            ),
        )
    )


def _unpriced(data: ReportData) -> list[Block]:
    """Which chip generations have no price, with their chip-hours: said, never guessed."""
    rows = data.slices.filter(
        (pl.col("slice_kind") == "chip_generation") & (pl.col("unpriced_chip_s") > 0)
    ).sort(["unpriced_chip_s", "slice"], descending=[True, False])
    if rows.is_empty():
        return [Note("Every chip generation in the period has a price.")]
    table = Table(
        "Chip generations without a price: left out of every dollar figure, not guessed (set "
        "[prices] in DIR/mpg.toml)",
        ("chip generation", "wanted chip-hours", "share of wanted"),
        tuple(
            (r["slice"], chip_hours(r["unpriced_chip_s"] / 3600), percent(r["wanted_share"], 1))
            for r in rows.iter_rows(named=True)
        ),
        frozenset({"wanted chip-hours", "share of wanted"}),
    )
    return [table]


def cost_days_chart(data: ReportData) -> alt.VConcatChart:
    """Dollars per day stacked by ledger category; below, the day's kWh (an estimate)."""
    rows = with_category_order(data.ledger_days.filter(pl.col("usd").is_not_null()))
    area = (
        alt.Chart(values(rows), width=FULL_WIDTH)
        .mark_area()
        .encode(
            x=day_axis(None),
            y=alt.Y("usd:Q", stack="zero", title="USD", axis=alt.Axis(format="$,.0f")),
            color=ledger_color(),
            order=ledger_order(),
            tooltip=tooltips(
                "day:T",
                "category:N",
                alt.Tooltip("usd:Q", format="$,.2f", title="USD"),
                alt.Tooltip("unpriced_chip_h:Q", format=",.1f", title="unpriced chip-h"),
            ),
        )
    )
    kwh = data.slice_days.filter(pl.col("slice_kind") == "fleet").with_columns(
        (pl.col("unpowered_chip_s") / 3600).alias("unpowered_chip_h")
    )
    energy = (
        alt.Chart(values(kwh), width=FULL_WIDTH, height=80)
        .mark_area(
            color=_KWH_COLOR,
            opacity=0.5,
            line={"color": _KWH_COLOR},
            point={"color": _KWH_COLOR},
        )
        .encode(
            x=day_axis(),
            y=alt.Y("kwh:Q", title="kWh (estimate)", axis=alt.Axis(tickCount=3)),
            tooltip=tooltips(
                "day:T",
                alt.Tooltip("kwh:Q", format=",.1f", title=KWH),
                alt.Tooltip("unpowered_chip_h:Q", format=",.1f", title="chip-h of unknown power"),
            ),
        )
    )
    return alt.vconcat(area, energy, spacing=4) if data.fleet["kwh"] else alt.vconcat(area)


def category_totals(data: ReportData) -> pl.DataFrame:
    """The period's dollars and kWh per ledger category (priced, powered chip-time)."""
    return with_category_order(data.categories)


def _category_bars(rows: pl.DataFrame, field: str, title: str, fmt: str) -> alt.LayerChart:
    order = rows.sort("category_order")["category"].to_list()
    base = alt.Chart(values(rows), width=HALF_WIDTH - 60).encode(
        y=alt.Y("category:N", sort=order, title=None)
    )
    bars = base.mark_bar().encode(
        x=alt.X(f"{field}:Q", title=title),
        color=ledger_color(legend=False),
        tooltip=tooltips(
            "category:N",
            alt.Tooltip(f"{field}:Q", format=fmt, title=title),
            alt.Tooltip("chip_h:Q", format=",.1f", title="chip-hours"),
        ),
    )
    labels = base.mark_text(align="left", dx=3, fontSize=10).encode(
        x=f"{field}:Q", text=alt.Text(f"{field}:Q", format=fmt)
    )
    return alt.layer(bars, labels)


def cost_categories_chart(data: ReportData) -> alt.HConcatChart:
    rows = category_totals(data)
    panels = [
        _category_bars(rows.filter(pl.col(field) > 0), field, title, fmt)
        for field, title, fmt in (("usd", "USD over the period", "$,.0f"), ("kwh", KWH, ",.0f"))
        if not rows.filter(pl.col(field) > 0).is_empty()
    ]
    return alt.hconcat(*panels, spacing=60)


def slice_cost_rows(data: ReportData) -> pl.DataFrame:
    """Each slice's dollars per category (priced chip-time), with its totals for labels."""
    rows = data.slice_ledger.filter(pl.col("usd") > 0)
    return with_category_order(rows).with_columns(
        pl.col("slice_kind").replace_strict(SLICE_TITLES).alias("slice_title")
    )


def cost_slices_chart(data: ReportData) -> alt.VConcatChart:
    rows = slice_cost_rows(data)
    charts = [
        alt.Chart(values(rows.filter(pl.col("slice_kind") == kind)), width=FULL_WIDTH - 160)
        .mark_bar()
        .encode(
            y=alt.Y(
                "slice:N",
                sort=alt.EncodingSortField("slice_usd", op="max", order="descending"),
                title=title,
                axis=alt.Axis(labelLimit=260),
            ),
            x=alt.X(
                "usd:Q", stack="zero", title="USD over the period", axis=alt.Axis(format="$,.0f")
            ),
            color=ledger_color(),
            order=ledger_order(),
            tooltip=tooltips(
                alt.Tooltip("slice:N", title=title),
                "category:N",
                alt.Tooltip("usd:Q", format="$,.2f", title="USD"),
                alt.Tooltip("slice_usd:Q", format="$,.2f", title="the slice's USD"),
                alt.Tooltip("kwh:Q", format=",.1f", title=KWH),
                alt.Tooltip("unpriced_chip_h:Q", format=",.1f", title="unpriced chip-h"),
            ),
        )
        for kind, title in SLICE_TITLES.items()
        if not rows.filter(pl.col("slice_kind") == kind).is_empty()
    ]
    return alt.vconcat(*charts, spacing=16)


def cost_section(data: ReportData) -> Section:
    blocks: list[Block] = [_figures(data), Note(lost_line(data), "lost")]
    blocks += _unpriced(data)
    if data.fleet["wanted_usd"]:
        blocks += [
            Chart(
                "cost-days",
                "Dollars per day",
                "The ledger in dollars, stacked per day by category; below, the day's kWh "
                "(an estimate from board power x PUE, not a measurement).",
                cost_days_chart(data),
            ),
            Chart(
                "cost-categories",
                "Dollars and kWh by ledger category",
                "The period's dollars (priced chip-time) and kWh (estimated from board power "
                "x PUE: an upper bound of the chips' own energy, without hosts or network) per "
                "category.",
                cost_categories_chart(data),
            ),
            Chart(
                "cost-slices",
                "Dollars per slice",
                "Each chip generation's, workload class's and framework's dollars, split by "
                "ledger category; chip-time without a price adds none (its chip-hours are in "
                "the tooltip and the table above).",
                cost_slices_chart(data),
            ),
        ]
    return Section(
        "cost",
        "Dollars and kWh",
        "The chip-time ledger priced (chip_time_cost): chip-hours x the price per chip-hour of "
        "the job's chip generation, and kWh = chip-hours x board watts / 1000 x PUE, an "
        "estimate from board power, never a measurement. Dollars lost are the dollars of every "
        "ledger category but ideal (docs/metrics.md), the figure mpg compare, mpg explain, "
        "mpg run and the views give for the same period and slice.",
        tuple(blocks),
    )
