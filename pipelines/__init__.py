"""Pipelines: wire reading, the pure transforms of `mpg.transforms`, and writing.

A Beam worker process that unpickles one of mpg's steps imports this package, and with it
`mpg.pipelines.worker`, which sets the process up: its exit hook and its warnings before any of
mpg's steps runs there, its bundles' prompt ends from the next stage on (a bundle's sampler is
made before its steps are unpickled). The worker plugin (`--beam_plugins=mpg.pipelines.worker`)
does it all when the process starts where the runner passes the pipeline's options to its
workers; the direct runner's worker processes (`--direct_running_mode=multi_processing`) get
none, so this import is what reaches them."""

from mpg.pipelines import worker as _worker  # noqa: F401  (sets up a worker process)
