"""The report's pass-through queries of sql/report/ (what the published folder says of itself:
its run, its tables, its record counts, validation and quarantine) on small given tables: every
row each gives."""

from __future__ import annotations

from datetime import UTC, datetime

from mpg.schemas import PUBLISHED
from tests.support.given import columns, database, records, rows


def test_published_run_is_the_latest_published_run_of_the_log() -> None:
    def run(run_id: str, started_hour: int, ended_hour: int | None, outcome: str) -> dict:
        def at(hour: int) -> datetime:
            return datetime(2026, 1, 1, hour, tzinfo=UTC)

        return {
            "run_id": run_id, "started_at": at(started_hour),
            "ended_at": None if ended_hour is None else at(ended_hour), "outcome": outcome,
            "traces": "data/t", "input_files": 3, "input_bytes": 1024,
            "inputs_fingerprint": "f", "code_version": "1.0", "metric_versions": ["v1"],
            "command": f"mpg run {run_id}",
        }  # fmt: skip

    con = database(
        {
            "runs": [
                run("r1", 1, 2, "published"),
                run("r2", 3, 5, "published"),  # ended last: the one
                run("r3", 4, 4, "published"),
                run("r4", 6, 7, "failed"),  # ended later, published nothing
                run("r5", 8, None, "published"),  # no end: after every ended run
            ]
        }
    )
    got = records(con, "report/published_run.sql")
    assert [(r["run_id"], r["command"], r["runs_logged"]) for r in got] == [("r2", "mpg run r2", 5)]
    assert columns(con, "report/published_run.sql") == [
        "run_id", "started_at", "ended_at", "command", "traces", "input_files", "input_bytes",
        "code_version", "metric_versions", "runs_logged",
    ]  # fmt: skip
    # a log with no published run: no row
    con = database({"runs": [run("r4", 6, 7, "failed")]})
    assert rows(con, "report/published_run.sql") == []


def test_published_tables_lists_the_main_schemas_tables_and_views() -> None:
    con = database({})
    con.execute("create view v_any as select 1 as x")
    # every published table (all of them, empty) and the view, by name
    assert rows(con, "report/published_tables.sql") == sorted(
        [(name, "BASE TABLE") for name in PUBLISHED] + [("v_any", "VIEW")]
    )


def test_record_counts_says_whether_each_source_adds_up() -> None:
    con = database(
        {
            "record_counts": [
                {"source": "scheduler", "records_read": 10, "accepted": 7, "duplicates": 1,
                 "quarantined": 2},
                {"source": "runtime", "records_read": 10, "accepted": 7, "duplicates": 1,
                 "quarantined": 1},
            ]
        }
    )  # fmt: skip
    assert columns(con, "report/record_counts.sql") == [
        "source", "records_read", "accepted", "duplicates", "quarantined", "adds_up"
    ]  # fmt: skip
    # 7 + 1 + 2 = 10; 7 + 1 + 1 = 9, not 10
    assert rows(con, "report/record_counts.sql") == [
        ("runtime", 10, 7, 1, 1, False),
        ("scheduler", 10, 7, 1, 2, True),
    ]


def test_validation_summary_and_warnings() -> None:
    def result(target: str, expectation: str, success: bool, column: str | None = None) -> dict:
        return {
            "suite": "outputs", "suite_version": "1", "target": target,
            "expectation": expectation, "column": column, "kwargs": "{}", "severity": "warn",
            "description": f"{expectation} on {target}", "success": success,
            "element_count": 8, "unexpected_count": 0 if success else 2,
            "unexpected_sample": None if success else "[1, 2]",
        }  # fmt: skip

    con = database(
        {
            "validation_results": [
                result("job_day_goodput", "not_null", True, "day"),
                result("job_day_goodput", "between", False, "sg"),
                result("chip_time_ledger", "sums_to_wanted", False),
            ]
        }
    )
    assert records(con, "report/validation_summary.sql") == [{"checked": 3, "failed": 2}]
    # the failed ones, by suite, target, expectation
    assert rows(con, "report/validation_warnings.sql") == [
        ("outputs", "chip_time_ledger", "sums_to_wanted", None, "warn",
         "sums_to_wanted on chip_time_ledger", 8, 2, "[1, 2]"),
        ("outputs", "job_day_goodput", "between", "sg", "warn", "between on job_day_goodput",
         8, 2, "[1, 2]"),
    ]  # fmt: skip
    assert records(database({}), "report/validation_summary.sql") == [{"checked": 0, "failed": 0}]


def test_quarantine_reasons_counts_each_source_and_kind_of_reason() -> None:
    def quarantined(source: str, reason: str, line: int) -> dict:
        return {"source": source, "file": "f", "line": line, "reason": reason, "raw": "{}"}

    con = database(
        {
            "quarantine": [
                quarantined("runtime", "unknown framework: mxnet", 1),
                quarantined("runtime", "unknown framework: caffe", 2),
                quarantined("runtime", "unknown framework: mxnet", 3),
                quarantined("scheduler", "bad timestamp", 4),
                quarantined("program", "unknown framework: mxnet", 5),
            ]
        }
    )
    assert columns(con, "report/quarantine_reasons.sql") == [
        "source", "reason_kind", "records", "reasons", "example"
    ]  # fmt: skip
    # a kind is the text before the first colon; most records first, then source, kind
    assert rows(con, "report/quarantine_reasons.sql") == [
        ("runtime", "unknown framework", 3, 2, "unknown framework: caffe"),
        ("program", "unknown framework", 1, 1, "unknown framework: mxnet"),
        ("scheduler", "bad timestamp", 1, 1, "bad timestamp"),
    ]
