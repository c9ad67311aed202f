"""One metric layer: every ratio at every grain from sql/publish/macros.sql (issue 14, part 3),
read by every surface through the semantic layer (sql/semantic/, issue 19).

A named fleet of seven jobs, 8 chips of tpu-v4 each (peak 275e12 FLOP/s), on 2026-11-20 (day 1)
and, for one job, 2026-11-21 (day 2). Every profile record is one step of 1 s with
1.1e15 FLOPs over 8 chips: ideal step time 1.1e15 / (8 x 275e12) = 0.5 s, so PG = 0.5 exactly.
An hour of 8 chips is 28800 chip-s.

    job  class/framework        timeline (day 1 unless marked)                      profile
    a    training/jax           wants 10:00-11:00, never scheduled (CANCELLED)       10:30
    b    training/tensorflow    wants 10:00-11:00, never scheduled (CANCELLED)       -
    c    training/pytorch       scheduled 10:00-11:00, only init 10:00-10:30         -
    d    training/other         scheduled 10:00-11:00, step 10:00-10:30, FAILED      10:15
                                (no checkpoint: the step is lost progress)
    e    serving/jax            scheduled 10:00-11:00, step 10:00-10:30              -
    f    serving/tensorflow     scheduled 10:00-11:00, step 10:00-10:30              10:15
    h    serving/pytorch        wants from 23:00, scheduled day 2 00:00-01:00,       day 2 00:15
                                step day 2 00:00-00:30

Job-days (chip-s; ideal = productive x PG where there is a PG):

    a  28800 wanted, 0 allocated,     0 productive, ideal 0     SG 0  RG -    PG 0.5  MPG 0
    b  28800,        0,               0,            ideal -     SG 0  RG -    PG -    MPG 0
    c  28800,        28800,           0,            ideal -     SG 1  RG 0    PG -    MPG 0
    d  28800,        28800,           0,            ideal 0     SG 1  RG 0    PG 0.5  MPG 0
    e  28800,        28800,           14400,        ideal -     SG 1  RG 0.5  PG -    MPG -
    f  28800,        28800,           14400,        ideal 7200  SG 1  RG 0.5  PG 0.5  MPG 0.25
    h  day 1: 28800, 0,               0,            ideal -     SG 0  RG -    PG -    MPG 0
       day 2: 28800, 28800,           14400,        ideal 7200  SG 1  RG 0.5  PG 0.5  MPG 0.25

a, b, c, d and h's first day want chips and keep nothing: MPG 0 (spec, Accounting 5), whether
profiled or not. e is productive and unprofiled: its MPG is undefined. Before issue 14, b, c and
h's day 1 published a NULL MPG, and a's one-job slice NULL against its job-day's 0.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import duckdb
import pyarrow as pa
import pytest

from mpg.compare.decompose import PeriodSums, Sums, decompose
from mpg.compare.period import Period
from mpg.compare.read import read_period
from mpg.output.database import new_database
from mpg.schemas import JOB_DAY_GOODPUT
from mpg.sql.files import load_sql
from tests.support.files import SAMPLE_TRACES
from tests.support.fleet import account_fleet
from tests.support.given import SEMANTIC_LAYER, database
from tests.support.timeline import account, end, profile, schedule, span, submit

DAY1, DAY2 = dt.date(2026, 11, 20), dt.date(2026, 11, 21)
HOUR = 28800.0  # an hour of 8 chips, in chip-seconds
HALF = 14400.0
FLOPS = 1.1e15  # one step of 1 s at PG 0.5 on 8 chips of tpu-v4
JOBS = {  # job: workload_class, framework
    "a": ("training", "jax"),
    "b": ("training", "tensorflow"),
    "c": ("training", "pytorch"),
    "d": ("training", "other"),
    "e": ("serving", "jax"),
    "f": ("serving", "tensorflow"),
    "h": ("serving", "pytorch"),
}


def _submit(job: str, clock: str) -> dict:
    workload, framework = JOBS[job]
    return {**submit(job, clock, 8, workload), "framework": framework}


def _fleet() -> list[dict]:
    """The module docstring's fleet, accounted by the pipeline's own functions."""
    scheduler = [
        _submit("a", "10:00"), end("a", "11:00", "CANCELLED"),
        _submit("b", "10:00"), end("b", "11:00", "CANCELLED"),
        *(e for job in "cdef" for e in (_submit(job, "10:00"), schedule(job, "10:00", 0, 8))),
        end("c", "11:00"), end("d", "11:00", "FAILED"), end("e", "11:00"), end("f", "11:00"),
        _submit("h", "23:00"), schedule("h", "+1 00:00", 0, 8), end("h", "+1 01:00"),
    ]  # fmt: skip
    runtime = [
        span("c", "init", "10:00", "10:30"),
        *(span(job, "step", "10:00", "10:30", step=1) for job in "def"),
        span("h", "step", "+1 00:00", "+1 00:30", step=1),
    ]
    profiles = [
        profile("a", "10:30", 1.0, FLOPS, 8),
        profile("d", "10:15", 1.0, FLOPS, 8),
        profile("f", "10:15", 1.0, FLOPS, 8),
        profile("h", "+1 00:15", 1.0, FLOPS, 8),
    ]
    return account(scheduler, runtime, profiles).job_days


# day, job: wanted, all_allocated, productive, ideal, sg, rg, pg, mpg
JOB_DAYS = {
    (DAY1, "a"): (HOUR, 0.0, 0.0, 0.0, 0.0, None, 0.5, 0.0),
    (DAY1, "b"): (HOUR, 0.0, 0.0, None, 0.0, None, None, 0.0),
    (DAY1, "c"): (HOUR, HOUR, 0.0, None, 1.0, 0.0, None, 0.0),
    (DAY1, "d"): (HOUR, HOUR, 0.0, 0.0, 1.0, 0.0, 0.5, 0.0),
    (DAY1, "e"): (HOUR, HOUR, HALF, None, 1.0, 0.5, None, None),
    (DAY1, "f"): (HOUR, HOUR, HALF, 7200.0, 1.0, 0.5, 0.5, 0.25),
    (DAY1, "h"): (HOUR, 0.0, 0.0, None, 0.0, None, None, 0.0),
    (DAY2, "h"): (HOUR, HOUR, HALF, 7200.0, 1.0, 0.5, 0.5, 0.25),
}
FIGURES = ("wanted_chip_s", "all_allocated_chip_s", "productive_chip_s", "ideal_chip_s")
RATIOS = ("pg_coverage", "sg", "rg", "pg", "mpg")


@pytest.fixture(scope="module")
def job_days() -> list[dict]:
    return _fleet()


@pytest.fixture(scope="module")
def published(job_days: list[dict]) -> Iterator[duckdb.DuckDBPyConnection]:
    """The job-days in an in-memory database made as `mpg run` makes its file (`new_database`:
    tables from the schemas' DDL, macros, the `*_current` views and the analysts' views), then
    filled: the job-days and goodput_by_slice."""
    with new_database(":memory:", "v1") as con:
        rows = pa.Table.from_pylist(job_days, schema=JOB_DAY_GOODPUT)  # noqa: F841 (scanned)
        con.execute("insert into job_day_goodput select * from rows")
        con.sql(load_sql("publish/goodput_by_slice.sql")).insert_into("goodput_by_slice")
        yield con


def _dicts(con: duckdb.DuckDBPyConnection, query: str, params: dict | None = None) -> list[dict]:
    return con.sql(query, params=params).to_arrow_table().to_pylist()


def test_job_days(job_days: list[dict]) -> None:
    found = {
        (r["day"], r["job_id"]): tuple(r[c] for c in (*FIGURES, "sg", "rg", "pg", "mpg"))
        for r in job_days
    }
    assert found == JOB_DAYS


# Slices of day 1 (goodput_by_slice; chip-s sums, profiled = productive of job-days with a PG):
#   fleet      wanted 7 x 28800 = 201600, allocated 4 x 28800 = 115200, productive 28800,
#              ideal 7200 (a 0 + d 0 + f 7200), profiled 14400 (f's; a's and d's are 0):
#              SG 4/7, RG 0.25, PG 0.5, coverage 0.5,
#              MPG (7200 / 201600) x (28800 / 14400) = 1/14 = SG x RG x PG
#   training   a, b, c, d: 115200, 57600, 0, ideal 0, profiled 0: SG 0.5, RG 0, PG -, MPG 0
#              (NULL before issue 14: its PG is undefined, but nothing was kept)
#   serving    e, f, h: 86400, 57600, 28800, ideal 7200, profiled 14400:
#              SG 2/3, RG 0.5, PG 0.5, coverage 0.5, MPG (7200 / 86400) x 2 = 1/6
# One-job slices of day 1 (workload class and framework: each job's own cell) carry its job-day's
# SG, RG and MPG; their PG is ideal / profiled, which a's and d's job-days (PG 0.5, nothing
# productive to weigh it) do not have.
SLICES = {
    (DAY1, None, None): (201600.0, 115200.0, HALF * 2, 7200.0, 0.5, 4 / 7, 0.25, 0.5, 1 / 14),
    (DAY1, "training", None): (115200.0, 57600.0, 0.0, 0.0, None, 0.5, 0.0, None, 0.0),
    (DAY1, "serving", None): (86400.0, 57600.0, HALF * 2, 7200.0, 0.5, 2 / 3, 0.5, 0.5, 1 / 6),
    (DAY1, "training", "jax"): (HOUR, 0.0, 0.0, 0.0, None, 0.0, None, None, 0.0),
    (DAY1, "training", "tensorflow"): (HOUR, 0.0, 0.0, None, None, 0.0, None, None, 0.0),
    (DAY1, "training", "pytorch"): (HOUR, HOUR, 0.0, None, None, 1.0, 0.0, None, 0.0),
    (DAY1, "training", "other"): (HOUR, HOUR, 0.0, 0.0, None, 1.0, 0.0, None, 0.0),
    (DAY1, "serving", "jax"): (HOUR, HOUR, HALF, None, 0.0, 1.0, 0.5, None, None),
    (DAY1, "serving", "tensorflow"): (HOUR, HOUR, HALF, 7200.0, 1.0, 1.0, 0.5, 0.5, 0.25),
    (DAY1, "serving", "pytorch"): (HOUR, 0.0, 0.0, None, None, 0.0, None, None, 0.0),
    (DAY2, None, None): (HOUR, HOUR, HALF, 7200.0, 1.0, 1.0, 0.5, 0.5, 0.25),
}


def test_slices(published: duckdb.DuckDBPyConnection) -> None:
    rows = _dicts(published, "select * from goodput_by_slice where chip_generation is null")
    found = {
        (r["day"], r["workload_class"], r["framework"]): tuple(r[c] for c in (*FIGURES, *RATIOS))
        for r in rows
        if (r["day"], r["workload_class"], r["framework"]) in SLICES
    }
    assert found == SLICES


def test_a_job_day_and_its_one_job_slice_agree(published: duckdb.DuckDBPyConnection) -> None:
    """The issue's case (a, never scheduled, one profile record: MPG 0.0 as a job-day, NULL as
    its slice) and every other: SG, RG and MPG of each job-day, bit for bit."""
    pairs = _dicts(
        published,
        """
        select j.job_id, j.sg, j.rg, j.mpg, s.sg as slice_sg, s.rg as slice_rg, s.mpg as slice_mpg
        from job_day_goodput as j
        join goodput_by_slice as s using (day, workload_class, framework, chip_generation)
        where j.day = $day
        """,
        {"day": DAY1},
    )
    assert len(pairs) == 7
    for p in pairs:
        assert (p["sg"], p["rg"], p["mpg"]) == (p["slice_sg"], p["slice_rg"], p["slice_mpg"]), p


# Lifetimes (chip-s over all days; sql/views/job_lifetime.sql, sql/explain/job_goodput.sql):
#   h  wanted 57600, allocated 28800, productive 14400, ideal 7200, profiled 14400:
#      SG 0.5, RG 0.5, PG 0.5, coverage 1, MPG (7200 / 57600) x 1 = 0.125
#   a  its one job-day: SG 0, RG -, PG - (0 / 0: no productive time weighs its PG 0.5), MPG 0
LIFETIMES = {
    "h": (57600.0, HOUR, HALF, 7200.0, 1.0, 0.5, 0.5, 0.5, 0.125),
    "a": (HOUR, 0.0, 0.0, 0.0, None, 0.0, None, None, 0.0),
    "c": (HOUR, HOUR, 0.0, None, None, 1.0, 0.0, None, 0.0),
    "e": (HOUR, HOUR, HALF, None, 0.0, 1.0, 0.5, None, None),
}


def test_lifetimes(published: duckdb.DuckDBPyConnection) -> None:
    columns = (*FIGURES, *RATIOS)
    view = {
        r["job_id"]: tuple(r[c] for c in columns)
        for r in _dicts(published, "select * from job_lifetime")
    }
    assert {job: view[job] for job in LIFETIMES} == LIFETIMES
    for job, expected in LIFETIMES.items():
        rows = _dicts(
            published, load_sql("explain/job_goodput.sql"), {"job_id": job, "metric_version": "v1"}
        )
        assert tuple(rows[-1][c] for c in columns) == expected  # the lifetime row, day NULL


def test_explain_day_rows_take_coverage_from_the_definition(
    published: duckdb.DuckDBPyConnection,
) -> None:
    rows = _dicts(
        published, load_sql("explain/job_goodput.sql"), {"job_id": "h", "metric_version": "v1"}
    )
    # day 1: nothing productive, coverage undefined; day 2: all of it profiled
    assert [(r["day"], r["pg_coverage"], r["mpg"]) for r in rows] == [
        (DAY1, None, 0.0),
        (DAY2, 1.0, 0.25),
        (None, 1.0, 0.125),
    ]


def test_report_period_and_size_class(published: duckdb.DuckDBPyConnection) -> None:
    """The report's opening line over both days: the fleet's sums and the macro's ratios.
    wanted 8 x 28800 = 230400, allocated 5 x 28800 = 144000, productive 43200, ideal 14400,
    profiled 28800: SG 0.625, RG 0.3, PG 0.5, coverage 2/3, MPG (14400 / 230400) x 1.5 = 0.09375.
    Every job is 8 chips, the size class 2-8: its day-1 row is day 1's fleet."""
    params = {"metric_version": "v1", "first": DAY1, "last": DAY2}
    rows = _dicts(published, load_sql("report/period_rollup.sql"), params)
    (period,) = [r for r in rows if r["slice_kind"] == "fleet"]
    assert tuple(period[c] for c in ("wanted_chip_s", *RATIOS)) == (
        230400.0, 2 / 3, 0.625, 0.3, 0.5, 0.09375,
    )  # fmt: skip
    sized = _dicts(
        published,
        "select size_class, mpg from goodput_by_size_class where day = $day and "
        "workload_class is null and framework is null and chip_generation is null",
        {"day": DAY1},
    )
    assert sorted(sized, key=str) == [
        {"size_class": "2-8", "mpg": 1 / 14},
        {"size_class": None, "mpg": 1 / 14},
    ]


