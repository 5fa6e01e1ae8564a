"""``omerender diff`` of 10,000 replicas over a 200-model × 200-runtime catalog with one runtime changed,
against the time PyYAML's C loader takes just to load the same files, measured in the same run
(DECISIONS §5: at most 3×). Prints figures and the ratio; asserts nothing.

    python benchmarks/bench_diff.py [REPLICAS]
"""

from __future__ import annotations

import contextlib
import io
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.catalog_gen import generate, generate_replicas
from omerender.cli import main as omerender_main
from omerender.cli.diff_cmd import _REPLICAS_PER_PROCESS
from omerender.cli.shards import available_cores, parts_for

RUNS = 3


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def paired(
    yardstick: Callable[[], object], subject: Callable[[], object], runs: int = RUNS
) -> tuple[float, ...]:
    """Median times of both and the median of their per-round ratios: the two take turns in every round,
    so a machine shared with other work slows both alike and the ratio holds where the times do not."""
    rounds = [(_timed(yardstick), _timed(subject)) for _ in range(runs)]
    return (
        statistics.median(y for y, _ in rounds),
        statistics.median(s for _, s in rounds),
        statistics.median(s / y for y, s in rounds),
    )


def _write(path: Path, objects: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.dump_all(objects, Dumper=yaml.CSafeDumper, sort_keys=False))


def _changed(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same catalog with one auto-selectable runtime's image bumped."""
    out = [dict(o) for o in objects]
    for i, obj in enumerate(out):
        if obj["kind"] == "ClusterServingRuntime" and obj["metadata"]["name"] == "srt-family3-3":
            spec = yaml.safe_load(yaml.safe_dump(obj["spec"]))
            spec["engineConfig"]["runner"]["image"] += "-patched"
            out[i] = {**obj, "spec": spec}
    return out


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    catalog = generate(200, 200)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _write(root / "before" / "catalog.yaml", catalog)
        _write(root / "after" / "catalog.yaml", _changed(catalog))
        _write(root / "replicas" / "replicas.yaml", generate_replicas(count, models=200))
        files = [
            root / "before" / "catalog.yaml",
            root / "after" / "catalog.yaml",
            root / "replicas" / "replicas.yaml",
        ]
        size = sum(f.stat().st_size for f in files)

        def load() -> object:
            return [list(yaml.load_all(f.read_bytes(), Loader=yaml.CSafeLoader)) for f in files]

        argv = [
            "diff",
            "-f",
            str(root / "replicas"),
            "--before",
            str(root / "before"),
            "--after",
            str(root / "after"),
        ]
        codes: list[int] = []

        def diff(*extra: str) -> Callable[[], object]:
            def run() -> object:
                out, err = io.StringIO(), io.StringIO()
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    codes.append(omerender_main([*argv, *extra]))
                return out.getvalue()

            return run

        summary = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(summary):
            omerender_main(argv)
        yardstick, took, ratio = paired(load, diff())
        _, serial, serial_ratio = paired(load, diff("--jobs", "1"))
        # The pull-request review (issue 36): grouped, with the catalog's changes and the causes.
        _, review, review_ratio = paired(load, diff("-o", "markdown"))
    print(
        f"diff: {count} replicas, catalog 200 models x 200 runtimes, one runtime changed ({size / 1e6:.1f} MB of YAML)"
    )
    print(f"  {summary.getvalue().strip()} (exit {codes[-1]})")
    print(f"load the same files ({yaml.CSafeLoader.__name__}): {yardstick * 1000:8.1f} ms   (yardstick)")
    parts = parts_for(None, count, per_part=_REPLICAS_PER_PROCESS)
    print(f"omerender diff, end to end, --jobs 1: {serial * 1000:8.1f} ms   ratio {serial_ratio:5.2f}")
    print(
        f"omerender diff, end to end ({parts} process{'es' if parts > 1 else ''}, the default on {available_cores()} "
        f"cores): {took * 1000:8.1f} ms   ratio {ratio:5.2f}   (budget 3.00)"
    )
    print(
        f"omerender diff -o markdown (the grouped review), the default jobs: {review * 1000:8.1f} ms   "
        f"ratio {review_ratio:5.2f}   (review over text: {review / took:4.2f}x)"
    )


if __name__ == "__main__":
    main()
