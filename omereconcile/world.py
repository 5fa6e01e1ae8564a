"""The observed world one planner pass sees: plain, frozen data, no client objects.

The executor builds a ``World`` from what it read (the ``from_dict`` helpers below turn raw API objects
into these views, so the executor stays thin); the simulated world builds the same from its in-memory
API. The time is an input (``World.now``): the planner never reads a clock.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from omereconcile.settings import OperatorSettings
from omerender import constants as c
from omerender.models import InferenceReplica
from omerender.revision import stored_payload

__all__ = [
    "ContainerView",
    "DesiredRevision",
    "EndpointView",
    "Endpoints",
    "LedgerView",
    "NodeView",
    "PodCondition",
    "PodFactory",
    "PodGroupView",
    "PodView",
    "RenderBlock",
    "RenderOutcome",
    "ReplicaView",
    "RevisionView",
    "ServiceView",
    "World",
    "format_time",
    "parse_time",
]

# (revision name, index, incarnation, runner, ordinal) -> a complete pod object, ready to create.
PodFactory = Callable[[str, int, int, str, int], dict[str, Any]]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def parse_time(value: object) -> datetime | None:
    """RFC 3339 as the API server writes it (``2024-05-01T10:00:00Z``), always timezone-aware."""
    if not isinstance(value, str) or not value:
        return None
    dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def format_time(value: datetime) -> str:
    """Second precision, as metav1.Time serialises."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class PodCondition:
    type: str
    status: str  # "True" | "False" | "Unknown"
    last_transition_time: datetime | None = None
    reason: str = ""
    message: str = ""


@dataclass(frozen=True, slots=True)
class ContainerView:
    name: str
    waiting_reason: str | None = None
    restart_count: int = 0
    # The last termination, when the container has restarted: feeds lastFailure (reason, exit code).
    terminated_reason: str | None = None
    exit_code: int | None = None
    # lastState.terminated.finishedAt and state.running.startedAt: date a restart against readySince.
    finished_at: datetime | None = None
    started_at: datetime | None = None
    # status.ready and which state the kubelet reports: the readiness-limbo evidence of a deadline.
    ready: bool = False
    running: bool = False
    waiting: bool = False
    # The rest of a crash's record (Go types.PodTermination): the live terminated state, the messages.
    state_terminated_reason: str | None = None
    state_exit_code: int | None = None
    state_finished_at: datetime | None = None
    state_message: str = ""
    last_message: str = ""
    waiting_message: str = ""
    image: str = ""  # status.containerStatuses[].image: what the runtime runs (the in-place roll's proof)
    # lastState.terminated.startedAt: when the run that last died began (Go RunnerRestartedAgainSinceReady).
    last_started_at: datetime | None = None


def _container_views(statuses: Any) -> tuple[ContainerView, ...]:
    out = []
    for cs in statuses or []:
        state = cs.get("state", {}) or {}
        last = (cs.get("lastState", {}) or {}).get("terminated") or {}
        now = state.get("terminated") or {}
        out.append(
            ContainerView(
                name=str(cs.get("name", "")),
                waiting_reason=(state.get("waiting") or {}).get("reason"),
                restart_count=int(cs.get("restartCount", 0) or 0),
                terminated_reason=last.get("reason"),
                exit_code=last.get("exitCode"),
                finished_at=parse_time(last.get("finishedAt")),
                started_at=parse_time((state.get("running") or {}).get("startedAt")),
                ready=cs.get("ready") is True,
                running=state.get("running") is not None,
                waiting=state.get("waiting") is not None,
                state_terminated_reason=now.get("reason"),
                state_exit_code=now.get("exitCode"),
                state_finished_at=parse_time(now.get("finishedAt")),
                state_message=str(now.get("message") or ""),
                last_message=str(last.get("message") or ""),
                waiting_message=str((state.get("waiting") or {}).get("message") or ""),
                image=str(cs.get("image") or ""),
                last_started_at=parse_time(last.get("startedAt")),
            )
        )
    return tuple(out)


