"""Which watch updates enqueue a pass: an update that changes nothing a pass reads does not."""

from __future__ import annotations

import copy
import threading
from typing import Any

import pytest

from omereconcile.cluster.kube import Kube
from omereconcile.cluster.reflector import Reflector
from omereconcile.controller.predicates import plan_relevant_update, replica_update_matters
from omerender import constants as c


def _pod(**status: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "pool-engine-0-default-0",
            "namespace": "ns",
            "uid": "u1",
            "resourceVersion": "10",
            "labels": {c.LABEL_INFERENCESERVICE: "pool", c.LABEL_COMPONENT: "engine"},
            "ownerReferences": [{"uid": "rep-1", "controller": True}],
        },
        "spec": {"nodeName": "n1", "readinessGates": [{"conditionType": c.SERVING_GATE}]},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "False"}],
            **status,
        },
    }


def _bumped(obj: dict[str, Any]) -> dict[str, Any]:
    new = copy.deepcopy(obj)
    new["metadata"]["resourceVersion"] = str(int(obj["metadata"]["resourceVersion"]) + 1)
    return new


def test_a_pod_update_of_fields_no_pass_reads_is_filtered() -> None:
    old = _pod()
    new = _bumped(old)
    new["status"].update(podIP="10.0.0.7", hostIP="10.1.0.1", qosClass="BestEffort")
    new["metadata"]["managedFields"] = [{"manager": "kubelet"}]
    new["metadata"]["annotations"] = {"note": "x"}
    assert not plan_relevant_update("pods", old, new)


@pytest.mark.parametrize(
    "change",
    [
        lambda p: p["status"]["conditions"].__setitem__(0, {"type": "Ready", "status": "True"}),
        lambda p: p["status"]["conditions"].append({"type": c.SERVING_GATE, "status": "True"}),
        lambda p: p["metadata"].__setitem__("deletionTimestamp", "2026-01-01T00:00:00Z"),
        lambda p: p["metadata"]["labels"].__setitem__(c.LABEL_REVISION_HASH, "abc"),
        lambda p: p["metadata"].__setitem__("ownerReferences", [{"uid": "rep-2", "controller": True}]),
        lambda p: p["status"].__setitem__("phase", "Failed"),
        lambda p: p["status"].__setitem__(
            "containerStatuses", [{"name": "engine", "restartCount": 1, "state": {"running": {}}}]
        ),
        lambda p: p["spec"].__setitem__("nodeName", "n2"),
    ],
    ids=["ready", "gate", "terminating", "labels", "owner", "phase", "restart", "node"],
)
def test_a_pod_update_a_pass_reads_enqueues(change: Any) -> None:
    old = _pod()
    new = _bumped(old)
    change(new)
    assert plan_relevant_update("pods", old, new)


def _slice(*endpoints: tuple[str, bool, str]) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "pool-engine-headless-abc",
            "namespace": "ns",
            "resourceVersion": "5",
            "labels": {"kubernetes.io/service-name": "pool-engine-headless"},
        },
        "endpoints": [
            {
                "addresses": [addr],
                "conditions": {"ready": True, "serving": serving, "terminating": False},
                "targetRef": {"kind": "Pod", "name": name},
            }
            for name, serving, addr in endpoints
        ],
    }


def test_a_slice_update_is_filtered_unless_a_pods_rotation_changes() -> None:
    old = _slice(("a", True, "10.0.0.1"), ("b", False, "10.0.0.2"))
    reordered = _bumped(_slice(("b", False, "10.0.0.9"), ("a", True, "10.0.0.1")))
    assert not plan_relevant_update("endpointslices", old, reordered)
    served = _bumped(_slice(("a", True, "10.0.0.1"), ("b", True, "10.0.0.2")))
    assert plan_relevant_update("endpointslices", old, served)
    gone = _bumped(_slice(("a", True, "10.0.0.1")))
    assert plan_relevant_update("endpointslices", old, gone)


