"""omerender.revision: the payload, hash, name, ControllerRevision and retention of 01-contract.md §9."""

from __future__ import annotations

import json
from typing import Any

import pytest

from omerender.gojson import GoJSONError, InvalidQuantityError
from omerender.revision import (
    controller_revision,
    fnv32a,
    hashed_annotations,
    hashed_labels,
    next_revision_number,
    payload_matches,
    revision_hash,
    revision_name,
    revision_payload,
    revisions_to_prune,
)

IMAGE = "registry.example.com/serving:v1"
# The fixture of OME's hash_stability_test.go (§9.3), keys deliberately out of Go order.
CONTAINER = {
    "resources": {"limits": {"memory": "4Gi", "cpu": "2"}},
    "env": [{"name": "MODEL_PATH", "value": "/models/base"}],
    "ports": [{"protocol": "TCP", "containerPort": 8080, "name": "http"}],
    "image": IMAGE,
    "name": "ome-container",
}
POD = {"spec": {"containers": [CONTAINER]}}
POD_WITH_META = {
    "metadata": {"labels": {"app.kubernetes.io/name": "engine"}, "annotations": {"example.com/tier": "gold"}},
    "spec": {"containers": [CONTAINER]},
}
WORKER = {"spec": {"containers": [{"name": "worker", "image": IMAGE}]}}
OWNER_UID = "11111111-2222-3333-4444-555555555555"


@pytest.mark.parametrize(
    ("kwargs", "hash_kwargs", "expected"),
    [
        pytest.param({"pod_template": POD}, {}, "c6697510", id="single-pod-no-meta"),
        pytest.param({"pod_template": POD_WITH_META}, {}, "82d844dd", id="single-pod-with-meta"),
        pytest.param({"pod_template": POD, "worker_template": WORKER}, {}, "d7a8a72f", id="leader-worker"),
        pytest.param(
            {"pod_template": POD, "worker_template": WORKER, "topology_key": "topology.kubernetes.io/zone"},
            {},
            "a1c83d4d",
            id="leader-worker-topology",
        ),
        pytest.param({"pod_template": POD}, {"collision_count": 1}, "8df83ecd", id="collision-count-1"),
        pytest.param({"pod_template": POD}, {"scope_uid": OWNER_UID}, "10b5fd04", id="owner-uid"),
    ],
)
def test_golden_hashes(kwargs: dict[str, Any], hash_kwargs: dict[str, Any], expected: str) -> None:
    assert revision_hash(revision_payload(**kwargs), **hash_kwargs) == expected


MINIMAL = {"metadata": {}, "spec": {"containers": [{"name": "ome-container", "image": IMAGE}]}}
GOLDEN_BYTES = (
    b'{"podSpec":{"containers":[{"name":"ome-container","image":"registry.example.com/serving:v1",'
    b'"resources":{}}]},"podMeta":null}'
)


def test_golden_bytes() -> None:
    assert revision_payload(pod_template=MINIMAL) == GOLDEN_BYTES


def test_golden_bytes_with_pairing_protocol() -> None:
    assert revision_payload(pod_template=MINIMAL, pairing_protocol="nixl-v2") == (
        GOLDEN_BYTES[:-1] + b',"pairingProtocol":"nixl-v2"}'
    )


def test_pod_meta_shape() -> None:
    payload = revision_payload(pod_template=POD_WITH_META)
    assert payload.endswith(
        b',"podMeta":{"creationTimestamp":null,"labels":{"app.kubernetes.io/name":"engine"},'
        b'"annotations":{"example.com/tier":"gold"}}}'
    )
    only_labels = {"metadata": {"labels": {"b": "2", "a": None}}, "spec": {}}
    assert revision_payload(pod_template=only_labels) == (
        b'{"podSpec":{"containers":null},"podMeta":{"creationTimestamp":null,"labels":{"a":"","b":"2"}}}'
    )
    empty = {"metadata": {"labels": {}, "annotations": {}, "name": "ignored"}, "spec": {}}
    assert revision_payload(pod_template=empty) == b'{"podSpec":{"containers":null},"podMeta":null}'


def test_topology_key_needs_a_worker_and_empty_values_are_omitted() -> None:
    assert revision_payload(pod_template=POD, topology_key="zone") == revision_payload(pod_template=POD)
    with_worker = revision_payload(pod_template=POD, worker_template=WORKER, topology_key="")
    assert b"topologyKey" not in with_worker
    assert revision_payload(pod_template=POD, pairing_protocol="") == revision_payload(pod_template=POD)
    assert revision_payload(pod_template=MINIMAL, worker_template={}) == (
        GOLDEN_BYTES[:-1] + b',"workerPodSpec":{"containers":null}}'
    )


