"""A real Kubernetes control plane (etcd, kube-apiserver, kube-scheduler, kube-controller-manager) on loopback.

Processes are started from the binaries built by testbed/build.sh, log to files in a run directory, and are
stopped by their stored PIDs in reverse start order. No kubelet runs: see testbed.kubelet for the fake one.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import glob
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubernetes import config as kube_config
from kubernetes.client import ApiClient

from testbed import assets as _assets
from testbed.egress import ClusterEgress
from testbed.pki import CertificateAuthority, KeyPair, key_to_pem, new_rsa_key, public_key_to_pem
from testbed.rawkube import RawKube

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CRD_DIR = REPO_ROOT / "schemas" / "crds"
SERVICE_CIDR = "10.0.0.0/24"
# First address of the service range: the in-cluster `kubernetes` Service IP, so it is a SAN.
SERVICE_IP = "10.0.0.1"
# Pods that set this schedulerName are placed by the gang scheduler (scheduler-plugins' Coscheduling),
# which binds the pods of a PodGroup (label scheduling.x-k8s.io/pod-group) all together or not at all.
COSCHEDULER_NAME = "scheduler-plugins-scheduler"

# KCM controllers the testbed needs: EndpointSlices for headless Services, GC of ownerRefs, namespace
# deletion, default ServiceAccounts and their tokens, plus the stock workload controllers. nodelifecycle is
# deliberately absent: it would taint fake nodes whose kubelet posts no heartbeats it trusts.
KCM_CONTROLLERS = (
    "endpointslice-controller",
    "endpointslice-mirroring-controller",
    "endpoints-controller",
    "garbage-collector-controller",
    "namespace-controller",
    "serviceaccount-controller",
    "serviceaccount-token-controller",
    "root-ca-certificate-publisher-controller",
    "clusterrole-aggregation-controller",
    "replicaset-controller",
    "deployment-controller",
    "statefulset-controller",
    "job-controller",
    "disruption-controller",
    "pod-garbage-collector-controller",
    "resourcequota-controller",
)


class ControlPlaneError(RuntimeError):
    """A component failed to start or become healthy; the message quotes its log tail."""


def free_port() -> int:
    """A currently free loopback TCP port chosen by the kernel."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def write_kubeconfig(
    path: Path,
    *,
    server: str,
    ca_pem: bytes,
    user: str,
    client: KeyPair | None = None,
    token: str | None = None,
    namespace: str | None = None,
) -> Path:
    """Write a self-contained kubeconfig (certificates embedded) for one user."""
    creds: dict[str, str] = {}
    if client is not None:
        creds["client-certificate-data"] = _b64(client.cert_pem)
        creds["client-key-data"] = _b64(client.key_pem)
    if token is not None:
        creds["token"] = token
    context: dict[str, str] = {"cluster": "testbed", "user": user}
    if namespace:
        context["namespace"] = namespace
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "testbed", "cluster": {"server": server, "certificate-authority-data": _b64(ca_pem)}}
        ],
        "users": [{"name": user, "user": creds}],
        "contexts": [{"name": "testbed", "context": context}],
        "current-context": "testbed",
    }
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    path.chmod(0o600)
    return path


@dataclass
class _Proc:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path


