"""Real admissions through the API server: server-side dry-run creates of an InferenceReplica the webhook
admits and of one it refuses, sent over and over while something (a ``helm upgrade``, a certificate
rotation) happens, each classified by who answered it."""

from __future__ import annotations

import copy
import json
import threading
from collections import Counter
from types import TracebackType
from typing import Any

from kubernetes.client.exceptions import ApiException

from testbed.rawkube import RawKube

HOOK = "inferencereplica.ome-webhook-server.validator"
# omereconcile/server/webhook.py's refusal of spec.parentRef on a standalone replica.
REFUSAL = "spec.parentRef is set by the InferenceService controller on the replicas it projects"
IREP = "/apis/ome.io/v1beta1/namespaces/{ns}/inferencereplicas"


def invalid(valid: dict[str, Any]) -> dict[str, Any]:
    """``valid`` with a parentRef, which the webhook refuses (the CRD's schema allows it)."""
    doc = copy.deepcopy(valid)
    doc["metadata"] = {
        "name": f"{valid['metadata']['name']}-refused",
        "namespace": valid["metadata"]["namespace"],
    }
    doc["spec"]["parentRef"] = {"name": "chat"}
    return doc


def admit_once(raw: RawKube, doc: dict[str, Any], *, refused: bool) -> str:
    """One dry-run create of ``doc``: "answered" when the webhook's own answer came back (admitted, or
    refused by the webhook with its message), else what the API server said instead (with
    ``failurePolicy: Fail`` a webhook it could not call refuses with "failed calling webhook")."""
    path = IREP.format(ns=doc["metadata"]["namespace"])
    try:
        raw.post(path, doc, dryRun="All")
    except ApiException as exc:
        try:
            message = str(json.loads(exc.body or "")["message"])
        except (TypeError, ValueError, KeyError):
            message = str(exc.body or exc.reason)
        if (
            refused
            and message.startswith(f'admission webhook "{HOOK}" denied the request: ')
            and REFUSAL in message
        ):
            return "answered"
        return f"{exc.status}: {message[:300]}"
    except Exception as exc:  # a dropped connection to the API server is a finding too
        return f"{type(exc).__name__}: {exc}"[:300]
    return "admitted an invalid replica" if refused else "answered"


class AdmissionLoop:
    """A thread sending the valid and the invalid replica by turns from ``__enter__`` to ``__exit__``."""

    def __init__(self, raw: RawKube, valid: dict[str, Any]) -> None:
        self.raw = raw
        self.docs = ((valid, False), (invalid(valid), True))
        self.outcomes: list[tuple[str, str]] = []  # (valid | invalid, "answered" or what came back)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="admissions", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for doc, refused in self.docs:
                self.outcomes.append(
                    ("invalid" if refused else "valid", admit_once(self.raw, doc, refused=refused))
                )

    def __len__(self) -> int:
        return len(self.outcomes)

    def __enter__(self) -> AdmissionLoop:
        self._thread.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=60)

    def counts(self) -> Counter[str]:
        """requests, answered, failed, and per kind (valid/invalid answered)."""
        out: Counter[str] = Counter(requests=len(self.outcomes))
        for kind, outcome in self.outcomes:
            ok = outcome == "answered"
            out["answered" if ok else "failed"] += 1
            out[f"{kind} {'answered' if ok else 'failed'}"] += 1
        return out

    def report(self, window: str) -> str:
        """The counts, in one line for the test's output."""
        c = self.counts()
        return (
            f"admissions through the API server during {window}: requests {c['requests']}, "
            f"answered {c['answered']} (valid admitted {c['valid answered']}, invalid refused by the "
            f"webhook {c['invalid answered']}), failed {c['failed']}"
        )

    def failures(self) -> list[tuple[str, str]]:
        return [o for o in self.outcomes if o[1] != "answered"]
