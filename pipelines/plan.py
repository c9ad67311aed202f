"""Planning a run: what changed in the trace root, which jobs to rewrite, how many buckets.

Everything here reads the previous snapshot's state (a row per input file, a row per job), never
records, except when a file was retracted: then the record store's `file` column is scanned for
the jobs it fed (a rare event, and one column).

Job buckets follow the data: as many as keep each within `RECORDS_PER_BUCKET` of the records the
run will hold (its new files' estimated records, and the stored records of the jobs it rewrites
or whose end of data may move), so a worker's memory stays flat whatever the fleet's size.
"""

from __future__ import annotations

import dataclasses
import datetime
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from mpg.definitions.costs import rates_change
from mpg.output.manifest import FileDelta, compare_files
from mpg.output.snapshot import Snapshot
from mpg.output.state_key import StateKey
from mpg.output.store import OutputStore, RunFiles
from mpg.pipelines.buckets import PLANNED
from mpg.pipelines.io import TraceFile
from mpg.pipelines.sizing import bucket_count, estimated_records
from mpg.pipelines.update import PreviousBucket
from mpg.schemas import COST_RATES, DATA_FILES, JOB_INDEX, MANIFEST, SEGMENTS, SOURCES, concat
from mpg.transforms.reconcile import bucket_of_hash

# The record store is compacted when it holds more segments than this, or a segment is mostly
# dead (its jobs' records moved to later segments).
MAX_SEGMENTS = 16
MIN_LIVE_SHARE = 0.5

_INDEX_COLUMNS = [
    "job_hash",
    "job_id",
    "segment",
    *[f"rows_{s}" for s in SOURCES],
    "open",
    "data_end",
]


@dataclass(frozen=True)
class RunPlan:
    """What a run will do, decided before its pipeline starts."""

    current: Snapshot | None  # the snapshot the run replaces
    previous: Snapshot | None  # the state the run updates (None: computing everything)
    reason: str
    delta: FileDelta
    key: StateKey
    # What changed in the rates (DIR/mpg.toml's prices, power, PUE) since the current snapshot,
    # in words: every published day's costs are priced again from the stored ledger.
    repricing: str | None = None

    @property
    def up_to_date(self) -> bool:
        """Nothing to ingest, retract, re-price or republish (a run that does not publish to
        BigQuery leaves it as it is)."""
        if self.previous is None or self.delta.new or self.delta.retracted or self.repricing:
            return False
        kept = self.key
        if not kept.bigquery:
            kept = dataclasses.replace(kept, bigquery=self.previous.key.bigquery)
        return self.previous.key == kept

    def bigquery_days(self, changed: list[datetime.date]) -> set[datetime.date] | None:
        """The days to load into BigQuery: those whose rows changed when the dataset holds the
        current snapshot already; None (every table whole) otherwise, or when every day's costs
        were priced again."""
        if self.current is None or self.current.key.bigquery != self.key.bigquery:
            return None
        if self.repricing:
            return None
        return set(changed)


def published_days(
    store: OutputStore, snapshot: Snapshot
) -> tuple[datetime.date, datetime.date] | None:
    files = store.read_parquet(snapshot.state["files"], DATA_FILES)
    days = files.filter(pc.equal(files.column("table"), "job_day_goodput")).column("day")
    if len(days) == 0:
        return None
    return pc.min(days).as_py(), pc.max(days).as_py()


def plan_run(
    store: OutputStore,
    files: list[TraceFile],
    current: Snapshot | None,
    key: StateKey,
    full: bool,
    rates: pa.Table,
) -> RunPlan:
    """Compare the trace root with the current snapshot under `key` (whose coverage is then the
    current one's, less the versions this run computes for every day), and the run's rates
    (COST_RATES) with those the current snapshot's costs were priced at."""
    why = None
    if current is not None:
        coverage = tuple((v, c) for v, c in current.key.coverage if v not in key.metric_versions)
        key = dataclasses.replace(key, coverage=coverage)
        why = key.mismatch(current.key, published_days(store, current))
    if current is None or full or why is not None:
        reason = "first run" if current is None and not full else why or "--full"
        delta = FileDelta(tuple(files), MANIFEST.empty_table(), ())
        return RunPlan(current, None, f"computing everything: {reason}", delta, key)
    manifest = store.read_parquet(current.state["manifest"], MANIFEST)
    delta = compare_files(files, manifest)
    gone = len(delta.retracted) - delta.changed
    added = len(delta.new) - delta.changed
    reason = f"{added} new, {delta.changed} changed and {gone} removed trace files"
    repricing = _repricing(store, current, rates)
    if not delta.new and not delta.retracted:
        reason = _republished(current.key, key)
    if repricing:
        reason = (
            f"re-priced every published day from the stored ledger (DIR/mpg.toml: {repricing})"
            if not delta.new and not delta.retracted
            else f"{reason}; re-priced every published day ({repricing})"
        )
    return RunPlan(current, current, reason, delta, key, repricing)


def _repricing(store: OutputStore, current: Snapshot, rates: pa.Table) -> str | None:
    """What changed in the rates since `current` was priced (None: nothing)."""
    files = store.read_parquet(current.state["files"], DATA_FILES)
    previous = files.filter(pc.equal(files.column("table"), "cost_rates")).column("path")
    if len(previous) == 0:
        return None
    return rates_change(store.read_parquet(previous[0].as_py(), COST_RATES), rates)


