-- Chip-time ledger per job and UTC day, metric v1 without PG (no profiles, so no ideal time): a
-- second, independent implementation of the spec's rules (docs: fleet-traces.md) from the raw
-- trace files to the chip-time, in one DuckDB query: to cross-check job_day_goodput and
-- chip_time_ledger, and to benchmark the pipeline against (make bench).
-- grain: one row per job and UTC day on which the job has wanted time > 0.
-- parameters: $traces (VARCHAR): a trace root (scheduler/ and runtime/ of *.jsonl[.gz], at any
--   depth); $chip_generations, $workload_classes, $frameworks, $job_states, $span_kinds,
--   $kinds_with_step (VARCHAR[]): the closed vocabularies (mpg/definitions/vocabulary.py, the chip catalog).
--   Profiles are not read.
-- columns: day (DATE), job_id, then DOUBLE chip-seconds: wanted, all_allocated, productive and the
--   ledger categories lost_progress, checkpoint_save, checkpoint_restore, compile, init, data_wait,
--   runtime_idle, scheduling. productive and the next seven add up to all_allocated, and
--   all_allocated + scheduling to wanted: lengths are summed as integer microseconds and turned into
--   seconds once, after the multiplication by chips_requested.
--
-- Reading: DuckDB's JSON reader with the fields typed; a line it cannot read, or a value it cannot
-- cast, gives NULLs, and a record with a NULL or out-of-range required field is dropped (the
-- spec's range rules). Unlike the pipeline it takes what DuckDB's casts take: a number written as
-- a string, a time without an offset (read as UTC). Exact duplicates count once (DISTINCT on the
-- fields read). A job is its earliest JOB_SUBMIT; its end the earliest JOB_END not before it;
-- records of jobs without a JOB_SUBMIT do not count.
--
-- Shape: one sweep per job over its events in time order (no join of spans against allocation
-- intervals, which grows as spans x intervals on long jobs):
--   * a task event changes the job's held chips by what it changes its task's holding (a schedule
--     replaces the count, a release sets it to 0; at one instant a task's releases come first);
--   * a span adds 1 at its start and -1 at its end to the counter of its precedence rank
--     (1 kept step, 2 lost step, 3 checkpoint_save, 4 checkpoint_restore, 5 compile, 6 init,
--     7 data_wait);
--   * zero events cut the sweep at JOB_SUBMIT, at the end of wanted time (JOB_END or, for an open
--     job, the latest ts/end over the accepted scheduler events and runtime spans) and at every
--     UTC midnight in between.
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

with scheduler_lines as (
    select *
    from read_ndjson(
        $traces || '/scheduler/**/*.jsonl*',
        columns = {
            type: 'VARCHAR', ts: 'TIMESTAMPTZ', job_id: 'VARCHAR', chips_requested: 'BIGINT',
            chip_generation: 'VARCHAR', workload_class: 'VARCHAR', framework: 'VARCHAR',
            task_index: 'BIGINT', chips: 'BIGINT', state: 'VARCHAR'
        },
        ignore_errors = true
    )
),

runtime_lines as (
    select *
    from read_ndjson(
        $traces || '/runtime/**/*.jsonl*',
        columns = {
            job_id: 'VARCHAR', attempt: 'BIGINT', kind: 'VARCHAR', start: 'TIMESTAMPTZ',
            "end": 'TIMESTAMPTZ', step: 'BIGINT'
        },
        ignore_errors = true
    )
),

valid_events as (
    select distinct
        type, job_id, epoch_us(ts) as ts_us, chips_requested, workload_class, task_index, chips,
        state
    from scheduler_lines
    where job_id <> '' and ts >= '2000-01-01 00:00:00+00' and ts < '2100-01-01 00:00:00+00'
        and (
            (type = 'JOB_SUBMIT' and chips_requested between 1 and 1000000000
                and list_contains($chip_generations, chip_generation)
                and list_contains($workload_classes, workload_class)
                and list_contains($frameworks, framework))
            or (type = 'TASK_SCHEDULE' and task_index >= 0 and chips between 1 and 1000000000)
            or (type in ('TASK_EVICT', 'TASK_FAIL', 'TASK_LOST', 'TASK_FINISH') and task_index >= 0)
            or (type = 'JOB_END' and list_contains($job_states, state))
        )
),

submits as (
    select job_id, arg_min(ts_us, ts_us) as ts_us, arg_min(chips_requested, ts_us) as chips_requested,
        arg_min(workload_class, ts_us) as workload_class
    from valid_events
    where type = 'JOB_SUBMIT'
    group by job_id
),

job_ends as (
    select ends.job_id, arg_min(ends.ts_us, ends.ts_us) as ts_us,
        arg_min(ends.state, ends.ts_us) as state
    from valid_events as ends
    join submits on submits.job_id = ends.job_id and ends.ts_us >= submits.ts_us
    where ends.type = 'JOB_END'
    group by ends.job_id
),

scheduler as (
    select type, job_id, ts_us, chips_requested, workload_class, task_index, chips, state
    from valid_events
    where type in ('TASK_SCHEDULE', 'TASK_EVICT', 'TASK_FAIL', 'TASK_LOST', 'TASK_FINISH')
        and job_id in (select job_id from submits)
),

runtime as (
    select distinct
        job_id, attempt, kind, epoch_us(start) as start_us, epoch_us("end") as end_us,
        case when list_contains($kinds_with_step, kind) then step end as step
    from runtime_lines
    where job_id in (select job_id from submits) and attempt >= 0
        and list_contains($span_kinds, kind)
        and start >= '2000-01-01 00:00:00+00' and "end" < '2100-01-01 00:00:00+00'
        and "end" >= start
        and (step is not null or not list_contains($kinds_with_step, kind))
),

data_end as (
    select greatest(
        (select max(ts_us) from submits),
        (select max(ts_us) from scheduler),
        (select max(ts_us) from job_ends),
        (select max(end_us) from runtime)
    ) as data_end_us
),

jobs as (
    select
        submits.job_id,
        submits.ts_us as submit_us,
        submits.chips_requested,
        submits.workload_class,
        job_ends.ts_us as job_end_us,
        job_ends.state as end_state,
        greatest(submits.ts_us, coalesce(job_ends.ts_us, data_end.data_end_us)) as wanted_end_us,
        row_number() over (order by submits.job_id) as job_key
    from submits
    left join job_ends using (job_id)
    cross join data_end
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
            job_key, task_index, ts_us,
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
