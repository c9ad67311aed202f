"""Draw a fleet: one `JobPlan` per job, the knobs its timeline is later simulated from.

Every random choice that describes a job as a whole (its hardware, size, class, framework, how
long it means to run, how often it is interrupted, how it is profiled) is drawn here, vectorised
over the fleet; `mpg.simulate.timeline` then plays each plan out in time.

Durations that set the volume of data scale with the window: a job's planned run time is a
fraction of `days`, so the number of runtime spans grows with jobs x days (see
`mpg.simulate.simulate` for the figure). Step and batch spans are coarse (30 s to 20 min) so that a
week of 2,000 jobs is millions of spans, not billions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mpg.definitions.vocabulary import FRAMEWORKS, WORKLOAD_CLASSES

DAY_S = 86_400
MAX_TASKS = 64  # a gang of more hosts than this is modelled as 64 tasks of several hosts each


@dataclass(frozen=True)
class Generation:
    """What the simulator needs to know of a chip generation beyond the catalog's figures."""

    chips_per_host: int
    max_chips: int
    torus_dims: int  # 0: no `topology` (GPUs), else the dimensions of the TPU slice shape


GENERATIONS: dict[str, Generation] = {
    "tpu-v4": Generation(4, 2048, 3),
    "tpu-v5e": Generation(4, 256, 2),
    "tpu-v5p": Generation(4, 2048, 3),
    "tpu-v6e": Generation(4, 256, 2),
    "tpu-v7": Generation(4, 2048, 3),
    "gpu-a100": Generation(8, 1024, 0),
    "gpu-h100": Generation(8, 2048, 0),
    "gpu-h200": Generation(8, 1024, 0),
    "gpu-b200": Generation(8, 1024, 0),
}
_GENERATION_WEIGHTS = (0.10, 0.14, 0.14, 0.14, 0.06, 0.08, 0.18, 0.10, 0.06)

_CLASS_WEIGHTS = (0.55, 0.25, 0.20)  # training, serving, bulk_inference
_JOB_PREFIX = {"training": "train", "serving": "serve", "bulk_inference": "bulk"}
# log2(chips_requested) weights per class: training spreads over 1..2048, serving stays small.
_SIZE_WEIGHTS = {
    "training": (1, 1, 2, 4, 6, 7, 7, 6, 4, 3, 2, 1),
    "serving": (4, 5, 6, 5, 3, 2, 1, 0, 0, 0, 0, 0),
    "bulk_inference": (0, 0, 2, 4, 5, 5, 4, 3, 2, 0, 0, 0),
}
_FRAMEWORK_WEIGHTS_TPU = (0.60, 0.15, 0.15, 0.10)  # jax, tensorflow, pytorch, other
_FRAMEWORK_WEIGHTS_GPU = (0.20, 0.10, 0.60, 0.10)
_PRIORITY = {"training": 200, "serving": 300, "bulk_inference": 100}
# Who pays (a Slurm account, a namespace), each with a few users who submit its jobs.
_TEAMS = ("team-lm", "team-chat", "team-vision", "team-ads", "team-search", "team-speech")
_USERS = (
    ("ana", "bo", "chen"), ("dev", "eli", "fay"), ("gus", "hana", "ivo"),
    ("jun", "kai", "lea"), ("mia", "noor", "omar"), ("pia", "raj", "sol"),
)  # fmt: skip
# Where jobs wait (a Slurm partition, a Kueue LocalQueue): serving has its own queue, jobs of
# low priority (below this) wait in the preemptible one, every other job in the batch queue.
_PREEMPTIBLE_BELOW = 150
_FLOPS_SOURCES = ("hlo_unoptimized", "hlo_optimized", "flop_counter")
# Log-uniform ranges of the mean step (or batch) time, in seconds.
_STEP_S = {"training": (30.0, 600.0), "serving": (60.0, 900.0), "bulk_inference": (60.0, 1200.0)}
# Chance that a step is preceded by a data_wait span, and the median length of one.
_DATA_WAIT = {"training": (0.01, 0.08, 20.0), "serving": (0.05, 0.2, 45.0)}
_DATA_WAIT_DEFAULT = (0.01, 0.05, 30.0)


