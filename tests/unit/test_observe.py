"""observe: the World from raw objects (render, revision, stored-revision pods, rotation, dependencies)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from omereconcile.cluster.observe import build_catalog, render_world, runners_from_payload
from omereconcile.planner.revisions import controller_revision
from omereconcile.settings import OperatorSettings
from omereconcile.world import DesiredRevision, Endpoints

REPO = Path(__file__).resolve().parents[2]
NOW = datetime(2025, 1, 1, tzinfo=UTC)


def _catalog_objs(image: str | None = None) -> list[dict[str, Any]]:
    objs = [yaml.safe_load(p.read_text()) for p in sorted((REPO / "examples" / "catalog").glob("*.yaml"))]
    if image:
        for o in objs:
            if o["kind"] == "ClusterServingRuntime":
                o["spec"]["engineConfig"]["runner"]["image"] = image
    return objs


def _replica(**spec: Any) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((REPO / "examples" / "llama-pool.yaml").read_text())
    doc["metadata"].update(uid="uid-1", generation=1, resourceVersion="5", finalizers=["ome.io/ir-teardown"])
    doc["spec"].update(spec)
    return doc


def _world(
    raw: dict[str, Any], objs: list[dict[str, Any]], revisions: list[dict[str, Any]] | None = None
) -> Any:
    return render_world(
        raw,
        pods=[],
        revisions=revisions or [],
        service=None,
        slices=[],
        catalog=build_catalog(objs),
        settings=OperatorSettings(),
        now=NOW,
    )


def test_a_pod_rebuilt_from_a_stored_revision_equals_the_pod_of_that_render() -> None:
    raw = _replica()
    old = _world(raw, _catalog_objs())
    assert isinstance(old.world.render, DesiredRevision)
    stored = controller_revision(old.world, old.world.render, 1)
    stored["data"] = json.loads(old.world.render.payload)
    # The runtime moved on; the stored revision still builds the old pod.
    new = _world(raw, _catalog_objs(image="vllm:new"), [stored])
    assert new.world.render.name != old.world.render.name
    rebuilt = new.world.pod_factory(old.world.render.name, 0, 1, "default", 0)
    original = old.world.pod_factory(old.world.render.name, 0, 1, "default", 0)
    # The stored payload is canonical (quantities as strings, as the API server returns them).
    assert _norm(rebuilt["spec"]) == _norm(original["spec"])
    assert rebuilt["metadata"]["labels"] == original["metadata"]["labels"]
    assert (
        new.world.pod_factory(new.world.render.name, 0, 1, "default", 1)["spec"]["containers"][0]["image"]
        == "vllm:new"
    )


def _norm(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_norm(v) for v in value]
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


def test_runners_from_payload_keeps_template_metadata() -> None:
    payload = {"podSpec": {"containers": [{"name": "c"}]}, "podMeta": {"labels": {"a": "b"}}}
    (runner,) = runners_from_payload(json.dumps(payload).encode())
    assert runner.name == "default"
    assert runner.template == {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c"}]}}


def test_a_missing_model_is_a_render_block_and_depends_on_every_model() -> None:
    obs = _world(_replica(modelRef={"name": "nope"}), _catalog_objs())
    assert obs.world.render.reason == "ModelNotFound"
    assert ("model", "*") in obs.deps


def test_a_rendered_replica_depends_on_its_model_and_runtime() -> None:
    obs = _world(_replica(), _catalog_objs())
    assert ("model", "llama-3-2-1b-instruct") in obs.deps
    assert ("runtime", "vllm-llama-3-2-1b-instruct") in obs.deps
    assert ("runtime", "*") in obs.deps  # auto-selected: any new runtime may win the selection


def test_in_rotation_reads_serving_when_the_service_publishes_not_ready_addresses() -> None:
    sl = {
        "endpoints": [
            {"targetRef": {"kind": "Pod", "name": "p"}, "conditions": {"ready": True, "serving": False}}
        ]
    }
    assert Endpoints.from_slices([sl]).by_pod["p"].ready is False
    sl["endpoints"][0]["conditions"]["serving"] = True
    assert Endpoints.from_slices([sl]).by_pod["p"].ready is True


def test_an_endpoint_without_a_ready_condition_is_presumed_routable() -> None:
    """discovery/v1: an absent (or null) ``conditions.ready`` means ready, as kube-proxy routes it;
    Go's ``drain.go`` @ dcfb4135 ``endpointIsReady``. A pod still routed must never count as drained."""
    for conditions in ({}, {"ready": None}, {"serving": True}):
        sl = {"endpoints": [{"targetRef": {"kind": "Pod", "name": "p"}, "conditions": conditions}]}
        view = Endpoints.from_slices([sl]).by_pod["p"]
        assert (view.ready, view.available) == (True, True), conditions
    sl = {"endpoints": [{"targetRef": {"name": "p"}, "conditions": {"ready": False}}]}
    view = Endpoints.from_slices([sl]).by_pod["p"]
    assert (view.ready, view.available) == (False, False)


def test_an_endpoint_targeting_another_namespace_is_not_the_pod() -> None:
    """Go's ``drain.go`` @ dcfb4135 ``endpointTargetsPod``: a ``targetRef.namespace`` must be empty or
    the pod's (the namespace the slices are listed in)."""

    def listed(ref_ns: str | None) -> bool:
        ref = {"kind": "Pod", "name": "p"} | ({"namespace": ref_ns} if ref_ns is not None else {})
        sl = {
            "metadata": {"name": "s", "namespace": "serving"},
            "endpoints": [{"targetRef": ref, "conditions": {"ready": True}}],
        }
        return "p" in Endpoints.from_slices([sl]).by_pod

    assert (listed(None), listed("serving"), listed("elsewhere")) == (True, True, False)


def test_a_stored_revision_with_html_and_non_ascii_characters_is_not_a_collision() -> None:
    objs = _catalog_objs()
    for o in objs:
        if o["kind"] == "ClusterServingRuntime":
            o["spec"]["engineConfig"]["runner"]["args"].append("--url=http://x/?a=1&b=<2>é")
    raw = _replica()
    first = _world(raw, objs)
    stored = controller_revision(first.world, first.world.render, 1)
    # As the API returns it: the request body (ASCII-escaped) decoded back into values.
    stored = json.loads(json.dumps(stored))
    again = _world(raw, objs, [stored])
    assert again.world.revisions[0].data == first.world.render.payload
    from omereconcile.planner import plan

    names = [type(a).__name__ for a in plan(again.world).actions]
    assert "CreateRevision" not in names
    assert all(getattr(a, "event_reason", "") != "RevisionCollision" for a in plan(again.world).actions)
