"""Per-pod materialisation (01 §3): names, labels, the OME_* environment, readiness gate, hostname and
subdomain, owner reference, worker→leader affinity, spread; the headless Service and the PodGroup."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from omerender.models import InferenceReplica, parse_object
from omerender.render import RenderedRunner
from omerender.stamps import (
    PodCoordinates,
    headless_service,
    instance_pods,
    materialize_pod,
    owner_reference,
    pod_group,
)

OME_ENV = [
    "OME_INFERENCESERVICE_NAME",
    "OME_COMPONENT",
    "OME_COMPONENT_REPLICAS",
    "OME_INSTANCE_INDEX",
    "OME_RUNNER",
    "OME_RUNNER_SIZE",
    "OME_RUNNER_INDEX",
    "OME_INSTANCE_SUBDOMAIN",
]
MULTI_POD_ENV = ["OME_LEADER_ADDRESS", "OME_INSTANCE_POD_RANK", "OME_INSTANCE_POD_COUNT"]
LWS_ENV = ["LWS_LEADER_ADDRESS", "LWS_GROUP_SIZE", "LWS_WORKER_INDEX"]  # LeaderWorkerSet's; Go sets none


def replica(name: str = "pool", component: str = "engine", **spec: Any) -> InferenceReplica:
    return parse_object(
        InferenceReplica,
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceReplica",
            "metadata": {"name": name, "namespace": "ns", "uid": "uid-1"},
            "spec": {"component": component, **spec},
        },
    )


def tpl(*containers: dict[str, Any], labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    template: dict[str, Any] = {
        "spec": {"containers": list(containers) or [{"name": "ome-container"}], **spec}
    }
    if labels is not None:
        template["metadata"] = {"labels": labels}
    return template


def single(template: dict[str, Any] | None = None) -> tuple[RenderedRunner, ...]:
    return (RenderedRunner("default", 1, template or tpl()),)


def gang(
    worker_size: int = 2, leader: dict[str, Any] | None = None, worker: dict[str, Any] | None = None
) -> tuple[RenderedRunner, ...]:
    return (
        RenderedRunner("leader", 1, leader or tpl()),
        RenderedRunner("worker", worker_size, worker or tpl()),
    )


def make(
    rep: InferenceReplica,
    runners: tuple[RenderedRunner, ...],
    runner: str = "default",
    ordinal: int = 0,
    *,
    index: int = 0,
    incarnation: int = 1,
    revision_hash: str | None = "abcd1234",
    planned: int = 3,
) -> dict[str, Any]:
    at = PodCoordinates(index=index, incarnation=incarnation, runner=runner, ordinal=ordinal)
    return materialize_pod(rep, runners, at, revision_hash=revision_hash, planned_replicas=planned)


def env(container: dict[str, Any]) -> dict[str, Any]:
    return {var["name"]: var.get("value") for var in container.get("env") or ()}


def env_names(container: dict[str, Any]) -> list[str]:
    return [var["name"] for var in container.get("env") or ()]


# -- names ---------------------------------------------------------------------------------------


def test_pod_name_hostname_subdomain_and_namespace() -> None:
    p = make(replica(), single(), index=4)
    assert p["apiVersion"] == "v1"
    assert p["kind"] == "Pod"
    assert p["metadata"]["name"] == "pool-engine-4-default-0"
    assert p["metadata"]["namespace"] == "ns"
    assert p["spec"]["hostname"] == "pool-engine-4-default-0"
    assert p["spec"]["subdomain"] == "pool-engine-headless"


def test_worker_pod_names_use_the_ordinal() -> None:
    p = make(replica(component="decoder"), gang(3), "worker", 2, index=1)
    assert p["metadata"]["name"] == "pool-decoder-1-worker-2"


def test_projected_replica_names_everything_after_the_parent_but_is_owned_by_the_replica() -> None:
    rep = replica("chat-engine", parentRef={"name": "chat"})
    p = make(rep, single())
    assert p["metadata"]["name"] == "chat-engine-0-default-0"
    assert p["spec"]["subdomain"] == "chat-engine-headless"
    assert p["metadata"]["labels"]["ome.io/inferenceservice"] == "chat"
    assert env(p["spec"]["containers"][0])["OME_INFERENCESERVICE_NAME"] == "chat"
    assert p["metadata"]["ownerReferences"][0]["name"] == "chat-engine"


# -- labels and annotations ----------------------------------------------------------------------


def test_ome_labels_overlay_template_labels() -> None:
    labels = {"app": "x", "component": "wrong", "ome.io/inferenceservice": "wrong", "ome.io/runner": "wrong"}
    p = make(replica(), single(tpl(labels=labels)), index=2, incarnation=5)
    assert p["metadata"]["labels"] == {
        "app": "x",
        "component": "engine",
        "ome.io/inferenceservice": "pool",
        "ome.io/managed-by": "OMENative",
        "ome.io/instance-index": "2",
        "ome.io/instance-incarnation": "5",
        "ome.io/runner": "default",
        "ome.io/pod-ordinal": "0",
        "ome.io/revision-hash": "abcd1234",
    }


def test_revision_hash_label_only_when_known() -> None:
    p = make(replica(), single(), revision_hash=None)
    assert "ome.io/revision-hash" not in p["metadata"]["labels"]


def test_pairing_protocol_label() -> None:
    p = make(replica(pairingProtocol="nixl-v2"), single())
    assert p["metadata"]["labels"]["ome.io/pairing-protocol"] == "nixl-v2"
    assert "ome.io/pairing-protocol" not in make(replica(), single())["metadata"]["labels"]


def test_pod_group_label_only_on_multi_pod_instances() -> None:
    assert "scheduling.x-k8s.io/pod-group" not in make(replica(), single())["metadata"]["labels"]
    p = make(replica(), gang(), "worker", 1, index=3)
    assert p["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == "pool-engine-3"


def test_annotations_are_copied_without_the_in_place_transition_marker() -> None:
    template = tpl()
    template["metadata"] = {
        "annotations": {"keep": "1", "internal.ome.io/in-place-image-transition": "x"},
    }
    assert make(replica(), single(template))["metadata"]["annotations"] == {"keep": "1"}
    assert "annotations" not in make(replica(), single())["metadata"]


def test_owner_reference_is_the_replica_as_controller() -> None:
    expected = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "name": "pool",
        "uid": "uid-1",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    assert owner_reference(replica()) == expected
    assert make(replica(), single())["metadata"]["ownerReferences"] == [expected]


# -- environment ---------------------------------------------------------------------------------


def test_full_ome_env_on_a_single_pod() -> None:
    p = make(replica(), single(), index=7, planned=4)
    values = env(p["spec"]["containers"][0])
    assert env_names(p["spec"]["containers"][0]) == OME_ENV
    assert values == {
        "OME_INFERENCESERVICE_NAME": "pool",
        "OME_COMPONENT": "engine",
        "OME_COMPONENT_REPLICAS": "4",
        "OME_INSTANCE_INDEX": "7",
        "OME_RUNNER": "default",
        "OME_RUNNER_SIZE": "1",
        "OME_RUNNER_INDEX": "0",
        "OME_INSTANCE_SUBDOMAIN": "pool-engine-7",
    }


def test_env_on_every_regular_container_but_not_init_containers() -> None:
    template = tpl({"name": "a"}, {"name": "b"}, initContainers=[{"name": "init", "image": "busybox"}])
    p = make(replica(), single(template))
    for container in p["spec"]["containers"]:
        assert env_names(container) == OME_ENV
    assert p["spec"]["initContainers"] == [{"name": "init", "image": "busybox"}]


def test_ome_block_removes_same_named_variables_and_is_appended_at_the_end() -> None:
    # injectOMENativeEnv: the container's OME_* variables are dropped, OME's block follows what is left.
    container = {
        "name": "ome-container",
        "env": [
            {"name": "OME_RUNNER", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "KEEP", "value": "1"},
            {"name": "OME_INSTANCE_INDEX", "value": "99"},
            {"name": "AFTER", "value": "2"},
        ],
    }
    p = make(replica(), single(tpl(container)), index=2)
    out = p["spec"]["containers"][0]["env"]
    assert [v["name"] for v in out] == ["KEEP", "AFTER", *OME_ENV]
    assert {"name": "OME_RUNNER", "value": "default"} in out
    assert {"name": "OME_INSTANCE_INDEX", "value": "2"} in out


def test_nameless_init_containers_are_named_too_but_get_no_env() -> None:
    p = make(
        replica(), single(tpl({"name": "ome-container", "image": "i"}, initContainers=[{"image": "warm"}]))
    )
    assert p["spec"]["initContainers"] == [{"name": "ome-container", "image": "warm"}]


def test_runner_index_is_zero_for_a_size_one_runner_even_at_ordinal_one() -> None:
    # Single-pod SurgeThenDrain alternates ordinals 0 and 1; the runner index stays 0.
    p = make(replica(), single(), ordinal=1)
    assert p["metadata"]["name"] == "pool-engine-0-default-1"
    assert p["metadata"]["labels"]["ome.io/pod-ordinal"] == "1"
    assert env(p["spec"]["containers"][0])["OME_RUNNER_INDEX"] == "0"


@pytest.mark.parametrize(
    ("runner", "ordinal", "rank", "runner_index", "size"),
    [
        ("leader", 0, "0", "0", "1"),
        ("worker", 0, "1", "0", "3"),
        ("worker", 2, "3", "2", "3"),
    ],
)
def test_multi_pod_env(runner: str, ordinal: int, rank: str, runner_index: str, size: str) -> None:
    p = make(replica(), gang(3), runner, ordinal, index=5)
    values = env(p["spec"]["containers"][0])
    assert env_names(p["spec"]["containers"][0]) == OME_ENV + MULTI_POD_ENV
    address = "pool-engine-5-leader-0.pool-engine-headless"
    assert values["OME_RUNNER"] == runner
    assert values["OME_RUNNER_SIZE"] == size
    assert values["OME_RUNNER_INDEX"] == runner_index
    assert values["OME_LEADER_ADDRESS"] == address
    assert values["OME_INSTANCE_POD_RANK"] == rank
    assert values["OME_INSTANCE_POD_COUNT"] == "4"


def test_single_pod_has_no_leader_address_or_lws_aliases() -> None:
    names = set(env_names(make(replica(), single())["spec"]["containers"][0]))
    assert names.isdisjoint(MULTI_POD_ENV + LWS_ENV)


def test_multi_pod_pods_carry_no_lws_variables_but_keep_the_runtimes_own() -> None:
    """Go's buildOMENativeEnv sets no LWS_* variable: a runtime's own LWS_GROUP_SIZE stays as written,
    and no other LWS_* variable appears (DECISIONS §3.6)."""
    leader = tpl({"name": "ome-container", "env": [{"name": "LWS_GROUP_SIZE", "value": "custom"}]})
    for runner in ("leader", "worker"):
        p = make(replica(), gang(2, leader=leader), runner)
        names = env_names(p["spec"]["containers"][0])
        own = ["LWS_GROUP_SIZE"] if runner == "leader" else []
        assert [n for n in names if n.startswith("LWS_")] == own


def test_empty_or_missing_container_name_becomes_ome_container() -> None:
    p = make(
        replica(), single(tpl({"name": "", "image": "a"}, {"image": "b"}, {"name": "side", "image": "c"}))
    )
    assert [c["name"] for c in p["spec"]["containers"]] == ["ome-container", "ome-container", "side"]


# -- readiness gate ------------------------------------------------------------------------------


def test_serving_readiness_gate_is_added() -> None:
    assert make(replica(), single())["spec"]["readinessGates"] == [{"conditionType": "ome.io/serving"}]


def test_serving_readiness_gate_is_not_duplicated() -> None:
    gates = [{"conditionType": "example.com/warm"}, {"conditionType": "ome.io/serving"}]
    p = make(replica(), single(tpl(readinessGates=gates)))
    assert p["spec"]["readinessGates"] == gates


def test_other_readiness_gates_are_kept_before_ome_s() -> None:
    p = make(replica(), single(tpl(readinessGates=[{"conditionType": "example.com/warm"}])))
    assert p["spec"]["readinessGates"] == [
        {"conditionType": "example.com/warm"},
        {"conditionType": "ome.io/serving"},
    ]


# -- worker→leader affinity and spread -----------------------------------------------------------


def leader_term(key: str, index: int = 0) -> dict[str, Any]:
    return {
        "labelSelector": {
            "matchLabels": {
                "ome.io/inferenceservice": "pool",
                "component": "engine",
                "ome.io/instance-index": str(index),
                "ome.io/runner": "leader",
            }
        },
        "topologyKey": key,
    }


def test_workers_get_required_affinity_to_their_own_leader() -> None:
    rep = replica(topologyKey="cloud/rack")
    worker = make(rep, gang(), "worker", 1, index=6)
    terms = worker["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms == [leader_term("cloud/rack", 6)]
    assert "affinity" not in make(rep, gang(), "leader", index=6)["spec"]


def test_no_worker_affinity_without_a_topology_key() -> None:
    assert "affinity" not in make(replica(), gang(), "worker")["spec"]


def test_worker_affinity_skipped_when_a_required_term_on_the_key_exists() -> None:
    own = {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": "cloud/rack"}
    worker = tpl(affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [own]}})
    p = make(replica(topologyKey="cloud/rack"), gang(worker=worker), "worker")
    assert p["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == [own]


def test_worker_affinity_added_next_to_terms_on_other_keys() -> None:
    other = {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": "kubernetes.io/hostname"}
    preferred = [{"weight": 1, "podAffinityTerm": {"topologyKey": "cloud/rack", "labelSelector": {}}}]
    affinity = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [other],
            "preferredDuringSchedulingIgnoredDuringExecution": preferred,
        },
        "nodeAffinity": {"x": 1},
    }
    p = make(replica(topologyKey="cloud/rack"), gang(worker=tpl(affinity=affinity)), "worker")
    got = p["spec"]["affinity"]
    assert got["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == [
        other,
        leader_term("cloud/rack"),
    ]
    assert got["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] == preferred
    assert got["nodeAffinity"] == {"x": 1}


@pytest.mark.parametrize(("policy", "when"), [("Required", "DoNotSchedule"), ("Preferred", "ScheduleAnyway")])
def test_topology_spread_on_the_anchor_pod_only(policy: str, when: str) -> None:
    rep = replica(topologyKey="cloud/rack", topologySpread=policy)
    leader = make(rep, gang(), "leader")
    constraints = leader["spec"]["topologySpreadConstraints"]
    assert len(constraints) == 1
    assert constraints[0]["topologyKey"] == "cloud/rack"
    assert constraints[0]["whenUnsatisfiable"] == when
    assert "topologySpreadConstraints" not in make(rep, gang(), "worker")["spec"]


def test_topology_spread_selects_the_anchors_own_runner_as_ome_stamps_it() -> None:
    """Exactly parent, component and the anchor's runner, no expressions: leaders spread among
    leaders, single pods among single pods (OME's isOMEGeneratedSpread shape)."""
    rep = replica(topologyKey="cloud/rack", topologySpread="Required")
    for runners, runner in ((gang(), "leader"), (single(), "default")):
        selector = make(rep, runners, runner)["spec"]["topologySpreadConstraints"][0]["labelSelector"]
        assert selector == {
            "matchLabels": {
                "ome.io/inferenceservice": rep.name_prefix,
                "component": rep.spec.component,
                "ome.io/runner": runner,
            }
        }


def test_topology_spread_key_overrides_topology_key_and_nothing_without_a_policy() -> None:
    rep = replica(topologyKey="cloud/rack", topologySpread="Required", topologySpreadKey="zone")
    assert make(rep, single())["spec"]["topologySpreadConstraints"][0]["topologyKey"] == "zone"
    assert "topologySpreadConstraints" not in make(replica(topologyKey="cloud/rack"), single())["spec"]


# -- purity and Instances ------------------------------------------------------------------------


def test_materialising_a_pod_leaves_the_template_alone() -> None:
    template = tpl({"name": "", "env": [{"name": "OME_RUNNER", "value": "x"}]}, readinessGates=[])
    runners = (RenderedRunner("leader", 1, template), RenderedRunner("worker", 2, copy.deepcopy(template)))
    before = copy.deepcopy(runners)
    pod = make(replica(topologyKey="k", topologySpread="Required"), runners, "worker", 1)
    pod["spec"]["containers"][0]["env"].append({"name": "X"})
    assert runners == before


def test_instance_pods_of_a_multi_pod_instance() -> None:
    pods = instance_pods(replica(), gang(3), 2, incarnation=4, revision_hash="h", planned_replicas=3)
    assert [p["metadata"]["name"] for p in pods] == [
        "pool-engine-2-leader-0",
        "pool-engine-2-worker-0",
        "pool-engine-2-worker-1",
        "pool-engine-2-worker-2",
    ]
    assert {p["metadata"]["labels"]["ome.io/instance-incarnation"] for p in pods} == {"4"}


def test_instance_pods_of_a_single_pod_instance_use_the_active_ordinal() -> None:
    pods = instance_pods(replica(), single(), 0, revision_hash=None, planned_replicas=1, active_ordinal=1)
    assert [p["metadata"]["name"] for p in pods] == ["pool-engine-0-default-1"]
    leader_pods = instance_pods(
        replica(), gang(1), 0, revision_hash=None, planned_replicas=1, active_ordinal=1
    )
    assert leader_pods[0]["metadata"]["name"] == "pool-engine-0-leader-0"


# -- headless Service and PodGroup ---------------------------------------------------------------


def test_headless_service() -> None:
    selector = {"ome.io/inferenceservice": "pool", "component": "router", "ome.io/managed-by": "OMENative"}
    assert headless_service(replica(component="router")) == {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "pool-router-headless",
            "namespace": "ns",
            "labels": selector,
            "ownerReferences": [owner_reference(replica(component="router"))],
        },
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
            "selector": selector,
            "type": "ClusterIP",
        },
    }


