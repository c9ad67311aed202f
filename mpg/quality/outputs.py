"""Output suites: what the published tables promise, checked once on the staged database.

A failed expectation of severity "fail" fails the run (the caller raises `ValidationFailed`
before publishing, so the previous tables stay in place). Checks within one table run on the
table itself; checks across tables run on a reconciliation frame built by a query in
`sql/quality/` (one row per job-day, slice or source, with a computed `excess` or difference
column), and Great Expectations asserts on that frame, so every check is reported the same way.

Ratios: sg and rg must lie within [0, 1] (severity fail: they are shares of chip-time by
construction). pg and mpg within [0, 1] are warnings only: a PG above 1 means a step beat the
catalog's bf16 dense roofline (fp8 training, say, or a wrong model_flops). The numbers stay
faithful to the inputs, and failing the run would hide the whole fleet's tables over one profile.

The ledger adds up to wanted chip-time per job-day within |ledger - wanted| <= 1e-9 x
sum(|chip_s|) + 1e-6 chip-seconds: a PG far above 1 gives a huge ideal and a huge negative
program_loss, whose float sum is exact only to the magnitude of its terms.

    python -c "import duckdb, sys; from mpg.quality import validate_outputs, render_report; \\
        con = duckdb.connect('out/mpg.duckdb', read_only=True); \\
        print(render_report(validate_outputs(con, con.table('record_counts').to_arrow_table())))"
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from mpg.adapters.quarantine import IMPORT_SOURCE
from mpg.definitions.metrics import LEDGER_CATEGORIES, METRIC_VERSIONS
from mpg.quality.declare import Expect, Suite, Target, between, in_set, not_null, unique
from mpg.quality.engine import ENGINES, SuiteRunner
from mpg.schemas import SOURCES, VALIDATION_RESULTS, concat
from mpg.sql.files import load_sql

OUTPUT_SUITE_VERSION = "s1"
# s2: a quarantine row's source may also be `import` (what `mpg import` could not convert).
QUARANTINE_SUITE_VERSION = "s2"
LEDGER_RELATIVE_TOLERANCE = 1e-9
LEDGER_ABSOLUTE_TOLERANCE = 1e-6  # chip-seconds
SLICE_RELATIVE_TOLERANCE = 1e-9
# The name under which the run's own counts are visible to sql/quality/record_counts_reconciled.
RUN_COUNTS_RELATION = "run_record_counts"

JOB_DAY_KEY = ("day", "job_id", "metric_version")
LEDGER_KEY = (*JOB_DAY_KEY, "category")
SLICE_KEY = ("day", "metric_version", "workload_class", "framework", "chip_generation")
QUARANTINE_KEY = ("source", "file", "line")

_PG_ABOVE_ONE = "above 1: a step beat the catalog's roofline; reported, not fatal"


def _ratio_checks() -> tuple[Expect, ...]:
    return (
        between("sg", 0, 1),
        between("rg", 0, 1),
        between("pg", 0, 1, severity="warn", description=f"pg within [0, 1] ({_PG_ABOVE_ONE})"),
        between("mpg", 0, 1, severity="warn", description=f"mpg within [0, 1] ({_PG_ABOVE_ONE})"),
    )


def _zero(column: str, description: str) -> Expect:
    return between(column, 0, 0, description=description)


OUTPUT_SUITES: tuple[Suite, ...] = (
    Suite(
        "job_day_goodput",
        OUTPUT_SUITE_VERSION,
        (
            Target(
                "job_day_goodput",
                JOB_DAY_KEY,
                (
                    unique(*JOB_DAY_KEY),
                    in_set("metric_version", list(METRIC_VERSIONS), "metric versions"),
                    *_ratio_checks(),
                ),
            ),
        ),
    ),
    Suite(
        "chip_time_ledger",
        OUTPUT_SUITE_VERSION,
        (
            Target(
                "chip_time_ledger",
                LEDGER_KEY,
                (unique(*LEDGER_KEY), in_set("category", LEDGER_CATEGORIES, "ledger categories")),
            ),
            Target(
                "ledger_by_job_day",
                JOB_DAY_KEY,
                (
                    between(
                        "excess",
                        max_value=0,
                        description="the ledger adds up to wanted_chip_s per job-day "
                        f"(|ledger - wanted| <= {LEDGER_RELATIVE_TOLERANCE:g} x sum|chip_s| "
                        f"+ {LEDGER_ABSOLUTE_TOLERANCE:g})",
                    ),
                    not_null("wanted_chip_s", description="every ledger job-day is a job-day row"),
                ),
            ),
        ),
    ),
    Suite(
        "goodput_by_slice",
        OUTPUT_SUITE_VERSION,
        (
            Target(
                "goodput_by_slice",
                SLICE_KEY,
                (unique(*SLICE_KEY), between("pg_coverage", 0, 1), *_ratio_checks()),
            ),
            Target(
                "slices_vs_job_days",
                SLICE_KEY,
                (
                    between(
                        "excess",
                        max_value=0,
                        description="each slice's chip-time sums equal those of the job-days "
                        f"it covers (relative tolerance {SLICE_RELATIVE_TOLERANCE:g})",
                    ),
                ),
            ),
        ),
    ),
    Suite(
        "record_counts",
        OUTPUT_SUITE_VERSION,
        (
            Target(
                "record_counts_reconciled",
                ("source",),
                (
                    _zero("unaccounted", "records_read = accepted + duplicates + quarantined"),
                    _zero("quarantine_difference", "quarantined = the source's quarantine rows"),
                    _zero("run_differences", "the published counts equal the run's counts"),
                ),
            ),
        ),
    ),
    Suite(
        "quarantine",
        QUARANTINE_SUITE_VERSION,
        (
            Target(
                "quarantine",
                QUARANTINE_KEY,
                (
                    unique(*QUARANTINE_KEY),
                    in_set("source", (*SOURCES, IMPORT_SOURCE), "sources (or import)"),
                ),
            ),
        ),
    ),
)

_TABLE_TARGETS = ("job_day_goodput", "chip_time_ledger", "goodput_by_slice", "quarantine")
_RECONCILIATIONS = {
    "ledger_by_job_day": {
        "relative_tolerance": LEDGER_RELATIVE_TOLERANCE,
        "absolute_tolerance": LEDGER_ABSOLUTE_TOLERANCE,
    },
    "slices_vs_job_days": {"relative_tolerance": SLICE_RELATIVE_TOLERANCE},
    "record_counts_reconciled": {},
}


def _table_frame(con: duckdb.DuckDBPyConnection, target: Target) -> pa.Table:
    """A published table's columns that `target` reads (not the quarantine's raw text, say),
    sorted by its index."""
    columns = dict.fromkeys((*target.index, *(c for e in target.expectations for c in e.columns)))
    # Identifiers from our own declarations, quoted as in publish (reserved words like "end").
    table = con.table(target.name).select(*[f'"{c}"' for c in columns]).to_arrow_table()
    return table.sort_by([(c, "ascending", "at_start") for c in target.index])


def output_frames(con: duckdb.DuckDBPyConnection, run_counts: pa.Table) -> dict[str, pa.Table]:
    """Every output target's frame, sorted by its index: the published tables, and the
    reconciliation frames of sql/quality/ (with `run_counts` visible to them meanwhile)."""
    targets = {t.name: t for s in OUTPUT_SUITES for t in s.targets}
    frames = {name: _table_frame(con, targets[name]) for name in _TABLE_TARGETS}
    con.register(RUN_COUNTS_RELATION, run_counts)
    try:
        for name, params in _RECONCILIATIONS.items():
            frames[name] = con.sql(load_sql(f"quality/{name}.sql"), params=params).to_arrow_table()
    finally:
        con.unregister(RUN_COUNTS_RELATION)
    return frames


def validate_outputs(
    con: duckdb.DuckDBPyConnection, run_counts: pa.Table, engine: str = ENGINES[0]
) -> pa.Table:
    """VALIDATION_RESULTS of the output suites on the tables in `con` (the staged database).

    `run_counts` is the RECORD_COUNTS table the pipeline counted, to compare with the published
    one. The `great-expectations` engine starts GX for this call (seconds).
    """
    frames = output_frames(con, run_counts)
    runner = SuiteRunner(OUTPUT_SUITES, engine)
    return concat(
        (runner.validate(t.name, frames[t.name]) for s in OUTPUT_SUITES for t in s.targets),
        VALIDATION_RESULTS,
    )
