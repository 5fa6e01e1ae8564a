"""A syrupy extension that keeps one reviewable YAML file per golden case under ``golden/snapshots/``.

Keys are sorted and nulls never appear, so a diff shows only what the render changed. Unused
snapshots fail the run (syrupy's default; CI never passes ``--snapshot-update`` or
``--snapshot-warn-unused``), which ``test_snapshot_hygiene.py`` proves.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation
from syrupy.types import SerializableData, SerializedData

SNAPSHOT_DIR = Path(__file__).resolve().parents[2] / "golden" / "snapshots"


def _no_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _no_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_no_nulls(v) for v in value]
    return value


def to_yaml(data: Any) -> str:
    return yaml.safe_dump(
        _no_nulls(data), sort_keys=True, default_flow_style=False, width=120, allow_unicode=True
    )


class YAMLSnapshot(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    file_extension = "yaml"

    def serialize(self, data: SerializableData, **_: Any) -> SerializedData:
        return to_yaml(data)

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(SNAPSHOT_DIR)

    @classmethod
    def get_snapshot_name(cls, *, test_location: PyTestLocation, index: Any = 0) -> str:
        # One file per case, named after the case: golden/snapshots/<case>.yaml.
        name = test_location.testname
        return name[name.index("[") + 1 : -1] if "[" in name else name