def test_service_and_revision_updates_enqueue_only_for_what_a_pass_reads() -> None:
    svc = {"metadata": {"name": "s", "uid": "u", "resourceVersion": "1", "labels": {"a": "b"}}, "spec": {}}
    annotated = _bumped(svc)
    annotated["metadata"]["annotations"] = {"x": "y"}
    assert not plan_relevant_update("services", svc, annotated)
    respec = _bumped(svc)
    respec["spec"] = {"publishNotReadyAddresses": False}
    assert plan_relevant_update("services", svc, respec)
    rev = {"metadata": {"name": "r", "resourceVersion": "1", "labels": {}}, "revision": 1, "data": {"a": 1}}
    assert not plan_relevant_update("controllerrevisions", rev, _bumped(rev))
    renumbered = _bumped(rev)
    renumbered["revision"] = 2
    assert plan_relevant_update("controllerrevisions", rev, renumbered)


def test_an_unknown_resource_always_enqueues() -> None:
    assert plan_relevant_update("podgroups", {"a": 1}, {"a": 1})


def _replica() -> dict[str, Any]:
    return {
        "metadata": {"name": "pool", "namespace": "ns", "resourceVersion": "7", "generation": 1},
        "spec": {"component": "engine"},
        "status": {"observedGeneration": 1},
    }


def test_the_echo_of_our_own_replica_write_is_filtered_and_nothing_else() -> None:
    old = _replica()
    ours = _bumped(old)
    ours["status"]["instanceStatuses"] = []
    assert not replica_update_matters(old, ours, own_version="8")
    # The same change written by someone else (another resourceVersion) is looked at.
    assert replica_update_matters(old, ours, own_version="6")
    assert replica_update_matters(old, ours, own_version=None)
    # An update of nothing but the resourceVersion and managedFields is not.
    assert not replica_update_matters(old, _bumped(old), own_version=None)
    spec = _bumped(old)
    spec["spec"]["component"] = "decoder"
    assert replica_update_matters(old, spec, own_version="6")
    annotated = _bumped(old)
    annotated["metadata"]["annotations"] = {"ome.io/reset": "0"}
    assert replica_update_matters(old, annotated, own_version=None)


def _reflector(relevant: Any, seen: list[tuple[str, str]]) -> Reflector:
    kube = Kube.__new__(Kube)  # never started: nothing is sent
    return Reflector(
        kube,
        "/unused",
        "pods",
        lambda t, o: seen.append((t, o["metadata"]["resourceVersion"])),
        stop=threading.Event(),
        relevant=relevant,
    )


def test_a_filtered_update_still_replaces_the_cached_object() -> None:
    seen: list[tuple[str, str]] = []
    r = _reflector(lambda old, new: plan_relevant_update("pods", old, new), seen)
    old = _pod()
    new = _bumped(old)
    new["status"]["podIP"] = "10.0.0.7"
    with r.lock:
        r._put_locked(("ns", "pool-engine-0-default-0"), new)
    r._modified(old, new)
    assert seen == []
    assert r.filtered == 1
    assert r.get(("ns", "pool-engine-0-default-0")) is new  # the next pass pins writes to rv 11
    ready = _bumped(new)
    ready["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    r._modified(new, ready)
    assert seen == [("MODIFIED", "12")]
    assert r.filtered == 1


class _ListKube:
    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items

    def list(self, path: str, **query: Any) -> dict[str, Any]:
        return {"metadata": {"resourceVersion": "99"}, "items": copy.deepcopy(self.items)}


def test_a_relist_replays_only_the_updates_that_matter() -> None:
    seen: list[tuple[str, str]] = []
    a, b = _pod(), _pod()
    b["metadata"]["name"] = "pool-engine-1-default-0"
    kube = _ListKube([a, b])
    r = Reflector(
        kube,  # type: ignore[arg-type]
        "/unused",
        "pods",
        lambda t, o: seen.append((t, o["metadata"]["name"])),
        stop=threading.Event(),
        relevant=lambda old, new: plan_relevant_update("pods", old, new),
    )
    r._relist("initial")
    assert sorted(seen) == [("ADDED", a["metadata"]["name"]), ("ADDED", b["metadata"]["name"])]
    seen.clear()
    a2, b2 = _bumped(a), _bumped(b)
    a2["status"]["podIP"] = "10.0.0.1"  # nothing a pass reads
    b2["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    kube.items = [a2, b2]
    r._relist("gone")
    assert seen == [("MODIFIED", b["metadata"]["name"])]
    assert r.filtered == 1
