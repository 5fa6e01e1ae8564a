"""``render.PrepareRole`` for a replica: the operator's deploy defaults on the runtime's piece."""

from __future__ import annotations

from omerender.deploy import DeployDefaults, apply_deploy_defaults
from omerender.models import RuntimeResource

__all__ = ["prepare_role"]

_SPEC_FIELDS = {"engine": "engine_config", "decoder": "decoder_config", "router": "router_config"}


def prepare_role(runtime: RuntimeResource, component: str, deploy: DeployDefaults | None) -> RuntimeResource:
    """The effective runtime with ``specdefaults`` applied to the component's piece
    (``pkg/render/resolve.go`` ``PrepareRole``). A runtime without the piece comes back unchanged: the
    replica controller reports ``RuntimePieceMissing`` before it prepares the role."""
    piece = runtime.piece(component)
    if piece is None:
        return runtime
    filled = apply_deploy_defaults(piece, component, deploy)
    if filled == piece:  # a shallow copy when nothing was filled: cheap to compare
        return runtime
    spec = runtime.spec.model_copy(update={_SPEC_FIELDS[component]: filled})
    return runtime.model_copy(update={"spec": spec})
