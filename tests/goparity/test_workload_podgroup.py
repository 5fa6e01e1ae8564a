"""OME's ``workload/podgroup/podgroup_test.go`` Ensure* and Delete* cases, through the simulated world.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/podgroup/podgroup_test.go`` @ 4dfb96b1 (the
stored version), against ``podgroup.go`` @ dcfb4135 (``EnsurePodGroupForPodsFromObservation``,
``ControlledByUID``, ``FinalizeObservedPodGroup``). Go calls the functions on a fake client seeded with
a PodGroup; here the PodGroup is put in :class:`omereconcile.simulate.cluster.Sim` and passes of the
planner run. Go's test client (``newPodGroupClient``) stamps the test's owner as controller on a
seeded PodGroup that has none, so Go's "stale" groups are the replica's own; a group with no
controller reference at all is foreign under ``ControlledByUID``. The ``BuildPodGroup`` cases are in
the render tier; which cases have no counterpart here, and why, is in ``docs/goparity.md``.
"""

from __future__ import annotations

from typing import Any

from omereconcile.actions import DeletePodGroup, UpdatePodGroup
from omereconcile.simulate.cluster import UID, Sim, base_replica
from omereconcile.simulate.driver import Driver, applied, converged
from omerender import constants as c

GROUP0 = "llama-pool-engine-0"
GROUP1 = "llama-pool-engine-1"
TOPOLOGY = "network.example.com/fabric-domain"
OWN_REF = {
    "apiVersion": "ome.io/v1beta1",
    "kind": "InferenceReplica",
    "name": "llama-pool",
    "uid": UID,
    "controller": True,
    "blockOwnerDeletion": True,
}


def _gang(replicas: int = 1, workers: int = 1) -> tuple[Sim, Driver]:
    sim = Sim(workers=workers)
    sim.apply_replica(base_replica(replicas=replicas))
    return sim, Driver(sim)


def _seed_group(
    sim: Sim, name: str, *, owner: str | None, terminating: bool = False, uid: str = "seeded-pg"
) -> None:
    assert sim.replica is not None
    meta: dict[str, Any] = {"name": name, "namespace": sim.replica["metadata"]["namespace"], "uid": uid}
    if owner is not None:
        meta["ownerReferences"] = [{"kind": "InferenceReplica", "uid": owner, "controller": True}]
    if terminating:
        meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
        meta["finalizers"] = ["example.com/hold"]
    sim.pod_groups[name] = {"kind": "PodGroup", "metadata": meta, "spec": {"minMember": 2}}


def _passes(sim: Sim, driver: Driver, n: int) -> None:
    for _ in range(n):
        driver.one_pass()
        sim.advance(1)


def _group_deletes(driver: Driver) -> list[DeletePodGroup]:
    return [a for _, a in applied(driver, "DeletePodGroup") if isinstance(a, DeletePodGroup)]


def _row0(sim: Sim) -> dict[str, Any]:
    return next(r for r in sim.rows() if r["index"] == 0)


def test_ensure_single_pod_no_op() -> None:
    """TestEnsurePodGroup_SinglePodNoOp: a single-pod Instance gets no PodGroup."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1))
    Driver(sim).run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    assert sim.pod_groups == {}


def test_ensure_creates_when_absent() -> None:
    """TestEnsurePodGroup_CreatesWhenAbsent (leader + 3 workers): the group is created with minMember 4
    and one controller owner reference, the owner's."""
    sim, driver = _gang(workers=3)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    group = sim.pod_groups[GROUP0]
    assert group["spec"]["minMember"] == 4
    refs = group["metadata"]["ownerReferences"]
    assert [(r["uid"], r["controller"]) for r in refs] == [(UID, True)]


def test_ensure_idempotent() -> None:
    """TestEnsurePodGroup_Idempotent: later passes neither recreate nor delete the group."""
    sim, driver = _gang(workers=2)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    uid = sim.pod_groups[GROUP0]["metadata"]["uid"]
    _passes(sim, driver, 3)
    assert sim.pod_groups[GROUP0]["metadata"]["uid"] == uid
    assert sim.pod_groups[GROUP0]["spec"]["minMember"] == 3
    assert len(applied(driver, "CreatePodGroup")) == 1


