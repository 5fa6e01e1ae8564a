"""Smoke tests of the testbed itself: scheduler + fake kubelet, CRDs, kubectl, 410s and webhooks."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from testbed import WebhookServer, allow, deny
from testbed.rawkube import STRATEGIC_MERGE_PATCH, is_gone
from testbed.testing import Cluster, wait_for

REPO = Path(__file__).resolve().parents[2]
GATE = "ome.io/serving"
IREP = "/apis/ome.io/v1beta1/namespaces/{ns}/inferencereplicas"


def _pod(name: str, gpus: int, labels: dict[str, str] | None = None, gates: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "engine",
                "image": "registry.invalid/fake-engine:1",
                "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
            }
        ],
        "terminationGracePeriodSeconds": 30,
    }
    if gates:
        spec["readinessGates"] = [{"conditionType": GATE}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
    }


def _cond(pod: dict[str, Any], ctype: str) -> dict[str, Any]:
    for c in pod.get("status", {}).get("conditions", []) or []:
        if c.get("type") == ctype:
            return dict(c)
    return {}


def _api_error_message(exc: ApiException) -> str:
    try:
        return str(json.loads(exc.body or "{}").get("message", exc.body))
    except ValueError:
        return str(exc.body)


def test_readiness_gate_pod_reaches_endpointslice(cluster: Cluster, namespace: str) -> None:
    raw = cluster.raw
    raw.post(
        f"/api/v1/namespaces/{namespace}/services",
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "engine-headless"},
            "spec": {
                "clusterIP": "None",
                "publishNotReadyAddresses": True,
                "selector": {"app": "gated"},
                "ports": [{"name": "http", "port": 8080}],
            },
        },
    )
    raw.post(f"/api/v1/namespaces/{namespace}/pods", _pod("gated", 1, {"app": "gated"}, gates=True))
    pod_path = f"/api/v1/namespaces/{namespace}/pods/gated"

    def containers_ready() -> dict[str, Any] | None:
        pod = raw.get(pod_path)
        return pod if _cond(pod, "ContainersReady").get("status") == "True" else None

    pod = wait_for("ContainersReady", containers_ready)
    assert pod["spec"]["nodeName"] in cluster.kubelet.node_names
    assert _cond(pod, "PodScheduled")["status"] == "True"
    assert pod["status"]["phase"] == "Running"
    pod_ip = pod["status"]["podIP"]
    assert pod_ip.startswith("10.244.")
    ready = _cond(pod, "Ready")
    assert ready["status"] == "False"
    assert ready["reason"] == "ReadinessGatesNotReady"

    slices = f"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices"

    def endpoint() -> dict[str, Any] | None:
        items = raw.get(slices, labelSelector="kubernetes.io/service-name=engine-headless")["items"]
        for s in items:
            for ep in s.get("endpoints") or []:
                if pod_ip in ep.get("addresses", []):
                    return dict(ep)
        return None

    # publishNotReadyAddresses makes `ready` true regardless; `serving` tracks the pod's Ready condition.
    ep = wait_for("endpoint for the not-yet-ready pod", endpoint)
    assert ep["conditions"].get("serving") is False

    raw.patch(
        f"{pod_path}/status",
        {"status": {"conditions": [{"type": GATE, "status": "True"}]}},
        content_type=STRATEGIC_MERGE_PATCH,
    )
    wait_for("Ready after the gate", lambda: _cond(raw.get(pod_path), "Ready").get("status") == "True")

    def serving_endpoint() -> dict[str, Any] | None:
        e = endpoint()
        return e if e and e["conditions"].get("serving") and e["conditions"].get("ready") else None

    ep = wait_for("serving+ready endpoint", serving_endpoint)
    assert ep["targetRef"]["name"] == "gated"
    ready = _cond(raw.get(pod_path), "Ready")
    assert "reason" not in ready  # the stale ReadinessGatesNotReady reason was cleared

    # A settled pod costs no further status writes (no patch loop between kubelet and apiserver).
    patches = cluster.kubelet.status_patches
    time.sleep(1.5)
    assert cluster.kubelet.status_patches == patches

    # Gate back to False: the fake kubelet must take Ready away again.
    raw.patch(
        f"{pod_path}/status",
        {"status": {"conditions": [{"type": GATE, "status": "False"}]}},
        content_type=STRATEGIC_MERGE_PATCH,
    )
    wait_for(
        "Ready=False after gate drops", lambda: _cond(raw.get(pod_path), "Ready").get("status") == "False"
    )


def test_pod_requesting_too_many_gpus_stays_pending(cluster: Cluster, namespace: str) -> None:
    raw = cluster.raw
    raw.post(f"/api/v1/namespaces/{namespace}/pods", _pod("too-big", 9))

    def unschedulable() -> dict[str, Any] | None:
        c = _cond(raw.get(f"/api/v1/namespaces/{namespace}/pods/too-big"), "PodScheduled")
        return c if c.get("status") == "False" else None

    cond = wait_for("PodScheduled=False", unschedulable)
    assert cond["reason"] == "Unschedulable"
    assert "nvidia.com/gpu" in cond["message"]
    pod = raw.get(f"/api/v1/namespaces/{namespace}/pods/too-big")
    assert pod["status"]["phase"] == "Pending"
    assert not pod["spec"].get("nodeName")


def test_kubectl_apply_get_and_scale_example(cluster: Cluster) -> None:
    out = cluster.kubectl("create", "namespace", "llama-demo").stdout
    assert "namespace/llama-demo created" in out
    out = cluster.kubectl("apply", "-f", str(REPO / "examples" / "llama-pool.yaml")).stdout
    assert out.strip() == "inferencereplica.ome.io/llama-pool created"

    table = cluster.kubectl("get", "inferencereplicas", "-n", "llama-demo").stdout.splitlines()
    assert table[0].split() == ["NAME", "COMPONENT", "DESIRED", "CURRENT", "READY", "AVAILABLE", "AGE"]
    assert table[1].split()[:3] == ["llama-pool", "engine", "1"]
    short = cluster.kubectl("get", "irep", "-n", "llama-demo", "-o", "name").stdout
    assert short.strip() == "inferencereplica.ome.io/llama-pool"

    out = cluster.kubectl(
        "scale", "inferencereplica", "llama-pool", "-n", "llama-demo", "--replicas=2"
    ).stdout
    assert out.strip() == "inferencereplica.ome.io/llama-pool scaled"
    obj = cluster.raw.get(IREP.format(ns="llama-demo") + "/llama-pool")
    assert obj["spec"]["replicas"] == 2
    scale = cluster.raw.get(IREP.format(ns="llama-demo") + "/llama-pool/scale")
    assert scale["kind"] == "Scale"
    assert scale["spec"]["replicas"] == 2


def test_schema_rejects_unknown_component(cluster: Cluster, namespace: str) -> None:
    bad = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {"name": "bad"},
        "spec": {"component": "gpu", "replicas": 1},
    }
    with pytest.raises(ApiException) as info:
        cluster.raw.post(IREP.format(ns=namespace), bad)
    assert info.value.status == 422
    msg = _api_error_message(info.value)
    assert "spec.component" in msg
    assert "Unsupported value" in msg
    # kubectl surfaces the same server-side rejection.
    manifest = json.dumps(bad | {"metadata": {"name": "bad", "namespace": namespace}})
    proc = subprocess.run(
        [cluster.cp.binary("kubectl"), "--kubeconfig", str(cluster.cp.kubeconfig), "apply", "-f", "-"],
        input=manifest,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode != 0
    assert "spec.component" in proc.stderr


def test_watch_from_compacted_resource_version_gets_410(cluster: Cluster, namespace: str) -> None:
    raw = cluster.raw
    cm_path = f"/api/v1/namespaces/{namespace}/configmaps"
    first = raw.post(cm_path, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    old_rv = first["metadata"]["resourceVersion"]
    for i in range(5):
        raw.patch(f"{cm_path}/c", {"data": {"i": str(i)}})

    def gone(rv: str) -> bool:
        # The testbed runs without the watch cache, so watches are served by etcd, which the apiserver
        # compacts every --etcd-compaction-interval (10s) up to the revision seen one interval earlier.
        return any(is_gone(e) for e in raw.watch(cm_path, resource_version=rv, timeout_seconds=1))

    wait_for("410 Gone from a compacted resourceVersion", lambda: gone(old_rv), timeout=60, interval=1.0)
    # "1" predates every compaction point: Gone as well (immediately once the cluster is >20s old).
    wait_for("410 Gone for resourceVersion 1", lambda: gone("1"), timeout=60, interval=1.0)
    # A list from a compacted resourceVersion is 410 too (relist paths must use RV "" or "0").
    with pytest.raises(ApiException) as info:
        raw.get(cm_path, resourceVersion=old_rv, resourceVersionMatch="Exact")
    assert info.value.status == 410


def test_fake_kubelet_faults_and_deletion(cluster: Cluster, namespace: str) -> None:
    raw = cluster.raw
    kubelet = cluster.kubelet
    kubelet.crash_loop("crasher", namespace)
    kubelet.fail_image_pull("puller", namespace)
    try:
        for name in ("crasher", "puller", "plain"):
            raw.post(f"/api/v1/namespaces/{namespace}/pods", _pod(name, 1))

        def waiting_reason(name: str) -> str | None:
            pod = raw.get(f"/api/v1/namespaces/{namespace}/pods/{name}")
            for cs in pod.get("status", {}).get("containerStatuses") or []:
                w = (cs.get("state") or {}).get("waiting")
                if w:
                    return str(w["reason"])
            return None

        wait_for("CrashLoopBackOff", lambda: waiting_reason("crasher") == "CrashLoopBackOff")
        wait_for("ImagePullBackOff", lambda: waiting_reason("puller") == "ImagePullBackOff")

        def restarts() -> int:
            pod = raw.get(f"/api/v1/namespaces/{namespace}/pods/crasher")
            return int(pod["status"]["containerStatuses"][0]["restartCount"])

        before = restarts()
        wait_for("restartCount to grow", lambda: restarts() > before, timeout=15)
        crasher = raw.get(f"/api/v1/namespaces/{namespace}/pods/crasher")
        assert _cond(crasher, "ContainersReady")["status"] == "False"

        kubelet.heal("crasher", namespace)
        wait_for(
            "healed pod Ready",
            lambda: (
                _cond(raw.get(f"/api/v1/namespaces/{namespace}/pods/crasher"), "Ready").get("status")
                == "True"
            ),
        )
    finally:
        kubelet.heal("crasher", namespace)
        kubelet.heal("puller", namespace)

    # Graceful deletion completes because the fake kubelet finishes it.
    raw.delete(f"/api/v1/namespaces/{namespace}/pods/plain")

    def deleted() -> bool:
        try:
            raw.get(f"/api/v1/namespaces/{namespace}/pods/plain")
        except ApiException as exc:
            return bool(exc.status == 404)
        return False

    wait_for("graceful deletion to finish", deleted)


def test_webhook_helper_rejects_create(cluster: Cluster, namespace: str) -> None:
    def handler(request: dict[str, Any]) -> dict[str, Any]:
        replicas = request["object"]["spec"].get("replicas") or 0
        if replicas > 5:
            return deny(f"spec.replicas: {replicas} exceeds the test limit of 5")
        return allow()

    body: dict[str, Any] = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {"name": "big"},
        "spec": {"component": "engine", "replicas": 10},
    }
    with WebhookServer(handler) as hook:
        hook.register(cluster.raw)
        hook.wait_active(cluster.raw, namespace)
        with pytest.raises(ApiException) as info:
            cluster.raw.post(IREP.format(ns=namespace), body)
        msg = _api_error_message(info.value)
        assert "denied the request" in msg
        assert "spec.replicas: 10 exceeds the test limit of 5" in msg
        body["spec"]["replicas"] = 2
        created = cluster.raw.post(IREP.format(ns=namespace), body)
        assert created["metadata"]["name"] == "big"
        assert [r["operation"] for r in hook.requests] == ["CREATE", "CREATE"]
    # Unregistered on exit: the same bad object is now admitted.
    bad = body | {"metadata": {"name": "big2"}, "spec": {"component": "engine", "replicas": 10}}
    wait_for("webhook gone", lambda: _try_create(cluster, namespace, bad))


def _try_create(cluster: Cluster, namespace: str, body: dict[str, Any]) -> bool:
    try:
        cluster.raw.post(IREP.format(ns=namespace), body)
    except ApiException:
        return False
    return True


def test_service_account_kubeconfig_is_bound_by_rbac(cluster: Cluster, namespace: str) -> None:
    kc = cluster.cp.service_account_kubeconfig(namespace, "reconciler")
    who = cluster.cp.kubectl("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}", kubeconfig=kc)
    assert who.stdout.strip() == f"system:serviceaccount:{namespace}:reconciler"
    denied = cluster.cp.kubectl("get", "pods", "-n", namespace, kubeconfig=kc, check=False)
    assert denied.returncode != 0
    assert "forbidden" in denied.stderr

    rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/" + namespace
    cluster.raw.post(
        f"{rbac}/roles",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "pod-reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}],
        },
    )
    cluster.raw.post(
        f"{rbac}/rolebindings",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "reconciler-pod-reader"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "reconciler", "namespace": namespace}],
        },
    )
    wait_for(
        "RBAC to admit the ServiceAccount",
        lambda: (
            cluster.cp.kubectl("get", "pods", "-n", namespace, kubeconfig=kc, check=False).returncode == 0
        ),
    )
