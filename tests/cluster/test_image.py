"""The reconciler image (Dockerfile, built by testbed/image.sh) built and run for real with podman.

Nothing is mocked: the container reaches the test API server through the in-cluster path only, under
deploy/'s RBAC and securityContext, plays the seed's Steps 1-3, serves the webhook from a certificate
mounted as deploy/ mounts its Secret, and stops on SIGTERM within the Deployment's grace period.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from container import ContainerReconciler, build_image, podman_run, readable, service_account_dir
from helpers import delete_replicas, drop_finalizers, example_replica, kubectl_stdin, seed_steps_1_to_3
from test_reconciler_webhook import HOOK, registered, server_cert

from testbed.testing import Cluster

GRACE_SECONDS = 30  # deploy/base/deployment.yaml terminationGracePeriodSeconds


@pytest.fixture(scope="module")
def image() -> str:
    return build_image()


def test_image_runs_as_non_root_without_compiler_pip_or_caches(image: str) -> None:
    assert podman_run(image, "--version").stdout == "omereconcile 0.1.0\n"
    probe = podman_run(
        image,
        "-c",
        "id -u; id -g; for t in pip pip3 gcc cc python3-config; do command -v $t; done; "
        "ls /opt/venv/bin | grep -c '^pip' ; find / -xdev -name '*.pyc' -path '/opt/venv/*' | head -1; "
        "ls -d /root/.cache/pip /tmp/pip-* 2>/dev/null; true",
        entrypoint="/bin/sh",
    )
    assert probe.stdout.split() == ["65532", "65532", "0"], probe
    # Every module imports, or lacks only a package of the tools extra (omerender's CLI, diff and CRD
    # validation), which the reconciler neither imports nor ships.
    code = (
        "import importlib, pkgutil, omerender, omereconcile\n"
        "tools = {'jsonschema', 'jsonschema_rs', 'deepdiff', 'kubernetes_validate'}\n"
        "for pkg in (omerender, omereconcile):\n"
        "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "        if m.name.endswith('.__main__'):\n"
        "            continue\n"
        "        try:\n"
        "            importlib.import_module(m.name)\n"
        "        except ModuleNotFoundError as e:\n"
        "            if e.name not in tools or pkg is omereconcile:\n"
        "                raise\n"
        "print('ok')\n"
    )
    imported = podman_run(image, "-c", code, entrypoint="python3")
    assert imported.stdout == "ok\n", imported.stderr[-2000:]


@pytest.fixture
def container(
    cluster: Cluster, reconciler_kubeconfig: Path, image: str, namespace: str, tmp_path: Path
) -> Iterator[ContainerReconciler]:
    """``omereconcile run`` in the image, watching the test namespace, with the webhook serving."""
    sa = service_account_dir(cluster, tmp_path / "serviceaccount", "ome", "omereconcile")
    certs = tmp_path / "webhook-cert"
    certs.mkdir()
    ca_pem, _, _ = server_cert(certs)  # writes tls.crt and tls.key, the Secret's keys
    readable(certs)
    rec = ContainerReconciler(
        cluster,
        image,
        sa,
        tmp_path / "container.log",
        [
            "--namespace",
            namespace,
            "--watch-timeout",
            "20",
            "--leader-elect",
            "--webhook-addr",
            "127.0.0.1:0",
            "--webhook-cert",
            "/tmp/k8s-webhook-server/serving-certs/tls.crt",
            "--webhook-key",
            "/tmp/k8s-webhook-server/serving-certs/tls.key",
        ],
        cert_dir=certs,
    )
    rec.ca_pem = ca_pem
    rec.start()
    try:
        yield rec
    finally:
        if rec.alive():
            delete_replicas(cluster, namespace)
        rec.stop()
        drop_finalizers(cluster, namespace)


def test_container_in_cluster_seed_steps_webhook_and_sigterm(
    cluster: Cluster, container: ContainerReconciler, namespace: str
) -> None:
    rec = container
    # Read-only root, no capabilities, non-root: as the Deployment's securityContext asks.
    assert rec.wait("the container", lambda: rec.inspect("{{.State.Running}}") == "true", timeout=60)
    assert rec.inspect("{{.HostConfig.ReadonlyRootfs}} {{.Config.User}}") == "true 65532:65532"
    assert rec.inspect("{{.EffectiveCaps}}") in ("[]", "<no value>")
    port = rec.wait(
        "the webhook to listen",
        lambda: next((int(r["port"]) for r in rec.lines() if r.get("msg") == "webhook listening"), None),
        timeout=60,
    )

    seed_steps_1_to_3(cluster, namespace, rec)

    with registered(cluster, port, rec.ca_pem):
        bad = example_replica(namespace, lifecycle={"minReadySeconds": 30})
        bad["metadata"]["name"] = "nested-min-ready"

        def denied() -> str | None:
            proc = kubectl_stdin(cluster, yaml.safe_dump(bad), "apply", check=False)
            out = (proc.stdout + proc.stderr).strip()
            return out if proc.returncode != 0 and HOOK in out else None

        out = rec.wait("the API server to call the container's webhook", denied, timeout=60)
        assert (
            f'admission webhook "{HOOK}" denied the request: InferenceReplica {namespace}/nested-min-ready: '
            "spec.lifecycle.minReadySeconds is not read on an InferenceReplica; set spec.minReadySeconds"
        ) in out

    started = time.monotonic()
    code = rec.stop(timeout=GRACE_SECONDS)
    elapsed = time.monotonic() - started
    assert code == 0, rec.tail()
    assert elapsed < GRACE_SECONDS
    stopped = [r for r in rec.lines() if r.get("msg") == "stopped"]
    assert stopped, rec.tail()
    assert stopped[-1].get("exit_code") == 0, rec.tail()
    print(f"\ncontainer stopped on SIGTERM in {elapsed:.1f}s")
