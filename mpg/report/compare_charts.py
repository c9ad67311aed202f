"""The report's comparison section (`mpg report --compare BASE CURRENT`): the `Comparison` that
`mpg compare` prints, drawn as Vega-Lite charts (three, and a fourth for dollars lost where both
periods have priced chip-time).

The charts are built from the `Comparison` object itself, never recomputed, so the page and the
terminal cannot disagree. Values stay in MPG units (the axes show them as percent: one point of
MPG is 1%); slice names come from the logs and travel as data, like every string of the report.
"""

from __future__ import annotations

import altair as alt

from mpg.compare.comparison import Comparison
from mpg.compare.decompose import (
    FLEET_PART_NAMES,
    MIX_IN_WORDS,
    PART_LABELS,
    PART_NAMES,
    SLICE_COLUMNS,
    SliceChange,
)
from mpg.compare.dollars import DOLLAR_PART_NAMES
from mpg.definitions import figures
from mpg.report.blocks import Chart, Note, Section, Table
from mpg.report.theme import FULL_WIDTH, HALF_WIDTH, tooltips

_STEP_COLORS = alt.Scale(domain=["MPG", "up", "down"], range=["#4c78a8", "#54a24b", "#e45756"])
# More dollars lost is worse: a part that adds dollars is red.
_DOLLAR_COLORS = alt.Scale(domain=["MPG", "up", "down"], range=["#4c78a8", "#e45756", "#54a24b"])
_PERIOD_COLORS = ["#a5b4c4", "#34495e"]


def waterfall_rows(comparison: Comparison) -> list[dict]:
    """Base fleet MPG, each part of the change stacked on the last, then current fleet MPG."""
    d = comparison.decomposition
    rows = [_step("base", "base MPG", d.base_mpg, 0.0, d.base_mpg)]
    top = d.base_mpg
    for name in FLEET_PART_NAMES:
        value = getattr(d.totals, name)
        rows.append(_step(name, PART_LABELS[name], value, top, top + value))
        top += value
    rows.append(_step("current", "current MPG", d.current_mpg, 0.0, d.current_mpg))
    return rows


def dollar_waterfall_rows(comparison: Comparison) -> list[dict]:
    """Base dollars lost, each part of their change stacked on the last, then current."""
    d = comparison.dollars
    assert d is not None
    rows = [_step("base", "base $ lost", d.base.lost, 0.0, d.base.lost)]
    top = d.base.lost
    for name in DOLLAR_PART_NAMES:
        value = getattr(d.parts, name)
        rows.append(_step(name, name, value, top, top + value))
        top += value
    rows.append(_step("current", "current $ lost", d.current.lost, 0.0, d.current.lost))
    return rows


def _step(step: str, label: str, value: float, start: float, end: float) -> dict:
    direction = "MPG" if step in ("base", "current") else ("up" if value >= 0 else "down")
    return {
        "step": step,
        "label": label,
        "value": value,
        "bar_start": start,
        "bar_end": end,
        "direction": direction,
    }


def slice_part_rows(comparison: Comparison) -> list[dict]:
    """The top contributing slices' parts, one row per slice and part."""
    return [
        {
            **dict(zip(SLICE_COLUMNS, c.slice, strict=True)),
            "slice": " / ".join(c.slice),
            "part": PART_LABELS[name],
            "value": getattr(c.parts, name),
        }
        for c in comparison.top_slices
        for name in PART_NAMES
    ]


def _slice_label(change: SliceChange) -> str:
    """The slice's name, and which period it has no job-days in, as the terminal says."""
    absent = next(
        (p for p, sums in (("base", change.base), ("current", change.current)) if not sums.wanted),
        None,
    )
    name = " / ".join(change.slice)
    return f"{name} (no job-days in the {absent} period)" if absent else name


def ledger_move_rows(comparison: Comparison) -> list[dict]:
    """The ledger categories whose share of wanted chip-time moved most, for the fleet and then
    each top slice (as the terminal prints them): one row per scope, category and period."""
    periods = {"base": comparison.base_period, "current": comparison.current_period}
    scopes = [("fleet", comparison.fleet_moves)] + [
        (_slice_label(c), comparison.slice_moves.get(c.slice, ())) for c in comparison.top_slices
    ]
    return [
        {
            "scope": scope,
            "category": m.category,
            "period": f"{period} ({periods[period]})",
            "share": share,
            "change": m.change,
        }
        for scope, moves in scopes
        for m in moves
        for period, share in (("base", m.base_share), ("current", m.current_share))
    ]


def _waterfall_chart(
    rows: list[dict], title: str, fmt: str, signed: str, colors: alt.Scale
) -> alt.LayerChart:
    base = alt.Chart(alt.Data(values=rows), width=FULL_WIDTH).encode(
        x=alt.X(
            "label:N",
            sort=[row["label"] for row in rows],
            title=None,
            axis=alt.Axis(labelAngle=0, labelLimit=160),
        )
    )
    bars = base.mark_bar().encode(
        y=alt.Y("bar_start:Q", title=title, axis=alt.Axis(format=fmt)),
        y2="bar_end:Q",
        color=alt.Color("direction:N", scale=colors, legend=None),
        tooltip=tooltips("label:N", alt.Tooltip("value:Q", format=signed)),
    )
    labels = (
        base.transform_calculate(top="max(datum.bar_start, datum.bar_end)")
        .mark_text(dy=-6)
        .encode(y="top:Q", text=alt.Text("value:Q", format=signed))
    )
    return alt.layer(bars, labels)


