"""omerender.diff: which replicas a catalog change rolls or blocks, and what changed in their templates.

The cases of issue 4: an image bump rolls exactly the replicas of that runtime; a parent change rolls
its children; an unrelated change rolls nothing; a model turning not-Ready blocks. Keyed lists are
compared by name, and a pure reorder is a roll that says so.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from omerender.catalog import Catalog
from omerender.diff import (
    Blocked,
    Change,
    Outcome,
    ReplicaDiff,
    Status,
    diff_replica,
    diff_replicas,
    normalise_template,
    outcome,
    template_changes,
    to_json,
    to_markdown,
    to_text,
)
from omerender.models import InferenceReplica, parse_object
from omerender.render import RenderedRunner

NS = "demo"
Obj = dict[str, Any]
Replicas = dict[tuple[str, str], InferenceReplica]


# -- builders ------------------------------------------------------------------------------------------------


def runtime(name: str, image: str | None = "img:1", *, parent: str | None = None, **runner: Any) -> Obj:
    meta: Obj = {"name": name}
    if parent:
        meta["annotations"] = {"ome.io/inherit-from": parent}
    body: Obj = {"name": "ome-container", **runner}
    if image is not None:
        body["image"] = image
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": meta,
        "spec": {
            "supportedModelFormats": [
                {"modelFormat": {"name": "safetensors", "version": "1.0.0"}, "autoSelect": True}
            ],
            "engineConfig": {"runner": body},
        },
    }


def model(name: str = "m", state: str = "Ready") -> Obj:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterBaseModel",
        "metadata": {"name": name},
        "spec": {"modelFormat": {"name": "safetensors", "version": "1.0.0"}, "storage": {"path": "/raid/m"}},
        "status": {"state": state},
    }


def replica(name: str, **spec: Any) -> InferenceReplica:
    return parse_object(
        InferenceReplica,
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceReplica",
            "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"},
            "spec": {"component": "engine", **spec},
        },
    )


def on_runtime(name: str, rt: str) -> InferenceReplica:
    return replica(name, runtimeRef={"name": rt})


def runners_replica(name: str, container: Obj, **spec: Any) -> InferenceReplica:
    template = {"spec": {"containers": [container]}}
    return replica(name, runners=[{"name": "default", "size": 1, "template": template}], **spec)


def fleet(*replicas: InferenceReplica) -> Replicas:
    return {(r.namespace, r.metadata.name): r for r in replicas}


def catalog(*objs: Obj) -> Catalog:
    return Catalog.from_objects(objs)


FLEET = fleet(
    on_runtime("a-1", "rt-a"),
    on_runtime("a-2", "rt-a"),
    on_runtime("child-1", "rt-child"),
    on_runtime("other-1", "rt-other"),
    replica("model-1", modelRef={"name": "m"}, runtimeRef={"name": "rt-a"}),
)


def base_objects() -> list[Obj]:
    return [
        runtime("rt-a", "img:1"),
        runtime("rt-base", "base:1"),
        runtime("rt-child", None, parent="rt-base", args=["--child"]),
        runtime("rt-other", "other:1"),
        runtime("rt-unused", "unused:1"),
        model("m"),
    ]


def replace(objs: list[Obj], new: Obj) -> list[Obj]:
    return [new if o["metadata"]["name"] == new["metadata"]["name"] else o for o in objs]


def statuses(diffs: tuple[ReplicaDiff, ...]) -> dict[str, Status]:
    return {d.name: d.status for d in diffs}


def by_name(diffs: tuple[ReplicaDiff, ...], name: str) -> ReplicaDiff:
    return next(d for d in diffs if d.name == name)


def lines(d: ReplicaDiff) -> list[str]:
    return [c.line() for c in d.changes]


# -- the cases -------------------------------------------------------------------------------------------


def test_an_image_bump_rolls_every_replica_of_that_runtime_and_nothing_else() -> None:
    before = base_objects()
    after = replace(before, runtime("rt-a", "img:2"))
    diffs = diff_replicas(FLEET, FLEET, catalog(*before), catalog(*after))
    assert statuses(diffs) == {
        "a-1": Status.ROLLS,
        "a-2": Status.ROLLS,
        "child-1": Status.UNCHANGED,
        "model-1": Status.ROLLS,  # names rt-a too
        "other-1": Status.UNCHANGED,
    }
    a1 = by_name(diffs, "a-1")
    assert lines(a1) == ['runner default: containers[ome-container].image: "img:1" -> "img:2"']
    assert a1.before is not None
    assert a1.after is not None
    assert a1.before.revision != a1.after.revision
    assert a1.headline == f"rolls {a1.before.revision} -> {a1.after.revision}"
    assert a1.after.revision is not None
    assert a1.after.revision.startswith("a-1-engine-")
    assert a1.changed
    assert not by_name(diffs, "other-1").changed
    assert by_name(diffs, "other-1").changes == ()


def test_a_parent_runtime_change_rolls_its_children() -> None:
    before = base_objects()
    after = replace(before, runtime("rt-base", "base:2"))
    diffs = diff_replicas(FLEET, FLEET, catalog(*before), catalog(*after))
    assert {n for n, s in statuses(diffs).items() if s is not Status.UNCHANGED} == {"child-1"}
    assert lines(by_name(diffs, "child-1")) == [
        'runner default: containers[ome-container].image: "base:1" -> "base:2"'
    ]


def test_a_change_to_an_unrelated_runtime_rolls_nothing() -> None:
    before = base_objects()
    after = replace(before, runtime("rt-unused", "unused:2", env=[{"name": "X", "value": "1"}]))
    diffs = diff_replicas(FLEET, FLEET, catalog(*before), catalog(*after))
    assert set(statuses(diffs).values()) == {Status.UNCHANGED}
    assert all(d.changes == () and not d.changed for d in diffs)
    assert to_json(diffs)["changed"] is False


def test_a_model_turning_not_ready_blocks_and_keeps_the_running_pods() -> None:
    before = base_objects()
    after = replace(before, model("m", state="InTransit"))
    diffs = diff_replicas(FLEET, FLEET, catalog(*before), catalog(*after))
    blocked = by_name(diffs, "model-1")
    assert blocked.status is Status.BLOCKS
    assert blocked.headline == "blocks ModelNotFound"
    assert blocked.changed
    assert blocked.after is not None
    assert blocked.after.blocked is not None
    assert blocked.after.revision is None
    assert blocked.before is not None
    assert blocked.notes == (
        f"ModelNotFound: {blocked.after.blocked.message}",
        f"OME keeps the running pods on {blocked.before.revision}",
    )
    assert "not ready" in blocked.after.blocked.message
    assert {n for n, s in statuses(diffs).items() if s is not Status.UNCHANGED} == {"model-1"}


def test_a_model_turning_ready_unblocks() -> None:
    before = replace(base_objects(), model("m", state="InTransit"))
    after = base_objects()
    d = by_name(diff_replicas(FLEET, FLEET, catalog(*before), catalog(*after)), "model-1")
    assert d.status is Status.UNBLOCKS
    assert d.after is not None
    assert d.headline == f"unblocks -> {d.after.revision}"
    assert d.changed


def test_a_replica_blocked_on_both_sides_for_the_same_reason_is_no_change() -> None:
    objs = replace(base_objects(), model("m", state="InTransit"))
    after = replace(objs, runtime("rt-a", "img:2"))
    d = by_name(diff_replicas(FLEET, FLEET, catalog(*objs), catalog(*after)), "model-1")
    assert d.status is Status.STILL_BLOCKS
    assert d.headline == "still blocks ModelNotFound"
    assert not d.changed


def test_a_replica_blocked_for_another_reason_blocks() -> None:
    before = replace(base_objects(), model("m", state="InTransit"))
    after = [o for o in before if o["metadata"]["name"] != "rt-a"]
    d = by_name(diff_replicas(FLEET, FLEET, catalog(*before), catalog(*after)), "a-1")
    assert d.status is Status.BLOCKS
    assert d.headline == "blocks RuntimeNotFound"
    # The model is back, the runtime gone: blocked before and after, for another reason. It never
    # rendered, so the change blocks nothing (issue 22: no "blocks X (was ModelNotFound)").
    after = [o for o in base_objects() if o["metadata"]["name"] != "rt-a"]
    d = by_name(diff_replicas(FLEET, FLEET, catalog(*before), catalog(*after)), "model-1")
    assert d.status is Status.STILL_BLOCKS
    assert d.headline == "still blocks RuntimeNotFound (was ModelNotFound)"
    assert not d.changed


# -- replicas that change, appear or go -----------------------------------------------------------------------


def test_new_and_removed_replicas() -> None:
    objs = catalog(*base_objects())
    before = fleet(on_runtime("a-1", "rt-a"), on_runtime("old", "rt-a"))
    after = fleet(on_runtime("a-1", "rt-a"), on_runtime("fresh", "rt-a"), on_runtime("lost", "rt-gone"))
    diffs = diff_replicas(before, after, objs, objs)
    assert [(d.name, d.status) for d in diffs] == [
        ("a-1", Status.UNCHANGED),
        ("fresh", Status.NEW),
        ("lost", Status.NEW),
        ("old", Status.REMOVED),
    ]
    fresh, lost, old = diffs[1], diffs[2], diffs[3]
    assert fresh.after is not None
    assert fresh.headline == f"new -> {fresh.after.revision}"
    assert lost.headline == "new, blocks RuntimeNotFound"
    assert (fresh.result, lost.result) == ("new", "new, blocked RuntimeNotFound")
    assert old.before is not None
    assert old.headline == f"removed (was {old.before.revision})"
    assert all(d.changed for d in (fresh, lost, old))


def test_a_replica_spec_change_is_matched_by_name() -> None:
    objs = catalog(*base_objects())
    before = fleet(runners_replica("r", {"name": "c", "image": "x:1"}))
    after = fleet(runners_replica("r", {"name": "c", "image": "x:2"}))
    (d,) = diff_replicas(before, after, objs, objs)
    assert d.status is Status.ROLLS
    assert lines(d) == ['runner default: containers[c].image: "x:1" -> "x:2"']


def test_scaling_a_replica_is_no_roll() -> None:
    objs = catalog(*base_objects())
    d = diff_replica(
        on_runtime("a", "rt-a"), replica("a", runtimeRef={"name": "rt-a"}, replicas=5), objs, objs
    )
    assert d.status is Status.UNCHANGED
    assert d.changes == ()


def test_template_changes_the_revision_does_not_hash_are_listed_but_roll_nothing() -> None:
    """Only the default/leader template's metadata is hashed (01 §9.1): a worker label rolls nothing."""

    def multi_node(worker_labels: dict[str, str]) -> InferenceReplica:
        container = {"spec": {"containers": [{"name": "c", "image": "x"}]}}
        worker = {"metadata": {"labels": worker_labels}, **container}
        return replica(
            "mn",
            runners=[
                {"name": "leader", "size": 1, "template": container},
                {"name": "worker", "size": 1, "template": worker},
            ],
        )

    objs = catalog(*base_objects())
    d = diff_replica(multi_node({"tier": "a"}), multi_node({"tier": "b"}), objs, objs)
    assert d.status is Status.UNCHANGED
    assert not d.changed
    assert lines(d) == ['runner worker: metadata.labels.tier: "a" -> "b"']
    assert d.notes == ("these differences are outside the revision hash: OME replaces no pods",)
    assert "demo/mn: unchanged" in to_text([d])


