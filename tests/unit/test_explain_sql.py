"""Each query of sql/explain/ (what `mpg explain JOB` reads of the published tables and the
semantic layer's macros over them) on small given tables: every row it gives, worked out by hand.
Job `j` has two days of v1 rows; v2 rows and other jobs' rows are there to be left out (or, for the
ranking, to rank `j` among).

Prices are $28.125 a chip-hour for tpu-v5p (1/128 of a dollar a chip-second, so every dollar
figure below is exact in binary) and none for gpu-h100."""

from __future__ import annotations

from datetime import date

import pyarrow as pa

from mpg.schemas import CHECKPOINT_ADVICE
from tests.support.given import SEMANTIC_LAYER, columns, database, ledger, records, row, rows, sums

D1, D2 = date(2026, 1, 1), date(2026, 1, 2)
SLICE = {
    "workload_class": "training",
    "framework": "jax",
    "chip_generation": "tpu-v5p",
    "chips_requested": 4,
}
PRICES = {"tpu-v5p": 28.125, "gpu-h100": None}  # dollars a chip-hour


def job_day(
    day: date, job: str, version: str, chip_time: tuple, ratios: tuple, generation: str = "tpu-v5p"
) -> dict:
    sg, rg, pg, mpg = ratios
    return {
        "day": day,
        "job_id": job,
        "metric_version": version,
        **SLICE,
        "chip_generation": generation,
        **sums(*chip_time),
        **{"sg": sg, "rg": rg, "pg": pg, "mpg": mpg},
    }


def _day_first(result: tuple) -> tuple:
    """A query's row in the order people read them: by day, the lifetime (day NULL) last, then
    by its other columns (the queries leave order to their readers)."""
    day, *rest = result
    return (day is None, day or D1, *rest)


# cost_rates: a row per generation, with its price (NULL: none)
RATES = [
    {"chip_generation": generation, "usd_per_chip_hour": price, "pue": 1.0, "pue_source": "test"}
    for generation, price in PRICES.items()
]


def priced(
    categories: dict[tuple[date, str, str], dict[str, float]], generations: dict[str, str]
) -> dict[str, list[dict]]:
    """chip_time_ledger and chip_time_cost (as a run prices the ledger: chip-hours x the price
    of the job's generation, NULL without one) from {(day, job, version): {category: chip_s}}."""
    ledger_rows, cost_rows = [], []
    for (day, job, version), chip_s_by_category in categories.items():
        generation = generations[job]
        price = PRICES[generation]
        for category, chip_s in chip_s_by_category.items():
            ledger_rows.append(ledger(day, job, category, chip_s, version))
            cost_rows.append(
                {
                    **ledger(day, job, category, chip_s, version),
                    "chip_generation": generation,
                    "usd": None if price is None else chip_s / 3600 * price,
                    "usd_per_chip_hour": price,
                    "pue": 1.0,
                }
            )
    return {"chip_time_ledger": ledger_rows, "chip_time_cost": cost_rows}


