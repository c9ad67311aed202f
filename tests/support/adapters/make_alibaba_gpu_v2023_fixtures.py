"""Write the Alibaba GPU v2023 fixture: a slice of the real `openb_pod_list_default.csv`.

    python tests/support/adapters/make_alibaba_gpu_v2023_fixtures.py \\
        /work/shared/data/alibaba-gpu-v2023/openb_pod_list_default.csv

The slice keeps rows verbatim and in their order, chosen so that every case the adapter tells
apart appears: each pod phase, pods still live at the trace's end, pods with no GPU, GPU shares,
multi-GPU pods, each QoS class, a pod wanted for no time at all. The hand-made
`openb_pod_list_handmade.csv` beside it (GPU specs and bad rows) is not generated.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Callable
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "adapters" / "alibaba-gpu-v2023"
SLICE = FIXTURES / "openb_pod_list_default_slice.csv"

Row = dict[str, str]


def choose(rows: list[Row]) -> set[int]:
    """Indexes of the rows to keep: the first few of each case, and the trace's first 12 pods."""
    end = max(int(r["deletion_time"]) for r in rows)
    cases: list[tuple[int, Callable[[Row], bool]]] = [
        *((4, lambda r, p=p: r["pod_phase"] == p) for p in ("Succeeded", "Failed", "Pending")),
        (4, lambda r: r["pod_phase"] == "Running" and int(r["deletion_time"]) < end),
        (3, lambda r: r["pod_phase"] == "Running" and int(r["deletion_time"]) == end),
        (3, lambda r: r["num_gpu"] == "0"),
        *((2, lambda r, n=n: r["num_gpu"] == n) for n in ("2", "4", "8")),
        *((3, lambda r, q=q: r["qos"] == q) for q in ("LS", "BE", "Burstable", "Guaranteed")),
        *((1, lambda r, m=m: r["gpu_milli"] == m) for m in ("50", "230", "470", "810")),
        (1, lambda r: r["creation_time"] == r["deletion_time"]),
        (2, lambda r: r["pod_phase"] == "Failed" and r["num_gpu"] == "8"),
    ]
    chosen = set(range(12))
    for count, wanted in cases:
        chosen.update([i for i, r in enumerate(rows) if wanted(r)][:count])
    return chosen


def main(source: Path) -> None:
    lines = source.read_text(encoding="utf-8").splitlines()
    rows = list(csv.DictReader(lines))
    chosen = sorted(choose(rows))
    SLICE.write_text("\n".join([lines[0], *(lines[i + 1] for i in chosen)]) + "\n")
    print(f"{SLICE}: {len(chosen)} pods")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
