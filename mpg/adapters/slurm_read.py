"""Reading `sacct --parsable2` output into one Polars frame of rows, each parsed and checked on
its own (docs/adapters/slurm.md).

Fields are found by the header line's names, never by position: sacct prints the fields its
`--format` names, in that order, and a Slurm version may lack some (22.05 has no `Restarts`,
`ArrayJobID` or `ArrayTaskID`). Lines are split on `|` in one vectorised pass, so each row keeps
its line number and raw text for the quarantine; every check after that is a Polars expression
over all rows at once.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from mpg.adapters.localtime import to_utc
from mpg.core.errors import TraceFileError

TIME_FORMAT = "%Y-%m-%dT%H:%M:%S"  # sacct's default (SLURM_TIME_FORMAT=standard)
# What sacct prints for a time it does not have (a pending job's Start, a running job's End).
MISSING_TIMES = ("", "Unknown", "None")
TIME_FIELDS = ("Submit", "Eligible", "Start", "End")
REQUIRED = ("JobID", "State", *TIME_FIELDS)
TRES_FIELDS = ("ReqTRES", "AllocTRES")  # at least one of them
OPTIONAL = ("User", "Account", "Partition", "NodeList")
USED = (*REQUIRED, *TRES_FIELDS, *OPTIONAL)
NOT_ALLOCATED = "None assigned"  # NodeList of a job that never had a node
NO_GPU = "no GPU: no gres/gpu in ReqTRES or AllocTRES"

# How an incarnation that ended gave its GPUs back, and how a job whose last incarnation ended
# so left the system (docs/adapters/slurm.md gives the reasons).
RELEASE = {
    "COMPLETED": "TASK_FINISH",
    "FAILED": "TASK_FAIL",
    "OUT_OF_MEMORY": "TASK_FAIL",
    "TIMEOUT": "TASK_FAIL",
    "DEADLINE": "TASK_FAIL",
    "NODE_FAIL": "TASK_LOST",
    "BOOT_FAIL": "TASK_LOST",
    "CANCELLED": "TASK_EVICT",
    "PREEMPTED": "TASK_EVICT",
    "REQUEUED": "TASK_EVICT",
}
JOB_END = {
    "COMPLETED": "FINISHED",
    "CANCELLED": "CANCELLED",
    "PREEMPTED": "CANCELLED",
    "FAILED": "FAILED",
    "OUT_OF_MEMORY": "FAILED",
    "TIMEOUT": "FAILED",
    "DEADLINE": "FAILED",
    "NODE_FAIL": "FAILED",
    "BOOT_FAIL": "FAILED",
}
# The job goes on after an incarnation in these: it is pending again, or holds its allocation.
REQUEUE_STATES = ("REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "SPECIAL_EXIT")
RUNNING_STATES = ("RUNNING", "SUSPENDED", "RESIZING", "STOPPED", "CONFIGURING", "COMPLETING")
STATES = (*JOB_END, *REQUEUE_STATES, *RUNNING_STATES, "PENDING", "REVOKED")

# A job (`123`), an array task (`123_4`), pending array tasks (`123_[5-9,12%2]`), a component of
# a heterogeneous job (`123+1`); a step is any of these followed by `.` and its name.
_JOB = r"^(\d+)(?:_(\d+)|_\[([0-9,-]+)(?:%\d+)?\]|\+(\d+))?$"
_STEP = r"^\d+(?:_\d+|\+\d+)?\.\S+$"
MAX_TASKS = 10**6  # in one row of pending array tasks
KEY_STRIDE = 2**32  # row key = file number x stride + line


def read_rows(path: Path, number: int) -> pl.DataFrame:
    """The file's data rows: `key`, `file` (its `number`), `line`, `raw`, `fields` and `width`
    (how many the row and the header have), `header_lacks` (a required field missing from the
    header, if any), `has_alloc_tres`, and one string column per field in `USED` (null where
    the header lacks it). Blank lines and repeats of the header are not rows. An empty file has
    no rows; one whose first line names no `JobID` is not sacct's parsable output."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise TraceFileError(f"{path} is not sacct output: it is not UTF-8 text") from None
    except OSError as exc:
        raise TraceFileError(f"{path} cannot be read: {exc.strerror or exc}") from None
    lines = pl.DataFrame({"raw": text.split("\n")}).with_row_index("line", offset=1)
    lines = lines.with_columns(pl.col("raw").str.strip_suffix("\r"), pl.col("line").cast(pl.Int64))
    lines = lines.filter(pl.col("raw").str.strip_chars() != "")
    if lines.height == 0:
        return _empty_rows()
    header_line = lines.item(0, "raw")
    # `--parsable` (-p) ends every line with the delimiter; `--parsable2` (-P) does not.
    trailing = header_line.endswith("|")
    header = [h.strip() for h in header_line.removesuffix("|").split("|")]
    if "JobID" not in header:
        raise TraceFileError(
            f"{path} is not sacct --parsable2 output: its first line is not a header naming "
            "JobID (run sacct without --noheader)"
        )
    lacks = [f for f in REQUIRED if f not in header]
    if not any(f in header for f in TRES_FIELDS):
        lacks.append("ReqTRES or AllocTRES")
    body = pl.col("raw").str.strip_suffix("|") if trailing else pl.col("raw")
    split = body.str.split("|")
    rows = lines.slice(1).filter(pl.col("raw") != header_line)
    return rows.select(
        (pl.lit(number * KEY_STRIDE, pl.Int64) + pl.col("line")).alias("key"),
        pl.lit(number, pl.Int64).alias("file"),
        "line",
        "raw",
        split.list.len().cast(pl.Int64).alias("fields"),
        pl.lit(len(header), pl.Int64).alias("width"),
        pl.lit(f"header lacks field: {lacks[0]}" if lacks else None, pl.String).alias(
            "header_lacks"
        ),
        pl.lit("AllocTRES" in header).alias("has_alloc_tres"),
        pl.lit("NodeList" in header).alias("has_node_list"),
        *(
            (
                split.list.get(header.index(f), null_on_oob=True).str.strip_chars()
                if f in header
                else pl.lit(None, pl.String)
            ).alias(f)
            for f in USED
        ),
    )


