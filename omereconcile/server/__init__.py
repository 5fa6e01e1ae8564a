"""The process's servers, beside the reconcile loop: the admission webhook and what keeps it served.

- ``webhook`` — the validating/defaulting admission handler; ``webhook_http`` — its HTTPS server;
- ``certrotator`` — issues and rotates the serving certificate and the webhooks' ``caBundle``;
- ``tlsfiles`` — re-reads the certificate files on change; ``secure_metrics`` — the authenticated
  metrics endpoint (TokenReview + SubjectAccessReview).

It reads the cluster through ``omereconcile.cluster`` and never imports the controller (import-linter):
every ``omereconcile run`` process serves the webhook, leader or not.
"""

from omereconcile.server.certrotator import CertRotator
from omereconcile.server.secure_metrics import MetricsServer
from omereconcile.server.tlsfiles import CertificateFiles
from omereconcile.server.webhook import PATH, AdmissionServer, ClusterReader, ServerLimits, parse_review

__all__ = [
    "PATH",
    "AdmissionServer",
    "CertRotator",
    "CertificateFiles",
    "ClusterReader",
    "MetricsServer",
    "ServerLimits",
    "parse_review",
]
