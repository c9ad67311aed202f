"""`mpg import xplane` on a real jax capture (tests/fixtures/adapters/xplane, made by
tests/support/adapters/make_xplane_fixtures.py) and on small captures built with the XPlane
schema (tests/support/adapters/xplane_captures.py), through the CLI; the conversion alone:
tests/unit/adapters/test_xplane.py.

FLOPs are checked against jax's own `compile().cost_analysis()` of the same step, recorded when
the capture was made; times against jax's own xplane reader (`ProfileData`), never against
figures taken from the adapter's output.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest

from mpg.adapters.xplane_cost import NO_JAX
from mpg.adapters.xplane_proto import XSpace
from mpg.cli import main
from tests.support.adapters.xplane_captures import (
    CAPTURE,
    EXPECTED,
    FIXTURE,
    MS,
    SIDECAR,
    build_capture,
)
from tests.support.cli import run_mpg

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
TPU_V5E_PEAK = 197e12  # the spec's catalog, per chip


def records(root: Path, source: str) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for path in sorted((root / source).glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def run_import(*args: str | Path) -> int:
    return main(["import", "xplane", *map(str, args)])


def micros(rfc3339: str) -> int:
    """Microseconds since the epoch of an RFC 3339 time, exactly."""
    return (datetime.fromisoformat(rfc3339) - EPOCH) // timedelta(microseconds=1)


def jax_steps() -> list[tuple[int, int, int]]:
    """(step_num, start, end) in microseconds since the epoch, by jax's own reader: event times
    from the capture's origin plus the profile_start_time the capture records, each rounded to
    the microsecond as docs/adapters/xplane.md says."""
    from jax.profiler import ProfileData

    data = ProfileData.from_file(str(CAPTURE))
    origin = dict(data.find_plane_with_name("Task Environment").stats)["profile_start_time"]
    found = []
    for plane in data.planes:
        for line in plane.lines:
            for event in line.events:
                stats = dict(event.stats)
                if "step_num" in stats:
                    start = origin + math.floor(event.start_ns)
                    end = origin + math.floor(event.start_ns + event.duration_ns)
                    found.append((stats["step_num"], (start + 500) // 1000, (end + 500) // 1000))
    return sorted(found)


# --- the real capture --------------------------------------------------------------------------


def test_flops_are_jax_cost_analysis_per_device_times_chips(tmp_path: Path) -> None:
    assert run_import(CAPTURE, "--out", tmp_path, "--job-id", "mlp", "--chips", "2") == 0
    profiles = records(tmp_path, "profiles")
    assert [p["step"] for p in profiles] == EXPECTED["steps"]
    per_device = EXPECTED["flops_per_device_step"]  # both programs each step launches
    assert per_device == sum(p["flops"] for p in EXPECTED["programs"].values())
    for p in profiles:
        assert p["model_flops"] == per_device * 2
        assert p["hbm_bytes"] == EXPECTED["bytes_accessed_per_device_step"] * 2
        assert (p["job_id"], p["chips"], p["flops_source"]) == ("mlp", 2, "hlo_optimized")
    assert not (tmp_path / "scheduler").exists()  # no --chip-generation: no scheduler events


def test_steps_are_the_annotations_on_the_wall_clock(tmp_path: Path) -> None:
    run_import(CAPTURE, "--out", tmp_path, "--job-id", "mlp", "--chips", "2", "--attempt", "3")
    spans = records(tmp_path, "runtime")
    profiles = {p["step"]: p for p in records(tmp_path, "profiles")}
    expected = jax_steps()
    assert [(s["step"], micros(s["start"]), micros(s["end"])) for s in spans] == expected
    for span, (before, after) in zip(spans, EXPECTED["wall_brackets_ns"], strict=True):
        assert (span["job_id"], span["attempt"], span["kind"]) == ("mlp", 3, "step")
        # time.time_ns() just before and after each step's annotation brackets its span.
        assert before // 1000 <= micros(span["start"]) < micros(span["end"])
        assert micros(span["end"]) <= -(-after // 1000)
        profile = profiles[span["step"]]
        assert profile["ts"] == span["start"]
        assert profile["step_time_s"] == (micros(span["end"]) - micros(span["start"])) / 1e6


def test_cost_analysis_sidecar(tmp_path: Path) -> None:
    run_import(
        CAPTURE, "--out", tmp_path, "--job-id", "mlp", "--chips", "2",
        "--cost-analysis", FIXTURE / "cost_analysis.json",
    )  # fmt: skip
    for p in records(tmp_path, "profiles"):
        assert p["model_flops"] == SIDECAR["flops"] * 2
        assert p["flops_source"] == "hlo_unoptimized"
        assert "hbm_bytes" not in p  # the sidecar gives no bytes


def test_without_jax(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "jax", None)  # import jax now fails
    assert run_import(CAPTURE, "--out", tmp_path / "a", "--job-id", "j", "--chips", "1") == 2
    assert capsys.readouterr().err == f"mpg: error: {NO_JAX}\n"
    sidecar = FIXTURE / "cost_analysis.json"
    assert run_import(CAPTURE, "--out", tmp_path / "b", "--job-id", "j", "--chips", "1",
                      "--cost-analysis", sidecar) == 0  # fmt: skip
    assert len(records(tmp_path / "b", "profiles")) == len(EXPECTED["steps"])


def test_job_sidecar_and_options_over_it(tmp_path: Path) -> None:
    capture = tmp_path / "in" / "host0.xplane.pb"
    capture.parent.mkdir()
    shutil.copyfile(CAPTURE, capture)
    sidecar = {"job_id": "from-sidecar", "chips": 4, "chip_generation": "tpu-v4", "attempt": 1}
    (tmp_path / "in" / "host0.mpg.json").write_text(json.dumps(sidecar), encoding="utf-8")
    assert run_import(tmp_path / "in", "--out", tmp_path / "a") == 0
    submit = records(tmp_path / "a", "scheduler")[0]
    assert (submit["job_id"], submit["chips_requested"], submit["chip_generation"]) == (
        "from-sidecar", 4, "tpu-v4",
    )  # fmt: skip
    assert {s["attempt"] for s in records(tmp_path / "a", "runtime")} == {1}
    assert run_import(tmp_path / "in", "--out", tmp_path / "b", "--chips", "8") == 0
    assert {p["chips"] for p in records(tmp_path / "b", "profiles")} == {8}
    assert records(tmp_path / "b", "scheduler")[0]["chips_requested"] == 8


@pytest.mark.parametrize(
    ("args", "sidecar", "message"),
    [
        ((), None, "--job-id is needed"),
        (("--job-id", "j"), None, "--chips is needed"),
        (("--job-id", "j", "--chips", "0"), None, "--chips must be between 1"),
        (("--job-id", "j", "--chips", "1", "--chip-generation", "v99"), None, "not in the chip"),
        (("--job-id", "j", "--chips", "1", "--attempt", "-1"), None, "--attempt must be >= 0"),
        (("--chips", "1"), {"job": "x"}, "only keys job_id, chips"),
        (("--job-id", "j"), {"chips": "8"}, "chips must be a JSON int"),
    ],
)  # fmt: skip
def test_bad_options_are_one_line_errors(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    sidecar: dict[str, Any] | None,
    message: str,
) -> None:
    capture = tmp_path / "h.xplane.pb"
    shutil.copyfile(CAPTURE, capture)
    if sidecar is not None:
        (tmp_path / "h.mpg.json").write_text(json.dumps(sidecar), encoding="utf-8")
    assert run_import(capture, "--out", tmp_path / "out", *args) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\xff\xff\xff not a protobuf", "not an xplane (XSpace protobuf)"),
        (b"", "not an xplane: no /host:* plane"),
        (XSpace(planes=[{"name": "/host:CPU"}]).SerializeToString(), "no step annotations"),
    ],
)
def test_files_that_are_not_usable_captures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    capture = tmp_path / "bad.xplane.pb"
    capture.write_bytes(content)
    assert run_import(capture, "--out", tmp_path / "o", "--job-id", "j", "--chips", "1") == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("sidecar", "message"),
    [
        ("{", "not a readable JSON file"),
        ('{"bytes accessed": 1}', "flops must be a number >= 0"),
        ('{"flops": -1}', "flops must be a number >= 0"),
        ('{"flops": 1, "bytes accessed": "x"}', "'bytes accessed' must be a number"),
        ('{"flops": 1, "flops_source": 3}', "flops_source must be a string"),
    ],
)
def test_bad_cost_sidecars(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sidecar: str, message: str
) -> None:
    (tmp_path / "c.json").write_text(sidecar, encoding="utf-8")
    code = run_import(CAPTURE, "--out", tmp_path / "o", "--job-id", "j", "--chips", "1",
                      "--cost-analysis", tmp_path / "c.json")  # fmt: skip
    assert code == 2
    assert message in capsys.readouterr().err


def test_end_to_end_goodput(tmp_path: Path) -> None:
    """Import with synthesized scheduler events, `mpg run`, and each job-day figure against the
    capture read by jax and the FLOPs jax counted when it was made."""
    chips = 2
    root, out = tmp_path / "traces", tmp_path / "out"
    assert run_import(CAPTURE, "--out", root, "--job-id", "mlp", "--chips", str(chips),
                      "--chip-generation", "tpu-v5e") == 0  # fmt: skip
    done = run_mpg("run", "--traces", root, "--out", out)
    assert done.returncode == 0, done.stderr
    steps = jax_steps()
    wanted_us = steps[-1][2] - steps[0][1]  # an open job: to the end of the data, its last step
    step_us = [end - start for _, start, end in steps]
    ideal_step_s = EXPECTED["flops_per_device_step"] * chips / (chips * TPU_V5E_PEAK)
    pg = ideal_step_s * len(steps) / (sum(step_us) / 1e6)
    productive = sum(step_us) / 1e6 * chips
    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as db:
        row = db.sql(
            "select day, sg, rg, pg, wanted_chip_s, productive_chip_s, ideal_chip_s"
            " from job_day_goodput where job_id = 'mlp' and metric_version = 'v1'"
        ).fetchall()
        ledger = dict(
            db.sql("select category, chip_s from chip_time_ledger where job_id = 'mlp'").fetchall()
        )
    ((day, sg, rg, got_pg, wanted, got_productive, ideal),) = row
    assert str(day) == "2026-11-23"
    assert sg == 1.0
    assert wanted == pytest.approx(wanted_us / 1e6 * chips, rel=1e-12)
    assert got_productive == pytest.approx(productive, rel=1e-12)
    assert rg == pytest.approx(sum(step_us) / wanted_us, rel=1e-12)
    assert got_pg == pytest.approx(pg, rel=1e-12)
    assert ideal == pytest.approx(productive * pg, rel=1e-12)
    assert ledger == pytest.approx(
        {
            "ideal": productive * pg,
            "program_loss": productive * (1 - pg),
            "runtime_idle": (wanted_us - sum(step_us)) / 1e6 * chips,
        },
        rel=1e-9,
    )


# --- captures built here ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("launches", "programs", "message"),
    [
        ([(5, 1, -MS)], {}, "no XLA program ran from the first step on"),
        ([(99, 1, 10)], {}, "program 99 has no HLO module in it"),
        ([(8, 1, 10)], {8: b"\x08\x01junk"}, "XLA cannot read program 8's HLO"),
    ],
)
def test_captures_without_usable_flops(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    launches: list[tuple[int, int, int]],
    programs: dict[int, bytes],
    message: str,
) -> None:
    capture = tmp_path / "h.xplane.pb"
    capture.write_bytes(build_capture([(0, 0, MS)], launches, programs))
    assert run_import(capture, "--out", tmp_path / "o", "--job-id", "j", "--chips", "1") == 2
    err = capsys.readouterr().err
    assert message in err and "--cost-analysis FILE" in err and err.count("\n") == 1
