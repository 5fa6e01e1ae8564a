"""charts/omereconcile as files: no symbolic links, its copies of deploy/'s RBAC and the CRDs current,
values.yaml valid under values.schema.json, and the README's table of values regenerated."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import yaml

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "charts" / "omereconcile"


def test_the_chart_has_no_symbolic_links() -> None:
    # A copied or packaged chart must not point outside itself.
    links = [p.relative_to(CHART) for p in CHART.rglob("*") if p.is_symlink()]
    assert links == []


def test_the_chart_copies_of_the_rbac_and_the_crds_are_current() -> None:
    # Refresh with: cp deploy/base/rbac.yaml charts/omereconcile/files/ && cp schemas/crds/ome.io_*.yaml charts/omereconcile/files/crds/
    assert (CHART / "files" / "rbac.yaml").read_bytes() == (
        REPO / "deploy" / "base" / "rbac.yaml"
    ).read_bytes()
    source = {p.name: p.read_bytes() for p in (REPO / "schemas" / "crds").glob("ome.io_*.yaml")}
    copies = {p.name: p.read_bytes() for p in (CHART / "files" / "crds").glob("*.yaml")}
    assert len(source) == 7
    assert copies == source


def test_values_yaml_is_valid_under_the_schema_and_every_value_is_described() -> None:
    schema = json.loads((CHART / "values.schema.json").read_text())
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    jsonschema.Draft7Validator(schema).validate(values)

    def undescribed(node: dict[str, object], path: str) -> list[str]:
        out = [path] if path and not node.get("description") else []
        props = node.get("properties")
        for key, sub in (props if isinstance(props, dict) else {}).items():
            out += undescribed(sub, f"{path}.{key}".lstrip("."))
        return out

    assert [p for p in undescribed(schema, "") if "issuerRef." not in p] == []


def test_the_chart_readme_lists_every_value() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "tools" / "chart_readme.py"), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    readme = (CHART / "README.md").read_text()
    for key in (
        "image.digest",
        "imagePullSecrets",
        "podAnnotations",
        "topologySpreadConstraints",
        "crds.keep",
    ):
        assert f"| `{key}` |" in readme
