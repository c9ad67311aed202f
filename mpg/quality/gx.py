"""Great Expectations itself, evaluating the declared suites: the reference `mpg.quality.
arrow_checks` is held to, and the engine a user can ask a run to check with
(`MPG_EXPECTATIONS=great-expectations`, docs/quality.md).

Starting GX is the expensive part (importing it takes 2.5-4 s, building the context, assets and
suites a few tenths more), so `GxTargets` does it once in its constructor (a Beam DoFn's `setup`)
and a call is cheaper: the frame goes in as a dataframe batch parameter and all of a target's GX
expectations run as one suite on one batch (GX hashes the whole frame per batch).

GX's cost is a fixed ~5-15 ms per expectation, whatever the frame's size, and about half of it
is the detail of a result (counts, samples). So a frame is validated in two passes: every
expectation with result format BOOLEAN_ONLY, then only those that failed again, one by one, with
SUMMARY for their counts and first unexpected rows. All GX expectations here are row-level, so a
success means no unexpected row of `element_count` = the frame's rows. Types and required values
are mpg's own (`arrow_checks.CHECKED_HERE`), never GX's.

Kept off the network and the disk:
- the context is ephemeral with in-memory stores, built from an explicit config without the
  temporary data-docs site that `get_context(mode="ephemeral")` otherwise sets up under $TMPDIR;
- analytics are off in that config, and `GX_ANALYTICS_ENABLED=false` is forced (not defaulted)
  before the import: never reaching for the network is the project's promise, not a GX
  preference a user's environment could turn back on;
- progress bars are off, so nothing is drawn on a worker's stderr.
GX is imported inside the constructor only: importing `mpg.cli`, `mpg.pipelines.*` or
`mpg.quality` never imports it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from mpg.quality import arrow_checks
from mpg.quality.arrow_checks import Finding
from mpg.quality.declare import Expect, Suite, Target

if TYPE_CHECKING:
    from great_expectations.core import ExpectationValidationResult
    from great_expectations.datasource.fluent.interfaces import Batch

# Where GX's result says which of the target's expectations it is (GX reorders results).
_ORDINAL = "mpg_ordinal"


def start_gx() -> Any:
    os.environ["GX_ANALYTICS_ENABLED"] = "false"
    import great_expectations as gx  # here only: keeps GX off every import path

    return gx


def _ephemeral_context(gx: Any) -> Any:
    from great_expectations.data_context.types.base import (
        DataContextConfig,
        InMemoryStoreBackendDefaults,
        ProgressBarsConfig,
    )

    config = DataContextConfig(
        store_backend_defaults=InMemoryStoreBackendDefaults(init_temp_docs_sites=False),
        analytics_enabled=False,
        progress_bars=ProgressBarsConfig(globally=False),
    )
    return gx.get_context(project_config=config, mode="ephemeral")


def _gx_expectation(expect: Expect, ordinal: int) -> Any:
    from great_expectations.expectations.registry import get_expectation_impl

    return get_expectation_impl(expect.expectation)(**expect.kwargs, meta={_ORDINAL: ordinal})


def _pandas(frame: pa.Table) -> Any:
    """`frame` for GX: timestamps as naive UTC (pandas deprecates the tz-aware path GX takes to
    compare them), every other column as pandas converts it."""
    naive = pa.schema(
        [
            f.with_type(pa.timestamp(f.type.unit)) if pa.types.is_timestamp(f.type) else f
            for f in frame.schema
        ]
    )
    return frame.cast(naive).to_pandas()


def _error(info: Mapping[str, Any]) -> str | None:
    """The message of an exception GX caught while checking (flat, or keyed by metric)."""
    if info.get("raised_exception"):
        return str(info.get("exception_message"))
    nested = [v for v in info.values() if isinstance(v, Mapping) and v.get("raised_exception")]
    return str(nested[0].get("exception_message")) if nested else None


def _detailed(result: ExpectationValidationResult, rows: int) -> Finding:
    details = result.result or {}
    error = _error(result.exception_info or {})
    return Finding(
        success=bool(result.success) and error is None,
        element_count=int(details.get("element_count", rows)),
        unexpected_count=details.get("unexpected_count"),
        rows=tuple(details.get("partial_unexpected_index_list") or ()),
        observed=f"error: {error}" if error else None,
    )


@dataclass(frozen=True)
class _Prepared:
    """One target made ready: the GX batch definition and GX expectations."""

    target: Target
    batch_definition: Any  # GX: the whole-dataframe batch of this target's asset
    expectations: dict[int, Any]  # the target's ordinal -> GX expectation (not CHECKED_HERE)
    gx_suite: Any  # the GX ExpectationSuite of those


class GxTargets:
    """Great Expectations set up once for `suites`: one dataframe asset and GX suite per target."""

    def __init__(self, suites: Iterable[Suite]) -> None:
        gx = start_gx()
        context = _ephemeral_context(gx)
        datasource = context.data_sources.add_pandas("mpg")
        self._prepared: dict[str, _Prepared] = {}
        for suite in suites:
            for target in suite.targets:
                expectations = {
                    i: _gx_expectation(e, i)
                    for i, e in enumerate(target.expectations)
                    if e.expectation not in arrow_checks.CHECKED_HERE
                }
                asset = datasource.add_dataframe_asset(target.name)
                gx_suite = gx.ExpectationSuite(
                    name=target.name, expectations=[*expectations.values()]
                )
                self._prepared[target.name] = _Prepared(
                    target=target,
                    batch_definition=asset.add_batch_definition_whole_dataframe("all"),
                    expectations=expectations,
                    gx_suite=context.suites.add(gx_suite),
                )

    def evaluate(self, frame: pa.Table, target: Target) -> list[Finding]:
        """What `arrow_checks.evaluate` finds, found by GX (mpg's own types by mpg). GX samples
        the first unexpected rows in frame order, so it is handed the frame sorted by the
        target's index (NULLs first, ties in frame order) and its rows are mapped back."""
        keys = [(c, "ascending", "at_start") for c in target.index if c in frame.column_names]
        order = pc.sort_indices(frame, keys).to_pylist()
        found = self._run_gx(self._prepared[target.name], frame.take(pa.array(order, pa.int64())))
        own = arrow_checks.evaluate(frame, target)
        return [
            replace(found[i], rows=tuple(order[r] for r in found[i].rows)) if i in found else own[i]
            for i in range(len(target.expectations))
        ]

    @staticmethod
    def _run_gx(prepared: _Prepared, frame: pa.Table) -> dict[int, Finding]:
        if not prepared.expectations:
            return {}
        parameters = {"dataframe": _pandas(frame)}
        batch: Batch = prepared.batch_definition.get_batch(batch_parameters=parameters)
        passed = batch.validate(prepared.gx_suite, result_format="BOOLEAN_ONLY")
        found: dict[int, Finding] = {}
        for result in passed.results:
            ordinal = int(result.expectation_config.meta[_ORDINAL])
            if result.success:
                found[ordinal] = Finding(True, frame.num_rows, unexpected_count=0)
            else:
                detail = batch.validate(
                    prepared.expectations[ordinal],
                    result_format={
                        "result_format": "SUMMARY",
                        "partial_unexpected_count": arrow_checks.SAMPLE_SIZE,
                    },
                )
                found[ordinal] = _detailed(detail, frame.num_rows)
        return found
