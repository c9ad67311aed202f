"""The pieces a report page is made of, as data: sections holding charts, tables, facts and notes.

Nothing here is HTML: `page.py` writes every piece, escaping every string it holds, so a string
from the logs (a job id, an owner, a quarantine reason, a trace path) can go into any piece and
still reach the page as text. Charts carry their rows inside their Vega-Lite spec.
"""

from __future__ import annotations

from dataclasses import dataclass

import altair as alt


@dataclass(frozen=True)
class Chart:
    """One chart: its element id, heading, a sentence on how to read it, its spec."""

    id: str
    title: str
    caption: str
    chart: alt.TopLevelMixin

    @property
    def spec(self) -> dict:
        """The Vega-Lite spec, data included."""
        return self.chart.to_dict(validate=False)


@dataclass(frozen=True)
class Table:
    """A small table of text cells; `numeric` columns are right-aligned."""

    caption: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Facts:
    """Terms and their values, as a definition list."""

    items: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Figure:
    """One headline number: a label, the value, a few words under it."""

    label: str
    value: str
    note: str = ""


@dataclass(frozen=True)
class Figures:
    """A row of headline numbers."""

    figures: tuple[Figure, ...]


@dataclass(frozen=True)
class Note:
    """A paragraph; `kind` is `text`, `absent` (a table this mpg did not publish) or `opening`."""

    text: str
    kind: str = "text"


Block = Chart | Table | Facts | Figures | Note


@dataclass(frozen=True)
class Section:
    """A heading with an introductory sentence and its blocks; `absent` marks a section whose
    table is not published (the page's contents list says so)."""

    id: str
    title: str
    intro: str
    blocks: tuple[Block, ...]
    absent: bool = False

    @property
    def charts(self) -> tuple[Chart, ...]:
        return tuple(b for b in self.blocks if isinstance(b, Chart))
