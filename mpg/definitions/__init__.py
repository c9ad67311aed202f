"""What every number means, decided once and versioned; the code that computes them reads it here.

- `metrics`: the metric definitions (SG, RG, PG, MPG) and their changelog, by version;
- `vocabulary`: the closed vocabularies of the trace format (workload classes, span kinds...);
- `catalog` (+ `chips.v1.json`): each chip generation's peak FLOP/s and HBM bandwidth;
- `costs` (+ `costs.v1.json`): price per chip-hour and power per chip generation;
- `config`: an output folder's own `mpg.toml` (metric version, prices) over those defaults;
- `figures`: how every surface writes a figure (dollars, chip-hours, shares).

Where the numbers are computed: `transforms/` (per bucket) and `sql/` (published tables and the
semantic layer), not here.
"""
