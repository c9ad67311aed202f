"""An analyst's own tables and views in mpg.duckdb survive the next run that publishes
(pipelines/analyst_objects.py): kept with their rows, views created again over the new tables,
and what cannot be kept is named."""

from __future__ import annotations

from pathlib import Path

import duckdb

from mpg.pipelines.options import RunOptions
from mpg.pipelines.run import run
from tests.support.files import SPEC_EXAMPLES


def test_an_analysts_tables_and_views_are_kept_and_what_cannot_be_is_named(tmp_path: Path) -> None:
    traces, out = SPEC_EXAMPLES / "tiny", tmp_path / "out"
    first = run(RunOptions(traces=str(traces), out=str(out)))
    assert (first.analyst.kept, first.analyst.lost) == ((), ())
    with duckdb.connect(str(out / "mpg.duckdb")) as con:
        con.execute(
            "create table my_jobs as select job_id, sum(wanted_chip_s) as w "
            "from job_day_goodput group by job_id"
        )
        con.execute("create view my_big_jobs as select job_id from my_jobs where w > 20000")
        con.execute("create view my_days as select count(*) as n from job_day_goodput")
        con.execute("create schema scratch")
        con.execute("create table scratch.t as select 1 as x")  # other schemas are not kept
        con.execute("create view on_scratch as select x from scratch.t")
        con.execute("delete from my_jobs where job_id = 'serve-b'")  # the analyst's own rows
    again = run(RunOptions(traces=str(traces), out=str(out), full=True))
    assert again.run_id != first.run_id
    assert again.analyst.kept == ("my_big_jobs", "my_days", "my_jobs")
    assert again.analyst.lost == (
        'on_scratch: Catalog Error: Table with name "scratch.t" does not exist because schema '
        '"scratch" does not exist.',
    )
    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as con:
        assert con.sql("from my_jobs").fetchall() == [("train-a", 22800.0)]
        assert con.sql("from my_big_jobs").fetchall() == [("train-a",)]
        assert con.sql("from my_days").fetchall() == [(3,)]
