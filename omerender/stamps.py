"""Per-pod materialisation: what OME stamps on each pod of Instance i, runner r, ordinal k (01 §3).

Nothing stamped here enters the revision hash: the same template yields the same revision whatever the
Instance, ordinal or replica count.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from omerender import constants as c
from omerender._records import record
from omerender.models import InferenceReplica
from omerender.naming import (
    headless_service_name,
    instance_subdomain,
    leader_address,
    pod_group_name,
    pod_name,
)
from omerender.render.data import clone
from omerender.render.result import RenderedRunner

__all__ = [
    "PodCoordinates",
    "headless_service",
    "instance_pods",
    "materialize_pod",
    "owner_reference",
    "owner_reference_of",
    "pod_group",
    "replica_selector",
    "schedule_timeout_seconds",
    "selector_of",
]

# The extended resource whose request makes a pod a TPU pod (constants.GoogleTPUResourceType), and the
# inter-host port JAX/libtpu's mesh handshake uses (tpuProcessPort in workload/ops/render.go).
TPU_RESOURCE = "google.com/tpu"
TPU_PROCESS_PORT = 8476


@record
class PodCoordinates:
    """Where a pod sits: Instance ``index`` at ``incarnation``, runner and ordinal within it."""

    index: int
    incarnation: int
    runner: str
    ordinal: int


def owner_reference_of(name: str, uid: str) -> dict[str, Any]:
    """The controller owner reference every object of replica ``name`` carries."""
    return {
        "apiVersion": c.API_VERSION,
        "kind": c.REPLICA_KIND,
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def selector_of(prefix: str, component: str) -> dict[str, str]:
    """The labels every object of the replica carries; the headless Service selects on them."""
    return {
        c.LABEL_INFERENCESERVICE: prefix,
        c.LABEL_COMPONENT: component,
        c.LABEL_MANAGED_BY: c.MANAGED_BY_VALUE,
    }


def owner_reference(replica: InferenceReplica) -> dict[str, Any]:
    return owner_reference_of(replica.metadata.name, replica.metadata.uid)


def replica_selector(replica: InferenceReplica) -> dict[str, str]:
    return selector_of(replica.name_prefix, replica.spec.component)


def _inject_env(container: dict[str, Any], owned: list[tuple[str, str]]) -> None:
    """``injectOMENativeEnv`` (ome-projects/ome ``pkg/controller/v1beta1/workload/ops/render.go`` @ 4dfb96b1
    and 7307c238, the same body): drop the container's variables named like OME's, then append OME's
    block. Nothing else: Go sets no ``LWS_*`` variable (DECISIONS §3.6; ``omerender lint`` warns a
    runtime that reads one, :mod:`omerender.lint_lws`)."""
    names = {name for name, _ in owned}
    env = [
        var for var in container.get("env") or () if not (isinstance(var, dict) and var.get("name") in names)
    ]
    env += [{"name": name, "value": value} for name, value in owned]
    container["env"] = env


def _requests_tpu(spec: Mapping[str, Any]) -> bool:
    """``podRequestsResource(pod, google.com/tpu)``: a regular container names the resource in its
    limits or requests (any quantity, zero included: Go tests the key). A null container is Go's zero
    ``Container`` once decoded, which requests nothing; so is a null or wrong-typed ``resources``."""
    for container in spec.get("containers") or ():
        resources = container.get("resources") if isinstance(container, Mapping) else None
        if not isinstance(resources, Mapping):
            continue
        for part in ("limits", "requests"):
            amounts = resources.get(part)
            if isinstance(amounts, Mapping) and TPU_RESOURCE in amounts:
                return True
    return False


def _tpu_env(
    replica: InferenceReplica, runners: tuple[RenderedRunner, ...], index: int, rank: int
) -> list[tuple[str, str]]:
    """``buildTPUTopologyEnv`` (ome-projects/ome ``pkg/controller/v1beta1/workload/ops/render.go`` @
    4dfb96b1 and 7307c238, the same body): the multi-host TPU coordinator variables of a pod in an
    Instance of two pods or more; none for a single-pod Instance. The peer hosts are every pod's short
    DNS name (``<pod>.<headless-service>``) in rank order, runners in declared order
    (``buildInstancePeerHostnames``), so ``TPU_WORKER_HOSTNAMES[TPU_WORKER_ID]`` is the pod itself."""
    prefix, component = replica.name_prefix, replica.spec.component
    headless = headless_service_name(prefix, component)
    hosts = [
        f"{pod_name(prefix, component, index, r.name, ordinal)}.{headless}"
        for r in runners
        for ordinal in range(r.size)
    ]
    if len(hosts) < 2:
        return []
    return [
        ("TPU_WORKER_HOSTNAMES", ",".join(hosts)),
        ("TPU_WORKER_ID", str(rank)),
        ("TPU_PROCESS_ADDRESSES", ",".join(f"{h}:{TPU_PROCESS_PORT}" for h in hosts)),
        ("TPU_PROCESS_PORT", str(TPU_PROCESS_PORT)),
        ("TPU_NAME", instance_subdomain(prefix, component, index)),
    ]


def _leader_affinity(spec: dict[str, Any], labels: Mapping[str, str], topology_key: str) -> None:
    """Workers must land with their own leader; a user's required term on the key wins
    (``injectGangDomainAffinity``, ome-projects/ome ``pkg/controller/v1beta1/workload/ops/render.go`` @
    7307c238; golden cases ``runners-worker-own-affinity-on-key``, ``runners-worker-null-affinity``).

    A null ``affinity``, ``podAffinity`` or term list is Go's zero value once the template is decoded
    (a nil pointer or slice the controller fills), and a null term is the zero ``PodAffinityTerm``
    (no topology key); wrong-typed members never get here (the template's decode check refuses them
    first, naming the field)."""
    if spec.get("affinity") is None:
        spec["affinity"] = {}
    affinity = spec["affinity"]
    if affinity.get("podAffinity") is None:
        affinity["podAffinity"] = {}
    pod_affinity = affinity["podAffinity"]
    if pod_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") is None:
        pod_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = []
    terms = pod_affinity["requiredDuringSchedulingIgnoredDuringExecution"]
    terms[:] = [{} if t is None else t for t in terms]
    if any(t.get("topologyKey") == topology_key for t in terms):
        return
    match = {
        k: labels[k]
        for k in (c.LABEL_INFERENCESERVICE, c.LABEL_COMPONENT, c.LABEL_INSTANCE_INDEX)
        if k in labels
    }
    match[c.LABEL_RUNNER] = c.RUNNER_LEADER
    terms.append({"labelSelector": {"matchLabels": match}, "topologyKey": topology_key})


def _spread(spec: dict[str, Any], replica: InferenceReplica, runner: str) -> None:
    """``topologySpread`` spreads each Instance's anchor pod across fault domains.

    The selector is the one OME's Go controller stamps and later recognises as its own
    (``isOMEGeneratedSpread`` in the InferenceReplica migration checks): exactly three match labels —
    the parent, the component and the anchor's own runner — and no match expressions, so leaders spread
    among leaders and single pods among single pods.

    ``injectTopologySpread`` (ome-projects/ome ``pkg/controller/v1beta1/workload/ops/render.go`` @
    7307c238): nothing without a policy, on a worker, or without a key (``topologySpreadKey``, else the
    Instance's topology key; Go's per-Instance override ``InstanceTopologyKeys`` is reconciler state
    for live pods of an older revision, not the render's); a constraint the template already has on
    the key wins."""
    policy = replica.spec.topology_spread
    key = replica.spec.topology_spread_key or replica.spec.topology_key
    if policy is None or not key:
        return
    # A null list or member is Go's zero value once the template is decoded (nil slice, zero
    # constraint), as for the affinity above.
    if spec.get("topologySpreadConstraints") is None:
        spec["topologySpreadConstraints"] = []
    constraints = spec["topologySpreadConstraints"]
    constraints[:] = [{} if t is None else t for t in constraints]
    if any(t.get("topologyKey") == key for t in constraints):
        return
    constraints.append(
        {
            "maxSkew": 1,
            "topologyKey": key,
            "whenUnsatisfiable": "DoNotSchedule" if policy == "Required" else "ScheduleAnyway",
            "labelSelector": {
                "matchLabels": {
                    c.LABEL_INFERENCESERVICE: replica.name_prefix,
                    c.LABEL_COMPONENT: replica.spec.component,
                    c.LABEL_RUNNER: runner,
                },
            },
        }
    )


def materialize_pod(
    replica: InferenceReplica,
    runners: tuple[RenderedRunner, ...],
    at: PodCoordinates,
    *,
    revision_hash: str | None,
    planned_replicas: int,
) -> dict[str, Any]:
    """The complete pod for ``at``, built from the runner template of the same name in ``runners``."""
    runner = next(r for r in runners if r.name == at.runner)
    prefix, component = replica.name_prefix, replica.spec.component
    multi_pod = len(runners) > 1
    pod_count = sum(r.size for r in runners)
    name = pod_name(prefix, component, at.index, at.runner, at.ordinal)
    template = runner.template
    # desiredFromIR: every pod carries the default/leader template's metadata, workers included.
    anchor = next((r for r in runners if r.name in (c.RUNNER_DEFAULT, c.RUNNER_LEADER)), runner)
    meta_in = anchor.template.get("metadata") or {}

    labels: dict[str, str] = dict(meta_in.get("labels") or {})
    labels.update(replica_selector(replica))
    labels[c.LABEL_INSTANCE_INDEX] = str(at.index)
    labels[c.LABEL_INSTANCE_INCARNATION] = str(at.incarnation)
    labels[c.LABEL_RUNNER] = at.runner
    labels[c.LABEL_POD_ORDINAL] = str(at.ordinal)
    if revision_hash:
        labels[c.LABEL_REVISION_HASH] = revision_hash
    if replica.spec.pairing_protocol:
        labels[c.LABEL_PAIRING_PROTOCOL] = replica.spec.pairing_protocol
    if pod_count > 1:
        labels[c.LABEL_POD_GROUP] = pod_group_name(prefix, component, at.index)
    annotations = {
        k: v
        for k, v in (meta_in.get("annotations") or {}).items()
        if k != c.ANNOTATION_IN_PLACE_IMAGE_TRANSITION
    }

    spec: dict[str, Any] = clone(template.get("spec") or {})
    spec["hostname"] = name
    spec["subdomain"] = headless_service_name(prefix, component)
    # hasServingReadinessGate; a null gate is Go's zero PodReadinessGate (no condition type).
    gates = [{} if g is None else g for g in spec.get("readinessGates") or []]
    if not any(g.get("conditionType") == c.SERVING_GATE for g in gates):
        gates = [*gates, {"conditionType": c.SERVING_GATE}]
    spec["readinessGates"] = gates

    runner_index = at.ordinal if runner.size > 1 else 0
    env = [
        (c.ENV_INFERENCESERVICE_NAME, prefix),
        (c.ENV_COMPONENT, component),
        (c.ENV_COMPONENT_REPLICAS, str(planned_replicas)),
        (c.ENV_INSTANCE_INDEX, str(at.index)),
        (c.ENV_RUNNER, at.runner),
        (c.ENV_RUNNER_SIZE, str(runner.size)),
        (c.ENV_RUNNER_INDEX, str(runner_index)),
        (c.ENV_INSTANCE_SUBDOMAIN, instance_subdomain(prefix, component, at.index)),
    ]
    # instancePodRank: the sizes of the runners declared before this one, plus the ordinal.
    rank = 0
    for r in runners:
        if r.name == at.runner:
            rank += at.ordinal
            break
        rank += r.size
    if multi_pod:
        address = leader_address(prefix, component, at.index)
        env += [
            (c.ENV_LEADER_ADDRESS, address),
            (c.ENV_INSTANCE_POD_RANK, str(rank)),
            (c.ENV_INSTANCE_POD_COUNT, str(pod_count)),
        ]
    # injectOMENativeEnv: a pod that requests google.com/tpu also gets the TPU topology variables.
    if _requests_tpu(spec):
        env += _tpu_env(replica, runners, at.index, rank)
    # A null container decodes in Go to the zero Container: an empty object here, named below.
    for key in ("initContainers", "containers"):
        if isinstance(spec.get(key), list):
            spec[key] = [{} if container is None else container for container in spec[key]]
    # backfillEmptyContainerNames names init containers too; only regular containers get the env.
    for container in spec.get("initContainers") or ():
        if not container.get("name"):
            container["name"] = c.MAIN_CONTAINER
    for container in spec.get("containers") or ():
        if not container.get("name"):
            container["name"] = c.MAIN_CONTAINER
        _inject_env(container, env)

    if at.runner == c.RUNNER_WORKER and replica.spec.topology_key:
        _leader_affinity(spec, labels, replica.spec.topology_key)
    if at.runner in (c.RUNNER_DEFAULT, c.RUNNER_LEADER):
        _spread(spec, replica, at.runner)

    metadata: dict[str, Any] = {"name": name, "namespace": replica.namespace, "labels": labels}
    if annotations:
        metadata["annotations"] = annotations
    metadata["ownerReferences"] = [owner_reference(replica)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def instance_pods(
    replica: InferenceReplica,
    runners: tuple[RenderedRunner, ...],
    index: int,
    *,
    incarnation: int = 1,
    revision_hash: str | None,
    planned_replicas: int,
    active_ordinal: int = 0,
) -> list[dict[str, Any]]:
    """Every pod of one Instance: the anchor at ``active_ordinal`` (single-pod), workers 0..size-1."""
    pods = []
    for runner in runners:
        ordinals = range(runner.size) if runner.name == c.RUNNER_WORKER else (active_ordinal,)
        if runner.name == c.RUNNER_LEADER:
            ordinals = (0,)
        for ordinal in ordinals:
            at = PodCoordinates(index, incarnation, runner.name, ordinal)
            pods.append(
                materialize_pod(
                    replica, runners, at, revision_hash=revision_hash, planned_replicas=planned_replicas
                )
            )
    return pods


def headless_service(replica: InferenceReplica) -> dict[str, Any]:
    """``{prefix}-{component}-headless``: no ports, not-ready addresses published (01 §3.5)."""
    selector = replica_selector(replica)
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": headless_service_name(replica.name_prefix, replica.spec.component),
            "namespace": replica.namespace,
            "labels": dict(selector),
            "ownerReferences": [owner_reference(replica)],
        },
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
            "selector": dict(selector),
            "type": "ClusterIP",
        },
    }


def schedule_timeout_seconds(
    instance_ready_timeout_seconds: float | None, bounds: tuple[float, float] | None = None
) -> int | None:
    """A gang's ``scheduleTimeoutSeconds``, or None to leave it unset (the scheduler's own default).

    ``scheduleTimeoutSeconds`` in ome-projects/ome ``pkg/controller/v1beta1/workload/podgroup/podgroup.go``
    @ dcfb4135 (the one stored ome-projects version): the Instance ready timeout's whole seconds
    (``int32(d.Seconds())``, truncated); with no operator bounds (``plan.GangScheduleTimeout`` nil) that
    value as it is when positive and unset otherwise; with bounds ``(min, max)`` a value that is not
    positive or under ``min`` becomes ``min``, one over ``max`` becomes ``max``. The earlier
    sgl-project/ome version (bb4fa1ee, ``clampScheduleTimeoutSeconds``) always clamped into [60, 600];
    the standalone one replaced that. Where the operator's bounds are configured (a ConfigMap key) is
    not in the index, so the reconciler passes none."""
    derived = int(instance_ready_timeout_seconds or 0)
    if bounds is None:
        return derived if derived > 0 else None
    low, high = int(bounds[0]), int(bounds[1])
    if derived <= 0 or derived < low:
        return low
    if derived > high:
        return high
    return derived


def pod_group(
    replica: InferenceReplica,
    index: int,
    pod_count: int,
    *,
    instance_ready_timeout_seconds: float | None,
    schedule_timeout_bounds: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """The scheduler-plugins PodGroup of a multi-pod Instance, created before its pods
    (``BuildPodGroup``, ome-projects/ome ``workload/podgroup/podgroup.go`` @ dcfb4135):
    ``scheduleTimeoutSeconds`` from :func:`schedule_timeout_seconds`, absent when that is None."""
    labels = replica_selector(replica)
    labels[c.LABEL_INSTANCE_INDEX] = str(index)
    metadata: dict[str, Any] = {
        "name": pod_group_name(replica.name_prefix, replica.spec.component, index),
        "namespace": replica.namespace,
        "labels": labels,
        "ownerReferences": [owner_reference(replica)],
    }
    if replica.spec.topology_key:
        metadata["annotations"] = {c.ANNOTATION_TOPOLOGY_KEY: replica.spec.topology_key}
    spec: dict[str, Any] = {"minMember": pod_count}
    timeout = schedule_timeout_seconds(instance_ready_timeout_seconds, schedule_timeout_bounds)
    if timeout is not None:
        spec["scheduleTimeoutSeconds"] = timeout
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": metadata,
        "spec": spec,
    }
