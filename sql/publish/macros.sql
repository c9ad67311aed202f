-- The ratios every goodput roll-up publishes (a slice of the fleet, a job's lifetime), defined once.
-- The spec's rule: ratios of sums of chip-seconds, never means of ratios; a zero denominator is
-- NULL; PG's numerator and denominator cover only job-days that have a PG (`profiled`), and
-- pg_coverage is their share of productive time; MPG = SG x RG x PG.
-- Used by sql/publish/goodput_by_slice.sql and sql/explain/job_goodput.sql as
-- `unnest(mpg_goodput_ratios(wanted, all_allocated, productive, ideal, profiled))`, which adds the
-- columns pg_coverage, sg, rg, pg, mpg. `mpg_profiled_sum(productive_chip_s, pg)`, an aggregate,
-- is `profiled` from job-day rows: the productive chip-time of the job-days that have a PG. One
-- macro per statement, as DuckDB declares them.
CREATE OR REPLACE TEMP MACRO mpg_ratio(numerator, denominator) AS
    CASE WHEN denominator > 0 THEN numerator / denominator END;

CREATE OR REPLACE TEMP MACRO mpg_goodput_ratios(wanted, all_allocated, productive, ideal, profiled) AS
    struct_pack(
        pg_coverage := mpg_ratio(profiled, productive),
        sg := mpg_ratio(all_allocated, wanted),
        rg := mpg_ratio(productive, all_allocated),
        pg := mpg_ratio(ideal, profiled),
        mpg := mpg_ratio(all_allocated, wanted) * mpg_ratio(productive, all_allocated)
            * mpg_ratio(ideal, profiled)
    );

CREATE OR REPLACE TEMP MACRO mpg_profiled_sum(productive, pg) AS
    coalesce(sum(productive) FILTER (WHERE pg IS NOT NULL), 0);