def _empty_rows() -> pl.DataFrame:
    schema = {
        "key": pl.Int64,
        "file": pl.Int64,
        "line": pl.Int64,
        "raw": pl.String,
        "fields": pl.Int64,
        "width": pl.Int64,
        "header_lacks": pl.String,
        "has_alloc_tres": pl.Boolean,
        "has_node_list": pl.Boolean,
        **dict.fromkeys(USED, pl.String),
    }
    return pl.DataFrame(schema=schema)


def _gpus(column: str) -> list[pl.Expr]:
    """From a TRES list (`billing=1,cpu=1,gres/gpu:a100=2,gres/gpu=2,mem=4G,node=1`): the GPU
    count (`gres/gpu=N`, else the sum of the typed `gres/gpu:TYPE=N`; null with neither), the
    GPU types named (lower case, as Slurm's database keeps names), and whether a GPU entry's
    count is not a whole number. `gres/gpumem` and other TRES are not GPUs."""
    entries = pl.col(column).fill_null("").str.extract_all(r"gres/gpu(?::[^=,]*)?=[^,]*")
    total = entries.list.eval(
        pl.element().filter(pl.element().str.starts_with("gres/gpu=")).str.extract(r"=(\d{1,9})$")
    ).list.first()
    typed = entries.list.eval(pl.element().filter(pl.element().str.starts_with("gres/gpu:")))
    typed_sum = typed.list.eval(pl.element().str.extract(r"=(\d{1,9})$").cast(pl.Int64)).list.sum()
    names = typed.list.eval(pl.element().str.extract(r"^gres/gpu:([^=]*)=").str.to_lowercase())
    bad = entries.list.eval(~pl.element().str.contains(r"=\d{1,9}$")).list.any()
    count = pl.coalesce(total.cast(pl.Int64), pl.when(typed.list.len() > 0).then(typed_sum))
    return [
        count.alias(f"{column}_gpus"),
        names.list.unique(maintain_order=True).alias(f"{column}_types"),
        bad.alias(f"{column}_bad"),
    ]


def _when(condition: pl.Expr, reason: str) -> pl.Expr:
    return pl.when(condition).then(pl.lit(reason))


