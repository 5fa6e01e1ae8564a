"""What every verb receives: its parsed arguments, its streams, and the shared client (made on first use)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from omereconcile.cluster.kube import Kube, KubeconfigError
from omereconcile.kubectl.client import (
    Client,
    ClusterError,
    default_namespace,
    parse_duration,
    replica_target,
    segment,
)
from omereconcile.kubectl.report import Report

__all__ = ["Ctx", "connect_kube"]


def connect_kube(args: argparse.Namespace) -> Kube:
    try:
        return Kube.from_kubeconfig(args.kubeconfig, context=args.context)
    except KubeconfigError as exc:
        raise ClusterError(f"cannot load the kubeconfig: {exc}") from exc


@dataclass
class Ctx:
    args: argparse.Namespace
    out: TextIO
    err: TextIO
    stdin: TextIO
    connect: Callable[[argparse.Namespace], Kube] = connect_kube
    _client: Client | None = field(default=None, repr=False)

    @property
    def namespace(self) -> str:
        ns = str(
            getattr(self.args, "namespace", None)
            or default_namespace(self.args.kubeconfig, self.args.context)
        )
        segment("namespace", ns)  # refused before any kubeconfig is loaded or request sent
        return ns

    def client(self) -> Client:
        if self._client is None:
            ns = self.namespace
            timeout = getattr(self.args, "request_timeout", None)
            seconds = parse_duration("--request-timeout", timeout) if timeout not in (None, "0") else None
            self._client = Client(self.connect(self.args), ns, seconds)
        return self._client

    def target(self) -> tuple[str, Client, dict[str, Any]]:
        """The replica ``ir/NAME`` names: its name, the client, and the object as read now."""
        name = replica_target(self.args.target)
        client = self.client()
        return name, client, client.replica(name)

    def report(
        self,
        kind: str,
        subject: Mapping[str, Any],
        content: dict[str, Any],
        text: str,
        sources: Sequence[dict[str, Any]] = (),
        warnings: Sequence[str] = (),
    ) -> None:
        """Print ``text`` for ``-o table|wide``, else the report document."""
        doc = Report(
            kind, {**subject, "namespace": self.client().namespace}, content, list(sources), list(warnings)
        )
        doc.write(self.args.output, self.out, text)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
