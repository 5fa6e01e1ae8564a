"""The preview: render + revision (01 §9) + what OME creates (Service, ControllerRevision, PodGroups, pods)."""

from __future__ import annotations

from typing import Any

import pytest

from omerender.catalog import Catalog
from omerender.errors import BlockReason, RenderBlocked
from omerender.models import InferenceReplica, parse_object
from omerender.preview import preview, revision_of, scope_uid
from omerender.render import render

NS = "demo"
UID = "11111111-2222-3333-4444-555555555555"
ISVC_UID = "99999999-0000-0000-0000-000000000000"
CONTAINER = {"name": "ome-container", "image": "registry.example.com/serving:v1"}


def template(
    labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    tpl: dict[str, Any] = {"spec": {"containers": [dict(CONTAINER)]}}
    metadata = {k: v for k, v in (("labels", labels), ("annotations", annotations)) if v}
    if metadata:
        tpl["metadata"] = metadata
    return tpl


def isvc_owner(*, controller: bool = True, api_version: str = "ome.io/v1beta1") -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": "InferenceService",
        "name": "chat",
        "uid": ISVC_UID,
        "controller": controller,
    }


def replica(
    spec: dict[str, Any] | None = None,
    *,
    name: str = "pool",
    uid: str = UID,
    owners: list[dict[str, Any]] | None = None,
    annotations: dict[str, str] | None = None,
    collision_count: int | None = None,
) -> InferenceReplica:
    metadata: dict[str, Any] = {"name": name, "namespace": NS, "uid": uid}
    if owners:
        metadata["ownerReferences"] = owners
    if annotations:
        metadata["annotations"] = annotations
    obj: dict[str, Any] = {
        "metadata": metadata,
        "spec": spec
        or {"component": "engine", "runners": [{"name": "default", "size": 1, "template": template()}]},
    }
    if collision_count is not None:
        obj["status"] = {"collisionCount": collision_count}
    return parse_object(InferenceReplica, obj)


def gang_spec(worker: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "component": "engine",
        "runners": [
            {"name": "leader", "size": 1, "template": template()},
            {"name": "worker", "size": 2, "template": worker or template()},
        ],
        **extra,
    }


def refs_catalog(image: str = "img:1", **piece: Any) -> Catalog:
    runtime = {
        "kind": "ClusterServingRuntime",
        "metadata": {"name": "rt"},
        "spec": {"engineConfig": {"runner": {"name": "ome-container", "image": image}, **piece}},
    }
    return Catalog.from_objects([runtime], strict=False)  # a minimal runtime, no apiVersion


REFS = {"component": "engine", "runtimeRef": {"name": "rt"}}


# -- scope UID -----------------------------------------------------------------------------------


def test_standalone_scope_is_its_own_uid() -> None:
    assert scope_uid(replica()) == UID


def test_projected_scope_is_the_inference_service_controller_uid() -> None:
    rep = replica(owners=[isvc_owner()])
    assert scope_uid(rep) == ISVC_UID
    assert revision_of(render(rep, Catalog())).scope_uid == ISVC_UID


@pytest.mark.parametrize(
    "owner",
    [isvc_owner(controller=False), isvc_owner(api_version="serving.kserve.io/v1beta1")],
    ids=["not-controller", "other-group"],
)
def test_other_owner_references_leave_the_replica_standalone(owner: dict[str, Any]) -> None:
    assert scope_uid(replica(owners=[owner])) == UID


def test_inference_service_version_does_not_matter() -> None:
    assert scope_uid(replica(owners=[isvc_owner(api_version="ome.io/v2")])) == ISVC_UID


# -- revision identity ---------------------------------------------------------------------------


def test_revision_name_is_prefix_component_hash() -> None:
    info = revision_of(render(replica(), Catalog()))
    assert len(info.hash) == 8
    assert int(info.hash, 16) >= 0
    assert info.name == f"pool-engine-{info.hash}"
    projected = revision_of(render(replica(gang_spec(parentRef={"name": "chat"})), Catalog()))
    assert projected.name == f"chat-engine-{projected.hash}"


def test_canonical_bytes_of_the_spec_fixture() -> None:
    # 01 §9.3: the single-container fixture without metadata.
    info = revision_of(render(replica(), Catalog()))
    assert info.payload == (
        b'{"podSpec":{"containers":[{"name":"ome-container","image":"registry.example.com/serving:v1",'
        b'"resources":{}}]},"podMeta":null}'
    )


