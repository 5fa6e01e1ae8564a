"""The rollout forecast of 20 replicas of 4 Instances (SurgeThenDrain, maxSurge 1, 5 min start-up) on
12 nodes of 8 GPUs, against ``omerender diff`` of the same change (what the forecast starts from),
measured in the same run. Prints figures and the ratio; asserts nothing.

    python benchmarks/bench_forecast.py [--replicas 20] [--instances 4]
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from omereconcile.forecast import forecast
from omerender.catalog import Catalog
from omerender.diff import diff_replicas
from omerender.models import InferenceReplica, parse_object

ROOT = Path(__file__).resolve().parents[1]
RUNS = 3


def _median(fn: Callable[[], object]) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--replicas", type=int, default=20)
    parser.add_argument("--instances", type=int, default=4)
    args = parser.parse_args()
    before_objs = [yaml.safe_load(p.read_text()) for p in sorted((ROOT / "examples/catalog").glob("*.yaml"))]
    after_objs = copy.deepcopy(before_objs)
    for obj in after_objs:
        if obj["kind"] == "ClusterServingRuntime":
            obj["spec"]["engineConfig"]["runner"]["image"] = "docker.io/vllm/vllm-openai:v0.9.1"
    base = yaml.safe_load((ROOT / "examples/llama-pool.yaml").read_text())
    reps: dict[tuple[str, str], InferenceReplica] = {}
    for i in range(args.replicas):
        doc: dict[str, Any] = copy.deepcopy(base)
        doc["metadata"]["name"] = f"pool-{i}"
        doc["spec"]["replicas"] = args.instances
        doc["spec"]["lifecycle"] = {
            "updateStrategy": {"type": "SurgeThenDrain", "rollingUpdate": {"maxSurge": 1}}
        }
        rep = parse_object(InferenceReplica, doc)
        reps[(rep.namespace, rep.metadata.name)] = rep
    before, after = Catalog.from_objects(before_objs), Catalog.from_objects(after_objs)

    def diff() -> object:
        return diff_replicas(reps, reps, before, after)

    def run() -> object:
        return forecast(diff(), reps, reps, after_objs, startup_seconds=300.0, capacity=(8,) * 12)

    result = run()
    assert not isinstance(result, tuple)
    yard = _median(diff)
    cost = _median(run)
    print(f"{args.replicas} replicas x {args.instances} Instances, 12 nodes of 8 GPUs: {result.totals}")
    print(f"omerender diff:     {yard * 1000:8.1f} ms   (yardstick)")
    print(f"forecast (w/ diff): {cost * 1000:8.1f} ms   ratio {cost / yard:6.1f}")


if __name__ == "__main__":
    main()
