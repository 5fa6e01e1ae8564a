"""OME's per-pod render tests, test by test, through ``omerender.stamps.materialize_pod``.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/render_test.go`` @ 9177c1b0 (the render it
tests: ``render.go`` @ 7307c238). Go renders a pod of an InferenceService owner from a ``ComponentPlan``,
an ``InstancePlan`` and a ``RunnerPlan``; here the owner is a standalone replica named like Go's service
(``llama-70b`` in ``prod``), the plan's runners are the rendered runners (``RenderedRunner``), the plan's
``TopologyKey``/``TopologySpread``/``TopologySpreadKey`` are the replica's fields of the same names, and
``Replicas`` is the planned replica count. Each test's docstring names the Go test. The tests Go writes
against internals with no counterpart (nil owner, the back-compat ``Render`` entry point, the
peer-host cache, re-rendering one pod object, the per-Instance topology override, the migration
overlay) are counted as not mappable in ``docs/goparity.md``. The end of the file ports the
``BuildPodGroup``/``IsMultiPodInstance`` tests of ``workload/podgroup/podgroup_test.go`` @ 4dfb96b1.
"""

from __future__ import annotations

from typing import Any

import pytest

from omereconcile.planner.relocation import exclusions_conflict
from omerender.models import InferenceReplica, parse_object
from omerender.naming import headless_service_name, pod_name
from omerender.render import RenderedRunner
from omerender.stamps import PodCoordinates, materialize_pod, pod_group

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/render_test.go @ 9177c1b0"
TOPOLOGY = "topology.example.com/domain"
LEADER_0 = "llama-70b-engine-0-leader-0.llama-70b-engine-headless"


def isvc(component: str = "engine", **spec: Any) -> InferenceReplica:
    """``basicISVC``: llama-70b in prod."""
    return parse_object(
        InferenceReplica,
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceReplica",
            "metadata": {"name": "llama-70b", "namespace": "prod", "uid": "isvc-uid-1"},
            "spec": {"component": component, **spec},
        },
    )


def pod_spec(**spec: Any) -> dict[str, Any]:
    """``basicPodSpec``: one container ``runner``."""
    return {"spec": {"containers": [{"name": "runner", "image": "llama:v1"}], **spec}}


def tpu_pod_spec(**spec: Any) -> dict[str, Any]:
    """``tpuPodSpec``: ``basicPodSpec`` with a google.com/tpu limit."""
    template = pod_spec(**spec)
    template["spec"]["containers"][0]["resources"] = {"limits": {"google.com/tpu": "4"}}
    return template


def single(template: dict[str, Any] | None = None) -> tuple[RenderedRunner, ...]:
    """``singlePodPlan``'s runners: one default of size 1."""
    return (RenderedRunner("default", 1, template or pod_spec()),)


def multi(worker_size: int, template: dict[str, Any] | None = None) -> tuple[RenderedRunner, ...]:
    """``multiPodPlan``'s runners: a leader of 1 and ``worker_size`` workers, one template."""
    spec = template or pod_spec()
    return (RenderedRunner("leader", 1, spec), RenderedRunner("worker", worker_size, spec))


def render(
    owner: InferenceReplica,
    runners: tuple[RenderedRunner, ...],
    runner: str = "default",
    ordinal: int = 0,
    *,
    index: int = 0,
    incarnation: int = 1,
    revision_hash: str | None = None,
    replicas: int = 2,
) -> dict[str, Any]:
    at = PodCoordinates(index=index, incarnation=incarnation, runner=runner, ordinal=ordinal)
    return materialize_pod(owner, runners, at, revision_hash=revision_hash, planned_replicas=replicas)


def env(pod: dict[str, Any], container: int = 0) -> dict[str, str]:
    return {e["name"]: e.get("value") for e in pod["spec"]["containers"][container].get("env") or ()}


