"""Per job bucket: drop exact duplicates, then quarantine what no job can own.

Every record of a job lands in the same bucket (`bucket_of`), so these checks need no shuffle of
individual records:
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
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa

from mpg.schemas import QUARANTINE_REF, RECORD_ORDER, RECORD_SCHEMAS, SOURCES, conform

_PROVENANCE = ("file", "line")

UNKNOWN_JOB = "unknown job: no valid JOB_SUBMIT for this job_id"
CONFLICTING_SUBMIT = "conflicting JOB_SUBMIT: this job has an earlier, different JOB_SUBMIT"
CONFLICTING_END = "conflicting JOB_END: this job has an earlier, different JOB_END"
END_BEFORE_SUBMIT = "out of range: JOB_END is earlier than the job's JOB_SUBMIT"


def bucket_of(job_ids: pa.Array | pa.ChunkedArray, buckets: int) -> pa.Array:
    """A stable bucket per job id: CRC-32 of its UTF-8 bytes modulo `buckets`.

    CRC-32 is fixed by its standard, so the same job lands in the same bucket in every process,
    version and runner. It is computed once per distinct id, not per record.
    """
    encoded = pa.chunked_array([job_ids]) if isinstance(job_ids, pa.Array) else job_ids
    encoded = encoded.combine_chunks().dictionary_encode()
    per_id = np.fromiter(
        (zlib.crc32(s.encode("utf-8")) % buckets for s in encoded.dictionary.to_pylist()),
        dtype=np.int32,
        count=len(encoded.dictionary),
    )
    return pa.array(per_id[encoded.indices.to_numpy(zero_copy_only=False)], pa.int32())


@dataclass(frozen=True)
class SourceCounts:
    """How one source's records of one bucket were disposed of after parsing."""

    source: str
    accepted: int
    duplicates: int
    quarantined: int


@dataclass(frozen=True)
class JobRecords:
    """The accepted records (RECORD_SCHEMAS, no raw text) of the jobs of one bucket."""

    bucket: int
    scheduler: pa.Table
    runtime: pa.Table
    profiles: pa.Table

    def table(self, source: str) -> pa.Table:
        return {"scheduler": self.scheduler, "runtime": self.runtime, "profiles": self.profiles}[
            source
        ]

    @classmethod
    def merged(cls, parts: Sequence[JobRecords]) -> JobRecords:
        """Several buckets' records as one (numbered after the first), for a check whose cost is
        per call rather than per record."""
        return cls(
            bucket=parts[0].bucket,
            **{s: pa.concat_tables([p.table(s) for p in parts]) for s in SOURCES},
        )

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
class BucketRecords:
    """What reconciling one bucket decided: the accepted records, and what was not accepted."""

    records: JobRecords
    quarantine: pa.Table  # QUARANTINE_REF: raw text is read back later (RecoverRawText)
    counts: tuple[SourceCounts, ...]


def _dedup(frame: pl.DataFrame) -> pl.DataFrame:
    content = [c for c in frame.columns if c not in _PROVENANCE]
    return frame.sort(["file", "line"]).unique(subset=content, keep="first", maintain_order=True)


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
        pl.lit(source).alias("source"), "file", "line", pl.lit(reason).alias("reason")
    )


def reconcile_bucket(bucket: int, parsed: dict[str, pa.Table]) -> BucketRecords:
    """Apply the per-job checks to one bucket's parsed records of all sources."""
    frames = {s: pl.from_arrow(parsed[s]) for s in SOURCES}
    deduped = {s: _dedup(frames[s]) for s in SOURCES}

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
    tasks = sched.filter(pl.col("type").is_in(["JOB_SUBMIT", "JOB_END"]).not_())

    accepted = {
        "scheduler": pl.concat([submits, tasks.join(known, on="job_id"), ends]),
        "runtime": deduped["runtime"].join(known, on="job_id"),
        "profiles": deduped["profiles"].join(known, on="job_id"),
    }
    rejected = {
        "scheduler": [
            _quarantined("scheduler", extra_submits, CONFLICTING_SUBMIT),
            _quarantined("scheduler", extra_ends, CONFLICTING_END),
            _quarantined("scheduler", early_ends, END_BEFORE_SUBMIT),
            _quarantined(
                "scheduler",
                sched.filter(pl.col("type") != "JOB_SUBMIT").join(known, on="job_id", how="anti"),
                UNKNOWN_JOB,
            ),
        ],
        "runtime": [
            _quarantined(
                "runtime", deduped["runtime"].join(known, on="job_id", how="anti"), UNKNOWN_JOB
            )
        ],
        "profiles": [
            _quarantined(
                "profiles", deduped["profiles"].join(known, on="job_id", how="anti"), UNKNOWN_JOB
            )
        ],
    }
    quarantine = pl.concat([q for s in SOURCES for q in rejected[s]])
    counts = tuple(
        SourceCounts(
            source=s,
            accepted=accepted[s].height,
            duplicates=frames[s].height - deduped[s].height,
            quarantined=sum(q.height for q in rejected[s]),
        )
        for s in SOURCES
    )
    # (file, line) last: a total order, so the stored bytes do not depend on arrival order.
    stored = {
        s: conform(accepted[s].sort(RECORD_ORDER[s]).to_arrow(), RECORD_SCHEMAS[s]) for s in SOURCES
    }
    return BucketRecords(
        records=JobRecords(bucket=bucket, **stored),
        quarantine=conform(quarantine.sort(["source", "file", "line"]).to_arrow(), QUARANTINE_REF),
        counts=counts,
    )