def test_revision_inputs_outside_the_templates_are_named() -> None:
    objs = catalog(*base_objects())
    container = {"name": "c", "image": "x:1"}
    d = diff_replica(
        runners_replica("r", container),
        runners_replica("r", container, pairingProtocol="nixl-v2"),
        objs,
        objs,
    )
    assert d.status is Status.ROLLS
    assert lines(d) == ['revision: pairingProtocol: null -> "nixl-v2"']


def test_a_new_uid_is_a_new_revision_history() -> None:
    objs = catalog(*base_objects())
    old = on_runtime("a", "rt-a")
    raw = old.model_dump(by_alias=True, exclude_none=True, mode="json")
    raw["metadata"]["uid"] = "uid-recreated"
    d = diff_replica(old, parse_object(InferenceReplica, raw), objs, objs)
    assert d.status is Status.ROLLS
    assert lines(d) == ['revision: scopeUID: "uid-a" -> "uid-recreated"']


# -- keyed lists: by name, not position --------------------------------------------------------------------------


def env(*pairs: tuple[str, str]) -> list[Obj]:
    return [{"name": k, "value": v} for k, v in pairs]


def runner_diff(before: Obj, after: Obj) -> list[str]:
    old = [RenderedRunner("default", 1, {"spec": {"containers": [before]}})]
    new = [RenderedRunner("default", 1, {"spec": {"containers": [after]}})]
    return [c.line() for c in template_changes(old, new)]


