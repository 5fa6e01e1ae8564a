"""``kubectl ome diff -f`` without a cluster: how the files are applied to the live objects in memory, and
the verdicts, outputs and exit codes against a fake ``Kube`` serving the example catalog and replica.

The cluster test (tests/cluster/test_kubectl_diff_live.py) runs it with the real kubectl and reconciler."""

from __future__ import annotations

import copy
import io
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from omereconcile.cluster.kube import ApiError, Forbidden, NotFound
from omereconcile.kubectl import main
from omereconcile.kubectl.diff import applied, object_key
from omerender.catalog import Catalog
from omerender.diff import outcome
from omerender.models import InferenceReplica, parse_object

REPO = Path(__file__).resolve().parents[2]
NS = "llama-demo"
UID = "0b5c3d4e-1111-2222-3333-444455556666"
OLD_IMAGE = "docker.io/vllm/vllm-openai:v0.9.0.1"
NEW_IMAGE = "docker.io/vllm/vllm-openai:v0.9.1"


def _catalog_doc(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((REPO / "examples" / "catalog" / name).read_text())
    return doc


def _model() -> dict[str, Any]:
    return _catalog_doc("llama-3-2-1b-instruct.yaml")


def _runtime(image: str = OLD_IMAGE, **spec: Any) -> dict[str, Any]:
    doc = copy.deepcopy(_catalog_doc("vllm-llama-3-2-1b-instruct.yaml"))
    doc["spec"]["engineConfig"]["runner"]["image"] = image
    doc["spec"].update(spec)
    return doc


def _replica(name: str = "llama-pool", uid: str = UID) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((REPO / "examples" / "llama-pool.yaml").read_text())
    doc["metadata"].update(name=name, uid=uid)
    doc["status"] = {"collisionCount": 0}
    return doc


def _node(name: str, gpus: int) -> dict[str, Any]:
    return {"metadata": {"name": name}, "status": {"allocatable": {"nvidia.com/gpu": str(gpus), "cpu": "64"}}}


class FakeKube:
    """The GETs and lists ``kubectl ome diff`` makes, answered from a list of objects."""

    def __init__(self, objects: list[dict[str, Any]], nodes: Sequence[dict[str, Any]] = ()) -> None:
        self.objects = objects
        self.nodes = list(nodes)
        self.paths: list[str] = []

    def _items(self, path: str) -> list[dict[str, Any]]:
        parts = path.strip("/").split("/")
        if parts[-1] == "nodes":
            return self.nodes
        plural = parts[-1]
        ns = parts[parts.index("namespaces") + 1] if "namespaces" in parts else None
        return [
            copy.deepcopy(o)
            for o in self.objects
            if o["kind"].lower() + "s" == plural and (ns is None or o["metadata"].get("namespace") == ns)
        ]

    def request(self, method: str, path: str, **_: Any) -> dict[str, Any]:
        assert method == "GET", "kubectl ome diff writes nothing"
        self.paths.append(path)
        if "/configmaps/" in path:
            raise NotFound(404, "NotFound", "configmaps not found")
        return {"items": self._items(path), "metadata": {}}

    def list(self, path: str, **_: Any) -> dict[str, Any]:
        self.paths.append(path)
        return {"items": self._items(path), "metadata": {}}

    def close(self) -> None:
        pass


def _live() -> list[dict[str, Any]]:
    return [_model(), _runtime(), _replica()]


def _run(kube: FakeKube, *args: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["diff", *args, "-n", NS],
        out=out,
        err=err,
        stdin=io.StringIO(stdin),
        connect=lambda _a: kube,  # type: ignore[arg-type,return-value]
    )
    return code, out.getvalue(), err.getvalue()


def _write(tmp_path: Path, *docs: dict[str, Any], name: str = "changed.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def _live_revision() -> str:
    """The revision the controller creates for the live replica (its UID), computed independently."""
    replica = parse_object(InferenceReplica, _replica(), strict=False)
    rev = outcome(replica, Catalog.from_objects([_model(), _runtime()], strict=False)).revision
    assert rev is not None
    return rev


# -- applying the files in memory ------------------------------------------------------------------


def test_a_file_object_replaces_the_live_one_keeping_its_uid_and_status() -> None:
    live = [
        {
            "kind": "ClusterBaseModel",
            "metadata": {"name": "m", "uid": "u1"},
            "spec": {"a": 1},
            "status": {"state": "Ready"},
        },
        {"kind": "ServingRuntime", "metadata": {"name": "rt", "namespace": "ns"}, "spec": {"v": 1}},
    ]
    files = [
        # The status in a file is not applied (it is a subresource), so the live one stays.
        {
            "kind": "ClusterBaseModel",
            "metadata": {"name": "m"},
            "spec": {"a": 2},
            "status": {"state": "Failed"},
        },
        {"kind": "ServingRuntime", "metadata": {"name": "rt"}, "spec": {"v": 2}},  # takes -n's namespace
        {"kind": "ServingRuntime", "metadata": {"name": "rt", "namespace": "other"}, "spec": {"v": 3}},
        {"kind": "ClusterBaseModel", "metadata": {"name": "new"}, "spec": {}, "status": {"state": "Ready"}},
    ]
    out, lines = applied(live, files, "ns")
    by_key = {object_key(o, "ns"): o for o in out}
    assert by_key[("ClusterBaseModel", "", "m")] == {
        "kind": "ClusterBaseModel",
        "metadata": {"name": "m", "uid": "u1"},
        "spec": {"a": 2},
        "status": {"state": "Ready"},
    }
    assert by_key[("ServingRuntime", "ns", "rt")]["spec"] == {"v": 2}
    assert by_key[("ServingRuntime", "other", "rt")]["metadata"]["namespace"] == "other"
    # Created: no status until the model agent writes one, so the new model is not Ready yet.
    assert "status" not in by_key[("ClusterBaseModel", "", "new")]
    assert len(out) == 4
    assert lines == [
        "ClusterBaseModel m configured",
        "ServingRuntime ns/rt configured",
        "ServingRuntime other/rt created",
        "ClusterBaseModel new created",
    ]
    assert files[0]["status"] == {"state": "Failed"}  # the files' objects are left as read


def test_a_later_file_object_of_one_key_wins_as_in_kubectl_apply() -> None:
    out, lines = applied(
        [],
        [{"kind": "ClusterServingRuntime", "metadata": {"name": "r"}, "spec": {"v": v}} for v in (1, 2)],
        "ns",
    )
    assert [o["spec"] for o in out] == [{"v": 2}]
    assert lines == ["ClusterServingRuntime r created"]


# -- the command against a fake Kube --------------------------------------------------------------


def test_an_image_bump_rolls_the_live_replica_from_its_live_revision(tmp_path: Path) -> None:
    kube = FakeKube(_live())
    path = _write(tmp_path, _runtime(NEW_IMAGE))
    code, out, err = _run(kube, "-f", path)
    assert code == 1, err
    old = _live_revision()
    lines = out.splitlines()
    assert (
        lines[0]
        == "note: applied in memory to the live cluster: ClusterServingRuntime vllm-llama-3-2-1b-instruct configured"
    )
    assert lines[1].startswith(f"{NS}/llama-pool: rolls {old} -> llama-pool-engine-")
    assert f'.image: "{OLD_IMAGE}" -> "{NEW_IMAGE}"' in lines[2]
    assert err.endswith("diff: 1 replica: 1 rolls\n")
    assert (
        "Note: ClusterServingRuntime vllm-llama-3-2-1b-instruct is cluster-scoped: replicas outside "
        f"{NS} may use it too; -A diffs every namespace's\n"
    ) in err
    code, _, err = _run(FakeKube(_live()), "-f", path, "-A")
    assert code == 1
    assert "cluster-scoped" not in err
    # Read-only: only GETs and lists, in -n's namespace and cluster scope.
    assert all(
        "/namespaces/" not in p or f"/namespaces/{NS}/" in p or "/namespaces/ome/" in p for p in kube.paths
    )

    assert _run(FakeKube(_live()), "-f", path, "--fail-on", "blocks")[0] == 0
    code, out, _ = _run(FakeKube(_live()), "-f", path, "-o", "json")
    doc = json.loads(out)
    [rep] = doc["replicas"]
    assert (rep["status"], rep["before"]["revision"]) == ("rolls", old)
    assert doc["fails"] is True
    code, out, _ = _run(FakeKube(_live()), "-f", path, "-o", "markdown")
    assert code == 1
    assert "| rolls |" in out.replace("**", "")


def test_the_same_runtime_again_is_unchanged_and_stdin_reads_as_dash() -> None:
    code, out, err = _run(FakeKube(_live()), "-f", "-", "--show-unchanged", stdin=yaml.safe_dump(_runtime()))
    assert code == 0, err
    assert f"{NS}/llama-pool: unchanged" in out.splitlines()


def test_a_disabled_runtime_blocks_and_a_new_model_is_not_ready_until_downloaded(tmp_path: Path) -> None:
    code, out, _ = _run(FakeKube(_live()), "-f", _write(tmp_path, _runtime(disabled=True)))
    assert code == 1
    assert f"{NS}/llama-pool: blocks " in out
    # The model deleted from the live cluster and applied again from a file (with a status the apply
    # does not write): created without status, so the replica blocks until the agent marks it Ready.
    kube = FakeKube([_runtime(), _replica()])
    code, out, _ = _run(
        kube, "-f", _write(tmp_path, _model(), name="model.yaml"), "--fail-on", "none", "--show-unchanged"
    )
    assert code == 0
    assert "ClusterBaseModel llama-3-2-1b-instruct created" in out
    assert f"{NS}/llama-pool: still blocks " in out


def test_a_replica_in_the_files_keeps_its_live_uid(tmp_path: Path) -> None:
    changed = _replica()
    del changed["metadata"]["uid"], changed["status"]
    changed["spec"]["replicas"] = 3  # outside the revision hash
    code, out, err = _run(FakeKube(_live()), "-f", _write(tmp_path, changed), "-o", "json")
    assert code == 0, err
    [rep] = json.loads(out)["replicas"]
    assert rep["status"] == "unchanged"
    assert rep["after"]["revision"] == _live_revision()


def test_forecast_adds_the_cost_against_the_live_nodes(tmp_path: Path) -> None:
    path = _write(tmp_path, _runtime(NEW_IMAGE))
    code, out, err = _run(FakeKube(_live(), [_node("gpu-0", 8)]), "-f", path, "--forecast", "-o", "json")
    assert code == 1, err
    doc = json.loads(out)
    assert doc["replicas"][0]["status"] == "rolls"
    assert [r["replica"] for r in doc["forecast"]["replicas"]] == [f"{NS}/llama-pool"]
    assert "forecast: " in err
    # One accelerator: the roll's surge pod cannot be placed, the forecast's own exit code.
    code, out, err = _run(FakeKube(_live(), [_node("gpu-0", 1)]), "-f", path, "--forecast")
    assert code == 4, err
    assert "Unschedulable: Instance 0: a new pod cannot be placed" in out
    # None: the replica's pod is larger than every node: named, Pending before and after, said once,
    # and the forecast goes on (the diff's verdict, rolls, is the exit code).
    code, out, err = _run(FakeKube(_live(), [_node("cpu-0", 0)]), "-f", path, "--forecast")
    assert code == 1, err
    pending = f"{NS}/llama-pool: its default pod asks for 1 GPUs and the largest node has 0: Pending before"
    assert out.count(pending) == 1, out
    assert out.count("asks for 1 GPUs") == 1, out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "error: give the objects to apply with -f PATH"),
        (("-f", "MISSING"), "error: "),
        (("-f", "RUNTIME", "--fail-on", "sometimes"), "error: --fail-on sometimes: "),
        (("-f", "BAD"), "error: 1 problem in the catalog objects"),
        (("-f", "NOTHING"), "error: -f "),
    ],
)
def test_bad_usage_exits_2_naming_the_problem(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    bad = _runtime()
    bad["spec"]["notAField"] = 1
    files = {
        "MISSING": str(tmp_path / "missing.yaml"),
        "RUNTIME": _write(tmp_path, _runtime(), name="rt.yaml"),
        "BAD": _write(tmp_path, bad, name="bad.yaml"),
        "NOTHING": _write(
            tmp_path, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}, name="s.yaml"
        ),
    }
    code, out, err = _run(FakeKube(_live()), *[files.get(a, a) for a in args])
    assert (code, out) == (2, "")
    # Notes on what was skipped first, then the error and its indented details: never a traceback.
    error = [line for line in err.splitlines() if not line.startswith("Note: ")]
    assert error[0].startswith(message), err
    assert all(line.startswith("  ") for line in error[1:]), err


