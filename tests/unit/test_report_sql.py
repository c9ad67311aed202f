"""The queries of sql/report/ that compute the report's figures, on small given tables: every row
each gives, worked out by hand. Most read tests/support/given_fleet.py's fleet (jobs a, s and u;
a chip-second of tpu-v5p costs $1/128, gpu-h100's nothing known); the others their own rows."""

from __future__ import annotations

from datetime import date

from mpg.report.data import WATERFALL_LOSSES
from tests.support.given import SEMANTIC_LAYER, columns, database, ledger, rows, sums
from tests.support.given_fleet import D1, D2, D3, D4, fleet_database

D5 = date(2026, 1, 5)
V1 = {"metric_version": "v1"}

# A day's cell of the fleet: (wanted, sg, rg, pg, pg_coverage, mpg), by hand from given_fleet.
# a on D1: wanted 128, all-allocated 96, productive 96 (all profiled), ideal 64.
A1 = (128, 0.75, 1.0, 64 / 96, 1.0, 0.5)
# a on D2: 256, 256, 192 (all profiled), ideal 128: MPG 128/256 x 192/192.
A2 = (256, 1.0, 0.75, 128 / 192, 1.0, 0.5)
# s on D1: 128, 128, 128, no PG: coverage 0, PG and MPG NULL.
S1 = (128, 1.0, 1.0, None, 0.0, None)
# u (D1 and D3): 256 wanted, none allocated: SG 0, MPG 0 (nothing kept), the rest NULL.
U = (256, 0.0, None, None, None, 0.0)
# a + s on D1 (tpu-v5p): 256, 224, 224, ideal 64, profiled 96.
AS1 = (256, 0.875, 1.0, 64 / 96, 96 / 224, 64 / 256 * (224 / 96))
# a + u on D1 (training): 384, 96, 96, ideal 64, profiled 96.
AU1 = (384, 0.25, 1.0, 64 / 96, 1.0, 64 / 384)
# the fleet on D1: 512, 224, 224, ideal 64, profiled 96.
FLEET1 = (512, 0.4375, 1.0, 64 / 96, 96 / 224, 64 / 512 * (224 / 96))


def test_headline_gives_the_fleet_and_each_generation_per_day() -> None:
    def cell(day: date, version: str, workload: str | None, generation: str | None) -> dict:
        # the headline passes rows through: each row's wanted chip-s tells it apart
        wanted = {None: 1.0, "tpu-v5p": 2.0, "gpu-h100": 4.0}[generation] + (workload is not None)
        return {
            "day": day, "metric_version": version, "workload_class": workload,
            "framework": None, "chip_generation": generation, "wanted_chip_s": wanted,
            "all_allocated_chip_s": 0.0, "productive_chip_s": 0.0, "sg": wanted / 8,
            "rg": 0.5, "pg": None, "pg_coverage": 0.25, "mpg": 0.0,
        }  # fmt: skip

    con = database(
        {
            "goodput_by_slice": [
                cell(D2, "v1", None, "tpu-v5p"),
                cell(D1, "v1", None, "gpu-h100"),
                cell(D1, "v1", None, None),
                cell(D1, "v1", "training", None),  # a workload's row: not the headline's
                cell(D1, "v1", "training", "tpu-v5p"),
                cell(D2, "v1", None, None),
                cell(D1, "v0", None, None),
            ]
        }
    )
    assert columns(con, "report/headline.sql") == [
        "day", "metric_version", "chip_generation", "wanted_chip_s", "sg", "rg", "pg",
        "pg_coverage", "mpg",
    ]  # fmt: skip
    # by version, day, the fleet (generation NULL) first
    assert rows(con, "report/headline.sql") == [
        (D1, "v0", None, 1.0, 0.125, 0.5, None, 0.25, 0.0),
        (D1, "v1", None, 1.0, 0.125, 0.5, None, 0.25, 0.0),
        (D1, "v1", "gpu-h100", 4.0, 0.5, 0.5, None, 0.25, 0.0),
        (D2, "v1", None, 1.0, 0.125, 0.5, None, 0.25, 0.0),
        (D2, "v1", "tpu-v5p", 2.0, 0.25, 0.5, None, 0.25, 0.0),
    ]


