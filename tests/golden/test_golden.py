"""Golden renders: every case under ``golden/cases/`` and its reviewed snapshot under ``golden/snapshots/``.

A case file is a multi-document YAML stream: the InferenceReplica first, then the objects it reads.
A leading ``# instances: N`` comment asks for the pods of Instances 0..N-1 (default 1).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from syrupy.assertion import SnapshotAssertion

from omerender.catalog import Catalog
from omerender.cli.kubeschema import kube_problems
from omerender.errors import RenderBlocked
from omerender.models import InferenceReplica, parse_object
from omerender.preview import preview
from tests.golden.yaml_snapshot import YAMLSnapshot

CASES = Path(__file__).resolve().parents[2] / "golden" / "cases"
CASE_FILES = sorted(CASES.glob("*.yaml"))


def golden_view(case: Path) -> dict[str, Any]:
    text = case.read_text()
    match = re.search(r"^# instances: (\d+)$", text, re.MULTILINE)
    instances = int(match.group(1)) if match else 1
    docs = [d for d in yaml.safe_load_all(text) if d]
    replica = parse_object(InferenceReplica, docs[0])
    catalog = Catalog.from_objects(docs[1:])
    try:
        result = preview(replica, catalog, instances=instances)
    except RenderBlocked as blocked:
        return {"blocked": {"reason": blocked.reason.value, "message": blocked.message}}
    view: dict[str, Any] = {
        "source": result.render.source,
        "runners": [{"name": r.name, "size": r.size, "template": r.template} for r in result.render.runners],
        "revision": {
            "name": result.revision.name,
            "payload": json.loads(result.revision.payload),
        },
        "service": result.service,
        "pods": list(result.pods),
    }
    if result.pod_groups:
        view["podGroups"] = list(result.pod_groups)
    if result.render.advisories:
        view["advisories"] = [{"reason": a.reason, "message": a.message} for a in result.render.advisories]
    return view


@pytest.fixture
def golden(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(YAMLSnapshot)


def test_corpus_is_large_enough() -> None:
    assert len(CASE_FILES) >= 40, f"the golden corpus has {len(CASE_FILES)} cases; keep at least 40"


@pytest.mark.parametrize("case", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_golden(case: Path, golden: SnapshotAssertion) -> None:
    assert golden_view(case) == golden


RENDERING_CASES = [p for p in CASE_FILES if "blocked" not in golden_view(p)]


def test_most_cases_render() -> None:
    assert len(RENDERING_CASES) >= 30


@pytest.mark.parametrize("case", RENDERING_CASES, ids=[p.stem for p in RENDERING_CASES])
def test_golden_objects_are_valid_kubernetes(case: Path) -> None:
    """Every pod, the Service and every runner template a case renders pass the Kubernetes 1.36 schemas
    (strict: an unknown field fails). PodGroups are a CRD: schemas/crds covers them."""
    view = golden_view(case)
    objects: list[dict[str, Any]] = [*view["pods"], view["service"]]
    objects += [
        {
            "apiVersion": "v1",
            "kind": "PodTemplate",
            "metadata": {"name": r["name"]},
            "template": r["template"],
        }
        for r in view["runners"]
    ]
    assert [p for obj in objects for p in kube_problems(obj)] == []
