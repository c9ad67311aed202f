"""ML Productivity Goodput for accelerator fleets: SG x RG x PG from scheduler, runtime and
profile traces, computed by Apache Beam pipelines and published to DuckDB (see README.md)."""

__version__ = "0.1.0"
