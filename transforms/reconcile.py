"""Per job: drop exact duplicates, then quarantine what no job can own.

Every record of a job lands in the same job bucket (a range of `job_hash_of`), and the checks
look at one job's records at a time, so they need no shuffle of individual records:
- exact duplicates (exporters retry) count once: the copy with the smallest (file, line) is kept;
- a job with several different `JOB_SUBMIT`s keeps the earliest; so does one with several
  `JOB_END`s; a `JOB_END` before the job's `JOB_SUBMIT` cannot be placed in time. The others go
  to the quarantine (the spec is silent here: docs/decisions.md);
- task events, `JOB_END`s, spans and profiles of a job with no valid `JOB_SUBMIT` are quarantined
  as "unknown job".
Duplicates are dropped first, so a repeated record is counted once wherever it ends up.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from mpg.schemas import (
    JOB_COUNTS,
    QUARANTINE_REF,
    RECORD_ORDER,
    RECORD_SCHEMAS,
    SOURCES,
    conform,
)

_PROVENANCE = ("file", "line")

UNKNOWN_JOB = "unknown job: no valid JOB_SUBMIT for this job_id"
CONFLICTING_SUBMIT = "conflicting JOB_SUBMIT: this job has an earlier, different JOB_SUBMIT"
CONFLICTING_END = "conflicting JOB_END: this job has an earlier, different JOB_END"
END_BEFORE_SUBMIT = "out of range: JOB_END is earlier than the job's JOB_SUBMIT"


def job_hash_of(job_ids: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Each job id's hash: CRC-32 of its UTF-8 bytes (an int64 in [0, 2**32)).

    CRC-32 is fixed by its standard, so a job has the same hash in every process, version and
    runner. It is computed once per distinct id, not per record.
    """
    encoded = pa.chunked_array([job_ids]) if isinstance(job_ids, pa.Array) else job_ids
    encoded = encoded.combine_chunks().dictionary_encode()
    per_id = np.fromiter(
        (zlib.crc32(s.encode("utf-8")) for s in encoded.dictionary.to_pylist()),
        dtype=np.int64,
        count=len(encoded.dictionary),
    )
    return pa.array(per_id[encoded.indices.to_numpy(zero_copy_only=False)], pa.int64())


HASH_SPACE = 1 << 32


def bucket_of_hash(hashes: np.ndarray, buckets: int) -> np.ndarray:
    """The job bucket of each hash: `buckets` equal ranges of the hash space, so a bucket's jobs
    are one contiguous run of anything sorted by job hash."""
    return (hashes * buckets) >> 32


