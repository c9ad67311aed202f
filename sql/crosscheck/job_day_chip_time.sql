-- Chip-time ledger per job and UTC day, metric v1 without PG (no profiles, no ideal time): an
-- independent second implementation of the spec's "Accounting" rules, read straight from the
-- record store, to cross-check the pipeline's job_day_goodput and chip_time_ledger and to benchmark.
-- grain: one row per job and UTC day on which the job has wanted time > 0.
-- parameters: $records (VARCHAR): the `records` folder of a record store, holding
--   source={scheduler,runtime}/day=YYYY-MM-DD/bucket=NNNN/*.parquet of accepted, de-duplicated
--   records (each of the two sources needs at least one file). Profiles are not read.
-- columns: day (DATE), job_id, then DOUBLE chip-seconds: wanted, all_allocated, productive and the
--   ledger categories lost_progress, checkpoint_save, checkpoint_restore, compile, init, data_wait,
--   runtime_idle, scheduling. productive + the seven categories after it = wanted, and
--   wanted - scheduling = all_allocated, exactly (all sums are integer microseconds, converted to
--   seconds once at the end, after multiplying by chips_requested).
--
-- Shape: one sweep per job over a merged, time-ordered stream of +/- events, never a join of spans
-- against allocation segments (that blows up for long jobs):
--   * wanted:   +1 at JOB_SUBMIT, -1 at JOB_END or, for an open job, at the end of the data (the
--               latest ts/end over ALL scheduler events and runtime spans in the store);
--   * surplus:  chips held by the job's tasks minus chips_requested; JOB_SUBMIT contributes
--               -chips_requested and every task event the change it makes to its task's holding
--               (a schedule replaces the count, a release sets it to 0; at one instant a task's
--               releases come before its schedules), so the job is all-allocated where surplus >= 0;
--               JOB_END needs no event, as wanted time stops there;
--   * n1..n7:   how many spans of each precedence rank are open (1 kept step, 2 lost step,
--               3 checkpoint_save, 4 checkpoint_restore, 5 compile, 6 init, 7 data_wait);
--   * a zero event at every UTC midnight inside the wanted interval, so no piece crosses a day.
-- Running sums over the stream give the state of each piece [t, next t); a wanted piece is
-- scheduling where surplus < 0, else the lowest rank open, else runtime_idle.
-- Kept steps: every step of a serving / bulk_inference job; a training step of attempt a when a
-- checkpoint_save of attempt a with step >= its step ended no later than a ended, or when a is the
-- job's last attempt (highest number) and the job ended FINISHED or has not ended. Attempt a ends
-- at the earliest start of a span of any higher attempt, else at JOB_END, else never.
-- Decided where the spec is silent: two schedules of one task at one instant apply in (file, line)
-- order, the last one wins; times are microseconds since the epoch, days floor-divided.

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
        greatest(submit.ts_us, coalesce(job_end.ts_us, data_end.data_end_us)) as wanted_end_us
    from scheduler as submit
    left join scheduler as job_end
        on job_end.job_id = submit.job_id and job_end.type = 'JOB_END'
    cross join data_end
    where submit.type = 'JOB_SUBMIT'
),

task_changes as (
    select
        job_id,
        ts_us,
        held_after - lag(held_after, 1, 0) over (
            partition by job_id, task_index order by ts_us, is_schedule, file, line
        ) as held_change
    from (
        select
            job_id, task_index, ts_us, file, line,
            type = 'TASK_SCHEDULE' as is_schedule,
            case when type = 'TASK_SCHEDULE' then chips else 0 end as held_after
        from scheduler
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
        runtime.job_id,
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

midnights as (
    select job_id, unnest(range(
        submit_us - ((submit_us % 86400000000) + 86400000000) % 86400000000 + 86400000000,
        wanted_end_us,
        86400000000
    )) as t
    from jobs
),

-- what: 0 wanted, 1..7 span ranks, 8 surplus, 9 midnight
events as (
    select job_id, submit_us as t, 0 as what, 1 as change from jobs
    union all
    select job_id, wanted_end_us, 0, -1 from jobs
    union all
    select job_id, submit_us, 8, -chips_requested from jobs
    union all
    select job_id, ts_us, 8, held_change from task_changes where held_change <> 0
    union all
    select job_id, start_us, span_rank, 1 from ranked_spans
    union all
    select job_id, end_us, span_rank, -1 from ranked_spans
    union all
    select job_id, t, 9, 0 from midnights
),

instants as (
    select
        job_id,
        t,
        sum(case when what = 0 then change else 0 end) as wanted_change,
        sum(case when what = 8 then change else 0 end) as surplus_change,
        sum(case when what = 1 then change else 0 end) as n1_change,
        sum(case when what = 2 then change else 0 end) as n2_change,
        sum(case when what = 3 then change else 0 end) as n3_change,
        sum(case when what = 4 then change else 0 end) as n4_change,
        sum(case when what = 5 then change else 0 end) as n5_change,
        sum(case when what = 6 then change else 0 end) as n6_change,
        sum(case when what = 7 then change else 0 end) as n7_change
    from events
    group by job_id, t
),

pieces as (
    select
        job_id,
        t,
        lead(t) over sweep - t as length_us,
        sum(wanted_change) over sweep as wanted,
        sum(surplus_change) over sweep as surplus,
        sum(n1_change) over sweep as n1,
        sum(n2_change) over sweep as n2,
        sum(n3_change) over sweep as n3,
        sum(n4_change) over sweep as n4,
        sum(n5_change) over sweep as n5,
        sum(n6_change) over sweep as n6,
        sum(n7_change) over sweep as n7
    from instants
    window sweep as (partition by job_id order by t rows between unbounded preceding and current row)
),

-- category: 0 scheduling, 1..7 the rank that holds the piece, 8 runtime_idle
classified as (
    select
        job_id,
        (t - ((t % 86400000000) + 86400000000) % 86400000000) // 86400000000 as day_number,
        length_us,
        case
            when surplus < 0 then 0
            when n1 > 0 then 1
            when n2 > 0 then 2
            when n3 > 0 then 3
            when n4 > 0 then 4
            when n5 > 0 then 5
            when n6 > 0 then 6
            when n7 > 0 then 7
            else 8
        end as category
    from pieces
    where wanted > 0 and length_us > 0
),

job_day_us as (
    select
        job_id,
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
    group by job_id, day_number
),

final as (
    select
        date '1970-01-01' + job_day_us.day_number::integer as day,
        job_day_us.job_id,
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
    join jobs using (job_id)
)

select * from final
order by day, job_id
