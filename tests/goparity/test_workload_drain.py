"""OME's ``workload/drain/drain_test.go``: when a pod counts as drained, routed and in rotation.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/drain/drain_test.go`` @ dcfb4135 (the one stored
version, all 29,961 characters read), over ``drain/drain.go`` @ dcfb4135 (the newest of three stored
versions: it adds ``Batcher.IsPodRouted`` and the shared ``listSlices`` to 9177c1b0's text):
``IsPodDrained``, ``Batcher.IsPodDrained``, ``Batcher.IsPodRouted``, ``IsPodInRotation``,
``EndpointAvailable``, ``endpointTargetsPod``, ``endpointIsReady``, ``drainedWhenSliceListEmpty``.

Go reads the Service and its EndpointSlices through a fake client; ours reads them once per pass
into the world (:class:`omereconcile.world.ServiceView`, :meth:`omereconcile.world.Endpoints.from_slices`,
slices selected by ``kubernetes.io/service-name`` — :func:`omereconcile.controller.stores.service_name_index`)
and decides with the pure :func:`omereconcile.planner.podstate.drained` (Go's drain gate),
``EndpointView.available`` (Go's ``EndpointAvailable`` / ``IsPodInRotation``) and
``planner/surge.py`` ``_source_routed`` (Go's ``IsPodRouted``: the endpoint view abstains without
slices). The pod under test has written its serving gate False, as every drain of ours does first.

Not mappable (9 of 46): argument validation of a nil pod or an empty Service name (4 tests: ours
takes a pod and the replica's one Service by construction), and the Batcher's read accounting
(one LIST per Service, memoised read errors, one observation per Batcher: 5 tests) — a pass of ours
reads the world once before it plans, so there is no per-pod read to count.

Fixed by this port: :func:`~omereconcile.planner.podstate.drained` read a missing Service as drained
before looking at the slices; Go consults the Service only when no slice is listed. And
``Endpoints.from_slices`` (``omereconcile/world.py``) read an absent ``conditions.ready`` as not
ready where Go's ``endpointIsReady`` presumes it ready, and took a ``targetRef`` into another
namespace for the pod where Go's ``endpointTargetsPod`` requires it to be empty or the pod's (the
four cases were strict xfails). Go's empty ``targetRef.kind`` is an absent one on the wire
(``omitempty``), which ours takes for a Pod as Go does.
"""

from __future__ import annotations

from typing import Any

import pytest

from omereconcile.controller.stores import service_name_index
from omereconcile.planner.podstate import drained
from omereconcile.planner.surge import _source_routed
from omereconcile.world import Endpoints, PodCondition, PodView, ServiceView
from omerender import constants as c
from tests.goparity.reconciler_world import one_replica_ctx

GO = "ome-projects/ome pkg/controller/v1beta1/workload/drain/drain_test.go @ dcfb4135"
NS = "ns"
SVC = "svc"


def _pod(name: str = "p1", *, serving: str = "False") -> PodView:
    """Go's ``testPod``: a pod whose serving gate has been written (False: the drain has begun)."""
    conds = (PodCondition("ContainersReady", "True"), PodCondition(c.SERVING_GATE, serving))
    return PodView(name, f"{name}-uid", "1", {}, phase="Running", conditions=conds)


def _ep(
    pod: str | None,
    ready: bool | None,
    *,
    terminating: bool | None = None,
    kind: str | None = "Pod",
    namespace: str | None = NS,
) -> dict[str, Any]:
    """One endpoint as Go's ``endpointSpec`` builds it (``ready=None`` leaves the condition unset)."""
    conditions: dict[str, Any] = {}
    if ready is not None:
        conditions["ready"] = ready
    if terminating is not None:
        conditions["terminating"] = terminating
    ep: dict[str, Any] = {"addresses": ["10.0.0.1"], "conditions": conditions}
    if pod is not None:
        ref: dict[str, Any] = {"name": pod}
        if kind is not None:
            ref["kind"] = kind
        if namespace is not None:
            ref["namespace"] = namespace
        ep["targetRef"] = ref
    return ep


