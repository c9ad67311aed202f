"""The report's words and tables: the opening figures and how MPG meets the ledger, what the data
is (the run that published it, the days it covers) and its quality.

Every string here goes into a block of `blocks`, which the page escapes; quarantine reasons and
expectation samples quote the logs, and trace paths are the user's.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import altair as alt
import polars as pl

from mpg.definitions import figures
from mpg.report.blocks import Block, Chart, Facts, Figure, Figures, Note, Section, Table
from mpg.report.costs import dollars_figure, lost_line
from mpg.report.data import COVERAGE_DROP, ReportData
from mpg.report.theme import (
    CATEGORY_LABELS,
    HALF_WIDTH,
    SCORECARD_TITLES,
    chip_hours,
    percent,
    tooltips,
    values,
)

SOURCES = ("scheduler", "runtime", "profiles")


def opening_line(data: ReportData) -> str:
    """The sentence above the charts: the metric version every figure below is of, and the fleet's
    goodput over the whole period (ratios of the period's chip-time sums, as every roll-up)."""
    fleet = data.fleet
    coverage = (
        "no job-day has a program profile, so PG and MPG are unknown"
        if fleet["pg"] is None
        else f"PG from the {fleet['pg_coverage']:.1%} of productive chip-time that was profiled"
    )
    return (
        f"Metric version {data.metric_version}. From {data.first} to {data.last}, "
        f"{fleet['jobs']:,} jobs wanted {fleet['wanted_chip_s'] / 3600:,.1f} chip-hours: "
        f"fleet MPG {percent(fleet['mpg'])} = SG {percent(fleet['sg'])} x "
        f"RG {percent(fleet['rg'])} x PG {percent(fleet['pg'])} ({coverage})."
    )


def reconciliation(data: ReportData) -> str:
    """Why the ledger's ideal share of wanted is not fleet MPG: PG is measured on profiled
    productive time only, so ideal / wanted = MPG x PG coverage."""
    f = data.fleet
    unprofiled = f["productive_unprofiled_chip_s"] / 3600
    ideal = (f["ideal_chip_s"] or 0.0) / 3600
    if not f["wanted_chip_s"]:
        return "No chip-time was wanted in the period."
    if not f["productive_chip_s"]:
        return "No chip-time was productive in the period: the ledger ends at no ideal time."
    if f["pg"] is None:
        return (
            "The ledger below ends at no ideal chip-hours: no productive chip-time had a profile, "
            f"so its {chip_hours(unprofiled)} productive chip-hours have no ideal time and fleet "
            "MPG is unknown."
        )
    if f["pg_coverage"] == 1:
        return (
            f"The ledger below ends at {chip_hours(ideal)} ideal chip-hours, "
            f"{percent(f['ideal_share'])} of wanted: fleet MPG, since every productive chip-hour "
            "had a profile."
        )
    return (
        f"The ledger below ends at {chip_hours(ideal)} ideal chip-hours, "
        f"{percent(f['ideal_share'])} of wanted, not fleet MPG's {percent(f['mpg'])}: PG is "
        f"measured on the {percent(f['pg_coverage'], 1)} of productive chip-time that had a "
        f"profile, and the other {chip_hours(unprofiled)} productive chip-hours "
        f"(productive_unprofiled) have no ideal time. MPG counts them at the profiled PG, "
        f"{percent(f['pg'])}; the ledger cannot. So ideal / wanted = MPG x PG coverage = "
        f"{percent(f['mpg'])} x {percent(f['pg_coverage'], 1)}."
    )


def summary_section(data: ReportData) -> Section:
    f = data.fleet
    coverage = f"of productive time; {percent(f['pg_coverage'], 1)} profiled"
    tiles = Figures(
        (
            Figure("fleet MPG", percent(f["mpg"]), "SG x RG x PG"),
            Figure("SG", percent(f["sg"]), "scheduling: chips held / wanted"),
            Figure("RG", percent(f["rg"]), "runtime: productive / held"),
            Figure("PG", percent(f["pg"]), coverage),
            Figure("ideal / wanted", percent(f["ideal_share"]), "where the ledger ends"),
            Figure("wanted chip-hours", chip_hours(f["wanted_chip_s"] / 3600), f"{f['jobs']} jobs"),
            dollars_figure(data),
        )
    )
    return Section(
        "summary",
        "Summary",
        "",
        (
            Note(opening_line(data), "opening"),
            tiles,
            Note(lost_line(data), "lost"),
            Note(reconciliation(data), "reconcile"),
            *scorecard_tables(data),
        ),
    )


def _scorecard_row(r: dict[str, Any]) -> tuple[str, ...]:
    ratios = (percent(r[m]) for m in ("mpg", "sg", "rg", "pg", "pg_coverage"))
    return (
        r["slice"],
        *ratios,
        "no price" if r["lost_usd"] is None else figures.usd(r["lost_usd"]),
        chip_hours(r["lost_chip_s"] / 3600),
        CATEGORY_LABELS.get(r["main_loss"], "-"),
        figures.points(r["mpg_change"]),
        figures.usd_change(r["lost_usd_change"]),
    )


def scorecard_tables(data: ReportData) -> list[Block]:
    """The scorecard: per slice column, its slices worst first (dollars lost, then chip-hours
    lost where unpriced), with MPG and its parts, PG coverage, dollars lost, the main loss and
    the change against the previous period of equal length."""
    fleet = data.scorecard.filter(pl.col("slice_kind") == "fleet").row(0, named=True)
    previous = f"{fleet['previous_first']} to {fleet['previous_last']}"
    if fleet["previous_complete"]:
        against = f"change against {previous}"
    else:
        against = (
            f"no change shown: the previous {fleet['period_days']} days ({previous}) are not all "
            "published"
        )
    columns = (
        "slice", "MPG", "SG", "RG", "PG", "PG coverage", "dollars lost", "chip-hours lost",
        "main loss", "MPG change", "dollars lost change",
    )  # fmt: skip
    blocks: list[Block] = []
    for kind, title in SCORECARD_TITLES.items():
        rows = data.scorecard.filter(pl.col("slice_kind") == kind)
        if rows.is_empty():
            continue
        cells = tuple(_scorecard_row(r) for r in rows.iter_rows(named=True))
        blocks.append(
            Table(
                f"Per {title}, worst first (dollars lost; unpriced slices after, by chip-hours "
                f"lost); {against}",
                columns,
                cells,
                frozenset(columns[1:8]) | frozenset(columns[9:]),
            )
        )
    return blocks


def _when(value: dt.datetime | None) -> str:
    return "unknown" if value is None else value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def about_section(data: ReportData) -> Section:
    """When the tables were published, from what, and what they cover."""
    items: list[tuple[str, str]] = []
    run = data.published_run
    if run is None or run.is_empty():
        items.append(("published", "unknown: this folder's tables have no run log (runs)"))
    else:
        r = run.row(0, named=True)
        items += [
            ("published", f"{_when(r['ended_at'])} by run {r['run_id']} ({r['command'] or 'run'})"),
            (
                "input",
                f"{r['input_files']:,} files, {r['input_bytes']:,} bytes, from {r['traces']}",
            ),
            ("mpg version", r["code_version"]),
            ("metric versions published", ", ".join(r["metric_versions"])),
            ("runs logged", f"{r['runs_logged']:,} (DIR/runs/ holds the complete log)"),
        ]
    if data.data_days is not None:
        for d in data.data_days.iter_rows(named=True):
            items.append(
                (
                    f"data, metric version {d['metric_version']}",
                    f"{d['first_day']} to {d['last_day']}: {d['days']} days with job-days, "
                    f"{d['job_days']:,} job-days of {d['jobs']:,} jobs",
                )
            )
    items.append(
        ("this report", f"{data.first} to {data.last}, metric version {data.metric_version}")
    )
    return Section(
        "about",
        "About this data",
        "The run that published these tables, and the days they cover; the report's period "
        "may be a part of them (--from, --to).",
        (Facts(tuple(items)),),
    )


def absent_note(table: str) -> Note:
    return Note(f"Not published by this mpg version: its database has no table {table}.", "absent")


def _record_counts(counts: pl.DataFrame) -> Table:
    columns = ("source", "read", "accepted", "duplicates", "quarantined", "read = sum")
    rows = tuple(
        (
            r["source"],
            f"{r['records_read']:,}",
            f"{r['accepted']:,}",
            f"{r['duplicates']:,}",
            f"{r['quarantined']:,}",
            "yes" if r["adds_up"] else "NO",
        )
        for r in counts.iter_rows(named=True)
    )
    return Table(
        "Records read = accepted + exact duplicates + quarantined, per source (all published data)",
        columns,
        rows,
        frozenset(columns[1:5]),
    )


def quarantine_chart(reasons: pl.DataFrame) -> alt.Chart:
    order = (
        reasons.group_by("reason_kind")
        .agg(pl.col("records").sum())
        .sort(["records", "reason_kind"], descending=[True, False])["reason_kind"]
    )
    return (
        alt.Chart(values(reasons), width=HALF_WIDTH)
        .mark_bar()
        .encode(
            y=alt.Y(
                "reason_kind:N", sort=order.to_list(), title=None, axis=alt.Axis(labelLimit=260)
            ),
            x=alt.X(
                "records:Q",
                stack="zero",
                title="records quarantined",
                axis=alt.Axis(format="d", tickMinStep=1),
            ),
            color=alt.Color("source:N", sort=list(SOURCES), title="source"),
            tooltip=tooltips(
                "source:N",
                alt.Tooltip("reason_kind:N", title="reason"),
                "records:Q",
                alt.Tooltip("reasons:Q", title="distinct reasons"),
                alt.Tooltip("example:N", title="for example"),
            ),
        )
    )


def _warnings(summary: pl.DataFrame, warnings: pl.DataFrame) -> list[Block]:
    s = summary.row(0, named=True)
    head = f"Expectations: {s['checked']} checked, {s['failed']} not met"
    if warnings.is_empty():
        return [Note(f"{head}.")]
    columns = ("suite", "target", "column", "severity", "what is promised", "unexpected", "sample")
    rows = tuple(
        (
            w["suite"],
            w["target"],
            w["column"] or "",
            w["severity"],
            w["description"],
            f"{w['unexpected_count'] or 0:,} of {w['element_count']:,}",
            w["unexpected_sample"] or "",
        )
        for w in warnings.iter_rows(named=True)
    )
    return [Table(f"{head}: the expectations not met (docs/quality.md)", columns, rows)]


def coverage_blocks(data: ReportData) -> list[Block]:
    """A drop in PG coverage, flagged: the share of productive chip-time with a profile, against
    the previous period and from one day to the next (more than COVERAGE_DROP)."""
    fleet = data.scorecard.filter(pl.col("slice_kind") == "fleet").row(0, named=True)
    blocks: list[Block] = []
    change = fleet["pg_coverage_change"]
    if change is not None and change < -COVERAGE_DROP:
        blocks.append(
            Note(
                f"PG coverage fell from {percent(fleet['previous_pg_coverage'], 1)} "
                f"({fleet['previous_first']} to {fleet['previous_last']}) to "
                f"{percent(fleet['pg_coverage'], 1)}: PG and MPG rest on less profiled work than "
                'before. Which jobs lost their profiles: mpg sql "select job_id, '
                'productive_unprofiled_chip_s from worst_jobs order by 2 desc".',
                "flag",
            )
        )
    if data.coverage_drops.is_empty():
        blocks.append(
            Note(
                f"PG coverage fell by no more than {COVERAGE_DROP:.0%} of productive chip-time "
                "from one day to the next in the period."
            )
        )
    else:
        blocks.append(
            Table(
                f"Days on which PG coverage fell by more than {COVERAGE_DROP:.0%} of productive "
                "chip-time from the day before: PG and MPG rest on less profiled work",
                ("day", "PG coverage", "the day before", "change"),
                tuple(
                    (
                        str(r["day"]),
                        percent(r["pg_coverage"], 1),
                        f"{percent(r['previous_pg_coverage'], 1)} ({r['previous_day']})",
                        figures.points(r["change"]),
                    )
                    for r in data.coverage_drops.iter_rows(named=True)
                ),
                frozenset({"PG coverage", "change"}),
            )
        )
    return blocks


def quality_section(data: ReportData) -> Section:
    blocks: list[Block] = coverage_blocks(data)
    blocks.append(
        absent_note("record_counts")
        if data.record_counts is None
        else _record_counts(data.record_counts)
    )
    if data.quarantine_reasons is None:
        blocks.append(absent_note("quarantine"))
    elif data.quarantine_reasons.is_empty():
        blocks.append(Note("No record was quarantined."))
    else:
        blocks.append(
            Chart(
                "quarantine",
                "Quarantined records by reason",
                "Records that could not be used, by the kind of reason (its words before the "
                "first colon) and source; the tooltip quotes one full reason.",
                quarantine_chart(data.quarantine_reasons),
            )
        )
    if data.validation_summary is None or data.validation_warnings is None:
        blocks.append(absent_note("validation_results"))
    else:
        blocks += _warnings(data.validation_summary, data.validation_warnings)
    return Section(
        "quality",
        "Data quality",
        "Whether PG's coverage fell in the period; then what became of the records read, why "
        "some were quarantined, and the expectations the published data did not meet (these "
        "cover everything published, not only the report's period).",
        tuple(blocks),
    )
