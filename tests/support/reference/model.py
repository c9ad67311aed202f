"""The reference's constants (catalog v1, metric versions, precedence, categories) and result types.

These restate what mpg.definitions.metrics and the chip catalog define, on purpose: an oracle
that imported the definitions it checks would agree with any mistake in them.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

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
# ... and HBM bandwidth per chip, bytes/s (metric v2's memory-bound roofline).
HBM_BYTES_PER_S = {
    "tpu-v4": 1200e9,
    "tpu-v5e": 819e9,
    "tpu-v5p": 2765e9,
    "tpu-v6e": 1640e9,
    "tpu-v7": 7370e9,
    "gpu-a100": 2039e9,
    "gpu-h100": 3350e9,
    "gpu-h200": 4800e9,
    "gpu-b200": 8000e9,
}
METRIC_VERSIONS = ("v1", "v2")
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

# The bounds docs/decisions.md holds every line and record to.
MAX_LINE_BYTES = 1_048_576  # a line's bytes, its line break excluded
EXCERPT_BYTES = 1_024  # what the quarantine keeps of a line set aside unread
EARLIEST_US = (datetime.date(2000, 1, 1).toordinal() - EPOCH_ORDINAL) * DAY_US  # inclusive
LATEST_US = (datetime.date(2100, 1, 1).toordinal() - EPOCH_ORDINAL) * DAY_US  # exclusive
MAX_CHIPS = 1_000_000_000
MAX_AMOUNT = 1e30  # model_flops, hbm_bytes
MIN_STEP_TIME_S = 1e-9


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
