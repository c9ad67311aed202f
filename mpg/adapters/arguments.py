"""Every import format's options, declared without importing its adapter (which imports Polars),
so that `mpg import FORMAT --help` and a mistyped option answer at once.

The options of the job an adapter's records belong to, when its input says less than the spec
needs, are here too: runtime logs and profiler captures name no chip count or chip generation,
and no scheduler saw them. A user who has no scheduler trace for such a job passes `--chips` and
`--chip-generation`, and the adapter synthesizes the job's scheduler events
(`mpg.adapters.jobs.synthesized_scheduler`); without them no scheduler events are written, and
the job's own scheduler trace must supply them.
"""

from __future__ import annotations

import argparse
import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from mpg.core.errors import OptionsError
from mpg.definitions.vocabulary import FRAMEWORKS, WORKLOAD_CLASSES


def instant(text: str) -> dt.datetime:
    """An argparse type: an RFC 3339 instant, as an aware UTC datetime. A time without an offset
    would be read in the local zone of whoever runs the import, so it is refused, with the
    instant it would be in UTC as the example to type.

    >>> instant("2023-07-01T02:00:00+02:00")
    datetime.datetime(2023, 7, 1, 0, 0, tzinfo=datetime.timezone.utc)
    >>> instant("2023-01-01")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: '2023-01-01' needs an offset or Z (e.g. 2023-01-01T00:00:00Z)
    """
    try:
        t = dt.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an RFC 3339 instant") from None
    if t.tzinfo is None:
        example = t.strftime("%Y-%m-%dT%H:%M:%S") + ("" if not t.microsecond else f".{t:%f}")
        raise argparse.ArgumentTypeError(f"{text!r} needs an offset or Z (e.g. {example}Z)")
    return t.astimezone(dt.UTC)


@dataclass(frozen=True)
class JobOptions:
    chips: int | None
    chip_generation: str | None
    workload_class: str
    framework: str

    @property
    def synthesize(self) -> bool:
        return self.chip_generation is not None


def add_job_arguments(parser: argparse.ArgumentParser, *, framework: str) -> None:
    group = parser.add_argument_group(
        "the job, for synthesized scheduler events (SG is then 1 by construction)"
    )
    group.add_argument("--chips", type=int, help="chips the job runs on")
    group.add_argument(
        "--chip-generation", help="catalog id, e.g. tpu-v5e; without it no scheduler events"
    )
    group.add_argument(
        "--workload-class", choices=WORKLOAD_CLASSES, default="training", help="default: training"
    )
    group.add_argument(
        "--framework", choices=FRAMEWORKS, default=framework, help=f"default: {framework}"
    )


def job_options(args: argparse.Namespace, *, writes_profiles: bool = True) -> JobOptions:
    """The options, checked: --chip-generation needs --chips, and must name a catalog
    generation. A profile adapter needs --chips alone, for its records' `chips`; an adapter that
    writes no profiles would do nothing with it, so there --chips needs --chip-generation (a
    user who gave only --chips meant scheduler events, and would get none)."""
    from mpg.definitions.catalog import load_catalog

    if args.chip_generation is not None and args.chips is None:
        raise OptionsError("--chip-generation needs --chips")
    if args.chips is not None and args.chip_generation is None and not writes_profiles:
        raise OptionsError(
            "--chips needs --chip-generation: together they synthesize the job's scheduler "
            "events, and this format writes no profile records that --chips alone would serve"
        )
    if args.chips is not None and not 0 < args.chips <= 10**9:
        raise OptionsError(f"--chips must be between 1 and 10^9, not {args.chips}")
    catalog = load_catalog()
    if args.chip_generation is not None and args.chip_generation not in catalog.generations:
        raise OptionsError(
            f"--chip-generation {args.chip_generation!r} is not in the chip catalog "
            f"({', '.join(catalog.generations)})"
        )
    return JobOptions(args.chips, args.chip_generation, args.workload_class, args.framework)


def add_runtime_argument(parser: argparse.ArgumentParser) -> None:
    """`--no-runtime` of the cluster adapters (args.no_runtime): scheduler events only."""
    parser.add_argument(
        "--no-runtime",
        action="store_true",
        help="write no allocation spans (RG is then 0: the spec gives a job without spans none)",
    )


def ml_goodput(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--job-id",
        help="job of checkpoint records that name none (default: the one job_name of their file)",
    )
    add_job_arguments(parser, framework="jax")


