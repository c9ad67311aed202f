"""Draw an `Explanation` in the terminal with rich: header, waterfall, days, attempts, lines,
then the job's checkpoint advice and step times.

Job ids, file names and states come from logs, so every such string enters rich as a `Text`
(never as markup): a job named `[bold red]x[/]` prints as those characters.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

from rich import box
from rich.console import Console, JustifyMethod
from rich.table import Table
from rich.text import Text

from mpg.cli.terminal import print_whole
from mpg.definitions.figures import chip_hours_reconciliation, percent, reconciliation
from mpg.explain.advice import advice_table, step_times_table
from mpg.explain.model import Attempt, Explanation, Figure, Provenance, format_ranges

# How much of a figure's provenance the terminal shows; --json has all of it.
MAX_RANGES_PER_FILE = 8
MAX_FILES = 4
_BAR_MIN, _BAR_MAX = 10, 50


def _time(t: dt.datetime | None) -> str:
    return "-" if t is None else t.strftime("%Y-%m-%d %H:%M:%S")


def _hours(chip_s: float | None) -> str:
    return "-" if chip_s is None else f"{chip_s / 3600:,.3f}"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def lines_text(records: Provenance) -> str:
    """Provenance in a few lines: `file: lines 12-40, 57`, long lists cut with a count."""
    out = []
    for item in records[:MAX_FILES]:
        shown = item.ranges[:MAX_RANGES_PER_FILE]
        hidden = item.lines - sum(b - a + 1 for a, b in shown)
        more = f" ... and {hidden} more" if hidden else ""
        lines = "line" if item.lines == 1 else "lines"
        out.append(f"{item.file}: {lines} {format_ranges(shown)}{more}")
    if len(records) > MAX_FILES:
        rest = records[MAX_FILES:]
        out.append(f"... and {len(rest)} more files ({sum(r.lines for r in rest)} lines)")
    return "\n".join(out)


def _bar(figure: Figure, level: float, width: int) -> Text:
    """A total from zero, a loss hanging from the level above it; at least one cell if not zero."""
    share = figure.share or 0.0
    low = 0.0 if figure.is_total else level - share
    high = share if figure.is_total else level
    start, end = round(low * width), round(high * width)
    if figure.chip_s and end == start:
        start, end = (start, start + 1) if start < width else (start - 1, start)
    bar = Text(" " * start)
    bar.append("█" * (end - start), style="cyan" if figure.is_total else "red")
    return bar


def _table(title: str, *columns: str, right: tuple[str, ...] = (), wrap: str = "") -> Table:
    """A titled table; columns named in `right` align right, only `wrap` may wrap."""
    table = Table(
        box=box.SIMPLE_HEAD,
        title=Text(title),
        title_justify="left",
        pad_edge=False,
        collapse_padding=True,
    )
    for name in columns:
        justify: JustifyMethod = "right" if name in right else "left"
        table.add_column(name, justify=justify, no_wrap=name != wrap)
    return table


def _waterfall(e: Explanation, width: int) -> Table:
    ratio_of = {"all_allocated": ("SG", e.ratios.sg), "productive": ("RG", e.ratios.rg)}
    ratio_of["ideal"] = ratio_of["productive_unprofiled"] = ("PG", e.ratios.pg)
    scope = e.day.isoformat() if e.day else "whole lifetime"
    table = _table(
        f"Chip-time ledger, {scope}",
        "",
        "chip-hours",
        "of wanted",
        right=("chip-hours", "of wanted"),
    )
    table.add_column("", no_wrap=True, width=width)
    table.add_column("", no_wrap=True)
    level = 1.0
    for figure in e.waterfall:
        label, value = ratio_of.get(figure.name, ("", None)) if figure.is_total else ("", None)
        table.add_row(
            Text(("= " if figure.is_total else "- ") + figure.name),
            Text(_hours(figure.chip_s)),
            Text(percent(figure.share)),
            _bar(figure, level, width),
            Text(f"{label} {_ratio(value)}" if label else ""),
        )
        level = (figure.share or 0.0) if figure.is_total else level - (figure.share or 0.0)
    return table


def _days(e: Explanation) -> Table:
    ratios = ("SG", "RG", "PG", "MPG")
    amounts = ("wanted", "all allocated", "productive", "ideal")
    table = _table("Per day (chip-hours)", "day", *amounts, *ratios, right=(*amounts, *ratios))
    for d in e.per_day:
        table.add_row(
            Text(d.day.isoformat()),
            *(Text(_hours(v)) for v in (d.wanted_chip_s, d.all_allocated_chip_s)),
            *(Text(_hours(v)) for v in (d.productive_chip_s, d.ideal_chip_s)),
            *(Text(_ratio(v)) for v in (d.sg, d.rg, d.pg, d.mpg)),
        )
    return table


def _outcome(a: Attempt) -> Text:
    """What came of an attempt's steps, in a sentence, with the lines of the steps it lost."""
    text = Text(f"attempt {a.attempt}: ", style="bold")
    if a.keeps_every_step:
        return text.append(a.keeps_every_step)
    if not a.lost_steps:
        return text.append("no step lost")
    text.append(a.missed_checkpoint or "")
    return text.append("\n  " + lines_text(a.lost_records).replace("\n", "\n  "))


