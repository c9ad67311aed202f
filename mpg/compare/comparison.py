"""`compare_periods`: what changed in fleet MPG between two periods, and why, as data.

The decomposition (mpg.compare.decompose) with the ledger categories whose share of wanted
chip-time moved most, for the fleet and for each of the top contributing slices; and the change
in the semantic layer's dollars lost split into volume, mix and the parts of the loss
(mpg.compare.dollars), with the priced chip-time's ledger in dollars. Every sum, ratio, share and
part in dollars is SQL's (sql/compare/, over the layer's `mpg_rollup`). The terminal
(mpg.compare.render) and the fleet report embed this same object; `to_json` is `--json`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpg.compare.decompose import (
    FLEET_PART_NAMES,
    PART_NAMES,
    SLICE_COLUMNS,
    Decomposition,
    Parts,
    Slice,
    SliceChange,
    Sums,
    UndefinedMPGError,
    decompose,
)
from mpg.compare.dollars import (
    DOLLAR_PART_NAMES,
    DollarChange,
    DollarParts,
    DollarsUnavailableError,
    dollar_change,
)
from mpg.compare.period import Period
from mpg.compare.read import SLICE_KIND, read_periods, slice_key
from mpg.core.errors import UserError
from mpg.definitions.config import metric_version_to_read

TOP_SLICES = 5
TOP_CATEGORIES = 3
TOP_PARTS = 5


@dataclass(frozen=True)
class PartOfSlice:
    """One cell of the decomposition: a slice's mix, sg, rg or pg part."""

    slice: Slice
    part: str
    value: float


@dataclass(frozen=True)
class CategoryMove:
    """A ledger category's share of wanted chip-time in each period, and its change (a slice
    with no job-days in a period has a share 0 there): sql/compare/ledger_moves.sql."""

    category: str
    base_share: float
    current_share: float
    change: float


@dataclass(frozen=True)
class DollarMove:
    """A ledger category's dollars (priced chip-time) in each period, and their change."""

    category: str
    base_usd: float
    current_usd: float
    change: float


@dataclass(frozen=True)
class TeamChange:
    """A team's share of the change in fleet MPG (the decomposition with the fleet partitioned
    by team instead of by slice: its mix, SG, RG and PG parts), and its dollars lost in each
    period (None: nothing of it priced) and their change, which add up to the fleet's."""

    team: str  # NONE_NAMED where the input named none
    base: Sums  # ZERO where the team has no job-day in the period
    current: Sums
    parts: Parts
    base_lost_usd: float | None
    current_lost_usd: float | None

    @property
    def lost_usd_change(self) -> float | None:
        if self.base_lost_usd is None and self.current_lost_usd is None:
            return None
        return (self.current_lost_usd or 0.0) - (self.base_lost_usd or 0.0)


