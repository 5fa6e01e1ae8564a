"""A simulated cluster for the planner: in-memory API, kubelet, EndpointSlice controller and clock.

Deliberately small, but strict where the planner's guarantees live: UIDs, resourceVersions that bump
on every write, generation bumps on spec changes only, a status subresource, finalizers with
deletionTimestamp, 409 on stale resourceVersion / UID mismatch / AlreadyExists, graceful deletion
that takes time, and EndpointSlices that lag the pods by one tick.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from omereconcile import actions as A
from omereconcile.planner.rejection import record_rejection
from omereconcile.settings import OperatorSettings, RetryPolicy
from omereconcile.world import (
    LEDGER_KEY,
    UNREACHABLE_TAINT,
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
    format_time,
)
from omerender import constants as c

T0 = datetime(2025, 1, 1, tzinfo=UTC)
UID = "11111111-2222-3333-4444-555555555555"


class Conflict(Exception):
    """HTTP 409 (or 404 on a precondition): the executor stops the plan and replans."""


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def _admits(pod: dict[str, Any] | None, node: str) -> bool:
    """Does the pod's required node affinity admit ``node``? Terms are ORed, their requirements ANDed;
    only ``kubernetes.io/hostname`` In/NotIn are modelled (what the tests write)."""
    na = (((pod or {}).get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    terms = (na.get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or []
    if not terms:
        return True
    for term in terms:
        ok = True
        for e in term.get("matchExpressions") or []:
            if e.get("key") != "kubernetes.io/hostname":
                continue
            values = e.get("values") or []
            if (e.get("operator") == "In" and node not in values) or (
                e.get("operator") == "NotIn" and node in values
            ):
                ok = False
        if ok:
            return True
    return False


def base_replica(name: str = "llama-pool", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": c.API_VERSION,
        "kind": c.REPLICA_KIND,
        "metadata": {"name": name, "namespace": "llama-demo"},
        "spec": {"component": "engine", "modelRef": {"name": "llama-3-2-1b-instruct"}, **spec},
    }


@dataclass
class SimPod:
    obj: dict[str, Any]
    created: datetime
    behaviour: str
    ready_at: datetime | None = None
    gone_at: datetime | None = None
    # The runner's current run and its last termination, as the kubelet reports them.
    started_at: datetime | None = None
    last_terminated: dict[str, Any] | None = None
    restarted_at: datetime | None = None
    runtime_image: str | None = None  # what the kubelet runs; a spec change restarts the container


def _node_obj(name: str, at: datetime = T0) -> dict[str, Any]:
    ready = {
        "type": "Ready",
        "status": "True",
        "reason": "KubeletReady",
        "lastTransitionTime": format_time(at),
    }
    return {"metadata": {"name": name}, "spec": {}, "status": {"conditions": [ready]}}


@dataclass
class Sim:
    now: datetime = T0
    # The stuck-pod grace and the retry ladder OME's chart configures (the manager itself has no
    # grace, zero turns that path off, and without updateRetry the first failure holds).
    settings: OperatorSettings = field(
        default_factory=lambda: OperatorSettings(
            stuck_pod_grace_period=timedelta(seconds=60),
            update_retry=RetryPolicy(3, timedelta(minutes=1), timedelta(minutes=30), 2.0),
        )
    )
    ready_delay: float = 5.0
    delete_grace: float = 3.0
    stuck_after: float = 5.0  # a crashing container shows CrashLoopBackOff this long after start
    image: str = "vllm:v1"  # what the "runtime" renders today
    block: tuple[str, str] | None = None  # (reason, message) while the render is blocked
    behaviour: dict[str, str] = field(
        default_factory=dict
    )  # image -> ok|crash|imagepull|createerror|initconfig|never|unschedulable
    replica: dict[str, Any] | None = None
    # A multi-pod replica: a leader and this many workers per Instance (0: single-pod). Workers may
    # misbehave on their own: image -> behaviour for worker pods only.
    workers: int = 0
    gang_scheduling: bool = True  # False: the PodGroup CRD is not installed
    worker_behaviour: dict[str, str] = field(default_factory=dict)
    pod_groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    pods: dict[str, SimPod] = field(default_factory=dict)
    revisions: dict[str, dict[str, Any]] = field(default_factory=dict)
    service: dict[str, Any] | None = None
    slices: list[dict[str, Any]] = field(default_factory=list)
    events: list[A.RecordEvent] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    _seq: int = 0
    _rendered: dict[str, Any] = field(default_factory=dict)
    # Nodes, by name: the scheduler binds to the first one (by name) that is not tainted unreachable.
    node_objs: dict[str, dict[str, Any]] = field(
        default_factory=lambda: {n: _node_obj(n) for n in ("sim-node", "sim-node-b")}
    )
    silent: set[str] = field(default_factory=set)  # nodes whose kubelet stopped reporting
    # Faults of a node: a pod bound to it takes this behaviour (crash, never, ...) instead of its own.
    node_behaviour: dict[str, str] = field(default_factory=dict)
    # The migration audit ledger ConfigMap (planner/relocation.py), None until it is written.
    ledger: dict[str, Any] | None = None
    _ledger_written_at: str | None = None  # the version the last ledger write left
    # The template's affinity, as a user writes it in the runtime (rendered into every pod).
    affinity: dict[str, Any] | None = None
    # Images the API server refuses in an in-place pod patch (422 Invalid, e.g. an image reference
    # admission rejects). The executor records it on the row and ends the pass on it; so does the sim.
    refuse_in_place: set[str] = field(default_factory=set)
    # Images the API server refuses in a pod create (422 Invalid: a template field the CRD accepted
    # but pod validation does not). The executor records it on the row and ends the pass; so does the sim.
    refuse_create: set[str] = field(default_factory=set)

    # -- plumbing -----------------------------------------------------------------------------------
    def _next(self) -> str:
        self._seq += 1
        return str(self._seq)

    def _stamp(self, obj: dict[str, Any]) -> None:
        obj["metadata"]["resourceVersion"] = self._next()

    # -- user side ----------------------------------------------------------------------------------
    def apply_replica(self, obj: dict[str, Any]) -> None:
        obj = copy.deepcopy(obj)
        meta = obj["metadata"]
        meta.update(uid=UID, generation=1, creationTimestamp=format_time(self.now), finalizers=[])
        obj["status"] = {}
        self._stamp(obj)
        self.replica = obj

    def update_spec(self, **changes: Any) -> None:
        assert self.replica is not None
        spec = copy.deepcopy(self.replica["spec"])
        for key, value in changes.items():
            if value is None:
                spec.pop(key, None)
            else:
                spec[key] = value
        if spec != self.replica["spec"]:
            self.replica["spec"] = spec
            self.replica["metadata"]["generation"] += 1
            self._stamp(self.replica)

    def annotate(self, key: str, value: str | None) -> None:
        """A metadata-only edit (``kubectl annotate``): resourceVersion moves, generation does not."""
        assert self.replica is not None
        notes = self.replica["metadata"].setdefault("annotations", {})
        if value is None:
            notes.pop(key, None)
        else:
            notes[key] = value
        self._stamp(self.replica)

    def delete_replica(self) -> None:
        assert self.replica is not None
        if not self.replica["metadata"]["finalizers"]:
            self.replica = None
            return
        self.replica["metadata"]["deletionTimestamp"] = format_time(self.now)
        self._stamp(self.replica)

    @property
    def status(self) -> dict[str, Any]:
        assert self.replica is not None
        return self.replica["status"]  # type: ignore[no-any-return]

    # -- the render (what omerender would give the executor) ----------------------------------------
    def render(self) -> RenderOutcome:
        assert self.replica is not None
        if self.block is not None:
            return RenderBlock(*self.block)
        spec = self.replica["spec"]
        body: dict[str, Any] = {"podSpec": {"containers": [{"name": "ome-container", "image": self.image}]}}
        if spec.get("runners"):
            template = spec["runners"][0]["template"]
            body = {"podSpec": template.get("spec", {})}
            if (template.get("metadata") or {}).get("annotations"):
                body["podMeta"] = {"annotations": template["metadata"]["annotations"]}
        if self.workers:
            body["workerPodSpec"] = {"containers": [{"name": "ome-container", "image": self.image}]}
        payload = json.dumps(body, separators=(",", ":")).encode()
        cc = int(self.status.get("collisionCount") or 0)
        h = fnv32a(payload + f"|cc={cc}|".encode() + f"|uid={self.replica['metadata']['uid']}|".encode())
        hx = f"{h:08x}"
        return DesiredRevision(f"llama-pool-engine-{hx}", payload, hx, None, cc)

    def pod_factory(
        self, revision: str, index: int, incarnation: int, runner: str, ordinal: int
    ) -> dict[str, Any]:
        # Like the executor: the render of this pass, or a stored revision (rollback).
        data = self._rendered.get(revision) or (self.revisions.get(revision) or {}).get("data")
        if data is None:  # as the executor's factory (cluster/observe.py) answers a gone revision
            raise LookupError(f"no ControllerRevision {revision} to build a pod from")
        image = data["podSpec"]["containers"][0]["image"]
        name = f"llama-pool-engine-{index}-{runner}-{ordinal}"
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": "llama-demo",
                "labels": {
                    c.LABEL_INFERENCESERVICE: "llama-pool",
                    c.LABEL_COMPONENT: "engine",
                    c.LABEL_MANAGED_BY: c.MANAGED_BY_VALUE,
                    c.LABEL_INSTANCE_INDEX: str(index),
                    c.LABEL_INSTANCE_INCARNATION: str(incarnation),
                    c.LABEL_RUNNER: runner,
                    c.LABEL_POD_ORDINAL: str(ordinal),
                    c.LABEL_REVISION_HASH: revision.rsplit("-", 1)[-1],
                    **({c.LABEL_POD_GROUP: f"llama-pool-engine-{index}"} if self.workers else {}),
                },
            },
            "spec": {
                "hostname": name,
                "subdomain": "llama-pool-engine-headless",
                "readinessGates": [{"conditionType": c.SERVING_GATE}],
                "containers": [{"name": "ome-container", "image": image}],
                **({"affinity": copy.deepcopy(self.affinity)} if self.affinity else {}),
            },
        }

    def ledger_entries(self) -> list[dict[str, Any]]:
        """The relocation ledger's ``history.json`` entries (none before it is written)."""
        if self.ledger is None:
            return []
        return list(json.loads(self.ledger["data"][LEDGER_KEY]).get("entries") or [])

    # -- observe ------------------------------------------------------------------------------------
    def observe(self) -> World:
        assert self.replica is not None
        render = self.render()
        if isinstance(render, DesiredRevision):
            self._rendered[render.name] = json.loads(render.payload)
        return World(
            replica=ReplicaView.from_dict(self.replica),
            render=render,
            now=self.now,
            revisions=tuple(RevisionView.from_dict(r) for r in self.revisions.values()),
            pods=tuple(
                PodView.from_dict(p.obj)
                for p in sorted(self.pods.values(), key=lambda p: p.obj["metadata"]["name"])
            ),
            service=ServiceView.from_dict(self.service),
            endpoints=Endpoints.from_slices(self.slices),
            settings=self.settings,
            pod_factory=self.pod_factory,
            instance_shape=self.instance_shape(),
            pod_groups=tuple(PodGroupView.from_dict(g) for _, g in sorted(self.pod_groups.items())),
            gang_scheduling=self.gang_scheduling,
            nodes=self._node_views(),
            ledger=LedgerView.from_dict(self.ledger),
        )

    # -- nodes: a kubelet that stops, the node controller's marks, a deleted Node --------------------------
    def _node_views(self) -> dict[str, NodeView | None]:
        names = {
            str(p.obj["spec"].get("nodeName")) for p in self.pods.values() if p.obj["spec"].get("nodeName")
        }
        views: dict[str, NodeView | None] = {}
        for n in sorted(names):
            if n in self.node_objs:
                views[n] = NodeView.from_dict(self.node_objs[n])
            else:  # a node this sim does not model is healthy, unless it was deleted
                views[n] = None if n in self.silent else NodeView(n, ready="True")
        return views

    def _schedulable_node(self, pod: dict[str, Any] | None = None) -> str | None:
        """The first node (by name) that is not tainted unreachable, not cordoned, and that the pod's
        required node affinity admits (hostname In/NotIn requirements, as the relocation overlay and a
        template pinning hosts write them); None when no node fits."""
        fits = [
            name
            for name, node in sorted(self.node_objs.items())
            if not node["spec"].get("unschedulable")
            and not any(t.get("key") == UNREACHABLE_TAINT for t in node["spec"].get("taints", []))
        ] or ["sim-node"]  # with every node down, the first one (its pods never run)
        return next((name for name in fits if _admits(pod, name)), None)

    def node_of(self, pod: str) -> str:
        return str(self.pods[pod].obj["spec"].get("nodeName") or "")

    def silence_node(self, name: str) -> None:
        """The node's kubelet stops reporting, and the node controller does what it does about it: Ready
        Unknown, the unreachable taints, and every pod on the node marked not Ready (``MarkPodsNotReady``
        sets only the pod's Ready condition; ContainersReady keeps what the kubelet last wrote). Its pods
        stop changing, and a deletion of one never completes: no kubelet is left to finish it."""
        self.silent.add(name)
        now = format_time(self.now)
        node = self.node_objs[name]
        node["status"]["conditions"] = [
            {
                "type": "Ready",
                "status": "Unknown",
                "reason": "NodeStatusUnknown",
                "message": "Kubelet stopped posting node status.",
                "lastTransitionTime": now,
            }
        ]
        node["spec"]["taints"] = [
            {"key": UNREACHABLE_TAINT, "effect": "NoSchedule", "timeAdded": now},
            {"key": UNREACHABLE_TAINT, "effect": "NoExecute", "timeAdded": now},
        ]
        for p in self.pods.values():
            if p.obj["spec"].get("nodeName") == name:
                p.gone_at = None
                if self._set_cond(p.obj, "Ready", "False"):
                    self._stamp(p.obj)
        self._endpoint_slices()

    def revive_node(self, name: str) -> None:
        """The kubelet reports again: Ready, untainted, its pods driven again."""
        self.silent.discard(name)
        self.node_objs[name] = _node_obj(name, self.now)
        self.tick()

    def delete_node(self, name: str) -> None:
        self.node_objs.pop(name, None)
        self.silent.add(name)

    def user_delete(self, name: str) -> None:
        """``kubectl delete pod``: graceful, finished by the kubelet unless its node is silent."""
        p = self.pods[name]
        deadline = self.now + timedelta(seconds=self.delete_grace)
        p.obj["metadata"]["deletionTimestamp"] = format_time(deadline)
        p.gone_at = None if p.obj["spec"].get("nodeName") in self.silent else deadline
        self._stamp(p.obj)

    def instance_shape(self) -> tuple[tuple[str, int], ...]:
        if not self.workers:
            return ((c.RUNNER_DEFAULT, 1),)
        return ((c.RUNNER_LEADER, 1), (c.RUNNER_WORKER, self.workers))

    # -- the API: apply one action --------------------------------------------------------------------
    def apply(self, act: A.Action, replica_rv: str) -> None:
        assert self.replica is not None
        self.writes.append(type(act).__name__)
        if isinstance(act, A.CreatePod):
            if act.name in self.pods:
                self.violations.append(f"create of existing pod {act.name}")
                raise Conflict(f"pod {act.name} already exists")
            refused = sorted({ct.get("image") for ct in act.pod["spec"]["containers"]} & self.refuse_create)
            if refused:
                # What the executor does with the 422 (planner/rejection.py): recorded on the row for
                # the next pass to dispose, and the pass ends on it.
                message = (
                    f'Pod "{act.name}" is invalid: spec.containers[0].image: Invalid value: "{refused[0]}"'
                )
                labels = act.pod["metadata"].get("labels") or {}
                index = labels.get(c.LABEL_INSTANCE_INDEX)
                recorded = (
                    record_rejection(self.status, int(index), message, self.now)
                    if index is not None
                    else None
                )
                self.record_refusal(recorded, False, "", "", message)
            obj = copy.deepcopy(dict(act.pod))
            obj["metadata"].update(uid=f"pod-{self._next()}", creationTimestamp=format_time(self.now))
            obj["metadata"]["ownerReferences"] = [
                {"kind": "InferenceReplica", "uid": UID, "controller": True}
            ]
            image = obj["spec"]["containers"][0]["image"]
            obj["status"] = {"phase": "Pending", "conditions": []}
            self._stamp(obj)
            behaviour = self.behaviour.get(image, "ok")
            if obj["metadata"]["labels"].get(c.LABEL_RUNNER) == c.RUNNER_WORKER:
                behaviour = self.worker_behaviour.get(image, behaviour)
            if behaviour == "gated":
                # An admission webhook (Kueue) queued the pod: it carries a scheduling gate until
                # ``ungate`` lifts it; the scheduler does not place it meanwhile.
                obj["spec"]["schedulingGates"] = [{"name": "kueue.x-k8s.io/admission"}]
            group = obj["metadata"]["labels"].get(c.LABEL_POD_GROUP)
            if group is not None and self.gang_scheduling and group not in self.pod_groups:
                self.violations.append(f"pod {act.name} created before its PodGroup {group}")
            self.pods[act.name] = SimPod(obj, self.now, behaviour)
        elif isinstance(act, A.CreatePodGroup):
            if act.name in self.pod_groups:
                self.violations.append(f"create of existing PodGroup {act.name}")
                return  # the executor takes AlreadyExists as done
            obj = copy.deepcopy(dict(act.pod_group))
            obj["metadata"]["uid"] = f"pg-{self._next()}"
            obj["metadata"].setdefault(
                "ownerReferences", [{"kind": "InferenceReplica", "uid": UID, "controller": True}]
            )
            self._stamp(obj)
            self.pod_groups[act.name] = obj
        elif isinstance(act, A.UpdatePodGroup):
            group = self.pod_groups.get(act.name)
            if group is None:
                return  # the executor takes NotFound as gone
            meta = group["metadata"]
            if meta["uid"] != act.uid or meta["resourceVersion"] != act.resource_version:
                raise Conflict(f"PodGroup {act.name} changed since it was read")
            _merge_patch(group, act.patch)
            self._stamp(group)
        elif isinstance(act, A.DeletePodGroup):
            group = self.pod_groups.get(act.name)
            if group is None or group["metadata"]["uid"] != act.uid:
                raise Conflict(f"PodGroup {act.name} is gone or has another uid")
            members = [
                n
                for n, p in self.pods.items()
                if p.obj["metadata"]["labels"].get(c.LABEL_POD_GROUP) == act.name
            ]
            if members and (group.get("status") or {}).get("phase") != "Failed":
                # A group the gang scheduler failed is reset whatever members stand (Go gang.go
                # EnsurePodGroupsWithState); any other is deleted only once its pods are gone.
                self.violations.append(f"PodGroup {act.name} deleted while its pods {members} exist")
            if group["metadata"].get("finalizers"):
                # A finalizer holds the group: the delete only marks it Terminating (a repeat delete
                # of a Terminating object is accepted and changes nothing), ``release_pod_group`` ends it.
                if not group["metadata"].get("deletionTimestamp"):
                    group["metadata"]["deletionTimestamp"] = format_time(self.now)
                    self._stamp(group)
                return
            del self.pod_groups[act.name]
        elif isinstance(act, A.DeletePod):
            pod = self._pod(act.name, act.uid)
            if pod.obj["metadata"].get("deletionTimestamp"):
                self.violations.append(f"second delete of pod {act.name} uid {act.uid}")
                return
            gate = next(
                (
                    cd["status"]
                    for cd in pod.obj["status"].get("conditions", [])
                    if cd["type"] == c.SERVING_GATE
                ),
                None,
            )
            if gate == "True" and pod.obj["status"].get("phase") not in ("Failed", "Succeeded"):
                self.violations.append(
                    f"delete of pod {act.name} while its serving gate is True (not drained)"
                )
            # The API server stamps the deletion deadline: the request time plus the grace.
            grace = self.delete_grace if act.grace_period_seconds is None else act.grace_period_seconds
            deadline = self.now + timedelta(seconds=grace)
            pod.gone_at = None if pod.obj["spec"].get("nodeName") in self.silent else deadline
            pod.obj["metadata"]["deletionTimestamp"] = format_time(deadline)
            self._stamp(pod.obj)
        elif isinstance(act, A.ForceDeletePod):
            gone = self.pods.get(act.name)
            if gone is not None and gone.obj["metadata"]["uid"] == act.uid:
                pod = gone
                if pod.obj["metadata"].get("finalizers"):
                    self.violations.append(f"force-delete of pod {act.name}, which has finalizers")
                node = pod.obj["spec"].get("nodeName")
                if node not in self.silent:
                    self.violations.append(f"force-delete of pod {act.name} on the live node {node}")
                del self.pods[act.name]
        elif isinstance(act, A.SetServingGate):
            pod = self._pod(act.name, act.uid)
            if pod.obj["metadata"]["resourceVersion"] != act.resource_version:
                raise Conflict(f"pod {act.name} changed since it was read")
            # A status patch lands as sent (merge key `type`): the planner's whole condition.
            conds = [
                cd for cd in pod.obj["status"].setdefault("conditions", []) if cd["type"] != c.SERVING_GATE
            ]
            conds.append(
                {
                    "type": c.SERVING_GATE,
                    "status": "True" if act.status else "False",
                    "reason": act.condition_reason,
                    "message": act.message,
                    "lastTransitionTime": act.last_transition_time or format_time(self.now),
                }
            )
            pod.obj["status"]["conditions"] = conds
            self._stamp(pod.obj)
        elif isinstance(act, A.PatchPodInPlace):
            pod = self._pod(act.name, act.uid)
            if pod.obj["metadata"]["resourceVersion"] != act.resource_version:
                raise Conflict(f"pod {act.name} changed since it was read")
            refused = sorted(set(act.images.values()) & self.refuse_in_place)
            if refused:
                # What the executor does with the 422 (planner/rejection.py): recorded on the row for
                # the next pass to dispose, and the pass ends on it.
                message = f"Pod {act.name} is invalid: spec.containers[0].image: {refused[0]}"
                recorded = (
                    record_rejection(self.status, act.index, message, self.now)
                    if act.index is not None
                    else None
                )
                self.record_refusal(recorded, False, "", "", message)
            meta = pod.obj["metadata"]
            for key, value in act.annotations.items():
                notes = meta.setdefault("annotations", {})
                if value is None:
                    notes.pop(key, None)
                else:
                    notes[key] = value
            meta["labels"].update(act.labels)
            for ct in pod.obj["spec"]["containers"]:
                ct["image"] = act.images.get(ct["name"], ct["image"])
            self._stamp(pod.obj)
        elif isinstance(act, A.WriteLedger):
            self.writes.append(f"ledger {act.name}")
            if act.chained and self._ledger_written_at is not None:
                # Pinned to what the plan's previous ledger write left (the executor tracks it).
                act = replace(act, resource_version=self._ledger_written_at)
            if act.resource_version is None:
                if self.ledger is not None:
                    raise Conflict(f"configmap {act.name} exists")
                self.ledger = {
                    "metadata": {"name": act.name, "labels": dict(act.labels), "ownerReferences": []},
                    "data": {},
                }
            elif self.ledger is None or self.ledger["metadata"]["resourceVersion"] != act.resource_version:
                raise Conflict(f"configmap {act.name} changed since it was read")
            if act.owner_references is not None:
                self.ledger["metadata"]["ownerReferences"] = [dict(r) for r in act.owner_references]
            self.ledger["data"][LEDGER_KEY] = act.data
            self._stamp(self.ledger)
            self._ledger_written_at = self.ledger["metadata"]["resourceVersion"]
        elif isinstance(act, A.WriteStatus):
            if self.replica["metadata"]["resourceVersion"] != replica_rv:
                raise Conflict("replica changed since it was read")
            self.replica["status"] = copy.deepcopy(dict(act.status))
            self._stamp(self.replica)
            replica_rv = self.replica["metadata"]["resourceVersion"]
        elif isinstance(act, A.EnsureService):
            if self.service is not None:
                raise Conflict("service exists")
            self.service = copy.deepcopy(dict(act.service))
            self.service["metadata"]["uid"] = f"svc-{self._next()}"
        elif isinstance(act, A.PatchService):
            assert self.service is not None
            for k, v in dict(act.patch.get("spec", {})).items():
                if v is None:
                    self.service["spec"].pop(k, None)
                else:
                    self.service["spec"][k] = v
        elif isinstance(act, A.DeleteService):
            self.service = None
            self.slices = []
        elif isinstance(act, A.CreateRevision):
            if act.name in self.revisions:
                raise Conflict(f"revision {act.name} exists")
            obj = copy.deepcopy(dict(act.revision))
            obj["metadata"]["creationTimestamp"] = format_time(self.now)
            self.revisions[act.name] = obj
        elif isinstance(act, A.DeleteRevision):
            self.revisions.pop(act.name, None)
        elif isinstance(act, A.AddFinalizer):
            fins = self.replica["metadata"]["finalizers"]
            if act.finalizer not in fins:
                fins.append(act.finalizer)
                self._stamp(self.replica)
        elif isinstance(act, A.RemoveFinalizer):
            fins = self.replica["metadata"]["finalizers"]
            if act.finalizer in fins:
                fins.remove(act.finalizer)
            if not fins and self.replica["metadata"].get("deletionTimestamp"):
                self.replica = None
        elif isinstance(act, A.RemoveAnnotation):
            notes = self.replica["metadata"].get("annotations") or {}
            if act.key in notes:
                if self.replica["metadata"]["resourceVersion"] != replica_rv:
                    raise Conflict("replica changed since it was read")
                del notes[act.key]
                self._stamp(self.replica)
        elif isinstance(act, A.RecordEvent):
            self.events.append(act)

    def record_refusal(
        self, status: dict[str, Any] | None, announce: bool, reason: str, text: str, message: str
    ) -> None:
        """What the executor does with a refused pod write (``Executor._record_on_row``): the
        recorded status lands, the event when it is announced, and the pass ends on the refusal."""
        if status is not None:
            assert self.replica is not None
            self.replica["status"] = status
            self._stamp(self.replica)
            if announce:
                self.events.append(A.RecordEvent("Normal", reason, text))
        raise Conflict(message)

    def _pod(self, name: str, uid: str) -> SimPod:
        pod = self.pods.get(name)
        if pod is None:
            raise Conflict(f"pod {name} not found")
        if pod.obj["metadata"]["uid"] != uid:
            self.violations.append(f"write to pod {name} with a stale uid {uid}")
            raise Conflict(f"pod {name} has another uid")
        return pod

    def _set_cond(self, obj: dict[str, Any], type_: str, status: str, reason: str = "") -> bool:
        conds = obj["status"].setdefault("conditions", [])
        for cd in conds:
            if cd["type"] == type_:
                if cd["status"] == status and cd.get("reason", "") == reason:
                    return False
                cd.update(status=status, lastTransitionTime=format_time(self.now), reason=reason)
                return True
        conds.append(
            {"type": type_, "status": status, "lastTransitionTime": format_time(self.now), "reason": reason}
        )
        return True

    # -- kubelet, EndpointSlice controller, clock -------------------------------------------------------
    def next_event(self) -> datetime | None:
        times: list[datetime] = []
        for p in self.pods.values():
            if p.gone_at:
                times.append(p.gone_at)
            if p.behaviour == "ok":
                times.append(p.created + timedelta(seconds=self.ready_delay))
                if p.restarted_at is not None:
                    times.append(p.restarted_at + timedelta(seconds=self.ready_delay))
            elif p.behaviour in ("crash", "imagepull", "createerror"):
                times.append(p.created + timedelta(seconds=self.stuck_after))
        future = [t for t in times if t > self.now]
        return min(future) if future else None

    def release_pod_group(self, name: str) -> None:
        """The finalizers' owner lets a PodGroup go: its finalizers are removed, and a Terminating
        group is deleted."""
        group = self.pod_groups[name]
        group["metadata"].pop("finalizers", None)
        if group["metadata"].get("deletionTimestamp"):
            del self.pod_groups[name]
        else:
            self._stamp(group)

    def ungate(self, name: str) -> None:
        """The admission authority (Kueue) admits a gated pod: its scheduling gates are lifted and it
        is scheduled and started like any other (``ready_delay`` from now)."""
        p = self.pods[name]
        p.obj["spec"].pop("schedulingGates", None)
        p.behaviour = self.behaviour.get(p.obj["spec"]["containers"][0]["image"], "ok")
        if p.behaviour == "gated":
            p.behaviour = "ok"
        p.created = self.now
        self._stamp(p.obj)
        self._kubelet(p)
        self._endpoint_slices()

    def restart_runner(self, name: str, reason: str = "Error", exit_code: int = 1) -> None:
        """The kubelet restarts a running pod's runner container in place (same pod, same UID): the
        run that ended is its ``lastState.terminated``, the new run starts now and is ready again
        after ``ready_delay``."""
        p = self.pods[name]
        p.last_terminated = {"reason": reason, "exitCode": exit_code, "finishedAt": format_time(self.now)}
        p.started_at = self.now
        p.restarted_at = self.now
        self._kubelet(p)
        self._endpoint_slices()

    def tick(self) -> None:
        """Kubelet and EndpointSlice controller catch up with the clock."""
        for name in [n for n, p in self.pods.items() if p.gone_at and self.now >= p.gone_at]:
            del self.pods[name]
        for p in self.pods.values():
            self._kubelet(p)
        self._endpoint_slices()

    def _kubelet(self, p: SimPod) -> None:
        obj, st = p.obj, p.obj["status"]
        if obj["spec"].get("nodeName") in self.silent:
            return  # no kubelet reports this pod any more
        changed = False
        if obj["spec"].get("schedulingGates"):
            if self._set_cond(obj, "PodScheduled", "False", "SchedulingGated"):
                self._stamp(obj)
            return
        if not obj["spec"].get("nodeName") and p.behaviour != "unschedulable":
            node = self._schedulable_node(obj)  # the scheduler's binding
            if node is None:
                changed |= self._set_cond(obj, "PodScheduled", "False", "Unschedulable")
                if changed:
                    self._stamp(obj)
                return
            obj["spec"]["nodeName"] = node
            p.behaviour = self.node_behaviour.get(node, p.behaviour)
            changed = True
        if p.behaviour == "unschedulable":
            changed |= self._set_cond(obj, "PodScheduled", "False", "Unschedulable")
        else:
            changed |= self._set_cond(obj, "PodScheduled", "True")
            if st.get("phase") == "Pending" and p.behaviour != "pending":
                st["phase"] = "Running"
                changed = True
            if p.started_at is None:
                p.started_at = self.now
            spec_image = obj["spec"]["containers"][0]["image"]
            if p.runtime_image is None:
                p.runtime_image = spec_image
            elif p.runtime_image != spec_image and not obj["metadata"].get("deletionTimestamp"):
                # A real kubelet kills and restarts a container whose image changed (same pod, same
                # UID); the new one is ready after its own start-up delay.
                p.last_terminated = {
                    "reason": "Completed",
                    "exitCode": 0,
                    "finishedAt": format_time(self.now),
                }
                p.started_at = p.restarted_at = self.now
                p.runtime_image = spec_image
                p.behaviour = self.behaviour.get(spec_image, "ok")
            age = (self.now - p.created).total_seconds()
            cr = (
                p.behaviour == "ok"
                and age >= self.ready_delay
                and (
                    p.restarted_at is None or (self.now - p.restarted_at).total_seconds() >= self.ready_delay
                )
                and not obj["metadata"].get("deletionTimestamp")
            )
            changed |= self._set_cond(obj, "ContainersReady", "True" if cr else "False")
            waiting = None
            if p.behaviour == "crash" and age >= self.stuck_after:
                waiting = "CrashLoopBackOff"
            elif p.behaviour == "imagepull" and age >= self.stuck_after:
                waiting = "ImagePullBackOff"
            elif p.behaviour == "createerror" and age >= self.stuck_after:
                waiting = "CreateContainerError"  # the runtime refused to create the container
            elif p.behaviour == "pending":
                waiting = "ContainerCreating"  # a slow start: no terminal reason, never ready
            init_waiting = "CreateContainerConfigError" if p.behaviour == "initconfig" else None
            ics = (
                [{"name": "model-init", "state": {"waiting": {"reason": init_waiting}}}]
                if init_waiting
                else []
            )
            if st.get("initContainerStatuses", []) != ics:
                st["initContainerStatuses"] = ics
                changed = True
            running = {"startedAt": format_time(p.started_at)}
            cs: list[dict[str, Any]] = [
                {
                    "name": "ome-container",
                    "image": p.runtime_image,
                    "ready": cr,
                    "restartCount": (1 if waiting == "CrashLoopBackOff" else 0)
                    + (p.restarted_at is not None),
                    "state": {"waiting": {"reason": waiting}} if waiting else {"running": running},
                }
            ]
            if p.last_terminated is not None:
                cs[0]["lastState"] = {"terminated": dict(p.last_terminated)}
            if st.get("containerStatuses") != cs:
                st["containerStatuses"] = cs
                changed = True
        gate = next((cd["status"] for cd in st.get("conditions", []) if cd["type"] == c.SERVING_GATE), None)
        cr_now = any(
            cd["type"] == "ContainersReady" and cd["status"] == "True" for cd in st.get("conditions", [])
        )
        changed |= self._set_cond(obj, "Ready", "True" if cr_now and gate == "True" else "False")
        if changed:
            self._stamp(obj)

    def _endpoint_slices(self) -> None:
        if self.service is None:
            self.slices = []
            return
        sel = self.service["spec"].get("selector", {})
        eps = []
        for name, p in sorted(self.pods.items()):
            labels = p.obj["metadata"]["labels"]
            if any(labels.get(k) != v for k, v in sel.items()) or p.obj["status"].get("phase") != "Running":
                continue
            ready = any(
                cd["type"] == "Ready" and cd["status"] == "True" for cd in p.obj["status"]["conditions"]
            )
            term = bool(p.obj["metadata"].get("deletionTimestamp"))
            eps.append(
                {
                    "targetRef": {"kind": "Pod", "name": name},
                    # publishNotReadyAddresses: Kubernetes marks every endpoint ready; serving follows the pod.
                    "conditions": {"ready": True, "serving": ready, "terminating": term},
                }
            )
        self.slices = [{"endpoints": eps}]

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)
        self.tick()

    # -- views for tests ---------------------------------------------------------------------------------
    def rows(self) -> list[dict[str, Any]]:
        return list(self.status.get("instanceStatuses", [])) if self.replica else []

    def condition(self, type_: str) -> dict[str, Any] | None:
        return next((cd for cd in self.status.get("conditions", []) if cd["type"] == type_), None)

    def live_pods(self) -> list[str]:
        return sorted(n for n, p in self.pods.items() if not p.obj["metadata"].get("deletionTimestamp"))

    def serving_indices(self) -> set[int]:
        out = set()
        for p in self.pods.values():
            if p.obj["metadata"].get("deletionTimestamp"):
                continue
            conds = {cd["type"]: cd["status"] for cd in p.obj["status"].get("conditions", [])}
            if conds.get("ContainersReady") == "True" and conds.get(c.SERVING_GATE) == "True":
                out.add(int(p.obj["metadata"]["labels"][c.LABEL_INSTANCE_INDEX]))
        return out

    def serving_instances(self) -> set[int]:
        """Instances all of whose pods serve (a gang counts only whole, 01 §4.3)."""
        if not self.workers:
            return self.serving_indices()
        count: dict[int, int] = {}
        for p in self.pods.values():
            if p.obj["metadata"].get("deletionTimestamp"):
                continue
            conds = {cd["type"]: cd["status"] for cd in p.obj["status"].get("conditions", [])}
            if conds.get("ContainersReady") == "True" and conds.get(c.SERVING_GATE) == "True":
                idx = int(p.obj["metadata"]["labels"][c.LABEL_INSTANCE_INDEX])
                count[idx] = count.get(idx, 0) + 1
        return {i for i, n in count.items() if n >= 1 + self.workers}

    def gate_of(self, name: str) -> str | None:
        p = self.pods[name]
        return next(
            (cd["status"] for cd in p.obj["status"]["conditions"] if cd["type"] == c.SERVING_GATE), None
        )

    def event_reasons(self) -> list[str]:
        return [e.event_reason for e in self.events]


def _merge_patch(target: dict[str, Any], patch: Mapping[str, Any]) -> None:
    """RFC 7386 JSON merge patch, in place: None deletes a key, a mapping merges, anything else
    (lists included) replaces."""
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, Mapping):
            current = target.get(key)
            if not isinstance(current, dict):
                current = {}
                target[key] = current
            _merge_patch(current, value)
        else:
            target[key] = copy.deepcopy(value)
