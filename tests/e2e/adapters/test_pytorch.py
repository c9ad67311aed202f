"""`mpg import pytorch` on real PyTorch profiler traces (tests/fixtures/adapters/pytorch, made by
tests/support/adapters/make_pytorch_fixtures.py): every expected number is computed here again
from the traces' own JSON, by plain Python, and compared with what the adapter wrote and `mpg run`
made."""

from __future__ import annotations

import copy
import datetime as dt
import json
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

from mpg.cli import main
from tests.support.adapters.pytorch_traces import (
    CUDA,
    PYTORCH,
    RANKS,
    SINGLE,
    host_steps,
    trace_doc,
)
from tests.support.cli import run_mpg

A100_PEAK = 312e12  # spec: chip catalog v1
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
# One step of the fixtures' MLP (batch 32, 64 -> 128 -> 10), as FlopCounterMode counts it: 2 FLOPs
# per multiply-add of each matmul; forward: both layers; backward: both weight gradients and the
# second layer's input gradient (the input needs no gradient); SGD's update adds no matmul.
MLP_STEP_FLOPS = 2 * 32 * (64 * 128 + 128 * 10) + 2 * 32 * (128 * 10 * 2 + 64 * 128)


def _time(ns: int) -> dt.datetime:
    """A time in ns as the canonical records carry it: to the nearest microsecond."""
    return EPOCH + dt.timedelta(microseconds=(ns + 500) // 1000)


def _import(*args: str | Path) -> int:
    return main(["import", "pytorch", *map(str, args)])


def _records(root: Path, source: str) -> list[dict[str, Any]]:
    lines = [line for f in sorted((root / source).glob("*.jsonl")) for line in f.open()]
    return [json.loads(line) for line in lines]


def _when(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


def test_the_sidecars_flops_are_the_mlps_matmuls() -> None:
    for folder in ("single", "ddp", "cuda"):
        sidecar = next((PYTORCH / folder).glob("*.flops.json"))
        assert json.loads(sidecar.read_text())["flops_per_step"] == MLP_STEP_FLOPS == 1294336


@pytest.mark.parametrize("trace", [SINGLE, CUDA], ids=["cpu", "cuda"])
def test_a_gzipped_trace_becomes_step_spans_and_profile_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], trace: Path
) -> None:
    assert _import(trace, "--out", tmp_path, "--job-id", "mlp", "--chips", "4") == 0
    assert "3 records read = 3 converted + 0 quarantined" in capsys.readouterr().out
    steps = host_steps(trace)
    assert sorted(steps) == [2, 3, 4]
    spans = _records(tmp_path, "runtime")
    assert [(s["job_id"], s["attempt"], s["kind"], s["step"]) for s in spans] == [
        ("mlp", 0, "step", n) for n in sorted(steps)
    ]
    assert [(_when(s["start"]), _when(s["end"])) for s in spans] == [
        (_time(start), _time(end)) for start, end, _ in (steps[n] for n in sorted(steps))
    ]
    profiles = _records(tmp_path, "profiles")
    assert profiles == [
        {
            "job_id": "mlp",
            "ts": span["start"],
            "step": n,
            "step_time_s": pytest.approx(steps[n][2] / 1e6, rel=1e-12),
            "model_flops": MLP_STEP_FLOPS * 4,  # one rank's count times the chips
            "chips": 4,
            "flops_source": "flop_counter",
        }
        for n, span in zip(sorted(steps), spans, strict=True)
    ]
    assert not (tmp_path / "scheduler").exists()  # no --chip-generation: no scheduler events


def test_each_rank_has_its_spans_and_a_step_one_record(tmp_path: Path) -> None:
    # The folder is searched; job_id and chips come from the ranks' sidecars. Each trace names
    # its rank in distributedInfo, so each rank's step is a span of its own, with its rank.
    assert _import(PYTORCH / "ddp", "--out", tmp_path) == 0
    ranks = [host_steps(p) for p in RANKS]
    assert [trace_doc(p)["distributedInfo"]["rank"] for p in RANKS] == [0, 1]
    assert sorted(ranks[0]) == sorted(ranks[1]) == [2, 3, 4]
    spans, profiles = _records(tmp_path, "runtime"), _records(tmp_path, "profiles")
    assert [(s["job_id"], s["step"], s["rank"]) for s in spans] == [
        ("mlp-ddp", n, rank) for n in (2, 3, 4) for rank in (0, 1)
    ]
    for span in spans:
        start, end, _ = ranks[span["rank"]][span["step"]]
        assert (_when(span["start"]), _when(span["end"])) == (_time(start), _time(end))
    for n, profile in zip([2, 3, 4], profiles, strict=True):
        assert profile["step"] == n
        assert profile["step_time_s"] == pytest.approx(max(r[n][2] for r in ranks) / 1e6, rel=1e-12)
        assert (profile["chips"], profile["model_flops"]) == (2, MLP_STEP_FLOPS * 2)


