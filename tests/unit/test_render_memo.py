"""Renders memoized in the catalog give exactly what a render from scratch gives.

Replicas that share a memo key (namespace, component, modelRef, runtimeRef) but differ in everything
else a render may read (name, parentRef, labels, annotations, UID, generation) are rendered one after
another against one catalog, so all but the first may be served from its memo; each is compared with
its render against a catalog of its own, whose memo is empty. Runtimes with placeholders, pieces of
the wrong shape and blocked renders are among the inputs (the strategies of ``test_properties``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from omerender import Catalog, InferenceReplica, parse_object, render
from omerender.preview import preview, revision_of
from omerender.render.memo import memo_key
from omerender.revision import revision_payload
from tests.unit.test_properties import PROPERTY, annotations, labels, worlds

variants = st.lists(
    st.fixed_dictionaries(
        {
            "name": st.sampled_from(["r", "pool", "other-name"]),
            "uid": st.sampled_from(["", "uid-1", "uid-2"]),
            "generation": st.integers(1, 3),
            "labels": labels,
            "annotations": annotations,
            "parent": st.sampled_from([None, "chat", "svc"]),
        }
    ),
    min_size=2,
    max_size=4,
)


placeholder_args = st.lists(
    st.sampled_from(
        ["--a", "{{.Name}}", "{{ .Namespace }}", "{{.UID}}", "{{.Generation}}", "{{.Labels.team}}"]
    ),
    max_size=2,
)


def _runtime(
    kind: str, name: str, namespace: str | None, args: list[str], piece_labels: dict[str, str]
) -> Any:
    piece = {"runner": {"name": "ome-container", "image": f"img-{name}", "args": args}}
    if piece_labels:
        piece["labels"] = piece_labels
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": kind,
        "metadata": {"name": name, **({"namespace": namespace} if namespace else {})},
        "spec": {
            "supportedModelFormats": [{"modelFormat": {"name": "safetensors"}, "autoSelect": True}],
            "engineConfig": piece,
            "decoderConfig": piece,
        },
    }


def _model(kind: str, namespace: str | None) -> Any:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": kind,
        "metadata": {"name": "m", **({"namespace": namespace} if namespace else {})},
        "spec": {
            "modelFormat": {"name": "safetensors"},
            "storage": {"storageUri": "hf://org/m", "path": "/raid/m"},
        },
        "status": {"state": "Ready"},
    }


@st.composite
def renderable_worlds(draw: st.DrawFn) -> tuple[list[Any], list[Any]]:
    """Catalogs where most renders succeed, with placeholders in some runtimes' containers."""
    piece_labels = st.dictionaries(
        st.sampled_from(["team", "ome.io/inferenceservice"]), st.just("x"), max_size=1
    )
    objects = [
        _runtime("ClusterServingRuntime", name, None, draw(placeholder_args), draw(piece_labels))
        for name in ("rt-a", "rt-b")
    ]
    if draw(st.booleans()):
        objects.append(_runtime("ServingRuntime", "rt-a", "demo", draw(placeholder_args), draw(piece_labels)))
    objects.append(_model("ClusterBaseModel", None))
    if draw(st.booleans()):
        objects.append(_model("BaseModel", "other"))
    replicas = []
    for _ in range(draw(st.integers(1, 3))):
        spec: dict[str, Any] = {"component": draw(st.sampled_from(["engine", "decoder"]))}
        if draw(st.integers(0, 3)):
            spec["modelRef"] = {"name": "m", **draw(st.sampled_from([{}, {"kind": "BaseModel"}]))}
        if "modelRef" not in spec or draw(st.booleans()):
            spec["runtimeRef"] = draw(
                st.sampled_from(
                    [{"name": "rt-a"}, {"name": "rt-b"}, {"name": "rt-a", "kind": "ServingRuntime"}]
                )
            )
        namespace = draw(st.sampled_from(["demo", "other"]))
        replicas.append(
            {
                "apiVersion": "ome.io/v1beta1",
                "kind": "InferenceReplica",
                "metadata": {"name": "r", "namespace": namespace},
                "spec": spec,
            }
        )
    return replicas, objects


any_worlds = st.one_of(renderable_worlds(), worlds().map(lambda world: ([world[0]], world[1])))


