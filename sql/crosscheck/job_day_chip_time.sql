-- Chip-time ledger per job and UTC day, metric v1 without PG (no profiles, so no ideal time): a
-- second, independent implementation of the spec's "Accounting" rules (docs: fleet-traces.md),
-- read straight from the record store, to cross-check job_day_goodput / chip_time_ledger and to
-- benchmark against the pipeline.
-- grain: one row per job and UTC day on which the job has wanted time > 0.
-- parameters: $records (VARCHAR): the `records` folder of a record store, i.e. the parent of
--   source=scheduler/ and source=runtime/ (day=YYYY-MM-DD/bucket=NNNN/*.parquet of accepted,
--   de-duplicated records; each source needs at least one file). Profiles are not read.
-- columns: day (DATE), job_id, then DOUBLE chip-seconds: wanted, all_allocated, productive and the
--   ledger categories lost_progress, checkpoint_save, checkpoint_restore, compile, init, data_wait,
--   runtime_idle, scheduling. productive and the next seven add up to all_allocated, and
--   all_allocated + scheduling to wanted: lengths are summed as integer microseconds and turned into
--   seconds once, after the multiplication by chips_requested.
--
-- Shape: one sweep per job over its events in time order (no join of spans against allocation
-- intervals, which grows as spans x intervals on long jobs):
--   * a task event changes the job's held chips by what it changes its task's holding (a schedule
--     replaces the count, a release sets it to 0; at one instant a task's releases come first);
--   * a span adds 1 at its start and -1 at its end to the counter of its precedence rank
--     (1 kept step, 2 lost step, 3 checkpoint_save, 4 checkpoint_restore, 5 compile, 6 init,
--     7 data_wait);
--   * zero events cut the sweep at JOB_SUBMIT, at the end of wanted time (JOB_END or, for an open
--     job, the latest ts/end over ALL scheduler events and runtime spans in the store) and at
--     every UTC midnight in between.
-- Running sums give the state on each piece [t, next t); a piece in wanted time is scheduling
-- where fewer than chips_requested chips are held, else the lowest rank open, else runtime_idle.
-- JOB_END needs no release event: wanted time, and with it every piece that counts, stops there.
-- The held chips and the seven rank counters travel as 31-bit fields of two HUGEINTs, so the
-- sweep takes two running sums instead of eight (exact while a job holds fewer than 2^31 chips
-- and has fewer than 2^31 spans of one rank open at once).
-- Kept steps: every step of a serving / bulk_inference job; a training step of attempt a when a
-- checkpoint_save of attempt a with step >= its step ended no later than a ended, or when a is
-- the job's last attempt (highest number) and the job ended FINISHED or has not ended. Attempt a
-- ends at the earliest start of a span of any higher attempt, else at JOB_END, else never.
-- Decided where the spec is silent (docs/decisions.md): of two schedules of one task at one
-- instant the larger applies, so file order never matters; zero-length spans cover nothing.

with scheduler as (
    select type, job_id, epoch_us(ts) as ts_us, chips_requested, workload_class,
        task_index, chips, state, file, line
    from read_parquet($records || '/source=scheduler/*/*/*.parquet', hive_partitioning = true)
),

runtime as (
    select job_id, attempt, kind, epoch_us(start) as start_us, epoch_us("end") as end_us, step
    from read_parquet($records || '/source=runtime/*/*/*.parquet', hive_partitioning = true)
),

data_end as (
    select greatest(
        (select max(ts_us) from scheduler),
        (select max(greatest(start_us, end_us)) from runtime)
    ) as data_end_us
),

jobs as (
    select
        submit.job_id,
        submit.ts_us as submit_us,
        submit.chips_requested,
        submit.workload_class,
        job_end.ts_us as job_end_us,
        job_end.state as end_state,
        greatest(submit.ts_us, coalesce(job_end.ts_us, data_end.data_end_us)) as wanted_end_us,
        row_number() over (order by submit.job_id) as job_key
    from scheduler as submit
    left join scheduler as job_end
        on job_end.job_id = submit.job_id and job_end.type = 'JOB_END'
    cross join data_end
    where submit.type = 'JOB_SUBMIT'
),

task_changes as (
    select
        job_key,
        ts_us,
        held_after - lag(held_after, 1, 0) over (
            partition by job_key, task_index order by ts_us, is_schedule, held_after
        ) as held_change
    from (
        select
            job_key, task_index, ts_us, file, line,
            type = 'TASK_SCHEDULE' as is_schedule,
            case when type = 'TASK_SCHEDULE' then chips else 0 end as held_after
        from scheduler
        join jobs using (job_id)
        where type in ('TASK_SCHEDULE', 'TASK_EVICT', 'TASK_FAIL', 'TASK_LOST', 'TASK_FINISH')
    )
),

attempts as (
    select job_id, attempt, min(start_us) as first_start_us
    from runtime
    group by job_id, attempt
),

attempt_ends as (
    select
        attempts.job_id,
        attempts.attempt,
        jobs.job_key,
        coalesce(
            min(attempts.first_start_us) over later_attempts, jobs.job_end_us
        ) as attempt_end_us,
        jobs.workload_class <> 'training'
            or (attempts.attempt = max(attempts.attempt) over (partition by attempts.job_id)
                and (jobs.end_state is null or jobs.end_state = 'FINISHED')) as keeps_all_steps
    from attempts
    join jobs using (job_id)
    window later_attempts as (
        partition by attempts.job_id order by attempts.attempt desc
        rows between unbounded preceding and 1 preceding
    )
),

durable_steps as (
    select runtime.job_id, runtime.attempt, max(runtime.step) as durable_step
    from runtime
    join attempt_ends using (job_id, attempt)
    where runtime.kind = 'checkpoint_save'
        and (attempt_ends.attempt_end_us is null or runtime.end_us <= attempt_ends.attempt_end_us)
    group by runtime.job_id, runtime.attempt
),

ranked_spans as (
    select
        attempt_ends.job_key,
        runtime.start_us,
        runtime.end_us,
        case runtime.kind
            when 'step' then
                case when attempt_ends.keeps_all_steps or runtime.step <= durable_steps.durable_step
                    then 1 else 2 end
            when 'checkpoint_save' then 3
            when 'checkpoint_restore' then 4
            when 'compile' then 5
            when 'init' then 6
            when 'data_wait' then 7
        end as span_rank
    from runtime
    join attempt_ends using (job_id, attempt)
    left join durable_steps using (job_id, attempt)
    where runtime.end_us > runtime.start_us
),

-- Each open span adds one to its rank's 31-bit field of a packed 128-bit counter (ranks 1-3 in
-- `a` above the held chips, 4-7 in `b`): two running sums instead of eight.
span_units as (
    select
        job_key,
        start_us,
        end_us,
        case when span_rank <= 3 then 1::hugeint << (31 * span_rank) else 0 end as a_unit,
        case when span_rank >= 4 then 1::hugeint << (31 * (span_rank - 4)) else 0 end as b_unit
    from ranked_spans
),

-- Pieces must not straddle the ends of wanted time or a UTC midnight.
cuts as (
    select job_key, submit_us as t from jobs
    union all
    select job_key, wanted_end_us from jobs
    union all
    select job_key, unnest(range(
        submit_us - ((submit_us % 86400000000) + 86400000000) % 86400000000 + 86400000000,
        wanted_end_us,
        86400000000
    ))
    from jobs
),

events as (
    select job_key, ts_us as t, held_change::hugeint as a_change, 0::hugeint as b_change
    from task_changes
    where held_change <> 0
    union all
    select job_key, start_us, a_unit, b_unit from span_units
    union all
    select job_key, end_us, -a_unit, -b_unit from span_units
    union all
    select job_key, t, 0, 0 from cuts
),

instants as (
    select job_key, t, sum(a_change) as a_change, sum(b_change) as b_change
    from events
    group by job_key, t
),

pieces as (
    select
        job_key,
        t,
        lead(t) over sweep - t as length_us,
        sum(a_change) over sweep as a,
        sum(b_change) over sweep as b
    from instants
    window sweep as (partition by job_key order by t rows between unbounded preceding and current row)
),

-- category: 0 scheduling, 1..7 the rank that holds the piece, 8 runtime_idle
classified as (
    select
        pieces.job_key,
        (t - ((t % 86400000000) + 86400000000) % 86400000000) // 86400000000 as day_number,
        pieces.length_us,
        case
            when a & 2147483647 < jobs.chips_requested then 0
            when (a >> 31) & 2147483647 > 0 then 1
            when (a >> 62) & 2147483647 > 0 then 2
            when a >> 93 > 0 then 3
            when b & 2147483647 > 0 then 4
            when (b >> 31) & 2147483647 > 0 then 5
            when (b >> 62) & 2147483647 > 0 then 6
            when b >> 93 > 0 then 7
            else 8
        end as category
    from pieces
    join jobs using (job_key)
    where pieces.t >= jobs.submit_us and pieces.t < jobs.wanted_end_us and pieces.length_us > 0
),

job_day_us as (
    select
        job_key,
        day_number,
        sum(length_us) as wanted_us,
        sum(length_us) filter (where category <> 0) as all_allocated_us,
        sum(length_us) filter (where category = 1) as productive_us,
        sum(length_us) filter (where category = 2) as lost_progress_us,
        sum(length_us) filter (where category = 3) as checkpoint_save_us,
        sum(length_us) filter (where category = 4) as checkpoint_restore_us,
        sum(length_us) filter (where category = 5) as compile_us,
        sum(length_us) filter (where category = 6) as init_us,
        sum(length_us) filter (where category = 7) as data_wait_us,
        sum(length_us) filter (where category = 8) as runtime_idle_us,
        sum(length_us) filter (where category = 0) as scheduling_us
    from classified
    group by job_key, day_number
),

final as (
    select
        date '1970-01-01' + job_day_us.day_number::integer as day,
        jobs.job_id,
        (wanted_us * chips_requested)::double / 1e6 as wanted_chip_s,
        (coalesce(all_allocated_us, 0) * chips_requested)::double / 1e6 as all_allocated_chip_s,
        (coalesce(productive_us, 0) * chips_requested)::double / 1e6 as productive_chip_s,
        (coalesce(lost_progress_us, 0) * chips_requested)::double / 1e6 as lost_progress_chip_s,
        (coalesce(checkpoint_save_us, 0) * chips_requested)::double / 1e6
            as checkpoint_save_chip_s,
        (coalesce(checkpoint_restore_us, 0) * chips_requested)::double / 1e6
            as checkpoint_restore_chip_s,
        (coalesce(compile_us, 0) * chips_requested)::double / 1e6 as compile_chip_s,
        (coalesce(init_us, 0) * chips_requested)::double / 1e6 as init_chip_s,
        (coalesce(data_wait_us, 0) * chips_requested)::double / 1e6 as data_wait_chip_s,
        (coalesce(runtime_idle_us, 0) * chips_requested)::double / 1e6 as runtime_idle_chip_s,
        (coalesce(scheduling_us, 0) * chips_requested)::double / 1e6 as scheduling_chip_s
    from job_day_us
    join jobs using (job_key)
)

select * from final
order by day, job_id
