"""The fleet simulator: deterministic, spec-valid, and its manifest is an exact answer key.

Every written line is checked here by an independent reading of the spec (Python's json module
and the spec's rules, written out again below, not the simulator's code): it is either a valid
record or one of the malformed lines the manifest counts.
"""

from __future__ import annotations

import datetime
import gzip
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from mpg.simulate import SimulationError, SimulationManifest, simulate

SOURCES = ("scheduler", "runtime", "profiles")
GENERATIONS = {"tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e", "tpu-v7"} | {
    "gpu-a100",
    "gpu-h100",
    "gpu-h200",
    "gpu-b200",
}
WORKLOAD_CLASSES = {"training", "serving", "bulk_inference"}
FRAMEWORKS = {"jax", "tensorflow", "pytorch", "other"}
STATES = {"FINISHED", "FAILED", "CANCELLED"}
TASK_TYPES = {"TASK_SCHEDULE", "TASK_EVICT", "TASK_FAIL", "TASK_LOST", "TASK_FINISH"}
KINDS = {"init", "compile", "data_wait", "step", "checkpoint_save", "checkpoint_restore"}
KINDS_WITH_STEP = {"step", "checkpoint_save", "checkpoint_restore"}
_HH_MM = r"([01]\d|2[0-3]):[0-5]\d"
RFC3339 = re.compile(rf"\d{{4}}-\d{{2}}-\d{{2}}[Tt ]{_HH_MM}:[0-5]\d(\.\d+)?([Zz]|[+-]{_HH_MM})")


class InvalidRecordError(Exception):
    """The spec sends this line to the quarantine."""


def _int(record: dict[str, Any], name: str, minimum: int) -> int:
    value = record.get(name)
    if type(value) is not int or value < minimum:
        raise InvalidRecordError(name)
    return value


def _number(record: dict[str, Any], name: str) -> float:
    value = record.get(name)
    if type(value) not in (int, float):
        raise InvalidRecordError(name)
    return float(value)


def _str(record: dict[str, Any], name: str, allowed: set[str] | None = None) -> str:
    value = record.get(name)
    if not isinstance(value, str) or not value or (allowed is not None and value not in allowed):
        raise InvalidRecordError(name)
    return value


def _instant(record: dict[str, Any], name: str) -> datetime.datetime:
    value = _str(record, name)
    if not RFC3339.fullmatch(value):
        raise InvalidRecordError(name)
    try:
        return datetime.datetime.fromisoformat(value)
    except ValueError as err:
        raise InvalidRecordError(name) from err


def _optional(record: dict[str, Any], name: str, check: Any, *args: Any) -> Any:
    return None if record.get(name) is None else check(record, name, *args)


def _scheduler_key(r: dict[str, Any]) -> tuple[Any, ...]:
    type_ = _str(r, "type", {"JOB_SUBMIT", "JOB_END"} | TASK_TYPES)
    head = (type_, _instant(r, "ts"), _str(r, "job_id"))
    if type_ == "JOB_SUBMIT":
        return (
            *head,
            _int(r, "chips_requested", 1),
            _str(r, "chip_generation", GENERATIONS),
            _str(r, "workload_class", WORKLOAD_CLASSES),
            _str(r, "framework", FRAMEWORKS),
            _optional(r, "priority", _int, -(2**63)),
            _optional(r, "owner", _str),
            _optional(r, "team", _str),
            _optional(r, "queue", _str),
            _optional(r, "topology", _str),
        )
    if type_ == "JOB_END":
        return (*head, _str(r, "state", STATES))
    chips = _int(r, "chips", 1) if type_ == "TASK_SCHEDULE" else None
    return (*head, _int(r, "task_index", 0), chips)


def _runtime_key(r: dict[str, Any]) -> tuple[Any, ...]:
    kind = _str(r, "kind", KINDS)
    start, end = _instant(r, "start"), _instant(r, "end")
    if end < start:
        raise InvalidRecordError("end < start")
    step = _int(r, "step", -(2**63)) if kind in KINDS_WITH_STEP else None
    return (_str(r, "job_id"), _int(r, "attempt", 0), kind, start, end, step)


def _profile_key(r: dict[str, Any]) -> tuple[Any, ...]:
    step_time = _number(r, "step_time_s")
    flops = _number(r, "model_flops")
    hbm = _optional(r, "hbm_bytes", _number)
    if step_time <= 0 or flops < 0 or (hbm is not None and hbm < 0):
        raise InvalidRecordError("out of range")
    return (
        _str(r, "job_id"),
        _instant(r, "ts"),
        _int(r, "step", -(2**63)),
        step_time,
        flops,
        hbm,
        _int(r, "chips", 1),
        _optional(r, "flops_source", _str),
    )


