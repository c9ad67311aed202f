-- slices_vs_job_days: does each goodput_by_slice row hold the sums of the job-days it covers?
-- grain: one row per goodput_by_slice row (day, metric_version and slice columns, where a NULL
-- slice column means "all").
-- For each of the four chip-time sums, its difference from the covered job-days' sum beyond
-- $relative_tolerance of the larger magnitude; excess is the largest of the four, and the slice
-- reconciles where excess <= 0. A NULL ideal_chip_s (no job-day has one) counts as 0 on both
-- sides. job_days counts the job-day rows the slice covers.
-- inputs: tables goodput_by_slice, job_day_goodput; $relative_tolerance (DOUBLE).
with slices as (
    select
        row_number() over () as slice_row,
        *
    from goodput_by_slice
),

covered as (
    select
        s.slice_row,
        count(j.job_id) as job_days,
        coalesce(sum(j.wanted_chip_s), 0) as wanted_chip_s,
        coalesce(sum(j.all_allocated_chip_s), 0) as all_allocated_chip_s,
        coalesce(sum(j.productive_chip_s), 0) as productive_chip_s,
        coalesce(sum(j.ideal_chip_s), 0) as ideal_chip_s
    from slices as s
    left join job_day_goodput as j
        on
            j.day = s.day
            and j.metric_version = s.metric_version
            and (s.workload_class is null or j.workload_class = s.workload_class)
            and (s.framework is null or j.framework = s.framework)
            and (s.chip_generation is null or j.chip_generation = s.chip_generation)
    group by s.slice_row
),

differences as (
    select
        s.day,
        s.metric_version,
        s.workload_class,
        s.framework,
        s.chip_generation,
        c.job_days,
        abs(s.wanted_chip_s - c.wanted_chip_s)
        - $relative_tolerance * greatest(abs(s.wanted_chip_s), abs(c.wanted_chip_s))
            as wanted_excess,
        abs(s.all_allocated_chip_s - c.all_allocated_chip_s)
        - $relative_tolerance * greatest(abs(s.all_allocated_chip_s), abs(c.all_allocated_chip_s))
            as all_allocated_excess,
        abs(s.productive_chip_s - c.productive_chip_s)
        - $relative_tolerance * greatest(abs(s.productive_chip_s), abs(c.productive_chip_s))
            as productive_excess,
        abs(coalesce(s.ideal_chip_s, 0) - c.ideal_chip_s)
        - $relative_tolerance * greatest(abs(coalesce(s.ideal_chip_s, 0)), abs(c.ideal_chip_s))
            as ideal_excess
    from slices as s
    inner join covered as c using (slice_row)
),

final as (
    select
        day,
        metric_version,
        workload_class,
        framework,
        chip_generation,
        job_days,
        greatest(wanted_excess, all_allocated_excess, productive_excess, ideal_excess) as excess
    from differences
)

select * from final
order by day, metric_version, workload_class nulls first, framework nulls first,
    chip_generation nulls first
