"""Build a named timeline from compact records and account it with the pure functions.

Times are written as "HH:MM[:SS]" on 2026-11-20, or "+1 HH:MM" for the next day, so that every
expected chip-second in the tests can be checked by hand.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pyarrow as pa

from mpg.definitions.catalog import ChipCatalog, load_catalog
from mpg.transforms.account import ChipTimeSweep, account_chip_time, sweep_chip_time
from mpg.transforms.parse import BlockParser
from mpg.transforms.reconcile import Reconciled, reconcile_jobs

DAY = "2026-11-20"
NEXT_DAY = "2026-11-21"


def at(clock: str) -> str:
    day, clock = (NEXT_DAY, clock[3:]) if clock.startswith("+1 ") else (DAY, clock)
    return f"{day}T{clock if clock.count(':') == 2 else clock + ':00'}Z"


def submit(job: str, clock: str, chips: int, cls: str = "training", gen: str = "tpu-v4") -> dict:
    return {
        "type": "JOB_SUBMIT",
        "ts": at(clock),
        "job_id": job,
        "chips_requested": chips,
        "chip_generation": gen,
        "workload_class": cls,
        "framework": "jax",
    }


def schedule(job: str, clock: str, task: int, chips: int) -> dict:
    return {
        "type": "TASK_SCHEDULE",
        "ts": at(clock),
        "job_id": job,
        "task_index": task,
        "chips": chips,
    }


def release(job: str, clock: str, task: int, kind: str = "TASK_EVICT") -> dict:
    return {"type": kind, "ts": at(clock), "job_id": job, "task_index": task}


def end(job: str, clock: str, state: str = "FINISHED") -> dict:
    return {"type": "JOB_END", "ts": at(clock), "job_id": job, "state": state}


def span(
    job: str, kind: str, start: str, stop: str, step: int | None = None, attempt: int = 0
) -> dict:
    record = {"job_id": job, "attempt": attempt, "kind": kind, "start": at(start), "end": at(stop)}
    return record if step is None else {**record, "step": step}


def profile(
    job: str,
    clock: str,
    step_time_s: float,
    model_flops: float,
    chips: int,
    hbm_bytes: float | None = None,
) -> dict:
    record = {
        "job_id": job,
        "ts": at(clock),
        "step": 1,
        "step_time_s": step_time_s,
        "model_flops": model_flops,
        "chips": chips,
    }
    return record if hbm_bytes is None else {**record, "hbm_bytes": hbm_bytes}


@dataclass(frozen=True)
class Accounted:
    records: Reconciled
    job_days: list[dict]
    ledger: dict[tuple[str, str, str], float]  # (day, job, category) -> chip-seconds

    def job_day(self, job: str, day: str = DAY) -> dict:
        (row,) = [r for r in self.job_days if r["job_id"] == job and r["day"].isoformat() == day]
        return row

    def categories(self, job: str, day: str = DAY) -> dict[str, float]:
        return {c: v for (d, j, c), v in self.ledger.items() if j == job and d == day}


def _lines(records: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def account(
    scheduler: list[dict],
    runtime: list[dict] = (),  # type: ignore[assignment]
    profiles: list[dict] = (),  # type: ignore[assignment]
    catalog: ChipCatalog | None = None,
    metric_version: str = "v1",
) -> Accounted:
    catalog = catalog or load_catalog()
    parser = BlockParser(catalog)
    parsed = {}
    for source, records in (("scheduler", scheduler), ("runtime", runtime), ("profiles", profiles)):
        block = parser.parse(source, f"{source}/t.jsonl", _lines(list(records)))
        assert block.quarantine.num_rows == 0, block.quarantine.to_pylist()
        parsed[source] = block.records
    parser.close()
    bucket = reconcile_jobs(parsed)
    records = bucket.records
    job_days, ledger = account_chip_time(
        records.scheduler,
        records.runtime,
        records.profiles,
        catalog,
        records.data_end,
        (metric_version,),
    )
    return Accounted(
        records=bucket,
        job_days=job_days.to_pylist(),
        ledger={
            (r["day"].isoformat(), r["job_id"], r["category"]): r["chip_s"]
            for r in ledger.to_pylist()
        },
    )


def catalog_with(
    generation: str, peak: float | None, hbm_bytes_per_s: float | None = None
) -> ChipCatalog:
    base = load_catalog()
    extra = pa.table(
        {
            "chip_generation": [generation],
            "peak_flops_per_chip": [peak],
            "hbm_bytes_per_s": [hbm_bytes_per_s],
        },
        schema=base.table.schema,
    )
    return ChipCatalog(version="test", table=pa.concat_tables([base.table, extra]))


def sweep(
    scheduler: list[dict],
    runtime: list[dict] = (),  # type: ignore[assignment]
    profiles: list[dict] = (),  # type: ignore[assignment]
) -> ChipTimeSweep:
    """The accounting's frames for a timeline (parsed and reconciled as a run would), for the
    analyses that read them (step times, checkpoint advice)."""
    parser = BlockParser(load_catalog())
    parsed = {}
    for source, records in (("scheduler", scheduler), ("runtime", runtime), ("profiles", profiles)):
        block = parser.parse(source, f"{source}/t.jsonl", _lines(list(records)))
        assert block.quarantine.num_rows == 0, block.quarantine.to_pylist()
        parsed[source] = block.records
    parser.close()
    records = reconcile_jobs(parsed).records
    return sweep_chip_time(records.scheduler, records.runtime, records.profiles, records.data_end)
