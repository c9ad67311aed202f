"""Regenerates tests/fixtures/adapters/kubernetes/ (its README says what each file is).

    python tests/adapters/make_kubernetes_fixtures.py

No cluster runs here, so the objects are written by hand to the published API types, as a GKE
cluster running Kueue v0.19.2 and JobSet v0.12.0 would serialise them (field names, camelCase,
RFC 3339 times, `apiVersion`, `kind`, metadata with uid, ownerReferences and labels; `kubectl -o
json` sorts keys and indents by 4). Sources followed:
- kubernetes-sigs/kueue v0.19.2 (8eab68778fc1): apis/kueue/v1beta1/workload_types.go and
  v1beta2/workload_types.go (Workload), pkg/scheduler/scheduler.go (QuotaReserved, Admitted,
  Pending events), pkg/workload/evict/evict.go (EvictedDueTo<reason>),
  pkg/scheduler/preemption/preemption.go (Preempted), pkg/workload/workload.go (conditions),
  pkg/controller/jobframework/reconciler.go (Started, Stopped, FinishedWorkload on the job);
- kubernetes-sigs/jobset v0.12.0 (f22e565ac3cc): api/jobset/v1alpha2/jobset_types.go,
  pkg/constants/constants.go (restart-attempt label, RestartJobSetFailurePolicyAction),
  pkg/controllers/failure_policy.go;
- kubernetes/api v0.36.3: core/v1/types.go (Event, EventSeries). Kueue and JobSet record with
  the events.k8s.io/v1 recorder, so `kubectl get events` shows them with `eventTime` (microseconds),
  `series`, `action`, `reportingComponent`, and null `firstTimestamp` / `lastTimestamp`.

Scenarios (all times UTC; tests/test_adapter_kubernetes.py states each timeline again, by hand):
1. llama-pretrain (TPU v5p, 16 chips): queued 08:00, admitted 09:30, finished 13:30.
2. bert-finetune (H100, 16 GPUs, priority 100): admitted 10:00:05, preempted at 11:00 by
   urgent-eval (priority 1000), requeued, admitted again 12:30, finished 14:00.
3. urgent-eval (H100, 16 GPUs, no node selector: the flavor names the GPU): 10:59:55 to 12:29:30.
4. mixtral-moe (TPU v5p, 32 chips): admitted 22:05 on the 19th, evicted for a failed node at
   01:17:30, requeued, admitted again 01:40, finished 05:00.
5. gemma-sft (H200, 32 GPUs, and a CPU driver): admitted 06:00, JobSet restarts at 07:10:00.15
   and 08:20:00.15 (events; its Jobs labelled restart-attempt 2 came at 08:20:04), done 10:00.
6. sweep-shard (batch Job, H100, 8 pods x 8, minCount 4): admitted with 4 pods 09:00-12:00.
7. grid-search (batch Job, H100, 8 x 8, minCount 6): partial admission refused (Pending) from
   12:10 until deactivated at 15:00.
8. vit-pretrain (TPU v6e, 8 chips): admitted 14:00:03, still running at the 16:00 export.
Plus hostile/: malformed and unusable objects, each with the reason the test expects.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "fixtures" / "adapters" / "kubernetes"
KUEUE_V1 = "kueue.x-k8s.io/v1beta1"
KUEUE_V2 = "kueue.x-k8s.io/v1beta2"
JOBSET = "jobset.x-k8s.io/v1alpha2"
TPU, GPU = "google.com/tpu", "nvidia.com/gpu"
TPU_NODE, GPU_NODE = "cloud.google.com/gke-tpu-accelerator", "cloud.google.com/gke-accelerator"
KUEUE_POD = "kueue-controller-manager-6d8f7b9c4-x2v7q"


def uid(name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"mpg-fixture/{name}"))


def digits(text: str, n: int) -> str:
    """`n` hex digits that depend only on `text` (resource versions, event name suffixes)."""
    return hashlib.sha256(text.encode()).hexdigest()[:n]


def at(day: int, clock: str, micros: int = 0) -> str:
    """`2026-11-<day>T<clock>Z`, with microseconds when given (an event's MicroTime)."""
    return f"2026-11-{day:02d}T{clock}.{micros:06d}Z" if micros else f"2026-11-{day:02d}T{clock}Z"


def condition(kind: str, status: str, reason: str, message: str, when: str) -> dict[str, Any]:
    return {
        "lastTransitionTime": when,
        "message": message,
        "observedGeneration": 1,
        "reason": reason,
        "status": status,
        "type": kind,
    }


def container(resource: str | None, per_pod: int, image: str) -> dict[str, Any]:
    requests: dict[str, str] = {"cpu": "8", "memory": "32Gi"}
    limits: dict[str, str] = {}
    if resource is not None:
        requests[resource] = limits[resource] = str(per_pod)
    return {
        "image": image,
        "name": "main",
        "resources": {"limits": limits, "requests": requests},
    }


def podset(
    name: str,
    count: int,
    resource: str | None,
    per_pod: int,
    selector: dict[str, str],
    *,
    min_count: int | None = None,
    jobset: bool = True,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [container(resource, per_pod, "us-docker.pkg.dev/ml/train:2026.11")],
        "restartPolicy": "Never",
    }
    if selector:
        spec["nodeSelector"] = selector
    if resource is not None:
        spec["tolerations"] = [{"effect": "NoSchedule", "key": resource, "operator": "Exists"}]
    out: dict[str, Any] = {
        "count": count,
        "name": name,
        "template": {"metadata": {}, "spec": spec},
    }
    if min_count is not None:
        out["minCount"] = min_count
    if jobset:
        out["topologyRequest"] = {
            "podIndexLabel": "batch.kubernetes.io/job-completion-index",
            "subGroupCount": 1,
            "subGroupIndexLabel": "jobset.sigs.k8s.io/job-index",
        }
    return out


def workload(
    api: str,
    namespace: str,
    name: str,
    owner: tuple[str, str, str],
    created: str,
    podsets: list[dict[str, Any]],
    conditions: list[dict[str, Any]],
    *,
    priority: tuple[str, int] = ("normal", 500),
    queue: str,
    admission: dict[str, Any] | None = None,
    evictions: list[tuple[str, int]] = (),  # type: ignore[assignment]
    active: bool = True,
) -> dict[str, Any]:
    """A Workload as Kueue writes it: named after its owner, owned by it, in `api`'s version."""
    owner_api, owner_kind, owner_name = owner
    spec: dict[str, Any] = {
        "active": active,
        "podSets": podsets,
        "priority": priority[1],
        "queueName": queue,
    }
    if api == KUEUE_V1:
        spec["priorityClassName"] = priority[0]
        spec["priorityClassSource"] = "kueue.x-k8s.io/workloadpriorityclass"
    else:
        spec["priorityClassRef"] = {
            "group": "kueue.x-k8s.io",
            "kind": "WorkloadPriorityClass",
            "name": priority[0],
        }
    status: dict[str, Any] = {"conditions": conditions}
    if admission is not None:
        status["admission"] = admission
    if evictions:
        status["schedulingStats"] = {
            "evictions": [{"count": n, "reason": r, "underlyingCause": ""} for r, n in evictions]
        }
    return {
        "apiVersion": api,
        "kind": "Workload",
        "metadata": {
            "creationTimestamp": created,
            "finalizers": ["kueue.x-k8s.io/resource-in-use"],
            "generation": 1,
            "labels": {"kueue.x-k8s.io/job-uid": uid(owner_name)},
            "name": name,
            "namespace": namespace,
            "ownerReferences": [
                {
                    "apiVersion": owner_api,
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": owner_kind,
                    "name": owner_name,
                    "uid": uid(owner_name),
                }
            ],
            "resourceVersion": str(int(digits(name, 6), 16)),
            "uid": uid(name),
        },
        "spec": spec,
        "status": status,
    }


def admission(cq: str, *assignments: tuple[str, int, str, str, int]) -> dict[str, Any]:
    """`status.admission`: per pod set (name, count, resource, flavor, chips in all)."""
    return {
        "clusterQueue": cq,
        "podSetAssignments": [
            {
                "count": count,
                "flavors": {resource: flavor},
                "name": name,
                "resourceUsage": {resource: str(total)},
            }
            for name, count, resource, flavor, total in assignments
        ],
    }


def admitted(when: str, cq: str) -> list[dict[str, Any]]:
    return [
        condition(
            "QuotaReserved", "True", "QuotaReserved", f"Quota reserved in ClusterQueue {cq}", when
        ),
        condition("Admitted", "True", "Admitted", "The workload is admitted", when),
    ]


def finished(when: str, reason: str = "Succeeded") -> dict[str, Any]:
    message = "jobset completed successfully" if reason == "Succeeded" else "jobset failed"
    return condition("Finished", "True", reason, message, when)


class Events:
    """Events as the events.k8s.io/v1 recorder creates them, in their core/v1 form."""

    def __init__(self) -> None:
        self.all: list[dict[str, Any]] = []

    def add(
        self,
        about: tuple[str, str, str, str],
        reason: str,
        message: str,
        when: str,
        *,
        kind: str = "Normal",
        component: str = "kueue-admission",
        series: tuple[int, str] | None = None,
    ) -> dict[str, Any]:
        api, obj_kind, namespace, name = about
        event_name = f"{name}.{digits(name + reason + when, 16)}"
        event: dict[str, Any] = {
            "action": reason,
            "apiVersion": "v1",
            "eventTime": when,
            "firstTimestamp": None,
            "involvedObject": {
                "apiVersion": api,
                "kind": obj_kind,
                "name": name,
                "namespace": namespace,
                "uid": uid(name),
            },
            "kind": "Event",
            "lastTimestamp": None,
            "message": message,
            "metadata": {
                "creationTimestamp": when[:19] + "Z",
                "name": event_name,
                "namespace": namespace,
                "resourceVersion": str(int(digits(event_name, 6), 16)),
                "uid": uid(event_name),
            },
            "reason": reason,
            "reportingComponent": component,
            "reportingInstance": f"{component}-{KUEUE_POD}",
            "source": {},
            "type": kind,
        }
        if series is not None:
            event["series"] = {"count": series[0], "lastObservedTime": series[1]}
        self.all.append(event)
        return event


def series_versions(event: dict[str, Any], *counts: tuple[int, str]) -> list[dict[str, Any]]:
    """The versions of one event an exporter writes as its series grows (same uid)."""
    out = []
    for count, last in counts:
        version = json.loads(json.dumps(event))
        version["series"] = {"count": count, "lastObservedTime": last}
        out.append(version)
    return out


def kubectl_list(items: list[dict[str, Any]]) -> str:
    return json.dumps(
        {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}},
        indent=4,
        sort_keys=True,
    )


