"""OME's ``inferencereplica/revision_exclude_test.go``, entry by entry, through ``omerender.preview``.

Go: ome-projects/ome ``pkg/controller/v1beta1/inferencereplica/revision_exclude_test.go`` @
ae683e3f32426d6fc13a63130053c82cdf499a87. Go hashes a ``PodTemplateObjectMeta`` directly; here that
metadata is the ``metadata`` of a stored runner's template (a runners replica hashes its templates as
they are), and the hash is the revision name :func:`omerender.preview` predicts.
"""

from __future__ import annotations

from typing import Any

import pytest

from omerender import Catalog, InferenceReplica, parse_object, preview, render

GO_PATH = "ome-projects/ome pkg/controller/v1beta1/inferencereplica/revision_exclude_test.go @ ae683e3f"
EXCLUDED = "ome.io/revision-excluded-annotation-keys"
INHERITED = "editor.example.com/resource-version"


def _replica(
    template_meta: dict[str, Any] | None,
    annotations: dict[str, str] | None = None,
    *,
    projected: bool = False,
) -> InferenceReplica:
    template: dict[str, Any] = {"spec": {"containers": [{"name": "c", "image": "img:1"}]}}
    if template_meta is not None:
        template["metadata"] = template_meta
    metadata: dict[str, Any] = {"name": "engine", "namespace": "default", "uid": "ir-uid", "generation": 1}
    if annotations:
        metadata["annotations"] = annotations
    if projected:
        metadata["ownerReferences"] = [
            {
                "apiVersion": "ome.io/v1beta1",
                "kind": "InferenceService",
                "name": "svc",
                "uid": "ir-uid",
                "controller": True,
            }
        ]
    spec = {"component": "engine", "runners": [{"name": "default", "size": 1, "template": template}]}
    return parse_object(
        InferenceReplica,
        {"apiVersion": "ome.io/v1beta1", "kind": "InferenceReplica", "metadata": metadata, "spec": spec},
    )


def _name(replica: InferenceReplica) -> str:
    return preview(replica, Catalog(), instances=0).revision.name


@pytest.mark.parametrize("projected", [False, True], ids=["standalone", "projected"])
def test_parse_excluded_annotation_keys(projected: bool) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/revision_exclude_test.go @ ae683e3f, TestParseExcludedAnnotationKeys: no annotation excludes nothing; ``"a,b,,c"`` excludes
    a, b and c (empty split entries dropped). ``parseExcludedAnnotationKeys`` reads any replica, so a
    standalone one too."""

    def name(values: dict[str, str], annotations: dict[str, str] | None) -> str:
        return _name(_replica({"annotations": values}, annotations, projected=projected))

    base = {"a": "1", "b": "1", "c": "1", "d": "1"}
    listed = {EXCLUDED: "a,b,,c"}
    assert name(base, None) != name({**base, "a": "2"}, None), "no annotation -> nothing excluded"
    for key in ("a", "b", "c"):
        assert name(base, listed) == name({**base, key: "2"}, listed), key
    assert name(base, listed) != name({**base, "d": "2"}, listed)


def test_excluded_keys_are_not_trimmed() -> None:
    """Go: ome-projects/ome inferencereplica reconciler.go ``parseExcludedAnnotationKeys`` splits on "," and trims nothing: ``"a, b"``
    lists ``a`` and `` b``, so a template annotation ``b`` still counts (not a table entry)."""
    listed = {EXCLUDED: "a, b"}
    assert _name(_replica({"annotations": {"b": "1"}}, listed)) != _name(
        _replica({"annotations": {"b": "2"}}, listed)
    )
    assert _name(_replica({"annotations": {"a": "1"}}, listed)) == _name(
        _replica({"annotations": {"a": "2"}}, listed)
    )


def test_strip_excluded_annotations() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/revision_exclude_test.go @ ae683e3f, TestStripExcludedAnnotations: the hash drops the excluded key, the rendered pod
    keeps it ("pod rendering still uses the full annotation set"), labels are kept. Go's pointer
    identity checks (same pointer when nothing is dropped) have no counterpart."""
    listed = {EXCLUDED: "drop"}
    meta = {"labels": {"l": "1"}, "annotations": {"keep": "1", "drop": "2"}}
    replica = _replica(meta, listed)
    result = render(replica, Catalog())
    template = result.runners[0].template
    assert template["metadata"]["annotations"]["drop"] == "2"
    assert template["metadata"]["labels"]["l"] == "1"
    without = _replica({"labels": {"l": "1"}, "annotations": {"keep": "1"}}, listed)
    assert _name(replica) == _name(without)
    changed_label = _replica({"labels": {"l": "2"}, "annotations": {"keep": "1", "drop": "2"}}, listed)
    assert _name(changed_label) != _name(replica)


def test_revision_hash_stable_under_excluded_annotations() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/revision_exclude_test.go @ ae683e3f, TestRevisionHashStableUnderExcludedAnnotations: an excluded inherited annotation
    does not change the revision; unexcluded it does; a declared annotation change still does."""
    base = _name(_replica({"labels": {"app": "x"}, "annotations": {"ome.io/declared": "1"}}))
    ambient = {"labels": {"app": "x"}, "annotations": {"ome.io/declared": "1", INHERITED: "v1beta1"}}
    assert _name(_replica(ambient, {EXCLUDED: INHERITED})) == base
    assert _name(_replica(ambient)) != base
    declared = {"labels": {"app": "x"}, "annotations": {"ome.io/declared": "2"}}
    assert _name(_replica(declared, {EXCLUDED: INHERITED})) != base


@pytest.mark.parametrize(
    ("key", "value"),
    [("ome.io/release-held-revision", "llama-engine-aaaaaaaa"), ("ome.io/reset-instances", "13,14")],
)
def test_revision_hash_unchanged_by_ir_operator_verb_annotations(key: str, value: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/revision_exclude_test.go @ ae683e3f, TestRevisionHashUnchangedByIROperatorVerbAnnotations, entry ``key``: on the replica
    object the verb is no hash input; inherited onto the pod template it is filtered like a lifecycle
    annotation."""
    declared = {"annotations": {"ome.io/declared": "1"}}
    base = _name(_replica(declared))
    assert _name(_replica(declared, {key: value})) == base, "on the IR object"
    assert _name(_replica({"annotations": {"ome.io/declared": "1", key: value}})) == base, "inherited"


def test_revision_hash_cache_invalidates_when_excluded_annotations_change() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/revision_exclude_test.go @ ae683e3f, TestRevisionHashCacheInvalidatesWhenExcludedAnnotationsChange: adding the exclusion
    list to the same replica changes its revision to the one of the stripped metadata (omerender keeps
    no per-replica cache; the catalog memo is keyed by what it reads)."""
    meta = {"annotations": {INHERITED: "v1beta1"}}
    catalog = Catalog()
    initial = preview(_replica(meta), catalog, instances=0).revision.name
    updated = preview(_replica(meta, {EXCLUDED: INHERITED}), catalog, instances=0).revision.name
    expected = preview(_replica(None, {EXCLUDED: INHERITED}), catalog, instances=0).revision.name
    assert initial != expected
    assert updated == expected