def required_pod_affinity(pod: dict[str, Any]) -> list[dict[str, Any]]:
    affinity = pod["spec"].get("affinity") or {}
    terms: list[dict[str, Any]] = (affinity.get("podAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or []
    return terms


def leader_selector(index: int = 0) -> dict[str, str]:
    return {
        "ome.io/inferenceservice": "llama-70b",
        "component": "engine",
        "ome.io/instance-index": str(index),
        "ome.io/runner": "leader",
    }


def test_stable_name_and_dns() -> None:
    """Go: TestRender_StableNameAndDNS."""
    pod = render(isvc(), single())
    assert pod["metadata"]["name"] == "llama-70b-engine-0-default-0"
    assert pod["metadata"]["namespace"] == "prod"
    assert pod["spec"]["hostname"] == "llama-70b-engine-0-default-0"
    assert pod["spec"]["subdomain"] == "llama-70b-engine-headless"


def test_labels() -> None:
    """Go: TestRender_Labels (no revision hash, single-pod: exactly the seven workload labels)."""
    assert render(isvc(), single())["metadata"]["labels"] == {
        "ome.io/inferenceservice": "llama-70b",
        "component": "engine",
        "ome.io/instance-index": "0",
        "ome.io/instance-incarnation": "1",
        "ome.io/runner": "default",
        "ome.io/managed-by": "OMENative",
        "ome.io/pod-ordinal": "0",
    }


def test_single_pod_omits_pod_group_label() -> None:
    """Go: TestRender_SinglePod_OmitsPodGroupLabel."""
    assert "scheduling.x-k8s.io/pod-group" not in render(isvc(), single())["metadata"]["labels"]


def test_multi_pod_stamps_pod_group_label() -> None:
    """Go: TestRender_MultiPod_StampsPodGroupLabel."""
    runners = multi(2)
    for runner, ordinal in (("leader", 0), ("worker", 0), ("worker", 1)):
        pod = render(isvc(), runners, runner, ordinal)
        assert pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == "llama-70b-engine-0"


def test_multi_pod_pod_group_label_per_instance() -> None:
    """Go: TestRender_MultiPod_PodGroupLabelPerInstance."""
    groups = [
        render(isvc(), multi(1), "worker", index=i)["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"]
        for i in (0, 1)
    ]
    assert groups == ["llama-70b-engine-0", "llama-70b-engine-1"]


def test_render_with_revision_stamps_revision_hash_label() -> None:
    """Go: TestRenderWithRevision_StampsRevisionHashLabel."""
    pod = render(isvc(), single(), revision_hash="abc12345")
    assert pod["metadata"]["labels"]["ome.io/revision-hash"] == "abc12345"


def test_render_with_revision_empty_hash_omits_revision_label() -> None:
    """Go: TestRenderWithRevision_EmptyHashOmitsRevisionLabel."""
    for no_hash in ("", None):
        assert (
            "ome.io/revision-hash"
            not in render(isvc(), single(), revision_hash=no_hash)["metadata"]["labels"]
        )


def test_propagates_component_meta_annotations_and_labels() -> None:
    """Go: TestRenderWithRevision_PropagatesComponentMetaAnnotationsAndLabels (the template metadata is
    the runner's; OME's selector label wins over the user's)."""
    template = pod_spec()
    template["metadata"] = {
        "annotations": {
            "k8s.v1.cni.cncf.io/networks": '[{"name":"net0-macvlan","namespace":"multus-system"}]',
            "metrics.example/schema": "sglang_metrics",
        },
        "labels": {"team": "ml-infra", "ome.io/inferenceservice": "should-be-overwritten-by-OMENative"},
    }
    pod = render(isvc(), single(template))
    assert pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"]
    assert pod["metadata"]["annotations"]["metrics.example/schema"] == "sglang_metrics"
    assert pod["metadata"]["labels"]["team"] == "ml-infra"
    assert pod["metadata"]["labels"]["ome.io/inferenceservice"] == "llama-70b"


def test_reserves_in_place_image_transition_annotation() -> None:
    """Go: TestRenderWithRevisionReservesInPlaceImageTransitionAnnotation."""
    template = pod_spec()
    template["metadata"] = {
        "annotations": {"internal.ome.io/in-place-image-transition": "forged", "example.com/preserve": "yes"}
    }
    annotations = render(isvc(), single(template))["metadata"]["annotations"]
    assert "internal.ome.io/in-place-image-transition" not in annotations
    assert annotations["example.com/preserve"] == "yes"


def test_incarnation_stamped_on_label() -> None:
    """Go: TestRender_IncarnationStampedOnLabel."""
    assert render(isvc(), single(), incarnation=7)["metadata"]["labels"]["ome.io/instance-incarnation"] == "7"


def test_owner_reference() -> None:
    """Go: TestRender_OwnerReference. The owner is the replica (Go's test owns the pod by an
    InferenceService; a standalone replica's pods are the replica's), one controller reference."""
    refs = render(isvc(), single())["metadata"]["ownerReferences"]
    assert len(refs) == 1
    assert (refs[0]["kind"], refs[0]["name"], refs[0]["controller"]) == (
        "InferenceReplica",
        "llama-70b",
        True,
    )


def test_appends_serving_readiness_gate_without_clobbering_existing() -> None:
    """Go: TestRender_AppendsServingReadinessGateWithoutClobberingExisting."""
    pod = render(isvc(), single(pod_spec(readinessGates=[{"conditionType": "user.example.com/ready"}])))
    assert [g["conditionType"] for g in pod["spec"]["readinessGates"]] == [
        "user.example.com/ready",
        "ome.io/serving",
    ]


def test_does_not_duplicate_existing_serving_gate() -> None:
    """Go: TestRender_DoesNotDuplicateExistingServingGate."""
    pod = render(isvc(), single(pod_spec(readinessGates=[{"conditionType": "ome.io/serving"}])))
    assert pod["spec"]["readinessGates"] == [{"conditionType": "ome.io/serving"}]


def test_ome_env_vars_in_every_container() -> None:
    """Go: TestRender_OMEEnvVarsInEveryContainer."""
    template = {"spec": {"containers": [{"name": "main", "image": "llama:v1"}, {"name": "sidecar"}]}}
    pod = render(isvc(), single(template))
    want = {
        "OME_INFERENCESERVICE_NAME": "llama-70b",
        "OME_COMPONENT": "engine",
        "OME_COMPONENT_REPLICAS": "2",
        "OME_INSTANCE_INDEX": "0",
        "OME_RUNNER": "default",
        "OME_RUNNER_SIZE": "1",
        "OME_RUNNER_INDEX": "0",
        "OME_INSTANCE_SUBDOMAIN": "llama-70b-engine-0",
    }
    for container in (0, 1):
        got = env(pod, container)
        assert {k: got.get(k) for k in want} == want
        assert "OME_LEADER_ADDRESS" not in got


def test_multi_pod_leader_env_vars_for_leader() -> None:
    """Go: TestRender_MultiPod_LeaderEnvVarsForLeader."""
    got = env(render(isvc(), multi(2), "leader"))
    want = {
        "OME_RUNNER": "leader",
        "OME_RUNNER_SIZE": "1",
        "OME_RUNNER_INDEX": "0",
        "OME_LEADER_ADDRESS": LEADER_0,
        "OME_INSTANCE_INDEX": "0",
        "OME_COMPONENT": "engine",
        "OME_INSTANCE_SUBDOMAIN": "llama-70b-engine-0",
    }
    assert {k: got.get(k) for k in want} == want


def test_multi_pod_leader_address_on_worker() -> None:
    """Go: TestRender_MultiPod_LeaderAddressOnWorker."""
    for ordinal in (0, 1):
        got = env(render(isvc(), multi(2), "worker", ordinal))
        assert (got["OME_LEADER_ADDRESS"], got["OME_RUNNER"], got["OME_RUNNER_SIZE"]) == (
            LEADER_0,
            "worker",
            "2",
        )
        assert got["OME_RUNNER_INDEX"] == str(ordinal)


def test_multi_pod_instance_pod_rank_and_count() -> None:
    """Go: TestRender_MultiPod_InstancePodRankAndCount (1 leader + 3 workers; single-pod gets neither)."""
    lenv = env(render(isvc(), multi(3), "leader"))
    assert (lenv["OME_INSTANCE_POD_RANK"], lenv["OME_INSTANCE_POD_COUNT"]) == ("0", "4")
    for ordinal, rank in ((0, "1"), (1, "2"), (2, "3")):
        wenv = env(render(isvc(), multi(3), "worker", ordinal))
        assert (wenv["OME_INSTANCE_POD_RANK"], wenv["OME_INSTANCE_POD_COUNT"]) == (rank, "4")
    senv = env(render(isvc(), single()))
    assert "OME_INSTANCE_POD_RANK" not in senv
    assert "OME_INSTANCE_POD_COUNT" not in senv


def test_multi_pod_leader_address_per_instance() -> None:
    """Go: TestRender_MultiPod_LeaderAddressPerInstance."""
    got = [env(render(isvc(), multi(1), "worker", index=i))["OME_LEADER_ADDRESS"] for i in (0, 1)]
    assert got == [LEADER_0, "llama-70b-engine-1-leader-0.llama-70b-engine-headless"]


def test_single_pod_omits_leader_address() -> None:
    """Go: TestRender_SinglePod_OmitsLeaderAddress."""
    assert "OME_LEADER_ADDRESS" not in env(render(isvc(), single()))


def test_multi_pod_tpu_topology_env() -> None:
    """Go: TestRender_MultiPod_TPUTopologyEnv (a 2-host slice)."""
    hosts = f"{LEADER_0},llama-70b-engine-0-worker-0.llama-70b-engine-headless"
    addrs = f"{LEADER_0}:8476,llama-70b-engine-0-worker-0.llama-70b-engine-headless:8476"
    lenv = env(render(isvc(), multi(1, tpu_pod_spec()), "leader"))
    assert {k: lenv[k] for k in ("TPU_WORKER_HOSTNAMES", "TPU_WORKER_ID", "TPU_PROCESS_ADDRESSES")} == {
        "TPU_WORKER_HOSTNAMES": hosts,
        "TPU_WORKER_ID": "0",
        "TPU_PROCESS_ADDRESSES": addrs,
    }
    assert (lenv["TPU_PROCESS_PORT"], lenv["TPU_NAME"]) == ("8476", "llama-70b-engine-0")
    wenv = env(render(isvc(), multi(1, tpu_pod_spec()), "worker"))
    assert (wenv["TPU_WORKER_HOSTNAMES"], wenv["TPU_WORKER_ID"]) == (hosts, "1")


def test_tpu_worker_ids_across_a_three_host_slice() -> None:
    """Go: TestRender_TPUTopologyEnv_PrimedPeerHostnamesMatchUncached, its observable half: every pod of
    a 3-host slice shares one host list and carries its own gang rank (the primed cache it compares
    against has no counterpart)."""
    pods = [
        render(isvc(), multi(2, tpu_pod_spec()), r, o)
        for r, o in (("leader", 0), ("worker", 0), ("worker", 1))
    ]
    assert [env(p)["TPU_WORKER_ID"] for p in pods] == ["0", "1", "2"]
    assert len({env(p)["TPU_WORKER_HOSTNAMES"] for p in pods}) == 1


def test_tpu_topology_env_gated_on_tpu_and_multi_pod() -> None:
    """Go: TestRender_TPUTopologyEnv_GatedOnTPUAndMultiPod."""
    assert "TPU_WORKER_HOSTNAMES" not in env(render(isvc(), multi(1), "leader"))
    assert "TPU_WORKER_HOSTNAMES" not in env(render(isvc(), single(tpu_pod_spec())))


def test_multi_pod_tpu_configured_gang_affinity() -> None:
    """Go: TestRender_MultiPod_TPUConfiguredGangAffinity."""
    template = tpu_pod_spec(nodeSelector={"cloud.google.com/gke-tpu-topology": "2x2x1"})
    terms = required_pod_affinity(render(isvc(topologyKey=TOPOLOGY), multi(1, template), "worker"))
    assert terms == [{"labelSelector": {"matchLabels": leader_selector()}, "topologyKey": TOPOLOGY}]


def test_tpu_node_selector_does_not_infer_topology() -> None:
    """Go: TestRender_TPUNodeSelectorDoesNotInferTopology."""
    template = tpu_pod_spec(nodeSelector={"cloud.google.com/gke-tpu-topology": "2x2x1"})
    assert required_pod_affinity(render(isvc(), multi(1, template), "worker")) == []


def test_tpu_gang_affinity_instance_scoped() -> None:
    """Go: TestRender_TPUGangAffinity_InstanceScoped."""
    terms = required_pod_affinity(
        render(isvc(topologyKey=TOPOLOGY), multi(1, tpu_pod_spec()), "worker", index=1)
    )
    assert len(terms) == 1
    assert terms[0]["labelSelector"]["matchLabels"]["ome.io/instance-index"] == "1"


def test_tpu_gang_affinity_negatives() -> None:
    """Go: TestRender_TPUGangAffinity_Negatives (leader, single-pod, a worker without a key)."""
    keyed = isvc(topologyKey=TOPOLOGY)
    assert required_pod_affinity(render(keyed, multi(1, tpu_pod_spec()), "leader")) == []
    assert required_pod_affinity(render(keyed, single(tpu_pod_spec()))) == []
    assert required_pod_affinity(render(isvc(), multi(1, tpu_pod_spec()), "worker")) == []


def test_tpu_no_key_full_recreate_remains_topology_free() -> None:
    """Go: TestRender_TPUNoKeyFullRecreateRemainsTopologyFree."""
    template = tpu_pod_spec(nodeSelector={"cloud.google.com/gke-tpu-topology": "4x4"})
    assert required_pod_affinity(render(isvc(), multi(1, template), "worker", incarnation=2)) == []


def test_tpu_gang_affinity_preserves_user_affinity() -> None:
    """Go: TestRender_TPUGangAffinity_PreservesUserAffinity."""
    user = {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "user-thing"}}}
    template = tpu_pod_spec(
        affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [user]}}
    )
    terms = required_pod_affinity(render(isvc(topologyKey=TOPOLOGY), multi(1, template), "worker"))
    assert [t["topologyKey"] for t in terms] == ["kubernetes.io/hostname", TOPOLOGY]


