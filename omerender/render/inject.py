"""Model injection into a runner and its pod (02 §3.4, §3.5, §3.8; §10 rules 17–22)."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from omerender._records import record
from omerender.constants import ENV_MODEL_PATH
from omerender.models import FineTunedWeight, ModelResource, RuntimeResource
from omerender.models.catalog_objects import Storage
from omerender.naming import base_model_label, cluster_base_model_label
from omerender.render.data import set_env, setdefault_env
from omerender.render.storage import MODEL_MOUNT_PATH, is_pvc, is_sharded, parse_pvc

__all__ = [
    "INJECTION_ANNOTATIONS",
    "ModelContext",
    "cohere_tfew_serving",
    "edit_pod",
    "edit_runner",
    "empty_model_dir_required",
    "original_model_mount_necessary",
]

FT_VOLUME = "model-empty-dir"  # constants.ModelEmptyDirVolumeName
FT_MOUNT_PATH = "/opt/ml/model"  # constants.ModelDefaultMountPath
OVERLAY_ROOT = "/opt/ml/model-overlays"
OVERLAY_VOLUME_PREFIX = "model-overlay-"

# Fine-tuned serving constants (ome-projects/ome pkg/constants/constants.go).
SERVED_MODEL_NAME_PREFIX = "/data"  # LLamaVllmFTServingServedModelNamePrefix
TFEW_PATH_ENV = "TFEW_PATH"  # TFewWeightPathEnvVarKey
TFEW_WEIGHT_PATH = "/opt/ml/tfew/fastertransformer/1"  # CohereTFewFineTunedWeightDefaultPath
TFEW_MOUNT_ROOT = "/opt/ml/tfew"  # CohereTFewFineTunedWeightVolumeMountPath
BASE_SUB_PATH = "base"  # BaseModelVolumeMountSubPath
FINE_TUNED_SUB_PATH = "finetuned"  # FineTunedWeightVolumeMountSubPath

# The component annotations the pod build reads (isvcutils annotations.go and model.go).
ANN_MERGED = "ome.io/fine-tuned-serving-with-merged-weights"  # FTServingWithMergedWeightsAnnotationKey
ANN_ADAPTER = "ome.io/inject-fine-tuned-adapter"  # FineTunedAdapterInjectionKey
ANN_STRATEGY = "ome.io/fine-tuned-weight-ft-strategy"  # FineTunedWeightFTStrategyKey
ANN_VENDOR = "ome.io/base-model-vendor"  # BaseModelVendorAnnotationKey
ANN_FORMAT = "ome.io/base-model-format"  # BaseModelFormat
INJECTION_ANNOTATIONS = (ANN_MERGED, ANN_ADAPTER, ANN_STRATEGY, ANN_VENDOR, ANN_FORMAT)


def original_model_mount_necessary(annotations: Mapping[str, str]) -> bool:
    """``isvcutils.IsOriginalModelVolumeMountNecessary`` (ome-projects/ome
    ``pkg/controller/v1beta1/inferenceservice/utils/annotations.go`` @ 4dfb96b1): the base weights are
    mounted unless the component's annotations say merged weights are served."""
    return annotations.get(ANN_MERGED) != "true"


def empty_model_dir_required(annotations: Mapping[str, str]) -> bool:
    """``isvcutils.IsEmptyModelDirVolumeRequired`` (annotations.go @ 4dfb96b1): a non-empty
    ``ome.io/inject-fine-tuned-adapter``, whoever wrote it (the fine-tuned render, the replica or the
    piece)."""
    return bool(annotations.get(ANN_ADAPTER))


def cohere_tfew_serving(annotations: Mapping[str, str]) -> bool:
    """``isvcutils.IsCohereCommand1TFewFTServing`` (annotations.go @ 4dfb96b1): vendor ``cohere``,
    strategy ``tfew``, weights not merged."""
    return (
        annotations.get(ANN_VENDOR) == "cohere"
        and annotations.get(ANN_STRATEGY) == "tfew"
        and annotations.get(ANN_MERGED) != "true"
    )


