"""The InferenceReplica webhook rules (01 §7, the seed's "What the webhook rejects"), row by row.

Messages are pinned verbatim: users read them in `kubectl apply` output, and OME's text is the contract.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omerender.admission import (
    AdmissionDecision,
    AdmissionRequest,
    admission_review_response,
    request_from_review,
    review,
)
from omerender.catalog import Catalog, ControllerIdentity
from omerender.models import RuntimeResource

NS = "prod-models"
CONTROLLER = "system:serviceaccount:ome:ome-controller-manager"
USER = "example-user"
GC = "system:serviceaccount:kube-system:generic-garbage-collector"
IDENTITY = ControllerIdentity(usernames=frozenset({CONTROLLER}))
MIGRATION_KEY = "ome.io/migration-request-v1-0f3a"
COMPOSED = "ome.io/composed-fields"

Obj = dict[str, Any]

# -- fixtures ------------------------------------------------------------------------------------------


def runners() -> list[Obj]:
    return [
        {
            "name": "default",
            "size": 1,
            "template": {"spec": {"containers": [{"name": "ome-container", "image": "sgl:1.0"}]}},
        }
    ]


def standalone(name: str = "pool-a") -> Obj:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"component": "engine", "runners": runners()},
    }


def isvc_ref(name: str = "llama", api_version: str = "ome.io/v1beta1", uid: str = "isvc-uid") -> Obj:
    return {
        "apiVersion": api_version,
        "kind": "InferenceService",
        "name": name,
        "uid": uid,
        "controller": True,
    }


def controller_ref(api_version: str, kind: str, name: str) -> Obj:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": f"{kind}-{name}",
        "controller": True,
    }


def projected() -> Obj:
    obj = standalone("llama-engine")
    obj["metadata"]["ownerReferences"] = [isvc_ref()]
    obj["spec"]["parentRef"] = {"name": "llama"}
    return obj


def orphan() -> Obj:
    obj = projected()
    del obj["metadata"]["ownerReferences"]
    return obj


def refs_replica(component: str = "engine", kind: str | None = "ClusterServingRuntime") -> Obj:
    obj = standalone()
    del obj["spec"]["runners"]
    obj["spec"]["component"] = component
    obj["spec"]["runtimeRef"] = {"name": "runtime-a"} | ({"kind": kind} if kind else {})
    return obj


def edit(obj: Obj, fn: Callable[[Obj], object]) -> Obj:
    out = copy.deepcopy(obj)
    fn(out)
    return out


def with_spec(obj: Obj, **fields: Any) -> Obj:
    return edit(obj, lambda o: o["spec"].update(fields))


def without_spec(obj: Obj, *names: str) -> Obj:
    return edit(obj, lambda o: [o["spec"].pop(n, None) for n in names])


def with_annotation(obj: Obj, key: str, value: str) -> Obj:
    return edit(obj, lambda o: o["metadata"].setdefault("annotations", {}).__setitem__(key, value))


def without_annotation(obj: Obj, key: str) -> Obj:
    return edit(obj, lambda o: o["metadata"].get("annotations", {}).pop(key, None))


def with_owners(obj: Obj, *refs: Obj) -> Obj:
    return edit(obj, lambda o: o["metadata"].__setitem__("ownerReferences", [dict(r) for r in refs]))


def with_image(obj: Obj, image: str) -> Obj:
    return edit(
        obj,
        lambda o: o["spec"]["runners"][0]["template"]["spec"]["containers"][0].__setitem__("image", image),
    )


def with_block_owner_deletion(obj: Obj, block: bool) -> Obj:
    return edit(
        obj, lambda o: [r.__setitem__("blockOwnerDeletion", block) for r in o["metadata"]["ownerReferences"]]
    )


def runtime(
    name: str,
    *,
    kind: str = "ClusterServingRuntime",
    pieces: tuple[str, ...] = ("engineConfig",),
    parent: str | None = None,
    namespace: str | None = None,
) -> Obj:
    meta: Obj = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if parent:
        meta["annotations"] = {"ome.io/inherit-from": parent}
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": kind,
        "metadata": meta,
        "spec": {piece: {"runner": {"name": "ome-container", "image": "sgl:1.0"}} for piece in pieces},
    }


def isvc(name: str) -> Obj:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": name, "namespace": NS},
    }


def catalog(*objs: Obj) -> Catalog:
    # As the reconciler builds the webhook's catalog from live objects (omereconcile.cluster.observe): the API
    # server has validated them, so no CRD check here.
    return Catalog.from_objects(objs, strict=False)


EMPTY = catalog()


def create(
    obj: Obj,
    user: str = USER,
    *,
    identity: ControllerIdentity | None = IDENTITY,
    groups: tuple[str, ...] = ("system:authenticated",),
    error: str | None = None,
) -> AdmissionRequest:
    return AdmissionRequest("CREATE", obj, None, user, groups, identity, error)


def update(
    old: Obj,
    new: Obj,
    user: str = USER,
    *,
    identity: ControllerIdentity | None = IDENTITY,
    groups: tuple[str, ...] = ("system:authenticated",),
    error: str | None = None,
) -> AdmissionRequest:
    return AdmissionRequest("UPDATE", new, old, user, groups, identity, error)


def prefixed(name: str, message: str) -> str:
    return f"InferenceReplica {NS}/{name}: {message}"


def denied_with(decision: AdmissionDecision, *messages: str, code: int = 403) -> None:
    assert not decision.allowed, decision
    assert decision.messages == messages
    assert decision.code == code


def allowed(decision: AdmissionDecision, message: str | None = None) -> None:
    assert decision.allowed, decision.messages
    assert decision.code == 200
    if message is not None:
        assert decision.messages == (message,)


# -- verbatim messages ---------------------------------------------------------------------------------

PARENT_REF = (
    "spec.parentRef is set by the InferenceService controller on the replicas it projects; "
    "omit it on a standalone InferenceReplica"
)
PLACEMENT = "spec.placementExecution and spec.placementReplicaLimit are written only by the InferenceService controller"
EXCLUSIVE = "spec.runners and spec.modelRef/spec.runtimeRef are exclusive; a replica renders from one source"
NO_SOURCE = "spec.runners is required unless spec.modelRef or spec.runtimeRef is set"
PINNED = (
    "spec.runtimeRef.autoSync=false and spec.runtimeRef.revision are not honored on an InferenceReplica; "
    "the live runtime renders"
)
MIN_READY = "spec.lifecycle.minReadySeconds is not read on an InferenceReplica; set spec.minReadySeconds"
BAD_NAME = (
    "a standalone replica's name is the prefix of its pod and Service names and must match "
    '"[a-z]([-a-z0-9]*[a-z0-9])?"'
)
MIGRATION = (
    "manual migration is not available on a standalone replica; it surges through the per-revision Service "
    "only an InferenceService creates"
)
OWNER_REF = (
    "only the InferenceService controller may set an InferenceService controller owner reference "
    "or change a projected replica's"
)
COMPOSED_DENIAL = (
    "the ome.io/composed-fields annotation is written by the InferenceService controller; to release the "
    "fields it names, remove the reference on the InferenceService instead"
)
COMPOSER = (
    "the InferenceService controller writes only rollout-control fields (pacing.partition, paused, pauseMode, "
    "pacing.rollbackToRevision, pairingProtocol) on a replica it does not project; the replica's owner writes "
    "its other fields"
)
CONTROLLER_CREATE = "the InferenceService controller creates only the replicas it projects; create a standalone replica as a user"
# Go's denyControllerStandaloneCreate without an identity: no "<ns>/<name>: " prefix, the name runs on.
CONTROLLER_CREATE_BY_ANNOTATION = (
    f"InferenceReplica {NS}/pool-a carries the ome.io/controller-write=true annotation, which marks a write by "
    "the InferenceService controller, and the controller creates only the replicas it projects; create a "
    "standalone replica without it"
)
NO_DECODER = 'ClusterServingRuntime "runtime-a" has no decoder piece; a decoder replica cannot render from it'
MISSING_PARENT = 'runtime "runtime-a" inherits from "runtime-base", which does not exist, so the runtime cannot be resolved'
VOLUME = (
    'runner "default" container "{c}": volumeMount "{v}" has no matching volume in the pod (for a multi-node '
    "runtime declare it under engineConfig.leader.volumes / engineConfig.worker.volumes)"
)


def scaler(cls: str) -> str:
    return (
        f'spec.autoscaler.class "{cls}" creates no scaler on a standalone InferenceReplica; target the scale '
        'subresource with your own HorizontalPodAutoscaler or ScaledObject, or use class "External"'
    )


def projected_by(user: str = USER) -> str:
    return (
        f"InferenceReplica {NS}/llama-engine is projected by InferenceService {NS}/llama, whose controller alone "
        f'writes its spec; edit the InferenceService instead (request from "{user}")'
    )


def projected_no_identity(operation: str) -> str:
    return (
        f"InferenceReplica {NS}/llama-engine is projected by InferenceService {NS}/llama and rejects a direct "
        f"{operation} without the ome.io/controller-write=true annotation; edit the InferenceService instead"
    )


def collision(candidate: str) -> str:
    return (
        f"InferenceService {NS}/{candidate} exists and the replicas it projects would share pod and Service names "
        "with this one; choose another name"
    )


# -- the seed's table and §7.3, standalone -------------------------------------------------------------


class TestStandaloneRows:
    def test_a_user_creates_a_standalone_replica(self) -> None:
        allowed(review(create(standalone()), EMPTY), None)
        assert review(create(standalone()), EMPTY).messages == ()

    def test_parent_ref_on_create(self) -> None:
        obj = with_spec(standalone(), parentRef={"name": "llama"})
        denied_with(review(create(obj), EMPTY), prefixed("pool-a", PARENT_REF))

    @pytest.mark.parametrize("user", [USER, CONTROLLER])
    def test_parent_ref_added_on_update_is_immutable(self, user: str) -> None:
        new = with_spec(standalone(), parentRef={"name": "llama"})
        decision = review(update(standalone(), new, user), EMPTY)
        assert decision.messages[0] == prefixed("pool-a", "spec.parentRef is immutable")
        assert not decision.allowed

    @pytest.mark.parametrize("field", [{"placementReplicaLimit": 2}, {"placementExecution": {"mode": "x"}}])
    def test_placement_fields_by_a_user(self, field: Obj) -> None:
        denied_with(review(create(with_spec(standalone(), **field)), EMPTY), prefixed("pool-a", PLACEMENT))
        new = with_spec(standalone(), **field)
        denied_with(review(update(standalone(), new), EMPTY), prefixed("pool-a", PLACEMENT))

    def test_the_controller_may_set_placement_fields_on_a_standalone_replica(self) -> None:
        new = with_spec(standalone(), placementReplicaLimit=2)
        allowed(review(update(standalone(), new, CONTROLLER), EMPTY))
        refs = refs_replica()
        cat = catalog(runtime("runtime-a"))
        allowed(review(update(refs, with_spec(refs, placementReplicaLimit=2), CONTROLLER), cat))

    def test_a_user_keeps_placement_the_controller_wrote(self) -> None:
        old = with_spec(standalone(), placementReplicaLimit=2)
        allowed(review(update(old, with_spec(old, replicas=3)), EMPTY))

    def test_runners_and_a_reference_are_exclusive(self) -> None:
        obj = with_spec(standalone(), modelRef={"name": "model-a"})
        denied_with(review(create(obj), EMPTY), prefixed("pool-a", EXCLUSIVE))
        denied_with(review(update(standalone(), obj), EMPTY), prefixed("pool-a", EXCLUSIVE))
        obj = with_spec(standalone(), runtimeRef={"name": "runtime-a"})
        denied_with(review(create(obj), EMPTY), prefixed("pool-a", EXCLUSIVE))

    def test_no_template_source(self) -> None:
        obj = without_spec(standalone(), "runners")
        denied_with(review(create(obj), EMPTY), prefixed("pool-a", NO_SOURCE))
        denied_with(review(update(standalone(), obj), EMPTY), prefixed("pool-a", NO_SOURCE))
        denied_with(review(create(with_spec(standalone(), runners=[])), EMPTY), prefixed("pool-a", NO_SOURCE))

    @pytest.mark.parametrize("source", [{"modelRef": {"name": "m"}}, {"runtimeRef": {"name": "r"}}])
    def test_one_reference_is_a_source(self, source: Obj) -> None:
        obj = with_spec(without_spec(standalone(), "runners"), **source)
        allowed(review(create(obj), EMPTY))

    @pytest.mark.parametrize("ref", [{"autoSync": False}, {"revision": "cr-runtime-a-0f3a"}])
    def test_a_pinned_runtime(self, ref: Obj) -> None:
        obj = refs_replica()
        obj["spec"]["runtimeRef"].update(ref)
        denied_with(review(create(obj), EMPTY), prefixed("pool-a", PINNED))
        denied_with(review(update(refs_replica(), obj), EMPTY), prefixed("pool-a", PINNED))

    def test_auto_sync_true_is_no_pin(self) -> None:
        obj = refs_replica()
        obj["spec"]["runtimeRef"].update(autoSync=True, revision="")
        allowed(review(create(obj), EMPTY))

    def test_hpa_and_keda_classes(self) -> None:
        denied_with(
            review(create(with_spec(standalone(), autoscaler={"class": "HPA"})), EMPTY),
            prefixed("pool-a", scaler("HPA")),
        )
        keda = {"class": "KEDA", "keda": {"triggers": [{"type": "prometheus", "metadata": {"query": "x"}}]}}
        denied_with(
            review(create(with_spec(standalone(), autoscaler=keda)), EMPTY),
            prefixed("pool-a", scaler("KEDA")),
        )
        new = with_spec(standalone(), autoscaler={"class": "HPA"})
        denied_with(review(update(standalone(), new), EMPTY), prefixed("pool-a", scaler("HPA")))

    @pytest.mark.parametrize("cls", ["External", "None"])
    def test_external_and_none_classes_pass(self, cls: str) -> None:
        allowed(review(create(with_spec(standalone(), autoscaler={"class": cls})), EMPTY))

    def test_lifecycle_min_ready_seconds(self) -> None:
        obj = with_spec(standalone(), lifecycle={"minReadySeconds": 5})
        denied_with(review(create(obj), EMPTY), prefixed("pool-a", MIN_READY))
        denied_with(review(update(standalone(), obj), EMPTY), prefixed("pool-a", MIN_READY))
        zero = with_spec(standalone(), lifecycle={"minReadySeconds": 0})
        denied_with(review(create(zero), EMPTY), prefixed("pool-a", MIN_READY))
        allowed(review(create(with_spec(standalone(), minReadySeconds=5)), EMPTY))

    @pytest.mark.parametrize("name", ["pool.a", "Pool-a", "-pool", "pool-", "1pool", "pool_a", ""])
    def test_a_name_that_is_not_a_service_name_prefix(self, name: str) -> None:
        obj = edit(standalone(), lambda o: o["metadata"].__setitem__("name", name))
        denied_with(review(create(obj), EMPTY), prefixed(name, BAD_NAME))

    @pytest.mark.parametrize("name", ["a", "pool-a", "p0", "a-b-c-9"])
    def test_good_names(self, name: str) -> None:
        allowed(review(create(standalone(name)), EMPTY))

    def test_the_name_rule_is_a_create_rule(self) -> None:
        odd = edit(standalone(), lambda o: o["metadata"].__setitem__("name", "Pool.A"))
        allowed(review(update(odd, with_spec(odd, replicas=2)), EMPTY))

    def test_the_request_name_wins_over_the_object(self) -> None:
        request = AdmissionRequest(
            "CREATE", standalone(), None, USER, (), IDENTITY, None, "other-ns", "Bad.Name"
        )
        denied_with(review(request, EMPTY), f"InferenceReplica other-ns/Bad.Name: {BAD_NAME}")

    def test_a_migration_request_on_create(self) -> None:
        obj = with_annotation(standalone(), MIGRATION_KEY, '{"instance":0}')
        denied_with(review(create(obj), EMPTY), prefixed("pool-a", MIGRATION))

    def test_a_migration_request_added_by_a_metadata_only_update(self) -> None:
        new = with_annotation(standalone(), MIGRATION_KEY, '{"instance":0}')
        denied_with(review(update(standalone(), new), EMPTY), prefixed("pool-a", MIGRATION))

    def test_a_migration_request_added_with_a_spec_change(self) -> None:
        new = with_spec(with_annotation(standalone(), MIGRATION_KEY, "{}"), replicas=2)
        denied_with(review(update(standalone(), new), EMPTY), prefixed("pool-a", MIGRATION))

    def test_an_existing_migration_request_may_stay_or_go(self) -> None:
        held = with_annotation(standalone(), MIGRATION_KEY, "{}")
        allowed(review(update(held, with_annotation(held, "team", "a")), EMPTY), "metadata-only update")
        allowed(review(update(held, without_annotation(held, MIGRATION_KEY)), EMPTY), "metadata-only update")
        allowed(review(update(held, with_spec(held, replicas=2)), EMPTY))

    def test_a_user_may_request_a_migration_on_a_projected_replica(self) -> None:
        new = with_annotation(projected(), MIGRATION_KEY, "{}")
        allowed(review(update(projected(), new), EMPTY), "metadata-only update")


class TestRuntimeRows:
    def test_a_runtime_without_the_components_piece(self) -> None:
        cat = catalog(runtime("runtime-a"))
        denied_with(review(create(refs_replica("decoder")), cat), prefixed("pool-a", NO_DECODER))
        allowed(review(create(refs_replica("engine")), cat))

    def test_a_router_replica_and_a_runtime_with_every_piece(self) -> None:
        cat = catalog(runtime("runtime-a", pieces=("engineConfig", "decoderConfig", "routerConfig")))
        for component in ("engine", "decoder", "router"):
            allowed(review(create(refs_replica(component)), cat))
        router_less = catalog(runtime("runtime-a", pieces=("engineConfig", "decoderConfig")))
        denied_with(
            review(create(refs_replica("router")), router_less),
            prefixed(
                "pool-a",
                'ClusterServingRuntime "runtime-a" has no router piece; a router replica cannot render from it',
            ),
        )

    def test_a_runtime_that_is_not_found_is_admitted(self) -> None:
        allowed(review(create(refs_replica("decoder")), EMPTY))
        allowed(review(update(standalone(), refs_replica("engine")), EMPTY))

    def test_the_serving_runtime_kind_checks_the_namespaced_runtime(self) -> None:
        cat = catalog(runtime("runtime-a", kind="ServingRuntime", namespace=NS))
        message = 'ServingRuntime "runtime-a" has no decoder piece; a decoder replica cannot render from it'
        denied_with(
            review(create(refs_replica("decoder", "ServingRuntime")), cat), prefixed("pool-a", message)
        )
        # The default kind falls back to the namespaced runtime, as the controller does.
        denied_with(review(create(refs_replica("decoder", None)), cat), prefixed("pool-a", message))
        denied_with(review(create(refs_replica("decoder")), cat), prefixed("pool-a", message))

    def test_the_cluster_runtime_wins_over_a_namespaced_one(self) -> None:
        cat = catalog(
            runtime("runtime-a", pieces=("decoderConfig",)),
            runtime("runtime-a", kind="ServingRuntime", namespace=NS),
        )
        allowed(review(create(refs_replica("decoder")), cat))

    def test_a_piece_inherited_from_the_parent_satisfies_the_check(self) -> None:
        cat = catalog(
            runtime("runtime-base", pieces=("decoderConfig",)),
            runtime("runtime-a", parent="runtime-base"),
        )
        allowed(review(create(refs_replica("decoder")), cat))

    def test_an_inherit_from_parent_that_does_not_exist(self) -> None:
        cat = catalog(runtime("runtime-a", parent="runtime-base"))
        denied_with(review(create(refs_replica("engine")), cat), prefixed("pool-a", MISSING_PARENT))

    def test_a_missing_grandparent_names_the_referenced_runtime_as_go_does(self) -> None:
        # admitRuntimePiece prints spec.runtimeRef.name and ParentNotFoundError.Parent, not the chain link.
        cat = catalog(
            runtime("runtime-base", parent="runtime-root"), runtime("runtime-a", parent="runtime-base")
        )
        denied_with(
            review(create(refs_replica("engine")), cat),
            prefixed(
                "pool-a",
                'runtime "runtime-a" inherits from "runtime-root", which does not exist, '
                "so the runtime cannot be resolved",
            ),
        )

    def test_an_inheritance_cycle(self) -> None:
        cat = catalog(runtime("runtime-a", parent="runtime-b"), runtime("runtime-b", parent="runtime-a"))
        decision = review(create(refs_replica("engine")), cat)
        # Any resolution error but a missing parent is admission.Errored(500, "check runtime %q: %w").
        assert (decision.allowed, decision.code) == (False, 500)
        assert decision.messages == (
            'check runtime "runtime-a": inheritance cycle detected: [runtime-a runtime-b runtime-a]',
        )

    def test_an_update_that_sets_or_changes_the_runtime_reads_it(self) -> None:
        cat = catalog(runtime("runtime-a"), runtime("runtime-d", pieces=("decoderConfig",)))
        decoder_runners = with_spec(standalone(), component="decoder")
        denied_with(
            review(update(decoder_runners, refs_replica("decoder")), cat), prefixed("pool-a", NO_DECODER)
        )
        on_d = edit(
            refs_replica("decoder"), lambda o: o["spec"]["runtimeRef"].__setitem__("name", "runtime-d")
        )
        denied_with(review(update(on_d, refs_replica("decoder")), cat), prefixed("pool-a", NO_DECODER))

    def test_an_update_that_keeps_the_runtime_does_not_read_it(self) -> None:
        spy = SpyCatalog.of(runtime("runtime-a"))
        refs = refs_replica("decoder")  # would be denied if the runtime were read
        allowed(review(update(refs, with_spec(refs, replicas=3)), spy))
        allowed(review(update(refs, with_spec(refs, paused=True)), spy))
        allowed(review(update(refs, with_spec(refs, pacing={"partition": 1}), CONTROLLER), spy))
        assert SpyCatalog.reads == []

    def test_model_ref_alone_reads_no_runtime(self) -> None:
        spy = SpyCatalog.of(runtime("runtime-a"))
        obj = with_spec(without_spec(standalone(), "runners"), modelRef={"name": "model-a"})
        allowed(review(create(obj), spy))
        assert SpyCatalog.reads == []

    def test_without_a_reader_the_runtime_and_collision_checks_are_skipped(self) -> None:
        allowed(review(create(refs_replica("decoder")), None))
        allowed(review(create(standalone("svc-engine")), None))

    def test_projected_replicas_skip_the_runtime_check(self) -> None:
        cat = catalog(runtime("runtime-a"))
        obj = without_spec(projected(), "runners")
        obj["spec"].update(component="decoder", runtimeRef={"name": "runtime-a"})
        allowed(review(create(obj, CONTROLLER), cat))


class SpyCatalog(Catalog):
    """A catalog that records runtime lookups (the class attribute: the dataclass is frozen)."""

    reads: ClassVar[list[str]] = []

    @classmethod
    def of(cls, *objs: Obj) -> SpyCatalog:
        cls.reads = []
        base = Catalog.from_objects(objs)
        return cls(
            models=base.models,
            runtimes=base.runtimes,
            fine_tuned_weights=base.fine_tuned_weights,
            inference_services=base.inference_services,
        )

    def named_runtime(self, kind: str | None, namespace: str, name: str) -> RuntimeResource | None:
        SpyCatalog.reads.append(name)
        return super().named_runtime(kind, namespace, name)

    def runtime(self, kind: str, namespace: str, name: str) -> RuntimeResource | None:
        SpyCatalog.reads.append(name)
        return super().runtime(kind, namespace, name)


class TestNameCollisions:
    def test_the_name_of_an_inference_service(self) -> None:
        denied_with(
            review(create(standalone()), catalog(isvc("pool-a"))), prefixed("pool-a", collision("pool-a"))
        )

    @pytest.mark.parametrize("suffix", ["-engine", "-decoder", "-router"])
    def test_an_inference_service_name_plus_a_component_suffix(self, suffix: str) -> None:
        name = "svc" + suffix
        denied_with(review(create(standalone(name)), catalog(isvc("svc"))), prefixed(name, collision("svc")))

    def test_unrelated_or_other_namespace_services_do_not_collide(self) -> None:
        other = edit(isvc("pool-a"), lambda o: o["metadata"].__setitem__("namespace", "elsewhere"))
        allowed(review(create(standalone()), catalog(other, isvc("pool"))))
        allowed(review(create(standalone("svc-engines")), catalog(isvc("svc"))))

    def test_both_candidates_collide(self) -> None:
        cat = catalog(isvc("svc"), isvc("svc-engine"))
        denied_with(
            review(create(standalone("svc-engine")), cat),
            prefixed("svc-engine", collision("svc-engine")),
            prefixed("svc-engine", collision("svc")),
        )

    def test_collisions_are_a_create_rule(self) -> None:
        allowed(review(update(standalone(), with_spec(standalone(), replicas=2)), catalog(isvc("pool-a"))))


class TestOwnership:
    def test_a_user_cannot_attach_a_standalone_replica_to_an_inference_service(self) -> None:
        adopted = with_owners(standalone(), isvc_ref())
        denied_with(review(update(standalone(), adopted), EMPTY), prefixed("pool-a", OWNER_REF))
        allowed(review(update(standalone(), adopted, CONTROLLER), EMPTY))

    def test_through_another_version_of_the_group(self) -> None:
        adopted = with_owners(standalone(), isvc_ref(api_version="ome.io/v1"))
        denied_with(review(update(standalone(), adopted), EMPTY), prefixed("pool-a", OWNER_REF))

    def test_replacing_the_controller_reference_with_a_deployment(self) -> None:
        new = with_owners(projected(), controller_ref("apps/v1", "Deployment", "llama-pool"))
        denied_with(review(update(projected(), new), EMPTY), prefixed("llama-engine", OWNER_REF))
        allowed(review(update(projected(), new, CONTROLLER), EMPTY))

    def test_a_foreign_controller_reference_on_an_orphaned_replica(self) -> None:
        new = with_owners(orphan(), controller_ref("apps/v1", "Deployment", "llama-pool"))
        denied_with(review(update(orphan(), new), EMPTY), prefixed("llama-engine", OWNER_REF))

    @pytest.mark.parametrize(
        ("field", "value"), [("name", "other-isvc"), ("uid", "other-isvc-uid"), ("apiVersion", "ome.io/v1")]
    )
    def test_editing_the_controller_reference(self, field: str, value: str) -> None:
        new = with_owners(projected(), isvc_ref() | {field: value})
        denied_with(review(update(projected(), new), EMPTY), prefixed("llama-engine", OWNER_REF))

    def test_attaching_an_orphan_again(self) -> None:
        denied_with(review(update(orphan(), projected()), EMPTY), prefixed("llama-engine", OWNER_REF))
        allowed(review(update(orphan(), projected(), CONTROLLER), EMPTY))

    def test_garbage_collection_may_clear_block_owner_deletion_and_remove_the_reference(self) -> None:
        blocked = with_block_owner_deletion(projected(), True)
        cleared = with_block_owner_deletion(blocked, False)
        allowed(review(update(blocked, cleared, GC), EMPTY), "metadata-only update")
        allowed(review(update(projected(), orphan(), GC), EMPTY), "metadata-only update")

    def test_a_user_may_set_their_own_controller_reference_on_a_standalone_replica(self) -> None:
        owned = with_owners(standalone(), controller_ref("apps.example.com/v1", "ReplicaPool", "pool-a"))
        allowed(review(update(standalone(), owned), EMPTY))

    def test_an_inference_service_reference_from_another_group_leaves_it_standalone(self) -> None:
        kserve = isvc_ref("pool-a", api_version="serving.kserve.io/v1beta1")
        allowed(review(create(with_owners(standalone(), kserve)), EMPTY))
        allowed(review(update(standalone(), with_owners(standalone(), kserve)), EMPTY))

    def test_a_non_controller_owner_reference_leaves_it_standalone(self) -> None:
        owner = isvc_ref("pool-a") | {"controller": False}
        allowed(review(create(with_owners(standalone(), owner)), EMPTY))

    def test_another_version_of_the_group_marks_a_create_projected(self) -> None:
        obj = with_owners(standalone(), isvc_ref("pool-a", api_version="ome.io/v1"))
        decision = review(create(obj), EMPTY)
        assert decision.messages == (
            f"InferenceReplica {NS}/pool-a is projected by InferenceService {NS}/pool-a, whose controller alone "
            f'writes its spec; edit the InferenceService instead (request from "{USER}")',
        )

    def test_the_controller_cannot_create_a_standalone_replica(self) -> None:
        denied_with(review(create(standalone(), CONTROLLER), EMPTY), prefixed("pool-a", CONTROLLER_CREATE))
        obj = with_spec(standalone(), placementReplicaLimit=2)
        denied_with(review(create(obj, CONTROLLER), EMPTY), prefixed("pool-a", CONTROLLER_CREATE))

    def test_a_copied_controller_write_annotation_without_identity(self) -> None:
        obj = with_annotation(standalone(), "ome.io/controller-write", "true")
        denied_with(review(create(obj, identity=None), EMPTY), CONTROLLER_CREATE_BY_ANNOTATION)
        # Only the literal "true" marks the controller.
        allowed(
            review(
                create(with_annotation(standalone(), "ome.io/controller-write", "True"), identity=None), EMPTY
            )
        )

    @pytest.mark.parametrize(
        "steer",
        [
            lambda o: with_spec(o, pacing={"partition": 1}),
            lambda o: with_spec(o, paused=True, pauseMode="Freeze"),
            lambda o: with_spec(o, pacing={"rollbackToRevision": "pool-a-0f3a"}, pairingProtocol="v2"),
        ],
        ids=["partition", "pause", "rollback-and-pairing"],
    )
    def test_the_controller_steers_a_standalone_replica(self, steer: Callable[[Obj], Obj]) -> None:
        allowed(review(update(standalone(), steer(standalone()), CONTROLLER), EMPTY))

    def test_the_controller_may_clear_the_fields_it_held(self) -> None:
        held = with_annotation(
            with_spec(standalone(), paused=True, pauseMode="Recover", pacing={"partition": 1}),
            COMPOSED,
            "svc:paused,pacing.partition",
        )
        allowed(review(update(held, standalone(), CONTROLLER), EMPTY))

    @pytest.mark.parametrize(
        ("old", "new"),
        [
            (standalone(), with_spec(standalone(), replicas=3)),
            (standalone(), with_image(standalone(), "sgl:1.1")),
            (standalone(), with_spec(standalone(), pacing={"maxUnavailable": 1})),
            (
                with_spec(standalone(), pacing={"maxUnavailable": 1}),
                with_spec(standalone(), pacing={"partition": 1}),
            ),
            (standalone(), with_spec(standalone(), replicas=3, paused=True, pauseMode="Freeze")),
        ],
        ids=["scale", "runners", "max-unavailable", "drop-users-max-unavailable", "scale-while-pausing"],
    )
    def test_the_controller_cannot_write_user_fields_of_a_standalone_replica(
        self, old: Obj, new: Obj
    ) -> None:
        denied_with(review(update(old, new, CONTROLLER), EMPTY), prefixed("pool-a", COMPOSER))

    def test_a_user_steers_and_edits_their_standalone_replica(self) -> None:
        allowed(review(update(standalone(), with_spec(standalone(), pacing={"partition": 1})), EMPTY))
        allowed(review(update(standalone(), with_image(standalone(), "sgl:1.1")), EMPTY))


class TestComposedFields:
    def test_a_user_cannot_add_change_or_remove_it(self) -> None:
        held = with_annotation(standalone(), COMPOSED, "svc:paused")
        for old, new in [
            (standalone(), held),
            (held, with_annotation(held, COMPOSED, "svc:pacing.partition")),
            (held, without_annotation(held, COMPOSED)),
        ]:
            denied_with(review(update(old, new), EMPTY), prefixed("pool-a", COMPOSED_DENIAL))

    def test_with_a_spec_change_too(self) -> None:
        new = with_spec(with_annotation(standalone(), COMPOSED, "svc:paused"), replicas=2)
        denied_with(review(update(standalone(), new), EMPTY), prefixed("pool-a", COMPOSED_DENIAL))

    def test_a_user_cannot_create_a_replica_carrying_it(self) -> None:
        obj = with_annotation(standalone(), COMPOSED, "svc:paused")
        denied_with(review(create(obj), EMPTY), prefixed("pool-a", COMPOSED_DENIAL))

    def test_a_user_cannot_add_it_to_a_projected_replica(self) -> None:
        new = with_annotation(projected(), COMPOSED, "svc:paused")
        denied_with(review(update(projected(), new), EMPTY), prefixed("llama-engine", COMPOSED_DENIAL))

    def test_other_annotations_beside_it_stay_metadata_only(self) -> None:
        held = with_annotation(standalone(), COMPOSED, "svc:paused")
        allowed(
            review(update(held, with_annotation(held, "example.com/note", "keep")), EMPTY),
            "metadata-only update",
        )

    def test_the_controller_writes_it(self) -> None:
        held = with_annotation(standalone(), COMPOSED, "svc:paused")
        allowed(review(update(standalone(), held, CONTROLLER), EMPTY))
        allowed(review(update(held, without_annotation(held, COMPOSED), CONTROLLER), EMPTY))
        allowed(
            review(
                update(projected(), with_annotation(projected(), COMPOSED, "svc:paused"), CONTROLLER), EMPTY
            )
        )


# -- §7.4 projected replicas ---------------------------------------------------------------------------


class TestProjected:
    def test_the_controller_creates_a_projected_replica(self) -> None:
        allowed(review(create(projected(), CONTROLLER), EMPTY))

    def test_a_user_cannot_create_a_projected_replica(self) -> None:
        denied_with(review(create(projected()), EMPTY), projected_by())

    def test_a_user_cannot_change_its_spec(self) -> None:
        denied_with(review(update(projected(), with_spec(projected(), replicas=3)), EMPTY), projected_by())
        denied_with(
            review(update(projected(), with_spec(projected(), paused=True, pauseMode="Freeze")), EMPTY),
            projected_by(),
        )

    def test_a_user_may_annotate_and_label_it(self) -> None:
        new = with_annotation(projected(), "ome.io/reset-instances", "all")
        allowed(review(update(projected(), new), EMPTY), "metadata-only update")
        labelled = edit(projected(), lambda o: o["metadata"].__setitem__("labels", {"team": "a"}))
        allowed(review(update(projected(), labelled), EMPTY), "metadata-only update")

    def test_the_controller_changes_its_runners(self) -> None:
        allowed(review(update(projected(), with_image(projected(), "sgl:1.1"), CONTROLLER), EMPTY))

    def test_an_orphan_stays_projected(self) -> None:
        denied_with(review(update(orphan(), with_spec(orphan(), replicas=3)), EMPTY), projected_by())
        hpa = with_spec(orphan(), autoscaler={"class": "HPA"})
        allowed(review(update(hpa, with_image(hpa, "sgl:1.1"), CONTROLLER), EMPTY))

    def test_a_parentless_projected_replica_names_its_owner(self) -> None:
        parentless = without_spec(projected(), "parentRef")
        denied_with(review(create(parentless), EMPTY), projected_by())

    def test_removing_the_owner_reference_and_changing_the_spec_in_one_request(self) -> None:
        denied_with(review(update(projected(), with_spec(orphan(), replicas=3)), EMPTY), projected_by())

    def test_the_annotation_does_not_make_a_user_the_controller_when_an_identity_is_configured(self) -> None:
        stamped = with_annotation(projected(), "ome.io/controller-write", "true")
        denied_with(review(create(stamped), EMPTY), projected_by())
        denied_with(review(update(stamped, with_spec(stamped, replicas=3)), EMPTY), projected_by())

    def test_projected_replicas_keep_their_hpa_scaler_and_settings(self) -> None:
        obj = with_spec(projected(), autoscaler={"class": "HPA"}, lifecycle={"minReadySeconds": 5})
        allowed(review(create(obj, CONTROLLER), EMPTY))

    def test_without_identity_the_annotation_convention(self) -> None:
        stamped = with_annotation(projected(), "ome.io/controller-write", "true")
        denied_with(review(create(projected(), identity=None), EMPTY), projected_no_identity("CREATE"))
        allowed(review(create(stamped, identity=None), EMPTY))
        allowed(review(create(standalone(), identity=None), EMPTY))
        allowed(review(update(stamped, with_spec(stamped, replicas=3), identity=None), EMPTY))
        denied_with(
            review(update(stamped, with_spec(projected(), replicas=3), identity=None), EMPTY),
            projected_no_identity("UPDATE"),
        )

    def test_a_group_identity(self) -> None:
        groups_only = ControllerIdentity(groups=frozenset({"ome-controllers"}))
        inside = create(
            projected(), USER, identity=groups_only, groups=("system:authenticated", "ome-controllers")
        )
        allowed(review(inside, EMPTY))
        denied_with(review(create(projected(), USER, identity=groups_only), EMPTY), projected_by())


# -- immutability, metadata-only, identity errors, delete -----------------------------------------------


class TestImmutabilityAndMetadata:
    @pytest.mark.parametrize("user", [USER, CONTROLLER])
    @pytest.mark.parametrize("base", [standalone, projected], ids=["standalone", "projected"])
    def test_component_is_immutable_for_every_writer(self, user: str, base: Callable[[], Obj]) -> None:
        old = base()
        decision = review(update(old, with_spec(old, component="decoder"), user), EMPTY)
        assert not decision.allowed
        assert decision.code == 403
        assert decision.messages[0] == prefixed(old["metadata"]["name"], "spec.component is immutable")

    @pytest.mark.parametrize("user", [USER, CONTROLLER])
    @pytest.mark.parametrize(
        "new",
        [
            lambda: with_spec(projected(), parentRef={"name": "other"}),
            lambda: without_spec(projected(), "parentRef"),
        ],
        ids=["renamed", "removed"],
    )
    def test_parent_ref_is_immutable_for_every_writer(self, user: str, new: Callable[[], Obj]) -> None:
        decision = review(update(projected(), new(), user), EMPTY)
        assert not decision.allowed
        assert decision.messages[0] == prefixed("llama-engine", "spec.parentRef is immutable")

    def test_the_controller_changing_component_gets_only_the_immutability_denial(self) -> None:
        decision = review(update(projected(), with_spec(projected(), component="router"), CONTROLLER), EMPTY)
        denied_with(decision, prefixed("llama-engine", "spec.component is immutable"))

    @pytest.mark.parametrize(
        "change",
        [
            lambda o: edit(o, lambda x: x["metadata"].__setitem__("finalizers", ["ome.io/ir-teardown"])),
            lambda o: edit(o, lambda x: x["metadata"].__setitem__("labels", {"team": "a"})),
            lambda o: with_annotation(o, "ome.io/reset-instances", "all"),
            lambda o: edit(o, lambda x: x["metadata"].__setitem__("resourceVersion", "42")),
        ],
        ids=["finalizer", "label", "annotation", "resource-version"],
    )
    @pytest.mark.parametrize("base", [standalone, projected], ids=["standalone", "projected"])
    def test_metadata_only_updates(self, change: Callable[[Obj], Obj], base: Callable[[], Obj]) -> None:
        allowed(review(update(base(), change(base())), EMPTY), "metadata-only update")

    def test_a_spec_written_in_another_shape_but_equal_is_metadata_only(self) -> None:
        old = with_spec(standalone(), minReadySeconds=0, paused=False)
        new = with_spec(standalone(), replicas=None)
        allowed(review(update(old, new), EMPTY), "metadata-only update")

    def test_status_is_not_spec(self) -> None:
        new = edit(standalone(), lambda o: o.__setitem__("status", {"replicas": 1}))
        allowed(review(update(standalone(), new), EMPTY), "metadata-only update")


IDENTITY_ERROR = "inferenceservice-config has no inferenceReplica key"


class TestIdentityErrors:
    ERROR = IDENTITY_ERROR

    def base(self) -> Obj:
        obj = with_annotation(projected(), "ome.io/reset-instances", "all")
        obj["metadata"]["finalizers"] = ["ome.io/ir-teardown"]
        return with_block_owner_deletion(obj, True)

    @pytest.mark.parametrize(
        "make",
        [
            lambda old: (old, edit(old, lambda o: o["metadata"].__setitem__("finalizers", []))),
            lambda old: (old, edit(old, lambda o: o["metadata"].__setitem__("labels", {"team": "a"}))),
            lambda old: (old, without_annotation(old, "ome.io/reset-instances")),
            lambda old: (old, with_block_owner_deletion(old, False)),
            lambda old: (old, with_owners(old)),
            lambda old: (
                with_annotation(standalone(), COMPOSED, "svc:paused"),
                edit(
                    with_annotation(standalone(), COMPOSED, "svc:paused"),
                    lambda o: o["metadata"].__setitem__("labels", {"t": "a"}),
                ),
            ),
        ],
        ids=[
            "finalizers",
            "label",
            "mailbox-removal",
            "block-owner-deletion",
            "owner-removal",
            "beside-composed",
        ],
    )
    def test_metadata_only_updates_still_pass(self, make: Callable[[Obj], tuple[Obj, Obj]]) -> None:
        old, new = make(self.base())
        allowed(review(update(old, new, GC, identity=None, error=self.ERROR), EMPTY), "metadata-only update")

    @pytest.mark.parametrize(
        "request_",
        [
            lambda: create(standalone(), identity=None, error=IDENTITY_ERROR),
            lambda: update(
                projected(), with_spec(projected(), replicas=3), identity=None, error=IDENTITY_ERROR
            ),
            lambda: update(
                standalone(),
                with_annotation(standalone(), COMPOSED, "svc:paused"),
                identity=None,
                error=IDENTITY_ERROR,
            ),
        ],
        ids=["create", "spec-change", "composed-fields"],
    )
    def test_creates_and_spec_changes_fail_with_500(self, request_: Callable[[], AdmissionRequest]) -> None:
        decision = review(request_(), EMPTY)
        assert not decision.allowed
        assert decision.code == 500
        # Go answers admission.Errored(500, err): the load error whole, without the replica's name.
        assert decision.message == f"load inferenceReplica config: {self.ERROR}"

    def test_immutability_still_answers_first(self) -> None:
        decision = review(
            update(projected(), with_spec(projected(), component="router"), identity=None, error=self.ERROR),
            EMPTY,
        )
        assert decision.code == 403
        assert decision.messages[0] == prefixed("llama-engine", "spec.component is immutable")
        assert decision.messages[1] == f"load inferenceReplica config: {self.ERROR}"


class TestDeleteAndOddRequests:
    @pytest.mark.parametrize("operation", ["DELETE", "CONNECT"])
    def test_delete_is_never_gated(self, operation: str) -> None:
        for obj in (None, projected(), {"not": "a replica"}):
            decision = review(AdmissionRequest(operation, None, obj, USER), EMPTY)
            assert decision == AdmissionDecision(True, 200, ())

    def test_an_object_that_does_not_fit_the_schema_is_a_bad_request(self) -> None:
        decision = review(create(with_spec(standalone(), component="prefill")), EMPTY)
        assert not decision.allowed
        assert decision.code == 400
        assert decision.message.startswith(f"InferenceReplica {NS}/pool-a is invalid: spec.component")

    def test_an_old_object_that_does_not_fit_is_a_bad_request(self) -> None:
        decision = review(update({"kind": "InferenceReplica"}, standalone()), EMPTY)
        assert decision.code == 400

    def test_missing_objects(self) -> None:
        assert review(AdmissionRequest("CREATE", None), EMPTY).code == 400
        assert review(AdmissionRequest("UPDATE", standalone(), None), EMPTY).code == 400

    def test_review_does_not_change_its_inputs(self) -> None:
        old = with_spec(standalone(), autoscaler={"class": "KEDA", "keda": {"triggers": []}})
        new = with_spec(old, replicas=3)
        before = copy.deepcopy((old, new))
        review(update(old, new, CONTROLLER), catalog(isvc("pool-a")))
        assert (old, new) == before


# -- §7.5 shape checks, every writer ---------------------------------------------------------------------


class TestShapeChecks:
    def test_an_unknown_autoscaler_class(self) -> None:
        obj = with_spec(projected(), autoscaler={"class": "knative"})
        denied_with(
            review(create(obj, CONTROLLER), EMPTY),
            prefixed(
                "llama-engine",
                'AutoscalerClassUnknown: autoscaler.class "knative" is not one of HPA|KEDA|External|None',
            ),
        )
        denied_with(
            review(create(with_spec(standalone(), autoscaler={}), USER), EMPTY),
            prefixed(
                "pool-a", 'AutoscalerClassUnknown: autoscaler.class "" is not one of HPA|KEDA|External|None'
            ),
        )

    def test_keda_needs_a_trigger(self) -> None:
        for keda in ({}, {"keda": {}}, {"keda": {"triggers": []}}):
            obj = with_spec(projected(), autoscaler={"class": "KEDA", **keda})
            denied_with(
                review(create(obj, CONTROLLER), EMPTY),
                prefixed("llama-engine", "KedaTriggersRequired: class=keda requires at least 1 trigger"),
            )

    def test_keda_idle_replicas_below_the_replica_count(self) -> None:
        keda = {"class": "KEDA", "keda": {"triggers": [{"type": "cron"}], "idleReplicaCount": 2}}
        obj = with_spec(projected(), replicas=2, autoscaler=keda)
        denied_with(
            review(create(obj, CONTROLLER), EMPTY),
            prefixed(
                "llama-engine",
                "KedaIdleBelowMin: keda.idleReplicaCount must be < minReplicas (got idleReplicaCount=2, minReplicas=2)",
            ),
        )
        allowed(review(create(with_spec(obj, replicas=3), CONTROLLER), EMPTY))
        allowed(review(create(without_spec(obj, "replicas"), CONTROLLER), EMPTY))  # no floor, no check

    @pytest.mark.parametrize(
        ("metric", "message"),
        [
            (
                {},
                "hpa.metrics[0].type is empty; must be one of Resource|Pods|Object|External|ContainerResource",
            ),
            ({"type": "Resource"}, "hpa.metrics[0].type=Resource but hpa.metrics[0].resource is nil"),
            (
                {"type": "ContainerResource"},
                "hpa.metrics[0].type=ContainerResource but hpa.metrics[0].containerResource is nil",
            ),
            (
                {"type": "Cpu"},
                'hpa.metrics[0].type "Cpu" is not one of Resource|Pods|Object|External|ContainerResource',
            ),
        ],
    )
    def test_malformed_hpa_metrics(self, metric: Obj, message: str) -> None:
        obj = with_spec(projected(), autoscaler={"class": "HPA", "hpa": {"metrics": [metric]}})
        denied_with(
            review(create(obj, CONTROLLER), EMPTY), prefixed("llama-engine", "HPAMetricMalformed: " + message)
        )
        good = {"type": "Resource", "resource": {"name": "cpu"}}
        allowed(
            review(
                create(
                    with_spec(projected(), autoscaler={"class": "HPA", "hpa": {"metrics": [good]}}),
                    CONTROLLER,
                ),
                EMPTY,
            )
        )

    def test_the_standalone_hpa_row_and_the_shape_both_report(self) -> None:
        obj = with_spec(standalone(), autoscaler={"class": "HPA", "hpa": {"metrics": [{"type": "Pods"}]}})
        denied_with(
            review(create(obj), EMPTY),
            prefixed("pool-a", scaler("HPA")),
            prefixed("pool-a", "HPAMetricMalformed: hpa.metrics[0].type=Pods but hpa.metrics[0].pods is nil"),
        )

    @pytest.mark.parametrize(
        ("replicas", "partition", "shown"), [(1, 2, 1), (None, 2, 1), (0, 3, 1), (3, 4, 3)]
    )
    def test_partition_above_the_replicas(self, replicas: int | None, partition: int, shown: int) -> None:
        obj = with_spec(standalone(), replicas=replicas, pacing={"partition": partition})
        message = (
            f"spec.pacing.partition ({partition}) must be <= spec.replicas ({shown}); "
            "an over-partition silently holds every Instance back forever"
        )
        denied_with(review(create(obj), EMPTY), prefixed("pool-a", message))
        denied_with(review(update(standalone(), obj), EMPTY), prefixed("pool-a", message))
        proj = with_spec(projected(), replicas=replicas, pacing={"partition": partition})
        denied_with(review(create(proj, CONTROLLER), EMPTY), prefixed("llama-engine", message))

    @pytest.mark.parametrize(("replicas", "partition"), [(1, 1), (None, 1), (0, 0), (3, 3)])
    def test_partition_within_the_replicas(self, replicas: int | None, partition: int) -> None:
        allowed(
            review(create(with_spec(standalone(), replicas=replicas, pacing={"partition": partition})), EMPTY)
        )

    def test_volume_mounts_name_declared_volumes(self) -> None:
        def mount(o: Obj) -> None:
            pod = o["spec"]["runners"][0]["template"]["spec"]
            pod["containers"][0]["volumeMounts"] = [{"name": "dshm", "mountPath": "/dev/shm"}]
            pod["initContainers"] = [
                {"name": "model-init", "volumeMounts": [{"name": "cache", "mountPath": "/c"}]}
            ]

        obj = edit(standalone(), mount)
        expected = (
            prefixed("pool-a", VOLUME.format(c="model-init", v="cache")),
            prefixed("pool-a", VOLUME.format(c="ome-container", v="dshm")),
        )
        denied_with(review(create(obj), EMPTY), *expected)
        denied_with(review(update(standalone(), obj), EMPTY), *expected)
        declared = edit(
            obj,
            lambda o: o["spec"]["runners"][0]["template"]["spec"].__setitem__(
                "volumes",
                [
                    {"name": "dshm", "emptyDir": {}},
                    {"name": "cache", "persistentVolumeClaim": {"claimName": "c"}},
                ],
            ),
        )
        allowed(review(create(declared), EMPTY))

    def test_volume_mounts_on_a_projected_replica_by_the_controller(self) -> None:
        obj = edit(
            projected(),
            lambda o: o["spec"]["runners"][0]["template"]["spec"]["containers"][0].__setitem__(
                "volumeMounts", [{"name": "devinf", "mountPath": "/dev/infiniband"}]
            ),
        )
        denied_with(
            review(create(obj, CONTROLLER), EMPTY),
            prefixed("llama-engine", VOLUME.format(c="ome-container", v="devinf")),
        )

    def test_leader_and_worker_runners_are_checked_on_their_own_pods(self) -> None:
        def leader_worker(o: Obj) -> None:
            leader = {"spec": {"containers": [{"name": "ome-container", "volumeMounts": [{"name": "dshm"}]}]}}
            worker = {
                "spec": {
                    "volumes": [{"name": "dshm"}],
                    "containers": [{"name": "w", "volumeMounts": [{"name": "dshm"}]}],
                }
            }
            o["spec"]["runners"] = [
                {"name": "leader", "size": 1, "template": leader},
                {"name": "worker", "size": 2, "template": worker},
            ]

        obj = edit(standalone(), leader_worker)
        message = VOLUME.format(c="ome-container", v="dshm").replace('runner "default"', 'runner "leader"')
        denied_with(review(create(obj), EMPTY), prefixed("pool-a", message))

    def test_odd_template_shapes_do_not_crash(self) -> None:
        for template in (
            {},
            {"spec": None},
            {"spec": {"containers": "x"}},
            {"spec": {"containers": [1, {"volumeMounts": [None]}]}},
        ):
            obj = edit(standalone(), lambda o, t=template: o["spec"]["runners"][0].__setitem__("template", t))
            review(create(obj), EMPTY)


class TestOrder:
    def test_every_denial_in_check_order_and_the_first_ones_code(self) -> None:
        obj = with_spec(
            with_annotation(
                edit(standalone(), lambda o: o["metadata"].__setitem__("name", "Bad")), MIGRATION_KEY, "{}"
            ),
            parentRef={"name": "x"},
            placementReplicaLimit=2,
            modelRef={"name": "m"},
            runtimeRef={"name": "runtime-a", "autoSync": False},
            component="decoder",
            autoscaler={"class": "KEDA"},
            lifecycle={"minReadySeconds": 1},
            pacing={"partition": 9},
        )
        decision = review(create(obj), catalog(runtime("runtime-a")))
        assert decision.code == 403
        assert decision.messages == tuple(
            prefixed("Bad", m)
            for m in (
                PARENT_REF,
                PLACEMENT,
                EXCLUSIVE,  # the pin is one switch with the source in Go: not reported beside EXCLUSIVE
                scaler("KEDA"),
                MIN_READY,
                BAD_NAME,
                MIGRATION,
                NO_DECODER,
                "KedaTriggersRequired: class=keda requires at least 1 trigger",
                "spec.pacing.partition (9) must be <= spec.replicas (1); "
                "an over-partition silently holds every Instance back forever",
            )
        )


# -- the AdmissionReview wire format ---------------------------------------------------------------------


class TestWire:
    def review_dict(self, operation: str, obj: Obj | None, old: Obj | None = None) -> Obj:
        return {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
                "operation": operation,
                "namespace": NS,
                "name": (obj or old or {}).get("metadata", {}).get("name", ""),
                "userInfo": {"username": USER, "groups": ["system:authenticated"]},
                "object": obj,
                "oldObject": old,
            },
        }

    def test_a_denial(self) -> None:
        wire = self.review_dict("CREATE", projected())
        request = request_from_review(wire, identity=IDENTITY)
        assert request.username == USER
        assert request.groups == ("system:authenticated",)
        assert request.namespace == NS
        decision = review(request, EMPTY)
        assert admission_review_response(wire, decision) == {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": {
                "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
                "allowed": False,
                "status": {"code": 403, "message": projected_by(), "reason": "Forbidden"},
            },
        }

    def test_an_allowed_metadata_only_update(self) -> None:
        wire = self.review_dict("UPDATE", with_annotation(projected(), "team", "a"), projected())
        decision = review(request_from_review(wire, identity=IDENTITY), EMPTY)
        assert admission_review_response(wire, decision)["response"] == {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "allowed": True,
            "status": {"code": 200, "message": "metadata-only update"},
        }

    def test_a_delete_without_objects(self) -> None:
        wire = self.review_dict("DELETE", None, projected())
        response = admission_review_response(wire, review(request_from_review(wire), EMPTY))
        assert response["response"] == {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "allowed": True,
            "status": {"code": 200},
        }

    def test_an_identity_error_is_a_500(self) -> None:
        wire = self.review_dict("CREATE", standalone())
        decision = review(request_from_review(wire, identity_error="no ConfigMap"), EMPTY)
        status = admission_review_response(wire, decision)["response"]["status"]
        assert status["code"] == 500
        assert "reason" not in status

    def test_a_malformed_review(self) -> None:
        request = request_from_review({"request": {"userInfo": "x", "object": []}})
        assert request.operation == ""
        assert request.obj is None
        assert admission_review_response({}, review(request, EMPTY))["response"]["uid"] == ""


# -- never a crash -------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 5) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)
spec_keys = st.sampled_from(
    [
        "autoscaler",
        "runners",
        "pacing",
        "runtimeRef",
        "modelRef",
        "lifecycle",
        "replicas",
        "parentRef",
        "component",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(spec_keys, json_values, max_size=4), st.sampled_from(["CREATE", "UPDATE"]))
def test_any_spec_gets_a_decision(spec: Mapping[str, Any], operation: str) -> None:
    obj = standalone()
    obj["spec"].update(spec)
    old = standalone() if operation == "UPDATE" else None
    decision = review(
        AdmissionRequest(operation, obj, old, USER, (), IDENTITY), catalog(runtime("runtime-a"))
    )
    assert isinstance(decision, AdmissionDecision)
    assert decision.allowed == (decision.code == 200)
