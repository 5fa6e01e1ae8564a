"""``omerender.load``: the reader the command line uses, public for tools (paths, text, streams,
kustomizations), with provenance, duplicates resolved as ``kubectl apply -R`` leaves them, what it
skips said once, and the bounded-cost limits."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
import yaml

import omerender
from omerender import InferenceReplica, Kustomization, LoadError, Text, load, load_text
from omerender.loader import READ_KINDS

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "examples" / "catalog"
REPLICA = ROOT / "examples" / "llama-pool.yaml"

Obj = dict[str, Any]


def model(name: str = "m", **meta: Any) -> Obj:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterBaseModel",
        "metadata": {"name": name, **meta},
        "spec": {"modelFormat": {"name": "safetensors"}, "storage": {"storageUri": "hf://x/y"}},
    }


def write(path: Path, *docs: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return path


def test_it_is_the_public_name() -> None:
    assert omerender.load is load
    assert "load" in omerender.__all__


def test_paths_give_typed_objects_with_file_and_document() -> None:
    loaded = load(CATALOG, REPLICA)
    assert [(o.kind, o.origin.source, o.origin.document) for o in loaded.objects] == [
        ("ClusterBaseModel", str(CATALOG / "llama-3-2-1b-instruct.yaml"), 1),
        ("ClusterServingRuntime", str(CATALOG / "vllm-llama-3-2-1b-instruct.yaml"), 1),
        ("InferenceReplica", str(REPLICA), 1),
    ]
    (replica,) = loaded.replicas()
    assert isinstance(replica, InferenceReplica)
    assert replica.metadata.name == "llama-pool"
    assert isinstance(loaded.objects[2].model(), InferenceReplica)
    result = omerender.preview(replica, loaded.catalog())
    assert result.revision.name.startswith("llama-pool-engine-")


def test_text_and_streams_read_alike() -> None:
    text = REPLICA.read_text()
    from_text = load_text(text, name="mine.yaml")
    from_bytes = load(Text(text.encode(), "b"))
    from_stream = load(io.StringIO(text))
    from_binary = load(io.BytesIO(text.encode()))
    for loaded in (from_text, from_bytes, from_stream, from_binary):
        assert [o.name for o in loaded.objects] == ["llama-pool"]
    assert from_text.objects[0].origin.source == "mine.yaml"
    assert from_stream.objects[0].origin.source == "<stream>"


def test_documents_and_list_items_are_numbered() -> None:
    text = yaml.safe_dump_all(
        [
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}},
            {"apiVersion": "v1", "kind": "List", "items": [model("a"), model("b")]},
        ]
    )
    loaded = load_text(text)
    assert [(o.name, str(o.origin)) for o in loaded.objects] == [
        ("a", "<text>, document 2, item 0"),
        ("b", "<text>, document 2, item 1"),
    ]


def test_folders_read_yaml_yml_and_json_only_and_a_named_file_whatever_its_name(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", model("a"))
    write(tmp_path / "sub" / "b.yml", model("b"))
    (tmp_path / "c.json").write_text(
        '{"apiVersion": "ome.io/v1beta1", "kind": "ClusterBaseModel", '
        '"metadata": {"name": "c"}, "spec": {"modelFormat": {"name": "x"}}}'
    )
    (tmp_path / "SUPPORTED_MODELS.md").write_text("| model | runtime |\n| --- | --- |\n")
    write(tmp_path / "notes.txt", model("txt"))
    assert [o.name for o in load(tmp_path).objects] == ["a", "c", "b"]
    assert [o.name for o in load(tmp_path / "notes.txt").objects] == ["txt"]


def test_documents_no_command_reads_are_skipped_and_summed_up_once(tmp_path: Path) -> None:
    patches = tmp_path / "config" / "crd" / "patches" / "webhook.yaml"
    patches.parent.mkdir(parents=True)
    patches.write_text("- op: add\n  path: /spec/x\n  value: 1\n")
    write(tmp_path / "config" / "crd" / "kustomization.yaml", {"resources": ["a.yaml"]})
    write(
        tmp_path / "mixed.yaml",
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "e"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other"}},
        {"metadata": {"name": "no-kind"}},
        model("kept"),
    )
    loaded = load(tmp_path)
    assert [o.name for o in loaded.objects] == ["kept"]
    assert len(loaded.skipped) == 6
    note = loaded.skipped_note()
    assert note is not None
    assert note.startswith("skipped 6 documents: 3 without kind or apiVersion (patch lists and the like: ")
    assert "3 of kinds no command reads (Deployment ×2, ConfigMap)" in note
    assert str(patches) in note
    assert load(REPLICA).skipped_note() is None


def test_an_unknown_ome_kind_is_an_error_naming_file_and_object(tmp_path: Path) -> None:
    bad = write(tmp_path / "m.yaml", {**model("llama"), "kind": "ClusterBaseModle"}, model("fine"))
    with pytest.raises(LoadError) as info:
        load(bad)
    message = str(info.value)
    assert f"{bad}: ClusterBaseModle llama: kind: 'ClusterBaseModle' is not a kind OME defines" in message
    assert "did you mean ClusterBaseModel?" in message


def test_catalog_objects_are_checked_as_kubectl_apply_would_unless_told_not_to(tmp_path: Path) -> None:
    bad = {**model("Bad_Name")}
    bad["spec"] = {**bad["spec"], "modelFromat": {}}
    file = write(tmp_path / "m.yaml", bad)
    with pytest.raises(LoadError) as info:
        load(file)
    assert "2 problems in the catalog objects" in str(info.value)
    assert "metadata.name: 'Bad_Name' is not a DNS-1123 subdomain" in str(info.value)
    assert "spec.modelFromat: is not a known field" in str(info.value)
    assert [o.name for o in load(file, check=False).objects] == ["Bad_Name"]


def test_the_later_duplicate_wins_unless_duplicates_are_errors(tmp_path: Path) -> None:
    first = write(tmp_path / "a.yaml", model("m", labels={"v": "1"}))
    second = write(tmp_path / "b.yaml", model("m", labels={"v": "2"}))
    loaded = load(first, second)
    assert [o.raw["metadata"]["labels"] for o in loaded.objects] == [{"v": "2"}]
    assert loaded.duplicates == (f"ClusterBaseModel m is defined in {first} and again in {second}",)
    with pytest.raises(LoadError, match="1 duplicate catalog object"):
        load(first, second, duplicates="error")


def test_replicas_are_never_merged_a_repeated_one_is_an_error(tmp_path: Path) -> None:
    loaded = load(REPLICA, REPLICA)
    assert len(loaded.of_kind("InferenceReplica")) == 2
    with pytest.raises(LoadError, match="appears twice"):
        loaded.replicas()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: " + "[" * 1000 + "]" * 1000, "nested deeper than"),
        ("kind: [a]\n", "kind is a list"),
        ("a: [\n", "not valid YAML"),
        (b"\xff\xfe", "is not UTF-8"),
    ],
)
def test_the_bounded_cost_limits_hold_for_text_too(text: str | bytes, expected: str) -> None:
    with pytest.raises(LoadError, match=expected) as info:
        load(Text(text, "in.yaml"))
    assert str(info.value).startswith("in.yaml")


def test_a_too_large_stream_is_refused_before_it_is_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("omerender.loader.MAX_FILE_BYTES", 64)
    with pytest.raises(LoadError, match="more than the 64 a file may hold"):
        load(io.BytesIO(b"#" * 100))


def test_a_missing_path_is_an_error() -> None:
    with pytest.raises(LoadError, match=r"nope\.yaml: no such file or folder"):
        load("nope.yaml")


def test_what_it_keeps_is_what_some_command_reads() -> None:
    assert {
        "BaseModel",
        "ClusterBaseModel",
        "ServingRuntime",
        "ClusterServingRuntime",
        "FineTunedWeight",
        "InferenceService",
        "InferenceReplica",
    } == READ_KINDS


# -- kustomizations ----------------------------------------------------------------------------


def _kustomized(tmp_path: Path) -> Path:
    base = tmp_path / "base"
    write(base / "listed.yaml", model("listed"))
    write(base / "unlisted.yaml", model("unlisted"))
    write(base / "nested" / "deep.yaml", model("deep"))
    write(base / "nested" / "kustomization.yaml", {"resources": ["deep.yaml"]})
    write(
        base / "kustomization.yaml",
        {
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "resources": ["listed.yaml", "nested"],
            "patches": [{"path": "p.yaml"}],
            "images": [{"name": "x", "newTag": "2"}],
        },
    )
    return base


def test_a_kustomization_without_kustomize_reads_its_resources_and_says_what_it_did_not_apply(
    tmp_path: Path,
) -> None:
    base = _kustomized(tmp_path)
    loaded = load(Kustomization(base))
    assert [o.name for o in loaded.objects] == ["listed", "deep"]
    (note,) = loaded.notes
    assert note.startswith(f"{base / 'kustomization.yaml'}: read without kustomize")
    assert note.endswith("patches, images not applied")
    # The same folder read recursively holds every file, and says a kustomization was there.
    recursive = load(base)
    assert sorted(o.name for o in recursive.objects) == ["deep", "listed", "unlisted"]
    assert any(f"read it with -k {base}" in n for n in recursive.notes)


def test_a_kustomization_is_built_by_the_build_function_when_it_gives_a_stream(tmp_path: Path) -> None:
    base = _kustomized(tmp_path)
    built = yaml.safe_dump(model("built")).encode()
    calls: list[Path] = []

    def build(folder: Path) -> bytes:
        calls.append(folder)
        return built

    loaded = load(Kustomization(base, build))
    assert calls == [base]
    assert [(o.name, o.origin.source) for o in loaded.objects] == [("built", f"kustomize build {base}")]
    assert loaded.notes == ()


def test_a_kustomization_naming_a_missing_resource_or_none_at_all_is_an_error(tmp_path: Path) -> None:
    write(tmp_path / "k" / "kustomization.yaml", {"resources": ["gone.yaml"]})
    with pytest.raises(LoadError, match=r"resources entry gone\.yaml: no such file or folder"):
        load(Kustomization(tmp_path / "k"))
    (tmp_path / "plain").mkdir()
    with pytest.raises(LoadError, match=r"no kustomization\.yaml in the folder"):
        load(Kustomization(tmp_path / "plain"))


def test_a_cycle_of_kustomizations_is_an_error_not_a_hang(tmp_path: Path) -> None:
    write(tmp_path / "a" / "kustomization.yaml", {"resources": ["../b"]})
    write(tmp_path / "b" / "kustomization.yaml", {"resources": ["../a"]})
    with pytest.raises(LoadError, match="nested deeper than"):
        load(Kustomization(tmp_path / "a"))