def _slice(*endpoints: dict[str, Any], service: str = SVC, name: str = "svc-1") -> dict[str, Any]:
    """Go's ``sliceForService``: an EndpointSlice labelled for ``service``."""
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": name, "namespace": NS, "labels": {"kubernetes.io/service-name": service}},
        "addressType": "IPv4",
        "endpoints": list(endpoints),
    }


def _is_drained(*slices: dict[str, Any], service: bool = True, pod: str = "p1") -> bool:
    """Go's ``IsPodDrained(ctx, c, "ns", "svc", pod)`` over the given objects: the slices the pass
    selects for the Service (by its ``kubernetes.io/service-name`` label), then the drain gate."""
    selected = [s for s in slices if service_name_index(s) == (NS, SVC)]
    return drained(_pod(pod), ServiceView(exists=service), Endpoints.from_slices(selected))


def _is_routed(*slices: dict[str, Any], service: bool = True, pod: str = "p1") -> bool:
    """Go's ``Batcher.IsPodRouted``: the surge's source-rotation view (serving gate True)."""
    ctx = one_replica_ctx(service=ServiceView(exists=service), endpoints=Endpoints.from_slices(slices))
    return _source_routed(ctx, _pod(pod, serving="True"))


def _available(ep: dict[str, Any]) -> bool:
    """Go's ``EndpointAvailable`` / ``IsPodInRotation`` for the one pod the endpoint names."""
    view = Endpoints.from_slices([_slice(ep)]).by_pod.get("p1")
    return view is not None and view.available


# --- IsPodDrained ------------------------------------------------------------------------------


def test_no_slices_and_no_service_is_drained() -> None:
    """Go: drain_test.go @ dcfb4135, TestIsPodDrained_NoSlicesAtAll_ReturnsTrue."""
    assert _is_drained(service=False) is True


def test_a_service_without_slices_is_not_drained() -> None:
    """Go: drain_test.go @ dcfb4135, TestIsPodDrained_ServiceExistsNoSlices_ReturnsNotDrained: an
    empty slice list against an existing Service is a cold start, never proof of a drain."""
    assert _is_drained(service=True) is False


def test_slices_of_another_service_do_not_count() -> None:
    """Go: drain_test.go @ dcfb4135, TestIsPodDrained_SlicesForDifferentService_ReturnsTrue (no Service
    object in Go's fake client: the slice of ``other-svc`` is all there is)."""
    other = _slice(_ep("p1", True), service="other-svc", name="other-1")
    assert _is_drained(other, service=False) is True


def test_a_pod_absent_from_the_slices_is_drained() -> None:
    """Go: drain_test.go @ dcfb4135, TestIsPodDrained_PodAbsentFromSlices_ReturnsTrue."""
    assert _is_drained(_slice(_ep("p-other", True))) is True


def test_a_ready_endpoint_is_not_drained() -> None:
    """Go: drain_test.go @ dcfb4135, TestIsPodDrained_PodPresentAndReady_ReturnsFalse."""
    assert _is_drained(_slice(_ep("p1", True))) is False


def test_a_not_ready_endpoint_is_drained() -> None:
    """Go: drain_test.go @ dcfb4135, TestIsPodDrained_PodPresentButNotReady_ReturnsTrue."""
    assert _is_drained(_slice(_ep("p1", False))) is True


def test_an_unset_ready_condition_is_presumed_ready() -> None:
    """Go: drain_test.go @ dcfb4135, TestIsPodDrained_PodPresentReadyNil_TreatedAsReady."""
    assert _is_drained(_slice(_ep("p1", None))) is False


def test_any_slice_still_routing_the_pod_keeps_it_undrained() -> None:
    """Go: drain_test.go @ dcfb4135, TestIsPodDrained_AcrossMultipleSlices_FindsRoutableEndpoint."""
    a = _slice(_ep("p1", False), name="svc-1")
    b = _slice(_ep("p1", True), name="svc-2")
    assert _is_drained(a, b) is False


