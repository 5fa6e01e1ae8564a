"""OME's ``workload/query/labels_test.go``: the revision hash a pod label carries, and two label keys.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/query/labels_test.go`` @ 4dfb96b1 (the one stored
version, read whole). Ours: :func:`omereconcile.planner.context.hash_of` (Go's
``RevisionHashFromControllerRevisionName``) and the constants in :mod:`omerender.constants`.
"""

from __future__ import annotations

import pytest

from omereconcile.planner.context import hash_of
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/workload/query/labels_test.go @ 4dfb96b1"


@pytest.mark.parametrize(
    ("entry", "name", "want"),
    [
        ("empty", "", ""),
        ("no separator", "abcd1234", ""),
        ("single separator", "isvc-hash", "hash"),
        ("isvc-component-hash", "llama-engine-abcd1234", "abcd1234"),
        ("trailing dash returns empty suffix", "llama-engine-", ""),
        ("isvc name with dashes", "llama-70b-instruct-engine-abcd1234", "abcd1234"),
    ],
)
def test_revision_hash_from_controller_revision_name(entry: str, name: str, want: str) -> None:
    """Go: labels_test.go @ 4dfb96b1, TestRevisionHashFromControllerRevisionName, each entry."""
    assert hash_of(name) == want, entry


def test_a_leading_dash_is_no_separator() -> None:
    """Not a Go entry (not counted): the rule read from sgl-project/ome
    ``workload/query/labels.go`` @ f97f9cfa, ``RevisionHashFromControllerRevisionName``, whose loop
    stops before index 0, so a name whose only ``-`` leads it carries no hash."""
    assert hash_of("-abcd1234") == ""
    assert hash_of("a-b") == "b"


def test_the_pod_group_label_matches_the_scheduler() -> None:
    """Go: labels_test.go @ 4dfb96b1, TestLabelPodGroup_MatchesUpstream: the coscheduler's key."""
    assert c.LABEL_POD_GROUP == "scheduling.x-k8s.io/pod-group"


def test_the_topology_annotation_matches_the_scheduler_contract() -> None:
    """Go: labels_test.go @ 4dfb96b1, TestAnnotationTopologyKey_MatchesSchedulerContract."""
    assert c.ANNOTATION_TOPOLOGY_KEY == "ome.io/topology-key"
