"""OME's ``workload/query/nodes_test.go``: which Instances sit on a cordoned node.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/query/nodes_test.go`` @ eaf389d8 (the one stored
version, read whole), over ``query/nodes.go`` @ 245145f4 (``CordonedNodes``, ``CordonedInstances``,
``podHoldsCordonedNode``). Ours: ``planner/rollout.py`` ``_cordoned`` over the Node watch
(``NodeView.unschedulable``), read while the replica holds more Instances than it wants.
``CordonedNodes``' two tests (an indexed and an index-less read agree; none cordoned is nil) are about
the read and not mappable: ours takes the cordon from the watched Nodes.
"""

from __future__ import annotations

from datetime import datetime

from omereconcile.planner import rows as R
from omereconcile.planner.rollout import _cordoned
from omereconcile.world import NodeView, PodView
from tests.goparity.reconciler_world import one_replica_ctx

GO = "ome-projects/ome pkg/controller/v1beta1/workload/query/nodes_test.go @ eaf389d8"


def _on(name: str, node: str, phase: str = "Running", deleted: datetime | None = None) -> PodView:
    return PodView(
        name, f"uid-{name}", "1", {}, phase=phase, node_name=node or None, deletion_timestamp=deleted
    )


def test_only_pods_still_on_the_cordoned_node_count() -> None:
    """Go: nodes_test.go @ eaf389d8, TestCordonedInstances_CountsOnlyPodsStillOnTheNode: a single-pod
    Instance on node-a and a gang with one member there count; a pod elsewhere, a terminating pod, a
    Failed pod and an unbound pod do not; with no cordoned node nothing counts. Failed before: the
    terminating and Failed pods on node-a counted their Instances."""
    by_index = {
        0: [_on("single", "node-a")],
        1: [_on("elsewhere", "node-b")],
        2: [_on("gang-leader", "node-b"), _on("gang-worker", "node-a")],
        3: [_on("terminating", "node-a", deleted=datetime(2026, 1, 1))],
        4: [_on("finished", "node-a", phase="Failed")],
        5: [_on("unbound", "", phase="Pending")],
    }
    rows = [R.Row(index=i, phase=R.READY) for i in by_index]
    nodes = {
        "node-a": NodeView("node-a", ready="True", unschedulable=True),
        "node-b": NodeView("node-b", ready="True"),
    }
    assert _cordoned(one_replica_ctx(nodes=nodes), rows, by_index) == {0, 2}
    calm = {"node-a": NodeView("node-a", ready="True"), "node-b": NodeView("node-b", ready="True")}
    assert _cordoned(one_replica_ctx(nodes=calm), rows, by_index) == set()
