"""Names OME derives from a replica (01 §3.1) and the model-ready node label keys (02 §3.4)."""

from __future__ import annotations

import hashlib
import os
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omerender.naming import (
    base_model_label,
    cluster_base_model_label,
    headless_service_name,
    instance_subdomain,
    leader_address,
    pod_group_name,
    pod_name,
    truncate_name_with_max_length,
    truncate_with_hash,
)

DNS_NAME = st.from_regex(r"[a-z]([-a-z0-9]{0,70}[a-z0-9])?", fullmatch=True)


def sha8(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]


# -- truncateWithHash ----------------------------------------------------------------------------


def test_short_strings_are_kept() -> None:
    assert truncate_with_hash("abc", 3) == "abc"
    assert truncate_with_hash("", 8) == ""


def test_long_strings_become_hash_dash_tail() -> None:
    text = "abcdefghijklmnopqrstuvwxyz"
    out = truncate_with_hash(text, 20)
    assert out == f"{sha8(text)}-{text[-11:]}"
    assert len(out) == 20


@pytest.mark.parametrize("limit", [1, 5, 8, 9])
def test_no_room_for_a_tail_leaves_the_hash_prefix(limit: int) -> None:
    text = "a-very-long-namespace"
    assert truncate_with_hash(text, limit) == sha8(text)[:limit]


# -- model-ready node label keys -----------------------------------------------------------------


def test_cluster_model_key_for_a_short_name() -> None:
    assert (
        cluster_base_model_label("llama-3-2-1b-instruct")
        == "models.ome.io/clusterbasemodel.llama-3-2-1b-instruct"
    )


def test_cluster_model_key_keeps_a_32_character_name() -> None:
    name = "a" * 32
    assert cluster_base_model_label(name) == f"models.ome.io/clusterbasemodel.{name}"


def test_cluster_model_key_truncates_the_catalog_example() -> None:
    # 02 §3.4, computed with a port of OME's GetClusterBaseModelLabel.
    assert (
        cluster_base_model_label("llama-3-2-90b-vision-instruct-fp8")
        == "models.ome.io/clusterbasemodel.a13d1f19-90b-vision-instruct-fp8"
    )


def test_base_model_key_without_truncation() -> None:
    assert base_model_label("team-a", "qwen2-7b") == "models.ome.io/team-a.basemodel.qwen2-7b"
    ns, name = "n" * 19, "m" * 19  # 38 in all: still fits
    assert base_model_label(ns, name) == f"models.ome.io/{ns}.basemodel.{name}"


def test_base_model_key_short_namespace_gives_the_rest_to_the_name() -> None:
    name = "mistral-7b-instruct-v0-3-awq-marlin-extra"  # 41 characters
    key = base_model_label("prod", name)
    assert key == f"models.ome.io/prod.basemodel.{sha8(name)}-{name[-(34 - 9) :]}"


def test_base_model_key_long_namespace_is_cut_to_its_hash() -> None:
    ns, name = "inference-production", "mistral-7b-instruct-v0-3-awq-marlin"
    assert base_model_label(ns, name) == f"models.ome.io/{sha8(ns)}.basemodel.{sha8(name)}-{name[-21:]}"


@settings(derandomize=True, database=None, max_examples=200)
@given(namespace=DNS_NAME, name=DNS_NAME)
def test_label_keys_never_exceed_the_name_limit(namespace: str, name: str) -> None:
    for key in (cluster_base_model_label(name), base_model_label(namespace, name)):
        prefix, _, rest = key.partition("/")
        assert prefix == "models.ome.io"
        assert len(rest) <= 49


# -- object names --------------------------------------------------------------------------------


def test_pod_and_instance_names() -> None:
    assert pod_name("llama-pool", "engine", 0, "default", 0) == "llama-pool-engine-0-default-0"
    assert pod_name("p", "decoder", 12, "worker", 3) == "p-decoder-12-worker-3"
    assert instance_subdomain("p", "router", 4) == "p-router-4"
    assert headless_service_name("llama-pool", "engine") == "llama-pool-engine-headless"
    assert pod_group_name("p", "engine", 2) == "p-engine-2"
    assert leader_address("p", "engine", 2) == "p-engine-2-leader-0.p-engine-headless"


def go_hash(text: str) -> str:
    """The hash prefix of Go's ``truncateWithHashTweaks``: a leading digit becomes ``a``."""
    digest = sha8(text)
    return "a" + digest[1:] if digest[0].isdigit() else digest


def test_long_names_are_hash_truncated_to_63() -> None:
    prefix = "a-very-long-replica-name-that-is-allowed-by-the-regex"
    service = headless_service_name(prefix, "decoder")
    full = f"{prefix}-decoder-headless"
    assert len(full) > 63
    assert service == f"{go_hash(full)}-{full[-54:]}"
    assert len(service) == 63
    group = pod_group_name(prefix * 2, "engine", 7)
    assert len(group) == 63
    assert group.endswith("-engine-7")
    assert leader_address(prefix, "decoder", 0).endswith(f".{service}")


DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")


def test_a_hash_starting_with_a_digit_gets_a_letter_as_go_bounds_service_names() -> None:
    """A 48-character replica name whose Service name's hash starts with a digit: Go's
    ``TruncateNameWithMaxLength`` replaces that digit with ``a`` (the API server refuses a Service
    name that does not start with a letter); the pods' subdomain and leader address follow."""
    name = "p1-" + "x" * 45
    full = f"{name}-engine-headless"
    assert sha8(full) == "37ee34d9"  # starts with a digit
    service = headless_service_name(name, "engine")
    assert service == f"a7ee34d9-{full[-54:]}"
    assert DNS1035_LABEL.fullmatch(service)
    assert leader_address(name, "engine", 0) == f"{name}-engine-0-leader-0.{service}"
    # The model label keys keep Go's plain truncateWithHash: a key segment may start with a digit.
    assert truncate_with_hash(full, 63).startswith("37ee34d9-")
    assert truncate_name_with_max_length(full, 63) == service
    assert truncate_name_with_max_length(full, 5) == "a7ee3"


@settings(max_examples=int(os.environ.get("OMERENDER_FUZZ_EXAMPLES", "300")), deadline=None)
@given(name=st.from_regex(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?", fullmatch=True), index=st.integers(0, 10**6))
def test_service_and_pod_group_names_are_dns_1035_labels(name: str, index: int) -> None:
    # Every replica name the webhook admits (its pattern, at most 63 characters) and every component.
    for component in ("engine", "decoder", "router"):
        for derived in (headless_service_name(name, component), pod_group_name(name, component, index)):
            assert len(derived) <= 63
            assert DNS1035_LABEL.fullmatch(derived), derived
