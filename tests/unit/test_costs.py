"""The ledger in dollars and kWh: the cost catalog, DIR/mpg.toml's overrides, and
sql/publish/chip_time_cost.sql over the spec's worked example `tiny` (its expected ledger and
job-days, read from the CSVs beside the spec). Every expected number is recomputed here by hand
from the ledger row and the rate: usd = chip_s / 3600 x price, kwh = chip_s / 3600 x watts / 1000
x pue, in that order, so they match to the bit."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from mpg.core.errors import OptionsError
from mpg.definitions.catalog import load_catalog
from mpg.definitions.config import OutputConfig, read_config
from mpg.definitions.costs import chip_time_cost, cost_rates, load_cost_catalog
from mpg.schemas import CHIP_TIME_COST, CHIP_TIME_LEDGER, COST_RATES, JOB_DAY_GOODPUT
from tests.support.files import FIXTURES

TINY = FIXTURES / "spec_examples" / "tiny"


def _csv(name: str, schema: pa.Schema) -> pa.Table:
    with duckdb.connect() as con:
        table = con.read_csv(str(TINY / "expected" / f"{name}.csv")).to_arrow_table()
    for field in schema:  # the spec's CSVs have no owner, team or queue (NULL: none named)
        if field.name not in table.column_names:
            table = table.append_column(field, pa.nulls(table.num_rows, field.type))
    return table.select(schema.names).cast(schema)


LEDGER = _csv("chip_time_ledger", CHIP_TIME_LEDGER)
JOB_DAYS = _csv("job_day_goodput", JOB_DAY_GOODPUT)


def _rates(config: OutputConfig) -> pa.Table:
    return cost_rates(load_cost_catalog(), load_catalog(), config)


def test_the_cost_catalog_covers_the_chip_catalog_with_a_source_for_every_figure() -> None:
    doc = json.loads(resources.files("mpg.definitions").joinpath("costs.v1.json").read_text())
    assert [c["id"] for c in doc["chips"]] == load_catalog().generations
    rates = _rates(OutputConfig()).to_pylist()
    for row in rates:
        # A number has a source and a date; no number, no source (and no guess).
        assert (row["usd_per_chip_hour"] is None) == (row["price_source"] is None)
        assert (row["watts_per_chip"] is None) == (row["power_source"] is None)
        if row["price_source"]:
            assert "cost catalog v1: " in row["price_source"] and "(as of 20" in row["price_source"]
    priced = {r["chip_generation"]: r["usd_per_chip_hour"] for r in rates if r["usd_per_chip_hour"]}
    assert priced == {"tpu-v4": 3.22, "gpu-h100": 98.32 / 8}
    powered = {r["chip_generation"]: r["watts_per_chip"] for r in rates if r["watts_per_chip"]}
    assert powered == {
        "tpu-v4": 192,
        "gpu-a100": 400,
        "gpu-h100": 700,
        "gpu-h200": 700,
        "gpu-b200": 1000,
    }
    assert {r["pue"] for r in rates} == {1.1}
    assert rates[0]["pue_source"].startswith("cost catalog v1: Google's published fleet-wide PUE")


def test_every_row_is_its_chip_hours_times_the_rates_to_the_bit() -> None:
    config = OutputConfig(prices=(("tpu-v5p", 4.2),), power=(("tpu-v5p", 450.0),), pue=1.12)
    cost = chip_time_cost(LEDGER, JOB_DAYS, _rates(config))
    assert cost.schema == CHIP_TIME_COST
    rows = cost.to_pylist()
    assert len(rows) == LEDGER.num_rows == 18
    # tiny: train-a is tpu-v5p (priced and powered here by mpg.toml), serve-b gpu-h100 (the
    # catalog's AWS p5.48xlarge price / 8 and 700 W).
    rate = {"train-a": (4.2, 450.0), "serve-b": (98.32 / 8, 700.0)}
    for row in rows:
        price, watts = rate[row["job_id"]]
        assert row["usd"] == row["chip_s"] / 3600 * price
        assert row["kwh"] == row["chip_s"] / 3600 * watts / 1000 * 1.12
        assert (row["usd_per_chip_hour"], row["watts_per_chip"], row["pue"]) == (price, watts, 1.12)
    # One row by hand: train-a's 2400 chip-s of ideal time on 2026-11-20 is 2/3 of a chip-hour.
    (ideal,) = [r for r in rows if (r["job_id"], r["category"]) == ("train-a", "ideal")]
    assert (ideal["chip_s"], ideal["usd"], ideal["kwh"]) == (2400, 2.8, 0.336)
    assert (ideal["price_source"], ideal["power_source"]) == (
        "mpg.toml [prices]",
        "mpg.toml [power]",
    )


def test_each_job_days_costs_add_up_to_its_wanted_chip_hours_cost() -> None:
    config = OutputConfig(prices=(("tpu-v5p", 4.2),), power=(("tpu-v5p", 450.0),))
    rows = chip_time_cost(LEDGER, JOB_DAYS, _rates(config)).to_pylist()
    rate = {"train-a": (4.2, 450.0), "serve-b": (98.32 / 8, 700.0)}
    for job_day in JOB_DAYS.to_pylist():
        key = (job_day["day"], job_day["job_id"])
        parts = [r for r in rows if (r["day"], r["job_id"]) == key]
        price, watts = rate[job_day["job_id"]]
        wanted_h = job_day["wanted_chip_s"] / 3600
        assert sum(r["usd"] for r in parts) == pytest.approx(wanted_h * price, rel=1e-12)
        assert sum(r["kwh"] for r in parts) == pytest.approx(
            wanted_h * watts / 1000 * 1.1, rel=1e-12
        )


def test_a_generation_without_a_price_or_power_gets_nulls_not_a_guess() -> None:
    # tpu-v5p has no public list price or power in catalog v1; only the price is given here.
    rows = chip_time_cost(LEDGER, JOB_DAYS, _rates(OutputConfig(prices=(("tpu-v5p", 4.2),))))
    train = [r for r in rows.to_pylist() if r["job_id"] == "train-a"]
    assert train and all(r["usd"] is not None and r["kwh"] is None for r in train)
    assert {(r["watts_per_chip"], r["power_source"], r["pue"]) for r in train} == {
        (None, None, 1.1)
    }
    bare = chip_time_cost(LEDGER, JOB_DAYS, _rates(OutputConfig())).to_pylist()
    assert {(r["usd"], r["kwh"]) for r in bare if r["job_id"] == "train-a"} == {(None, None)}


def test_an_override_replaces_the_default_with_its_source() -> None:
    rates = _rates(
        OutputConfig(prices=(("gpu-h100", 2.5),), power=(("tpu-v4", 200.0),))
    ).to_pylist()
    by = {r["chip_generation"]: r for r in rates}
    assert (by["gpu-h100"]["usd_per_chip_hour"], by["gpu-h100"]["price_source"]) == (
        2.5,
        "mpg.toml [prices]",
    )
    assert by["gpu-h100"]["watts_per_chip"] == 700  # power still the catalog's
    assert by["gpu-h100"]["power_source"].startswith("cost catalog v1: NVIDIA H100 SXM5")
    assert (by["tpu-v4"]["watts_per_chip"], by["tpu-v4"]["power_source"]) == (
        200,
        "mpg.toml [power]",
    )
    assert by["tpu-v4"]["usd_per_chip_hour"] == 3.22
    assert cost_rates(load_cost_catalog(), load_catalog(), OutputConfig()).schema == COST_RATES


def test_prices_power_and_pue_are_read_from_mpg_toml(tmp_path: Path) -> None:
    (tmp_path / "mpg.toml").write_text(
        '[prices]\n"tpu-v5p" = 4.20\n"gpu-h100" = 3\n'
        '[power]\n"tpu-v5p" = 450\n[energy]\npue = 1.1\n'
    )
    config = read_config(tmp_path)
    assert config.prices == (("gpu-h100", 3.0), ("tpu-v5p", 4.2))
    assert (config.power, config.pue) == ((("tpu-v5p", 450.0),), 1.1)
    assert read_config(tmp_path / "none") == OutputConfig()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[prices]\n"tpu-v9" = 1\n',
            "[prices] 'tpu-v9' is not a chip generation (known: tpu-v4, tpu-v5e, ",
        ),
        ('[prices]\n"tpu-v5p" = "4.20"\n', "[prices] 'tpu-v5p' = '4.20' is not a number of USD"),
        ('[prices]\n"tpu-v5p" = -1\n', "[prices] 'tpu-v5p' = -1 is not a number of USD per chip"),
        ('[power]\n"tpu-v5p" = nan\n', "[power] 'tpu-v5p' = nan is not a number of watts per chip"),
        ('[power]\n"tpu-v5p" = true\n', "[power] 'tpu-v5p' = True is not a number of watts"),
        ("[energy]\npue = 0.9\n", "[energy] pue = 0.9 is not a number >= 1"),
        ("[energy]\npue = inf\n", "[energy] pue = inf is not a number >= 1"),
        ("[energy]\npeu = 1.2\n", "unknown key [energy] 'peu' (known: pue)"),
        ("[price]\n", "unknown entry 'price' (known: [metrics] current, [prices], [power], "),
    ],
)
def test_a_bad_cost_setting_is_a_one_line_error(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "mpg.toml").write_text(text)
    with pytest.raises(OptionsError) as raised:
        read_config(tmp_path)
    assert str(raised.value).startswith(f"{tmp_path / 'mpg.toml'}: {message}")
    assert "\n" not in str(raised.value)