def test_multi_pod_gang_domain_affinity() -> None:
    """Go: TestRender_MultiPod_GangDomainAffinity."""
    terms = required_pod_affinity(render(isvc(topologyKey=TOPOLOGY), multi(2), "worker"))
    assert terms == [{"labelSelector": {"matchLabels": leader_selector()}, "topologyKey": TOPOLOGY}]


def test_gang_domain_affinity_instance_scoped() -> None:
    """Go: TestRender_GangDomainAffinity_InstanceScoped."""
    for index in (0, 1):
        terms = required_pod_affinity(render(isvc(topologyKey=TOPOLOGY), multi(1), "worker", index=index))
        assert [t["labelSelector"]["matchLabels"]["ome.io/instance-index"] for t in terms] == [str(index)]


def test_gang_domain_affinity_negatives() -> None:
    """Go: TestRender_GangDomainAffinity_Negatives (leader, single-pod, router)."""
    assert required_pod_affinity(render(isvc(topologyKey=TOPOLOGY), multi(1), "leader")) == []
    assert required_pod_affinity(render(isvc(topologyKey=TOPOLOGY), single())) == []
    assert required_pod_affinity(render(isvc("router", topologyKey=TOPOLOGY), single(), replicas=1)) == []


def test_gang_domain_affinity_no_topology_key() -> None:
    """Go: TestRender_GangDomainAffinity_NoTopologyKey."""
    assert required_pod_affinity(render(isvc(), multi(1), "worker")) == []