def test_comparison_reads_the_layers_ratios(published: duckdb.DuckDBPyConnection) -> None:
    """`mpg compare` reads each slice's sums and ratios, and the fleet's, from the layer's
    roll-up (sql/compare/period_slices.sql): the published slices' values, bit for bit."""
    periods = {
        name: read_period(published, Period(day, day), "v1")
        for name, day in (("base", DAY1), ("current", DAY2))
    }
    for (workload, framework, _), sums in periods["base"].slices.items():
        expected = SLICES[(DAY1, workload, framework)][4:]
        assert tuple(getattr(sums, r) for r in RATIOS) == expected
    fleet = periods["base"].fleet
    assert tuple(getattr(fleet, r) for r in RATIOS) == SLICES[(DAY1, None, None)][4:]
    # Day 1 (MPG 1/14) to day 2 (0.25): the parts add up to the change, which the checks in
    # decompose() assert; the comparison needs no special case for the slices that kept nothing.
    d = decompose(periods["base"], periods["current"])
    assert (d.base_mpg, d.current_mpg) == (1 / 14, 0.25)


def test_a_period_that_kept_nothing_has_mpg_0_and_decomposes() -> None:
    """Before issue 14 such a period was refused ("no all-allocated chip-time: its MPG is
    undefined"); its MPG is 0, so the change is all of the other period's MPG. Here the slice
    was never scheduled in the current period: m 0.25 -> 0 goes whole to SG, the first ratio
    that is 0 there, weighted by K = 1 and w = 1."""
    s = ("serving", "jax", "tpu-v4")
    kept = Sums(HOUR, HOUR, HALF, 7200, HALF, sg=1.0, rg=0.5, pg=0.5, pg_coverage=1.0, mpg=0.25)
    nothing = Sums(HOUR, 0, 0, 0, 0, sg=0.0, rg=None, pg=None, pg_coverage=None, mpg=0.0)
    d = decompose(PeriodSums(kept, {s: kept}), PeriodSums(nothing, {s: nothing}))
    assert (d.base_mpg, d.current_mpg, d.change) == (0.25, 0.0, -0.25)
    assert (d.totals.mix, d.totals.sg, d.totals.rg, d.totals.pg, d.totals.coverage) == (
        0.0, -0.25, 0.0, 0.0, 0.0,
    )  # fmt: skip


