"""The Kubernetes objects of kubectl exports and event exporters as Polars frames, in one Python
pass over the parsed JSON (docs/adapters/kubernetes.md).

Each object is one record (`kubernetes_json` finds them in a file of any shape). What a record
*is* comes from its `kind` and the group of its `apiVersion` (an exporter's event lines may lack
both: an object with `involvedObject` or `regarding` is an event). Only the structure is checked
here, as JSON offers it; values stay text, and `kubernetes_derive` and the modules it calls parse
times and decide what can be used, as columns over all records at once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import polars as pl

from mpg.adapters.kubernetes_history import DEACTIVATED
from mpg.adapters.kubernetes_json import payload, read_text, records_of
from mpg.adapters.kubernetes_tables import (
    CHILD,
    CONDITION,
    EVENT,
    FLAVOR,
    GPU,
    JOB,
    JOB_NAME,
    JOBSET,
    JOBSET_NAME,
    JOBSET_UID,
    POD,
    PODSET,
    PODSET_LABEL,
    QUEUE_NAME,
    RECORD,
    REPLICATED_JOB,
    RESTART_ATTEMPT,
    SELECTOR,
    TOPOLOGY,
    TPU,
    WORKLOAD,
    WORKLOAD_NAME,
)


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
    jobs: pl.DataFrame
    children: pl.DataFrame
    pods: pl.DataFrame
    pod_conditions: pl.DataFrame
    flavors: pl.DataFrame

    def without(self, rids: pl.Series) -> Objects:
        """These objects less the records `rids`, from every table."""
        return Objects(
            **{
                f.name: getattr(self, f.name).filter(~pl.col("rid").is_in(rids.implode()))
                for f in fields(self)
            }
        )


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


def _conditions(table: _Table, rid: int, conditions: list[dict[str, Any]]) -> None:
    """An object's `status.conditions` (metav1.Condition, or a pod's) into `table`."""
    for c in conditions:
        table.add(
            rid=rid,
            type=_str(c.get("type")),
            status=_str(c.get("status")),
            reason=_str(c.get("reason")),
            message=_str(c.get("message")),
            at=_str(c.get("lastTransitionTime")),
        )


def _labels(obj: dict[str, Any]) -> dict[str, Any]:
    labels = _get(obj, "metadata", "labels")
    return labels if isinstance(labels, dict) else {}


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
    """The one Python pass: each object's fields into the tables, or its problem. `owner_label`
    is the label whose value names a job's owner (--owner-label), where one is given."""

    def __init__(self, owner_label: str | None) -> None:
        self.owner_label = owner_label
        self.records = _Table(RECORD)
        self.workloads = _Table(WORKLOAD)
        self.conditions = _Table(CONDITION)
        self.podsets = _Table(PODSET)
        self.events = _Table(EVENT)
        self.jobsets = _Table(JOBSET)
        self.jobs = _Table(JOB)
        self.children = _Table(CHILD)
        self.pods = _Table(POD)
        self.pod_conditions = _Table(CONDITION)
        self.flavors = _Table(FLAVOR)

    def read(self, path: Path) -> None:
        for line, raw, obj, problem in records_of(read_text(path)):
            self.add(str(path), line, raw, obj, problem)

    def add(self, file: str, line: int, raw: str, obj: Any, problem: str | None) -> None:
        """One record: an object, or a value that could not be parsed (`problem`)."""
        if problem is not None:
            rid = self._record(file, line, raw, None, problem)
            self.records.rows["malformed"][rid] = True
        else:
            self._object(file, line, raw, obj)

    def _record(self, file: str, line: int, raw: str, kind: str | None, problem: str | None) -> int:
        rid = len(self.records.rows["rid"])
        self.records.add(
            rid=rid, file=file, line=line, raw=raw, kind=kind, problem=problem, malformed=False
        )
        return rid

    def _object(self, file: str, line: int, raw: str, obj: Any) -> None:
        if not isinstance(obj, dict):
            self._record(file, line, raw, None, "not a JSON object")
            return
        kind = _kind(obj)
        reader = {
            "Workload": self._workload,
            "Event": self._event,
            "JobSet": self._jobset,
            "Job": self._job,
            "Pod": self._pod,
            "ResourceFlavor": self._flavor,
        }.get(kind or "")
        if reader is None:
            shown = _str(obj.get("kind"))
            problem = f"unknown kind: {shown}" if shown else "not a Kubernetes object: no kind"
            self._record(file, line, raw, None, problem)
            return
        rid = self._record(file, line, raw, kind, None)
        try:
            reader(rid, obj)
        except UnreadableError as problem:
            self.records.rows["problem"][rid] = str(problem)

    def _label(self, obj: dict[str, Any]) -> str | None:
        """The value of the --owner-label label (or annotation) of `obj`."""
        if self.owner_label is None:
            return None
        for where in ("labels", "annotations"):
            value = _get(obj, "metadata", where, self.owner_label)
            if _str(value):
                return str(value)
        return None

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
            if not str(s.get("reason", "")).startswith(DEACTIVATED)
        )
        rows = []
        for index, podset in enumerate(podsets):
            what = f"spec.podSets[{index}]"
            name_of = _str(podset.get("name")) or "main"
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
                    "name": name_of,
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
            queue=_str(_get(obj, "spec", "queueName"))
            or _str(_get(obj, "metadata", "labels", QUEUE_NAME)),
            cluster_queue=_str(_get(obj, "status", "admission", "clusterQueue")),
            owner_label=self._label(obj),
            admitted=bool(assignments),
            evictions=evictions if stats else None,
        )
        for row in rows:
            self.podsets.add(rid=rid, **row)
        _conditions(self.conditions, rid, conditions)

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
        counts = {
            "series.count": _int(series.get("count"), "series.count"),
            "count": _int(obj.get("count"), "count"),
            "deprecatedCount": _int(obj.get("deprecatedCount"), "deprecatedCount"),
        }
        for what, value in counts.items():
            if value is not None and value < 0:
                raise UnreadableError(f"invalid field: {what} is negative ({value})")
        count = next((c for c in counts.values() if c), 1)
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
            last=last,
            count=count,
        )

    def _jobset(self, rid: int, obj: dict[str, Any]) -> None:
        self.jobsets.add(
            rid=rid,
            namespace=_required(obj, "metadata", "namespace"),
            name=_required(obj, "metadata", "name"),
            uid=_str(_get(obj, "metadata", "uid")),
            restarts=_int(_get(obj, "status", "restarts"), "status.restarts", default=0),
            created=_str(_get(obj, "metadata", "creationTimestamp")),
            owner_label=self._label(obj),
        )

    def _child(self, rid: int, obj: dict[str, Any], labels: dict[str, Any]) -> None:
        """A Job or Pod labelled by the JobSet controller: when a JobSet restart began."""
        self.children.add(
            rid=rid,
            namespace=_required(obj, "metadata", "namespace"),
            jobset=_str(labels.get(JOBSET_NAME)),
            jobset_uid=_str(labels.get(JOBSET_UID)),
            attempt=_int(labels.get(RESTART_ATTEMPT), f"label {RESTART_ATTEMPT}"),
            created=_required(obj, "metadata", "creationTimestamp"),
        )

    def _job(self, rid: int, obj: dict[str, Any]) -> None:
        labels = _labels(obj)
        namespace = _required(obj, "metadata", "namespace")
        name = _required(obj, "metadata", "name")
        if RESTART_ATTEMPT in labels:
            self._child(rid, obj, labels)
        self.jobs.add(
            rid=rid,
            namespace=namespace,
            name=name,
            uid=_str(_get(obj, "metadata", "uid")),
            jobset=_str(labels.get(JOBSET_NAME)),
            created=_str(_get(obj, "metadata", "creationTimestamp")),
            owner_label=self._label(obj),
        )

    def _pod(self, rid: int, obj: dict[str, Any]) -> None:
        labels = _labels(obj)
        namespace = _required(obj, "metadata", "namespace")
        name = _required(obj, "metadata", "name")
        created = _required(obj, "metadata", "creationTimestamp")
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        chips = _pod_chips(spec, "spec")
        if len(chips) > 1:
            raise UnreadableError("a pod requests both google.com/tpu and nvidia.com/gpu")
        owners = _dicts(_get(obj, "metadata", "ownerReferences"), "metadata.ownerReferences")
        owner = next((o for o in owners if o.get("controller") is True), {})
        statuses = _dicts(_get(obj, "status", "containerStatuses"), "status.containerStatuses")
        ends = [_get(c, "state", "terminated", "finishedAt") for c in statuses]
        conditions = _dicts(_get(obj, "status", "conditions"), "status.conditions")
        if JOBSET_NAME in labels and RESTART_ATTEMPT in labels:
            self._child(rid, obj, labels)
        self.pods.add(
            rid=rid,
            namespace=namespace,
            name=name,
            uid=_str(_get(obj, "metadata", "uid")),
            created=created,
            deleted=_str(_get(obj, "metadata", "deletionTimestamp")),
            grace=_int(
                _get(obj, "metadata", "deletionGracePeriodSeconds"), "deletionGracePeriodSeconds"
            ),
            node=_str(spec.get("nodeName")),
            phase=_str(_get(obj, "status", "phase")),
            started=_str(_get(obj, "status", "startTime")),
            # A pod has ended when every container has (a sidecar outlives the main one).
            finished=max(ends) if ends and all(_str(e) for e in ends) else None,
            owner_kind=_str(owner.get("kind")),
            owner_name=_str(owner.get("name")),
            owner_uid=_str(owner.get("uid")),
            jobset=_str(labels.get(JOBSET_NAME)),
            jobset_uid=_str(labels.get(JOBSET_UID)),
            rjob=_str(labels.get(REPLICATED_JOB)),
            podset=_str(labels.get(PODSET_LABEL)),
            workload=_str(_get(obj, "metadata", "annotations", WORKLOAD_NAME)),
            job=next((_str(labels.get(k)) for k in JOB_NAME if _str(labels.get(k))), None),
            chips=next(iter(chips.values()), 0),
            owner_label=self._label(obj),
        )
        _conditions(self.pod_conditions, rid, conditions)

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
            jobs=self.jobs.frame(),
            children=self.children.frame(),
            pods=self.pods.frame(),
            pod_conditions=self.pod_conditions.frame(),
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


def read_objects(
    paths: list[Path], earlier: pl.DataFrame | None = None, owner_label: str | None = None
) -> Objects:
    """Every record of `paths`, after the `earlier` records (`file`, `line`, `raw`, `problem`:
    those an earlier import read, kept in the import's state): those come first, re-read from
    their raw text, so that one set of rules applies to both."""
    reader = _Reader(owner_label)
    for file, line, raw, problem in earlier.iter_rows() if earlier is not None else ():
        value = None if problem is not None else payload(json.loads(raw))
        reader.add(file, line, raw, value, problem)
    for path in paths:
        reader.read(path)
    return reader.objects()
