"""The queries of sql/report/ that compute the report's figures, on small given tables: every row
each gives, worked out by hand. Most read tests/support/given_fleet.py's fleet (jobs a, s and u;
a chip-second of tpu-v5p costs $1/128, gpu-h100's nothing known); the others their own rows."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import duckdb
import pyarrow as pa

from mpg.report.data import WATERFALL_LOSSES
from mpg.schemas import CHECKPOINT_ADVICE, SCHEDULER_EVENTS
from mpg.sql.files import load_sql
from tests.support.given import SEMANTIC_LAYER, columns, cost, database, ledger, records, rows, sums
from tests.support.given_fleet import D1, D2, D3, D4, PRICES, fleet_database, fleet_tables

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
    con = hours_ledger()
    params = V1 | {"first": D1, "last": D2, "losses": list(WATERFALL_LOSSES)}
    assert columns(con, "report/ledger_waterfall.sql", **params) == [
        "bar", "category", "chip_h", "bar_start", "bar_end", "share"
    ]  # fmt: skip
    # (bar, category, chip-hours, from, to, share of 32): each loss in WATERFALL_LOSSES' order
    # takes its chip-hours off what is left (0 for those with none); ideal is what is left
    assert rows(con, "report/ledger_waterfall.sql", **params) == [
        (0, "wanted", 32.0, 32.0, 0.0, 1.0),
        (1, "scheduling", 18.0, 32.0, 14.0, 0.5625),
        (2, "runtime_idle", 0.0, 14.0, 14.0, 0.0),
        (3, "data_wait", 0.0, 14.0, 14.0, 0.0),
        (4, "init", 0.0, 14.0, 14.0, 0.0),
        (5, "compile", 0.5, 14.0, 13.5, 0.015625),
        (6, "checkpoint_restore", 0.0, 13.5, 13.5, 0.0),
        (7, "checkpoint_save", 0.0, 13.5, 13.5, 0.0),
        (8, "lost_progress", 0.0, 13.5, 13.5, 0.0),
        (9, "productive_unprofiled", 0.0, 13.5, 13.5, 0.0),
        (10, "program_loss", 0.0, 13.5, 13.5, 0.0),
        (11, "ideal", 13.5, 13.5, 0.0, 0.421875),
    ]


def pick(records_: list[dict], keys: tuple[str, ...]) -> list[tuple]:
    """Some columns of each row (the roll-up's dozens of others are the layer's, tested there)."""
    return [tuple(r[k] for k in keys) for r in records_]


# The fleet's figures by job (chip-s lost, $ lost, MPG), from given_fleet by hand:
#   a on D1 lost 32 scheduling + 32 program = 64 chip-s ($0.5), MPG 0.5; on D2 64 compile + 64
#   program = 128 ($1), MPG 0.5, main loss compile (tied with program loss: the first named);
#   s on D1 lost 128 unprofiled ($1); u on D1 (and D3) 256 scheduling (no dollars).
MPG_D1 = 64 / 512 * (224 / 96)  # the fleet's D1 (FLEET1)


def test_scorecard_gives_each_slice_beside_the_previous_period() -> None:
    con = fleet_database()
    keys = (
        "slice_kind", "kind_order", "slice", "rank", "jobs", "lost_chip_s", "lost_usd", "mpg",
        "main_loss", "period_days", "previous_first", "previous_last", "previous_days",
        "previous_complete", "previous_lost_chip_s", "previous_lost_usd", "previous_mpg",
        "mpg_change", "lost_usd_change", "lost_chip_s_change",
    )  # fmt: skip
    got = records(con, "report/scorecard.sql", **V1, first=D2, last=D2)

    # D2 is a's alone: every slice a's D2 (1 job, 128 lost, $1, MPG 0.5, compile); the
    # previous period is D1, complete (1 day of 1); changes are D2's less D1's.
    def slice_(kind: str, order: int, value: str | None, lost: float, usd: float,
               mpg: float) -> tuple:  # fmt: skip
        return (
            kind, order, value, 1, 1, 128, 1.0, 0.5, "compile", 1, D1, D1, 1, True,
            lost, usd, mpg, 0.5 - mpg, 1.0 - usd, 128 - lost,
        )  # fmt: skip

    assert pick(got, keys) == [
        # D1's fleet: lost 64 + 128 + 256 = 448, $1.5
        slice_("fleet", 0, "fleet", 448, 1.5, MPG_D1),
        # tpu-v5p on D1: a + s, 192 lost, $1.5, MPG AS1's
        slice_("chip_generation", 1, "tpu-v5p", 192, 1.5, 64 / 256 * (224 / 96)),
        # training on D1: a + u, 320 lost, $0.5, MPG AU1's
        slice_("workload_class", 2, "training", 320, 0.5, 64 / 384),
        slice_("framework", 3, "jax", 448, 1.5, MPG_D1),
        # a alone in its size class (2-8) and team (ml) on D1
        slice_("size_class", 4, "2-8", 64, 0.5, 0.5),
        slice_("team", 5, "ml", 64, 0.5, 0.5),
        # no queue or owner named: one NULL slice of each, the whole fleet
        slice_("queue", 6, None, 448, 1.5, MPG_D1),
        slice_("owner", 7, None, 448, 1.5, MPG_D1),
    ]
    # D1's previous period (D0) has no days: not complete, no changes; D1's slices ranked by
    # dollars lost, the unpriced (gpu-h100) after the priced
    got = records(con, "report/scorecard.sql", **V1, first=D1, last=D1)
    keys = ("slice_kind", "slice", "rank", "lost_usd", "previous_days", "previous_complete",
            "previous_lost_usd", "mpg_change", "lost_chip_s_change")  # fmt: skip
    generations = [r for r in pick(got, keys) if r[0] == "chip_generation"]
    assert generations == [
        ("chip_generation", "tpu-v5p", 1, 1.5, 0, False, None, None, None),
        ("chip_generation", "gpu-h100", 2, None, 0, False, None, None, None),
    ]


def test_worst_jobs_gives_the_fleets_worst_and_each_slices() -> None:
    con = fleet_database()
    keys = (
        "job_id", "rank", "priced", "priced_rank", "chip_generation_rank",
        "workload_class_rank", "framework_rank", "team_rank", "lost_chip_s", "lost_usd",
        "main_loss", "attainable_pg", "attainable_jobs", "recoverable_chip_s", "recoverable_usd",
    )  # fmt: skip
    period = V1 | {"first": D1, "last": D2}
    # Over D1..D2: a lost 64 + 128 = 192 chip-s ($1.5), main loss program (32 + 64 = 96 beats
    # compile's 64 and scheduling's 32); s 128 ($1), unprofiled; u 256 (no price: after the
    # priced, first of the unpriced). No group has 5 jobs with a PG: nothing attainable, nothing
    # recoverable ($0 where priced, NULL for u).
    a = ("a", 1, True, 1, 1, 1, 1, 1, 192, 1.5, "program_loss", None, 1, 0.0, 0.0)
    s = ("s", 2, True, 2, 2, 1, 2, 1, 128, 1.0, "productive_unprofiled", None, 0, 0.0, 0.0)
    u = ("u", 3, False, 1, 1, 2, 3, 1, 256, None, "scheduling", None, 0, 0.0, None)

    def worst(fleet_limit: int, slice_limit: int) -> list[tuple]:
        limits = {"fleet_limit": fleet_limit, "slice_limit": slice_limit}
        return pick(records(con, "report/worst_jobs.sql", **period, **limits), keys)

    assert worst(2, 0) == [a, s, u]  # the two worst priced, the worst unpriced
    assert worst(1, 0) == [a, u]
    # s is the worst of its workload class (serving), u of its generation and team
    assert worst(0, 1) == [a, s, u]
    assert worst(0, 0) == []


def test_teams_gives_each_team_and_queue_with_its_ledger() -> None:
    con = fleet_database()
    keys = (
        "slice_kind", "slice", "rank", "lost_usd", "previous_lost_usd", "lost_usd_change",
        "scheduling_chip_s", "compile_chip_s", "program_loss_chip_s",
        "productive_unprofiled_chip_s", "all_allocated_chip_s",
    )  # fmt: skip
    got = records(con, "report/teams.sql", **V1, first=D1, last=D1)
    # D1's teams by dollars lost: web (s: $1, 128 unprofiled), ml (a: $0.5, 32 scheduling,
    # 32 program loss, 96 allocated), then none named (u: unpriced, 256 scheduling); then the
    # one queue (none named: the fleet). The day before D1 has no data: no change.
    assert pick(got, keys) == [
        ("team", "web", 1, 1.0, None, None, 0, 0, 0, 128, 128),
        ("team", "ml", 2, 0.5, None, None, 32, 0, 32, 0, 96),
        ("team", None, 3, None, None, None, 256, 0, 0, 0, 0),
        ("queue", None, 1, 1.5, None, None, 288, 0, 32, 128, 224),
    ]
    # D2 beside a complete D1: ml lost $1 against $0.5
    got = records(con, "report/teams.sql", **V1, first=D2, last=D2)
    assert pick(got, keys) == [
        ("team", "ml", 1, 1.0, 0.5, 0.5, 0, 64, 64, 0, 256),
        ("queue", None, 1, 1.0, 1.5, -0.5, 0, 64, 64, 0, 256),
    ]


def test_period_rollup_gives_the_fleet_and_each_slice_value_with_its_share() -> None:
    con = fleet_database()
    keys = (
        "slice_kind", "slice", "jobs", "wanted_chip_s", "lost_chip_s", "lost_usd",
        "unpriced_chip_s", "mpg", "wanted_share", "mpg_wanted_chip_s", "main_loss",
    )  # fmt: skip
    got = records(con, "report/period_rollup.sql", **V1, first=D1, last=D1)
    assert "day" not in got[0] and "job_id" not in got[0] and "chips_requested" not in got[0]
    mpg_tpu = 64 / 256 * (224 / 96)  # AS1's
    # D1 of 512 wanted chip-s; by slice kind, then value. Main losses: u's 256 scheduling, s's
    # 128 unprofiled, a's 32 scheduling tied with 32 program loss (scheduling: named first).
    assert pick(got, keys) == [
        ("chip_generation", "gpu-h100", 1, 256, 256, None, 256, 0.0, 0.5, 0.0, "scheduling"),
        ("chip_generation", "tpu-v5p", 2, 256, 192, 1.5, 0, mpg_tpu, 0.5, mpg_tpu * 256,
         "productive_unprofiled"),
        ("fleet", "fleet", 3, 512, 448, 1.5, 256, MPG_D1, 1.0, MPG_D1 * 512, "scheduling"),
        ("framework", "jax", 3, 512, 448, 1.5, 256, MPG_D1, 1.0, MPG_D1 * 512, "scheduling"),
        ("size_class", "1", 1, 128, 128, 1.0, 0, None, 0.25, None, "productive_unprofiled"),
        ("size_class", "2-8", 1, 128, 64, 0.5, 0, 0.5, 0.25, 64.0, "scheduling"),
        ("size_class", "65-512", 1, 256, 256, None, 256, 0.0, 0.5, 0.0, "scheduling"),
        ("workload_class", "serving", 1, 128, 128, 1.0, 0, None, 0.25, None,
         "productive_unprofiled"),
        ("workload_class", "training", 2, 384, 320, 0.5, 256, 64 / 384, 0.75, 64 / 384 * 384,
         "scheduling"),
    ]  # fmt: skip


def test_queue_waiting_gives_each_queue_and_size_class() -> None:
    con = fleet_database()
    params = V1 | {"first": D1, "last": D2}
    assert columns(con, "report/queue_waiting.sql", **params) == [
        "metric_version", "queue", "size_class", "size_rank", "jobs", "jobs_waiting",
        "wanted_chip_s", "waiting_chip_s", "waiting_share", "waiting_usd", "unpriced_chip_s",
        "interrupted_chip_s", "wait_median_s", "wait_p90_s", "wait_max_s", "sg",
    ]  # fmt: skip
    # One queue (none named). Over D1..D2 each job waits its scheduling chip-time over its
    # chips: a 32 / 4 = 8 s (of 384 wanted, 352 allocated, $0.25), s 0 (128, all allocated),
    # u 256 / 512 = 0.5 s (256 wanted, none allocated, unpriced). Nearest rank over the three
    # waits 0, 0.5, 8: the median is the 2nd, the 90th percentile the 3rd.
    assert rows(con, "report/queue_waiting.sql", **params) == [
        ("v1", None, None, None, 3, 2, 768, 288, 0.375, 0.25, 256, 0, 0.5, 8.0, 8.0, 0.625),
        ("v1", None, "1", 1, 1, 0, 128, 0, 0.0, 0.0, 0, 0, 0.0, 0.0, 0.0, 1.0),
        ("v1", None, "2-8", 2, 1, 1, 384, 32, 32 / 384, 0.25, 0, 0, 8.0, 8.0, 8.0, 352 / 384),
        ("v1", None, "65-512", 4, 1, 1, 256, 256, 1.0, None, 256, 0, 0.5, 0.5, 0.5, 0.0),
    ]


def test_step_outliers_ranks_job_days_of_enough_steps_by_slow_step_share() -> None:
    def stats(day: date, job: str, steps: int, share: float | None, slow: float) -> dict:
        return {
            "day": day, "job_id": job, "chips_requested": 4, "steps": steps,
            **dict.fromkeys(
                ("mean_step_s", "median_step_s", "p90_step_s", "p99_step_s", "max_step_s"), 1.0
            ),
            "slow_step_chip_s": slow, "productive_chip_s": 256.0, "slow_step_share": share,
            "ranks": 1,
        }  # fmt: skip

    def job_day(day: date, job: str, version: str, workload: str) -> dict:
        return {
            "day": day, "job_id": job, "metric_version": version, "workload_class": workload,
            "framework": "jax", "chip_generation": "tpu-v5p", "chips_requested": 4,
            **sums(1, 1, 1, None),
        }  # fmt: skip

    con = database(
        {
            "step_time_stats": [
                stats(D1, "a", 200, 0.25, 50),
                stats(D1, "b", 100, 0.25, 64),  # a's share, more slow chip-time: first
                stats(D2, "a", 99, 0.875, 200),  # too few steps: not ranked
                stats(D2, "b", 150, None, 0),  # no share: last
                stats(D1, "c", 300, 0.125, 8),  # no job-day: no slice
            ],
            "job_day_goodput": [
                job_day(D1, "a", "v1", "training"),
                job_day(D1, "b", "v1", "serving"),
                job_day(D2, "b", "v1", "serving"),
                job_day(D1, "a", "v2", "bulk_inference"),  # another version's slice
            ],
        }
    )
    keys = ("day", "job_id", "steps", "slow_step_share", "job_days_too_short",
            "workload_class", "job_days_in_period", "share_rank")  # fmt: skip
    params = V1 | {"first": D1, "last": D2, "limit": 3, "min_steps": 100}
    got = records(con, "report/step_outliers.sql", **params)
    assert list(got[0])[-6:] == [
        "job_days_too_short", "workload_class", "framework", "chip_generation",
        "job_days_in_period", "share_rank",
    ]  # fmt: skip
    assert pick(got, keys) == [
        (D1, "b", 100, 0.25, 1, "serving", 4, 1),
        (D1, "a", 200, 0.25, 1, "training", 4, 2),
        (D1, "c", 300, 0.125, 1, None, 4, 3),
    ]
    got = records(con, "report/step_outliers.sql", **params | {"first": D2, "last": None})
    assert pick(got, keys) == [(D2, "b", 150, None, 1, "serving", 1, 1)]


def test_stragglers_gives_the_ranks_of_the_job_days_with_most_steps() -> None:
    def rank(day: date, job: str, rank: int, steps: int, slowest: int) -> dict:
        return {
            "day": day, "job_id": job, "rank": rank, "steps": steps, "slowest_steps": slowest,
            "slowest_share": slowest / steps, "mean_step_s": 2.0,
        }  # fmt: skip

    con = database(
        {
            "step_rank_stragglers": [
                rank(D1, "a", 0, 128, 96),
                rank(D1, "a", 1, 128, 32),
                rank(D2, "a", 0, 128, 128),  # as many steps as D1's: after it
                rank(D1, "b", 1, 256, 64),
                rank(D1, "b", 0, 256, 192),
            ]
        }
    )
    params = {"first": D1, "last": D2, "limit": 2}
    assert columns(con, "report/stragglers.sql", **params) == [
        "job_day_rank", "day", "job_id", "rank", "steps", "slowest_steps", "slowest_share",
        "mean_step_s",
    ]  # fmt: skip
    assert rows(con, "report/stragglers.sql", **params) == [
        (1, D1, "b", 0, 256, 192, 0.75, 2.0),
        (1, D1, "b", 1, 256, 64, 0.25, 2.0),
        (2, D1, "a", 0, 128, 96, 0.75, 2.0),
        (2, D1, "a", 1, 128, 32, 0.25, 2.0),
    ]
    assert rows(con, "report/stragglers.sql", **params | {"first": D2, "last": None}) == [
        (1, D2, "a", 0, 128, 128, 1.0, 2.0)
    ]


HOUR = 3600.0


def hours_ledger() -> duckdb.DuckDBPyConnection:
    """A ledger in whole and binary-fraction chip-hours, so that every chip-hour figure is exact:
    job a (training, jax, tpu-v5p at $28.125, 0.5 kWh a chip-hour) on D1 scheduling 2, compile
    0.5, ideal 1.5 (and a data-wait row of 0) and on D2 ideal 12; job u (serving, pytorch,
    gpu-h100: no price, no power) on D1 scheduling 16. A v2 row and a row without a job-day are
    not in the layer's ledger."""
    categories = {
        (D1, "a"): {"scheduling": 2, "compile": 0.5, "ideal": 1.5, "data_wait": 0},
        (D2, "a"): {"ideal": 12},
        (D1, "u"): {"scheduling": 16},
    }
    job_days, ledgers, costs = [], [], []
    for (day, job), hours in categories.items():
        priced = job == "a"
        job_days.append(
            {
                "day": day, "job_id": job, "metric_version": "v1",
                "workload_class": "training" if priced else "serving",
                "framework": "jax" if priced else "pytorch",
                "chip_generation": "tpu-v5p" if priced else "gpu-h100", "chips_requested": 4,
                **sums(sum(hours.values()) * HOUR, 0, 0, None),
            }
        )  # fmt: skip
        for category, chip_h in hours.items():
            ledgers.append(ledger(day, job, category, chip_h * HOUR))
            generation = job_days[-1]["chip_generation"]
            costs.append(
                cost(day, job, category, chip_h * HOUR, generation, PRICES[generation])
                | {"kwh": chip_h * 0.5 if priced else None}
            )
    ledgers += [ledger(D1, "a", "ideal", 64 * HOUR, "v2"), ledger(D3, "a", "ideal", 64 * HOUR)]
    tables = {"job_day_goodput": job_days, "chip_time_ledger": ledgers, "chip_time_cost": costs}
    return database(tables, macros=SEMANTIC_LAYER)