def _variant(replica: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(replica)
    meta = out["metadata"]
    meta.update(name=change["name"], uid=change["uid"], generation=change["generation"])
    meta["labels"], meta["annotations"] = change["labels"], change["annotations"]
    meta.pop("ownerReferences", None)
    if change["parent"] is None:
        out["spec"].pop("parentRef", None)
    else:
        out["spec"]["parentRef"] = {"name": change["parent"]}
    return out


def _cases(
    world: tuple[list[Any], list[Any]], changes: list[dict[str, Any]]
) -> Iterator[tuple[InferenceReplica, Catalog, list[Any]]]:
    """(replica, the shared catalog, its objects) for every variant of every replica that parses."""
    originals, objects = world
    try:
        shared = Catalog.from_objects(objects)
    except Exception:
        return  # a catalog that does not build has nothing to memoize
    for raw in (_variant(replica, change) for replica in originals for change in changes):
        try:
            yield parse_object(InferenceReplica, raw), shared, objects
        except Exception:
            continue


@PROPERTY
@given(any_worlds, variants)
def test_memoized_renders_equal_renders_from_scratch(
    world: tuple[list[Any], list[Any]], changes: list[dict[str, Any]]
) -> None:
    for parsed, shared, objects in _cases(world, changes):
        try:
            warm: Any = render(parsed, shared)
        except Exception as error:
            warm = error
        try:
            cold: Any = render(parsed, Catalog.from_objects(objects))
        except Exception as error:
            cold = error
        if isinstance(cold, Exception):
            assert type(warm) is type(cold)
            assert str(warm) == str(cold)
            continue
        assert not isinstance(warm, Exception), warm
        assert [(r.name, r.size, r.template) for r in warm.runners] == [
            (r.name, r.size, r.template) for r in cold.runners
        ]
        assert (warm.source, warm.runtime_kind, warm.runtime_name, warm.model_name, warm.advisories) == (
            cold.source,
            cold.runtime_kind,
            cold.runtime_name,
            cold.model_name,
            cold.advisories,
        )
        assert warm.excluded_annotation_keys == cold.excluded_annotation_keys
        assert warm.replica is parsed


@PROPERTY
@given(any_worlds, variants)
def test_previews_through_the_memo_equal_previews_from_scratch(
    world: tuple[list[Any], list[Any]], changes: list[dict[str, Any]]
) -> None:
    # The revision (payload, hash, name), the pods and the Service, through a warm catalog and a cold one.
    for parsed, shared, objects in _cases(world, changes):
        outcomes = []
        for catalog in (shared, Catalog.from_objects(objects)):
            try:
                result = preview(parsed, catalog, instances=2)
            except Exception as error:
                outcomes.append((type(error).__name__, str(error)))
                continue
            outcomes.append(
                (
                    result.revision.payload,
                    result.revision.name,
                    result.pods,
                    result.pod_groups,
                    result.service,
                )
            )
        assert outcomes[0] == outcomes[1]


def test_a_hit_hands_out_fresh_templates() -> None:
    objects = [
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "ClusterServingRuntime",
            "metadata": {"name": "rt"},
            "spec": {"engineConfig": {"runner": {"name": "ome-container", "image": "img:1"}}},
        }
    ]
    catalog = Catalog.from_objects(objects)

    def replica(name: str) -> InferenceReplica:
        return parse_object(
            InferenceReplica,
            {
                "apiVersion": "ome.io/v1beta1",
                "kind": "InferenceReplica",
                "metadata": {"name": name, "namespace": "demo"},
                "spec": {"component": "engine", "runtimeRef": {"name": "rt"}},
            },
        )

    first = render(replica("a"), catalog)
    assert memo_key(replica("a")) == memo_key(replica("b"))
    first.runners[0].template["spec"]["containers"][0]["image"] = "changed by the caller"
    first.runners[0].template["metadata"]["labels"]["x"] = "y"
    second = render(replica("b"), catalog)
    assert second.runners[0].template["spec"]["containers"][0]["image"] == "img:1"
    assert "x" not in second.runners[0].template["metadata"]["labels"]
    assert second.runners[0].template["metadata"]["labels"]["ome.io/inferenceservice"] == "b"


def test_a_spec_changed_by_its_caller_hashes_as_changed() -> None:
    # Renders of one memo entry share the Go encoding of their pod spec, by the spec's exact bytes.
    catalog = Catalog.from_objects(
        [
            {
                "apiVersion": "ome.io/v1beta1",
                "kind": "ClusterServingRuntime",
                "metadata": {"name": "rt"},
                "spec": {"engineConfig": {"runner": {"name": "ome-container", "image": "img:1"}}},
            }
        ]
    )
    replica = parse_object(
        InferenceReplica,
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceReplica",
            "metadata": {"name": "a", "namespace": "demo", "uid": "u"},
            "spec": {"component": "engine", "runtimeRef": {"name": "rt"}},
        },
    )
    untouched = revision_of(render(replica, catalog))
    changed = render(replica, catalog)
    assert changed.encodings  # the entry's encoding is there to be reused
    changed.runners[0].template["spec"]["containers"][0]["image"] = "img:2"
    expected = revision_payload(pod_template=changed.runners[0].template, excluded_annotation_keys=set())
    assert revision_of(changed).payload == expected
    assert b"img:2" in expected
    assert revision_of(render(replica, catalog)) == untouched


def test_the_annotations_the_model_injection_reads_are_part_of_the_key() -> None:
    """Two replicas of one model and runtime, one annotated as serving merged weights: the memo must not
    hand the second the first's pods (UpdateVolumeMounts reads that annotation)."""
    objects = [
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "ClusterBaseModel",
            "metadata": {"name": "m"},
            "spec": {"modelFormat": {"name": "safetensors"}, "storage": {"path": "/models/m"}},
            "status": {"state": "Ready"},
        },
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "ClusterServingRuntime",
            "metadata": {"name": "rt"},
            "spec": {
                "supportedModelFormats": [{"modelFormat": {"name": "safetensors"}, "autoSelect": True}],
                "engineConfig": {"runner": {"name": "ome-container", "image": "i:1"}},
            },
        },
    ]
    catalog = Catalog.from_objects(objects)

    def replica(name: str, notes: dict[str, str]) -> InferenceReplica:
        meta = {"name": name, "namespace": "demo", "uid": f"u-{name}", "annotations": notes}
        body = {"component": "engine", "modelRef": {"name": "m"}, "runtimeRef": {"name": "rt"}}
        doc = {"apiVersion": "ome.io/v1beta1", "kind": "InferenceReplica", "metadata": meta, "spec": body}
        return parse_object(InferenceReplica, doc)

    plain = replica("a", {})
    merged = replica("b", {"ome.io/fine-tuned-serving-with-merged-weights": "true"})
    assert memo_key(plain) != memo_key(merged)
    first = render(plain, catalog).runners[0].template["spec"]["containers"][0]
    second = render(merged, catalog).runners[0].template["spec"]["containers"][0]
    assert [m["mountPath"] for m in first["volumeMounts"]] == ["/models/m"]
    assert "volumeMounts" not in second
