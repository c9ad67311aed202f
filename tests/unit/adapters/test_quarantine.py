"""A trace root's import quarantine read as the run's rows and counts
(`mpg.adapters.quarantine`), line by line: what `mpg import` wrote, and what someone edited into
something else. (Imports writing it and runs publishing it:
tests/e2e/test_import_quarantine.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mpg.adapters.quarantine import import_quarantine, read_import_quarantine

RECORD = {"format": "philly", "file": "j.json", "line": 3, "reason": "no attempts", "raw": "{}"}


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (json.dumps(RECORD), "no attempts"),
        ("", "not an import quarantine record: empty line"),
        ("{broken", "not an import quarantine record: invalid JSON"),
        ("[1]", "not an import quarantine record: not a JSON object"),
        (
            json.dumps({**RECORD, "reason": None}),
            "not an import quarantine record: missing field reason",
        ),
        (json.dumps({**RECORD, "line": "3"}), "not an import quarantine record: wrong type: line"),
        (json.dumps({**RECORD, "line": True}), "not an import quarantine record: wrong type: line"),
    ],
)
def test_every_line_read_is_a_row_with_its_reason(line: str, reason: str) -> None:
    """A line someone edited into something else is quarantined too, saying so: nothing read is
    dropped. The last line's break starts no record; `\\r\\n` endings are read as `\\n`."""
    data = f"{json.dumps(RECORD)}\r\n{line}\n".encode()
    found = import_quarantine([("quarantine/x.jsonl", data)])
    assert [(r["line"], r["reason"], r["raw"]) for r in found.rows.to_pylist()] == [
        (1, "no attempts", json.dumps(RECORD)),
        (2, reason, line),
    ][: 1 if line == json.dumps(RECORD) else 2]
    duplicates = 1 if line == json.dumps(RECORD) else 0
    assert found.counts.to_pylist() == [
        {"source": "import", "records_read": 2, "accepted": 0, "duplicates": duplicates,
         "quarantined": 2 - duplicates},
    ]  # fmt: skip


def test_a_root_without_imports_adds_no_rows_and_no_count(tmp_path: Path) -> None:
    found = read_import_quarantine(tmp_path)
    assert (found.rows.num_rows, found.counts.num_rows) == (0, 0)
    (tmp_path / "quarantine").mkdir()
    (tmp_path / "quarantine" / "empty.jsonl").write_text("")
    assert read_import_quarantine(tmp_path).counts.to_pylist() == [
        {"source": "import", "records_read": 0, "accepted": 0, "duplicates": 0, "quarantined": 0}
    ]