def test_gang_domain_affinity_respects_user_override() -> None:
    """Go: TestRender_GangDomainAffinity_RespectsUserOverride (same key: the user's term alone; another
    key: the user's term, then OME's)."""
    same = {"topologyKey": TOPOLOGY, "labelSelector": {"matchLabels": {"app": "user-hand-written"}}}
    template = pod_spec(affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [same]}})
    assert required_pod_affinity(render(isvc(topologyKey=TOPOLOGY), multi(1, template), "worker")) == [same]
    other = {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "other"}}}
    template = pod_spec(affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [other]}})
    terms = required_pod_affinity(render(isvc(topologyKey=TOPOLOGY), multi(1, template), "worker"))
    assert [t["topologyKey"] for t in terms] == ["kubernetes.io/hostname", TOPOLOGY]


def test_ome_env_overrides_user_env_with_same_name() -> None:
    """Go: TestRender_OMEEnvOverridesUserEnvWithSameName."""
    template = {
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "env": [
                        {"name": "OME_COMPONENT", "value": "user-supplied-junk"},
                        {"name": "USER_KEEP", "value": "kept"},
                    ],
                }
            ]
        }
    }
    pod = render(isvc(), single(template))
    assert (env(pod)["OME_COMPONENT"], env(pod)["USER_KEEP"]) == ("engine", "kept")
    assert [e["name"] for e in pod["spec"]["containers"][0]["env"]].count("OME_COMPONENT") == 1