def test_traces_that_name_no_rank_combine_into_one_span_per_step(tmp_path: Path) -> None:
    # The same two traces without distributedInfo: one span per step, from the earliest start
    # to the latest end over the files.
    for i, path in enumerate(RANKS):
        doc = trace_doc(path)
        del doc["distributedInfo"]
        (tmp_path / "in").mkdir(exist_ok=True)
        (tmp_path / "in" / f"w{i}.pt.trace.json").write_text(json.dumps(doc))
    assert _import(tmp_path / "in", "--out", tmp_path / "o", "--job-id", "j") == 0
    ranks = [host_steps(p) for p in RANKS]
    spans = _records(tmp_path / "o", "runtime")
    assert [(s["step"], "rank" in s) for s in spans] == [(2, False), (3, False), (4, False)]
    for n, span in zip([2, 3, 4], spans, strict=True):
        assert _when(span["start"]) == _time(min(r[n][0] for r in ranks))
        assert _when(span["end"]) == _time(max(r[n][1] for r in ranks))


def test_no_sidecar_writes_spans_only_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "in" / "w.pt.trace.json"
    trace.parent.mkdir()
    shutil.copy(RANKS[0], trace)
    assert _import(trace, "--out", tmp_path / "out", "--job-id", "j") == 0
    assert len(_records(tmp_path / "out", "runtime")) == 3
    assert not (tmp_path / "out" / "profiles").exists()
    assert "no FLOPs sidecar (w.flops.json) and no --flops: step spans only" in (
        capsys.readouterr().err
    )


def _sidecar(path: Path, **fields: Any) -> Path:
    path.write_text(json.dumps({"flops_per_step": 1000, **fields}))
    return path


def test_flops_option_and_a_sidecars_job_fields(tmp_path: Path) -> None:
    sidecar = _sidecar(
        tmp_path / "x.json", job_id="j7", chips=8, chip_generation="gpu-h100", flops_source="own"
    )
    assert _import(SINGLE, "--out", tmp_path / "out", "--flops", sidecar) == 0
    profile = _records(tmp_path / "out", "profiles")[0]
    assert (profile["job_id"], profile["chips"], profile["model_flops"]) == ("j7", 8, 8000)
    assert profile["flops_source"] == "own"
    submit = _records(tmp_path / "out", "scheduler")[0]
    assert (submit["chips_requested"], submit["chip_generation"]) == (8, "gpu-h100")
    # The command line wins over the sidecar.
    assert _import(SINGLE, "--out", tmp_path / "o2", "--flops", sidecar, "--job-id", "k") == 0
    assert _records(tmp_path / "o2", "profiles")[0]["job_id"] == "k"


@pytest.mark.parametrize(
    ("setup", "options", "message"),
    [
        (lambda d: None, [], "--job-id is needed (no FLOPs sidecar names the job)"),
        (
            lambda d: _sidecar(d / "w.flops.json", job_id="a"),
            [],
            "--chips is needed for the profile records (no FLOPs sidecar names it)",
        ),
        (
            lambda d: _sidecar(d / "w.flops.json", flops_per_step=0),
            ["--job-id", "j"],
            "w.flops.json: flops_per_step must be a number > 0, not 0",
        ),
        (
            lambda d: _sidecar(d / "w.flops.json", chips="2"),
            ["--job-id", "j"],
            "w.flops.json: chips must be an integer > 0, not '2'",
        ),
        (lambda d: None, ["--job-id", "j", "--flops", "nope.json"], "--flops nope.json does not"),
        (lambda d: None, ["--job-id", "j", "--attempt", "-1"], "--attempt must be >= 0, not -1"),
        (
            lambda d: None,
            ["--job-id", "j", "--chip-generation", "tpu-v9"],
            "--chip-generation needs --chips",
        ),
    ],
)
def test_unusable_options_and_sidecars_are_one_line_and_exit_2(
    tmp_path: Path, setup: Any, options: list[str], message: str
) -> None:
    shutil.copy(RANKS[0], tmp_path / "w.pt.trace.json")
    setup(tmp_path)
    result = run_mpg("import", "pytorch", tmp_path / "w.pt.trace.json", "--out", "o", *options)
    assert result.returncode == 2
    assert result.stderr.startswith("mpg: error: ") and result.stderr.count("\n") == 1
    assert message in result.stderr


