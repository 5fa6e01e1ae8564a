"""Revision identity: a replica from a file has no ``metadata.uid``, OME hashes the scope uid into the
revision name (01 §9.2), so ``uid=`` (``render --uid``) supplies it and a name for an empty uid says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from omerender import (
    Catalog,
    InferenceReplica,
    InvalidArgumentError,
    parse_object,
    preview,
    render,
    revision_of,
)
from omerender.cli import main
from omerender.revision import revision_hash

ROOT = Path(__file__).resolve().parents[2]
REPLICA = ROOT / "examples" / "llama-pool.yaml"
CATALOG = ROOT / "examples" / "catalog"
UID = "0f3b2c9e-5d1a-4c7e-9b8a-2f6d4e1c3a57"
OTHER = "6a1e9d2c-3b4f-4a8e-8c7d-1e2f3a4b5c6d"
ISVC_UID = "c4d5e6f7-0000-4111-8222-333344445555"


def _raw(**metadata: Any) -> dict[str, Any]:
    raw: dict[str, Any] = yaml.safe_load(REPLICA.read_text())
    raw["metadata"].update(metadata)
    return raw


def _replica(**metadata: Any) -> InferenceReplica:
    return parse_object(InferenceReplica, _raw(**metadata))


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog.from_objects([yaml.safe_load(p.read_text()) for p in sorted(CATALOG.glob("*.yaml"))])


def _projected(owner_uid: str) -> InferenceReplica:
    owner = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceService",
        "name": "llama",
        "uid": owner_uid,
        "controller": True,
    }
    return _replica(ownerReferences=[owner])


def test_a_replica_without_uid_says_its_name_is_for_an_empty_uid(catalog: Catalog) -> None:
    revision = preview(_replica(), catalog).revision
    assert revision.scope_uid == ""
    assert revision.hash == revision_hash(revision.payload, scope_uid="")
    assert revision.uid_notice is not None
    assert f"the revision name {revision.name} is for an empty uid" in revision.uid_notice
    assert "the replica has no metadata.uid" in revision.uid_notice
    assert "the cluster's revision name will differ" in revision.uid_notice


def test_uid_gives_what_the_replica_with_that_uid_gives(catalog: Catalog) -> None:
    bare = _replica()
    given = preview(bare, catalog, instances=2, uid=UID)
    stored = preview(_replica(uid=UID), catalog, instances=2)
    assert given.revision == stored.revision
    assert given.revision.scope_uid == UID
    assert given.revision.uid_notice is None
    assert given.revision.hash == revision_hash(given.revision.payload, scope_uid=UID)
    assert given.controller_revision == stored.controller_revision
    assert given.pods == stored.pods
    assert given.service == stored.service
    assert {ref["uid"] for pod in given.pods for ref in pod["metadata"]["ownerReferences"]} == {UID}
    assert bare.metadata.uid == ""  # the caller's replica is left as it was
    # The uid changes the name only: the revision's payload is the same.
    assert given.revision.payload == preview(bare, catalog).revision.payload
    assert given.revision.name != preview(bare, catalog).revision.name


def test_uid_replaces_the_one_in_the_replica(catalog: Catalog) -> None:
    assert (
        preview(_replica(uid=OTHER), catalog, uid=UID).revision
        == preview(_replica(uid=UID), catalog).revision
    )


def test_revision_of_takes_the_uid_too(catalog: Catalog) -> None:
    result = render(_replica(), catalog)
    assert revision_of(result, uid=UID) == preview(_replica(uid=UID), catalog).revision
    assert revision_of(result).uid_notice is not None


def test_a_projected_replica_is_scoped_by_its_inference_service(catalog: Catalog) -> None:
    projected = preview(_projected(ISVC_UID), catalog, uid=UID)
    assert projected.revision.scope_uid == ISVC_UID
    assert projected.revision.uid_notice is None
    # The replica's own uid does not reach a projected replica's revision; it is in the owner refs.
    assert projected.revision == preview(_projected(ISVC_UID), catalog).revision
    assert projected.controller_revision["metadata"]["ownerReferences"][0]["uid"] == UID


def test_a_projected_replica_without_an_owner_uid_says_so(catalog: Catalog) -> None:
    revision = preview(_projected(""), catalog, uid=UID).revision
    assert revision.scope_uid == ""
    assert revision.uid_notice is not None
    assert "its InferenceService owner reference has no uid" in revision.uid_notice


@pytest.mark.parametrize("bad", [5, b"uid", ["uid"]])
def test_a_uid_that_is_not_a_string_is_refused(catalog: Catalog, bad: object) -> None:
    with pytest.raises(InvalidArgumentError, match=r"preview\(\): uid must be a str"):
        preview(_replica(), catalog, uid=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match=r"revision_of\(\): uid must be a str"):
        revision_of(render(_replica(), catalog), uid=bad)  # type: ignore[arg-type]


def _render_cli(capsys: pytest.CaptureFixture[str], replica: Path, *flags: str) -> tuple[int, str, str]:
    code = main(["render", str(replica), "--objects", str(CATALOG), *flags])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _revision_name(out: str) -> str:
    docs = [d for d in yaml.safe_load_all(out) if d]
    revision = next(d for d in docs if d["kind"] == "ControllerRevision")
    name: str = revision["metadata"]["name"]
    return name


def test_render_without_uid_notes_it_on_stderr_and_in_the_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _render_cli(capsys, REPLICA)
    assert code == 0
    name = _revision_name(out)
    notice = f"the revision name {name} is for an empty uid"
    assert err.startswith(f"render: note: {notice}")
    assert "pass --uid with the replica's uid" in err
    assert out.startswith(f"# {notice}")  # a saved rendering says so too


def test_render_uid_is_the_name_the_cluster_gives(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, catalog: Catalog
) -> None:
    with_uid = tmp_path / "with-uid.yaml"
    with_uid.write_text(yaml.safe_dump(_raw(uid=UID)))
    code, stored_out, stored_err = _render_cli(capsys, with_uid)
    assert code == 0
    assert "empty uid" not in stored_err + stored_out
    code, out, err = _render_cli(capsys, REPLICA, "--uid", UID)
    assert code == 0
    assert "empty uid" not in err + out
    assert out == stored_out
    assert _revision_name(out) == preview(_replica(uid=UID), catalog).revision.name


@pytest.mark.parametrize("bad", ["", " ", f" {UID}", "a b"])
def test_render_refuses_a_blank_uid(capsys: pytest.CaptureFixture[str], bad: str) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["render", str(REPLICA), "--objects", str(CATALOG), "--uid", bad])
    assert exit_.value.code == 2
    assert "argument --uid" in capsys.readouterr().err
