"""OME's ``workload/types/terminalreasons_test.go`` and ``failurecause_test.go``: the two reason sets.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/types/terminalreasons_test.go`` @ 4dfb96b1
(``TestIsTerminalWaitingReason``) and ``types/failurecause_test.go`` @ 4dfb96b1
(``TestIsWorkloadCausedReason``), each the one stored version, read whole. Ours:
``planner/podstate.py`` ``STUCK_REASONS`` (the kubelet waiting reasons a container cannot leave on its
own) and ``planner/retry.py`` ``workload_caused`` (the failures that travel with the
revision and charge its retry ladder).
"""

from __future__ import annotations

import pytest

from omereconcile.planner.podstate import STUCK_REASONS
from omereconcile.planner.retry import workload_caused

GO_TERMINAL = "ome-projects/ome pkg/controller/v1beta1/workload/types/terminalreasons_test.go @ 4dfb96b1"
GO_CAUSE = "ome-projects/ome pkg/controller/v1beta1/workload/types/failurecause_test.go @ 4dfb96b1"


def test_terminal_waiting_reasons() -> None:
    """Go: terminalreasons_test.go @ 4dfb96b1, TestIsTerminalWaitingReason: the seven wedges are
    terminal; a transient startup state never is."""
    terminal = {
        "ErrImagePull",
        "ImagePullBackOff",
        "InvalidImageName",
        "CreateContainerConfigError",
        "CreateContainerError",
        "CrashLoopBackOff",
        "RunContainerError",
    }
    assert terminal <= STUCK_REASONS
    for reason in ("", "ContainerCreating", "PodInitializing", "ImagePulling"):
        assert reason not in STUCK_REASONS


@pytest.mark.parametrize(
    ("reason", "want"),
    [
        ("ImagePullBackOff", True),
        ("ErrImagePull", True),
        ("InvalidImageName", True),
        ("CreateContainerConfigError", True),
        ("CrashLoopBackOff", False),
        ("RunContainerError", False),
        ("CreateContainerError", False),
        ("DeadlineExceeded", False),
        ("", False),
    ],
)
def test_workload_caused_reasons(reason: str, want: bool) -> None:
    """Go: failurecause_test.go @ 4dfb96b1, TestIsWorkloadCausedReason (one case; its table entries as
    parameters): image and config failures travel with the revision; a crash loop, a runtime error and
    a deadline do not."""
    assert workload_caused(reason) is want


def test_an_invalid_pod_spec_is_workload_caused() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/types/apierror_test.go @ ae683e3f,
    TestInvalidPodSpecIsWorkloadCaused: a 422 blames the pod template and charges the revision's retry
    ladder like an image-pull failure; a terminating namespace and a quota refusal do not."""
    assert workload_caused("InvalidPodSpec")
    assert not workload_caused("NamespaceTerminating")
    assert not workload_caused("QuotaExceeded")
