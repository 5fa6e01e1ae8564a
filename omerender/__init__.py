"""omerender: render OME InferenceReplicas into pods, exactly as OME's controller does. Pure.

Import from here; everything else is an implementation module. :func:`load` reads manifests from
files, folders, streams, text and kustomizations (the one reader of files, and only those given). The error tree is documented in
:mod:`omerender.errors`.
"""

from omerender.catalog import Catalog, ControllerIdentity
from omerender.deploy import DeployConfigError, DeployDefaults, parse_deploy_config
from omerender.errors import (
    BlockReason,
    FieldProblem,
    InvalidArgumentError,
    InvalidObjectError,
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
from omerender.preview import Preview, RevisionInfo, preview, revision_of
from omerender.readiness import AssumedReady, assume_models_ready
from omerender.render import Advisory, Render, RenderedRunner, render
from omerender.stamps import PodCoordinates, headless_service, instance_pods, materialize_pod, pod_group

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
