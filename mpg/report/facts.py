"""The report's words and tables: the opening figures and how MPG meets the ledger, what the data
is (the run that published it, the days it covers) and its quality.

Every string here goes into a block of `blocks`, which the page escapes; quarantine reasons and
expectation samples quote the logs, and trace paths are the user's.
"""

from __future__ import annotations

import datetime as dt

import altair as alt
import polars as pl

from mpg.report.blocks import Block, Chart, Facts, Figure, Figures, Note, Section, Table
from mpg.report.costs import dollars_figure
from mpg.report.data import ReportData
from mpg.report.theme import HALF_WIDTH, chip_hours, percent, tooltips, values

SOURCES = ("scheduler", "runtime", "profiles")


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
        f"fleet MPG {percent(fleet['mpg'])} = SG {percent(fleet['sg'])} x "
        f"RG {percent(fleet['rg'])} x PG {percent(fleet['pg'])} ({coverage})."
    )


def reconciliation(data: ReportData) -> str:
    """Why the ledger's ideal share of wanted is not fleet MPG: PG is measured on profiled
    productive time only, so ideal / wanted = MPG x PG coverage."""
    f = data.period_fleet.row(0, named=True)
    wanted, ideal = f["wanted_chip_s"], f["ideal_chip_s"]
    unprofiled = (f["productive_chip_s"] - f["profiled_chip_s"]) / 3600
    if not wanted:
        return "No chip-time was wanted in the period."
    if not f["productive_chip_s"]:
        return "No chip-time was productive in the period: the ledger ends at no ideal time."
    if f["pg"] is None:
        return (
            "The ledger below ends at no ideal chip-hours: no productive chip-time had a profile, "
            f"so its {chip_hours(unprofiled)} productive chip-hours have no ideal time and fleet "
            "MPG is unknown."
        )
    ideal_share = ideal / wanted
    if f["pg_coverage"] == 1:
        return (
            f"The ledger below ends at {chip_hours(ideal / 3600)} ideal chip-hours, "
            f"{percent(ideal_share)} of wanted: fleet MPG, since every productive chip-hour had a "
            "profile."
        )
    return (
        f"The ledger below ends at {chip_hours(ideal / 3600)} ideal chip-hours, "
        f"{percent(ideal_share)} of wanted, not fleet MPG's {percent(f['mpg'])}: PG is measured "
        f"on the {percent(f['pg_coverage'], 1)} of productive chip-time that had a profile, and "
        f"the other {chip_hours(unprofiled)} productive chip-hours (productive_unprofiled) have "
        f"no ideal time. MPG counts them at the profiled PG, {percent(f['pg'])}; the ledger "
        f"cannot. So ideal / wanted = MPG x PG coverage = {percent(f['mpg'])} x "
        f"{percent(f['pg_coverage'], 1)}."
    )


def summary_section(data: ReportData) -> Section:
    f = data.period_fleet.row(0, named=True)
    coverage = f"of productive time; {percent(f['pg_coverage'], 1)} profiled"
    figures = Figures(
        (
            Figure("fleet MPG", percent(f["mpg"]), "SG x RG x PG"),
            Figure("SG", percent(f["sg"]), "scheduling: chips held / wanted"),
            Figure("RG", percent(f["rg"]), "runtime: productive / held"),
            Figure("PG", percent(f["pg"]), coverage),
            Figure(
                "ideal / wanted",
                percent(f["ideal_chip_s"] / f["wanted_chip_s"] if f["wanted_chip_s"] else None),
                "where the ledger ends",
            ),
            Figure("wanted chip-hours", chip_hours(f["wanted_chip_s"] / 3600), f"{f['jobs']} jobs"),
            dollars_figure(data),
        )
    )
    return Section(
        "summary",
        "Summary",
        "",
        (Note(opening_line(data), "opening"), figures, Note(reconciliation(data), "reconcile")),
    )


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


def quality_section(data: ReportData) -> Section:
    blocks: list[Block] = []
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
        "What became of the records read, why some were quarantined, and the expectations the "
        "published data did not meet. These cover everything published, not only the report's "
        "period.",
        tuple(blocks),
    )