@pytest.mark.parametrize(
    ("component", "index", "runner", "ordinal", "want"),
    [
        pytest.param(
            "engine", 0, "default", 0, "llama-engine-0-default-0", id="engine, single-pod default, ord 0"
        ),
        pytest.param("decoder", 2, "default", 0, "llama-decoder-2-default-0", id="decoder, instance 2"),
        pytest.param("router", 5, "default", 0, "llama-router-5-default-0", id="router, instance 5"),
        pytest.param("engine", 0, "leader", 0, "llama-engine-0-leader-0", id="engine, leader runner ord 0"),
        pytest.param("engine", 0, "worker", 2, "llama-engine-0-worker-2", id="engine, worker runner ord 2"),
    ],
)
def test_name_varies_with_each_axis(component: str, index: int, runner: str, ordinal: int, want: str) -> None:
    """Go: TestRender_NameVariesWithEachAxis (query.PodName)."""
    assert pod_name("llama", component, index, runner, ordinal) == want


def test_headless_service_name() -> None:
    """Go: TestRender_HeadlessServiceName."""
    assert headless_service_name("llama-70b", "engine") == "llama-70b-engine-headless"
    assert headless_service_name("llama-70b", "decoder") == "llama-70b-decoder-headless"


def _pinned(*hosts: str, key: str = "kubernetes.io/hostname") -> dict[str, Any]:
    term = {"matchExpressions": [{"key": key, "operator": "In", "values": list(hosts)}]}
    return {
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
        }
    }


