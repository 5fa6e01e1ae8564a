"""A fuzz campaign: ``cases`` generated inputs from ``seed``, each run and judged, the findings
shrunk to a minimal reproducer. ``python3 -m tests.fuzz.campaign CASES [SEED]`` prints the line the
issue asks for (inputs, tracebacks, bad exits, hangs, memory, unlocated errors) and the reproducers."""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TextIO

from tests.fuzz.generate import generate
from tests.fuzz.harness import reproducer, run, shrink

KINDS = ("traceback", "bad-exit", "hang", "memory", "unlocated", "leak")


@dataclass
class Summary:
    inputs: int = 0
    seconds: float = 0.0
    counts: Counter[str] = field(default_factory=Counter)
    reproducers: list[str] = field(default_factory=list)
    places: set[str] = field(default_factory=set)
    leak_kept: int = 0

    def line(self) -> str:
        parts = ", ".join(f"{self.counts[k]} {k}" for k in KINDS)
        return f"{self.inputs} inputs in {self.seconds:.0f}s: {parts}"


def campaign(
    seed: int,
    cases: int,
    *,
    start: int = 0,
    keep: int = 20,
    kinds: tuple[str, ...] = KINDS,
    progress: int = 0,
    log: TextIO | None = None,
) -> Summary:
    summary = Summary()
    began = time.monotonic()
    for index in range(start, start + cases):
        case = generate(seed, index)
        finding = run(case, index)
        summary.inputs += 1
        if progress and summary.inputs % progress == 0:
            summary.seconds = time.monotonic() - began
            print(summary.line(), flush=True)
        if finding is None or finding.kind not in kinds:
            continue
        summary.counts[finding.kind] += 1
        if log is not None:
            print(
                f"found {finding.kind} at seed {seed} case {index}: {finding.detail.splitlines()[0][:160]}",
                file=log,
                flush=True,
            )
        place = finding.kind + ": " + finding.detail.splitlines()[0][:90]
        # Leaks (wording) are many: they never take a reproducer's place from the other kinds.
        full = len(summary.reproducers) >= keep or (finding.kind == "leak" and summary.leak_kept >= keep // 4)
        if place in summary.places or full:
            summary.places.add(place)
            continue
        summary.places.add(place)
        summary.leak_kept += finding.kind == "leak"
        small = shrink(case, finding, index)
        summary.reproducers.append(reproducer(small, run(small, index) or finding, seed, index))
    summary.seconds = time.monotonic() - began
    return summary


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    s = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    result = campaign(s, n, keep=int(sys.argv[3]) if len(sys.argv) > 3 else 40, progress=1000, log=sys.stdout)
    for text in result.reproducers:
        print(text, "\n" + "=" * 100)
    print(result.line(), flush=True)
