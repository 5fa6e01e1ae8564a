"""Every field of ``spec.lifecycle`` the CRD accepts is implemented as OME does it, or the webhook
refuses it saying it is not supported (docs/decisions.md). The walk fails when the CRD gains a
lifecycle field this table does not place."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_admission import EMPTY, NS, create, standalone, with_spec

from omerender.admission import review

REPO = Path(__file__).resolve().parents[2]
CRD = REPO / "schemas" / "crds" / "ome.io_inferencereplicas.yaml"

# Implemented: the field path -> a value the webhook admits, and the module that reads it.
IMPLEMENTED: dict[str, tuple[Any, str]] = {
    "restartPolicy": ("RecreateInstanceOnPodRestart", "omereconcile/planner/context.py"),
    "updateStrategy.type": ("InPlaceOnly", "omereconcile/planner/context.py"),
    "updateStrategy.rollingUpdate.partition": (1, "omereconcile/planner/context.py"),
    "updateStrategy.rollingUpdate.maxUnavailable": (1, "omereconcile/planner/context.py"),
    "updateStrategy.rollingUpdate.maxSurge": ("25%", "omereconcile/planner/context.py"),
    "updateStrategy.inPlaceUpdateStrategy.gracePeriodSeconds": (5, "omereconcile/planner/context.py"),
    "updateStrategy.inPlaceUpdateStrategy.markNotReadyDuringLifecycle": (
        False,
        "omereconcile/planner/context.py",
    ),
    "readyPolicy": ("AllPodReady", "docs/planner.md"),
    "instanceReadyTimeout": ("10m", "omereconcile/planner/context.py"),
    # Auto (and its alias Surge) relocates under the operator's autoMigrate budget; Never turns it off.
    "migrationPolicy.mode": ("Auto", "omereconcile/planner/context.py"),
}
# Refused: the field path -> (the value, the message's start).
REFUSED: dict[str, tuple[Any, str]] = {
    "minReadySeconds": (5, "spec.lifecycle.minReadySeconds is not read on an InferenceReplica"),
}


def _leaves(node: dict[str, Any], path: str = "") -> list[str]:
    props = node.get("properties")
    if not props:
        return [path]
    return [leaf for key, sub in props.items() for leaf in _leaves(sub, f"{path}.{key}" if path else key)]


def _lifecycle_schema() -> dict[str, Any]:
    crd = yaml.safe_load(CRD.read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return dict(spec["properties"]["lifecycle"])


def _with(path: str, value: Any) -> dict[str, Any]:
    lifecycle: dict[str, Any] = {}
    node = lifecycle
    *parents, last = path.split(".")
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value
    return with_spec(standalone(), lifecycle=lifecycle)


def test_every_lifecycle_field_is_placed() -> None:
    leaves = set(_leaves(_lifecycle_schema()))
    assert leaves == set(IMPLEMENTED) | set(REFUSED)


@pytest.mark.parametrize("path", sorted(IMPLEMENTED))
def test_implemented_fields_are_admitted_and_read(path: str) -> None:
    value, reader = IMPLEMENTED[path]
    decision = review(create(_with(path, value)), EMPTY)
    assert decision.allowed, decision.messages
    name = path.rsplit(".", 1)[-1]
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
    text = (REPO / reader).read_text()
    assert name in text or snake in text


@pytest.mark.parametrize("path", sorted(REFUSED))
def test_refused_fields_say_they_are_not_supported(path: str) -> None:
    value, start = REFUSED[path]
    decision = review(create(_with(path, value)), EMPTY)
    assert not decision.allowed
    assert decision.messages[0].startswith(f"InferenceReplica {NS}/pool-a: {start}")


@pytest.mark.parametrize("mode", ["Auto", "Surge", "Never"])
def test_every_migration_mode_is_admitted_on_create_and_update(mode: str) -> None:
    from test_admission import update

    for request in (
        create(_with("migrationPolicy.mode", mode)),
        update(standalone(), _with("migrationPolicy.mode", mode)),
    ):
        decision = review(request, EMPTY)
        assert decision.allowed, decision.messages