def test_pod_group() -> None:
    group = pod_group(replica(topologyKey="cloud/rack"), 3, 5, instance_ready_timeout_seconds=120)
    assert group["apiVersion"] == "scheduling.x-k8s.io/v1alpha1"
    assert group["kind"] == "PodGroup"
    assert group["metadata"]["name"] == "pool-engine-3"
    assert group["metadata"]["labels"] == {
        "ome.io/inferenceservice": "pool",
        "component": "engine",
        "ome.io/managed-by": "OMENative",
        "ome.io/instance-index": "3",
    }
    assert group["metadata"]["annotations"] == {"ome.io/topology-key": "cloud/rack"}
    assert group["metadata"]["ownerReferences"] == [owner_reference(replica())]
    assert group["spec"] == {"minMember": 5, "scheduleTimeoutSeconds": 120}


@pytest.mark.parametrize(
    ("timeout", "expected"),
    [(None, None), (0, None), (-5, None), (0.9, None), (10, 10), (90.7, 90), (600, 600), (1800, 1800)],
)
def test_pod_group_timeout_is_the_ready_timeout_without_operator_bounds(
    timeout: float | None, expected: int | None
) -> None:
    """podgroup.go scheduleTimeoutSeconds @ dcfb4135, no GangScheduleTimeout clamp: the ready timeout's
    whole seconds when positive, else the field is left unset (the scheduler's default)."""
    group = pod_group(replica(), 0, 2, instance_ready_timeout_seconds=timeout)
    assert group["spec"].get("scheduleTimeoutSeconds") == expected
    assert group["spec"]["minMember"] == 2
    assert "annotations" not in group["metadata"]


