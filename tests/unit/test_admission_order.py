"""OME's admission check order, one test per check, each message whole.

The Go read is ome-projects/ome ``pkg/webhook/admission/inferencereplica/validator.go`` and
``ownership.go`` at commit 58a57f25 (``Handle``, ``admitCreate``, ``admitUpdate``). Go answers with the
first denial; :func:`review` lists every denial in Go's order, so each test puts a check beside the one
Go runs after it (or an exemption beside the rule it skips) and pins both messages and their order.
"""

from __future__ import annotations

from omerender.admission import METADATA_ONLY, review
from tests.unit.test_admission import (
    BAD_NAME,
    COMPOSED,
    COMPOSED_DENIAL,
    COMPOSER,
    CONTROLLER,
    CONTROLLER_CREATE,
    EMPTY,
    EXCLUSIVE,
    MIGRATION,
    MIGRATION_KEY,
    MIN_READY,
    NO_DECODER,
    NO_SOURCE,
    OWNER_REF,
    PARENT_REF,
    PINNED,
    PLACEMENT,
    VOLUME,
    Obj,
    catalog,
    collision,
    create,
    edit,
    isvc,
    isvc_ref,
    orphan,
    prefixed,
    projected,
    projected_by,
    projected_no_identity,
    refs_replica,
    runtime,
    scaler,
    standalone,
    update,
    with_annotation,
    with_owners,
    with_spec,
    without_spec,
)

PARTITION = (
    "spec.pacing.partition (9) must be <= spec.replicas (1); "
    "an over-partition silently holds every Instance back forever"
)
KEDA_TRIGGERS = "KedaTriggersRequired: class=keda requires at least 1 trigger"


def named(obj: Obj, name: str) -> Obj:
    return edit(obj, lambda o: o["metadata"].__setitem__("name", name))


def dangling_mount(obj: Obj) -> Obj:
    container = {
        "name": "ome-container",
        "image": "sgl:1.0",
        "volumeMounts": [{"name": "dshm", "mountPath": "/d"}],
    }
    return edit(
        obj, lambda o: o["spec"]["runners"][0]["template"]["spec"].__setitem__("containers", [container])
    )


# -- Handle ------------------------------------------------------------------------------------------------


class TestHandle:
    def test_parent_ref_immutability_comes_before_component_immutability(self) -> None:
        new = with_spec(projected(), parentRef={"name": "other"}, component="decoder")
        decision = review(update(projected(), new, CONTROLLER), EMPTY)
        assert decision.messages == (
            prefixed("llama-engine", "spec.parentRef is immutable"),
            prefixed("llama-engine", "spec.component is immutable"),
        )

    def test_component_immutability_comes_before_the_ownership_table(self) -> None:
        new = with_spec(projected(), component="decoder")
        decision = review(update(projected(), new), EMPTY)
        assert decision.messages == (prefixed("llama-engine", "spec.component is immutable"), projected_by())

    def test_a_metadata_only_update_is_judged_by_the_old_objects_form(self) -> None:
        # The old object is projected by its owner reference alone; the update removes the reference (as an
        # orphaning delete does) and adds a migration request. Go reads the form from the old object, so
        # the request is a projected replica's mailbox and passes; read from the new one it would be refused.
        old = with_owners(standalone("llama-engine"), isvc_ref())
        new = with_annotation(standalone("llama-engine"), MIGRATION_KEY, "{}")
        decision = review(update(old, new, identity=None, error="unreadable"), EMPTY)
        assert (decision.allowed, decision.messages) == (True, (METADATA_ONLY,))
        # On a replica that was standalone, the same request is refused without reading the identity.
        refused = review(update(standalone(), with_annotation(standalone(), MIGRATION_KEY, "{}")), EMPTY)
        assert (refused.code, refused.messages) == (403, (prefixed("pool-a", MIGRATION),))

    def test_an_unreadable_identity_answers_with_gos_load_error_whole(self) -> None:
        cause = 'configmaps "inferenceservice-config" not found'
        decision = review(create(standalone(), identity=None, error=cause), EMPTY)
        assert (decision.code, decision.messages) == (500, (f"load inferenceReplica config: {cause}",))

    def test_the_ownership_table_comes_before_the_shape_checks(self) -> None:
        obj = with_spec(standalone(), lifecycle={"minReadySeconds": 1}, pacing={"partition": 9})
        decision = review(create(obj), EMPTY)
        assert decision.messages == (prefixed("pool-a", MIN_READY), prefixed("pool-a", PARTITION))

    def test_the_shape_checks_run_autoscaler_then_pacing_then_volumes(self) -> None:
        obj = dangling_mount(with_spec(projected(), autoscaler={"class": "KEDA"}, pacing={"partition": 9}))
        decision = review(create(obj, CONTROLLER), EMPTY)
        assert decision.messages == tuple(
            prefixed("llama-engine", m)
            for m in (KEDA_TRIGGERS, PARTITION, VOLUME.format(c="ome-container", v="dshm"))
        )


# -- admitCreate ---------------------------------------------------------------------------------------