def test_uid_and_collision_count_change_the_name_but_not_the_payload() -> None:
    base = revision_of(render(replica(), Catalog()))
    other_uid = revision_of(render(replica(uid="another"), Catalog()))
    bumped = revision_of(render(replica(collision_count=1), Catalog()))
    assert base.payload == other_uid.payload == bumped.payload
    assert len({base.name, other_uid.name, bumped.name}) == 3
    assert bumped.collision_count == 1
    assert base.collision_count == 0


def test_collision_count_argument_overrides_the_status() -> None:
    from_status = revision_of(render(replica(collision_count=2), Catalog()))
    explicit = revision_of(render(replica(), Catalog()), collision_count=2)
    assert from_status.name == explicit.name
    assert (
        revision_of(render(replica(collision_count=2), Catalog()), collision_count=0).name
        == revision_of(render(replica(), Catalog())).name
    )


def test_pairing_protocol_enters_the_payload_even_single_pod() -> None:
    spec = {
        "component": "engine",
        "pairingProtocol": "nixl-v2",
        "runners": [{"name": "default", "size": 1, "template": template()}],
    }
    info = revision_of(render(replica(spec), Catalog()))
    assert info.payload.endswith(b',"podMeta":null,"pairingProtocol":"nixl-v2"}')


def test_topology_key_counts_only_with_a_worker() -> None:
    single = {
        "component": "engine",
        "topologyKey": "zone",
        "runners": [{"name": "default", "size": 1, "template": template()}],
    }
    assert b"topologyKey" not in revision_of(render(replica(single), Catalog())).payload
    with_key = revision_of(render(replica(gang_spec(topologyKey="zone")), Catalog()))
    without = revision_of(render(replica(gang_spec()), Catalog()))
    assert with_key.payload.endswith(b'"topologyKey":"zone"}')
    assert b"workerPodSpec" in without.payload
    assert with_key.name != without.name


def test_worker_metadata_is_not_hashed() -> None:
    # 01 §9.1 / §11.4: only the default or leader template's metadata enters the payload.
    plain = revision_of(render(replica(gang_spec()), Catalog()))
    labelled = revision_of(render(replica(gang_spec(worker=template(labels={"x": "y"}))), Catalog()))
    assert plain.payload == labelled.payload


def test_a_template_change_mints_a_new_revision() -> None:
    before = revision_of(render(replica(REFS), refs_catalog("img:1")))
    after = revision_of(render(replica(REFS), refs_catalog("img:2")))
    assert before.name != after.name
    annotated = revision_of(render(replica(REFS), refs_catalog("img:1", annotations={"a": "b"})))
    assert annotated.name != before.name


def test_refs_replica_annotations_ride_on_pods_but_stay_out_of_the_hash() -> None:
    quiet = preview(replica(REFS), refs_catalog(), instances=1)
    noisy = preview(replica(REFS, annotations={"example.com/contact": "me"}), refs_catalog(), instances=1)
    assert quiet.revision.payload == noisy.revision.payload
    assert noisy.pods[0]["metadata"]["annotations"]["example.com/contact"] == "me"


def test_runners_template_annotations_count_except_rollout_controls() -> None:
    def name(annotations: dict[str, str]) -> str:
        spec = {
            "component": "engine",
            "runners": [{"name": "default", "size": 1, "template": template(annotations=annotations)}],
        }
        return revision_of(render(replica(spec), Catalog())).name

    base = name({"keep": "1"})
    assert name({"keep": "2"}) != base
    ignored = {
        "keep": "1",
        "ome.io/rollout-paused": "true",
        "ome.io/rollout-promote": "x",
        "ome.io/rollout-rollback": "y",
        "ome.io/migration-request-v1-123": "{}",
    }
    assert name(ignored) == base


def test_projected_replica_excludes_the_listed_annotation_keys() -> None:
    def name(value: str) -> str:
        spec = {
            "component": "engine",
            "parentRef": {"name": "chat"},
            "runners": [
                {
                    "name": "default",
                    "size": 1,
                    "template": template(annotations={"isvc/note": value, "keep": "1"}),
                }
            ],
        }
        rep = replica(
            spec,
            owners=[isvc_owner()],
            annotations={"ome.io/revision-excluded-annotation-keys": "isvc/note, other"},
        )
        return revision_of(render(rep, Catalog())).name

    assert name("a") == name("b")


