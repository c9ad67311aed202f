r"""The account pipeline: the record store's job buckets -> job-day goodput and ledger tables.

    bucket ids | ReadJobBucket | AccountChipTime | WriteJobTables
                              \ ValidateRecords | WriteSourceResults  (the source suites)

It reads only the stored Parquet, never the raw logs, so history can be recomputed from the store
(for a new metric version, say) without re-ingesting.
"""

from __future__ import annotations

from pathlib import Path

import apache_beam as beam
import pyarrow as pa

from mpg.catalog import load_catalog
from mpg.pipelines.io import read_job_bucket, write_by_day, write_parquet
from mpg.pipelines.layout import SOURCE_RESULTS
from mpg.transforms.steps import AccountChipTime, ValidateRecords


def _write_job_tables(accounted: tuple[int, pa.Table, pa.Table], staging: str) -> None:
    bucket, job_days, ledger = accounted
    tables = Path(staging) / "tables"
    name = f"part-b{bucket:04d}.parquet"
    write_by_day(job_days, "day", tables / "job_day_goodput", name)
    write_by_day(ledger, "day", tables / "chip_time_ledger", name)


def build_account(
    p: beam.Pipeline,
    store: Path,
    buckets: list[int],
    metric_versions: tuple[str, ...],
    staging: Path,
) -> None:
    """Compose the accounting steps on `p` over the buckets present in the record store."""
    catalog = load_catalog()
    records = (
        p
        | "ListJobBuckets" >> beam.Create(buckets)
        | "ReadJobBucket" >> beam.Map(read_job_bucket, str(store))
    )
    _ = (
        records
        | "AccountChipTime" >> AccountChipTime(catalog, metric_versions)
        | "WriteJobTables" >> beam.Map(_write_job_tables, str(staging))
    )
    _ = (
        records
        | "ValidateRecords" >> ValidateRecords(catalog)
        | "WriteSourceResults" >> beam.Map(write_parquet, staging / SOURCE_RESULTS)
    )
