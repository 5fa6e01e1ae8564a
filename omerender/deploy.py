"""Operator defaults: the ``deploy`` key of the ``inferenceservice-config`` ConfigMap (namespace ``ome``).

Parsed and validated as ``parseDeployConfig`` does (``pkg/controller/v1beta1/controllerconfig/
configmap.go``), and applied as ``render.PrepareRole`` → ``specdefaults.Engine/Decoder/Router`` apply it
to the merged component spec (``pkg/controller/v1beta1/inferenceservice/specdefaults``). Of what
``specdefaults`` fills, only two things reach a replica's pod templates (``render.Runners`` copies the
pod specs and the component's labels/annotations, nothing else of ``ComponentExtensionSpec``):

- ``terminationGracePeriodSeconds`` on the piece's pod spec and on its ``leader`` and ``worker`` pod
  specs, where the runtime leaves it unset;
- a worker ``size`` of 1 when the piece declares both ``leader`` and ``worker`` and no size.

``replicas``, ``minReadySeconds`` and ``updateStrategy`` fill ``minReplicas``/``maxReplicas`` and
``lifecycle`` of the component, which a standalone replica does not read; they are validated (a bad
value fails the render in Go too) but change no pod.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from omerender._records import record
from omerender.errors import OmeRenderError
from omerender.gojson_syntax import check_valid
from omerender.jsonlike import JsonLimitError, clone, loads_bounded

__all__ = [
    "CONFIG_MAP_NAME",
    "CONFIG_MAP_NAMESPACE",
    "DEPLOY_KEY",
    "DeployConfigError",
    "DeployDefaults",
    "apply_deploy_defaults",
    "parse_deploy_config",
]

CONFIG_MAP_NAME = "inferenceservice-config"
CONFIG_MAP_NAMESPACE = "ome"  # constants.OMENamespace
DEPLOY_KEY = "deploy"
_STRATEGIES = ("SurgeThenDrain", "RecreatePod", "InPlaceIfPossible", "InPlaceOnly")
_INT64 = (-(1 << 63), (1 << 63) - 1)
_INT32 = (-(1 << 31), (1 << 31) - 1)


class DeployConfigError(OmeRenderError):
    """The ``deploy`` key is unusable; the text is the error Go's controller fails the render with."""


@record
class DeployDefaults:
    """What the ``deploy`` key configures. ``None`` is unconfigured, and fills nothing."""

    termination_grace_period_seconds: int | None = None
    min_ready_seconds: int | None = None
    raw: Mapping[str, Any] | None = None  # the decoded block, for callers that show it


class _Float(str):
    """A JSON number with a fraction or exponent, kept as written (Go quotes it in its errors)."""


def _field(obj: Mapping[str, Any], name: str) -> Any:
    """encoding/json matches object keys to fields case-insensitively, an exact match first."""
    if name in obj:
        return obj[name]
    for key, value in obj.items():
        if key.lower() == name.lower():
            return value
    return None


