"""OME's ``inferencereplica/watches_test.go``: which pod updates wake the reconciler.

Go: ome-projects/ome ``pkg/controller/v1beta1/inferencereplica/watches_test.go`` @ 4dfb96b1 (the listed
one of three stored versions, read whole), ``TestManagedByOMENativePredicate_UpdateFieldDiff`` (22
entries) over ``managedByOMENativePredicate``'s update filter. Ours is
:func:`omereconcile.controller.predicates.plan_relevant_update` for ``pods``: an update passes when it
changes what a pass reads of the pod (its ``PodView``, the in-place marker, the controller owner).
Go's pods become the API's dicts. Ours selects managed pods by label at the watch, so the managed-by
label is one more label here.

Two entries were known differences until ours followed Go's ``podReconcileRelevantChanged``
(``watches.go`` @ dcfb4135): an update that only moves a container's restart count and start time, or
a label no rule reads, is dropped. Which other cases of the file have no counterpart, and why, is in
``docs/goparity.md``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from omereconcile.controller.predicates import plan_relevant_update
from omerender import constants as c

GO = (
    "ome-projects/ome pkg/controller/v1beta1/inferencereplica/watches_test.go @ 4dfb96b1 "
    "TestManagedByOMENativePredicate_UpdateFieldDiff"
)
Pod = dict[str, Any]


def managed_pod() -> Pod:
    """Go's ``managedPod``: the routing labels and phase Running."""
    return {
        "metadata": {
            "name": "isvc-engine-abc-0",
            "namespace": "ns",
            "labels": {
                c.LABEL_MANAGED_BY: c.MANAGED_BY_VALUE,
                c.LABEL_INFERENCESERVICE: "isvc",
                c.LABEL_COMPONENT: "engine",
                c.LABEL_INSTANCE_INDEX: "0",
                c.LABEL_REVISION_HASH: "abc",
            },
        },
        "spec": {},
        "status": {"phase": "Running"},
    }


def _with(mutate: Callable[[Pod], None], base: Callable[[], Pod] = managed_pod) -> Pod:
    pod = base()
    mutate(pod)
    return pod


def _cond(kind: str, ok: bool) -> Callable[[Pod], None]:
    def add(pod: Pod) -> None:
        pod["status"].setdefault("conditions", []).append({"type": kind, "status": "True" if ok else "False"})

    return add


def _conds(*conds: Callable[[Pod], None]) -> Callable[[Pod], None]:
    def add(pod: Pod) -> None:
        for cond in conds:
            cond(pod)

    return add


def _statuses(statuses: list[dict[str, Any]], key: str = "containerStatuses") -> Callable[[Pod], None]:
    return lambda pod: pod["status"].__setitem__(key, copy.deepcopy(statuses))


def _set(path: tuple[str, ...], value: Any) -> Callable[[Pod], None]:
    def put(pod: Pod) -> None:
        node = pod
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value

    return put


def _drop_managed_by(pod: Pod) -> None:
    del pod["metadata"]["labels"][c.LABEL_MANAGED_BY]


def _pending(pod: Pod) -> None:
    pod["status"]["phase"] = "Pending"


_RUNNING = {"running": {"startedAt": "2026-07-23T12:00:00Z"}}
_RUNNING_LATER = {"running": {"startedAt": "2026-07-23T12:05:00Z"}}
_ready = _conds(_cond("ContainersReady", True), _cond(c.SERVING_GATE, True))