def test_ensure_terminating_blocks_reuse() -> None:
    """TestEnsurePodGroupForPodsFromObservation_TerminatingBlocksReuse: a terminating group of ours is
    waited out — no replacement group and no member pod while it is there."""
    sim, driver = _gang()
    _seed_group(sim, GROUP0, owner=UID, terminating=True)
    _passes(sim, driver, 5)
    assert sim.pods == {}
    assert sim.pod_groups[GROUP0]["metadata"]["uid"] == "seeded-pg"
    assert applied(driver, "CreatePodGroup") == []
    assert _row0(sim)["operation"]["waiting"] == "PodGroupTerminating"


def test_ensure_foreign_collision_is_never_adopted() -> None:
    """TestEnsurePodGroupForPodsFromObservation_ForeignCollisionIsNeverAdopted: a group another
    controller owns at the Instance's name is a conflict; its owner is unchanged, no pod is created."""
    sim, driver = _gang()
    _seed_group(sim, GROUP0, owner="foreign-uid")
    _passes(sim, driver, 5)
    assert sim.pods == {}
    refs = sim.pod_groups[GROUP0]["metadata"]["ownerReferences"]
    assert [r["uid"] for r in refs] == ["foreign-uid"]
    assert _row0(sim)["lastFailure"]["reason"] == "PodGroupNameInUse"


def test_ensure_group_without_controller_reference_is_foreign() -> None:
    """``ControlledByUID`` (podgroup.go @ dcfb4135) is false for a group with no controller reference:
    EnsurePodGroupForPodsFromObservation returns ErrPodGroupOwnershipConflict, never adopts it."""
    sim, driver = _gang()
    _seed_group(sim, GROUP0, owner=None)
    _passes(sim, driver, 5)
    assert sim.pods == {}
    assert "ownerReferences" not in sim.pod_groups[GROUP0]["metadata"]
    assert _row0(sim)["lastFailure"]["reason"] == "PodGroupNameInUse"


def test_ensure_foreign_terminating_group_is_a_conflict_not_a_wait() -> None:
    """EnsurePodGroupForPodsFromObservation (podgroup.go @ dcfb4135) checks ``ControlledByUID`` before
    ``DeletionTimestamp``: a foreign group on its way out is a conflict, not something to wait for."""
    sim, driver = _gang()
    _seed_group(sim, GROUP0, owner="foreign-uid", terminating=True)
    _passes(sim, driver, 5)
    assert sim.pods == {}
    row = _row0(sim)
    assert row["lastFailure"]["reason"] == "PodGroupNameInUse"
    assert (row.get("operation") or {}).get("waiting") != "PodGroupTerminating"


def test_delete_removes_own_group_pinned_to_its_uid() -> None:
    """TestDeletePodGroup_Removes and TestDeleteObservedPodGroup_UIDPreconditionProtectsNameReuse: the
    scaled-away Instance's group is deleted, the delete pinned to the observed group's UID."""
    sim, driver = _gang(replicas=2)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    uid1 = sim.pod_groups[GROUP1]["metadata"]["uid"]
    sim.update_spec(replicas=1)
    driver.run(lambda s: converged(s) and GROUP1 not in s.pod_groups)
    assert [(a.name, a.uid) for a in _group_deletes(driver)] == [(GROUP1, uid1)]
    assert sorted(sim.pod_groups) == [GROUP0]


def test_delete_absent_is_no_op() -> None:
    """TestDeletePodGroup_AbsentIsNoOp: a single-pod replica scaled down has no group to delete."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=2))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    sim.update_spec(replicas=1)
    driver.run(lambda s: converged(s) and len(s.rows()) == 1)
    assert applied(driver, "DeletePodGroup") == []


def test_delete_observed_foreign_object_is_never_deleted() -> None:
    """TestDeleteObservedPodGroup_ForeignObjectIsNeverDeleted: after a scale-down, a group another
    owner controls at the scaled-away Instance's name stays."""
    sim, driver = _gang(replicas=2)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    sim.update_spec(replicas=1)
    del sim.pod_groups[GROUP1]
    _seed_group(sim, GROUP1, owner="foreign-uid", uid="foreign-pg-uid")
    _passes(sim, driver, 30)
    assert sim.pod_groups[GROUP1]["metadata"]["uid"] == "foreign-pg-uid"
    assert _group_deletes(driver) == []


