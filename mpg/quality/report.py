"""The validation results as a Markdown report a person reads after a run.

A summary line, the problems (failed expectations, each with its first unexpected rows), then a
table per suite with every expectation. Deterministic: the same results give the same text.

    >>> from mpg.schemas import VALIDATION_RESULTS
    >>> render_report(VALIDATION_RESULTS.empty_table()).splitlines()[2]
    '0 expectations, 0 failed (fail), 0 warnings'
"""

from __future__ import annotations

import pyarrow as pa

_HEADER = "| target | expectation | checks | severity | result | unexpected / rows |"


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _outcome(row: dict[str, object]) -> str:
    if row["success"]:
        return "ok"
    return "FAILED" if row["severity"] == "fail" else "warning"


def _counts(row: dict[str, object]) -> str:
    if row["unexpected_count"] is None:
        return f"observed {row['observed']}"
    return f"{row['unexpected_count']:,} / {row['element_count']:,}"


def _problem(row: dict[str, object]) -> list[str]:
    lines = [
        f"- **{_outcome(row)}** {row['suite']} / {row['target']}: {row['description']} "
        f"(`{row['expectation']}`, {_counts(row)})"
    ]
    if row["unexpected_sample"] is not None:
        lines.append(f"  first unexpected rows: `{row['unexpected_sample']}`")
    return lines


def render_report(results: pa.Table) -> str:
    """Markdown for VALIDATION_RESULTS rows, in their order (suites as they first appear)."""
    rows = results.to_pylist()
    failed = sum(1 for r in rows if not r["success"] and r["severity"] == "fail")
    warned = sum(1 for r in rows if not r["success"] and r["severity"] == "warn")
    out = [
        "# Validation report",
        "",
        f"{len(rows)} expectations, {failed} failed (fail), {warned} warnings",
    ]
    problems = [line for r in rows if not r["success"] for line in _problem(r)]
    if problems:
        out += ["", "## Problems", "", *problems]
    suites = dict.fromkeys((r["suite"], r["suite_version"]) for r in rows)
    for suite, version in suites:
        out += ["", f"## {suite} ({version})", "", _HEADER, "|---|---|---|---|---|---|"]
        out += [
            "| "
            + " | ".join(
                _cell(v)
                for v in (
                    r["target"],
                    r["expectation"],
                    r["description"],
                    r["severity"],
                    _outcome(r),
                    _counts(r),
                )
            )
            + " |"
            for r in rows
            if (r["suite"], r["suite_version"]) == (suite, version)
        ]
    return "\n".join(out) + "\n"
