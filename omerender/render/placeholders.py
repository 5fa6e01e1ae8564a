"""Placeholders in the runner container, replaced as OME replaces them.

OME's ``ReplacePlaceholders`` (``pkg/controller/v1beta1/inferenceservice/utils``) marshals the merged
runner container with ``encoding/json``, parses that JSON text with ``html/template``
(``template.New("container-tmpl").Parse``), executes it with the service's ``metav1.ObjectMeta`` as
data and unmarshals the output back into the container. ``pkg/render/podspec.go``
(``ReconcilePodSpec`` / ``ReconcileWorkerPodSpec``) wraps a failure as ``failed to replace
placeholders in [worker ]container: <Go's error>``, and the replica controller reports it as
``RenderFailed`` (``classifyRenderError``).

So ``{{.Name}}`` is the replica's name prefix (``serviceShell``), ``{{.Namespace}}``, ``{{.UID}}``,
``{{.Generation}}``, ``{{.Labels.k}}`` and ``{{.Annotations}}`` work, output is HTML-escaped (``+`` →
``&#43;``), and a quoted argument such as ``{{index .Labels "k"}}`` fails: the JSON text escapes its
quotes to ``\\"``, which Go's lexer refuses. Jinja (``{{ system_message }}``) fails with ``function
"system_message" not defined``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from omerender import gojson
from omerender.errors import BlockReason, RenderBlocked
from omerender.gojson_syntax import check_valid
from omerender.models import InferenceReplica

if TYPE_CHECKING:
    from omerender.gotemplate import GoValue

# The gotemplate package (about 15 ms to import) is imported by the functions that use it: a
# container without ``{{`` (most of them) never needs it, and the renderer asks `has_delimiter` first.

__all__ = ["has_delimiter", "replace_placeholders", "replica_meta"]

TEMPLATE_NAME = "container-tmpl"


def replica_meta(replica: InferenceReplica) -> GoValue:
    """The ObjectMeta OME's replica controller renders with (``serviceShell`` in
    ``pkg/controller/v1beta1/inferencereplica/render.go``): name prefix, namespace, UID, generation,
    labels and annotations; every other field is Go's zero value."""
    from omerender.gotemplate import object_meta

    meta = replica.metadata
    return object_meta(
        name=replica.name_prefix,
        namespace=replica.namespace,
        uid=meta.uid,
        generation=meta.generation,
        labels=dict(meta.labels) if meta.labels else None,
        annotations=dict(meta.annotations) if meta.annotations else None,
    )


def has_delimiter(value: Any) -> bool:
    """Whether ``{{`` occurs in a key or string of the container. JSON's own punctuation never puts two
    braces side by side, so this says exactly whether Go's template text holds an action."""
    if isinstance(value, str):
        return "{{" in value
    if isinstance(value, dict):
        return any("{{" in k or has_delimiter(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_delimiter(v) for v in value)
    return False


def replace_placeholders(container: dict[str, Any], meta: GoValue, *, worker: bool = False) -> dict[str, Any]:
    """The container after OME's placeholder pass, or RenderBlocked(RenderFailed) with Go's message.

    A container whose JSON holds no ``{{`` is text only for the template and comes back unchanged.
    """
    if not has_delimiter(container):
        return container
    from omerender.gotemplate import GoTemplateError, GoTemplateUnsupported, execute, parse

    text = gojson.encode("core/v1.Container", container).decode("utf-8")
    where = "worker container" if worker else "container"
    try:
        output = execute(parse(TEMPLATE_NAME, text), meta)
    except GoTemplateError as exc:
        raise RenderBlocked(
            BlockReason.RENDER_FAILED, f"failed to replace placeholders in {where}: {exc}"
        ) from None
    except GoTemplateUnsupported as exc:
        raise RenderBlocked(
            BlockReason.RENDER_FAILED, f"cannot preview the placeholders in the {where}: {exc}"
        ) from None
    problem = check_valid(output)
    if problem is not None:
        raise RenderBlocked(
            BlockReason.RENDER_FAILED, f"failed to replace placeholders in {where}: {problem}"
        )
    result: dict[str, Any] = json.loads(output)
    # encoding/json always writes the non-pointer `resources` struct; leave it out when the runtime
    # did not set it, so the template reads as written (the revision bytes are the same either way).
    if "resources" not in container and result.get("resources") == {}:
        del result["resources"]
    return result
