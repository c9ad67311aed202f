"""`mpg import alibaba-gpu-v2023`: pod lists of the Alibaba GPU trace v2023 as canonical records.

The fixtures (tests/fixtures/adapters/alibaba-gpu-v2023/) are a verbatim slice of the real
`openb_pod_list_default.csv` and a hand-made list of GPU specs and bad rows. The end-to-end test
imports both, runs `mpg run`, and checks every job-day's chip-time and SG / RG against an
independent calculation: plain Python over the CSV rows, cutting intervals at UTC midnights.
"""

from __future__ import annotations

import csv
import datetime
import json
from collections import defaultdict
from pathlib import Path

import duckdb
import pytest

from mpg.cli import main
from tests.support.files import adapter_fixtures

FIXTURES = adapter_fixtures("alibaba-gpu-v2023")
SLICE = FIXTURES / "openb_pod_list_default_slice.csv"
HANDMADE = FIXTURES / "openb_pod_list_handmade.csv"
ORIGIN = "2023-07-01T00:00:00Z"
ORIGIN_S = datetime.datetime(2023, 7, 1, tzinfo=datetime.UTC).timestamp()
DAY = 86_400

# The hand-made list's rows that are usable, and the reason for each line that is not.
HANDMADE_USABLE = {
    "h-v100": "gpu-v100",
    "h-v100-repeated": "gpu-v100",
    "h-any-of-five": "gpu-unknown",
    "h-t4": "gpu-t4",
    "h-p100-share": "gpu-p100",
    "h-g3-lowercase": "gpu-alibaba-g3",
    "h-a10-live": "gpu-a10",
    "h-g1": "gpu-unknown",
    "h-p100-or-g2": "gpu-unknown",
    "h-quoted": "gpu-alibaba-g2",
    "h-pending-scheduled": "gpu-alibaba-g2",
    "h-failed-unscheduled": "gpu-unknown",
    "h-fractional-seconds": "gpu-alibaba-g2",
}
HANDMADE_QUARANTINE = [
    (15, "no GPU: num_gpu is 0"),
    (16, "bad number: num_gpu"),
    (17, "bad number: creation_time"),
    (18, "deletion before creation"),
    (19, "scheduled before creation"),
    (20, "deletion before scheduling"),
    (21, "missing field: name"),
    (22, "unknown pod_phase"),
    (23, "unknown qos"),
    (24, "malformed row: wrong number of fields"),
    (26, "duplicate pod name: an earlier row has it"),
    (27, "missing field: deletion_time"),
    (28, "missing field: scheduled_time"),
    (29, "out of range: gpu_milli above 1000"),
    (30, "bad number: gpu_milli"),
    (31, "missing field: creation_time"),
    (32, "bad number: scheduled_time"),
]


def _import(tmp_path: Path, *args: str | Path) -> Path:
    root = tmp_path / "traces"
    assert main(["import", "alibaba-gpu-v2023", *map(str, args), "--out", str(root)]) == 0
    return root


def _records(root: Path, source: str) -> list[dict]:
    return [
        json.loads(line)
        for path in sorted((root / source).glob("*.jsonl"))
        for line in path.read_text().splitlines()
    ]


# -- the independent calculation ---------------------------------------------------------------


def _pods(path: Path, usable: set[str] | None) -> list[dict]:
    """The usable pods of a list, with the adapter's documented reading of each: times in epoch
    seconds, `live` (still there at the list's end) and the job's end state."""
    with path.open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["num_gpu"] != "0"]
    rows = [r for r in rows if usable is None or r["name"] in usable]
    rows = list({r["name"]: r for r in reversed(rows)}.values())  # the first row of a name

    def t(text: str) -> float | None:
        return ORIGIN_S + float(text) if text else None

    list_end = max(
        t(r[c]) for r in rows for c in ("creation_time", "scheduled_time", "deletion_time") if r[c]
    )
    pods = []
    for r in rows:
        deleted = t(r["deletion_time"])
        live = deleted is None or (r["pod_phase"] in ("Running", "Pending") and deleted == list_end)
        state = {"Succeeded": "FINISHED", "Running": "FINISHED", "Failed": "FAILED"}.get(
            r["pod_phase"], "CANCELLED"
        )
        pods.append(
            {
                "job": r["name"],
                "chips": int(r["num_gpu"]),
                "serving": r["qos"] == "LS",
                "created": t(r["creation_time"]),
                "scheduled": t(r["scheduled_time"]),
                "deleted": None if live else deleted,
                "state": None if live else state,
                "span_end": deleted if deleted is not None else list_end,
            }
        )
    return pods


