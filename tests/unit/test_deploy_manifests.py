"""deploy/ validates against the Kubernetes 1.36 schemas and keeps its least-privilege and hardening promises."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from omereconcile.sharding import lease_names
from omerender.cli.kubeschema import kube_problems

# deploy/ builds on deploy/base (deploy/namespaced/ too), which holds every object but the CRDs.
DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "base"
MANIFESTS = sorted(p for p in DEPLOY.glob("*.yaml") if p.name != "kustomization.yaml")


def _docs() -> list[dict[str, Any]]:
    return [d for p in MANIFESTS for d in yaml.safe_load_all(p.read_text()) if d]


def _kind(kind: str) -> list[dict[str, Any]]:
    return [d for d in _docs() if d["kind"] == kind]


@pytest.mark.parametrize("doc", _docs(), ids=lambda d: f"{d['kind']}/{d['metadata']['name']}")
def test_manifest_validates(doc: dict[str, Any]) -> None:
    assert kube_problems(doc) == []


def test_kustomization_lists_every_manifest() -> None:
    kust = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    assert sorted(kust["resources"]) == sorted(["../../schemas", *(p.name for p in MANIFESTS)])
    assert len(MANIFESTS) == 8


def test_rbac_has_no_wildcards_no_secrets_and_a_comment_per_rule() -> None:
    for role in _kind("ClusterRole") + _kind("Role"):
        for rule in role["rules"]:
            for key in ("apiGroups", "resources", "verbs"):
                assert "*" not in rule.get(key, []), rule
            assert "secrets" not in rule.get("resources", [])
    text = (DEPLOY / "rbac.yaml").read_text() + (DEPLOY / "metrics.yaml").read_text()
    rules = re.findall(r"^(\s*)- (?:apiGroups|nonResourceURLs)", text, flags=re.M)
    commented = re.findall(r"^\s*#[^\n]*\n\s*- (?:apiGroups|nonResourceURLs)", text, flags=re.M)
    assert len(rules) == len(commented)


def test_pod_writes_are_limited_to_what_the_reconciler_does() -> None:
    role = next(r for r in _kind("ClusterRole") if r["metadata"]["name"] == "omereconcile")
    rules = {tuple(r["resources"]): set(r["verbs"]) for r in role["rules"]}
    assert rules[("pods",)] == {"get", "list", "watch", "create", "delete", "patch"}
    assert rules[("pods/status",)] == {"patch"}
    leases = [r for r in _kind("Role")[0]["rules"] if "leases" in r["resources"]]
    assert all(r.get("resourceNames") == ["omereconcile-leader"] for r in leases if r["verbs"] != ["create"])


def test_deployment_is_non_root_read_only_and_probed() -> None:
    dep = _kind("Deployment")[0]
    pod = dep["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
    c = pod["containers"][0]
    sc = c["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"]
    assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert "--leader-elect" in c["args"]
    assert pod["serviceAccountName"] == "omereconcile"


def test_webhook_registration_matches_the_server() -> None:
    from omereconcile.server.webhook import PATH

    vwc = _kind("ValidatingWebhookConfiguration")[0]
    hook = vwc["webhooks"][0]
    assert hook["name"] == "inferencereplica.ome-webhook-server.validator"
    assert hook["clientConfig"]["service"]["path"] == PATH
    assert hook["failurePolicy"] == "Fail"
    assert hook["sideEffects"] == "None"
    assert hook["rules"][0]["operations"] == ["CREATE", "UPDATE"]


SELF_MANAGED = DEPLOY.parent / "components" / "self-managed-cert"


def _component_docs() -> list[dict[str, Any]]:
    return [
        d
        for n in ("secret.yaml", "rbac.yaml")
        for d in yaml.safe_load_all((SELF_MANAGED / n).read_text())
        if d
    ]


@pytest.mark.parametrize("doc", _component_docs(), ids=lambda d: f"{d['kind']}/{d['metadata']['name']}")
def test_self_managed_certificate_manifest_validates(doc: dict[str, Any]) -> None:
    assert kube_problems(doc) == []


def test_self_managed_certificate_rbac_names_its_one_secret_and_webhook_configuration() -> None:
    rules = [r for d in _component_docs() if d["kind"] in ("Role", "ClusterRole") for r in d["rules"]]
    assert rules == [
        {
            "apiGroups": [""],
            "resources": ["secrets"],
            "resourceNames": ["omereconcile-webhook-server-cert"],
            "verbs": ["get", "update"],
        },
        {
            "apiGroups": ["admissionregistration.k8s.io"],
            "resources": ["validatingwebhookconfigurations"],
            "resourceNames": ["omereconcile-inferencereplica"],
            "verbs": ["get", "patch"],
        },
    ]
    secret = next(d for d in _component_docs() if d["kind"] == "Secret")
    assert "data" not in secret  # the reconciler writes the keys; a re-apply never touches them


def test_the_sharded_reconciler_may_write_only_the_leases_its_shards_name() -> None:
    # deploy/ runs --shards=N: its Leases (N ranges, N member slots, the cuts) are named in the RBAC, so
    # the pods may update no other Lease of the namespace; list (one per round) cannot be limited by name.
    args = _kind("Deployment")[0]["spec"]["template"]["spec"]["containers"][0]["args"]
    (shards,) = [int(a.split("=", 1)[1]) for a in args if a.startswith("--shards=")]
    role = next(r for r in _kind("Role") if r["metadata"]["name"] == "omereconcile-shards")
    by_verbs = {tuple(r["verbs"]): r for r in role["rules"]}
    assert set(by_verbs) == {("list",), ("get", "update")}
    assert "resourceNames" not in by_verbs[("list",)]
    assert by_verbs[("get", "update")]["resourceNames"] == lease_names("omereconcile-shard", shards)
    binding = next(r for r in _kind("RoleBinding") if r["metadata"]["name"] == "omereconcile-shards")
    assert binding["roleRef"]["name"] == "omereconcile-shards"
    # Every Lease rule of every Role but create and list names its Leases.
    for r in _kind("Role"):
        for rule in r["rules"]:
            if "leases" in rule["resources"] and rule["verbs"] not in (["create"], ["list"]):
                assert rule.get("resourceNames"), (r["metadata"]["name"], rule)