def test_projected_by_owner_reference_alone_excludes_the_listed_keys() -> None:
    def name(value: str) -> str:
        spec = {
            "component": "engine",
            "runners": [
                {"name": "default", "size": 1, "template": template(annotations={"isvc/note": value})}
            ],
        }
        rep = replica(
            spec, owners=[isvc_owner()], annotations={"ome.io/revision-excluded-annotation-keys": "isvc/note"}
        )
        return revision_of(render(rep, Catalog())).name

    assert name("a") == name("b")


# -- what OME would create -----------------------------------------------------------------------


def test_stamps_never_enter_the_revision() -> None:
    none = preview(replica(), Catalog(), instances=0)
    many = preview(
        replica(
            {
                "component": "engine",
                "replicas": 3,
                "runners": [{"name": "default", "size": 1, "template": template()}],
            }
        ),
        Catalog(),
        instances=3,
    )
    assert none.revision.payload == many.revision.payload
    assert none.revision.name == many.revision.name
    assert none.pods == ()


def test_pods_of_the_first_instances() -> None:
    result = preview(replica(), Catalog(), instances=2)
    assert [p["metadata"]["name"] for p in result.pods] == [
        "pool-engine-0-default-0",
        "pool-engine-1-default-0",
    ]
    for pod in result.pods:
        assert pod["metadata"]["labels"]["ome.io/revision-hash"] == result.revision.hash
    assert result.pod_groups == ()


def test_planned_replicas_is_the_larger_of_spec_and_instances() -> None:
    def replicas_env(spec_replicas: int | None, instances: int) -> str:
        spec: dict[str, Any] = {
            "component": "engine",
            "runners": [{"name": "default", "size": 1, "template": template()}],
        }
        if spec_replicas is not None:
            spec["replicas"] = spec_replicas
        pod = preview(replica(spec), Catalog(), instances=instances).pods[0]
        env = {v["name"]: v["value"] for v in pod["spec"]["containers"][0]["env"]}
        return str(env["OME_COMPONENT_REPLICAS"])

    assert replicas_env(None, 1) == "1"
    assert replicas_env(0, 1) == "1"
    assert replicas_env(4, 1) == "4"
    assert replicas_env(1, 3) == "3"


def test_multi_pod_instances_get_pod_groups() -> None:
    result = preview(
        replica(gang_spec(topologyKey="zone")), Catalog(), instances=2, instance_ready_timeout_seconds=900
    )
    assert [g["metadata"]["name"] for g in result.pod_groups] == ["pool-engine-0", "pool-engine-1"]
    assert {g["spec"]["minMember"] for g in result.pod_groups} == {3}
    # The ready timeout as it is: Go clamps only within bounds the operator configures (podgroup.go).
    assert {g["spec"]["scheduleTimeoutSeconds"] for g in result.pod_groups} == {900}
    assert len(result.pods) == 6


def test_headless_service_and_controller_revision() -> None:
    result = preview(
        replica(
            {
                "component": "decoder",
                "pairingProtocol": "nixl-v2",
                "runners": [{"name": "default", "size": 1, "template": template()}],
            }
        ),
        Catalog(),
    )
    assert result.service["metadata"]["name"] == "pool-decoder-headless"
    revision = result.controller_revision
    assert revision["apiVersion"] == "apps/v1"
    assert revision["kind"] == "ControllerRevision"
    assert revision["metadata"]["name"] == result.revision.name
    assert revision["metadata"]["namespace"] == NS
    assert revision["metadata"]["labels"] == {
        "ome.io/inferenceservice": "pool",
        "component": "decoder",
        "ome.io/managed-by": "OMENative",
    }
    assert revision["metadata"]["ownerReferences"][0]["uid"] == UID
    assert revision["metadata"]["annotations"] == {"ome.io/pairing-protocol": "nixl-v2"}
    assert revision["revision"] == 1


def test_a_blocked_render_blocks_the_preview() -> None:
    with pytest.raises(RenderBlocked) as info:
        preview(replica({"component": "engine"}), Catalog(), instances=1)
    assert info.value.reason is BlockReason.TEMPLATE_SOURCE_MISSING
