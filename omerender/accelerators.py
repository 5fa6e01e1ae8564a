"""Accelerators: which resource names count as GPUs, how many one container asks for, PARALLELISM_SIZE.

OME reads the names from the ``acceleratorResources`` key of the ``inferenceservice-config`` ConfigMap
(``controllerconfig.inferenceServicesConfigFromConfigMap``): a JSON list of exact extended-resource
names. Absent, blank or empty means NVIDIA only (``InferenceServicesConfig.AcceleratorResourceNames``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any, Final

from omerender.errors import BlockReason, RenderBlocked
from omerender.gojson import InvalidQuantityError, canonical_quantity
from omerender.jsonlike import loads_bounded

__all__ = [
    "ACCELERATOR_RESOURCES_KEY",
    "NVIDIA_GPU",
    "PARALLELISM_SIZE",
    "accelerator_count",
    "accelerator_resource_names",
    "parse_accelerator_resources",
    "quantity_value",
    "set_parallelism",
]

NVIDIA_GPU: Final = "nvidia.com/gpu"
ACCELERATOR_RESOURCES_KEY: Final = "acceleratorResources"
PARALLELISM_SIZE: Final = "PARALLELISM_SIZE"

_DECIMAL_SUFFIX: Final = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIX: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_CANONICAL: Final = re.compile(r"([+-]?[0-9]+)(.*)")


def parse_accelerator_resources(text: str | None) -> tuple[str, ...]:
    """The ConfigMap's ``acceleratorResources`` value as OME unmarshals it into ``[]string``.

    Raises ValueError naming the key when it is not a JSON list of strings (OME fails the render pass).
    """
    if text is None or not text.strip():
        return ()
    try:
        value = loads_bounded(text)
    except ValueError as exc:
        raise ValueError(f"{ACCELERATOR_RESOURCES_KEY} is not valid JSON ({exc})") from None
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(
            f'{ACCELERATOR_RESOURCES_KEY} must be a JSON list of resource names, e.g. ["{NVIDIA_GPU}"]'
        )
    return tuple(value)


def accelerator_resource_names(configured: Sequence[str]) -> tuple[str, ...]:
    """``AcceleratorResourceNames``: the configured names, or NVIDIA only when none are configured."""
    return tuple(configured) if configured else (NVIDIA_GPU,)


def quantity_value(value: Any, field: str) -> int:
    """``resource.Quantity.Value()``: the quantity rounded up to an integer, away from zero.

    ``field`` names the place in the runner for the error a malformed quantity raises.
    """
    try:
        text = canonical_quantity(value)
    except (InvalidQuantityError, TypeError):
        raise RenderBlocked(
            BlockReason.RENDER_FAILED,
            f"{field}: {value!r} is not a Kubernetes quantity; write a count such as 8",
        ) from None
    match = _CANONICAL.fullmatch(text)
    assert match is not None  # canonical form is digits then a suffix
    digits, suffix = match.groups()
    amount = Decimal(digits)
    if suffix in _DECIMAL_SUFFIX:
        amount = amount.scaleb(_DECIMAL_SUFFIX[suffix])
    elif suffix in _BINARY_SUFFIX:
        amount *= 2 ** _BINARY_SUFFIX[suffix]
    else:  # e<exponent>
        amount = amount.scaleb(int(suffix[1:]))
    return int(amount.to_integral_value(ROUND_CEILING if amount > 0 else ROUND_FLOOR))


def accelerator_count(container: Mapping[str, Any], names: Sequence[str]) -> int:
    """``isvcutils.GetGpuCountFromContainer``: the first configured name the container sets, limits
    before requests for each name; 0 when it sets none."""
    resources = container.get("resources") or {}
    for name in names:
        for section in ("limits", "requests"):
            values = resources.get(section) or {}
            if name in values:
                return quantity_value(values[name], f"runner resources.{section}[{name}]")
    return 0


def set_parallelism(container: dict[str, Any], names: Sequence[str], leaders: int, workers: int) -> None:
    """``render.SetParallelismEnvVar`` (pkg/render/accelerator.go).

    ``PARALLELISM_SIZE`` = accelerators of this container × (leaders + workers), written only when both
    factors are positive. An existing variable keeps its place and gets the new value
    (``isvcutils.UpdateEnvVars`` sets ``Value`` alone); otherwise it is appended.
    """
    gpus = accelerator_count(container, names)
    if gpus <= 0 or (leaders <= 0 and workers <= 0):
        return
    size = gpus * (leaders + workers)
    if size <= 0:
        return
    env = container.setdefault("env", [])
    for var in env:
        if var.get("name") == PARALLELISM_SIZE:
            var["value"] = str(size)
            return
    env.append({"name": PARALLELISM_SIZE, "value": str(size)})
