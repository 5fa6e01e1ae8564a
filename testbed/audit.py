"""The API server's audit log, opt-in for a test: who wrote what, when, by the server's own record.

    args = audit_args(run_dir)            # pass to running_cluster(apiserver_args=...) / ControlPlane
    ...
    for event in read_audit(run_dir):     # one dict per completed write request

The policy logs writes (create, update, patch, delete, deletecollection) at ``Metadata`` level (who, verb,
object, user agent, timestamps, response code; no bodies), except Leases, whose writes are logged at
``Request`` level so a test can read the ``holderIdentity`` each write claimed. Reads are not logged.
Events are written in ``ResponseComplete`` stage only (``omitStages: [RequestReceived]``), with the log
backend's default ``blocking`` mode: a write's event is on disk before its response is sent.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

__all__ = ["AUDIT_POLICY", "audit_args", "audit_time", "read_audit"]

AUDIT_POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Request
    verbs: ["create", "update", "patch"]
    resources: [{group: "coordination.k8s.io", resources: ["leases"]}]
  - level: Metadata
    verbs: ["create", "update", "patch", "delete", "deletecollection"]
  - level: None
"""


def audit_args(run_dir: Path) -> tuple[str, ...]:
    """kube-apiserver flags writing the audit log to ``run_dir/audit.log`` under :data:`AUDIT_POLICY`."""
    run_dir.mkdir(parents=True, exist_ok=True)
    policy = run_dir / "audit-policy.yaml"
    policy.write_text(AUDIT_POLICY)
    return (
        f"--audit-policy-file={policy}",
        f"--audit-log-path={run_dir / 'audit.log'}",
        "--audit-log-format=json",
        "--audit-log-maxsize=0",  # never rotate during a test
    )


def read_audit(run_dir: Path) -> Iterator[dict[str, Any]]:
    """The audit events written so far (a torn last line, being written, is skipped)."""
    path = run_dir / "audit.log"
    if not path.exists():
        return
    with path.open(encoding="utf-8") as f:
        for line in f:
            try:
                yield json.loads(line)
            except ValueError:
                continue


def audit_time(event: dict[str, Any], key: str = "requestReceivedTimestamp") -> float:
    """An event's timestamp (RFC 3339 with microseconds) as POSIX seconds."""
    return datetime.fromisoformat(str(event[key]).replace("Z", "+00:00")).timestamp()
