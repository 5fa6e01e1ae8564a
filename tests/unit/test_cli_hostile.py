"""Hostile and careless input to every command: exit 2 naming the file and what to fix, never a
traceback, at a bounded cost; a bug is exit 3 with one line. A hypothesis fuzz feeds random YAML
documents to every command (derandomized; see the README for a longer run)."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omerender.cli import main
from omerender.jsonlike import MAX_DEPTH

ROOT = Path(__file__).resolve().parents[2]
REPLICA_TEXT = (ROOT / "examples" / "llama-pool.yaml").read_text()
CATALOG = ROOT / "examples" / "catalog"
RUNTIME = yaml.safe_load((CATALOG / "vllm-llama-3-2-1b-instruct.yaml").read_text())
MODEL_TEXT = (CATALOG / "llama-3-2-1b-instruct.yaml").read_text()
BOMB = "a0: &a0 [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9)
)


def _write(tmp_path: Path, name: str, data: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return str(path)


def _runtime_dir(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> str:
    runtime = yaml.safe_load(yaml.safe_dump(RUNTIME))
    edit(runtime["spec"]["engineConfig"])
    folder = tmp_path / "catalog"
    folder.mkdir()
    (folder / "model.yaml").write_text(MODEL_TEXT)
    (folder / "runtime.yaml").write_text(yaml.safe_dump(runtime))
    return str(folder)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """Exit code and stderr (stdout stays in ``_run.out`` for the tests that read it)."""
    code = main(list(argv))
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    _run.out = captured.out  # type: ignore[attr-defined]
    return code, captured.err


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("latin1.yaml", REPLICA_TEXT.replace("llama-demo", "dém").encode("latin-1"), "is not UTF-8"),
        ("binary.yaml", bytes(range(256)) * 8, "a binary file"),
        ("deep.yaml", "a: " + "[" * 100_000 + "]" * 100_000, f"nested deeper than {MAX_DEPTH} levels"),
        ("bigint.yaml", REPLICA_TEXT.replace("replicas: 1", "replicas: " + "9" * 5000), "5000 digits"),
        ("cycle.yaml", REPLICA_TEXT + "  extra: &a [*a]\n", "refers to the node that holds it"),
        (
            "bomb.yaml",
            "kind: ConfigMap\ndata:\n" + "".join(f"  {line}\n" for line in BOMB.splitlines()),
            "alias bomb",
        ),
        ("kind.yaml", "kind: [a]\nmetadata: {name: x}\n", "kind is a list"),
        ("binarytag.yaml", "kind: ConfigMap\ndata: !!binary aGk=\n", "not JSON data"),
        ("booltag.yaml", "kind: ConfigMap\ndata: {a: !!bool 1.5}\n", "!!bool cannot hold '1.5'; write true"),
        (
            "floattag.yaml",
            "kind: ConfigMap\ndata: {a: !!float ~}\n",
            "!!float cannot hold '~'; write a number",
        ),
        (
            "inttag.yaml",
            "kind: ConfigMap\ndata: {a: !!int ''}\n",
            "!!int cannot hold ''; write a whole number",
        ),
        ("intfloat.yaml", "kind: ConfigMap\ndata: {a: !!int 1.5}\n", "!!int cannot hold '1.5'"),
        ("booltagmap.yaml", "kind: ConfigMap\ndata: {a: !!bool [1]}\n", "!!bool cannot hold a list or map"),
    ],
)
def test_unreadable_objects_exit_2_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, data: str | bytes, expected: str
) -> None:
    bad = _write(tmp_path, name, data)
    replica = _write(tmp_path, "replica.yaml", REPLICA_TEXT)
    for argv in (
        ["render", replica, "--objects", str(CATALOG), bad],
        ["lint", "--objects", bad],
        ["validate", replica, "--objects", bad],
        ["diff", "--before", bad, "--after", str(CATALOG), "-f", replica],
    ):
        code, err = _run(capsys, *argv)
        assert code == 2, argv
        assert err.startswith(f"omerender {argv[0]}: {bad}: "), err
        assert expected in err


@pytest.mark.parametrize(
    ("edit", "field", "expected"),
    [
        (
            lambda p: p["runner"].__setitem__("env", "A=1"),
            "runner.env",
            "into Go value of type []core/v1.EnvVar",
        ),
        (lambda p: p.__setitem__("volumes", "dshm"), "volumes", "into Go value of type []core/v1.Volume"),
        (lambda p: p["runner"].__setitem__("resources", "big"), "runner.resources", "ResourceRequirements"),
        (lambda p: p["runner"].__setitem__("env", [None]), "runner.env[0]", "null item"),
        (lambda p: p.__setitem__("tolerations", [None]), "tolerations[0]", "null item"),
        (
            lambda p: p["runner"]["resources"]["limits"].__setitem__("nvidia.com/gpu", "lots"),
            "nvidia.com/gpu",
            "quantities",
        ),
        (lambda p: p["runner"]["ports"][0].__setitem__("containerPort", "http"), "containerPort", "int32"),
    ],
)
def test_runtime_pieces_of_the_wrong_shape_exit_2_and_lint_reports_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Any, field: str, expected: str
) -> None:
    catalog = _runtime_dir(tmp_path, edit)
    replica = _write(tmp_path, "replica.yaml", REPLICA_TEXT)
    code, err = _run(capsys, "render", replica, "--objects", catalog)
    assert code == 2
    assert err.startswith(
        f"omerender render: {catalog}/runtime.yaml: "
        "ClusterServingRuntime vllm-llama-3-2-1b-instruct is invalid: spec.engineConfig."
    )
    assert field in err
    assert expected in err
    code, _ = _run(capsys, "lint", "--objects", catalog)
    assert code == 1
    out = _run.out  # type: ignore[attr-defined]
    assert out.startswith("error InvalidObject: ")
    assert (
        f"\n  ClusterServingRuntime vllm-llama-3-2-1b-instruct [-] ({catalog}/runtime.yaml): "
        "invalid: spec.engineConfig." in out
    )
    assert expected in out


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("  name: llama-pool\n", "", "metadata.name: required"),
        ("ome.io/v1beta1", "ome.io/v9", "apiVersion: 'ome.io/v9' is not served; use ome.io/v1beta1"),
        ("  replicas: 1", "  replicas: 1\n  replicaz: 3", "replicaz"),
        ("name: llama-pool", "name: Llama_Pool", "is not a DNS-1123 subdomain"),
        ("name: llama-pool", "name: " + "a" * 100, "ome.io/inferenceservice label, which holds at most 63"),
    ],
)
def test_render_refuses_what_kubectl_apply_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, expected: str
) -> None:
    replica = _write(tmp_path, "replica.yaml", REPLICA_TEXT.replace(old, new))
    code, err = _run(capsys, "render", replica, "--objects", str(CATALOG))
    assert code == 2
    assert err.startswith(f"omerender render: {replica}: InferenceReplica ")
    assert expected in err
    # validate answers "denied" (exit 1) for the same replica, with the same words.
    code, _ = _run(capsys, "validate", replica)
    assert code == 1
    assert expected in _run.out  # type: ignore[attr-defined]


def test_validate_refuses_a_100_character_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    replica = _write(tmp_path, "r.yaml", REPLICA_TEXT.replace("name: llama-pool", "name: " + "a" * 100))
    code, _ = _run(capsys, "validate", replica)
    assert code == 1
    assert "metadata.name: 100 characters" in _run.out  # type: ignore[attr-defined]


@pytest.mark.parametrize("count", ["100000", "-1"])
def test_instances_are_capped(tmp_path: Path, capsys: pytest.CaptureFixture[str], count: str) -> None:
    replica = _write(tmp_path, "replica.yaml", REPLICA_TEXT)
    code, err = _run(capsys, "render", replica, "--objects", str(CATALOG), "--instances", count)
    assert code == 2
    assert "--instances must be between 0 and 1000" in err


@pytest.mark.parametrize(("number", "silent"), [(errno.ENOSPC, False), (errno.EPIPE, True)])
def test_output_that_cannot_be_written_is_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    number: int,
    silent: bool,
) -> None:
    replica = _write(tmp_path, "replica.yaml", REPLICA_TEXT)

    def full(_text: str) -> int:
        raise OSError(number, os.strerror(number))

    monkeypatch.setattr("sys.stdout.write", full)
    monkeypatch.setattr("sys.stdout.fileno", lambda: os.open(os.devnull, os.O_WRONLY))
    code, err = _run(capsys, "render", replica, "--objects", str(CATALOG))
    assert code == 2
    assert (err == "") if silent else err.startswith("omerender render: cannot write the output: ")


def test_a_bug_is_exit_3_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise KeyError("boom")

    monkeypatch.setattr("omerender.cli.render_cmd.preview", broken)
    replica = _write(tmp_path, "replica.yaml", REPLICA_TEXT)
    code, err = _run(capsys, "render", replica, "--objects", str(CATALOG))
    assert code == 3
    assert err.startswith("omerender render: internal error (KeyError): this is a bug in omerender")
    assert err.count("\n") == 1
    with pytest.raises(KeyError):  # --traceback: the bug surfaces with its traceback
        main(["--traceback", "render", str(replica), "--objects", str(CATALOG)])


# -- fuzz --------------------------------------------------------------------------------------------

FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=int(os.environ.get("OMERENDER_FUZZ_EXAMPLES", "300")),
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6) | st.integers(), inner, max_size=3)
    ),
    max_leaves=12,
)
kinds = (
    st.sampled_from(
        [
            "InferenceReplica",
            "ClusterServingRuntime",
            "ServingRuntime",
            "ClusterBaseModel",
            "BaseModel",
            "FineTunedWeight",
            "InferenceService",
            "ConfigMap",
            "List",
        ]
    )
    | values
)
documents = (
    st.fixed_dictionaries(
        {"kind": kinds},
        optional={
            "apiVersion": st.sampled_from(["ome.io/v1beta1", "v1"]) | values,
            "metadata": st.fixed_dictionaries(
                {}, optional={"name": st.sampled_from(["x", "llama-pool"]) | values, "namespace": values}
            )
            | values,
            "spec": st.fixed_dictionaries(
                {},
                optional={
                    "component": st.sampled_from(["engine", "router"]) | values,
                    "modelRef": values,
                    "runtimeRef": values,
                    "runners": values,
                    "engineConfig": values,
                    "routerConfig": values,
                    "modelFormat": values,
                },
            )
            | values,
            "items": values,
        },
    )
    | values
)
texts = (
    st.lists(documents, min_size=1, max_size=3).map(lambda docs: yaml.safe_dump_all(docs, allow_unicode=True))
    | st.text(max_size=200)
    | st.binary(max_size=200)
)


@FUZZ
@given(texts)
def test_fuzz_every_command_exits_0_1_or_2_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | bytes
) -> None:
    path = tmp_path / "fuzz.yaml"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    good = str(tmp_path / "good.yaml")
    Path(good).write_text(REPLICA_TEXT)
    for argv in (
        ["render", str(path), "--objects", str(CATALOG)],
        ["render", good, "--objects", str(path)],
        ["lint", "--no-schema", "--objects", str(path)],
        ["validate", str(path), "--objects", str(path)],
        ["diff", "--before", str(path), "--after", str(CATALOG), "-f", good],
    ):
        code, err = _run(capsys, *argv)
        assert code in (0, 1, 2), (argv, err)
        capsys.readouterr()