def test_report_writes_the_full_report_as_omerender_diff_does(tmp_path: Path) -> None:
    report = tmp_path / "full.json"
    path = _write(tmp_path, _runtime(NEW_IMAGE))
    code, out, _ = _run(FakeKube(_live()), "-f", path, "--report", str(report))
    assert code == 1
    assert out.splitlines()[1].startswith(f"{NS}/llama-pool: rolls {_live_revision()} -> ")
    assert json.loads(report.read_text())["replicas"][0]["status"] == "rolls"


def test_building_the_parser_does_not_load_the_rendering_library() -> None:
    # Every kubectl ome call builds the whole parser; diff's flags must not pull in the renderer.
    code = (
        "import sys, omereconcile.kubectl.app as app; app.parser(); "
        "print(sorted(m for m in sys.modules if m in ('omerender.cli.diff_cmd', 'omerender.catalog', "
        "'omerender.diff', 'omerender.models')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "[]"


def test_k_reads_a_kustomization_as_kubectl_apply_k(tmp_path: Path) -> None:
    folder = tmp_path / "overlay"
    folder.mkdir()
    _write(folder, _runtime(NEW_IMAGE), name="runtime.yaml")
    (folder / "kustomization.yaml").write_text("resources:\n  - runtime.yaml\n")
    code, out, err = _run(FakeKube(_live()), "-k", str(folder), "-o", "json")
    assert code == 1, err
    assert json.loads(out)["replicas"][0]["status"] == "rolls"


def test_live_uids_leave_no_empty_uid_notice(tmp_path: Path) -> None:
    """The live replica's uid names its revisions (as the controller does), so no output says the
    names are for an empty uid, not even for a file replica written without one."""
    changed = _replica()
    del changed["metadata"]["uid"], changed["status"]
    path = _write(tmp_path, _runtime(NEW_IMAGE), changed)
    for output in ("text", "markdown"):
        code, out, err = _run(FakeKube(_live()), "-f", path, "-o", output)
        assert code == 1, err
        assert "empty uid" not in out + err
    code, out, _ = _run(FakeKube(_live()), "-f", path, "-o", "json")
    doc = json.loads(out)
    [rep] = doc["replicas"]
    assert rep["before"]["revision"] == _live_revision()
    assert (rep["uidNotice"], rep["before"]["uidNotice"], rep["after"]["uidNotice"]) == (None, None, None)
    assert not any("empty uid" in note for note in doc["notes"])


class RefusingKube(FakeKube):
    """The API server refuses or cannot be reached: ``error`` is raised for every catalog request."""

    def __init__(self, error: Exception) -> None:
        super().__init__(_live())
        self.error = error

    def request(self, method: str, path: str, **kw: Any) -> dict[str, Any]:
        if "/configmaps/" not in path:
            raise self.error
        return super().request(method, path, **kw)

    def list(self, path: str, **_: Any) -> dict[str, Any]:
        raise self.error


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (ApiError(0, "", "connection refused (server 127.0.0.1:1)"), "error: connection refused"),
        (
            Forbidden(403, "Forbidden", "inferencereplicas.ome.io is forbidden"),
            "Error from server (Forbidden)",
        ),
        (NotFound(404, "NotFound", 'namespaces "nope" not found'), "Error from server (NotFound)"),
    ],
)
def test_a_diff_that_cannot_read_the_cluster_exits_5_not_a_verdicts_1(
    tmp_path: Path, error: ApiError, said: str
) -> None:
    # CI must tell "the diff found a roll" (1) from "the diff could not run" (5), whatever --fail-on says.
    path = _write(tmp_path, _runtime(NEW_IMAGE))
    for fail_on in ("rolls,blocks", "none"):
        code, out, err = _run(RefusingKube(error), "-f", path, "--fail-on", fail_on)
        assert (code, out) == (5, ""), err
        assert err.splitlines()[-1].startswith(said), err