KEYS = {"scheduler": _scheduler_key, "runtime": _runtime_key, "profiles": _profile_key}


@dataclass
class SourceLines:
    """One source's lines, sorted by the spec's rules."""

    lines: list[str] = field(default_factory=list)
    valid: list[tuple[str, dict[str, Any], tuple[Any, ...]]] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)


def _read_lines(path: Path) -> list[str]:
    data = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
    text = data.decode("utf-8")
    assert text.endswith("\n")
    return text[:-1].split("\n")


def classify(root: Path) -> dict[str, SourceLines]:
    """Every line of the trace root, valid or not; records of unknown jobs count as invalid."""
    out = {s: SourceLines() for s in SOURCES}
    for source in SOURCES:
        for path in sorted((root / source).iterdir()):
            for line in _read_lines(path):
                out[source].lines.append(line)
                try:
                    record = json.loads(line)
                    if not isinstance(record, dict):
                        raise InvalidRecordError("not an object")
                    out[source].valid.append((line, record, KEYS[source](record)))
                except (json.JSONDecodeError, InvalidRecordError):
                    out[source].invalid.append(line)
    known = {r["job_id"] for _, r, _ in out["scheduler"].valid if r["type"] == "JOB_SUBMIT"}
    for lines in out.values():
        orphans = [v for v in lines.valid if v[1]["job_id"] not in known]
        lines.invalid += [line for line, _, _ in orphans]
        lines.valid = [v for v in lines.valid if v[1]["job_id"] in known]
    return out


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SimulationManifest]:
    root = tmp_path_factory.mktemp("fleet")
    return root, simulate(seed=7, jobs=60, days=3, out=root)


@pytest.fixture(scope="module")
def lines(sample: tuple[Path, SimulationManifest]) -> dict[str, SourceLines]:
    return classify(sample[0])


def _submits(lines: dict[str, SourceLines]) -> list[dict[str, Any]]:
    return [r for _, r, _ in lines["scheduler"].valid if r["type"] == "JOB_SUBMIT"]


def test_same_arguments_write_the_same_bytes(tmp_path: Path) -> None:
    first = simulate(seed=3, jobs=8, days=2, out=tmp_path / "a")
    second = simulate(seed=3, jobs=8, days=2, out=tmp_path / "b")
    assert first == second
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.*"))
    assert len(files) == sum(len(s.files) for s in first.sources) + 1  # and manifest.json
    for name in files:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    other = simulate(seed=4, jobs=8, days=2, out=tmp_path / "c")
    assert other.runtime.records != first.runtime.records


def test_manifest_is_written_and_adds_up(sample: tuple[Path, SimulationManifest]) -> None:
    root, manifest = sample
    doc = json.loads((root / "manifest.json").read_text())
    assert (doc["seed"], doc["jobs"], doc["days"], doc["start"]) == (7, 60, 3, "2026-11-20")
    for s in manifest.sources:
        assert s.lines_written == s.records + s.duplicates + s.malformed
        assert s.duplicates > 0 and s.malformed > 0
        assert doc[s.source]["lines_written"] == s.lines_written
        assert sorted(p.relative_to(root).as_posix() for p in (root / s.source).iterdir()) == (
            sorted(s.files)
        )


def test_every_line_is_a_valid_record_or_a_counted_malformed_one(
    sample: tuple[Path, SimulationManifest], lines: dict[str, SourceLines]
) -> None:
    manifest = sample[1]
    for s in manifest.sources:
        got = lines[s.source]
        assert len(got.lines) == s.lines_written
        assert len(got.invalid) == s.malformed
        assert len(set(got.invalid)) == len(got.invalid), "malformed lines are unique"
        distinct_keys = {key for _, _, key in got.valid}
        assert len(distinct_keys) == s.records
        # Duplicates are exact copies: no two different lines read as the same record.
        assert len({line for line, _, _ in got.valid}) == s.records
        assert len(got.valid) - s.records == s.duplicates


