"""OME's ``inferencereplica/retention_test.go``, through ``omerender.revision.revisions_to_prune``.

Go: ome-projects/ome ``pkg/controller/v1beta1/inferencereplica/retention_test.go`` @ 4dfb96b1. Go drives
a reconcile over seeded ControllerRevisions; the rule it pins (``RetainControllerRevisions`` over the
live-name union of ``CollectLiveRevisionNames``) is omerender's ``revisions_to_prune``, which takes the
limit and the live names the reconciler resolved. Which limit applies (the replica's spec over the
operator's ``lifecycle.revisionHistoryLimit``) and the live-name union are the reconciler's
(``omereconcile.planner.revisions``), so those halves are not asserted here. ``testRevisionRetention``
is defined in a helper file not in the index; 10 stands in for it.
"""

from __future__ import annotations

from typing import Any

from omerender.revision import revisions_to_prune

GO_PATH = "ome-projects/ome pkg/controller/v1beta1/inferencereplica/retention_test.go @ 4dfb96b1"
RETENTION = 10  # testRevisionRetention (its value is not in the index)


def cr(name: str, number: int) -> dict[str, Any]:
    return {"metadata": {"name": f"llama-engine-{name}"}, "revision": number}


def test_reconcile_retains_controller_revisions() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/retention_test.go @ 4dfb96b1, TestReconcile_RetainsControllerRevisions: the live revision survives although it is
    the oldest; of the non-live ones the oldest ``extra`` go and the newest ``limit`` stay."""
    extra = 5
    live = cr("live", 1)
    non_live = [cr(f"nonlive{i:02d}", i + 2) for i in range(RETENTION + extra)]
    pruned = revisions_to_prune([live, *non_live], {live["metadata"]["name"]}, RETENTION)
    assert pruned == [r["metadata"]["name"] for r in non_live[:extra]]


def test_reconcile_spec_limit_one() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/retention_test.go @ 4dfb96b1, TestReconcile_SpecLimitOverridesConfigDefault (with the limit the spec gives, 1):
    every seeded non-live revision but the newest goes; the live one stays."""
    live = cr("live", 1)
    non_live = [cr(f"nonlive{i:02d}", i + 2) for i in range(4)]
    pruned = revisions_to_prune([live, *non_live], {live["metadata"]["name"]}, 1)
    assert pruned == [r["metadata"]["name"] for r in non_live[:3]]


def test_sweep_revisions_unconfigured_prunes_nothing() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/retention_test.go @ 4dfb96b1, TestSweepRevisions_UnconfiguredPrunesNothing: no limit anywhere, nothing deleted."""
    seeded = [cr(f"nl{i:02d}", i + 1) for i in range(15)]
    assert revisions_to_prune(seeded, set(), None) == []


def test_sweep_revisions_honors_running_revision_union() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/retention_test.go @ 4dfb96b1, TestSweepRevisions_HonorsRunningRevisionUnion: a revision live only through an
    Instance's ``runningRevision`` (a member of the live names) survives though it is the oldest."""
    extra = 3
    source = cr("migsrc", 1)
    non_live = [cr(f"nl{i:02d}", i + 2) for i in range(RETENTION + extra)]
    pruned = revisions_to_prune([source, *non_live], {source["metadata"]["name"]}, RETENTION)
    assert source["metadata"]["name"] not in pruned
    assert pruned == [r["metadata"]["name"] for r in non_live[:extra]]
