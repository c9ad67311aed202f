"""The `mpg` command.

    mpg run --traces ROOT --out DIR [--buckets N] [--metric-version v1 ...] [--full] [beam opts]
    mpg backfill --out DIR --metric-version v2 --from DAY --to DAY [--chunk-days N] [beam opts]
        both: [--publish bigquery --project P --dataset D [--bigquery-endpoint URL]]
    mpg simulate --seed N --jobs N --days N --out ROOT
    mpg import FORMAT SRC... --out ROOT [options]   (formats: mpg import --help)
    mpg sql [--out DIR] [--csv | --json] ["SELECT ..."]   (no query: a DuckDB shell)
    mpg compare --base D1..D2 --current D3..D4 [--out DIR] [--json]
    mpg report --out DIR [--from DAY] [--to DAY] [--file PATH] [--compare BASE CURRENT]

User errors (a missing trace root, an unreadable file, a full disk, a bad option: `mpg.core.errors`)
print one line and exit 2; anything else is a bug and keeps its traceback.

Start-up: `mpg --help` and a mistyped option must answer as fast as Python imports DuckDB and
pyarrow. So this module imports only the standard library and mpg's own light modules; the
parser declares the options of the one command named on the command line (`COMMANDS` says where
each command's options and code live), and the command imports Beam, Polars, Altair or rich
only after checking them. tests/e2e/test_startup.py holds every command to that.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import importlib
import logging
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mpg.cli.arguments import OneLineParser, add_subcommands, day
from mpg.core.errors import OptionsError, find_user_error, one_line

if TYPE_CHECKING:
    from mpg.pipelines.bigquery_target import BigQueryTarget
    from mpg.pipelines.options import RunOptions
    from mpg.pipelines.result import RunResult


@dataclass(frozen=True)
class Command:
    """A subcommand: its one-line help, and where its option declarations (`arguments`,
    `function(parser)`) and its code (`handler`, `function(args) -> exit status`) are, as
    `module:function`, imported only when the command is the one run. `beam`: options mpg does
    not know go to Apache Beam, and the handler takes them as a second argument.
    `subcommands`: the command has its own (`mpg import FORMAT`), and `arguments` takes the words
    after the command's name as a second argument, to declare only the one they name."""

    help: str
    arguments: str
    handler: str
    description: str | None = None
    beam: bool = False
    subcommands: bool = False


COMMANDS: dict[str, Command] = {
    "run": Command(
        "ingest traces, account chip-time, publish goodput tables",
        "mpg.cli.command:add_run_arguments",
        "mpg.cli.command:run_command",
        description="Unknown options (--runner, --region, ...) are passed to Apache Beam, and "
        "so is --project.",
        beam=True,
    ),
    "backfill": Command(
        "compute a metric version over past days from the stored records",
        "mpg.cli.command:add_backfill_arguments",
        "mpg.cli.command:backfill_command",
        description="Unknown options (--runner, ...) are passed to Apache Beam.",
        beam=True,
    ),
    "simulate": Command(
        "write a synthetic fleet's traces",
        "mpg.cli.command:add_simulate_arguments",
        "mpg.cli.command:simulate",
    ),
    "explain": Command(
        "one job's chip-time ledger, down to its input lines",
        "mpg.explain.command:add_explain_arguments",
        "mpg.explain.command:explain_command",
    ),
    "sql": Command(
        "run SQL on the published tables and views, or a shell",
        "mpg.cli.sql_command:add_sql_arguments",
        "mpg.cli.sql_command:sql_command",
    ),
    "compare": Command(
        "why fleet MPG changed between two periods",
        "mpg.compare.command:add_compare_arguments",
        "mpg.compare.command:compare_command",
    ),
    "report": Command(
        "the fleet's goodput as one HTML page of charts",
        "mpg.report.command:add_report_arguments",
        "mpg.report.command:report_command",
    ),
    "import": Command(
        "convert a real format (framework logs, profiles, cluster traces) to a trace root",
        "mpg.adapters.command:add_import_arguments",
        "mpg.adapters.command:import_command",
        subcommands=True,
    ),
}


def _function(path: str) -> Callable[..., Any]:
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


def parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line of `mpg`, with the options of the command `argv` names (of every command
    where `argv` is None)."""
    top = OneLineParser(prog="mpg", description=__doc__.split("\n")[0])
    commands = {
        name: (c.help, c.description, _declarer(c, argv, name)) for name, c in COMMANDS.items()
    }
    add_subcommands(top, "command", None, commands, argv)
    return top


def _declarer(
    command: Command, argv: Sequence[str] | None, name: str
) -> Callable[[argparse.ArgumentParser], None]:
    """A command's option declarations, given what follows its name on the command line (its
    own subcommands, for `mpg import`, are declared the same lazy way)."""

    def declare(sub: argparse.ArgumentParser) -> None:
        function = _function(command.arguments)
        if command.subcommands:
            words = None if argv is None else list(argv)
            function(sub, None if words is None else words[words.index(name) + 1 :])
        else:
            function(sub)

    return declare


_parser = parser  # the name tests and examples use


def add_run_arguments(run: argparse.ArgumentParser) -> None:
    run.add_argument(
        "--traces",
        required=True,
        help="trace root (scheduler/, runtime/, profiles/): a folder, gs://... or s3://...",
    )
    run.add_argument(
        "--out", required=True, help="output folder (tables, mpg.duckdb): a folder, gs://, s3://"
    )
    run.add_argument(
        "--buckets",
        type=int,
        default=None,
        help="job buckets, the unit of parallelism (default: as many as the data needs)",
    )
    run.add_argument("--records-per-bucket", type=int, default=None, help=argparse.SUPPRESS)
    run.add_argument(
        "--metric-version",
        action="append",
        dest="metric_versions",
        help="metric definition(s) to compute (default: v1 and DIR/mpg.toml's current version)",
    )
    run.add_argument(
        "--full",
        action="store_true",
        help="recompute everything from the trace files (default: only what new files change)",
    )
    run.add_argument("--block-bytes", type=int, default=None, help=argparse.SUPPRESS)
    _add_summary_argument(run)
    _add_log_level_argument(run)
    _add_bigquery_arguments(run)


def _add_summary_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--summary",
        choices=["scorecard", "days"],
        default="scorecard",
        help="what to print at the end: the last 7 days' totals and a scorecard per slice "
        "(default), or the fleet and each chip generation per day",
    )


def add_backfill_arguments(back: argparse.ArgumentParser) -> None:
    back.add_argument(
        "--out", required=True, help="output folder of earlier runs (a folder, gs://, s3://)"
    )
    back.add_argument("--metric-version", required=True, help="the version to fill in, e.g. v2")
    back.add_argument("--from", dest="first", type=day, required=True, help="first day (UTC)")
    back.add_argument("--to", dest="last", type=day, required=True, help="last day (UTC)")
    back.add_argument(
        "--chunk-days", type=int, default=31, help="days per published step (default 31)"
    )
    _add_summary_argument(back)
    _add_log_level_argument(back)
    _add_bigquery_arguments(back)


def add_simulate_arguments(sim: argparse.ArgumentParser) -> None:
    sim.add_argument("--seed", type=int, required=True)
    sim.add_argument("--jobs", type=int, required=True)
    sim.add_argument("--days", type=int, required=True)
    sim.add_argument("--out", required=True, help="trace root to write: a folder, gs:// or s3://")


def _add_log_level_argument(run: argparse.ArgumentParser) -> None:
    run.add_argument(
        "--log-level",
        choices=["debug", "info", "warning", "error"],
        help="also show Beam's and its workers' log records of this level and up on the "
        "terminal (default: warnings and errors; all go to DIR/runs/<run id>.log)",
    )


def _add_bigquery_arguments(run: argparse.ArgumentParser) -> None:
    """Publishing to BigQuery as well as DuckDB (docs/bigquery.md)."""
    group = run.add_argument_group("BigQuery (in addition to DIR/mpg.duckdb)")
    group.add_argument(
        "--publish", choices=["bigquery"], help="also publish the tables to BigQuery"
    )
    group.add_argument("--project", help="Google Cloud project (passed on to Beam as well)")
    group.add_argument("--dataset", help="BigQuery dataset, created if missing")
    group.add_argument(
        "--bigquery-endpoint",
        help="API endpoint of an emulator or private endpoint, used with anonymous credentials "
        "(default: BigQuery itself, with Application Default Credentials)",
    )
    group.add_argument("--bigquery-retry-s", type=float, default=120.0, help=argparse.SUPPRESS)


def _bigquery_target(args: argparse.Namespace) -> BigQueryTarget | None:
    """Where to publish, or None; `--project` alone only goes to Beam."""
    from mpg.pipelines.bigquery_target import BigQueryTarget

    if args.publish is None:
        if args.dataset or args.bigquery_endpoint:
            raise OptionsError("--dataset and --bigquery-endpoint need --publish bigquery")
        return None
    if not (args.project and args.dataset):
        raise OptionsError("--publish bigquery needs --project and --dataset")
    return BigQueryTarget(
        project=args.project,
        dataset=args.dataset,
        endpoint=args.bigquery_endpoint,
        retry_s=args.bigquery_retry_s,
    )


def pipeline_args(args: argparse.Namespace, rest: list[str]) -> tuple[str, ...]:
    """Beam's options: what mpg did not parse, and `--project`, which both use; checked, with
    mpg's default runner where none is named, and packaging for remote workers. Workers log at
    DEBUG when `--log-level debug` asks for it (Beam's own default is INFO)."""
    from mpg.pipelines.runners import beam_args  # after Beam's import, which _import_run quiets

    given = [*rest, f"--project={args.project}"] if args.project else list(rest)
    if args.log_level == "debug" and not any(
        a.startswith("--default_sdk_harness_log_level") for a in given
    ):
        given.append("--default_sdk_harness_log_level=DEBUG")
    return beam_args(given)


def changed_days(result: RunResult, span: bool = False) -> str:
    """How many days the run changed ("7 days", "1 day"); with `span`, the first and last of
    them too: "7 days (2026-11-20 .. 2026-11-26)", "1 day (2026-11-20)"."""
    days = sorted({day for _, day in result.changed_days})
    count = f"{len(days)} day{'' if len(days) == 1 else 's'}"
    if not span or not days:
        return count
    return f"{count} ({days[0]})" if len(days) == 1 else f"{count} ({days[0]} .. {days[-1]})"


def format_headline(result: RunResult, seconds: float, summary: str = "scorecard") -> str:
    """What a run prints: what it did, its summary (`summary`: mpg.cli.summary), the record
    counts, the checks and where the rest went."""
    from mpg.cli.summary import days_lines, scorecard_lines
    from mpg.output.store import REPORT
    from mpg.storage import Storage

    lines = [
        f"mpg run {result.run_id}: {result.files} trace files in {seconds:.1f} s "
        f"-> {result.database}"
    ]
    if result.up_to_date:
        lines.append("  up to date: no new, changed or removed trace files; nothing published")
    else:
        lines.append(
            f"  {result.plan}; parsed {result.parsed}, retracted {result.retracted}; "
            f"job tables changed on {changed_days(result, span=True)}"
        )
    if result.skipped:
        lines.append(f"  skipped {len(result.skipped)} files not named *.jsonl[.gz]")
    lines.append("")
    if summary == "days":
        lines += days_lines(result.days.to_pylist())
    else:
        lines += scorecard_lines(result.scorecard.to_pylist())
    lines.append("")
    lines.append("records read = accepted + duplicates + quarantined")
    for c in result.counts.to_pylist():
        total = c["accepted"] + c["duplicates"] + c["quarantined"]
        check = "" if total == c["records_read"] else "   <- DOES NOT ADD UP"
        lines.append(
            f"  {c['source']:<10} {c['records_read']:>9} = {c['accepted']:>9} + "
            f"{c['duplicates']:>6} + {c['quarantined']:>6}{check}"
        )
    if not result.up_to_date:
        lines.append("")
        lines.append(
            f"expectations: {result.expectations} checked, {result.warnings} warnings "
            f"-> {Storage(result.out).uri_of(REPORT)}"
        )
    if result.analyst.kept:
        lines.append(f"kept your tables and views in mpg.duckdb: {', '.join(result.analyst.kept)}")
    lines.extend(f"could not keep {lost}" for lost in result.analyst.lost)
    if result.bigquery is not None:
        b = result.bigquery
        lines.append(
            f"bigquery: {b.tables} tables, {b.partitions} day partitions, {b.rows} rows "
            f"-> {b.dataset}"
        )
    return "\n".join(lines)


def _import_run() -> Callable[[RunOptions], RunResult]:
    """Import the Beam pipeline, only for commands that run one.

    Importing Beam without its GCP extras logs a warning on the root logger about apitools, which
    says nothing about this run; it is muted for the import alone.

    The first import makes some 320,000 objects that live as long as the process (modules,
    classes, functions). Python's cyclic collector, left on, scanned them all three times during
    the import and twice more as the run began: 0.4 s of a 9 s run over 2M spans, during which
    every thread waits. So it is off while importing, and what the import made is then frozen
    (`gc.freeze`: moved where no collection scans it; refcounting still frees it). Cycles made
    afterwards are collected as usual. A process that has the pipeline already (a caller of
    `main` in the same process) is left as it is.
    """
    first = "mpg.pipelines.run" not in sys.modules
    collecting = gc.isenabled()
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    gc.disable()
    try:
        from mpg.pipelines.run import run
    finally:
        root.setLevel(level)
        if first:
            gc.freeze()
        if collecting:
            gc.enable()
    # A failing step is logged by Beam with its traceback before the error reaches us; the error
    # itself is reported below (one line for a user error, the traceback for a bug).
    logging.getLogger("apache_beam.runners.common").setLevel(logging.CRITICAL)
    return run


def run_command(args: argparse.Namespace, passthrough: list[str]) -> int:
    from mpg.definitions.config import read_config
    from mpg.pipelines.options import RunOptions

    extra = {"block_bytes": args.block_bytes} if args.block_bytes else {}
    if args.records_per_bucket:
        extra["records_per_bucket"] = args.records_per_bucket
    config = read_config(args.out)
    # mpg's own options are checked before Beam is imported, and before Beam's options: packaging
    # for remote workers takes seconds.
    opts = RunOptions(
        traces=args.traces,
        out=args.out,
        buckets=args.buckets,
        metric_versions=tuple(args.metric_versions or config.metric_versions),
        current_metric_version=config.current_metric_version,
        full=args.full,
        bigquery=_bigquery_target(args),
        log_level=args.log_level,
        **extra,
    )
    run = _import_run()
    from mpg.cli import progress

    opts = dataclasses.replace(opts, beam_args=pipeline_args(args, passthrough))
    started = time.monotonic()
    with progress.reporting("run"):
        result = run(opts)
    print(format_headline(result, time.monotonic() - started, args.summary))
    _warn_of_lost_sources(result)
    return 0


def _warn_of_lost_sources(result: RunResult) -> None:
    """A warning on stderr for each source of which records were read and none accepted: a
    trace root of records that all end in the quarantine (say, runtime spans imported without
    their jobs' scheduler events) is almost certainly not what its user meant to measure."""
    from mpg.schemas import SOURCES

    for c in result.counts.to_pylist():
        if c["quarantined"] and not c["accepted"] and c["source"] in SOURCES:
            print(
                f"mpg: warning: every {c['source']} record read ({c['quarantined']}) was "
                "quarantined; "
                f"their reasons: mpg sql --out {result.out} "
                f'"select reason, count(*) from quarantine where source = '
                f"'{c['source']}' group by 1\"",
                file=sys.stderr,
            )


def backfill_command(args: argparse.Namespace, passthrough: list[str]) -> int:
    _import_run()  # Beam, imported quietly
    from mpg.cli import progress
    from mpg.pipelines.backfill import BackfillOptions, backfill

    opts = BackfillOptions(
        out=args.out,
        metric_version=args.metric_version,
        first=args.first,
        last=args.last,
        chunk_days=args.chunk_days,
        bigquery=_bigquery_target(args),
        log_level=args.log_level,
    )
    opts = dataclasses.replace(opts, beam_args=pipeline_args(args, passthrough))
    started = time.monotonic()
    with progress.reporting("backfill"):
        results = backfill(opts)
    if not results:
        print(f"mpg backfill: {args.metric_version} already covers {args.first}..{args.last}")
        return 0
    for r in results:
        print(f"mpg backfill {r.run_id}: {r.plan}: job tables changed on {changed_days(r)}")
    print(format_headline(results[-1], time.monotonic() - started, args.summary))
    return 0


def simulate(args: argparse.Namespace) -> int:
    from mpg.simulate import simulate as simulate_fleet

    manifest = simulate_fleet(seed=args.seed, jobs=args.jobs, days=args.days, out=args.out)
    print(f"mpg simulate: {args.jobs} jobs over {args.days} days -> {args.out}")
    for m in manifest.sources:
        print(
            f"  {m.source:<10} {m.lines_written:>9} lines in {len(m.files)} files "
            f"({m.duplicates} duplicates, {m.malformed} malformed)"
        )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    # A scheduler stops a job with SIGTERM: end like Ctrl-C, so the run records itself interrupted.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        cli = parser(words)
        args, rest = cli.parse_known_args(words)
        command = COMMANDS[args.command]
        if rest and not command.beam:
            cli.error(f"unrecognized arguments: {' '.join(rest)}")
        handler = _function(command.handler)
        return handler(args, rest) if command.beam else handler(args)
    except Exception as exc:
        error = find_user_error(exc)
        if error is None:
            raise
        print(f"mpg: error: {one_line(error)}", file=sys.stderr)
        return 2