def test_other_pods_ready_endpoints_do_not_count() -> None:
    """Go: drain_test.go @ dcfb4135, TestIsPodDrained_AcrossMultipleSlices_AllNotReady."""
    a = _slice(_ep("p1", False), name="svc-1")
    b = _slice(_ep("p-other", True), name="svc-2")
    assert _is_drained(a, b) is True


def test_a_target_in_another_namespace_is_not_the_pod() -> None:
    """Go: drain_test.go @ dcfb4135, TestIsPodDrained_TargetRefNamespaceMismatchIgnored."""
    assert _is_drained(_slice(_ep("p1", True, namespace="other-ns"))) is True


def test_an_endpoint_without_target_is_ignored() -> None:
    """Go: drain_test.go @ dcfb4135, TestIsPodDrained_TargetRefNilIgnored."""
    assert _is_drained(_slice(_ep(None, True))) is True


def test_a_target_without_kind_is_taken_for_a_pod() -> None:
    """Go: drain_test.go @ dcfb4135, TestIsPodDrained_TargetRefKindEmpty_TreatedAsPod (Go's empty
    ``Kind`` is omitted on the wire: ``ObjectReference.kind`` is ``omitempty``)."""
    assert _is_drained(_slice(_ep("p1", True, kind=None))) is False


def test_a_target_of_another_kind_is_not_the_pod() -> None:
    """Go: drain_test.go @ dcfb4135, TestIsPodDrained_TargetRefKindNotPod_Rejected."""
    assert _is_drained(_slice(_ep("p1", True, kind="Node"))) is True


# --- Batcher.IsPodDrained (one observation per pass: ours reads the world once) ----------------


@pytest.mark.parametrize(
    ("entry", "slices", "service", "want"),
    [
        ("ready endpoint -> not drained", [_slice(_ep("p1", True), name="s")], False, False),
        ("not-ready endpoint -> drained", [_slice(_ep("p1", False), name="s")], False, True),
        ("service exists, no slices -> not drained", [], True, False),
        ("no service, no slices -> drained", [], False, True),
    ],
)
def test_the_batched_reading_matches_the_single_one(
    entry: str, slices: list[dict[str, Any]], service: bool, want: bool
) -> None:
    """Go: drain_test.go @ dcfb4135, TestBatcher_MatchesIsPodDrainedSemantics, each entry."""
    assert _is_drained(*slices, service=service) is want, entry


@pytest.mark.parametrize(
    ("entry", "service", "want"),
    [("existing service is not drained", True, False), ("absent service is drained", False, True)],
)
def test_every_pod_of_a_pass_reads_the_same_empty_slice_verdict(
    entry: str, service: bool, want: bool
) -> None:
    """Go: drain_test.go @ dcfb4135, TestBatcher_EmptySlicesCachesServiceLookup, each entry: p1, p2
    and p1 again all get the Service's verdict (Go's read count has no counterpart: one world read)."""
    assert [_is_drained(service=service, pod=p) for p in ("p1", "p2", "p1")] == [want] * 3, entry


def test_a_duplicate_endpoint_with_unset_ready_keeps_the_pod_routable() -> None:
    """Go: drain_test.go @ dcfb4135, TestBatcher_IndexesRoutableTargetsWithDuplicateEndpointSemantics,
    "duplicate false and nil Ready remains routable"."""
    assert _is_drained(_slice(_ep("p1", False), _ep("p1", None))) is False


def test_duplicate_not_ready_endpoints_are_drained() -> None:
    """Go: drain_test.go @ dcfb4135, TestBatcher_IndexesRoutableTargetsWithDuplicateEndpointSemantics,
    "duplicate false endpoints are drained"."""
    assert _is_drained(_slice(_ep("p1", False), _ep("p1", False))) is True


def test_an_empty_target_namespace_matches() -> None:
    """Go: drain_test.go @ dcfb4135, TestBatcher_TargetRefNamespaceIndexPreservesMatchingRules, "empty
    namespace matches" (the pod lives in the namespace the pass reads)."""
    assert _is_drained(_slice(_ep("p1", True, namespace=None))) is False