def parse_rows(rows: pl.DataFrame, timezone: str) -> pl.DataFrame:
    """`rows` with their fields parsed: `step` (a job step's row), `job` / `tasks` (the job id,
    or the pending array tasks' list with `array_id`), `het_id` and `component` (of a
    heterogeneous job's component `123+1`: `123` and 1; null and 0 for any other job), `state`
    (`CANCELLED by 0` -> `CANCELLED`), times in UTC, GPU counts and types, `allocated` (the
    incarnation held its resources), and `reason`: why the row cannot be used, the first check
    of docs/adapters/slurm.md that fails (a step row needs no more than a well-formed line and
    JobID; whether a heterogeneous job has a GPU is checked over its components:
    mpg.adapters.slurm)."""
    time_missing = [
        pl.when(pl.col(f).is_in(MISSING_TIMES)).then(None).otherwise(pl.col(f)).alias(f)
        for f in TIME_FIELDS
    ]
    job_id = pl.col("JobID")
    parsed = rows.with_columns(*time_missing).with_columns(
        *(e for f in TIME_FIELDS for e in to_utc(f, timezone, TIME_FORMAT, f": {f}")),
        *(e for f in TRES_FIELDS for e in _gpus(f)),
        job_id.str.contains(_STEP).alias("step"),
        job_id.str.extract(_JOB, 1).alias("array_id"),
        job_id.str.extract(_JOB, 3).alias("tasks"),
        pl.when(job_id.str.extract(_JOB, 4).is_not_null())
        .then(job_id.str.extract(_JOB, 1))
        .alias("het_id"),
        job_id.str.extract(_JOB, 4).cast(pl.Int64).fill_null(0).alias("component"),
        pl.col("State")
        .str.replace(r"\s+by\s+\d+$", "")
        .str.strip_suffix("+")
        .str.to_uppercase()
        .alias("state"),
    )
    state = pl.col("state")
    start, end = pl.col("Start_utc"), pl.col("End_utc")
    ended = state.is_in([*JOB_END, "REQUEUED"])
    holds = state.is_in(RUNNING_STATES)
    no_gpu = pl.col("ReqTRES_gpus").fill_null(0).eq(0) & pl.col("AllocTRES_gpus").fill_null(0).eq(0)
    checks = [
        pl.col("header_lacks"),
        _when(pl.col("fields") != pl.col("width"), "malformed line: wrong number of fields"),
        _when(job_id.is_null() | (job_id == ""), "missing field: JobID"),
        _when(
            job_id.str.contains(r"^\d+_\[") & ~job_id.str.contains(_JOB),
            "array task list cut short: run sacct with SLURM_BITSTR_LEN=0",
        ),
        _when(~job_id.str.contains(_JOB) & ~pl.col("step"), "bad JobID"),
    ]
    job_checks = [
        _when(state.is_null() | (state == ""), "missing field: State"),
        _when(~state.is_in(STATES), "unknown state"),
        _when(state == "REVOKED", "revoked: a federation sibling that ran on another cluster"),
        _when(pl.col("Submit").is_null(), "missing field: Submit"),
        *(pl.col(f"{f}_bad") for f in TIME_FIELDS),
        *(_when(pl.col(f"{f}_bad"), f"bad TRES: {f}") for f in TRES_FIELDS),
        _when(ended & end.is_null(), "missing field: End"),
        _when(holds & start.is_null(), "missing field: Start"),
        _when(end < start, "end before start"),
        # A heterogeneous job's CPU component is part of a job with GPUs (checked per job).
        _when(no_gpu & ~job_id.str.contains(r"\+"), NO_GPU),
        _when(
            pl.col("tasks").is_not_null() & (_task_count() > MAX_TASKS),
            f"out of range: more than {MAX_TASKS} pending array tasks",
        ),
    ]
    reason = pl.coalesce(*checks, pl.when(~pl.col("step")).then(pl.coalesce(*job_checks)))
    allocated = (
        (state != "PENDING")
        & start.is_not_null()
        & ~(pl.col("has_alloc_tres") & pl.col("AllocTRES").fill_null("").eq(""))
        & ~(pl.col("has_node_list") & pl.col("NodeList").eq(NOT_ALLOCATED))
    )
    alloc_gpus = pl.col("AllocTRES_gpus")
    return parsed.with_columns(
        reason.alias("reason"),
        allocated.alias("allocated"),
        # An incarnation holds its GPUs until End unless it is still running.
        pl.when(~holds).then(end).alias("released"),
        pl.when(pl.col("has_alloc_tres") & alloc_gpus.is_not_null())
        .then(alloc_gpus)
        .otherwise(pl.col("ReqTRES_gpus"))
        .alias("chips"),
        pl.when(pl.col("AllocTRES_types").list.len() > 0)
        .then(pl.col("AllocTRES_types"))
        .otherwise(pl.col("ReqTRES_types"))
        .alias("types"),
    )


def _ranges() -> pl.Expr:
    """The pending tasks' list (`5-9,12`) as a list of `first-last` pieces."""
    return pl.col("tasks").str.split(",")


def _task_count() -> pl.Expr:
    pieces = _ranges()
    first = pieces.list.eval(pl.element().str.extract(r"^(\d+)").cast(pl.Int64))
    last = pieces.list.eval(
        pl.coalesce(pl.element().str.extract(r"-(\d+)$"), pl.element().str.extract(r"^(\d+)")).cast(
            pl.Int64
        )
    )
    return (last.list.sum() - first.list.sum() + pieces.list.len()).fill_null(0)


def expand_tasks(rows: pl.DataFrame) -> pl.DataFrame:
    """One row per job a usable row stands for: its `job_id` is JobID, but a row of pending
    array tasks (`123_[5-7]`) stands for `123_5`, `123_6` and `123_7`."""
    single = rows.filter(pl.col("tasks").is_null()).with_columns(
        pl.col("JobID").alias("job_id"), pl.lit(False).alias("from_list")
    )
    listed = rows.filter(pl.col("tasks").is_not_null())
    pieces = listed.with_columns(_ranges().alias("piece")).explode("piece")
    first = pl.col("piece").str.extract(r"^(\d+)").cast(pl.Int64)
    last = pl.coalesce(pl.col("piece").str.extract(r"-(\d+)$").cast(pl.Int64), first)
    tasks = (
        pieces.with_columns(pl.int_ranges(first, last + 1).alias("task"))
        .explode("task")
        .filter(pl.col("task").is_not_null())
        .with_columns(
            (pl.col("array_id") + "_" + pl.col("task").cast(pl.String)).alias("job_id"),
            pl.lit(True).alias("from_list"),
        )
        .drop("piece", "task")
    )
    return pl.concat([single, tasks], how="vertical")
