"""Model injection into a runner and its pod (02 §3.4, §3.5, §3.8; §10 rules 17–22)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from omerender.constants import ENV_MODEL_PATH
from omerender.models import FineTunedWeight, ModelResource, RuntimeResource
from omerender.naming import base_model_label, cluster_base_model_label
from omerender.render.data import set_env, setdefault_env

__all__ = ["ModelContext", "edit_pod", "edit_runner"]

FT_VOLUME = "model-empty-dir"
FT_MOUNT_PATH = "/opt/ml/model"
OVERLAY_ROOT = "/opt/ml/model-overlays"
GPU = "nvidia.com/gpu"


@dataclass(frozen=True, slots=True)
class ModelContext:
    """What a modelRef render injects; absent for runtimeRef-alone and runners replicas."""

    model: ModelResource
    fine_tuned: FineTunedWeight | None
    overlays: tuple[ModelResource, ...]

    @property
    def path(self) -> str | None:
        return self.model.spec.storage.path if self.model.spec.storage else None

    @property
    def merged(self) -> bool:
        if self.fine_tuned is None:
            return False
        config = self.fine_tuned.spec.get("configuration")
        return isinstance(config, dict) and config.get("merged_weights") is True


def _gpus(runner: dict[str, Any]) -> int | None:
    resources = runner.get("resources") or {}
    for section in ("limits", "requests"):
        value = (resources.get(section) or {}).get(GPU)
        if value is not None:
            try:
                return int(str(value))
            except ValueError:
                return None
    return None


def edit_runner(
    runner: dict[str, Any],
    *,
    component: str,
    ctx: ModelContext | None,
    worker_size: int,
    leader_counts: bool,
    router_config: dict[str, Any] | None,
) -> None:
    """Env and mounts OME puts on the runner container before it merges into the pod."""
    if ctx is not None and component in ("engine", "decoder"):
        path = ctx.path
        if path and not ctx.merged:
            if ctx.fine_tuned is None:
                setdefault_env(runner, ENV_MODEL_PATH, path)
            runner.setdefault("volumeMounts", []).append(
                {"name": ctx.model.metadata.name, "mountPath": path, "readOnly": True}
            )
        if ctx.fine_tuned is not None and (ctx.model.spec.vendor or "").lower() == "meta":
            set_env(runner, "SERVED_MODEL_NAME", f"/data/{ctx.fine_tuned.metadata.name}")
            setdefault_env(runner, ENV_MODEL_PATH, FT_MOUNT_PATH)
        gpus = _gpus(runner)
        if gpus is not None:
            count = worker_size + (1 if leader_counts else 0)
            set_env(runner, "PARALLELISM_SIZE", str(gpus * count))
    if ctx is not None and component in ("engine", "decoder"):
        for overlay in ctx.overlays:
            if not (overlay.spec.storage and overlay.spec.storage.path):
                continue  # nothing to mount: left out like a missing overlay
            name = overlay.metadata.name
            mount = f"{OVERLAY_ROOT}/{name}"
            runner.setdefault("volumeMounts", []).append({"name": name, "mountPath": mount, "readOnly": True})
            setdefault_env(runner, f"OVERLAY_{name.upper().replace('-', '_')}_MODEL_PATH", mount)
    if router_config:
        # OME appends the router config to the runner env, sorted by key (Go's map order is random).
        env = runner.setdefault("env", [])
        env.extend({"name": key, "value": _env_text(router_config[key])} for key in sorted(router_config))


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
    """Volumes and the model-ready node selector (modelRef renders only)."""
    volumes = pod.setdefault("volumes", [])
    if ctx.path:
        volumes.append({"name": ctx.model.metadata.name, "hostPath": {"path": ctx.path}})
    for overlay in ctx.overlays:
        storage = overlay.spec.storage
        if storage and storage.path:
            volumes.append({"name": overlay.metadata.name, "hostPath": {"path": storage.path}})
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
        selector = pod.setdefault("nodeSelector", {})
        model = ctx.model
        key = (
            cluster_base_model_label(model.metadata.name)
            if model.kind == "ClusterBaseModel"
            else base_model_label(model.metadata.namespace or namespace, model.metadata.name)
        )
        selector.setdefault(key, "Ready")
        selector.update(runtime.spec.node_selector or {})