CASES: list[tuple[str, Pod, Pod, bool]] = [
    ("no relevant change (heartbeat) is dropped", managed_pod(), managed_pod(), False),
    (
        "only timestamp/podIP churn is dropped",
        managed_pod(),
        _with(
            _conds(
                _set(("status", "podIP"), "10.0.0.5"), _set(("status", "startTime"), "2026-07-23T12:00:00Z")
            )
        ),
        False,
    ),
    ("Status.Phase change passes", managed_pod(), _with(_set(("status", "phase"), "Failed")), True),
    (
        "ContainersReady flip passes",
        _with(_cond("ContainersReady", False)),
        _with(_cond("ContainersReady", True)),
        True,
    ),
    (
        "PodReady flip passes",
        _with(_conds(_ready, _cond("Ready", False))),
        _with(_conds(_ready, _cond("Ready", True))),
        True,
    ),
    (
        "serving-gate flip passes",
        _with(_cond(c.SERVING_GATE, False)),
        _with(_cond(c.SERVING_GATE, True)),
        True,
    ),
    (
        "ContainerStatuses terminal-failure change passes",
        managed_pod(),
        _with(_statuses([{"name": "", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}])),
        True,
    ),
    (
        "Waiting.Reason change passes",
        _with(_statuses([{"name": "main", "state": {"waiting": {"reason": "ContainerCreating"}}}])),
        _with(_statuses([{"name": "main", "state": {"waiting": {"reason": "ImagePullBackOff"}}}])),
        True,
    ),
    (
        "Terminated exit-code change passes",
        _with(_statuses([{"name": "main", "state": {"terminated": {"exitCode": 0}}}])),
        _with(
            _statuses([{"name": "main", "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}])
        ),
        True,
    ),
    (
        "LastTerminationState crash detail change passes",
        _with(_statuses([{"name": "main"}])),
        _with(_statuses([{"name": "main", "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}}}])),
        True,
    ),
    (
        "container Image flip (in-place convergence) passes",
        _with(_statuses([{"name": "main", "image": "fake-serving:v1"}])),
        _with(_statuses([{"name": "main", "image": "fake-serving:v2"}])),
        True,
    ),
    (
        "InitContainerStatuses terminal-failure change passes",
        _with(
            _statuses(
                [{"name": "init", "state": {"waiting": {"reason": "PodInitializing"}}}],
                "initContainerStatuses",
            )
        ),
        _with(
            _statuses(
                [{"name": "init", "state": {"waiting": {"reason": "CreateContainerError"}}}],
                "initContainerStatuses",
            )
        ),
        True,
    ),
    (
        "container added passes (length change)",
        _with(_statuses([{"name": "main", "image": "fake-serving:v1"}])),
        _with(
            _statuses(
                [{"name": "main", "image": "fake-serving:v1"}, {"name": "sidecar", "image": "sidecar:v1"}]
            )
        ),
        True,
    ),
    (
        "SchedulingGates removal (Kueue gate-exit) passes",
        _with(_conds(_pending, _set(("spec", "schedulingGates"), [{"name": "kueue.x-k8s.io/admission"}]))),
        _with(_pending),
        True,
    ),
    (
        "NodeName bind passes",
        _with(_pending),
        _with(_conds(_pending, _set(("spec", "nodeName"), "node-1"))),
        True,
    ),
    (
        "DeletionTimestamp set passes",
        managed_pod(),
        _with(_set(("metadata", "deletionTimestamp"), "2026-07-23T12:00:00Z")),
        True,
    ),
    (
        "OwnerReferences change passes",
        managed_pod(),
        _with(
            _set(
                ("metadata", "ownerReferences"),
                [{"kind": "InferenceReplica", "name": "isvc-engine", "uid": "ir-uid", "controller": True}],
            )
        ),
        True,
    ),
    (
        "revision-hash label change passes",
        managed_pod(),
        _with(lambda p: p["metadata"]["labels"].__setitem__(c.LABEL_REVISION_HASH, "def")),
        True,
    ),
    ("both unmanaged is dropped", _with(_drop_managed_by), _with(_drop_managed_by), False),
    ("managed-by stripped (old managed) still passes", managed_pod(), _with(_drop_managed_by), True),
]


@pytest.mark.parametrize(("name", "old", "new", "want"), CASES, ids=[c_[0] for c_ in CASES])
def test_pod_update_field_diff(name: str, old: Pod, new: Pod, want: bool) -> None:
    """The entries of ``TestManagedByOMENativePredicate_UpdateFieldDiff`` whose verdict ours shares by
    its own rule (a change to what a pass reads of the pod passes; churn it does not read is dropped)."""
    assert plan_relevant_update("pods", old, new) is want, f"{GO}: {name}"


def test_restart_count_and_started_at_churn_is_dropped() -> None:
    """``ImageID/RestartCount/Resources heartbeat churn is dropped``."""
    old = _with(
        _statuses(
            [
                {
                    "name": "main",
                    "image": "fake-serving:v1",
                    "imageID": "sha256:aaaa",
                    "restartCount": 1,
                    "ready": True,
                    "state": _RUNNING,
                }
            ]
        )
    )
    new = _with(
        _statuses(
            [
                {
                    "name": "main",
                    "image": "fake-serving:v1",
                    "imageID": "sha256:bbbb",
                    "restartCount": 2,
                    "ready": True,
                    "state": _RUNNING_LATER,
                    "allocatedResources": {},
                }
            ]
        )
    )
    assert plan_relevant_update("pods", old, new) is False, GO


def test_orthogonal_label_churn_is_dropped() -> None:
    """``orthogonal label churn is dropped``."""
    new = _with(lambda p: p["metadata"]["labels"].__setitem__("unrelated/label", "x"))
    assert plan_relevant_update("pods", managed_pod(), new) is False, GO