def test_would_overlay_conflict_detects_unsatisfiable_pin() -> None:
    """Go: TestWouldOverlayConflictWithNodeAffinity_DetectsUnsatisfiablePin (FromNode as the one
    exclusion, as WouldOverlayConflictWithNodeAffinity passes it)."""
    assert exclusions_conflict(_pinned("node5"), ["node5"])


def test_would_overlay_conflict_hostname_set_with_other_nodes_is_satisfiable() -> None:
    """Go: TestWouldOverlayConflictWithNodeAffinity_HostnameSetWithOtherNodesIsSatisfiable."""
    assert not exclusions_conflict(_pinned("node5", "node7"), ["node5"])


def test_would_overlay_conflict_only_if_every_term_pins() -> None:
    """Go: TestWouldOverlayConflictWithNodeAffinity_OnlyConflictIfEveryTermPins."""
    spec = _pinned("node5")
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    terms.append(
        _pinned("us-west-2a", key="topology.kubernetes.io/zone")["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]["nodeSelectorTerms"][0]
    )
    assert not exclusions_conflict(spec, ["node5"])


def test_would_overlay_conflict_nil_spec_or_affinity() -> None:
    """Go: TestWouldOverlayConflictWithNodeAffinity_NilSpecOrAffinityNoConflict."""
    assert not exclusions_conflict(None, ["node5"])
    assert not exclusions_conflict({}, ["node5"])


def test_would_overlay_conflict_empty_from_node() -> None:
    """Go: TestWouldOverlayConflictWithNodeAffinity_NilOverlayOrEmptyFromNode, its empty-FromNode half
    (a nil overlay has no counterpart)."""
    assert not exclusions_conflict(_pinned("node5"), [""])


def test_would_exclusions_conflict_multi_node() -> None:
    """Go: TestWouldExclusionsConflictWithNodeAffinity_MultiNode."""
    assert not exclusions_conflict(_pinned("node-a", "node-b"), ["node-a"])
    assert exclusions_conflict(_pinned("node-a", "node-b"), ["node-a", "node-b"])
    assert not exclusions_conflict(_pinned("node-a"), [])
    assert not exclusions_conflict(_pinned("h100", key="gpu-type"), ["node-a"])


@pytest.mark.parametrize(
    ("containers", "init", "names", "init_names"),
    [
        pytest.param([{"name": "my-runner"}], None, ["my-runner"], None, id="explicit name is preserved"),
        pytest.param([{"name": ""}], None, ["ome-container"], None, id="empty name falls back to ome-container"),
        pytest.param(
            [{"name": "sidecar"}, {"name": ""}], None, ["sidecar", "ome-container"], None,
            id="only empty names are backfilled",
        ),
        pytest.param([{"name": "main"}], [{"name": ""}], ["main"], ["ome-container"], id="init containers backfilled too"),
    ],
)  # fmt: skip
def test_container_name_fallback_precedence(
    containers: list[dict[str, Any]],
    init: list[dict[str, Any]] | None,
    names: list[str],
    init_names: list[str] | None,
) -> None:
    """Go: TestRender_ContainerName_FallbackPrecedence."""
    spec: dict[str, Any] = {"containers": containers}
    if init is not None:
        spec["initContainers"] = init
    pod = render(isvc(), single({"spec": spec}))
    assert [c["name"] for c in pod["spec"]["containers"]] == names
    if init_names is not None:
        assert [c["name"] for c in pod["spec"]["initContainers"]] == init_names


def test_backfill_zero_containers_is_a_no_op() -> None:
    """Go: TestBackfillEmptyContainerNames, "zero containers is a no-op" (the nil spec has no
    counterpart)."""
    pod = render(isvc(), single({"spec": {"containers": []}}))
    assert pod["spec"]["containers"] == []
    assert "initContainers" not in pod["spec"]


def test_topology_spread_leader_gets_do_not_schedule_on_the_spread_key() -> None:
    """Go: TestRender_TopologySpreadConstraint, "leader gets DoNotSchedule on the spread key"."""
    owner = isvc(topologyKey="topology.example.com/partition", topologySpread="Required",
                 topologySpreadKey="topology.example.com/cube")  # fmt: skip
    leader = render(owner, multi(1), "leader")
    selector = {"ome.io/inferenceservice": "llama-70b", "component": "engine", "ome.io/runner": "leader"}
    assert leader["spec"]["topologySpreadConstraints"] == [
        {
            "maxSkew": 1,
            "topologyKey": "topology.example.com/cube",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": selector},
        }
    ]
    assert all(leader["metadata"]["labels"][k] == v for k, v in selector.items())
    assert "topologySpreadConstraints" not in render(owner, multi(1), "worker")["spec"]


def test_topology_spread_preferred_falls_back_to_the_co_location_key() -> None:
    """Go: TestRender_TopologySpreadConstraint, "Preferred maps to ScheduleAnyway and falls back to the
    co-location key"."""
    owner = isvc(topologyKey="topology.example.com/partition", topologySpread="Preferred")
    (constraint,) = render(owner, multi(1), "leader")["spec"]["topologySpreadConstraints"]
    assert (constraint["topologyKey"], constraint["whenUnsatisfiable"]) == (
        "topology.example.com/partition",
        "ScheduleAnyway",
    )


def test_topology_spread_single_pod_anchor_spreads_only_with_an_explicit_key() -> None:
    """Go: TestRender_TopologySpreadConstraint, "single-pod anchor spreads only with an explicit key"."""
    assert "topologySpreadConstraints" not in render(isvc(topologySpread="Required"), single())["spec"]
    owner = isvc(topologySpread="Required", topologySpreadKey="topology.kubernetes.io/zone")
    (constraint,) = render(owner, single())["spec"]["topologySpreadConstraints"]
    assert constraint["labelSelector"]["matchLabels"]["ome.io/runner"] == "default"


def test_topology_spread_operator_constraint_on_the_same_key_wins() -> None:
    """Go: TestRender_TopologySpreadConstraint, "operator-authored constraint on the same key wins"."""
    own = {
        "maxSkew": 3,
        "topologyKey": "topology.example.com/partition",
        "whenUnsatisfiable": "ScheduleAnyway",
    }
    owner = isvc(topologyKey="topology.example.com/partition", topologySpread="Required")
    leader = render(owner, multi(1, pod_spec(topologySpreadConstraints=[own])), "leader")
    assert leader["spec"]["topologySpreadConstraints"] == [own]


def test_topology_spread_no_policy_renders_nothing() -> None:
    """Go: TestRender_TopologySpreadConstraint, "no policy renders nothing"."""
    owner = isvc(topologyKey="topology.example.com/partition")
    assert "topologySpreadConstraints" not in render(owner, multi(1), "leader")["spec"]


# -- workload/podgroup/podgroup_test.go: BuildPodGroup and IsMultiPodInstance ---------------------------
# Go: ome-projects/ome pkg/controller/v1beta1/workload/podgroup/podgroup_test.go @ 4dfb96b1 (podgroup.go @
# dcfb4135). The EnsurePodGroup* tests of that file drive a fake client: the reconciler's, not ported here.

PODGROUP_GO = "ome-projects/ome pkg/controller/v1beta1/workload/podgroup/podgroup_test.go @ 4dfb96b1"


def owner(name: str, namespace: str = "prod", **spec: Any) -> InferenceReplica:
    return parse_object(
        InferenceReplica,
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceReplica",
            "metadata": {"name": name, "namespace": namespace, "uid": f"{name}-uid"},
            "spec": {"component": "engine", **spec},
        },
    )


