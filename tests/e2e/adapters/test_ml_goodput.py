"""`mpg import ml-goodput`: records of the real ml-goodput-measurement recorder through `mpg run`,
cross-checked against the package's own GoodputCalculator on the same records.

Where the two definitions agree, the figures must be equal; where they differ
(docs/adapters/ml-goodput.md), the test pins both sides of the documented worked example.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from tests.support.adapters.ml_goodput_scenarios import (
    SCENARIOS,
    T0,
    calculate,
    record,
    write_fixtures,
)
from tests.support.cli import run_mpg
from tests.support.files import FIXTURES

HERE = FIXTURES / "adapters" / "ml-goodput"
CHIPS = 4


def _job(scenario: str) -> str:
    return f"fixture-{scenario.replace('_', '-')}"


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every scenario imported (4 chips of tpu-v5e, synthesized scheduler events) and run."""
    tmp = tmp_path_factory.mktemp("ml-goodput")
    imported = run_mpg(
        "import", "ml-goodput", *sorted(HERE.glob("*.jsonl")), "--out", tmp / "traces",
        "--chips", CHIPS, "--chip-generation", "tpu-v5e",
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    assert "392 records read = 392 converted + 0 quarantined" in imported.stdout
    ran = run_mpg("run", "--traces", tmp / "traces", "--out", tmp / "out")
    assert ran.returncode == 0, ran.stderr
    return tmp / "out" / "mpg.duckdb"


def _ledger_seconds(database: Path, job: str) -> dict[str, float]:
    """The job's ledger over all its days, in seconds of the whole job (chip-s / chips)."""
    with duckdb.connect(str(database), read_only=True) as db:
        rows = db.execute(
            "SELECT category, sum(chip_s) FROM chip_time_ledger "
            "WHERE job_id = ? AND metric_version = 'v1' GROUP BY category",
            [job],
        ).fetchall()
        wanted = db.execute(
            "SELECT sum(wanted_chip_s), sum(all_allocated_chip_s) FROM job_day_goodput "
            "WHERE job_id = ? AND metric_version = 'v1'",
            [job],
        ).fetchone()
    assert wanted is not None
    return {
        **{category: chip_s / CHIPS for category, chip_s in rows},
        "wanted": wanted[0] / CHIPS,
        "all_allocated": wanted[1] / CHIPS,
    }


def _comparable(ours: dict[str, float], theirs: dict) -> dict[str, tuple[float, float]]:
    """(ours, the calculator's) for every figure the two define alike (docs/adapters/ml-goodput.md):
    wanted = elapsed; productive = goodput; init = TPU initialization; our compile = training
    preparation + the first step's startup less the restores inside preparation; checkpoint save
    and restore; data_wait = synchronous data loading; lost progress = wasted progress; idle =
    infrastructure recovery + custom badput events."""
    bad = theirs["badput_s"]
    get = bad.get
    return {
        "wanted": (ours["wanted"], theirs["elapsed_s"]),
        "productive": (ours.get("productive_unprofiled", 0.0), theirs["productive_s"]),
        "init": (ours.get("init", 0.0), get("TPU_INITIALIZATION", 0.0)),
        "compile": (
            ours.get("compile", 0.0),
            get("TRAINING_PREP", 0.0)
            + get("PROGRAM_STARTUP", 0.0)
            - get("UNPRODUCTIVE_CHECKPOINT_RESTORE_TIME", 0.0),
        ),
        "checkpoint_save": (
            ours.get("checkpoint_save", 0.0),
            get("UNPRODUCTIVE_CHECKPOINT_SAVE_TIME", 0.0),
        ),
        "checkpoint_restore": (
            ours.get("checkpoint_restore", 0.0),
            get("UNPRODUCTIVE_CHECKPOINT_RESTORE_TIME", 0.0),
        ),
        "data_wait": (ours.get("data_wait", 0.0), get("DATA_LOADING_SYNC", 0.0)),
        "lost_progress": (
            ours.get("lost_progress", 0.0),
            get("WASTED_PROGRESS_FROM_DISRUPTION", 0.0),
        ),
        "runtime_idle": (
            ours.get("runtime_idle", 0.0),
            get("INFRASTRUCTURE_RECOVERY_FROM_DISRUPTION", 0.0) + get("CUSTOM_BADPUT_EVENTS", 0.0),
        ),
    }


# Figures on which the calculator is wrong, by scenario (docs/adapters/ml-goodput.md's worked
# examples): (figure, ours, the calculator's).
KNOWN_DIFFERENCES = {
    # Each step loads its batch after its start is logged (as MaxText does): the loads are step
    # time. The calculator counts the first load (6 s) as synchronous data loading and in its
    # productive time too: its buckets add up to 131 s of a 125 s job.
    "data_loading_in_steps": {"data_wait": (0.0, 6.0)},
    # Steps 0-7 of the first attempt are lost (no checkpoint); the calculator sees the restart
    # at step 0, returns nothing for the segment, and its 70 s fall into OTHER.
    "crash_before_checkpoint": {"lost_progress": (70.0, 0.0)},
    # Attempt 1 resumes at step 10, which attempt 0 never logged: the calculator sees no
    # restart and counts step 9 from its start (120 s) to step 10's (220 s) as one productive
    # step, over the 51 s down, the 10 s init and the 30 s preparation of the restart.
    "restart_at_unlogged_step": {
        "productive": (197.0, 288.0),
        "runtime_idle": (51.0, 0.0),
        "compile": (42.0, 42.0),
    },
    # Attempt 1 restores step 9 and runs step 9 again. The spec's save of step 9 covers step 9,
    # so its first run (120-130 s) was kept; the calculator reads the repeated number as "all
    # progress till step 8 preserved" and wastes it (test_a_restart_that_reruns_...).
    "restart_reruns_restored_step": {"productive": (208.0, 198.0), "lost_progress": (20.0, 30.0)},
    # The same, and step 9 is saved again (2 s, then 4 s): the calculator averages the saves of
    # one step number (3 s) and subtracts that from its productive time.
    "restart_saves_restored_step_again": {
        "productive": (204.0, 197.0),
        "lost_progress": (20.0, 30.0),
        "checkpoint_save": (6.0, 3.0),
    },
    # A save inside an attempt's first step is the save's time, not compilation (difference 8):
    # the calculator's PROGRAM_STARTUP holds it, and its productive time loses it.
    "first_step_compiles_and_saves": {"compile": (25.0, 28.0), "productive": (100.0, 97.0)},
    "restart_saves_restored_step_then_compiles": {
        "compile": (53.0, 57.0),
        "productive": (208.0, 197.0),
        "lost_progress": (20.0, 30.0),
        "checkpoint_save": (6.0, 3.0),
    },
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_agrees_with_the_goodput_calculator(published: Path, scenario: str) -> None:
    theirs = calculate(_job(scenario), record(scenario))
    ours = _ledger_seconds(published, _job(scenario))
    assert ours["all_allocated"] == ours["wanted"]  # synthesized scheduler events: SG = 1
    known = KNOWN_DIFFERENCES.get(scenario, {})
    pairs = _comparable(ours, theirs)
    assert {k: v for k, v in pairs.items() if k in known} == known
    agreed = {k: v for k, v in pairs.items() if k not in known}
    assert {k: a for k, (a, _) in agreed.items()} == pytest.approx(
        {k: b for k, (_, b) in agreed.items()}, abs=1e-6
    )


def test_a_restore_inside_preparation_is_counted_once(published: Path) -> None:
    """restart_from_checkpoint: the 10 s restore lies inside the 30 s preparation of attempt 1.
    The calculator counts it in both TRAINING_PREP (50 s) and the restore bucket (10 s), so its
    buckets add up to 400 s of a 390 s job; our ledger adds up to exactly the job's time."""
    theirs = calculate(_job("restart_from_checkpoint"), record("restart_from_checkpoint"))
    flat = [v for k, v in theirs["badput_s"].items() if k not in ("DATA_LOADING_ASYNC", "OTHER")]
    assert theirs["productive_s"] + sum(flat) == 400.0
    assert theirs["elapsed_s"] == 390.0
    ours = _ledger_seconds(published, _job("restart_from_checkpoint"))
    categories = {k: v for k, v in ours.items() if k not in ("wanted", "all_allocated")}
    assert categories == {
        "productive_unprofiled": 246.0,
        "init": 20.0,
        "compile": 40.0,  # 20 s + 20 s of preparation outside the restore
        "checkpoint_restore": 10.0,
        "checkpoint_save": 4.0,
        "lost_progress": 40.0,  # steps 10-13 after the checkpoint of step 9
        "runtime_idle": 30.0,  # step 14's start to the restart
    }
    assert sum(categories.values()) == 390.0


def test_a_restart_that_reruns_the_restored_step(published: Path) -> None:
    """docs/adapters/ml-goodput.md, difference 6. Attempt 0 logs steps 0-12 (10 s each from 30 s),
    saves step 9 at 127-129 s and dies while step 12 runs; attempt 1 starts at 200 s, restores step
    9 inside its preparation (215-225 s of 210-240 s) and logs steps 9-19 from 240 s; the job ends
    at 350 s. Ours: steps 0-9 of attempt 0 are kept (100 s less the 2 s save = 98 s), steps 9-19 of
    attempt 1 too (110 s): 208 s productive; steps 10-11 are lost (130-150 s; step 12 has no known
    end) and 150-200 s is idle. The calculator keeps steps 0-8 (90 s) and 9-19 (110 s) less the
    save: 198 s, and wastes 120-150 s."""
    theirs = calculate(_job("restart_reruns_restored_step"), record("restart_reruns_restored_step"))
    assert (theirs["productive_s"], theirs["badput_s"]["WASTED_PROGRESS_FROM_DISRUPTION"]) == (
        198.0,
        30.0,
    )
    ours = _ledger_seconds(published, _job("restart_reruns_restored_step"))
    categories = {k: v for k, v in ours.items() if k not in ("wanted", "all_allocated")}
    assert categories == {
        "productive_unprofiled": 208.0,
        "init": 20.0,
        "compile": 40.0,  # 20 s, and attempt 1's 30 s of preparation less the 10 s restore
        "checkpoint_restore": 10.0,
        "checkpoint_save": 2.0,
        "lost_progress": 20.0,
        "runtime_idle": 50.0,
    }
    assert sum(categories.values()) == ours["wanted"] == 350.0


def test_a_step_saved_before_the_crash_and_after_the_restart(published: Path) -> None:
    """docs/adapters/ml-goodput.md, difference 7: as above, and re-running step 9, attempt 1 saves
    it again (4 s, 245-249 s). Ours: two saves, 6 s, each cut out of its own step: productive 208 -
    4 = 204 s. The calculator keys saves by step number and averages those of one number: 3 s of
    save, and 198 - 1 = 197 s productive (it subtracts its whole save time from goodput)."""
    name = "restart_saves_restored_step_again"
    theirs = calculate(_job(name), record(name))
    assert (theirs["productive_s"], theirs["badput_s"]["UNPRODUCTIVE_CHECKPOINT_SAVE_TIME"]) == (
        197.0,
        3.0,
    )
    ours = _ledger_seconds(published, _job(name))
    assert (ours["checkpoint_save"], ours["productive_unprofiled"], ours["wanted"]) == (
        6.0,
        204.0,
        350.0,
    )


def _cut_spans(
    published: Path, job: str, kinds: tuple[str, ...]
) -> list[tuple[int, str, float, float]]:
    """The job's imported runtime spans of `kinds`: (attempt, kind, start, end), seconds from
    the scenarios' start."""
    traces = published.parent.parent / "traces" / "runtime"
    with duckdb.connect() as db:
        return db.execute(
            "SELECT attempt, kind, epoch(start) - epoch(?::TIMESTAMPTZ), "
            'epoch("end") - epoch(?::TIMESTAMPTZ) FROM read_json(?) '
            "WHERE job_id = ? AND list_contains(?, kind) ORDER BY start, kind",
            [T0, T0, f"{traces}/*.jsonl", job, list(kinds)],
        ).fetchall()


def test_a_save_inside_the_first_step_is_not_compilation(published: Path) -> None:
    """docs/adapters/ml-goodput.md, difference 8. first_step_compiles_and_saves: step 0 runs 20-48 s
    and saves at 45-48 s; steps 1-9 take 10 s. Step 0's own time is 28 - 3 = 25 s, 15 s over the
    others' mean: compile 20-35 s, and step 0 keeps its 10 s (35-45 s). The calculator's
    PROGRAM_STARTUP is 28 - 10 = 18 s, the save's 3 s included, which it also subtracts from
    productive time (97 s of 100 s). restart_saves_restored_step_then_compiles: attempt 1 runs step
    9 again at 240-267 s, saving it first (241-245 s): 23 s of its own, 13 s of compilation carved
    around the save (240-241 s, 245-257 s), never over it."""
    kinds = ("compile", "checkpoint_save", "checkpoint_restore")
    assert _cut_spans(published, _job("first_step_compiles_and_saves"), kinds) == [
        (0, "compile", 10.0, 20.0),  # training preparation
        (0, "compile", 20.0, 35.0),
        (0, "checkpoint_save", 45.0, 48.0),
    ]
    ours = _ledger_seconds(published, _job("first_step_compiles_and_saves"))
    assert {k: v for k, v in ours.items() if k not in ("wanted", "all_allocated")} == {
        "productive_unprofiled": 100.0,
        "init": 10.0,
        "compile": 25.0,
        "checkpoint_save": 3.0,
    }
    restart = _job("restart_saves_restored_step_then_compiles")
    assert _cut_spans(published, restart, kinds)[-4:] == [
        (1, "checkpoint_restore", 215.0, 225.0),
        (1, "compile", 240.0, 241.0),
        (1, "checkpoint_save", 241.0, 245.0),
        (1, "compile", 245.0, 257.0),
    ]
    ours = _ledger_seconds(published, restart)
    categories = {k: v for k, v in ours.items() if k not in ("wanted", "all_allocated")}
    assert categories == {
        "productive_unprofiled": 208.0,  # 98 s of attempt 0 (steps 0-9), 10 s + 100 s of attempt 1
        "init": 20.0,
        "compile": 53.0,  # 20 s, 30 s less the 10 s restore, 13 s in step 9
        "checkpoint_restore": 10.0,
        "checkpoint_save": 6.0,
        "lost_progress": 20.0,
        "runtime_idle": 50.0,
    }
    assert sum(categories.values()) == ours["wanted"] == 367.0


def test_sg_is_one_and_rg_is_productive_over_wanted(published: Path) -> None:
    with duckdb.connect(str(published), read_only=True) as db:
        rows = db.execute(
            "SELECT job_id, day, sg, rg, pg, chips_requested, chip_generation, workload_class, "
            "framework FROM job_day_goodput WHERE metric_version = 'v1' ORDER BY job_id"
        ).fetchall()
    assert len(rows) == len(SCENARIOS)  # every scenario lies within 2026-11-02
    clean = next(r for r in rows if r[0] == _job("clean"))
    assert clean[2:] == (1.0, 197.0 / 256.0, None, CHIPS, "tpu-v5e", "training", "jax")


def test_fixtures_are_what_the_script_writes(tmp_path: Path) -> None:
    write_fixtures(tmp_path)
    for made in sorted(tmp_path.iterdir()):
        assert made.read_bytes() == (HERE / made.name).read_bytes(), made.name


def _write(path: Path, records: list[object]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def _import(tmp_path: Path, *files: Path, extra: tuple[str, ...] = ()) -> tuple[str, Path]:
    result = run_mpg("import", "ml-goodput", *files, "--out", tmp_path / "traces", *extra)
    assert result.returncode == 0, result.stderr
    return result.stdout, tmp_path / "traces"


def _spans(root: Path) -> list[dict]:
    return [json.loads(line) for f in sorted(root.glob("runtime/*.jsonl")) for line in f.open()]


T = 1_793_599_200.0  # 2026-11-02T06:00:00Z


def test_unusable_records_are_quarantined_with_their_reason(tmp_path: Path) -> None:
    log = _write(
        tmp_path / "log.jsonl",
        [
            {"job_name": "j", "job_start_time": T},
            "{not json",
            "[1, 2]",
            {"job_name": "j", "something": 1},
            {"job_name": "j", "step_count": 0, "step_start_time": "soon"},
            {"job_name": "j", "step_count": -1, "step_start_time": T + 1},
            {"job_name": "j", "job_end_time": 1e12},
            {"job_name": "j", "tpu_init_start_time": T + 2},  # no end follows
            {"event_type": "compaction", "step": 1},
            {"event_type": "save", "step": 1, "checkpoint_manager_blocking_duration_secs": 1},
            {"jsonPayload": {"job_name": "j", "step_count": 0, "step_start_time": T + 10}},
            {"job_name": "j", "step_count": 1, "step_start_time": T + 20},
            {"job_name": "j", "job_end_time": T + 30},
        ],
    )
    out, root = _import(tmp_path, log)
    assert "13 records read = 4 converted + 9 quarantined" in out
    quarantined = [json.loads(line) for line in next(root.glob("quarantine/*.jsonl")).open()]
    assert [(q["line"], q["reason"]) for q in quarantined] == [
        (2, "invalid JSON"),
        (3, "not a JSON object"),
        (4, "not a goodput or checkpoint record"),
        (5, "not a number: step_start_time"),
        (6, "not a step number: step"),
        (7, "out of range: job_end_time"),
        (8, "init_start without its end"),
        (9, "unknown checkpoint event_type"),
        (10, "missing field: checkpoint_manager_blocking_start_time"),
    ]
    assert quarantined[0]["raw"] == "{not json" and quarantined[0]["format"] == "ml-goodput"
    assert [(s["kind"], s["step"], s["start"], s["end"]) for s in _spans(root)] == [
        ("step", 0, "2026-11-02T06:00:10Z", "2026-11-02T06:00:20Z"),  # a Cloud Logging entry
        ("step", 1, "2026-11-02T06:00:20Z", "2026-11-02T06:00:30Z"),
    ]


def test_checkpoint_records_take_their_files_job_or_the_option(tmp_path: Path) -> None:
    save = {"event_type": "save", "step": 0, "checkpoint_manager_blocking_start_time": T + 5,
            "checkpoint_manager_blocking_duration_secs": 0.25}  # fmt: skip
    one = _write(
        tmp_path / "one.jsonl", [{"job_name": "a", "step_count": 0, "step_start_time": T}, save]
    )
    two = _write(
        tmp_path / "two.jsonl",
        [{"job_name": "b", "job_start_time": T}, {"job_name": "c", "job_start_time": T}, save],
    )
    out, root = _import(tmp_path, one, two)
    assert "5 records read = 4 converted + 1 quarantined" in out
    [q] = [json.loads(line) for line in next(root.glob("quarantine/*.jsonl")).open()]
    assert (Path(q["file"]).name, q["line"], q["reason"]) == (
        "two.jsonl",
        3,
        "no job: give --job-id",
    )
    assert [(s["job_id"], s["kind"], s["start"], s["end"]) for s in _spans(root)] == [
        ("a", "step", "2026-11-02T06:00:00Z", "2026-11-02T06:00:05Z"),
        ("a", "checkpoint_save", "2026-11-02T06:00:05Z", "2026-11-02T06:00:05.250000Z"),
    ]
    _, named = _import(tmp_path / "named", two, extra=("--job-id", "c"))
    assert [(s["job_id"], s["kind"]) for s in _spans(named)] == [("c", "checkpoint_save")]


def test_a_step_that_goes_back_starts_an_attempt_and_an_open_job_has_no_end(
    tmp_path: Path,
) -> None:
    """No job_start_time before the second run of steps 3-4: the repeated step 3 is the restart.
    Without job_end_time the job is open: no JOB_END, and its last step has no known end."""
    steps = [(0, 0), (1, 10), (2, 20), (3, 30), (4, 40), (3, 60), (4, 70), (5, 80)]
    log = _write(
        tmp_path / "log.jsonl",
        [{"job_name": "j", "job_start_time": T}]
        + [{"job_name": "j", "step_count": s, "step_start_time": T + t} for s, t in steps],
    )
    _, root = _import(tmp_path, log, extra=("--chips", "2", "--chip-generation", "gpu-h100"))
    spans = _spans(root)
    assert [(s["attempt"], s["step"], s["start"][-3:-1], s["end"][-3:-1]) for s in spans] == [
        (0, 0, "00", "10"), (0, 1, "10", "20"), (0, 2, "20", "30"), (0, 3, "30", "40"),
        (1, 3, "00", "10"), (1, 4, "10", "20"),
    ]  # fmt: skip
    events = [json.loads(line) for f in root.glob("scheduler/*.jsonl") for line in f.open()]
    assert [e["type"] for e in events] == ["JOB_SUBMIT", "TASK_SCHEDULE"]
    assert events[0]["chips_requested"] == 2 and events[0]["framework"] == "jax"


def test_a_cloud_logging_export_array_is_read_entry_by_entry(tmp_path: Path) -> None:
    entries = [
        {
            "jsonPayload": {"job_name": "j", "step_count": 0, "step_start_time": T},
            "severity": "INFO",
        },
        {"jsonPayload": {"job_name": "j", "job_end_time": T + 7}},
        {"textPayload": "hello"},
    ]
    (tmp_path / "export.json").write_text(json.dumps(entries, indent=2))
    out, root = _import(tmp_path, tmp_path)
    assert "3 records read = 2 converted + 1 quarantined" in out
    [q] = [json.loads(line) for line in next(root.glob("quarantine/*.jsonl")).open()]
    assert (q["line"], q["reason"], q["raw"]) == (
        3,
        "not a goodput or checkpoint record",
        '{"textPayload": "hello"}',
    )
    assert [(s["kind"], s["start"], s["end"]) for s in _spans(root)] == [
        ("step", "2026-11-02T06:00:00Z", "2026-11-02T06:00:07Z")
    ]


def test_a_record_logged_twice_counts_once(tmp_path: Path) -> None:
    records = [
        {"job_name": "j", "job_start_time": T},
        {"job_name": "j", "step_count": 0, "step_start_time": T + 1},
        {"job_name": "j", "step_count": 1, "step_start_time": T + 3},
        {"job_name": "j", "job_end_time": T + 6},
    ]
    log = _write(tmp_path / "log.jsonl", records + records[1:3])
    out, root = _import(tmp_path, log)
    assert "6 records read = 6 converted + 0 quarantined" in out
    spans = [(s["attempt"], s["step"], s["start"][-3:-1], s["end"][-3:-1]) for s in _spans(root)]
    assert spans == [(0, 0, "01", "03"), (0, 1, "03", "06")]


def test_importing_again_replaces_a_jobs_files(tmp_path: Path) -> None:
    log = _write(tmp_path / "log.jsonl", [{"job_name": "j", "step_count": 0, "step_start_time": T},
                                          {"job_name": "j", "job_end_time": T + 5}])  # fmt: skip
    _, root = _import(tmp_path, log)
    first = sorted(p.name for p in root.rglob("*.jsonl"))
    _import(tmp_path, log)
    assert sorted(p.name for p in root.rglob("*.jsonl")) == first


def test_options_are_checked(tmp_path: Path) -> None:
    log = _write(tmp_path / "log.jsonl", [{"job_name": "j", "job_start_time": T}])
    for options, message in (
        (("--chip-generation", "tpu-v5e"), "--chip-generation needs --chips"),
        (("--chips", "4", "--chip-generation", "tpu-v99"), "'tpu-v99' is not in the chip catalog"),
        (("--chips", "0", "--chip-generation", "tpu-v5e"), "--chips must be between 1 and 10^9"),
        # --chips alone wrote no scheduler events, and the run quarantined every record
        (("--chips", "4"), "mpg: error: --chips needs --chip-generation: together they "),
    ):
        result = run_mpg("import", "ml-goodput", log, "--out", tmp_path / "t", *options)
        assert result.returncode == 2 and message in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    missing = run_mpg("import", "ml-goodput", tmp_path / "nope", "--out", tmp_path / "t")
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_an_import_without_scheduler_events_warns_that_the_run_will_quarantine(
    tmp_path: Path,
) -> None:
    log = _write(tmp_path / "log.jsonl", [{"job_name": "j", "step_count": 0, "step_start_time": T},
                                          {"job_name": "j", "job_end_time": T + 5}])  # fmt: skip
    root = tmp_path / "traces"
    alone = run_mpg("import", "ml-goodput", log, "--out", root)
    assert alone.returncode == 0
    assert alone.stderr == (
        f"mpg: warning: no scheduler events were written and {root / 'scheduler'} has none: mpg "
        "run will quarantine every record of these jobs as `unknown job`; add the jobs' "
        "scheduler trace there, or import again with --chips and --chip-generation to "
        "synthesize it\n"
    )
    synthesized = run_mpg(
        "import", "ml-goodput", log, "--out", root, "--chips", "4", "--chip-generation", "tpu-v5e"
    )
    assert (synthesized.returncode, synthesized.stderr) == (0, "")
    # Importing the log again without --chips replaces that import's output: its synthesized
    # scheduler events go, so the warning is back; the scheduler trace of another source, there
    # beside it, silences it.
    again = run_mpg("import", "ml-goodput", log, "--out", root)
    assert (again.returncode, again.stderr) == (0, alone.stderr)
    (root / "scheduler" / "cluster.jsonl").write_text("{}\n")
    beside = run_mpg("import", "ml-goodput", log, "--out", root)
    assert (beside.returncode, beside.stderr) == (0, "")