def _by_day(start: float, end: float, chips: int, into: dict, key: str, job: str) -> None:
    """Add the interval's chip-seconds to each UTC day it covers."""
    while start < end:
        midnight = (start // DAY + 1) * DAY
        day = datetime.datetime.fromtimestamp(start, datetime.UTC).date()
        into[(job, day)][key] += (min(end, midnight) - start) * chips
        start = midnight


def _expected(pods: list[dict]) -> dict[tuple[str, datetime.date], dict[str, float]]:
    """Wanted, all-allocated and productive chip-seconds per job-day, by the spec's rules."""
    data_end = max(
        t
        for p in pods
        for t in (
            p["created"],
            p["scheduled"],
            p["deleted"],
            p["span_end"] if p["scheduled"] is not None else None,
        )
        if t is not None
    )
    out: dict = defaultdict(lambda: {"wanted": 0.0, "allocated": 0.0, "productive": 0.0})
    for p in pods:
        end = p["deleted"] if p["deleted"] is not None else data_end
        _by_day(p["created"], end, p["chips"], out, "wanted", p["job"])
        if p["scheduled"] is None:
            continue
        _by_day(p["scheduled"], end, p["chips"], out, "allocated", p["job"])
        if p["serving"] or p["state"] in (None, "FINISHED"):
            _by_day(
                p["scheduled"], min(end, p["span_end"]), p["chips"], out, "productive", p["job"]
            )
    return out


# -- tests -------------------------------------------------------------------------------------


def test_end_to_end_sg_and_rg_per_job_day_match_an_independent_calculation(
    tmp_path: Path,
) -> None:
    root = _import(tmp_path, SLICE, HANDMADE, "--origin", ORIGIN)
    assert main(["run", "--traces", str(root), "--out", str(tmp_path / "out")]) == 0
    pods = _pods(SLICE, None) + _pods(HANDMADE, set(HANDMADE_USABLE))
    expected = _expected(pods)
    with duckdb.connect(str(tmp_path / "out" / "mpg.duckdb"), read_only=True) as db:
        rows = db.sql(
            "select job_id, day, wanted_chip_s, all_allocated_chip_s, productive_chip_s, "
            "ideal_chip_s, sg, rg, pg, chip_generation, workload_class, framework "
            "from job_day_goodput where metric_version = 'v1'"
        ).fetchall()
    assert len(pods) == 42 + 13
    assert {(r[0], r[1]) for r in rows} == set(expected)
    for job, day, wanted, allocated, productive, ideal, sg, rg, pg, gen, _class, fw in rows:
        want = expected[(job, day)]
        assert (job, day, wanted, allocated, productive) == (
            job,
            day,
            pytest.approx(want["wanted"], rel=1e-12),
            pytest.approx(want["allocated"], rel=1e-12),
            pytest.approx(want["productive"], rel=1e-12),
        )
        assert sg == pytest.approx(want["allocated"] / want["wanted"], rel=1e-12)
        if want["allocated"]:
            assert rg == pytest.approx(want["productive"] / want["allocated"], rel=1e-12)
        else:
            assert rg is None
        assert (ideal, pg, fw) == (None, None, "other")
        assert gen == HANDMADE_USABLE.get(job, "gpu-unknown")
    served = {r[0]: r[10] for r in rows}
    assert served["openb-pod-0000"] == "serving"  # qos LS
    assert served["openb-pod-0017"] == "training"  # qos Burstable
    assert served["openb-pod-0129"] == "training"  # qos Guaranteed


def test_hand_checked_job_days(tmp_path: Path) -> None:
    """Numbers worked by hand from openb_pod_list_handmade.csv (origin 2023-07-01T00:00:00Z)."""
    root = _import(tmp_path, HANDMADE, "--origin", ORIGIN)
    assert main(["run", "--traces", str(root), "--out", str(tmp_path / "out")]) == 0
    with duckdb.connect(str(tmp_path / "out" / "mpg.duckdb"), read_only=True) as db:
        got = {
            (job, str(day)): (w, a, p)
            for job, day, w, a, p in db.sql(
                "select job_id, day, wanted_chip_s, all_allocated_chip_s, productive_chip_s "
                "from job_day_goodput"
            ).fetchall()
        }
    # Created 80000 s, scheduled 80100 s, deleted 90000 s (Succeeded); midnight at 86400 s.
    assert got[("h-v100", "2023-07-01")] == (6400, 6300, 6300)
    assert got[("h-v100", "2023-07-02")] == (3600, 3600, 3600)
    # Two GPUs, a training pod that Failed: its allocation is all lost progress.
    assert got[("h-v100-repeated", "2023-07-01")] == (2 * 5400, 2 * 4400, 0)
    # Pending, never scheduled: wanted from 83000 s to its deletion at 84000 s, never allocated.
    assert got[("h-any-of-five", "2023-07-01")] == (1000, 0, 0)
    # Times with fractions of a second: 86399.5 s to 86400.25 s, scheduled at 86399.75 s.
    assert got[("h-fractional-seconds", "2023-07-01")] == (0.5, 0.25, 0.25)
    assert got[("h-fractional-seconds", "2023-07-02")] == (0.25, 0.25, 0.25)
    # Live at the list's end (200000 s, 07-03 07:33:20): 4 GPUs from 170000 s, an open job.
    assert got[("h-a10-live", "2023-07-02")] == (4 * 2800, 4 * 2800, 4 * 2800)
    assert got[("h-a10-live", "2023-07-03")] == (4 * 27200, 4 * 27200, 4 * 27200)


def test_quarantine_reasons_and_counts(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    root = _import(tmp_path, HANDMADE, "--origin", ORIGIN)
    out, err = capsys.readouterr()
    assert "30 records read = 13 converted + 17 quarantined" in out
    assert err.strip() == (
        "mpg import alibaba-gpu-v2023: GPU models not in the chip catalog, written as "
        "gpu-unknown: G1 (1 pod)"
    )
    quarantined = _records(root, "quarantine")
    assert [(q["line"], q["reason"]) for q in quarantined] == HANDMADE_QUARANTINE
    lines = HANDMADE.read_text().splitlines()
    assert all(q["raw"] == lines[q["line"] - 1] for q in quarantined)
    assert {q["file"] for q in quarantined} == {str(HANDMADE)}


def test_generations_states_and_events(tmp_path: Path) -> None:
    root = _import(tmp_path, HANDMADE, "--origin", ORIGIN)
    events = _records(root, "scheduler")
    submits = {e["job_id"]: e for e in events if e["type"] == "JOB_SUBMIT"}
    assert {j: e["chip_generation"] for j, e in submits.items()} == HANDMADE_USABLE
    assert submits["h-quoted"]["chips_requested"] == 2
    assert submits["h-g3-lowercase"]["chips_requested"] == 8
    assert submits["h-p100-share"]["chips_requested"] == 1  # a 230-milli share counts one GPU
    # The trace names no user, tenant or queue (qos is the class of service: workload_class).
    assert [e for e in submits.values() if {"owner", "team", "queue"} & e.keys()] == []
    ends = {e["job_id"]: e["state"] for e in events if e["type"] == "JOB_END"}
    assert ends == {
        "h-v100": "FINISHED",
        "h-v100-repeated": "FAILED",
        "h-any-of-five": "CANCELLED",
        "h-t4": "FINISHED",  # Running, deleted before the list's end
        "h-g3-lowercase": "FINISHED",
        "h-g1": "FAILED",
        "h-p100-or-g2": "FINISHED",
        "h-quoted": "FINISHED",
        "h-pending-scheduled": "CANCELLED",
        "h-failed-unscheduled": "FAILED",
        "h-fractional-seconds": "FINISHED",
    }  # h-a10-live (deleted at the list's end) and h-p100-share (no deletion) are open
    releases = {
        e["job_id"]: e["type"]
        for e in events
        if e["type"].startswith("TASK_") and e["type"] != "TASK_SCHEDULE"
    }
    assert releases["h-v100-repeated"] == "TASK_FAIL"
    assert releases["h-v100"] == "TASK_FINISH"
    assert "h-failed-unscheduled" not in releases and "h-a10-live" not in releases
    spans = {s["job_id"]: (s["start"], s["end"]) for s in _records(root, "runtime")}
    assert spans["h-p100-share"] == ("2023-07-02T17:48:20Z", "2023-07-03T07:33:20Z")
    assert spans["h-fractional-seconds"] == (
        "2023-07-01T23:59:59.750000Z",
        "2023-07-02T00:00:00.250000Z",
    )
    assert "h-any-of-five" not in spans and "h-failed-unscheduled" not in spans


def test_options_override_class_and_framework_and_drop_runtime(tmp_path: Path) -> None:
    root = _import(
        tmp_path,
        HANDMADE,
        "--origin",
        "2023-07-01T08:00:00+08:00",
        "--workload-class",
        "bulk_inference",
        "--framework",
        "pytorch",
        "--no-runtime",
    )
    submits = [e for e in _records(root, "scheduler") if e["type"] == "JOB_SUBMIT"]
    # With the class given, qos is not read: the row of an unknown qos is usable.
    assert len(submits) == 14
    assert {(e["workload_class"], e["framework"]) for e in submits} == {
        ("bulk_inference", "pytorch")
    }
    assert next(e for e in submits if e["job_id"] == "h-v100")["ts"] == "2023-07-01T22:13:20Z"
    assert not (root / "runtime").exists()


def test_a_folder_is_searched_for_pod_lists(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "openb_node_list_gpu_node.csv").write_text(
        "sn,cpu_milli,memory_mib,gpu,model\n"
    )
    (tmp_path / "src" / "openb_pod_list_default.csv").write_text(SLICE.read_text())
    _import(tmp_path, tmp_path / "src", "--origin", ORIGIN)
    assert "45 records read = 42 converted + 3 quarantined" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "options", "message"),
    [
        (None, ["--origin", "2023-07-01T00:00:00"], "needs an offset or Z"),
        # a date alone: the suggestion must itself be accepted (it was 2023-01-01Z)
        (None, ["--origin", "2023-01-01"], "needs an offset or Z (e.g. 2023-01-01T00:00:00Z)"),
        (None, ["--origin", "July 1st"], "is not an RFC 3339 instant"),
        (
            "sn,cpu_milli,memory_mib,gpu,model\nopenb-node-0000,64000,262144,2,P100\n",
            ["--origin", ORIGIN],
            "is not an Alibaba GPU v2023 pod list with phases and times: its header lacks name",
        ),
        (b"\xff\xfe\x00", ["--origin", ORIGIN], "is not UTF-8 text"),
        (  # the resource-only form some resampled lists of the repository have
            "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nopenb-pod-0000,12000,16384,1,1000\n",
            ["--origin", ORIGIN],
            "its header lacks qos, pod_phase, creation_time, deletion_time, scheduled_time",
        ),
        ("", ["--origin", ORIGIN], "its header lacks name"),
    ],
)
def test_unusable_files_and_options_are_one_line_errors(
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
    content: str | bytes | None,
    options: list[str],
    message: str,
) -> None:
    src = HANDMADE
    if content is not None:
        src = tmp_path / "pods.csv"
        if isinstance(content, bytes):
            src.write_bytes(content)
        else:
            src.write_text(content)
    code = main(["import", "alibaba-gpu-v2023", str(src), "--out", str(tmp_path / "t"), *options])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("mpg: error: ") and message in err and err.count("\n") == 1


def test_two_inputs_of_one_name_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "openb_pod_list_default.csv").write_text(SLICE.read_text())
    args = [str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "t")]
    assert main(["import", "alibaba-gpu-v2023", *args, "--origin", ORIGIN]) == 2
    assert "two input files are named openb_pod_list_default.csv" in capsys.readouterr().err
