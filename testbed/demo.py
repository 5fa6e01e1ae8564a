"""``python -m testbed.demo [--cluster]``: the seed's Steps 1–3 and Clean up, end to end.

With ``--cluster``: build (or reuse) the test control plane (``testbed/``), start it with the fake GPU
kubelet, apply ``deploy/``'s namespace, ServiceAccount and RBAC, run ``omereconcile run`` as a subprocess
under that ServiceAccount, apply ``examples/catalog`` and ``examples/llama-pool.yaml``, wait for Ready,
print the seed's ``kubectl`` outputs, scale to 2, print them again, delete; then a multi-pod replica (a
leader and a worker per Instance, 8 GPUs each, on the gang scheduler): its pods and PodGroup, deleted; and
stop everything.

Without it: no cluster; print the first passes the planner would make for the example against the
example catalog (the same render and plan the reconciler runs).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

__all__ = ["main"]

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "llama-pool.yaml"
CATALOG = REPO / "examples" / "catalog"
SERVING = 'custom-columns=NAME:.metadata.name,SERVING:.status.conditions[?(@.type=="ome.io/serving")].status'
SERVICES = "custom-columns=NAME:.metadata.name,TYPE:.spec.type,CLUSTER-IP:.spec.clusterIP"
GANG_PODS = (
    "custom-columns=NAME:.metadata.name,NODE:.spec.nodeName,"
    "POD-GROUP:.metadata.labels.scheduling\\.x-k8s\\.io/pod-group,"
    'SERVING:.status.conditions[?(@.type=="ome.io/serving")].status'
)
PODGROUPS = (
    "custom-columns=NAME:.metadata.name,MIN-MEMBER:.spec.minMember,TIMEOUT:.spec.scheduleTimeoutSeconds"
)


def _offline() -> int:
    from omereconcile.cli import describe
    from omereconcile.cluster.observe import build_catalog, render_world
    from omereconcile.planner import plan
    from omereconcile.settings import OperatorSettings

    objs = [yaml.safe_load(p.read_text()) for p in sorted(CATALOG.glob("*.yaml"))]
    raw: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text())
    raw["metadata"].update(uid="00000000-0000-0000-0000-000000000001", generation=1, resourceVersion="1")
    catalog = build_catalog(objs)
    print(
        f"# {EXAMPLE.relative_to(REPO)} against {CATALOG.relative_to(REPO)}/ (no cluster; --cluster runs it)"
    )
    for step in ("first pass", "second pass (finalizer in place)"):
        obs = render_world(
            raw,
            pods=[],
            revisions=[],
            service=None,
            slices=[],
            catalog=catalog,
            settings=OperatorSettings(),
            now=datetime.now(UTC),
        )
        print(f"\n## {step}")
        print(describe(plan(obs.world)))
        raw["metadata"]["finalizers"] = ["ome.io/ir-teardown"]
    return 0


class _Demo:
    def __init__(self, cluster: Any, work: Path) -> None:
        self.c = cluster
        self.work = work

    def sh(self, *args: str, check: bool = True, show: bool = True) -> str:
        shown = " ".join(a if " " not in a and "[" not in a else f"'{a}'" for a in args)
        proc = self.c.cp.kubectl(*args, check=False)
        out = (proc.stdout + proc.stderr).rstrip()
        if show:
            print(f"$ kubectl {shown}\n{out}\n")
        if check and proc.returncode != 0:
            raise SystemExit(f"kubectl {shown} failed:\n{out}")
        return str(proc.stdout)

    def wait(self, what: str, fn: Any, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if fn():
                return
            time.sleep(0.5)
        raise SystemExit(f"timed out waiting for {what}")


def _cluster() -> int:
    from testbed.testing import running_cluster

    work = Path(tempfile.mkdtemp(prefix="omereconcile-demo-"))
    print("# building (or reusing) the test control plane and starting it with 4 fake GPU nodes ...")
    with running_cluster(work / "controlplane", nodes=4, ready_delay=2.0) as c:
        d = _Demo(c, work)
        deploy = REPO / "deploy" / "base"
        for name in ("namespace.yaml", "serviceaccount.yaml", "rbac.yaml"):
            d.sh("apply", "-f", str(deploy / name), show=False)
        d.sh(
            "create",
            "configmap",
            "inferenceservice-config",
            "-n",
            "ome",
            "--from-literal=inferenceReplica={}",
            show=False,
        )
        d.sh("apply", "-f", str(CATALOG), show=False)
        for f in sorted(CATALOG.glob("*.yaml")):
            doc = yaml.safe_load(f.read_text())
            if doc.get("status"):
                c.raw.patch(
                    f"/apis/ome.io/v1beta1/{doc['kind'].lower()}s/{doc['metadata']['name']}/status",
                    {"status": doc["status"]},
                )
        # The model agent labels the nodes holding the weights; the rendered pods select on it.
        d.sh(
            "label",
            "nodes",
            "--all",
            "models.ome.io/clusterbasemodel.llama-3-2-1b-instruct=Ready",
            show=False,
        )
        kubeconfig = c.cp.service_account_kubeconfig("ome", "omereconcile", create=False)
        log = open(work / "reconciler.log", "ab")  # noqa: SIM115 - closed below
        env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
        rec = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "omereconcile",
                "run",
                "--kubeconfig",
                str(kubeconfig),
                "--probe-addr",
                "127.0.0.1:0",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=REPO,
            env=env,
        )
        print(
            f"# omereconcile run (pid {rec.pid}) under system:serviceaccount:ome:omereconcile; log: {work / 'reconciler.log'}\n"
        )
        try:
            d.sh("create", "namespace", "llama-demo")
            d.sh("apply", "-f", str(EXAMPLE))
            d.sh(
                "wait",
                "--for=condition=Ready",
                "inferencereplica/llama-pool",
                "-n",
                "llama-demo",
                "--timeout=50s",
            )
            d.sh("get", "inferencereplicas", "-n", "llama-demo")
            d.sh("get", "pods", "-n", "llama-demo", "-l", "ome.io/inferenceservice=llama-pool", "-o", SERVING)
            d.sh("get", "services", "-n", "llama-demo", "-o", SERVICES)
            d.sh("scale", "inferencereplica", "llama-pool", "-n", "llama-demo", "--replicas=2")

            def two() -> bool:
                rows = d.sh(
                    "get", "inferencereplica", "llama-pool", "-n", "llama-demo", show=False
                ).splitlines()
                return len(rows) > 1 and rows[1].split()[1:6] == ["engine", "2", "2", "2", "2"]

            d.wait("2 2 2 2", two)
            d.sh("get", "inferencereplica", "llama-pool", "-n", "llama-demo")
            d.sh("get", "pods", "-n", "llama-demo", "-l", "ome.io/inferenceservice=llama-pool", "-o", SERVING)
            d.sh("delete", "inferencereplica", "llama-pool", "-n", "llama-demo", "--timeout=50s")
            d.sh("delete", "namespace", "llama-demo", "--timeout=50s")
            _multi_pod(d)
        finally:
            rec.send_signal(signal.SIGTERM)
            try:
                rec.wait(20)
            except subprocess.TimeoutExpired:
                rec.kill()
            log.close()
        print(f"# reconciler stopped (exit {rec.returncode}); stopping the control plane")
    return 0


def _multi_pod(d: _Demo) -> None:
    """The multi-pod step: the gang's pods (one node each) and its PodGroup, then the teardown."""
    manifest = d.work / "llama-gang.yaml"
    from testbed.controlplane import COSCHEDULER_NAME
    from testbed.testing import gang_replica

    replica = gang_replica(
        "llama-gang", "gang-demo", "docker.io/vllm/vllm-openai:v0.9.0.1", gpus=8, scheduler=COSCHEDULER_NAME
    )
    manifest.write_text(yaml.safe_dump(replica))
    d.sh("create", "namespace", "gang-demo")
    d.sh("apply", "-f", str(manifest))
    d.sh("wait", "--for=condition=Ready", "inferencereplica/llama-gang", "-n", "gang-demo", "--timeout=90s")
    d.sh("get", "inferencereplicas", "-n", "gang-demo")
    d.sh("get", "pods", "-n", "gang-demo", "-l", "ome.io/inferenceservice=llama-gang", "-o", GANG_PODS)
    d.sh("get", "podgroups.scheduling.x-k8s.io", "-n", "gang-demo", "-o", PODGROUPS)
    d.sh("delete", "inferencereplica", "llama-gang", "-n", "gang-demo", "--timeout=50s")
    d.sh("get", "podgroups.scheduling.x-k8s.io", "-n", "gang-demo")
    d.sh("delete", "namespace", "gang-demo", "--timeout=50s")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m testbed.demo", description=__doc__.split("\n\n")[0])
    ap.add_argument("--cluster", action="store_true", help="run it on the test control plane (testbed/)")
    args = ap.parse_args(argv)
    return _cluster() if args.cluster else _offline()


if __name__ == "__main__":
    sys.exit(main())