@pytest.mark.parametrize(
    ("timeout", "expected"), [(None, 60), (0, 60), (-5, 60), (10, 60), (300, 300), (600, 600), (1800, 600)]
)
def test_pod_group_timeout_with_operator_bounds(timeout: float | None, expected: int) -> None:
    """With a GangScheduleTimeout clamp {Min: 1m, Max: 10m}: unusable or short → Min, long → Max."""
    group = pod_group(
        replica(), 0, 2, instance_ready_timeout_seconds=timeout, schedule_timeout_bounds=(60, 600)
    )
    assert group["spec"]["scheduleTimeoutSeconds"] == expected


def test_worker_pods_carry_the_leader_template_metadata() -> None:
    # desiredFromIR takes PodTemplateObjectMeta from the default/leader runner for every pod.
    leader = tpl(labels={"role": "head"})
    leader["metadata"]["annotations"] = {"a": "leader"}
    worker = tpl(labels={"role": "tail", "only-worker": "x"})
    worker["metadata"]["annotations"] = {"a": "worker"}
    p = make(replica(), gang(leader=leader, worker=worker), runner="worker", ordinal=1)
    assert p["metadata"]["labels"]["role"] == "head"
    assert "only-worker" not in p["metadata"]["labels"]
    assert p["metadata"]["annotations"] == {"a": "leader"}


