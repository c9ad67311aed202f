"""An independent reference calculation of ML Productivity Goodput, metric v1.

Written from the contract alone (spec fleet-traces v1 and docs/decisions.md), without the
project's transforms, pipelines or SQL, so that tests can compare the real pipeline against it.
It is deliberately plain: Python loops, exact arithmetic (integer microseconds for time,
`fractions.Fraction` for chip-seconds and ratios), one job at a time, and every elementary
interval of a job's timeline classified directly by looking at what covers it. It is meant for
test-sized fleets, not for speed.

    ref = reference(Path("tests/fixtures/spec_examples/tiny"))
    ref.job_days[(datetime.date(2026, 11, 20), "train-a")].sg  # 0.4070175438596491

Where neither the spec nor docs/decisions.md settles a case, this file's reading is marked
"Reading:" in a comment; the tests avoid those cases.
"""

from __future__ import annotations

import datetime
import json
import math
import re
import zlib
from bisect import bisect_left, bisect_right
from collections import defaultdict
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

SOURCES = ("scheduler", "runtime", "profiles")

# Chip catalog v1, as tabled in the spec: peak dense bf16 FLOP/s per chip.
PEAK_FLOPS = {
    "tpu-v4": 275e12,
    "tpu-v5e": 197e12,
    "tpu-v5p": 459e12,
    "tpu-v6e": 918e12,
    "tpu-v7": 2307e12,
    "gpu-a100": 312e12,
    "gpu-h100": 989e12,
    "gpu-h200": 989e12,
    "gpu-b200": 2250e12,
}
WORKLOAD_CLASSES = ("training", "serving", "bulk_inference")
FRAMEWORKS = ("jax", "tensorflow", "pytorch", "other")
JOB_STATES = ("FINISHED", "FAILED", "CANCELLED")
RELEASES = ("TASK_EVICT", "TASK_FAIL", "TASK_LOST", "TASK_FINISH")
EVENT_TYPES = ("JOB_SUBMIT", "TASK_SCHEDULE", *RELEASES, "JOB_END")
SPAN_KINDS = ("init", "compile", "data_wait", "step", "checkpoint_save", "checkpoint_restore")
KINDS_WITH_STEP = ("step", "checkpoint_save", "checkpoint_restore")

# Where spans overlap, the time goes to the first of these that covers it.
PRECEDENCE = (
    "kept_step",
    "lost_step",
    "checkpoint_save",
    "checkpoint_restore",
    "compile",
    "init",
    "data_wait",
)
# Ledger category of each, before productive time is split into ideal and program loss.
LEDGER_CATEGORY = {
    "kept_step": "productive",
    "lost_step": "lost_progress",
    "checkpoint_save": "checkpoint_save",
    "checkpoint_restore": "checkpoint_restore",
    "compile": "compile",
    "init": "init",
    "data_wait": "data_wait",
    None: "runtime_idle",
}

US = 1_000_000  # microseconds per second: every instant is an integer count of them
DAY_US = 86_400 * US
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()


# ---------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class JobDay:
    day: datetime.date
    job_id: str
    workload_class: str
    framework: str
    chip_generation: str
    chips_requested: int
    wanted_chip_s: float
    all_allocated_chip_s: float
    productive_chip_s: float
    ideal_chip_s: float | None
    sg: float | None
    rg: float | None
    pg: float | None
    mpg: float | None


@dataclass(frozen=True)
class Slice:
    day: datetime.date
    workload_class: str | None
    framework: str | None
    chip_generation: str | None
    wanted_chip_s: float
    all_allocated_chip_s: float
    productive_chip_s: float
    ideal_chip_s: float | None
    pg_coverage: float | None
    sg: float | None
    rg: float | None
    pg: float | None
    mpg: float | None


@dataclass(frozen=True)
class Rejected:
    source: str
    file: str  # relative to the trace root, with '/'
    line: int  # 1-based, in the decompressed text
    reason: str  # reason_class() of it is what tests compare
    raw: str


@dataclass
class Counts:
    read: int = 0
    accepted: int = 0
    duplicates: int = 0
    quarantined: int = 0


