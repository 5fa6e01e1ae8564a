"""The typed actions a planner pass asks the executor to take, in order.

Every action carries ``reason``, a sentence for logs and the dry-run. Destructive pod actions carry the
UID and resourceVersion they were planned against: the executor sends them as preconditions, so a
same-named pod with another UID is never touched (03 §8 rule 27).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "Action",
    "AddFinalizer",
    "CreatePod",
    "CreatePodGroup",
    "CreateRevision",
    "DeletePod",
    "DeletePodGroup",
    "DeleteRevision",
    "DeleteService",
    "EnsureService",
    "ForceDeletePod",
    "PatchPodInPlace",
    "PatchService",
    "Plan",
    "RecordEvent",
    "RemoveAnnotation",
    "RemoveFinalizer",
    "SetServingGate",
    "UpdatePodGroup",
    "WriteLedger",
    "WriteStatus",
]


@dataclass(frozen=True, slots=True)
class CreatePod:
    """Create ``pod`` (complete object). A 409 AlreadyExists means an earlier pass already did it."""

    name: str
    pod: Mapping[str, Any]
    reason: str


@dataclass(frozen=True, slots=True)
class DeletePod:
    """Delete with preconditions ``uid`` and ``resource_version`` (409 on mismatch: replan).
    ``grace_period_seconds``: a termination grace other than the pod's own (None: the pod's)."""

    name: str
    uid: str
    resource_version: str
    reason: str
    grace_period_seconds: int | None = None


@dataclass(frozen=True, slots=True)
class ForceDeletePod:
    """Delete with grace 0, pinned to ``uid`` only (Go ``ops/force_delete.go``): a pod whose node is
    proven dead (``planner/nodedeath.py``). NotFound (already gone) and a UID mismatch (a same-name
    successor, never to be touched) are both success."""

    name: str
    uid: str
    reason: str


@dataclass(frozen=True, slots=True)
class CreatePodGroup:
    """Create the PodGroup of a multi-pod Instance (complete object), ahead of its pods (01 §3.6).
    AlreadyExists means an earlier pass did it."""

    name: str
    pod_group: Mapping[str, Any]
    reason: str


@dataclass(frozen=True, slots=True)
class DeletePodGroup:
    """Delete a PodGroup once no pod of its Instance is left, pinned to its UID (NotFound: gone)."""

    name: str
    uid: str
    reason: str


@dataclass(frozen=True, slots=True)
class UpdatePodGroup:
    """Bring a PodGroup of ours back to what its Instance needs (Go ``EnsurePodGroupForPodsFromObservation``
    update path): a JSON merge patch of the owned fields, pinned to the UID and resourceVersion the
    plan read (409: the next pass reads it again; NotFound: gone, the next pass creates it)."""

    name: str
    uid: str
    resource_version: str
    patch: Mapping[str, Any]
    reason: str


@dataclass(frozen=True, slots=True)
class SetServingGate:
    """Write only the pod's ``ome.io/serving`` status condition, pinned to uid and resourceVersion.

    The planner computes the whole condition (``planner/gate.py``): ``Serving`` with an empty message,
    or ``NotReady`` with the JSON list of holds; ``last_transition_time`` is kept from the pod when
    the status does not change (None: the executor's clock).
    """

    name: str
    uid: str
    resource_version: str
    status: bool
    reason: str
    condition_reason: str = ""
    message: str = ""
    last_transition_time: str | None = None
    # The Instance whose in-place drain this is: a refusal because an admission webhook could not be
    # called is recorded on its row as the AdmissionUnavailable wait (Go ``ops/update_inplace.go``
    # ``admissionWait`` around ``MarkPodNotServing``); None for every other gate write, as in Go.
    admission_wait_index: int | None = None


@dataclass(frozen=True, slots=True)
class PatchPodInPlace:
    """A strategic-merge patch of a live pod for an in-place update (``planner/inplace.py``), pinned to
    the pod's UID and resourceVersion: container images by container name, annotations (``None``
    removes a key) and labels. Empty parts are not sent. A 409/404/422 means the pod moved: replan."""

    name: str
    uid: str
    resource_version: str
    reason: str
    images: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str | None] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    index: int | None = None  # the Instance, for recording an admission refusal on its row


@dataclass(frozen=True, slots=True)
class EnsureService:
    """Create the headless Service (``service`` is the complete object)."""

    service: Mapping[str, Any]
    reason: str


@dataclass(frozen=True, slots=True)
class PatchService:
    """Merge-patch the fields of the headless Service's spec/labels that drifted."""

    name: str
    patch: Mapping[str, Any]
    reason: str


