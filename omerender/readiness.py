"""Treat every model of a catalog as Ready: the catalog as the cluster will hold it once OME has
downloaded the weights.

Catalog files kept in git carry no ``status``, and a render of a replica whose model is not Ready
blocks ``ModelNotFound``, as OME's controller does. :func:`assume_models_ready` gives the catalog with
every model Ready in the two ways a render checks (``render.ResolveModel`` in OME's
``pkg/controller/v1beta1/inferenceservice``): ``status.state: Ready`` and, for a ``Sharded`` model,
a ``Ready`` condition at the model's current generation (``ShardedBaseModelReady``). A disabled model
stays disabled: that is its spec, not its state.

OME fills in a model's ``modelFormat`` from the downloaded weights before the model turns Ready, so
a model assumed Ready without a format name has a runtime that is unknown until it is downloaded:
:attr:`AssumedReady.format_unknown` names those models, and the caller says so instead of reporting
the ``RuntimeSelectionFailed`` a render of them meets.

Pure: the catalog is copied, never changed.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any

from omerender._records import record
from omerender.catalog import Catalog, CatalogKey
from omerender.models import ModelResource
from omerender.models.catalog_objects import ModelStatus
from omerender.render.storage import is_sharded, sharded_ready

__all__ = ["AssumedReady", "assume_models_ready", "is_model_ready"]

READY = "Ready"
# How many models a note names before it counts the rest.
_SHOWN = 3


def is_model_ready(model: ModelResource) -> bool:
    """Whether a render reading ``model`` gets past its readiness checks (``render.ResolveModel``)."""
    return model.is_ready and (not is_sharded(model) or sharded_ready(model)[0])


@record
class AssumedReady:
    """The catalog with every model Ready, and which models it changed."""

    catalog: Catalog
    # Models that were not Ready in the catalog given, by catalog key, sorted.
    assumed: tuple[CatalogKey, ...]
    # Of those, the models without a format name: OME learns it from the weights it downloads.
    format_unknown: tuple[CatalogKey, ...]
    models: int

    def format_note(self) -> str | None:
        """One line naming the models assumed Ready without a format (a few, then a count), or None."""
        names = [key[2] for key in self.format_unknown]
        if not names:
            return None
        shown, more = ", ".join(names[:_SHOWN]), len(names) - _SHOWN
        return (
            f"{len(names)} model{'s' if len(names) != 1 else ''} without a format name: the runtime is "
            "unknown until OME has downloaded the weights and read the format from them "
            f"({shown}{f' and {more} more' if more > 0 else ''})"
        )

    def note(self) -> str:
        """One line for a command's output: what was assumed, and for how many models."""
        return (
            f"treating every model as Ready (--assume-models-ready): {len(self.assumed)} of "
            f"{self.models} model{'s' if self.models != 1 else ''} "
            f"{'were' if len(self.assumed) != 1 else 'was'} not Ready"
        )


def _ready_status(model: ModelResource) -> ModelStatus:
    status = model.status or ModelStatus()
    conditions: tuple[dict[str, Any], ...] = status.conditions
    if is_sharded(model):
        others = tuple(c for c in conditions if c.get("type") != READY)
        ready = {"type": READY, "status": "True", "observedGeneration": model.metadata.generation}
        conditions = (*others, ready)
    return status.model_copy(update={"state": READY, "conditions": conditions})


def assume_models_ready(catalog: Catalog) -> AssumedReady:
    """``catalog`` with every model that is not Ready made Ready; everything else as it was."""
    models = dict(catalog.models)
    assumed: list[CatalogKey] = []
    for key, model in catalog.models.items():
        if not is_model_ready(model):
            models[key] = model.model_copy(update={"status": _ready_status(model)})
            assumed.append(key)
    assumed.sort()
    unknown = tuple(key for key in assumed if not catalog.models[key].spec.model_format.name)
    return AssumedReady(
        catalog=dataclasses.replace(catalog, models=MappingProxyType(models)),
        assumed=tuple(assumed),
        format_unknown=unknown,
        models=len(models),
    )
