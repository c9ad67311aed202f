"""The reference's accounting: one job's timeline, job-day rows, slices."""

from __future__ import annotations

import datetime
from bisect import bisect_left, bisect_right
from collections import defaultdict
from fractions import Fraction
from pathlib import Path
from typing import Any

from tests.support.reference.model import (
    DAY_US,
    EPOCH_ORDINAL,
    HBM_BYTES_PER_S,
    LEDGER_CATEGORY,
    PEAK_FLOPS,
    PRECEDENCE,
    RELEASES,
    US,
    JobDay,
    Reference,
    Rejected,
    Slice,
)
from tests.support.reference.records import Job, Record, read_records


def reference(root: Path, metric_version: str = "v1") -> Reference:
    """Read the trace root and compute every output of one metric version from scratch."""
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
        for day, sums, pg in account_job(jobs[job_id], end_of_data, metric_version):
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


def ideal_step_time(profile: Record, generation: str, metric_version: str) -> Fraction:
    """A profile record's ideal step time, exactly. v1 (spec step 4): model_flops / (chips x
    peak). v2 (spec: "a roofline that also bounds each step by hbm_bytes / (chips x
    hbm_bandwidth)"): the larger of that and the memory term. Reading: a record without
    hbm_bytes has no memory term, so v2 gives it v1's time. Every generation of catalog v1 has
    a peak and a bandwidth, so nothing else is missing here."""
    f = profile.fields
    compute = Fraction(f["model_flops"]) / (f["chips"] * Fraction(PEAK_FLOPS[generation]))
    if metric_version == "v1" or "hbm_bytes" not in f:
        return compute
    memory = Fraction(f["hbm_bytes"]) / (f["chips"] * Fraction(HBM_BYTES_PER_S[generation]))
    return max(compute, memory)


def account_job(
    job: Job, end_of_data: int, metric_version: str
) -> list[tuple[datetime.date, dict[str, int], Any]]:
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
    generation = job.submit.fields["chip_generation"]

    result = []
    for day in sorted(sums):
        if sums[day]["wanted"] == 0:
            continue  # Reading: no wanted time, no row (a zero-length job has none at all)
        pg = None
        if profiles[day]:
            ideal = sum(ideal_step_time(p, generation, metric_version) for p in profiles[day])
            measured = sum(Fraction(p.fields["step_time_s"]) for p in profiles[day])
            pg = ideal / measured
        result.append((day, dict(sums[day]), pg))
    return result


def _ratio(numerator: Fraction | None, denominator: Fraction | None) -> Fraction | None:
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


def _mpg(wanted: Fraction, productive: Fraction, product: Fraction | None) -> Fraction | None:
    """Spec, Accounting 5: MPG is 0 where wanted time is positive and productive time is zero,
    at every grain, even where RG or PG is undefined there; else SG x RG x PG (ideal / wanted for
    one job-day)."""
    return Fraction(0) if wanted > 0 and productive == 0 else product


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
        mpg=_float(_mpg(wanted, productive, _ratio(ideal, wanted))),
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
        mpg = _mpg(g["wanted"], g["productive"], sg * rg * pg if None not in (sg, rg, pg) else None)
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