def hash_range(bucket: int, buckets: int) -> tuple[int, int]:
    """The job hashes of one bucket, [low, high): the inverse of `bucket_of_hash`."""
    return -(-bucket * HASH_SPACE // buckets), -(-(bucket + 1) * HASH_SPACE // buckets)


@dataclass(frozen=True)
class JobRecords:
    """Accepted records (RECORD_SCHEMAS, no raw text) of some jobs: one bucket's, or one job's."""

    scheduler: pa.Table
    runtime: pa.Table
    profiles: pa.Table

    def table(self, source: str) -> pa.Table:
        return {"scheduler": self.scheduler, "runtime": self.runtime, "profiles": self.profiles}[
            source
        ]

    @classmethod
    def empty(cls) -> JobRecords:
        return cls(**{s: RECORD_SCHEMAS[s].empty_table() for s in SOURCES})

    @classmethod
    def merged(cls, parts: Sequence[JobRecords]) -> JobRecords:
        """Several parts' records as one, for a check whose cost is per call, not per record."""
        return cls(**{s: pa.concat_tables([p.table(s) for p in parts]) for s in SOURCES})

    def split(self, jobs: pa.Array | pa.ChunkedArray) -> tuple[JobRecords, JobRecords]:
        """The records of the jobs in `jobs`, and the others (one membership test per table)."""
        parts = []
        for s in SOURCES:
            table = self.table(s)
            inside = pc.is_in(table.column("job_id"), jobs)
            parts.append((table.filter(inside), table.filter(pc.invert(inside))))
        return (
            JobRecords(*(p[0] for p in parts)),
            JobRecords(*(p[1] for p in parts)),
        )

    @property
    def records(self) -> int:
        return sum(self.table(s).num_rows for s in SOURCES)

    @property
    def data_end(self) -> int | None:
        """Latest `ts` or `end` among accepted scheduler events and spans, in epoch microseconds."""
        ends = [
            t.column(c).cast(pa.int64()).to_numpy().max()
            for t, c in ((self.scheduler, "ts"), (self.runtime, "end"))
            if t.num_rows
        ]
        return int(max(ends)) if ends else None


@dataclass(frozen=True)
class Reconciled:
    """What reconciling some jobs' parsed records decided."""

    records: JobRecords
    quarantine: pa.Table  # QUARANTINE_REF: raw text is read back later from the input file
    jobs: pa.Table  # JOB_COUNTS: one row per job id, how its records were disposed of


def _dedup(frame: pl.DataFrame, source: str) -> pl.DataFrame:
    """One copy of each record, the first: in RECORD_ORDER (or any order that keeps a job's
    records together and in it) that is the one with the smallest (file, line), since copies
    share every other column, their job and instant included. So copies lie in one run of rows
    with the same job and instant: only such runs are compared column by column (most records
    are alone at their instant, and a look at their neighbours clears them)."""
    job, instant = RECORD_ORDER[source][:2]
    same = [
        (pl.col(c) == pl.col(c).shift(n)).fill_null(False) for c in (job, instant) for n in (1, -1)
    ]
    in_run = (same[0] & same[2]) | (same[1] & same[3])
    runs = frame.with_row_index("_row").filter(in_run)
    if runs.is_empty():
        return frame
    content = [c for c in frame.columns if c not in _PROVENANCE]
    copies = runs.filter(pl.struct(content).is_first_distinct().not_()).get_column("_row")
    if copies.is_empty():
        return frame
    keep = np.ones(frame.height, dtype=bool)
    keep[copies.to_numpy()] = False
    return frame.filter(pl.Series(keep))


def _first_per_job(events: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Split lifecycle events into the earliest per job and the rest."""
    ranked = events.sort(["job_id", "ts", "file", "line"]).with_columns(
        pl.int_range(pl.len()).over("job_id").alias("_rank")
    )
    return (
        ranked.filter(pl.col("_rank") == 0).drop("_rank"),
        ranked.filter(pl.col("_rank") > 0).drop("_rank"),
    )


def _quarantined(source: str, frame: pl.DataFrame, reason: str) -> pl.DataFrame:
    return frame.select(
        pl.lit(source).alias("source"), "file", "line", pl.lit(reason).alias("reason"), "job_id"
    )


def _per_job(frame: pl.DataFrame, name: str) -> pl.DataFrame:
    return frame.group_by("job_id").agg(pl.len().cast(pl.Int64).alias(name))


def _job_counts(
    frames: dict[str, pl.DataFrame],
    deduped: dict[str, pl.DataFrame],
    accepted: dict[str, pl.DataFrame],
    rejected: dict[str, pl.DataFrame],
    submits: pl.DataFrame,
    ends: pl.DataFrame,
) -> pl.DataFrame:
    """JOB_COUNTS: per job id, its parsed rows, accepted, duplicate and quarantined records per
    source, whether it is submitted and open, and its latest accepted instant."""
    counts = pl.concat([f.select("job_id") for f in frames.values()]).unique()
    for s in SOURCES:
        parts = (
            _per_job(frames[s], f"rows_{s}"),
            _per_job(deduped[s], f"_deduped_{s}"),
            _per_job(accepted[s], f"accepted_{s}"),
            _per_job(rejected[s], f"quarantined_{s}"),
        )
        for part in parts:
            counts = counts.join(part, on="job_id", how="left")
    counts = counts.fill_null(0).with_columns(
        (pl.col(f"rows_{s}") - pl.col(f"_deduped_{s}")).alias(f"duplicates_{s}") for s in SOURCES
    )
    latest = pl.concat(
        [
            accepted["scheduler"].select("job_id", pl.col("ts").alias("t")),
            accepted["runtime"].select("job_id", pl.col("end").alias("t")),
        ]
    )
    latest = latest.group_by("job_id").agg(pl.col("t").max().alias("data_end"))
    submitted = submits.select("job_id", pl.lit(True).alias("submitted"))
    ended = ends.select("job_id", pl.lit(True).alias("_ended"))
    return (
        counts.join(latest, on="job_id", how="left")
        .join(submitted, on="job_id", how="left")
        .join(ended, on="job_id", how="left")
        .with_columns(
            pl.col("submitted").fill_null(False),
            (pl.col("submitted").fill_null(False) & pl.col("_ended").is_null()).alias("open"),
        )
        .sort("job_id")
    )


def _in_order(records: pa.Table | pl.DataFrame, source: str, in_job_order: bool) -> pl.DataFrame:
    if isinstance(records, pa.Table):
        records = pl.from_arrow(conform(records, RECORD_SCHEMAS[source]))
        assert isinstance(records, pl.DataFrame)
    records = records.select(RECORD_SCHEMAS[source].names)
    return records if in_job_order else records.sort(RECORD_ORDER[source])


def reconcile_jobs(
    parsed: Mapping[str, pa.Table | pl.DataFrame], in_job_order: bool = False
) -> Reconciled:
    """Apply the per-job checks to every parsed record (RECORD_SCHEMAS) of some whole jobs.

    The accepted records come out in RECORD_ORDER. With `in_job_order` the caller says its
    records already are in an order that keeps each job's records together and in RECORD_ORDER
    within the job (the record store's: by job hash first): they are not sorted again, and the
    accepted spans and profiles keep that order (scheduler events, few, are sorted still).
    """
    frames = {s: _in_order(parsed[s], s, in_job_order) for s in SOURCES}
    deduped = {s: _dedup(frames[s], s) for s in SOURCES}

    sched = deduped["scheduler"]
    submits, extra_submits = _first_per_job(sched.filter(pl.col("type") == "JOB_SUBMIT"))
    # A JOB_END before its job's JOB_SUBMIT cannot be placed in time; of the others, the earliest.
    known_ends = sched.filter(pl.col("type") == "JOB_END").join(
        submits.select("job_id", pl.col("ts").alias("_submit")), on="job_id"
    )
    early_ends = known_ends.filter(pl.col("ts") < pl.col("_submit")).drop("_submit")
    ends, extra_ends = _first_per_job(
        known_ends.filter(pl.col("ts") >= pl.col("_submit")).drop("_submit")
    )
    known = submits.select("job_id")
    is_known = pl.col("job_id").is_in(known.get_column("job_id").implode())
    tasks = sched.filter(pl.col("type").is_in(["JOB_SUBMIT", "JOB_END"]).not_())

    # Filters keep the records' order; the few lifecycle events are put back in it.
    accepted = {
        "scheduler": pl.concat([submits, tasks.filter(is_known), ends]),
        "runtime": deduped["runtime"].filter(is_known),
        "profiles": deduped["profiles"].filter(is_known),
    }
    rejected = {
        "scheduler": pl.concat(
            [
                _quarantined("scheduler", extra_submits, CONFLICTING_SUBMIT),
                _quarantined("scheduler", extra_ends, CONFLICTING_END),
                _quarantined("scheduler", early_ends, END_BEFORE_SUBMIT),
                _quarantined(
                    "scheduler",
                    sched.filter(pl.col("type") != "JOB_SUBMIT").join(
                        known, on="job_id", how="anti"
                    ),
                    UNKNOWN_JOB,
                ),
            ]
        ),
        **{
            s: _quarantined(s, deduped[s].join(known, on="job_id", how="anti"), UNKNOWN_JOB)
            for s in ("runtime", "profiles")
        },
    }
    quarantine = pl.concat([rejected[s] for s in SOURCES])
    # (file, line) last: a total order, so the stored bytes do not depend on arrival order.
    accepted["scheduler"] = accepted["scheduler"].sort(RECORD_ORDER["scheduler"])
    stored = {s: conform(accepted[s].to_arrow(), RECORD_SCHEMAS[s]) for s in SOURCES}
    jobs = _job_counts(frames, deduped, accepted, rejected, submits, ends)
    return Reconciled(
        records=JobRecords(**stored),
        quarantine=conform(quarantine.sort(["source", "file", "line"]).to_arrow(), QUARANTINE_REF),
        jobs=conform(jobs.to_arrow(), JOB_COUNTS),
    )