@pytest.fixture(scope="module")
def sample_job_days() -> pa.Table:
    return account_fleet(SAMPLE_TRACES).job_days.to_arrow()


def test_every_job_day_of_the_sample_is_its_one_job_slice(sample_job_days: pa.Table) -> None:
    """The committed sample (60 jobs, unscheduled and unprofiled job-days among them): each
    job-day's published SG, RG and MPG are the definition applied to its own chip-seconds."""
    with duckdb.connect() as con:
        con.execute(load_sql("publish/macros.sql"))
        differ = con.sql(
            """
            with ratios as (
                select *, mpg_goodput_ratios(wanted_chip_s, all_allocated_chip_s,
                    productive_chip_s, ideal_chip_s, mpg_profiled(productive_chip_s, pg)) as r
                from sample_job_days
            )
            select day, job_id from ratios
            where sg is distinct from r.sg or rg is distinct from r.rg or mpg is distinct from r.mpg
            """
        ).fetchall()
        ((kept_nothing, at_zero),) = con.sql(
            "select count(*), count(*) filter (where mpg = 0) from sample_job_days "
            "where productive_chip_s = 0"
        ).fetchall()
    assert differ == []
    assert kept_nothing == at_zero > 0


def test_the_scorecards_rollup_is_the_rollups_rows_without_crossed_slices(
    sample_job_days: pa.Table,
) -> None:
    """mpg_slice_rollup (mpg_rollup's text with its CUBE cut to one column at a time, made by
    mpg.sql.files for the scorecard) gives the rows of mpg_rollup that are not a crossed slice,
    bit for bit, per period and per day, on the committed sample."""
    con = database({"job_day_goodput": sample_job_days.to_pylist()}, SEMANTIC_LAYER)
    kinds = "select distinct slice_kind from {} order by 1"
    for by_day in (False, True):
        query = "select * from {}(null, null, null, $by_day) {} order by all"
        slim = con.sql(query.format("mpg_slice_rollup", ""), params={"by_day": by_day})
        full = con.sql(
            query.format("mpg_rollup", "where slice_kind not like '%+%'"),
            params={"by_day": by_day},
        )
        assert slim.fetchall() == full.fetchall()
        assert [k for (k,) in con.sql(kinds.format("slim")).fetchall()] == [
            "chip_generation", "fleet", "framework", "job", "owner", "queue", "size_class",
            "team", "workload_class",
        ]  # fmt: skip
