"""Lint over a generated catalog of 200 models and 200 runtimes (with inheritance), against the cost of
loading the same YAML, measured in the same run; and ``omerender lint`` end to end on the file against
the C loader's time to load that file (DECISIONS §5: at most 3×), with ``--jobs 1`` and with the
default (the file loaded, and the catalog rendered, in a process per core up to the parts the input
fills), and the CPU time of each: ``--jobs 1`` costs no more CPU than the default, so the wall-clock gap
between them is the second core's work, not serial overhead. Prints figures and ratios; asserts nothing.

    python benchmarks/bench_lint.py
"""

from __future__ import annotations

import contextlib
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_diff import paired
from benchmarks.catalog_gen import generate_yaml
from omerender.catalog import Catalog
from omerender.cli import main as omerender_main
from omerender.cli.kubeschema import kube_problems
from omerender.cli.lint_cmd import _OBJECTS_PER_PROCESS
from omerender.cli.shards import available_cores, parts_for
from omerender.lint import lint

RUNS = 5


def _median(fn: object, runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    text = generate_yaml(200, 200)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    load = _median(lambda: list(yaml.load_all(text, Loader=loader)))
    objects = list(yaml.load_all(text, Loader=loader))
    catalog = Catalog.from_objects(objects)
    kube_problems({"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "warm"}, "template": {}})
    report = lint(catalog, validate=kube_problems)
    # As the CLI parses (strict=False): omerender.load has checked the objects against the CRDs.
    parse = _median(lambda: Catalog.from_objects(objects, strict=False))
    bare = _median(lambda: lint(catalog))
    full = _median(lambda: lint(catalog, validate=kube_problems))
    print(f"catalog: 200 models, 200 runtimes; {report.renders} renders, {len(report.findings)} findings")
    print(f"load YAML ({loader.__name__}):     {load * 1000:8.1f} ms   (yardstick)")
    print(f"parse into Catalog:           {parse * 1000:8.1f} ms   ratio {parse / load:5.2f}")
    print(f"lint, renders only:           {bare * 1000:8.1f} ms   ratio {bare / load:5.2f}")
    print(f"lint, renders + 1.36 schemas: {full * 1000:8.1f} ms   ratio {full / load:5.2f}")
    print(f"total load + parse + lint:    {(load + parse + full) * 1000:8.1f} ms   (budget: under 1000 ms)")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "catalog.yaml"
        path.write_text(text)

        def load_file() -> object:
            return list(yaml.load_all(path.read_bytes(), Loader=loader))

        file_load, command, ratio = paired(load_file, lambda: _cli(["lint", "--objects", str(path)]))
        _, serial, serial_ratio = paired(
            load_file, lambda: _cli(["lint", "--objects", str(path), "--jobs", "1"])
        )
        # CPU time of every process (this one and the forked children): what --jobs 1 gives up is
        # parallelism, not work; a serial run that cost more CPU than the parallel one would be overhead.
        serial_cpu = _cpu(["lint", "--objects", str(path), "--jobs", "1"])
        default_cpu = _cpu(["lint", "--objects", str(path)])
    parts = parts_for(None, len(objects), per_part=_OBJECTS_PER_PROCESS)
    print(f"load the file ({loader.__name__}):   {file_load * 1000:8.1f} ms   (yardstick)")
    print(f"omerender lint, end to end, --jobs 1: {serial * 1000:8.1f} ms   ratio {serial_ratio:5.2f}")
    print(
        f"omerender lint, end to end ({parts} process{'es' if parts > 1 else ''}, the default on {available_cores()} "
        f"cores): {command * 1000:8.1f} ms   ratio {ratio:5.2f}   (budget 3.00)"
    )
    print(
        f"CPU time, all processes: --jobs 1 {serial_cpu * 1000:.0f} ms, default {default_cpu * 1000:.0f} ms "
        f"(ratio {serial_cpu / default_cpu:4.2f}; at most 1 when --jobs 1 only lacks parallelism)"
    )


def _cpu(argv: list[str], runs: int = RUNS) -> float:
    """Median CPU seconds of one CLI run, its forked children included (they are waited for)."""
    times = []
    for _ in range(runs):
        before = os.times()
        _cli(argv)
        after = os.times()
        times.append(
            after.user
            - before.user
            + after.system
            - before.system
            + after.children_user
            - before.children_user
            + after.children_system
            - before.children_system
        )
    return statistics.median(times)


def _cli(argv: list[str]) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return omerender_main(argv)


if __name__ == "__main__":
    main()
