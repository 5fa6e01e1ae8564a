"""OME's ``workload/query/discover_test.go``: terminal pods and runtime readiness.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/query/discover_test.go`` @ dcfb4135 (the listed one
of two stored versions, all 16,900 characters read), over ``query/discover.go`` (``IsTerminalPod``,
``AllPodsRuntimeReady``). Ours: :attr:`omereconcile.world.PodView.ended` and ``containers_ready`` (a
pod that ended never reads ContainersReady, whatever stale condition it carries), as the gang bring-up
reads a set (``planner/gang_ops.py``: every standing pod ContainersReady).

Not mappable (13): the live listing helpers (``LiveListPodsForInstance``, ``LiveListPodsForComponent``,
``LiveOldPodsClearedForRecreate`` ×5, ``AllTerminating``, ``ListOMENativePodsByName`` ×3: reads and a
field index; a pass of ours reads its pods once), ``IsTerminalPod``'s nil entry and
``ExcludeTerminalPods`` (a slice helper; ours filters inline). Not yet ported (11):
``TestPodSetPromotable`` (the set-level promotion bar with its remaining wait; ours decides it per pod
through ``podstate.ladder``).
"""

from __future__ import annotations

import pytest

from omereconcile.world import PodCondition, PodView

GO = "ome-projects/ome pkg/controller/v1beta1/workload/query/discover_test.go @ dcfb4135"


def _pod(name: str, phase: str, ready: bool) -> PodView:
    """Go's ``podInPhase``: ``ready`` stamps ContainersReady True (stale on a terminal pod)."""
    conds = (PodCondition("ContainersReady", "True"),) if ready else ()
    return PodView(name, f"uid-{name}", "1", {}, phase=phase, conditions=conds)


@pytest.mark.parametrize(
    ("entry", "phase", "ready", "terminal"),
    [
        ("unset phase", "", False, False),
        ("pending", "Pending", False, False),
        ("running", "Running", True, False),
        ("unknown", "Unknown", False, False),
        ("failed", "Failed", False, True),
        ("succeeded", "Succeeded", False, True),
    ],
)
def test_is_terminal_pod(entry: str, phase: str, ready: bool, terminal: bool) -> None:
    """Go: discover_test.go @ dcfb4135, TestIsTerminalPod, each entry but "nil"."""
    assert _pod("p", phase, ready).ended is terminal, entry


READY = _pod("ready", "Running", True)


@pytest.mark.parametrize(
    ("entry", "pods", "want"),
    [
        ("empty", [], False),
        ("all ready", [READY, _pod("ready-2", "Running", True)], True),
        ("one not ready", [READY, _pod("booting", "Running", False)], False),
        ("failed with stale ready condition", [READY, _pod("dead", "Failed", True)], False),
        ("succeeded with stale ready condition", [_pod("done", "Succeeded", True)], False),
        ("only terminal", [_pod("dead", "Failed", False)], False),
    ],
)
def test_a_terminal_pod_is_never_runtime_ready(entry: str, pods: list[PodView], want: bool) -> None:
    """Go: discover_test.go @ dcfb4135, TestAllPodsRuntimeReady_TerminalPodNeverReady, each entry: a set
    is runtime-ready when it has pods and every one is ContainersReady; a Failed or Succeeded pod never
    is, even with a stale ContainersReady condition."""
    assert (bool(pods) and all(p.containers_ready for p in pods)) is want, entry
