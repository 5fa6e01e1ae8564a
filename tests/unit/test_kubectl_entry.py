"""The console scripts kubectl finds on PATH name callables that exist, and every verb is wired."""

from __future__ import annotations

import importlib
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from omereconcile.kubectl.app import parser

REPO = Path(__file__).resolve().parents[2]


def test_the_console_scripts_point_at_the_package() -> None:
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    # The scripts start in omereconcile.entry, which names the missing extra instead of a traceback and
    # hands over to the package.
    assert scripts["kubectl-ome"] == "omereconcile.entry:kubectl_ome"
    assert scripts["kubectl_complete-ome"] == "omereconcile.entry:kubectl_complete_ome"
    for target in (scripts["kubectl-ome"], scripts["kubectl_complete-ome"]):
        module, func = target.split(":")
        assert callable(getattr(importlib.import_module(module), func))
    for module in ("omereconcile.kubectl", "omereconcile.kubectl.complete"):
        assert callable(importlib.import_module(module).main)


def test_every_command_parses() -> None:
    p = parser()
    for argv in (
        ["get", "ir"],
        ["logs", "pool"],
        ["rollout", "status", "ir/pool", "--watch", "--timeout", "5m"],
        ["rollout", "history", "ir/pool", "--revision", "2"],
        ["rollout", "undo", "ir/pool", "--to-revision", "1", "--dry-run=server", "--yes"],
        ["rollout", "pause", "ir/pool", "--freeze"],
        ["rollout", "resume", "ir/pool"],
        ["rollout", "restart", "ir/pool"],
        ["instance", "list", "ir/pool"],
        ["instance", "status", "ir/pool", "0"],
        ["instance", "retry-blocks", "ir/pool"],
        ["instance", "release-held", "ir/pool", "--revision", "abcd1234"],
        ["instance", "reset", "ir/pool", "all"],
        ["runtime", "explain", "--model", "m", "--component", "decoder"],
        ["runtime", "tree", "rt", "--kind", "ClusterServingRuntime"],
        ["wait", "ir/pool", "--for=condition=Ready", "--timeout=1m"],
        ["render", "ir/pool", "--instances", "2"],
    ):
        args = p.parse_args([*argv, "-n", "ns", "--context", "c", "--request-timeout", "10s"])
        assert callable(args.func), argv


def test_the_plugins_names_are_omes() -> None:
    from omereconcile.kubectl import client
    from omerender import constants

    for name in (
        "LABEL_INFERENCESERVICE",
        "LABEL_COMPONENT",
        "LABEL_INSTANCE_INDEX",
        "LABEL_INSTANCE_INCARNATION",
        "LABEL_REVISION_HASH",
        "ANNOTATION_RESET_INSTANCES",
        "ANNOTATION_RELEASE_HELD_REVISION",
    ):
        assert getattr(client, name) == getattr(constants, name)


