"""The output folder, as written and read: everything under `mpg run --out DIR`.

The pipeline (`mpg.pipelines`) writes the folder through this package and the readers
(`mpg.report`, `mpg.explain`, `mpg.compare`, `mpg sql`) read it through this package; this package
imports neither Beam nor `mpg.pipelines`, so that both sides import it at module level without a
cycle (tests/unit/test_layers.py).

- `store`: the folder's layout, every path in it (`OutputStore`, and `RunFiles` for one run's
  files and scratch), and the Arrow reads and writes of its files.
- `snapshot`: `current.json` and the snapshot it names (what a reader reads, what the next run
  updates); `state_key`: the key that says whether a snapshot's state may be updated in place.
- `manifest`: which trace files a snapshot has ingested; `runlog`: each run's record under `runs/`.
- `lookup`: one job's accepted records, from the record store through the job index.
- `database` and `views`: `mpg.duckdb`, its tables, `*_current` views, macros and the analysts'
  views (the views also for BigQuery).
- `pointer`: whether a folder was published to at all, with the standard library alone (a
  reader's first check, as fast as Python starts); `published`: a reader's DuckDB connection to
  the current snapshot.
"""