def _go_join(*parts: str) -> str:
    """Go's ``filepath.Join`` on absolute paths: joined with ``/``, empty parts dropped, cleaned."""
    joined = "/".join(p for p in parts if p)
    return posixpath.normpath(joined) if joined else ""


def _update_volume_mount(container: dict[str, Any], mount: dict[str, Any]) -> None:
    """``isvcutils.UpdateVolumeMount``: the first same-named mount takes the path, sub-path and
    read-only flag (zero values dropped, as Go's encoder drops them); else the mount is appended."""
    mounts = container.setdefault("volumeMounts", [])
    for existing in mounts:
        if isinstance(existing, dict) and existing.get("name") == mount["name"]:
            existing["mountPath"] = mount["mountPath"]
            for key in ("subPath", "readOnly"):
                if mount.get(key):
                    existing[key] = mount[key]
                else:
                    existing.pop(key, None)
            return
    mounts.append(mount)


@record
class ModelContext:
    """What a modelRef render injects; absent for runtimeRef-alone and runners replicas."""

    model: ModelResource
    fine_tuned: FineTunedWeight | None
    overlays: tuple[ModelResource, ...]

    @property
    def merged(self) -> bool:
        if self.fine_tuned is None:
            return False
        config = self.fine_tuned.spec.get("configuration")
        return isinstance(config, dict) and config.get("merged_weights") is True


def edit_runner(
    runner: dict[str, Any],
    *,
    component: str,
    ctx: ModelContext | None,
    router_config: dict[str, Any] | None,
    annotations: Mapping[str, str] | None = None,
) -> None:
    """Env and mounts OME puts on the runner container before it merges into the pod.

    ``annotations`` are the component's (:func:`omerender.render.metadata.component_annotations`),
    which ``UpdateEnvVariables`` and ``UpdateVolumeMounts`` read."""
    if ctx is not None and component in ("engine", "decoder"):
        notes = annotations or {}
        _model_env(runner, ctx, notes)
        _model_mounts(runner, ctx, notes)
    if router_config:
        # OME appends the router config to the runner env, sorted by key (Go's map order is random).
        env = runner.setdefault("env", [])
        env.extend({"name": key, "value": _env_text(router_config[key])} for key in sorted(router_config))


def _model_path(ctx: ModelContext, annotations: Mapping[str, str]) -> str | None:
    """``modelPathEnvValue`` (ome-projects/ome ``pkg/render/model.go`` @ f0c4ef77): a Sharded model's
    storage URI; else, when the base weights are mounted (``IsOriginalModelVolumeMountNecessary``),
    ``/opt/ml/model`` for a PVC model or the node-local path."""
    storage = ctx.model.spec.storage
    if storage is None:
        return None
    if is_sharded(ctx.model):
        return storage.storage_uri or None
    if not original_model_mount_necessary(annotations):
        return None
    if is_pvc(storage):
        return MODEL_MOUNT_PATH
    return storage.path or None


def _overlay_path(overlay: ModelResource) -> str | None:
    """``overlayEffectivePath`` (pkg/render/overlay.go): Sharded → its storage URI, else its mount path."""
    storage = overlay.spec.storage
    if storage is None:
        return None
    if is_sharded(overlay):
        return storage.storage_uri or None
    return f"{OVERLAY_ROOT}/{overlay.metadata.name}"


def _overlay_mount(overlay: ModelResource) -> dict[str, Any] | None:
    """``overlayVolumeMount``: read-only at ``/opt/ml/model-overlays/<name>``, with a PVC's sub-path."""
    storage = overlay.spec.storage
    if storage is None or is_sharded(overlay):
        return None
    name = overlay.metadata.name
    mount: dict[str, Any] = {"name": OVERLAY_VOLUME_PREFIX + name, "mountPath": f"{OVERLAY_ROOT}/{name}"}
    pvc = parse_pvc(storage)
    if pvc is not None:
        return {**mount, "readOnly": True, "subPath": pvc.sub_path}
    return {**mount, "readOnly": True} if storage.path is not None else None


