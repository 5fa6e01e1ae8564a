"""The cyclic garbage collector, paused while a command runs.

A command loads its inputs once and keeps them to the end: thousands of replicas and catalog objects,
their parsed models and renders. Python's cyclic collector walks every one of them again each time it
runs a full collection, and a fleet-sized ``diff`` spends about a third of its time there, to free
nothing: the data is trees of dicts, lists and strings, which reference counting frees as soon as the
last reference goes. So the collector is paused for the command and restored after it, as it was
(``mypy`` raises its thresholds for the same reason). Cycles made meanwhile, if any, are freed by the
next collection after the command, or with the process.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector for the ``with`` block; restore it as it was (also on errors)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
