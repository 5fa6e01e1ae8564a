"""Catalog objects are checked as ``kubectl apply`` with strict field validation checks them (against
OME's CRDs), only the kinds a render reads are read, and every problem is listed at once (exit 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from omerender.cli import main

Obj = dict[str, Any]


def runtime(name: str = "rt") -> Obj:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": name},
        "spec": {
            "supportedModelFormats": [
                # OME's catalog sets fields our models do not read (quantization, version): the CRD knows them.
                {"modelFormat": {"name": "safetensors"}, "version": "1.0.0", "quantization": "fp8"}
            ],
            "engineConfig": {
                "runner": {
                    "name": "ome-container",
                    "image": "img:1",
                    "resources": {"limits": {"nvidia.com/gpu": 8}},
                }
            },
        },
    }


def model(name: str = "m") -> Obj:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterBaseModel",
        "metadata": {"name": name},
        "spec": {"modelFormat": {"name": "safetensors"}, "storage": {"storageUri": "hf://org/m"}},
    }


def write(path: Path, *objs: Obj) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(objs, sort_keys=False))
    return str(path)


def lint(capsys: pytest.CaptureFixture[str], *paths: str) -> tuple[int, str]:
    code = main(["lint", "--no-schema", "--objects", *paths])
    return code, capsys.readouterr().err


def test_a_valid_catalog_with_fields_only_the_crd_knows_passes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, err = lint(capsys, write(tmp_path / "c.yaml", runtime(), model()))
    assert code != 2, err  # lint's verdict on the catalog is another matter
    assert "in the catalog objects" not in err


def test_other_kinds_in_the_folder_are_skipped_unread(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    others = [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}, "spec": {"bogus": 1}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": {}, "data": {"k": 1}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other", "namespace": "ome"}, "x": 1},
        {"kind": "Unknown"},
    ]
    code, err = lint(capsys, write(tmp_path / "c.yaml", runtime(), *others))
    assert code != 2, err
    assert "in the catalog objects" not in err
    assert "lint: 1 renders" in err


def test_every_problem_is_listed_with_file_object_field_and_fix(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    unknown = runtime("rt-unknown")
    unknown["spec"]["modelSizeRnage"] = {}  # a misspelling; engineConfig, a pod spec, keeps unknown fields
    old_api = {**model("m-old"), "apiVersion": "ome.io/v1alpha9"}
    nameless = {**model(), "metadata": {}}
    bad_name = model("Bad_Name")
    config = {
        "apiVersion": "v2",
        "kind": "ConfigMap",
        "metadata": {"name": "inferenceservice-config", "namespace": "ome"},
        "settings": {},
    }
    first = write(tmp_path / "a.yaml", unknown, old_api)
    second = write(tmp_path / "b.yaml", nameless, bad_name, config)
    code, err = lint(capsys, first, second)
    assert code == 2
    assert "6 problems in the catalog objects" in err
    assert f"{first}: ClusterServingRuntime rt-unknown: spec.modelSizeRnage: is not a known field" in err
    assert "remove it or check its spelling against the CRD" in err
    assert (
        f"{first}: ClusterBaseModel m-old: apiVersion: 'ome.io/v1alpha9' is not served; use ome.io/v1beta1"
        in err
    )
    assert f"{second}: ClusterBaseModel <unnamed>: metadata.name: required" in err
    assert (
        f"{second}: ClusterBaseModel Bad_Name: metadata.name: 'Bad_Name' is not a DNS-1123 subdomain" in err
    )
    assert f"{second}: ConfigMap ome/inferenceservice-config: apiVersion: 'v2'; use v1" in err
    assert f"{second}: ConfigMap ome/inferenceservice-config: settings: unknown field of a ConfigMap" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", ["render", "validate", "diff"])
def test_every_command_checks_its_catalog_objects(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    broken = runtime()
    broken["spec"]["unknownSetting"] = True
    objects = write(tmp_path / "c.yaml", broken)
    replica = write(
        tmp_path / "r.yaml",
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceReplica",
            "metadata": {"name": "r", "namespace": "demo"},
            "spec": {"component": "engine", "runtimeRef": {"name": "rt"}},
        },
    )
    argv = {
        "render": ["render", replica, "--objects", objects],
        "validate": ["validate", replica, "--objects", objects],
        "diff": ["diff", "--before", objects, "--before", replica, "--after", objects, "--after", replica],
    }[command]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2
    assert f"{objects}: ClusterServingRuntime rt: spec.unknownSetting: is not a known field" in err
