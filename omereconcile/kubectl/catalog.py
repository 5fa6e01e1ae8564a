"""The live catalog, read as the controller reads it, for the verbs that select or render.

The objects are the controller's own list (``omereconcile.cluster.observe.fetch_catalog_objects``, the kinds
of ``CATALOG_RESOURCES``), made into a :class:`~omerender.catalog.Catalog` by the controller's own
``build_catalog`` with the settings of the live ``inferenceservice-config`` (``--ome-namespace``), so a
selection or a render here is the controller's. A ConfigMap the caller may not read is reported on
stderr and the defaults apply, as they do for a controller without one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

from omereconcile.cluster.kube import ApiError, NotFound
from omereconcile.cluster.observe import build_catalog, fetch_catalog_objects
from omereconcile.kubectl.client import Client, segment
from omereconcile.settings import OperatorSettings, SettingsError, settings_from_configmap
from omerender.catalog import CONFIG_MAP, Catalog

__all__ = ["live_catalog", "live_settings"]


def live_catalog(
    client: Client, namespaces: Iterable[str] | None, ome_namespace: str, err: TextIO
) -> Catalog:
    """Catalog objects of ``namespaces`` (every namespace when None) and cluster scope."""
    objects = fetch_catalog_objects(client.kube, namespaces)
    settings, data = live_settings(client, ome_namespace, err)
    return build_catalog(objects, settings.controller_identity, settings.accelerator_resources, data)


def live_settings(
    client: Client, ome_namespace: str, err: TextIO
) -> tuple[OperatorSettings, dict[str, str] | None]:
    """The controller's settings from the live ``inferenceservice-config``, and its ``data`` (None when
    it is missing or unreadable: the defaults apply, said on ``err``)."""
    data: dict[str, str] | None = None
    try:
        config = client.get(
            f"/api/v1/namespaces/{segment('namespace', ome_namespace)}/configmaps/{CONFIG_MAP}"
        )
        data = dict(config.get("data") or {})
    except NotFound:
        err.write(f"Warning: no ConfigMap {ome_namespace}/{CONFIG_MAP}; the controller's defaults apply\n")
    except ApiError as exc:
        err.write(
            f"Warning: cannot read ConfigMap {ome_namespace}/{CONFIG_MAP} ({exc.reason or exc.status}); defaults apply\n"
        )
    try:
        settings = settings_from_configmap(data)
    except SettingsError as exc:
        err.write(f"Warning: ConfigMap {ome_namespace}/{CONFIG_MAP} is unusable ({exc}); defaults apply\n")
        settings = settings_from_configmap(None)
    return settings, data