def test_slice_days_gives_the_fleet_and_each_slice_value_per_day() -> None:
    con = fleet_database()
    params = V1 | {"first": D1, "last": D4}
    assert columns(con, "report/slice_days.sql", **params) == [
        "day", "slice_kind", "slice", "wanted_chip_s", "sg", "rg", "pg", "pg_coverage", "mpg",
        "kwh", "unpowered_chip_s",
    ]  # fmt: skip

    def day(when: date, kind: str, slice_: str, cell: tuple) -> tuple:
        wanted, sg, rg, pg, coverage, mpg = cell
        # no board power given: no kWh, every wanted chip-second unpowered
        return (when, kind, slice_, wanted, sg, rg, pg, coverage, mpg, None, wanted)

    # by slice kind, slice, day; D4 (v2 only) in none; every job is jax, so jax is the fleet
    assert rows(con, "report/slice_days.sql", **params) == [
        day(D1, "chip_generation", "gpu-h100", U),
        day(D3, "chip_generation", "gpu-h100", U),
        day(D1, "chip_generation", "tpu-v5p", AS1),
        day(D2, "chip_generation", "tpu-v5p", A2),
        day(D1, "fleet", "fleet", FLEET1),
        day(D2, "fleet", "fleet", A2),
        day(D3, "fleet", "fleet", U),
        day(D1, "framework", "jax", FLEET1),
        day(D2, "framework", "jax", A2),
        day(D3, "framework", "jax", U),
        day(D1, "workload_class", "serving", S1),
        day(D1, "workload_class", "training", AU1),
        day(D2, "workload_class", "training", A2),
        day(D3, "workload_class", "training", U),
    ]
    # an open start and end: the same rows
    open_ended = V1 | {"first": None, "last": None}
    assert rows(con, "report/slice_days.sql", **open_ended) == rows(
        con, "report/slice_days.sql", **params
    )


def test_size_class_days_gives_each_size_class_per_day_in_size_order() -> None:
    con = fleet_database()
    params = V1 | {"first": D1, "last": D3}
    assert columns(con, "report/size_class_days.sql", **params) == [
        "day", "size_class", "size_order", "jobs", "wanted_chip_s", "pg_coverage", "sg", "rg",
        "pg", "mpg",
    ]  # fmt: skip

    def day(when: date, size_class: str, order: int, cell: tuple) -> tuple:
        wanted, sg, rg, pg, coverage, mpg = cell
        return (when, size_class, order, 1, wanted, coverage, sg, rg, pg, mpg)

    # s has 1 chip (class 1), a 4 (2-8), u 512 (65-512); one job each a day
    assert rows(con, "report/size_class_days.sql", **params) == [
        day(D1, "1", 1, S1),
        day(D1, "2-8", 2, A1),
        day(D2, "2-8", 2, A2),
        day(D1, "65-512", 4, U),
        day(D3, "65-512", 4, U),
    ]