@dataclass(frozen=True)
class Comparison:
    metric_version: str
    base_period: Period
    current_period: Period
    decomposition: Decomposition
    fleet_moves: tuple[CategoryMove, ...]  # largest |change| first
    slice_moves: Mapping[Slice, tuple[CategoryMove, ...]]  # for the top slices
    # The change in dollars lost; None where a period has no priced chip-time, and then
    # `dollars_unavailable` says why.
    dollars: DollarChange | None = None
    dollars_unavailable: str | None = None
    dollar_moves: tuple[DollarMove, ...] = ()  # the categories whose dollars moved most
    # Which teams moved the fleet: every team, largest |MPG part| first, and the coverage part
    # of the decomposition by team (the teams' parts and it add up to the change).
    teams: tuple[TeamChange, ...] = ()
    teams_coverage: float = 0.0

    @property
    def top_teams(self) -> tuple[TeamChange, ...]:
        """The TOP_SLICES teams that moved fleet MPG most and the TOP_SLICES whose dollars lost
        moved most (one team can be both), in the order of their MPG part."""
        by_usd = sorted(
            (t for t in self.teams if t.lost_usd_change is not None),
            key=lambda t: (-abs(t.lost_usd_change or 0.0), t.team),
        )[:TOP_SLICES]
        chosen = {t.team for t in (*self.teams[:TOP_SLICES], *by_usd)}
        return tuple(t for t in self.teams if t.team in chosen)

    @property
    def top_dollar_slices(self) -> tuple[tuple[Slice, DollarParts], ...]:
        return self.dollars.slices[:TOP_SLICES] if self.dollars else ()

    @property
    def top_slices(self) -> tuple[SliceChange, ...]:
        return self.decomposition.slices[:TOP_SLICES]

    @property
    def top_parts(self) -> tuple[PartOfSlice, ...]:
        """The TOP_PARTS largest single parts (by absolute value) over all slices: the answer to
        "which slice, and which of its ratios", where a slice's parts partly cancel."""
        cells = [
            PartOfSlice(c.slice, name, getattr(c.parts, name))
            for c in self.decomposition.slices
            for name in PART_NAMES
        ]
        ranked = sorted(cells, key=lambda p: (-abs(p.value), p.slice, p.part))
        return tuple(p for p in ranked[:TOP_PARTS] if p.value != 0)

    def by_dimension(self, column: str) -> tuple[tuple[str, Parts], ...]:
        """The slices' parts summed per value of one slice column (say, per chip generation),
        largest |total| first: a change spread over a generation's slices shows whole here.
        They add up to the fleet's parts but coverage, as the slices' do."""
        index = SLICE_COLUMNS.index(column)
        sums: dict[str, Parts] = {}
        for c in self.decomposition.slices:
            sums[c.slice[index]] = sums.get(c.slice[index], Parts()) + c.parts
        return tuple(sorted(sums.items(), key=lambda kv: (-abs(kv[1].total), kv[0])))

    def to_json(self) -> dict[str, Any]:
        d = self.decomposition
        return {
            "metric_version": self.metric_version,
            "base": _period_json(self.base_period, d.base),
            "current": _period_json(self.current_period, d.current),
            "change": d.change,
            "parts": _parts_json(d.totals, FLEET_PART_NAMES),
            "ledger_moves": [_move_json(m) for m in self.fleet_moves],
            "top_parts": [
                {**dict(zip(SLICE_COLUMNS, p.slice, strict=True)), "part": p.part, "value": p.value}
                for p in self.top_parts
            ],
            "by_dimension": {
                column: [
                    {"value": value, "parts": _parts_json(parts)}
                    for value, parts in self.by_dimension(column)
                ]
                for column in SLICE_COLUMNS
            },
            "slices": [
                {
                    **dict(zip(SLICE_COLUMNS, c.slice, strict=True)),
                    "base": _ratios_json(c.base),
                    "current": _ratios_json(c.current),
                    "parts": _parts_json(c.parts),
                    "ledger_moves": [_move_json(m) for m in self.slice_moves.get(c.slice, ())],
                }
                for c in d.slices
            ],
            "dollars": _dollars_json(self),
            "teams": {
                "coverage": self.teams_coverage,
                "teams": [_team_json(t) for t in self.teams],
            },
        }


def compare_periods(
    out: Path, base: Period, current: Period, metric_version: str | None = None
) -> Comparison:
    """The comparison of two periods of `out`'s published tables (the current metric version
    unless one is named); a user error where a period lacks data or a fleet MPG."""
    version = metric_version_to_read(out, metric_version)
    data = read_periods(out, base, current, version)
    try:
        decomposition = decompose(data.base, data.current)
    except UndefinedMPGError as exc:
        raise UserError(f"cannot compare {base} with {current}: {exc}") from exc
    by_team = decompose(data.base_teams.sums, data.current_teams.sums)
    moves = data.ledger_moves
    dollars, unavailable = None, None
    try:
        dollars = dollar_change(data.dollar_parts, moves)
    except DollarsUnavailableError as exc:
        unavailable = f"dollars lost cannot be compared: {exc}"
    return Comparison(
        metric_version=version,
        base_period=base,
        current_period=current,
        decomposition=decomposition,
        fleet_moves=category_moves(moves, "fleet"),
        slice_moves={
            c.slice: category_moves(moves, c.slice) for c in decomposition.slices[:TOP_SLICES]
        },
        dollars=dollars,
        dollars_unavailable=unavailable,
        dollar_moves=tuple(
            DollarMove(m["category"], m["base_usd"], m["current_usd"], m["usd_change"])
            for m in sorted(
                (m for m in moves if m["slice_kind"] == "fleet" and m["usd_rank"] is not None),
                key=lambda m: m["usd_rank"],
            )[:TOP_CATEGORIES]
        )
        if dollars
        else (),
        teams=tuple(
            TeamChange(
                c.slice[0],
                c.base,
                c.current,
                c.parts,
                data.base_teams.lost_usd.get(c.slice),
                data.current_teams.lost_usd.get(c.slice),
            )
            for c in by_team.slices
        ),
        teams_coverage=by_team.totals.coverage,
    )


