"""The console scripts kubectl finds on PATH name callables that exist, and every verb is wired."""

from __future__ import annotations

import importlib
import subprocess
import sys
import tomllib
from pathlib import Path

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
