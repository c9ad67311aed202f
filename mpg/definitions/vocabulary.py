"""The closed vocabularies of the trace format (spec: fleet-traces.md), stored as strings.

Each list is append-only: values are written to tables as these strings, never as enum numbers,
so adding one never renumbers history.
"""

from __future__ import annotations

WORKLOAD_CLASSES = ("training", "serving", "bulk_inference")
FRAMEWORKS = ("jax", "tensorflow", "pytorch", "other")
JOB_STATES = ("FINISHED", "FAILED", "CANCELLED")
TASK_RELEASES = ("TASK_EVICT", "TASK_FAIL", "TASK_LOST", "TASK_FINISH")
SPAN_KINDS = ("init", "compile", "data_wait", "step", "checkpoint_save", "checkpoint_restore")
KINDS_WITH_STEP = ("step", "checkpoint_save", "checkpoint_restore")
TASK_EVENTS = ("TASK_SCHEDULE", *TASK_RELEASES)
EVENT_TYPES = ("JOB_SUBMIT", *TASK_EVENTS, "JOB_END")
