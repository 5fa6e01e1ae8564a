"""The reconciler image, built by testbed/image.sh and run with podman the way a kubelet runs it.

``ContainerReconciler`` is a :class:`Reconciler` whose process is ``podman run``: the in-cluster path
only (a TokenRequest token, the CA and the namespace at /var/run/secrets/kubernetes.io/serviceaccount,
KUBERNETES_SERVICE_HOST/PORT), deploy/'s securityContext (uid 65532, read-only root filesystem, every
capability dropped, no privilege escalation) and the webhook certificate mounted where deploy/ mounts
its Secret. podman forwards SIGTERM to the container, so ``stop()`` is a pod deletion's first signal.
"""

from __future__ import annotations

import os
import subprocess
import urllib.parse
import uuid
from pathlib import Path

import yaml
from reconciler_proc import REPO, Reconciler

from testbed.testing import Cluster

SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
CERT_DIR = "/tmp/k8s-webhook-server/serving-certs"
# runc, not crun (cgroups), with lowered ulimits: what runs on these machines (spec 04, last section).
PODMAN = ["podman", "--runtime", "runc"]
RUN_FLAGS = ["--network=host", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"]


def build_image() -> str:
    """The image's tag: OMERECONCILE_IMAGE when scripts/test.sh built it, else testbed/image.sh now."""
    tag = os.environ.get("OMERECONCILE_IMAGE")
    if tag:
        return tag
    proc = subprocess.run(
        ["bash", str(REPO / "testbed" / "image.sh")], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise AssertionError(f"testbed/image.sh failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return proc.stdout.strip().splitlines()[-1].split("=", 1)[1]


def podman_run(image: str, *args: str, entrypoint: str | None = None) -> subprocess.CompletedProcess[str]:
    extra = ["--entrypoint", entrypoint] if entrypoint else []
    return subprocess.run(
        [*PODMAN, "run", "--rm", *RUN_FLAGS, *extra, image, *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def service_account_dir(cluster: Cluster, directory: Path, namespace: str, name: str) -> Path:
    """What the kubelet projects for a pod of ServiceAccount ``namespace/name``: token, ca.crt, namespace."""
    tr = cluster.raw.post(
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 3600},
        },
    )
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "token").write_text(tr["status"]["token"])
    (directory / "ca.crt").write_bytes(cluster.cp.ca_pem)
    (directory / "namespace").write_text(namespace)
    readable(directory)
    return directory


def readable(directory: Path) -> None:
    """The container runs as uid 65532: give it what a Secret volume gives (0644 files)."""
    directory.chmod(0o755)
    for f in directory.iterdir():
        f.chmod(0o644)


class ContainerReconciler(Reconciler):
    def __init__(
        self,
        cluster: Cluster,
        image: str,
        sa_dir: Path,
        log_path: Path,
        args: list[str],
        cert_dir: Path | None = None,
    ) -> None:
        super().__init__(sa_dir, log_path, args)
        self.cluster = cluster
        self.image = image
        self.sa_dir = sa_dir
        self.cert_dir = cert_dir
        self.name = f"omereconcile-{uuid.uuid4().hex[:8]}"
        self.ca_pem = b""  # the webhook certificate's CA, for the caller's webhook registration

    def command(self) -> list[str]:
        server = urllib.parse.urlsplit(self.cluster.cp.server)
        mounts = ["-v", f"{self.sa_dir}:{SA_DIR}:ro"]
        if self.cert_dir is not None:
            mounts += ["-v", f"{self.cert_dir}:{CERT_DIR}:ro"]
        return [
            *PODMAN,
            "run",
            "--rm",
            "--name",
            self.name,
            *RUN_FLAGS,
            "--user",
            "65532:65532",
            "--read-only",
            "--tmpfs",
            "/tmp:rw,size=64m,mode=1777",
            "--cap-drop",
            "ALL",
            "--security-opt",
            "no-new-privileges",
            "-e",
            f"KUBERNETES_SERVICE_HOST={server.hostname}",
            "-e",
            f"KUBERNETES_SERVICE_PORT={server.port}",
            "-e",
            "POD_NAMESPACE=ome",
            *mounts,
            self.image,
            "run",
            "--probe-addr",
            "127.0.0.1:0",
            *self.args,
        ]

    def inspect(self, fmt: str) -> str:
        """``podman inspect --format fmt`` of the container; "" while podman has not created it yet."""
        proc = subprocess.run(
            [*PODMAN, "inspect", "--format", fmt, self.name], capture_output=True, text=True, check=False
        )
        return proc.stdout.strip() if proc.returncode == 0 else ""


def release_container(
    cluster: Cluster, image: str, manifest: str, namespace: str, directory: Path, cert_dir: Path | None = None
) -> ContainerReconciler:
    """The image as a release's Deployment (in ``manifest``, from ``helm get manifest``) runs it: its
    args and its ServiceAccount's token, listening on free loopback ports (host network); started."""
    deploy = next(d for d in yaml.safe_load_all(manifest) if d and d["kind"] == "Deployment")
    pod = deploy["spec"]["template"]["spec"]
    addrs = ("--probe-addr=", "--webhook-addr=", "--metrics-bind-address=")
    args = [a for a in pod["containers"][0]["args"][1:] if not a.startswith(addrs)]
    sa = service_account_dir(cluster, directory / "serviceaccount", namespace, pod["serviceAccountName"])
    listen = ["--webhook-addr", "127.0.0.1:0", "--metrics-bind-address", "127.0.0.1:0"]
    rec = ContainerReconciler(
        cluster,
        image,
        sa,
        directory / "container.log",
        [*args, "--ome-namespace", namespace, *listen, "--watch-timeout", "20"],
        cert_dir=cert_dir,
    )
    rec.start()
    return rec


def webhook_port(rec: Reconciler) -> int:
    """The port the webhook of ``rec`` listens on, once it does."""
    return rec.wait(
        "the webhook to listen",
        lambda: next((int(r["port"]) for r in rec.lines() if r.get("msg") == "webhook listening"), None),
        timeout=90,
    )
