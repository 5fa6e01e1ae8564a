"""Model injection into a runner and its pod (02 §3.4, §3.5, §3.8; §10 rules 17–22)."""

from __future__ import annotations

from typing import Any

from omerender._records import record
from omerender.constants import ENV_MODEL_PATH
from omerender.models import FineTunedWeight, ModelResource, RuntimeResource
from omerender.models.catalog_objects import Storage
from omerender.naming import base_model_label, cluster_base_model_label
from omerender.render.data import set_env, setdefault_env
from omerender.render.storage import MODEL_MOUNT_PATH, is_pvc, is_sharded, parse_pvc

__all__ = ["ModelContext", "edit_pod", "edit_runner"]

FT_VOLUME = "model-empty-dir"
FT_MOUNT_PATH = "/opt/ml/model"
OVERLAY_ROOT = "/opt/ml/model-overlays"
OVERLAY_VOLUME_PREFIX = "model-overlay-"


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
) -> None:
    """Env and mounts OME puts on the runner container before it merges into the pod."""
    if ctx is not None and component in ("engine", "decoder"):
        _model_env(runner, ctx)
        _model_mounts(runner, ctx)
    if router_config:
        # OME appends the router config to the runner env, sorted by key (Go's map order is random).
        env = runner.setdefault("env", [])
        env.extend({"name": key, "value": _env_text(router_config[key])} for key in sorted(router_config))


def _model_path(ctx: ModelContext) -> str | None:
    """``modelPathEnvValue`` (pkg/render/model.go): a Sharded model's storage URI; else, when the base
    weights are mounted, ``/opt/ml/model`` for a PVC model or the node-local path."""
    storage = ctx.model.spec.storage
    if storage is None:
        return None
    if is_sharded(ctx.model):
        return storage.storage_uri or None
    if ctx.merged:
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


def _model_env(runner: dict[str, Any], ctx: ModelContext) -> None:
    """``UpdateEnvVariables`` (pkg/render/model.go): MODEL_PATH and the overlays' paths, each only when
    the runner does not set it; a fine-tuned render sets the vendor's variables instead."""
    if ctx.fine_tuned is None:
        path = _model_path(ctx)
        if path is not None:
            setdefault_env(runner, ENV_MODEL_PATH, path)
        for overlay in ctx.overlays:
            value = _overlay_path(overlay)
            if value is not None:
                name = overlay.metadata.name.upper().replace("-", "_")
                setdefault_env(runner, f"OVERLAY_{name}_MODEL_PATH", value)
    elif ctx.model.spec.vendor == "meta":
        assert ctx.fine_tuned is not None
        set_env(runner, "SERVED_MODEL_NAME", f"/data/{ctx.fine_tuned.metadata.name}")
        setdefault_env(runner, ENV_MODEL_PATH, FT_MOUNT_PATH)


def _model_mounts(runner: dict[str, Any], ctx: ModelContext) -> None:
    """``UpdateVolumeMounts`` (pkg/render/model.go): the base weights (not for a Sharded model, which is
    fetched at run time, nor merged fine-tuned weights), then each overlay's mount."""
    storage = ctx.model.spec.storage
    mounts: list[dict[str, Any]] = []
    if storage is not None and not is_sharded(ctx.model) and not ctx.merged:
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


def _env_text(value: Any) -> str:
    """Router config is ``map[string]string`` in OME; render YAML scalars as Go would print them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def edit_pod(
    pod: dict[str, Any],
    main: dict[str, Any] | None,
    *,
    component: str,
    ctx: ModelContext,
    runtime: RuntimeResource,
    namespace: str,
) -> None:
    """Volumes (``UpdatePodSpecVolumes``) and the model-ready node selector (``UpdatePodSpecNodeSelector``
    in pkg/render): a PVC or Sharded model gets no model-ready selector, its nodes are not labelled."""
    volumes = pod.setdefault("volumes", [])
    storage = ctx.model.spec.storage
    if storage is not None and not is_sharded(ctx.model):
        volume = _volume(ctx.model.metadata.name, storage)
        if volume is not None:
            volumes.append(volume)
    for overlay in ctx.overlays:
        volume = _overlay_volume(overlay)
        if volume is not None and not any(v.get("name") == volume["name"] for v in volumes):
            volumes.append(volume)
    if ctx.fine_tuned is not None:
        if not any(v.get("name") == FT_VOLUME for v in volumes):
            volumes.append({"name": FT_VOLUME, "emptyDir": {"medium": "Memory"}})
        if main is not None:
            mounts = main.setdefault("volumeMounts", [])
            if not any(m.get("mountPath") == FT_MOUNT_PATH for m in mounts):
                mounts.append({"name": FT_VOLUME, "mountPath": FT_MOUNT_PATH})
    if not volumes:
        del pod["volumes"]
    if component in ("engine", "decoder") and not ctx.merged:
        model = ctx.model
        if not is_pvc(storage) and not is_sharded(model):
            key = (
                cluster_base_model_label(model.metadata.name)
                if model.kind == "ClusterBaseModel"
                else base_model_label(model.metadata.namespace or namespace, model.metadata.name)
            )
            pod.setdefault("nodeSelector", {}).setdefault(key, "Ready")