def _attempts(e: Explanation) -> Table:
    table = _table(
        "Attempts",
        *("#", "start", "end", "ended by", "steps", "durable ckpt", "lost steps", "lost chip-h"),
        right=("#", "lost chip-h"),
    )
    for a in e.attempts:
        table.add_row(
            *(Text(str(v)) for v in (a.attempt, _time(a.start), _time(a.end), a.ended_by)),
            Text("-" if a.steps is None else format_ranges((a.steps,))),
            Text("-" if a.durable is None else f"step {a.durable.step}"),
            Text(format_ranges(a.lost_steps) or "-"),
            Text(_hours(a.lost_chip_s)),
        )
    return table


def _provenance(e: Explanation) -> Table:
    table = _table(
        "Input lines behind each figure",
        *("figure", "records (file relative to the trace root)"),
        wrap="records (file relative to the trace root)",
    )
    for figure in e.waterfall:
        if figure.records:
            table.add_row(Text(figure.name), Text(lines_text(figure.records)))
    return table


def _header(e: Explanation) -> Text:
    job = e.job
    text = Text("job ", style="bold")
    text.append(job.job_id, style="bold")
    text.append(
        f"\n{job.workload_class} · {job.framework} · {job.chip_generation} · "
        f"{job.chips_requested} chips requested\nsubmitted {_time(job.submitted)} UTC · "
    )
    if job.ended is not None:
        text.append(f"ended {_time(job.ended)} UTC ({job.end_state})")
    elif job.data_end is not None:
        end = job.data_end
        text.append(f"open: counted to the end of data {_time(end.instant)} UTC ")
        text.append(f"({end.file} line {end.line})")
    days = ", ".join(d.isoformat() for d in e.days)
    text.append(f"\ndays: {days} · metric {e.metric_version} · figures from {e.database}")
    return text


def _lost(e: Explanation) -> Text:
    """What the job lost, reconciled with its parts (mpg.definitions.figures, as every surface
    writes it), its main loss and its rank among the fleet's jobs."""
    row = dataclasses.asdict(e.lost)
    text = Text(f"Lost: {reconciliation(row)}", style="bold")
    text.append(f"\n  {chip_hours_reconciliation(row)}", style="")
    main = e.lost.main_loss
    text.append(f"\n  main loss: {main or 'none'}", style="")
    if e.lost.rank is not None:
        text.append(
            f" · rank {e.lost.rank} of {e.lost.jobs_ranked} jobs by dollars lost (the worst_jobs "
            "view's ranking)",
            style="",
        )
    return text


def _consistency(e: Explanation) -> Text:
    if e.matches:
        return Text(
            f"recomputed from the job's {e.records_read} records in the record store: "
            "matches published ledger",
            style="green",
        )
    text = Text("WARNING: the record store does not give the published ledger:", style="bold red")
    for d in e.differences:
        text.append(
            f"\n  {d.day.isoformat()} {d.category}: published {d.published} chip-s, "
            f"recomputed {d.recomputed} chip-s"
        )
    return text


def render(e: Explanation, console: Console) -> None:
    """Print the explanation, sized to the console's width, no figure cut short."""
    width = max(_BAR_MIN, min(_BAR_MAX, console.width - 60))
    console.print(_header(e))
    print_whole(console, _waterfall(e, width))
    console.print(Text(f"MPG = SG x RG x PG = {_ratio(e.ratios.mpg)}", style="bold"))
    console.print(_lost(e))
    if e.day is None:
        print_whole(console, _days(e))
    print_whole(console, _attempts(e))
    for attempt in e.attempts:
        console.print(_outcome(attempt))
    console.print(_provenance(e))
    if e.checkpoint_advice is not None:
        print_whole(console, advice_table(e.checkpoint_advice))
    if e.step_times:
        print_whole(console, step_times_table(e.step_times))
    console.print(_consistency(e))
