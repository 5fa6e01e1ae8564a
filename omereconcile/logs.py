"""JSON log lines: one object per line with time, level, logger, message and any ``extra`` fields.

Reconcile passes log through :func:`for_reconcile`, which stamps ``reconcile_id``, ``namespace`` and
``name`` on every line of that pass (controller-runtime's ``reconcileID``).
"""

from __future__ import annotations

import json
import logging
import sys
import uuid
from datetime import UTC, datetime
from typing import Any, TextIO

__all__ = ["JsonFormatter", "ReconcileLogger", "for_reconcile", "setup"]

_STD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None)).keys()) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STD and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["error_trace"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, separators=(",", ":"))


def setup(level: str = "info", stream: TextIO | None = None) -> None:
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for noisy in ("urllib3", "kubernetes"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


class ReconcileLogger(logging.LoggerAdapter):  # type: ignore[type-arg]
    """Merges the pass's fields with each call's ``extra``."""

    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        extra = dict(self.extra or {})
        extra.update(kwargs.get("extra") or {})
        kwargs["extra"] = extra
        return msg, kwargs


def for_reconcile(namespace: str, name: str, logger: str = "omereconcile.reconcile") -> ReconcileLogger:
    return ReconcileLogger(
        logging.getLogger(logger),
        {"reconcile_id": str(uuid.uuid4()), "namespace": namespace, "replica": name},
    )
