"""The `mpg` command.

    mpg run --traces ROOT --out DIR [--buckets N] [--metric-version v1 ...] [--full] [beam opts]
    mpg backfill --out DIR --metric-version v2 --from DAY --to DAY [--chunk-days N] [beam opts]
        both: [--publish bigquery --project P --dataset D [--bigquery-endpoint URL]]
    mpg simulate --seed N --jobs N --days N --out ROOT
    mpg import FORMAT SRC... --out ROOT [options]   (formats: mpg import --help)
    mpg sql [--out DIR] [--csv | --json] ["SELECT ..."]   (no query: a DuckDB shell)
    mpg compare --base D1..D2 --current D3..D4 [--out DIR] [--json]
    mpg report --out DIR [--from DAY] [--to DAY] [--file PATH] [--compare BASE CURRENT]

User errors (a missing trace root, an unreadable file, a full disk, a bad option: `mpg.errors`)
print one line and exit 2; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from mpg import progress
from mpg.adapters.command import add_import_arguments, import_command
from mpg.arguments import day
from mpg.compare.command import add_compare_arguments, compare_command
from mpg.config import read_config
from mpg.errors import OptionsError, find_user_error, one_line
from mpg.explain.command import add_explain_arguments, explain_command
from mpg.pipelines.bigquery_target import BigQueryTarget
from mpg.pipelines.options import RunOptions
from mpg.pipelines.result import RunResult
from mpg.pipelines.store import REPORT
from mpg.report.command import add_report_arguments, report_command
from mpg.simulate import simulate
from mpg.sql_command import add_sql_arguments, sql_command
from mpg.storage import Storage


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mpg", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser(
        "run",
        help="ingest traces, account chip-time, publish goodput tables",
        description="Unknown options (--runner, --region, ...) are passed to Apache Beam, and "
        "so is --project.",
    )
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
    _add_bigquery_arguments(run)

    back = commands.add_parser(
        "backfill",
        help="compute a metric version over past days from the stored records",
        description="Unknown options (--runner, ...) are passed to Apache Beam.",
    )
    back.add_argument(
        "--out", required=True, help="output folder of earlier runs (a folder, gs://, s3://)"
    )
    back.add_argument("--metric-version", required=True, help="the version to fill in, e.g. v2")
    back.add_argument("--from", dest="first", type=day, required=True, help="first day (UTC)")
    back.add_argument("--to", dest="last", type=day, required=True, help="last day (UTC)")
    back.add_argument(
        "--chunk-days", type=int, default=31, help="days per published step (default 31)"
    )
    _add_bigquery_arguments(back)

    sim = commands.add_parser("simulate", help="write a synthetic fleet's traces")
    sim.add_argument("--seed", type=int, required=True)
    sim.add_argument("--jobs", type=int, required=True)
    sim.add_argument("--days", type=int, required=True)
    sim.add_argument("--out", type=Path, required=True)

    add_explain_arguments(
        commands.add_parser("explain", help="one job's chip-time ledger, down to its input lines")
    )
    add_sql_arguments(
        commands.add_parser("sql", help="run SQL on the published tables and views, or a shell")
    )
    add_compare_arguments(
        commands.add_parser("compare", help="why fleet MPG changed between two periods")
    )
    add_report_arguments(
        commands.add_parser("report", help="the fleet's goodput as one HTML page of charts")
    )
    add_import_arguments(
        commands.add_parser(
            "import",
            help="convert a real format (framework logs, profiles, cluster traces) to a trace root",
        )
    )
    return parser


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
    mpg's default runner where none is named, and packaging for remote workers."""
    from mpg.pipelines.runners import beam_args  # after Beam's import, which _import_run quiets

    return beam_args([*rest, f"--project={args.project}"] if args.project else rest)