def test_delete_observed_terminating_is_accepted_without_delete() -> None:
    """TestDeleteObservedPodGroup_TerminatingIsAcceptedWithoutDelete: a group of ours already
    terminating gets no second delete, and the Instance's row stays until the group is gone."""
    sim, driver = _gang(replicas=2)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    meta = sim.pod_groups[GROUP1]["metadata"]
    meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    meta["finalizers"] = ["example.com/hold"]
    sim.update_spec(replicas=1)
    _passes(sim, driver, 30)
    assert applied(driver, "DeletePodGroup") == []
    assert any(r["index"] == 1 for r in sim.rows())
    del sim.pod_groups[GROUP1]
    driver.run(lambda s: converged(s) and len(s.rows()) == 1)


def _stale_group(sim: Sim, **meta: Any) -> dict[str, Any]:
    """A group of ours at Instance 0's name, as Go's ``newPodGroupClient`` leaves a seeded one (the
    owner's controller reference stamped), with the given metadata and a stale spec."""
    assert sim.replica is not None
    body: dict[str, Any] = {
        "name": GROUP0,
        "namespace": sim.replica["metadata"]["namespace"],
        "uid": "stale-pg",
        "resourceVersion": "1",
        "ownerReferences": [dict(OWN_REF)],
        **meta,
    }
    group = {"kind": "PodGroup", "metadata": body, "spec": {"minMember": 99, "scheduleTimeoutSeconds": 9999}}
    sim.pod_groups[GROUP0] = group
    return group


def _updates(driver: Driver) -> list[UpdatePodGroup]:
    return [a for _, a in applied(driver, "UpdatePodGroup") if isinstance(a, UpdatePodGroup)]


def _want_labels(index: int) -> dict[str, str]:
    return {
        c.LABEL_INFERENCESERVICE: "llama-pool",
        "component": "engine",
        "ome.io/managed-by": "OMENative",
        c.LABEL_INSTANCE_INDEX: str(index),
    }


def test_ensure_drift_corrected() -> None:
    """TestEnsurePodGroup_DriftCorrected: stale minMember, timeout, labels and topology annotation are
    put back in one pass, before the Instance's pods; an unrelated annotation is kept."""
    sim = Sim(workers=1)
    sim.apply_replica(
        base_replica(replicas=1, topologyKey=TOPOLOGY, lifecycle={"instanceReadyTimeout": "3m"})
    )
    driver = Driver(sim)
    driver.one_pass()  # the teardown finalizer
    group = _stale_group(
        sim,
        labels={"stale": "true"},
        annotations={c.ANNOTATION_TOPOLOGY_KEY: "stale.example.com/domain", "example.com/preserve": "yes"},
    )
    driver.one_pass()
    assert group["spec"] == {"minMember": 2, "scheduleTimeoutSeconds": 180}
    assert group["metadata"]["labels"] == _want_labels(0)
    assert group["metadata"]["annotations"] == {
        c.ANNOTATION_TOPOLOGY_KEY: TOPOLOGY,
        "example.com/preserve": "yes",
    }
    kinds = [type(a).__name__ for a in driver.plans[-1].actions]
    assert kinds.index("UpdatePodGroup") < kinds.index("CreatePod")
    assert sim.pod_groups[GROUP0]["metadata"]["uid"] == "stale-pg"


def test_ensure_unset_topology_key_removes_owned_annotation_only() -> None:
    """TestEnsurePodGroup_UnsetTopologyKeyRemovesOwnedAnnotationOnly."""
    sim, driver = _gang()
    driver.one_pass()
    group = _stale_group(
        sim,
        labels=_want_labels(0),
        annotations={c.ANNOTATION_TOPOLOGY_KEY: "stale.example.com/domain", "example.com/preserve": "yes"},
    )
    driver.one_pass()
    assert group["metadata"]["annotations"] == {"example.com/preserve": "yes"}


