"""What a render returns: runners with pod templates, the revision they hash to, and advisories."""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from dataclasses import field
from typing import Any, Literal, cast

from omerender._records import record
from omerender.kubetypes import PodTemplateSpec
from omerender.models import InferenceReplica

__all__ = ["Advisory", "Render", "RenderedRunner", "SharedRunner", "TemplateSource"]

TemplateSource = Literal["modelRef", "runtimeRef", "runners"]


@record
class RenderedRunner:
    """One role of every Instance: ``default``, or ``leader`` + ``worker``, with its pod template."""

    name: str
    size: int
    template: dict[str, Any]

    @property
    def typed_template(self) -> PodTemplateSpec:
        """:attr:`template` as a typed view (:class:`omerender.kubetypes.PodTemplateSpec`): the same dict."""
        return cast(PodTemplateSpec, self.template)


# The slot that holds a runner's template; a SharedRunner fills it when its template is first read.
_TEMPLATE_SLOT: Any = RenderedRunner.__dict__["template"]


class SharedRunner(RenderedRunner):
    """A runner of a memoized render (``omerender.render.memo``), its template made when first read.

    It holds the template's metadata (its own) and the memo entry's pickled pod spec (shared). Until
    ``template`` is read nobody else holds them, so :meth:`pristine` may hand them to the revision
    and the diff, which then skip copying the spec and pickling the copy again to look its Go encoding
    up. Reading ``template`` makes a fresh dict, the caller's to change, as any runner's template is;
    it equals, copies and pickles as a :class:`RenderedRunner` with that template.
    """

    __slots__ = ("_metadata", "_spec")

    def __init__(
        self,
        name: str,
        size: int,
        template: dict[str, Any] | None = None,
        *,
        metadata: Mapping[str, Mapping[str, str]] | None = None,
        spec: bytes = b"",
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "size", size)
        object.__setattr__(self, "_metadata", metadata or {})
        object.__setattr__(self, "_spec", spec)
        if template is not None:
            _TEMPLATE_SLOT.__set__(self, template)

    @property
    def template(self) -> dict[str, Any]:
        try:
            made: dict[str, Any] = _TEMPLATE_SLOT.__get__(self, SharedRunner)
        except AttributeError:
            metadata: Mapping[str, Mapping[str, str]] = self._metadata  # type: ignore[attr-defined]
            made = {
                "metadata": {k: dict(v) for k, v in metadata.items()},
                "spec": pickle.loads(self._spec),  # type: ignore[attr-defined]
            }
            _TEMPLATE_SLOT.__set__(self, made)
        return made

    @template.setter
    def template(self, value: dict[str, Any]) -> None:  # only object.__setattr__ gets here: frozen
        _TEMPLATE_SLOT.__set__(self, value)

    def pristine(self) -> tuple[Mapping[str, Mapping[str, str]], bytes] | None:
        """(metadata, pickled pod spec) while ``template`` has not been read, else None. Read only."""
        try:
            _TEMPLATE_SLOT.__get__(self, SharedRunner)
        except AttributeError:
            return self._metadata, self._spec  # type: ignore[attr-defined]
        return None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RenderedRunner):
            return NotImplemented
        if (
            isinstance(other, SharedRunner)
            and (mine := self.pristine()) is not None
            and mine == other.pristine()
        ):
            return self.name == other.name and self.size == other.size  # equal pickles: equal specs
        return (self.name, self.size, self.template) == (other.name, other.size, other.template)

    __hash__ = None  # type: ignore[assignment]  # as RenderedRunner's: its template is a dict

    def __reduce__(self) -> tuple[Any, ...]:
        return (RenderedRunner, (self.name, self.size, self.template))


@record
class Advisory:
    """A warning that rides along with a successful render (e.g. ``RuntimeCompatibilityAdvisory``)."""

    reason: str
    message: str


@record
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
    # Go encodings of pod specs shared by the memoized renders of one catalog (omerender.render.memo),
    # by the specs' pickled bytes: revision_of reuses one only for a spec whose bytes are the same.
    encodings: dict[bytes, str] | None = field(default=None, compare=False, repr=False)

    @property
    def multi_pod(self) -> bool:
        """Whether the render has a ``worker`` runner: each Instance is then a leader and its workers."""
        return any(r.name == "worker" for r in self.runners)

    def runner(self, name: str) -> RenderedRunner | None:
        """The runner called ``name``, or None."""
        return next((r for r in self.runners if r.name == name), None)

    @property
    def anchor(self) -> RenderedRunner:
        """The ``default`` or ``leader`` runner: its template is the one OME hashes as ``podSpec``."""
        return next(r for r in self.runners if r.name in ("default", "leader"))

    @property
    def pods_per_instance(self) -> int:
        """The pods one Instance runs: the sum of the runners' sizes."""
        return sum(r.size for r in self.runners)
