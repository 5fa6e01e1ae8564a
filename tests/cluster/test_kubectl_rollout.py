"""``kubectl ome rollout|instance|wait`` against a pool mid-roll, through the real kubectl.

One shared roll: a settled two-Instance ``SurgeThenDrain`` pool (``maxSurge: 1``) is changed to an image
whose pods the fake kubelet never makes Ready, so the first surged Instance stays in flight for as long
as the test needs, with nothing timed. On it: ``rollout status`` names the Instance in flight and its
step, ``wait`` and ``status --watch`` time out, ``instance`` shows the surge pod, ``history`` lists both
revisions; ``pause`` parks the Instance (its operation waits ``Paused``) and ``resume`` releases it;
``undo`` sets ``rollbackToRevision`` and the pool rolls back to the first revision, which ``rollout
status --watch`` follows to the end; ``restart`` stamps the runner template and mints a revision.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
from typing import Any

import pytest
from helpers import running_controller, settled_surge_pool
from kubectl_plugin import kubectl_ome

from omereconcile.cluster.kube import Kube
from omereconcile.kubectl.client import ConflictError
from omereconcile.kubectl.context import Ctx
from omereconcile.kubectl.guard import GuardedWrite, run_guarded
from testbed.testing import Cluster, wait_for


def _never_ready_v2(pod: dict[str, Any]) -> bool:
    return any(c.get("image") == "engine:v2" for c in pod["spec"]["containers"])


def _write(cluster: Cluster, *args: str) -> subprocess.CompletedProcess[str]:
    """A guarded write; read again and resend on exit 3, as the error asks: the controller writes the
    replica's status on every step of the roll, which may land between the command's read and write."""
    for _ in range(3):
        proc = kubectl_ome(cluster, *args)
        if proc.returncode != 3:
            return proc
    return proc


def _in_flight(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in obj["status"].get("instanceStatuses") or [] if r.get("operation")]


def test_a_pool_mid_roll(cluster: Cluster, namespace: str) -> None:
    ns = ["-n", namespace]
    cluster.kubelet.never_ready(_never_ready_v2)
    try:
        with running_controller(cluster, namespace) as (ctrl, _kube):
            path = settled_surge_pool(cluster, ctrl, namespace, replicas=2)
            _roll(cluster, namespace, path, ns)
    finally:
        cluster.kubelet.heal(_never_ready_v2)


def _roll(cluster: Cluster, namespace: str, path: str, ns: list[str]) -> None:
    v1 = cluster.raw.get(path)["status"]["currentRevision"]
    obj = cluster.raw.get(path)
    obj["spec"]["runners"][0]["template"]["spec"]["containers"][0]["image"] = "engine:v2"
    cluster.raw.put(path, obj)
    obj = wait_for(
        "an Instance in flight to v2",
        lambda: (
            (o := cluster.raw.get(path))["status"].get("updateRevision") not in (None, v1)
            and _in_flight(o)
            and o
        ),
        timeout=60,
    )
    v2 = obj["status"]["updateRevision"]
    [flying] = _in_flight(obj)

    # -- status: the in-flight Instance and its step; exit 0 while in progress without --watch.
    status = kubectl_ome(cluster, "rollout", "status", "ir/pool", *ns, "--watch=false")
    assert status.returncode == 0, status.stderr
    line = status.stdout.strip()
    assert line.startswith('Waiting for inferencereplica "pool" rollout to finish: '), line
    assert f"Instance {flying['index']} " in line
    assert "(Update at step " in line
    report = kubectl_ome(cluster, "rollout", "status", "ir/pool", *ns, "--watch=false", "-o", "json")
    content = json.loads(report.stdout)["content"]
    assert (content["state"], content["targetRevision"], content["currentRevision"]) == (
        "Progressing",
        v2,
        v1,
    )
    assert [r["index"] for r in content["inFlight"] if r.get("operation")] == [flying["index"]]
    timed_out = kubectl_ome(cluster, "rollout", "status", "ir/pool", *ns, "--timeout=2s")
    assert timed_out.returncode == 1
    assert (
        timed_out.stderr
        == 'error: timed out after 2s waiting for inferencereplica "pool" rollout to finish\n'
    )
    assert timed_out.stdout.startswith('Waiting for inferencereplica "pool" rollout to finish: ')
    wait = kubectl_ome(cluster, "wait", "ir/pool", *ns, "--for=rollout=complete", "--timeout=2s")
    assert wait.returncode == 1
    unknown = kubectl_ome(cluster, "wait", "ir/pool", *ns, "--for=condition=Ready=Unknown", "--timeout=20s")
    assert unknown.returncode == 0, unknown.stderr

    # -- instances: the row the controller reports, and its surge pod that never turns Ready.
    listed = json.loads(kubectl_ome(cluster, "instance", "list", "ir/pool", *ns, "-o", "json").stdout)
    rows = {r["index"]: r for r in listed["content"]["instances"]}
    assert rows[flying["index"]]["operation"]["type"] == "Update"
    table = kubectl_ome(cluster, "instance", "list", "ir/pool", *ns).stdout.splitlines()
    assert table[0].split()[:4] == ["INDEX", "PHASE", "REVISION", "TARGET"]
    one = json.loads(
        kubectl_ome(cluster, "instance", "status", "ir/pool", str(flying["index"]), *ns, "-o", "json").stdout
    )
    by_revision = {p["revision"]: p for p in one["content"]["pods"] if not p["terminating"]}
    assert by_revision[v2.rsplit("-", 1)[1]]["ready"] == "False"
    assert by_revision[v2.rsplit("-", 1)[1]]["node"]
    assert by_revision[v1.rsplit("-", 1)[1]]["serving"] == "True"

    # -- history: both revisions, their numbers and roles, and one template.
    history = kubectl_ome(cluster, "rollout", "history", "ir/pool", *ns)
    assert history.returncode == 0, history.stderr
    cells = [ln.split() for ln in history.stdout.splitlines()[2:]]
    assert [(c[0], c[1], c[5]) for c in cells] == [("1", v1, "current"), ("2", v2, "update")]
    one_rev = kubectl_ome(cluster, "rollout", "history", "ir/pool", *ns, "--revision", "2")
    assert one_rev.stdout.startswith(f"inferencereplica.ome.io/pool with revision #2 ({v2})\nPod Template:\n")
    assert "image: engine:v2" in one_rev.stdout

    # -- pause parks the Instance in flight; a client or server dry run writes nothing.
    for mode in ("client", "server"):
        dry = kubectl_ome(
            cluster, "rollout", "pause", "ir/pool", *ns, f"--dry-run={mode}", "--yes", "-o", "json"
        )
        assert dry.returncode == 0, dry.stderr
        result = json.loads(dry.stdout)
        assert (result["dryRun"], result["accepted"], result["applied"]) == (mode, mode == "server", False)
        assert not cluster.raw.get(path)["spec"].get("paused")
    refused = kubectl_ome(cluster, "rollout", "pause", "ir/pool", *ns)  # no terminal, no --yes
    assert refused.returncode == 1
    assert "pass --yes" in refused.stderr
    paused = _write(cluster, "rollout", "pause", "ir/pool", *ns, "--yes", "-o", "json")
    assert paused.returncode == 0, paused.stderr
    assert json.loads(paused.stdout)["applied"] is True
    assert cluster.raw.get(path)["spec"]["paused"] is True
    wait_for(
        "the Instance to wait Paused",
        lambda: [r["operation"].get("waiting") for r in _in_flight(cluster.raw.get(path))] == ["Paused"],
        timeout=30,
    )
    stopped = kubectl_ome(cluster, "rollout", "status", "ir/pool", *ns)
    assert stopped.returncode == 1
    assert 'inferencereplica "pool" rollout paused (spec.paused, pauseMode Recover)' in stopped.stdout
    assert "waiting: Paused" in stopped.stdout
    resumed = _write(cluster, "rollout", "resume", "ir/pool", *ns, "--yes")
    assert resumed.returncode == 0, resumed.stderr
    assert "paused" not in cluster.raw.get(path)["spec"]

    # -- a write whose resourceVersion is stale is refused by the API server: exit 3's path, for real.
    args = argparse.Namespace(
        dry_run="none", yes=True, output="json", namespace=namespace, kubeconfig=None, context=None
    )
    ctx = Ctx(
        args,
        io.StringIO(),
        io.StringIO(),
        io.StringIO(),
        lambda _a: Kube.from_kubeconfig(cluster.cp.kubeconfig),
    )
    try:
        stale = cluster.raw.get(path)
        stale["metadata"]["resourceVersion"] = str(int(stale["metadata"]["resourceVersion"]) - 1)
        write = GuardedWrite("rollout pause", stale, {"spec": {"paused": True}}, "pause")
        with pytest.raises(ConflictError, match="precondition failed"):
            run_guarded(ctx, write)
    finally:
        ctx.close()

    # -- reset: the annotation written is one the controller answers (Instance 0 is not Failed: skipped).
    reset = _write(cluster, "instance", "reset", "ir/pool", "0", *ns, "--yes")
    assert reset.returncode == 0, reset.stderr
    wait_for(
        "the reset request answered",
        lambda: "ome.io/reset-instances" not in (cluster.raw.get(path)["metadata"].get("annotations") or {}),
        timeout=30,
    )
    reasons = {e["reason"] for e in cluster.raw.get(f"/api/v1/namespaces/{namespace}/events")["items"]}
    assert "InstancesResetSkipped" in reasons

    # -- undo: back to revision 1; status --watch follows the roll back to the end.
    undo = _write(cluster, "rollout", "undo", "ir/pool", *ns, "--yes", "-o", "json")
    assert undo.returncode == 0, undo.stderr
    assert json.loads(undo.stdout)["revisionHash"] == v1.rsplit("-", 1)[1]
    assert cluster.raw.get(path)["spec"]["pacing"]["rollbackToRevision"] == v1
    done = kubectl_ome(cluster, "rollout", "status", "ir/pool", *ns, "--timeout=90s", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == f'inferencereplica "pool" successfully rolled out (revision {v1})'
    final = cluster.raw.get(path)["status"]
    assert {r["runningRevision"] for r in final["instanceStatuses"]} == {v1}
    again = kubectl_ome(cluster, "rollout", "undo", "ir/pool", *ns, "--to-revision", "1", "--yes")
    assert again.returncode == 1
    assert "nothing to undo" in again.stderr

    # -- restart: a runners replica gets a stamped template, which is a new revision.
    restart = _write(cluster, "rollout", "restart", "ir/pool", *ns, "--yes", "-o", "json")
    assert restart.returncode == 0, restart.stderr
    template = cluster.raw.get(path)["spec"]["runners"][0]["template"]
    assert "kubectl.kubernetes.io/restartedAt" in template["metadata"]["annotations"]
    wait_for(
        "a third revision",
        lambda: cluster.raw.get(path)["status"]["updateRevision"] not in (v1, v2),
        timeout=30,
    )
    listed_revisions = cluster.raw.get(
        f"/apis/apps/v1/namespaces/{namespace}/controllerrevisions",
        labelSelector="ome.io/inferenceservice=pool",
    )["items"]
    assert len(listed_revisions) == 3