@dataclass(frozen=True)
class JobPlan:
    """One job's knobs. Times are seconds since the window's start."""

    job_id: str
    workload_class: str
    framework: str
    chip_generation: str
    chips_requested: int
    tasks: int  # each task holds chips_requested // tasks chips
    priority: int | None
    owner: str | None  # the user
    team: str | None
    queue: str | None
    topology: str | None
    submit_s: int
    run_s: float  # planned run time: training/bulk without interruptions; serving until it ends
    step_s: float  # mean step (batch) time
    checkpoint_every: int  # steps between checkpoint saves; 0: the job saves none
    async_checkpoint: bool  # saves overlap the following steps
    save_s: float
    data_wait_p: float
    data_wait_s: float
    idle_share: float  # mean share of a step's time spent between steps, under no span
    interrupts_per_day: float
    cancel_after_s: float | None  # the owner cancels the job this long after submitting it
    serving_end_state: str  # how a serving job ends when its run time is over
    profile_rate: float  # chance a step gets a profile record; 0: the job is unprofiled
    pg: float  # the program's goodput, which sets model_flops
    hbm_fraction: float | None  # share of peak HBM bandwidth a step uses; None: no hbm_bytes
    flops_source: str | None


def _log_uniform(rng: np.random.Generator, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    return np.exp(rng.uniform(np.log(low), np.log(high)))


def _ensure_each(values: np.ndarray, choices: tuple[str, ...], rng: np.random.Generator) -> None:
    """Overwrite distinct random slots with each choice once, so a small fleet shows them all."""
    if len(values) >= len(choices):
        values[rng.choice(len(values), size=len(choices), replace=False)] = choices


def _topology(chips: int, dims: int) -> str:
    """A slice shape with `chips` chips: powers of two as even as possible, smallest first."""
    sides = [1] * dims
    for i in range(int(chips).bit_length() - 1):
        sides[i % dims] *= 2
    return "x".join(str(s) for s in sorted(sides))


def _submit_times(rng: np.random.Generator, jobs: int, days: int) -> np.ndarray:
    """Uniform over the window, but some jobs land in the half hour before a midnight."""
    window = days * DAY_S
    submit = rng.uniform(0, window - 600, jobs)
    late = rng.random(jobs) < 0.08
    midnight = rng.integers(1, max(days - 1, 1) + 1, jobs) * DAY_S
    submit = np.where(late, midnight - rng.uniform(60, 1800, jobs), submit)
    return np.floor(submit).astype(np.int64)


def _run_fraction(rng: np.random.Generator, classes: np.ndarray) -> np.ndarray:
    """Planned run time as a fraction of the window: serving is long-lived, bulk work short."""
    return np.select(
        [classes == "training", classes == "serving"],
        [rng.beta(1.2, 4.0, len(classes)), rng.uniform(0.2, 0.9, len(classes))],
        rng.beta(1.1, 8.0, len(classes)),
    )


def draw_fleet(rng: np.random.Generator, jobs: int, days: int) -> list[JobPlan]:
    """Draw `jobs` job plans for a window of `days` days."""
    generations = np.array(list(GENERATIONS), dtype=object)
    gen = rng.choice(generations, size=jobs, p=_GENERATION_WEIGHTS)
    _ensure_each(gen, tuple(generations), rng)
    cls = rng.choice(np.array(WORKLOAD_CLASSES, dtype=object), size=jobs, p=_CLASS_WEIGHTS)
    _ensure_each(cls, WORKLOAD_CLASSES, rng)
    is_gpu = np.array([GENERATIONS[g].torus_dims == 0 for g in gen])
    frameworks = np.array(FRAMEWORKS, dtype=object)
    fw = np.where(
        is_gpu,
        rng.choice(frameworks, size=jobs, p=_FRAMEWORK_WEIGHTS_GPU),
        rng.choice(frameworks, size=jobs, p=_FRAMEWORK_WEIGHTS_TPU),
    )
    _ensure_each(fw, FRAMEWORKS, rng)

    size_p = {c: np.array(w) / sum(w) for c, w in _SIZE_WEIGHTS.items()}
    log2_chips = np.array([rng.choice(12, p=size_p[c]) for c in cls])
    max_chips = np.array([GENERATIONS[g].max_chips for g in gen])
    min_chips = np.where(np.array([GENERATIONS[g].torus_dims == 3 for g in gen]), 4, 1)
    chips = np.clip(2**log2_chips, min_chips, max_chips)
    per_host = np.minimum(chips, [GENERATIONS[g].chips_per_host for g in gen])
    tasks = np.minimum(chips // per_host, MAX_TASKS)

    run_s = np.maximum(_run_fraction(rng, cls) * days * DAY_S, 1200.0)
    step_lo = np.array([_STEP_S[c][0] for c in cls])
    step_hi = np.array([_STEP_S[c][1] for c in cls])
    step_s = _log_uniform(rng, step_lo, step_hi)
    checkpoint_every = np.where(
        cls == "training",
        np.maximum(2, np.rint(rng.uniform(1200, 7200, jobs) / step_s)).astype(np.int64),
        0,
    )
    async_ckpt = rng.random(jobs) < 0.4
    # An asynchronous save must finish well before the next one starts.
    save_s = np.where(async_ckpt, rng.uniform(10, 90, jobs), rng.uniform(5, 60, jobs))
    save_s = np.where(async_ckpt, np.minimum(save_s, 0.8 * checkpoint_every * step_s), save_s)
    dw = np.array([_DATA_WAIT.get(c, _DATA_WAIT_DEFAULT) for c in cls])
    data_wait_p = rng.uniform(dw[:, 0], dw[:, 1])
    idle_share = rng.uniform(0, 0.06, jobs)
    priority = np.array([_PRIORITY[c] for c in cls]) + rng.choice([-50, 0, 0, 50], jobs)
    interrupts = _log_uniform(
        rng, np.where(cls == "serving", 0.05, 0.2), np.where(cls == "serving", 0.6, 4.0)
    ) * np.where(priority < 150, 2.0, 1.0)
    cancelled = (cls != "serving") & (rng.random(jobs) < 0.09)
    cancel_after = rng.uniform(0.05, 1.0, jobs) * run_s
    # Big jobs are worth profiling: from 70% of one-chip jobs to 95% of 2048-chip ones.
    profiled = rng.random(jobs) < 0.7 + 0.25 * log2_chips / 11
    profile_rate = np.where(profiled, _log_uniform(rng, np.full(jobs, 0.01), 0.1), 0.0)
    flops_source = rng.choice(np.array(_FLOPS_SOURCES, dtype=object), jobs, p=(0.6, 0.25, 0.15))

    u = rng.random((jobs, 6))  # presence of optional fields, how serving ends
    hbm_fraction = rng.uniform(0.1, 0.9, jobs)
    pg = rng.uniform(0.2, 0.7, jobs)
    teams = rng.choice(len(_TEAMS), jobs)
    submit_s = _submit_times(rng, jobs, days)
    # Drawn after all the rest, so that adding them changed none of the fleet's other values.
    users = rng.integers(0, len(_USERS[0]), jobs)
    named = rng.random((jobs, 2))  # presence of owner and queue
    queues = np.select(
        [cls == "serving", priority < _PREEMPTIBLE_BELOW], ["serving", "preemptible"], "batch"
    )
    return [
        JobPlan(
            job_id=f"{_JOB_PREFIX[cls[i]]}-{i:05d}",
            workload_class=str(cls[i]),
            framework=str(fw[i]),
            chip_generation=str(gen[i]),
            chips_requested=int(chips[i]),
            tasks=int(tasks[i]),
            priority=int(priority[i]) if u[i, 0] < 0.8 else None,
            owner=_USERS[teams[i]][users[i]] if named[i, 0] < 0.95 else None,
            team=_TEAMS[teams[i]] if u[i, 1] < 0.9 else None,
            queue=str(queues[i]) if named[i, 1] < 0.95 else None,
            topology=(
                _topology(int(chips[i]), GENERATIONS[gen[i]].torus_dims)
                if GENERATIONS[gen[i]].torus_dims and u[i, 2] < 0.85
                else None
            ),
            submit_s=int(s),
            run_s=float(run_s[i]),
            step_s=float(step_s[i]),
            checkpoint_every=int(checkpoint_every[i]),
            async_checkpoint=bool(async_ckpt[i]),
            save_s=float(save_s[i]),
            data_wait_p=float(data_wait_p[i]),
            data_wait_s=float(dw[i, 2]),
            idle_share=float(idle_share[i]),
            interrupts_per_day=float(interrupts[i]),
            cancel_after_s=float(cancel_after[i]) if cancelled[i] else None,
            serving_end_state="CANCELLED" if u[i, 3] < 0.7 else "FINISHED",
            profile_rate=float(profile_rate[i]),
            pg=float(pg[i]),
            hbm_fraction=float(hbm_fraction[i]) if u[i, 4] < 0.9 else None,
            flops_source=str(flops_source[i]) if u[i, 5] < 0.6 else None,
        )
        for i, s in enumerate(submit_s)
    ]