def test_env_is_matched_by_name() -> None:
    before = {"name": "c", "env": env(("A", "1"), ("B", "2"))}
    after = {"name": "c", "env": env(("Z", "0"), ("A", "1"), ("B", "3"))}
    assert runner_diff(before, after) == [
        'runner default: containers[c].env[B].value: "2" -> "3"',
        'runner default: containers[c].env[Z]: added {"name": "Z", "value": "0"}',
    ]


def test_a_removed_env_var_is_named() -> None:
    before = {"name": "c", "env": env(("A", "1"), ("B", "2"), ("C", "3"))}
    after = {"name": "c", "env": env(("A", "1"), ("C", "3"))}
    assert runner_diff(before, after) == [
        'runner default: containers[c].env[B]: removed {"name": "B", "value": "2"}'
    ]


def test_a_pure_reorder_rolls_and_says_order_changed() -> None:
    objs = catalog(*base_objects())
    before = fleet(runners_replica("r", {"name": "c", "image": "x", "env": env(("A", "1"), ("B", "2"))}))
    after = fleet(runners_replica("r", {"name": "c", "image": "x", "env": env(("B", "2"), ("A", "1"))}))
    (d,) = diff_replicas(before, after, objs, objs)
    # The revision hashes the pod spec's bytes: OME rolls on a reorder, so the diff says so.
    assert d.status is Status.ROLLS
    assert lines(d) == ["runner default: containers[c].env: order changed: A, B -> B, A"]


