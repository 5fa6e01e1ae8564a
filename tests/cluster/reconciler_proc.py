"""Run ``omereconcile run`` as a subprocess under its ServiceAccount, for the cluster tests.

The process gets a TokenRequest kubeconfig for ``ome/omereconcile``, so the RBAC in ``deploy/base/rbac.yaml``
is what authorizes it. Its JSON log goes to a file; failures quote the tail.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parents[2]
T = TypeVar("T")


class Reconciler:
    def __init__(self, kubeconfig: Path, log_path: Path, args: Sequence[str] = ()) -> None:
        self.kubeconfig = kubeconfig
        self.log_path = log_path
        self.args = list(args)
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: Any = None

    def start(self) -> Reconciler:
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            self.command(), stdout=self._log, stderr=subprocess.STDOUT, cwd=REPO, env=env
        )
        return self

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "omereconcile",
            "run",
            "--kubeconfig",
            str(self.kubeconfig),
            "--probe-addr",
            "127.0.0.1:0",
            "--metrics-on-probe-port",  # the tests scrape /metrics there, without a token
            *self.args,
        ]

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def lines(self) -> list[dict[str, Any]]:
        out = []
        if not self.log_path.exists():
            return out
        for line in self.log_path.read_text(errors="replace").splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                out.append({"raw": line})
        return out

    def tail(self, n: int = 40) -> str:
        if not self.log_path.exists():
            return "(no log)"
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])

    def probe_port(self, timeout: float = 20.0) -> int:
        def find() -> int | None:
            for rec in self.lines():
                if rec.get("msg") == "probes listening":
                    return int(rec["port"])
            return None

        return self.wait("the probe server", find, timeout)

    def wait(self, what: str, fn: Callable[[], T | None], timeout: float = 60.0, interval: float = 0.25) -> T:
        deadline = time.monotonic() + timeout
        last: T | None = None
        while time.monotonic() < deadline:
            last = fn()
            if last:
                return last
            if self.proc is not None and self.proc.poll() is not None:
                raise AssertionError(
                    f"reconciler exited ({self.proc.returncode}) waiting for {what}\n{self.tail()}"
                )
            time.sleep(interval)
        raise AssertionError(
            f"timed out after {timeout}s waiting for {what} (last: {last!r})\n--- reconciler log tail ---\n{self.tail()}"
        )

    def kill(self) -> None:
        if self.alive():
            assert self.proc is not None
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self, timeout: float = 20.0) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if self._log is not None:
            self._log.close()
            self._log = None
        return self.proc.returncode