TPU_ENV = ["TPU_WORKER_HOSTNAMES", "TPU_WORKER_ID", "TPU_PROCESS_ADDRESSES", "TPU_PROCESS_PORT", "TPU_NAME"]


@pytest.mark.parametrize(
    ("resources", "tpu"),
    [
        ({"limits": {"google.com/tpu": "4"}}, True),
        ({"requests": {"google.com/tpu": "0"}}, True),  # Go tests the key, not the quantity
        ({"limits": {"nvidia.com/gpu": "8"}}, False),
    ],
)
def test_tpu_topology_env_follows_a_tpu_request(resources: dict[str, Any], tpu: bool) -> None:
    """injectOMENativeEnv → buildTPUTopologyEnv: a pod naming google.com/tpu in any regular container's
    limits or requests gets the TPU variables after OME's block, on every regular container."""
    leader = tpl({"name": "ome-container", "resources": resources}, {"name": "side"})
    p = make(replica(), gang(2, leader=leader), "leader")
    for container in p["spec"]["containers"]:
        assert env_names(container) == OME_ENV + MULTI_POD_ENV + (TPU_ENV if tpu else [])


def test_tpu_env_values_and_a_tpu_request_in_an_init_container_only() -> None:
    worker = tpl({"name": "ome-container", "resources": {"limits": {"google.com/tpu": "4"}}})
    p = make(replica(), gang(2, worker=worker), "worker", 1, index=3)
    values = env(p["spec"]["containers"][0])
    hosts = [f"pool-engine-3-{r}.pool-engine-headless" for r in ("leader-0", "worker-0", "worker-1")]
    assert values["TPU_WORKER_HOSTNAMES"] == ",".join(hosts)
    assert values["TPU_WORKER_ID"] == "2"
    assert values["TPU_PROCESS_ADDRESSES"] == ",".join(f"{h}:8476" for h in hosts)
    assert values["TPU_PROCESS_PORT"] == "8476"
    assert values["TPU_NAME"] == "pool-engine-3"
    # podRequestsResource reads regular containers only.
    init_only = tpl(initContainers=[{"name": "warm", "resources": {"limits": {"google.com/tpu": "4"}}}])
    names = env_names(make(replica(), gang(2, leader=init_only), "leader")["spec"]["containers"][0])
    assert not set(TPU_ENV) & set(names)
    # A single-pod Instance has one peer host: no TPU variables.
    single_tpu = tpl({"name": "ome-container", "resources": {"limits": {"google.com/tpu": "8"}}})
    assert env_names(make(replica(), single(single_tpu))["spec"]["containers"][0]) == OME_ENV


