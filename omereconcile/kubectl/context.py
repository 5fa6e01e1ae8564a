"""What every verb receives: its parsed arguments, its streams, and the shared client (made on first use)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

from omereconcile.kube import Kube
from omereconcile.kubectl.client import Client, CommandError, default_namespace, parse_duration, segment

__all__ = ["Ctx", "connect_kube"]


def connect_kube(args: argparse.Namespace) -> Kube:
    try:
        return Kube.from_kubeconfig(args.kubeconfig, context=args.context)
    except Exception as exc:  # the client's ConfigException; only omereconcile.kube may import its type
        raise CommandError(f"cannot load the kubeconfig: {exc}") from exc


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

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
