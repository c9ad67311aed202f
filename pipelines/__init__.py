"""Pipelines: wire reading, the pure transforms of `mpg.transforms`, and writing."""
