"""``kubectl ome``: OME's kubectl plugin for standalone InferenceReplicas, one module per verb family.

Installed as the console script ``kubectl-ome``; kubectl runs it for ``kubectl ome ...`` when it is on
PATH, and ``kubectl_complete-ome`` completes its resource names. The verbs share one client
(:mod:`.client`, over :class:`omereconcile.cluster.kube.Kube`) and one report writer (:mod:`.report`); the
writing verbs share one guard (:mod:`.guard`). ``docs/kubectl-ome.md`` lists every command.
"""

from omereconcile.kubectl.app import main

__all__ = ["main"]
