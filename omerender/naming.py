"""Every name OME derives from a replica (01-contract §3.1) and the model-ready node label keys (02 §3.4)."""

from __future__ import annotations

import hashlib

__all__ = [
    "base_model_label",
    "cluster_base_model_label",
    "headless_service_name",
    "instance_subdomain",
    "leader_address",
    "pod_group_name",
    "pod_name",
    "truncate_name_with_max_length",
    "truncate_with_hash",
]

_DNS1035_MAX = 63
# The part of a label key after the slash may hold 63 characters; OME keeps 49 for the model part.
_MODEL_LABEL_MAX = 49
_HASH_PREFIX = 8


def truncate_with_hash(original: str, max_length: int) -> str:
    """OME's ``truncateWithHash``: ``<sha256 hex[:8]>-<tail>`` when ``original`` is too long."""
    if len(original) <= max_length:
        return original
    digest = hashlib.sha256(original.encode()).hexdigest()[:_HASH_PREFIX]
    tail = max_length - _HASH_PREFIX - 1
    if tail <= 0:
        return digest[:max_length]
    return f"{digest}-{original[len(original) - tail :]}"


def truncate_name_with_max_length(name: str, max_length: int) -> str:
    """OME's ``TruncateNameWithMaxLength``, the bound on Service and PodGroup names: ``truncate_with_hash``
    except that a hash starting with a digit has that digit replaced by ``a``, so the name is a valid
    DNS-1035 label (which must start with a letter; the API server refuses a Service named otherwise).

    Go: ome-projects/ome ``pkg/constants/constants.go``, ``TruncateNameWithMaxLength`` ->
    ``truncateWithHashTweaks`` (the model label keys use ``truncateWithHash``, without the tweak).
    """
    if len(name) <= max_length:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:_HASH_PREFIX]
    if digest[0].isdigit():
        digest = "a" + digest[1:]
    tail = max_length - _HASH_PREFIX - 1
    if tail <= 0:
        return digest[:max_length]
    return f"{digest}-{name[len(name) - tail :]}"


def cluster_base_model_label(model_name: str) -> str:
    """``models.ome.io/clusterbasemodel.<name>``, the name cut to 32 with a hash when longer."""
    room = _MODEL_LABEL_MAX - len("clusterbasemodel") - 1
    return f"models.ome.io/clusterbasemodel.{truncate_with_hash(model_name, room)}"


def base_model_label(namespace: str, model_name: str) -> str:
    """``models.ome.io/<ns>.basemodel.<name>``, splitting 38 characters between namespace and name."""
    room = _MODEL_LABEL_MAX - len("basemodel.") - 1
    if len(namespace) + len(model_name) > room:
        # The namespace keeps at most 8 characters; the model name gets the rest (room is 38 > 2*8).
        ns_max = min(len(namespace), 8)
        namespace = truncate_with_hash(namespace, ns_max)
        model_name = truncate_with_hash(model_name, room - ns_max)
    return f"models.ome.io/{namespace}.basemodel.{model_name}"


def pod_name(prefix: str, component: str, index: int, runner: str, ordinal: int) -> str:
    return f"{prefix}-{component}-{index}-{runner}-{ordinal}"


def headless_service_name(prefix: str, component: str) -> str:
    """``{prefix}-{component}-headless``, hash-truncated to the DNS-1035 limit when longer, the hash
    never starting with a digit (:func:`truncate_name_with_max_length`).

    Go: ome-projects/ome ``pkg/controller/v1beta1/workload/query/names.go``, ``HeadlessServiceName``
    (``boundedServiceName``: ``constants.TruncateNameWithMaxLength`` at ``DNS1035LabelMaxLength``).
    """
    return truncate_name_with_max_length(f"{prefix}-{component}-headless", _DNS1035_MAX)


def instance_subdomain(prefix: str, component: str, index: int) -> str:
    return f"{prefix}-{component}-{index}"


def pod_group_name(prefix: str, component: str, index: int) -> str:
    """``{prefix}-{component}-{index}``, bounded as Go's ``query.PodGroupName`` bounds it
    (``constants.TruncateNameWithMaxLength`` at ``LabelValueMaxLength``, 63, as the DNS-1035 limit)."""
    return truncate_name_with_max_length(f"{prefix}-{component}-{index}", _DNS1035_MAX)


def leader_address(prefix: str, component: str, index: int) -> str:
    """The short ``<leader pod>.<headless service>`` form OME's render code writes."""
    leader = pod_name(prefix, component, index, "leader", 0)
    return f"{leader}.{headless_service_name(prefix, component)}"