def _overlay_volume(overlay: ModelResource) -> dict[str, Any] | None:
    """``overlayVolume``: the overlay's PVC (read-only) or node-local path, named ``model-overlay-<name>``."""
    storage = overlay.spec.storage
    if storage is None or is_sharded(overlay):
        return None
    return _volume(OVERLAY_VOLUME_PREFIX + overlay.metadata.name, storage)


def _volume(name: str, storage: Storage) -> dict[str, Any] | None:
    pvc = parse_pvc(storage)
    if pvc is not None:
        return {"name": name, "persistentVolumeClaim": {"claimName": pvc.claim, "readOnly": True}}
    if storage.path is not None:
        return {"name": name, "hostPath": {"path": storage.path}}
    return None


def _model_env(runner: dict[str, Any], ctx: ModelContext, annotations: Mapping[str, str]) -> None:
    """``UpdateEnvVariables`` (ome-projects/ome ``pkg/render/model.go`` @ f0c4ef77, the only stored
    version), branch by branch:

    - base-model serving: ``MODEL_PATH`` (:func:`_model_path`) then the overlays' paths
      (``AppendOverlayEnvVars``), each only when the runner does not set it;
    - fine-tuned serving, model vendor ``meta``: ``SERVED_MODEL_NAME`` =
      ``filepath.Join("/data", <ome.io/inject-fine-tuned-adapter>)`` replacing the runner's value
      (``UpdateEnvVars``), and ``MODEL_PATH=/opt/ml/model`` when the runner sets none;
    - fine-tuned serving, vendor ``cohere`` with the t-few strategy (:func:`cohere_tfew_serving`):
      ``TFEW_PATH=/opt/ml/tfew/fastertransformer/1`` when the runner sets none; other Cohere strategies
      and other vendors: nothing; no vendor: nothing (Go logs a warning);
    - the accelerator class's ``environmentOverride``: not reproduced, a replica picks no class.
    """
    if ctx.fine_tuned is None:
        path = _model_path(ctx, annotations)
        if path is not None:
            setdefault_env(runner, ENV_MODEL_PATH, path)
        for overlay in ctx.overlays:
            value = _overlay_path(overlay)
            if value is not None:
                name = overlay.metadata.name.upper().replace("-", "_")
                setdefault_env(runner, f"OVERLAY_{name}_MODEL_PATH", value)
        return
    vendor = ctx.model.spec.vendor
    if vendor == "meta":
        served = _go_join(SERVED_MODEL_NAME_PREFIX, annotations.get(ANN_ADAPTER, ""))
        set_env(runner, "SERVED_MODEL_NAME", served)
        setdefault_env(runner, ENV_MODEL_PATH, FT_MOUNT_PATH)
    elif vendor == "cohere" and cohere_tfew_serving(annotations):
        setdefault_env(runner, TFEW_PATH_ENV, TFEW_WEIGHT_PATH)