@dataclass(frozen=True, slots=True)
class PodView:
    """One pod, as the planner needs it. Identity is (name, uid)."""

    name: str
    uid: str
    resource_version: str
    labels: Mapping[str, str]
    phase: str = "Pending"
    status_reason: str = ""  # status.reason: why a pod ended before any container ran (Evicted, ...)
    conditions: tuple[PodCondition, ...] = ()
    containers: tuple[ContainerView, ...] = ()
    init_containers: tuple[ContainerView, ...] = ()
    creation_timestamp: datetime | None = None
    deletion_timestamp: datetime | None = None
    node_name: str | None = None
    scheduling_gates: tuple[str, ...] = ()
    readiness_gates: tuple[str, ...] = ()  # spec.readinessGates[].conditionType
    finalizers: tuple[str, ...] = ()  # metadata.finalizers: a force-delete could not remove the pod
    # spec.containers[] as (name, image), and metadata.annotations: what an in-place roll patches.
    images: tuple[tuple[str, str], ...] = ()
    annotations: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    controller_uid: str | None = None  # UID of its controller owner reference, if any

    # -- identity labels ------------------------------------------------------------------------
    def _int_label(self, key: str) -> int | None:
        raw = self.labels.get(key)
        try:
            return int(raw) if raw is not None else None
        except ValueError:
            return None

    @property
    def index(self) -> int | None:
        return self._int_label(c.LABEL_INSTANCE_INDEX)

    @property
    def incarnation(self) -> int | None:
        return self._int_label(c.LABEL_INSTANCE_INCARNATION)

    @property
    def ordinal(self) -> int | None:
        return self._int_label(c.LABEL_POD_ORDINAL)

    @property
    def runner(self) -> str:
        return self.labels.get(c.LABEL_RUNNER, "")

    @property
    def revision_hash(self) -> str:
        return self.labels.get(c.LABEL_REVISION_HASH, "")

    # -- state ------------------------------------------------------------------------------------
    def condition(self, type_: str) -> PodCondition | None:
        for cond in self.conditions:
            if cond.type == type_:
                return cond
        return None

    def _is_true(self, type_: str) -> bool:
        cond = self.condition(type_)
        return cond is not None and cond.status == "True"

    @property
    def terminating(self) -> bool:
        return self.deletion_timestamp is not None

    @property
    def ended(self) -> bool:
        """Failed or Succeeded: the pod will never run again (evicted, completed, …)."""
        return self.phase in ("Failed", "Succeeded")

    @property
    def containers_ready(self) -> bool:
        return self._is_true("ContainersReady") and not self.ended

    @property
    def gate(self) -> str | None:
        """The ``ome.io/serving`` condition's status, or None when never written."""
        cond = self.condition(c.SERVING_GATE)
        return cond.status if cond is not None else None

    @property
    def ready(self) -> bool:
        return self._is_true("Ready") and not self.ended

    @property
    def containers_ready_condition(self) -> bool:
        """ContainersReady as the kubelet last wrote it, whatever the pod's phase (Go's
        ``podreadiness.IsContainersReady``, which the status counters read)."""
        return self._is_true("ContainersReady")

    @property
    def pod_ready_condition(self) -> bool:
        """PodReady as last written (Go's ``podreadiness.IsPodReady``)."""
        return self._is_true("Ready")

    @property
    def admission_gated(self) -> bool:
        """Held by a scheduling gate (Go's ``PodAdmissionGated``: ``len(spec.schedulingGates) > 0``)."""
        return bool(self.scheduling_gates)

    @property
    def unschedulable_since(self) -> datetime | None:
        cond = self.condition("PodScheduled")
        if cond is not None and cond.status == "False" and cond.reason == "Unschedulable":
            return cond.last_transition_time or self.creation_timestamp
        return None

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> PodView:
        meta = obj.get("metadata", {})
        status = obj.get("status", {}) or {}
        spec = obj.get("spec", {}) or {}
        conds = tuple(
            PodCondition(
                type=str(cd.get("type", "")),
                status=str(cd.get("status", "Unknown")),
                last_transition_time=parse_time(cd.get("lastTransitionTime")),
                reason=str(cd.get("reason", "") or ""),
                message=str(cd.get("message", "") or ""),
            )
            for cd in status.get("conditions", []) or []
        )
        containers = _container_views(status.get("containerStatuses"))
        init_containers = _container_views(status.get("initContainerStatuses"))
        return cls(
            name=str(meta.get("name", "")),
            uid=str(meta.get("uid", "")),
            resource_version=str(meta.get("resourceVersion", "")),
            labels=MappingProxyType(dict(meta.get("labels", {}) or {})),
            phase=str(status.get("phase", "Pending") or "Pending"),
            status_reason=str(status.get("reason", "") or ""),
            conditions=conds,
            containers=containers,
            init_containers=init_containers,
            creation_timestamp=parse_time(meta.get("creationTimestamp")),
            deletion_timestamp=parse_time(meta.get("deletionTimestamp")),
            node_name=spec.get("nodeName"),
            scheduling_gates=tuple(str(g.get("name", "")) for g in spec.get("schedulingGates", []) or []),
            readiness_gates=tuple(
                str(g.get("conditionType", "")) for g in spec.get("readinessGates", []) or []
            ),
            finalizers=tuple(str(f) for f in meta.get("finalizers", []) or []),
            images=tuple(
                (str(ct.get("name", "")), str(ct.get("image", "") or ""))
                for ct in spec.get("containers", []) or []
            ),
            annotations=MappingProxyType(dict(meta.get("annotations", {}) or {})),
            controller_uid=next(
                (o.get("uid") for o in meta.get("ownerReferences", []) or [] if o.get("controller")), None
            ),
        )