def test_coverage_drops_flags_days_whose_coverage_fell_more_than_the_drop() -> None:
    def job_day(day: date, job: str, productive: float, profiled: bool) -> dict:
        return {
            "day": day, "job_id": job, "metric_version": "v1", "workload_class": "training",
            "framework": "jax", "chip_generation": "tpu-v5p", "chips_requested": 4,
            **sums(productive, productive, productive, productive if profiled else None),
            "pg": 1.0 if profiled else None,
        }  # fmt: skip

    con = database(
        {
            "job_day_goodput": [
                job_day(D1, "a", 100, True),  # coverage 1
                job_day(D2, "a", 128, True),  # 128 / 256 = 0.5: fell 0.5, not more
                job_day(D2, "b", 128, False),
                job_day(D3, "a", 64, True),  # 1 (rose)
                job_day(D4, "b", 0, False),  # no productive time: no coverage, skipped
                job_day(D5, "a", 64, True),  # 64 / 256 = 0.25: fell 0.75 from D3's
                job_day(D5, "b", 192, False),
            ]
        },
        macros=SEMANTIC_LAYER,
    )
    params = V1 | {"first": D1, "last": D5, "drop": 0.5}
    assert columns(con, "report/coverage_drops.sql", **params) == [
        "day", "pg_coverage", "previous_day", "previous_pg_coverage", "change"
    ]  # fmt: skip
    assert rows(con, "report/coverage_drops.sql", **params) == [(D5, 0.25, D3, 1.0, -0.75)]
    # a smaller drop flags D2 too; a period from D5 has no day before D5 to fall from
    assert rows(con, "report/coverage_drops.sql", **params | {"drop": 0.25}) == [
        (D2, 0.5, D1, 1.0, -0.5),
        (D5, 0.25, D3, 1.0, -0.75),
    ]
    assert rows(con, "report/coverage_drops.sql", **params | {"first": D5}) == []


def test_ledger_waterfall_steps_down_from_wanted_to_ideal() -> None:
    hour = 3600.0
    # one job-day of 8 chip-hours: scheduling 2, compile 0.5, unprofiled 0.25, program loss 1,
    # ideal 4.25; a v2 row and a row without a job-day (not in the layer's ledger) left out
    con = database(
        {
            "job_day_goodput": [
                {"day": D1, "job_id": "a", "metric_version": v, "workload_class": "training",
                 "framework": "jax", "chip_generation": "tpu-v5p", "chips_requested": 4,
                 **sums(8 * hour, 6 * hour, 5.25 * hour, 4.25 * hour)}
                for v in ("v1", "v2")
            ],
            "chip_time_ledger": [
                ledger(D1, "a", "scheduling", 2 * hour),
                ledger(D1, "a", "compile", 0.5 * hour),
                ledger(D1, "a", "productive_unprofiled", 0.25 * hour),
                ledger(D1, "a", "program_loss", 1 * hour),
                ledger(D1, "a", "ideal", 4.25 * hour),
                ledger(D1, "a", "ideal", 64 * hour, "v2"),
                ledger(D2, "a", "scheduling", 64 * hour),
            ],
        },
        macros=SEMANTIC_LAYER,
    )  # fmt: skip
    params = V1 | {"first": D1, "last": D2, "losses": list(WATERFALL_LOSSES)}
    assert columns(con, "report/ledger_waterfall.sql", **params) == [
        "bar", "category", "chip_h", "bar_start", "bar_end", "share"
    ]  # fmt: skip
    # (bar, category, chip-hours, from, to, share of 8): each loss in WATERFALL_LOSSES' order
    # takes its chip-hours off what is left (0 for those with none)
    assert rows(con, "report/ledger_waterfall.sql", **params) == [
        (0, "wanted", 8.0, 8.0, 0.0, 1.0),
        (1, "scheduling", 2.0, 8.0, 6.0, 0.25),
        (2, "runtime_idle", 0.0, 6.0, 6.0, 0.0),
        (3, "data_wait", 0.0, 6.0, 6.0, 0.0),
        (4, "init", 0.0, 6.0, 6.0, 0.0),
        (5, "compile", 0.5, 6.0, 5.5, 0.0625),
        (6, "checkpoint_restore", 0.0, 5.5, 5.5, 0.0),
        (7, "checkpoint_save", 0.0, 5.5, 5.5, 0.0),
        (8, "lost_progress", 0.0, 5.5, 5.5, 0.0),
        (9, "productive_unprofiled", 0.25, 5.5, 5.25, 0.03125),
        (10, "program_loss", 1.0, 5.25, 4.25, 0.125),
        (11, "ideal", 4.25, 4.25, 0.0, 0.53125),
    ]
