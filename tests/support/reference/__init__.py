"""An independent reference calculation of ML Productivity Goodput, metrics v1 and v2.

Written from the contract alone (spec fleet-traces v1 and docs/decisions.md), without the
project's transforms, pipelines or SQL, so that tests can compare the real pipeline against it.
It is deliberately plain: Python loops, exact arithmetic (integer microseconds for time,
`fractions.Fraction` for chip-seconds and ratios), one job at a time, and every elementary
interval of a job's timeline classified directly by looking at what covers it. It is meant for
test-sized fleets, not for speed.

    ref = reference(Path("tests/fixtures/spec_examples/tiny"))  # metric_version="v1"
    ref.job_days[(datetime.date(2026, 11, 20), "train-a")].sg  # 0.4070175438596491

Where neither the spec nor docs/decisions.md settles a case, this file's reading is marked
"Reading:" in a comment; the tests avoid those cases.
"""

from tests.support.reference.accounting import reference
from tests.support.reference.model import Reference, reason_class

__all__ = ["Reference", "reason_class", "reference"]
