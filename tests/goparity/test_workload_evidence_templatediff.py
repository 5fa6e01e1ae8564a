"""OME's ``workload/evidence/templatediff_test.go``: what an in-place roll reads off a live pod.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/evidence/templatediff_test.go`` @ dcfb4135 (one
stored version), against ``templatediff.go`` @ 4dfb96b1 (the version read of two stored; read whole:
``CanonicalImage``, ``podRuntimeImagesMatch``, ``PodRuntimeImageChangesMatch``, ``PodImagesMatch``,
``AnnotationsDiff``). Ours is :mod:`omereconcile.planner.inplace`: ``canonical_image``,
``_runtime_changes_match`` (Go's ``PodRuntimeImageChangesMatch``; a running spec of None is Go's nil
running revision, which falls back to ``podRuntimeImagesMatch``), ``_patch_targets`` (the containers
an image patch moves; none left is Go's ``PodImagesMatch`` for the target containers the pod has) and
``annotations_diff``. Pods are built as the API returns them and read through :meth:`PodView.from_dict`.

Not mappable: the ``nil pod`` and ``nil target`` entries of ``TestPodRuntimeImageChangesMatch`` (ours
always has a pod and a target image map). Known difference, not reachable: Go's ``PodImagesMatch``
fails a target container the pod lacks; ``_patch_targets`` has nothing to patch for it — the roll
never gets there, because ``in_place_eligible`` goes in place only when the running and target specs
have the same containers.
"""

from __future__ import annotations

from typing import Any

import pytest

from omereconcile.planner.inplace import (
    _patch_targets,
    _runtime_changes_match,
    annotations_diff,
    canonical_image,
)
from omereconcile.world import PodView
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/workload/evidence/templatediff_test.go @ dcfb4135"
MARKER = c.ANNOTATION_IN_PLACE_IMAGE_TRANSITION


def _pod(spec: dict[str, str] | None = None, runtime: dict[str, str] | None = None) -> PodView:
    """A pod whose spec runs ``spec`` (name → image) and whose runtime reports ``runtime``."""
    statuses: list[dict[str, Any]] = [
        {"name": n, "image": i, "containerID": f"containerd://{n}", "restartCount": 3}
        for n, i in (runtime or {}).items()
    ]
    return PodView.from_dict(
        {
            "metadata": {"name": "engine-0-default-0"},
            "spec": {"containers": [{"name": n, "image": i} for n, i in (spec or {}).items()]},
            "status": {"phase": "Running", "containerStatuses": statuses},
        }
    )


def test_pod_images_match_injected_sidecar_ignored() -> None:
    """``TestPodImagesMatch_InjectedSidecarIgnored``: a webhook-injected sidecar on the pod (absent
    from the target) neither blocks the spec match nor the runtime match; a diverged target image
    still mismatches, and a target container without a status fails the runtime match."""
    images = {"main": "llama:v2", "istio-proxy": "istio/proxyv2:1.20"}
    pod = _pod(images, images)
    target = {"main": "llama:v2"}
    assert _patch_targets(pod, target) == {}, GO
    assert _runtime_changes_match(pod, None, target), GO
    assert _patch_targets(pod, {"main": "llama:v3"}) == {"main": "llama:v3"}, GO
    assert not _runtime_changes_match(pod, None, {"other": "x:v1"}), GO


def test_pod_images_match() -> None:
    """``TestPodImagesMatch``: equal spec images match; one differing image does not."""
    pod = _pod({"main": "llama:v2", "sidecar": "metrics:v1"})
    assert _patch_targets(pod, {"main": "llama:v2", "sidecar": "metrics:v1"}) == {}, GO
    assert _patch_targets(pod, {"main": "llama:v3", "sidecar": "metrics:v1"}) == {"main": "llama:v3"}, GO


@pytest.mark.parametrize(
    ("image", "want"),
    [
        ("fake-serving:v1", "fake-serving:v1"),  # implicit library tag
        ("docker.io/library/fake-serving:v1", "fake-serving:v1"),  # runtime-stamped library tag
        ("ghcr.io/foo/bar:v1", "ghcr.io/foo/bar:v1"),  # explicit registry round-trip
        ("docker.io/myuser/myimg:v1", "myuser/myimg:v1"),  # runtime-stamped namespaced tag
        ("", ""),  # empty string
    ],
)
def test_canonical_image_normalizes_docker_hub_references(image: str, want: str) -> None:
    """``TestCanonicalImage_NormalizesDockerHubReferences`` (5 entries)."""
    assert canonical_image(image) == want, GO


def test_pod_runtime_images_match_registry_normalization() -> None:
    """``TestPodRuntimeImagesMatch_RegistryNormalization``: ``fake-serving:v2`` in the spec and
    ``docker.io/library/fake-serving:v2`` at runtime are the same image, so the roll converges."""
    pod = _pod({"main": "fake-serving:v2"}, {"main": "docker.io/library/fake-serving:v2"})
    assert _runtime_changes_match(pod, None, {"main": "fake-serving:v2"}), GO