def _model_mounts(runner: dict[str, Any], ctx: ModelContext, annotations: Mapping[str, str]) -> None:
    """``UpdateVolumeMounts`` (ome-projects/ome ``pkg/render/model.go`` @ f0c4ef77), branch by branch:

    - the base weights, unless the model is Sharded (fetched at run time) or the annotations say merged
      weights are served (``IsOriginalModelVolumeMountNecessary``): a PVC at ``/opt/ml/model`` with its
      sub-path, else the node-local path, read-only (``AppendVolumeMount``: no duplicate check);
    - each overlay's mount (``AppendOverlayVolumeMounts``);
    - fine-tuned serving: ``model-empty-dir`` at ``/opt/ml/model`` unless the runner mounts a volume of
      that name (``AppendVolumeMountIfNotExist``); for Cohere t-few (:func:`cohere_tfew_serving`) that
      mount moves to ``/opt/ml/model/<base-model-format>`` with sub-path ``base`` (``UpdateVolumeMount``)
      and a read-only mount of sub-path ``finetuned`` at ``/opt/ml/tfew/<base-model-format>`` follows.
    """
    storage = ctx.model.spec.storage
    mounts: list[dict[str, Any]] = []
    if storage is not None and not is_sharded(ctx.model) and original_model_mount_necessary(annotations):
        name = ctx.model.metadata.name
        pvc = parse_pvc(storage)
        if pvc is not None:
            mounts.append(
                {"name": name, "mountPath": MODEL_MOUNT_PATH, "readOnly": True, "subPath": pvc.sub_path}
            )
        elif storage.path is not None:
            mounts.append({"name": name, "mountPath": storage.path, "readOnly": True})
    mounts.extend(m for m in map(_overlay_mount, ctx.overlays) if m is not None)
    if mounts:
        runner.setdefault("volumeMounts", []).extend(mounts)
    if ctx.fine_tuned is None:
        return
    existing = runner.setdefault("volumeMounts", [])
    if not any(isinstance(m, dict) and m.get("name") == FT_VOLUME for m in existing):
        existing.append({"name": FT_VOLUME, "mountPath": FT_MOUNT_PATH})
    if cohere_tfew_serving(annotations):
        model_format = annotations.get(ANN_FORMAT, "")
        _update_volume_mount(
            runner,
            {
                "name": FT_VOLUME,
                "mountPath": _go_join(FT_MOUNT_PATH, model_format),
                "subPath": BASE_SUB_PATH,
            },
        )
        existing.append(
            {
                "name": FT_VOLUME,
                "mountPath": _go_join(TFEW_MOUNT_ROOT, model_format),
                "readOnly": True,
                "subPath": FINE_TUNED_SUB_PATH,
            }
        )


def _env_text(value: Any) -> str:
    """Router config is ``map[string]string`` in OME; render YAML scalars as Go would print them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def edit_pod(
    pod: dict[str, Any],
    *,
    component: str,
    ctx: ModelContext | None,
    runtime: RuntimeResource,
    namespace: str,
    annotations: Mapping[str, str] | None = None,
) -> None:
    """``UpdatePodSpecVolumes`` (ome-projects/ome ``pkg/render/model.go`` @ f0c4ef77) and the model-ready
    node selector of ``UpdatePodSpecNodeSelector`` (``pkg/render/accelerator.go`` @ a543351b).

    Volumes: the model's (a PVC read-only, else the node-local path; none for a Sharded model), each
    overlay's, then ``model-empty-dir`` (memory) when the component's annotations carry a non-empty
    ``ome.io/inject-fine-tuned-adapter`` (``IsEmptyModelDirVolumeRequired``) and no volume has that name
    (``AppendVolumeIfNotExists``) — on every component and whatever the source, as in Go. A PVC or
    Sharded model gets no model-ready selector (its nodes are not labelled), nor do merged fine-tuned
    weights."""
    volumes = pod.setdefault("volumes", [])
    storage = ctx.model.spec.storage if ctx is not None else None
    if ctx is not None and storage is not None and not is_sharded(ctx.model):
        volume = _volume(ctx.model.metadata.name, storage)
        if volume is not None:
            volumes.append(volume)
    for overlay in ctx.overlays if ctx is not None else ():
        volume = _overlay_volume(overlay)
        if volume is not None and not any(v.get("name") == volume["name"] for v in volumes):
            volumes.append(volume)
    if empty_model_dir_required(annotations or {}) and not any(v.get("name") == FT_VOLUME for v in volumes):
        volumes.append({"name": FT_VOLUME, "emptyDir": {"medium": "Memory"}})
    if not volumes:
        del pod["volumes"]
    if ctx is not None and component in ("engine", "decoder") and not ctx.merged:
        model = ctx.model
        if not is_pvc(storage) and not is_sharded(model):
            key = (
                cluster_base_model_label(model.metadata.name)
                if model.kind == "ClusterBaseModel"
                else base_model_label(model.metadata.namespace or namespace, model.metadata.name)
            )
            pod.setdefault("nodeSelector", {}).setdefault(key, "Ready")