@dataclass
class Reference:
    job_days: dict[tuple[datetime.date, str], JobDay]
    ledger: dict[tuple[datetime.date, str, str], float]  # no zero rows
    slices: dict[tuple[datetime.date, str | None, str | None, str | None], Slice]
    quarantine: list[Rejected]
    counts: dict[str, Counts]
    end_of_data_us: int | None = None


def reason_class(reason: str) -> str:
    """A coarse class of a quarantine reason, so that two wordings of one reason compare equal:
    the words before the first ':' reduced to one of a few classes."""
    head = reason.split(":", 1)[0].strip().lower()
    if "utf" in head:
        return "invalid utf-8"
    if "json" in head:
        return "invalid json"  # 'invalid JSON', 'not a JSON object', ...
    if head.startswith("unknown job"):
        return "unknown job"
    if head.startswith("unknown"):
        return "unknown value"  # unknown type, kind, workload_class, framework, chip_generation
    if head.startswith("wrong"):
        return "wrong type"
    if head.startswith("out of range"):
        return "out of range"
    return head.split()[0] if head else ""  # missing, unparseable, empty, conflicting, ...


# ---------------------------------------------------------------------------------------------
# Reading files


def trace_files(root: Path, source: str) -> list[Path]:
    """Every *.jsonl / *.jsonl.gz file under root/source, at any depth."""
    folder = root / source
    if not folder.is_dir():
        return []
    found = [
        p
        for p in folder.rglob("*")
        if p.is_file() and (p.name.endswith(".jsonl") or p.name.endswith(".jsonl.gz"))
    ]
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def gunzip(raw: bytes) -> tuple[bytes, bool]:
    """The decompressed bytes of a gzip file (all its members), and whether it was damaged.
    For a damaged file, the bytes are all that could be decompressed before the damage.
    Reading: where the damage shows only at the end (a bad CRC), everything before it counts."""
    out = bytearray()
    rest = raw
    while rest:
        member = zlib.decompressobj(wbits=31)
        try:
            out += member.decompress(rest)
        except zlib.error:
            # Decompress again a byte at a time, to keep everything before the damage.
            member = zlib.decompressobj(wbits=31)
            for i in range(len(rest)):
                try:
                    out += member.decompress(rest[i : i + 1])
                except zlib.error:
                    break
            return bytes(out), True
        if not member.eof:
            return bytes(out), True  # truncated
        rest = member.unused_data
    return bytes(out), False


def read_lines(path: Path) -> tuple[list[bytes], bytes | None]:
    """A file's lines (without line breaks), and the unreadable rest of a damaged .gz (None when
    the file read fine). The final line break does not start an empty record."""
    raw = path.read_bytes()
    broken = False
    if path.name.endswith(".gz"):
        raw, broken = gunzip(raw)
    pieces = raw.split(b"\n")
    tail = pieces.pop()  # what follows the last line break: b"" when the file ends with one
    if broken:
        return [p.removesuffix(b"\r") for p in pieces], tail
    if tail:
        pieces.append(tail)
    return [p.removesuffix(b"\r") for p in pieces], None


# ---------------------------------------------------------------------------------------------
# Validating one record


class BadRecordError(Exception):
    """A record that goes to the quarantine; the message is the reason."""


# Reading: only an upper-case "Z" (decisions.md names `T`/`t` but only `Z`).
_TIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?"
    r"(Z|[+-][0-9]{2}:[0-9]{2})"
)


def parse_time(text: str) -> int | None:
    """Strict RFC 3339 to integer microseconds since the epoch (fraction truncated), else None."""
    m = _TIME.fullmatch(text)
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    fraction, zone = m.group(7), m.group(8)
    try:
        ordinal = datetime.date(year, month, day).toordinal()
    except ValueError:
        return None
    if hour > 23 or minute > 59 or second > 59:
        return None
    offset_s = 0
    if zone != "Z":
        zh, zm = int(zone[1:3]), int(zone[4:6])
        if zh > 23 or zm > 59:
            return None
        offset_s = (zh * 3600 + zm * 60) * (1 if zone[0] == "+" else -1)
    micros = int((fraction[1:] + "000000")[:6]) if fraction else 0
    seconds = (ordinal - EPOCH_ORDINAL) * 86_400 + hour * 3600 + minute * 60 + second - offset_s
    return seconds * US + micros