def _slices_chart(comparison: Comparison) -> alt.Chart:
    order = [" / ".join(c.slice) for c in comparison.top_slices]
    return (
        alt.Chart(alt.Data(values=slice_part_rows(comparison)), width=HALF_WIDTH)
        .mark_bar()
        .encode(
            y=alt.Y("slice:N", sort=order, title=None, axis=alt.Axis(labelLimit=400)),
            x=alt.X("value:Q", stack="zero", title="part of the change", axis=alt.Axis(format="%")),
            color=alt.Color("part:N", sort=[PART_LABELS[n] for n in PART_NAMES], title="part"),
            tooltip=tooltips(
                *(f"{c}:N" for c in SLICE_COLUMNS),
                "part:N",
                alt.Tooltip("value:Q", format="+.3%"),
            ),
        )
    )


def _ledger_moves_chart(comparison: Comparison) -> alt.FacetChart:
    rows = ledger_move_rows(comparison)
    scopes = list(dict.fromkeys(row["scope"] for row in rows))
    return (
        alt.Chart(alt.Data(values=rows), width=HALF_WIDTH, height=alt.Step(11))
        .mark_bar()
        .encode(
            y=alt.Y("category:N", sort=None, title=None),
            yOffset=alt.YOffset("period:N"),
            x=alt.X("share:Q", title="share of wanted chip-time", axis=alt.Axis(format="%")),
            color=alt.Color("period:N", title="period", scale=alt.Scale(range=_PERIOD_COLORS)),
            tooltip=tooltips(
                "scope:N",
                "category:N",
                "period:N",
                alt.Tooltip("share:Q", format=".2%"),
                alt.Tooltip("change:Q", format="+.2%"),
            ),
        )
        .facet(
            row=alt.Row(
                "scope:N",
                sort=scopes,
                title=None,
                header=alt.Header(labelAngle=0, labelAlign="left", labelLimit=300),
            ),
            spacing=8,
        )
        .resolve_scale(y="independent")
    )


def comparison_charts(comparison: Comparison) -> list[Chart]:
    """The comparison section, in page order."""
    d = comparison.decomposition
    periods = f"{comparison.base_period} to {comparison.current_period}"
    return [
        Chart(
            "compare-waterfall",
            f"Why fleet MPG changed, {periods}",
            f"Fleet MPG went from {d.base_mpg:.2%} to {d.current_mpg:.2%}: the mix, SG, RG and PG "
            "parts add up to the change exactly (mpg compare, docs/compare.md). " + MIX_IN_WORDS,
            _waterfall_chart(waterfall_rows(comparison), "fleet MPG", "%", "+.2%", _STEP_COLORS),
        ),
        Chart(
            "compare-slices",
            "The slices that moved fleet MPG most",
            "Each top slice's part of the change, split by part (points of fleet MPG).",
            _slices_chart(comparison),
        ),
        Chart(
            "compare-ledger",
            "The ledger categories that moved",
            "For the fleet and each top slice, the ledger categories whose share of wanted "
            "chip-time moved most, base beside current (as mpg compare prints them).",
            _ledger_moves_chart(comparison),
        ),
    ]


def dollar_blocks(comparison: Comparison) -> list[Chart | Note]:
    """The change in dollars lost as a waterfall, or why there is none."""
    d = comparison.dollars
    if d is None:
        return [Note(f"Dollars: {comparison.dollars_unavailable}.")]
    unpriced = (d.base.unpriced_chip_s / 3600, d.current.unpriced_chip_s / 3600)
    return [
        Chart(
            "compare-dollars",
            "Why dollars lost changed",
            f"Dollars lost (every ledger category but ideal, priced chip-time) went from "
            f"{d.base.reconciliation} to {d.current.reconciliation}. Volume (the dollars wanted "
            "grew or shrank, lost at the fleet's mean rate), mix (they moved to slices that "
            "lose more or less of them) and the change in the share lost to scheduling, "
            "runtime, program and unprofiled time add up to the change exactly. Chip-time "
            f"without a price is left out: {unpriced[0]:,.1f} chip-hours in the base period, "
            f"{unpriced[1]:,.1f} in the current one.",
            _waterfall_chart(
                dollar_waterfall_rows(comparison), "dollars lost", "$,.0f", "+$,.2f", _DOLLAR_COLORS
            ),
        )
    ]


def team_table(comparison: Comparison) -> Table:
    """The teams that moved fleet MPG or dollars lost most, as the terminal lists them."""

    def points(value: float) -> str:
        return f"{value * 100:+.2f}"

    def dollars(value: float | None) -> str:
        return "no price" if value is None else figures.usd(value)

    columns = ("team", "MPG was", "MPG now", *(PART_LABELS[n] for n in PART_NAMES), "total",
               "dollars lost was", "dollars lost now", "change")  # fmt: skip
    rows = tuple(
        (
            t.team,
            figures.percent(t.base.mpg),
            figures.percent(t.current.mpg),
            *(points(getattr(t.parts, n)) for n in PART_NAMES),
            points(t.parts.total),
            dollars(t.base_lost_usd),
            dollars(t.current_lost_usd),
            figures.usd_change(t.lost_usd_change),
        )
        for t in comparison.top_teams
    )
    return Table(
        "Teams that moved fleet MPG or dollars lost most (MPG points, the fleet partitioned by "
        "team: every team's parts and PG coverage "
        f"{points(comparison.teams_coverage)} add up to the change; mpg compare --json has "
        "every team)",
        columns,
        rows,
        frozenset(columns[1:]),
    )


def comparison_section(comparison: Comparison) -> Section:
    """The comparison as a section of the page, after the fleet's."""
    return Section(
        "compare",
        f"What changed: {comparison.base_period} to {comparison.current_period}",
        "mpg compare's figures for the two periods (docs/compare.md), whatever the report's "
        "own period.",
        (
            *comparison_charts(comparison),
            *([team_table(comparison)] if comparison.teams else []),
            *dollar_blocks(comparison),
        ),
    )