@pytest.mark.parametrize(
    ("runners", "multi_pod"),
    [
        pytest.param((("default", 1),), False, id="single-pod default"),
        pytest.param((("leader", 1), ("worker", 0)), False, id="leader + zero workers"),
        pytest.param((("leader", 1), ("worker", 1)), True, id="leader + 1 worker"),
        pytest.param((("leader", 1), ("worker", 3)), True, id="leader + 3 workers"),
    ],
)
def test_is_multi_pod_instance(runners: tuple[tuple[str, int], ...], multi_pod: bool) -> None:
    """Go: TestIsMultiPodInstance (more than one pod in all: the pod-group label, and a PodGroup); the
    "zero runners" entry has no counterpart (an Instance always has a runner)."""
    rendered = tuple(RenderedRunner(name, size, pod_spec()) for name, size in runners)
    pod = render(isvc(), rendered, runners[0][0])
    assert ("scheduling.x-k8s.io/pod-group" in pod["metadata"]["labels"]) is multi_pod


def test_build_pod_group_name_uses_owner_name_not_owner_object() -> None:
    """Go: TestBuildPodGroup_NameUsesOwnerNameNotOwnerObject: a projected replica ``gang-engine`` of the
    service ``gang`` names its group after the service and is its owner."""
    group = pod_group(
        owner("gang-engine", "test-ns", parentRef={"name": "gang"}), 0, 2, instance_ready_timeout_seconds=900
    )
    assert group["metadata"]["name"] == "gang-engine-0"
    assert [r["name"] for r in group["metadata"]["ownerReferences"]] == ["gang-engine"]


