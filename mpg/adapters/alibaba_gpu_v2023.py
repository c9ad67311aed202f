"""Alibaba GPU cluster trace v2023 pod lists (`openb_pod_list_*.csv`) as canonical records.

    mpg import alibaba-gpu-v2023 openb_pod_list_default.csv --out traces \\
        --origin 2023-07-01T00:00:00Z

A pod list (github.com/alibaba/clusterdata, cluster-trace-gpu-v2023; "Beware of Fragmentation",
USENIX ATC '23) has one row per pod: what it requested (`num_gpu`, `gpu_milli`, `gpu_spec`), its
`qos`, its last `pod_phase`, and `creation_time`, `scheduled_time` and `deletion_time` in seconds
from an undisclosed origin. Each pod becomes one job: `JOB_SUBMIT` at creation, `TASK_SCHEDULE`
of all its GPUs at scheduling, a release and `JOB_END` at deletion, and one `step` span over its
allocation (`allocation_spans`). The trace says nothing of what a pod's program did, so jobs get
SG and RG and no PG (docs/adapters/alibaba-gpu-v2023.md gives every choice made here and why).

The rows are validated as columns: a row that cannot be used goes to the quarantine with its line
and reason; a file whose header is not a pod list's stops the import with a one-line error.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

import polars as pl

from mpg.adapters.canonical import (
    UTC_TIME,
    Batch,
    Conversion,
    empty_quarantine,
    scheduler_events,
)
from mpg.adapters.jobs import allocation_spans
from mpg.core.errors import OptionsError, TraceFileError

# Columns every pod list has that the conversion reads; `gpu_milli` and `gpu_spec` are checked
# or used where present (an absent `gpu_spec` means any GPU type, as an empty one does).
REQUIRED = (
    "name",
    "num_gpu",
    "qos",
    "pod_phase",
    "creation_time",
    "deletion_time",
    "scheduled_time",
)
OPTIONAL = ("gpu_milli", "gpu_spec")

# The GPU models the trace names (its node list's `model` column) and their catalog generations.
GPU_MODELS = {
    "V100M16": "gpu-v100",
    "V100M32": "gpu-v100",
    "P100": "gpu-p100",
    "T4": "gpu-t4",
    "A10": "gpu-a10",
    "G2": "gpu-alibaba-g2",
    "G3": "gpu-alibaba-g3",
}
UNKNOWN_GPU = "gpu-unknown"

# Alibaba's latency-sensitive class runs online services; everything else is batch work.
QOS_WORKLOAD = {
    "LS": "serving",
    "BE": "training",
    "Burstable": "training",
    "Guaranteed": "training",
}

# How a pod that is gone ended, by the last phase the trace saw it in.
END_STATE = {
    "Succeeded": "FINISHED",
    "Running": "FINISHED",
    "Failed": "FAILED",
    "Pending": "CANCELLED",
}
LIVE_PHASES = ("Running", "Pending")

TIME_COLUMNS = ("creation_time", "scheduled_time", "deletion_time")
MAX_GPUS = 10**9
_SECONDS = r"^\d{1,12}(\.\d*)?$"  # whole seconds, or with a fraction (kept to the microsecond)


def convert(paths: list[Path], args: argparse.Namespace) -> Conversion:
    origin = args.origin
    names = [p.name for p in paths]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        # A batch is named after its file; two files of one name would overwrite each other.
        raise OptionsError(
            f"two input files are named {repeated[0]}: import them into separate roots"
        )
    batches: list[Batch] = []
    quarantines: list[pl.DataFrame] = [empty_quarantine()]
    read = converted = 0
    unknown_models: dict[str, int] = {}
    for path in paths:
        rows = _read_rows(path)
        checked = _checked(rows, args.workload_class is not None)
        bad = checked.filter(pl.col("reason").is_not_null())
        good = checked.filter(pl.col("reason").is_null())
        quarantines.append(bad.select(pl.lit(str(path)).alias("file"), "line", "reason", "raw"))
        read += rows.height
        converted += good.height
        pods = _pods(good, origin, args.workload_class)
        for model, count in _unknown_models(good).items():
            unknown_models[model] = unknown_models.get(model, 0) + count
        batches.append(_batch(path.name, pods, args.framework, args.no_runtime))
    if unknown_models:
        listed = ", ".join(
            f"{m} ({n} pod{'s' if n > 1 else ''})" for m, n in sorted(unknown_models.items())
        )
        print(
            f"mpg import alibaba-gpu-v2023: GPU models not in the chip catalog, "
            f"written as {UNKNOWN_GPU}: {listed}",
            file=sys.stderr,
        )
    return Conversion(
        read=read, converted=converted, batches=batches, quarantine=pl.concat(quarantines)
    )


def _read_rows(path: Path) -> pl.DataFrame:
    """The file's data rows: `line` (1 = the header), `raw`, `fields` (how many), `width` (how
    many the header has) and one string column per column the conversion reads, stripped,
    unquoted, empty as null. Blank lines are not rows.

    Rows are split on commas rather than by a CSV reader, so each keeps its raw text and its
    line number for the quarantine, and a row of the wrong width is quarantined rather than
    padded or truncated. Pod lists quote nothing (Kubernetes names and the `|`-joined GPU specs
    hold no comma); a quoted comma makes a row too wide and so goes to the quarantine."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise TraceFileError(f"{path} is not a pod list: it is not UTF-8 text") from None
    except OSError as exc:
        raise TraceFileError(f"{path} cannot be read: {exc.strerror or exc}") from None
    lines = pl.DataFrame({"raw": text.split("\n")}).with_row_index("line", offset=1)
    lines = lines.with_columns(pl.col("raw").str.strip_suffix("\r"), pl.col("line").cast(pl.Int64))
    header = [_unquote_text(h) for h in lines.item(0, "raw").split(",")]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise TraceFileError(
            f"{path} is not an Alibaba GPU v2023 pod list with phases and times: "
            f"its header lacks {', '.join(missing)}"
        )
    split = pl.col("raw").str.split(",")
    rows = lines.slice(1).filter(pl.col("raw").str.strip_chars() != "")
    return rows.with_columns(
        split.list.len().alias("fields"),
        pl.lit(len(header)).alias("width"),
        *(
            _unquote(split.list.get(header.index(c), null_on_oob=True)).alias(c)
            for c in (*REQUIRED, *OPTIONAL)
            if c in header
        ),
    ).with_columns(pl.lit(None, pl.String).alias(c) for c in OPTIONAL if c not in header)


