"""``omerender lint`` warns a multi-pod runtime that reads LeaderWorkerSet's LWS_* variables, which
OMENative pods do not carry (Go's buildOMENativeEnv sets none, DECISIONS §3.6)."""

from __future__ import annotations

from typing import Any

from omerender.catalog import Catalog
from omerender.lint import lint
from omerender.lint_lws import LWS_VARIABLE, lws_references

SGLANG_ARGS = [
    "--model-path=$(MODEL_PATH)",
    "--dist-init-addr=$(LWS_LEADER_ADDRESS):5000",
    "--nnodes=$(LWS_GROUP_SIZE)",
    "--node-rank=$(LWS_WORKER_INDEX)",
]


def _runtime(name: str, engine: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": name},
        "spec": {
            "supportedModelFormats": [{"name": "safetensors", "modelFormat": {"name": "safetensors"}}],
            "engineConfig": engine,
        },
    }


def _runner(args: list[str], env: list[dict[str, str]] | None = None) -> dict[str, Any]:
    runner: dict[str, Any] = {"name": "ome-container", "image": "sglang:1", "args": args}
    if env is not None:
        runner["env"] = env
    return runner


def _gang(leader_args: list[str], worker_args: list[str]) -> dict[str, Any]:
    return {"leader": {"runner": _runner(leader_args)}, "worker": {"size": 1, "runner": _runner(worker_args)}}


def _warnings(*runtimes: dict[str, Any]) -> list[Any]:
    report = lint(Catalog.from_objects(list(runtimes)))
    return [f for f in report.findings if f.code == LWS_VARIABLE]


def test_runtime_reading_lws_leader_address_is_warned_with_the_ome_variable() -> None:
    (finding,) = _warnings(_runtime("srt-gang", _gang(SGLANG_ARGS, SGLANG_ARGS)))
    assert finding.severity == "warning"
    assert finding.subject == "ClusterServingRuntime srt-gang"
    assert finding.component == "engine"
    assert finding.problem == (
        "reads LWS_LEADER_ADDRESS, LWS_GROUP_SIZE and LWS_WORKER_INDEX, which OMENative pods do not carry "
        "(OME sets no LWS_* variable): they stay unset; use OME_LEADER_ADDRESS for LWS_LEADER_ADDRESS, "
        "OME_INSTANCE_POD_COUNT for LWS_GROUP_SIZE and OME_INSTANCE_POD_RANK for LWS_WORKER_INDEX, the "
        "same values (in leader ome-container and worker ome-container)"
    )


def test_one_variable_in_a_shell_command_names_its_ome_variable() -> None:
    leader = ["sh", "-c", "exec server --leader ${LWS_LEADER_ADDRESS}"]
    (finding,) = _warnings(_runtime("shell", _gang(leader, ["--worker"])))
    assert finding.problem.startswith("reads LWS_LEADER_ADDRESS, which OMENative pods do not carry")
    assert "use OME_LEADER_ADDRESS for LWS_LEADER_ADDRESS, the same value (in leader ome-container)" in (
        finding.problem
    )


def test_an_lws_variable_with_no_ome_counterpart_says_so() -> None:
    (finding,) = _warnings(_runtime("odd", _gang(["--name=$(LWS_NAME)"], [])))
    assert "no OME_* variable carries LWS_NAME" in finding.problem


def test_no_warning_for_ome_variables_single_pod_or_a_runtime_that_sets_the_variable() -> None:
    ome_args = ["--dist-init-addr=$(OME_LEADER_ADDRESS):5000", "--nnodes=$(OME_INSTANCE_POD_COUNT)"]
    own = {
        "leader": {"runner": _runner(SGLANG_ARGS, [{"name": "LWS_LEADER_ADDRESS", "value": "x"}])},
        "worker": {"size": 1, "runner": _runner(["--addr=$(LWS_LEADER_ADDRESS)"])},
    }
    assert not _warnings(
        _runtime("ome-vars", _gang(ome_args, ome_args)),
        _runtime("single", {"runner": _runner(SGLANG_ARGS)}),
    )
    (finding,) = _warnings(_runtime("own", own))
    # The leader sets LWS_LEADER_ADDRESS itself; the worker does not.
    assert finding.problem.endswith("(in leader ome-container and worker ome-container)")
    assert "OME_LEADER_ADDRESS for LWS_LEADER_ADDRESS" in finding.problem
    assert lws_references([own["leader"]["runner"]]) == {
        "LWS_GROUP_SIZE": ["ome-container"],
        "LWS_WORKER_INDEX": ["ome-container"],
    }