def _republished(old: StateKey, new: StateKey) -> str:
    """Why a run with no new, changed or removed files publishes anyway."""
    if old.current_metric_version != new.current_metric_version:
        versions = f"{old.current_metric_version} -> {new.current_metric_version}"
        return f"the *_current views change version ({versions})"
    if new.bigquery and old.bigquery != new.bigquery:
        return f"publishing every table to BigQuery {new.bigquery}"
    return "no new, changed or removed trace files"


@dataclass(frozen=True)
class JobWork:
    """The previous job index as a run needs it, and the jobs it must rewrite."""

    index: pa.Table  # _INDEX_COLUMNS of every job
    retracted: pa.Table  # (job_hash, job_id) of the jobs retracted files fed
    compacted: pa.Table  # (job_hash, job_id) of the jobs in segments being compacted

    def buckets(self, new_files: tuple[TraceFile, ...], records_per_bucket: int) -> int:
        """Job buckets for the run: its new records and the stored ones it reads again."""
        ids = pa.concat_arrays(
            [
                self.retracted.column("job_id").combine_chunks(),
                self.compacted.column("job_id").combine_chunks(),
                self.index.filter(self.index.column("open")).column("job_id").combine_chunks(),
            ]
        ).unique()
        again = self.index.filter(pc.is_in(self.index.column("job_id"), ids))
        stored = sum(pc.sum(again.column(f"rows_{s}")).as_py() or 0 for s in SOURCES)
        return bucket_count(estimated_records(new_files) + stored, records_per_bucket)

    def previous_buckets(self, buckets: int) -> list[PreviousBucket]:
        """Per bucket of the run's layout that holds jobs: its latest instant and open jobs."""
        if not self.index.num_rows:
            return []
        bucket = bucket_of_hash(self.index.column("job_hash").to_numpy(), buckets)
        ends = self.index.column("data_end").cast(pa.int64())
        table = (
            pa.table({"bucket": bucket, "end": ends, "open": self.index.column("open")})
            .group_by("bucket")
            .aggregate([("end", "max"), ("open", "sum")])
        )
        return [
            PreviousBucket(int(b), None if e is None else int(e), int(o))
            for b, e, o in zip(
                *(table.column(c).to_pylist() for c in ("bucket", "end_max", "open_sum")),
                strict=True,
            )
        ]


def job_work(store: OutputStore, previous: Snapshot | None, retracted: tuple[str, ...]) -> JobWork:
    """The previous index's per-job columns, the jobs of retracted files (a scan of the record
    store's `file` column) and those of segments due for compaction."""
    empty = pa.table({"job_hash": pa.array([], pa.int64()), "job_id": pa.array([], pa.string())})
    if previous is None:
        index = JOB_INDEX.empty_table().select(_INDEX_COLUMNS)
        return JobWork(index, empty, empty)
    index = store.storage.parquet_file(previous.state["jobs"]).read(columns=_INDEX_COLUMNS)
    segments = store.read_parquet(previous.state["segments"], SEGMENTS)
    return JobWork(
        index, _retracted_jobs(store, segments, retracted, empty), _compacted_jobs(index, segments)
    )


def _retracted_jobs(
    store: OutputStore, segments: pa.Table, retracted: tuple[str, ...], empty: pa.Table
) -> pa.Table:
    if not retracted or not segments.num_rows:
        return empty
    paths = [store.storage.full(p) for p in segments.column("path").to_pylist()]
    dataset = ds.dataset(paths, filesystem=store.storage.fs, format="parquet")
    rows = dataset.to_table(
        columns=["job_hash", "job_id"], filter=ds.field("file").isin(list(retracted))
    )
    return rows.group_by(["job_hash", "job_id"]).aggregate([])


def _compacted_jobs(index: pa.Table, segments: pa.Table) -> pa.Table:
    """The jobs of the segments to compact: those mostly dead, and the smallest when there are
    more than MAX_SEGMENTS (so the store's files stay few whatever the number of runs)."""
    live: dict[str, int] = {}
    for source in SOURCES:
        per = index.group_by("segment").aggregate([(f"rows_{source}", "sum")])
        for seg, n in zip(
            per.column("segment").to_pylist(),
            per.column(f"rows_{source}_sum").to_pylist(),
            strict=True,
        ):
            live[seg] = live.get(seg, 0) + (n or 0)
    total: dict[str, int] = {}
    for seg, n in zip(
        segments.column("segment").to_pylist(), segments.column("rows").to_pylist(), strict=True
    ):
        total[seg] = total.get(seg, 0) + n
    victims = {s for s, n in total.items() if live.get(s, 0) < MIN_LIVE_SHARE * n}
    rest = sorted((live.get(s, 0), s) for s in total if s not in victims)
    while len(rest) > MAX_SEGMENTS:
        victims.add(rest.pop(0)[1])
    chosen = index.filter(pc.is_in(index.column("segment"), pa.array(sorted(victims), pa.string())))
    return chosen.select(["job_hash", "job_id"])


def planned_jobs(run: RunFiles, work: JobWork, buckets: int) -> list[tuple[int, str]]:
    """Scratch files naming each bucket's jobs to rewrite (with whether a retraction is why);
    returns (bucket, path) for the buckets that have any."""
    retracted = work.retracted.append_column("retracted", pa.repeat(True, work.retracted.num_rows))
    compacted = work.compacted.append_column("retracted", pa.repeat(False, work.compacted.num_rows))
    jobs = concat([retracted, compacted], PLANNED)
    if not jobs.num_rows:
        return []
    bucket = bucket_of_hash(jobs.column("job_hash").to_numpy(), buckets)
    out = []
    for b in np.unique(bucket).tolist():
        path = run.planned(b)
        run.store.write_scratch(path, [jobs.filter(pa.array(bucket == b))])
        out.append((b, path))
    return out
