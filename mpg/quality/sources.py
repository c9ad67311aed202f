"""Source suites: what every accepted record of a job bucket promises, checked per bucket.

The parser already quarantines what it cannot use, so these are a second line of defence and
every expectation is a warning: recorded and reported, never fatal. They run on one job bucket's
accepted records (`JobRecords`), so they go wherever the buckets go (a Beam DoFn creates one
`BucketValidator` in `setup()` and calls it per bucket; `combine_results` adds the parts up).

Each source's frame is its record table (in any order: samples are taken by provenance, file
and line), plus columns derived so that one pass per source (one GX batch, with the GX engine),
with no row conditions (GX's are slow), checks it all:
- `job_chips_requested`, `job_submit_ts`: from the job's earliest JOB_SUBMIT in the same bucket
  (every record of a job lands in one bucket), NULL when the job has none;
- scheduler only: `lifecycle_event` (the type of JOB_SUBMIT and JOB_END rows, else NULL) and
  `end_ts` (the ts of JOB_END rows, else NULL).

    python bench/quality_cost.py OUT   # every bucket of a published folder, with both engines
"""

from __future__ import annotations

from functools import cache

import pyarrow as pa
import pyarrow.compute as pc

from mpg.definitions.catalog import ChipCatalog, load_catalog
from mpg.definitions.vocabulary import (
    EVENT_TYPES,
    FRAMEWORKS,
    JOB_STATES,
    KINDS_WITH_STEP,
    SPAN_KINDS,
    TASK_EVENTS,
    WORKLOAD_CLASSES,
)
from mpg.quality.declare import (
    Expect,
    Suite,
    Target,
    arrow_type,
    at_least,
    between,
    in_set,
    non_empty,
    not_null,
    unique,
    with_severity,
)
from mpg.quality.engine import ENGINES, SuiteRunner
from mpg.schemas import RECORD_SCHEMAS, SOURCES, UTC_US, VALIDATION_RESULTS, concat
from mpg.transforms.reconcile import JobRecords

SOURCE_SUITE_VERSION = "s1"
PROVENANCE = ("file", "line")
JOB_CHIPS = "job_chips_requested"
JOB_SUBMIT_TS = "job_submit_ts"
LIFECYCLE_EVENT = "lifecycle_event"
END_TS = "end_ts"
_LIFECYCLE = ("JOB_SUBMIT", "JOB_END")

_SUBMIT = ("type", ("JOB_SUBMIT",))
_SCHEDULE = ("type", ("TASK_SCHEDULE",))
_END = ("type", ("JOB_END",))


def _record_checks(source: str) -> tuple[Expect, ...]:
    """What every record of `source` promises: its schema, its provenance, a known job."""
    schema = RECORD_SCHEMAS[source]
    return (
        *(arrow_type(f.name, f.type) for f in schema),
        *(not_null(f.name) for f in schema if not f.nullable),
        unique(*PROVENANCE),
        between("line", min_value=1),
        non_empty("job_id"),
        not_null(JOB_CHIPS, description="the record's job has a JOB_SUBMIT in its bucket"),
    )


def _scheduler_checks(catalog: ChipCatalog) -> tuple[Expect, ...]:
    return (
        in_set("type", EVENT_TYPES, "scheduler event types"),
        *(
            not_null(c, when=_SUBMIT)
            for c in ("chips_requested", "chip_generation", "workload_class", "framework")
        ),
        not_null("task_index", when=("type", TASK_EVENTS)),
        not_null("chips", when=_SCHEDULE),
        not_null("state", when=_END),
        between("chips_requested", min_value=1),
        between("chips", min_value=1),
        between("task_index", min_value=0),
        in_set("chip_generation", catalog.generations, f"catalog {catalog.version}'s generations"),
        in_set("workload_class", WORKLOAD_CLASSES, "workload classes"),
        in_set("framework", FRAMEWORKS, "frameworks"),
        in_set("state", JOB_STATES, "job states"),
        unique(
            "job_id",
            LIFECYCLE_EVENT,
            skip_nulls=True,
            description="a job has one JOB_SUBMIT and at most one JOB_END",
        ),
        at_least(END_TS, JOB_SUBMIT_TS, "JOB_END is not before the job's JOB_SUBMIT"),
        at_least(JOB_CHIPS, "chips", "a task's chips are within the job's request"),
    )