def test_only_the_leader_metadata_is_hashed() -> None:
    worker = {"metadata": {"labels": {"role": "worker"}}, **WORKER}
    assert revision_payload(pod_template=POD, worker_template=worker) == revision_payload(
        pod_template=POD, worker_template=WORKER
    )


def test_annotation_filtering() -> None:
    annotations = {
        "ome.io/migration-request-v1-7": "x",
        "ome.io/rollout-paused": "true",
        "ome.io/rollout-promote": "1",
        "ome.io/rollout-rollback": "1",
        "ome.io/rollout-other": "kept",
        "inherited.example/key": "dropped",
        "example.com/tier": "gold",
    }
    assert hashed_annotations(annotations, {"inherited.example/key"}) == {
        "ome.io/rollout-other": "kept",
        "example.com/tier": "gold",
    }
    pod = {"metadata": {"annotations": annotations}, "spec": {}}
    payload = revision_payload(pod_template=pod, excluded_annotation_keys=["inherited.example/key"])
    assert b"rollout-paused" not in payload
    assert b"migration" not in payload
    assert b"inherited" not in payload
    assert b'"ome.io/rollout-other":"kept"' in payload
    # Pausing a rollout does not change the revision.
    paused = {"metadata": {"annotations": {"ome.io/rollout-paused": "true"}}, "spec": {}}
    assert revision_payload(pod_template=paused) == revision_payload(pod_template={"spec": {}})