# ---------------------------------------------------------------------------------------------
# The cluster: one TPU v5p, one TPU v6e, one H100 and one H200 ClusterQueue, and their flavors.

FLAVORS = {
    "tpu-v5p-2x2x4": {TPU_NODE: "tpu-v5p-slice", "cloud.google.com/gke-tpu-topology": "2x2x4"},
    "tpu-v5p-2x4x4": {TPU_NODE: "tpu-v5p-slice", "cloud.google.com/gke-tpu-topology": "2x4x4"},
    "tpu-v6e-2x4": {TPU_NODE: "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "2x4"},
    "h100-80gb": {GPU_NODE: "nvidia-h100-80gb"},
    "h200-141gb": {GPU_NODE: "nvidia-h200-141gb"},
    "default-flavor": {},
}


def resource_flavor(name: str, labels: dict[str, str]) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if labels:
        spec["nodeLabels"] = labels
    return {
        "apiVersion": KUEUE_V1,
        "kind": "ResourceFlavor",
        "metadata": {
            "creationTimestamp": at(1, "00:00:00"),
            "finalizers": ["kueue.x-k8s.io/resource-in-use"],
            "generation": 1,
            "name": name,
            "resourceVersion": str(int(digits(name, 6), 16)),
            "uid": uid(name),
        },
        "spec": spec,
    }


def jobset_object(
    namespace: str, name: str, created: str, restarts: int, completed: str | None
) -> dict[str, Any]:
    """A JobSet as the JobSet controller leaves it (status.restarts counts global restarts)."""
    status: dict[str, Any] = {"restarts": restarts, "restartsCountTowardsMax": restarts}
    if completed is not None:
        status["terminalState"] = "Completed"
        status["conditions"] = [
            condition(
                "Completed", "True", "AllJobsCompleted", "jobset completed successfully", completed
            )
        ]
    return {
        "apiVersion": JOBSET,
        "kind": "JobSet",
        "metadata": {
            "creationTimestamp": created,
            "generation": 2,
            "labels": {"kueue.x-k8s.io/queue-name": "lq"},
            "name": name,
            "namespace": namespace,
            "resourceVersion": str(int(digits(name, 6), 16)),
            "uid": uid(name),
        },
        "spec": {"failurePolicy": {"maxRestarts": 3}, "suspend": False},
        "status": status,
    }


def child_job(
    namespace: str, jobset: str, rjob: str, index: int, attempt: int, created: str
) -> dict[str, Any]:
    """A child Job of a JobSet, labelled as the JobSet controller labels it (v0.12.0
    pkg/controllers/jobset_controller.go, labelAndAnnotateObject)."""
    name = f"{jobset}-{rjob}-{index}"
    labels = {
        "jobset.sigs.k8s.io/job-index": str(index),
        "jobset.sigs.k8s.io/jobset-name": jobset,
        "jobset.sigs.k8s.io/jobset-uid": uid(jobset),
        "jobset.sigs.k8s.io/replicatedjob-name": rjob,
        "jobset.sigs.k8s.io/restart-attempt": str(attempt),
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "annotations": dict(labels),
            "creationTimestamp": created,
            "labels": labels,
            "name": name,
            "namespace": namespace,
            "ownerReferences": [
                {
                    "apiVersion": JOBSET,
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": "JobSet",
                    "name": jobset,
                    "uid": uid(jobset),
                }
            ],
            "uid": uid(f"{name}/{attempt}"),
        },
        "spec": {"completionMode": "Indexed", "suspend": False},
        "status": {"active": 0},
    }


