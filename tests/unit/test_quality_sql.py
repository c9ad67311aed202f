"""Each query of sql/quality/ (the output suites' reconciliation frames) on small given tables:
every row it gives, worked out by hand. Tolerances are powers of two here, so each excess is an
exact binary fraction."""

from __future__ import annotations

from datetime import date

import pyarrow as pa

from mpg.quality.outputs import RUN_COUNTS_RELATION
from mpg.schemas import RECORD_COUNTS
from tests.support.given import columns, database, ledger, rows, sums

D1, D2 = date(2026, 1, 1), date(2026, 1, 2)


def job_day(day: date, job: str, version: str = "v1", **sums: float | None) -> dict:
    """A job-day row; its slice from its name (serve-*: serving, torch-*: pytorch on gpu-h100,
    else training with jax on tpu-v5p)."""
    workload = "serving" if job.startswith("serve") else "training"
    torch = job.startswith("torch")
    framework, generation = ("pytorch", "gpu-h100") if torch else ("jax", "tpu-v5p")
    return {
        "day": day,
        "job_id": job,
        "metric_version": version,
        "workload_class": workload,
        "framework": framework,
        "chip_generation": generation,
        "chips_requested": 4,
        "all_allocated_chip_s": 0.0,
        "productive_chip_s": 0.0,
        **sums,
    }


def test_ledger_by_job_day() -> None:
    """Each job-day's ledger beside its wanted chip-time, in either table alone too:
    excess = |ledger - wanted| - (0.25 * sum|chip_s| + 0.5)."""
    con = database(
        {
            "job_day_goodput": [
                job_day(D1, "a", wanted_chip_s=100.0),
                job_day(D1, "b", wanted_chip_s=20.0),
                job_day(D1, "c", wanted_chip_s=30.0),  # no ledger rows
                job_day(D1, "a", "v2", wanted_chip_s=8.0),  # the ledger is v1's only
            ],
            "chip_time_ledger": [
                ledger(D1, "a", "ideal", 60.0),
                ledger(D1, "a", "scheduling", 40.0),
                ledger(D1, "b", "ideal", 80.0),
                ledger(D1, "b", "program_loss", -20.0),
                ledger(D2, "d", "ideal", 4.0),  # no job-day row
            ],
        }
    )
    params = {"relative_tolerance": 0.25, "absolute_tolerance": 0.5}
    assert columns(con, "quality/ledger_by_job_day.sql", **params) == [
        "day",
        "job_id",
        "metric_version",
        "wanted_chip_s",
        "ledger_chip_s",
        "abs_chip_s",
        "excess",
    ]
    assert rows(con, "quality/ledger_by_job_day.sql", **params) == [
        (D1, "a", "v1", 100.0, 100.0, 100.0, 0 - (25 + 0.5)),
        (D1, "a", "v2", 8.0, 0.0, 0.0, 8 - 0.5),
        (D1, "b", "v1", 20.0, 60.0, 100.0, 40 - (25 + 0.5)),
        (D1, "c", "v1", 30.0, 0.0, 0.0, 30 - 0.5),
        (D2, "d", "v1", None, 4.0, 4.0, 4 - (1 + 0.5)),
    ]


def slice_row(
    day: date,
    workload: str | None,
    framework: str | None,
    generation: str | None,
    chip_time: tuple[float, float, float, float | None],
) -> dict:
    slice_ = {"workload_class": workload, "framework": framework, "chip_generation": generation}
    return {"day": day, "metric_version": "v1", **slice_, **sums(*chip_time)}


def test_slices_vs_job_days() -> None:
    """Each slice row against the job-days it covers (a NULL slice column: all), the largest of
    its four differences beyond 0.125 of the larger side."""

    con = database(
        {
            "job_day_goodput": [
                job_day(D1, "train-1", **sums(100, 80, 60, 30)),  # training, jax, tpu-v5p
                job_day(D1, "torch-2", **sums(200, 200, 100, None)),  # training, pytorch, gpu
                job_day(D1, "serve-3", **sums(40, 40, 40, 20)),  # serving, jax, tpu-v5p
                job_day(D1, "train-1", "v2", **sums(1000, 1000, 1000, 1000)),
            ],
            "goodput_by_slice": [
                slice_row(D1, None, None, None, (340, 320, 200, 50)),
                slice_row(D1, "training", None, None, (300, 280, 160, 30)),
                slice_row(D1, None, "jax", "tpu-v5p", (200, 120, 100, 50)),  # wanted is 140
                slice_row(D1, None, "pytorch", None, (200, 200, 100, None)),
                slice_row(D2, "training", None, None, (10, 10, 10, None)),  # no job-day
            ],
        }
    )
    assert rows(con, "quality/slices_vs_job_days.sql", relative_tolerance=0.125) == [
        # day, version, slice, job_days, excess = max of the four (|diff| - 0.125 * larger)
        (D1, "v1", None, None, None, 3, max(-42.5, -40, -25, -6.25)),
        (D1, "v1", None, "jax", "tpu-v5p", 2, max(60 - 25, -15, -12.5, -6.25)),
        (D1, "v1", None, "pytorch", None, 1, max(-25, -25, -12.5, 0)),
        (D1, "v1", "training", None, None, 2, max(-37.5, -35, -20, -3.75)),
        (D2, "v1", "training", None, None, 0, 10 - 1.25),
    ]


def test_record_counts_reconciled() -> None:
    """Per source in any of the three: the published counts' unaccounted records, their
    quarantined count against the quarantine table's rows, and how many of the four differ from
    the run's own counts."""

    def counts(source: str, read: int, accepted: int, duplicates: int, quarantined: int) -> dict:
        return {
            "source": source,
            "records_read": read,
            "accepted": accepted,
            "duplicates": duplicates,
            "quarantined": quarantined,
        }

    def quarantined(source: str, line: int) -> dict:
        return {"source": source, "file": "f.jsonl", "line": line, "reason": "r", "raw": "x"}

    con = database(
        {
            "record_counts": [
                counts("scheduler", 10, 7, 1, 2),
                counts("runtime", 5, 5, 0, 1),  # one record too many
            ],
            "quarantine": [
                quarantined("scheduler", 3),
                quarantined("scheduler", 4),
                quarantined("profiles", 9),  # a source the published counts lack
            ],
        }
    )
    run = pa.Table.from_pylist(
        [
            counts("scheduler", 10, 7, 1, 2),
            counts("runtime", 5, 4, 0, 1),  # accepted differs
            counts("profiles", 3, 2, 0, 1),
        ],
        schema=RECORD_COUNTS,
    )
    con.register(RUN_COUNTS_RELATION, run)
    assert columns(con, "quality/record_counts_reconciled.sql") == [
        "source",
        "unaccounted",
        "quarantine_difference",
        "run_differences",
    ]
    assert rows(con, "quality/record_counts_reconciled.sql") == [
        ("profiles", None, 0 - 1, 4),
        ("runtime", 5 - 5 - 0 - 1, 1 - 0, 1),
        ("scheduler", 0, 0, 0),
    ]
