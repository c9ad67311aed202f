"""Publishing to BigQuery, against a local emulator (tests/support/bigquery_emulator.py).

`mpg run --publish bigquery` on the spec's tiny example must give BigQuery the rows DuckDB has,
row for row, laid out as docs/bigquery.md says; publishing again must change nothing; replacing
some days must touch only those; the current views must select one metric version; the headline
SQL, transpiled, must give the same rows on both engines; failures must be one line.
"""

from __future__ import annotations

import argparse
import shutil
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import sqlglot
from google.cloud import bigquery

from mpg.cli.command import pipeline_args
from mpg.core.errors import OptionsError
from mpg.output.snapshot import read_current
from mpg.output.store import OutputStore
from mpg.output.views import VIEWS
from mpg.pipelines.bigquery import publish_bigquery
from mpg.pipelines.bigquery_target import BigQueryError, BigQueryLoad, BigQueryTarget
from mpg.schemas import DATA_FILES, JOB_DAY_GOODPUT
from mpg.schemas.bigquery import BIGQUERY_TABLES, bigquery_field, bigquery_schema
from mpg.sql.files import load_sql, render_sql
from tests.support.bigquery_emulator import PROJECT, Emulator, free_port
from tests.support.cli import run_mpg
from tests.support.files import SPEC_EXAMPLES, read_expected

TINY = SPEC_EXAMPLES / "tiny"
NOV_20, NOV_21 = date(2026, 11, 20), date(2026, 11, 21)


def sorted_rows(table: pa.Table) -> list[dict[str, Any]]:
    """Rows in a stable order whatever order the engine returned them in."""
    return sorted(table.to_pylist(), key=repr)


def select_all(table: str) -> str:
    """`select * from table`, built by sqlglot rather than by formatting."""
    return sqlglot.select("*").from_(table).sql()


def duckdb_rows(out: Path, sql: str) -> pa.Table:
    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as con:
        return con.sql(sql).to_arrow_table()


# The tiny example's two jobs, each named a team and one a queue, so that the views of teams
# and queues (chargeback_by_month, queue_waiting, the scorecard's) hold named values and NULL
# ones; nothing else of the example changes.
_TEAMS = {
    '"job_id": "train-a", ': '"job_id": "train-a", "team": "team-lm", "queue": "batch", ',
    '"job_id": "serve-b", ': '"job_id": "serve-b", "team": "team-chat", ',
}


def tiny_with_teams(root: Path) -> Path:
    traces = root / "traces"
    shutil.copytree(TINY, traces, ignore=shutil.ignore_patterns("expected*"))
    events = traces / "scheduler" / "events.jsonl"
    lines = events.read_text().splitlines(keepends=True)
    for old, new in _TEAMS.items():
        lines = [line.replace(old, new) if "JOB_SUBMIT" in line else line for line in lines]
    events.write_text("".join(lines))
    return traces