def xplane(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--job-id", help="the job the captures belong to (or job_id in a sidecar)")
    parser.add_argument(
        "--attempt", type=int, help="the program's incarnation, 0 after its first start (default 0)"
    )
    parser.add_argument(
        "--cost-analysis",
        type=Path,
        metavar="FILE",
        help="JSON of one step's per-device cost analysis ({'flops': ...}); then jax is not needed",
    )
    add_job_arguments(parser, framework="jax")


def pytorch(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--job-id", help="the job (default: the FLOPs sidecar's job_id)")
    parser.add_argument(
        "--flops",
        type=Path,
        metavar="FILE",
        help="FLOPs sidecar for every trace (default: NAME.flops.json beside each "
        "NAME.pt.trace.json[.gz])",
    )
    parser.add_argument(
        "--attempt", type=int, default=0, help="the job's attempt these traces are of (default 0)"
    )
    parser.add_argument(
        "--start",
        type=instant,
        metavar="TIME",
        help="for traces without wall-clock times only: when the first profiled step began",
    )
    add_job_arguments(parser, framework="pytorch")


def alibaba_gpu_v2023(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--origin",
        type=instant,
        required=True,
        help="RFC 3339 instant that the trace's time 0 stands for (it is undisclosed), "
        "e.g. 2023-07-01T00:00:00Z; it decides where UTC days cut the pods' time",
    )
    parser.add_argument(
        "--workload-class",
        choices=WORKLOAD_CLASSES,
        help="every pod's workload class (default: from qos, LS -> serving, others -> training)",
    )
    parser.add_argument("--framework", choices=FRAMEWORKS, default="other", help="default: other")
    add_runtime_argument(parser)


def add_timezone_argument(parser: argparse.ArgumentParser, hint: str) -> None:
    """`--timezone` (args.timezone), with a format's own `hint` on what zone its times are in."""
    parser.add_argument(
        "--timezone",
        default="UTC",
        help=f"IANA zone the input's local times are in ({hint}); default: UTC",
    )


def philly(parser: argparse.ArgumentParser) -> None:
    add_timezone_argument(parser, "Philly's own utilization logs say PDT/PST: America/Los_Angeles")
    parser.add_argument(
        "--chip-generation",
        default="gpu-unknown",
        help="catalog id of the cluster's GPUs; default: gpu-unknown (no peak: PG is null)",
    )
    parser.add_argument(
        "--workload-class", choices=WORKLOAD_CLASSES, default="training", help="default: training"
    )
    parser.add_argument("--framework", choices=FRAMEWORKS, default="other", help="default: other")
    add_runtime_argument(parser)


def slurm(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--gpu-type",
        action="append",
        default=[],
        metavar="TYPE=ID",
        help="a GPU type of the TRES (gres/gpu:TYPE) and its catalog id, e.g. a100=gpu-a100; "
        "repeat for each type (types not given: gpu-unknown, which has no peak)",
    )
    add_timezone_argument(parser, "the zone sacct ran in; give TZ=UTC to sacct to need none")
    parser.add_argument(
        "--workload-class", choices=WORKLOAD_CLASSES, default="training", help="default: training"
    )
    parser.add_argument("--framework", choices=FRAMEWORKS, default="other", help="default: other")
    parser.add_argument(
        "--as-of",
        type=instant,
        help="RFC 3339 instant sacct ran, where a running job's span ends (default: the latest "
        "time in the input, earlier than it: sacct does not print when it ran)",
    )
    add_runtime_argument(parser)


def _accelerator(text: str) -> tuple[str, str]:
    value, sep, generation = text.partition("=")
    if not sep or not value.strip() or not generation.strip():
        raise argparse.ArgumentTypeError(f"not VALUE=ID: {text!r}")
    return value.strip(), generation.strip()


def _positive_days(text: str) -> float:
    try:
        days = float(text)
    except ValueError:
        days = -1.0
    if not days > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of days")
    return days


def kubernetes(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--accelerator",
        type=_accelerator,
        action="append",
        default=[],
        metavar="VALUE=ID",
        help="map a value of cloud.google.com/gke-tpu-accelerator or gke-accelerator to a "
        "catalog id, over the built-in table; repeatable",
    )
    parser.add_argument(
        "--chip-generation",
        help="catalog id for pod sets whose accelerator type no node selector or assigned "
        "flavor names (default: their Workloads are quarantined)",
    )
    parser.add_argument(
        "--workload-class", choices=WORKLOAD_CLASSES, default="training", help="default: training"
    )
    parser.add_argument("--framework", choices=FRAMEWORKS, default="other", help="default: other")
    parser.add_argument(
        "--as-of",
        help="RFC 3339 instant the export was taken, where a running attempt's span ends "
        "(default: the latest time in the input)",
    )
    parser.add_argument(
        "--owner-label",
        metavar="KEY",
        help="label (or annotation) of a Workload, its JobSet or Job, or its pods that names "
        "the job's owner (default: no owner)",
    )
    parser.add_argument(
        "--keep-days",
        type=_positive_days,
        default=2.0,
        metavar="DAYS",
        help="how long after a Workload ends the import keeps what it read of it, for records "
        "that arrive late (default: 2)",
    )
    add_runtime_argument(parser)