def test_malformed_lines_cover_the_spec_reasons(lines: dict[str, SourceLines]) -> None:
    bad = {s: "\n".join(lines[s].invalid) for s in SOURCES}
    assert "2026-13-45T00:00:00Z" in bad["scheduler"]
    assert '"chips": "' in bad["scheduler"]
    assert '"chips_requested": 0' in bad["scheduler"]
    assert '"chip_generation": "tpu-v9x"' in bad["scheduler"]
    assert '"kind": "warmup"' in bad["runtime"]
    assert '"step_time_s": 0.0' in bad["profiles"]
    for source in SOURCES:
        assert any(line.startswith("[") for line in lines[source].invalid)
        assert any('"orphan-' in line for line in lines[source].invalid)


def test_lifecycle_is_consistent(lines: dict[str, SourceLines]) -> None:
    distinct = {key: r for _, r, key in lines["scheduler"].valid}.values()
    submits = Counter(r["job_id"] for r in distinct if r["type"] == "JOB_SUBMIT")
    ends = Counter(r["job_id"] for r in distinct if r["type"] == "JOB_END")
    assert set(submits.values()) == {1}
    assert set(ends.values()) == {1}
    assert len(ends) < len(submits), "some jobs are still open at the end of the data"
    assert {r["state"] for r in distinct if r["type"] == "JOB_END"} == STATES
    submitted = {r["job_id"]: r["ts"] for r in distinct if r["type"] == "JOB_SUBMIT"}
    for r in distinct:
        at = datetime.datetime.fromisoformat(r["ts"])
        assert at >= datetime.datetime.fromisoformat(submitted[r["job_id"]])


def test_gz_files_are_gzip_and_plain_files_are_not(
    sample: tuple[Path, SimulationManifest],
) -> None:
    root, manifest = sample
    for s in manifest.sources:
        suffixes = {Path(f).suffix for f in s.files}
        assert suffixes == {".gz", ".jsonl"}
        for f in s.files:
            head = (root / f).read_bytes()[:2]
            assert (head == b"\x1f\x8b") == f.endswith(".jsonl.gz")


def test_fleet_is_varied(lines: dict[str, SourceLines]) -> None:
    submits = _submits(lines)
    assert {r["workload_class"] for r in submits} == WORKLOAD_CLASSES
    assert {r["framework"] for r in submits} == FRAMEWORKS
    assert {r["chip_generation"] for r in submits} == GENERATIONS
    kinds = Counter(r["kind"] for _, r, _ in lines["runtime"].valid)
    assert set(kinds) == KINDS
    assert max(r["attempt"] for _, r, _ in lines["runtime"].valid) > 0
    profiled = {r["job_id"] for _, r, _ in lines["profiles"].valid}
    assert 0 < len(profiled) < len(submits), "most jobs are profiled, not all"
    times = [r["ts"] for _, r, _ in lines["profiles"].valid]
    assert any(t.endswith("Z") for t in times) and any(t.endswith(":00") for t in times)


def test_some_jobs_span_midnight(lines: dict[str, SourceLines]) -> None:
    days: dict[str, set[datetime.date]] = {}
    for _, r, _ in lines["runtime"].valid:
        for name in ("start", "end"):
            at = datetime.datetime.fromisoformat(r[name]).astimezone(datetime.UTC)
            days.setdefault(r["job_id"], set()).add(at.date())
    assert sum(len(d) > 1 for d in days.values()) >= 5


def test_profiles_give_a_realistic_program_goodput(lines: dict[str, SourceLines]) -> None:
    peak = {"tpu-v4": 275e12, "tpu-v5e": 197e12, "tpu-v5p": 459e12, "tpu-v6e": 918e12}
    peak |= {"tpu-v7": 2307e12, "gpu-a100": 312e12, "gpu-h100": 989e12, "gpu-h200": 989e12}
    peak |= {"gpu-b200": 2250e12}
    generation = {r["job_id"]: r["chip_generation"] for r in _submits(lines)}
    for _, r, _ in lines["profiles"].valid:
        ideal = r["model_flops"] / (r["chips"] * peak[generation[r["job_id"]]])
        assert 0.15 < ideal / r["step_time_s"] < 0.8


def test_tiny_fleets_still_add_up(tmp_path: Path) -> None:
    for seed in range(4):
        manifest = simulate(seed=seed, jobs=1, days=1, out=tmp_path / str(seed))
        got = classify(tmp_path / str(seed))
        for s in manifest.sources:
            assert len(got[s.source].lines) == s.lines_written
            assert len(got[s.source].invalid) == s.malformed


def test_refuses_to_mix_two_fleets(tmp_path: Path) -> None:
    simulate(seed=1, jobs=2, days=1, out=tmp_path)
    with pytest.raises(SimulationError, match="already holds trace files"):
        simulate(seed=2, jobs=2, days=1, out=tmp_path)
