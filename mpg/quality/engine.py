"""Runs declared suites into VALIDATION_RESULTS rows, with one of two engines that find the same:

- `mpg` (the default): every expectation evaluated on the Arrow table in one vectorised pass
  (`mpg.quality.arrow_checks`), in milliseconds and without importing Great Expectations;
- `great-expectations`: GX itself (`mpg.quality.gx`), the suites' reference, which tests hold
  the first to. Starting it costs seconds (its import), and each frame ~5-15 ms per expectation.

`MPG_EXPECTATIONS` names the engine a run uses (`engine_named` reads it once, on the launcher,
and the pipeline carries the name to its workers).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable

import pyarrow as pa

from mpg.core.errors import OptionsError
from mpg.quality import arrow_checks
from mpg.quality.declare import Expect, Suite, Target
from mpg.schemas import VALIDATION_RESULTS

ENGINES = ("mpg", "great-expectations")


def engine_named(name: str | None = None) -> str:
    """The engine `name` (by default `MPG_EXPECTATIONS`, else `mpg`), checked."""
    name = name or os.environ.get("MPG_EXPECTATIONS") or ENGINES[0]
    if name not in ENGINES:
        raise OptionsError(f"MPG_EXPECTATIONS={name}: not one of {', '.join(ENGINES)}")
    return name


def kwargs_json(expect: Expect) -> str:
    """The expectation's arguments as stable JSON (sorted keys), its row condition included."""
    kwargs = dict(expect.kwargs)
    if expect.when is not None:
        kwargs["row_condition"] = {"column": expect.when[0], "in": list(expect.when[1])}
    return json.dumps(kwargs, sort_keys=True)


class SuiteRunner:
    """`suites` made ready to validate frames with `engine` (Great Expectations starts here)."""

    def __init__(self, suites: Iterable[Suite], engine: str = ENGINES[0]) -> None:
        suites = tuple(suites)
        self._targets: dict[str, tuple[Suite, Target]] = {}
        for suite in suites:
            for target in suite.targets:
                if target.name in self._targets:
                    raise ValueError(f"two targets named {target.name}")
                for expect in target.expectations:
                    arrow_checks.supported(expect)
                self._targets[target.name] = (suite, target)
        if engine == "great-expectations":
            from mpg.quality.gx import GxTargets

            self._evaluate = GxTargets(suites).evaluate
        else:
            self._evaluate = arrow_checks.evaluate

    def validate(self, target_name: str, frame: pa.Table) -> pa.Table:
        """VALIDATION_RESULTS rows for one frame (in any order), in the target's declared order.

        Samples are the first unexpected rows by the target's index, so they are the same
        however the data was split into frames or ordered.
        """
        suite, target = self._targets[target_name]
        findings = self._evaluate(frame, target)
        rows = [
            {
                "suite": suite.name,
                "suite_version": suite.version,
                "target": target.name,
                "expectation": e.expectation,
                "column": ", ".join(e.columns) or None,
                "kwargs": kwargs_json(e),
                "severity": e.severity,
                "description": e.description,
                "success": finding.success,
                "element_count": finding.element_count,
                "unexpected_count": finding.unexpected_count,
                "unexpected_sample": arrow_checks.sample_json(frame, target, e, finding.rows),
                "observed": finding.observed,
            }
            for e, finding in zip(target.expectations, findings, strict=True)
        ]
        return pa.Table.from_pylist(rows, schema=VALIDATION_RESULTS)
