"""``omerender render --uid`` of a manifest from git names the ControllerRevision the reconciler writes for
that replica on a real API server (which assigns the uid); without ``--uid`` the name differs, and
``render`` says so."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from helpers import REPO, apply, example_replica, replica
from reconciler_proc import Reconciler

from omerender.cli import main
from testbed.testing import Cluster


def _render(capsys: pytest.CaptureFixture[str], manifest: Path, *flags: str) -> tuple[str, str]:
    assert main(["render", str(manifest), "--objects", str(REPO / "examples" / "catalog"), *flags]) == 0
    captured = capsys.readouterr()
    docs = [d for d in yaml.safe_load_all(captured.out) if d]
    name: str = next(d for d in docs if d["kind"] == "ControllerRevision")["metadata"]["name"]
    return name, captured.err


def test_render_uid_names_the_revision_the_cluster_has(
    cluster: Cluster,
    reconcilers: Callable[..., Reconciler],
    namespace: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rec = reconcilers()
    manifest = example_replica(namespace)
    apply(cluster, manifest)
    path = f"/apis/apps/v1/namespaces/{namespace}/controllerrevisions"
    live = rec.wait(
        "the ControllerRevision", lambda: [r["metadata"]["name"] for r in cluster.raw.get(path)["items"]]
    )
    uid = replica(cluster, namespace)["metadata"]["uid"]
    assert uid  # the API server assigned one; the manifest has none
    file = tmp_path / "llama-pool.yaml"
    file.write_text(yaml.safe_dump(manifest))

    name, err = _render(capsys, file, "--uid", uid)
    assert live == [name], rec.tail()
    assert "empty uid" not in err

    name, err = _render(capsys, file)
    assert name != live[0]
    assert f"render: note: the revision name {name} is for an empty uid" in err