def _int_or_none(raw: Any) -> int | None:
    """An integer field as the API holds it (a bool or a non-integer is no value)."""
    return raw if isinstance(raw, int) and not isinstance(raw, bool) else None


@dataclass(frozen=True, slots=True)
class PodGroupView:
    """A scheduler-plugins PodGroup (``scheduling.x-k8s.io/v1alpha1``) under the replica's selector."""

    name: str
    uid: str
    labels: Mapping[str, str]
    owner_uid: str | None  # UID of its controller owner reference, if any
    terminating: bool = False
    min_member: int = 0
    # What OME's EnsurePodGroup keeps in line (podGroupMatches): the rest of the owned fields.
    annotations: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    owner_references: tuple[Mapping[str, Any], ...] = ()
    schedule_timeout_seconds: int | None = None
    resource_version: str = ""
    # The gang scheduler's verdict (``status.phase``; ``Failed`` is absorbing) and its count of
    # failed members (``status.failed``), read by the PodGroup reset (``planner/gang.py``).
    phase: str = ""
    failed_members: int = 0

    @property
    def index(self) -> int | None:
        raw = self.labels.get(c.LABEL_INSTANCE_INDEX)
        try:
            return int(raw) if raw is not None else None
        except ValueError:
            return None

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> PodGroupView:
        meta = obj.get("metadata", {}) or {}
        owner = next(
            (o.get("uid") for o in meta.get("ownerReferences", []) or [] if o.get("controller")), None
        )
        return cls(
            name=str(meta.get("name", "")),
            uid=str(meta.get("uid", "")),
            labels=MappingProxyType(dict(meta.get("labels", {}) or {})),
            owner_uid=owner,
            terminating=meta.get("deletionTimestamp") is not None,
            min_member=int((obj.get("spec") or {}).get("minMember", 0) or 0),
            annotations=MappingProxyType(dict(meta.get("annotations", {}) or {})),
            owner_references=tuple(
                MappingProxyType(dict(o))
                for o in meta.get("ownerReferences", []) or []
                if isinstance(o, dict)
            ),
            schedule_timeout_seconds=_int_or_none((obj.get("spec") or {}).get("scheduleTimeoutSeconds")),
            resource_version=str(meta.get("resourceVersion", "")),
            phase=str((obj.get("status") or {}).get("phase") or ""),
            failed_members=_int_or_none((obj.get("status") or {}).get("failed")) or 0,
        )