def _value(obj: dict[str, Any], name: str, required: bool) -> Any:
    value = obj.get(name)  # null is the same as a missing field
    if value is None and required:
        raise BadRecordError(f"missing field: {name}")
    return value


def _string(obj: dict[str, Any], name: str, required: bool = True) -> str | None:
    value = _value(obj, name, required)
    if value is not None and not isinstance(value, str):
        raise BadRecordError(f"wrong type: {name} must be a string")
    return value


def _job_id(obj: dict[str, Any]) -> str:
    value = _string(obj, "job_id")
    if value == "":
        raise BadRecordError("out of range: job_id is empty")
    return value


def _choice(obj: dict[str, Any], name: str, allowed: Any) -> str:
    value = _string(obj, name)
    if value not in allowed:
        raise BadRecordError(f"unknown {name}: {value}")
    return value


def _integer(obj: dict[str, Any], name: str, minimum: int | None, required: bool = True) -> Any:
    value = _value(obj, name, required)
    if value is None:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        # Reading: NaN where an integer is due is "not finite" (the pipeline: wrong type).
        raise BadRecordError(f"out of range: {name} is not finite")
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRecordError(f"wrong type: {name} must be an integer")
    if not INT64_MIN <= value <= INT64_MAX:
        raise BadRecordError(f"out of range: {name} does not fit in 64 bits")
    if minimum is not None and value < minimum:
        raise BadRecordError(f"out of range: {name} must be >= {minimum}")
    return value


def _number(
    obj: dict[str, Any], name: str, minimum: float, strict: bool = False, required: bool = True
) -> Any:
    """A JSON number (integer or not) >= minimum, or > minimum when strict."""
    value = _value(obj, name, required)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadRecordError(f"wrong type: {name} must be a number")
    try:
        number = float(value)
    except OverflowError:
        raise BadRecordError(f"out of range: {name} is not finite") from None
    if not math.isfinite(number):
        raise BadRecordError(f"out of range: {name} is not finite")
    if number < minimum or (strict and number == minimum):
        raise BadRecordError(f"out of range: {name} must be {'>' if strict else '>='} {minimum}")
    return number


def _time(obj: dict[str, Any], name: str) -> int:
    value = _value(obj, name, True)
    if not isinstance(value, str):
        raise BadRecordError(f"wrong type: {name} must be an RFC 3339 string")
    micros = parse_time(value)
    if micros is None:
        raise BadRecordError(f"unparseable time: {name}")
    return micros


def scheduler_fields(obj: dict[str, Any]) -> dict[str, Any]:
    kind = _string(obj, "type")
    if kind not in EVENT_TYPES:
        raise BadRecordError(f"unknown type: {kind}")
    fields = {"type": kind, "ts": _time(obj, "ts"), "job_id": _job_id(obj)}
    if kind == "JOB_SUBMIT":
        fields["chips_requested"] = _integer(obj, "chips_requested", 1)
        fields["chip_generation"] = _choice(obj, "chip_generation", PEAK_FLOPS)
        fields["workload_class"] = _choice(obj, "workload_class", WORKLOAD_CLASSES)
        fields["framework"] = _choice(obj, "framework", FRAMEWORKS)
        fields["priority"] = _integer(obj, "priority", None, required=False)
        fields["owner"] = _string(obj, "owner", required=False)
        fields["topology"] = _string(obj, "topology", required=False)
    elif kind == "JOB_END":
        fields["state"] = _choice(obj, "state", JOB_STATES)
    else:
        fields["task_index"] = _integer(obj, "task_index", 0)
        if kind == "TASK_SCHEDULE":
            fields["chips"] = _integer(obj, "chips", 1)
    return fields


def runtime_fields(obj: dict[str, Any]) -> dict[str, Any]:
    fields = {
        "job_id": _job_id(obj),
        "attempt": _integer(obj, "attempt", 0),
        "kind": _choice(obj, "kind", SPAN_KINDS),
        "start": _time(obj, "start"),
        "end": _time(obj, "end"),
    }
    if fields["kind"] in KINDS_WITH_STEP:
        fields["step"] = _integer(obj, "step", None)
    if fields["end"] < fields["start"]:
        raise BadRecordError("out of range: end < start")
    return fields


