"""Publishing a staging folder as one transaction: what `mpg run` and `mpg backfill` share.

    with recorded(layout, record), staged(layout, record) as staging:
        ... write the new snapshot's files into staging ...
        published = publish(layout, staging, record, current_version)

A failure is written to the run log; the staging folder is always removed.

`publish` builds the DuckDB file, runs the output suites (a failed fail-severity expectation
stops here, with the report kept in the run log), records the run in its own `runs` table and
switches the current snapshot to it in one rename (`OutputLayout.commit`).
"""

from __future__ import annotations

import contextlib
import datetime
import shutil
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from mpg import progress
from mpg.errors import find_user_error, one_line
from mpg.pipelines import runlog
from mpg.pipelines.bigquery_target import BigQueryLoad, BigQueryTarget
from mpg.pipelines.layout import REPORT, OutputLayout
from mpg.pipelines.publish import build_database, read_headline, validate_database, write_runs
from mpg.quality import fatal_failures, raise_for_failures


@dataclass(frozen=True)
class Published:
    record: runlog.RunRecord  # ended "published"
    headline: pa.Table
    counts: pa.Table
    expectations: int
    warnings: int
    bigquery: BigQueryLoad | None  # what was loaded there, if anywhere


@contextlib.contextmanager
def recorded(layout: OutputLayout, record: runlog.RunRecord) -> Iterator[None]:
    """Write the run's record as started; any failure inside (Ctrl-C and SIGTERM included:
    `interrupted`) is written to the run log before it propagates."""
    runlog.write_record(layout.runs, record)
    try:
        yield
    except BaseException as exc:
        error = find_user_error(exc)
        message = one_line(error) if error else f"{type(exc).__name__}: {exc}"
        interrupted = isinstance(exc, KeyboardInterrupt)
        ended = record.ended("interrupted" if interrupted else "failed", message=message)
        with contextlib.suppress(OSError):  # a full disk must not hide the first error
            runlog.write_record(layout.runs, ended)
        raise


@contextlib.contextmanager
def staged(layout: OutputLayout, record: runlog.RunRecord) -> Iterator[Path]:
    """The run's staging folder, removed however the run ends."""
    staging = layout.staging(record.run_id)
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def publish(
    layout: OutputLayout,
    staging: Path,
    record: runlog.RunRecord,
    current_version: str,
    bigquery: BigQueryTarget | None = None,
    days: Collection[datetime.date] | None = None,
) -> Published:
    """Build, check and switch to the staged snapshot; returns what was published.

    With `bigquery`, the tables are loaded there too (only `days` of the partitioned ones, or
    all with None) just before the switch: a failed load fails the run, whose rerun loads again.
    """
    with progress.phase("publish") as step:  # building and checking: the rest takes no time
        database = build_database(staging, current_version)
        checks = _validate(staging, layout, record.run_id)
        headline, counts = read_headline(database)
        step.done(pc.sum(counts.column("accepted")).as_py() or 0)
    record = record.ended("published", counts=counts)
    runs = runlog.runs_table(layout.runs, record)
    write_runs(database, runs)
    load = None
    if bigquery is not None:
        from mpg.pipelines.bigquery import publish_bigquery  # the client costs ~1 s to import

        tables = staging / "tables"
        load = publish_bigquery(tables, bigquery, days, runs=runs, current_version=current_version)
    layout.commit(staging, record.run_id)
    runlog.write_record(layout.runs, record)
    warnings = pc.sum(pc.invert(checks.column("success"))).as_py() or 0
    return Published(record, headline, counts, checks.num_rows, warnings, load)


def _validate(staging: Path, layout: OutputLayout, run_id: str) -> pa.Table:
    """Check the staged outputs; a failed fail-severity expectation stops the run unpublished,
    with the report kept in the run log (`DIR/runs/<run id>-validation.md`). Returns the results
    (VALIDATION_RESULTS), every failure in them a warning."""
    results = validate_database(staging)
    if fatal_failures(results).num_rows:
        report = layout.runs / f"{run_id}-validation.md"
        layout.runs.mkdir(parents=True, exist_ok=True)
        report.write_text((staging / REPORT).read_text())
        raise_for_failures(results, report)
    return results
