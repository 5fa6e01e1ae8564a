"""OME's name helper tests, test by test, through ``omerender.naming``.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/query/names_test.go`` @ 4dfb96b1 (``names.go`` @
9177c1b0). ``boundedServiceName`` is ``constants.TruncateNameWithMaxLength`` at 63
(:func:`omerender.naming.truncate_name_with_max_length`). The per-revision and stable Service names have
no counterpart: a standalone replica gets a headless Service only (``docs/goparity.md``).
"""

from __future__ import annotations

import re

import pytest

from omerender.naming import (
    headless_service_name,
    instance_subdomain,
    pod_group_name,
    pod_name,
    truncate_name_with_max_length,
)

GO = "ome-projects/ome pkg/controller/v1beta1/workload/query/names_test.go @ 4dfb96b1"
MAX = 63  # validation.DNS1035LabelMaxLength, validation.LabelValueMaxLength
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")  # validation.IsValidLabelValue


def bounded(name: str) -> str:
    return truncate_name_with_max_length(name, MAX)


def test_bounded_service_name() -> None:
    """Go: TestBoundedServiceName."""
    assert bounded("short-engine-rev-deadbeef") == "short-engine-rev-deadbeef"
    assert bounded("a" * MAX) == "a" * MAX
    long = "a" * 80 + "-engine-rev-deadbeef-headless"
    first = bounded(long)
    assert len(first) <= MAX
    assert first == bounded(long)
    assert first != bounded("b" * 80 + "-engine-rev-deadbeef-headless")
    assert not first.endswith("-")


def test_headless_service_name_bounded() -> None:
    """Go: TestHeadlessServiceName_Bounded."""
    assert len(headless_service_name("x" * 60, "decoder")) <= MAX


def test_pod_group_name_bounded() -> None:
    """Go: TestPodGroupName_Bounded."""
    assert pod_group_name("llama", "engine", 3) == "llama-engine-3"
    first = pod_group_name("x" * 70, "engine", 12)
    assert len(first) <= MAX
    assert first == pod_group_name("x" * 70, "engine", 12)
    assert LABEL_VALUE.fullmatch(first)
    assert pod_group_name("x" * 70, "engine", 13) != first


@pytest.mark.parametrize(
    ("prefix", "index", "runner", "ordinal", "want"),
    [
        pytest.param("llama", 0, "default", 0, "llama-engine-0-default-0", id="single-pod default"),
        pytest.param("llama-70b", 0, "leader", 0, "llama-70b-engine-0-leader-0", id="multi-pod leader"),
        pytest.param(
            "llama-70b", 1, "worker", 2, "llama-70b-engine-1-worker-2", id="multi-pod worker ordinal 2"
        ),
    ],
)
def test_pod_name(prefix: str, index: int, runner: str, ordinal: int, want: str) -> None:
    """Go: TestPodName."""
    assert pod_name(prefix, "engine", index, runner, ordinal) == want


@pytest.mark.parametrize(
    ("prefix", "component", "index", "want"),
    [
        pytest.param("llama", "engine", 0, "llama-engine-0", id="engine 0"),
        pytest.param("llama-70b", "decoder", 1, "llama-70b-decoder-1", id="decoder 1"),
        pytest.param(
            "llama-70b-instruct", "engine", 12, "llama-70b-instruct-engine-12", id="engine high-index"
        ),
    ],
)
def test_pod_group_name_matches_instance_subdomain(
    prefix: str, component: str, index: int, want: str
) -> None:
    """Go: TestPodGroupName_MatchesInstanceSubdomain."""
    assert pod_group_name(prefix, component, index) == want
    assert instance_subdomain(prefix, component, index) == want


def test_headless_service_name() -> None:
    """Go: TestHeadlessServiceName."""
    assert headless_service_name("llama-70b", "engine") == "llama-70b-engine-headless"