def profile_fields(obj: dict[str, Any]) -> dict[str, Any]:
    return {
        "job_id": _job_id(obj),
        "ts": _time(obj, "ts"),
        "step": _integer(obj, "step", None),
        "step_time_s": _number(obj, "step_time_s", minimum=0, strict=True),
        # Negative FLOPs or bytes are out of range too (the spec's list of examples is not
        # exhaustive, and docs/decisions.md is silent; the pipeline rejects them as well).
        "model_flops": _number(obj, "model_flops", minimum=0),
        "hbm_bytes": _number(obj, "hbm_bytes", minimum=0, required=False),
        "chips": _integer(obj, "chips", 1),
        "flops_source": _string(obj, "flops_source", required=False),
    }


FIELDS = {"scheduler": scheduler_fields, "runtime": runtime_fields, "profiles": profile_fields}


def parse_line(source: str, raw: bytes) -> dict[str, Any]:
    """The record's spec-defined fields (absent optional ones left out), else BadRecordError."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRecordError("invalid UTF-8") from None
    if not text.strip():
        raise BadRecordError("empty line")
    try:
        obj = json.loads(text, parse_constant=float)  # NaN / Infinity: rejected as not finite
    except ValueError:
        raise BadRecordError("invalid JSON") from None
    if not isinstance(obj, dict):
        raise BadRecordError("not a JSON object")
    fields = FIELDS[source](obj)
    return {name: value for name, value in fields.items() if value is not None}


# ---------------------------------------------------------------------------------------------
# The run's records: read, de-duplicated, checked against jobs


@dataclass
class Record:
    source: str
    file: str
    line: int
    raw: str
    fields: dict[str, Any]

    def key(self) -> tuple[Any, ...]:
        """Equal for exact duplicates: same source and equal parsed fields."""
        return (self.source, tuple(sorted(self.fields.items())))


@dataclass
class Job:
    submit: Record
    end: Record | None = None
    events: list[Record] = field(default_factory=list)  # task events
    spans: list[Record] = field(default_factory=list)
    profiles: list[Record] = field(default_factory=list)


def read_records(root: Path) -> tuple[list[Record], list[Rejected], dict[str, Counts]]:
    """Every valid record (duplicates included), the malformed ones, and lines read."""
    valid: list[Record] = []
    rejected: list[Rejected] = []
    counts = {source: Counts() for source in SOURCES}
    for source in SOURCES:
        for path in trace_files(root, source):
            rel = path.relative_to(root).as_posix()
            lines, rest = read_lines(path)
            for number, raw in enumerate(lines, start=1):
                counts[source].read += 1
                text = raw.decode("utf-8", errors="replace")
                try:
                    fields = parse_line(source, raw)
                except BadRecordError as bad:
                    rejected.append(Rejected(source, rel, number, str(bad), text))
                else:
                    valid.append(Record(source, rel, number, text, fields))
            if rest is not None:
                counts[source].read += 1
                text = rest.decode("utf-8", errors="replace")
                reason = "unreadable file: damaged gzip"
                rejected.append(Rejected(source, rel, len(lines) + 1, reason, text))
    return valid, rejected, counts


def reference(root: Path) -> Reference:
    """Read the trace root and compute every v1 output from scratch."""
    root = Path(root)
    valid, rejected, counts = read_records(root)

    def reject(record: Record, reason: str) -> None:
        rejected.append(Rejected(record.source, record.file, record.line, reason, record.raw))

    # Exact duplicates count once: the copy with the smallest (file, line) stays.
    distinct: list[Record] = []
    seen: set[tuple[Any, ...]] = set()
    for record in sorted(valid, key=lambda r: (r.source, r.file, r.line)):
        if record.key() in seen:
            counts[record.source].duplicates += 1
        else:
            seen.add(record.key())
            distinct.append(record)

    # One JOB_SUBMIT per job: the earliest, then the smallest (file, line).
    def order(r: Record) -> tuple[Any, ...]:
        return (r.fields["ts"], r.file, r.line)

    submits: dict[str, list[Record]] = defaultdict(list)
    for record in distinct:
        if record.source == "scheduler" and record.fields["type"] == "JOB_SUBMIT":
            submits[record.fields["job_id"]].append(record)
    jobs: dict[str, Job] = {}
    for job_id, candidates in submits.items():
        first, *others = sorted(candidates, key=order)
        jobs[job_id] = Job(first)
        for other in others:
            reject(other, "conflicting JOB_SUBMIT: the job has an earlier one")

    accepted: list[Record] = [job.submit for job in jobs.values()]
    ends: dict[str, list[Record]] = defaultdict(list)
    for record in distinct:
        fields = record.fields
        if record.source == "scheduler" and fields["type"] == "JOB_SUBMIT":
            continue
        job = jobs.get(fields["job_id"])
        if job is None:
            reject(record, "unknown job: no valid JOB_SUBMIT")
        elif record.source == "scheduler" and fields["type"] == "JOB_END":
            ends[fields["job_id"]].append(record)
        else:
            accepted.append(record)
            if record.source == "scheduler":
                job.events.append(record)
            elif record.source == "runtime":
                job.spans.append(record)
            else:
                job.profiles.append(record)

    # One JOB_END per job: not before the JOB_SUBMIT, then the earliest. Reading: a JOB_END
    # before the JOB_SUBMIT is quarantined first and so cannot make a later, valid JOB_END
    # "conflicting" (the pipeline instead lets the earliest one win and treats the job as open).
    for job_id, candidates in ends.items():
        job = jobs[job_id]
        usable = []
        for record in sorted(candidates, key=order):
            if record.fields["ts"] < job.submit.fields["ts"]:
                reject(record, "out of range: JOB_END before JOB_SUBMIT")
            else:
                usable.append(record)
        if usable:
            job.end = usable[0]
            accepted.append(usable[0])
            for other in usable[1:]:
                reject(other, "conflicting JOB_END: the job has an earlier one")

    for record in accepted:
        counts[record.source].accepted += 1
    for row in rejected:
        counts[row.source].quarantined += 1

    # End of the data: the latest scheduler ts or span end among accepted records.
    instants = [r.fields["ts"] for r in accepted if r.source == "scheduler"]
    instants += [r.fields["end"] for r in accepted if r.source == "runtime"]
    end_of_data = max(instants) if instants else None

    job_days: dict[tuple[datetime.date, str], JobDay] = {}
    ledger: dict[tuple[datetime.date, str, str], float] = {}
    exact_rows = []  # (JobDay attributes, exact sums, pg) for the slices
    for job_id in sorted(jobs):
        for day, sums, pg in account_job(jobs[job_id], end_of_data):
            row, categories = job_day_row(jobs[job_id], day, sums, pg)
            job_days[(day, job_id)] = row
            for category, chip_s in categories.items():
                if chip_s != 0:
                    ledger[(day, job_id, category)] = float(chip_s)
            exact_rows.append((row, sums, pg))

    slices = slice_rows(exact_rows)
    quarantine = sorted(rejected, key=lambda q: (q.source, q.file, q.line))
    return Reference(job_days, ledger, slices, quarantine, counts, end_of_data)


# ---------------------------------------------------------------------------------------------
# Accounting one job


def held_chips(job: Job) -> list[tuple[int, int]]:
    """Chips held by all the job's tasks together, as (instant, total from then on), sorted."""
    by_task: dict[int, dict[int, list[Record]]] = defaultdict(lambda: defaultdict(list))
    for event in job.events:
        by_task[event.fields["task_index"]][event.fields["ts"]].append(event)
    held_from: dict[int, list[tuple[int, int]]] = {}  # task -> (instant, chips it holds from then)
    for task, instants in by_task.items():
        held = 0
        changes = []
        for instant in sorted(instants):
            events = instants[instant]
            if any(e.fields["type"] in RELEASES for e in events):
                held = 0  # releases before schedules
            schedules = [e.fields["chips"] for e in events if e.fields["type"] == "TASK_SCHEDULE"]
            if schedules:
                held = max(schedules)  # same-instant schedules: the larger count applies
            changes.append((instant, held))
        held_from[task] = changes
    all_instants = sorted({instant for changes in held_from.values() for instant, _ in changes})
    totals = []
    for instant in all_instants:
        total = 0
        for changes in held_from.values():
            i = bisect_right([t for t, _ in changes], instant) - 1
            if i >= 0:
                total += changes[i][1]
        totals.append((instant, total))
    return totals


