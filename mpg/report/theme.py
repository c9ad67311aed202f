"""What every chart of the report shares: the ledger's colours, the widths that fit a 1280 px
window and fill a 1400 px one, the day and ratio axes, and how a frame becomes a chart's inline
data.

One colour per ledger category, declared here once, so that a category looks the same in the
stacked area, the waterfall, the slices' bars and the worst jobs' bars: a reader learns it once.
"""

from __future__ import annotations

import altair as alt
import polars as pl

from mpg.definitions.metrics import LEDGER_CATEGORIES

METRICS = ("mpg", "sg", "rg", "pg")
METRIC_TITLES = {"mpg": "MPG", "sg": "SG", "rg": "RG", "pg": "PG"}

# The page is at most 1360 px wide (page.py) and must fit a 1280 px window too (1256 px inside
# its margins): a full-width chart leaves room for its axis title and a legend on its right
# (~210 px), a half-width one sits beside another. tests/e2e/test_report_browser.py measures every
# chart in Chromium at 1280 and 1400 px.
FULL_WIDTH = 1000
HALF_WIDTH = 470

# Grouped as the ledger reads: greens for productive time (ideal, program loss), grey for
# productive time whose program efficiency is unknown, warm colours for runtime losses, blues for
# chips held idle or never given. Unlike a scheme's colours taken in order, a category keeps its
# colour whichever categories a chart happens to hold.
LEDGER_COLORS: dict[str, str] = {
    "wanted": "#5f6b77",
    "ideal": "#2f8f3a",
    "program_loss": "#9fd38c",
    "productive_unprofiled": "#c3bdb8",
    "lost_progress": "#d62728",
    "checkpoint_save": "#ff9896",
    "checkpoint_restore": "#f7b6d2",
    "compile": "#9467bd",
    "init": "#c5b0d5",
    "data_wait": "#e8a33d",
    "runtime_idle": "#8c564b",
    "scheduling": "#4c78a8",
}
if set(LEDGER_COLORS) != {"wanted", *LEDGER_CATEGORIES}:
    raise AssertionError("every ledger category needs a colour (mpg.report.theme)")

# The categories a job's lost chip-time is made of: every one but ideal (sql/semantic/job_days.sql
# defines "lost"), in the waterfall's order.
LOSSES: tuple[str, ...] = tuple(c for c in reversed(LEDGER_CATEGORIES) if c != "ideal")


# How a ledger category reads in a sentence or a table cell (a main loss, a part of a bar).
CATEGORY_LABELS: dict[str, str] = {
    "ideal": "ideal",
    "program_loss": "program loss",
    "productive_unprofiled": "unprofiled (no profile)",
    "lost_progress": "lost progress",
    "checkpoint_save": "checkpoint save",
    "checkpoint_restore": "checkpoint restore",
    "compile": "compilation",
    "init": "init",
    "data_wait": "data wait",
    "runtime_idle": "runtime idle",
    "scheduling": "scheduling",
}

# The slice columns of the scorecard, in the order shown, and how they are named.
SCORECARD_TITLES = {
    "chip_generation": "chip generation",
    "workload_class": "workload class",
    "framework": "framework",
    "size_class": "job size (chips requested)",
}


def ledger_color(title: str | None = "ledger category", *, legend: bool = True) -> alt.Color:
    """Colour by `category`, each ledger category (and `wanted`) in its own fixed colour."""
    return alt.Color(
        "category:N",
        title=title,
        sort=list(LEDGER_COLORS),
        scale=alt.Scale(domain=list(LEDGER_COLORS), range=list(LEDGER_COLORS.values())),
        legend=alt.Legend(values=list(LEDGER_CATEGORIES)) if legend else None,
    )


def ledger_order() -> alt.Order:
    """Stack ledger categories in the ledger's order (ideal at the bottom), whatever their names'
    alphabetical order; needs the `category_order` field of `with_category_order`."""
    return alt.Order("category_order:Q")


def category_order_expr() -> str:
    """A Vega expression giving a datum's category its ledger position (for folded data)."""
    names = ", ".join(f"'{c}'" for c in LEDGER_COLORS)
    return f"indexof([{names}], datum.category)"


def with_category_order(frame: pl.DataFrame) -> pl.DataFrame:
    order = {category: i for i, category in enumerate(LEDGER_COLORS)}
    return frame.with_columns(
        pl.col("category").replace_strict(order, default=len(order)).alias("category_order")
    )


def values(frame: pl.DataFrame) -> alt.Data:
    """Rows as JSON values, days as ISO dates (read as UTC by `utcyearmonthdate`)."""
    dates = [
        pl.col(name).dt.to_string("%Y-%m-%d") for name, t in frame.schema.items() if t == pl.Date
    ]
    return alt.Data(values=frame.with_columns(dates).to_dicts())


def day_ticks() -> alt.Axis:
    """One tick a day (UTC: the fields are UTC time units, or on a UTC scale)."""
    return alt.Axis(format="%b %d", tickCount={"interval": "day", "step": 1}, labelAngle=0)


def day_axis(title: str | None = "day (UTC)") -> alt.X:
    return alt.X("utcyearmonthdate(day):T", title=title, axis=day_ticks())


def ratio_axis(title: str, *, full: bool = True) -> alt.Y:
    """A goodput axis in percent: 0-100% where `full`, else fitted to the values (so that SG
    between 85% and 100% is not a flat line at the top)."""
    scale = alt.Scale(domain=[0, 1]) if full else alt.Scale(zero=False, nice=True)
    return alt.Y("value:Q", title=title, scale=scale, axis=alt.Axis(format="%"))


def chip_hours(value: float) -> str:
    return f"{value:,.1f}"


def percent(ratio: float | None, digits: int = 2) -> str:
    return "n/a" if ratio is None else f"{ratio:.{digits}%}"


def tooltips(*fields: str | alt.Tooltip) -> list[alt.Tooltip]:
    """Tooltip channels, each field shorthand ("owner:N") made an `alt.Tooltip` here: Altair
    parses a bare string against the whole schema (~9 ms each, most of the report's build time)."""
    return [f if isinstance(f, alt.Tooltip) else alt.Tooltip(f) for f in fields]
