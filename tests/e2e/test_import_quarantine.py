"""What `mpg import` quarantined, read back as the run's `quarantine` rows and `record_counts` row
for source `import` (mpg/adapters/quarantine.py; the run publishes them: docs/adapters/README.md).
How each line of a quarantine folder is read: tests/unit/adapters/test_quarantine.py."""

from __future__ import annotations

import json
from pathlib import Path

from mpg.adapters.quarantine import read_import_quarantine
from mpg.cli import main

T = 1_793_599_200.0  # 2026-11-02T06:00:00Z


def _log(path: Path, lines: list[dict | str]) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def _import(root: Path, *logs: Path) -> None:
    chips = ("--chips", "4", "--chip-generation", "tpu-v5e")
    assert main(["import", "ml-goodput", *map(str, logs), "--out", str(root), *chips]) == 0


START = {"job_name": "j", "job_start_time": T}
END = {"job_name": "j", "job_end_time": T + 30}
STEP = {"job_name": "j", "step_count": 0, "step_start_time": T + 10}


def test_an_imports_quarantine_reaches_the_run_as_source_import(tmp_path: Path) -> None:
    # line 2 is not JSON, line 3 not an object: two records quarantined, two converted
    log = _log(tmp_path / "log.jsonl", [START, "{not json", "[1, 2]", END])
    root = tmp_path / "traces"
    _import(root, log)
    (written,) = (root / "quarantine").glob("*.jsonl")
    found = read_import_quarantine(root)
    name = written.relative_to(root).as_posix()
    assert [(r["source"], r["file"], r["line"], r["reason"]) for r in found.rows.to_pylist()] == [
        ("import", name, 1, "invalid JSON"),
        ("import", name, 2, "not a JSON object"),
    ]
    # raw is the line the run read: it names the format, the import's input file and its line
    assert [json.loads(r["raw"]) for r in found.rows.to_pylist()] == [
        {"format": "ml-goodput", "file": str(log), "line": 2, "reason": "invalid JSON",
         "raw": "{not json"},
        {"format": "ml-goodput", "file": str(log), "line": 3, "reason": "not a JSON object",
         "raw": "[1, 2]"},
    ]  # fmt: skip
    assert found.counts.to_pylist() == [
        {"source": "import", "records_read": 2, "accepted": 0, "duplicates": 0, "quarantined": 2}
    ]


def test_a_record_two_imports_quarantined_counts_once(tmp_path: Path) -> None:
    """Importing a.jsonl, then a.jsonl with b.jsonl, writes two quarantine files (named after
    their inputs) that both hold a's bad line: read 3 = 0 accepted + 1 duplicate + 2 quarantined,
    the copy kept being the first by (file, line)."""
    a = _log(tmp_path / "a.jsonl", [START, "{not json", END])
    b = _log(tmp_path / "b.jsonl", [{**START, "job_name": "k"}, "oops", {**END, "job_name": "k"}])
    root = tmp_path / "traces"
    _import(root, a)
    _import(root, a, b)
    found = read_import_quarantine(root)
    assert found.counts.to_pylist() == [
        {"source": "import", "records_read": 3, "accepted": 0, "duplicates": 1, "quarantined": 2}
    ]
    assert sorted(json.loads(r["raw"])["raw"] for r in found.rows.to_pylist()) == [
        "oops",
        "{not json",
    ]


def _published(out: Path, sql: str) -> list[tuple]:
    import duckdb

    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as con:
        return con.sql(sql).fetchall()


def test_a_run_publishes_the_import_quarantine_and_replaces_it_when_imports_change(
    tmp_path: Path,
) -> None:
    """The run's quarantine gets the import's rows (source `import`) and record_counts its row;
    after a second import the next run holds the folder's rows as they are then, not twice."""
    a = _log(tmp_path / "a.jsonl", [START, STEP, "{not json", END])
    root, out = tmp_path / "traces", tmp_path / "out"
    _import(root, a)
    assert main(["run", "--traces", str(root), "--out", str(out)]) == 0
    rows = "select file, line, reason from quarantine where source = 'import' order by all"
    counts = "select * exclude (source) from record_counts where source = 'import'"
    (name,) = [p.relative_to(root).as_posix() for p in (root / "quarantine").glob("*.jsonl")]
    assert _published(out, rows) == [(name, 1, "invalid JSON")]
    assert _published(out, counts) == [(1, 0, 0, 1)]

    b = _log(tmp_path / "b.jsonl", [{**r, "job_name": "k"} for r in (START, STEP, END)])
    b.write_text(b.read_text() + "oops\n")
    _import(root, b)
    assert main(["run", "--traces", str(root), "--out", str(out)]) == 0
    names = sorted(p.relative_to(root).as_posix() for p in (root / "quarantine").glob("*.jsonl"))
    assert name in names
    assert _published(out, rows) == [(n, 1, "invalid JSON") for n in names]
    assert _published(out, counts) == [(2, 0, 0, 2)]