def test_a_null_container_requests_no_tpu_and_renders() -> None:
    """A null container (Go's zero Container once decoded) requests nothing: no TPU variables, no
    internal error (found by tests/fuzz)."""
    from omerender.stamps import _requests_tpu

    assert _requests_tpu({"containers": [None, {"resources": None}, {"resources": {"limits": "x"}}]}) is False
    assert _requests_tpu({"containers": [None, {"resources": {"limits": {"google.com/tpu": "4"}}}]}) is True


@pytest.mark.parametrize(
    "affinity",
    [None, {"podAffinity": None}, {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": None}}],
)
def test_a_null_affinity_is_go_s_zero_value_and_gets_the_leader_term(affinity: Any) -> None:
    """A null affinity, podAffinity or term list decodes to Go's zero value, which the controller fills
    (found by tests/fuzz: it was an internal error)."""
    p = make(replica(topologyKey="cloud/rack"), gang(worker=tpl(affinity=affinity)), "worker")
    terms = p["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms == [leader_term("cloud/rack")]


def test_a_null_affinity_term_is_a_zero_term_beside_the_leader_term() -> None:
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [None]}}
    p = make(replica(topologyKey="cloud/rack"), gang(worker=tpl(affinity=affinity)), "worker")
    terms = p["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms == [{}, leader_term("cloud/rack")]


def test_topology_spread_needs_a_key_and_yields_to_the_template_s_own_constraint() -> None:
    """``injectTopologySpread``: a policy with no key stamps nothing; a constraint the template has on
    the same key wins (OME adds none beside it), one on another key stays beside OME's."""
    assert "topologySpreadConstraints" not in make(replica(topologySpread="Required"), single())["spec"]
    own = {"maxSkew": 3, "topologyKey": "cloud/rack", "whenUnsatisfiable": "ScheduleAnyway"}
    rep = replica(topologyKey="cloud/rack", topologySpread="Required")
    got = make(rep, single(tpl(topologySpreadConstraints=[own])))["spec"]["topologySpreadConstraints"]
    assert got == [own]
    zone = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
    got = make(rep, single(tpl(topologySpreadConstraints=[zone])))["spec"]["topologySpreadConstraints"]
    assert [t["topologyKey"] for t in got] == ["zone", "cloud/rack"]


@pytest.mark.parametrize("constraints", [None, [None]])
def test_a_null_spread_list_or_constraint_is_go_s_zero_value(constraints: Any) -> None:
    """A null list or member decodes to Go's zero value, beside which OME's constraint goes (was an
    internal error)."""
    rep = replica(topologyKey="cloud/rack", topologySpread="Required")
    got = make(rep, single(tpl(topologySpreadConstraints=constraints)))["spec"]["topologySpreadConstraints"]
    assert [t.get("topologyKey") for t in got] == [*([None] if constraints else []), "cloud/rack"]


def test_a_null_readiness_gate_is_a_zero_gate_beside_the_serving_gate() -> None:
    gates = make(replica(), single(tpl(readinessGates=[None])))["spec"]["readinessGates"]
    assert gates == [{}, {"conditionType": "ome.io/serving"}]
