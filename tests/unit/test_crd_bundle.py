"""omerender/data/crds.json, the JSON form of the package's CRDs that omerender.crds reads, holds
exactly what the YAML copies in omerender/data/crds/ hold (refresh both: python -m omerender.cli.crds)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from omerender import crds
from omerender.cli.crds import bundle_text, sync


def test_the_bundle_is_the_yaml_copies() -> None:
    assert crds.PACKAGE_CRD_BUNDLE.read_text(encoding="utf-8") == bundle_text(crds.PACKAGE_CRD_DIR), (
        "omerender/data/crds.json differs from omerender/data/crds: run `python -m omerender.cli.crds`"
    )
    bundle = json.loads(crds.PACKAGE_CRD_BUNDLE.read_text(encoding="utf-8"))
    for name, crd in bundle.items():
        assert crd == yaml.safe_load((crds.PACKAGE_CRD_DIR / name).read_text(encoding="utf-8")), name


def test_the_crds_read_come_from_the_bundle() -> None:
    bundle = crds._bundle()
    assert crds.crd_for("InferenceReplica") is bundle["ome.io_inferencereplicas.yaml"]
    assert set(crds.load_crds()) == {crd["spec"]["names"]["kind"] for crd in bundle.values()} - {"PodGroup"}


def test_a_folder_without_a_bundle_reads_its_yaml(tmp_path: Path) -> None:
    # Only the package's own folder has a bundle: a source checkout's schemas/crds is read as YAML.
    path = crds.SOURCE_CRD_DIR / "ome.io_inferencereplicas.yaml"
    crds._read_crd.cache_clear()
    try:
        kind, crd = crds._read_crd(path)
    finally:
        crds._read_crd.cache_clear()
    assert kind == "InferenceReplica"
    assert crd == yaml.safe_load(path.read_text(encoding="utf-8"))


def test_sync_writes_the_bundle(tmp_path: Path) -> None:
    source, target, bundle = tmp_path / "src", tmp_path / "dst", tmp_path / "crds.json"
    source.mkdir()
    (source / "ome.io_widgets.yaml").write_text("spec:\n  names:\n    kind: Widget\n  flag: true\n  n: 3\n")
    assert sync(source, target, bundle) == ["ome.io_widgets.yaml"]
    assert json.loads(bundle.read_text(encoding="utf-8")) == {
        "ome.io_widgets.yaml": {"spec": {"names": {"kind": "Widget"}, "flag": True, "n": 3}}
    }
