"""Each query of sql/compare/ (what `mpg compare` reads of the semantic layer's roll-up) on small
given tables: every row it gives, worked out by hand.

The fleet is tests/support/given_fleet.py's (a chip-second of tpu-v5p costs $1/128, gpu-h100's
nothing known); the base period is D1, the current one D2."""

from __future__ import annotations

from tests.support.given import columns, database, records, rows
from tests.support.given_fleet import D1, D2, D3, D4, fleet_database, fleet_tables


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


BOTH = {
    "metric_version": "v1",
    "base_first": D1,
    "base_last": D1,
    "current_first": D2,
    "current_last": D2,
}


def test_ledger_moves_gives_each_categorys_share_and_dollars_in_both_periods() -> None:
    con = fleet_database()
    keys = (
        "slice_kind", "workload_class", "framework", "chip_generation", "category",
        "base_chip_s", "current_chip_s", "base_share", "current_share", "base_usd",
        "current_usd", "change", "usd_change", "share_rank", "usd_rank",
    )  # fmt: skip
    assert columns(con, "compare/ledger_moves.sql", **BOTH) == list(keys)
    fleet = ("fleet", None, None, None)
    serving = ("workload_class+framework+chip_generation", "serving", "jax", "tpu-v5p")
    unpriced = ("workload_class+framework+chip_generation", "training", "jax", "gpu-h100")
    training = ("workload_class+framework+chip_generation", "training", "jax", "tpu-v5p")
    # The fleet wants 512 chip-s on D1 and 256 on D2; a chip-second is $1/128 (u's none).
    # Share ranks by |change|: scheduling .5625, ideal .375, then compile and unprofiled (.25
    # each, by name), program loss .1875. Dollar ranks by |usd change|: unprofiled 1, then
    # compile and ideal (.5 each, by name), then program loss and scheduling (.25 each).
    expected = [
        (*fleet, "compile", 0, 64, 0, 0.25, 0, 0.5, 0.25, 0.5, 3, 2),
        (*fleet, "ideal", 64, 128, 0.125, 0.5, 0.5, 1.0, 0.375, 0.5, 2, 3),
        (*fleet, "productive_unprofiled", 128, 0, 0.25, 0, 1.0, 0, -0.25, -1.0, 4, 1),
        (*fleet, "program_loss", 32, 64, 0.0625, 0.25, 0.25, 0.5, 0.1875, 0.25, 5, 4),
        # 32 of a's and 256 of u's (unpriced: only a's $0.25)
        (*fleet, "scheduling", 288, 0, 0.5625, 0, 0.25, 0, -0.5625, -0.25, 1, 5),
        # s has no D2 rows: 0 there; its ideal is 0 in both, so no row
        (*serving, "productive_unprofiled", 128, 0, 1.0, 0, 1.0, 0, -1.0, -1.0, 1, 1),
        # u has no dollars: 0 in both, no dollar rank
        (*unpriced, "scheduling", 256, 0, 1.0, 0, 0, 0, -1.0, 0, 1, None),
        # a wants 128 then 256: ideal and program loss keep their shares (no share rank),
        # scheduling's quarter goes to compile (tied: by name); dollars: compile and ideal
        # +$0.5, program loss +$0.25, scheduling -$0.25
        (*training, "compile", 0, 64, 0, 0.25, 0, 0.5, 0.25, 0.5, 1, 1),
        (*training, "ideal", 64, 128, 0.5, 0.5, 0.5, 1.0, 0, 0.5, None, 2),
        (*training, "program_loss", 32, 64, 0.25, 0.25, 0.25, 0.5, 0, 0.25, None, 3),
        (*training, "scheduling", 32, 0, 0.25, 0, 0.25, 0, -0.25, -0.25, 2, 4),
    ]
    assert rows(con, "compare/ledger_moves.sql", **BOTH) == expected


