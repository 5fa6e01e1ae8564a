"""OME's ``workload/types/gangscheduling_test.go``: which PodGroup readings keep a gang's members
from being created.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/types/gangscheduling_test.go`` @ dcfb4135 (the
one stored version, read whole), over ``types/gangscheduling.go`` @ 4dfb96b1
``GangObservations.BlocksPods``. Go records a reading per index and asks whether it blocks member
creates; ours reads the Instance's PodGroup off the observed world in the gang's step
(:func:`omereconcile.planner.gang.bring_up_gang`, ``_ensure_pod_group``), so "blocks" is: with every
member missing, the pass creates none. The other four tests of the file (the nil-safe store,
``OperationGangHeld``, ``GangReadingForSkipsASurgeSource``, ``GangTermination``) are not mappable
(``docs/goparity.md``).
"""

from __future__ import annotations

import pytest

from omereconcile.actions import CreatePod
from tests.goparity.test_workload_escalation_gang import _ctx, _pass, _row

GO = "ome-projects/ome pkg/controller/v1beta1/workload/types/gangscheduling_test.go @ dcfb4135"


@pytest.mark.parametrize(
    ("reading", "blocks"),
    [
        pytest.param("terminating", True, id="terminating holds the name"),
        pytest.param("conflict", True, id="ownership conflict holds the name"),
        pytest.param("failed", True, id="failed holds the name"),
        pytest.param(None, False, id="an unclassified (absent) group blocks nothing"),
    ],
)
def test_gang_observations_block_pods_on_an_unusable_name(reading: str | None, blocks: bool) -> None:
    """Go: gangscheduling_test.go @ dcfb4135, TestGangObservationsBlocksPodsOnAnUnusableName, each
    reading (Go's "an index the pass never recorded" is the absent group here too): a group being
    collected, one another controller holds, and one the gang scheduler failed keep every member
    from being created; with no group the pass creates the group and the members together. The
    ``failed`` entry is new with goKD (ours read no PodGroup phase before)."""
    ctx = _ctx(reading)
    _, out, _ = _pass(ctx, _row(ctx), [])
    created = [a.name for a in out.actions if isinstance(a, CreatePod)]
    assert (created == []) is blocks, (GO, reading, created)
