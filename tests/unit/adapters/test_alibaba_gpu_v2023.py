"""`mpg.adapters.alibaba_gpu_v2023.convert` on a few hand-written rows of a pod list of the
Alibaba GPU trace v2023, without the CLI: every canonical record and quarantine row, worked out
by hand from the rules of docs/adapters/alibaba-gpu-v2023.md. Times are seconds from the trace's
origin, given as 2023-07-01T00:00:00Z. (A slice of the real list through `mpg import` and
`mpg run`: tests/e2e/adapters/test_alibaba_gpu_v2023.py.)"""

from __future__ import annotations

from pathlib import Path

from tests.support.conversion import convert, quarantined, records, unordered

HEADER = (
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time"
)
ORIGIN = ("--origin", "2023-07-01T00:00:00Z")


def _pods(path: Path, *rows: str) -> Path:
    path.write_text("\n".join((HEADER, *rows)) + "\n")
    return path


def _job(name: str, ts: str, chips: int, generation: str, workload: str) -> dict:
    return {
        "type": "JOB_SUBMIT",
        "ts": ts,
        "job_id": name,
        "chips_requested": chips,
        "chip_generation": generation,
        "workload_class": workload,
        "framework": "other",
    }


def test_each_phase_ends_its_job_as_the_rules_say(tmp_path: Path) -> None:
    """Succeeded: FINISHED. Failed: its release a failure, FAILED. Pending and never scheduled:
    CANCELLED at its deletion, no allocation. Running and deleted before the list's latest time
    (a GPU share, 500 milli, counts as its whole GPU): FINISHED. Running and deleted at the
    list's latest time (20000 s = 05:33:20): still there, open, its span ending at that time."""
    pods = _pods(
        tmp_path / "openb_pod_list_x.csv",
        "p-done,8000,16384,2,1000,V100M16|V100M32,BE,Succeeded,3600,10800,3660",
        "p-fail,8000,16384,1,1000,A10,LS,Failed,0,7200,60",
        "p-pending,8000,16384,1,1000,,BE,Pending,100,200,",
        "p-scaled-in,4000,8192,1,500,G2,LS,Running,0,3600,0",
        "p-open,8000,16384,4,1000,T4,Burstable,Running,1000,20000,1500",
    )
    conversion = convert("alibaba-gpu-v2023", [pods], *ORIGIN)
    assert (conversion.read, conversion.converted, quarantined(conversion)) == (5, 5, [])

    def task(kind: str, name: str, ts: str, **more: object) -> dict:
        return {"type": kind, "ts": ts, "job_id": name, "task_index": 0, **more}

    def end(name: str, ts: str, state: str) -> dict:
        return {"type": "JOB_END", "ts": ts, "job_id": name, "state": state}

    assert unordered(records(conversion, "scheduler")) == unordered(
        [
            _job("p-done", "2023-07-01T01:00:00Z", 2, "gpu-v100", "training"),
            task("TASK_SCHEDULE", "p-done", "2023-07-01T01:01:00Z", chips=2),
            task("TASK_FINISH", "p-done", "2023-07-01T03:00:00Z"),
            end("p-done", "2023-07-01T03:00:00Z", "FINISHED"),
            _job("p-fail", "2023-07-01T00:00:00Z", 1, "gpu-a10", "serving"),
            task("TASK_SCHEDULE", "p-fail", "2023-07-01T00:01:00Z", chips=1),
            task("TASK_FAIL", "p-fail", "2023-07-01T02:00:00Z"),
            end("p-fail", "2023-07-01T02:00:00Z", "FAILED"),
            _job("p-pending", "2023-07-01T00:01:40Z", 1, "gpu-unknown", "training"),
            end("p-pending", "2023-07-01T00:03:20Z", "CANCELLED"),
            _job("p-scaled-in", "2023-07-01T00:00:00Z", 1, "gpu-alibaba-g2", "serving"),
            task("TASK_SCHEDULE", "p-scaled-in", "2023-07-01T00:00:00Z", chips=1),
            task("TASK_FINISH", "p-scaled-in", "2023-07-01T01:00:00Z"),
            end("p-scaled-in", "2023-07-01T01:00:00Z", "FINISHED"),
            _job("p-open", "2023-07-01T00:16:40Z", 4, "gpu-t4", "training"),
            task("TASK_SCHEDULE", "p-open", "2023-07-01T00:25:00Z", chips=4),
        ]
    )
    spans = {s["job_id"]: (s["attempt"], s["kind"], s["start"], s["end"], s["step"])
             for s in records(conversion, "runtime")}  # fmt: skip
    assert spans == {
        "p-done": (0, "step", "2023-07-01T01:01:00Z", "2023-07-01T03:00:00Z", 0),
        "p-fail": (0, "step", "2023-07-01T00:01:00Z", "2023-07-01T02:00:00Z", 0),
        "p-scaled-in": (0, "step", "2023-07-01T00:00:00Z", "2023-07-01T01:00:00Z", 0),
        "p-open": (0, "step", "2023-07-01T00:25:00Z", "2023-07-01T05:33:20Z", 0),
    }