def test_ledger_days_gives_each_days_categories_in_hours_and_dollars() -> None:
    con = hours_ledger()
    params = V1 | {"first": D1, "last": D3}
    assert columns(con, "report/ledger_days.sql", **params) == [
        "day", "category", "chip_h", "usd", "kwh", "unpriced_chip_h", "unpowered_chip_h"
    ]  # fmt: skip
    # $28.125 and 0.5 kWh a priced chip-hour; u's 16 scheduling chip-hours unpriced, unpowered;
    # data_wait (0) has no row
    assert rows(con, "report/ledger_days.sql", **params) == [
        (D1, "compile", 0.5, 14.0625, 0.25, 0.0, 0.0),
        (D1, "ideal", 1.5, 42.1875, 0.75, 0.0, 0.0),
        (D1, "scheduling", 18.0, 56.25, 1.0, 16.0, 16.0),
        (D2, "ideal", 12.0, 337.5, 6.0, 0.0, 0.0),
    ]


def test_period_categories_gives_each_category_and_its_share() -> None:
    con = hours_ledger()
    params = V1 | {"first": D1, "last": D2}
    assert columns(con, "report/period_categories.sql", **params) == [
        "category", "chip_h", "usd", "kwh", "unpriced_chip_h", "share"
    ]  # fmt: skip
    # of 32 chip-hours: compile 0.5, ideal 1.5 + 12, scheduling 2 + 16
    assert rows(con, "report/period_categories.sql", **params) == [
        ("compile", 0.5, 14.0625, 0.25, 0.0, 0.5 / 32),
        ("ideal", 13.5, 379.6875, 6.75, 0.0, 13.5 / 32),
        ("scheduling", 18.0, 56.25, 1.0, 16.0, 18 / 32),
    ]


