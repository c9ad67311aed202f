"""Account a whole trace root with the pure steps (no Beam), for property tests over many fleets;
the committed sample's records parsed and reconciled as one bucket.

The Beam pipeline applies exactly these functions per block and per bucket; running them directly
keeps a hypothesis example to a fraction of a second.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from mpg.definitions.catalog import load_catalog
from mpg.pipelines.io import TraceFile, discover_trace_files, read_line_blocks, recover_raw_text
from mpg.schemas import RECORD_SCHEMAS, SOURCES, concat
from mpg.sql.files import load_sql
from mpg.transforms.account import account_chip_time
from mpg.transforms.parse import BlockParser
from mpg.transforms.reconcile import JobRecords, reconcile_jobs
from tests.support.files import SAMPLE_TRACES


@dataclass(frozen=True)
class FleetResult:
    job_days: pl.DataFrame
    ledger: pl.DataFrame
    quarantine: pl.DataFrame
    counts: dict[
        str, tuple[int, int, int, int]
    ]  # source -> (read, accepted, duplicates, quarantined)


@dataclass(frozen=True)
class ParsedRoot:
    files: list[TraceFile]
    records: dict[str, pa.Table]  # source -> every accepted record, in file order
    quarantine: list[pa.Table]  # the parser's quarantine, per block
    read: dict[str, int]  # source -> lines read
    rejected: dict[str, int]  # source -> lines the parser quarantined


def parse_root(root: Path) -> ParsedRoot:
    """Every line of a trace root through the block parser, as the pipeline reads it."""
    parser = BlockParser(load_catalog())
    parsed: dict[str, list[pa.Table]] = {s: [] for s in SOURCES}
    quarantined: list[pa.Table] = []
    read = dict.fromkeys(SOURCES, 0)
    rejected = dict.fromkeys(SOURCES, 0)
    files, _ = discover_trace_files(root)
    for file in files:
        for block in read_line_blocks(file):
            assert block.problem is None
            result = parser.parse(file.source, file.name, block.data, block.first_line)
            parsed[file.source].append(result.records)
            quarantined.append(result.quarantine)
            read[file.source] += result.lines_read
            rejected[file.source] += result.quarantine.num_rows
    parser.close()
    records = {s: concat(parsed[s], RECORD_SCHEMAS[s]) for s in SOURCES}
    return ParsedRoot(files, records, quarantined, read, rejected)


def account_fleet(root: Path) -> FleetResult:
    parsed = parse_root(root)
    bucket = reconcile_jobs(parsed.records)
    r = bucket.records
    by_name = {f.name: f for f in parsed.files}
    refs = bucket.quarantine
    recovered = [
        recover_raw_text(by_name[name], refs.filter(pc.equal(refs.column("file"), name)))
        for name in sorted(set(refs.column("file").to_pylist()))
    ]
    job_days, ledger = account_chip_time(
        r.scheduler, r.runtime, r.profiles, load_catalog(), r.data_end, ("v1",)
    )
    return FleetResult(
        job_days=pl.from_arrow(job_days),
        ledger=pl.from_arrow(ledger),
        quarantine=pl.from_arrow(pa.concat_tables([*parsed.quarantine, *recovered])),
        counts={
            s: (
                parsed.read[s],
                *(
                    pc.sum(bucket.jobs.column(f"{what}_{s}")).as_py() or 0
                    for what in ("accepted", "duplicates")
                ),
                (pc.sum(bucket.jobs.column(f"quarantined_{s}")).as_py() or 0) + parsed.rejected[s],
            )
            for s in SOURCES
        },
    )


def slices(job_days: pl.DataFrame) -> pl.DataFrame:
    """goodput_by_slice as the published SQL computes it, over the given job-days."""
    with duckdb.connect() as con:
        con.register("job_day_goodput", job_days.to_arrow())
        con.execute(load_sql("publish/macros.sql"))
        return pl.from_arrow(con.sql(load_sql("publish/goodput_by_slice.sql")).to_arrow_table())


def manifest(root: Path) -> dict:
    return json.loads((root / "manifest.json").read_text())


def sample_fleet() -> JobRecords:
    """Every record of data/sample_traces, parsed and reconciled as one job bucket."""
    return reconcile_jobs(parse_root(SAMPLE_TRACES).records).records
