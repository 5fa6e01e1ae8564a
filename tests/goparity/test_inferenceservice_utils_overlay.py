"""OME's overlay resolution tests, test by test, through ``omerender.render``.

Go: ome-projects/ome ``pkg/controller/v1beta1/inferenceservice/utils/overlay_test.go`` @ 6f229145
(``overlay.go`` @ 6f229145). Go asserts on ``ResolveOverlays``' entries and on the name helpers; here a
resolved overlay is one the pods carry (``OVERLAY_<NAME>_MODEL_PATH`` and its mount), a skipped one is
one they do not, and a name helper's value is the variable or mount path the render writes.
"""

from __future__ import annotations

from typing import Any

import pytest

from omerender import Render
from omerender.models import InferenceReplica, parse_object
from tests.goparity.gp_support import GP_NS, gp_model, gp_render, gp_runtime

GO = "ome-projects/ome pkg/controller/v1beta1/inferenceservice/utils/overlay_test.go @ 6f229145"


def replica_with_overlays(*overlays: dict[str, Any]) -> InferenceReplica:
    return parse_object(
        InferenceReplica,
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceReplica",
            "metadata": {"name": "ir", "namespace": GP_NS, "uid": "u"},
            "spec": {
                "component": "engine",
                "modelRef": {"name": "m", "overlays": list(overlays)},
                "runtimeRef": {"name": "rt"},
            },
        },
    )


def main_container(result: Render) -> dict[str, Any]:
    (runner,) = result.runners
    container: dict[str, Any] = runner.template["spec"]["containers"][0]
    return container


def overlay_env(result: Render) -> dict[str, str]:
    env = main_container(result).get("env") or ()
    return {e["name"]: e["value"] for e in env if e["name"].startswith("OVERLAY_")}


@pytest.mark.parametrize(
    "ref",
    [
        pytest.param({}, id="legacy unqualified"),
        pytest.param({"kind": "BaseModel"}, id="explicit BaseModel"),
        pytest.param({"kind": "ClusterBaseModel"}, id="explicit ClusterBaseModel"),
        pytest.param({"kind": "ClusterBaseModel", "apiGroup": "ome.io"}, id="defaulted ClusterBaseModel"),
    ],
)
def test_resolve_overlays_skips_missing_model_kinds(ref: dict[str, str]) -> None:
    """Go: TestResolveOverlaysSkipsMissingModelKinds: a missing overlay of any accepted kind is skipped,
    the next one is resolved."""
    replica = replica_with_overlays(
        {"name": "missing", **ref}, {"name": "available", "kind": "ClusterBaseModel"}
    )
    result = gp_render(replica, gp_model(), gp_runtime("rt"), gp_model(name="available"))
    assert overlay_env(result) == {"OVERLAY_AVAILABLE_MODEL_PATH": "/opt/ml/model-overlays/available"}


@pytest.mark.parametrize(
    ("name", "variable"),
    [
        pytest.param("foo", "OVERLAY_FOO_MODEL_PATH", id="foo"),
        pytest.param("foo-pvc", "OVERLAY_FOO_PVC_MODEL_PATH", id="foo-pvc"),
        pytest.param("llama-70b-pd-test", "OVERLAY_LLAMA_70B_PD_TEST_MODEL_PATH", id="llama-70b-pd-test"),
    ],
)
def test_overlay_env_var_name(name: str, variable: str) -> None:
    """Go: TestOverlayEnvVarName, the entries a Kubernetes object can be named (``already_underscored``
    and ``Mixed-Case-Name`` are not DNS names, so no model carries them)."""
    result = gp_render(
        replica_with_overlays({"name": name}), gp_model(), gp_runtime("rt"), gp_model(name=name)
    )
    assert list(overlay_env(result)) == [variable]


@pytest.mark.parametrize("name", ["foo-pvc", "llama-70b-pd-test"])
def test_overlay_mount_path(name: str) -> None:
    """Go: TestOverlayMountPath."""
    result = gp_render(
        replica_with_overlays({"name": name}), gp_model(), gp_runtime("rt"), gp_model(name=name)
    )
    mounts = {m["name"]: m["mountPath"] for m in main_container(result).get("volumeMounts") or ()}
    assert mounts[f"model-overlay-{name}"] == f"/opt/ml/model-overlays/{name}"
