-- The one definition of every goodput ratio mpg publishes, at every grain: a job-day
-- (job_day_goodput, through sql/publish/job_day_goodput.sql), a slice (goodput_by_slice), a job's
-- lifetime, a size class, a report's period and a comparison's period (mpg/compare/decompose.py's
-- `Sums` is held to it, bit for bit, by tests/unit/test_metric_layer.py).
-- The spec's rules: ratios of sums of chip-seconds, never means of ratios; a zero denominator is
-- NULL; PG's numerator and denominator cover only job-days that have a PG (`profiled`), and
-- pg_coverage is their share of productive time; MPG = SG x RG x PG, except that it is 0 where
-- wanted time is positive and productive time is zero (nothing was kept), even though RG or PG is
-- NULL there.
-- MPG is computed as (ideal / wanted) x (productive / profiled), the same product regrouped
-- (SG x RG = productive / wanted, PG = ideal / profiled): where every job-day has a PG, profiled
-- equals productive and MPG is ideal / wanted to the bit, the spec's job-day formula.
-- Used as `unnest(mpg_goodput_ratios(wanted, all_allocated, productive, ideal, profiled))`, which
-- adds the columns pg_coverage, sg, rg, pg, mpg. `profiled` from job-day rows is
-- `mpg_profiled(productive_chip_s, pg)` for one (its productive chip-time if it has a PG, else 0)
-- and the aggregate `mpg_profiled_sum(productive_chip_s, pg)` for several. One macro per
-- statement, as DuckDB declares them.
CREATE OR REPLACE TEMP MACRO mpg_ratio(numerator, denominator) AS
    CASE WHEN denominator > 0 THEN numerator / denominator END;

CREATE OR REPLACE TEMP MACRO mpg_goodput_ratios(wanted, all_allocated, productive, ideal, profiled) AS
    struct_pack(
        pg_coverage := mpg_ratio(profiled, productive),
        sg := mpg_ratio(all_allocated, wanted),
        rg := mpg_ratio(productive, all_allocated),
        pg := mpg_ratio(ideal, profiled),
        mpg := CASE
            WHEN wanted > 0 AND productive = 0 THEN 0.0
            ELSE mpg_ratio(ideal, wanted) * mpg_ratio(productive, profiled)
        END
    );

CREATE OR REPLACE TEMP MACRO mpg_profiled(productive, pg) AS
    CASE WHEN pg IS NOT NULL THEN productive ELSE 0 END;

CREATE OR REPLACE TEMP MACRO mpg_profiled_sum(productive, pg) AS
    coalesce(sum(mpg_profiled(productive, pg)), 0);

-- The main loss of a job or slice: the ledger category other than ideal with the most chip-time
-- (ties to the first named, in the waterfall's order: scheduling, then the runtime's losses,
-- then program loss and unprofiled time); NULL where nothing was lost. Arguments are the ten
-- categories' chip-seconds, named as the categories.
CREATE OR REPLACE TEMP MACRO mpg_main_loss(
    scheduling, runtime_idle, data_wait, init, compile, checkpoint_restore, checkpoint_save,
    lost_progress, productive_unprofiled, program_loss
) AS
    CASE greatest(
        scheduling, runtime_idle, data_wait, init, compile, checkpoint_restore, checkpoint_save,
        lost_progress, productive_unprofiled, program_loss
    )
        WHEN 0 THEN NULL
        WHEN scheduling THEN 'scheduling'
        WHEN runtime_idle THEN 'runtime_idle'
        WHEN data_wait THEN 'data_wait'
        WHEN init THEN 'init'
        WHEN compile THEN 'compile'
        WHEN checkpoint_restore THEN 'checkpoint_restore'
        WHEN checkpoint_save THEN 'checkpoint_save'
        WHEN lost_progress THEN 'lost_progress'
        WHEN productive_unprofiled THEN 'productive_unprofiled'
        WHEN program_loss THEN 'program_loss'
    END;

-- An amount (chip-seconds, dollars, kWh) rounded to 1e-9 as a DECIMAL(38, 9), so that sums of it
-- are integer arithmetic: the same bits whatever order the rows come in (DuckDB sums DOUBLEs in
-- the order its threads meet them), so every surface that reads a roll-up gets the same figure,
-- on every run. 1e-9 of a chip-second or a dollar is far below anything shown; the largest total
-- it holds is 1e29. In BigQuery (mpg.sql.bigquery_dialect) it is the amount itself: BigQuery sums
-- FLOAT64 in its own order.
CREATE OR REPLACE TEMP MACRO mpg_exact(value) AS
    CAST(value AS DECIMAL(38, 9));

-- The exact sum of amounts (mpg_exact), as a DOUBLE.
CREATE OR REPLACE TEMP MACRO mpg_sum(value) AS
    CAST(sum(mpg_exact(value)) AS DOUBLE);
