"""The InferenceReplica reconciler: a pure planner (``omereconcile.planner``) over an observed
``World`` (``omereconcile.world``) producing typed actions (``omereconcile.actions``), applied by a thin
executor that alone talks to the API server."""

__all__: list[str] = []
