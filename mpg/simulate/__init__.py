"""A synthetic accelerator fleet, written as a trace root in the spec's layout.

It exists to give the pipeline realistic, messy input whose answer key is known: piecemeal gang
scheduling, preemptions and restarts with lost progress, checkpoints, data waits, three workload
classes, four frameworks, nine chip generations, sampled profiles, jobs still open at the end;
delivered shuffled over plain and gzipped files with exporter retries and malformed lines, all
counted in the returned manifest. Deterministic per seed.

    mpg simulate --seed 7 --jobs 60 --days 3 --out data/sample_traces

    >>> from mpg.simulate import simulate  # simulate(seed, jobs, days, out) -> SimulationManifest
"""

from mpg.simulate.manifest import SimulationManifest, SourceManifest
from mpg.simulate.simulator import SimulationError, simulate

__all__ = ["SimulationError", "SimulationManifest", "SourceManifest", "simulate"]
