"""The rollout forecast of 10,000 replicas of which 4,000 roll (the generated OME-shaped catalog of the
diff benchmark, 200 models x 200 runtimes; the image of the runtimes of 8 of its 20 model families bumped;
1-4 Instances per replica, 1-4 GPUs per pod), against ``omerender diff`` of the same change (what the
forecast starts from), measured in the same run (issue 36: at most 60 s on the project's machines).
Prints figures and the ratio; asserts nothing.

Capacity: ``--fill ample`` (half again the steady state: no roll waits for room), ``--fill full`` (the
steady state plus 1 %: the rolls queue for the little room there is, the case that was slow), or
``--fill none`` (no capacity given).

    python benchmarks/bench_forecast.py [--replicas 10000] [--fill ample|full|none]
"""

from __future__ import annotations

import argparse
import copy
import math
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.catalog_gen import FAMILIES, generate, generate_replicas
from omereconcile.forecast import forecast, headline
from omerender.catalog import Catalog
from omerender.diff import diff_replicas
from omerender.models import InferenceReplica, parse_object

ROLLING_FAMILIES = 8  # of 20: 40 % of the replicas roll


def _catalogs() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    before = generate(200, 200)
    for obj in before:
        runner = (obj["spec"].get("engineConfig") or {}).get("runner") or {}
        tp = [a for a in runner.get("args", []) if a.startswith("--tp=")]
        if tp:  # as many GPUs as the tensor-parallel degree
            gpus = tp[0].removeprefix("--tp=")
            runner["resources"] = {"limits": {"nvidia.com/gpu": gpus}, "requests": {"nvidia.com/gpu": gpus}}
    after = copy.deepcopy(before)
    for obj in after:
        runner = (obj["spec"].get("engineConfig") or {}).get("runner") or {}
        image = str(runner.get("image", ""))
        if obj["spec"].get("supportedModelFormats") and int(image.rsplit("v0.", 1)[-1]) < ROLLING_FAMILIES:
            runner["image"] = image + "-patched"
    return before, after


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--replicas", type=int, default=10_000)
    parser.add_argument("--fill", choices=("ample", "full", "none"), default="full")
    args = parser.parse_args()
    before_objs, after_objs = _catalogs()
    reps: dict[tuple[str, str], InferenceReplica] = {}
    steady = 0
    pods_of: dict[int, int] = {}  # GPUs per pod -> pods in the steady state
    for doc in generate_replicas(args.replicas, models=200):
        rep = parse_object(InferenceReplica, doc)
        reps[(rep.namespace, rep.metadata.name)] = rep
        m = int(doc["spec"]["modelRef"]["name"].split("-")[2])
        g = 1 + (m % FAMILIES) % 4
        steady += rep.spec.effective_replicas * g
        pods_of[g] = pods_of.get(g, 0) + rep.spec.effective_replicas
    before, after = Catalog.from_objects(before_objs), Catalog.from_objects(after_objs)
    capacity = None
    if args.fill != "none":
        # The nodes the steady state needs when pods of one size share nodes (three 3-GPU pods do not
        # fit on 8), plus 1 % (full) or half again (ample).
        packed = sum(math.ceil(n / (8 // g)) for g, n in pods_of.items())
        nodes = math.ceil(packed * (1.5 if args.fill == "ample" else 1.01))
        capacity = (8,) * nodes

    start = time.perf_counter()
    diffs = diff_replicas(reps, reps, before, after)
    yard = time.perf_counter() - start
    start = time.perf_counter()
    result = forecast(
        diff_replicas(reps, reps, before, after),
        reps,
        reps,
        after_objs,
        startup_seconds=300.0,
        capacity=capacity,
    )
    cost = time.perf_counter() - start
    rolling = sum(1 for d in diffs if d.status.value == "rolls")
    cap = "no capacity given" if capacity is None else f"{len(capacity)} nodes of 8 GPUs ({args.fill})"
    print(f"{args.replicas} replicas, {rolling} rolling, steady state {steady} GPUs, {cap}")
    print(f"  {headline(result)}")
    print(f"omerender diff (in process):  {yard:8.2f} s   (yardstick)")
    print(f"forecast (diff included):     {cost:8.2f} s   ratio {cost / yard:6.1f}   (budget: 60 s here)")


if __name__ == "__main__":
    main()
