"""The InferenceReplica validating webhook's rules as a pure function, plus the AdmissionReview wire format.

    decision = review(AdmissionRequest(operation="CREATE", obj=replica, username="alice"), catalog)

:func:`review` implements 01-contract §7 and the seed's "What the webhook rejects": projected vs
standalone form, controller identity, the metadata-only path, immutability, every standalone rejection,
the projected-replica rules and the shape checks. The reconciler's HTTPS server decodes an AdmissionReview
with :func:`request_from_review`, calls :func:`review` and answers with :func:`admission_review_response`;
the offline ``validate`` tool prints every message of the decision.
"""

from omerender.admission.identity import (
    CONFIG_KEY,
    IdentityConfigError,
    identity_load_error,
    parse_identity_config,
)
from omerender.admission.rules import METADATA_ONLY, review
from omerender.admission.shape import validate_autoscaler, validate_pacing, validate_runner_volumes
from omerender.admission.types import (
    CODE_ALLOWED,
    CODE_BAD_REQUEST,
    CODE_DENIED,
    CODE_IDENTITY_UNAVAILABLE,
    CODE_RUNTIME_UNRESOLVED,
    AdmissionDecision,
    AdmissionRequest,
)
from omerender.admission.wire import admission_review_response, request_from_review

__all__ = [
    "CODE_ALLOWED",
    "CODE_BAD_REQUEST",
    "CODE_DENIED",
    "CODE_IDENTITY_UNAVAILABLE",
    "CODE_RUNTIME_UNRESOLVED",
    "CONFIG_KEY",
    "METADATA_ONLY",
    "AdmissionDecision",
    "AdmissionRequest",
    "IdentityConfigError",
    "admission_review_response",
    "identity_load_error",
    "parse_identity_config",
    "request_from_review",
    "review",
    "validate_autoscaler",
    "validate_pacing",
    "validate_runner_volumes",
]
