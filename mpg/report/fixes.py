"""The fix list: the jobs that lost the most dollars, each with its main loss and one concrete
action, in words, from what the data says about that loss.

The jobs, their ranks, main losses, attainable PG and scheduling evidence are SQL's
(sql/report/fix_list.sql over the semantic layer's `mpg_jobs`; the checkpoint interval from
`checkpoint_advice`); this module only chooses the sentence for the main loss and fills it in.
The page's table and `mpg report --json` take the same `fixes`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mpg.definitions.figures import chip_hours, percent, usd
from mpg.report.blocks import Block, Note, Section, Table
from mpg.report.data import FIX_LIST, ReportData
from mpg.report.theme import CATEGORY_LABELS


@dataclass(frozen=True)
class Fix:
    """One job of the fix list: its rank, its main loss and what to do about it."""

    rank: int
    job_id: str
    owner: str | None
    lost_usd: float | None
    lost_chip_s: float
    main_loss: str | None
    main_loss_chip_s: float
    action: str  # the kind of action, a stable word (checkpoint_interval, input_pipeline, ...)
    advice: str  # the action in a sentence, with the job's figures


def _scheduling(job: dict[str, Any]) -> tuple[str, str]:
    loss = chip_hours(job["scheduling_chip_s"] / 3600)
    queued = chip_hours((job["queued_chip_s"] or 0.0) / 3600)
    match job["scheduling_cause"]:
        case "queueing":
            return "queueing", (
                f"queueing: {queued} of its {loss} scheduling chip-hours were before its first "
                "task got chips; ask for fewer chips, another queue, or reserved capacity"
            )
        case "preemption":
            taken = job["evictions"] + job["tasks_lost"]
            return "preemption", (
                f"preemption: {loss} chip-hours without all its chips after it started, "
                f"{taken} tasks evicted or lost; run at a priority that is not preempted, or "
                "on capacity that is not reclaimed"
            )
        case "partial_allocation":
            return "partial_allocation", (
                f"partial allocation: {loss} chip-hours started without all its chips and "
                "nothing took any away; ask the scheduler for all of them at once (gang "
                "scheduling) or for a shape that fits"
            )
    return "scheduling", f"scheduling: {loss} chip-hours waiting for chips"


def _minutes(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds / 60:,.0f} min"


def _checkpoint(job: dict[str, Any], loss: str) -> str:
    """The checkpoint interval to set, in steps between saves, and how sure the advice is
    (checkpoint_advice, docs/metrics.md): change it, keep it, or too few interruptions to say."""
    steps = job["observed_interval_steps"]
    now = (
        ""
        if steps is None
        else f" (now every {steps:,.0f} steps, {_minutes(job['observed_interval_s'])})"
    )
    match job["advice"]:
        case "change":
            saved = chip_hours(job["chip_hours_saved"])
            dollars = "" if job["usd_saved"] is None else f", {usd(job['usd_saved'])}"
            return (
                f"checkpoint interval: {loss}; save every {job['advised_interval_steps']:,} steps"
                f"{now}: about {_minutes(job['advised_interval_s'])} between saves, "
                f"{job['confidence']:.0%} sure it lies within "
                f"{_minutes(job['advised_interval_low_s'])} to "
                f"{_minutes(job['advised_interval_high_s'])} (from {job['interruptions']} "
                f"interruptions); saves {saved} chip-hours{dollars} over its life"
            )
        case "keep":
            return (
                f"checkpoint interval: {loss}; keep your interval{now}: the advised one does not "
                f"beat it by more than the uncertainty of {job['interruptions']} interruptions"
            )
        case "too_few_interruptions" | "no_interruptions":
            return (
                f"checkpoint interval: {loss}; {job['interruptions']} interruptions, too few to "
                "advise an interval: its lost progress came from the job's failures (see mpg "
                "explain)"
            )
        case "no_saves":
            return f"checkpoint interval: {loss}; it saves no checkpoint: save one periodically"
    return f"checkpoint interval: {loss}; no checkpoint advice for this job (not training)"


def _attainable(job: dict[str, Any]) -> str:
    group = f"{job['chip_generation']} / {job['framework']} / {job['workload_class']}"
    pg, attainable = job["pg"], job["attainable_pg"]
    if attainable is None:
        peers = job["attainable_jobs"]
        return (
            f"program efficiency: PG {percent(pg)}; {peers} profiled "
            f"{'job' if peers == 1 else 'jobs'} of {group}, too few (under 5) to say what is "
            "attainable: profile its peers, and look at its roofline (docs/metrics.md)"
        )
    if pg is not None and pg >= attainable:
        return (
            f"program efficiency: PG {percent(pg)}, already at or above what the best of its "
            f"{job['attainable_jobs']} peers ({group}) attain, {percent(attainable)}: the rest "
            "is the distance to the roofline"
        )
    return (
        f"program efficiency: PG {percent(pg)} against an attainable {percent(attainable)} (the "
        f"chip-time-weighted 90th percentile of {job['attainable_jobs']} jobs of {group}); "
        f"reaching it would save {chip_hours(job['recoverable_chip_s'] / 3600)} chip-hours"
        + (f" ({usd(job['recoverable_usd'])})" if job["recoverable_usd"] is not None else "")
    )


def _advice(job: dict[str, Any]) -> tuple[str, str]:
    """The kind of action and its sentence for a job of the fix list."""
    main = job["main_loss"]
    chip_h = chip_hours(job[f"{main}_chip_s"] / 3600) if main else "0"
    match main:
        case None:
            return "none", "nothing lost"
        case "scheduling":
            return _scheduling(job)
        case "program_loss":
            return "attainable_pg", _attainable(job)
        case "productive_unprofiled":
            return "profile", (
                f"profile this job: {chip_h} chip-hours of its kept work have no program "
                "profile, so nobody knows how efficient they were"
            )
        case "lost_progress" | "checkpoint_save":
            return "checkpoint_interval", _checkpoint(
                job, f"{chip_h} chip-hours of {CATEGORY_LABELS[main]}"
            )
        case "data_wait":
            return "input_pipeline", (
                f"input pipeline: the chips waited {chip_h} chip-hours for data; prefetch, add "
                "input workers, or cache the dataset nearer the chips"
            )
        case "compile":
            return "compile_cache", (
                f"compile cache: {chip_h} chip-hours compiling; keep a persistent compilation "
                "cache so restarts and reruns reuse it"
            )
        case "init":
            return "startup", (
                f"start-up: {chip_h} chip-hours initialising; pre-pull images and warm caches "
                "before the chips are held"
            )
        case "checkpoint_restore":
            return "restore_time", (
                f"restore time: {chip_h} chip-hours restoring checkpoints; restore from faster "
                "storage, or in parallel across hosts"
            )
        case "runtime_idle":
            return "idle_chips", (
                f"idle chips: {chip_h} chip-hours held with nothing running; release chips "
                "between phases, and look for hangs"
            )
    raise AssertionError(f"no action for the main loss {main!r}")


def fixes(data: ReportData) -> list[Fix]:
    """The fix list, worst first."""
    found = []
    owners = dict(zip(data.worst_jobs["job_id"], data.worst_jobs["owner"], strict=True))
    for job in data.fix_list.iter_rows(named=True):
        action, advice = _advice(job)
        main = job["main_loss"]
        found.append(
            Fix(
                rank=job["rank"],
                job_id=job["job_id"],
                owner=owners.get(job["job_id"]),
                lost_usd=job["lost_usd"],
                lost_chip_s=job["lost_chip_s"],
                main_loss=main,
                main_loss_chip_s=job[f"{main}_chip_s"] if main else 0.0,
                action=action,
                advice=advice,
            )
        )
    return found


def fix_section(data: ReportData) -> Section:
    found = fixes(data)
    blocks: list[Block]
    if not found:
        blocks = [Note("No job lost anything in the period.")]
    else:
        columns = ("rank", "job", "owner", "dollars lost", "chip-hours lost", "main loss", "do")
        blocks = [
            Table(
                f"The {len(found)} jobs that lost the most dollars (at most {FIX_LIST}; the "
                "ranking of the worst jobs), each with its largest loss and what to do about it",
                columns,
                tuple(
                    (
                        str(f.rank),
                        f.job_id,
                        f.owner or "",
                        usd(f.lost_usd) if f.lost_usd is not None else "no price",
                        chip_hours(f.lost_chip_s / 3600),
                        f"{CATEGORY_LABELS.get(f.main_loss or '', '-')} "
                        f"({chip_hours(f.main_loss_chip_s / 3600)} chip-h)",
                        f.advice,
                    )
                    for f in found
                ),
                frozenset({"rank", "dollars lost", "chip-hours lost"}),
            )
        ]
    return Section(
        "fixes",
        "What to fix first",
        "The jobs that lost the most dollars, each with its main loss (the ledger category, "
        "other than ideal, with the most of its chip-hours) and one action.",
        tuple(blocks),
    )


def fix_rows(data: ReportData) -> list[dict[str, Any]]:
    """The fix list as data: each job's row of fix_list.sql with its owner and action (for
    `mpg report --json`)."""
    found = {f.job_id: f for f in fixes(data)}
    return [
        {**row, "owner": found[row["job_id"]].owner, "action": found[row["job_id"]].action,
         "advice": found[row["job_id"]].advice}
        for row in data.fix_list.iter_rows(named=True)
    ]  # fmt: skip
