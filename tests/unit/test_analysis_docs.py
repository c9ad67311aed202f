"""docs/tables.md lists the issue-15 tables with exactly their schemas' columns, in order."""

from __future__ import annotations

import re

import pytest

from mpg.schemas import ANALYSIS_TABLES, CHECKPOINT_ADVICE_BY_SLICE
from tests.support.files import DOCS

TABLES_MD = DOCS / "tables.md"


@pytest.mark.parametrize(
    ("name", "names"),
    [
        *((name, schema.names) for name, schema in ANALYSIS_TABLES.items()),
        ("checkpoint_advice_by_slice", CHECKPOINT_ADVICE_BY_SLICE.names),
    ],
)
def test_the_documented_columns_are_the_schemas(name: str, names: list[str]) -> None:
    [row] = [
        line for line in TABLES_MD.read_text().splitlines() if line.startswith(f"| `{name}` |")
    ]
    columns = row.split(" | ")[2]
    # Each column named once, in order; comments in parentheses or after ';' name no column.
    documented = re.findall(r"`([a-z_0-9]+)`", re.sub(r"\([^)]*\)|;.*$", "", columns))
    assert documented == names
