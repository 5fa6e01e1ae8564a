"""deploy/ applied whole, server-side, on the test control plane; its RBAC shown minimal with
``kubectl auth can-i`` (and sufficient: every reconciler cluster test runs under it, e.g. the rolls of
test_reconciler_rollout.py); deploy/namespaced/ accepted by the API server for a real namespace."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import yaml
from helpers import REPO, kubectl_stdin

from testbed.testing import Cluster

SA = "system:serviceaccount:ome:omereconcile"
# Objects other tests rely on (the namespace, the ServiceAccount and its RBAC) stay; the rest goes, above
# all the fail-closed webhook registration whose Service has no reachable endpoint here.
TRANSIENT = {
    "Deployment",
    "Service",
    "ValidatingWebhookConfiguration",
    "NetworkPolicy",
    "PodDisruptionBudget",
}


@pytest.fixture
def applied(cluster: Cluster) -> Iterator[list[dict[str, object]]]:
    docs = yaml.safe_load_all(cluster.kubectl("kustomize", str(REPO / "deploy")).stdout)
    objs = [d for d in docs if d]
    try:
        yield objs
    finally:
        for obj in objs:
            if obj["kind"] in TRANSIENT:
                meta = obj["metadata"]
                args = ["delete", obj["kind"].lower(), meta["name"], "--ignore-not-found", "--wait=false"]
                if "namespace" in meta:
                    args += ["-n", meta["namespace"]]
                cluster.kubectl(*args)


def test_apply_k_deploy_applies_every_object_server_side(
    cluster: Cluster, applied: list[dict[str, object]]
) -> None:
    out = cluster.kubectl("apply", "--server-side", "-k", str(REPO / "deploy"))
    lines = out.stdout.splitlines()
    assert len(lines) == len(applied), out.stdout
    assert all(line.endswith((" serverside-applied", " unchanged")) for line in lines), out.stdout
    kinds = sorted({str(o["kind"]) for o in applied})
    assert kinds == sorted(
        [
            "ClusterRole",
            "ClusterRoleBinding",
            "CustomResourceDefinition",
            "Deployment",
            "Namespace",
            "NetworkPolicy",
            "PodDisruptionBudget",
            "Role",
            "RoleBinding",
            "Secret",
            "Service",
            "ServiceAccount",
            "ValidatingWebhookConfiguration",
        ]
    )
    for obj in applied:  # every object is there, owned by the server-side apply
        meta = obj["metadata"]
        assert isinstance(meta, dict)
        args = ["get", str(obj["kind"]).lower(), meta["name"], "-o", "yaml", "--show-managed-fields"]
        if "namespace" in meta:
            args += ["-n", meta["namespace"]]
        live = yaml.safe_load(cluster.kubectl(*args).stdout)
        assert any(m.get("manager") == "kubectl" for m in live["metadata"]["managedFields"]), meta
    crds = [str(o["metadata"]["name"]) for o in applied if o["kind"] == "CustomResourceDefinition"]  # type: ignore[index]
    assert len(crds) == 7
    cluster.kubectl("wait", "--for=condition=Established", "--timeout=60s", *[f"crd/{n}" for n in crds])
    vwc = yaml.safe_load(
        cluster.kubectl(
            "get", "validatingwebhookconfiguration", "omereconcile-inferencereplica", "-o", "yaml"
        ).stdout
    )
    ref = vwc["webhooks"][0]["clientConfig"]["service"]
    assert (ref["namespace"], ref["name"], ref["port"]) == ("ome", "omereconcile-webhook", 443)
    svc = yaml.safe_load(cluster.kubectl("get", "service", ref["name"], "-n", "ome", "-o", "yaml").stdout)
    assert svc["spec"]["ports"][0]["targetPort"] == "webhook"
    deploy = yaml.safe_load(
        cluster.kubectl("get", "deployment", "omereconcile", "-n", "ome", "-o", "yaml").stdout
    )
    assert svc["spec"]["selector"].items() <= deploy["spec"]["template"]["metadata"]["labels"].items()
    ports = {p["name"] for p in deploy["spec"]["template"]["spec"]["containers"][0]["ports"]}
    netpol = yaml.safe_load(
        cluster.kubectl("get", "networkpolicy", "omereconcile", "-n", "ome", "-o", "yaml").stdout
    )
    assert [r["ports"][0]["port"] for r in netpol["spec"]["ingress"]] == ["webhook", "metrics"]
    assert {"webhook", "probes", "metrics"} <= ports
    # The self-managed certificate's Secret: created empty, filled by the reconciler.
    secret = yaml.safe_load(
        cluster.kubectl("get", "secret", "omereconcile-webhook-server-cert", "-n", "ome", "-o", "yaml").stdout
    )
    assert secret["type"] == "Opaque"
    pdb = yaml.safe_load(cluster.kubectl("get", "pdb", "omereconcile", "-n", "ome", "-o", "yaml").stdout)
    assert pdb["spec"]["minAvailable"] == 1


# (verb, resource[/name][#subresource], namespace ("any": all of them, "": cluster scope), allowed)
CAN_I: list[tuple[str, str, str, bool]] = [
    ("watch", "inferencereplicas.ome.io", "any", True),
    ("patch", "inferencereplicas.ome.io#status", "any", True),
    ("create", "inferencereplicas.ome.io", "any", False),
    ("delete", "inferencereplicas.ome.io", "any", False),
    ("list", "clusterservingruntimes.ome.io", "", True),
    ("update", "clusterservingruntimes.ome.io", "", False),
    ("create", "pods", "any", True),
    ("delete", "pods", "any", True),
    ("update", "pods", "any", False),
    ("patch", "pods#status", "any", True),
    ("create", "pods#exec", "any", False),
    ("create", "services", "any", True),
    ("list", "endpointslices.discovery.k8s.io", "any", True),
    ("create", "controllerrevisions.apps", "any", True),
    ("create", "events", "any", True),
    ("patch", "events", "any", True),  # a repeated Event's count
    ("delete", "events", "any", False),
    ("get", "secrets", "ome", False),
    ("get", "secrets/omereconcile-webhook-server-cert", "ome", True),  # the self-managed certificate
    ("update", "secrets/omereconcile-webhook-server-cert", "ome", True),
    ("delete", "secrets/omereconcile-webhook-server-cert", "ome", False),
    ("get", "secrets/omereconcile-webhook-cert", "ome", False),  # the other modes' Secret: a volume
    ("get", "secrets/other", "ome", False),
    ("list", "secrets", "any", False),
    ("get", "configmaps/inferenceservice-config", "ome", True),
    # The relocation ledgers <replica>-ome-migration-audit (docs/planner.md, "Relocation"): any name, as
    # create, list and watch cannot be limited by name; never deleted (the replica owns them).
    ("get", "configmaps/other", "any", True),
    ("patch", "configmaps", "any", True),
    ("delete", "configmaps", "any", False),
    ("update", "configmaps/inferenceservice-config", "ome", False),
    ("create", "leases.coordination.k8s.io", "ome", True),
    ("update", "leases.coordination.k8s.io/omereconcile-leader", "ome", True),
    ("update", "leases.coordination.k8s.io/someone-else", "ome", False),
    # --shards=12 (issue 31): its ranges, member slots and cuts by name; list is one per round.
    ("list", "leases.coordination.k8s.io", "ome", True),
    ("update", "leases.coordination.k8s.io/omereconcile-shard-12-11", "ome", True),
    ("update", "leases.coordination.k8s.io/omereconcile-shard-12-m-0", "ome", True),
    ("get", "leases.coordination.k8s.io/omereconcile-shard-12-cuts", "ome", True),
    ("update", "leases.coordination.k8s.io/omereconcile-shard-12-12", "ome", False),
    ("update", "leases.coordination.k8s.io/omereconcile-shard-4-0", "ome", False),
    ("list", "leases.coordination.k8s.io", "any", False),
    ("create", "deployments.apps", "any", False),
    ("create", "podgroups.scheduling.x-k8s.io", "any", True),  # each gang's PodGroup, before its pods
    ("update", "podgroups.scheduling.x-k8s.io", "any", False),
    ("get", "nodes", "", True),  # read only: the lost-node rules (docs/planner.md, "Lost nodes")
    ("watch", "nodes", "", True),
    ("patch", "nodes", "", False),
    ("delete", "nodes", "", False),
    ("create", "serviceaccounts#token", "ome", False),
    ("create", "clusterrolebindings.rbac.authorization.k8s.io", "", False),
    ("patch", "validatingwebhookconfigurations.admissionregistration.k8s.io", "", False),
    (
        "patch",
        "validatingwebhookconfigurations.admissionregistration.k8s.io/omereconcile-inferencereplica",
        "",
        True,
    ),
    ("patch", "validatingwebhookconfigurations.admissionregistration.k8s.io/other", "", False),
    ("create", "tokenreviews.authentication.k8s.io", "", True),  # secure metrics
    ("create", "subjectaccessreviews.authorization.k8s.io", "", True),
]


def can_i(cluster: Cluster, verb: str, resource: str, namespace: str, user: str = SA) -> bool:
    target, _, sub = resource.partition("#")
    args = ["auth", "can-i", verb, target, "--as", user, *(["--subresource", sub] if sub else [])]
    args += ["-A"] if namespace == "any" else (["-n", namespace] if namespace else [])
    proc = cluster.kubectl(*args, check=False)
    assert proc.stdout.strip() in ("yes", "no"), proc
    return proc.stdout.strip() == "yes"


def test_rbac_is_minimal_can_i_table(cluster: Cluster, reconciler_kubeconfig: object) -> None:
    # deploy/'s RBAC beyond deploy/base/rbac.yaml (which the fixture applies): the certificate's and metrics'.
    cluster.kubectl(
        "apply",
        "-f",
        str(REPO / "deploy" / "components" / "self-managed-cert" / "rbac.yaml"),
        "-f",
        str(REPO / "deploy" / "base" / "metrics.yaml"),
    )
    rows = [(verb, res, ns, can_i(cluster, verb, res, ns)) for verb, res, ns, _ in CAN_I]
    print(
        "\n" + "\n".join(f"{v:7} {r:65} {n or '(cluster)':10} {'yes' if a else 'no'}" for v, r, n, a in rows)
    )
    assert rows == CAN_I


def test_namespaced_overlay_binds_one_namespace(cluster: Cluster, namespace: str) -> None:
    """deploy/namespaced/, pointed at a real namespace, passes server-side validation whole, and its
    RoleBinding grants the namespaced kinds there only (can-i on a ServiceAccount of its own)."""
    text = cluster.kubectl("kustomize", str(REPO / "deploy" / "namespaced")).stdout
    text = re.sub(r"(?m)(: |=)inference$", rf"\g<1>{namespace}", text)  # the overlay's three mentions
    docs = [d for d in yaml.safe_load_all(text) if d]
    binding = next(d for d in docs if d["kind"] == "RoleBinding" and d["metadata"]["namespace"] == namespace)
    deploy = next(d for d in docs if d["kind"] == "Deployment")
    assert f"--namespace={namespace}" in deploy["spec"]["template"]["spec"]["containers"][0]["args"]
    assert not [
        d for d in docs if d["kind"] == "ClusterRoleBinding" and d["metadata"]["name"] == "omereconcile"
    ]
    out = kubectl_stdin(cluster, yaml.safe_dump_all(docs), "apply", "--server-side", "--dry-run=server")
    assert len(out.stdout.splitlines()) == len(docs)
    # The binding for real, to a ServiceAccount of this test: pods here, none elsewhere.
    cluster.kubectl("create", "serviceaccount", "scoped", "-n", namespace)
    binding["metadata"]["name"] = "scoped"
    binding["subjects"] = [{"kind": "ServiceAccount", "name": "scoped", "namespace": namespace}]
    kubectl_stdin(cluster, yaml.safe_dump(binding), "apply")
    user = f"system:serviceaccount:{namespace}:scoped"
    assert can_i(cluster, "create", "pods", namespace, user)
    assert can_i(cluster, "watch", "inferencereplicas.ome.io", namespace, user)
    assert not can_i(cluster, "create", "pods", "default", user)
    assert not can_i(cluster, "watch", "inferencereplicas.ome.io", "any", user)