def test_the_pods_own_namespace_matches() -> None:
    """Go: drain_test.go @ dcfb4135, TestBatcher_TargetRefNamespaceIndexPreservesMatchingRules, "exact
    namespace matches"."""
    assert _is_drained(_slice(_ep("p1", True, namespace=NS))) is False


def test_a_different_target_namespace_is_ignored() -> None:
    """Go: drain_test.go @ dcfb4135, TestBatcher_TargetRefNamespaceIndexPreservesMatchingRules,
    "different namespace is ignored"."""
    assert _is_drained(_slice(_ep("p1", True, namespace="elsewhere"))) is True


def test_an_empty_target_kind_matches() -> None:
    """Go: drain_test.go @ dcfb4135, TestBatcher_TargetRefNamespaceIndexPreservesMatchingRules, "empty
    kind matches"."""
    assert _is_drained(_slice(_ep("p1", True, kind=None))) is False


def test_a_non_pod_target_kind_is_ignored() -> None:
    """Go: drain_test.go @ dcfb4135, TestBatcher_TargetRefNamespaceIndexPreservesMatchingRules, "non-Pod
    kind is ignored"."""
    assert _is_drained(_slice(_ep("p1", True, kind="Node"))) is True


# --- EndpointAvailable and IsPodInRotation ------------------------------------------------------


def test_ready_and_not_terminating_is_available() -> None:
    """Go: drain_test.go @ dcfb4135, TestEndpointAvailable_ReadyTrueTerminatingFalseIsAvailable."""
    assert _available(_ep("p1", True, terminating=False)) is True


def test_ready_with_terminating_unset_is_available() -> None:
    """Go: drain_test.go @ dcfb4135, TestEndpointAvailable_ReadyTrueTerminatingNilIsAvailable."""
    assert _available(_ep("p1", True)) is True


def test_ready_but_terminating_is_not_available() -> None:
    """Go: drain_test.go @ dcfb4135, TestEndpointAvailable_ReadyTrueTerminatingTrueIsNotAvailable."""
    assert _available(_ep("p1", True, terminating=True)) is False


def test_not_ready_is_never_available() -> None:
    """Go: drain_test.go @ dcfb4135, TestEndpointAvailable_ReadyFalseIsNotAvailable."""
    assert _available(_ep("p1", False)) is False


def test_a_terminating_endpoint_is_not_in_rotation() -> None:
    """Go: drain_test.go @ dcfb4135, TestIsPodInRotation_TerminatingEndpointReportedNotInRotation."""
    assert _available(_ep("p1", True, terminating=True)) is False


def test_a_ready_endpoint_not_terminating_is_in_rotation() -> None:
    """Go: drain_test.go @ dcfb4135, TestIsPodInRotation_ReadyTrueNotTerminatingReportedInRotation."""
    assert _available(_ep("p1", True, terminating=False)) is True


# --- Batcher.IsPodRouted ------------------------------------------------------------------------


@pytest.mark.parametrize(("entry", "service"), [("absent service", False), ("service without slices", True)])
def test_the_rotation_view_abstains_without_slices(entry: str, service: bool) -> None:
    """Go: drain_test.go @ dcfb4135, TestBatcher_IsPodRoutedAbstainsWithoutSlices, each entry: an empty
    slice list is not a reading, the pod stays routed (where the drain gate says drained for an absent
    Service)."""
    assert _is_routed(service=service) is True, entry


@pytest.mark.parametrize(
    ("entry", "endpoint", "want_routed"),
    [
        ("ready endpoint", _ep("p1", True), True),
        ("endpoint for another pod", _ep("p-other", True), False),
        ("endpoint not ready", _ep("p1", False), False),
    ],
)
def test_routed_and_drained_are_opposites_over_one_read(
    entry: str, endpoint: dict[str, Any], want_routed: bool
) -> None:
    """Go: drain_test.go @ dcfb4135, TestBatcher_IsPodRoutedReadsTheSameSlicesAsTheGate, each entry."""
    routed = _is_routed(_slice(endpoint))
    assert routed is want_routed, entry
    assert _is_drained(_slice(endpoint)) is not routed, entry
