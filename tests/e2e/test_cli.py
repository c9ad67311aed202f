"""The CLI's front door: user errors are one line and exit 2; a run prints headline and counts."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import duckdb
import pytest

from tests.support.cli import run_mpg
from tests.support.files import SPEC_EXAMPLES


def _no_trace_files(tmp: Path) -> tuple[Path, Path, str]:
    (tmp / "t" / "runtime").mkdir(parents=True)
    (tmp / "t" / "runtime" / "notes.txt").write_text("not a trace file\n")
    message = f"trace root {tmp / 't'} holds no *.jsonl or *.jsonl.gz files under {SOURCES}"
    return tmp / "t", tmp / "out", message


def _out_is_a_file(tmp: Path) -> tuple[Path, Path, str]:
    (tmp / "out").write_text("")
    return SPEC_EXAMPLES / "tiny", tmp / "out", f"--out {tmp / 'out'} exists and is not a folder"


SOURCES = "scheduler, runtime, profiles"
USER_ERRORS = {
    "missing trace root": lambda tmp: (
        tmp / "nope",
        tmp / "out",
        f"trace root {tmp / 'nope'} does not exist or is not a directory",
    ),
    "trace root without source folders": lambda tmp: (
        tmp,
        tmp / "out",
        f"trace root {tmp} has none of the source folders {SOURCES}",
    ),
    "trace root without trace files": _no_trace_files,
    "--out is a file": _out_is_a_file,
}


@pytest.mark.parametrize("case", USER_ERRORS)
def test_user_errors_are_one_line_and_exit_2(tmp_path: Path, case: str) -> None:
    traces, out, message = USER_ERRORS[case](tmp_path)
    result = run_mpg("run", "--traces", traces, "--out", out)
    assert result.returncode == 2
    assert result.stderr == f"mpg: error: {message}\n"


def test_bad_option_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = run_mpg("run", "--traces", SPEC_EXAMPLES / "tiny", "--out", tmp_path, "--buckets", "0")
    assert result.returncode == 2
    assert result.stderr.strip() == "mpg: error: --buckets must be between 1 and 1000000, not 0"


def test_run_over_gzip_and_malformed_lines_prints_headline_and_counts(tmp_path: Path) -> None:
    traces = tmp_path / "traces"
    shutil.copytree(SPEC_EXAMPLES / "tiny", traces, ignore=shutil.ignore_patterns("expected*"))
    spans = traces / "runtime" / "spans.jsonl"
    text = spans.read_bytes()
    spans.unlink()
    (traces / "runtime" / "spans.jsonl.gz").write_bytes(
        gzip.compress(text + text[:200] + b"\n{broken\n")
    )
    result = run_mpg("run", "--traces", traces, "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    # The summary: both days (fewer than 7 published). serve-b (gpu-h100, $12.29 a chip-hour)
    # wants 18,000 chip-s ($61.45) of which 2,640 are ideal: lost $52.44 = scheduling 120 chip-s
    # ($0.41) + runtime 2,280 ($7.78) + program 10,560 ($36.05) + unprofiled 2,400 (day 2, $8.19);
    # train-a's tpu-v5p has no price: its 22,800 chip-s (6.3 chip-hours) are named beside.
    assert (
        "  $52.44 lost = scheduling $0.41 + runtime $7.78 + program $36.05 + unprofiled $8.19; "
        "6.3 unpriced chip-hours not in it (tpu-v5p 6.3: set their prices in DIR/mpg.toml)"
    ) in result.stdout
    assert "Period 2026-11-20 .. 2026-11-21 (the last 2 days published; " in result.stdout
    assert "gpu-h100  " in result.stdout and "$52.44 program loss" in result.stdout
    again = run_mpg("run", "--traces", traces, "--out", tmp_path / "out", "--summary", "days")
    assert (
        "2026-11-20  v1   fleet                   10.3  0.633  0.764  0.280  0.135" in again.stdout
    )
    # 36 spans, then a copy of the first (a duplicate), a partial second line and a broken one
    assert "  runtime           39 =        36 +      1 +      2" in result.stdout
    with duckdb.connect(str(tmp_path / "out" / "mpg.duckdb"), read_only=True) as con:
        rows = con.execute("select file, line, reason from quarantine order by line").fetchall()
    assert rows == [
        ("runtime/spans.jsonl.gz", 38, "invalid JSON"),
        ("runtime/spans.jsonl.gz", 39, "invalid JSON"),
    ]


def test_running_again_publishes_nothing_and_full_replaces_the_tables(tmp_path: Path) -> None:
    out = tmp_path / "out"
    tables = "job_day_goodput", "chip_time_ledger", "goodput_by_slice"

    def published() -> dict[str, list[tuple]]:
        with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as con:
            return {t: sorted(con.table(t).fetchall(), key=repr) for t in tables}

    def pointer() -> dict:
        return json.loads((out / "current.json").read_text())

    assert run_mpg("run", "--traces", SPEC_EXAMPLES / "tiny", "--out", out).returncode == 0
    first, first_pointer = published(), pointer()
    again = run_mpg("run", "--traces", SPEC_EXAMPLES / "tiny", "--out", out)
    assert again.returncode == 0
    assert "up to date: no new, changed or removed trace files" in again.stdout
    assert pointer() == first_pointer
    full = run_mpg("run", "--traces", SPEC_EXAMPLES / "tiny", "--out", out, "--full")
    assert full.returncode == 0
    assert "computing everything: --full" in full.stdout
    assert published() == first
    assert pointer()["previous"] == first_pointer["run_id"] != pointer()["run_id"]
    public = ["current.json", "mpg.duckdb", "records", "runs", "state", "tables"]
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [".mpg", *public, "validation_report.md"]
    )
    # the current snapshot's state and the one before it; no staging left behind
    assert len(list((out / "state").iterdir())) == 2
    assert not (out / ".mpg" / "staging").exists()
    # each run's log, without Beam's notes on type hints it cannot resolve (mpg.pipelines.logs)
    logs = sorted((out / "runs").glob("*.log"))
    assert [("Converting string literal type hint" in p.read_text()) for p in logs] == [False] * 3


def _age(out: Path, table: str, columns: tuple[str, ...]) -> None:
    """Make `out` as an older mpg left it: `table` without `columns` in its Iceberg schema, and
    the snapshot made by other code."""
    from mpg.pipelines.iceberg import SnapshotCatalog

    pointer = json.loads((out / "current.json").read_text())
    catalog = SnapshotCatalog("old")
    iceberg = catalog.register_table(("mpg", table), f"file://{out / pointer['tables'][table]}")
    with iceberg.update_schema() as update:
        for column in columns:
            update.delete_column(column)
    metadata = iceberg.metadata_location.removeprefix(f"file://{out}/")
    pointer["tables"][table] = metadata
    pointer["metadata_files"] = sorted([*pointer["metadata_files"], metadata])
    pointer["key"]["code_version"] = "0.0.1+older"
    (out / "current.json").write_text(json.dumps(pointer))


def test_a_folder_published_before_owner_team_and_queue_gains_them(tmp_path: Path) -> None:
    """Tables of a folder an older mpg published lack the columns added since: the next run
    (of other code, so computing everything) adds them to the Iceberg tables and fills them."""
    from pyiceberg.table import StaticTable

    out, columns = tmp_path / "out", ("owner", "team", "queue", "allocated_from")
    assert run_mpg("run", "--traces", SPEC_EXAMPLES / "tiny", "--out", out).returncode == 0
    _age(out, "job_day_goodput", columns)
    again = run_mpg("run", "--traces", SPEC_EXAMPLES / "tiny", "--out", out)
    assert again.returncode == 0, again.stderr
    assert "computing everything: mpg changed (0.0.1+older -> " in again.stdout
    pointer = json.loads((out / "current.json").read_text())
    iceberg = StaticTable.from_metadata(str(out / pointer["tables"]["job_day_goodput"]))
    assert [f.name for f in iceberg.schema().fields][-4:] == list(columns)
    rows = iceberg.scan().to_arrow().select(["job_id", *columns]).to_pylist()
    # as the JOB_SUBMITs of spec example tiny name them: owners, and no team, queue or source
    named = {"train-a": "team-lm", "serve-b": "team-chat"}
    assert {tuple(r.values()) for r in rows} == {(j, o, None, None, None) for j, o in named.items()}


def test_empty_source_folders_publish_empty_tables(tmp_path: Path) -> None:
    traces = tmp_path / "traces"
    (traces / "scheduler").mkdir(parents=True)
    (traces / "runtime").mkdir()
    (traces / "runtime" / "a.jsonl").write_text("garbage\n")
    result = run_mpg("run", "--traces", traces, "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert "(no job has wanted time in this input)" in result.stdout
    assert "  runtime            1 =         0 +      0 +      1" in result.stdout
    assert result.stderr == (
        "mpg: warning: every runtime record read (1) was quarantined; their reasons: mpg sql "
        f'--out {tmp_path / "out"} "select reason, count(*) from quarantine where source = '
        "'runtime' group by 1\"\n"
    )
    with duckdb.connect(str(tmp_path / "out" / "mpg.duckdb"), read_only=True) as con:
        assert con.execute("select count(*) from job_day_goodput").fetchone() == (0,)
        assert con.execute("select reason from quarantine").fetchall() == [("invalid JSON",)]


def test_simulate_refuses_to_mix_two_fleets(tmp_path: Path) -> None:
    args = ("simulate", "--seed", "1", "--jobs", "2", "--days", "1", "--out", tmp_path / "t")
    assert run_mpg(*args).returncode == 0
    again = run_mpg(*args)
    assert again.returncode == 2
    assert again.stderr.strip() == (
        f"mpg: error: {tmp_path / 't' / 'scheduler'} already holds trace files; remove them first"
    )


def test_job_ids_and_file_names_reach_sql_as_values_never_as_query_text(tmp_path: Path) -> None:
    """A job id and a file name that would break SQL built by formatting come out verbatim."""
    hostile = "x'); drop table job_day_goodput; --\"$1"
    traces = tmp_path / "it's; drop"
    for source in ("scheduler", "runtime", "profiles"):
        (traces / source).mkdir(parents=True)
        for f in (SPEC_EXAMPLES / "tiny" / source).glob("*.jsonl"):
            text = f.read_text().replace('"train-a"', json.dumps(hostile))
            (traces / source / f"{f.stem} 'quoted'; $x.jsonl").write_text(text)
    result = run_mpg("run", "--traces", traces, "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    with duckdb.connect(str(tmp_path / "out" / "mpg.duckdb"), read_only=True) as con:
        jobs = con.execute("select distinct job_id from job_day_goodput order by 1").fetchall()
        files = con.execute(
            "select distinct file from read_parquet($store) order by 1",
            {"store": str(tmp_path / "out" / "records" / "**" / "*.parquet")},
        ).fetchall()
    assert jobs == [("serve-b",), (hostile,)]
    stems = {"profiles": "profiles", "runtime": "spans", "scheduler": "events"}
    assert files == [(f"{source}/{stem} 'quoted'; $x.jsonl",) for source, stem in stems.items()]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_an_unreadable_trace_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    traces = tmp_path / "traces"
    shutil.copytree(SPEC_EXAMPLES / "tiny", traces, ignore=shutil.ignore_patterns("expected*"))
    locked = traces / "runtime" / "spans.jsonl"
    locked.chmod(0)
    try:
        result = run_mpg("run", "--traces", traces, "--out", tmp_path / "out")
    finally:
        locked.chmod(0o644)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "mpg: error: cannot read trace file runtime/spans.jsonl: Permission denied"
    ]
    assert not (tmp_path / "out" / "mpg.duckdb").exists()


def test_an_input_file_that_fails_to_read_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """The same as above, as root too: a trace file whose read fails with an I/O error (a link
    to this process's own memory, unmapped at offset 0, so reading it gives EIO)."""
    traces = tmp_path / "traces"
    shutil.copytree(SPEC_EXAMPLES / "tiny", traces, ignore=shutil.ignore_patterns("expected*"))
    (traces / "runtime" / "broken.jsonl").symlink_to("/proc/self/mem")
    result = run_mpg("run", "--traces", traces, "--out", tmp_path / "out")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "mpg: error: cannot read trace file runtime/broken.jsonl: Input/output error"
    ]
    assert not (tmp_path / "out" / "mpg.duckdb").exists()
