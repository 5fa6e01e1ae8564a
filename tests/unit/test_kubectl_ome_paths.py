"""``kubectl ome`` puts names in URL paths as one escaped segment, refusing what client-go refuses."""

from __future__ import annotations

import pytest

from omereconcile.kubectl import main
from omereconcile.kubectl.client import CommandError, segment


@pytest.mark.parametrize(
    ("value", "escaped"),
    [
        ("llama-pool", "llama-pool"),
        ("a b", "a%20b"),
        ("x?watch=1", "x%3Fwatch%3D1"),
        ("x#y", "x%23y"),
        ("é", "%C3%A9"),
    ],
)
def test_segment_escapes_what_could_change_the_path_or_query(value: str, escaped: str) -> None:
    assert segment("name", value) == escaped


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (".", "invalid resource name \".\": [may not be '.']"),
        ("..", "invalid resource name \"..\": [may not be '..']"),
        ("a/b", "invalid resource name \"a/b\": [may not contain '/']"),
        ("a/%2f", "invalid resource name \"a/%2f\": [may not contain '/', may not contain '%']"),
    ],
)
def test_segment_refuses_what_client_go_refuses(value: str, message: str) -> None:
    with pytest.raises(CommandError) as info:
        segment("name", value)
    assert str(info.value) == message


def test_a_bad_namespace_is_refused_before_any_request(capsys: pytest.CaptureFixture[str]) -> None:
    # No kubeconfig is read or API server called: the namespace is refused first.
    code = main(["get", "ir", "-n", "../kube-system", "--kubeconfig", "/nonexistent"])
    assert code == 1
    assert capsys.readouterr().err == "error: invalid namespace \"../kube-system\": [may not contain '/']\n"