def test_containers_volumes_mounts_and_ports_by_identity() -> None:
    before: Obj = {
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "x",
                    "ports": [{"name": "http", "containerPort": 8080}, {"containerPort": 9000}],
                    "volumeMounts": [
                        {"name": "cfg", "mountPath": "/etc/a", "subPath": "a"},
                        {"name": "cfg", "mountPath": "/etc/b", "subPath": "b"},
                    ],
                },
                {"name": "sidecar", "image": "s:1"},
            ],
            "volumes": [{"name": "cfg", "configMap": {"name": "one"}}, {"name": "dshm", "emptyDir": {}}],
        }
    }
    after = copy.deepcopy(before)
    spec: Obj = after["spec"]
    spec["containers"].reverse()  # order of containers changes too
    main = spec["containers"][1]
    main["ports"][0]["containerPort"] = 8081
    main["ports"][1]["protocol"] = "UDP"
    main["volumeMounts"][1]["subPath"] = "c"
    spec["volumes"] = [
        {"name": "dshm", "emptyDir": {"medium": "Memory"}},
        {"name": "cfg", "configMap": {"name": "one"}},
    ]
    changes = template_changes([RenderedRunner("default", 1, before)], [RenderedRunner("default", 1, after)])
    assert [c.line() for c in changes] == [
        "runner default: containers: order changed: main, sidecar -> sidecar, main",
        'runner default: containers[main].ports[9000/TCP]: removed {"containerPort": 9000}',
        'runner default: containers[main].ports[9000/UDP]: added {"containerPort": 9000, "protocol": "UDP"}',
        "runner default: containers[main].ports[http].containerPort: 8080 -> 8081",
        'runner default: containers[main].volumeMounts[/etc/b].subPath: "b" -> "c"',
        "runner default: volumes: order changed: cfg, dshm -> dshm, cfg",
        'runner default: volumes[dshm].emptyDir.medium: added "Memory"',
    ]


def test_positional_lists_stay_positional() -> None:
    before = {"name": "c", "args": ["--port", "8080", "--tp=1"]}
    after = {"name": "c", "args": ["--port", "8080", "--pp=2", "--tp=1"]}
    assert runner_diff(before, after) == ['runner default: containers[c].args[2]: added "--pp=2"']