def _kind(value: Any, go_type: str) -> str:
    """UnmarshalTypeError.Value: a number is quoted only when it fails to fit a numeric type."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str) and not isinstance(value, _Float):
        return "string"
    if isinstance(value, (int, _Float)):
        return f"number {value}" if go_type in ("int", "int32", "int64") else "number"
    return "array" if isinstance(value, list) else "object"


def _type_error(value: Any, struct: str, path: str, go_type: str) -> DeployConfigError:
    return DeployConfigError(
        "unable to parse deploy config json: json: cannot unmarshal "
        f"{_kind(value, go_type)} into Go struct field {struct}.{path} of type {go_type}"
    )


def _int(obj: Mapping[str, Any], name: str, struct: str, path: str, go_type: str) -> int | None:
    value = _field(obj, name)
    if value is None:
        return None
    low, high = _INT32 if go_type == "int32" else _INT64
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _type_error(value, struct, path, go_type)
    return value


def _object(obj: Mapping[str, Any], name: str, struct: str, path: str, go_type: str) -> Mapping[str, Any]:
    value = _field(obj, name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _type_error(value, struct, path, go_type)
    return value


def _budget_value(value: Any, path: str) -> int | str | None:
    """Decode an IntOrString budget as ``intstr.IntOrString.UnmarshalJSON`` does: a string, else int32."""
    if value is None or (isinstance(value, str) and not isinstance(value, _Float)):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and _INT32[0] <= value <= _INT32[1]:
        return value
    raise _type_error(value, "ComponentUpdateStrategyDefaults", path, "int32")


def _check_budget(value: int | str | None, where: str) -> None:
    """``intstr.GetScaledValueFromIntOrPercent(v, 100, true)`` must succeed and be > 0."""
    if value is None:
        return
    if isinstance(value, str):
        if not value.endswith("%"):
            raise DeployConfigError(
                f"invalid deploy config, {where} is not an integer or percentage: "
                "invalid value for IntOrString: invalid type: string is not a percentage"
            )
        digits = value[:-1]
        try:
            scaled = math.ceil(int(digits, 10) * 100 / 100)
        except ValueError:
            raise DeployConfigError(
                f"invalid deploy config, {where} is not an integer or percentage: invalid value "
                f'"{value}": strconv.Atoi: parsing "{digits}": invalid syntax'
            ) from None
    else:
        scaled = value
    if scaled <= 0:
        raise DeployConfigError(
            f'invalid deploy config, {where} must be > 0, got "{value}": a zero budget denies every '
            "Instance and the rollout never starts"
        )


def parse_deploy_config(text: str) -> DeployDefaults:
    """``parseDeployConfig``: decode the ``deploy`` JSON and validate it, or raise DeployConfigError."""
    syntax = check_valid(text)
    if syntax is not None:
        raise DeployConfigError(f"unable to parse deploy config json: {syntax}")
    try:
        block = loads_bounded(text, parse_float=_Float)
    except JsonLimitError as exc:
        raise DeployConfigError(f"unable to parse deploy config json: {exc}") from None
    if block is None:
        block = {}
    if not isinstance(block, dict):
        raise DeployConfigError(
            f"unable to parse deploy config json: json: cannot unmarshal {_kind(block, '')} "
            "into Go value of type controllerconfig.DeployConfig"
        )
    # encoding/json reports a wrongly typed field before any of parseDeployConfig's own checks run.
    mode = _field(block, "defaultDeploymentMode")
    if mode is not None and not isinstance(mode, str):
        raise _type_error(mode, "DeployConfig", "defaultDeploymentMode", "string")
    grace = _int(
        block, "terminationGracePeriodSeconds", "DeployConfig", "terminationGracePeriodSeconds", "int64"
    )
    min_ready = _int(block, "minReadySeconds", "DeployConfig", "minReadySeconds", "int32")
    replicas = _replica_values(
        _object(block, "replicas", "DeployConfig", "replicas", "controllerconfig.ReplicasDefaultsConfig")
    )
    strategies = _strategy_values(
        _object(
            block,
            "updateStrategy",
            "DeployConfig",
            "updateStrategy",
            "controllerconfig.UpdateStrategyDefaultsConfig",
        )
    )
    if not mode:
        raise DeployConfigError("invalid deploy config, defaultDeploymentMode is required")
    if mode != "RawDeployment":
        raise DeployConfigError("invalid deployment mode. Supported default mode is RawDeployment")
    for name, value in replicas:
        if value is not None and value <= 0:
            raise DeployConfigError(f"invalid deploy config, replicas.{name} must be > 0, got {value}")
    if grace is not None and grace <= 0:
        raise DeployConfigError(
            f"invalid deploy config, terminationGracePeriodSeconds must be > 0, got {grace}"
        )
    if min_ready is not None and min_ready < 0:
        raise DeployConfigError(f"invalid deploy config, minReadySeconds must be >= 0, got {min_ready}")
    for component, kind, budgets in strategies:
        if kind and kind not in _STRATEGIES:
            raise DeployConfigError(
                f'invalid deploy config, updateStrategy.{component}.type "{kind}" is not a supported update strategy'
            )
        for budget, amount in budgets:
            _check_budget(amount, f"updateStrategy.{component}.{budget}")
    return DeployDefaults(termination_grace_period_seconds=grace, min_ready_seconds=min_ready, raw=block)


def _replica_values(replicas: Mapping[str, Any]) -> list[tuple[str, int | None]]:
    struct = "ReplicasDefaultsConfig"
    values: list[tuple[str, int | None]] = [
        (
            "defaultMinReplicas",
            _int(replicas, "defaultMinReplicas", struct, "replicas.defaultMinReplicas", "int"),
        )
    ]
    maxes = _object(
        replicas,
        "defaultMaxReplicas",
        struct,
        "replicas.defaultMaxReplicas",
        "controllerconfig.ComponentMaxReplicasDefaults",
    )
    for component in ("engine", "decoder", "router"):
        path = f"replicas.defaultMaxReplicas.{component}"
        value = _int(maxes, component, "ComponentMaxReplicasDefaults", path, "int")
        values.append((f"defaultMaxReplicas.{component}", value))
    return values


def _strategy_values(
    strategy: Mapping[str, Any],
) -> list[tuple[str, str | None, list[tuple[str, int | str | None]]]]:
    out: list[tuple[str, str | None, list[tuple[str, int | str | None]]]] = []
    for component in ("router", "engine", "decoder"):
        entry = _field(strategy, component)
        if entry is None:
            continue
        if not isinstance(entry, dict):
            raise _type_error(
                entry,
                "UpdateStrategyDefaultsConfig",
                f"updateStrategy.{component}",
                "controllerconfig.ComponentUpdateStrategyDefaults",
            )
        kind = _field(entry, "type")
        if kind is not None and not isinstance(kind, str):
            raise _type_error(
                kind, "ComponentUpdateStrategyDefaults", f"updateStrategy.{component}.type", "string"
            )
        budgets = [
            (b, _budget_value(_field(entry, b), f"updateStrategy.{component}.{b}"))
            for b in ("maxSurge", "maxUnavailable")
        ]
        out.append((component, kind, budgets))
    return out


def apply_deploy_defaults(
    piece: Mapping[str, Any], component: str, deploy: DeployDefaults | None
) -> dict[str, Any]:
    """A copy of the runtime piece with what ``specdefaults`` fills in a replica's pods.

    ``terminationGracePeriod`` fills each pod spec the component has (the piece, and for an engine or
    decoder its ``leader`` and ``worker``) when unset; ``workerSize`` sizes a declared leader+worker
    pair at 1 when no size is set. Both run for every render, the first only when configured.
    """
    grace = deploy.termination_grace_period_seconds if deploy is not None else None
    leader, worker = piece.get("leader"), piece.get("worker")
    sizes_worker = (
        component != "router"
        and isinstance(leader, dict)
        and isinstance(worker, dict)
        and worker.get("size") is None
    )
    if grace is None and not sizes_worker:
        return dict(piece)  # nothing to fill: skip the copy on the common path
    out: dict[str, Any] = clone(dict(piece))
    blocks = [out] if component == "router" else [out, out.get("leader"), out.get("worker")]
    if grace is not None:
        for block in blocks:
            if isinstance(block, dict) and block.get("terminationGracePeriodSeconds") is None:
                block["terminationGracePeriodSeconds"] = grace
    if sizes_worker:
        out["worker"]["size"] = 1
    return out
