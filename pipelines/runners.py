"""Beam's options for `mpg run`: everything mpg does not know goes to Beam, checked before any work.

    mpg run --traces /shared/traces --out /shared/out \
        --runner=DataflowRunner --project=P --region=R --temp_location=gs://B/tmp

`beam_args` is the one place where the Beam command line is assembled: a runner is named when the
user names none (Beam's own default first tries to download Prism), a bad option becomes one
`OptionsError` line instead of Beam's usage dump and exit, and when the workers are not this
process, mpg's own code is packaged for them (`mpg.pipelines.packaging`). An option that mpg reads
itself and Beam needs too is added back here.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from typing import NoReturn

from apache_beam.options.pipeline_options import (
    PipelineOptions,
    PipelineOptionsT,
    PortableOptions,
    SetupOptions,
    StandardOptions,
    WorkerOptions,
    _BeamArgumentParser,
)
from apache_beam.options.pipeline_options_validator import PipelineOptionsValidator
from apache_beam.runners.runner import PipelineRunner, create_runner

from mpg.core.errors import OptionsError
from mpg.pipelines.options import DEFAULT_BEAM_ARGS
from mpg.pipelines.packaging import package_args
from mpg.pipelines.worker import end_bundles_promptly

# Runners whose workers are this process (or threads and forks of it), so mpg is importable there.
IN_PROCESS_RUNNERS = frozenset(
    {
        "FnApiRunner",
        "DirectRunner",
        "SwitchingDirectRunner",
        "BundleBasedDirectRunner",
        "PrismRunner",
    }
)
# Environments that run the workers inside the launching process (the portable runners' LOOPBACK).
IN_PROCESS_ENVIRONMENTS = frozenset({"LOOPBACK", "EMBEDDED"})
# Beam's own runner in this process: it picks its workers itself (`--direct_running_mode`), and
# ignores an SDK environment or, with worker processes, tries to start one (Docker, a boot
# command) and hangs where there is none.
DIRECT_RUNNERS = frozenset({"FnApiRunner", "DirectRunner", "SwitchingDirectRunner"})
ENVIRONMENT_OPTIONS = ("--environment_type", "--environment_config", "--environment_option")
# Beam runners mpg does not run on, with why: their options are named rather than "unknown".
UNSUPPORTED_RUNNERS = {
    "DaskRunner": "dask",
    "InteractiveRunner": "interactive",
    "KafkaStreamsRunner": "kafka_streams",
}
SUPPORTED = (
    "mpg runs on FnApiRunner/DirectRunner, PrismRunner, PortableRunner (Flink, Spark, a local job "
    "service) and DataflowRunner (docs/scaling.md)"
)
DATAFLOW_EXTRA = "pip install 'mpg-fleet-goodput[dataflow]'"
# Two worker threads: the heavy steps release the GIL (DuckDB, Polars, Arrow), so two blocks or
# two buckets at once use both cores of a small machine; below two buckets' worth of records
# there is little to share, and the threads' gRPC start costs more than they save
# (`pipeline_options`).
LOCAL_WORKERS = ("--direct_num_workers=2", "--direct_running_mode=multi_threading")
# What every worker process imports when it starts (a clean exit, warnings as log records).
WORKER_PLUGIN = "--beam_plugins=mpg.pipelines.worker"


def beam_args(passthrough: Sequence[str]) -> tuple[str, ...]:
    """The Beam command line for one run, from the options `mpg run` did not recognise, with
    mpg's worker set-up as a Beam plugin (`mpg.pipelines.worker`)."""
    args = tuple(passthrough)
    if parse_options(args).view_as(StandardOptions).runner is None:
        args = (*args, *DEFAULT_BEAM_ARGS)
    args = (*args, WORKER_PLUGIN)
    options = checked_options(args)
    return (*args, *package_args()) if needs_packaging(options) else args


