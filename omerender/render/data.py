"""Small helpers for JSON-like data: copying without aliasing, and env/list upserts."""

from __future__ import annotations

from typing import Any

from omerender.jsonlike import clone

__all__ = ["clone", "set_env", "setdefault_env"]


def set_env(container: dict[str, Any], name: str, value: str) -> None:
    """Upsert: replace a same-named variable in place, else append."""
    env = container.setdefault("env", [])
    for var in env:
        if var.get("name") == name:
            var.clear()
            var.update({"name": name, "value": value})
            return
    env.append({"name": name, "value": value})


def setdefault_env(container: dict[str, Any], name: str, value: str) -> None:
    """Add ``name`` only when the container does not set it already."""
    env = container.setdefault("env", [])
    if not any(var.get("name") == name for var in env):
        env.append({"name": name, "value": value})