def span_classes(job: Job) -> list[tuple[int, int, str]]:
    """Each span as (start, end, precedence class); steps are split into kept and lost."""
    spans = job.spans
    training = job.submit.fields["workload_class"] == "training"
    attempts = {s.fields["attempt"] for s in spans}
    last_attempt = max(attempts) if attempts else None
    job_end = job.end.fields["ts"] if job.end else None
    state = job.end.fields["state"] if job.end else None

    def attempt_end(attempt: int) -> int | None:
        """Where the first span of any later attempt starts, else JOB_END (None: not yet)."""
        later = [s.fields["start"] for s in spans if s.fields["attempt"] > attempt]
        return min(later) if later else job_end

    durable: dict[int, int | None] = {}  # attempt -> highest step saved before it ended
    for attempt in attempts:
        ends = attempt_end(attempt)
        saved = [
            s.fields["step"]
            for s in spans
            if s.fields["kind"] == "checkpoint_save"
            and s.fields["attempt"] == attempt
            and (ends is None or s.fields["end"] <= ends)
        ]
        durable[attempt] = max(saved) if saved else None

    classes = []
    for span in spans:
        f = span.fields
        kind = f["kind"]
        if kind == "step":
            saved = durable[f["attempt"]]
            last_and_not_failed = f["attempt"] == last_attempt and state in (None, "FINISHED")
            kept = (
                not training  # every serving / bulk inference step is kept
                or last_and_not_failed
                or (saved is not None and saved >= f["step"])
            )
            kind = "kept_step" if kept else "lost_step"
        classes.append((f["start"], f["end"], kind))
    return classes