class _ViewedOnce(PipelineOptions):
    """Beam's options, each view of them made once.

    Beam views a pipeline's options as `TypeOptions` several times for every transform it
    applies (`Pipeline.apply`, `typehints.is_consistent_with`), and each view builds and runs an
    argparse parser for its class: about 770 views, 0.2 s of the 0.33 s that building the update
    pipeline took on the 2M-span bench fleet (0.12 s with one view per class). A view is only a
    window onto the options' one dictionary, so one per class serves every caller.
    """

    def view_as(self, cls: type[PipelineOptionsT]) -> PipelineOptionsT:
        views = self.__dict__.get("_views")
        if views is None:
            views = {}
            object.__setattr__(self, "_views", views)  # not an option: past Beam's __setattr__
        if cls not in views:
            views[cls] = super().view_as(cls)
        return views[cls]


def pipeline_options(args: Sequence[str], buckets: int) -> PipelineOptions:
    """Beam's options for a pipeline whose records fill `buckets` job buckets (of
    `--records-per-bucket`, whatever `--buckets` forces): `args`, and on Beam's in-process runner
    (mpg's default) two worker threads where there are two buckets' worth or more to share and the
    user named neither option (docs/decisions.md, "Parallel workers on one machine"). Where the
    runner's workers are this process, they are set up as the worker plugin sets up a worker
    process's (`mpg.pipelines.worker.end_bundles_promptly`)."""
    options = _ViewedOnce(list(args))
    if runner_name(options) in IN_PROCESS_RUNNERS:
        end_bundles_promptly()
    named = {a.split("=", 1)[0] for a in args}
    if (
        buckets >= 2
        and runner_name(options) == "FnApiRunner"
        and not named & {a.split("=", 1)[0] for a in LOCAL_WORKERS}
    ):
        options = _ViewedOnce([*args, *LOCAL_WORKERS])
    return options


def parse_options(args: Sequence[str]) -> PipelineOptions:
    """`args` as Beam's options; an unknown option or a bad value is an OptionsError.

    Beam itself drops an unknown option with a warning (a typo in `--temp_location` would be
    lost) and answers a bad value with its whole usage text and an exit: both become one line.
    """
    parser = _RaisingParser(allow_abbrev=False)
    for options_class in {str(c): c for c in PipelineOptions.__subclasses__()}.values():
        options_class._add_argparse_args(parser)
    _, unknown = parser.parse_known_args(list(args))
    if unknown:
        name = unknown[0].split("=", 1)[0]
        for runner, prefix in UNSUPPORTED_RUNNERS.items():
            if name.startswith(f"--{prefix}_"):
                raise OptionsError(f"{name} is an option of Beam's {runner}: {SUPPORTED}")
        raise OptionsError(f"unknown option {name} (neither mpg run's nor Beam's)")
    return PipelineOptions(list(args))


class _RaisingParser(_BeamArgumentParser):
    """Beam's option parser, raising an OptionsError where argparse would print usage and exit."""

    def error(self, message: str) -> NoReturn:
        raise OptionsError(message)


def checked_options(args: Sequence[str]) -> PipelineOptions:
    """Parsed options whose runner exists, passes Beam's own validation and can be imported whole
    (Dataflow's client needs Beam's GCP extras), so a run fails before it has done any work."""
    options = parse_options(args)
    name = runner_name(options)
    if name in UNSUPPORTED_RUNNERS:
        raise OptionsError(f"--runner={name} is not supported: {SUPPORTED}")
    if name in DIRECT_RUNNERS:
        given = [a.split("=", 1)[0] for a in args if a.startswith(ENVIRONMENT_OPTIONS)]
        if given:
            raise OptionsError(
                f"{given[0]} is for portable runners, not {name}, which runs its workers itself "
                "(--direct_running_mode=multi_processing --direct_num_workers=N for worker "
                "processes; or --runner=PortableRunner with an environment: docs/scaling.md)"
            )
    runner = _runner(options)
    if name == "DataflowRunner":  # before the validator, which asks GCS about the temp bucket
        _require_dataflow_client()
    with _quiet("apache_beam.options.pipeline_options"):
        errors = PipelineOptionsValidator(options, runner).validate()
    if errors:
        raise OptionsError(" ".join(errors))
    _require_job_server(options, name)
    return options


