"""Template diffs remembered across replicas: the same answer as a diff computed afresh."""

from __future__ import annotations

from typing import Any

from omerender.diff import template_changes
from omerender.diff import templates as diff_module
from omerender.render import RenderedRunner


def _template(image: str, name: str, *, extra_label: bool = False) -> dict[str, Any]:
    labels = {"app": name, **({"tier": "gpu"} if extra_label else {})}
    return {
        "metadata": {"labels": labels},
        "spec": {"containers": [{"name": "ome-container", "image": image, "args": ["--a"]}]},
    }


def _changes(before: dict[str, Any], after: dict[str, Any]) -> tuple[Any, ...]:
    return template_changes([RenderedRunner("default", 1, before)], [RenderedRunner("default", 1, after)])


def test_replicas_with_their_own_metadata_share_the_spec_diff() -> None:
    diff_module._TEMPLATE_DIFFS.clear()
    first = _changes(_template("img:1", "a"), _template("img:2", "a"))
    second = _changes(_template("img:1", "b"), _template("img:2", "b"))
    assert [(c.path, c.kind, c.before, c.after) for c in first] == [
        ("containers[ome-container].image", "changed", "img:1", "img:2")
    ]
    assert second == first
    assert len(diff_module._TEMPLATE_DIFFS) == 1  # one entry: the specs' pair


def test_a_metadata_change_is_never_taken_from_the_memo() -> None:
    diff_module._TEMPLATE_DIFFS.clear()
    _changes(_template("img:1", "a"), _template("img:2", "a"))
    changed = _changes(_template("img:1", "a"), _template("img:2", "a", extra_label=True))
    assert {(c.path, c.kind) for c in changed} == {
        ("metadata.labels.tier", "added"),
        ("containers[ome-container].image", "changed"),
    }


def test_the_memo_answers_as_a_fresh_diff() -> None:
    diff_module._TEMPLATE_DIFFS.clear()
    pairs = [
        (_template("img:1", "a"), _template("img:2", "a")),
        (_template("img:1", "b"), _template("img:3", "b")),
        (_template("img:2", "c"), _template("img:1", "c")),
    ]
    remembered = [_changes(b, a) for b, a in pairs] + [_changes(b, a) for b, a in pairs]
    fresh = [tuple(diff_module._template_diff_of("runner default", b, a)) for b, a in pairs]
    assert remembered == fresh + fresh
