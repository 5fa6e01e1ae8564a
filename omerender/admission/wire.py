"""AdmissionReview (``admission.k8s.io/v1``) in and out, so the HTTPS server only decodes and answers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from omerender.admission.types import CODE_DENIED, AdmissionDecision, AdmissionRequest
from omerender.catalog import ControllerIdentity

__all__ = ["admission_review_response", "request_from_review"]

_API_VERSION = "admission.k8s.io/v1"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str | None:
    # The API server sends strings; anything else is ignored rather than printed as a Python repr.
    return value if isinstance(value, str) and value else None


def request_from_review(
    review: Mapping[str, Any],
    *,
    identity: ControllerIdentity | None = None,
    identity_error: str | None = None,
) -> AdmissionRequest:
    """The :class:`AdmissionRequest` an AdmissionReview carries (missing parts become empty)."""
    request = _mapping(review.get("request"))
    user = _mapping(request.get("userInfo"))
    groups = user.get("groups")
    obj, old = request.get("object"), request.get("oldObject")
    return AdmissionRequest(
        operation=str(request.get("operation") or ""),
        obj=obj if isinstance(obj, Mapping) else None,
        old_obj=old if isinstance(old, Mapping) else None,
        username=str(user.get("username") or ""),
        groups=tuple(str(g) for g in groups) if isinstance(groups, list) else (),
        identity=identity,
        identity_error=identity_error,
        namespace=_text(request.get("namespace")),
        name=_text(request.get("name")),
    )


def admission_review_response(review: Mapping[str, Any], decision: AdmissionDecision) -> dict[str, Any]:
    """The AdmissionReview answering ``review``: its ``uid`` echoed, ``allowed``, and a status.

    The status carries the decision's code and its first message; a rule denial also carries the
    reason ``Forbidden``, as controller-runtime's ``admission.Denied`` does.
    """
    request = _mapping(review.get("request"))
    status: dict[str, Any] = {"code": decision.code}
    if decision.message:
        status["message"] = decision.message
    if not decision.allowed and decision.code == CODE_DENIED:
        status["reason"] = "Forbidden"
    api_version = review.get("apiVersion")
    return {
        "apiVersion": api_version if isinstance(api_version, str) and api_version else _API_VERSION,
        "kind": "AdmissionReview",
        "response": {"uid": str(request.get("uid") or ""), "allowed": decision.allowed, "status": status},
    }