WL = "kueue.x-k8s.io/v1beta2"  # the version Kueue's events name (its storage version)
EVENTS = Events()


def wl_ref(namespace: str, name: str) -> tuple[str, str, str, str]:
    return (WL, "Workload", namespace, name)


def js_ref(namespace: str, name: str) -> tuple[str, str, str, str]:
    return (JOBSET, "JobSet", namespace, name)


def admit_events(
    ref: tuple[str, str, str, str], cq: str, when: str, waited: int, micros: int
) -> None:
    day, clock = int(when[8:10]), when[11:19]
    EVENTS.add(
        ref,
        "QuotaReserved",
        f"Quota reserved in ClusterQueue {cq}, wait time since queued was {waited}s",
        at(day, clock, micros - 1000),
    )
    EVENTS.add(
        ref,
        "Admitted",
        f"Admitted by ClusterQueue {cq}, wait time since reservation was 0s",
        at(day, clock, micros),
    )


def finished_event(js: tuple[str, str, str, str], workload_key: str, when: str) -> None:
    EVENTS.add(
        js,
        "FinishedWorkload",
        f"Workload '{workload_key}' is declared finished",
        when,
        component="kueue-jobset-controller",
    )


def pending(podset_name: str, resource: str, flavor: str, needed: int) -> str:
    return (
        f"couldn't assign flavors to pod set {podset_name}: insufficient unused quota for "
        f"{resource} in flavor {flavor}, {needed} more needed"
    )


