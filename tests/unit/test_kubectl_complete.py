"""``kubectl_complete-ome``: what it offers after each word, and Cobra's answer format."""

from __future__ import annotations

import pytest

from omereconcile.kubectl import complete

NAMES = {
    "replicas": ["llama-pool", "pool"],
    "runtimes": ["vllm"],
    "models": ["llama"],
    "namespaces": ["default", "llama-demo"],
}


def names(what: str) -> list[str]:
    return NAMES[what]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("", ["get", "logs", "rollout", "instance", "runtime", "wait", "render", "diff"]),
        ("d", ["diff"]),
        ("r", ["rollout", "runtime", "render"]),
        ("rollout ", ["status", "get", "history", "undo", "pause", "resume", "restart"]),
        ("rollout get ", ["ir/llama-pool", "ir/pool"]),
        ("rollout get ir/pool --events-since ", []),
        ("rollout status ", ["ir/llama-pool", "ir/pool"]),
        ("rollout status -n llama-demo inferencereplica/p", ["inferencereplica/pool"]),
        ("instance status ir/pool ", []),
        ("wait ir/l", ["ir/llama-pool"]),
        ("get ", ["inferencereplicas", "inferencereplica", "ir"]),
        ("get ir ", ["llama-pool", "pool"]),
        ("logs p", ["pool"]),
        ("runtime tree ", ["vllm"]),
        ("runtime explain --model ", ["llama"]),
        ("get ir -n ", ["default", "llama-demo"]),
        ("rollout status ir/pool --", []),
        ("rollout status ir/pool --timeout ", []),
    ],
)
def test_candidates(line: str, expected: list[str]) -> None:
    *words, current = line.split(" ")
    assert complete.candidates(words, current, names) == expected


def test_the_answer_ends_with_the_no_file_directive(capsys: pytest.CaptureFixture[str]) -> None:
    # No cluster to read: names complete to nothing, never to an error in the shell.
    assert complete.main(["rollout", "status", "--kubeconfig", "/nonexistent", "ir/"]) == 0
    assert capsys.readouterr().out == ":4\n"
    assert complete.main(["__complete", "rollout", "h"]) == 0
    assert capsys.readouterr().out == "history\n:4\n"