def test_metadata_keys_that_are_not_identifiers_are_bracketed() -> None:
    old = [
        RenderedRunner("default", 1, {"metadata": {"labels": {"app.kubernetes.io/name": "a"}}, "spec": {}})
    ]
    new = [
        RenderedRunner("default", 1, {"metadata": {"labels": {"app.kubernetes.io/name": "b"}}, "spec": {}})
    ]
    assert [c.line() for c in template_changes(old, new)] == [
        'runner default: metadata.labels[app.kubernetes.io/name]: "a" -> "b"'
    ]


def test_runners_added_removed_and_resized() -> None:
    tpl: Obj = {"spec": {"containers": [{"name": "c"}]}}
    old = [RenderedRunner("default", 1, tpl)]
    new = [RenderedRunner("leader", 1, tpl), RenderedRunner("worker", 2, tpl)]
    assert [c.line() for c in template_changes(old, new)] == [
        "runner leader: added",
        "runner worker: added",
        "runner default: removed",
    ]
    resized = [RenderedRunner("leader", 1, tpl), RenderedRunner("worker", 3, tpl)]
    assert [c.line() for c in template_changes(new, resized)] == ["runner worker: size: 2 -> 3"]


def test_normalise_keeps_repeated_and_nameless_entries() -> None:
    template = {
        "spec": {"containers": [{"name": "c", "env": [{"name": "A"}, {"name": "A"}, {"value": "x"}]}]}
    }
    normal = normalise_template(template)
    assert list(normal["spec"]["containers"]["c"]["env"]) == ["A", "A#2", "#2"]
    assert template["spec"]["containers"][0]["env"][0] == {"name": "A"}  # the input is untouched


def test_long_values_are_abridged_in_text_but_whole_in_json() -> None:
    change = Change("runner default", "containers[c].args[0]", "added", None, "x" * 1000)
    assert len(change.line()) < 400
    assert change.line().endswith("…")
    assert change.line(limit=None).endswith('x"')
    assert change.as_json()["after"] == "x" * 1000


# -- outputs -----------------------------------------------------------------------------------------------------


def sample() -> tuple[ReplicaDiff, ...]:
    before = base_objects()
    after = replace(replace(before, runtime("rt-a", "img:2")), model("m", state="InTransit"))
    return diff_replicas(FLEET, FLEET, catalog(*before), catalog(*after))


def test_text_output() -> None:
    diffs = sample()
    a1, model_1 = by_name(diffs, "a-1"), by_name(diffs, "model-1")
    assert model_1.after is not None
    assert model_1.after.blocked is not None
    assert model_1.before is not None
    assert a1.before is not None
    assert a1.after is not None
    text = to_text(diffs).splitlines()
    assert text[:2] == [
        f"demo/a-1: rolls {a1.before.revision} -> {a1.after.revision}",
        '  runner default: containers[ome-container].image: "img:1" -> "img:2"',
    ]
    assert text[-1] == (
        "note: 2 replicas whose verdict did not change not listed (2 unchanged); --show-unchanged lists them"
    )
    assert "demo/child-1: unchanged" in to_text(diffs, show_unchanged=True).splitlines()
    at = text.index("demo/model-1: blocks ModelNotFound")
    assert text[at + 1 : at + 3] == [
        f"  ModelNotFound: {model_1.after.blocked.message}",
        f"  OME keeps the running pods on {model_1.before.revision}",
    ]


