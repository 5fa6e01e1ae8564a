"""The ``inferenceReplica`` block of ``inferenceservice-config``, read as strictly as OME reads it.

Go: ``parseInferenceReplicaConfig``, ``decodeInferenceReplicaConfig``, ``jsonObjectFields`` and
``ControllerIdentityConfig.validate`` in OME's ``pkg/controller/v1beta1/controllerconfig/inferencereplica.go``
(ome-projects/ome). A malformed block must never load as an identity other than the one written, so
``null``, a non-object, an unknown or repeated key (at either level), a blank or whitespace-padded entry and
an identity every caller holds (``system:anonymous``, ``system:authenticated``, ``system:unauthenticated``,
``system:serviceaccounts``) are errors; the webhook then answers creates and spec changes with 500.
"""

from __future__ import annotations

import json
from typing import Any, Final

from omerender.catalog import ControllerIdentity
from omerender.errors import OmeRenderError
from omerender.jsonlike import loads_bounded

__all__ = ["CONFIG_KEY", "IdentityConfigError", "identity_load_error", "parse_identity_config"]

CONFIG_KEY: Final = "inferenceReplica"  # Go controllerconfig.InferenceReplicaConfigName
_IDENTITY: Final = "controllerIdentity"
_EVERY_CALLER_USERNAMES: Final = ("system:anonymous",)
_EVERY_CALLER_GROUPS: Final = ("system:authenticated", "system:unauthenticated", "system:serviceaccounts")


class IdentityConfigError(OmeRenderError, ValueError):
    """The block is present and not a valid identity. ``detail`` is Go's reason, ``str()`` its whole error."""

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(f"invalid {CONFIG_KEY} config: {detail}")


def identity_load_error(cause: str) -> str:
    """The text OME's webhook answers with (500) when the identity cannot be loaded.

    Go ``Validator.controllerIdentity``: ``load inferenceReplica config: <cause>``, where the cause is the
    ConfigMap read's error or :class:`IdentityConfigError`'s text.
    """
    return f"load {CONFIG_KEY} config: {cause}"


def _object(text: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    """Go ``jsonObjectFields``: exactly one JSON object, keys from ``allowed``, none repeated."""

    def pairs_hook(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise IdentityConfigError(f"duplicate key {json.dumps(key)}")
            out[key] = value
        return out

    try:
        value = loads_bounded(text, object_pairs_hook=pairs_hook)
    except IdentityConfigError:
        raise
    except ValueError as exc:
        raise IdentityConfigError(f"malformed JSON object: {exc}") from None
    if not isinstance(value, dict):
        raise IdentityConfigError(f"expected a JSON object, got {json.dumps(value)[:40]}")
    for key in value:
        if key not in allowed:
            raise IdentityConfigError(f"unknown field {json.dumps(key)}")
    return value


def _names(block: dict[str, Any], key: str, every_caller: tuple[str, ...], what: str) -> frozenset[str]:
    # Go ControllerIdentityConfig.validate, usernames first, then groups.
    raw = block.get(key)
    if raw is None:
        return frozenset()
    if not isinstance(raw, list) or not all(isinstance(n, str) for n in raw):
        raise IdentityConfigError(f"{_IDENTITY}.{key} must be a list of strings")
    for i, name in enumerate(raw):
        if not name.strip():
            raise IdentityConfigError(f"{_IDENTITY}.{key}[{i}] is blank")
        if name.strip() != name:
            raise IdentityConfigError(f"{_IDENTITY}.{key}[{i}] has surrounding whitespace")
        if name in every_caller:
            raise IdentityConfigError(
                f"{what} {json.dumps(name)} names every caller and cannot identify the controller"
            )
    return frozenset(raw)


def parse_identity_config(raw: str | None) -> ControllerIdentity | None:
    """The controller identity the block names, ``None`` when none is configured.

    An absent or blank block, or one without usernames and groups, configures none (the webhook then
    recognises the controller by the ``ome.io/controller-write: "true"`` annotation). Raises
    :class:`IdentityConfigError` for a malformed block.
    """
    if raw is not None and not isinstance(raw, str):  # a ConfigMap's data values are strings
        raise IdentityConfigError(f"the value must be a string (JSON text), got {type(raw).__name__}")
    if raw is None or not raw.strip():
        return None
    top = _object(raw, (_IDENTITY,))
    if _IDENTITY not in top:
        return None
    nested = top[_IDENTITY]
    if not isinstance(nested, dict):
        # Go walks the nested value as an object too, so null or a list is refused.
        raise IdentityConfigError(f"{_IDENTITY}: expected a JSON object, got {json.dumps(nested)[:40]}")
    for key in nested:
        if key not in ("usernames", "groups"):
            raise IdentityConfigError(f"{_IDENTITY}: unknown field {json.dumps(key)}")
    usernames = _names(nested, "usernames", _EVERY_CALLER_USERNAMES, "username")
    groups = _names(nested, "groups", _EVERY_CALLER_GROUPS, "group")
    if not usernames and not groups:
        return None
    return ControllerIdentity(usernames, groups)