@dataclass(frozen=True, slots=True)
class RevisionView:
    """One ControllerRevision carrying this replica's labels."""

    name: str
    revision: int
    data: bytes
    owner_uid: str | None  # UID of its controller owner reference, if any
    created: datetime | None = None

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> RevisionView:
        meta = obj.get("metadata", {})
        owner = next(
            (o.get("uid") for o in meta.get("ownerReferences", []) or [] if o.get("controller")), None
        )
        # The API hands `data` back decoded; stored_payload re-encodes it as Go's json.Marshal does, so
        # `&` in a URL does not look like a collision.
        blob = stored_payload(obj.get("data"))
        return cls(
            name=str(meta.get("name", "")),
            revision=int(obj.get("revision", 0) or 0),
            data=blob,
            owner_uid=owner,
            created=parse_time(meta.get("creationTimestamp")),
        )


@dataclass(frozen=True, slots=True)
class ServiceView:
    """The headless Service ``{prefix}-{component}-headless``, as observed."""

    exists: bool
    uid: str = ""
    spec: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    labels: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    terminating: bool = False

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any] | None) -> ServiceView:
        if obj is None:
            return cls(exists=False)
        meta = obj.get("metadata", {})
        return cls(
            exists=True,
            uid=str(meta.get("uid", "")),
            spec=MappingProxyType(dict(obj.get("spec", {}) or {})),
            labels=MappingProxyType(dict(meta.get("labels", {}) or {})),
            terminating=meta.get("deletionTimestamp") is not None,
        )


@dataclass(frozen=True, slots=True)
class EndpointView:
    ready: bool
    serving: bool
    terminating: bool
    # Go's ``drain.EndpointAvailable``: the slice's ``ready`` (absent counts as ready, per
    # discovery/v1) and not ``terminating``. This alone feeds the Available counters.
    available: bool = False


@dataclass(frozen=True, slots=True)
class Endpoints:
    """What the headless Service's EndpointSlices say, keyed by the pod name they point at.

    ``slices_seen`` distinguishes "no slice lists anything yet" from "slices exist and omit the pod":
    an empty view for an existing Service is never taken as proof of a drain.
    """

    by_pod: Mapping[str, EndpointView] = field(default_factory=lambda: MappingProxyType({}))
    slices_seen: bool = False

    @classmethod
    def from_slices(cls, slices: Iterable[Mapping[str, Any]]) -> Endpoints:
        """Index the endpoints of the Service's slices by the pod their ``targetRef`` names.

        Go: ome-projects/ome ``pkg/controller/v1beta1/workload/drain/drain.go`` @ dcfb4135 (the newest
        of three stored versions) ``endpointTargetsPod``, ``endpointIsReady``, ``EndpointAvailable``:
        an endpoint names the pod when its ``targetRef`` kind is empty or ``Pod`` and its namespace is
        empty or the pod's; an absent (or null) ``conditions.ready`` is presumed ready, as the
        discovery/v1 contract and kube-proxy read it; an absent ``serving`` follows ``ready``; an absent
        ``terminating`` is not terminating. The pods of a pass live in the namespace its slices are
        listed in (Go lists ``InNamespace`` the pod's namespace), so a slice's own
        ``metadata.namespace`` stands for the pod's; a slice without one checks no namespace. Before,
        an absent ``ready`` read as not ready (a pod still routed counted as drained) and a
        ``targetRef`` into another namespace was taken for the pod of the same name.
        """
        by_pod: dict[str, EndpointView] = {}
        seen = False
        for sl in slices:
            seen = True
            namespace = (sl.get("metadata") or {}).get("namespace") or ""
            for ep in sl.get("endpoints", []) or []:
                ref = ep.get("targetRef") or {}
                if (ref.get("kind") or "Pod") != "Pod" or not ref.get("name"):
                    continue
                if namespace and ref.get("namespace") and ref["namespace"] != namespace:
                    continue
                cond = ep.get("conditions", {}) or {}
                ready = cond.get("ready") is not False
                serving = (ready if cond.get("serving") is None else cond["serving"]) is not False
                # The headless Service publishes not-ready addresses, so the EndpointSlice controller
                # marks every endpoint ready; `serving` is what follows the pod's Ready condition (and
                # with it the ome.io/serving gate). In rotation means both.
                terminating = cond.get("terminating") is True
                view = EndpointView(
                    ready=ready and serving,
                    serving=serving,
                    terminating=terminating,
                    available=ready and not terminating,
                )
                prev = by_pod.get(ref["name"])
                # A pod listed in two slices (during a slice split) counts ready (or available) if
                # either says so, as Go's AvailablePodSet unions every slice.
                if prev is None:
                    by_pod[ref["name"]] = view
                else:
                    base = view if view.ready and not prev.ready else prev
                    by_pod[ref["name"]] = replace(base, available=view.available or prev.available)
        return cls(by_pod=MappingProxyType(by_pod), slices_seen=seen)


