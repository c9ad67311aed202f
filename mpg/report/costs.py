"""The report's dollars and kWh: the ledger priced (`chip_time_cost`) by category, over time and
per slice, with what has no price said, never guessed.

Dollars are chip-hours x the price of the job's chip generation; a generation without a price
adds no dollars, and its chip-hours are counted apart and named. Dollars lost are `mpg compare`'s
(mpg.compare.dollars): dollars wanted x (1 - MPG weighted by price). kWh are chip-hours x board
power (TDP) x PUE: an estimate, never a measurement, and every figure or axis that shows them
says so.
"""

from __future__ import annotations

import altair as alt
import polars as pl

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


def usd(value: float | None) -> str:
    return "n/a" if value is None else f"${value:,.0f}" if abs(value) >= 100 else f"${value:,.2f}"


def _totals(data: ReportData) -> dict[str, float]:
    days = data.ledger_days
    return {
        "chip_h": days["chip_h"].sum(),
        "usd": days["usd"].sum(),
        "kwh": days["kwh"].sum(),
        "unpriced_chip_h": days["unpriced_chip_h"].sum(),
        "unpowered_chip_h": days["unpowered_chip_h"].sum(),
    }


def dollars_figure(data: ReportData) -> Figure:
    """The summary's dollars lost, as `mpg compare` counts them."""
    if data.dollars is None:
        return Figure("dollars lost", "n/a", "no priced chip-time with an MPG")
    return Figure(
        "dollars lost",
        usd(data.dollars.lost),
        f"of {usd(data.dollars.usd)} priced",
    )


def _figures(data: ReportData) -> Figures:
    t = _totals(data)
    d = data.dollars
    priced_h = t["chip_h"] - t["unpriced_chip_h"]
    return Figures(
        (
            Figure("dollars wanted", usd(t["usd"]), f"{chip_hours(priced_h)} priced chip-hours"),
            Figure(
                "dollars lost",
                usd(d.lost) if d else "n/a",
                "wanted $ x (1 - MPG in dollars)" if d else "no priced MPG",
            ),
            Figure("MPG in dollars", percent(d.mpg if d else None), "chip-time weighted by price"),
            Figure(
                "unpriced chip-hours",
                chip_hours(t["unpriced_chip_h"]),
                f"{percent(t['unpriced_chip_h'] / t['chip_h'] if t['chip_h'] else None, 1)} "
                "of wanted: no price, left out",
            ),
            Figure(
                "kWh (estimate)",
                f"{t['kwh']:,.0f}",
                f"board power x PUE; {chip_hours(t['unpowered_chip_h'])} chip-h of unknown power",
            ),
        )
    )


def _unpriced(data: ReportData) -> list[Block]:
    """Which chip generations have no price, with their chip-hours: said, never guessed."""
    rows = (
        data.slice_ledger.filter(pl.col("slice_kind") == "chip_generation")
        .group_by("slice")
        .agg(pl.col("chip_h").sum(), pl.col("unpriced_chip_h").sum())
        .filter(pl.col("unpriced_chip_h") > 0)
        .sort(["unpriced_chip_h", "slice"], descending=[True, False])
    )
    if rows.is_empty():
        return [Note("Every chip generation in the period has a price.")]
    wanted = data.ledger_days["chip_h"].sum()
    table = Table(
        "Chip generations without a price: left out of every dollar figure, not guessed (set "
        "[prices] in DIR/mpg.toml)",
        ("chip generation", "wanted chip-hours", "share of wanted"),
        tuple(
            (
                r["slice"],
                chip_hours(r["unpriced_chip_h"]),
                percent(r["unpriced_chip_h"] / wanted, 1),
            )
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
    kwh = (
        data.ledger_days.group_by("day")
        .agg(pl.col("kwh").sum(), pl.col("unpowered_chip_h").sum())
        .sort("day")
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
    return alt.vconcat(area, energy, spacing=4) if kwh["kwh"].sum() else alt.vconcat(area)


def category_totals(data: ReportData) -> pl.DataFrame:
    """The period's dollars and kWh per ledger category (priced, powered chip-time)."""
    return with_category_order(
        data.ledger_days.group_by("category")
        .agg(pl.col("chip_h").sum(), pl.col("usd").sum(), pl.col("kwh").sum())
        .sort("category")
    )


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
    totals = rows.group_by("slice_kind", "slice").agg(pl.col("usd").sum().alias("slice_usd"))
    return with_category_order(rows.join(totals, on=["slice_kind", "slice"])).with_columns(
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
    blocks: list[Block] = [_figures(data)]
    if data.dollars is None:
        blocks.append(Note(f"Dollars lost are not known: {data.dollars_unavailable}."))
    blocks += _unpriced(data)
    if data.ledger_days["usd"].sum():
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
        "estimate from board power, never a measurement. Dollars lost count as MPG does: "
        "dollars wanted x (1 - MPG with each chip-hour weighted by its price), as mpg compare "
        "does.",
        tuple(blocks),
    )
