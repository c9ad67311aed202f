"""Write typed records as JSON lines, vectorised with Polars string expressions.

A line is built by concatenating `"key": value` pieces; an absent (null) optional field drops
out of the concatenation, so it is omitted rather than written as null. Keys come in the order of
the spec's examples (`mpg.schemas.TRACE_FIELDS`), with `json.dumps`'s separators. The
simulator's strings (ids, vocabulary values) never need JSON escaping, so none is done.

Timestamps are RFC 3339: whole seconds unless a record has milliseconds, in UTC with `Z`, and for
a small share of records with an offset (`+00:00`, `+02:00`, ...), the local time shifted so the
instant is unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl
import pyarrow as pa

from mpg.schemas import RECORD_SCHEMAS, TIME_FIELDS, TRACE_FIELDS

# (suffix, minutes east of UTC, share of records)
_OFFSETS = (
    ("Z", 0, 0.99),
    ("+00:00", 0, 0.004),
    ("+02:00", 120, 0.003),
    ("-05:00", -300, 0.002),
    ("+05:30", 330, 0.001),
)


def _offsets(rng: np.random.Generator, n: int) -> pl.DataFrame:
    """Per record, the offset its exporter writes times in."""
    code = rng.choice(len(_OFFSETS), size=n, p=[share for _, _, share in _OFFSETS])
    suffix = np.array([s for s, _, _ in _OFFSETS], dtype=object)[code]
    minutes = np.array([m for _, m, _ in _OFFSETS], dtype=np.int64)[code]
    return pl.DataFrame(
        {"_suffix": suffix, "_offset_min": minutes}, schema_overrides={"_suffix": pl.String}
    )


def _rfc3339(ms_column: str) -> pl.Expr:
    ms = pl.col(ms_column)
    local = pl.from_epoch(ms + pl.col("_offset_min") * 60_000, time_unit="ms")
    frac = ms % 1000
    return pl.concat_str(
        [
            pl.lit('"'),
            local.dt.strftime("%Y-%m-%dT%H:%M:%S"),
            pl.when(frac != 0).then(pl.lit(".") + frac.cast(pl.String).str.zfill(3)),
            pl.col("_suffix"),
            pl.lit('"'),
        ],
        ignore_nulls=True,
    )


def _quoted(column: str) -> pl.Expr:
    return pl.lit('"') + pl.col(column) + pl.lit('"')


def _number(column: str) -> pl.Expr:
    return pl.col(column).cast(pl.String)


def _value(field: pa.Field) -> pl.Expr:
    """A field's JSON value: an instant from its `<name>_ms` column, a string quoted, a number
    as Polars writes it (as Python's repr would)."""
    if field.name in TIME_FIELDS:
        return _rfc3339(f"{field.name}_ms")
    return _quoted(field.name) if pa.types.is_string(field.type) else _number(field.name)


def _lines(
    frame: pl.DataFrame, source: str, only_when: Mapping[str, pl.Expr] | None = None
) -> pl.Series:
    """One JSON object per row: the source's fields that `frame` has columns for, in the
    spec's order (`mpg.schemas.TRACE_FIELDS`), each where `only_when` holds for it; a field
    whose value is null is left out."""
    only_when = only_when or {}
    columns = {c.removesuffix("_ms") for c in frame.columns}
    fields = [RECORD_SCHEMAS[source].field(n) for n in TRACE_FIELDS[source] if n in columns]
    pieces = []
    for i, field in enumerate(fields):
        value = _value(field)
        value = pl.when(only_when[field.name]).then(value) if field.name in only_when else value
        pieces.append(pl.lit(f'{", " if i else ""}"{field.name}": ') + value)
    line = pl.concat_str([pl.lit("{"), *pieces, pl.lit("}")], ignore_nulls=True)
    return frame.select(line.alias("line")).to_series()


def _with_offsets(frame: pl.DataFrame, rng: np.random.Generator) -> pl.DataFrame:
    return pl.concat([frame, _offsets(rng, frame.height)], how="horizontal")


def scheduler_lines(
    events: pl.DataFrame, jobs: pl.DataFrame, rng: np.random.Generator
) -> pl.Series:
    """JOB_SUBMIT lines carry the job's attributes; the others their own few fields."""
    attributes = jobs.select(
        "job",
        "chips_requested",
        "chip_generation",
        "workload_class",
        "framework",
        "priority",
        "owner",
        "team",
        "queue",
        "topology",
    )
    frame = _with_offsets(events, rng).join(attributes, on="job", how="left", maintain_order="left")
    submit = pl.col("type") == "JOB_SUBMIT"
    return _lines(frame, "scheduler", dict.fromkeys(attributes.columns[1:], submit))


def runtime_lines(spans: pl.DataFrame, rng: np.random.Generator) -> pl.Series:
    return _lines(_with_offsets(spans, rng), "runtime")


def profile_lines(profiles: pl.DataFrame, rng: np.random.Generator) -> pl.Series:
    return _lines(_with_offsets(profiles, rng), "profiles")