JOBSET_OWNER = (JOBSET, "JobSet")
JOB_OWNER = ("batch/v1", "Job")
TPU_V5P = {TPU_NODE: "tpu-v5p-slice"}
H100 = {GPU_NODE: "nvidia-h100-80gb"}


# ---------------------------------------------------------------------------------------------
# The scenarios: each Workload as the 12:00 and the 16:00 export see it (None: not there yet).

NOON, FOUR = 12, 16
LLAMA = "jobset-llama-pretrain-5f2c1"
BERT = "jobset-bert-finetune-8d41e"
URGENT = "jobset-urgent-eval-c07b2"
MIXTRAL = "jobset-mixtral-moe-41d9a"
GEMMA = "jobset-gemma-sft-9e3f0"
SWEEP = "job-sweep-shard-1a2b3"
GRID = "job-grid-search-77c4e"
VIT = "jobset-vit-pretrain-2b6d8"


def llama(hour: int) -> dict[str, Any]:
    """1. Admission after queueing: waits 90 min for TPU v5p quota."""
    conditions = [
        *admitted(at(20, "09:30:00"), "tpu-v5p-cq"),
        condition("PodsReady", "True", "Started", "All pods reached readiness", at(20, "09:31:10")),
    ]
    if hour == FOUR:
        conditions.append(finished(at(20, "13:30:00")))
    return workload(
        KUEUE_V1 if hour == FOUR else KUEUE_V2,
        "team-lm",
        LLAMA,
        (*JOBSET_OWNER, "llama-pretrain"),
        at(20, "08:00:00"),
        [podset("workers", 4, TPU, 4, {**TPU_V5P, "cloud.google.com/gke-tpu-topology": "2x2x4"})],
        conditions,
        queue="lm-queue",
        admission=admission("tpu-v5p-cq", ("workers", 4, TPU, "tpu-v5p-2x2x4", 16)),
    )


PREEMPTION = (
    f"Preempted to accommodate a workload (UID: {uid(URGENT)}, JobUID: {uid('urgent-eval')}) "
    "due to prioritization in the ClusterQueue; preemptor path: /gpu-cq; preemptee path: /gpu-cq"
)


def bert(hour: int) -> dict[str, Any]:
    """2. Preempted by a higher-priority workload at 11:00, requeued, admitted again at 12:30."""
    if hour == NOON:  # evicted, its quota released once its pods stopped (11:00:40)
        conditions = [
            condition("QuotaReserved", "False", "Pending", PREEMPTION, at(20, "11:00:40")),
            condition(
                "Admitted",
                "False",
                "NoReservation",
                "The workload has no reservation",
                at(20, "11:00:40"),
            ),
            condition("Evicted", "True", "Preempted", PREEMPTION, at(20, "11:00:00")),
            condition("Preempted", "True", "InClusterQueue", PREEMPTION, at(20, "11:00:00")),
            condition("Requeued", "True", "Preempted", PREEMPTION, at(20, "11:00:40")),
        ]
        state = None
    else:
        previously = f"Previously: {PREEMPTION}"
        conditions = [
            *admitted(at(20, "12:30:00"), "gpu-cq"),
            condition("Evicted", "False", "QuotaReserved", previously, at(20, "12:30:00")),
            condition("Preempted", "False", "QuotaReserved", previously, at(20, "12:30:00")),
            condition("Requeued", "True", "Preempted", PREEMPTION, at(20, "11:00:40")),
            finished(at(20, "14:00:00")),
        ]
        state = admission("gpu-cq", ("trainer", 2, GPU, "h100-80gb", 16))
    return workload(
        KUEUE_V2 if hour == NOON else KUEUE_V1,
        "team-nlp",
        BERT,
        (*JOBSET_OWNER, "bert-finetune"),
        at(20, "10:00:00"),
        [podset("trainer", 2, GPU, 8, H100)],
        conditions,
        priority=("low", 100),
        queue="nlp-queue",
        admission=state,
        evictions=[("Preempted", 1)],
    )