def _unquote_text(text: str) -> str:
    """A header cell, read as `_unquote` reads a data cell."""
    text = text.strip()
    return text[1:-1].replace('""', '"') if len(text) >= 2 and text[0] == text[-1] == '"' else text


def _unquote(field: pl.Expr) -> pl.Expr:
    """A field without surrounding blanks and CSV quotes; empty (or pandas' `nan`) as null."""
    s = field.str.strip_chars()
    quoted = s.str.starts_with('"') & s.str.ends_with('"') & (s.str.len_chars() >= 2)
    inner = s.str.slice(1, s.str.len_chars() - 2).str.replace_all('""', '"')
    value = pl.when(quoted).then(inner).otherwise(s)
    return pl.when((value == "") | (value.str.to_lowercase() == "nan")).then(None).otherwise(value)


def _micros(column: str) -> pl.Expr:
    """Seconds as a string (`_SECONDS`) to whole microseconds, exactly (no float on the way)."""
    c = pl.col(column)
    whole = c.str.extract(r"^(\d+)").cast(pl.Int64) * 1_000_000
    fraction = c.str.extract(r"\.(\d{1,6})").str.pad_end(6, "0").cast(pl.Int64).fill_null(0)
    return pl.when(c.str.contains(_SECONDS)).then(whole + fraction)