_RUNTIME_CHECKS = (
    in_set("kind", SPAN_KINDS, "span kinds"),
    not_null("step", when=("kind", KINDS_WITH_STEP)),
    between("attempt", min_value=0),
    at_least("end", "start", "a span ends at or after its start"),
)

_PROFILE_CHECKS = (
    between("step_time_s", min_value=0, strict_min=True),
    between("model_flops", min_value=0),
    between("hbm_bytes", min_value=0),
    between("chips", min_value=1),
    at_least(JOB_CHIPS, "chips", "a profile's chips are within the job's request"),
)


def source_suites(catalog: ChipCatalog) -> tuple[Suite, ...]:
    """One suite per source, every expectation a warning; the target is the source's frame."""
    specific = {
        "scheduler": _scheduler_checks(catalog),
        "runtime": _RUNTIME_CHECKS,
        "profiles": _PROFILE_CHECKS,
    }
    return tuple(
        Suite(
            name=source,
            version=SOURCE_SUITE_VERSION,
            targets=(
                Target(
                    name=source,
                    index=PROVENANCE,
                    expectations=with_severity(
                        (*_record_checks(source), *specific[source]), "warn"
                    ),
                ),
            ),
        )
        for source in SOURCES
    )


def _lifecycle_columns(scheduler: pa.Table) -> pa.Table:
    kind = scheduler.column("type")
    lifecycle = pc.is_in(kind, pa.array(_LIFECYCLE))
    ends = pc.equal(kind, "JOB_END")
    return scheduler.append_column(
        pa.field(LIFECYCLE_EVENT, pa.string()), pc.if_else(lifecycle, kind, None)
    ).append_column(pa.field(END_TS, UTC_US), pc.if_else(ends, scheduler.column("ts"), None))


def source_frames(records: JobRecords) -> dict[str, pa.Table]:
    """Per source: its records with the derived columns beside them (in the records' order:
    samples are taken by (file, line) whatever the frame's order)."""
    scheduler = records.scheduler
    submits = scheduler.filter(pc.equal(scheduler.column("type"), "JOB_SUBMIT")).sort_by(
        [(c, "ascending") for c in ("job_id", "ts", *PROVENANCE)]
    )
    frames = {}
    for source in SOURCES:
        table = records.table(source)
        # index_in finds a job's first (earliest) JOB_SUBMIT; taking a null index gives null.
        job = pc.index_in(table.column("job_id"), value_set=submits.column("job_id"))
        table = table.append_column(
            pa.field(JOB_CHIPS, pa.int64()), submits.column("chips_requested").take(job)
        ).append_column(pa.field(JOB_SUBMIT_TS, UTC_US), submits.column("ts").take(job))
        frames[source] = _lifecycle_columns(table) if source == "scheduler" else table
    return frames


class BucketValidator:
    """The source suites, ready to check job buckets: create one per worker, call it per bucket.

    With the `mpg` engine a call costs milliseconds; with `great-expectations` the constructor
    starts GX (seconds, mostly its import) and a call about 0.2 s, mostly GX's fixed cost per
    expectation (bench/quality_cost.py measures both).
    """

    def __init__(self, catalog: ChipCatalog | None = None, engine: str = ENGINES[0]) -> None:
        self._runner = SuiteRunner(source_suites(catalog or load_catalog()), engine)

    def __call__(self, records: JobRecords) -> pa.Table:
        frames = source_frames(records)
        return concat((self._runner.validate(s, frames[s]) for s in SOURCES), VALIDATION_RESULTS)


@cache
def _process_validator() -> BucketValidator:
    return BucketValidator()


def validate_bucket(records: JobRecords) -> pa.Table:
    """VALIDATION_RESULTS of the source suites on one bucket (a validator shared per process)."""
    return _process_validator()(records)