def urgent(hour: int) -> dict[str, Any]:
    """3. The preemptor: no node selector, its flavor (h100-80gb) names the GPU."""
    conditions = admitted(at(20, "11:00:45"), "gpu-cq")
    if hour == FOUR:
        conditions.append(finished(at(20, "12:29:30")))
    return workload(
        KUEUE_V2 if hour == NOON else KUEUE_V1,
        "team-safety",
        URGENT,
        (*JOBSET_OWNER, "urgent-eval"),
        at(20, "10:59:55"),
        [podset("eval", 2, GPU, 8, {})],
        conditions,
        priority=("urgent", 1000),
        queue="safety-queue",
        admission=admission("gpu-cq", ("eval", 2, GPU, "h100-80gb", 16)),
    )


def mixtral(hour: int) -> dict[str, Any]:
    """4. Evicted for a failed node at 01:17:30 (no replacement), requeued, admitted at 01:40."""
    previously = "Previously: Workload was evicted as there was no replacement for a failed node"
    return workload(
        KUEUE_V2 if hour == NOON else KUEUE_V1,
        "team-lm",
        MIXTRAL,
        (*JOBSET_OWNER, "mixtral-moe"),
        at(19, "22:00:00"),
        [podset("workers", 8, TPU, 4, {**TPU_V5P, "cloud.google.com/gke-tpu-topology": "2x4x4"})],
        [
            *admitted(at(20, "01:40:00"), "tpu-v5p-cq"),
            condition("Evicted", "False", "QuotaReserved", previously, at(20, "01:40:00")),
            condition("Requeued", "True", "NodeFailures", previously[12:], at(20, "01:18:05")),
            finished(at(20, "05:00:00")),
        ],
        queue="lm-queue",
        admission=admission("tpu-v5p-cq", ("workers", 8, TPU, "tpu-v5p-2x4x4", 32)),
        evictions=[("NodeFailures", 1)],
    )


def gemma(hour: int) -> dict[str, Any]:
    """5. A JobSet that restarts twice while admitted; a CPU driver pod set."""
    return workload(
        KUEUE_V2 if hour == NOON else KUEUE_V1,
        "team-nlp",
        GEMMA,
        (*JOBSET_OWNER, "gemma-sft"),
        at(20, "05:50:00"),
        [
            podset("driver", 1, None, 0, {}),
            podset("workers", 4, GPU, 8, {GPU_NODE: "nvidia-h200-141gb"}),
        ],
        [*admitted(at(20, "06:00:00"), "h200-cq"), finished(at(20, "10:00:00"))],
        queue="nlp-queue",
        admission=admission(
            "h200-cq",
            ("driver", 1, "cpu", "default-flavor", 8),
            ("workers", 4, GPU, "h200-141gb", 32),
        ),
    )


def sweep(hour: int) -> dict[str, Any]:
    """6. Partial admission: a batch Job of 8 pods (minCount 4) admitted with 4, 09:00-12:40."""
    conditions = admitted(at(20, "09:00:00"), "gpu-cq")
    if hour == FOUR:
        conditions.append(
            condition(
                "Finished", "True", "Succeeded", "Job finished successfully", at(20, "12:40:00")
            )
        )
    return workload(
        KUEUE_V2 if hour == NOON else KUEUE_V1,
        "team-rec",
        SWEEP,
        (*JOB_OWNER, "sweep-shard"),
        at(20, "08:45:00"),
        [podset("main", 8, GPU, 8, H100, min_count=4, jobset=False)],
        conditions,
        queue="rec-queue",
        admission=admission("gpu-cq", ("main", 4, GPU, "h100-80gb", 32)),
    )


GRID_PENDING = pending("main", GPU, "h100-80gb", 16)


def grid(hour: int) -> dict[str, Any] | None:
    """7. Partial admission refused: even minCount 6 does not fit; deactivated at 15:00."""
    if hour == NOON:
        return None
    return workload(
        KUEUE_V1,
        "team-rec",
        GRID,
        (*JOB_OWNER, "grid-search"),
        at(20, "12:10:00"),
        [podset("main", 8, GPU, 8, H100, min_count=6, jobset=False)],
        [
            condition("QuotaReserved", "False", "Pending", GRID_PENDING, at(20, "12:10:01")),
            condition(
                "Evicted", "True", "Deactivated", "The workload is deactivated", at(20, "15:00:00")
            ),
            condition(
                "Requeued",
                "False",
                "Deactivated",
                "The workload is deactivated",
                at(20, "15:00:00"),
            ),
        ],
        queue="rec-queue",
        active=False,
    )