def test_sidecars_of_different_jobs_are_refused(tmp_path: Path) -> None:
    for rank, job in enumerate(("a", "b")):
        shutil.copy(RANKS[rank], tmp_path / f"w{rank}.pt.trace.json")
        _sidecar(tmp_path / f"w{rank}.flops.json", job_id=job, chips=2)
    result = run_mpg("import", "pytorch", tmp_path, "--out", tmp_path / "o")
    assert result.returncode == 2
    assert "the FLOPs sidecars disagree on job_id" in result.stderr


def _write_trace(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(json.dumps(doc))
    return path


def _with_events(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The first rank's trace with `events` in place of its host-side ProfilerStep events."""
    doc = trace_doc(RANKS[0])
    kept = [e for e in doc["traceEvents"] if not e.get("name", "").startswith("ProfilerStep#")]
    return {**doc, "traceEvents": events + kept}


def test_unusable_step_events_are_quarantined_with_their_reason(tmp_path: Path) -> None:
    good = next(
        e
        for e in trace_doc(RANKS[0])["traceEvents"]
        if e.get("name", "").startswith("ProfilerStep#")
    )

    def bad(**change: Any) -> dict[str, Any]:
        event = {**copy.deepcopy(good), **change}
        return {k: v for k, v in event.items() if v is not None}

    events = [
        good,
        bad(name="ProfilerStep#two"),
        bad(ph="B"),
        bad(ts=None),
        bad(ts="123"),
        bad(dur=None),
        bad(dur=True),
        bad(dur=1e30),
        bad(dur=-1.5),
        bad(dur=0),
        bad(cat="gpu_user_annotation", ts=0.0, dur=9e9),  # the device's copy: no record
    ]
    trace = _write_trace(tmp_path / "t.pt.trace.json", _with_events(events))
    assert _import(trace, "--out", tmp_path / "o", "--job-id", "j") == 0
    rows = _records(tmp_path / "o", "quarantine")
    assert [(r["line"], r["reason"]) for r in rows] == [
        (2, "bad step number"),
        (3, "not a complete event (ph X)"),
        (4, "missing field: ts"),
        (5, "bad value: ts"),
        (6, "missing field: dur"),
        (7, "bad value: dur"),
        (8, "bad value: dur"),
        (9, "end before start"),
        (10, "zero duration"),
    ]
    assert all(r["file"] == str(trace) and r["format"] == "pytorch" for r in rows)
    assert [json.loads(r["raw"]) for r in rows] == events[1:10]
    assert [s["step"] for s in _records(tmp_path / "o", "runtime")] == [2]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"traceEvents": [', "not valid JSON (Expecting value at line 1 column 18)"),
        (b"\x1f\x8b\x08\x00garbage", "not a readable gzip file"),
        (b'{"schemaVersion": 1}', "not a Chrome trace (no traceEvents list)"),
        (b'{"traceEvents": [{"name": "aten::mm"}]}', "no ProfilerStep#N events"),
        (b'{"traceEvents": [], "baseTimeNanoseconds": "0"}', "baseTimeNanoseconds is not an int"),
    ],
)
def test_unusable_trace_files_are_one_line_and_exit_2(
    tmp_path: Path, content: bytes, message: str
) -> None:
    (tmp_path / "t.pt.trace.json").write_bytes(content)
    result = run_mpg("import", "pytorch", tmp_path, "--out", tmp_path / "o", "--job-id", "j")
    assert result.returncode == 2
    assert result.stderr.startswith(f"mpg: error: {tmp_path / 't.pt.trace.json'}: {message}")
    assert result.stderr.count("\n") == 1


def test_names_that_are_not_clean_json_text_do_not_matter(tmp_path: Path) -> None:
    """A raw tab and a byte that is not UTF-8 in an op name: the steps are still read."""
    text = json.dumps(trace_doc(RANKS[0])).encode().replace(b'"aten::', b'"\tat\xffen::', 1)
    (tmp_path / "t.pt.trace.json").write_bytes(text)
    assert _import(tmp_path / "t.pt.trace.json", "--out", tmp_path / "o", "--job-id", "j") == 0
    assert [s["step"] for s in _records(tmp_path / "o", "runtime")] == [2, 3, 4]


def test_a_bare_list_of_events_is_a_trace(tmp_path: Path) -> None:
    """Chrome's other form, `[event, ...]`, has no top level: `ts` must be Unix times."""
    events = [
        {"ph": "X", "name": "ProfilerStep#7", "ts": 1_700_000_000_000_000, "dur": 250_000},
        {"ph": "X", "name": "ProfilerStep#8", "ts": 1_700_000_000_250_000, "dur": 500_000.5},
    ]
    (tmp_path / "t.json").write_text(json.dumps(events))
    assert _import(tmp_path / "t.json", "--out", tmp_path / "o", "--job-id", "j") == 0
    assert _spans(tmp_path / "o") == [
        (_when("2023-11-14T22:13:20Z"), _when("2023-11-14T22:13:20.250Z"), 7),
        (_when("2023-11-14T22:13:20.250Z"), _when("2023-11-14T22:13:20.750001Z"), 8),
    ]


def _spans(root: Path) -> list[tuple[dt.datetime, dt.datetime, int]]:
    return [(_when(s["start"]), _when(s["end"]), s["step"]) for s in _records(root, "runtime")]


def test_traces_with_unix_ts_and_no_base_time_keep_their_wall_clock(tmp_path: Path) -> None:
    """Before `baseTimeNanoseconds` (torch < 2.4 or so), `ts` was a Unix time in whole µs."""
    doc = trace_doc(RANKS[0])
    base = doc.pop("baseTimeNanoseconds")
    for e in doc["traceEvents"]:
        if "ts" in e:
            e["ts"] = round(e["ts"]) + base // 1000
        if "dur" in e:
            e["dur"] = round(e["dur"])
    old = _write_trace(tmp_path / "old.pt.trace.json", doc)
    assert _import(old, "--out", tmp_path / "old", "--job-id", "j") == 0
    assert _spans(tmp_path / "old") == [
        (_time(s), _time(e), n) for n, (s, e, _) in sorted(host_steps(old).items())
    ]
    assert _import(RANKS[0], "--out", tmp_path / "new", "--job-id", "j") == 0
    for (old_start, _, _), (new_start, _, _) in zip(
        _spans(tmp_path / "old"), _spans(tmp_path / "new"), strict=True
    ):
        assert abs(old_start - new_start) <= dt.timedelta(microseconds=1)


def test_traces_without_wall_clock_times_need_start(tmp_path: Path) -> None:
    doc = trace_doc(RANKS[0])
    del doc["baseTimeNanoseconds"]
    trace = _write_trace(tmp_path / "rel.pt.trace.json", doc)
    result = run_mpg("import", "pytorch", trace, "--out", tmp_path / "o", "--job-id", "j")
    assert result.returncode == 2
    assert "its times are not wall-clock times" in result.stderr and "--start" in result.stderr
    start = "2026-01-02T03:04:05+01:00"
    assert _import(trace, "--out", tmp_path / "o", "--job-id", "j", "--start", start) == 0
    steps = host_steps(RANKS[0])  # with the base, whose offsets the shift must keep
    first = min(s[0] for s in steps.values())
    shift = (_when(start) - EPOCH) // dt.timedelta(microseconds=1) * 1000 - first
    assert _spans(tmp_path / "o") == [
        (_time(s + shift), _time(e + shift), n) for n, (s, e, _) in sorted(steps.items())
    ]


def test_attempts_are_batches_of_their_own(tmp_path: Path) -> None:
    for attempt in ("0", "1", "1"):  # importing attempt 1 again replaces it
        _import(SINGLE, "--out", tmp_path, "--job-id", "j", "--attempt", attempt)
    assert sorted(s["attempt"] for s in _records(tmp_path, "runtime")) == [0, 0, 0, 1, 1, 1]


def _union_s(intervals: list[tuple[int, int]]) -> float:
    """Seconds covered by the [start, end) intervals (µs), each instant once."""
    covered, reach = 0, None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            covered, reach = covered + end - start, end
        elif end > reach:
            covered, reach = covered + end - reach, end
    return covered / 1e6


@pytest.mark.parametrize(
    ("src", "options", "chips"),
    [
        (SINGLE, ["--job-id", "mlp", "--chips", "1"], 1),
        (PYTORCH / "ddp", [], 2),  # job and chips from the ranks' sidecars
    ],
)
def test_import_then_run_gives_sg_rg_pg_from_the_traces(
    tmp_path: Path, src: Path, options: list[str], chips: int
) -> None:
    root, out = tmp_path / "traces", tmp_path / "out"
    assert _import(src, "--out", root, "--chip-generation", "gpu-a100", *options) == 0
    run = run_mpg("run", "--traces", root, "--out", out)
    assert run.returncode == 0, run.stderr

    # Independently, from the traces' JSON and the sidecars: ranks' steps span from the earliest
    # start to the latest end; a step's time is its slowest rank's.
    ranks = [host_steps(p) for p in ([src] if src.is_file() else RANKS)]
    us = [((ns + 500) // 1000) for r in ranks for s in r.values() for ns in s[:2]]
    spans = [
        ((min(r[n][0] for r in ranks) + 500) // 1000, (max(r[n][1] for r in ranks) + 500) // 1000)
        for n in ranks[0]
    ]
    wanted_s = (max(us) - min(us)) / 1e6  # SUBMIT at the first step's start; open to the last end
    step_times = [max(r[n][2] for r in ranks) / 1e6 for n in ranks[0]]
    ideal_step = MLP_STEP_FLOPS * chips / (chips * A100_PEAK)
    pg = ideal_step * len(step_times) / sum(step_times)

    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as db:
        row = db.execute(
            "select job_id, chips_requested, wanted_chip_s, all_allocated_chip_s, "
            "productive_chip_s, ideal_chip_s, sg, rg, pg from job_day_goodput "
            "where metric_version = 'v1'"
        ).fetchall()
        ledger = dict(
            db.execute(
                "select category, chip_s from chip_time_ledger where metric_version = 'v1'"
            ).fetchall()
        )
    [(job, chips_requested, wanted, allocated, productive, ideal, sg, rg, pg_out)] = row
    assert (job, chips_requested) == ("mlp" if chips == 1 else "mlp-ddp", chips)
    assert wanted == pytest.approx(wanted_s * chips, rel=1e-12)
    assert (allocated, sg) == (wanted, 1.0)
    assert rg == pytest.approx(_union_s(spans) / wanted_s, rel=1e-12)
    assert productive == pytest.approx(_union_s(spans) * chips, rel=1e-12)
    assert pg_out == pytest.approx(pg, rel=1e-12)
    assert ideal == pytest.approx(productive * pg, rel=1e-12)
    assert sum(ledger.values()) == pytest.approx(wanted, rel=1e-12)
    assert ledger.get("runtime_idle", 0.0) == pytest.approx(wanted - productive, abs=1e-9)


def test_without_a_sidecar_the_job_has_sg_and_rg_and_no_pg(tmp_path: Path) -> None:
    trace = tmp_path / "in" / "w.pt.trace.json.gz"
    trace.parent.mkdir()
    shutil.copy(SINGLE, trace)
    options = ("--job-id", "j", "--chips", "1", "--chip-generation", "gpu-a100")
    assert _import(trace, "--out", tmp_path / "traces", *options) == 0
    assert (
        run_mpg("run", "--traces", tmp_path / "traces", "--out", tmp_path / "out").returncode == 0
    )
    steps = host_steps(SINGLE).values()
    spans = [((s + 500) // 1000, (e + 500) // 1000) for s, e, _ in steps]
    wanted_s = (max(e for _, e in spans) - min(s for s, _ in spans)) / 1e6
    with duckdb.connect(str(tmp_path / "out" / "mpg.duckdb"), read_only=True) as db:
        [(sg, rg, pg, ideal)] = db.execute(
            "select sg, rg, pg, ideal_chip_s from job_day_goodput where metric_version = 'v1'"
        ).fetchall()
        ledger = dict(
            db.execute(
                "select category, chip_s from chip_time_ledger where metric_version = 'v1'"
            ).fetchall()
        )
    assert (sg, pg, ideal) == (1.0, None, None)
    assert rg == pytest.approx(_union_s(spans) / wanted_s, rel=1e-12)
    assert ledger["productive_unprofiled"] == pytest.approx(_union_s(spans), rel=1e-12)
    assert "ideal" not in ledger
