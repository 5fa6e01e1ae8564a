"""The admission webhook's input and answer, independent of the AdmissionReview wire format."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from omerender._records import record
from omerender.catalog import ControllerIdentity

__all__ = [
    "CODE_ALLOWED",
    "CODE_BAD_REQUEST",
    "CODE_DENIED",
    "CODE_IDENTITY_UNAVAILABLE",
    "CODE_RUNTIME_UNRESOLVED",
    "AdmissionDecision",
    "AdmissionRequest",
]

# HTTP status codes, as controller-runtime's admission helpers answer them.
CODE_ALLOWED: Final = 200
CODE_DENIED: Final = 403  # admission.Denied: a rule rejects the write
CODE_BAD_REQUEST: Final = 400  # admission.Errored(400): the object does not fit the InferenceReplica schema
CODE_IDENTITY_UNAVAILABLE: Final = 500  # the controller identity setting cannot be read
CODE_RUNTIME_UNRESOLVED: Final = 500  # admission.Errored: a named runtime exists but cannot be resolved


@record
class AdmissionRequest:
    """One create/update/delete of an InferenceReplica, as the webhook sees it.

    ``obj`` is the object being written (``None`` on DELETE), ``old_obj`` the stored one on UPDATE.
    ``identity`` is the ``controllerIdentity`` block of the ``inferenceservice-config`` ConfigMap when it
    names at least one user or group; ``None`` means not configured, and the literal
    ``ome.io/controller-write: "true"`` annotation marks the controller's writes instead.
    ``identity_error`` says why that block could not be read (missing ConfigMap, invalid JSON): creates
    and spec changes then fail with 500, metadata-only updates still pass. ``namespace`` and ``name``
    come from the AdmissionReview request and win over the object's own metadata.
    """

    operation: str
    obj: Mapping[str, Any] | None
    old_obj: Mapping[str, Any] | None = None
    username: str = ""
    groups: tuple[str, ...] = ()
    identity: ControllerIdentity | None = None
    identity_error: str | None = None
    namespace: str | None = None
    name: str | None = None


@record
class AdmissionDecision:
    """The answer. A denial lists every rule that rejects the write, in OME's check order.

    The webhook answers with the first message (``message``) and ``code``, the code of that first
    denial; the offline ``validate`` tool prints them all. An allowed write carries at most one message
    (``metadata-only update``).
    """

    allowed: bool
    code: int
    messages: tuple[str, ...] = ()

    @property
    def message(self) -> str:
        return self.messages[0] if self.messages else ""