def vit(hour: int) -> dict[str, Any] | None:
    """8. A TPU v6e job still running when the 16:00 export was taken."""
    if hour == NOON:
        return None
    return workload(
        KUEUE_V1,
        "team-vision",
        VIT,
        (*JOBSET_OWNER, "vit-pretrain"),
        at(20, "14:00:00"),
        [
            podset(
                "workers",
                2,
                TPU,
                4,
                {TPU_NODE: "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "2x4"},
            )
        ],
        [
            *admitted(at(20, "14:00:03"), "tpu-v6e-cq"),
            condition(
                "PodsReady", "True", "Started", "All pods reached readiness", at(20, "14:02:00")
            ),
        ],
        queue="vision-queue",
        admission=admission("tpu-v6e-cq", ("workers", 2, TPU, "tpu-v6e-2x4", 8)),
    )


SCENARIOS = (llama, bert, urgent, mixtral, gemma, sweep, grid, vit)


def record_events() -> dict[str, list[dict[str, Any]]]:
    """Every event of the day, as the exporter saw them; returns the series' later versions."""
    versions: dict[str, list[dict[str, Any]]] = {}
    # 1. llama-pretrain: Kueue retries and says why it waits, as one series of Pending events.
    ref = wl_ref("team-lm", LLAMA)
    waiting = EVENTS.add(
        ref,
        "Pending",
        pending("workers", TPU, "tpu-v5p-2x2x4", 16),
        at(20, "08:00:00", 510000),
        kind="Warning",
    )
    versions[waiting["metadata"]["uid"]] = series_versions(
        waiting,
        (2, at(20, "08:00:10", 210000)),
        (11, at(20, "08:30:10", 210000)),
        (19, at(20, "09:00:10", 210000)),
    )
    admit_events(ref, "tpu-v5p-cq", at(20, "09:30:00"), 5400, 310000)
    js = js_ref("team-lm", "llama-pretrain")
    EVENTS.add(
        js,
        "Started",
        "Admitted by clusterQueue tpu-v5p-cq",
        at(20, "09:30:00", 450000),
        component="kueue-jobset-controller",
    )
    finished_event(js, f"team-lm/{LLAMA}", at(20, "13:30:00", 600000))
    # 2, 3. bert-finetune is preempted by urgent-eval at 11:00.
    ref, js = wl_ref("team-nlp", BERT), js_ref("team-nlp", "bert-finetune")
    admit_events(ref, "gpu-cq", at(20, "10:00:05"), 5, 250000)
    urgent_ref = wl_ref("team-safety", URGENT)
    EVENTS.add(
        urgent_ref,
        "Pending",
        pending("eval", GPU, "h100-80gb", 16),
        at(20, "10:59:55", 810000),
        kind="Warning",
    )
    EVENTS.add(ref, "EvictedDueToPreempted", PREEMPTION, at(20, "11:00:00", 200000))
    effective = (
        "; preemptor effective priority: 1000 (base: 1000, boost: 0); "
        "preemptee effective priority: 100 (base: 100, boost: 0)"
    )
    EVENTS.add(ref, "Preempted", PREEMPTION + effective, at(20, "11:00:00", 210000))
    EVENTS.add(
        urgent_ref,
        "PreemptedWorkload",
        f"Preempted workload team-nlp/{BERT} (UID: {uid(BERT)}) in ClusterQueue gpu-cq" + effective,
        at(20, "11:00:00", 220000),
    )
    EVENTS.add(
        js, "Stopped", PREEMPTION, at(20, "11:00:00", 500000), component="kueue-jobset-controller"
    )
    EVENTS.add(
        ref,
        "Pending",
        pending("trainer", GPU, "h100-80gb", 16),
        at(20, "11:00:41", 100000),
        kind="Warning",
    )
    admit_events(urgent_ref, "gpu-cq", at(20, "11:00:45"), 50, 300000)
    finished_event(
        js_ref("team-safety", "urgent-eval"), f"team-safety/{URGENT}", at(20, "12:29:30", 500000)
    )
    admit_events(ref, "gpu-cq", at(20, "12:30:00"), 5360, 200000)
    finished_event(js, f"team-nlp/{BERT}", at(20, "14:00:00", 400000))
    # 4. mixtral-moe loses a node at 01:17:30.
    ref, js = wl_ref("team-lm", MIXTRAL), js_ref("team-lm", "mixtral-moe")
    admit_events(ref, "tpu-v5p-cq", at(19, "22:05:00"), 300, 500000)
    EVENTS.add(
        ref,
        "EvictedDueToNodeFailures",
        "Workload was evicted as there was no replacement for a failed node: gke-tpu-7f3a-w2kq",
        at(20, "01:17:30", 250000),
    )
    EVENTS.add(
        js,
        "Stopped",
        "Workload was evicted as there was no replacement for a failed node: gke-tpu-7f3a-w2kq",
        at(20, "01:17:30", 600000),
        component="kueue-jobset-controller",
    )
    admit_events(ref, "tpu-v5p-cq", at(20, "01:40:00"), 1315, 300000)
    finished_event(js, f"team-lm/{MIXTRAL}", at(20, "05:00:00", 500000))
    # 5. gemma-sft: two restarts (its Jobs of the second, created 08:20:04, are in jobs.json).
    ref, js = wl_ref("team-nlp", GEMMA), js_ref("team-nlp", "gemma-sft")
    admit_events(ref, "h200-cq", at(20, "06:00:00"), 600, 200000)
    EVENTS.add(
        js,
        "RestartJobSetFailurePolicyAction",
        "applying RestartJobSet failure policy action (first failed job: gemma-sft-workers-2)",
        at(20, "07:10:00", 150000),
        kind="Warning",
        component="jobset",
    )
    EVENTS.add(
        js,
        "RestartJobSetFailurePolicyAction",
        "applying RestartJobSet failure policy action (first failed job: gemma-sft-workers-1)",
        at(20, "08:20:00", 150000),
        kind="Warning",
        component="jobset",
    )
    finished_event(js, f"team-nlp/{GEMMA}", at(20, "10:00:00", 400000))
    # 6. sweep-shard: partially admitted.
    admit_events(wl_ref("team-rec", SWEEP), "gpu-cq", at(20, "09:00:00"), 900, 300000)
    finished_event(
        ("batch/v1", "Job", "team-rec", "sweep-shard"),
        f"team-rec/{SWEEP}",
        at(20, "12:40:00", 500000),
    )
    # 7. grid-search: refused until deactivated.
    ref = wl_ref("team-rec", GRID)
    refused = EVENTS.add(ref, "Pending", GRID_PENDING, at(20, "12:10:01", 100000), kind="Warning")
    versions[refused["metadata"]["uid"]] = series_versions(
        refused,
        (2, at(20, "12:10:11", 100000)),
        (9, at(20, "12:40:11", 100000)),
        (40, at(20, "14:59:41", 400000)),
    )
    EVENTS.add(
        ref, "EvictedDueToDeactivated", "The workload is deactivated", at(20, "15:00:00", 200000)
    )
    # 8. vit-pretrain: admitted at once.
    admit_events(wl_ref("team-vision", VIT), "tpu-v6e-cq", at(20, "14:00:03"), 3, 300000)
    return versions


def pod_event(namespace: str, pod: str, reason: str, message: str, when: str) -> dict[str, Any]:
    """A kubelet event in its core/v1 form (the old recorder: first/lastTimestamp, count)."""
    return {
        "apiVersion": "v1",
        "count": 1,
        "eventTime": None,
        "firstTimestamp": when,
        "involvedObject": {
            "apiVersion": "v1",
            "fieldPath": "spec.containers{main}",
            "kind": "Pod",
            "name": pod,
            "namespace": namespace,
            "uid": uid(pod),
        },
        "kind": "Event",
        "lastTimestamp": when,
        "message": message,
        "metadata": {
            "creationTimestamp": when,
            "name": f"{pod}.{digits(pod + reason, 16)}",
            "namespace": namespace,
            "uid": uid(pod + reason),
        },
        "reason": reason,
        "reportingComponent": "kubelet",
        "reportingInstance": "gke-cpu-pool-3f2a-x8kq",
        "source": {"component": "kubelet", "host": "gke-cpu-pool-3f2a-x8kq"},
        "type": "Normal",
    }


def hostile_objects() -> list[dict[str, Any]]:
    """One unusable object per reason (the test lists them by position)."""
    h100 = [podset("main", 2, GPU, 8, H100)]

    def broken(
        name: str, podsets: list[dict[str, Any]], conditions: list[dict[str, Any]], **kw: Any
    ) -> dict[str, Any]:
        return workload(
            KUEUE_V1,
            "team-x",
            name,
            (*JOBSET_OWNER, name[7:-6]),
            at(20, "15:00:00"),
            podsets,
            conditions,
            queue="x",
            **kw,
        )

    no_created = broken("jobset-no-created-00001", h100, [])
    del no_created["metadata"]["creationTimestamp"]
    bad_time = broken("jobset-bad-time-00007", h100, [])
    bad_time["metadata"]["creationTimestamp"] = "yesterday"
    bad_count = broken("jobset-bad-count-00008", [podset("main", 2, GPU, 8, H100)], [])
    bad_count["spec"]["podSets"][0]["count"] = "eight"
    plain_job = child_job("team-x", "none", "main", 0, 0, at(20, "15:00:00"))
    plain_job["metadata"]["labels"] = {"app": "plain"}
    return [
        {
            "apiVersion": "v1",
            "data": {"k": "v"},
            "kind": "ConfigMap",
            "metadata": {"name": "cm", "namespace": "team-x"},
        },
        no_created,
        broken(
            "jobset-l4-serve-00002",
            [podset("main", 2, GPU, 1, {GPU_NODE: "nvidia-l4"})],
            admitted(at(20, "15:00:05"), "l4-cq"),
            admission=admission("l4-cq", ("main", 2, GPU, "l4", 2)),
        ),
        broken("jobset-cpu-etl-00003", [podset("main", 4, None, 0, {})], []),
        broken("jobset-anygpu-00004", [podset("main", 2, GPU, 8, {})], []),
        broken(
            "jobset-lost-history-00005",
            h100,
            admitted(at(20, "15:10:00"), "gpu-cq"),
            evictions=[("Preempted", 2)],
        ),
        broken(
            "jobset-bogus-finish-00006",
            h100,
            [condition("Finished", "True", "Bogus", "?", at(20, "15:30:00"))],
        ),
        plain_job,
        bad_time,
        bad_count,
        broken("jobset-early-evict-00009", h100, admitted(at(20, "15:40:00"), "gpu-cq")),
    ]


def hostile_lines() -> list[str]:
    """An exporter's file with one unusable line per reason."""
    ghost = Events()
    lost, early = (
        wl_ref("team-x", "jobset-lost-history-00005"),
        wl_ref("team-x", "jobset-early-evict-00009"),
    )
    no_reason = ghost.add(
        lost, "Admitted", "Admitted by ClusterQueue gpu-cq", at(20, "15:10:00", 300000)
    )
    del no_reason["reason"]
    events = [
        pod_event("team-x", "web-0", "Killing", "Stopping container main", at(20, "15:05:00")),
        ghost.add(
            wl_ref("team-lm", "jobset-ghost-00000"),
            "Admitted",
            "Admitted by ClusterQueue lm-cq",
            at(20, "15:06:00", 1),
        ),
        no_reason,
        ghost.add(lost, "Admitted", "Admitted by ClusterQueue gpu-cq", at(20, "15:10:00", 300000)),
        ghost.add(
            early,
            "EvictedDueToPreempted",
            "Preempted to accommodate a workload",
            at(20, "15:20:00", 200000),
        ),
    ]
    compact = [json.dumps(e, separators=(",", ":")) for e in events]
    return [
        '{"apiVersion":"v1","kind":"Event","involvedObject":{"kind":"Workload","name":"jobset-broken',
        compact[0],
        compact[1],
        "42",
        '{"metadata":{"name":"x"}}',
        *compact[2:],
    ]


def written_at(event: dict[str, Any]) -> str:
    series = event.get("series")
    return series["lastObservedTime"] if series else event["eventTime"] or event["lastTimestamp"]


def main() -> None:
    versions = record_events()
    (OUT / "hostile").mkdir(parents=True, exist_ok=True)
    noon = [w for w in (s(NOON) for s in SCENARIOS) if w is not None]
    four = [w for w in (s(FOUR) for s in SCENARIOS) if w is not None]
    (OUT / "workloads-1200.json").write_text(kubectl_list(noon) + "\n")
    (OUT / "workloads-1600.json").write_text(kubectl_list(four) + "\n")
    exported = sorted([*EVENTS.all, *(v for vs in versions.values() for v in vs)], key=written_at)
    latest = {e["metadata"]["uid"]: e for e in exported}  # each event's last version
    ttl = datetime.fromisoformat(at(20, "15:00:00"))  # the default 1 h TTL, at 16:00
    kept = [e for e in latest.values() if datetime.fromisoformat(written_at(e)) >= ttl]
    kept += [
        pod_event(
            "team-vision",
            "prometheus-0",
            "Pulled",
            "Container image already present",
            at(20, "15:30:00"),
        ),
        pod_event(
            "team-vision", "prometheus-0", "Started", "Started container main", at(20, "15:30:01")
        ),
    ]
    (OUT / "events.json").write_text(kubectl_list(kept) + "\n")
    (OUT / "event-exporter.jsonl").write_text(
        "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in exported)
    )
    jobsets = [
        jobset_object("team-lm", "llama-pretrain", at(20, "08:00:00"), 0, at(20, "13:30:00")),
        jobset_object("team-nlp", "bert-finetune", at(20, "10:00:00"), 0, at(20, "14:00:00")),
        jobset_object("team-safety", "urgent-eval", at(20, "10:59:55"), 0, at(20, "12:29:30")),
        jobset_object("team-lm", "mixtral-moe", at(19, "22:00:00"), 0, at(20, "05:00:00")),
        jobset_object("team-nlp", "gemma-sft", at(20, "05:50:00"), 2, at(20, "10:00:00")),
        jobset_object("team-vision", "vit-pretrain", at(20, "14:00:00"), 0, None),
        jobset_object("team-vision", "notebook-scratch", at(20, "09:00:00"), 0, None),
    ]
    (OUT / "jobsets.json").write_text(kubectl_list(jobsets) + "\n")
    jobs = [
        child_job("team-lm", "llama-pretrain", "workers", 0, 0, at(20, "08:00:00")),
        child_job("team-nlp", "bert-finetune", "trainer", 0, 0, at(20, "10:00:00")),
        child_job("team-safety", "urgent-eval", "eval", 0, 0, at(20, "10:59:55")),
        child_job("team-lm", "mixtral-moe", "workers", 0, 0, at(19, "22:00:00")),
        child_job("team-nlp", "gemma-sft", "driver", 0, 2, at(20, "08:20:05")),
        child_job("team-nlp", "gemma-sft", "workers", 0, 2, at(20, "08:20:04")),
        child_job("team-vision", "vit-pretrain", "workers", 0, 0, at(20, "14:00:00")),
    ]
    (OUT / "jobs.json").write_text(kubectl_list(jobs) + "\n")
    flavors = [resource_flavor(n, labels) for n, labels in FLAVORS.items()]
    (OUT / "resourceflavors.json").write_text(kubectl_list(flavors) + "\n")
    (OUT / "hostile" / "objects.json").write_text(kubectl_list(hostile_objects()) + "\n")
    (OUT / "hostile" / "exporter.jsonl").write_text("\n".join(hostile_lines()) + "\n")


if __name__ == "__main__":
    main()