def test_slice_ledger_gives_each_slice_values_categories() -> None:
    con = hours_ledger()
    params = V1 | {"first": D1, "last": D2}
    assert columns(con, "report/slice_ledger.sql", **params) == [
        "slice_kind", "slice", "category", "chip_h", "usd", "kwh", "unpriced_chip_h",
        "slice_chip_h", "slice_usd", "share",
    ]  # fmt: skip
    # a's 16 chip-hours ($450) and u's 16 (no dollars), under each of their three slice columns
    a = [
        ("compile", 0.5, 14.0625, 0.25, 0.0, 16.0, 450.0, 0.5 / 16),
        ("ideal", 13.5, 379.6875, 6.75, 0.0, 16.0, 450.0, 13.5 / 16),
        ("scheduling", 2.0, 56.25, 1.0, 0.0, 16.0, 450.0, 2 / 16),
    ]
    u = [("scheduling", 16.0, None, None, 16.0, 16.0, None, 1.0)]
    assert rows(con, "report/slice_ledger.sql", **params) == [
        *[("chip_generation", "gpu-h100", *r) for r in u],
        *[("chip_generation", "tpu-v5p", *r) for r in a],
        *[("framework", "jax", *r) for r in a],
        *[("framework", "pytorch", *r) for r in u],
        *[("workload_class", "serving", *r) for r in u],
        *[("workload_class", "training", *r) for r in a],
    ]