def runner_name(options: PipelineOptions) -> str:
    """The runner's class name, whether given short (`FlinkRunner`) or as a dotted path."""
    return str(options.view_as(StandardOptions).runner).rsplit(".", 1)[-1]


def _runner(options: PipelineOptions) -> PipelineRunner:
    try:
        return create_runner(options.view_as(StandardOptions).runner)
    except ValueError as exc:
        raise OptionsError(str(exc)) from exc
    except ImportError as exc:  # a runner named by its module, whose extras are not installed
        raise OptionsError(
            f"cannot load runner {runner_name(options)}: {exc}; {SUPPORTED}"
        ) from exc


def _require_dataflow_client() -> None:
    """Beam imports Dataflow's API client only when a job is submitted: try it now."""
    try:
        import apache_beam.runners.dataflow.internal.apiclient  # noqa: F401
    except ImportError as exc:
        raise OptionsError(
            f"--runner=DataflowRunner needs Beam's Google Cloud extras: {DATAFLOW_EXTRA}"
        ) from exc


def _require_job_server(options: PipelineOptions, name: str) -> None:
    """A portable runner needs a job server: the user's (`--job_endpoint`), or the program Beam
    fetches on first use (Flink's and Spark's job server jars from Maven Central, the Prism
    binary from GitHub). Fetched now, so that a machine that cannot reach them fails in one line
    before the run has staged anything, rather than minutes later with Beam's traceback."""
    if options.view_as(PortableOptions).job_endpoint:
        return
    if name == "PortableRunner":
        raise OptionsError(
            "--runner=PortableRunner needs --job_endpoint=HOST:PORT, a Flink, Spark or Beam "
            "job server's (docs/scaling.md)"
        )
    try:
        if name == "PrismRunner":
            from apache_beam.runners.portability.prism_runner import PrismJobServer

            # What Beam calls when it starts Prism (no public API fetches the binary alone).
            PrismJobServer(options)._get_executable_path()
        elif name in ("FlinkRunner", "SparkRunner"):
            from apache_beam.runners.portability import flink_runner, spark_runner
            from apache_beam.runners.portability.job_server import JavaJarJobServer

            jar = {
                "FlinkRunner": flink_runner.FlinkJarJobServer,
                "SparkRunner": spark_runner.SparkJarJobServer,
            }[name](options).path_to_jar()
            JavaJarJobServer.local_jar(jar)
    except (RuntimeError, ValueError, OSError) as exc:
        raise OptionsError(
            f"--runner={name} cannot get its job server: {exc} (or start one and pass "
            "--runner=PortableRunner --job_endpoint=HOST:PORT: docs/scaling.md)"
        ) from exc


@contextlib.contextmanager
def _quiet(logger_name: str) -> Iterator[None]:
    """Mute a logger's warnings while options are checked: Beam's validator warns about the GCS
    checks it cannot make yet, and repeats them when the job is submitted."""
    logger = logging.getLogger(logger_name)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def needs_packaging(options: PipelineOptions) -> bool:
    """Whether mpg must ship its own code: the workers run outside this process and the user has
    not said how they get it (a setup file, packages, requirements or a container image)."""
    environment = options.view_as(PortableOptions).environment_type
    if environment is None:
        in_process = runner_name(options) in IN_PROCESS_RUNNERS
    else:
        in_process = environment.upper() in IN_PROCESS_ENVIRONMENTS
    return not in_process and not _user_packaging(options)


def _user_packaging(options: PipelineOptions) -> bool:
    """Whether the user already provides the workers' code: a setup file, packages, requirements,
    a container image, or (`--environment_config`) workers of their own."""
    setup = options.view_as(SetupOptions)
    worker = options.view_as(WorkerOptions)
    return any(
        (
            setup.setup_file,
            setup.extra_packages,
            setup.requirements_file,
            setup.prebuild_sdk_container_engine,
            worker.sdk_container_image,
            options.view_as(PortableOptions).environment_config,
        )
    )