def _checked(rows: pl.DataFrame, fixed_class: bool) -> pl.DataFrame:
    """`rows` with their numbers parsed and `reason`: why a row cannot be used (null if it can),
    the first of the checks below that fails. Of several usable rows naming one pod, the first
    is kept: the others would be conflicting `JOB_SUBMIT`s."""
    parsed = rows.with_columns(
        pl.when(pl.col("num_gpu").str.contains(r"^\d{1,18}$"))
        .then(pl.col("num_gpu").cast(pl.Int64))
        .alias("gpus"),
        *(_micros(c).alias(f"{c}_us") for c in TIME_COLUMNS),
    )
    created, scheduled, deleted = (pl.col(f"{c}_us") for c in TIME_COLUMNS)
    phase = pl.col("pod_phase")
    milli = pl.col("gpu_milli")
    needed = ("name", "pod_phase", "num_gpu", "creation_time", *(() if fixed_class else ("qos",)))
    checks = [
        (pl.col("fields") != pl.col("width"), "malformed row: wrong number of fields"),
        *((pl.col(c).is_null(), f"missing field: {c}") for c in needed),
        (pl.col("gpus").is_null(), "bad number: num_gpu"),
        *(
            (pl.col(c).is_not_null() & pl.col(f"{c}_us").is_null(), f"bad number: {c}")
            for c in TIME_COLUMNS
        ),
        (milli.is_not_null() & ~milli.str.contains(r"^\d{1,9}$"), "bad number: gpu_milli"),
        (
            milli.str.contains(r"^\d{1,9}$") & (milli.cast(pl.Int64) > 1000),
            "out of range: gpu_milli above 1000",
        ),
        (~phase.is_in(list(END_STATE)), "unknown pod_phase"),
        *(() if fixed_class else ((~pl.col("qos").is_in(list(QOS_WORKLOAD)), "unknown qos"),)),
        (pl.col("gpus") == 0, "no GPU: num_gpu is 0"),
        (pl.col("gpus") > MAX_GPUS, f"out of range: num_gpu above {MAX_GPUS}"),
        (scheduled < created, "scheduled before creation"),
        (deleted < created, "deletion before creation"),
        (deleted < scheduled, "deletion before scheduling"),
        (
            phase.is_in(["Running", "Succeeded"]) & scheduled.is_null(),
            "missing field: scheduled_time",
        ),
        (phase.is_in(["Succeeded", "Failed"]) & deleted.is_null(), "missing field: deletion_time"),
    ]
    reason = pl.lit(None, pl.String)
    for condition, text in reversed(checks):
        reason = pl.when(condition).then(pl.lit(text)).otherwise(reason)
    checked = parsed.with_columns(reason.alias("reason"))
    usable = pl.col("reason").is_null()
    later = ~pl.col("name").is_first_distinct().over(usable)
    return checked.with_columns(
        pl.when(usable & later)
        .then(pl.lit("duplicate pod name: an earlier row has it"))
        .otherwise(pl.col("reason"))
        .alias("reason")
    )


def _models() -> pl.Expr:
    """The GPU models a pod accepts: `gpu_spec` split on `|`, upper case, empty ones left out."""
    names = pl.col("gpu_spec").fill_null("").str.split("|")
    names = names.list.eval(pl.element().str.strip_chars().str.to_uppercase())
    return names.list.eval(pl.element().filter(pl.element() != ""))


def _generation() -> pl.Expr:
    """One catalog generation when every model the pod accepts is of it, else `gpu-unknown`:
    no model named (any GPU will do), models of several generations, or a model not known."""
    generations = _models().list.eval(pl.element().replace_strict(GPU_MODELS, default=None))
    single = (
        (generations.list.len() > 0)
        & (generations.list.eval(pl.element().is_null().any()).list.first().not_())
        & (generations.list.n_unique() == 1)
    )
    return pl.when(single).then(generations.list.first()).otherwise(pl.lit(UNKNOWN_GPU))