def test_period_days_and_data_days() -> None:
    con = database(fleet_tables())
    # v1's days: D1..D3; within D2..D4, D2..D3; none of v1 on D4
    assert records(con, "report/period_days.sql", **V1, first=None, last=None) == [
        {"first_day": D1, "last_day": D3}
    ]
    assert rows(con, "report/period_days.sql", **V1, first=D2, last=D4) == [(D2, D3)]
    assert rows(con, "report/period_days.sql", **V1, first=D4, last=None) == [(None, None)]
    assert columns(con, "report/data_days.sql") == [
        "metric_version", "first_day", "last_day", "days", "job_days", "jobs"
    ]  # fmt: skip
    # v1: job-days a D1, a D2, s D1, u D1, u D3: 3 days, 5 job-days, 3 jobs; v2: a on D4
    assert rows(con, "report/data_days.sql") == [
        ("v1", D1, D3, 3, 5, 3),
        ("v2", D4, D4, 1, 1, 1),
    ]


def advice_tables() -> dict[str, list[dict]]:
    """checkpoint_advice of four training jax jobs (j1: change, saves 4 chip-hours, tpu-v5p,
    D1..D2; j2: change, 8, gpu-h100, D2..D3; j3: keep, 0, tpu-v5p, D1; j4: change, 2, tpu-v5p,
    D3..D4), every other required column 0, and the prices of cost_rates."""

    def advice(job: str, saved: float, generation: str, first: date, last: date) -> dict:
        zero = {"double": 0.0, "int64": 0, "string": "", "date32[day]": D1}
        required = {f.name: zero[str(f.type)] for f in CHECKPOINT_ADVICE if not f.nullable}
        return required | {
            "day": last, "job_id": job, "workload_class": "training", "framework": "jax",
            "chip_generation": generation, "chips_requested": 4, "first_day": first,
            "last_day": last, "advice": "change" if saved else "keep",
            "chip_hours_saved": saved,
        }  # fmt: skip

    rates = [
        {"chip_generation": generation, "usd_per_chip_hour": price, "pue": 1.0,
         "pue_source": "test"}
        for generation, price in PRICES.items()
    ]  # fmt: skip
    return {
        "checkpoint_advice": [
            advice("j1", 4, "tpu-v5p", D1, D2),
            advice("j2", 8, "gpu-h100", D2, D3),
            advice("j3", 0, "tpu-v5p", D1, D1),
            advice("j4", 2, "tpu-v5p", D3, D4),
        ],
        "cost_rates": rates,
    }