def test_options_override_the_class_and_drop_the_spans(tmp_path: Path) -> None:
    pods = _pods(
        tmp_path / "openb_pod_list_y.csv", "p-a,8000,16384,8,1000,P100,BE,Succeeded,0,600,30"
    )
    conversion = convert(
        "alibaba-gpu-v2023", [pods], *ORIGIN, "--workload-class", "serving", "--framework",
        "pytorch", "--no-runtime",
    )  # fmt: skip
    assert [e for e in records(conversion, "scheduler") if e["type"] == "JOB_SUBMIT"] == [
        {**_job("p-a", "2023-07-01T00:00:00Z", 8, "gpu-p100", "serving"), "framework": "pytorch"}
    ]
    assert records(conversion, "runtime") == []


def test_each_unusable_row_is_quarantined_with_the_first_reason_that_applies(
    tmp_path: Path,
) -> None:
    """`line` is the row's line in its file (the header is line 1)."""
    pods = _pods(
        tmp_path / "openb_pod_list_z.csv",
        "p-ok,8000,16384,1,1000,T4,BE,Succeeded,0,600,30",
        "p-cpu,8000,16384,0,0,,BE,Succeeded,0,600,30",
        "p-qos,8000,16384,1,1000,T4,XX,Succeeded,0,600,30",
        "p-phase,8000,16384,1,1000,T4,BE,Lost,0,600,30",
        "p-back,8000,16384,1,1000,T4,BE,Succeeded,600,0,600",
        "p-unscheduled,8000,16384,1,1000,T4,BE,Succeeded,0,600,",
        "p-ok,8000,16384,1,1000,T4,BE,Succeeded,10,600,30",
        "p-wide,8000,16384,1,1000,T4,BE,Succeeded,0,600,30,extra",
        "p-share,8000,16384,1,1500,T4,BE,Succeeded,0,600,30",
        "p-negative,8000,16384,1,1000,T4,BE,Succeeded,-5,600,30",
    )
    conversion = convert("alibaba-gpu-v2023", [pods], *ORIGIN)
    assert (conversion.read, conversion.converted) == (10, 1)
    name = "openb_pod_list_z.csv"
    assert quarantined(conversion) == [
        (name, 3, "no GPU: num_gpu is 0"),
        (name, 4, "unknown qos"),
        (name, 5, "unknown pod_phase"),
        (name, 6, "deletion before creation"),
        (name, 7, "missing field: scheduled_time"),
        (name, 8, "duplicate pod name: an earlier row has it"),
        (name, 9, "malformed row: wrong number of fields"),
        (name, 10, "out of range: gpu_milli above 1000"),
        (name, 11, "bad number: creation_time"),
    ]
    raw = conversion.quarantine.sort("line").get_column("raw").to_list()
    assert raw[0] == "p-cpu,8000,16384,0,0,,BE,Succeeded,0,600,30"
