"""Each query of sql/explain/ (what `mpg explain JOB` reads of the published tables) on small
given tables: every row it gives, worked out by hand. Job `j` has two days of v1 rows; a v2 row
and another job's rows are there to be left out."""

from __future__ import annotations

from datetime import date

import pyarrow as pa

from mpg.schemas import CHECKPOINT_ADVICE, GOODPUT_BY_SLICE
from tests.support.given import columns, database, ledger, records, row, rows, sums

D1, D2 = date(2026, 1, 1), date(2026, 1, 2)
SLICE = {
    "workload_class": "training",
    "framework": "jax",
    "chip_generation": "tpu-v5p",
    "chips_requested": 4,
}


def job_day(day: date, job: str, version: str, chip_time: tuple, ratios: tuple) -> dict:
    sg, rg, pg, mpg = ratios
    return {
        "day": day,
        "job_id": job,
        "metric_version": version,
        **SLICE,
        **sums(*chip_time),
        **{"sg": sg, "rg": rg, "pg": pg, "mpg": mpg},
    }


def test_job_goodput_gives_each_day_as_published_and_the_lifetime_as_ratios_of_sums() -> None:
    con = database(
        {
            "job_day_goodput": [
                # Day rows keep the published ratios, whatever they are (0.125: not recomputed).
                job_day(D1, "j", "v1", (100, 80, 60, 30), (0.8, 0.75, 0.5, 0.125)),
                job_day(D2, "j", "v1", (200, 200, 150, None), (1.0, 0.75, None, None)),
                job_day(D1, "j", "v2", (1, 1, 1, 1), (1.0, 1.0, 1.0, 1.0)),
                job_day(D1, "k", "v1", (9, 9, 9, 9), (1.0, 1.0, 1.0, 1.0)),
            ]
        },
        macros=["publish/macros.sql"],
    )
    params = {"job_id": "j", "metric_version": "v1"}
    # the day, the job's slice and a slice's numbers (goodput_by_slice's, from wanted_chip_s on)
    numbers = GOODPUT_BY_SLICE.names[GOODPUT_BY_SLICE.get_field_index("wanted_chip_s") :]
    assert columns(con, "explain/job_goodput.sql", **params) == ["day", *SLICE, *numbers]
    slice_ = tuple(SLICE.values())
    # Lifetime: wanted 300, all-allocated 280, productive 210, ideal 30 (NULL adds nothing);
    # profiled 60 (D1's productive, the one day with a PG).
    assert rows(con, "explain/job_goodput.sql", **params) == [
        (D1, *slice_, 100, 80, 60, 30, 60 / 60, 0.8, 0.75, 0.5, 0.125),
        (D2, *slice_, 200, 200, 150, None, 0 / 150, 1.0, 0.75, None, None),
        (None, *slice_, 300, 280, 210, 30, 60 / 210, 280 / 300, 210 / 280, 30 / 60,
         30 / 300 * (210 / 60)),
    ]  # fmt: skip
    unknown = {"job_id": "nobody", "metric_version": "v1"}
    assert rows(con, "explain/job_goodput.sql", **unknown) == []


def test_job_ledger_gives_each_day_and_the_lifetime_per_category() -> None:
    con = database(
        {
            "chip_time_ledger": [
                ledger(D1, "j", "scheduling", 20),
                ledger(D1, "j", "ideal", 30),
                ledger(D2, "j", "ideal", 50),
                ledger(D2, "j", "compile", 10),
                ledger(D1, "j", "ideal", 1000, "v2"),
                ledger(D1, "k", "ideal", 1000),
            ]
        }
    )
    params = {"job_id": "j", "metric_version": "v1"}
    assert columns(con, "explain/job_ledger.sql", **params) == ["day", "category", "chip_s"]
    assert rows(con, "explain/job_ledger.sql", **params) == [
        (D1, "ideal", 30),
        (D1, "scheduling", 20),
        (D2, "compile", 10),
        (D2, "ideal", 50),
        (None, "compile", 10),
        (None, "ideal", 30 + 50),
        (None, "scheduling", 20),
    ]


def test_job_checkpoint_advice_is_the_jobs_one_row() -> None:
    def advice(job: str, saved: float) -> dict:
        """A row with every required column set (this query picks rows; their values pass)."""
        zero = {pa.float64(): 0.0, pa.int64(): 0, pa.string(): "", pa.date32(): D1}
        required = {f.name: zero[f.type] for f in CHECKPOINT_ADVICE if not f.nullable}
        return {**required, "day": D2, "job_id": job, **SLICE, "chip_hours_saved": saved}

    con = database({"checkpoint_advice": [advice("j", 1.5), advice("k", 9.0)]})
    assert records(con, "explain/job_checkpoint_advice.sql", job_id="j") == [
        row("checkpoint_advice", advice("j", 1.5))
    ]
    assert records(con, "explain/job_checkpoint_advice.sql", job_id="nobody") == []


def test_job_step_times_gives_the_jobs_days_in_order() -> None:
    def stats(day: date, job: str, steps: int) -> dict:
        return {
            "day": day,
            "job_id": job,
            "chips_requested": 4,
            "steps": steps,
            **dict.fromkeys(
                ("mean_step_s", "median_step_s", "p90_step_s", "p99_step_s", "max_step_s"), 2.0
            ),
            "slow_step_chip_s": 0.0,
            "productive_chip_s": 8.0 * steps,
            "ranks": 0,
        }

    con = database({"step_time_stats": [stats(D2, "j", 7), stats(D1, "k", 5), stats(D1, "j", 3)]})
    assert records(con, "explain/job_step_times.sql", job_id="j") == [
        row("step_time_stats", stats(D1, "j", 3)),
        row("step_time_stats", stats(D2, "j", 7)),
    ]