def test_checkpoint_jobs_ranks_the_advised_jobs_by_chip_hours_saved() -> None:
    con = database(advice_tables(), macros=SEMANTIC_LAYER)
    keys = (
        "saving_rank", "job_id", "chip_hours_saved", "usd_per_chip_hour", "usd_saved",
        "jobs_in_period", "jobs_advised", "chip_hours_saved_in_period", "usd_saved_in_period",
        "unpriced_chip_hours_saved", "days_analysed", "chip_hours_saved_a_day",
    )  # fmt: skip
    # D1..D2 meets j1, j2 and j3 (j4 starts on D3): 3 jobs, 2 advised to change, saving
    # 4 + 8 = 12 chip-hours, $112.5 (j1's 4 x $28.125; j2's 8 unpriced), over the 3 days
    # D1..D3 of their lives: 4 a day. Ranked j2 (8), j1 (4); j3 is told to keep its interval.
    period = {"first": D1, "last": D2}
    totals = (3, 2, 12.0, 112.5, 8.0, 3, 4.0)
    j2 = (1, "j2", 8.0, None, None, *totals)
    j1 = (2, "j1", 4.0, 28.125, 112.5, *totals)
    got = records(con, "report/checkpoint_jobs.sql", **period, limit=5)
    assert pick(got, keys) == [j2, j1]
    assert pick(records(con, "report/checkpoint_jobs.sql", **period, limit=1), keys) == [j2]


