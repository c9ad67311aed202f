"""Tables in the terminal (rich) that never drop a column or cut a figure short.

On a narrow terminal, or a pipe (rich then assumes 80 columns), rich squeezes a table into the
width: it folds or drops its widest text column and cuts numbers ("2026-11-...", "0.9..."), and
a number cut short reads as another number. `print_whole` prints a table at its natural width
instead; lines longer than the terminal wrap there.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

_UNBOUNDED = 1_000_000  # columns, to measure a table's natural width


def print_whole(console: Console, table: Table) -> None:
    """`table` at least as wide as its content (only a column made to fold may fold)."""
    natural = console.measure(table, options=console.options.update_width(_UNBOUNDED)).maximum
    width = console.width  # print(width=) would only narrow it
    console.width = max(width, natural)
    try:
        console.print(table)
    finally:
        console.width = width