def category_moves(moves: list[dict[str, Any]], where: Slice | str) -> tuple[CategoryMove, ...]:
    """The TOP_CATEGORIES categories whose share of wanted chip-time moved most in the fleet
    (`where` "fleet") or a slice, as ledger_moves.sql ranks them (those that did not move left
    out)."""
    mine = [
        m
        for m in moves
        if m["share_rank"] is not None
        and (
            m["slice_kind"] == "fleet"
            if where == "fleet"
            else m["slice_kind"] == SLICE_KIND and slice_key(m) == where
        )
    ]
    return tuple(
        CategoryMove(m["category"], m["base_share"], m["current_share"], m["change"])
        for m in sorted(mine, key=lambda m: m["share_rank"])[:TOP_CATEGORIES]
    )


def _ratios_json(sums: Sums) -> dict[str, float | None]:
    return {
        "wanted_chip_s": sums.wanted,
        "all_allocated_chip_s": sums.all_allocated,
        "productive_chip_s": sums.productive,
        "ideal_chip_s": sums.ideal,
        "profiled_chip_s": sums.profiled,
        "sg": sums.sg,
        "rg": sums.rg,
        "pg": sums.pg,
        "pg_coverage": sums.pg_coverage,
        "mpg": sums.mpg,
    }


def _period_json(period: Period, sums: Sums) -> dict[str, Any]:
    return {"first": str(period.first), "last": str(period.last), **_ratios_json(sums)}


def _parts_json(parts: Parts, names: tuple[str, ...] = PART_NAMES) -> dict[str, float]:
    return {**{n: getattr(parts, n) for n in names}, "total": parts.total}


def _dollar_parts_json(parts: DollarParts) -> dict[str, float]:
    return {**{n: getattr(parts, n) for n in DOLLAR_PART_NAMES}, "total": parts.total}


def _dollars_json(comparison: Comparison) -> dict[str, Any]:
    dollars = comparison.dollars
    if dollars is None:
        return {"unavailable": comparison.dollars_unavailable}
    return {
        **{
            name: {
                "wanted_usd": period.usd,
                "lost_usd": period.lost,
                **{f"lost_{p}_usd": v for p, v in period.lost_parts.items()},
                "unpriced_chip_s": period.unpriced_chip_s,
                "reconciliation": period.reconciliation,
                "usd_by_category": dict(sorted(period.by_category.items())),
            }
            for name, period in (("base", dollars.base), ("current", dollars.current))
        },
        "change": dollars.change,
        "parts": _dollar_parts_json(dollars.parts),
        "slices": [
            {**dict(zip(SLICE_COLUMNS, key, strict=True)), "parts": _dollar_parts_json(parts)}
            for key, parts in dollars.slices
        ],
        "moves": [
            {"category": m.category, "base_usd": m.base_usd, "current_usd": m.current_usd,
             "change": m.change}
            for m in comparison.dollar_moves
        ],
    }  # fmt: skip


def _team_json(team: TeamChange) -> dict[str, Any]:
    return {
        "team": team.team,
        "base": _ratios_json(team.base),
        "current": _ratios_json(team.current),
        "parts": _parts_json(team.parts),
        "base_lost_usd": team.base_lost_usd,
        "current_lost_usd": team.current_lost_usd,
        "lost_usd_change": team.lost_usd_change,
    }


def _move_json(move: CategoryMove) -> dict[str, Any]:
    return {
        "category": move.category,
        "base_share": move.base_share,
        "current_share": move.current_share,
        "change": move.change,
    }
