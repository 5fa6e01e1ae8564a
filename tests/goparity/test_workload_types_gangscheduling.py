"""OME's ``workload/types/gangscheduling_test.go``: which PodGroup readings withhold a gang's pods.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/types/gangscheduling_test.go`` @ dcfb4135 (the one
stored version, read whole), over ``types`` ``GangObservations.BlocksPods`` (a name ``Terminating``, in
an ``OwnershipConflict`` or ``Failed`` blocks member creates; an unclassified group or an index the pass
never recorded blocks nothing) and ``podgroup`` ``ObserveGang`` (the classification). Ours reads the
Instance's PodGroup off the observed world in ``planner/gang.py`` ``_ensure_pod_group``; the pass that
creates two gangs is planned with Instance 0's PodGroup in each reading, and what it creates is read.
The other four tests of the file are listed in ``docs/goparity.md`` (not mappable).
"""

from __future__ import annotations

import pytest

from tests.goparity.test_workload_gang_inventory import gang_create_pass

GO = "ome-projects/ome pkg/controller/v1beta1/workload/types/gangscheduling_test.go @ dcfb4135"
MEMBERS_0 = ["llama-pool-engine-0-leader-0", "llama-pool-engine-0-worker-0"]


@pytest.mark.parametrize(
    ("reading", "blocks"),
    [
        pytest.param("terminating", True, id="a terminating group blocks member creates"),
        pytest.param("foreign", True, id="an ownership conflict blocks member creates"),
        pytest.param("failed", True, id="a Failed group blocks member creates"),
        pytest.param("ours", False, id="an unclassified group blocks nothing"),
        pytest.param(None, False, id="an index with no group blocks nothing"),
    ],
)
def test_an_unusable_name_blocks_the_members(reading: str | None, blocks: bool) -> None:
    """Go: gangscheduling_test.go @ dcfb4135, TestGangObservationsBlocksPodsOnAnUnusableName, each of its
    five checks: the pass that creates the gangs creates none of Instance 0's members while its
    PodGroup name is unusable, and both members (after the group, when there was none) otherwise."""
    _sim, pods, groups = gang_create_pass(reading)
    if reading is None:
        assert "llama-pool-engine-0" in groups, GO  # created ahead of its members
    created = [p for p in pods if p.startswith("llama-pool-engine-0-")]
    assert created == ([] if blocks else MEMBERS_0), (GO, reading, pods)