def test_json_output_shape() -> None:
    doc = to_json(sample())
    assert doc["changed"] is True
    assert doc["summary"] == {
        "rolls": 2,
        "blocks": 1,
        "unblocks": 0,
        "new": 0,
        "removed": 0,
        "unknown": 0,
        "still-blocks": 0,
        "unchanged": 2,
    }
    assert (doc["failOn"], doc["fails"]) == (["rolls", "blocks"], True)
    first = doc["replicas"][0]
    assert set(first) == {
        "namespace",
        "name",
        "status",
        "headline",
        "changed",
        "uidNotice",
        "runtimeChanged",
        "before",
        "after",
        "changes",
        "notes",
    }
    assert (first["namespace"], first["name"], first["status"]) == (NS, "a-1", "rolls")
    assert first["before"]["blocked"] is None
    assert first["before"]["runtime"] == {"kind": "ClusterServingRuntime", "name": "rt-a"}
    assert first["runtimeChanged"] is False
    assert (first["uidNotice"], first["before"]["uidNotice"]) == (None, None)  # the files carry uids
    assert first["changes"] == [
        {
            "where": "runner default",
            "runner": "default",
            "path": "containers[ome-container].image",
            "change": "changed",
            "before": "img:1",
            "after": "img:2",
        }
    ]
    blocked = next(r for r in doc["replicas"] if r["name"] == "model-1")
    assert blocked["after"]["revision"] is None
    assert blocked["after"]["blocked"]["reason"] == "ModelNotFound"


def test_markdown_output_shape() -> None:
    diffs = sample()
    rev = {
        (d.name, side): o.revision
        for d in diffs
        for side, o in (("b", d.before), ("a", d.after))
        if o is not None
    }
    a1 = by_name(diffs, "a-1")
    md = to_markdown(diffs)
    assert md.startswith("### omerender diff: 5 replicas: 2 rolls, 1 blocks, 2 unchanged\n")
    rows = [line for line in md.splitlines() if line.startswith("| ")]
    assert rows == [
        "| Verdict | Replicas | Fails the check |",
        "| --- | ---: | --- |",
        "| rolls | 2 | yes |",
        "| blocks | 1 | yes |",
        "| unchanged | 2 | no |",
        "| Replica | Result | Before | After |",
        "| --- | --- | --- | --- |",
        f"| `demo/a-1` | rolls | `{rev['a-1', 'b']}` | `{rev['a-1', 'a']}` |",
        f"| `demo/a-2` | rolls | `{rev['a-2', 'b']}` | `{rev['a-2', 'a']}` |",
        f"| `demo/model-1` | blocks ModelNotFound | `{rev['model-1', 'b']}` | blocked: ModelNotFound |",
    ]
    # One collapsible block per replica that moves; the unchanged ones are counted.
    assert md.count("<details>") == 3
    assert md.count("</details>") == 3
    assert "2 replicas whose verdict did not change not listed (2 unchanged)" in md
    assert f"<summary><code>demo/a-1</code> {a1.headline.replace('>', '&gt;')} (1 change)</summary>" in md
    assert f"<summary><code>demo/a-1</code> rolls {rev['a-1', 'b']} -&gt; {rev['a-1', 'a']} (1 change)" in md
    assert '```text\nrunner default: containers[ome-container].image: "img:1" -> "img:2"\n```' in md


def test_markdown_when_nothing_moves() -> None:
    objs = catalog(*base_objects())
    md = to_markdown(diff_replicas(FLEET, FLEET, objs, objs))
    assert "No replica changes its verdict." in md
    assert "| Replica |" not in md


def test_markdown_fences_outlast_backticks_in_values() -> None:
    d = ReplicaDiff(
        NS,
        "x",
        Status.ROLLS,
        outcome(on_runtime("x", "rt-a"), catalog(*base_objects())),
        outcome(on_runtime("x", "rt-a"), catalog(*base_objects())),
        (Change("runner default", "containers[c].args[0]", "changed", "a", "```"),),
    )
    md = to_markdown([d])
    assert '````text\nrunner default: containers[c].args[0]: "a" -> "```"\n````\n' in md


@pytest.mark.parametrize("status", list(Status))
def test_changed_is_what_omes_acts_on(status: Status) -> None:
    moving = {Status.ROLLS, Status.BLOCKS, Status.UNBLOCKS, Status.NEW, Status.REMOVED}
    assert ReplicaDiff(NS, "x", status, None, None).changed is (status in moving)
    # Unknown until downloaded is a change when the replica was known before.
    unknown = Outcome(blocked=Blocked("RuntimeSelectionFailed", "no format"), unknown=True)
    assert ReplicaDiff(NS, "x", Status.UNKNOWN, Outcome(revision="x-1"), unknown).changed
    assert not ReplicaDiff(NS, "x", Status.UNKNOWN, unknown, unknown).changed
