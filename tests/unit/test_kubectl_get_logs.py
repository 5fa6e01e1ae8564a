"""``kubectl ome get`` and ``logs`` without a cluster: usage refused before any request, the kubeconfig's
namespace, and ``logs`` against a fake ``Kube`` (what it lists, which container, how a refusal reads)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from omereconcile.kubectl import main
from omereconcile.kubectl.client import default_namespace
from omereconcile.kubectl.logs import DEFAULT_CONTAINER_ANNOTATION

# -- the CLI without a cluster ------------------------------------------------------------------------


def test_cli_rejects_irep_before_touching_the_api() -> None:
    out, err = io.StringIO(), io.StringIO()
    code = main(["get", "irep", "--kubeconfig", "/nonexistent"], out=out, err=err)
    assert code == 1
    assert out.getvalue() == ""
    assert err.getvalue() == (
        'error: unknown resource "irep" (valid resources: inferencereplicas, inferencereplica, ir)\n'
    )


def test_default_namespace_comes_from_the_kubeconfig_context(tmp_path: Path) -> None:
    kc = tmp_path / "config"
    kc.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: a\n"
        "contexts:\n- name: a\n  context: {cluster: c, user: u, namespace: llama-demo}\n"
        "- name: b\n  context: {cluster: c, user: u}\n"
    )
    assert default_namespace(str(kc), None) == "llama-demo"
    assert default_namespace(str(kc), "b") == "default"
    assert default_namespace(str(tmp_path / "missing"), None) == "default"


# -- kubectl ome logs against a fake Kube -------------------------------------------------------------


class _Raw:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self, size: int, decode_content: bool = True) -> list[bytes]:
        half = len(self.data) // 2  # split mid-line: lines must be reassembled
        return [self.data[:half], self.data[half:]]

    def release_conn(self) -> None:
        pass


class _Resp:
    def __init__(self, status: int, data: bytes) -> None:
        self.status = status
        self.response = _Raw(data)


class FakeKube:
    """What ``kubectl ome logs`` may call on ``Kube``: list pods, GET their logs, close."""

    def __init__(self, pods: list[dict[str, Any]], logs: dict[str, tuple[int, bytes]]) -> None:
        self.pods = pods
        self.logs = logs
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def list(self, path: str, **query: Any) -> dict[str, Any]:
        self.calls.append((path, query))
        return {"items": self.pods}

    def open_raw(self, path: str, *, query: dict[str, Any], **_: Any) -> _Resp:
        self.calls.append((path, query))
        return _Resp(*self.logs[path.split("/")[-2]])

    def close(self) -> None:
        pass


def _pod(name: str, containers: list[str], **annotations: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "annotations": annotations},
        "spec": {"containers": [{"name": c} for c in containers]},
    }


def _run_logs(kube: FakeKube, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["logs", *args], out=out, err=err, connect=lambda _args: kube)  # type: ignore[arg-type,return-value]
    return code, out.getvalue(), err.getvalue()


def test_logs_reads_every_selected_pod_and_never_an_inferenceservice() -> None:
    kube = FakeKube(
        [
            _pod("p-engine-1-default-0", ["sidecar", "ome-container"]),
            _pod(
                "p-engine-0-default-0",
                ["sidecar", "ome-container"],
                **{DEFAULT_CONTAINER_ANNOTATION: "ome-container"},
            ),
        ],
        {"p-engine-0-default-0": (200, b"zero a\nzero b\n"), "p-engine-1-default-0": (200, b"one a")},
    )
    code, out, err = _run_logs(kube, "p", "-n", "llama-demo")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "[pod/p-engine-0-default-0/ome-container] zero a",
        "[pod/p-engine-0-default-0/ome-container] zero b",
        "[pod/p-engine-1-default-0/sidecar] one a",
    ]
    assert kube.calls == [
        ("/api/v1/namespaces/llama-demo/pods", {"labelSelector": "ome.io/inferenceservice=p"}),
        ("/api/v1/namespaces/llama-demo/pods/p-engine-0-default-0/log", {"container": "ome-container"}),
        ("/api/v1/namespaces/llama-demo/pods/p-engine-1-default-0/log", {"container": "sidecar"}),
    ]
    assert not any("inferenceservices" in path for path, _ in kube.calls)


def test_logs_of_one_pod_are_unprefixed_and_follow_is_passed() -> None:
    kube = FakeKube([_pod("p-engine-0-default-0", ["c"])], {"p-engine-0-default-0": (200, b"hello\nworld\n")})
    code, out, _ = _run_logs(kube, "p", "-n", "ns", "-f", "--container", "c")
    assert (code, out) == (0, "hello\nworld\n")
    assert kube.calls[-1][1] == {"container": "c", "follow": "true"}


def test_a_refused_log_is_reported_in_kubectls_words() -> None:
    status = b'{"kind":"Status","status":"Failure","message":"container x is not valid","reason":"BadRequest","code":400}'
    kube = FakeKube(
        [_pod("p-engine-0-default-0", ["c"]), _pod("p-engine-1-default-0", ["c"])],
        {"p-engine-0-default-0": (400, status), "p-engine-1-default-0": (200, b"ok\n")},
    )
    code, out, err = _run_logs(kube, "p", "-n", "ns")
    assert code == 5  # an API error, as in every kubectl ome command
    assert out == "[pod/p-engine-1-default-0/c] ok\n"
    assert err == "pod/p-engine-0-default-0: Error from server (BadRequest): container x is not valid\n"


class ListKube:
    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items
        self.paths: list[tuple[str, dict[str, Any]]] = []

    def request(self, method: str, path: str, *, query: dict[str, Any], **_: Any) -> dict[str, Any]:
        self.paths.append((path, {k: v for k, v in query.items() if v is not None}))
        if path.endswith("/inferencereplicas"):
            return {"items": self.items, "metadata": {}}
        return self.items[0]

    def close(self) -> None:
        pass


def test_get_prints_the_objects_as_json_or_yaml() -> None:
    obj = {"metadata": {"name": "pool", "namespace": "ns"}, "spec": {"component": "engine"}}
    kube = ListKube([obj])
    out, err = io.StringIO(), io.StringIO()
    code = main(["get", "ir", "-n", "ns", "-o", "yaml"], out=out, err=err, connect=lambda _a: kube)  # type: ignore[arg-type,return-value]
    assert (code, err.getvalue()) == (0, "")
    assert out.getvalue().startswith("apiVersion: v1\nkind: List\nitems:\n- metadata:\n    name: pool\n")
    assert kube.paths == [("/apis/ome.io/v1beta1/namespaces/ns/inferencereplicas", {"limit": 500})]
    out = io.StringIO()
    code = main(["get", "ir", "pool", "-n", "ns", "-o", "json"], out=out, err=err, connect=lambda _a: kube)  # type: ignore[arg-type,return-value]
    assert code == 0
    assert '"kind": "InferenceReplica"' in out.getvalue()