@dataclass(frozen=True, slots=True)
class RenderBlock:
    """The replica cannot render this pass (``omerender.errors.RenderBlocked``)."""

    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class DesiredRevision:
    """The render of the spec: the revision the spec asks for.

    ``collision_count`` is the count the executor hashed with (``status.collisionCount``, 0 when
    unset); the planner checks it against status so a stale render never names a revision.
    """

    name: str
    payload: bytes
    hash: str
    pairing_protocol: str | None = None
    collision_count: int = 0


RenderOutcome = RenderBlock | DesiredRevision


@dataclass(frozen=True, slots=True)
class ReplicaView:
    """The InferenceReplica: the parsed object plus the raw status the planner diffs against."""

    model: InferenceReplica
    status: Mapping[str, Any]

    @property
    def name(self) -> str:
        return self.model.metadata.name

    @property
    def namespace(self) -> str:
        return self.model.namespace

    @property
    def uid(self) -> str:
        return self.model.metadata.uid

    @property
    def generation(self) -> int:
        return self.model.metadata.generation

    @property
    def deletion_timestamp(self) -> datetime | None:
        return parse_time(self.model.metadata.deletion_timestamp)

    @property
    def finalizers(self) -> tuple[str, ...]:
        return self.model.metadata.finalizers

    @property
    def annotations(self) -> Mapping[str, str]:
        return self.model.metadata.annotations

    @property
    def prefix(self) -> str:
        return self.model.name_prefix

    @property
    def component(self) -> str:
        return self.model.spec.component

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> ReplicaView:
        from omerender.models import parse_object

        return cls(
            model=parse_object(InferenceReplica, obj, strict=False), status=dict(obj.get("status") or {})
        )


def _default_factory(
    revision: str, index: int, incarnation: int, runner: str, ordinal: int
) -> dict[str, Any]:
    raise RuntimeError("World.pod_factory was not wired")


UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"


@dataclass(frozen=True, slots=True)
class NodeView:
    """A Node as the lost-node rules read it (``planner/nodedeath.py``): its ``Ready`` condition and the
    unreachable taints the node lifecycle controller puts on a node that stopped reporting; and whether
    it is cordoned (``spec.unschedulable``), which the scale-down reads (``planner/plan_indices.py``)."""

    name: str
    ready: str = ""  # the Ready condition's status: True, False, Unknown; "" when it has none
    ready_since: datetime | None = None  # its lastTransitionTime
    ready_reason: str = ""
    unreachable_since: tuple[datetime | None, ...] = ()  # timeAdded of each unreachable taint
    unschedulable: bool = False  # spec.unschedulable: cordoned

    @property
    def silent(self) -> bool:
        """The kubelet stopped reporting, as the node controller marks it: Ready not True (False, or
        Unknown when the heartbeats stopped), or the unreachable taint."""
        return self.ready in ("False", "Unknown") or bool(self.unreachable_since)

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> NodeView:
        meta = obj.get("metadata", {}) or {}
        status = obj.get("status", {}) or {}
        spec = obj.get("spec", {}) or {}
        ready = next((cd for cd in status.get("conditions", []) or [] if cd.get("type") == "Ready"), None)
        taints = tuple(
            parse_time(t.get("timeAdded"))
            for t in spec.get("taints", []) or []
            if t.get("key") == UNREACHABLE_TAINT
        )
        return cls(
            name=str(meta.get("name", "")),
            ready=str(ready.get("status", "")) if ready else "",
            ready_since=parse_time(ready.get("lastTransitionTime")) if ready else None,
            ready_reason=str(ready.get("reason", "") or "") if ready else "",
            unreachable_since=taints,
            unschedulable=spec.get("unschedulable") is True,
        )


