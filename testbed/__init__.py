"""Test control plane for omerender/omereconcile: real Kubernetes binaries built from the Go module proxy,
a fake kubelet with simulated GPU nodes, and an in-process validating webhook helper.

Build: `bash testbed/build.sh` (or `python -m testbed build`); run: `python -m testbed up`.
"""

from testbed.assets import BuildError, build
from testbed.controlplane import ControlPlane, ControlPlaneError
from testbed.kubelet import FakeKubelet
from testbed.rawkube import RawKube
from testbed.webhook import WebhookServer, allow, deny

__all__ = [
    "BuildError",
    "ControlPlane",
    "ControlPlaneError",
    "FakeKubelet",
    "RawKube",
    "WebhookServer",
    "allow",
    "build",
    "deny",
]