def test_ensure_topology_annotation_drift_triggers_one_update() -> None:
    """TestEnsurePodGroup_TopologyAnnotationDriftTriggersUpdate: a topology-only drift is one update."""
    sim = Sim(workers=1)
    sim.apply_replica(base_replica(replicas=1, topologyKey=TOPOLOGY))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    assert _updates(driver) == []
    # The group's pods are gone (an Instance being rebuilt); its annotation drifted meanwhile.
    group = sim.pod_groups[GROUP0]
    group["metadata"]["annotations"] = {
        c.ANNOTATION_TOPOLOGY_KEY: "stale.example.com/domain",
        "example.com/preserve": "yes",
    }
    sim.pods.clear()
    driver.one_pass()
    (update,) = _updates(driver)
    assert update.patch == {"metadata": {"annotations": {c.ANNOTATION_TOPOLOGY_KEY: TOPOLOGY}}}
    assert group["metadata"]["annotations"] == {
        c.ANNOTATION_TOPOLOGY_KEY: TOPOLOGY,
        "example.com/preserve": "yes",
    }


def test_ensure_heals_legacy_component_label_key() -> None:
    """TestEnsurePodGroup_HealsLegacyComponentLabelKey: a label key OME no longer writes is removed."""
    sim, driver = _gang()
    driver.one_pass()
    legacy = {k: v for k, v in _want_labels(0).items() if k != "component"}
    group = _stale_group(sim, labels={**legacy, "ome.io/component": "engine"})
    driver.one_pass()
    assert group["metadata"]["labels"] == _want_labels(0)


def test_ensure_no_drift_writes_nothing_and_keeps_unrelated_annotations() -> None:
    """TestEnsurePodGroup_FastPathReadsBeforeWriteAndSkipsNoDrift: an annotation OME does not own, added
    between passes, neither causes a write nor is removed."""
    sim = Sim(workers=2)
    sim.apply_replica(base_replica(replicas=1, topologyKey=TOPOLOGY))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    group = sim.pod_groups[GROUP0]
    group["metadata"]["annotations"]["example.com/preserve"] = "yes"
    _passes(sim, driver, 3)
    assert _updates(driver) == []
    assert group["spec"]["minMember"] == 3
    assert group["metadata"]["annotations"] == {
        c.ANNOTATION_TOPOLOGY_KEY: TOPOLOGY,
        "example.com/preserve": "yes",
    }


def test_ensure_drift_still_writes() -> None:
    """TestEnsurePodGroup_DriftStillWrites: a drifted minMember on a running gang's group is written."""
    sim = Sim(workers=2)
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.pod_groups[GROUP0]["spec"]["minMember"] = 99
    driver.one_pass()
    (update,) = _updates(driver)
    assert update.patch == {"spec": {"minMember": 3}}
    assert sim.pod_groups[GROUP0]["spec"]["minMember"] == 3


def test_topology_of_a_running_gang_is_not_changed_under_it() -> None:
    """``EnsurePodGroupForPodsWithReader`` (podgroup.go @ dcfb4135): while pods of the Instance are
    live, the group keeps the topology it carries (Go: the key the immutable pods were placed by, else
    the group's annotation); the other drifted fields are still put back."""
    sim = Sim(workers=1)
    sim.apply_replica(base_replica(replicas=1, topologyKey=TOPOLOGY))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    group = sim.pod_groups[GROUP0]
    group["metadata"]["annotations"] = {c.ANNOTATION_TOPOLOGY_KEY: "placed.example.com/domain"}
    group["spec"]["minMember"] = 99
    driver.one_pass()
    (update,) = _updates(driver)
    assert update.patch == {"spec": {"minMember": 2}}
    assert group["metadata"]["annotations"] == {c.ANNOTATION_TOPOLOGY_KEY: "placed.example.com/domain"}
