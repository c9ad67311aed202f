"""The small priced fleet of the given/expect tests of sql/compare/ and sql/report/: three jobs
over four days, each job-day with its ledger and what a run would price it at.

Job `a` (training, jax, tpu-v5p, team ml, 4 chips) runs on D1 and D2; job `s` (serving, jax,
tpu-v5p, team web, 1 chip) on D1 only, all its productive time unprofiled; job `u` (training,
jax, gpu-h100, no team, 512 chips) is scheduled out entirely on D1 and D3, its generation
unpriced; a v2 row on D4 is there to be left out. tpu-v5p costs $28.125 a chip-hour (1/128 of a
dollar a chip-second, so every dollar figure is exact in binary); gpu-h100 has no price."""

from __future__ import annotations

from datetime import date

import duckdb

from tests.support.given import SEMANTIC_LAYER, cost, database, ledger

D1, D2, D3, D4 = (date(2026, 1, d) for d in (1, 2, 3, 4))
PRICES = {"tpu-v5p": 28.125, "gpu-h100": None}  # dollars a chip-hour
JOBS = {  # job: (workload_class, chip_generation, team, chips_requested: its size class)
    "a": ("training", "tpu-v5p", "ml", 4),
    "s": ("serving", "tpu-v5p", "web", 1),
    "u": ("training", "gpu-h100", None, 512),
}
# (day, job, version): ((wanted, all_allocated, productive, ideal), {category: chip_s})
FLEET = {
    (D1, "a", "v1"): ((128, 96, 96, 64), {"scheduling": 32, "program_loss": 32, "ideal": 64}),
    (D2, "a", "v1"): ((256, 256, 192, 128), {"compile": 64, "program_loss": 64, "ideal": 128}),
    (D1, "s", "v1"): ((128, 128, 128, None), {"productive_unprofiled": 128}),
    (D1, "u", "v1"): ((256, 0, 0, None), {"scheduling": 256}),
    (D3, "u", "v1"): ((256, 0, 0, None), {"scheduling": 256}),
    (D4, "a", "v2"): ((8, 8, 8, 8), {"ideal": 8}),
}


def fleet_tables() -> dict[str, list[dict]]:
    """job_day_goodput, chip_time_ledger and chip_time_cost (as a run prices the ledger:
    chip-hours x the price of the job's generation, NULL without one) of FLEET."""
    job_days, ledgers, costs = [], [], []
    for (day, job, version), ((wanted, allocated, productive, ideal), parts) in FLEET.items():
        workload, generation, team, chips = JOBS[job]
        job_days.append(
            {
                "day": day,
                "job_id": job,
                "metric_version": version,
                "workload_class": workload,
                "framework": "jax",
                "chip_generation": generation,
                "chips_requested": chips,
                "wanted_chip_s": wanted,
                "all_allocated_chip_s": allocated,
                "productive_chip_s": productive,
                "ideal_chip_s": ideal,
                # only whether PG is NULL reaches these queries (profiled time)
                "pg": None if ideal is None else ideal / productive,
                "team": team,
            }
        )
        price = PRICES[generation]
        for category, chip_s in parts.items():
            ledgers.append(ledger(day, job, category, chip_s, version))
            costs.append(cost(day, job, category, chip_s, generation, price, version))
    return {"job_day_goodput": job_days, "chip_time_ledger": ledgers, "chip_time_cost": costs}


def fleet_database() -> duckdb.DuckDBPyConnection:
    """The fleet's tables with the semantic layer's macros over them."""
    return database(fleet_tables(), macros=SEMANTIC_LAYER)