class ControlPlane:
    """etcd + kube-apiserver + kube-scheduler + kube-controller-manager, started by `start()`.

    `etcd_compaction_interval` is short and the watch cache off by default, so a watch or list from a
    resourceVersion older than one or two intervals deterministically gets 410 Gone, as on a real cluster
    whose watch-cache window was overrun. With the watch cache on (`watch_cache=True`), kube-apiserver 1.36
    serves such watches from its cache (no 410, measured) but sends BOOKMARK events, which it never does
    without the cache.
    """

    def __init__(
        self,
        *,
        assets_dir: Path | None = None,
        run_dir: Path | None = None,
        crd_dirs: Sequence[Path] = (DEFAULT_CRD_DIR,),
        etcd_compaction_interval: str = "10s",
        watch_cache: bool = False,
        scheduler: bool = True,
        coscheduler_dir: Path | None = None,
        controller_manager: bool = True,
        extra_apiserver_args: Sequence[str] = (),
        start_timeout: float = 90.0,
        cluster_egress: bool = True,
    ) -> None:
        self._assets_dir = assets_dir
        self._own_run_dir = run_dir is None
        self.run_dir = Path(run_dir) if run_dir else Path(tempfile.mkdtemp(prefix="omerender-testbed-"))
        self.crd_dirs = tuple(Path(d) for d in crd_dirs)
        self.etcd_compaction_interval = etcd_compaction_interval
        self.watch_cache = watch_cache
        self.with_scheduler = scheduler
        # The folder build-coscheduler.sh filled (binary + the release's PodGroup CRD), or None for no gangs.
        self.coscheduler_dir = Path(coscheduler_dir) if coscheduler_dir else None
        self.with_controller_manager = controller_manager
        self.extra_apiserver_args = tuple(extra_apiserver_args)
        self.start_timeout = start_timeout
        # The API server reaches Services through this proxy (testbed.egress): route_service().
        self.egress: ClusterEgress | None = ClusterEgress(SERVICE_CIDR) if cluster_egress else None
        self._procs: list[_Proc] = []
        self._atexit_registered = False
        self.startup_seconds: float | None = None
        # Filled by start().
        self.apiserver_port = 0
        self.etcd_port = 0
        self.server = ""
        self.kubeconfig = self.run_dir / "admin.kubeconfig"
        self.ca_pem = b""
        self._admin: KeyPair | None = None
        self._scheduler: KeyPair | None = None
        self._sa_key_path = self.run_dir / "pki" / "sa.key"

    # ------------------------------------------------------------------ lifecycle

    @property
    def assets_dir(self) -> Path:
        if self._assets_dir is None:
            self._assets_dir = _assets.build()
        return self._assets_dir

    def binary(self, name: str) -> str:
        return str(self.assets_dir / name)

    def start(self) -> ControlPlane:
        t0 = time.monotonic()
        assets = self.assets_dir  # build (or reuse) before touching anything else
        del assets
        if not self._atexit_registered:
            atexit.register(self.stop)
            self._atexit_registered = True
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if self.egress is not None:
            self.egress.start()
        for attempt in range(3):
            try:
                self._make_pki()
                self._start_etcd()
                self._start_apiserver()
                if self.with_scheduler:
                    self._start_scheduler()
                if self.with_controller_manager:
                    self._start_controller_manager()
                self.install_crds()
                if self.coscheduler_dir is not None:
                    # The PodGroup CRD of the very release the scheduler is built from, then the scheduler.
                    self._install_crd_files([self.coscheduler_dir / "crd.yaml"])
                    self._start_coscheduler()
                break
            except ControlPlaneError as exc:
                self._stop_processes()
                # free_port() cannot reserve a port; another process may grab it first. Retry on that only.
                if "address already in use" not in str(exc) or attempt == 2:
                    self.stop()
                    raise
                shutil.rmtree(self.run_dir / "etcd-data", ignore_errors=True)
            except BaseException:
                self.stop()
                raise
        self.startup_seconds = time.monotonic() - t0
        return self

    def stop(self) -> None:
        """SIGTERM each component by its stored PID in reverse start order, SIGKILL after 10 s."""
        self._stop_processes()
        if self.egress is not None:
            self.egress.stop()
        if self._own_run_dir and os.environ.get("TESTBED_KEEP_RUN_DIR") != "1":
            shutil.rmtree(self.run_dir, ignore_errors=True)

    def _stop_processes(self) -> None:
        while self._procs:
            proc = self._procs.pop()
            p = proc.popen
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        p.kill()
                    p.wait(timeout=10)

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ clients

    def api_client(self, kubeconfig: Path | None = None) -> ApiClient:
        """A fresh kubernetes ApiClient for the admin kubeconfig (or the one given)."""
        path = str(kubeconfig or self.kubeconfig)
        client: ApiClient = kube_config.new_client_from_config(config_file=path)  # type: ignore[no-untyped-call]
        return client

    def raw(self, kubeconfig: Path | None = None) -> RawKube:
        return RawKube(self.api_client(kubeconfig))

    def kubectl(
        self, *args: str, check: bool = True, kubeconfig: Path | None = None, timeout: float = 60.0
    ) -> subprocess.CompletedProcess[str]:
        """Run the built kubectl against this cluster; raises CalledProcessError (with output) on failure."""
        proc = subprocess.run(
            [self.binary("kubectl"), "--kubeconfig", str(kubeconfig or self.kubeconfig), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and proc.returncode != 0:
            raise subprocess.CalledProcessError(proc.returncode, proc.args, proc.stdout, proc.stderr)
        return proc

    def install_crds(self, dirs: Sequence[Path] | None = None, timeout: float = 60.0) -> list[str]:
        """Apply every *.yaml CRD in the given folders and wait until each is Established."""
        files: list[Path] = []
        for d in dirs or self.crd_dirs:
            files += [Path(f) for f in sorted(glob.glob(str(Path(d) / "*.yaml")))]
        return self._install_crd_files(files, timeout)

    def _install_crd_files(self, files: Sequence[Path], timeout: float = 60.0) -> list[str]:
        names: list[str] = []
        for f in files:
            for doc in yaml.safe_load_all(Path(f).read_text()):
                if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                    names.append(str(doc["metadata"]["name"]))
        if not files:
            return names
        args = ["apply", "--server-side", "--force-conflicts", "--field-manager=testbed"]
        for f in files:
            args += ["-f", str(f)]
        self.kubectl(*args)
        if names:
            self.kubectl(
                "wait",
                "--for=condition=Established",
                f"--timeout={int(timeout)}s",
                *[f"crd/{n}" for n in names],
                timeout=timeout + 10,
            )
        return names

    def service_account_kubeconfig(
        self,
        namespace: str,
        name: str,
        *,
        path: Path | None = None,
        expiration_seconds: int = 3600,
        create: bool = True,
    ) -> Path:
        """Mint a TokenRequest token for a ServiceAccount and write a kubeconfig that uses it.

        The reconciler runs with this so the project's own RBAC is what authorizes it.
        """
        raw = self.raw()
        try:
            if create:
                try:
                    raw.post(
                        f"/api/v1/namespaces/{namespace}/serviceaccounts",
                        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}},
                    )
                except Exception as exc:  # already exists is fine
                    if getattr(exc, "status", None) != 409:
                        raise
            tr = raw.post(
                f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
                {
                    "apiVersion": "authentication.k8s.io/v1",
                    "kind": "TokenRequest",
                    "spec": {"expirationSeconds": expiration_seconds},
                },
            )
        finally:
            raw.api_client.close()  # type: ignore[no-untyped-call]
        token = str(tr["status"]["token"])
        out = path or self.run_dir / f"sa-{namespace}-{name}.kubeconfig"
        return write_kubeconfig(
            out,
            server=self.server,
            ca_pem=self.ca_pem,
            user=f"system:serviceaccount:{namespace}:{name}",
            token=token,
            namespace=namespace,
        )

    def route_service(self, namespace: str, name: str, port: int, *to_ports: int) -> str:
        """Route the API server's calls to Service ``namespace/name`` port ``port`` (at its ClusterIP, as
        kube-proxy would) to ``127.0.0.1:<each of to_ports>`` in turn; returns the ClusterIP. Needs
        ``cluster_egress``."""
        if self.egress is None:
            raise ControlPlaneError("route_service needs ControlPlane(cluster_egress=True)")
        raw = self.raw()
        try:
            ip = str(raw.get(f"/api/v1/namespaces/{namespace}/services/{name}")["spec"]["clusterIP"])
        finally:
            raw.api_client.close()  # type: ignore[no-untyped-call]
        self.egress.route(ip, port, *[("127.0.0.1", p) for p in to_ports])
        return ip

    # ------------------------------------------------------------------ internals

    def _make_pki(self) -> None:
        pki = self.run_dir / "pki"
        pki.mkdir(parents=True, exist_ok=True)
        serving_ca = CertificateAuthority("testbed-serving-ca")
        client_ca = CertificateAuthority("testbed-client-ca")
        self.ca_pem = serving_ca.cert_pem
        (pki / "ca.crt").write_bytes(serving_ca.cert_pem)
        (pki / "client-ca.crt").write_bytes(client_ca.cert_pem)
        serving = serving_ca.issue(
            "kube-apiserver",
            dns_names=("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"),
            ip_addresses=("127.0.0.1", SERVICE_IP),
            server=True,
        )
        serving.write(pki, "apiserver")
        self._admin = client_ca.issue("testbed-admin", organizations=("system:masters",), client=True)
        self._admin.write(pki, "admin")
        self._scheduler = client_ca.issue("system:kube-scheduler", client=True)
        sa_key = new_rsa_key()
        self._sa_key_path.write_bytes(key_to_pem(sa_key))
        self._sa_key_path.chmod(0o600)
        (pki / "sa.pub").write_bytes(public_key_to_pem(sa_key))

    def _spawn(self, name: str, args: list[str]) -> _Proc:
        log = self.run_dir / f"{name}.log"
        fh = log.open("ab")
        try:
            # New session: Ctrl-C in a terminal reaches us, not the components, so stop() stays in charge.
            popen = subprocess.Popen(
                args, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )
        finally:
            fh.close()
        (self.run_dir / f"{name}.pid").write_text(str(popen.pid))
        proc = _Proc(name, popen, log)
        self._procs.append(proc)
        return proc

    def _wait_healthy(self, proc: _Proc, url: str, ctx: ssl.SSLContext | None) -> None:
        deadline = time.monotonic() + self.start_timeout
        last = ""
        while time.monotonic() < deadline:
            if proc.popen.poll() is not None:
                raise ControlPlaneError(
                    f"{proc.name} exited with {proc.popen.returncode}; log {proc.log}:\n{_tail(proc.log)}"
                )
            try:
                with urllib.request.urlopen(url, context=ctx, timeout=5) as resp:
                    if resp.status == 200:
                        return
                    last = f"HTTP {resp.status}"
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code}: {exc.read()[:300]!r}"
            except (OSError, ssl.SSLError) as exc:
                last = repr(exc)
            time.sleep(0.25)
        raise ControlPlaneError(
            f"{proc.name} not healthy at {url} after {self.start_timeout:.0f}s ({last}); "
            f"log {proc.log}:\n{_tail(proc.log)}"
        )

    def _admin_ssl_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=str(self.run_dir / "pki" / "ca.crt"))
        ctx.load_cert_chain(str(self.run_dir / "pki" / "admin.crt"), str(self.run_dir / "pki" / "admin.key"))
        return ctx

    @staticmethod
    def _insecure_ssl_context() -> ssl.SSLContext:
        # Scheduler and KCM serve /healthz with a self-signed cert; only liveness is checked there.
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx

    def _start_etcd(self) -> None:
        self.etcd_port = free_port()
        peer = free_port()
        data = self.run_dir / "etcd-data"
        client_url = f"http://127.0.0.1:{self.etcd_port}"
        peer_url = f"http://127.0.0.1:{peer}"
        proc = self._spawn(
            "etcd",
            [
                self.binary("etcd"),
                "--name=testbed",
                f"--data-dir={data}",
                f"--listen-client-urls={client_url}",
                f"--advertise-client-urls={client_url}",
                f"--listen-peer-urls={peer_url}",
                f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster=testbed={peer_url}",
                "--initial-cluster-state=new",
                # Test data is disposable; fsync only slows a 2-core CI box down.
                "--unsafe-no-fsync=true",
                "--quota-backend-bytes=4294967296",
                "--log-level=warn",
            ],
        )
        self._wait_healthy(proc, f"{client_url}/health", None)

    def _start_apiserver(self) -> None:
        pki = self.run_dir / "pki"
        self.apiserver_port = free_port()
        self.server = f"https://127.0.0.1:{self.apiserver_port}"
        args = [
            self.binary("kube-apiserver"),
            f"--etcd-servers=http://127.0.0.1:{self.etcd_port}",
            f"--etcd-compaction-interval={self.etcd_compaction_interval}",
            f"--watch-cache={'true' if self.watch_cache else 'false'}",
            f"--cert-dir={pki}",
            f"--tls-cert-file={pki / 'apiserver.crt'}",
            f"--tls-private-key-file={pki / 'apiserver.key'}",
            f"--client-ca-file={pki / 'client-ca.crt'}",
            f"--secure-port={self.apiserver_port}",
            "--bind-address=127.0.0.1",
            # Without a default route the apiserver cannot pick an address of its own.
            "--advertise-address=127.0.0.1",
            # No kube-proxy/endpoints for the `kubernetes` Service: nothing would route to them anyway.
            "--endpoint-reconciler-type=none",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            "--allow-privileged=true",
            "--authorization-mode=RBAC",
            f"--service-account-issuer={self.server}/",
            f"--service-account-key-file={pki / 'sa.pub'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            # ServiceAccount admission rejects pods until KCM has created the namespace's `default` SA, a race
            # that only slows tests (envtest disables it too). TaintNodesByCondition would add a not-ready taint
            # that only nodelifecycle (not run) removes. Webhook admission stays on.
            "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
            "--profiling=false",
            "--v=1",
            *self._egress_args(),
            *self.extra_apiserver_args,
        ]
        proc = self._spawn("kube-apiserver", args)
        self._wait_healthy(proc, f"{self.server}/readyz", self._admin_ssl_context())
        assert self._admin is not None
        write_kubeconfig(
            self.kubeconfig, server=self.server, ca_pem=self.ca_pem, user="testbed-admin", client=self._admin
        )

    def _egress_args(self) -> list[str]:
        if self.egress is None:
            return []
        config = self.egress.config_file(self.run_dir / "egress-selector.yaml")
        return [f"--egress-selector-config-file={config}"]

    def _component_args(self, name: str, kubeconfig: Path, port: int) -> list[str]:
        return [
            f"--kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "--leader-elect=false",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            f"--cert-dir={self.run_dir / 'pki' / name}",
            "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
            "--v=1",
        ]

    def _start_scheduler(self) -> None:
        assert self._scheduler is not None
        kc = write_kubeconfig(
            self.run_dir / "scheduler.kubeconfig",
            server=self.server,
            ca_pem=self.ca_pem,
            user="system:kube-scheduler",
            client=self._scheduler,
        )
        port = free_port()
        proc = self._spawn(
            "kube-scheduler",
            [self.binary("kube-scheduler"), *self._component_args("kube-scheduler", kc, port)],
        )
        self._wait_healthy(proc, f"https://127.0.0.1:{port}/healthz", self._insecure_ssl_context())

    def _start_coscheduler(self) -> None:
        """scheduler-plugins' scheduler with the release's own Coscheduling configuration
        (manifests/coscheduling/scheduler-config.yaml): Coscheduling on every extension point and as the
        queue sort, permitWaitingTimeSeconds 10; only the profile name and kubeconfig are ours. It runs as
        the admin (like KCM here) and beside the default scheduler, serving pods that name its profile."""
        assert self.coscheduler_dir is not None
        config = self.run_dir / "coscheduler-config.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "kubescheduler.config.k8s.io/v1",
                    "kind": "KubeSchedulerConfiguration",
                    "leaderElection": {"leaderElect": False},
                    "clientConnection": {"kubeconfig": str(self.kubeconfig)},
                    "profiles": [
                        {
                            "schedulerName": COSCHEDULER_NAME,
                            "plugins": {
                                "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                                "queueSort": {
                                    "enabled": [{"name": "Coscheduling"}],
                                    "disabled": [{"name": "*"}],
                                },
                            },
                            "pluginConfig": [
                                {"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 10}}
                            ],
                        }
                    ],
                }
            )
        )
        port = free_port()
        proc = self._spawn(
            "coscheduler",
            [
                str(self.coscheduler_dir / "scheduler"),
                f"--config={config}",
                f"--authentication-kubeconfig={self.kubeconfig}",
                f"--authorization-kubeconfig={self.kubeconfig}",
                "--bind-address=127.0.0.1",
                f"--secure-port={port}",
                f"--cert-dir={self.run_dir / 'pki' / 'coscheduler'}",
                "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
                "--v=1",
            ],
        )
        self._wait_healthy(proc, f"https://127.0.0.1:{port}/healthz", self._insecure_ssl_context())

    def _start_controller_manager(self) -> None:
        # KCM runs as admin: the bootstrap system:kube-controller-manager role assumes per-controller SA
        # credentials (--use-service-account-credentials), which would need extra setup for no test value.
        port = free_port()
        pki = self.run_dir / "pki"
        proc = self._spawn(
            "kube-controller-manager",
            [
                self.binary("kube-controller-manager"),
                *self._component_args("kube-controller-manager", self.kubeconfig, port),
                f"--controllers={','.join(KCM_CONTROLLERS)}",
                f"--root-ca-file={pki / 'ca.crt'}",
                f"--service-account-private-key-file={self._sa_key_path}",
                "--use-service-account-credentials=false",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
            ],
        )
        self._wait_healthy(proc, f"https://127.0.0.1:{port}/healthz", self._insecure_ssl_context())

    def describe(self) -> dict[str, Any]:
        """Where everything is, for logs and `python -m testbed up`."""
        return {
            "server": self.server,
            "kubeconfig": str(self.kubeconfig),
            "run_dir": str(self.run_dir),
            "assets": str(self.assets_dir),
            "pids": {p.name: p.popen.pid for p in self._procs},
        }

    def __repr__(self) -> str:
        return f"ControlPlane({json.dumps(self.describe())})"
