"""Each query of sql/compare/ (what `mpg compare` reads of the semantic layer's roll-up) on small
given tables: every row it gives, worked out by hand.

The fleet: job `a` (training, jax, tpu-v5p, team ml) on both days; job `s` (serving, jax,
tpu-v5p, team web) on D1 only, all its productive time unprofiled; job `u` (training, jax,
gpu-h100, no team) scheduled out entirely on D1 and D3, its generation unpriced; and a v2 row on
D4 to be left out. The base period is D1, the current one D2.

tpu-v5p costs $28.125 a chip-hour (1/128 of a dollar a chip-second, so every dollar figure below
is exact in binary); gpu-h100 has no price."""

from __future__ import annotations

from datetime import date

from tests.support.given import SEMANTIC_LAYER, columns, database, ledger, records, rows

D1, D2, D3, D4 = (date(2026, 1, d) for d in (1, 2, 3, 4))
PRICES = {"tpu-v5p": 28.125, "gpu-h100": None}  # dollars a chip-hour
JOBS = {  # job: (workload_class, chip_generation, team)
    "a": ("training", "tpu-v5p", "ml"),
    "s": ("serving", "tpu-v5p", "web"),
    "u": ("training", "gpu-h100", None),
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
        workload, generation, team = JOBS[job]
        job_days.append(
            {
                "day": day,
                "job_id": job,
                "metric_version": version,
                "workload_class": workload,
                "framework": "jax",
                "chip_generation": generation,
                "chips_requested": 4,
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
            costs.append(
                {
                    **ledger(day, job, category, chip_s, version),
                    "chip_generation": generation,
                    "usd": None if price is None else chip_s / 3600 * price,
                    "usd_per_chip_hour": price,
                    "pue": 1.0,
                }
            )
    return {"job_day_goodput": job_days, "chip_time_ledger": ledgers, "chip_time_cost": costs}


def fleet_database():
    return database(fleet_tables(), macros=SEMANTIC_LAYER)


def test_days_with_data_gives_the_versions_days_in_the_range() -> None:
    con = database(fleet_tables())
    assert columns(con, "compare/days_with_data.sql", metric_version="v1", first=D1, last=D4) == [
        "day"
    ]
    # D4 has only a v2 row; D2 is a's alone, once however many jobs a day has
    assert rows(con, "compare/days_with_data.sql", metric_version="v1", first=D1, last=D4) == [
        (D1,),
        (D2,),
        (D3,),
    ]
    assert rows(con, "compare/days_with_data.sql", metric_version="v1", first=D2, last=D3) == [
        (D2,),
        (D3,),
    ]
    assert rows(con, "compare/days_with_data.sql", metric_version="v2", first=D1, last=D3) == []


def test_period_slices_gives_the_fleet_each_finest_slice_and_each_team() -> None:
    con = fleet_database()
    keys = ("slice_kind", "workload_class", "framework", "chip_generation", "team")

    def slice_(kind: str, workload: str | None, generation: str | None, team: str | None,
               sums: tuple, profiled: float, ratios: tuple, lost: float, usd: float | None,
               ) -> dict:  # fmt: skip
        framework = None if workload is None else "jax"
        wanted, allocated, productive, ideal = sums
        pg_coverage, sg, rg, pg, mpg = ratios
        return dict(zip(keys, (kind, workload, framework, generation, team), strict=True)) | {
            "wanted_chip_s": wanted, "all_allocated_chip_s": allocated,
            "productive_chip_s": productive, "ideal_chip_s": ideal, "profiled_chip_s": profiled,
            "sg": sg, "rg": rg, "pg": pg, "pg_coverage": pg_coverage, "mpg": mpg,
            "lost_chip_s": lost, "lost_usd": usd,
        }  # fmt: skip

    # a on D1: wanted 128, all-allocated 96, productive 96 all profiled, ideal 64: coverage 1,
    # SG 0.75, RG 1, PG 64/96, MPG 64/128 x 96/96 = 0.5; lost 32 + 32 = 64 chip-s = $0.5.
    a = ((128, 96, 96, 64), 96, (1.0, 0.75, 1.0, 64 / 96, 0.5), 64, 0.5)
    # s: no PG, so profiled 0 (coverage 0), no ideal (0 here), PG and MPG NULL; all 128 lost
    # as unprofiled time, $1.
    s = ((128, 128, 128, 0), 0, (0.0, 1.0, 1.0, None, None), 128, 1.0)
    # u: nothing allocated: SG 0, RG, PG and coverage NULL, MPG 0 (wanted, nothing kept); its
    # 256 chip-s lost to scheduling have no price: dollars NULL.
    u = ((256, 0, 0, 0), 0, (None, 0.0, None, None, 0.0), 256, None)
    # The fleet: wanted 128 + 128 + 256 = 512, all-allocated 96 + 128 = 224, productive 224,
    # ideal 64, profiled 96 (a's): SG 224/512 = 0.4375, RG 1, PG 64/96, coverage 96/224,
    # MPG 64/512 x 224/96; lost 64 + 128 + 256 = 448, dollars $0.5 + $1 (u's unpriced).
    fleet = (
        (512, 224, 224, 64), 96, (96 / 224, 0.4375, 1.0, 64 / 96, 64 / 512 * (224 / 96)),
        448, 1.5,
    )  # fmt: skip
    params = {"metric_version": "v1", "first": D1, "last": D1}
    expected = [
        slice_("fleet", None, None, None, *fleet),
        # teams: u's NULL team first, a team of its own
        slice_("team", None, None, None, *u),
        slice_("team", None, None, "ml", *a),
        slice_("team", None, None, "web", *s),
        slice_("workload_class+framework+chip_generation", "serving", "tpu-v5p", None, *s),
        slice_("workload_class+framework+chip_generation", "training", "gpu-h100", None, *u),
        slice_("workload_class+framework+chip_generation", "training", "tpu-v5p", None, *a),
    ]
    assert columns(con, "compare/period_slices.sql", **params) == list(expected[0])
    assert records(con, "compare/period_slices.sql", **params) == expected
    # D2 is a's alone: the fleet, a's team and a's slice are all a's D2 (wanted 256, all
    # allocated, productive 192, ideal 128: SG 1, RG 0.75, PG 128/192, MPG 0.5; lost 64 + 64 =
    # 128 chip-s = $1).
    a2 = ((256, 256, 192, 128), 192, (1.0, 1.0, 0.75, 128 / 192, 0.5), 128, 1.0)
    current = {"metric_version": "v1", "first": D2, "last": D2}
    assert records(con, "compare/period_slices.sql", **current) == [
        slice_("fleet", None, None, None, *a2),
        slice_("team", None, None, "ml", *a2),
        slice_("workload_class+framework+chip_generation", "training", "tpu-v5p", None, *a2),
    ]