def test_dollar_parts_splits_the_change_in_dollars_lost_exactly() -> None:
    con = fleet_database()
    parts = ("volume", "mix", "scheduling", "runtime", "program", "unprofiled")
    own = (
        "base_wanted_usd", "current_wanted_usd", "base_lost_usd", "current_lost_usd",
        "base_unpriced_chip_s", "current_unpriced_chip_s", "base_lost_scheduling_usd",
        "current_lost_scheduling_usd", "base_lost_runtime_usd", "current_lost_runtime_usd",
        "base_lost_program_usd", "current_lost_program_usd", "base_lost_unprofiled_usd",
        "current_lost_unprofiled_usd",
    )  # fmt: skip

    def part(kind: str, workload: str | None, generation: str | None, *values: float) -> dict:
        framework = None if workload is None else "jax"
        *split, total = values
        return {
            "slice_kind": kind, "workload_class": workload, "framework": framework,
            "chip_generation": generation, **dict(zip(parts, split, strict=True)),
            "total": total, "available": True, **dict.fromkeys(own),
        }  # fmt: skip

    # Dollars wanted U and shares lost (scheduling, runtime, program, unprofiled), D1 -> D2:
    #   a (training): U 1 -> 2; shares .25, 0, .25, 0 -> 0, .25, .25, 0 (rate .5 both days)
    #   s (serving):  U 1 -> 0 (gone: takes D1's shares 0, 0, 0, 1; rate 1)
    #   u: unpriced, in no dollar figure.
    # The fleet's rate: $1.5 lost of $2 on D1 (.75), $1 of $2 on D2 (.5): F = .625.
    # a: volume 1 x .625; mix 1 x (.5 - .625) = -.125; scheduling 1.5 x -.25 = -.375;
    #    runtime 1.5 x .25 = .375; program 1.5 x 0: total .5 (= $1 - $.5, a's own change).
    # s: volume -1 x .625; mix -1 x (1 - .625) = -.375; unprofiled .5 x 0: total -1.
    # The fleet: the parts summed, total -.5 = $1 - $1.5.
    fleet = part("fleet", None, None, 0, -0.5, -0.375, 0.375, 0, 0, -0.5) | {
        "base_wanted_usd": 2.0, "current_wanted_usd": 2.0, "base_lost_usd": 1.5,
        "current_lost_usd": 1.0, "base_unpriced_chip_s": 256, "current_unpriced_chip_s": 0,
        "base_lost_scheduling_usd": 0.25, "current_lost_scheduling_usd": 0,
        "base_lost_runtime_usd": 0, "current_lost_runtime_usd": 0.5,
        "base_lost_program_usd": 0.25, "current_lost_program_usd": 0.5,
        "base_lost_unprofiled_usd": 1.0, "current_lost_unprofiled_usd": 0,
    }  # fmt: skip
    slice_kind = "workload_class+framework+chip_generation"
    expected = [
        fleet,  # first, then by |total|
        part(slice_kind, "serving", "tpu-v5p", -0.625, -0.375, 0, 0, 0, 0, -1.0),
        part(slice_kind, "training", "tpu-v5p", 0.625, -0.125, -0.375, 0.375, 0, 0, 0.5),
    ]
    assert columns(con, "compare/dollar_parts.sql", **BOTH) == list(fleet)
    assert records(con, "compare/dollar_parts.sql", **BOTH) == expected


def test_dollar_parts_is_unavailable_where_a_period_has_no_dollars_wanted() -> None:
    """D3 is u's alone, unpriced: the fleet's rate is unknown, so no slice has parts; the fleet's
    row says so, its parts 0 and its own figures as they are."""
    con = fleet_database()
    params = BOTH | {"current_first": D3, "current_last": D3}
    (fleet,) = records(con, "compare/dollar_parts.sql", **params)
    assert fleet == {
        "slice_kind": "fleet", "workload_class": None, "framework": None,
        "chip_generation": None, "volume": 0, "mix": 0, "scheduling": 0, "runtime": 0,
        "program": 0, "unprofiled": 0, "total": 0, "available": False,
        "base_wanted_usd": 2.0, "current_wanted_usd": None, "base_lost_usd": 1.5,
        "current_lost_usd": None, "base_unpriced_chip_s": 256, "current_unpriced_chip_s": 256,
        "base_lost_scheduling_usd": 0.25, "current_lost_scheduling_usd": None,
        "base_lost_runtime_usd": 0, "current_lost_runtime_usd": None,
        "base_lost_program_usd": 0.25, "current_lost_program_usd": None,
        "base_lost_unprofiled_usd": 1.0, "current_lost_unprofiled_usd": None,
    }  # fmt: skip
