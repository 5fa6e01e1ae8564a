"""OME's ``workload/podreadiness/readiness_test.go``: the serving gate as read, and Available.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/podreadiness/readiness_test.go`` @ 9177c1b0 (the
listed one of three stored versions, all 31,052 characters read), over ``podreadiness/readiness.go``
@ 58a57f25 (``IsServing``, ``IsPodAvailable``). Ours: :attr:`omereconcile.world.PodView.gate` and
:func:`omereconcile.planner.counters.instance_counters` (``availablePodCount`` and the instant a pending
pod turns Available, Go's retry), for a pod an EndpointSlice lists ready.

Not mappable (25 of 34): Go's multi-writer protocol on the ``ome.io/serving`` condition — every
writer adds or removes its own ``{userAgent, key}`` in the condition's message, and the gate is True
only when the list is empty (``AddNotReadyKey``, ``RemoveNotReadyKey``, ``MarkPodServingWithChange``
×4, ``ContainsNotReadyKey``, the idempotence, self-heal, re-drain, deterministic-order and malformed-list
tests) and its patch mechanics (resourceVersion-pinned status patches, conflict retries, a lagging
cache, NotFound on a deleted pod, kubelet conditions kept, nil pods). Ours has one writer of the gate,
the planner, which writes True or False with a reason (``Out.gate``); the executor patches it.
``IsPodAvailable``'s nil-pod entry has no counterpart either.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import MappingProxyType

import pytest

from omereconcile.planner.counters import instance_counters
from omereconcile.world import Endpoints, EndpointView, PodCondition, PodView
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/workload/podreadiness/readiness_test.go @ 9177c1b0"
NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
LISTED = Endpoints(
    by_pod=MappingProxyType({"p": EndpointView(ready=True, serving=True, terminating=False, available=True)}),
    slices_seen=True,
)


def _pod(*conds: PodCondition) -> PodView:
    return PodView("p", "uid-p", "1", {}, phase="Running", conditions=conds)


def test_is_serving_reads_the_gate() -> None:
    """Go: readiness_test.go @ 9177c1b0, TestIsServing: no condition and False are not serving, True is
    (Go's nil pod has no counterpart)."""
    assert _pod().gate != "True"
    assert _pod(PodCondition(c.SERVING_GATE, "False")).gate != "True"
    assert _pod(PodCondition(c.SERVING_GATE, "True")).gate == "True"


def _ready(at: datetime | None, status: str = "True") -> PodView:
    return _pod(PodCondition("Ready", status, last_transition_time=at))


@pytest.mark.parametrize(
    ("entry", "pod", "window", "available", "retry"),
    [
        ("no Ready condition", _pod(), 10, False, None),
        ("Ready False", _ready(NOW - timedelta(hours=1), "False"), 10, False, None),
        ("zero window is Ready", _ready(NOW), 0, True, None),
        ("negative window is Ready", _ready(NOW), -5, True, None),
        ("inside window", _ready(NOW - timedelta(seconds=4)), 10, False, timedelta(seconds=6)),
        ("exactly at window boundary", _ready(NOW - timedelta(seconds=10)), 10, True, None),
        ("past window", _ready(NOW - timedelta(seconds=11)), 10, True, None),
        ("Ready without transition time cannot prove age", _ready(None), 10, False, None),
    ],
)
def test_is_pod_available(
    entry: str, pod: PodView, window: int, available: bool, retry: timedelta | None
) -> None:
    """Go: readiness_test.go @ 9177c1b0, TestIsPodAvailable, each entry but "nil pod": Available is
    PodReady for at least ``minReadySeconds`` (the boundary inclusive; a zero or negative window is
    plain Ready), and a pod inside the window is retried when it closes."""
    got = instance_counters([pod], LISTED, timedelta(seconds=window), NOW)
    assert bool(got.available_pod_count) is available, entry
    assert got.next_available_at == (None if retry is None else NOW + retry), entry
