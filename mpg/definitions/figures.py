"""How every surface writes the semantic layer's figures: dollars, chip-hours, shares, and the
reconciliation of dollars lost with its parts.

The figures themselves come from SQL (the layer's macros, `mpg.sql.files.MACRO_FILES`); this
module only writes them, the same way in the terminal (`mpg run`, `mpg compare`, `mpg explain`)
and on the report's page, so that one figure reads the same wherever it is shown.

    >>> reconciliation({"lost_usd": 10.5, "lost_scheduling_usd": 1.0, "lost_runtime_usd": 2.5,
    ...     "lost_program_usd": 3.0, "lost_unprofiled_usd": 4.0, "unpriced_chip_s": 7200.0})
    '$10.50 lost = scheduling $1.00 + runtime $2.50 + program $3.00 + unprofiled $4.00; 2.0 unpriced chip-hours not in it'
"""  # noqa: E501

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# The parts of "lost" (sql/semantic/job_days.sql defines them), in the order a reconciliation
# names them; the layer's columns are lost_<part>_usd and lost_<part>_chip_s.
LOSS_PARTS: tuple[str, ...] = ("scheduling", "runtime", "program", "unprofiled")

# A team, queue or owner the input named none (NULL in the layer's rows: a value of its own).
NONE_NAMED = "(none named)"


def named(value: str | None) -> str:
    """A team, queue or owner as every surface writes it: NULL is the input naming none."""
    return NONE_NAMED if value is None else value


# Ledger categories as a short label, where a column is narrow (the terminal's scorecard).
SHORT_LABELS = {
    "scheduling": "scheduling",
    "runtime_idle": "runtime idle",
    "data_wait": "data wait",
    "init": "init",
    "compile": "compile",
    "checkpoint_restore": "ckpt restore",
    "checkpoint_save": "ckpt save",
    "lost_progress": "lost progress",
    "productive_unprofiled": "unprofiled",
    "program_loss": "program loss",
}


def usd(value: float | None) -> str:
    """Dollars to the cent (the figure every surface prints alike), or n/a where none are
    priced."""
    return "n/a" if value is None else f"${value:,.2f}"


def usd_change(value: float | None) -> str:
    """A change in dollars, signed, to the cent: +$1,234.50, -$0.25, +$0.00 (a change that
    rounds to no cent has no sign of its own)."""
    if value is None:
        return "n/a"
    cents = round(value, 2) + 0.0  # -0.0 + 0.0 is 0.0
    return f"{'-' if cents < 0 else '+'}${abs(cents):,.2f}"


def chip_hours(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def percent(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:.{digits}%}"


def points(value: float | None) -> str:
    """A change of a ratio in percentage points, signed."""
    return "n/a" if value is None else f"{value * 100:+.1f} pt"


def unpriced_note(unpriced_chip_s: float, generations: Sequence[tuple[str, float]] = ()) -> str:
    """`N unpriced chip-hours not in it`, naming each generation without a price (chip-seconds
    given) where there are any."""
    note = f"{chip_hours(unpriced_chip_s / 3600)} unpriced chip-hours not in it"
    if generations:
        named = ", ".join(f"{g} {chip_hours(s / 3600)}" for g, s in generations)
        note += f" ({named}: set their prices in DIR/mpg.toml)"
    return note


def reconciliation(row: Mapping[str, Any], generations: Sequence[tuple[str, float]] = ()) -> str:
    """`$X lost = scheduling $a + runtime $b + program $p + unprofiled $u; N unpriced
    chip-hours not in it` for a row of the layer (a roll-up's lost_usd, its parts and its
    unpriced_chip_s); where nothing is priced, the chip-hours lost instead."""
    if row["lost_usd"] is None:
        return (
            f"dollars lost unknown: no chip-time here has a price; "
            f"{unpriced_note(row['unpriced_chip_s'], generations)}"
        )
    parts = " + ".join(f"{part} {usd(row[f'lost_{part}_usd'])}" for part in LOSS_PARTS)
    line = f"{usd(row['lost_usd'])} lost = {parts}"
    if row["unpriced_chip_s"]:
        line += f"; {unpriced_note(row['unpriced_chip_s'], generations)}"
    return line


def chip_hours_reconciliation(row: Mapping[str, Any]) -> str:
    """`X chip-hours lost = scheduling a + runtime b + program p + unprofiled u` (every job,
    priced or not)."""
    parts = " + ".join(
        f"{part} {chip_hours(row[f'lost_{part}_chip_s'] / 3600)}" for part in LOSS_PARTS
    )
    return f"{chip_hours(row['lost_chip_s'] / 3600)} chip-hours lost = {parts}"