@pytest.mark.parametrize(
    ("pod", "previous", "target", "want"),
    [
        pytest.param({"a": "1"}, {"a": "1"}, {"a": "1"}, {}, id="no diff: nothing to patch"),
        pytest.param({"a": "1"}, {"a": "1"}, {"a": "1", "b": "2"}, {"b": "2"}, id="add new key"),
        pytest.param({"a": "1"}, {"a": "1"}, {"a": "2"}, {"a": "2"}, id="update existing key"),
        pytest.param(
            {"a": "1", "b": "2"}, {"a": "1", "b": "2"}, {"a": "1"}, {"b": None}, id="delete a removed key"
        ),
        pytest.param(
            {"a": "1", "linkerd.io/inject": "enabled"}, {"a": "1"}, {"a": "1"}, {}, id="leave foreign key"
        ),
        pytest.param({"a": "1"}, {"a": "1", "b": "2"}, {"a": "1"}, {}, id="delete only if on the pod"),
        pytest.param({}, {}, {}, {}, id="nil-as-empty"),
        pytest.param({}, {}, {"a": "1"}, {"a": "1"}, id="first revision"),
    ],
)
def test_annotations_diff_cases(
    pod: dict[str, str], previous: dict[str, str], target: dict[str, str], want: dict[str, str | None]
) -> None:
    """``TestAnnotationsDiff_Cases`` (8 entries): add, update, delete what the previous revision
    authored and the target dropped, leave every foreign key alone. Go's nil maps are empty ones."""
    assert annotations_diff(pod, previous, target) == want, GO


def _spec(main: str, helper: str = "") -> dict[str, str]:
    return {"main": main, **({"helper": helper} if helper else {})}


@pytest.mark.parametrize(
    ("runtime", "running", "target", "want"),
    [
        pytest.param(
            _spec("mirror.example.com/app:v1"),
            _spec("example.com/app:v1"),
            _spec("example.com/app:v1"),
            True,
            id="metadata-only ignores runtime alias",
        ),
        pytest.param(
            _spec("example.com/app:v2", "mirror.example.com/helper:v1"),
            _spec("example.com/app:v1", "example.com/helper:v1"),
            _spec("example.com/app:v2", "example.com/helper:v1"),
            True,
            id="changed image matches while unchanged alias is ignored",
        ),
        pytest.param(
            _spec("example.com/app:v1", "mirror.example.com/helper:v1"),
            _spec("example.com/app:v1", "example.com/helper:v1"),
            _spec("example.com/app:v2", "example.com/helper:v1"),
            False,
            id="changed image remains stale",
        ),
        pytest.param(
            _spec("example.com/app:v2", "example.com/helper:v1"),
            _spec("example.com/app:v1", "example.com/helper:v1"),
            _spec("example.com/app:v2", "example.com/helper:v2"),
            False,
            id="one of two changed images remains stale",
        ),
        pytest.param(
            _spec("example.com/app:v2", "example.com/helper:v2"),
            None,
            _spec("example.com/app:v2", "example.com/helper:v2"),
            True,
            id="missing running revision checks every target image",
        ),
        pytest.param(
            _spec("example.com/app:v1"),
            None,
            _spec("example.com/app:v2"),
            False,
            id="missing running revision rejects stale runtime",
        ),
        pytest.param(
            _spec("example.com/app:v2"),
            _spec("example.com/app:v1"),
            _spec("example.com/app:v3"),
            False,
            id="retarget does not accept prior target runtime",
        ),
    ],
)
def test_pod_runtime_image_changes_match(
    runtime: dict[str, str], running: dict[str, str] | None, target: dict[str, str], want: bool
) -> None:
    """``TestPodRuntimeImageChangesMatch`` (7 of 9 entries; ``nil pod``/``nil target`` not mappable):
    only the containers whose image the roll changes need the runtime's word."""
    assert _runtime_changes_match(_pod(runtime, runtime), running, target) is want, GO


@pytest.mark.parametrize("observed_generation", [0, 6, 7])
def test_runtime_image_changes_match_does_not_use_restart_as_target_proof(observed_generation: int) -> None:
    """``TestPodRuntimeImageChangesMatchDoesNotUseRestartAsTargetProof`` (3 entries): a pod whose spec
    carries the target image and whose container restarted on the old image is not on the target,
    whatever generation the kubelet observed (ours reads no generation: only the runtime image)."""
    pod = PodView.from_dict(
        {
            "metadata": {"name": "engine-0-default-0", "generation": 7},
            "spec": {"containers": [{"name": "main", "image": "example.com/app:v2"}]},
            "status": {
                "phase": "Running",
                "observedGeneration": observed_generation,
                "containerStatuses": [
                    {
                        "name": "main",
                        "image": "example.com/app:v1",
                        "containerID": "containerd://restarted-old-image",
                        "restartCount": 4,
                    }
                ],
            },
        }
    )
    assert not _runtime_changes_match(pod, {"main": "example.com/app:v1"}, {"main": "example.com/app:v2"}), GO


def test_annotations_diff_reserves_in_place_image_transition() -> None:
    """``TestAnnotationsDiffReservesInPlaceImageTransition``: the roll's own transition marker never
    enters the PodMeta diff, whatever the revisions say; ordinary keys still do."""
    pod = {MARKER: "controller-state", "example.com/release": "one"}
    previous = {MARKER: "old-user-value", "example.com/release": "one"}
    target = {MARKER: "forged-user-value", "example.com/release": "two"}
    assert annotations_diff(pod, previous, target) == {"example.com/release": "two"}, GO
