"""The fuzz tier: generated hostile inputs through render, validate, lint, the library and the
webhook's review (tests/fuzz/generate.py), each bounded in time and memory (tests/fuzz/harness.py).

CI runs ``OMERENDER_FUZZ_CASES`` cases (default 3,000) from seed ``OMERENDER_FUZZ_SEED`` (default 0),
the same cases every run. The long mode is the same test with more cases, or the campaign script:

    OMERENDER_FUZZ_CASES=100000 nice python3 -m pytest tests/fuzz/test_fuzz.py -q
    nice python3 -m tests.fuzz.campaign 100000 0

A failure prints each distinct finding once, shrunk to its fewest mutations, with the command that
reproduces it (``OMERENDER_FUZZ_ONLY=INDEX`` runs that one case).
"""

from __future__ import annotations

import os

from tests.fuzz.campaign import campaign
from tests.fuzz.generate import generate
from tests.fuzz.harness import reproducer, run

CASES = int(os.environ.get("OMERENDER_FUZZ_CASES", "3000"))
SEED = int(os.environ.get("OMERENDER_FUZZ_SEED", "0"))
ONLY = os.environ.get("OMERENDER_FUZZ_ONLY")
# Enforced: no exception but the documented ones, exit codes 0/1/2, no hang, bounded memory, every
# error line naming its file, flag or field, and messages in our words (no "leak": jsonschema's or
# pydantic's wording, "True is not of type 'string'", omerender.wording says it as the API server does).
ENFORCED = ("traceback", "bad-exit", "hang", "memory", "unlocated", "leak")


def test_generated_hostile_inputs_get_a_documented_answer() -> None:
    if ONLY is not None:
        finding = run(generate(SEED, int(ONLY)), int(ONLY))
        assert finding is None or finding.kind not in ENFORCED, reproducer(
            generate(SEED, int(ONLY)), finding, SEED, int(ONLY)
        )
        return
    summary = campaign(SEED, CASES, kinds=ENFORCED)
    print(summary.line())
    assert not summary.reproducers, "\n\n".join([summary.line(), *summary.reproducers])
