"""Beam's workers end their bundles promptly: the state sampler a bundle's end waits for ticks
every SAMPLER_TICK_MS (`mpg.pipelines.worker.end_bundles_promptly`), where Beam's own ticks grow to
200 ms and a long bundle ended up to 200 ms after its last element.

Each case runs in a process of its own, since the tick is set for the whole process: a step
reports the tick of the sampler its worker runs under: on the launcher's worker threads (set up
by `pipeline_options`), where the worker plugin was installed (`mpg.pipelines.worker.install`,
what a worker process imports), in the direct runner's worker processes (which import it with
mpg's steps: `mpg.pipelines`), and with Beam's own defaults."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mpg.pipelines.worker import SAMPLER_TICK_MS

_PROBE = """
import sys
import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.runners.worker import statesampler
from mpg.pipelines import worker
from mpg.pipelines.accounting import latest
from mpg.pipelines.runners import pipeline_options

class Tick(beam.DoFn):
    def process(self, _):
        yield statesampler.get_current_tracker().sampling_period_ms

args = ["--runner=FnApiRunner"]
if sys.argv[1] == "plugin":  # what the plugin does in a worker process
    worker.install()
if sys.argv[1] == "processes":  # one, so that both stages run in the same worker process
    args += ["--direct_running_mode=multi_processing", "--direct_num_workers=1"]
options = pipeline_options(args, 2) if sys.argv[1] != "beam" else PipelineOptions(args)
with beam.Pipeline(options=options) as p:
    _ = (
        p
        | beam.Create([[0], [1]])
        | beam.Map(latest)  # one of mpg's steps: a worker process imports mpg.pipelines for it
        | beam.Reshuffle()  # the tick is read in a later stage, whose bundles start after that
        | beam.ParDo(Tick())
        | beam.Map(print)
    )
"""


@pytest.mark.parametrize(
    ("options", "tick"),
    [
        ("threads", SAMPLER_TICK_MS),
        ("plugin", SAMPLER_TICK_MS),
        ("processes", SAMPLER_TICK_MS),
        ("beam", 200),
    ],
)
def test_workers_sample_at_mpg_s_tick(options: str, tick: int) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, options], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == [str(tick)] * 2