def test_job_goodput_gives_each_day_as_published_and_the_lifetime_as_ratios_of_sums() -> None:
    con = database(
        {
            "job_day_goodput": [
                # Day rows keep the published ratios, whatever they are (MPG 0.125, not
                # 36 / 128: not recomputed).
                job_day(D1, "j", "v1", (128, 96, 72, 36), (0.75, 0.75, 0.5, 0.125)),
                job_day(D2, "j", "v1", (256, 256, 192, None), (1.0, 0.75, None, None)),
                job_day(D1, "j", "v2", (1, 1, 1, 1), (1.0, 1.0, 1.0, 1.0)),
                job_day(D1, "k", "v1", (512, 256, 256, 128), (0.5, 1.0, 0.5, 0.25)),
                job_day(D1, "u", "v1", (1024, 0, 0, None), (0.0, None, None, 0.0), "gpu-h100"),
            ],
            **priced(
                {
                    (D1, "j", "v1"): {
                        "scheduling": 32,
                        "runtime_idle": 8,
                        "compile": 16,
                        "program_loss": 36,
                        "ideal": 36,
                    },
                    (D2, "j", "v1"): {"data_wait": 48, "init": 16, "productive_unprofiled": 192},
                    (D1, "j", "v2"): {"scheduling": 1000},
                    (D1, "k", "v1"): {"scheduling": 256, "program_loss": 128, "ideal": 128},
                    (D1, "u", "v1"): {"scheduling": 1024},
                },
                {"j": "tpu-v5p", "k": "tpu-v5p", "u": "gpu-h100"},
            ),
        },
        macros=SEMANTIC_LAYER,
    )
    params = {"job_id": "j", "metric_version": "v1"}
    slice_ = {"day": None, **SLICE}

    def lost(total: float, *parts: float) -> dict:
        """Lost chip-seconds: the total, then scheduling, runtime, program and unprofiled."""
        names = ("scheduling", "runtime", "program", "unprofiled")
        return {"lost_chip_s": total} | {
            f"lost_{n}_chip_s": p for n, p in zip(names, parts, strict=True)
        }

    def dollars(wanted: float, lost: float, *parts: float) -> dict:
        """Priced at $28.125 (nothing unpriced): wanted and lost dollars, lost's four parts."""
        names = ("scheduling", "runtime", "program", "unprofiled")
        return {
            "usd_per_chip_hour": 28.125,
            "unpriced_chip_s": 0.0,
            "wanted_usd": wanted,
            "lost_usd": lost,
        } | {f"lost_{n}_usd": p for n, p in zip(names, parts, strict=True)}

    # D1: lost 128 - 36 = 92 = scheduling 32 + runtime 8 + 16 + program 36; program_loss (36)
    # beats scheduling (32). Dollars: chip-seconds / 128. Shares of wanted 128: 96 -> 0.75,
    # 72 -> 0.5625, 36 -> 0.28125. Profiled 72 (it has a PG): coverage 1.
    d1 = slice_ | {"day": D1} | sums(128, 96, 72, 36) | {
        "profiled_chip_s": 72, "pg_coverage": 1.0, "sg": 0.75, "rg": 0.75, "pg": 0.5,
        "mpg": 0.125, "wanted_share": 1.0, "all_allocated_share": 0.75,
        "productive_share": 0.5625, "ideal_share": 0.28125,
    } | lost(92, 32, 24, 36, 0) | {"main_loss": "program_loss"} | dollars(
        1.0, 0.71875, 0.25, 0.1875, 0.28125, 0.0
    ) | {"rank": None, "jobs_ranked": None}  # fmt: skip
    # D2: no PG, no ideal: all 256 lost = runtime 48 + 16 + unprofiled 192 (the main loss);
    # profiled 0 of productive 192: coverage 0; ideal share 0 of 256.
    d2 = slice_ | {"day": D2} | sums(256, 256, 192, None) | {
        "profiled_chip_s": 0, "pg_coverage": 0.0, "sg": 1.0, "rg": 0.75, "pg": None,
        "mpg": None, "wanted_share": 1.0, "all_allocated_share": 1.0,
        "productive_share": 0.75, "ideal_share": 0.0,
    } | lost(256, 0, 64, 0, 192) | {"main_loss": "productive_unprofiled"} | dollars(
        2.0, 2.0, 0.0, 0.5, 0.0, 1.5
    ) | {"rank": None, "jobs_ranked": None}  # fmt: skip
    # Lifetime: sums wanted 384, all-allocated 352, productive 264, ideal 36 (NULL adds
    # nothing), profiled 72, and their ratios (MPG = ideal / wanted x productive / profiled);
    # lost 92 + 256 = 348, unprofiled's 192 the most;
    # $28.125 = $3 wanted x 3600 / 384 priced chip-s. Rank 2 of the 3 v1 jobs: k lost $3
    # (384 chip-s) > j's $2.71875; u lost the most chip-time (1024) but has no price: last.
    lifetime = slice_ | sums(384, 352, 264, 36) | {
        "profiled_chip_s": 72, "pg_coverage": 72 / 264, "sg": 352 / 384, "rg": 0.75, "pg": 0.5,
        "mpg": 36 / 384 * (264 / 72), "wanted_share": 1.0, "all_allocated_share": 352 / 384,
        "productive_share": 0.6875, "ideal_share": 0.09375,
    } | lost(348, 32, 88, 36, 192) | {"main_loss": "productive_unprofiled"} | dollars(
        3.0, 2.71875, 0.25, 0.6875, 0.28125, 1.5
    ) | {"rank": 2, "jobs_ranked": 3}  # fmt: skip
    # every column, in the order written above
    assert columns(con, "explain/job_goodput.sql", **params) == list(d1)
    got = records(con, "explain/job_goodput.sql", **params)
    assert sorted(got, key=lambda r: _day_first(tuple(r.values()))) == [d1, d2, lifetime]
    unknown = {"job_id": "nobody", "metric_version": "v1"}
    assert rows(con, "explain/job_goodput.sql", **unknown) == []


