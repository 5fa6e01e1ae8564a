"""What a render returns: runners with pod templates, the revision they hash to, and advisories."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from omerender.models import InferenceReplica

__all__ = ["Advisory", "Render", "RenderedRunner", "TemplateSource"]

TemplateSource = Literal["modelRef", "runtimeRef", "runners"]


@dataclass(frozen=True, slots=True)
class RenderedRunner:
    """One role of every Instance: ``default``, or ``leader`` + ``worker``, with its pod template."""

    name: str
    size: int
    template: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Advisory:
    """A warning that rides along with a successful render (e.g. ``RuntimeCompatibilityAdvisory``)."""

    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class Render:
    """A replica's pod templates for this pass.

    The templates are fresh dicts owned by the caller; nothing here aliases the replica or catalog.
    """

    replica: InferenceReplica
    source: TemplateSource
    runners: tuple[RenderedRunner, ...]
    runtime_kind: str | None = None
    runtime_name: str | None = None
    model_name: str | None = None
    advisories: tuple[Advisory, ...] = ()
    # On a refs replica its own annotation keys ride on the pods but stay out of the hash (01 §9.1).
    excluded_annotation_keys: frozenset[str] = field(default_factory=frozenset)
    # Go encodings of pod specs shared by the renders of one memo entry (omerender.render.memo), by
    # the specs' pickled bytes: revision_of reuses one only for a spec whose bytes are the same.
    encodings: dict[bytes, str] | None = field(default=None, compare=False, repr=False)

    @property
    def multi_pod(self) -> bool:
        return any(r.name == "worker" for r in self.runners)

    def runner(self, name: str) -> RenderedRunner | None:
        return next((r for r in self.runners if r.name == name), None)

    @property
    def anchor(self) -> RenderedRunner:
        """The ``default`` or ``leader`` runner: its template is the one OME hashes as ``podSpec``."""
        return next(r for r in self.runners if r.name in ("default", "leader"))

    @property
    def pods_per_instance(self) -> int:
        return sum(r.size for r in self.runners)