def test_derived_labels_and_the_local_queue_annotation_are_not_hashed() -> None:
    labels = {
        "kueue.x-k8s.io/queue-name": "team-a",
        "kueue.x-k8s.io/priority-class": "high",
        "ome.io/placement-origin": "src",
        "ome.io/placement-control-plane": "cp-1",
        "app": "llama",
    }
    assert hashed_labels(labels) == {"app": "llama"}
    pod = {"metadata": {"labels": labels, "annotations": {"ome.io/local-queue": "q"}}, "spec": {}}
    plain = {"metadata": {"labels": {"app": "llama"}}, "spec": {}}
    assert revision_payload(pod_template=pod) == revision_payload(pod_template=plain)
    # Only derived metadata left: TemplateMeta returns nil and podMeta is null.
    derived_only = {"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "q"}}, "spec": {}}
    assert b'"podMeta":null' in revision_payload(pod_template=derived_only)


def test_payload_matches_compares_bytes_as_go_does() -> None:
    payload = revision_payload(pod_template=POD)
    decoded = json.loads(payload)
    assert payload_matches(decoded, payload)
    assert payload_matches({"raw": payload.decode()}, payload)
    reordered = dict(reversed(list(decoded.items())))
    assert reordered == decoded
    assert not payload_matches(reordered, payload)  # same content, other bytes: a collision for Go


def test_annotations_stay_untouched() -> None:
    pod = {"metadata": {"annotations": {"ome.io/rollout-paused": "true"}}, "spec": {"containers": []}}
    before = json.dumps(pod)
    revision_payload(pod_template=pod)
    assert json.dumps(pod) == before


def test_canonicalisation_makes_equivalent_templates_hash_alike() -> None:
    a = {
        "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "2000m", "memory": "1024Mi"}}}]}
    }
    b = {
        "spec": {"containers": [{"resources": {"limits": {"memory": "1Gi", "cpu": 2}}, "name": "c", "x": 1}]}
    }
    assert revision_payload(pod_template=a) == revision_payload(pod_template=b)


def test_errors_carry_the_template_path() -> None:
    pod = {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "two"}}}]}}
    with pytest.raises(InvalidQuantityError) as info:
        revision_payload(pod_template=pod)
    assert info.value.path == ("podTemplate", "spec", "containers", 0, "resources", "limits", "cpu")
    with pytest.raises(GoJSONError) as meta_info:
        revision_payload(pod_template={"metadata": {"labels": {"a": 1}}, "spec": {}})
    assert meta_info.value.path[:3] == ("podTemplate", "metadata", "labels")
    with pytest.raises(GoJSONError) as worker_info:
        revision_payload(pod_template=POD, worker_template={"spec": {"containers": 3}})
    assert worker_info.value.path == ("workerTemplate", "spec", "containers")
    with pytest.raises(GoJSONError):
        revision_payload(pod_template={"metadata": {"generation": "x"}, "spec": {}})
    with pytest.raises(GoJSONError):
        revision_payload(pod_template=["not", "a", "template"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("data", "expected"),
    [(b"", 0x811C9DC5), (b"a", 0xE40C292C), (b"foobar", 0xBF9CF968), (b"0123456789abcdefX", None)],
)
def test_fnv32a(data: bytes, expected: int | None) -> None:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    assert fnv32a(data) == h
    if expected is not None:
        assert fnv32a(data) == expected


def test_hash_format() -> None:
    h = revision_hash(b"{}", collision_count=7, scope_uid="u")
    assert len(h) == 8
    assert h == h.lower()
    assert all(c in "0123456789abcdef" for c in h)
    assert revision_hash(b"{}") != revision_hash(b"{}", scope_uid="u")


def test_revision_name() -> None:
    assert revision_name("llama-pool", "engine", "c6697510") == "llama-pool-engine-c6697510"


OWNER = {"apiVersion": "ome.io/v1beta1", "kind": "InferenceReplica", "name": "llama-pool", "uid": "uid-1"}


def test_controller_revision_object() -> None:
    payload = revision_payload(pod_template=MINIMAL, pairing_protocol="nixl-v2")
    h = revision_hash(payload, scope_uid="uid-1")
    name = revision_name("llama-pool", "engine", h)
    cr = controller_revision(
        name=name,
        namespace="demo",
        prefix="llama-pool",
        component="engine",
        owner=OWNER,
        payload=payload,
        revision=3,
        pairing_protocol="nixl-v2",
    )
    assert cr == {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": name,
            "namespace": "demo",
            "labels": {
                "ome.io/inferenceservice": "llama-pool",
                "component": "engine",
                "ome.io/managed-by": "OMENative",
            },
            "annotations": {"ome.io/pairing-protocol": "nixl-v2"},
            "ownerReferences": [
                {
                    "apiVersion": "ome.io/v1beta1",
                    "kind": "InferenceReplica",
                    "name": "llama-pool",
                    "uid": "uid-1",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "data": json.loads(payload),
        "revision": 3,
    }
    # The data round-trips to the same bytes (Go order is kept by the decoded dict).
    assert json.dumps(cr["data"], separators=(",", ":")).encode() == payload
    assert payload_matches(cr["data"], payload)
    assert not payload_matches(json.loads(GOLDEN_BYTES), payload)


def test_controller_revision_without_protocol_has_no_annotation() -> None:
    cr = controller_revision(
        name="n",
        namespace="ns",
        prefix="p",
        component="router",
        owner=OWNER,
        payload=GOLDEN_BYTES,
        revision=1,
        pairing_protocol=None,
    )
    assert "annotations" not in cr["metadata"]


def _rev(name: str, number: Any, created: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if created is not None:
        meta["creationTimestamp"] = created
    return {"metadata": meta, "revision": number}


def test_next_revision_number() -> None:
    assert next_revision_number([]) == 1
    assert next_revision_number([_rev("a", 1), _rev("b", 5), _rev("c", 2)]) == 6
    assert next_revision_number([_rev("a", None), {"metadata": {"name": "x"}}]) == 1
    assert next_revision_number(iter([_rev("a", 3)])) == 4


def test_revisions_to_prune_keeps_live_and_most_recent() -> None:
    revisions = [_rev(f"r{i}", i) for i in range(1, 9)]
    live = {"r2", "r8"}  # an old Instance still runs r2; r8 is current
    # Non-live: r1 r3 r4 r5 r6 r7; keep the 3 most recent (r5 r6 r7), delete oldest first.
    assert revisions_to_prune(revisions, live, 3) == ["r1", "r3", "r4"]
    assert revisions_to_prune(revisions, live, 0) == ["r1", "r3", "r4", "r5", "r6", "r7"]
    assert revisions_to_prune(revisions, live, 6) == []
    assert revisions_to_prune(revisions, live, 100) == []
    assert revisions_to_prune(revisions, live, None) == []
    assert revisions_to_prune(revisions, {f"r{i}" for i in range(1, 9)}, 0) == []


def test_revisions_to_prune_ties_and_bad_input() -> None:
    revisions = [
        _rev("b", 1, "2024-01-02T00:00:00Z"),
        _rev("a", 1, "2024-01-02T00:00:00Z"),
        _rev("c", 1, "2024-01-01T00:00:00Z"),
        _rev("d", 2),
    ]
    assert revisions_to_prune(revisions, (), 1) == ["c", "a", "b"]
    with pytest.raises(ValueError, match=">= 0"):
        revisions_to_prune(revisions, (), -1)
    with pytest.raises(ValueError, match=r"metadata\.name"):
        revisions_to_prune([{"revision": 1}], (), 0)
