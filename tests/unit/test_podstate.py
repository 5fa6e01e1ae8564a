"""Stuck evidence as OME's evidence/stuckpod.go reads it: the seven terminal waiting reasons
(workload/types terminalWaitingReasons), regular then init containers, reasons verbatim."""

from __future__ import annotations

from typing import Any

import pytest

from omereconcile.planner.podstate import stuck_container
from omereconcile.world import PodView

SEVEN = [
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "CrashLoopBackOff",
    "RunContainerError",
]


def _pod(
    containers: list[tuple[str, str | None]], init: list[tuple[str, str | None]] = (), **meta: Any
) -> PodView:  # type: ignore[assignment]
    def statuses(items: list[tuple[str, str | None]]) -> list[dict[str, Any]]:
        return [{"name": n, "state": {"waiting": {"reason": r}} if r else {"running": {}}} for n, r in items]

    return PodView.from_dict(
        {
            "metadata": {"name": "p", "uid": "u", "creationTimestamp": "2025-01-01T00:00:00Z", **meta},
            "status": {
                "containerStatuses": statuses(containers),
                "initContainerStatuses": statuses(init),
            },
        }
    )


@pytest.mark.parametrize("reason", SEVEN)
def test_each_terminal_reason_is_stuck_and_reported_verbatim(reason: str) -> None:
    stuck = stuck_container(_pod((("main", reason),)))
    assert stuck is not None
    assert (stuck.container, stuck.reason) == ("main", reason)


@pytest.mark.parametrize("reason", ["ContainerCreating", "PodInitializing", None])
def test_transient_waiting_is_not_stuck(reason: str | None) -> None:
    assert stuck_container(_pod((("main", reason),))) is None


def test_init_containers_count_after_regular_ones() -> None:
    only_init = stuck_container(_pod((("main", "PodInitializing"),), (("init", "CreateContainerError"),)))
    assert only_init is not None
    assert (only_init.container, only_init.reason) == ("init", "CreateContainerError")
    both = stuck_container(_pod((("main", "RunContainerError"),), (("init", "ErrImagePull"),)))
    assert both is not None
    assert both.container == "main"


def test_a_terminating_pod_is_never_stuck() -> None:
    assert (
        stuck_container(_pod((("main", "CrashLoopBackOff"),), deletionTimestamp="2025-01-01T00:01:00Z"))
        is None
    )
