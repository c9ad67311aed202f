"""The chip catalog: per chip generation, peak dense bf16 FLOP/s and HBM bandwidth per chip.

It is a versioned data file (`chips.v1.json`, beside this module) rather than code, so a new
generation is a reviewed data change with its public source next to the figure.

    >>> load_catalog().table.num_rows >= 9
    True
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources

import pyarrow as pa

CATALOG_FILE = "chips.v1.json"

CATALOG_SCHEMA = pa.schema(
    [
        pa.field("chip_generation", pa.string(), nullable=False),
        pa.field("peak_flops_per_chip", pa.float64()),
        pa.field("hbm_bytes_per_s", pa.float64()),
    ]
)


@dataclass(frozen=True)
class ChipCatalog:
    version: str
    table: pa.Table  # CATALOG_SCHEMA: one row per generation, peak/bandwidth null where unknown

    @property
    def generations(self) -> list[str]:
        return self.table.column("chip_generation").to_pylist()


def load_catalog(name: str = CATALOG_FILE) -> ChipCatalog:
    doc = json.loads(resources.files("mpg.definitions").joinpath(name).read_text(encoding="utf-8"))
    chips = doc["chips"]
    table = pa.table(
        {
            "chip_generation": [c["id"] for c in chips],
            "peak_flops_per_chip": [c.get("peak_flops_per_chip") for c in chips],
            "hbm_bytes_per_s": [c.get("hbm_bytes_per_s") for c in chips],
        },
        schema=CATALOG_SCHEMA,
    )
    return ChipCatalog(version=doc["catalog_version"], table=table)