@pytest.fixture(scope="module")
def published(bigquery_emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny example, its jobs named teams (_TEAMS), run once through the CLI into DuckDB and
    the dataset `tiny`."""
    root = tmp_path_factory.mktemp("tiny")
    out = root / "out"
    stdout = _publish(bigquery_emulator, tiny_with_teams(root), out, "tiny")
    # 5 day tables x 2 days + checkpoint advice's 1 (step_rank_stragglers has no row); rows:
    # 3 job-days + 18 ledger + 23 slices + 0 quarantined + 3 counts + 18 costs + 1 advice
    # + 3 step-time job-days + 16 cost rates + 118 expectations + 1 run.
    assert stdout.splitlines()[-1] == "bigquery: 12 tables, 11 day partitions, 204 rows -> " + (
        f"{PROJECT}.tiny"
    )
    return out


def snapshot_files(out: Path) -> tuple[OutputStore, pa.Table]:
    """The folder's store and its current snapshot's data files (DATA_FILES), as a run passes
    them to `publish_bigquery`."""
    store = OutputStore(str(out))
    snapshot, _ = read_current(store)
    assert snapshot is not None
    return store, store.read_parquet(snapshot.state["files"], DATA_FILES)


def table_paths(out: Path, files: pa.Table, table: str, day: date | None = None) -> list[Path]:
    rows = [r for r in files.to_pylist() if r["table"] == table and day in (None, r["day"])]
    return [out / r["path"] for r in rows]


def target(emulator: Emulator, dataset: str) -> BigQueryTarget:
    return BigQueryTarget(PROJECT, dataset, endpoint=emulator.endpoint, retry_s=10)


@pytest.mark.parametrize("table", list(BIGQUERY_TABLES))
def test_bigquery_holds_the_rows_duckdb_holds(
    published: Path, bigquery_emulator: Emulator, table: str
) -> None:
    in_bigquery = bigquery_emulator.query(select_all(table), "tiny")
    in_duckdb = duckdb_rows(published, select_all(table))
    assert in_bigquery.num_rows == in_duckdb.num_rows
    assert sorted_rows(in_bigquery) == sorted_rows(in_duckdb)


@pytest.mark.parametrize("table", ["job_day_goodput", "chip_time_ledger", "goodput_by_slice"])
def test_bigquery_holds_the_spec_examples_rows(
    published: Path, bigquery_emulator: Emulator, table: str
) -> None:
    expected = read_expected(TINY / "expected" / f"{table}.csv")
    rows = bigquery_emulator.query(select_all(table), "tiny")
    assert rows.num_rows == len(expected)
    assert sorted(str(r["day"]) for r in rows.to_pylist()) == sorted(r["day"] for r in expected)


def test_tables_are_declared_partitioned_and_clustered(
    published: Path, bigquery_emulator: Emulator
) -> None:
    client = bigquery_emulator.client()
    layouts = {}
    for name, schema in BIGQUERY_TABLES.items():
        table = client.get_table(f"{PROJECT}.tiny.{name}")
        assert table.schema == bigquery_schema(schema)
        partitioning = table.time_partitioning
        layouts[name] = (
            partitioning and (partitioning.type_, partitioning.field),
            table.clustering_fields,
        )
    slices = ["workload_class", "framework", "chip_generation"]
    assert layouts == {
        "job_day_goodput": (("DAY", "day"), slices),
        "chip_time_ledger": (("DAY", "day"), ["job_id", "metric_version", "category"]),
        "goodput_by_slice": (("DAY", "day"), slices),
        "quarantine": (None, None),
        "record_counts": (None, None),
        "chip_time_cost": (("DAY", "day"), ["chip_generation"]),
        "checkpoint_advice": (("DAY", "day"), slices),
        "step_time_stats": (("DAY", "day"), ["job_id"]),
        "step_rank_stragglers": (("DAY", "day"), ["job_id", "rank"]),
        "cost_rates": (None, None),
        "validation_results": (None, None),
        "runs": (None, None),
    }


def test_partitions_are_the_days(published: Path, bigquery_emulator: Emulator) -> None:
    partitions = bigquery_emulator.query(
        # Qualified: the emulator mangles INFORMATION_SCHEMA under a default dataset.
        "select table_name, partition_id, total_rows from tiny.INFORMATION_SCHEMA.PARTITIONS "
        "where table_name = 'chip_time_ledger' order by partition_id"
    )
    assert partitions.to_pylist() == [
        {"table_name": "chip_time_ledger", "partition_id": "20261120", "total_rows": 16},
        {"table_name": "chip_time_ledger", "partition_id": "20261121", "total_rows": 2},
    ]


def test_headline_sql_gives_the_same_rows_on_both_engines(
    published: Path, bigquery_emulator: Emulator
) -> None:
    on_bigquery = bigquery_emulator.query(render_sql("report/headline.sql", "bigquery"), "tiny")
    on_duckdb = duckdb_rows(published, load_sql("report/headline.sql"))
    assert on_bigquery.num_rows == 5  # two fleet days, three generation-days
    assert on_bigquery.to_pylist() == on_duckdb.to_pylist()  # in the same order, too


def approx_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Floats to 1e-12 relative, or 1e-8 absolute: the engines sum in their own order, and
    DuckDB's roll-ups sum amounts rounded to 1e-9 (exact sums, `mpg_exact`) where BigQuery sums
    FLOAT64s."""
    return [
        {
            k: pytest.approx(v, rel=1e-12, abs=1e-8) if isinstance(v, float) else v
            for k, v in row.items()
        }
        for row in rows
    ]


@pytest.mark.parametrize("view", VIEWS)
def test_the_analysts_views_give_duckdbs_rows(
    published: Path, bigquery_emulator: Emulator, view: str
) -> None:
    """Each view of sql/views/, transpiled with its macros inlined (mpg.sql.bigquery_dialect),
    exists in the dataset as a view and gives the rows it gives in mpg.duckdb: on the tiny example
    (its jobs named teams), gpu-h100 priced by the catalog and tpu-v5p not, one job-day without a
    PG."""
    table = bigquery_emulator.client().get_table(f"{PROJECT}.tiny.{view}")
    assert table.table_type == "VIEW"
    in_bigquery = sorted_rows(bigquery_emulator.query(select_all(view), "tiny"))
    in_duckdb = sorted_rows(duckdb_rows(published, select_all(view)))
    assert in_bigquery == approx_rows(in_duckdb)
    assert len(in_duckdb) > 0


def test_the_chargeback_names_each_team(published: Path) -> None:
    """The fixture's teams reach the chargeback (whose rows the test above compares with
    BigQuery's): per team, team and queue (serve-b named none), team and owner."""
    rows = duckdb_rows(published, select_all("chargeback_by_month")).to_pylist()
    assert {(r["level"], r["team"], r["queue"], r["owner"]) for r in rows} == {
        ("fleet", None, None, None), ("team", "team-chat", None, None),
        ("team", "team-lm", None, None), ("team+queue", "team-chat", None, None),
        ("team+queue", "team-lm", "batch", None), ("team+owner", "team-chat", None, "team-chat"),
        ("team+owner", "team-lm", None, "team-lm"),
    }  # fmt: skip


@pytest.mark.parametrize("table", ["job_day_goodput", "chip_time_ledger", "goodput_by_slice"])
def test_current_views_exist_for_each_versioned_table(
    published: Path, bigquery_emulator: Emulator, table: str
) -> None:
    view = bigquery_emulator.client().get_table(f"{PROJECT}.tiny.{table}_current")
    assert view.table_type == "VIEW"
    current = bigquery_emulator.query(select_all(f"{table}_current"), "tiny")
    assert sorted_rows(current) == sorted_rows(duckdb_rows(published, select_all(table)))


def _publish(emulator: Emulator, traces: Path, out: Path, dataset: str, *more: str) -> str:
    result = run_mpg(
        "run", "--traces", traces, "--out", out, "--publish", "bigquery", "--project", PROJECT,
        "--dataset", dataset, "--bigquery-endpoint", emulator.endpoint, *more,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


@dataclass(frozen=True)
class Daily:
    """The dataset `daily` as runs left it: what each run printed, and BigQuery's and DuckDB's
    rows of every table after the incremental run and after the full republish."""

    printed: list[str]
    incremental: tuple[dict[str, pa.Table], dict[str, pa.Table]]
    republished: tuple[dict[str, pa.Table], dict[str, pa.Table]]


@pytest.fixture(scope="module")
def daily(bigquery_emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Daily:
    """The tiny example published run by run, as a daily schedule does: the first day's
    profiles arrive a run after the rest; a third run finds nothing new; a fourth recomputes
    everything (`--full`) and publishes it all again. One sequence for the two tests below: each
    publish costs the emulator seconds."""
    root = tmp_path_factory.mktemp("daily")
    traces, out = root / "traces", root / "out"
    shutil.copytree(TINY, traces, ignore=shutil.ignore_patterns("expected*", "profiles"))
    printed = [_publish(bigquery_emulator, traces, out, "daily")]
    lines = (TINY / "profiles" / "profiles.jsonl").read_text().splitlines(keepends=True)
    (traces / "profiles").mkdir()
    (traces / "profiles" / "late.jsonl").write_text("".join(x for x in lines if "11-20T" in x))
    printed.append(_publish(bigquery_emulator, traces, out, "daily"))
    incremental = _both(bigquery_emulator, out, "daily")
    printed.append(_publish(bigquery_emulator, traces, out, "daily"))
    printed.append(_publish(bigquery_emulator, traces, out, "daily", "--full"))
    return Daily(printed, incremental, _both(bigquery_emulator, out, "daily"))


def _both(emulator: Emulator, out: Path, dataset: str) -> tuple[dict, dict]:
    """Every published table's rows in BigQuery's `dataset`, and in DuckDB's `out`."""
    return (
        {t: emulator.query(select_all(t), dataset) for t in BIGQUERY_TABLES},
        {t: duckdb_rows(out, select_all(t)) for t in BIGQUERY_TABLES},
    )


def _empty_lists(table: pa.Table) -> pa.Table:
    """`table` with its NULL lists empty, as BigQuery holds them: a REPEATED field has no NULL
    (the run that found nothing new has no counts)."""
    columns = [
        pc.fill_null(column, pa.array([[]], column.type)[0])
        if pa.types.is_list(column.type)
        else column
        for column in table.columns
    ]
    return pa.Table.from_arrays(columns, schema=table.schema)


def test_an_incremental_run_loads_the_days_it_changed(daily: Daily) -> None:
    """The first day's profiles arrive a run after the rest: the second run loads only that
    day's partitions (its PG changes), and BigQuery again holds exactly what DuckDB holds."""
    first, second, again, _ = daily.printed
    # 5 day-partitioned tables x 2 days, and the checkpoint advice's last day
    assert "bigquery: 12 tables, 11 day partitions" in first
    assert "job tables changed on 1 day (2026-11-20)" in second
    assert "bigquery: 12 tables, 7 day partitions" in second  # 7 day-partitioned tables x Nov 20
    in_bigquery, in_duckdb = daily.incremental
    for table in BIGQUERY_TABLES:
        assert sorted_rows(in_bigquery[table]) == sorted_rows(in_duckdb[table]), table
    assert "up to date" in again
    assert "bigquery:" not in again


def test_publishing_again_duplicates_nothing(daily: Daily) -> None:
    """Everything recomputed (`--full`) and published again: the same rows, none twice; the run
    log holds one row per run (the one that found nothing new too), as DuckDB's does."""
    before, _ = daily.incremental
    again, in_duckdb = daily.republished
    for table in BIGQUERY_TABLES:
        if table == "runs":
            assert again[table].num_rows == len(daily.printed)
            assert sorted_rows(again[table]) == sorted_rows(_empty_lists(in_duckdb[table]))
        else:
            assert again[table].num_rows == before[table].num_rows, table
            assert sorted_rows(again[table]) == sorted_rows(before[table]), table


def _as_version(rows: pa.Table, version: str) -> pa.Table:
    """`rows` under another metric version."""
    column = rows.schema.get_field_index("metric_version")
    return rows.set_column(column, "metric_version", pa.array([version] * rows.num_rows))


def _with_version(out: Path, files: pa.Table, table: str, version: str) -> pa.Table:
    """Add a copy of `table`'s rows under another metric version (a new file per day); returns
    the data files with the new ones."""
    added = []
    for entry in [r for r in files.to_pylist() if r["table"] == table]:
        rows = pq.read_table(out / entry["path"], partitioning=None)
        path = str(Path(entry["path"]).with_name(f"other-{Path(entry['path']).name}"))
        pq.write_table(_as_version(rows, version), out / path)
        added.append({**entry, "path": path})
    return pa.concat_tables([files, pa.Table.from_pylist(added, DATA_FILES)])


def test_the_current_view_sql_runs_on_duckdb_too(published: Path, tmp_path: Path) -> None:
    """DuckDB binds no parameter in a view either: the version goes in as a quoted literal."""
    database = shutil.copy(published / "mpg.duckdb", tmp_path / "copy.duckdb")
    statement = render_sql(
        "publish/current_views.sql",
        "duckdb",
        tables={
            "versioned_table": sqlglot.exp.table_("job_day_goodput", quoted=True),
            "versioned_table_current": sqlglot.exp.table_("job_day_goodput_current", quoted=True),
        },
        literals={"current_version": "v1' or true --"},
    )
    assert statement == (
        'CREATE OR REPLACE VIEW "job_day_goodput_current" AS SELECT * FROM "job_day_goodput" '
        "WHERE metric_version = 'v1'' or true --'"
    )
    with duckdb.connect(str(database)) as con:
        con.execute(statement)
        assert con.sql("select count(*) from job_day_goodput_current").fetchall() == [(0,)]


def _day_rows(emulator: Emulator, dataset: str, day: date) -> list[dict[str, Any]]:
    rows = emulator.query(select_all("job_day_goodput"), dataset)
    return [r for r in sorted_rows(rows) if r["day"] == day]


def test_replacing_some_days_replaces_exactly_those(
    published: Path, bigquery_emulator: Emulator, tmp_path: Path
) -> None:
    store, files = snapshot_files(published)
    dest = target(bigquery_emulator, "some_days")
    publish_bigquery(store, files, dest, None, current_version="v1")
    before = {day: _day_rows(bigquery_emulator, "some_days", day) for day in (NOV_20, NOV_21)}
    assert [len(before[NOV_20]), len(before[NOV_21])] == [2, 1]

    # Locally, Nov 20 disappears and Nov 21's job-day doubles its wanted time.
    out = shutil.copytree(published, tmp_path / "out", symlinks=True)
    store, files = snapshot_files(out)
    nov_20 = pc.and_kleene(
        pc.equal(files.column("table"), "job_day_goodput"), pc.equal(files.column("day"), NOV_20)
    )
    files = files.filter(pc.invert(nov_20))
    (nov_21,) = table_paths(out, files, "job_day_goodput", NOV_21)
    rows = pq.read_table(nov_21, partitioning=None)
    wanted = rows.schema.get_field_index("wanted_chip_s")
    doubled = pc.multiply(rows.column(wanted), 2.0)
    pq.write_table(rows.set_column(wanted, "wanted_chip_s", doubled), nov_21)

    loaded = publish_bigquery(store, files, dest, {NOV_21}, current_version="v1")
    # Nov 21: 1 job-day, 2 ledger rows, 8 slices, 2 costs, 1 step-time job-day (the advice is on
    # Nov 20, train-a's last day); whole: 0 quarantined, 3 counts, 16 cost rates, 118
    # expectations, 1 run.
    loaded_rows = 1 + 2 + 8 + 2 + 1 + 0 + 3 + 16 + 118 + 1
    # 7 day-partitioned tables x Nov 21
    assert loaded == BigQueryLoad(f"{PROJECT}.some_days", tables=12, partitions=7, rows=loaded_rows)
    assert _day_rows(bigquery_emulator, "some_days", NOV_20) == before[NOV_20]  # not listed
    (replaced,) = _day_rows(bigquery_emulator, "some_days", NOV_21)
    assert replaced["wanted_chip_s"] == 7200.0  # 2 x 3600
    assert {**replaced, "wanted_chip_s": 3600.0} == before[NOV_21][0]

    # Listing Nov 20, which now has no rows, empties it.
    publish_bigquery(store, files, dest, {NOV_20}, current_version="v1")
    assert _day_rows(bigquery_emulator, "some_days", NOV_20) == []
    assert len(_day_rows(bigquery_emulator, "some_days", NOV_21)) == 1
    names = [t.table_id for t in bigquery_emulator.client().list_tables(f"{PROJECT}.some_days")]
    assert [n for n in names if n.startswith("_mpg_staged_")] == []  # staging tables removed


def test_a_table_with_other_columns_stops_the_publish(
    published: Path, bigquery_emulator: Emulator
) -> None:
    client = bigquery_emulator.client()
    client.create_dataset(f"{PROJECT}.other_columns")
    other = [bigquery_field(f) for f in JOB_DAY_GOODPUT][:2]
    client.create_table(bigquery.Table(f"{PROJECT}.other_columns.quarantine", schema=other))
    store, files = snapshot_files(published)
    with pytest.raises(BigQueryError) as error:
        publish_bigquery(
            store, files, target(bigquery_emulator, "other_columns"), None, current_version="v1"
        )
    assert str(error.value) == (
        f"BigQuery table {PROJECT}.other_columns.quarantine has columns ['day', 'job_id'], not "
        "['source', 'file', 'line', 'reason', 'raw', 'job_id']: add the new columns (ALTER TABLE "
        "... ADD COLUMN) or publish to another dataset"
    )


@dataclass(frozen=True)
class Versioned:
    """The dataset `versions` after one publish of the tiny example's folder with a copy of
    job_day_goodput's rows under metric version v0, into a job_day_goodput table as an older mpg
    made it (without the columns added since): that table's columns and rows afterwards, its
    current view's rows, and DuckDB's job_day_goodput (v1 only)."""

    columns: list[str]
    everything: pa.Table
    current: pa.Table
    in_duckdb: pa.Table


ADDED_SINCE = ("owner", "team", "queue", "allocated_from")


@pytest.fixture(scope="module")
def versioned(
    published: Path, bigquery_emulator: Emulator, tmp_path_factory: pytest.TempPathFactory
) -> Versioned:
    """One publish for the two tests below: each publish costs the emulator seconds."""
    client = bigquery_emulator.client()
    client.create_dataset(f"{PROJECT}.versions")
    older = [bigquery_field(f) for f in JOB_DAY_GOODPUT if f.name not in ADDED_SINCE]
    client.create_table(bigquery.Table(f"{PROJECT}.versions.job_day_goodput", schema=older))
    out = shutil.copytree(published, tmp_path_factory.mktemp("versions") / "out", symlinks=True)
    store, files = snapshot_files(out)
    files = _with_version(out, files, "job_day_goodput", "v0")
    publish_bigquery(
        store, files, target(bigquery_emulator, "versions"), None, current_version="v1"
    )
    return Versioned(
        columns=[f.name for f in client.get_table(f"{PROJECT}.versions.job_day_goodput").schema],
        everything=bigquery_emulator.query(select_all("job_day_goodput"), "versions"),
        current=bigquery_emulator.query(select_all("job_day_goodput_current"), "versions"),
        in_duckdb=duckdb_rows(published, select_all("job_day_goodput")),
    )


def test_current_views_select_only_the_current_version(versioned: Versioned) -> None:
    versions = pc.value_counts(versioned.everything.column("metric_version")).to_pylist()
    assert sorted(versions, key=repr) == [
        {"values": "v0", "counts": 3},
        {"values": "v1", "counts": 3},
    ]
    assert sorted_rows(versioned.current) == sorted_rows(versioned.in_duckdb)


def test_a_table_an_older_mpg_made_gains_the_columns_added_since(versioned: Versioned) -> None:
    """job_day_goodput as published before it had owner, team, queue and allocated_from: the
    publish adds them at its end and loads its rows (both versions') with them."""
    assert versioned.columns == JOB_DAY_GOODPUT.names
    both = pa.concat_tables([versioned.in_duckdb, _as_version(versioned.in_duckdb, "v0")])
    assert sorted_rows(versioned.everything) == sorted_rows(both)


def test_an_unreachable_bigquery_fails_the_run_in_one_line_and_publishes_nothing(
    tmp_path: Path,
) -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    out = tmp_path / "out"
    result = run_mpg(
        "run", "--traces", TINY, "--out", out, "--publish", "bigquery", "--project", PROJECT,
        "--dataset", "d", "--bigquery-endpoint", endpoint, "--bigquery-retry-s", "1",
    )  # fmt: skip
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith(
        f"mpg: error: publishing to BigQuery {PROJECT}.d at {endpoint} failed: "
        "Timeout of 1.0s exceeded, last exception: HTTPConnectionPool(host='127.0.0.1', "
    )
    assert line.endswith('[Errno 111] Connection refused"))')
    assert not (out / "mpg.duckdb").exists()  # the snapshot was not switched
    assert not (out / ".mpg" / "current").exists()


def test_without_credentials_the_publish_fails_in_one_line(
    published: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-key.json"
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(missing))
    monkeypatch.setenv("NO_GCE_CHECK", "True")  # never ask a metadata server
    store, files = snapshot_files(published)
    with pytest.raises(BigQueryError) as error:
        publish_bigquery(store, files, BigQueryTarget(PROJECT, "d"), None, current_version="v1")
    assert str(error.value) == (
        f"publishing to BigQuery {PROJECT}.d failed: File {missing} was not found."
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--publish", "bigquery", "--project", PROJECT, "--dataset", "bad-name"],
            "--dataset 'bad-name' is not a BigQuery dataset name (letters, digits and underscores)",
        ),
        (
            ["--publish", "bigquery", "--project", "P", "--dataset", "d"],
            "--project 'P' is not a BigQuery project id",
        ),
        (
            ["--publish", "bigquery", "--dataset", "d"],
            "--publish bigquery needs --project and --dataset",
        ),
        (["--dataset", "d"], "--dataset and --bigquery-endpoint need --publish bigquery"),
        (
            ["--publish", "bigquery", "--project", PROJECT, "--dataset", "d",
             "--bigquery-endpoint", "localhost:9050"],
            "--bigquery-endpoint 'localhost:9050' is not an http(s) URL",
        ),
    ],
)  # fmt: skip
def test_bad_bigquery_options_are_one_line_errors(
    args: list[str], message: str, tmp_path: Path
) -> None:
    result = run_mpg("run", "--traces", TINY, "--out", tmp_path / "out", *args)
    assert (result.returncode, result.stderr) == (2, f"mpg: error: {message}\n")


@pytest.mark.parametrize(
    ("rest", "expected"),
    [
        ([], ("--project=my-project", "--runner=FnApiRunner")),
        (["--runner=DirectRunner"], ("--runner=DirectRunner", "--project=my-project")),
    ],
)
def test_project_is_passed_on_to_beam(rest: list[str], expected: tuple[str, ...]) -> None:
    """Beam gets mpg's worker plugin too (`mpg.pipelines.worker`: workers never abort)."""
    args = argparse.Namespace(project="my-project", log_level="warning")
    assert pipeline_args(args, rest) == (*expected, "--beam_plugins=mpg.pipelines.worker")


def test_an_unknown_current_version_is_refused(published: Path) -> None:
    with pytest.raises(OptionsError) as error:
        publish_bigquery(
            *snapshot_files(published), BigQueryTarget(PROJECT, "d"), None, current_version="v9"
        )
    assert str(error.value) == "unknown metric version 'v9' for the current views"