def _unknown_models(good: pl.DataFrame) -> dict[str, int]:
    """How many usable pods name each GPU model that is not in `GPU_MODELS`."""
    named = good.select(_models().list.unique().alias("model")).explode("model")
    unknown = named.filter(pl.col("model").is_not_null() & ~pl.col("model").is_in(list(GPU_MODELS)))
    counts = unknown.group_by("model").len()
    return dict(zip(counts.get_column("model"), counts.get_column("len"), strict=True))


def _pods(good: pl.DataFrame, origin: datetime.datetime, fixed_class: str | None) -> pl.DataFrame:
    """One row per usable pod: its job fields, times as UTC instants, how it ended (`state`,
    null while it is still live at the end of the list) and where its allocation ends.

    The list's end is its latest time. A pod last seen Running or Pending and deleted at that
    instant is taken to be live at the trace's end (the trace cuts off there), as is one with no
    deletion time; any other pod is gone at its deletion time."""
    created, scheduled, deleted = (pl.col(f"{c}_us") for c in TIME_COLUMNS)
    end = pl.max_horizontal(created, scheduled, deleted).max()
    live = deleted.is_null() | (pl.col("pod_phase").is_in(LIVE_PHASES) & (deleted == end))
    instant = pl.lit(origin, UTC_TIME)

    def at(micros: pl.Expr) -> pl.Expr:
        return instant + pl.duration(microseconds=micros)

    workload = (
        pl.lit(fixed_class)
        if fixed_class is not None
        else pl.col("qos").replace_strict(QOS_WORKLOAD, return_dtype=pl.String)
    )
    return good.select(
        pl.col("name").alias("job_id"),
        pl.col("gpus").alias("chips"),
        _generation().alias("chip_generation"),
        workload.alias("workload_class"),
        pl.col("pod_phase"),
        at(created).alias("created"),
        at(scheduled).alias("scheduled"),
        at(deleted).alias("deleted"),
        pl.when(~live).then(pl.col("pod_phase").replace_strict(END_STATE)).alias("state"),
        at(pl.coalesce(deleted, end)).alias("allocation_end"),
    )


def _batch(name: str, pods: pl.DataFrame, framework: str, no_runtime: bool) -> Batch:
    """The scheduler events of `pods` and, unless `no_runtime`, one span per allocation."""
    submit = pods.select(
        pl.col("created").alias("ts"),
        "job_id",
        pl.col("chips").alias("chips_requested"),
        "chip_generation",
        "workload_class",
        pl.lit(framework).alias("framework"),
    )
    allocated = pods.filter(pl.col("scheduled").is_not_null())
    schedule = allocated.select(
        pl.col("scheduled").alias("ts"),
        "job_id",
        pl.lit(0).alias("task_index"),
        "chips",
    )
    release = allocated.filter(pl.col("state").is_not_null()).select(
        pl.when(pl.col("state") == "FAILED")
        .then(pl.lit("TASK_FAIL"))
        .otherwise(pl.lit("TASK_FINISH"))
        .alias("type"),
        pl.col("deleted").alias("ts"),
        "job_id",
        pl.lit(0).alias("task_index"),
    )
    end = pods.filter(pl.col("state").is_not_null()).select(
        pl.col("deleted").alias("ts"), "job_id", "state"
    )
    scheduler = scheduler_events(submits=submit, schedules=schedule, releases=release, ends=end)
    runtime = None
    if not no_runtime:
        runtime = allocation_spans(
            allocated.select(
                "job_id",
                pl.lit(0).alias("attempt"),
                pl.col("scheduled").alias("start"),
                pl.col("allocation_end").alias("end"),
            )
        )
    return Batch(name=name, scheduler=scheduler, runtime=runtime)
