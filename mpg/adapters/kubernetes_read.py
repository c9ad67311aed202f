"""The Kubernetes objects of kubectl exports and event exporters as Polars frames, in one Python
pass over the parsed JSON (docs/adapters.md, section kubernetes).

Each object is one record (`kubernetes_json` finds them in a file of any shape). What a record
*is* comes from its `kind` and the group of its `apiVersion` (an exporter's event lines may lack
both: an object with `involvedObject` or `regarding` is an event). Only the structure is checked
here, as JSON offers it; values stay text, and `kubernetes_jobs` and `kubernetes_history` parse
times and decide what can be used, as columns over all records at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from mpg.adapters.kubernetes_json import read_text, records_of

TPU, GPU = "google.com/tpu", "nvidia.com/gpu"
# The node label GKE puts the accelerator's type in, per resource.
SELECTOR = {TPU: "cloud.google.com/gke-tpu-accelerator", GPU: "cloud.google.com/gke-accelerator"}
TOPOLOGY = "cloud.google.com/gke-tpu-topology"
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
JOBSET_UID = "jobset.sigs.k8s.io/jobset-uid"
RESTART_ATTEMPT = "jobset.sigs.k8s.io/restart-attempt"

# One row per record: `rid` numbers them over all files; `problem` is why one cannot be read.
RECORD = {
    "rid": pl.Int64,
    "file": pl.String,
    "line": pl.Int64,
    "raw": pl.String,
    "kind": pl.String,
    "problem": pl.String,
}
WORKLOAD = {
    "rid": pl.Int64,
    "namespace": pl.String,
    "name": pl.String,
    "uid": pl.String,
    "created": pl.String,
    "deleted": pl.String,
    "active": pl.Boolean,
    "priority": pl.Int64,
    "owner_kind": pl.String,
    "owner_name": pl.String,
    "owner_uid": pl.String,
    "admitted": pl.Boolean,  # status.admission is set: it describes the latest admission
    "evictions": pl.Int64,  # status.schedulingStats: evictions other than deactivations, or null
}
CONDITION = {
    "rid": pl.Int64,
    "type": pl.String,
    "status": pl.String,
    "reason": pl.String,
    "message": pl.String,
    "at": pl.String,
}
PODSET = {
    "rid": pl.Int64,
    "podset": pl.Int64,  # position in spec.podSets: the task index
    "count": pl.Int64,
    "min_count": pl.Int64,
    "resource": pl.String,  # google.com/tpu or nvidia.com/gpu, null for a pod set without either
    "per_pod": pl.Int64,
    "selector": pl.String,  # the node selector's accelerator value for that resource
    "topology": pl.String,
    "assigned": pl.Int64,  # status.admission.podSetAssignments[].count
    "flavor": pl.String,  # the ResourceFlavor assigned for the resource
}
EVENT = {
    "rid": pl.Int64,
    "identity": pl.String,
    "namespace": pl.String,
    "about_kind": pl.String,
    "about_name": pl.String,
    "about_uid": pl.String,
    "reason": pl.String,
    "message": pl.String,
    "first": pl.String,
    "last": pl.String,
    "count": pl.Int64,
}
JOBSET = {
    "rid": pl.Int64,
    "namespace": pl.String,
    "name": pl.String,
    "uid": pl.String,
    "restarts": pl.Int64,
}
CHILD = {  # a Job or Pod of a JobSet, by its labels
    "rid": pl.Int64,
    "namespace": pl.String,
    "jobset": pl.String,
    "jobset_uid": pl.String,
    "attempt": pl.Int64,
    "created": pl.String,
}
FLAVOR = {"rid": pl.Int64, "name": pl.String, "tpu": pl.String, "gpu": pl.String}


class UnreadableError(Exception):
    """Why one object cannot be read: its quarantine reason."""


@dataclass
class _Table:
    schema: dict[str, Any]
    rows: dict[str, list[Any]] = field(init=False)

    def __post_init__(self) -> None:
        self.rows = {c: [] for c in self.schema}

    def add(self, **values: Any) -> None:
        for column, cells in self.rows.items():
            cells.append(values.get(column))

    def frame(self) -> pl.DataFrame:
        return pl.DataFrame(self.rows, schema=self.schema)


@dataclass(frozen=True)
class Objects:
    """Everything read, as frames keyed by `rid` (one per record, over all files)."""

    records: pl.DataFrame
    workloads: pl.DataFrame
    conditions: pl.DataFrame
    podsets: pl.DataFrame
    events: pl.DataFrame
    jobsets: pl.DataFrame
    children: pl.DataFrame
    flavors: pl.DataFrame


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value != "" else None


def _int(value: Any, what: str, *, default: int | None = None) -> int | None:
    """An integer field (JSON number, or a Kubernetes quantity of whole units as text)."""
    if value is None:
        return default
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise UnreadableError(f"invalid field: {what}")


def _required(obj: dict[str, Any], *path: str) -> str:
    value = _str(_get(obj, *path))
    if value is None:
        raise UnreadableError(f"missing field: {'.'.join(path)}")
    return value


def _dicts(value: Any, what: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise UnreadableError(f"invalid field: {what}")
    return value


def _pod_chips(pod: dict[str, Any], what: str) -> dict[str, int]:
    """Accelerators one pod asks for, per resource: its containers' requests (limits where a
    container gives none, as Kubernetes defaults them) summed, or an init container's if larger
    (init containers run one at a time, before the others)."""
    chips: dict[str, int] = {}
    for resource in (TPU, GPU):

        def asked(container: dict[str, Any], resource: str = resource) -> int:
            for kind in ("requests", "limits"):
                value = _get(container, "resources", kind, resource)
                if value is not None:
                    return _int(value, f"{what} {resource}") or 0
            return 0

        main = sum(asked(c) for c in _dicts(pod.get("containers"), f"{what}.containers"))
        init = [asked(c) for c in _dicts(pod.get("initContainers"), f"{what}.initContainers")]
        total = max([main, *init])
        if total:
            chips[resource] = total
    return chips


class _Reader:
    """The one Python pass: each object's fields into the tables, or its problem."""

    def __init__(self) -> None:
        self.records = _Table(RECORD)
        self.workloads = _Table(WORKLOAD)
        self.conditions = _Table(CONDITION)
        self.podsets = _Table(PODSET)
        self.events = _Table(EVENT)
        self.jobsets = _Table(JOBSET)
        self.children = _Table(CHILD)
        self.flavors = _Table(FLAVOR)

    def read(self, path: Path) -> None:
        for line, raw, obj, problem in records_of(read_text(path)):
            if problem is not None:
                self._record(path, line, raw, None, problem)
            else:
                self._object(path, line, raw, obj)

    def _record(
        self, path: Path, line: int, raw: str, kind: str | None, problem: str | None
    ) -> int:
        rid = len(self.records.rows["rid"])
        self.records.add(rid=rid, file=str(path), line=line, raw=raw, kind=kind, problem=problem)
        return rid

    def _object(self, path: Path, line: int, raw: str, obj: Any) -> None:
        if not isinstance(obj, dict):
            self._record(path, line, raw, None, "not a JSON object")
            return
        kind = _kind(obj)
        reader = {
            "Workload": self._workload,
            "Event": self._event,
            "JobSet": self._jobset,
            "Job": self._child,
            "Pod": self._child,
            "ResourceFlavor": self._flavor,
        }.get(kind or "")
        if reader is None:
            shown = _str(obj.get("kind"))
            problem = f"unknown kind: {shown}" if shown else "not a Kubernetes object: no kind"
            self._record(path, line, raw, None, problem)
            return
        rid = self._record(path, line, raw, kind, None)
        try:
            reader(rid, obj)
        except UnreadableError as problem:
            self.records.rows["problem"][rid] = str(problem)

    def _workload(self, rid: int, obj: dict[str, Any]) -> None:
        namespace = _required(obj, "metadata", "namespace")
        name = _required(obj, "metadata", "name")
        created = _required(obj, "metadata", "creationTimestamp")
        podsets = _dicts(_get(obj, "spec", "podSets"), "spec.podSets")
        if not podsets:
            raise UnreadableError("missing field: spec.podSets")
        owners = _dicts(_get(obj, "metadata", "ownerReferences"), "metadata.ownerReferences")
        owner = next(
            (o for o in owners if o.get("controller") is True), owners[0] if owners else {}
        )
        assignments = {
            a.get("name"): a
            for a in _dicts(
                _get(obj, "status", "admission", "podSetAssignments"),
                "status.admission.podSetAssignments",
            )
        }
        stats = _dicts(_get(obj, "status", "schedulingStats", "evictions"), "schedulingStats")
        evictions = sum(
            _int(s.get("count"), "schedulingStats.evictions.count", default=0) or 0
            for s in stats
            if not str(s.get("reason", "")).startswith("Deactivated")
        )
        rows = []
        for index, podset in enumerate(podsets):
            what = f"spec.podSets[{index}]"
            name_of = podset.get("name", "main")
            pod = _get(podset, "template", "spec")
            chips = _pod_chips(pod if isinstance(pod, dict) else {}, f"{what}.template")
            if len(chips) > 1:
                raise UnreadableError("a pod set requests both google.com/tpu and nvidia.com/gpu")
            resource = next(iter(chips), None)
            selectors = _get(pod, "nodeSelector") or {}
            assignment = assignments.get(name_of, {})
            rows.append(
                {
                    "podset": index,
                    "count": _int(podset.get("count"), f"{what}.count", default=1),
                    "min_count": _int(podset.get("minCount"), f"{what}.minCount"),
                    "resource": resource,
                    "per_pod": chips.get(resource) if resource else None,
                    "selector": _str(selectors.get(SELECTOR[resource])) if resource else None,
                    "topology": _str(selectors.get(TOPOLOGY)),
                    "assigned": _int(assignment.get("count"), f"{what} assignment count"),
                    "flavor": _str(_get(assignment, "flavors", resource)) if resource else None,
                }
            )
        conditions = _dicts(_get(obj, "status", "conditions"), "status.conditions")
        active = _get(obj, "spec", "active")
        self.workloads.add(
            rid=rid,
            namespace=namespace,
            name=name,
            uid=_str(_get(obj, "metadata", "uid")),
            created=created,
            deleted=_str(_get(obj, "metadata", "deletionTimestamp")),
            active=active is not False,
            priority=_int(_get(obj, "spec", "priority"), "spec.priority"),
            owner_kind=_str(owner.get("kind")),
            owner_name=_str(owner.get("name")),
            owner_uid=_str(owner.get("uid")),
            admitted=bool(assignments),
            evictions=evictions if stats else None,
        )
        for row in rows:
            self.podsets.add(rid=rid, **row)
        for c in conditions:
            self.conditions.add(
                rid=rid,
                type=_str(c.get("type")),
                status=_str(c.get("status")),
                reason=_str(c.get("reason")),
                message=_str(c.get("message")),
                at=_str(c.get("lastTransitionTime")),
            )

    def _event(self, rid: int, obj: dict[str, Any]) -> None:
        about = obj.get("involvedObject", obj.get("regarding"))
        if not isinstance(about, dict):
            raise UnreadableError("missing field: involvedObject")
        reason = _required(obj, "reason")
        series = obj.get("series") if isinstance(obj.get("series"), dict) else {}
        first = next(
            (
                t
                for t in (
                    _str(obj.get("eventTime")),
                    _str(obj.get("firstTimestamp")),
                    _str(obj.get("deprecatedFirstTimestamp")),
                    _str(_get(obj, "metadata", "creationTimestamp")),
                )
                if t
            ),
            None,
        )
        if first is None:
            raise UnreadableError("missing field: eventTime")
        count = _int(series.get("count"), "series.count") or _int(obj.get("count"), "count")
        count = count or _int(obj.get("deprecatedCount"), "deprecatedCount") or 1
        last = (
            _str(series.get("lastObservedTime"))
            or _str(obj.get("lastTimestamp"))
            or _str(obj.get("deprecatedLastTimestamp"))
        )
        namespace = _str(about.get("namespace")) or _str(_get(obj, "metadata", "namespace"))
        name = _str(_get(obj, "metadata", "name"))
        self.events.add(
            rid=rid,
            identity=_str(_get(obj, "metadata", "uid"))
            or (f"{namespace}/{name}" if name else f"record {rid}"),
            namespace=namespace,
            about_kind=_str(about.get("kind")),
            about_name=_str(about.get("name")),
            about_uid=_str(about.get("uid")),
            reason=reason,
            message=_str(obj.get("message", obj.get("note"))),
            first=first,
            last=last if count > 1 else None,
            count=count,
        )

    def _jobset(self, rid: int, obj: dict[str, Any]) -> None:
        self.jobsets.add(
            rid=rid,
            namespace=_required(obj, "metadata", "namespace"),
            name=_required(obj, "metadata", "name"),
            uid=_str(_get(obj, "metadata", "uid")),
            restarts=_int(_get(obj, "status", "restarts"), "status.restarts", default=0),
        )

    def _child(self, rid: int, obj: dict[str, Any]) -> None:
        labels = _get(obj, "metadata", "labels") or {}
        if (
            not isinstance(labels, dict)
            or JOBSET_NAME not in labels
            or RESTART_ATTEMPT not in labels
        ):
            raise UnreadableError(f"no JobSet labels ({JOBSET_NAME}, {RESTART_ATTEMPT})")
        self.children.add(
            rid=rid,
            namespace=_required(obj, "metadata", "namespace"),
            jobset=_str(labels.get(JOBSET_NAME)),
            jobset_uid=_str(labels.get(JOBSET_UID)),
            attempt=_int(labels.get(RESTART_ATTEMPT), f"label {RESTART_ATTEMPT}"),
            created=_required(obj, "metadata", "creationTimestamp"),
        )

    def _flavor(self, rid: int, obj: dict[str, Any]) -> None:
        labels = _get(obj, "spec", "nodeLabels") or {}
        self.flavors.add(
            rid=rid,
            name=_required(obj, "metadata", "name"),
            tpu=_str(_get(labels, SELECTOR[TPU])),
            gpu=_str(_get(labels, SELECTOR[GPU])),
        )

    def objects(self) -> Objects:
        return Objects(
            records=self.records.frame(),
            workloads=self.workloads.frame(),
            conditions=self.conditions.frame(),
            podsets=self.podsets.frame(),
            events=self.events.frame(),
            jobsets=self.jobsets.frame(),
            children=self.children.frame(),
            flavors=self.flavors.frame(),
        )


def _kind(obj: dict[str, Any]) -> str | None:
    """The kind of object this adapter reads, from `kind` and the API group of `apiVersion`."""
    kind, version = obj.get("kind"), str(obj.get("apiVersion", ""))
    group = version.split("/")[0] if "/" in version else ""
    known = {
        ("Workload", "kueue.x-k8s.io"),
        ("ResourceFlavor", "kueue.x-k8s.io"),
        ("JobSet", "jobset.x-k8s.io"),
        ("Job", "batch"),
        ("Pod", ""),
        ("Event", ""),
        ("Event", "events.k8s.io"),
    }
    if (kind, group) in known:
        return str(kind)
    if kind is None and ("involvedObject" in obj or "regarding" in obj):
        return "Event"  # an exporter's line: the Event without its type meta
    return None


def read_objects(paths: list[Path]) -> Objects:
    reader = _Reader()
    for path in paths:
        reader.read(path)
    return reader.objects()
