"""Where a model's weights live, as OME's render reads it: a PVC, a node-local path, or Sharded.

- ``pkg/utils/storage`` ``GetStorageType`` / ``ParsePVCStorageURI``: ``pvc://[namespace:]claim/sub/path``.
  A URI with the ``pvc://`` prefix is a PVC model even when it does not parse (``isPVCBaseModel``);
  only a parsed one gets a volume (``parsePVCComponents`` answers nil otherwise).
- ``IsShardedBaseModel``: ``spec.distribution: Sharded``; ``ShardedBaseModelReady`` reads the model's
  ``Ready`` condition at its current generation (``pkg/controller/v1beta1/inferenceservice/utils``).
"""

from __future__ import annotations

import re

from omerender._records import record
from omerender.models import ModelResource
from omerender.models.catalog_objects import Storage

__all__ = ["MODEL_MOUNT_PATH", "PVC", "is_pvc", "is_sharded", "parse_pvc", "sharded_ready"]

MODEL_MOUNT_PATH = "/opt/ml/model"  # constants.ModelDefaultMountPath
PVC_PREFIX = "pvc://"
SHARDED = "Sharded"
_NAMESPACE = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?")


@record
class PVC:
    claim: str
    sub_path: str


def is_pvc(storage: Storage | None) -> bool:
    """``isPVCStorage``: the storage URI names the PVC scheme."""
    return storage is not None and (storage.storage_uri or "").startswith(PVC_PREFIX)


def parse_pvc(storage: Storage | None) -> PVC | None:
    """``parsePVCStorage``: the claim and sub-path, or None when the URI is not a well-formed PVC URI."""
    if storage is None or not is_pvc(storage):
        return None
    path = (storage.storage_uri or "")[len(PVC_PREFIX) :]
    first, slash, sub_path = path.partition("/")
    if not path or not slash:
        return None
    if ":" in first:
        namespace, _, claim = first.partition(":")
        if not namespace or not claim or ":" in claim or not _NAMESPACE.fullmatch(namespace):
            return None
    else:
        claim = first
    if not claim or not sub_path or ".." in sub_path.split("/"):
        return None
    return PVC(claim, sub_path)


def is_sharded(model: ModelResource) -> bool:
    return model.spec.distribution == SHARDED


def sharded_ready(model: ModelResource) -> tuple[bool, str]:
    """``ShardedBaseModelReady``: (ready, the model's own readiness message)."""
    if model.status is None:
        return False, "model status is not available"
    ready = next((c for c in model.status.conditions if c.get("type") == "Ready"), None)
    if ready is None:
        return False, "model Ready condition is not available"
    message = str(ready.get("message") or "")
    if ready.get("status") != "True":
        return False, message
    if ready.get("observedGeneration", 0) != model.metadata.generation:
        return False, "model Ready condition has not observed the latest generation"
    return True, message