def test_checkpoint_slices_gives_the_fleet_and_each_slice_value() -> None:
    con = database(advice_tables(), macros=SEMANTIC_LAYER)
    con.execute(load_sql("views/checkpoint_advice_by_slice.sql"))
    keys = ("slice_kind", "slice", "jobs", "jobs_to_change", "chip_hours_saved", "days",
            "chip_hours_saved_per_day")  # fmt: skip
    # all four jobs (no period): D1..D4, 4 days; the fleet saves 14 chip-hours, 3.5 a day;
    # gpu-h100 (j2: 8) before tpu-v5p (j1, j3, j4: 6); every job training and jax
    assert pick(records(con, "report/checkpoint_slices.sql"), keys) == [
        ("fleet", "all", 4, 3, 14.0, 4, 3.5),
        ("chip_generation", "gpu-h100", 1, 1, 8.0, 4, 2.0),
        ("chip_generation", "tpu-v5p", 3, 2, 6.0, 4, 1.5),
        ("workload_class", "training", 4, 3, 14.0, 4, 3.5),
        ("framework", "jax", 4, 3, 14.0, 4, 3.5),
    ]


def test_fix_list_says_what_each_worst_jobs_scheduling_loss_was() -> None:
    con = fleet_database()

    def events(*given: tuple[str, str, int]) -> pa.Table:
        """Scheduler events (job, type, seconds after D1 began)."""
        start = datetime(2026, 1, 1, tzinfo=UTC)
        return pa.Table.from_pylist(
            [
                {"type": kind, "ts": start + timedelta(seconds=s), "job_id": job, "file": "f",
                 "line": line}
                for line, (job, kind, s) in enumerate(given)
            ],
            schema=SCHEDULER_EVENTS,
        )  # fmt: skip

    keys = ("job_id", "rank", "scheduling_chip_s", "queued_chip_s", "evictions", "tasks_lost",
            "task_failures", "scheduling_cause", "advice")  # fmt: skip
    period = V1 | {"first": D1, "last": D2}

    def fix_list(scheduler: pa.Table, limit: int = 3) -> list[tuple]:
        con.register("scheduler_records", scheduler)
        try:
            return pick(records(con, "report/fix_list.sql", **period, limit=limit), keys)
        finally:
            con.unregister("scheduler_records")

    # a (4 chips, 32 scheduling chip-s over D1..D2) waited 2 s for its first task: 8 chip-s
    # queued, under half its 32; a task evicted: preemption. s lost nothing to scheduling and
    # has no events: no cause. u (512 chips, 256 scheduling chip-s) never got a task: queued
    # from its submission to the period's end, at most its 256: queueing. Another job's events
    # count for nobody; no job has checkpoint advice.
    got = fix_list(
        events(
            ("a", "JOB_SUBMIT", 0), ("a", "TASK_SCHEDULE", 2), ("a", "TASK_EVICT", 60),
            ("a", "TASK_SCHEDULE", 90), ("a", "TASK_FAIL", 100), ("u", "JOB_SUBMIT", 10),
            ("x", "TASK_LOST", 5),
        )
    )  # fmt: skip
    assert got == [
        ("a", 1, 32, 8.0, 1, 0, 1, "preemption", None),
        ("s", 2, 0, None, 0, 0, 0, None, None),
        ("u", 3, 256, 256.0, 0, 0, 0, "queueing", None),
    ]
    # without the eviction, a started without all its chips: partial allocation; the limit
    # keeps the worst job only
    got = fix_list(events(("a", "JOB_SUBMIT", 0), ("a", "TASK_SCHEDULE", 2)), limit=1)
    assert got == [("a", 1, 32, 8.0, 0, 0, 0, "partial_allocation", None)]
    # no events at hand (no record store): no cause
    assert fix_list(SCHEDULER_EVENTS.empty_table(), limit=1) == [
        ("a", 1, 32, None, 0, 0, 0, None, None)
    ]


def test_scorecard_gives_a_new_slice_its_change_in_dollars_as_in_chip_time() -> None:
    tables = fleet_tables()
    # job n (bulk inference, tpu-v5p) only on D2: 128 chip-s wanted, 64 ideal, 64 compile ($0.5)
    tables["job_day_goodput"].append(
        {"day": D2, "job_id": "n", "metric_version": "v1", "workload_class": "bulk_inference",
         "framework": "jax", "chip_generation": "tpu-v5p", "chips_requested": 4,
         **sums(128, 128, 128, 64), "pg": 0.5}
    )  # fmt: skip
    for category in ("ideal", "compile"):
        tables["chip_time_ledger"].append(ledger(D2, "n", category, 64))
        tables["chip_time_cost"].append(cost(D2, "n", category, 64, "tpu-v5p", 28.125))
    con = database(tables, macros=SEMANTIC_LAYER)
    got = records(con, "report/scorecard.sql", **V1, first=D2, last=D2)
    (new,) = [r for r in got if r["slice"] == "bulk_inference"]
    # D1 (complete) had no bulk inference: it lost nothing then, 0 chip-s and $0
    assert (new["lost_chip_s_change"], new["lost_usd_change"]) == (64, 0.5)