@dataclass(frozen=True, slots=True)
class DeleteService:
    name: str
    uid: str
    reason: str


@dataclass(frozen=True, slots=True)
class CreateRevision:
    """Create the ControllerRevision ``revision`` (complete object)."""

    name: str
    revision: Mapping[str, Any]
    reason: str


@dataclass(frozen=True, slots=True)
class DeleteRevision:
    """Prune a non-live revision. Failure is logged and never fails the pass (01 §9.5)."""

    name: str
    reason: str


@dataclass(frozen=True, slots=True)
class AddFinalizer:
    finalizer: str
    reason: str


@dataclass(frozen=True, slots=True)
class RemoveFinalizer:
    finalizer: str
    reason: str


@dataclass(frozen=True, slots=True)
class RemoveAnnotation:
    """Remove the replica's annotation ``key`` (a request answered, e.g. ``ome.io/reset-instances``).

    A JSON merge patch ``{"metadata":{"annotations":{key:null}}}`` pinned to the replica's
    resourceVersion: a value the user changed after the planner read it is never removed unanswered
    (409: replan). An annotation already gone is nothing to do.
    """

    key: str
    reason: str


@dataclass(frozen=True, slots=True)
class RecordEvent:
    """An event on the replica (standalone replicas have no parent to carry it)."""

    type: Literal["Normal", "Warning"]
    event_reason: str
    message: str
    reason: str = "recorded for the user"


@dataclass(frozen=True, slots=True)
class WriteStatus:
    """Replace ``.status`` (status subresource), pinned to the replica's UID and resourceVersion.

    Only emitted when ``status`` differs from what was observed. ``counters_only``: the journal is
    unchanged, only the counts moved (``planner/journal.py``); the controller may hold such a write back
    for a bounded while and publish it with the next journaled change (``omereconcile/coalesce.py``).
    """

    status: Mapping[str, Any]
    reason: str
    counters_only: bool = False


@dataclass(frozen=True, slots=True)
class WriteLedger:
    """Persist the migration audit ledger ConfigMap ``name`` (``history.json`` = ``data``), as Go's
    ``audit.PersistLedgerForOwner`` does: compare-and-swap on ``resource_version`` (a JSON merge patch
    carrying it), or a create when the ledger did not exist (``None``; AlreadyExists is a conflict).
    Either way a conflict replans. ``owner_references``: the list to write when the controller
    reference must be claimed (None: leave it as it is). ``chained``: a second write of the same plan,
    pinned to the version the plan's previous ``WriteLedger`` left (the force-delete rows, written after
    the pod writes)."""

    name: str
    data: str
    resource_version: str | None
    labels: Mapping[str, str]
    owner_references: tuple[Mapping[str, Any], ...] | None
    reason: str
    chained: bool = False


Action = (
    CreatePod
    | DeletePod
    | ForceDeletePod
    | CreatePodGroup
    | DeletePodGroup
    | UpdatePodGroup
    | SetServingGate
    | PatchPodInPlace
    | EnsureService
    | PatchService
    | DeleteService
    | CreateRevision
    | DeleteRevision
    | AddFinalizer
    | RemoveFinalizer
    | RemoveAnnotation
    | RecordEvent
    | WriteStatus
    | WriteLedger
)


@dataclass(frozen=True, slots=True)
class Plan:
    """The actions of one pass, in the order they must be applied.

    ``requeue_after`` is seconds until the planner next needs to look even if nothing changes (a
    ``minReadySeconds`` window closing, a backoff or grace period ending); ``None`` means only a watch
    event should trigger the next pass.
    """

    actions: tuple[Action, ...] = field(default_factory=tuple)
    requeue_after: float | None = None
    summary: str = ""

    def describe(self) -> str:
        """Human text for the dry-run: one line per action with its reason."""
        lines = [self.summary or "nothing to do"]
        for act in self.actions:
            target = (
                getattr(act, "name", "") or getattr(act, "event_reason", "") or getattr(act, "key", "") or ""
            )
            lines.append(f"  {type(act).__name__} {target}: {act.reason}".rstrip())
        if self.requeue_after is not None:
            lines.append(f"  requeue after {self.requeue_after:g}s")
        return "\n".join(lines)