def test_job_ledger_gives_each_day_and_the_lifetime_per_category() -> None:
    con = database(
        {
            "chip_time_ledger": [
                ledger(D1, "j", "scheduling", 16),
                ledger(D1, "j", "ideal", 48),
                ledger(D2, "j", "ideal", 48),
                ledger(D2, "j", "compile", 16),
                ledger(D1, "j", "ideal", 1000, "v2"),
                ledger(D1, "k", "ideal", 1000),
            ]
        },
        macros=["publish/macros.sql"],
    )
    params = {"job_id": "j", "metric_version": "v1"}
    assert columns(con, "explain/job_ledger.sql", **params) == [
        "day", "category", "chip_s", "share"
    ]  # fmt: skip
    # Shares of the day's wanted chip-time (its rows' sum: 64 each day, 128 in all).
    assert sorted(rows(con, "explain/job_ledger.sql", **params), key=_day_first) == [
        (D1, "ideal", 48, 0.75),
        (D1, "scheduling", 16, 0.25),
        (D2, "compile", 16, 0.25),
        (D2, "ideal", 48, 0.75),
        (None, "compile", 16, 0.125),
        (None, "ideal", 48 + 48, 0.75),
        (None, "scheduling", 16, 0.125),
    ]


def test_job_checkpoint_advice_is_the_jobs_one_row() -> None:
    def advice(job: str, saved: float, generation: str = "tpu-v5p") -> dict:
        """A row with every required column set (this query picks rows; their values pass)."""
        zero = {pa.float64(): 0.0, pa.int64(): 0, pa.string(): "", pa.date32(): D1}
        required = {f.name: zero[f.type] for f in CHECKPOINT_ADVICE if not f.nullable}
        return {
            **required, "day": D2, "job_id": job, **SLICE, "chip_generation": generation,
            "chip_hours_saved": saved,
        }  # fmt: skip

    con = database(
        {
            "checkpoint_advice": [advice("j", 1.5), advice("k", 9.0), advice("u", 2.5, "gpu-h100")],
            "cost_rates": RATES,
        },
        macros=SEMANTIC_LAYER,
    )
    # j's saving priced: 1.5 chip-hours x $28.125 = $42.1875
    assert records(con, "explain/job_checkpoint_advice.sql", job_id="j") == [
        row("checkpoint_advice", advice("j", 1.5))
        | {"usd_per_chip_hour": 28.125, "usd_saved": 42.1875}
    ]
    # u's generation has no price: its saving has no dollars (NULL, not 0)
    assert records(con, "explain/job_checkpoint_advice.sql", job_id="u") == [
        row("checkpoint_advice", advice("u", 2.5, "gpu-h100"))
        | {"usd_per_chip_hour": None, "usd_saved": None}
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