def day_of(instant_us: int) -> datetime.date:
    return datetime.date.fromordinal(EPOCH_ORDINAL + instant_us // DAY_US)


def account_job(job: Job, end_of_data: int) -> list[tuple[datetime.date, dict[str, int], Any]]:
    """Per UTC day with wanted time: exact chip-microsecond sums per quantity, and the PG."""
    chips = job.submit.fields["chips_requested"]
    begin = job.submit.fields["ts"]
    finish = job.end.fields["ts"] if job.end else end_of_data
    totals = held_chips(job)
    spans = span_classes(job)

    cuts = {begin, finish}
    cuts.update(t for t, _ in totals)
    cuts.update(t for s, e, _ in spans for t in (s, e))
    midnight = (begin // DAY_US + 1) * DAY_US
    while midnight < finish:
        cuts.add(midnight)
        midnight += DAY_US
    cuts = sorted(t for t in cuts if begin <= t <= finish)

    # Paint each elementary interval [cuts[i], cuts[i+1]) with the best span covering it.
    best: list[int | None] = [None] * (len(cuts) - 1)
    for start, end, kind in spans:
        rank = PRECEDENCE.index(kind)
        lo = bisect_left(cuts, max(start, begin))
        hi = bisect_left(cuts, min(end, finish))
        for i in range(lo, hi):
            if best[i] is None or rank < best[i]:
                best[i] = rank

    sums: dict[datetime.date, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    instants = [t for t, _ in totals]
    for i in range(len(cuts) - 1):
        a, b = cuts[i], cuts[i + 1]
        chip_us = (b - a) * chips
        day = sums[day_of(a)]
        day["wanted"] += chip_us
        k = bisect_right(instants, a) - 1
        held = totals[k][1] if k >= 0 else 0
        if held >= chips:
            day["all_allocated"] += chip_us
            kind = PRECEDENCE[best[i]] if best[i] is not None else None
            day[LEDGER_CATEGORY[kind]] += chip_us
        else:
            day["scheduling"] += chip_us

    profiles: dict[datetime.date, list[Record]] = defaultdict(list)
    for profile in job.profiles:
        profiles[day_of(profile.fields["ts"])].append(profile)
    peak = PEAK_FLOPS[job.submit.fields["chip_generation"]]

    result = []
    for day in sorted(sums):
        if sums[day]["wanted"] == 0:
            continue  # Reading: no wanted time, no row (a zero-length job has none at all)
        pg = None
        if profiles[day]:
            ideal = sum(
                Fraction(p.fields["model_flops"]) / (p.fields["chips"] * Fraction(peak))
                for p in profiles[day]
            )
            measured = sum(Fraction(p.fields["step_time_s"]) for p in profiles[day])
            pg = ideal / measured
        result.append((day, dict(sums[day]), pg))
    return result


def _ratio(numerator: Fraction | None, denominator: Fraction | None) -> Fraction | None:
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


def _float(value: Fraction | None) -> float | None:
    return None if value is None else float(value)


def job_day_row(
    job: Job, day: datetime.date, sums: dict[str, int], pg: Fraction | None
) -> tuple[JobDay, dict[str, Fraction]]:
    def chip_s(name: str) -> Fraction:
        return Fraction(sums.get(name, 0), US)

    wanted, allocated, productive = chip_s("wanted"), chip_s("all_allocated"), chip_s("productive")
    ideal = productive * pg if pg is not None else None
    s = job.submit.fields
    row = JobDay(
        day=day,
        job_id=s["job_id"],
        workload_class=s["workload_class"],
        framework=s["framework"],
        chip_generation=s["chip_generation"],
        chips_requested=s["chips_requested"],
        wanted_chip_s=float(wanted),
        all_allocated_chip_s=float(allocated),
        productive_chip_s=float(productive),
        ideal_chip_s=_float(ideal),
        sg=_float(_ratio(allocated, wanted)),
        rg=_float(_ratio(productive, allocated)),
        pg=_float(pg),
        mpg=_float(_ratio(ideal, wanted)),  # Reading: ideal / wanted, 0 where RG is null
    )
    categories = {
        name: chip_s(name)
        for name in (
            "lost_progress",
            "checkpoint_save",
            "checkpoint_restore",
            "compile",
            "init",
            "data_wait",
            "runtime_idle",
            "scheduling",
        )
    }
    if ideal is None:
        categories["productive_unprofiled"] = productive
    else:
        categories["ideal"] = ideal
        categories["program_loss"] = productive - ideal
    assert sum(categories.values()) == wanted, "the ledger must add up to wanted time"
    return row, categories


def slice_rows(exact_rows: list[tuple[JobDay, dict[str, int], Fraction | None]]) -> dict:
    """Every roll-up of (workload_class, framework, chip_generation) per day: ratios of sums."""
    groups: dict[tuple, dict[str, Any]] = {}
    for row, sums, pg in exact_rows:
        values = (row.workload_class, row.framework, row.chip_generation)
        for mask in range(8):
            kept = tuple(v if mask & (1 << i) else None for i, v in enumerate(values))
            key = (row.day, *kept)
            g = groups.setdefault(
                key,
                {"wanted": 0, "all": 0, "productive": 0, "ideal": None, "covered": 0},
            )
            productive = Fraction(sums.get("productive", 0), US)
            g["wanted"] += Fraction(sums.get("wanted", 0), US)
            g["all"] += Fraction(sums.get("all_allocated", 0), US)
            g["productive"] += productive
            if pg is not None:
                g["ideal"] = (g["ideal"] or 0) + productive * pg
                g["covered"] += productive
    slices = {}
    for key, g in groups.items():
        sg = _ratio(g["all"], g["wanted"])
        rg = _ratio(g["productive"], g["all"])
        pg = _ratio(g["ideal"], g["covered"])
        mpg = sg * rg * pg if None not in (sg, rg, pg) else None
        slices[key] = Slice(
            *key,
            wanted_chip_s=float(g["wanted"]),
            all_allocated_chip_s=float(g["all"]),
            productive_chip_s=float(g["productive"]),
            ideal_chip_s=_float(g["ideal"]),
            pg_coverage=_float(_ratio(g["covered"], g["productive"])),
            sg=_float(sg),
            rg=_float(rg),
            pg=_float(pg),
            mpg=_float(mpg),
        )
    return slices
