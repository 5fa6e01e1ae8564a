"""Runs of list entries added or removed alike, said as one line in the review."""

from __future__ import annotations

from omerender.diff import Change, ReplicaDiff, Status, to_json, to_text
from omerender.diff.runs import compact_lines, entry_base


def _added(key: str, head: str = "runner default: containers[c].env") -> str:
    return f'{head}[{key}]: added {{"name": "{key}", "value": "1"}}'


def test_a_run_of_three_or_more_is_one_line_naming_count_and_keys() -> None:
    lines = [_added(f"V{k}") for k in range(30)]
    assert compact_lines(lines) == ["runner default: containers[c].env: 30 entries added: V0, V1, V2, …, V29"]
    few = [_added(f"V{k}") for k in range(4)]
    assert compact_lines(few) == ["runner default: containers[c].env: 4 entries added: V0, V1, V2, V3"]


def test_short_runs_and_other_lines_stay_as_they_are_in_order() -> None:
    image = 'runner default: containers[c].image: "a" -> "b"'
    lines = [_added("A"), _added("B"), image, _added("C"), _added("D"), _added("E")]
    assert compact_lines(lines) == [
        _added("A"),
        _added("B"),
        image,
        "runner default: containers[c].env: 3 entries added: C, D, E",
    ]


def test_a_run_ends_where_the_list_or_the_kind_changes() -> None:
    removed = [f"x[r{k}]: removed" for k in range(3)]
    other = [_added(f"W{k}", head="runner default: containers[c].ports") for k in range(3)]
    lines = [*[_added(f"V{k}") for k in range(3)], *other, *removed]
    assert compact_lines(lines) == [
        "runner default: containers[c].env: 3 entries added: V0, V1, V2",
        "runner default: containers[c].ports: 3 entries added: W0, W1, W2",
        "x: 3 entries removed: r0, r1, r2",
    ]


def test_a_changed_value_inside_an_entry_is_not_an_entry_added() -> None:
    lines = [f"env[V{k}].value: added" if k else f"env[V{k}].value: 1 -> 2" for k in range(3)]
    assert compact_lines(lines) == lines
    assert entry_base("containers[c].env[V1]") == "containers[c].env"
    assert entry_base("containers[c].image") is None


def test_the_text_report_says_a_run_once_per_replica_and_json_keeps_every_change() -> None:
    changes = tuple(
        Change("runner default", f"containers[c].env[V{k}]", "added", None, {"name": f"V{k}"})
        for k in range(30)
    )
    d = ReplicaDiff("ns", "r", Status.ROLLS, None, None, changes)
    text = to_text([d])
    assert "containers[c].env: 30 entries added: V0, V1, V2, …, V29" in text
    assert "env[V7]" not in text
    assert len(to_json([d])["replicas"][0]["changes"]) == 30
