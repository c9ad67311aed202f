"""Draw a `Comparison` in the terminal with rich: the fleet's change, its parts, the top slices,
the teams that moved it, the dollars.

Slice names come from logs, so they enter rich as `Text`, never as markup. Parts are in MPG points
(hundredths of MPG) so that small changes read as numbers, not strings of zeros. Tables print at
their natural width (mpg.cli.terminal.print_whole): piped to a file (80 columns), no column is
dropped and no figure cut short.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from mpg.cli.terminal import print_whole
from mpg.compare.comparison import CategoryMove, Comparison
from mpg.compare.decompose import MIX_IN_WORDS, PART_LABELS, SLICE_COLUMNS, Parts, Sums
from mpg.compare.dollars import DOLLAR_PART_LABELS, DOLLAR_PART_NAMES, DollarParts
from mpg.definitions.figures import usd, usd_change

TOP_PER_COLUMN = 3  # values of each slice column shown; --json has them all


def _points(value: float) -> str:
    return f"{value * 100:+.3f}"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _table(title: str, *columns: str) -> Table:
    table = Table(box=box.SIMPLE_HEAD, title=Text(title), title_justify="left", pad_edge=False)
    for i, name in enumerate(columns):
        table.add_column(name, justify="left" if i == 0 else "right", no_wrap=True)
    return table


def _moves(moves: tuple[CategoryMove, ...]) -> str:
    return (
        ", ".join(f"{m.category} {m.base_share:.1%} -> {m.current_share:.1%}" for m in moves)
        or "none moved"
    )


def _ratios_row(label: str, sums: Sums) -> list[str]:
    return [
        label,
        f"{sums.wanted / 3600:,.1f}",
        _ratio(sums.sg),
        _ratio(sums.rg),
        _ratio(sums.pg),
        _ratio(sums.pg_coverage),
        _ratio(sums.mpg),
    ]


def _parts_cells(parts: Parts) -> list[str]:
    return [_points(v) for v in (parts.mix, parts.sg, parts.rg, parts.pg, parts.total)]


def _dollar_cells(parts: DollarParts) -> list[str]:
    return [usd_change(getattr(parts, n)) for n in DOLLAR_PART_NAMES] + [usd_change(parts.total)]


def render_dollars(comparison: Comparison, console: Console) -> None:
    """Dollars lost in each period with their parts, the parts of their change, the slices
    that moved them and the ledger categories whose dollars moved; or why they cannot be
    compared."""
    d = comparison.dollars
    if d is None:
        console.print(Text(f"Dollars: {comparison.dollars_unavailable}"))
        return
    console.print(
        Text(
            f"Dollars lost (every ledger category but ideal, priced chip-time): "
            f"{usd(d.base.lost)} -> {usd(d.current.lost)} ({usd_change(d.change)})",
            style="bold",
        )
    )
    for name, period in (("base", d.base), ("current", d.current)):
        console.print(Text(f"  {name}: {period.reconciliation}"))
    parts = _table("Where the change in dollars lost came from", "part", "USD")
    for name in DOLLAR_PART_NAMES:
        parts.add_row(DOLLAR_PART_LABELS[name], usd_change(getattr(d.parts, name)))
    parts.add_row("total", usd_change(d.parts.total))
    print_whole(console, parts)
    unpriced = (d.base.unpriced_chip_s, d.current.unpriced_chip_s)
    if any(unpriced):
        console.print(
            Text(
                f"Unpriced (no price for their chip generation, not in any dollar figure): "
                f"{unpriced[0] / 3600:,.1f} chip-h in base, {unpriced[1] / 3600:,.1f} in current"
            )
        )
    top = _table(
        "Top slices by change in dollars lost (USD)",
        "slice", "volume", "mix", "scheduling", "runtime", "program", "unprofiled", "total",
    )  # fmt: skip
    for key, slice_parts in comparison.top_dollar_slices:
        top.add_row(Text(" / ".join(key)), *_dollar_cells(slice_parts))
    print_whole(console, top)
    moves = ", ".join(
        f"{m.category} {usd(m.base_usd)} -> {usd(m.current_usd)}" for m in comparison.dollar_moves
    )
    console.print(Text(f"Ledger dollars that moved most: {moves or 'none moved'}"))


def render_teams(comparison: Comparison, console: Console) -> None:
    """The teams that moved fleet MPG most (the decomposition by team), with their dollars
    lost in each period."""
    if not comparison.teams:
        return
    top = _table(
        "Teams that moved fleet MPG or dollars lost most (MPG points: every team's parts\n"
        f"and PG coverage {_points(comparison.teams_coverage)} add up to the change; --json has "
        "every team)",
        "team", "MPG was", "now", "mix", "SG", "RG", "PG", "total", "$ lost was", "now", "change",
    )  # fmt: skip
    for t in comparison.top_teams:
        top.add_row(
            Text(t.team),
            _ratio(t.base.mpg),
            _ratio(t.current.mpg),
            *_parts_cells(t.parts),
            "no price" if t.base_lost_usd is None else usd(t.base_lost_usd),
            "no price" if t.current_lost_usd is None else usd(t.current_lost_usd),
            usd_change(t.lost_usd_change),
        )
    print_whole(console, top)


def render(comparison: Comparison, console: Console) -> None:
    d = comparison.decomposition
    console.print(
        Text(
            f"Fleet MPG {d.base_mpg:.4f} -> {d.current_mpg:.4f} ({_points(d.change)} points), "
            f"{comparison.base_period} -> {comparison.current_period}, "
            f"metric {comparison.metric_version}"
        ),
        style="bold",
    )
    periods = _table("Fleet", "period", "wanted chip-h", "SG", "RG", "PG", "PG coverage", "MPG")
    periods.add_row(*_ratios_row(f"base {comparison.base_period}", d.base))
    periods.add_row(*_ratios_row(f"current {comparison.current_period}", d.current))
    print_whole(console, periods)

    totals = _table("Where the change came from (MPG points)", "part", "points")
    t = d.totals
    for name, value in (
        ("mix: slices' shares of wanted chip-time", t.mix),
        ("SG within slices", t.sg),
        ("RG within slices", t.rg),
        ("PG within slices", t.pg),
        ("PG coverage: how profiling is spread over slices", t.coverage),
        ("total", t.total),
    ):
        totals.add_row(name, _points(value))
    print_whole(console, totals)
    console.print(Text(MIX_IN_WORDS))
    console.print(Text(f"Fleet ledger shares that moved most: {_moves(comparison.fleet_moves)}"))

    dims = _table("By slice column (MPG points)", "", "mix", "SG", "RG", "PG", "total")
    for column in SLICE_COLUMNS:
        for value, parts in comparison.by_dimension(column)[:TOP_PER_COLUMN]:
            dims.add_row(Text(f"{column} = {value}"), *_parts_cells(parts))
    print_whole(console, dims)

    top = _table(
        "Top contributing slices (MPG points)",
        "slice",
        "MPG was",
        "now",
        "mix",
        "SG",
        "RG",
        "PG",
        "total",
    )
    for c in comparison.top_slices:
        top.add_row(
            Text(" / ".join(c.slice)),
            _ratio(c.base.mpg),
            _ratio(c.current.mpg),
            *_parts_cells(c.parts),
        )
    print_whole(console, top)
    largest = Text("Largest parts: ")
    for i, p in enumerate(comparison.top_parts):
        largest.append(f"{', ' if i else ''}{PART_LABELS[p.part]} of ")
        largest.append(Text(" / ".join(p.slice)))
        largest.append(f" {_points(p.value)}")
    console.print(largest)
    for c in comparison.top_slices:
        line = Text(" / ".join(c.slice), style="bold")
        absent = next(
            (p for p, s in (("base", c.base), ("current", c.current)) if not s.wanted), ""
        )
        line.append(f" (no job-days in the {absent} period)" if absent else "")
        line.append(Text(f": {_moves(comparison.slice_moves[c.slice])}", style=""))
        console.print(line)
    render_teams(comparison, console)
    render_dollars(comparison, console)
