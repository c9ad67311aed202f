-- The chip-time ledger of the whole period as a waterfall: from wanted chip-hours, each category
-- that is not ideal time takes its share off, and what is left is ideal time.
-- grain: one row per bar: 'wanted' first, then each category of $losses in that order, then
-- 'ideal'; each bar spans chip-hours [bar_end, bar_start] (the ledger adds up to wanted exactly,
-- so the last loss ends where ideal's bar tops out); share: the bar's part of wanted chip-time.
-- parameters: $metric_version (VARCHAR); $first, $last (DATE or NULL for an open end): the
--   report's period, inclusive;
--   $losses (VARCHAR[]): every ledger category but ideal, in the order the bars step down.
-- input: the macros mpg_ledger (sql/semantic/ledger.sql), mpg_sum, mpg_ratio.
with categories as (
    select category, mpg_sum(chip_s) / 3600 as chip_h
    from mpg_ledger($metric_version, $first, $last)
    group by category
),

wanted as (
    select sum(chip_h) as chip_h from categories
),

losses as (
    select
        unnest($losses) as category,
        generate_subscripts($losses, 1) as bar
),

steps as (
    select
        losses.bar,
        losses.category,
        coalesce(categories.chip_h, 0) as chip_h,
        wanted.chip_h - sum(coalesce(categories.chip_h, 0)) over (
            order by losses.bar rows between unbounded preceding and current row
        ) as bar_end
    from losses
    cross join wanted
    left join categories using (category)
),

bars as (
    select 0 as bar, 'wanted' as category, chip_h, chip_h as bar_start, 0.0 as bar_end
    from wanted
    union all
    select bar, category, chip_h, bar_end + chip_h as bar_start, bar_end
    from steps
    union all
    select
        len($losses) + 1 as bar,
        'ideal' as category,
        coalesce(categories.chip_h, 0) as chip_h,
        coalesce(categories.chip_h, 0) as bar_start,
        0.0 as bar_end
    from wanted
    left join categories on categories.category = 'ideal'
),

final as (
    select bars.*, mpg_ratio(bars.chip_h, wanted.chip_h) as share
    from bars
    cross join wanted
)

select * from final
order by bar