class TestAdmitCreate:
    def test_parent_ref_alone_comes_before_everything(self) -> None:
        obj = with_annotation(with_spec(standalone(), parentRef={"name": "x"}), COMPOSED, "svc:paused")
        decision = review(create(obj, CONTROLLER), EMPTY)
        assert decision.messages[:2] == (
            prefixed("pool-a", PARENT_REF),
            prefixed("pool-a", CONTROLLER_CREATE),
        )

    def test_composed_fields_come_before_the_form(self) -> None:
        obj = with_annotation(with_owners(standalone("llama-engine"), isvc_ref()), COMPOSED, "svc:paused")
        decision = review(create(obj), EMPTY)
        assert decision.messages == (prefixed("llama-engine", COMPOSED_DENIAL), projected_by())

    def test_a_users_projected_create_names_the_operation_without_an_identity(self) -> None:
        decision = review(create(projected(), identity=None), EMPTY)
        assert (decision.code, decision.messages) == (403, (projected_no_identity("CREATE"),))

    def test_the_controllers_projected_create_skips_the_standalone_rules(self) -> None:
        # A projected replica keeps its HPA class, and its name is the InferenceService's business.
        obj = named(with_spec(projected(), autoscaler={"class": "HPA"}), "Llama-Engine")
        assert review(create(obj, CONTROLLER), catalog(isvc("Llama-Engine"))).allowed

    def test_the_controllers_create_comes_before_placement_and_the_spec(self) -> None:
        obj = without_spec(with_spec(standalone(), placementReplicaLimit=2), "runners")
        decision = review(create(obj, CONTROLLER), EMPTY)
        # The controller may write placement, so only its create and the missing source are reported.
        assert decision.messages == (prefixed("pool-a", CONTROLLER_CREATE), prefixed("pool-a", NO_SOURCE))

    def test_placement_comes_before_the_template_source(self) -> None:
        obj = without_spec(with_spec(standalone(), placementExecution={"mode": "Parallel"}), "runners")
        decision = review(create(obj), EMPTY)
        assert decision.messages == (prefixed("pool-a", PLACEMENT), prefixed("pool-a", NO_SOURCE))

    def test_the_source_comes_before_the_scaler_class_and_lifecycle(self) -> None:
        obj = with_spec(
            standalone(),
            modelRef={"name": "m"},
            autoscaler={"class": "HPA"},
            lifecycle={"minReadySeconds": 1},
        )
        decision = review(create(obj), EMPTY)
        assert decision.messages == tuple(
            prefixed("pool-a", m) for m in (EXCLUSIVE, scaler("HPA"), MIN_READY)
        )

    def test_a_pin_is_reported_once_the_source_is_single(self) -> None:
        obj = refs_replica()
        obj["spec"]["runtimeRef"]["autoSync"] = False
        assert review(create(obj), EMPTY).messages == (prefixed("pool-a", PINNED),)

    def test_the_spec_comes_before_the_name(self) -> None:
        obj = named(with_spec(standalone(), autoscaler={"class": "KEDA", "keda": {"triggers": [{}]}}), "Pool")
        decision = review(create(obj), EMPTY)
        assert decision.messages == (prefixed("Pool", scaler("KEDA")), prefixed("Pool", BAD_NAME))

    def test_the_name_comes_before_a_migration_request(self) -> None:
        obj = named(with_annotation(standalone(), MIGRATION_KEY, "{}"), "Pool")
        decision = review(create(obj), EMPTY)
        assert decision.messages == (prefixed("Pool", BAD_NAME), prefixed("Pool", MIGRATION))

    def test_a_migration_request_comes_before_the_runtime_piece(self) -> None:
        obj = with_annotation(refs_replica("decoder"), MIGRATION_KEY, "{}")
        decision = review(create(obj), catalog(runtime("runtime-a")))
        assert decision.messages == (prefixed("pool-a", MIGRATION), prefixed("pool-a", NO_DECODER))

    def test_the_runtime_piece_comes_before_a_name_collision(self) -> None:
        obj = named(refs_replica("decoder"), "llama-decoder")
        decision = review(create(obj), catalog(runtime("runtime-a"), isvc("llama")))
        assert decision.messages == (
            prefixed("llama-decoder", NO_DECODER),
            prefixed("llama-decoder", collision("llama")),
        )

    def test_the_name_itself_collides_before_the_name_less_its_suffix(self) -> None:
        decision = review(create(standalone("llama-engine")), catalog(isvc("llama"), isvc("llama-engine")))
        assert decision.messages == (
            prefixed("llama-engine", collision("llama-engine")),
            prefixed("llama-engine", collision("llama")),
        )


# -- admitUpdate ---------------------------------------------------------------------------------------


