"""omerender: render OME InferenceReplicas into pods, exactly as OME's controller does. Pure.

Import from here; everything else is an implementation module. :func:`load` reads manifests from
files, folders, streams, text and kustomizations (the one reader of files, and only those given). The error tree is documented in
:mod:`omerender.errors`.

Rendering the seed example, from the repository's root (CI runs this as a doctest)::

    >>> from omerender import load, preview
    >>> loaded = load("examples/catalog", "examples/llama-pool.yaml")
    >>> (replica,) = loaded.replicas()
    >>> result = preview(replica, loaded.catalog(), instances=2)
    >>> result.render.runtime_name, result.render.model_name
    ('vllm-llama-3-2-1b-instruct', 'llama-3-2-1b-instruct')
    >>> [pod["metadata"]["name"] for pod in result.pods]
    ['llama-pool-engine-0-default-0', 'llama-pool-engine-1-default-0']
    >>> result.revision.name  # for an empty uid: a file's replica has none (see uid_notice)
    'llama-pool-engine-b6933b21'

A replica that cannot render raises :class:`RenderBlocked` with OME's reason and words::

    >>> from omerender import Catalog, RenderBlocked
    >>> try:
    ...     preview(replica, Catalog.from_objects([]))
    ... except RenderBlocked as blocked:
    ...     print(blocked.reason.value)
    ModelNotFound
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"  # the distribution's version too (pyproject.toml reads it from here)

if TYPE_CHECKING:
    from omerender.catalog import Catalog, ControllerIdentity
    from omerender.deploy import DeployConfigError, DeployDefaults, parse_deploy_config
    from omerender.errors import (
        BlockReason,
        FieldProblem,
        InvalidArgumentError,
        InvalidObjectError,
        MissingExtraError,
        OmeRenderError,
        RenderBlocked,
        RevisionCollisionError,
    )
    from omerender.loader import Kustomization, Loaded, LoadedObject, LoadError, Origin, Text, load, load_text
    from omerender.models import (
        FineTunedWeight,
        InferenceReplica,
        InferenceService,
        ModelResource,
        RuntimeResource,
        parse_object,
    )
    from omerender.preview import Preview, RevisionInfo, TypedPreview, preview, revision_of
    from omerender.readiness import AssumedReady, assume_models_ready
    from omerender.render import Advisory, Render, RenderedRunner, render
    from omerender.stamps import PodCoordinates, headless_service, instance_pods, materialize_pod, pod_group

# Names are imported when first used (PEP 562), so that ``import omerender.cli`` (``omerender --help``)
# and a tool that needs one module do not pay for the whole library: pydantic's model classes, the Go
# encoders and the template engine take most of a command's start-up.
_WHERE: dict[str, str] = {
    "Advisory": "omerender.render",
    "AssumedReady": "omerender.readiness",
    "BlockReason": "omerender.errors",
    "Catalog": "omerender.catalog",
    "ControllerIdentity": "omerender.catalog",
    "DeployConfigError": "omerender.deploy",
    "DeployDefaults": "omerender.deploy",
    "FieldProblem": "omerender.errors",
    "FineTunedWeight": "omerender.models",
    "InferenceReplica": "omerender.models",
    "InferenceService": "omerender.models",
    "InvalidArgumentError": "omerender.errors",
    "InvalidObjectError": "omerender.errors",
    "Kustomization": "omerender.loader",
    "LoadError": "omerender.loader",
    "Loaded": "omerender.loader",
    "LoadedObject": "omerender.loader",
    "MissingExtraError": "omerender.errors",
    "ModelResource": "omerender.models",
    "OmeRenderError": "omerender.errors",
    "Origin": "omerender.loader",
    "PodCoordinates": "omerender.stamps",
    "Preview": "omerender.preview",
    "Render": "omerender.render",
    "RenderBlocked": "omerender.errors",
    "RenderedRunner": "omerender.render",
    "RevisionCollisionError": "omerender.errors",
    "RevisionInfo": "omerender.preview",
    "RuntimeResource": "omerender.models",
    "Text": "omerender.loader",
    "TypedPreview": "omerender.preview",
    "assume_models_ready": "omerender.readiness",
    "headless_service": "omerender.stamps",
    "instance_pods": "omerender.stamps",
    "load": "omerender.loader",
    "load_text": "omerender.loader",
    "materialize_pod": "omerender.stamps",
    "parse_deploy_config": "omerender.deploy",
    "parse_object": "omerender.models",
    "pod_group": "omerender.stamps",
    "preview": "omerender.preview",
    "render": "omerender.render",
    "revision_of": "omerender.preview",
}


class _Package(types.ModuleType):
    """The package, keeping its functions ``render`` and ``preview`` over the submodules of the same
    names: importing a submodule sets it as the package's attribute, which here would replace the
    function (the eager imports this replaced set the function last)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and name in _WHERE:
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'omerender' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once: later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "Advisory",
    "AssumedReady",
    "BlockReason",
    "Catalog",
    "ControllerIdentity",
    "DeployConfigError",
    "DeployDefaults",
    "FieldProblem",
    "FineTunedWeight",
    "InferenceReplica",
    "InferenceService",
    "InvalidArgumentError",
    "InvalidObjectError",
    "Kustomization",
    "LoadError",
    "Loaded",
    "LoadedObject",
    "MissingExtraError",
    "ModelResource",
    "OmeRenderError",
    "Origin",
    "PodCoordinates",
    "Preview",
    "Render",
    "RenderBlocked",
    "RenderedRunner",
    "RevisionCollisionError",
    "RevisionInfo",
    "RuntimeResource",
    "Text",
    "TypedPreview",
    "assume_models_ready",
    "headless_service",
    "instance_pods",
    "load",
    "load_text",
    "materialize_pod",
    "parse_deploy_config",
    "parse_object",
    "pod_group",
    "preview",
    "render",
    "revision_of",
]
