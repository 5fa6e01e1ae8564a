"""Helpers for tests that use the testbed (kept here so any tests folder can import them)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from testbed.controlplane import ControlPlane
from testbed.kubelet import FakeKubelet
from testbed.rawkube import RawKube

T = TypeVar("T")


@dataclass
class Cluster:
    """What the `cluster` pytest fixture yields."""

    cp: ControlPlane
    kubelet: FakeKubelet
    raw: RawKube

    def kubectl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.cp.kubectl(*args, check=check)


def wait_for(what: str, fn: Callable[[], T | None], timeout: float = 30.0, interval: float = 0.2) -> T:
    """Poll `fn` until it returns something truthy and return it; AssertionError naming `what` otherwise."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")