class TestAdmitUpdate:
    def test_the_owner_reference_comes_before_composed_fields(self) -> None:
        new = with_annotation(with_owners(standalone(), isvc_ref()), COMPOSED, "svc:paused")
        decision = review(update(standalone(), new), EMPTY)
        assert decision.messages == (prefixed("pool-a", OWNER_REF), prefixed("pool-a", COMPOSED_DENIAL))

    def test_composed_fields_come_before_the_projected_write(self) -> None:
        new = with_annotation(with_spec(projected(), replicas=3), COMPOSED, "svc:paused")
        decision = review(update(projected(), new), EMPTY)
        assert decision.messages == (prefixed("llama-engine", COMPOSED_DENIAL), projected_by())

    def test_the_owner_reference_comes_before_the_projected_write(self) -> None:
        new = with_spec(with_owners(projected(), isvc_ref(uid="another-uid")), replicas=3)
        decision = review(update(projected(), new), EMPTY)
        assert decision.messages == (prefixed("llama-engine", OWNER_REF), projected_by())

    def test_a_users_projected_update_names_the_operation_without_an_identity(self) -> None:
        decision = review(update(projected(), with_spec(projected(), replicas=3), identity=None), EMPTY)
        assert decision.messages == (projected_no_identity("UPDATE"),)

    def test_the_form_is_the_old_objects(self) -> None:
        # A user attaching a standalone replica to an InferenceService is refused for the owner reference,
        # and the rest is judged as the standalone replica the old object is: a scale passes.
        new = with_spec(with_owners(standalone(), isvc_ref()), replicas=3)
        assert review(update(standalone(), new), EMPTY).messages == (prefixed("pool-a", OWNER_REF),)
        # The controller doing the same is a composer on a replica it does not (yet) project: replicas is a
        # user field. Judged by the new object it would have been a projected write, and allowed.
        decision = review(update(standalone(), new, CONTROLLER), EMPTY)
        assert decision.messages == (prefixed("pool-a", COMPOSER),)

    def test_an_orphaned_replica_stays_projected_by_its_parent_ref(self) -> None:
        decision = review(update(orphan(), with_spec(orphan(), replicas=3)), EMPTY)
        assert decision.messages == (projected_by(),)

    def test_a_controller_only_change_comes_before_the_spec(self) -> None:
        new = with_spec(standalone(), placementReplicaLimit=2, lifecycle={"minReadySeconds": 1})
        decision = review(update(standalone(), new), EMPTY)
        assert decision.messages == (prefixed("pool-a", PLACEMENT), prefixed("pool-a", MIN_READY))

    def test_the_controllers_user_field_write_comes_before_the_spec(self) -> None:
        new = with_spec(standalone(), replicas=3, autoscaler={"class": "HPA"})
        decision = review(update(standalone(), new, CONTROLLER), EMPTY)
        assert decision.messages == (prefixed("pool-a", COMPOSER), prefixed("pool-a", scaler("HPA")))

    def test_the_spec_comes_before_a_migration_request(self) -> None:
        new = with_annotation(with_spec(standalone(), autoscaler={"class": "HPA"}), MIGRATION_KEY, "{}")
        decision = review(update(standalone(), new), EMPTY)
        assert decision.messages == (prefixed("pool-a", scaler("HPA")), prefixed("pool-a", MIGRATION))

    def test_a_migration_request_comes_before_the_runtime_piece(self) -> None:
        old = refs_replica("decoder")
        new = with_annotation(
            edit(old, lambda o: o["spec"]["runtimeRef"].__setitem__("name", "runtime-b")), MIGRATION_KEY, "{}"
        )
        decision = review(update(old, new), catalog(runtime("runtime-b")))
        no_piece = (
            'ClusterServingRuntime "runtime-b" has no decoder piece; a decoder replica cannot render from it'
        )
        assert decision.messages == (prefixed("pool-a", MIGRATION), prefixed("pool-a", no_piece))

    def test_the_runtime_piece_is_read_only_when_the_reference_changes(self) -> None:
        old = refs_replica("decoder")
        assert review(update(old, with_spec(old, replicas=3)), catalog(runtime("runtime-a"))).allowed

    def test_a_composed_fields_change_is_not_metadata_only_and_rechecks_the_spec(self) -> None:
        stored = with_spec(standalone(), lifecycle={"minReadySeconds": 5})  # admitted before the rule
        new = with_annotation(stored, COMPOSED, "svc:paused")
        decision = review(update(stored, new, CONTROLLER), EMPTY)
        assert decision.messages == (prefixed("pool-a", MIN_READY),)
        # Without it the same unchanged spec is a metadata-only update, never re-checked.
        plain = with_annotation(stored, "team", "a")
        assert review(update(stored, plain), EMPTY).messages == (METADATA_ONLY,)

    def test_a_composed_fields_change_needs_the_identity(self) -> None:
        new = with_annotation(standalone(), COMPOSED, "svc:paused")
        decision = review(update(standalone(), new, CONTROLLER, error="ConfigMap ome/x not found"), EMPTY)
        assert (decision.allowed, decision.code) == (False, 500)
        assert review(
            update(standalone(), with_annotation(standalone(), "a", "b"), error="unreadable"), EMPTY
        ).allowed

    def test_the_shape_checks_follow_the_controllers_projected_write(self) -> None:
        decision = review(
            update(projected(), with_spec(projected(), pacing={"partition": 9}), CONTROLLER), EMPTY
        )
        assert decision.messages == (prefixed("llama-engine", PARTITION),)
