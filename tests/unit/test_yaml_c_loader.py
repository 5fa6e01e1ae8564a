"""The C YAML loader everywhere, with the bounded-cost limits intact, whether or not the event pass
runs: text the quick scan cannot vouch for goes through it, and the limits hold either way."""

from __future__ import annotations

import pytest
import yaml

from omerender.cli import yamlsafe
from omerender.cli.yamlsafe import YamlLimitError, _plainly_within_limits, load_documents
from omerender.jsonlike import MAX_DEPTH


def test_the_loaders_are_libyamls() -> None:
    assert yaml.__with_libyaml__
    assert issubclass(yamlsafe._Loader, yaml.CSafeLoader)


def test_kubectl_ome_reads_kubeconfigs_with_the_c_loader() -> None:
    from omereconcile.kubectl import client

    assert client._LOADER is yaml.CSafeLoader


def _block(depth: int) -> str:
    """A mapping ``depth`` levels deep, block style, two spaces per level."""
    return "".join(f"{'  ' * level}k{level}:\n" for level in range(depth - 1)) + f"{'  ' * (depth - 1)}k: v\n"


def _compact(depth: int) -> str:
    """Sequences nested ``depth`` levels on one line: ``- - - … x``."""
    return "- " * depth + "x\n"


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: '[b]'\n", True),
        ("a: &x [1]\nb: *x\n", False),  # an anchor: the event pass counts the aliases
        ("a:\tb\n", False),  # a tab
        ("a:\r  b: c\r", False),  # another line break than \n
        ("a: " + "[" * 99 + "]" * 99 + "\n", False),  # deep flow
        (_block(20), True),
        (_block(60), False),  # the column bound passes 100
        (_compact(60), False),
        ("a: '" + "x" * (yamlsafe._PLAIN_DOCUMENT_MAX + 1) + "'\n", False),
    ],
)
def test_the_quick_scan_vouches_only_for_what_is_plainly_within_the_limits(text: str, plain: bool) -> None:
    assert _plainly_within_limits(text) is plain


@pytest.mark.parametrize(
    "text",
    [
        _block(MAX_DEPTH + 5),
        _compact(MAX_DEPTH + 5),
        "a: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5),
        "a:\r" + "".join(f"{' ' * (i + 1)}k{i}:\r" for i in range(MAX_DEPTH + 5)) + "  v\r",
    ],
)
def test_deep_documents_are_refused_either_way(text: str) -> None:
    with pytest.raises(YamlLimitError, match=f"nested deeper than {MAX_DEPTH} levels"):
        load_documents(text.encode())


def test_shallow_documents_load_the_same_either_way(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (_block(30) + "---\n" + "a: [1, {b: [2, 3]}]\nc: '2024-01-01'\nd: 2024-01-01\n").encode()
    quick = load_documents(text)
    monkeypatch.setattr(yamlsafe, "_plainly_within_limits", lambda _: False)
    assert load_documents(text) == quick
    assert quick[1]["d"] == "2024-01-01"  # a timestamp stays a string, on the quick path too
