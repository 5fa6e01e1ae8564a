"""Guarded actions without a cluster: what is sent (merge patch + uid/resourceVersion preconditions,
``dryRun=All``), what confirms, what a conflict returns, and the refusals that come before any write."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from omereconcile.cluster.kube import Conflict
from omereconcile.kubectl import main

NS = "llama-demo"
PATH = f"/apis/ome.io/v1beta1/namespaces/{NS}/inferencereplicas/pool"


class FakeKube:
    """Answers GET of the replica (and its revisions); records every PATCH, or refuses it."""

    def __init__(self, obj: dict[str, Any], conflict: bool = False) -> None:
        self.obj = obj
        self.conflict = conflict
        self.patches: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def request(
        self, method: str, path: str, *, query: Any = None, body: Any = None, **_: Any
    ) -> dict[str, Any]:
        if method == "PATCH":
            assert path == PATH
            self.patches.append((body, {k: v for k, v in (query or {}).items() if v is not None}))
            if self.conflict:
                raise Conflict(409, "Conflict", "the object has been modified")
            return self.obj
        if path == PATH:
            return self.obj
        assert "controllerrevisions" in path, path
        return {"items": []}

    def close(self) -> None:
        pass


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def replica(**spec: Any) -> dict[str, Any]:
    return {
        "kind": "InferenceReplica",
        "metadata": {"name": "pool", "namespace": NS, "uid": "u-1", "resourceVersion": "42", "generation": 1},
        "spec": {"component": "engine", "modelRef": {"name": "m"}, **spec},
        "status": {},
    }


def run(kube: FakeKube, *args: str, stdin: io.StringIO | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([*args, "-n", NS], out=out, err=err, stdin=stdin or io.StringIO(), connect=lambda _a: kube)  # type: ignore[arg-type,return-value]
    return code, out.getvalue(), err.getvalue()


def test_server_dry_run_sends_the_patch_with_preconditions_and_dry_run_all() -> None:
    kube = FakeKube(replica())
    code, out, err = run(
        kube, "rollout", "pause", "ir/pool", "--freeze", "--dry-run=server", "--yes", "-o", "json"
    )
    assert code == 0, err
    assert kube.patches == [
        (
            {
                "spec": {"paused": True, "pauseMode": "Freeze"},
                "metadata": {"uid": "u-1", "resourceVersion": "42"},
            },
            {"dryRun": "All"},
        )
    ]
    result = json.loads(out)
    assert {k: result[k] for k in ("apiVersion", "kind", "action", "dryRun", "accepted", "applied")} == {
        "apiVersion": "cli.ome.io/v1alpha1",
        "kind": "ActionResult",
        "action": "rollout pause",
        "dryRun": "server",
        "accepted": True,
        "applied": False,
    }
    assert result["target"] == {
        "kind": "InferenceReplica",
        "namespace": NS,
        "name": "pool",
        "uid": "u-1",
        "resourceVersion": "42",
    }
    # The preview went to stderr, not stdout.
    assert "merge patch:" in err


def test_client_dry_run_sends_nothing_and_claims_nothing() -> None:
    kube = FakeKube(replica())
    code, out, _ = run(kube, "rollout", "pause", "ir/pool", "--dry-run=client", "--yes", "-o", "yaml")
    assert code == 0
    assert kube.patches == []
    assert "accepted: false\napplied: false\n" in out


def test_confirmation_without_a_terminal_needs_yes_and_a_prompt_defaults_to_no() -> None:
    kube = FakeKube(replica())
    code, out, err = run(kube, "rollout", "pause", "ir/pool")
    assert (code, out, kube.patches) == (1, "", [])
    assert err.endswith("not confirmed; pass --yes to confirm without a terminal\n")
    for answer in ("\n", "n\n", "maybe\n"):
        code, _, err = run(kube, "rollout", "pause", "ir/pool", stdin=Tty(answer))
        assert (code, kube.patches) == (1, [])
        assert "? [y/N]: " in err
    code, out, _ = run(kube, "rollout", "pause", "ir/pool", stdin=Tty("y\n"))
    assert code == 0
    assert len(kube.patches) == 1
    assert [line.split() for line in out.splitlines()][5] == ["applied", "Yes"]


def test_a_changed_object_is_exit_3_and_not_retried() -> None:
    kube = FakeKube(replica(), conflict=True)
    code, out, err = run(kube, "rollout", "pause", "ir/pool", "--yes")
    assert (code, out, len(kube.patches)) == (3, "", 1)
    assert "precondition failed" in err
    assert "resourceVersion 42" in err


def test_refusals_before_any_write() -> None:
    kube = FakeKube(replica())
    code, _, err = run(kube, "rollout", "restart", "ir/pool", "--yes")
    assert code == 1
    assert "renders its pods from spec.modelRef" in err
    code, _, err = run(kube, "rollout", "resume", "ir/pool", "--yes")
    assert (code, err) == (1, 'error: inferencereplica "pool" is not paused\n')
    code, _, err = run(
        FakeKube(replica(paused=True, pauseMode="Freeze")), "rollout", "pause", "ir/pool", "--yes"
    )
    assert (code, err) == (1, 'error: inferencereplica "pool" is already paused (pauseMode Freeze)\n')
    code, _, err = run(kube, "instance", "release-held", "ir/pool", "--revision", "abcd1234", "--yes")
    assert code == 1
    assert "no retry block (Held revisions: none)" in err
    code, _, err = run(kube, "instance", "reset", "ir/pool", "1,-2", "--yes")
    assert code == 1
    assert '"-2" is not a non-negative instance index' in err
    code, _, err = run(kube, "rollout", "undo", "ir/pool", "--yes")
    assert (code, err) == (1, 'error: no rollout history found for inferencereplica "pool"\n')
    assert kube.patches == []


@pytest.mark.parametrize(("which", "value"), [("all", "all"), ("2, 0,2", "2,0")])
def test_reset_writes_the_annotation_the_controller_parses(which: str, value: str) -> None:
    kube = FakeKube(replica())
    code, _, err = run(kube, "instance", "reset", "ir/pool", which, "--yes")
    assert code == 0, err
    assert kube.patches[0][0]["metadata"]["annotations"] == {"ome.io/reset-instances": value}


def test_release_held_names_the_held_block_by_hash_and_refuses_any_other_state() -> None:
    blocks = [
        {"targetRevision": "pool-engine-aaaa1111", "state": "Backoff"},
        {"targetRevision": "pool-engine-bbbb2222", "state": "Held"},
    ]
    obj = replica()
    obj["status"] = {"retryBlocks": blocks}
    kube = FakeKube(obj)
    code, out, err = run(
        kube, "instance", "release-held", "ir/pool", "--revision", "bbbb2222", "--yes", "-o", "json"
    )
    assert code == 0, err
    annotations = kube.patches[0][0]["metadata"]["annotations"]
    assert annotations == {"ome.io/release-held-revision": "pool-engine-bbbb2222"}
    assert json.loads(out)["revisionHash"] == "bbbb2222"
    code, _, err = run(kube, "instance", "release-held", "ir/pool", "--revision", "aaaa1111", "--yes")
    assert code == 1
    assert "its retry block is Backoff, not Held (Held revisions: pool-engine-bbbb2222)" in err
    obj["metadata"]["annotations"] = {"ome.io/release-held-revision": "pool-engine-bbbb2222"}
    code, _, err = run(kube, "instance", "release-held", "ir/pool", "--revision", "bbbb2222", "--yes")
    assert code == 1
    assert "not yet answered" in err
    assert len(kube.patches) == 1
