"""OME's ``workload/ops/template_test.go``: which template a pod of a given revision is built from.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/template_test.go`` @ 58a57f25 (11,353
characters, the one stored version, read whole), over ``ops/template.go`` ``desiredTemplate``,
``storedTemplate`` and ``pinnedTemplate``. Go pairs the current template with the roll target, and
builds any other revision from its ControllerRevision: its pod specs, its pairing protocol and its
labels and annotations, where a key the roll target hashes takes the stored revision's value (absent
if the stored revision does not record it) and a key no revision hashes (Kueue's queue label, an
inherited annotation) keeps following the current template. Ours: the executor's pod factory
(``omereconcile/cluster/observe.py`` ``render_world``'s ``factory``, over ``runners_from_payload`` and
``omerender.stamps.materialize_pod``), driven here through ``render_world`` with the example catalog.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from omereconcile.cluster.observe import Observation, build_catalog, render_world
from omereconcile.planner.revisions import controller_revision
from omereconcile.settings import OperatorSettings
from omereconcile.world import DesiredRevision

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/template_test.go @ 58a57f25"
REPO = Path(__file__).resolve().parents[2]
NOW = datetime(2025, 1, 1, tzinfo=UTC)
QUEUE = "kueue.x-k8s.io/queue-name"
PROTOCOL = "ome.io/pairing-protocol"
CURRENT_LABELS = {"tier": "v2", "release": "v2", QUEUE: "team-a"}


def _objs(labels: dict[str, str]) -> list[dict[str, Any]]:
    """The example catalog, its runtime's engine template carrying ``labels`` and Go's current
    annotations (``templateTestInput``)."""
    objs = [yaml.safe_load(p.read_text()) for p in sorted((REPO / "examples" / "catalog").glob("*.yaml"))]
    for o in objs:
        if o["kind"] == "ClusterServingRuntime":
            o["spec"]["engineConfig"]["labels"] = dict(labels)
            o["spec"]["engineConfig"]["annotations"] = {"note": "v2", "example.com/build": "v2"}
    return objs


def _replica() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((REPO / "examples" / "llama-pool.yaml").read_text())
    doc["metadata"].update(uid="uid-1", generation=1, resourceVersion="5", finalizers=["ome.io/ir-teardown"])
    doc["spec"]["pairingProtocol"] = "proto-v2"
    return doc


def _world(labels: dict[str, str], revisions: list[dict[str, Any]] | None = None) -> Observation:
    return render_world(
        _replica(),
        pods=[],
        revisions=revisions or [],
        service=None,
        slices=[],
        catalog=build_catalog(_objs(labels)),
        settings=OperatorSettings(),
        now=NOW,
    )


def _stored(
    obs: Observation, payload: dict[str, Any], labels: dict[str, str] = CURRENT_LABELS
) -> tuple[Observation, str]:
    """Go's ``storedPayloadRevision``: a ControllerRevision of this replica recording ``payload``
    (over the current render's, so it is one this replica could have minted), with the world
    observed again holding it."""
    desired = obs.world.render
    assert isinstance(desired, DesiredRevision)
    obj = controller_revision(obs.world, desired, 1)
    data = json.loads(desired.payload)
    data.pop("podMeta", None)
    data.pop("pairingProtocol", None)
    data.update(payload)
    obj["data"] = data
    name = desired.name.rsplit("-", 1)[0] + "-0000v1aa"
    obj["metadata"]["name"] = name
    return _world(labels, [obj]), name


def _target(obs: Observation) -> str:
    desired = obs.world.render
    assert isinstance(desired, DesiredRevision)
    return desired.name


def _v1_spec(obs: Observation) -> dict[str, Any]:
    desired = obs.world.render
    assert isinstance(desired, DesiredRevision)
    spec: dict[str, Any] = json.loads(desired.payload)["podSpec"]
    spec["containers"][0]["image"] = "registry.example.com/runtime:v1"
    return spec


def _meta(pod: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    return dict(pod["metadata"].get("labels") or {}), dict(pod["metadata"].get("annotations") or {})


def test_desired_template_pairs_the_current_template_with_the_given_revision() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/template_test.go @ 58a57f25,
    TestDesiredTemplate_PairsTheCurrentTemplateWithTheGivenRevision: the roll target's pod is the
    current template (its spec, its metadata, its pairing protocol) stamped with the target's
    revision. (Go's unstamped template, a zero revision, is its internal value; ours always stamps.)"""
    obs = _world(CURRENT_LABELS)
    pod = obs.world.pod_factory(_target(obs), 0, 1, "default", 0)
    labels, annotations = _meta(pod)
    assert {k: labels.get(k) for k in CURRENT_LABELS} == CURRENT_LABELS, GO
    assert (annotations["note"], annotations["example.com/build"]) == ("v2", "v2")
    assert labels[PROTOCOL] == "proto-v2"
    assert labels["ome.io/revision-hash"] == _target(obs).rsplit("-", 1)[-1]


def test_stored_template_renders_the_revision_it_names() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/template_test.go @ 58a57f25,
    TestStoredTemplate_RendersTheRevisionItNames: a stored revision's pod has its recorded template
    and pairing protocol; a hashed key takes the stored value, a hashed key it does not record is
    absent although the current template carries it, and the queue label follows the current
    template."""
    obs = _world(CURRENT_LABELS)
    payload = {
        "podSpec": _v1_spec(obs),
        "podMeta": {"labels": {"tier": "v1", "cohort": "stable"}, "annotations": {"note": "v1"}},
        "pairingProtocol": "proto-v1",
    }
    again, name = _stored(obs, payload)
    pod = again.world.pod_factory(name, 0, 1, "default", 0)
    assert pod["spec"]["containers"][0]["image"] == "registry.example.com/runtime:v1", GO
    labels, annotations = _meta(pod)
    assert (labels.get("tier"), labels.get("cohort"), "release" in labels) == ("v1", "stable", False)
    assert (annotations.get("note"), "example.com/build" in annotations) == ("v1", False)
    assert labels.get(QUEUE) == "team-a", GO
    assert labels.get(PROTOCOL) == "proto-v1", GO


def test_stored_template_revision_without_metadata_renders_none_of_the_targets() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/template_test.go @ 58a57f25,
    TestStoredTemplate_RevisionWithoutMetadataRendersNoneOfTheTargets: a revision minted before the
    template carried metadata renders none of the target's hashed keys and still carries the keys no
    revision hashes (the queue label)."""
    obs = _world(CURRENT_LABELS)
    again, name = _stored(obs, {"podSpec": _v1_spec(obs)})
    labels, annotations = _meta(again.world.pod_factory(name, 0, 1, "default", 0))
    assert not {"tier", "release"} & set(labels), GO
    assert not {"note", "example.com/build"} & set(annotations), GO
    assert labels.get(QUEUE) == "team-a", GO


def test_stored_template_target_without_metadata_every_unrecorded_key_follows() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/template_test.go @ 58a57f25,
    TestStoredTemplate_WithoutATargetEveryUnrecordedKeyFollowsTheTemplate, entry "target without
    metadata": a target that hashes no metadata (here the current template carries only the queue
    label) lets every current key the stored revision does not record follow the current template.
    (Entry "no target" is not mappable: ours builds from a stored revision without a target only
    when the render is blocked, and then there is no current template.)"""
    obs = _world({QUEUE: "team-a"})
    payload = {"podSpec": _v1_spec(obs), "podMeta": {"labels": {"tier": "v1"}}}
    again, name = _stored(obs, payload, {QUEUE: "team-a"})
    labels, _ = _meta(again.world.pod_factory(name, 0, 1, "default", 0))
    assert (labels.get("tier"), labels.get(QUEUE)) == ("v1", "team-a"), GO


def test_pinned_template_reads_only_when_the_pin_is_not_the_target() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/template_test.go @ 58a57f25,
    TestPinnedTemplate_ReadsOnlyWhenThePinIsNotTheTarget: a pin on the roll target is the current
    template; any other pin is its stored revision, and one minted without a pairing protocol renders
    none."""
    obs = _world(CURRENT_LABELS)
    again, name = _stored(obs, {"podSpec": _v1_spec(obs)})
    on_target = again.world.pod_factory(_target(again), 0, 1, "default", 0)
    pinned = again.world.pod_factory(name, 0, 1, "default", 0)
    assert on_target["spec"]["containers"][0]["image"] != "registry.example.com/runtime:v1"
    assert pinned["spec"]["containers"][0]["image"] == "registry.example.com/runtime:v1", GO
    assert PROTOCOL not in pinned["metadata"]["labels"], GO


def test_stored_template_gone_or_empty_revision_is_not_the_current_template() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/template_test.go @ 58a57f25,
    TestStoredTemplate_GoneOrEmptyRevisionIsNotTheCurrentTemplate: a revision with no
    ControllerRevision left is not found, never substituted by the current template (ours: the
    factory raises ``LookupError``); one whose payload records no pod template is an error."""
    obs = _world(CURRENT_LABELS)
    with pytest.raises(LookupError):
        obs.world.pod_factory(_target(obs).rsplit("-", 1)[0] + "-0000gone", 0, 1, "default", 0)
    desired = obs.world.render
    assert isinstance(desired, DesiredRevision)
    empty = controller_revision(obs.world, desired, 1)
    empty["data"] = {}
    empty["metadata"]["name"] = desired.name.rsplit("-", 1)[0] + "-0000empty"
    again = _world(CURRENT_LABELS, [empty])
    with pytest.raises((KeyError, LookupError, ValueError, TypeError)):  # Go: any error
        again.world.pod_factory(empty["metadata"]["name"], 0, 1, "default", 0)
