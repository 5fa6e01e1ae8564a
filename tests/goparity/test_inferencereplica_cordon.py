"""OME's ``inferencereplica/cordon_test.go``: a scale-down retires the Instance on a cordoned node first.

Go: ome-projects/ome ``pkg/controller/v1beta1/inferencereplica/cordon_test.go`` @ eaf389d8 (the one
stored version), over ``inferencereplica/cordon.go`` ``cordonedInstances`` (the Instances with a pod on
a node whose ``spec.unschedulable`` is set, read only while the replica holds more Instances than it
wants) and ``workload/plan.go`` ``instancePlanIndices``' cordon rank (``planner/plan_indices.py``).
Three Ready single-pod Instances, Instance i on its own node, scaled to two; ours reads the cordon off
the Node watch (``NodeView.unschedulable``) in ``planner/rollout.py`` ``_cordoned``. The two cordoned
entries failed before (the highest index went). ``CordonedNodesReadOnlyWhileScalingDown`` (Go's Node
LIST count) is not mappable: the controller's Node watch is always on.
"""

from __future__ import annotations

import pytest

from omereconcile.simulate.cluster import Sim
from omereconcile.simulate.driver import Driver
from tests.goparity.reconciler_world import instances_on_own_nodes

GO = "ome-projects/ome pkg/controller/v1beta1/inferencereplica/cordon_test.go @ eaf389d8"
NODES = ("node-0", "node-1", "node-2")


def _three_instances() -> tuple[Sim, Driver]:
    """Instance i on ``node-i``."""
    return instances_on_own_nodes(NODES)


def _victims(cordoned: tuple[str, ...]) -> list[int]:
    sim, driver = _three_instances()
    for name in cordoned:
        sim.node_objs[name]["spec"]["unschedulable"] = True
    sim.update_spec(replicas=2)
    driver.one_pass()
    return sorted(r["index"] for r in sim.rows() if r["phase"] == "Deleting")


def test_scale_down_admits_the_highest_index_when_no_node_is_cordoned() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/cordon_test.go @ eaf389d8,
    TestReconcile_ScaleDownAdmitsTheInstanceOnACordonedNodeFirst, "no cordoned node": Instance 2."""
    assert _victims(()) == [2]


@pytest.mark.parametrize(
    ("cordoned", "want"),
    [
        pytest.param(("node-0",), [0], id="Instance 0 on a cordoned node"),
        pytest.param(("node-1",), [1], id="Instance 1 on a cordoned node"),
    ],
)
def test_scale_down_admits_the_instance_on_a_cordoned_node_first(
    cordoned: tuple[str, ...], want: list[int]
) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/cordon_test.go @ eaf389d8,
    TestReconcile_ScaleDownAdmitsTheInstanceOnACordonedNodeFirst, the two cordoned entries: the
    Instance on the cordoned node goes, even the healthy lowest index. (Before: the highest index.)"""
    assert _victims(cordoned) == want
