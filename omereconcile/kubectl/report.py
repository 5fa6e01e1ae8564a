"""The report writer every verb shares: ``cli.ome.io/v1alpha1`` documents, tables and ``ActionResult``.

OME's CLI (``ome-projects/ome`` ``pkg/cli/report/v1alpha1``) prints diagnostic reports as documents with
``apiVersion: cli.ome.io/v1alpha1``, a report ``kind``, ``metadata``, ``collectedAt``, ``sources``,
``content`` and ``warnings``; guarded actions print one ``ActionResult`` (``action_result.go``:
``action``, ``target``, ``dryRun``, ``accepted``, ``applied``, ``message``, ``followUp``) whose
dry-run invariants are kept here as Go's ``ActionResult.Canonical`` keeps them: neither dry-run mode
claims ``applied``, and a client dry-run never claims ``accepted``. ``-o table`` (the default) and
``-o wide`` print a human view derived from the same document; ``-o json|yaml`` print the document.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, TextIO

import yaml

from omereconcile.replica_table import format_table

__all__ = [
    "API_VERSION",
    "OUTPUTS",
    "ActionResult",
    "Report",
    "format_table",
    "now",
    "source",
    "table",
    "write_document",
]

API_VERSION = "cli.ome.io/v1alpha1"
OUTPUTS: tuple[str, ...] = ("table", "wide", "json", "yaml")
DryRun = Literal["none", "client", "server"]


def now() -> datetime:
    return datetime.now(UTC)


def _stamp(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def source(obj: Mapping[str, Any], evidence: str = "Observed") -> dict[str, Any]:
    """A ``sources`` entry naming an object read for the report (its identity, not its content)."""
    meta = obj.get("metadata") or {}
    out: dict[str, Any] = {"kind": str(obj.get("kind") or ""), "name": str(meta.get("name") or "")}
    if meta.get("namespace"):
        out["namespace"] = str(meta["namespace"])
    if meta.get("uid"):
        out["uid"] = str(meta["uid"])
    if meta.get("generation") is not None:
        out["generation"] = int(meta["generation"])
    out["evidence"] = evidence
    return out


def write_document(doc: Mapping[str, Any], output: str, out: TextIO) -> None:
    if output == "json":
        out.write(json.dumps(doc, indent=2) + "\n")
    else:
        out.write(yaml.safe_dump(dict(doc), sort_keys=False, default_flow_style=False))


@dataclass
class Report:
    """One diagnostic report; ``table``/``wide`` are its human views (rows, header first)."""

    kind: str
    target: Mapping[str, Any]  # metadata: the object the report is about
    content: dict[str, Any]
    sources: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    collected_at: datetime = field(default_factory=now)

    def document(self) -> dict[str, Any]:
        return {
            "apiVersion": API_VERSION,
            "kind": self.kind,
            "metadata": dict(self.target),
            "collectedAt": _stamp(self.collected_at),
            "sources": self.sources,
            "content": self.content,
            "warnings": [{"message": w} for w in self.warnings],
        }

    def write(self, output: str, out: TextIO, table: str) -> None:
        """``table`` is the human view already formatted (for ``table``/``wide``)."""
        if output in ("json", "yaml"):
            write_document(self.document(), output, out)
        else:
            out.write(table)


def table(rows: Sequence[Sequence[str]]) -> str:
    return format_table([list(r) for r in rows])


@dataclass
class ActionResult:
    """The one stdout document of a guarded action."""

    action: str
    target: dict[str, Any]
    dry_run: DryRun
    accepted: bool = False
    applied: bool = False
    message: str = ""
    follow_up: str = ""
    revision_hash: str = ""
    collected_at: datetime = field(default_factory=now)

    def document(self) -> dict[str, Any]:
        # Go ActionResult.Canonical: no dry-run is applied; a client dry-run sent nothing to accept.
        accepted = self.accepted and self.dry_run != "client"
        applied = self.applied and self.dry_run == "none"
        doc: dict[str, Any] = {
            "apiVersion": API_VERSION,
            "kind": "ActionResult",
            "collectedAt": _stamp(self.collected_at),
            "action": self.action,
            "target": self.target,
            "dryRun": self.dry_run,
        }
        if self.revision_hash:
            doc["revisionHash"] = self.revision_hash
        doc["accepted"] = accepted
        doc["applied"] = applied
        if self.message:
            doc["message"] = self.message
        if self.follow_up:
            doc["followUp"] = self.follow_up
        return doc

    def write(self, output: str, out: TextIO) -> None:
        doc = self.document()
        if output in ("json", "yaml"):
            write_document(doc, output, out)
            return
        t = self.target
        name = "/".join(p for p in (t.get("kind"), t.get("namespace"), t.get("name")) if p)
        rows = [
            ["FIELD", "VALUE"],
            ["action", self.action],
            ["target", name],
            ["dry-run", self.dry_run],
            ["accepted", "Yes" if doc["accepted"] else "No"],
            ["applied", "Yes" if doc["applied"] else "No"],
            ["revision-hash", self.revision_hash or "-"],
            ["message", self.message or "-"],
            ["follow-up", self.follow_up or "-"],
        ]
        out.write(table(rows))
