"""The cluster adapter: everything that reads or writes the API server, and nothing that decides.

- ``kube`` — the API client (the only module that imports ``kubernetes``), its errors and watch events;
- ``observe`` — the observation of one replica (what it owns, the catalog) into a pure ``World``;
- ``executor`` — applies the planner's typed actions; ``events`` — client-go's Event correlator;
- ``expectations`` — the ReplicaSet controller's expectations on the pods cache;
- ``leader`` — the leader Lease and the shard-range Leases (client-go's ``LeaderElector``).

The package exports the client only: ``kubectl ome`` imports it on every call and must not load the
renderer, which ``observe`` and ``executor`` do, so those are imported by their module path. The pure
model (``omereconcile.world``, ``actions``, ``settings``, ``planner``) never imports this package
(import-linter).
"""

from omereconcile.cluster.kube import (
    JSON,
    AlreadyExists,
    ApiError,
    Conflict,
    Forbidden,
    Gone,
    Kube,
    NotFound,
    TooManyRequests,
)

__all__ = [
    "JSON",
    "AlreadyExists",
    "ApiError",
    "Conflict",
    "Forbidden",
    "Gone",
    "Kube",
    "NotFound",
    "TooManyRequests",
]