def test_build_pod_group_shape() -> None:
    """Go: TestBuildPodGroup_Shape (1 leader + 3 workers, 15 minutes, a topology key; the owner is the
    replica ``llama-engine``)."""
    group = pod_group(
        owner("llama-engine", "prod-models", topologyKey="network.example.com/fabric-domain"),
        0,
        4,
        instance_ready_timeout_seconds=15 * 60,
    )
    assert (group["metadata"]["name"], group["metadata"]["namespace"]) == (
        "llama-engine-engine-0",
        "prod-models",
    )
    assert group["spec"] == {"minMember": 4, "scheduleTimeoutSeconds": 900}
    assert group["metadata"]["labels"] == {
        "ome.io/inferenceservice": "llama-engine",
        "component": "engine",
        "ome.io/managed-by": "OMENative",
        "ome.io/instance-index": "0",
    }
    assert group["metadata"]["annotations"] == {"ome.io/topology-key": "network.example.com/fabric-domain"}
    (ref,) = group["metadata"]["ownerReferences"]
    assert (ref["name"], ref["controller"], ref["blockOwnerDeletion"]) == ("llama-engine", True, True)


@pytest.mark.parametrize(
    ("topology_key", "annotations"),
    [
        pytest.param(
            "cloud.google.com/gke-tpu-partition-2x2x2-id",
            {"ome.io/topology-key": "cloud.google.com/gke-tpu-partition-2x2x2-id"},
            id="declared topology key is stamped",
        ),
        pytest.param(None, None, id="no topology key means no annotations"),
    ],
)
def test_build_pod_group_topology_key_annotation(topology_key: str | None, annotations: Any) -> None:
    """Go: TestBuildPodGroup_TopologyKeyAnnotation."""
    spec = {"topologyKey": topology_key} if topology_key else {}
    group = pod_group(owner("llama", **spec), 0, 2, instance_ready_timeout_seconds=300)
    assert group["metadata"].get("annotations") == annotations


@pytest.mark.parametrize(
    ("bounds", "seconds", "want"),
    [
        pytest.param((60, 600), 0, 60, id="zero takes the configured floor"),
        pytest.param((60, 600), 30, 60, id="30s rounded up to the floor"),
        pytest.param((60, 600), 180, 180, id="3 minutes pass through"),
        pytest.param((60, 600), 600, 600, id="10 minutes at the ceiling"),
        pytest.param((60, 600), 1800, 600, id="30 minutes lowered to the ceiling"),
        pytest.param(None, 1800, 1800, id="unconfigured passes the derived value through"),
        pytest.param(None, 0, None, id="unconfigured sub-second leaves the field unset"),
    ],
)
def test_build_pod_group_timeout_clamp(
    bounds: tuple[int, int] | None, seconds: int, want: int | None
) -> None:
    """Go: TestBuildPodGroup_TimeoutClamp."""
    group = pod_group(
        owner("llama"), 0, 2, instance_ready_timeout_seconds=seconds, schedule_timeout_bounds=bounds
    )
    assert group["spec"].get("scheduleTimeoutSeconds") == want


def test_build_pod_group_high_worker_count() -> None:
    """Go: TestBuildPodGroup_HighWorkerCount (1 leader + 7 workers, Instance 2). ``minMember`` is the
    Instance's pod count, which the reconciler sums over the runners (``planner.context.gang_slots``,
    as ``InstancePlan.TotalPods``) and hands to ``pod_group``."""
    runners = (("leader", 1), ("worker", 7))
    group = pod_group(owner("llama"), 2, sum(size for _, size in runners), instance_ready_timeout_seconds=300)
    assert group["spec"]["minMember"] == 8
    assert group["metadata"]["name"] == "llama-engine-2"
    assert group["metadata"]["labels"]["ome.io/instance-index"] == "2"