def _fmt(value: object) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def format_headline(result: RunResult, seconds: float) -> str:
    rows = result.headline.to_pylist()
    lines = [
        f"mpg run {result.run_id}: {result.files} trace files in {seconds:.1f} s "
        f"-> {result.database}"
    ]
    if result.up_to_date:
        lines.append("  up to date: no new, changed or removed trace files; nothing published")
    else:
        days = sorted({day for _, day in result.changed_days})
        span = f" ({days[0]} .. {days[-1]})" if days else ""
        lines.append(
            f"  {result.plan}; parsed {result.parsed}, retracted {result.retracted}; "
            f"job tables changed on {len(days)} days{span}"
        )
    if result.skipped:
        lines.append(f"  skipped {len(result.skipped)} files not named *.jsonl[.gz]")
    lines.append("")
    lines.append(
        f"{'day':<11} {'ver':<4} {'chip generation':<16} {'chip-hours':>11} "
        f"{'SG':>6} {'RG':>6} {'PG':>6} {'MPG':>6}"
    )
    for r in rows:
        scope = r["chip_generation"] or "fleet"
        lines.append(
            f"{r['day']!s:<11} {r['metric_version']:<4} {scope:<16} "
            f"{r['wanted_chip_s'] / 3600:>11.1f} {_fmt(r['sg']):>6} {_fmt(r['rg']):>6} "
            f"{_fmt(r['pg']):>6} {_fmt(r['mpg']):>6}"
        )
    if not rows:
        lines.append("(no job has wanted time in this input)")
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
    """
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        from mpg.pipelines.run import run
    finally:
        root.setLevel(level)
    # A failing step is logged by Beam with its traceback before the error reaches us; the error
    # itself is reported below (one line for a user error, the traceback for a bug).
    logging.getLogger("apache_beam.runners.common").setLevel(logging.CRITICAL)
    return run


def _run(args: argparse.Namespace, passthrough: list[str]) -> int:
    run = _import_run()
    extra = {"block_bytes": args.block_bytes} if args.block_bytes else {}
    if args.records_per_bucket:
        extra["records_per_bucket"] = args.records_per_bucket
    config = read_config(args.out)
    opts = RunOptions(
        traces=args.traces,
        out=args.out,
        buckets=args.buckets,
        metric_versions=tuple(args.metric_versions or config.metric_versions),
        current_metric_version=config.current_metric_version,
        full=args.full,
        bigquery=_bigquery_target(args),
        **extra,
    )
    # mpg's own options are checked first: packaging for remote workers takes seconds.
    opts = dataclasses.replace(opts, beam_args=pipeline_args(args, passthrough))
    started = time.monotonic()
    with progress.reporting("run"):
        result = run(opts)
    print(format_headline(result, time.monotonic() - started))
    return 0


def _backfill(args: argparse.Namespace, passthrough: list[str]) -> int:
    _import_run()  # Beam, imported quietly
    from mpg.pipelines.backfill import BackfillOptions, backfill

    opts = BackfillOptions(
        out=args.out,
        metric_version=args.metric_version,
        first=args.first,
        last=args.last,
        chunk_days=args.chunk_days,
        bigquery=_bigquery_target(args),
    )
    opts = dataclasses.replace(opts, beam_args=pipeline_args(args, passthrough))
    started = time.monotonic()
    with progress.reporting("backfill"):
        results = backfill(opts)
    if not results:
        print(f"mpg backfill: {args.metric_version} already covers {args.first}..{args.last}")
        return 0
    for r in results:
        days = sorted({day for _, day in r.changed_days})
        print(f"mpg backfill {r.run_id}: {r.plan}: job tables changed on {len(days)} days")
    print(format_headline(results[-1], time.monotonic() - started))
    return 0


def _simulate(args: argparse.Namespace) -> int:
    manifest = simulate(seed=args.seed, jobs=args.jobs, days=args.days, out=args.out)
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
    parser = _parser()
    args, rest = parser.parse_known_args(argv)
    if args.command not in ("run", "backfill") and rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    try:
        if args.command == "explain":
            return explain_command(args)
        if args.command == "report":
            return report_command(args)
        if args.command == "import":
            return import_command(args)
        if args.command == "sql":
            return sql_command(args)
        if args.command == "compare":
            return compare_command(args)
        if args.command == "backfill":
            return _backfill(args, rest)
        return _run(args, rest) if args.command == "run" else _simulate(args)
    except Exception as exc:
        error = find_user_error(exc)
        if error is None:
            raise
        print(f"mpg: error: {one_line(error)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
