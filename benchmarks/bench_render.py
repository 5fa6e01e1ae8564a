"""Render of the seed's replica against its own yardstick, measured in the same run.

Yardstick (issue 2, DECISIONS §5): serialise the render's output (the runner templates) with sorted-key
``json.dumps`` and FNV-32a-hash the bytes in C (``fnv-hash-fast``); budget 2×. The budget applies to
the memoized render (a catalog memoizes renders by their inputs, as CI runs them);
the render from scratch (a catalog of its own each time) is printed beside it without a budget. Also
reports the Go-exact encoder's share of a render and what the render would cost with a sorted-key
``json.dumps`` encoder instead (issue 5: at most 1.5x). Prints; asserts nothing.

    python benchmarks/bench_render.py
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from omerender import Catalog, InferenceReplica, parse_object, render
from omerender.preview import revision_of
from omerender.revision import FNV_IN_C, fnv32a, revision_payload

ROOT = Path(__file__).resolve().parents[1]
REPEAT = 200
ROUNDS = 15


def _medians_us(fns: dict[str, Callable[[], Any]]) -> dict[str, float]:
    """Median per call; the functions take turns in every round so load drift hits all alike."""
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(ROUNDS):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(REPEAT):
                fn()
            samples[name].append((time.perf_counter() - start) / REPEAT)
    return {name: statistics.median(values) * 1e6 for name, values in samples.items()}


def main() -> None:
    replica = parse_object(InferenceReplica, yaml.safe_load((ROOT / "examples/llama-pool.yaml").read_text()))
    catalog = Catalog.from_objects(
        yaml.safe_load(p.read_text()) for p in sorted((ROOT / "examples/catalog").glob("*.yaml"))
    )
    result = render(replica, catalog)
    templates = [r.template for r in result.runners]
    anchor = result.anchor.template

    def yardstick() -> int:
        return fnv32a(json.dumps(templates, sort_keys=True, separators=(",", ":")).encode())

    # A catalog memoizes renders by their inputs: a cold render gets a catalog of its own each time
    # (made beforehand, outside the timing), a warm one the same catalog again.
    fresh = iter([dataclasses.replace(catalog) for _ in range(REPEAT * ROUNDS + 1)])

    def full() -> object:
        return revision_of(render(replica, next(fresh)))

    def warm() -> object:
        return revision_of(render(replica, catalog))

    fresh_templates = iter([dataclasses.replace(catalog) for _ in range(REPEAT * ROUNDS + 1)])

    def templates_only() -> object:
        return render(replica, next(fresh_templates))

    def encoder() -> bytes:
        return revision_payload(pod_template=anchor)

    def sorted_dumps_encoder() -> bytes:
        return json.dumps(
            {"podSpec": anchor["spec"], "podMeta": anchor.get("metadata")}, sort_keys=True
        ).encode()

    m = _medians_us(
        {
            "yardstick": yardstick,
            "full": full,
            "warm": warm,
            "templates": templates_only,
            "encoder": encoder,
            "dumps": sorted_dumps_encoder,
        }
    )
    y, r_full, r_warm, r_templates, enc, dumps = (
        m[k] for k in ("yardstick", "full", "warm", "templates", "encoder", "dumps")
    )
    with_dumps = r_full - enc + dumps
    print("seed replica llama-pool (engine, modelRef, auto-selected vLLM runtime)")
    print(f"yardstick: json.dumps(sorted) + FNV-32a of the output  {y:8.1f} us   (FNV in C: {FNV_IN_C})")
    print(
        f"render + revision, memoized in the catalog            {r_warm:8.1f} us   ratio {r_warm / y:5.2f}"
        "   (budget 2.00)"
    )
    print(f"render + revision, from scratch (no budget)           {r_full:8.1f} us   ratio {r_full / y:5.2f}")
    print(f"  templates only                                       {r_templates:8.1f} us")
    print(
        f"  Go-exact payload encoder                             {enc:8.1f} us   ({100 * enc / r_full:4.1f}% of render)"
    )
    print(
        f"render with a sorted json.dumps encoder instead        {with_dumps:8.1f} us   Go-exact is x{r_full / with_dumps:4.2f}"
    )


if __name__ == "__main__":
    main()