def test_the_reading_verbs_do_not_load_the_rendering_library() -> None:
    # Each kubectl ome call is a fresh process: the library would double its start-up time.
    code = (
        "import sys, omereconcile.kubectl.app; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'omerender'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "[]"


def test_a_flag_value_the_command_cannot_use_is_a_usage_error() -> None:
    # Exit 2 is usage for every kubectl ome command (1 is a failed or held roll, an unmet wait, an API
    # error): a bad duration or --for is refused before any kubeconfig is read.
    import io

    from omereconcile.kubectl.app import main

    def no_cluster(_: object) -> object:
        raise AssertionError("a usage error must not reach the cluster")

    for argv in (
        ["rollout", "status", "ir/pool", "--timeout", "soon"],
        ["wait", "ir/pool", "--for=bogus"],
        ["wait", "ir/pool", "--for=condition=Ready", "--timeout", "0s"],
    ):
        err = io.StringIO()
        assert main(argv, out=io.StringIO(), err=err, connect=no_cluster) == 2, argv  # type: ignore[arg-type]
        assert err.getvalue().startswith("error: invalid --"), err.getvalue()


class _Unreachable:
    """A ``Kube`` whose every request fails as ``error`` (the server unreachable, or refusing)."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def close(self) -> None:
        pass

    def __getattr__(self, name: str) -> object:
        def fail(*_: object, **__: object) -> object:
            raise self.error

        return fail


# Every verb that reads the cluster (guarded writes read the replica first).
_READING = (
    ["get", "ir"],
    ["get", "ir", "pool"],
    ["logs", "pool"],
    ["rollout", "status", "ir/pool"],
    ["rollout", "history", "ir/pool"],
    ["rollout", "undo", "ir/pool", "--yes"],
    ["rollout", "pause", "ir/pool", "--yes"],
    ["rollout", "resume", "ir/pool", "--yes"],
    ["rollout", "restart", "ir/pool", "--yes"],
    ["instance", "list", "ir/pool"],
    ["instance", "status", "ir/pool", "0"],
    ["instance", "retry-blocks", "ir/pool"],
    ["instance", "release-held", "ir/pool", "--revision", "abcd1234", "--yes"],
    ["instance", "reset", "ir/pool", "all", "--yes"],
    ["runtime", "explain", "--model", "m"],
    ["runtime", "tree", "rt"],
    ["wait", "ir/pool", "--for=condition=Ready", "--timeout=1m"],
    ["render", "ir/pool"],
)


def test_a_cluster_that_cannot_be_read_exits_5_in_every_verb(tmp_path: Path) -> None:
    # 1 is an answer (a held roll, a timeout, a diff verdict); 5 says the command could not run at all,
    # so CI can tell them apart.
    import io

    from omereconcile.cluster.kube import ApiError, NotFound
    from omereconcile.kubectl.app import main

    changed = tmp_path / "rt.yaml"
    changed.write_text((REPO / "examples" / "catalog" / "vllm-llama-3-2-1b-instruct.yaml").read_text())
    unreachable = ApiError(0, "", "connection refused")
    for argv in (*_READING, ["diff", "-f", str(changed)]):
        out, err = io.StringIO(), io.StringIO()
        code = main([*argv, "-n", "ns"], out=out, err=err, connect=lambda _a: _Unreachable(unreachable))  # type: ignore[arg-type,return-value]
        assert (code, out.getvalue()) == (5, ""), (argv, err.getvalue())
        assert err.getvalue().splitlines()[-1] == "error: connection refused", (argv, err.getvalue())
    # A replica that is not there (404) is the API's answer too, not a failed roll or an unmet wait.
    missing = NotFound(404, "NotFound", 'inferencereplicas.ome.io "pool" not found')
    for argv in _READING:
        if argv[0] in ("runtime", "logs") or (argv[:2] == ["get", "ir"] and len(argv) == 2):
            continue
        err = io.StringIO()
        code = main([*argv, "-n", "ns"], out=io.StringIO(), err=err, connect=lambda _a: _Unreachable(missing))  # type: ignore[arg-type,return-value]
        assert code == 5, (argv, err.getvalue())
        assert "not found" in err.getvalue(), (argv, err.getvalue())


def test_help_lists_the_exit_codes() -> None:
    text = " ".join(parser().format_help().split())
    assert "5 the cluster could not be read (kubeconfig, connection, an API error such as 403 or 404)" in text
    assert "2 bad usage" in text


def test_an_unusable_kubeconfig_exits_5(tmp_path: Path) -> None:
    import io

    from omereconcile.kubectl.app import main

    err = io.StringIO()
    code = main(["get", "ir", "-n", "ns", "--kubeconfig", str(tmp_path / "none")], out=io.StringIO(), err=err)
    assert code == 5
    assert err.getvalue().startswith("error: cannot load the kubeconfig: "), err.getvalue()


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (bytes(range(128, 256)), "not a text file (a kubeconfig is YAML)"),
        (b"- a\n- b\n", "not a kubeconfig: a YAML mapping"),
        (b"clusters: [\n", "not valid YAML"),
    ],
    ids=["binary", "a-list", "not-yaml"],
)
def test_a_kubeconfig_of_bytes_or_the_wrong_shape_is_one_line_naming_the_file(
    tmp_path: Path, content: bytes, says: str
) -> None:
    import io

    from omereconcile.kubectl.app import main

    path = tmp_path / "config"
    path.write_bytes(content)
    err = io.StringIO()
    code = main(["get", "ir", "-o", "wide", "--kubeconfig", str(path)], out=io.StringIO(), err=err)
    assert code == 5
    assert err.getvalue().startswith(f"error: cannot load the kubeconfig: {path}: {says}"), err.getvalue()
    assert err.getvalue().count("\n") == 1, err.getvalue()
    assert "pass a working one with --kubeconfig" in err.getvalue()


def test_an_unreachable_api_server_exits_5_through_the_real_client(tmp_path: Path) -> None:
    # The real Kubernetes client against a port nothing listens on: the connection error reaches the
    # caller as an API error (exit 5), not as bad files (2) or a verdict (1).
    import io
    import socket

    from omereconcile.kubectl.app import main

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = tmp_path / "config"
    config.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: dead\n"
        f"clusters:\n- name: dead\n  cluster: {{server: 'https://127.0.0.1:{port}'}}\n"
        "users:\n- name: u\n  user: {token: t}\n"
        "contexts:\n- name: dead\n  context: {cluster: dead, user: u, namespace: ns}\n"
    )
    runtime = str(REPO / "examples" / "catalog" / "vllm-llama-3-2-1b-instruct.yaml")
    for argv in (["diff", "-f", runtime], ["rollout", "status", "ir/pool"], ["get", "ir"]):
        out, err = io.StringIO(), io.StringIO()
        code = main([*argv, "--kubeconfig", str(config)], out=out, err=err)
        assert (code, out.getvalue()) == (5, ""), (argv, err.getvalue())
        assert "Connection refused" in err.getvalue().splitlines()[-1], (argv, err.getvalue())
