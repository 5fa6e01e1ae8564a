"""Read the API into a planner ``World``: the replica, its render, revisions, pods, Service, slices.

The replica is read fresh for every pass (one GET): its status is the journal, so a pass must never plan
from a stale copy of it (a journal older than the pass's own last write would replay a finished step,
e.g. re-create a pod a later step deleted). What the replica owns (pods, ControllerRevisions, the
headless Service, its EndpointSlices) comes from a :class:`OwnedReader`: the controller's watch caches
(``omereconcile.controller.CachedOwned``), or :class:`LiveOwned` for a one-off read such as ``plan``.
A cache may lag, never lead, and every write the plan makes is pinned (resourceVersion/UID
preconditions, idempotent creates by name), so a stale read costs at most a retry. The catalog (models,
runtimes, fine-tuned weights, InferenceServices) and the operator settings come from the caller, who
keeps them from watches.

Rendering uses ``omerender``: ``render`` for the pod templates, ``revision_of`` for the revision, and
``materialize_pod`` for each pod. A pod for a stored revision (a rollback target, or an Instance repaired
at its own revision) is rebuilt from the ControllerRevision's ``data`` (``podSpec``, ``workerPodSpec``,
``pairingProtocol``, and ``podMeta`` over the current template's keys no revision hashes, such as
Kueue's queue label: Go ``storedTemplate``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Protocol

from omereconcile.cluster.kube import JSON, Forbidden, Kube, NotFound
from omereconcile.settings import OperatorSettings
from omereconcile.world import (
    LEDGER_SUFFIX,
    DesiredRevision,
    Endpoints,
    LedgerView,
    NodeView,
    PodGroupView,
    PodView,
    RenderBlock,
    RenderOutcome,
    ReplicaView,
    RevisionView,
    ServiceView,
    World,
)
from omerender import constants as c
from omerender.catalog import Catalog, ControllerIdentity
from omerender.errors import OmeRenderError, RenderBlocked
from omerender.inheritance import InheritanceError, Resolver
from omerender.models import InferenceReplica
from omerender.naming import headless_service_name
from omerender.preview import revision_of
from omerender.render import Render, RenderedRunner, render
from omerender.stamps import PodCoordinates, materialize_pod

__all__ = [
    "CATALOG_RESOURCES",
    "Dependency",
    "LiveOwned",
    "NodeLookup",
    "Observation",
    "OwnedReader",
    "build_catalog",
    "dependencies",
    "fetch_catalog_objects",
    "observe",
    "paths",
    "render_world",
    "revision_meta",
    "runners_from_payload",
    "with_ledger",
    "with_nodes",
]

GROUP = "/apis/ome.io/v1beta1"

# (kind, plural, namespaced)
CATALOG_RESOURCES: tuple[tuple[str, str, bool], ...] = (
    ("ClusterBaseModel", "clusterbasemodels", False),
    ("BaseModel", "basemodels", True),
    ("ClusterServingRuntime", "clusterservingruntimes", False),
    ("ServingRuntime", "servingruntimes", True),
    ("FineTunedWeight", "finetunedweights", False),
    ("InferenceService", "inferenceservices", True),
)

# A dependency of a replica on a catalog object: (category, name); name "*" means any.
# Categories: "model", "runtime", "weight", "isvc". Kinds and scopes are folded (a superset is safe).
Dependency = tuple[str, str]
_CATEGORY = {
    "ClusterBaseModel": "model",
    "BaseModel": "model",
    "ClusterServingRuntime": "runtime",
    "ServingRuntime": "runtime",
    "FineTunedWeight": "weight",
    "InferenceService": "isvc",
}


def category_of(kind: str) -> str:
    return _CATEGORY.get(kind, kind)


class paths:
    @staticmethod
    def replicas(ns: str | None) -> str:
        return f"{GROUP}/namespaces/{ns}/inferencereplicas" if ns else f"{GROUP}/inferencereplicas"

    @staticmethod
    def replica(ns: str, name: str) -> str:
        return f"{GROUP}/namespaces/{ns}/inferencereplicas/{name}"

    @staticmethod
    def pods(ns: str | None) -> str:
        return f"/api/v1/namespaces/{ns}/pods" if ns else "/api/v1/pods"

    @staticmethod
    def services(ns: str | None) -> str:
        return f"/api/v1/namespaces/{ns}/services" if ns else "/api/v1/services"

    @staticmethod
    def events(ns: str) -> str:
        return f"/api/v1/namespaces/{ns}/events"

    @staticmethod
    def revisions(ns: str | None) -> str:
        return (
            f"/apis/apps/v1/namespaces/{ns}/controllerrevisions"
            if ns
            else "/apis/apps/v1/controllerrevisions"
        )

    @staticmethod
    def slices(ns: str | None) -> str:
        return (
            f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices"
            if ns
            else "/apis/discovery.k8s.io/v1/endpointslices"
        )

    @staticmethod
    def nodes() -> str:
        return "/api/v1/nodes"

    @staticmethod
    def pod_groups(ns: str) -> str:
        return f"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{ns}/podgroups"

    @staticmethod
    def configmap(ns: str, name: str) -> str:
        return f"/api/v1/namespaces/{ns}/configmaps/{name}"

    @staticmethod
    def configmaps(ns: str | None) -> str:
        return f"/api/v1/namespaces/{ns}/configmaps" if ns else "/api/v1/configmaps"

    @staticmethod
    def catalog(plural: str, namespaced: bool, ns: str | None) -> str:
        if namespaced and ns:
            return f"{GROUP}/namespaces/{ns}/{plural}"
        return f"{GROUP}/{plural}"


def selector(prefix: str, component: str) -> str:
    return f"{c.LABEL_INFERENCESERVICE}={prefix},{c.LABEL_COMPONENT}={component}"


# -- catalog ---------------------------------------------------------------------------------------------


def fetch_catalog_objects(kube: Kube, namespaces: Iterable[str] | None = None) -> list[JSON]:
    """List every catalog object (namespaced kinds in ``namespaces``, or everywhere when None)."""
    out: list[JSON] = []
    nss = list(namespaces) if namespaces is not None else [None]
    for kind, plural, namespaced in CATALOG_RESOURCES:
        for ns in nss if namespaced else [None]:
            for item in kube.list(paths.catalog(plural, namespaced, ns))["items"]:
                item.setdefault("kind", kind)
                item.setdefault("apiVersion", "ome.io/v1beta1")
                out.append(item)
    return out


def build_catalog(
    objects: Iterable[Mapping[str, Any]],
    identity: ControllerIdentity | None = None,
    accelerator_resources: Sequence[str] = (),
    operator_config: Mapping[str, Any] | None = None,
) -> Catalog:
    """A Catalog from raw objects; an object that does not parse is left out (it cannot be rendered
    from anyway) instead of hiding every other object. ``accelerator_resources`` and
    ``operator_config`` (the ``deploy`` defaults) come from the live ``inferenceservice-config``."""
    objs = list(objects)
    try:
        return Catalog.from_objects(
            objs,
            controller_identity=identity,
            accelerator_resources=accelerator_resources,
            operator_config=operator_config,
            strict=False,  # the API server has validated them against the cluster's own CRDs
        )
    except OmeRenderError:
        good: list[Mapping[str, Any]] = []
        for obj in objs:
            try:
                Catalog.from_objects([*good, obj], strict=False)
            except OmeRenderError:
                continue
            good.append(obj)
        return Catalog.from_objects(
            good,
            controller_identity=identity,
            accelerator_resources=accelerator_resources,
            operator_config=operator_config,
            strict=False,  # the API server has validated them against the cluster's own CRDs
        )


# -- revisions -------------------------------------------------------------------------------------------


def revision_for(result: Render, collision_count: int) -> tuple[str, bytes, str]:
    """(name, payload, hash) of a render at ``collision_count`` (01 §9.1–9.2, ``omerender.preview``)."""
    info = revision_of(result, collision_count=collision_count)
    return info.name, info.payload, info.hash


def runners_from_payload(
    payload: bytes | Mapping[str, Any], current: tuple[RenderedRunner, ...] = ()
) -> tuple[RenderedRunner, ...]:
    """Runner templates back from a ControllerRevision's data (OME payload: podSpec, podMeta,
    workerPodSpec). A worker's size is not in the payload: the current render's (else 1) is used."""
    data = json.loads(payload) if isinstance(payload, bytes | str) else dict(payload)
    meta = data.get("podMeta") or {}
    template: dict[str, Any] = {"metadata": {}, "spec": json.loads(json.dumps(data.get("podSpec") or {}))}
    if meta.get("labels"):
        template["metadata"]["labels"] = dict(meta["labels"])
    if meta.get("annotations"):
        template["metadata"]["annotations"] = dict(meta["annotations"])
    if "workerPodSpec" not in data:
        return (RenderedRunner(c.RUNNER_DEFAULT, 1, template),)
    size = next((r.size for r in current if r.name == c.RUNNER_WORKER), 1)
    worker = {"metadata": {}, "spec": json.loads(json.dumps(data["workerPodSpec"]))}
    return (RenderedRunner(c.RUNNER_LEADER, 1, template), RenderedRunner(c.RUNNER_WORKER, size, worker))


def revision_meta(
    current: Mapping[str, Any] | None, owned: Mapping[str, Any] | None, stored: Mapping[str, Any] | None
) -> dict[str, dict[str, str]] | None:
    """The labels and annotations a pod of a stored revision carries (Go ``revisionMeta``,
    ome-projects/ome pkg/controller/v1beta1/workload/ops/template.go @ 58a57f25).

    A key a revision hashes belongs to the revision: it takes the ``stored`` revision's value and is
    absent when the stored revision does not record it, even if the ``current`` template carries it
    (a key a newer revision added). A key no revision hashes (Kueue's queue label, an annotation
    inherited from the owner) keeps following the current template. ``owned`` is the metadata the roll
    target hashed (its payload's ``podMeta``): a current key it holds is a revision's, every other
    current key is not. None when neither the current template nor the stored revision has metadata.
    """
    if current is None and stored is None:
        return None
    out: dict[str, dict[str, str]] = {}
    for key in ("labels", "annotations"):
        drop = (owned or {}).get(key) or {}
        merged = {k: v for k, v in ((current or {}).get(key) or {}).items() if k not in drop}
        merged.update((stored or {}).get(key) or {})
        if merged:
            out[key] = merged
    return out


def _stored_template(
    name: str, payload: bytes, target: RenderOutcome, result: Render | None
) -> tuple[tuple[RenderedRunner, ...], str | None]:
    """The runner templates and pairing protocol a pod of stored revision ``name`` is built from (Go
    ``templateFromPayload``, ome-projects/ome pkg/controller/v1beta1/workload/ops/template.go @
    58a57f25): the revision's pod specs and pairing protocol (none when it recorded none, not the
    current spec's), and :func:`revision_meta` over the current template, the roll target's hashed
    metadata and the revision's ``podMeta``. Raises ValueError for a payload with no pod template."""
    data = json.loads(payload)
    if not isinstance(data, dict) or not isinstance(data.get("podSpec"), dict):
        raise ValueError(
            f"ControllerRevision {name}: data.podSpec is missing, so no pod of that revision can be "
            "rebuilt from it (OME never writes one without it); restore the ControllerRevision's data "
            "from a backup, or roll the replica to another revision"
        )
    current = result.anchor.template.get("metadata") if result is not None else None
    owned = json.loads(target.payload).get("podMeta") if isinstance(target, DesiredRevision) else None
    runners = runners_from_payload(data, result.runners if result is not None else ())
    anchor = runners[0]
    meta = revision_meta(current, owned, data.get("podMeta"))
    template = {"metadata": meta or {}, "spec": anchor.template["spec"]}
    protocol = data.get("pairingProtocol")
    return (replace(anchor, template=template), *runners[1:]), protocol if isinstance(protocol, str) else None


# -- dependencies ----------------------------------------------------------------------------------------


def dependencies(
    replica: InferenceReplica, result: Render | None, catalog: Catalog, resolver: Resolver | None = None
) -> frozenset[Dependency]:
    """The catalog objects whose change may change this replica's render.

    A blocked render depends on everything of the kinds it reads (the missing object may appear under
    any of them); an auto-selected runtime depends on every runtime (a new one may win the selection).
    """
    spec = replica.spec
    if spec.model_ref is None and spec.runtime_ref is None:
        return frozenset()
    if result is None:
        return frozenset({("model", "*"), ("runtime", "*"), ("weight", "*")})
    deps: set[Dependency] = set()
    if spec.model_ref is not None:
        deps.add(("model", spec.model_ref.name))
        deps.update(("weight", w) for w in spec.model_ref.fine_tuned_weights or ())
        deps.update(("model", o.name) for o in spec.model_ref.overlays or ())
    if spec.runtime_ref is None:
        deps.add(("runtime", "*"))
    if result.runtime_name:
        deps.add(("runtime", result.runtime_name))
        rt = catalog.named_runtime(result.runtime_kind, replica.namespace, result.runtime_name)
        if rt is not None:
            try:
                chain = (resolver or Resolver(catalog)).resolve(rt).chain_names
            except InheritanceError:
                chain = ()
            deps.update(("runtime", n) for n in chain)
    return frozenset(deps)


# -- one replica -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Observation:
    world: World
    replica: JSON  # the raw object as read: the status write PUTs it back with the new status
    render: Render | None
    deps: frozenset[Dependency] = field(default_factory=frozenset)


def _owned_by(obj: Mapping[str, Any], uid: str) -> bool:
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    ctrl = [r for r in refs if r.get("controller")]
    return not ctrl or any(r.get("uid") == uid for r in ctrl)


def render_world(
    raw: JSON,
    *,
    pods: Iterable[JSON],
    revisions: Iterable[JSON],
    service: JSON | None,
    slices: Iterable[JSON],
    catalog: Catalog,
    settings: OperatorSettings,
    now: datetime,
    resolver: Resolver | None = None,
) -> Observation:
    """Pure: the World for one replica from objects already read."""
    rep = ReplicaView.from_dict(raw)
    model = rep.model
    uid = rep.uid
    cc = int(rep.status.get("collisionCount") or 0)
    result: Render | None = None
    outcome: RenderOutcome
    try:
        result = render(model, catalog, resolver=resolver)
        name, payload, digest = revision_for(result, cc)
        outcome = DesiredRevision(name, payload, digest, model.spec.pairing_protocol, cc)
    except RenderBlocked as exc:
        outcome = RenderBlock(str(exc.reason.value), exc.message)
    except OmeRenderError as exc:
        outcome = RenderBlock("RenderFailed", str(exc))
    revs = [r for r in revisions if _owned_by(r, uid)]
    stored = {str(r["metadata"]["name"]): r for r in revs}
    planned = model.spec.effective_replicas

    def factory(revision: str, index: int, incarnation: int, runner: str, ordinal: int) -> dict[str, Any]:
        if isinstance(outcome, DesiredRevision) and revision == outcome.name and result is not None:
            runners = result.runners
            digest = outcome.hash
            stamped = model
        else:
            obj = stored.get(revision)
            if obj is None:
                raise LookupError(f"no ControllerRevision {revision} to build a pod from")
            runners, protocol = _stored_template(revision, RevisionView.from_dict(obj).data, outcome, result)
            digest = revision.rsplit("-", 1)[-1]
            stamped = model.model_copy(
                update={"spec": model.spec.model_copy(update={"pairing_protocol": protocol})}
            )
        return materialize_pod(
            stamped,
            runners,
            PodCoordinates(index, incarnation, runner, ordinal),
            revision_hash=digest,
            planned_replicas=planned,
        )

    world = World(
        replica=rep,
        render=outcome,
        now=now,
        revisions=tuple(RevisionView.from_dict(r) for r in revs),
        pods=tuple(
            PodView.from_dict(p)
            for p in sorted(pods, key=lambda p: str(p["metadata"]["name"]))
            if _owned_by(p, uid)
        ),
        service=ServiceView.from_dict(service),
        endpoints=Endpoints.from_slices(slices),
        settings=settings,
        pod_factory=factory,
        instance_shape=tuple((r.name, r.size) for r in result.runners)
        if result
        else ((c.RUNNER_DEFAULT, 1),),
    )
    return Observation(world, raw, result, dependencies(model, result, catalog, resolver))


class OwnedReader(Protocol):
    """Where a pass reads the objects a replica owns, selected by its ``ome.io/inferenceservice`` prefix
    and ``component`` labels (the Service by name, slices by ``kubernetes.io/service-name``)."""

    def pods(self, namespace: str, prefix: str, component: str) -> list[JSON]: ...

    def revisions(self, namespace: str, prefix: str, component: str) -> list[JSON]: ...

    def service(self, namespace: str, name: str) -> JSON | None: ...

    def slices(self, namespace: str, service_name: str) -> list[JSON]: ...

    def ledger(self, namespace: str, name: str) -> JSON | None: ...


class LiveOwned:
    """Reads straight from the API server: five requests (used by ``omereconcile plan``)."""

    def __init__(self, kube: Kube) -> None:
        self.kube = kube

    def pods(self, namespace: str, prefix: str, component: str) -> list[JSON]:
        return list(self.kube.list(paths.pods(namespace), labelSelector=selector(prefix, component))["items"])

    def revisions(self, namespace: str, prefix: str, component: str) -> list[JSON]:
        sel = selector(prefix, component)
        return list(self.kube.list(paths.revisions(namespace), labelSelector=sel)["items"])

    def service(self, namespace: str, name: str) -> JSON | None:
        return self.kube.get_or_none(f"{paths.services(namespace)}/{name}")

    def slices(self, namespace: str, service_name: str) -> list[JSON]:
        sel = f"{SERVICE_NAME_LABEL}={service_name}"
        return list(self.kube.list(paths.slices(namespace), labelSelector=sel)["items"])

    def ledger(self, namespace: str, name: str) -> JSON | None:
        try:
            return self.kube.get_or_none(paths.configmap(namespace, name))
        except Forbidden:
            return None  # a reader without ConfigMap access plans as if no directive were recorded


SERVICE_NAME_LABEL = "kubernetes.io/service-name"


def observe(
    kube: Kube,
    namespace: str,
    name: str,
    *,
    catalog: Catalog,
    settings: OperatorSettings,
    now: datetime,
    resolver: Resolver | None = None,
    owned: OwnedReader | None = None,
    nodes: NodeLookup | None = None,
    ledgers: bool = True,
) -> Observation | None:
    """Read one replica (live) and what it owns (from ``owned``, live by default); None when the replica
    is gone. ``nodes`` looks up the Node of each pod (the controller's Node watch); without it the
    World holds no Node, which no lost-node rule reads as evidence."""
    raw = kube.get_or_none(paths.replica(namespace, name))
    if raw is None:
        return None
    raw.setdefault("kind", c.REPLICA_KIND)
    raw.setdefault("apiVersion", c.API_VERSION)
    meta = raw.get("metadata") or {}
    spec = raw.get("spec") or {}
    parent = (spec.get("parentRef") or {}).get("name")
    prefix = str(parent or meta.get("name"))
    component = str(spec.get("component") or "")
    reader = owned or LiveOwned(kube)
    pods = reader.pods(namespace, prefix, component)
    revisions = reader.revisions(namespace, prefix, component)
    svc_name = headless_service_name(prefix, component)
    service = reader.service(namespace, svc_name)
    slices = reader.slices(namespace, svc_name)
    obs = render_world(
        raw,
        pods=pods,
        revisions=revisions,
        service=service,
        slices=slices,
        catalog=catalog,
        settings=settings,
        now=now,
        resolver=resolver,
    )
    if ledgers:  # False: the ledgers are not watched (no RBAC); World.ledger stays None (unavailable)
        obs = with_ledger(obs, reader.ledger(namespace, f"{meta.get('name')}{LEDGER_SUFFIX}"))
    return with_nodes(with_pod_groups(kube, obs, prefix, component), nodes)


def with_ledger(obs: Observation, cm: JSON | None) -> Observation:
    """Add the replica's migration audit ledger (``planner/relocation.py``) to the world. As Go's
    ``PersistLedgerForOwner``, a ConfigMap of that name is taken up whoever it names as controller
    (the next write claims it)."""
    return replace(obs, world=replace(obs.world, ledger=LedgerView.from_dict(cm)))


# A Node by name (None: no such Node), as the controller's Node watch holds it.
NodeLookup = Callable[[str], JSON | None]


def with_nodes(obs: Observation, lookup: NodeLookup | None) -> Observation:
    """Add the Nodes of the replica's pods to the world (``World.nodes``): one lookup per node name, no
    request (the lookup reads the watch's store)."""
    if lookup is None:
        return obs
    names = sorted({p.node_name for p in obs.world.pods if p.node_name})
    found: dict[str, NodeView | None] = {}
    for name in names:
        raw = lookup(name)
        found[name] = None if raw is None else NodeView.from_dict(raw)
    return replace(obs, world=replace(obs.world, nodes=found))


def with_pod_groups(kube: Kube, obs: Observation, prefix: str, component: str) -> Observation:
    """Add the replica's PodGroups to the world: listed live, for a multi-pod replica or one whose pods
    name a PodGroup, by the replica's selector (every group under it, another owner's too: the planner
    refuses one at an Instance's name, as Go ``ControlledByUID`` does). A 404 means the scheduler-plugins CRD is not installed:
    no PodGroup is created (01 §3.6).

    A single-pod replica lists them too, but only while a planned Instance has no pod: that is the
    only case the planner's stale-group gate acts on (Go ``inferencereplica/reconciler.go``
    ``reconcileStaleSinglePodGroups`` keeps a group whose Instance has pods), so a steady single-pod
    replica costs no extra request, as Go's cached owner-UID index (``CachedOwnerHasPodGroups``)
    spares it the authoritative LIST. Go finds such a group by owner UID whatever its labels, so this
    list takes no label selector and keeps the groups the replica controls."""
    world = obs.world
    gang = sum(size for _, size in world.instance_shape) > 1
    if gang or any(c.LABEL_POD_GROUP in p.labels for p in world.pods):
        query: dict[str, str] = {"labelSelector": selector(prefix, component)}
    elif _planned_index_without_pod(world):
        query = {}
    else:
        return obs
    try:
        listed = kube.list(paths.pod_groups(world.replica.namespace), **query)["items"]
    except NotFound:
        return replace(obs, world=replace(world, gang_scheduling=False))
    if query:
        # Every group under the selector, another owner's too: one at an Instance's name is a
        # collision the planner refuses (Go ControlledByUID); each planner use checks the owner.
        groups = tuple(PodGroupView.from_dict(g) for g in listed)
    else:
        groups = tuple(
            view
            for view in (PodGroupView.from_dict(g) for g in listed)
            if view.owner_uid == world.replica.uid
        )
    return replace(obs, world=replace(world, pod_groups=groups))


def _planned_index_without_pod(world: World) -> bool:
    """An Instance the replica wants (an index below its replicas, or a row of its status) with no pod."""
    rows = world.replica.status.get("instanceStatuses") or []
    planned = set(range(world.replica.model.spec.effective_replicas))
    planned |= {r["index"] for r in rows if isinstance(r, Mapping) and isinstance(r.get("index"), int)}
    podded = {p.index for p in world.pods}
    return bool(planned - podded)
