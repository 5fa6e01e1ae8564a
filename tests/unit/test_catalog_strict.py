"""``Catalog.from_objects`` is as strict as the command line: OME's CRD checks on every object, a
``kind: List`` expanded, and an ``ome.io`` kind OME does not define refused by name (lint too)."""

from __future__ import annotations

from typing import Any

import pytest

from omerender import Catalog, InvalidObjectError
from omerender.lint import lint_objects


def model(name: str = "m", kind: str = "ClusterBaseModel", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": kind,
        "metadata": {"name": name},
        "spec": {"modelFormat": {"name": "safetensors"}, **spec},
    }


def test_a_list_is_expanded_into_its_items() -> None:
    catalog = Catalog.from_objects(
        [{"apiVersion": "v1", "kind": "List", "items": [model("a"), model("b")]}, model("c")]
    )
    assert sorted(name for _, _, name in catalog.models) == ["a", "b", "c"]


def test_a_misspelled_ome_kind_is_an_error_naming_the_object() -> None:
    with pytest.raises(InvalidObjectError) as info:
        Catalog.from_objects([model("llama", kind="ClusterBaseModle")])
    assert str(info.value) == (
        "ClusterBaseModle llama is invalid: kind: 'ClusterBaseModle' is not a kind OME defines; "
        "did you mean ClusterBaseModel?"
    )
    # Other groups' kinds are still none of the catalog's business.
    Catalog.from_objects([{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}])


def test_every_crd_problem_is_listed() -> None:
    bad = model("Bad_Name", modelFromat={})
    with pytest.raises(InvalidObjectError) as info:
        Catalog.from_objects([bad])
    assert [p.path for p in info.value.problems] == ["metadata.name", "spec.modelFromat"]
    assert Catalog.from_objects([bad], strict=False).models  # the old leniency, when asked for


def test_lint_reports_a_misspelled_kind_as_an_error() -> None:
    runtime = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": "rt"},
        "spec": {
            "supportedModelFormats": [{"modelFormat": {"name": "safetensors"}, "autoSelect": True}],
            "engineConfig": {"runner": {"name": "ome-container", "image": "img:1"}},
        },
    }
    report = lint_objects([runtime, model("llama", kind="ClusterBaseModle")])
    (finding,) = [f for f in report.errors if f.name == "llama"]
    assert finding.kind == "ClusterBaseModle"
    assert "did you mean ClusterBaseModel?" in finding.problem
