"""omerender/_gofields.py is exactly what tools/gotypes/gen_gofields.py makes of the committed table.

Pure Python and fast; the gobuild-marked tests/differential checks that the table itself matches
what tools/gotypes/cmd/fieldtable prints from k8s.io/api today.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

from omerender import _gofields

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    path = ROOT / "tools" / "gotypes" / "gen_gofields.py"
    spec = importlib.util.spec_from_file_location("gen_gofields", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _table() -> dict[str, object]:
    table: dict[str, object] = json.loads(
        (ROOT / "schemas" / "k8s-go-fields.json").read_text(encoding="utf-8")
    )
    return table


def test_generated_module_is_fresh() -> None:
    expected = _generator().render(_table())
    actual = (ROOT / "omerender" / "_gofields.py").read_text(encoding="utf-8")
    assert actual == expected, "omerender/_gofields.py is stale: run tools/gotypes/regen.sh"


def test_table_versions_match_module() -> None:
    table = _table()
    assert table["k8sApiVersion"] == _gofields.K8S_API_VERSION
    assert table["kubernetesVersion"] == _gofields.KUBERNETES_VERSION
    assert _gofields.KUBERNETES_VERSION.startswith("1.36.")


def test_flattening_follows_encoding_json() -> None:
    # Embedded structs without a JSON name are promoted in place; a named embedded struct is a field.
    volume = [name for name, *_ in _gofields.STRUCTS["core/v1.Volume"]]
    assert volume[:3] == ["name", "hostPath", "emptyDir"]
    probe = [name for name, *_ in _gofields.STRUCTS["core/v1.Probe"]]
    assert probe[:4] == ["exec", "httpGet", "tcpSocket", "grpc"]
    claim = [name for name, *_ in _gofields.STRUCTS["core/v1.PersistentVolumeClaimTemplate"]]
    assert claim == ["metadata", "spec"]
    container = _gofields.STRUCTS["core/v1.Container"]
    assert container[0] == ("name", False, False, "string")
    assert ("resources", True, False, "core/v1.ResourceRequirements") in container


def test_flatten_dominance_rules() -> None:
    gen = _generator()

    def field(
        name: str, typ: dict[str, object], *, embedded: bool = False, json_name: str = ""
    ) -> dict[str, object]:
        return {
            "goName": name,
            "json": json_name,
            "omitempty": False,
            "omitzero": False,
            "embedded": embedded,
            "type": typ,
        }

    string = {"kind": "string"}
    types = {
        "A": {"fields": [field("X", string), field("B", {"kind": "struct", "ref": "B"}, embedded=True)]},
        "B": {"fields": [field("X", string), field("Y", string), field("Z", string, json_name="z")]},
        "C": {
            "fields": [
                field("B", {"kind": "ptr", "elem": {"kind": "struct", "ref": "B"}}, embedded=True),
                field("D", {"kind": "struct", "ref": "D"}, embedded=True),
            ]
        },
        "D": {"fields": [field("Y", string), field("W", string, json_name="z")]},
    }
    # A.X shadows B.X (shallower); B.Y and B.z are promoted after it.
    assert [f[0] for f in gen.flatten(types, "A")] == ["X", "Y", "z"]
    # In C, B.Y and D.Y tie at the same depth, untagged: both dropped; B.z and D.z are both tagged: dropped.
    assert [f[0] for f in gen.flatten(types, "C")] == ["X"]
