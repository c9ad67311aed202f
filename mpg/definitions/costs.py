"""What chip-time costs: a price per chip-hour and a board power per chip generation.

The defaults are a versioned data file (`costs.v1.json`, beside this module), like the chip
catalog: each figure is a public on-demand list price or a maker's board power (TDP), with its
source and the date it is as of; a generation with no citable figure has none (null), never a
guess. A fleet's own contracts and measurements go in `DIR/mpg.toml`
(`mpg.definitions.config`), which wins:

    [prices]        # USD per chip-hour, by chip generation
    "tpu-v5p" = 4.20
    [power]         # watts per chip, by chip generation
    "tpu-v5p" = 450
    [energy]
    pue = 1.1

`cost_rates` merges the two into the COST_RATES table that `sql/publish/chip_time_cost.sql`
prices the ledger with, so a change of price recomputes every day's costs from the stored ledger.

    >>> from mpg.definitions.catalog import load_catalog
    >>> rates = cost_rates(load_cost_catalog(), load_catalog(), OutputConfig()).to_pylist()
    >>> [(r["usd_per_chip_hour"], r["watts_per_chip"], r["pue"])
    ...  for r in rates if r["chip_generation"] in ("tpu-v4", "tpu-v5p")]
    [(3.22, 192.0, 1.1), (None, None, 1.1)]
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources

import polars as pl
import pyarrow as pa

from mpg.definitions.catalog import ChipCatalog
from mpg.definitions.config import CONFIG_FILE, OutputConfig
from mpg.schemas import CHIP_TIME_COST, COST_RATES, conform
from mpg.sql.files import run_goodput_sql

COSTS_FILE = "costs.v1.json"


@dataclass(frozen=True)
class CostCatalog:
    """The default rates: one row per generation (price, power and their sources; null where no
    citable figure was found) and the default PUE with its source."""

    version: str
    table: pa.Table  # chip_generation, usd_per_chip_hour, price_source, watts_per_chip, ...
    pue: float
    pue_source: str


def load_cost_catalog(name: str = COSTS_FILE) -> CostCatalog:
    doc = json.loads(resources.files("mpg.definitions").joinpath(name).read_text(encoding="utf-8"))
    chips = doc["chips"]

    version = doc["catalog_version"]

    def sourced(value: str, source: str, as_of: str) -> dict[str, list]:
        def cited(c: dict) -> str | None:
            if source not in c:
                return None
            dated = f" (as of {c[as_of]})" if as_of in c else ""
            return f"cost catalog {version}: {c[source]}{dated}"

        return {value: [c.get(value) for c in chips], source: [cited(c) for c in chips]}

    table = pa.table(
        {
            "chip_generation": [c["id"] for c in chips],
            **sourced("usd_per_chip_hour", "price_source", "price_as_of"),
            **sourced("watts_per_chip", "power_source", "power_as_of"),
        },
        schema=pa.schema([f for f in COST_RATES if f.name in {"chip_generation"} | _RATE_COLUMNS]),
    )
    pue = doc["pue"]
    return CostCatalog(
        version=version,
        table=table,
        pue=float(pue["value"]),
        pue_source=f"cost catalog {version}: {pue['source']} (as of {pue['as_of']})",
    )


_RATE_COLUMNS = {"usd_per_chip_hour", "price_source", "watts_per_chip", "power_source"}


def _overrides(values: dict[str, float], value: str, source: str, label: str) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "chip_generation": list(values),
            value: [float(v) for v in values.values()],
            source: [f"{CONFIG_FILE} [{label}]"] * len(values),
        },
        schema={"chip_generation": pl.String, value: pl.Float64, source: pl.String},
    )


def cost_rates(costs: CostCatalog, chips: ChipCatalog, config: OutputConfig) -> pa.Table:
    """COST_RATES for every generation of the chip catalog: `config`'s price, power and PUE
    where it names them, else the cost catalog's; null price or power where neither has one.

    A price is replaced with its source as a pair, so a number never carries another's source.
    """
    pue, pue_source = (
        (config.pue, f"{CONFIG_FILE} [energy] pue")
        if config.pue is not None
        else (costs.pue, costs.pue_source)
    )
    defaults = pl.from_arrow(costs.table)
    merged = (
        pl.from_arrow(chips.table)
        .select("chip_generation")
        .join(defaults, on="chip_generation", how="left", maintain_order="left")
    )
    for values, value, source, label in (
        (config.prices, "usd_per_chip_hour", "price_source", "prices"),
        (config.power, "watts_per_chip", "power_source", "power"),
    ):
        given = _overrides(dict(values), value, source, label)
        merged = (
            merged.join(given, on="chip_generation", how="left", suffix="_given")
            .with_columns(
                pl.when(pl.col(f"{value}_given").is_not_null())
                .then(pl.col(f"{value}_given"))
                .otherwise(pl.col(value))
                .alias(value),
                pl.when(pl.col(f"{value}_given").is_not_null())
                .then(pl.col(f"{source}_given"))
                .otherwise(pl.when(pl.col(value).is_not_null()).then(pl.col(source)))
                .alias(source),
            )
            .drop(f"{value}_given", f"{source}_given")
        )
    return conform(
        merged.with_columns(pl.lit(pue).alias("pue"), pl.lit(pue_source).alias("pue_source"))
        .sort("chip_generation")
        .to_arrow(),
        COST_RATES,
    )


def rates_change(previous: pa.Table, rates: pa.Table) -> str | None:
    """What changed between two COST_RATES tables, in words (None: nothing), so that a run can
    say what it re-priced: each generation whose price or power moved, and the PUE.

    >>> from mpg.definitions.catalog import load_catalog
    >>> old = cost_rates(load_cost_catalog(), load_catalog(), OutputConfig())
    >>> new = cost_rates(load_cost_catalog(), load_catalog(),
    ...                  OutputConfig(prices=(("tpu-v5p", 4.2), ("tpu-v4", 3.0))))
    >>> rates_change(old, new)
    'price of tpu-v4 $3.22 -> $3.00, of tpu-v5p none -> $4.20 a chip-hour'
    """
    if previous.equals(rates):
        return None
    before = {r["chip_generation"]: r for r in previous.to_pylist()}
    changes = []
    for label, column, unit in (
        ("price", "usd_per_chip_hour", "a chip-hour"),
        ("power", "watts_per_chip", "W a chip"),
    ):
        moved = [
            (r["chip_generation"], before.get(r["chip_generation"], {}).get(column), r[column])
            for r in rates.to_pylist()
            if before.get(r["chip_generation"], {}).get(column) != r[column]
        ]
        if moved:
            shown = ", of ".join(
                f"{g} {_rate(a, column)} -> {_rate(b, column)}" for g, a, b in moved
            )
            changes.append(f"{label} of {shown} {unit}")
    pue = (
        previous.column("pue")[0].as_py() if previous.num_rows else None,
        rates.column("pue")[0].as_py() if rates.num_rows else None,
    )
    if pue[0] != pue[1]:
        changes.append(f"PUE {pue[0]} -> {pue[1]}")
    return "; ".join(changes) or "their sources"


def _rate(value: float | None, column: str) -> str:
    if value is None:
        return "none"
    return f"${value:,.2f}" if column == "usd_per_chip_hour" else f"{value:,.0f}"


def chip_time_cost(ledger: pa.Table, job_days: pa.Table, rates: pa.Table) -> pa.Table:
    """CHIP_TIME_COST from `chip_time_ledger` and `job_day_goodput` rows (any days, any metric
    versions) and COST_RATES, by `sql/publish/chip_time_cost.sql` on this thread's in-memory
    DuckDB (`run_goodput_sql`).

    The same statement runs wherever the three are tables (the published DuckDB file); this is
    the form for Arrow in hand, such as a bucket's job tables.
    """
    inputs = {"chip_time_ledger": ledger, "job_day_goodput": job_days, "cost_rates": rates}
    rows = run_goodput_sql("publish/chip_time_cost.sql", inputs)
    return conform(rows, CHIP_TIME_COST)
