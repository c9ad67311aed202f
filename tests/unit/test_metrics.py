"""The metric versions' ideal step time, as a pure expression over one profile record joined
with its catalog entry. Every record here runs on 2 chips of 275e12 FLOP/s and 1200e9 HBM bytes/s
(tpu-v4's figures) unless it says otherwise: 2.75e15 FLOPs take 5 s, 1.92e13 HBM bytes 8 s."""

from __future__ import annotations

import polars as pl
import pytest

from mpg.definitions.metrics import METRIC_VERSIONS


def _ideal_step_time(version: str, **record: float | None) -> float | None:
    base = {"model_flops": 2.75e15, "chips": 2, "peak_flops_per_chip": 275e12}
    base |= {"hbm_bytes": 1.92e13, "hbm_bytes_per_s": 1200e9}
    frame = pl.DataFrame([base | record], schema={k: pl.Float64 for k in base})
    return frame.select(METRIC_VERSIONS[version].ideal_step_time()).item()


@pytest.mark.parametrize(
    ("version", "record", "seconds"),
    [
        ("v1", {}, 5.0),  # compute only
        ("v2", {}, 8.0),  # max(5 s, 8 s): memory-bound
        ("v2", {"hbm_bytes": 2.4e12}, 5.0),  # max(5 s, 1 s): compute-bound
        ("v2", {"hbm_bytes": None}, 5.0),  # no hbm_bytes: the compute term
        ("v2", {"hbm_bytes_per_s": None}, 5.0),  # no bandwidth: the compute term
        ("v2", {"peak_flops_per_chip": None}, None),  # no peak: no roofline, as v1
        ("v1", {"peak_flops_per_chip": None}, None),
    ],
)
def test_ideal_step_time(
    version: str, record: dict[str, float | None], seconds: float | None
) -> None:
    assert _ideal_step_time(version, **record) == seconds
