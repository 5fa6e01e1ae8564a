"""Gang Instances through the real render, observe and executor: the shape of the Instance comes from the
render, PodGroups are listed only for multi-pod replicas, and the executor's PodGroup writes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from test_executor import FakeKube, _exec

from omereconcile import actions as A
from omereconcile.cluster.kube import AlreadyExists, NotFound
from omereconcile.cluster.observe import Observation, build_catalog, render_world, with_pod_groups
from omereconcile.planner import plan
from omereconcile.settings import OperatorSettings
from omerender import constants as c
from testbed.testing import gang_replica, runners_replica

NOW = datetime(2025, 1, 1, tzinfo=UTC)
NS = "llama-demo"
PG_PATH = f"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{NS}/podgroups"


def _observe(doc: dict[str, Any], pods: list[dict[str, Any]] | None = None) -> Observation:
    doc["metadata"].update(uid="uid-1", generation=1, resourceVersion="5", finalizers=[c.TEARDOWN_FINALIZER])
    return render_world(
        doc,
        pods=pods or [],
        revisions=[],
        service=None,
        slices=[],
        catalog=build_catalog([]),
        settings=OperatorSettings(),
        now=NOW,
    )


def test_a_gang_replica_plans_its_pod_group_then_every_pod_of_the_instance() -> None:
    obs = _observe(gang_replica("llama-pool", NS, "engine:v1", gpus=8, replicas=1))
    assert obs.world.instance_shape == (("leader", 1), ("worker", 1))
    first = plan(obs.world)  # the revision, the Service and the journal, then the gang
    kinds = [(type(a).__name__, getattr(a, "name", "")) for a in first.actions]
    creates = [k for k in kinds if k[0] in ("CreatePodGroup", "CreatePod")]
    assert creates == [
        ("CreatePodGroup", "llama-pool-engine-0"),
        ("CreatePod", "llama-pool-engine-0-leader-0"),
        ("CreatePod", "llama-pool-engine-0-worker-0"),
    ]
    group = next(a for a in first.actions if isinstance(a, A.CreatePodGroup)).pod_group
    assert group["spec"]["minMember"] == 2
    worker = next(a for a in first.actions if isinstance(a, A.CreatePod) and "worker" in a.name).pod
    env = {e["name"]: e["value"] for e in worker["spec"]["containers"][0]["env"]}
    assert env["OME_INSTANCE_POD_RANK"] == "1"
    assert env["OME_INSTANCE_POD_COUNT"] == "2"
    assert env["OME_LEADER_ADDRESS"].startswith("llama-pool-engine-0-leader-0.")
    assert worker["metadata"]["labels"][c.LABEL_POD_GROUP] == "llama-pool-engine-0"


class ListingKube(FakeKube):
    def __init__(
        self, items: list[dict[str, Any]] | None, fail: dict[tuple[str, str], Exception] | None = None
    ):
        super().__init__(fail)
        self.items = items

    def list(self, path: str, **q: Any) -> dict[str, Any]:
        self.calls.append(("LIST", path, q))
        if self.items is None:
            raise NotFound(404, "NotFound", "the server could not find the requested resource")
        return {"items": self.items}


def _group(index: int, uid: str = "uid-1") -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"llama-pool-engine-{index}",
            "uid": f"pg-{index}",
            "labels": {c.LABEL_INSTANCE_INDEX: str(index)},
            "ownerReferences": [{"controller": True, "uid": uid}],
        },
        "spec": {"minMember": 2},
    }


def _pod(index: int) -> dict[str, Any]:
    labels = {
        c.LABEL_INFERENCESERVICE: "llama-pool",
        c.LABEL_COMPONENT: "engine",
        c.LABEL_MANAGED_BY: c.MANAGED_BY_VALUE,
        c.LABEL_INSTANCE_INDEX: str(index),
    }
    return {
        "metadata": {"name": f"llama-pool-engine-{index}-default-0", "uid": f"p-{index}", "labels": labels}
    }


def test_pod_groups_are_listed_for_a_gang_replica_or_a_single_pod_instance_without_its_pod() -> None:
    """A steady single-pod replica (every planned Instance has its pod) costs no request; one whose
    Instance has no pod yet lists the namespace's PodGroups with no selector and keeps the ones it
    controls, as Go's owner-UID index finds an unlabelled stale group (reconcileStaleSinglePodGroups)."""
    doc = runners_replica("llama-pool", NS, "engine:v1")
    steady = _observe(doc, pods=[_pod(0)])
    kube = ListingKube([_group(0)])
    assert with_pod_groups(kube, steady, "llama-pool", "engine") is steady  # type: ignore[arg-type]
    assert kube.calls == []
    fresh = _observe(runners_replica("llama-pool", NS, "engine:v1"))
    unlabelled = _group(0)
    del unlabelled["metadata"]["labels"]
    orphan = _group(1)
    orphan["metadata"]["ownerReferences"] = []
    kube = ListingKube([unlabelled, orphan, _group(2, uid="someone-else")])
    world = with_pod_groups(kube, fresh, "llama-pool", "engine").world  # type: ignore[arg-type]
    assert kube.calls == [("LIST", PG_PATH, {})]
    assert [g.name for g in world.pod_groups] == ["llama-pool-engine-0"]
    gang = _observe(gang_replica("llama-pool", NS, "engine:v1", gpus=8))
    kube = ListingKube([_group(0), _group(1, uid="someone-else")])
    world = with_pod_groups(kube, gang, "llama-pool", "engine").world  # type: ignore[arg-type]
    # A gang keeps every group under its selector, another owner's too, so that the planner refuses an
    # Instance whose group name another controller holds (Go's EnsurePodGroup reads it by name).
    assert [g.name for g in world.pod_groups] == ["llama-pool-engine-0", "llama-pool-engine-1"]
    assert world.pod_groups[0].index == 0
    assert world.pod_groups[1].owner_uid == "someone-else"
    assert world.gang_scheduling


def test_a_missing_pod_group_crd_means_no_gang_scheduling() -> None:
    gang = _observe(gang_replica("llama-pool", NS, "engine:v1", gpus=8))
    world = with_pod_groups(ListingKube(None), gang, "llama-pool", "engine").world  # type: ignore[arg-type]
    assert not world.gang_scheduling
    assert world.pod_groups == ()


@pytest.mark.parametrize("exc", [None, AlreadyExists(409, "AlreadyExists", "exists")])
def test_create_pod_group_posts_it_and_already_exists_is_done(exc: Exception | None) -> None:
    kube = FakeKube({("POST", "/podgroups"): exc} if exc else None)
    res = _exec(kube, A.CreatePodGroup("llama-pool-engine-0", {"metadata": {"name": "x"}}, "r"))
    assert res.ok
    assert kube.calls[0][:2] == ("POST", PG_PATH)


@pytest.mark.parametrize("exc", [None, NotFound(404, "NotFound", "gone")])
def test_delete_pod_group_is_pinned_to_its_uid_and_not_found_is_done(exc: Exception | None) -> None:
    kube = FakeKube({("DELETE", "/llama-pool-engine-0"): exc} if exc else None)
    res = _exec(kube, A.DeletePodGroup("llama-pool-engine-0", "pg-0", "r"))
    assert res.ok
    verb, path, body = kube.calls[0]
    assert (verb, path) == ("DELETE", f"{PG_PATH}/llama-pool-engine-0")
    assert body["preconditions"]["uid"] == "pg-0"