LEDGER_SUFFIX = "-ome-migration-audit"  # Go audit.ConfigMapNameSuffix
LEDGER_KEY = "history.json"  # Go audit.LedgerKey


@dataclass(frozen=True, slots=True)
class LedgerView:
    """The replica's migration audit ledger, the ConfigMap ``<replica>-ome-migration-audit`` (Go
    ``workload/audit`` ``LoadLedgerForOwner``): its ``history.json`` entries and the resourceVersion a
    write is pinned to (compare-and-swap). ``exists`` False: no ConfigMap yet (a write creates it).
    ``unreadable`` names why ``history.json`` did not parse; such a ledger is not used."""

    exists: bool = False
    resource_version: str = ""
    entries: tuple[Mapping[str, Any], ...] = ()
    owner_references: tuple[Mapping[str, Any], ...] = ()
    unreadable: str | None = None

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any] | None) -> LedgerView:
        if obj is None:
            return cls()
        meta = obj.get("metadata", {}) or {}
        rv = str(meta.get("resourceVersion", "") or "")
        refs = tuple(MappingProxyType(dict(r)) for r in meta.get("ownerReferences", []) or [])
        raw = (obj.get("data") or {}).get(LEDGER_KEY)
        if not raw:
            return cls(exists=True, resource_version=rv, owner_references=refs)
        try:
            parsed = json.loads(raw)
            listed = parsed.get("entries") if isinstance(parsed, dict) else None
            if listed is not None and not isinstance(listed, list):
                raise ValueError("entries is not a list")
            entries = tuple(MappingProxyType(dict(e)) for e in listed or [] if isinstance(e, dict))
        except (ValueError, AttributeError) as exc:
            return cls(exists=True, resource_version=rv, owner_references=refs, unreadable=str(exc))
        return cls(exists=True, resource_version=rv, entries=entries, owner_references=refs)


@dataclass(frozen=True, slots=True)
class World:
    """Everything one planner pass may read."""

    replica: ReplicaView
    render: RenderOutcome
    now: datetime
    revisions: tuple[RevisionView, ...] = ()
    pods: tuple[PodView, ...] = ()
    service: ServiceView = field(default_factory=lambda: ServiceView(exists=False))
    endpoints: Endpoints = field(default_factory=Endpoints)
    settings: OperatorSettings = field(default_factory=OperatorSettings)
    pod_factory: PodFactory = _default_factory
    # The runners of one Instance and their sizes, from the spec's render: ``(("default", 1),)`` for a
    # single-pod Instance, ``(("leader", 1), ("worker", n))`` for a gang.
    instance_shape: tuple[tuple[str, int], ...] = ((c.RUNNER_DEFAULT, 1),)
    # PodGroups under the replica's selector; ``gang_scheduling`` is False when the PodGroup CRD is
    # not installed (then no PodGroup is created, 01 §3.6).
    pod_groups: tuple[PodGroupView, ...] = ()
    gang_scheduling: bool = True
    # The Nodes of the pods, by name, from the controller's Node watch: ``None`` for a node the watch
    # does not hold (deleted). ``nodes`` itself is None when Nodes were not observed at all, which no
    # lost-node rule reads as evidence.
    nodes: Mapping[str, NodeView | None] | None = None
    # The migration audit ledger (relocation directives, ``planner/relocation.py``); None when it was
    # not observed, which leaves relocation unavailable and renders no node exclusion.
    ledger: LedgerView | None = None
