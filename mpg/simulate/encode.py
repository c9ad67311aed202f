"""Write typed records as JSON lines, vectorised with Polars string expressions.

A line is built by concatenating `"key": value` pieces; an absent (null) optional field drops
out of the concatenation, so it is omitted rather than written as null. Keys come in the order of
the spec's examples, with `json.dumps`'s separators. The simulator's strings (ids, vocabulary
values) never need JSON escaping, so none is done.

Timestamps are RFC 3339: whole seconds unless a record has milliseconds, in UTC with `Z`, and for
a small share of records with an offset (`+00:00`, `+02:00`, ...), the local time shifted so the
instant is unchanged.
"""

from __future__ import annotations

import numpy as np
import polars as pl

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


def _object(*fields: tuple[str, pl.Expr]) -> pl.Expr:
    """One JSON object per row; a field whose value is null is left out."""
    pieces = [
        pl.lit(f'{", " if i else ""}"{name}": ') + value for i, (name, value) in enumerate(fields)
    ]
    return pl.concat_str([pl.lit("{"), *pieces, pl.lit("}")], ignore_nulls=True)


def _with_offsets(frame: pl.DataFrame, rng: np.random.Generator) -> pl.DataFrame:
    return pl.concat([frame, _offsets(rng, frame.height)], how="horizontal")


def scheduler_lines(
    events: pl.DataFrame, jobs: pl.DataFrame, rng: np.random.Generator
) -> pl.Series:
    """JOB_SUBMIT lines carry the job's attributes; the others their own few fields."""
    submit = pl.col("type") == "JOB_SUBMIT"
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

    def on_submit(expr: pl.Expr) -> pl.Expr:
        return pl.when(submit).then(expr)

    return frame.select(
        _object(
            ("type", _quoted("type")),
            ("ts", _rfc3339("ts_ms")),
            ("job_id", _quoted("job_id")),
            ("chips_requested", on_submit(_number("chips_requested"))),
            ("chip_generation", on_submit(_quoted("chip_generation"))),
            ("workload_class", on_submit(_quoted("workload_class"))),
            ("framework", on_submit(_quoted("framework"))),
            ("priority", on_submit(_number("priority"))),
            ("owner", on_submit(_quoted("owner"))),
            ("team", on_submit(_quoted("team"))),
            ("queue", on_submit(_quoted("queue"))),
            ("topology", on_submit(_quoted("topology"))),
            ("task_index", _number("task_index")),
            ("chips", _number("chips")),
            ("state", _quoted("state")),
        ).alias("line")
    ).to_series()


def runtime_lines(spans: pl.DataFrame, rng: np.random.Generator) -> pl.Series:
    return (
        _with_offsets(spans, rng)
        .select(
            _object(
                ("job_id", _quoted("job_id")),
                ("attempt", _number("attempt")),
                ("kind", _quoted("kind")),
                ("start", _rfc3339("start_ms")),
                ("end", _rfc3339("end_ms")),
                ("step", _number("step")),
            ).alias("line")
        )
        .to_series()
    )


def profile_lines(profiles: pl.DataFrame, rng: np.random.Generator) -> pl.Series:
    return (
        _with_offsets(profiles, rng)
        .select(
            _object(
                ("job_id", _quoted("job_id")),
                ("ts", _rfc3339("ts_ms")),
                ("step", _number("step")),
                ("step_time_s", _number("step_time_s")),
                ("model_flops", _number("model_flops")),
                ("hbm_bytes", _number("hbm_bytes")),
                ("chips", _number("chips")),
                ("flops_source", _quoted("flops_source")),
            ).alias("line")
        )
        .to_series()
    )
